"""`kafka-leaders prefer`, `demote` and `restore`: move leadership to a chosen replica, off a broker, and back.

Also what `status_command` and `balance_command` share with them: --output.
"""

from __future__ import annotations

import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from leader_election_cli.cli.common import (
    configure_logging,
    connection,
    document_on_failure,
    hooks,
    run,
    show,
)
from leader_election_cli.cli.completion import complete_topics
from leader_election_cli.cli.options import (
    COMMAND_SETTINGS,
    Command,
    IntRange,
    color_option,
    connection_options,
    verbatim,
)
from leader_election_cli.errors import EXIT_CODE_HELP, InputError, LeaderElectionError, shown
from leader_election_cli.local_files import kind_of, named_path
from leader_election_cli.render.modes import TOOLKIT_MODES, resolve

if TYPE_CHECKING:
    from leader_election_cli.operations.connection import Connection
    from leader_election_cli.operations.hooks import Hooks
    from leader_election_cli.reports.moves import MoveReport

DEFAULT_BATCH_SIZE = 1000  # operations.moves.DEFAULT_BATCH_SIZE, named here: --help loads no operation


def restore_file_default(command: str) -> str:
    """The default restore file, as help states it (`operations.restore_file.default_restore_path`)."""
    return (f"$XDG_STATE_HOME/kafka-leaders/<cluster id>-{command}-<UTC time>.json, "
            "~/.local/state/kafka-leaders/... without it")
_MAX_ID = 2**31 - 1


# -- shared options -----------------------------------------------------------------------------------

def output_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--output and --color/--no-color."""
    return click.option("--output", type=click.Choice(TOOLKIT_MODES), default="auto", show_default=True,
                        help="auto: a table on a terminal, JSON when piped.")(color_option(command))


# -- prefer -------------------------------------------------------------------------------------------

PREFER_EXAMPLES = """\
Examples:
  kafka-leaders prefer --bootstrap-server localhost:9092 --topic orders --partition 3 --leader 2
  kafka-leaders prefer --bootstrap-server localhost:9092 --path-to-json-file leaders.json --dry-run
  kafka-leaders restore ~/.local/state/kafka-leaders/<cluster id>-prefer-20240501T120000000Z.json

leaders.json: {"partitions": [{"topic": "orders", "partition": 3, "leader": 2}]}"""

MOVE_EXIT_NOTE = """\
Exit code 1 also means a partition was refused (each one is listed with the reason), or does not end up
led by the broker the move asked for. A dry run lists refusals too, and exits 0."""


def _move_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--restore-file, --batch-size, --dry-run and --output, shared by prefer and demote (balance has its own
    --restore-file, applied by the same `restore_file_path`)."""
    for option in reversed((
        click.option("--restore-file", metavar="PATH",
                     help="Where to save the current replica orders before changing them (a file, never "
                          "overwritten, or a directory such as backups/, created when missing, for the default name; "
                          f"default: {restore_file_default('<command>')}; the path is printed)."),
        click.option("--batch-size", type=IntRange(min=1), default=DEFAULT_BATCH_SIZE, show_default=True,
                     metavar="N", help="Reorder and elect at most N partitions per request (never more than 5,000)."),
        click.option("--dry-run", is_flag=True,
                     help="Show what would change and the predicted leaders; send nothing, write nothing."),
        output_option,
    )):
        command = option(command)
    return command


@click.command(cls=Command, epilog=verbatim(PREFER_EXAMPLES, MOVE_EXIT_NOTE, EXIT_CODE_HELP),
               context_settings=COMMAND_SETTINGS)
@connection_options
@click.option("--topic", metavar="TOPIC", shell_complete=complete_topics,
              help="The partition's topic (with --partition and --leader).")
@click.option("--partition", type=IntRange(0, _MAX_ID), metavar="ID", help="The partition id.")
@click.option("--leader", type=IntRange(0, _MAX_ID), metavar="BROKER",
              help="The broker that should lead it: a live, in-sync replica.")
@click.option("--path-to-json-file", metavar="FILE",
              help='Several at once: {"partitions": [{"topic": "t", "partition": 0, "leader": 2}]}.')
@_move_options
def prefer(**o: Any) -> None:
    """Make a chosen replica the leader of a partition.

    Kafka cannot elect a chosen replica directly, so this reorders the partition's replicas with the
    broker first (AlterPartitionReassignments, the same replicas: no data moves), waits until the
    reorder is done, runs a preferred election and checks the new leader. The broker also stays the
    preferred replica, so later preferred elections keep it. A partition is refused, with the reason,
    when the broker is not a replica, not alive, not in the ISR, or a reassignment is pending. The
    original orders are saved to a restore file first.
    """
    sys.exit(run(lambda: _prefer(o), o["debug"]))


def _prefer(o: dict[str, Any]) -> int:
    from leader_election_cli.operations import moves
    from leader_election_cli.selection.leaders import prefer_targets

    configure_logging(o["debug"])
    wanted = prefer_targets(o["topic"], o["partition"], o["leader"], o["path_to_json_file"])
    restore = restore_file_path(o["restore_file"], writes=not o["dry_run"])
    return _show_moves(o, "prefer", lambda connection, hooks: moves.prefer(
        connection, wanted, dry_run=o["dry_run"], batch_size=o["batch_size"], restore_path=restore, hooks=hooks))


# -- demote -------------------------------------------------------------------------------------------

