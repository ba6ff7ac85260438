"""`kafka-leaders can-stop` (may these brokers be stopped now?) and `roll` (a rolling restart)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from leader_election_cli.cli.common import (
    configure_logging,
    connection,
    document_on_failure,
    echo,
    hooks,
    interactive,
    run,
    show,
)
from leader_election_cli.cli.moves_command import DEFAULT_BATCH_SIZE, output_option
from leader_election_cli.cli.options import COMMAND_SETTINGS, Command, IntRange, Seconds, connection_options, verbatim
from leader_election_cli.errors import exit_code_help
from leader_election_cli.gc_pause import cyclic_gc_rare
from leader_election_cli.render.modes import TOOLKIT_MODES, resolve

_MAX_ID = 2**31 - 1


class BrokerList(click.ParamType):
    """ID[,ID...]: broker or controller node ids, each once."""

    name = "brokers"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        ids = []
        for word in str(value).split(","):
            word = word.strip()
            if not (word.isascii() and word.isdigit()) or int(word) > _MAX_ID:  # '²' is a digit to isdigit
                self.fail(f"{value!r} is not a comma-separated list of node ids (e.g. 1,2).", param, ctx)
            if int(word) in ids:
                self.fail(f"{value!r} names node {int(word)} twice.", param, ctx)
            ids.append(int(word))
        return tuple(ids)


PROBE_TIMEOUT_S = 1.0  # cluster.probe.DEFAULT_PROBE_TIMEOUT_S, named here: --help loads no cluster access
probe_timeout_option = click.option(
    "--probe-timeout", type=Seconds(min=0.01, max=60), default=PROBE_TIMEOUT_S, show_default=True, metavar="SECONDS",
    help="How long each node a safe verdict counts on may take to answer a probe (a connection and ApiVersions; a "
         "controller may show progress between two quorum reads instead) before it counts as down, whatever the "
         "cluster's metadata says: a crashed broker stays listed for broker.session.timeout.ms.")

RF1_HELP = ("Allow stopping a broker that holds the only replica of a partition (replication factor 1): such "
            "partitions are offline until it is back, whatever is done; they are still listed.")

CAN_STOP_EXAMPLES = """\
Examples:
  kafka-leaders can-stop --bootstrap-server localhost:9092 3
  kafka-leaders can-stop 2,3 --output json       (with KAFKA_BOOTSTRAP_SERVERS set)
  kafka-leaders can-stop 101                      (a KRaft controller: the quorum rule)
  until kafka-leaders can-stop 3 --output json >/dev/null; do sleep 5; done"""

CAN_STOP_NOTE = """\
A partition blocks the stop when stopping the brokers takes an in-sync replica from it and leaves it
offline (no live in-sync replica, nor an eligible leader replica where the cluster has ELR), under its
topic's min.insync.replicas (acks=all producers fail), or with a min.insync.replicas that could not be
read. A partition already offline or under min ISR that the stop takes no in-sync replica from is listed,
and does not block. A replica a reassignment is adding counts once it is in the ISR.

A KRaft controller (a voter of the controller quorum; node ids are unique across roles) may stop only if,
without it, a majority of the voters has caught up with the quorum's leader within
controller.quorum.fetch.timeout.ms (DescribeQuorum's LastCaughtUpTimestamp, against the leader's own; the
timeout is read from the quorum leader's config where it is a broker, else Kafka's default, 2000 ms), and
the leader only while every other voter has caught up. In combined mode a node is both a broker and a
controller, and both rules hold. The JSON report lists each voter's lag and the age of its last caught-up
time.

