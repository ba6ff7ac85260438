"""`kafka-leaders balance`: leadership balanced with zero data movement (new replica orders, then
preferred elections), the fewest partitions changed, the proven least maximum of leaders per broker."""

from __future__ import annotations

import sys
from typing import Any

import click

from leader_election_cli.cli.common import (
    configure_logging,
    connection,
    document_on_failure,
    hooks,
    run,
    show,
)
from leader_election_cli.cli.moves_command import (
    DEFAULT_BATCH_SIZE,
    output_option,
    restore_file_default,
    restore_file_path,
)
from leader_election_cli.cli.options import COMMAND_SETTINGS, Command, IntRange, connection_options, verbatim
from leader_election_cli.errors import exit_code_help
from leader_election_cli.gc_pause import cyclic_gc_paused
from leader_election_cli.render.modes import TOOLKIT_MODES, resolve

_MAX_ID = 2**31 - 1

BALANCE_EXAMPLES = """\
Examples:
  kafka-leaders balance --bootstrap-server localhost:9092
  kafka-leaders balance --bootstrap-server localhost:9092 --exclude-broker 4 --rack-aware --plan-file plan.json
  (review plan.json)
  kafka-leaders balance --bootstrap-server localhost:9092 --execute --plan-file plan.json
  kafka-leaders balance --bootstrap-server localhost:9092 --weight size --max-moves 100 --execute
  kafka-leaders restore --bootstrap-server localhost:9092 ~/.local/state/kafka-leaders/<cluster id>-balance-<time>.json

weights.json: {"partitions": [{"topic": "orders", "partition": 0, "weight": 1250.5}]}"""

BALANCE_EXIT_CODES = exit_code_help({
    0: "the plan was printed (dry run), or every planned partition is led as planned",
    1: "a planned partition failed, was refused or was left undone (each one is listed), or an internal error",
    2: "usage or input error (an option, the --weights or --plan-file file): nothing was sent to the cluster",
    5: "refused: the cluster changed since the --plan-file was made (replica orders, reassignments, cluster id), "
       "or a plan would change a replica set; nothing was sent"})


def _broker_ids(_ctx: click.Context, _param: click.Parameter, values: tuple[str, ...]) -> tuple[int, ...]:
    """--exclude-broker 1 --exclude-broker 2, or --exclude-broker 1,2."""
    ids: list[int] = []
    for value in values:
        for part in value.split(","):
            text = part.strip()
            if not (text.isascii() and text.isdigit()) or int(text) > _MAX_ID:
                raise click.BadParameter(f"{part!r} is not a broker id (0 to {_MAX_ID}).")
            ids.append(int(text))
    return tuple(ids)


@click.command(cls=Command, epilog=verbatim(BALANCE_EXAMPLES, BALANCE_EXIT_CODES), context_settings=COMMAND_SETTINGS)
@connection_options
@click.option("--execute", is_flag=True,
              help="Carry the plan out (without it: a dry run that sends nothing). Saves a restore file first.")
@click.option("--exclude-broker", multiple=True, metavar="BROKER[,BROKER...]", callback=_broker_ids,
              help="A broker that must lead nothing afterwards (repeatable).")
@click.option("--exclude-topic-regex", metavar="REGEX",
              help="Leave the topics whose whole name matches alone (their leaders still count).")
@click.option("--rack-aware", is_flag=True,
              help="Also spread leaders as evenly as possible over the brokers' broker.rack.")
@click.option("--weight", type=click.Choice(["size"]),
              help="Balance leader load instead of counts: each partition weighs its log size (DescribeLogDirs).")
@click.option("--weights", "weights_file", metavar="FILE",
              help='Balance leader load by your numbers per partition (e.g. bytes-in): '
                   '{"partitions": [{"topic": "t", "partition": 0, "weight": 1.5}]}.')
@click.option("--max-moves", type=IntRange(min=0), metavar="N",
              help="Change the replica order of at most N partitions (the N that help most).")
@click.option("--plan-file", metavar="PATH",
              help="Without --execute: write the plan there for review (never overwritten; a directory, such as "
                   "plans/, created when missing, gets <cluster id>-balance-plan-<UTC time>.json). With --execute: "
                   "run exactly that plan, refused if the cluster changed since.")
@click.option("--batch-size", type=IntRange(min=1), default=DEFAULT_BATCH_SIZE, show_default=True,
              metavar="N", help="Reorder and elect at most N partitions per request (never more than 5,000).")
@click.option("--restore-file", metavar="PATH",
              help="With --execute: where to save the current replica orders first (a file, never overwritten, or "
                   "a directory such as backups/, created when missing, for the default name; "
                   f"default: {restore_file_default('balance')}; the path is printed).")
@output_option
def balance(**o: Any) -> None:
    """Balance leadership without moving data: choose new preferred replicas.

    A preferred election can only put leadership back on each partition's first replica; when those
    are themselves skewed (after brokers were added, say), leadership stays skewed. This plans new
    replica orders (the same replicas, so no data moves) such that the most leaders on any live
    broker is the least possible given the replica sets, with the fewest partitions changed, and the
    spread between brokers as small as possible. The counts are solved exactly as a flow problem
    (the lower bound is proven, and "optimal" shown when reached); --weight size or --weights FILE
    balance leader load instead, with a heuristic and its gap to a proven lower bound.

    Only live, in-sync replicas may become leaders; partitions being reassigned are left alone. With
    --execute, each change is an order-only reassignment (AlterPartitionReassignments), then a
    preferred election, in batches; every partition is checked and reported, and the leaders are
    read back. `kafka-leaders restore FILE` puts the old orders back.
    """
    sys.exit(run(lambda: _balance(o), o["debug"]))


def _plan_file(o: dict[str, Any]) -> str | None:
    """--plan-file as given; a directory to write a new plan in ("plans/") is created first."""
    from leader_election_cli.local_files import named_path

    if o["plan_file"] and not o["execute"]:
        named_path(o["plan_file"], "--plan-file", create=True)
    return o["plan_file"]


@cyclic_gc_paused()
def _balance(o: dict[str, Any]) -> int:
    from leader_election_cli.operations.balance import balance as balance_operation
    from leader_election_cli.reports.balance_plan import BalanceStopped

    configure_logging(o["debug"])
    output = resolve(o["output"], sys.stdout, TOOLKIT_MODES)
    connection_ = connection(o)
    with document_on_failure(output, lambda exc: BalanceStopped(exc.message, exc.exit_code)):
        report = balance_operation(
            connection_, execute=o["execute"], exclude_brokers=o["exclude_broker"],
            exclude_topic_regex=o["exclude_topic_regex"], rack_aware=o["rack_aware"], weight=o["weight"],
            weights_file=o["weights_file"], max_moves=o["max_moves"], plan_file=_plan_file(o),
            batch_size=o["batch_size"], restore_path=restore_file_path(o["restore_file"], writes=o["execute"]),
            hooks=hooks(output))
    show(report, output, o["color"])
    return int(report.exit_code)