DEMOTE_EXAMPLES = """\
Examples:
  kafka-leaders demote --bootstrap-server localhost:9092 --broker 3 --include-preferred --dry-run
  kafka-leaders demote --bootstrap-server localhost:9092 --broker 3 --include-preferred \\
      --restore-file before-maintenance-b3.json
  (maintenance of broker 3)
  kafka-leaders restore --bootstrap-server localhost:9092 before-maintenance-b3.json"""


@click.command(cls=Command, epilog=verbatim(DEMOTE_EXAMPLES, MOVE_EXIT_NOTE, EXIT_CODE_HELP),
               context_settings=COMMAND_SETTINGS)
@connection_options
@click.option("--broker", required=True, type=IntRange(0, _MAX_ID), metavar="BROKER",
              help="The broker to move leadership off. REQUIRED.")
@click.option("--topic-regex", metavar="REGEX", help="Only topics whose whole name matches this regex.")
@click.option("--include-preferred", is_flag=True,
              help="Also move the broker last where it is the preferred replica but does not lead, so that "
                   "no preferred election (or automatic rebalance) gives it leadership back.")
@_move_options
def demote(**o: Any) -> None:
    """Move leadership off a broker before maintenance (what Cruise Control calls demotion).

    Every partition the broker leads gets the broker moved to the end of its replica order, with the
    replica that should lead instead first, then a preferred election: afterwards the broker leads
    nothing. A partition with no other live in-sync replica is reported, not forced. The original
    orders are saved to a restore file first; `kafka-leaders restore FILE` puts them back.
    """
    sys.exit(run(lambda: _demote(o), o["debug"]))


def _demote(o: dict[str, Any]) -> int:
    from leader_election_cli.operations import moves

    configure_logging(o["debug"])
    restore = restore_file_path(o["restore_file"], writes=not o["dry_run"])
    return _show_moves(o, "demote", lambda connection, hooks: moves.demote(
        connection, o["broker"], include_preferred=o["include_preferred"], topic_regex=o["topic_regex"],
        dry_run=o["dry_run"], batch_size=o["batch_size"], restore_path=restore, hooks=hooks))


# -- restore ------------------------------------------------------------------------------------------

RESTORE_EXAMPLES = """\
Examples:
  kafka-leaders restore --bootstrap-server localhost:9092 \\
      ~/.local/state/kafka-leaders/<cluster id>-demote-20240501T120000000Z.json
  kafka-leaders restore --bootstrap-server localhost:9092 before-maintenance-b3.json --dry-run"""


@click.command(cls=Command, epilog=verbatim(RESTORE_EXAMPLES, MOVE_EXIT_NOTE, EXIT_CODE_HELP),
               context_settings=COMMAND_SETTINGS)
@connection_options
@click.argument("restore_file", metavar="FILE")
@click.option("--batch-size", type=IntRange(min=1), default=DEFAULT_BATCH_SIZE, show_default=True,
              metavar="N", help="Reorder and elect at most N partitions per request (never more than 5,000).")
@click.option("--dry-run", is_flag=True, help="Show what would change and the predicted leaders; send nothing.")
@output_option
def restore(**o: Any) -> None:
    """Put back the replica orders saved by `prefer` or `demote`, and elect the preferred replicas.

    A partition whose replicas changed since the file was written, or that is being reassigned, is
    refused. The file must come from the same cluster (its cluster id is checked).
    """
    sys.exit(run(lambda: _restore(o), o["debug"]))


def _restore(o: dict[str, Any]) -> int:
    from leader_election_cli.operations import moves

    configure_logging(o["debug"])
    return _show_moves(o, "restore", lambda connection, hooks: moves.restore(
        connection, o["restore_file"], dry_run=o["dry_run"], batch_size=o["batch_size"], hooks=hooks))


# -- running a move -----------------------------------------------------------------------------------

def restore_file_path(restore_file: str | None, *, writes: bool) -> Path | None:
    """--restore-file as a path: a file, or a directory for the default name ("backups/" is created when the
    run `writes`); none: the default (`restore_file_default`)."""
    if restore_file is not None and not restore_file.strip():
        raise InputError("--restore-file is empty", hint="Give --restore-file a file or directory path, or leave it "
                                                         "out for the default (the state directory).")
    if restore_file is None:
        return None
    try:
        mode = os.lstat(restore_file).st_mode
    except OSError:  # nothing there yet (or unreachable: the write says why, before any change)
        mode = None
    if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISLNK(mode) or stat.S_ISDIR(mode)):
        raise InputError(f"--restore-file {shown(restore_file)} is {kind_of(mode)}, not a file or a directory",
                         hint="Give --restore-file a file or directory path.")  # before any request is sent
    return named_path(restore_file, "--restore-file", create=writes)


def _show_moves(o: dict[str, Any], command: str, move: Callable[[Connection, Hooks], MoveReport]) -> int:
    """Run the move, print its report (a document even when the cluster stops it, with --output json)."""
    from leader_election_cli.reports.moves import MoveReport

    def stopped(exc: LeaderElectionError) -> MoveReport:
        report = MoveReport(command, [], dry_run=o["dry_run"])
        report.abort(exc.exit_code, exc.message)
        return report

    output = resolve(o["output"], sys.stdout, TOOLKIT_MODES)
    connection_ = connection(o)
    with document_on_failure(output, stopped):
        report = move(connection_, hooks(output))
    show(report, output, o["color"])
    return int(report.exit_code)
