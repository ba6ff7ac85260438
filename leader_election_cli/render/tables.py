"""What the toolkit's tables share: a console that does not fold a pipe at 80 columns, a table, and the
few ways a broker, a list of partitions or a ratio is written."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import IO, Any

from leader_election_cli.errors import one_line
from leader_election_cli.model import NO_LEADER, TopicPartition
from leader_election_cli.reports.balance import BrokerBalance

LISTED_PARTITIONS = 20  # a table lists at most this many partitions of a kind; JSON lists them all


def write_json(document: dict[str, Any], out: IO[str]) -> None:
    json.dump(document, out, indent=2)
    out.write("\n")


def make_console(out: IO[str]) -> Any:
    from rich.console import Console

    return Console(file=out, width=None if out.isatty() else 200)  # a pipe has no width: do not fold at 80


def make_table(title: str, *columns: tuple[str, str]) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    return table


def inert(text: object) -> str:
    """What the cluster sent (a topic name, a broker's message), for a rich table or line: shown as it is,
    with control characters escaped (no terminal escape sequence) and rich markup printed, not applied."""
    from rich.markup import escape

    return escape(one_line(str(text)))


def broker_text(broker: int | None) -> str:
    return "none" if broker is None or broker == NO_LEADER else str(broker)


def ids(brokers: tuple[int, ...]) -> str:
    return ",".join(map(str, brokers)) or "none"


def names(items: Sequence[TopicPartition | str]) -> str:
    """Partitions (or topics) for one line: the first few, and how many more."""
    listed = ", ".join(map(inert, items[:LISTED_PARTITIONS]))
    more = len(items) - LISTED_PARTITIONS
    return listed + (f", ... ({more} more; --output json lists them all)" if more > 0 else "")


def pct(ratio: float) -> str:
    return f"{ratio * 100:.1f}%"


def brokers_above(above: Sequence[BrokerBalance]) -> str:
    """Brokers above a threshold, with their counts: a rounded ratio alone can look like the threshold."""
    return ", ".join(f"{b.broker} ({b.not_led_by_preferred} of {b.preferred} not led by it, {pct(b.ratio)})"
                     for b in above)