The cluster reports a crash late: a broker killed with SIGKILL stays registered, unfenced and in every ISR for
broker.session.timeout.ms (9 s by default), a crashed controller counts as caught up for
controller.quorum.fetch.timeout.ms (2 s). So every node a safe verdict counts on is probed (in parallel, within
--probe-timeout): the other in-sync (and eligible) replicas of the partitions the brokers replicate, and the
voters counted as caught up (on their controller listener, or by progress between two quorum reads). One that
does not answer counts as down, and the verdict names it: a node unreachable from here is never "safe"."""

CAN_STOP_EXIT_CODES = exit_code_help({
    0: "safe: no partition would go offline or under min.insync.replicas, and the controller quorum keeps a "
       "caught-up majority",
    1: "an internal error",
    5: "not safe: the partitions that would are listed, or the quorum would lose its caught-up majority"})


@click.command(cls=Command, epilog=verbatim(CAN_STOP_EXAMPLES, CAN_STOP_NOTE, CAN_STOP_EXIT_CODES),
               context_settings=COMMAND_SETTINGS)
@connection_options
@click.argument("brokers", type=BrokerList(), metavar="NODE[,NODE...]")
@click.option("--bootstrap-controller", metavar="HOST:PORT",
              help="KRaft controller(s) to ask instead of brokers, comma-separated (KIP-919; where only they are "
                   "reachable): controllers only, by the quorum rule.")
@click.option("--allow-rf1", is_flag=True, help=RF1_HELP)
@probe_timeout_option
@output_option
def can_stop(**o: Any) -> None:
    """Whether stopping these brokers or controllers now would leave any partition offline or under its
    min.insync.replicas, or the KRaft controller quorum without a caught-up majority.

    One read of the cluster (metadata, topic configs, pending reassignments, eligible leader replicas
    where they count, and the controller quorum on KRaft), and a probe of each node the verdict counts on;
    sends nothing that changes it. Brokers already down, or not answering, are counted as down.
    """
    sys.exit(run(lambda: _can_stop(o), o["debug"]))


def _can_stop(o: dict[str, Any]) -> int:
    from leader_election_cli.operations.maintenance import can_stop as judge
    from leader_election_cli.reports.maintenance import CanStopReport

    configure_logging(o["debug"])
    output = resolve(o["output"], sys.stdout, TOOLKIT_MODES)
    connection_ = _controllers_connection(o) if o["bootstrap_controller"] is not None else connection(o)

    def stopped(exc: Any) -> CanStopReport:
        report = CanStopReport(None, tuple(sorted(o["brokers"])))
        report.abort(exc.exit_code, exc.message)
        return report

    with document_on_failure(output, stopped):
        report = judge(connection_, o["brokers"], allow_rf1=o["allow_rf1"], probe_timeout_s=o["probe_timeout"],
                       hooks=hooks(output))
    show(report, output, o["color"])
    return int(report.exit_code)


def _controllers_connection(o: dict[str, Any]) -> Any:
    """--bootstrap-controller: the controllers to ask (one of it and --bootstrap-server, as Kafka's tools)."""
    from dataclasses import replace

    from click.core import ParameterSource

    from leader_election_cli.errors import InputError
    from leader_election_cli.operations.connection import Connection

    if click.get_current_context().get_parameter_source("bootstrap_server") is ParameterSource.COMMANDLINE:
        raise InputError("Give only one of --bootstrap-server and --bootstrap-controller",
                         hint="--bootstrap-controller asks the KRaft controllers themselves, about controllers only.")
    servers = o["bootstrap_controller"].strip()
    if not servers:
        raise InputError("--bootstrap-controller is empty", hint="Give the controllers as HOST:PORT, comma-separated.")
    return replace(Connection.of(servers, o["command_config"], o["timeout"]), controllers=True)


# -- roll -----------------------------------------------------------------------------------------------

ROLL_EXAMPLES = """\
Examples:
  kafka-leaders roll --bootstrap-server kafka1:9092 --brokers all --dry-run
  kafka-leaders roll --brokers all --exec 'ssh {host} sudo systemctl restart kafka'
  kafka-leaders roll --brokers 3,1,2 --exec 'kubectl delete pod kafka-{broker} --wait=true'
  kafka-leaders roll --brokers 2 --pause                    (restart it yourself, then press Enter)
  kafka-leaders roll --nodes all --exec 'ssh {host} sudo systemctl restart kafka'   (controllers, then brokers)
  kafka-leaders roll --controllers all --exec 'kubectl delete pod kafka-controller-{node} --wait=true'
  kafka-leaders roll --brokers all --parallel auto --exec 'ssh {host} sudo systemctl restart kafka' --dry-run
  kafka-leaders roll --resume                               (after Ctrl-C, a failed command, a timeout)"""

ROLL_NOTE = """\
For each broker in turn: (1) wait until it is safe to stop (the can-stop rule), up to --safe-timeout; (2)
move its leadership off, with it last in every replica order (demote --include-preferred; the restore
file is kept), and check that it leads nothing; (3) read the cluster again and apply the can-stop rule at
the moment of acting (another broker may have died meanwhile): while it does not hold, the broker stays
drained and the roll waits, up to --safe-timeout; once it holds, at once run the --exec command ({broker}
and {host} filled in, through sh -c, in a session of its own, its output on stderr, bounded by
--exec-timeout), or wait for Enter with --pause; (4) wait until it is registered, unfenced and back in the
ISR of every partition it replicates, up to --rejoin-timeout; (5) put its replica orders back and elect
the preferred replicas, read back. Then the next broker; the active controller goes last (ZooKeeper mode;
in KRaft combined mode, the quorum's leader). KRaft controllers (--controllers, --nodes all) go first, the
quorum's leader last among them: before each, wait until, without it, a majority of the voters has caught
up with the quorum's leader (the can-stop rule for controllers; read again right before the command);
after it, wait until it is a voter again, caught up (lag 0, a fresh last caught-up time), up to
--rejoin-timeout. A dedicated controller has no partitions to drain; {node} is any node's id, {host} a
controller's from its controller listener. With --parallel the brokers go in rounds: each round a set of
brokers the can-stop rule allows down together (every partition keeps min.insync.replicas in-sync replicas
outside it; combined-mode voters by the quorum rule), the fewest rounds found (--dry-run prints them, their
racks, and whether their count is proven the fewest); each round takes the steps above together, its commands
run at once. One roll per cluster at a time (a lock). A state file records
each step finished and why a roll stopped: Ctrl-C or SIGTERM stops the roll after the step in flight (a
running command is waited for), and roll --resume carries on from there, as after any failure, once it
has checked the state file and the restore files it names. A command that times out, or is running at a
second Ctrl-C, is ended with every process it started (its process group): SIGTERM, then SIGKILL 5 s
later; the roll waits until none is left."""

ROLL_EXIT_CODES = exit_code_help({
    0: "every broker was restarted and given its leadership back (or a dry run finished)",
    1: "the --exec command failed or timed out, the input ended before Enter was pressed (--pause), a broker "
       "could not be drained, or its leadership did not come back, or, once a broker was drained, the state file "
       "could not be written (it keeps where the roll stands), or an internal error",
    2: "usage or input error: nothing was done (a state file that is not one a roll wrote, or naming a node "
       "twice, or brokers the cluster lacks; a restore file it names that cannot be read)",
    3: "cluster unreachable, or a broker not back in every ISR (a controller: not a caught-up voter) within "
       "--rejoin-timeout",
    5: "not safe to stop the next broker or controller within --safe-timeout (nothing was done to it), or no "
       "longer safe to restart the drained broker within --safe-timeout (it stays drained), or another roll of "
       "this cluster is running, or an unfinished roll of this cluster exists (use --resume), or the state file "
       "or a restore file it names is of another cluster"})


class Parallel(click.ParamType):
    """auto, or N >= 1: the brokers restarted at once, at most."""

    name = "parallel"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if value is None or isinstance(value, int):
            return value
        text = str(value).strip()
        if text == "auto":
            return None
        if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= 10_000:
            self.fail(f"{value!r} is neither auto nor a number of brokers from 1 to 10000 (e.g. 3).", param, ctx)
        return int(text)


class BrokersOrAll(BrokerList):
    """all, or BROKER[,BROKER...]."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        return "all" if value == "all" else super().convert(value, param, ctx)


@click.command(cls=Command, epilog=verbatim(ROLL_EXAMPLES, ROLL_NOTE, ROLL_EXIT_CODES),
               context_settings=COMMAND_SETTINGS)
@connection_options
@click.option("--brokers", type=BrokersOrAll(), metavar="all|BROKER[,BROKER...]",
              help="The brokers to restart, in this order (all: every broker, by id), the active controller moved last "
                   "(ZooKeeper mode; KRaft combined mode: the quorum's leader). This, --controllers or --nodes is "
                   "REQUIRED unless --resume.")
@click.option("--controllers", type=BrokersOrAll(), metavar="all|NODE[,NODE...]",
              help="KRaft controllers (the quorum's voters) to restart first, in this order (all: every voter, by "
                   "id), the quorum's leader moved last, each by the quorum rule.")
@click.option("--nodes", type=click.Choice(["all"]), metavar="all",
              help="Every node: the controllers first (as --controllers all), then the brokers (as --brokers all).")
@click.option("--exec", "command", metavar="COMMAND",
              help="Restart one node: a shell command, {node} (any node's id), {broker} and {host} filled in; exit 0 "
                   "means it was restarted (it need not wait for the node to be back: the roll does).")
@click.option("--pause", is_flag=True, help="Instead of --exec: wait for Enter while you restart the broker.")
@click.option("--resume", is_flag=True, help="Carry on the unfinished roll of the state file.")
@click.option("--state-file", metavar="PATH",
              help="Where the roll records each step (default: $XDG_STATE_HOME/kafka-leaders/<cluster id>-roll.json, "
                   "~/.local/state/kafka-leaders/... without it).")
@click.option("--safe-timeout", type=Seconds(min=0, max=86_400), default=300, show_default=True, metavar="SECONDS",
              help="How long to wait for a broker to be safe to stop.")
@click.option("--exec-timeout", type=Seconds(min=0.1, max=86_400), default=600, show_default=True,
              metavar="SECONDS", help="How long the --exec command may run (then it is killed with every process it "
                                      "started: SIGTERM, SIGKILL 5 s later).")
@click.option("--rejoin-timeout", type=Seconds(min=0, max=86_400), default=600, show_default=True,
              metavar="SECONDS", help="How long to wait for a restarted broker to be back in every ISR.")
@click.option("--parallel", type=Parallel(), default="1", show_default=True, metavar="N|auto",
              help="Restart brokers in rounds of at most N at once (auto: as many as the can-stop rule allows), the "
                   "fewest rounds found exactly where the time allows: every partition keeps min.insync.replicas "
                   "in-sync replicas outside each round. Controllers still go one at a time, first.")
@click.option("--allow-rf1", is_flag=True, help=RF1_HELP)
@probe_timeout_option
@click.option("--batch-size", type=IntRange(min=1), default=DEFAULT_BATCH_SIZE, show_default=True,
              metavar="N", help="Reorder and elect at most N partitions per request.")
@click.option("--dry-run", is_flag=True, help="Print the order and each step's verdict now; do nothing.")
@output_option
def roll(**o: Any) -> None:
    """Restart brokers one at a time, never leaving a partition offline or under min.insync.replicas, and
    KRaft controllers never leaving the quorum without a caught-up majority.

    Each broker is drained of leadership before its restart and given it back after, once it is back in
    every ISR; each controller waits for the quorum rule before, and to be a caught-up voter again after.
    """
    sys.exit(run(lambda: _roll(o), o["debug"]))


def _roll_settings(o: dict[str, Any]) -> Any:
    from leader_election_cli.errors import InputError
    from leader_election_cli.operations.roll import RollSettings

    chosen = o["brokers"] is not None or o["controllers"] is not None or o["nodes"] is not None
    if o["resume"]:
        if chosen or o["command"] is not None or o["pause"]:
            raise InputError("--resume takes the nodes and the command from the state file",
                             hint="Leave out --brokers, --controllers, --nodes, --exec and --pause.")
    elif o["nodes"] is not None and (o["brokers"] is not None or o["controllers"] is not None):
        raise InputError("--nodes all rolls every controller and broker", hint="Leave out --brokers and --controllers.")
    elif not chosen:
        raise InputError("Missing --brokers", hint="Give --brokers all, or the ids in order, e.g. --brokers 1,2,3 "
                                                   "(--controllers all or --nodes all for KRaft controllers).")
    elif o["command"] is not None and o["pause"] or (o["command"] is None and not o["pause"] and not o["dry_run"]):
        raise InputError("Give exactly one of --exec and --pause",
                         hint="--exec 'ssh {host} sudo systemctl restart kafka' restarts each broker; --pause waits "
                              "for Enter while you do.")
    elif o["command"] is not None and not o["command"].strip():
        raise InputError("--exec is empty", hint="Give the command that restarts one broker.")
    if o["pause"] and not o["dry_run"] and not interactive():
        raise InputError("--pause needs a terminal to press Enter on", hint="Use --exec COMMAND in scripts.")
    if o["resume"] and o["parallel"] != 1:
        raise InputError("--resume takes the rounds from the state file", hint="Leave out --parallel.")
    if o["state_file"] is not None and not o["state_file"].strip():
        raise InputError("--state-file is empty", hint="Give a file path, or leave it out for the default.")
    every = o["nodes"] == "all"
    brokers = None if every or o["brokers"] == "all" or o["resume"] else o["brokers"] or ()
    controllers = None if every or o["controllers"] == "all" else o["controllers"] or ()
    return RollSettings(brokers, o["command"], o["pause"], o["safe_timeout"], o["exec_timeout"], o["rejoin_timeout"],
                        o["allow_rf1"], o["batch_size"], Path(o["state_file"]) if o["state_file"] else None,
                        o["resume"], o["dry_run"], controllers, o["probe_timeout"], o["parallel"])


def wait_for_enter(line: str) -> bool | None:
    """Ask on stderr, wait for Enter on stdin: True when it was pressed, False when a stop signal comes
    first, None at the end of the input (Ctrl-D): nobody said the broker was restarted."""
    import select

    from leader_election_cli.operations.signals import received

    echo(line, err=True)
    while received() is None:
        if select.select([sys.stdin], [], [], 0.1)[0]:
            if sys.stdin.readline() == "":
                return None
            return received() is None
    return False


@cyclic_gc_rare()
def _roll(o: dict[str, Any]) -> int:
    from leader_election_cli.operations.roll import roll as run_roll
    from leader_election_cli.reports.maintenance import RollReport

    configure_logging(o["debug"])
    output = resolve(o["output"], sys.stdout, TOOLKIT_MODES)
    connection_ = connection(o)
    settings = _roll_settings(o)

    def stopped(exc: Any) -> RollReport:
        from leader_election_cli.operations.roll import RollRefused

        # the state file refused, else the one given; null when the cluster (whose id names it) was not read
        state_file = str(exc.state_file) if isinstance(exc, RollRefused) else o["state_file"]
        report = RollReport(state_file, o["command"], dry_run=o["dry_run"])
        report.abort(exc.exit_code, exc.message)
        return report

    with document_on_failure(output, stopped):
        report = run_roll(connection_, settings, hooks(output), ask=wait_for_enter if interactive() else None)
    show(report, output, o["color"])
    return int(report.exit_code)
