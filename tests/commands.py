"""The one way tests run a click command: in process, through click's CliRunner, stdout and stderr apart;
and where the installed commands are, for the tests that run them as a shell would (`BIN`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import NamedTuple

import click
from click.testing import CliRunner

from leader_election_cli.sandbox import Sandbox

BIN = Path(sys.executable).parent  # the venv's kafka-leaders and kafka-leader-election
# the two commands as processes of this interpreter (this checkout's code, whatever is installed)
TOOLKIT = [sys.executable, "-c", "from leader_election_cli.cli.toolkit import main; main()"]
DROP_IN = [sys.executable, "-m", "leader_election_cli"]


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


def invoke(command: click.Command, sb: Sandbox, *args: str, input: str | None = None) -> Run:
    """`command --bootstrap-server <the sandbox> args...`, as `run_command` runs it."""
    return run_command(command, "--bootstrap-server", sb.bootstrap_servers, *args, input=input)
