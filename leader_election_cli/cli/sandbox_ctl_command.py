"""`kafka-leaders sandbox-ctl`: stop, start or restart a broker (or a KRaft controller) of a running sandbox from
another process."""

from __future__ import annotations

import json
import sys
from typing import Any

import click
from click.core import ParameterSource

from leader_election_cli.cli.common import echo, run
from leader_election_cli.cli.options import COMMAND_SETTINGS, Command, IntRange, Seconds, verbatim
from leader_election_cli.errors import InputError, UnreachableError, exit_code_help, shown
from leader_election_cli.local_files import read_regular_file
from leader_election_cli.sandbox.control_client import ANSWER_TIMEOUT, MAX_ANSWER, request

CONTROL_ENV = "KAFKA_SANDBOX_CONTROL"  # the control socket of a running sandbox (`sandbox` sets it for --run)
BROKER_OPS = ("stop-broker", "kill-broker", "start-broker", "restart-broker")
CONTROLLER_OPS = ("stop-controller", "kill-controller", "start-controller", "restart-controller")
OPS = (*BROKER_OPS, *CONTROLLER_OPS, "status")

EXAMPLES = """\
Examples:
  kafka-leaders sandbox --ready-file sandbox.json --catch-up-seconds 5     (in one terminal)
  kafka-leaders sandbox-ctl --ready-file sandbox.json stop-broker 2
  kafka-leaders sandbox-ctl --ready-file sandbox.json kill-broker 2         (a crash: fenced 9 s later)
  kafka-leaders sandbox-ctl --ready-file sandbox.json start-broker 2
  kafka-leaders sandbox-ctl --ready-file sandbox.json restart-broker 2 --catch-up-seconds 1
  kafka-leaders sandbox-ctl --ready-file sandbox.json status
  kafka-leaders sandbox-ctl --ready-file sandbox.json stop-controller 1001     (KRaft: 1000-1002)
  kafka-leaders sandbox-ctl --ready-file sandbox.json kill-controller 1000
  kafka-leaders sandbox-ctl --ready-file sandbox.json restart-controller 1001 --catch-up-seconds 5
  kafka-leaders roll --brokers all \
      --exec 'kafka-leaders sandbox-ctl --ready-file sandbox.json restart-broker {broker}'"""

NOTE = """\
stop-broker is a controlled shutdown: the controller moves leadership off the broker and takes it out of the
ISRs. kill-broker is a crash (SIGKILL): the listener refuses connections at once, but the controller fences the
broker only when its session times out (the sandbox's --broker-session-timeout, Kafka's
broker.session.timeout.ms, 9 s): until then Metadata lists it alive, leading and in every ISR, as on a real
cluster. start-broker returns once the broker listens again; it stays fenced (not in Metadata) for the first
fifth of the catch-up time (at most 2 s), then its replicas rejoin the ISRs, spread over the rest, as a
restarted Kafka broker's fetchers catch up. It prints every broker's state: up, fenced, catching-up or down;
status also prints the records unclean elections truncated away, by partition, once any were lost.
stop-controller and start-controller stop and start one of a KRaft sandbox's three controller nodes (1000 to
1002) and print theirs: leader, up or down; with two down the quorum has no leader, and the brokers hold what
they forward to the controller (elections, reassignments) until they answer REQUEST_TIMED_OUT, 60 s later.
A started controller is a voter at once but lags behind the quorum's leader over the catch-up time, as
DescribeQuorum shows (its log end offset and last caught-up time those before its stop; fetching again for
the second half); restart-controller is a stop, then a start. kill-controller crashes one: it stops fetching
at once (its last caught-up time stays as it was, which Kafka's quorum rule counts as caught up for 2 s more);
a crashed leader leaves the quorum without one for controller.quorum.fetch.timeout.ms (2 s), then another is
elected."""

_STOPPED = "before the sandbox answered (a request it got is carried out)"
EXIT_CODES = exit_code_help({0: "done (or the status printed)",
                             1: "an internal error",
                             2: "usage or input error (no ready file, both --ready-file and --control, no such "
                                "broker or controller), nothing was changed",
                             3: f"the sandbox's control socket did not answer within {ANSWER_TIMEOUT:g} s, or not as a "
                                f"sandbox does (one JSON line of at most {MAX_ANSWER // 1024} KiB with its ok): is the "
                                "sandbox running?",
                             4: None, 5: None,
                             129: f"stopped by SIGHUP {_STOPPED}",
                             130: f"interrupted (Ctrl-C, SIGINT) {_STOPPED}",
                             143: f"stopped by SIGTERM {_STOPPED}"})
MAX_READY_FILE_BYTES = 2**20  # a ready file is a few hundred bytes


@click.command(cls=Command, epilog=verbatim(EXAMPLES, NOTE, EXIT_CODES), context_settings=COMMAND_SETTINGS)
@click.argument("op", type=click.Choice(OPS), metavar="|".join(OPS))
@click.argument("broker", type=IntRange(0, 2**31 - 1), required=False, metavar="[ID]")
@click.option("--ready-file", type=click.Path(dir_okay=False), metavar="PATH",
              help="The sandbox's --ready-file: its control socket is read from it.")
