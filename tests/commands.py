"""The one way tests run a click command: in process, through click's CliRunner, stdout and stderr apart."""

from __future__ import annotations

from typing import NamedTuple

import click
from click.testing import CliRunner


class Run(NamedTuple):
    """A finished command: its exit code, stdout and stderr."""

    code: int
    out: str
    err: str


def run_command(command: click.Command, *args: str, input: str | None = None,
                catch_exceptions: bool = False) -> Run:
    """Run `command args...` with `input` on stdin; an unexpected exception propagates unless caught."""
    result = CliRunner().invoke(command, list(args), input=input, catch_exceptions=catch_exceptions)
    return Run(result.exit_code, result.stdout, result.stderr)
