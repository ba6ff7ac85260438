"""The output modes, and what `--output auto` means, for every command (stated once, here).

`auto` is a table on a terminal. Piped or redirected, it is the command's machine form: Kafka's own
lines where the command has them (`text`: the drop-in, `elect` and `plan`, whose output scripts grep
for Kafka's lines), else the JSON document (`prefer`, `demote`, `restore`, `status`, `rebalance`).
"""

from __future__ import annotations

from typing import IO

AUTO, TABLE, TEXT, JSON = "auto", "table", "text", "json"
KAFKA_LINE_MODES = (AUTO, TABLE, TEXT, JSON)  # the drop-in, elect and plan
TOOLKIT_MODES = (AUTO, TABLE, JSON)


def resolve(output: str, stream: IO[str], modes: tuple[str, ...]) -> str:
    """The mode to use for `output`, one of the command's `modes`: `auto` as the module says."""
    if output != AUTO:
        return output
    if stream.isatty():
        return TABLE
    return TEXT if TEXT in modes else JSON


def is_json(output: str) -> bool:
    """Whether a resolved `output` is the JSON document: stdout then holds it alone (no notes, no progress
    bar), and a run stopped by its cluster still prints one."""
    return output == JSON