@click.option("--control", metavar="SOCKET", envvar=CONTROL_ENV, show_envvar=True,
              help="The control socket itself (set for commands the sandbox's --run starts).")
@click.option("--catch-up-seconds", type=Seconds(min=0, max=3600), metavar="SECONDS",
              help="start-broker, restart-broker, start-controller, restart-controller: this catch-up time instead "
                   "of the sandbox's --catch-up-seconds.")
@click.option("--debug", is_flag=True, help="Show tracebacks.")
def sandbox_ctl(**o: Any) -> None:
    """Stop, kill, start or restart a broker (or a KRaft controller) of a running sandbox, as systemctl would.

    The sandbox (kafka-leaders sandbox) listens on a Unix socket only its user can reach; the ready file
    names it. One of --ready-file and --control says where (not both); KAFKA_SANDBOX_CONTROL stands for
    --control when neither is given.
    """
    from_env = click.get_current_context().get_parameter_source("control") is ParameterSource.ENVIRONMENT
    sys.exit(run(lambda: _sandbox_ctl(o, from_env), o["debug"]))


def control_socket(ready_file: str | None, control: str | None, control_from_env: bool = False) -> str:
    """The control socket: --control, else the ready file's `control`; both given is an input error, but
    --control from KAFKA_SANDBOX_CONTROL (`control_from_env`) gives way to --ready-file."""
    if ready_file is not None and control and not control_from_env:
        raise InputError("Give one of --ready-file and --control, not both",
                         hint="--ready-file names the sandbox's control socket; --control is that socket.")
    if ready_file is None:
        if not control:
            raise InputError("Missing --ready-file", hint="Give the sandbox's --ready-file (or --control SOCKET).")
        return control
    hint = "Give the path the sandbox's --ready-file wrote."
    data = read_regular_file(ready_file, what="--ready-file", limit=MAX_READY_FILE_BYTES, hint=hint)
    try:
        document = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):
        raise InputError(f"--ready-file {shown(ready_file)} is not a sandbox ready file (not JSON)",
                         hint=hint) from None
    path = document.get("control") if isinstance(document, dict) else None
    if not isinstance(path, str):
        raise InputError(f"--ready-file {shown(ready_file)} names no control socket",
                         hint="Start the sandbox with this version of kafka-leaders.")
    return path


def _sandbox_ctl(o: dict[str, Any], control_from_env: bool) -> int:
    op, broker = o["op"], o["broker"]
    controller = op in CONTROLLER_OPS
    if op != "status" and broker is None:
        raise InputError(f"{op} needs a {'controller' if controller else 'broker'} id",
                         hint=f"e.g. kafka-leaders sandbox-ctl --ready-file F {op} {1001 if controller else 2}")
    if op == "status" and broker is not None:
        raise InputError("status takes no ID", hint="kafka-leaders sandbox-ctl --ready-file F status")
    path = control_socket(o["ready_file"], o["control"], control_from_env)
    message: dict[str, Any] = {"op": op}
    if broker is not None:
        message["controller" if controller else "broker"] = broker
    if o["catch_up_seconds"] is not None:
        message["catch_up_seconds"] = o["catch_up_seconds"]
    try:
        answer = request(path, message)
    except OSError as e:
        raise UnreachableError(f"The sandbox's control socket {shown(path)} did not answer: {e.strerror or e}",
                               hint="Is the sandbox still running? Its ready file is removed when it stops.") from None
    except ValueError as e:
        raise _not_a_sandbox(path, str(e)) from None
    states = answer.get("controllers" if controller else "brokers")
    if not answer["ok"]:
        if not isinstance(answer.get("error"), str):
            raise _not_a_sandbox(path, 'an "ok": false answer without its "error"')
        raise InputError(shown(answer["error"]), hint="kafka-leaders sandbox-ctl --help lists what it takes.")
    if not isinstance(states, dict):
        raise _not_a_sandbox(path, f"an answer without the {'controllers' if controller else 'brokers'}' states")
    echo(" ".join(f"{shown(str(node))}:{shown(str(state))}" for node, state in states.items()))
    lost = answer.get("lost_records")
    if isinstance(lost, dict) and lost:
        echo(f"records lost by unclean elections: {sum(v for v in lost.values() if isinstance(v, int)):,} ("
             + ", ".join(f"{shown(str(tp))}:{shown(str(n))}" for tp, n in lost.items()) + ")")  # the sandbox's order
    return 0


def _not_a_sandbox(path: str, why: str) -> UnreachableError:
    """A control socket whose answer is not one a sandbox gives (`control_client.request` bounds what it reads)."""
    return UnreachableError(f"The sandbox's control socket {shown(path)} did not answer as a sandbox does: "
                            f"{shown(why, 128)}",
                            hint="Check --control: it names the socket of a running kafka-leaders sandbox.")
