"""`kafka-leaders prefer`, `demote` and `restore`: move leadership to a chosen replica, off a broker, and back.

Also what `balance_command` shares with them: --output, the client settings and the connection.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from leader_election_cli.cli.common import (
    COMMAND_SETTINGS,
    Command,
    bootstrap_servers,
    configure_logging,
    connection_options,
    document_on_cluster_failure,
    printing_the_report,
    run,
    verbatim,
)
from leader_election_cli.cli.completion import complete_topics
from leader_election_cli.errors import EXIT_CODE_HELP, CliError, InputError, RefusedError, shown

if TYPE_CHECKING:
    from leader_election_cli.cluster.admin import Cluster
    from leader_election_cli.config.settings import ClientSettings
    from leader_election_cli.model import ClusterState
    from leader_election_cli.operations.moves import MovePlan, MoveReport

DEFAULT_BATCH_SIZE = 1000
_MAX_ID = 2**31 - 1


# -- shared options -----------------------------------------------------------------------------------

def output_option(command: Callable[..., Any]) -> Callable[..., Any]:
    return click.option("--output", type=click.Choice(("auto", "table", "json")), default="auto", show_default=True,
                        help="auto: a table on a terminal, JSON when piped.")(command)


def resolved_output(output: str) -> str:
    """`auto` is a table on a terminal and JSON for a pipe or a file."""
    if output != "auto":
        return output
    return "table" if sys.stdout.isatty() else "json"


def client_settings(o: dict[str, Any]) -> ClientSettings:
    """The --command-config file bounded by --timeout; its warnings go to stderr."""
    from leader_election_cli.config.settings import load_client_settings

    settings = load_client_settings(o["command_config"], int(o["timeout"] * 1000) if o["timeout"] else None)
    for warning in settings.warnings:
        click.echo(f"Warning: {warning}", err=True)
    return settings


@contextmanager
def connected(servers: str, settings: ClientSettings) -> Iterator[Cluster]:
    from leader_election_cli.cluster.admin import Cluster

    with Cluster.connect(servers, settings) as cluster:
        yield cluster


# -- prefer -------------------------------------------------------------------------------------------

PREFER_EXAMPLES = """\
Examples:
  kafka-leaders prefer --bootstrap-server localhost:9092 --topic orders --partition 3 --leader 2
  kafka-leaders prefer --bootstrap-server localhost:9092 --path-to-json-file leaders.json --dry-run
  kafka-leaders restore kafka-leaders-restore-prefer-20240501T120000Z.json

