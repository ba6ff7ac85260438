"""`kafka-leaders can-stop` (may these brokers be stopped now?) and `roll` (a rolling restart)."""

from __future__ import annotations

import sys
from typing import Any

import click

from leader_election_cli.cli.common import configure_logging, connection, document_on_failure, hooks, run, show
from leader_election_cli.cli.moves_command import output_option
from leader_election_cli.cli.options import COMMAND_SETTINGS, Command, connection_options, verbatim
from leader_election_cli.errors import exit_code_help
from leader_election_cli.render.modes import TOOLKIT_MODES, resolve

_MAX_ID = 2**31 - 1


class BrokerList(click.ParamType):
    """BROKER[,BROKER...]: broker ids, each once."""

    name = "brokers"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        ids = []
        for word in str(value).split(","):
            word = word.strip()
            if not word.isdigit() or int(word) > _MAX_ID:
                self.fail(f"{value!r} is not a comma-separated list of broker ids (e.g. 1,2).", param, ctx)
            if int(word) in ids:
                self.fail(f"{value!r} names broker {int(word)} twice.", param, ctx)
            ids.append(int(word))
        return tuple(ids)


RF1_HELP = ("Allow stopping a broker that holds the only replica of a partition (replication factor 1): such "
            "partitions are offline until it is back, whatever is done; they are still listed.")

CAN_STOP_EXAMPLES = """\
Examples:
  kafka-leaders can-stop --bootstrap-server localhost:9092 3
  kafka-leaders can-stop 2,3 --output json       (with KAFKA_BOOTSTRAP_SERVERS set)
  until kafka-leaders can-stop 3 --output json >/dev/null; do sleep 5; done"""

CAN_STOP_NOTE = """\
A partition blocks the stop when stopping the brokers takes an in-sync replica from it and leaves it
offline (no live in-sync replica, nor an eligible leader replica where the cluster has ELR), under its
topic's min.insync.replicas (acks=all producers fail), or with a min.insync.replicas that could not be
read. A partition already offline or under min ISR that the stop takes no in-sync replica from is listed,
and does not block. A replica a reassignment is adding counts once it is in the ISR."""

CAN_STOP_EXIT_CODES = exit_code_help({
    0: "safe: no partition would go offline or under min.insync.replicas",
    1: "an internal error",
    5: "not safe: the partitions that would are listed"})


@click.command(cls=Command, epilog=verbatim(CAN_STOP_EXAMPLES, CAN_STOP_NOTE, CAN_STOP_EXIT_CODES),
               context_settings=COMMAND_SETTINGS)
@connection_options
@click.argument("brokers", type=BrokerList(), metavar="BROKER[,BROKER...]")
@click.option("--allow-rf1", is_flag=True, help=RF1_HELP)
@output_option
def can_stop(**o: Any) -> None:
    """Whether stopping these brokers now would leave any partition offline or under its min.insync.replicas.

    One read of the cluster (metadata, topic configs, pending reassignments, and eligible leader replicas
    where they count); sends nothing that changes it. Brokers already down are counted as down.
    """
    sys.exit(run(lambda: _can_stop(o), o["debug"]))


def _can_stop(o: dict[str, Any]) -> int:
    from leader_election_cli.operations.maintenance import can_stop as judge
    from leader_election_cli.reports.maintenance import CanStopReport

    configure_logging(o["debug"])
    output = resolve(o["output"], sys.stdout, TOOLKIT_MODES)
    connection_ = connection(o)

    def stopped(exc: Any) -> CanStopReport:
        report = CanStopReport(None, tuple(sorted(o["brokers"])))
        report.abort(exc.exit_code, exc.message)
        return report

    with document_on_failure(output, stopped):
        report = judge(connection_, o["brokers"], allow_rf1=o["allow_rf1"], hooks=hooks(output))
    show(report, output, o["color"])
    return int(report.exit_code)