leaders.json: {"partitions": [{"topic": "orders", "partition": 3, "leader": 2}]}"""

MOVE_EXIT_NOTE = """\
Exit code 1 also means a partition was refused (each one is listed with the reason), or does not end up
led by the broker the move asked for. A dry run lists refusals too, and exits 0."""


def _move_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """--restore-file, --batch-size, --dry-run and --output, shared by prefer and demote."""
    for option in reversed((
        click.option("--restore-file", metavar="PATH",
                     help="Where to save the current replica orders before changing them (never overwritten; "
                          "default: kafka-leaders-restore-<command>-<UTC time>.json here)."),
        click.option("--batch-size", type=click.IntRange(min=1), default=DEFAULT_BATCH_SIZE, show_default=True,
                     metavar="N", help="Reorder and elect at most N partitions per request."),
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
@click.option("--partition", type=click.IntRange(0, _MAX_ID), metavar="ID", help="The partition id.")
@click.option("--leader", type=click.IntRange(0, _MAX_ID), metavar="BROKER",
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
    from leader_election_cli.model import TopicPartition
    from leader_election_cli.operations import moves
    from leader_election_cli.selection.drop_in import load_prefer_file, shown, topic_problem

    configure_logging(o["debug"])
    single = (o["topic"], o["partition"], o["leader"])
    if o["path_to_json_file"] is not None:
        if any(v is not None for v in single):
            raise InputError("Give either --path-to-json-file or --topic/--partition/--leader, not both",
                             hint="Put every partition in the file, or name one with the three options.")
        wanted = load_prefer_file(o["path_to_json_file"])
    else:
        missing = [name for name, value in zip(("--topic", "--partition", "--leader"), single) if value is None]
        if missing:
            raise InputError(f"Missing required option(s): {', '.join(missing)}",
                             hint="Name the partition and its new leader with --topic, --partition and --leader, "
                                  "or give --path-to-json-file.")
        problem = topic_problem(o["topic"])
        if problem:
            raise InputError(f"Invalid --topic '{shown(o['topic'])}': {problem}",
                             hint="Topic names use only ASCII letters, digits, '.', '_' and '-'.")
        wanted = ((TopicPartition(o["topic"], o["partition"]), o["leader"]),)
    return _carry_out(o, "prefer", lambda state: moves.prefer_plan(state, wanted))


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
@click.option("--broker", required=True, type=click.IntRange(0, _MAX_ID), metavar="BROKER",
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
    matcher = moves.topic_matcher(o["topic_regex"])
    broker = o["broker"]

    def plan(state: ClusterState) -> MovePlan:
        known = broker in state.live_brokers or any(broker in p.replicas for p in state.partitions.values())
        if not known:
            brokers = ",".join(map(str, sorted(state.live_brokers)))
            raise InputError(f"Broker {broker} is neither live nor a replica of any partition (live brokers: "
                             f"{brokers})", hint="Check the --broker id.")
        return moves.demote_plan(state, broker, o["include_preferred"], matcher)

    return _carry_out(o, "demote", plan)


# -- restore ------------------------------------------------------------------------------------------

RESTORE_EXAMPLES = """\
Examples:
  kafka-leaders restore --bootstrap-server localhost:9092 kafka-leaders-restore-demote-20240501T120000Z.json
  kafka-leaders restore --bootstrap-server localhost:9092 before-maintenance-b3.json --dry-run"""


@click.command(cls=Command, epilog=verbatim(RESTORE_EXAMPLES, MOVE_EXIT_NOTE, EXIT_CODE_HELP),
               context_settings=COMMAND_SETTINGS)
@connection_options
@click.argument("restore_file", metavar="FILE")
@click.option("--batch-size", type=click.IntRange(min=1), default=DEFAULT_BATCH_SIZE, show_default=True,
              metavar="N", help="Reorder and elect at most N partitions per request.")
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
    from leader_election_cli.selection.drop_in import shown

    configure_logging(o["debug"])
    saved = moves.load_restore_file(o["restore_file"])

    def plan(state: ClusterState) -> MovePlan:
        if saved.cluster_id and state.cluster_id and saved.cluster_id != state.cluster_id:
            raise RefusedError(f"Restore file {shown(o['restore_file'])} was written for cluster "
                               f"{shown(saved.cluster_id)}, not this one ({shown(state.cluster_id)}); nothing "
                               "was changed", hint="Check --bootstrap-server.")
        return moves.restore_plan(state, saved.orders)

    return _carry_out(o, "restore", plan)


# -- running a plan -----------------------------------------------------------------------------------

def _carry_out(o: dict[str, Any], command: str, plan_for: Callable[[ClusterState], MovePlan]) -> int:
    """Read the cluster, plan, then predict (--dry-run) or run the moves; render; the report's exit code."""
    from leader_election_cli.operations import moves

    servers = bootstrap_servers(o)
    output = resolved_output(o["output"])
    settings = client_settings(o)
    restore_path = None
    if command != "restore":
        restore_path = Path(o["restore_file"]) if o["restore_file"] else moves.default_restore_path(command)
    with ExitStack() as stack:
        with document_on_cluster_failure(output, lambda exc: _render_stopped(command, o["dry_run"], exc)):
            cluster = stack.enter_context(connected(servers, settings))
            state = cluster.describe(with_reassignments=True)
            plan = plan_for(state)
        if o["dry_run"]:
            report = moves.predict_moves(plan, state)
        else:
            report = moves.run_moves(cluster, state, plan, restore_path=restore_path, batch_size=o["batch_size"],
                                     wait_seconds=settings.api_timeout_ms / 2000)
            if command != "restore" and o["restore_file"] and report.restore_file is None:  # a runbook looks for it
                click.echo(f"No restore file written to {shown(o['restore_file'])}: no replica order changes.",
                           err=True)
    _render(report, output)
    return int(report.exit_code)


def _render_stopped(command: str, dry_run: bool, exc: CliError) -> None:
    """The JSON document of a run stopped before anything was planned: no partitions, and why."""
    from leader_election_cli.operations.moves import MoveReport

    report = MoveReport(command, [], dry_run=dry_run)
    report.abort(exc.exit_code, exc.message)
    _render(report, "json")


def _render(report: MoveReport, output: str) -> None:
    from leader_election_cli.render import balance as render_balance

    with printing_the_report():
        if output == "json":
            render_balance.write_json(render_balance.moves_document(report), sys.stdout)
        else:
            render_balance.render_moves_table(report, sys.stdout, sys.stderr)
