"""A crash is seen at once: `can-stop` and `roll` probe the nodes a safe verdict counts on.

On real Kafka 4.1 (reference/kafka-4.1.0-crash-window.txt) a broker killed with SIGKILL stays alive in the
cluster's view for about 8.5 s, and a killed controller counts as caught up for 2 s: `can-stop` answered "safe"
throughout, and a `roll --resume` started in that window stopped the next broker. The sandbox crashes nodes the
same way (`kill_broker`, `kill_controller`); here the verdicts are taken inside those windows."""

from __future__ import annotations

import json
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaConnectionError
from sampler import Sampler
from strategies import cluster_states
from test_roll import ASSIGNMENT, KL, restart_command
from test_roll_controllers import QuorumSampler
from test_roll_safety import but
from test_unix_schemas import check

from leader_election_cli.cluster.probe import probe
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.model import ClusterState
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import Hooks
from leader_election_cli.operations.maintenance import can_stop
from leader_election_cli.operations.roll import RollSettings
from leader_election_cli.operations.roll import roll as run_roll
from leader_election_cli.planning.maintenance import relied_on, stop_verdict
from leader_election_cli.planning.quorum import quorum_verdict
from leader_election_cli.reports.maintenance import document, roll_document
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer

ELECT_LEADERS = 43
MIN_ISR = {"orders": 2, "logs": 1}
SESSION_S = 9.0  # broker.session.timeout.ms, Kafka's default: the window the cluster lists a crashed broker


def cluster(sandbox_factory: Callable[..., Sandbox], **kwargs: object) -> Sandbox:
    sb = sandbox_factory(3, **kwargs)
    sb.create_topic("orders", assignment=ASSIGNMENT, configs={"min.insync.replicas": "2"})
    sb.create_topic("logs", assignment={0: [2, 3], 1: [3, 1]}, configs={"min.insync.replicas": "1"})
    return sb


def listed_brokers(sb: Sandbox) -> set[int]:
    """The brokers DescribeCluster lists alive (unfenced), through kafka-python's admin client, as an operator's
    script would read them."""
    for _ in range(10):  # it may pick the crashed broker, still listed, to ask (as on the recorded cluster)
        admin = KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, request_timeout_ms=5000)
        try:
            return {b["broker_id"] for b in admin.describe_cluster()["brokers"] if not b["is_fenced"]}
        except KafkaConnectionError:
            continue
        finally:
            admin.close()
    raise AssertionError("DescribeCluster failed 10 times")


def can_stop_cli(sb: Sandbox, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KL, "can-stop", "--bootstrap-server", sb.bootstrap_servers, *args], capture_output=True,
                          text=True, timeout=120)


# -- brokers ------------------------------------------------------------------------------------------------

def test_can_stop_right_after_a_crash_names_the_crashed_broker_while_the_cluster_still_lists_it(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    """The issue's case: kill broker 2, then at once can-stop 3: exit 5 naming broker 2 (18 partitions would go
    under min ISR on the recorded cluster), while Metadata still lists broker 2 alive."""
    sb = cluster(sandbox_factory)
    assert can_stop_cli(sb, "3").returncode == 0
    sb.kill_broker(2)
    killed = time.monotonic()
    answer = can_stop_cli(sb, "3", "--output", "json")
    table = can_stop_cli(sb, "3", "--output", "table")
    assert 2 in listed_brokers(sb) and time.monotonic() - killed < SESSION_S  # inside the crash window
    assert answer.returncode == 5, answer.stderr
    report = json.loads(answer.stdout)
    check(report, "can-stop.schema.json")
    assert report["not_answering"] == [2] and report["safe"] is False and report["already_down"] == []
    assert {(p["topic"], p["partition"]) for p in report["partitions"] if p["blocking"]} == {
        ("orders", p) for p in range(6)} | {("logs", 0)}  # [2, 3]: with 2 crashed, stopping 3 takes it offline
    assert table.returncode == 5
    assert ("broker 2 does not answer (the cluster still lists it: a crashed broker is fenced after "
            "broker.session.timeout.ms), counted as down") in " ".join(table.stdout.split())


def test_a_broker_that_does_not_answer_in_time_counts_as_down(sandbox_factory: Callable[..., Sandbox]) -> None:
    """A listener that takes connections but answers nothing (a hung process) is down past --probe-timeout."""
    sb = cluster(sandbox_factory)
    silent = socket.create_server(("127.0.0.1", 0))  # accepts (the backlog), never answers
    try:
        state = ClusterState({1: sb.brokers[1], 2: silent.getsockname()[:2]}, 1, {})
        started = time.monotonic()
        probes = probe(state.brokers, ClientSettings.default(), 0.3)
        assert time.monotonic() - started < 2
        assert probes[1].answered and probes[2].error == "did not answer within 0.3 s"
    finally:
        silent.close()
    closed = socket.create_server(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    assert probe({7: ("127.0.0.1", port)}, ClientSettings.default(), 1)[7].error == "refused the connection"


def test_a_resume_in_the_crash_window_does_not_stop_the_next_broker(sandbox_factory: Callable[..., Sandbox],
                                                                     tmp_path: Path) -> None:
    """The issue's case: broker 3 left drained by a roll whose command failed; broker 2 is killed; `roll --resume`
    at once: on real 4.1 it restarted broker 3 (18 partitions newly under min ISR). Here it waits, drained, and
    stops with exit 5; nothing is restarted, nothing goes under min ISR."""
    sb = cluster(sandbox_factory)
    control = ControlServer(sb, catch_up_seconds=0).start()
    state_file, log = tmp_path / "roll.json", tmp_path / "restarted.txt"
    try:
        with Sampler(sb, MIN_ISR, interval_s=0.05) as sampler:
            first = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "3",
                                    "--state-file", str(state_file), "--exec", "exit 1", "--output", "json"],
                                   capture_output=True, text=True, timeout=120)
            assert first.returncode == 1, first.stderr
            saved = json.loads(state_file.read_text())
            assert saved["brokers"][0]["step"] == "drained"
            saved["command"] = restart_command(control, log)
            state_file.write_text(json.dumps(saved))
            sb.kill_broker(2)
            killed = time.monotonic()
            resumed = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume",
                                      "--state-file", str(state_file), "--safe-timeout", "1", "--output", "json"],
                                     capture_output=True, text=True, timeout=120)
            assert time.monotonic() - killed < SESSION_S and 2 in listed_brokers(sb)  # all inside the window
        assert resumed.returncode == 5, resumed.stderr
        error = json.loads(resumed.stdout)["error"]
        assert "no longer safe to stop" in error and "broker 2 does not answer" in error
        assert not log.exists() and json.loads(state_file.read_text())["brokers"][0]["step"] == "drained"
        assert sampler.seen(crashed={2}) == set()
    finally:
        control.stop()


def test_the_restore_tries_again_when_the_preferred_leader_is_not_available_yet(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """On real 4.1 a broker stopped right before the restore made its election fail (PREFERRED_LEADER_NOT_AVAILABLE
    on 3 partitions) and ended the roll with exit 1, though --resume seconds later finished it. Here the
    restored broker is away while its restore election is answered and back 0.5 s later: the restore tries again
    and the roll finishes."""
    sb = cluster(sandbox_factory)
    control = ControlServer(sb, catch_up_seconds=0).start()

    def away() -> None:  # (the broker's own restart is over: it leaves for half a second)
        sb.stop_broker(1)
        threading.Timer(0.5, sb.start_broker, (1,)).start()

    @contextmanager
    def progress(*_args: object) -> Iterator[None]:  # wait_back's first look: the next election is the restore's
        sb.hold_next(ELECT_LEADERS, away)
        yield None

    try:
        settings = RollSettings((1,), restart_command(control, tmp_path / "log"), state_file=tmp_path / "r.json")
        # (not through broker 1: a connection lost with it would be read back and resent after it is back)
        report = run_roll(Connection(but(sb, 1)), settings, Hooks(progress=progress))
    finally:
        control.stop()
    assert int(report.exit_code) == 0, report.aborted_reason
    restore = roll_document(report)["brokers"][0]["steps"][-1]
    assert restore["step"] == "restore" and restore["ok"] and "tries" in restore["detail"]
    assert all(sb.partition_state("orders", p).leader == ASSIGNMENT[p][0] for p in range(6))


# -- controllers ---------------------------------------------------------------------------------------------

def _in_the_window(sb: Sandbox, judge: Callable[[], dict]) -> dict:
    """Kill controller 1001 and judge at once; again (it restarted) until the judgement was made while 1001's
    last caught-up time was still within the fetch timeout (the window the quorum rule alone counts it), at
    most 5 times."""
    for _ in range(5):
        sb.kill_controller(1001)
        verdict = judge()
        voter = next(v for v in verdict["voters"] if v["node"] == 1001)
        if voter["last_caught_up_age_ms"] is not None and voter["last_caught_up_age_ms"] < 2000:
            return verdict
        sb.start_controller(1001)
    raise AssertionError("never judged inside the 2 s window: the machine is too slow")


@pytest.mark.parametrize("through", ["brokers", "controllers"])
def test_can_stop_of_a_controller_right_after_another_crashed_is_refused(sandbox_factory: Callable[..., Sandbox],
                                                                         through: str) -> None:
    """The issue's case: kill controller 1001 (a follower), then at once can-stop 1002. DescribeQuorum still
    counts 1001 as caught up (its last caught-up time is recent); stopping 1002 would leave 1 of 3 voters.
    It does not answer, nor show progress: not caught up, not safe."""
    sb = cluster(sandbox_factory)
    connection = Connection(sb.bootstrap_servers) if through == "brokers" else replace(
        Connection(",".join(f"{h}:{p}" for h, p in sb.cluster.controller_addresses.values())), controllers=True)

    def judge() -> dict:
        report = can_stop(connection, [1002], probe_timeout_s=0.5)
        assert int(report.exit_code) == 5
        return document(report)["quorum"]

    quorum = _in_the_window(sb, judge)
    voter = next(v for v in quorum["voters"] if v["node"] == 1001)
    assert voter == {**voter, "answering": False, "caught_up": False}
    assert "controller 1001 does not answer" in quorum["reason"]


def test_a_controller_roll_does_not_stop_a_controller_right_after_another_crashed(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    sb = cluster(sandbox_factory)
    log = tmp_path / "restarted.txt"
    with QuorumSampler(sb) as quorum:
        sb.kill_controller(1001)
        done = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--controllers", "1002",
                               "--safe-timeout", "1", "--probe-timeout", "0.5", "--exec", f"echo {{node}} >> {log}",
                               "--state-file", str(tmp_path / "roll.json"), "--output", "json"],
                              capture_output=True, text=True, timeout=120)
    assert done.returncode == 5, done.stderr
    assert not log.exists() and quorum.fewest >= 2


# -- the pure rules ------------------------------------------------------------------------------------------

@given(state=cluster_states(), data=st.data())
def test_a_broker_not_answering_counts_as_a_broker_the_cluster_no_longer_lists(state: ClusterState,
                                                                               data: st.DataObject) -> None:
    brokers = sorted(state.live_brokers | {r for p in state.partitions.values() for r in p.replicas})
    stopping = data.draw(st.sets(st.sampled_from(brokers), max_size=2)) if brokers else set()
    silent = data.draw(st.sets(st.sampled_from(brokers), max_size=2)) if brokers else set()
    verdict = stop_verdict(state, stopping, not_answering=silent)
    without = replace(state, brokers={b: a for b, a in state.brokers.items() if b not in silent})
    assert replace(verdict, not_answering=()) == stop_verdict(without, stopping)
    assert set(verdict.not_answering) == silent & state.live_brokers - stopping
    assert relied_on(state, stopping) <= state.live_brokers - stopping  # only live brokers, never those stopping


def test_a_voter_not_answering_is_not_caught_up() -> None:
    from leader_election_cli.model import QuorumReplica, QuorumState

    quorum = QuorumState(1000, 3, 50, (QuorumReplica(1000, 50, 10_000, 10_000), QuorumReplica(1001, 50, 9_800, 9_800),
                                       QuorumReplica(1002, 50, 9_900, 9_900)))
    assert quorum_verdict(quorum, [1002]).safe
    refused = quorum_verdict(quorum, [1002], not_answering=[1001])
    assert not refused.safe and "controller 1001 does not answer" in str(refused.reason)


DESCRIBE_QUORUM = 55


def _at_quorum_read(sb: Sandbox, n: int, action: Callable[[], object]) -> None:
    """Run `action` when the `n`th DescribeQuorum from now arrives, before it is answered."""
    if n == 1:
        sb.hold_next(DESCRIBE_QUORUM, action)
    else:
        sb.after_next(DESCRIBE_QUORUM, lambda: _at_quorum_read(sb, n - 1, action))


@pytest.mark.parametrize("step, read", [("wait_safe", 2), ("restart", 3)])
def test_a_controller_crashing_at_each_step_of_a_controller_roll_keeps_it_from_stopping_another(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path, step: str, read: int) -> None:
    """`roll --controllers 1002`: controller 1001 is killed while the quorum read of `step` is under way (the
    plan's read is the first; wait_safe's the second; the one right before the command, at the moment of acting,
    the third). Its last caught-up time is still recent in that read: the probes find it gone, and 1002 is not
    stopped (exit 5): its command never runs."""
    from test_roll_controllers import restart_command as restart_node

    sb = cluster(sandbox_factory)
    control = ControlServer(sb, catch_up_seconds=0.5).start()
    log = tmp_path / "restarted.txt"
    _at_quorum_read(sb, read, lambda: sb.kill_controller(1001))
    try:  # (no quorum sampler here: its DescribeQuorum reads would take the fault meant for the roll's)
        done = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--controllers", "1002",
                               "--safe-timeout", "1", "--exec", restart_node(control, log),
                               "--state-file", str(tmp_path / "roll.json"), "--output", "json"],
                              capture_output=True, text=True, timeout=120)
    finally:
        control.stop()
    assert done.returncode == 5, done.stderr
    report = json.loads(done.stdout)
    assert [s["step"] for s in report["brokers"][0]["steps"]][-1] == step
    assert not log.exists() and 1001 in sb.cluster.controllers_down  # nothing was stopped


@pytest.mark.parametrize("security", ["SASL_PLAINTEXT", "SSL", "SASL_SSL"])
def test_probes_go_through_the_client_s_security_settings(sandbox_factory: Callable[..., Sandbox], tmp_path: Path,
                                                          security: str) -> None:
    """A probe is a connection and ApiVersions over the config file's transport (TLS with its trust store);
    ApiVersions is answered before SASL authentication, so no credential is sent for it. On a secured cluster
    the probes find every broker answering, and one crashed broker not."""
    from test_drop_in_security import ADMIN_SECRET, properties

    sasl = security.startswith("SASL")
    sb = sandbox_factory(3, tls=security.endswith("SSL"), sasl_users={"admin": ADMIN_SECRET} if sasl else None)
    sb.create_topic("orders", assignment=ASSIGNMENT, configs={"min.insync.replicas": "2"})
    tls = f"ssl.truststore.type=PEM\nssl.truststore.location={sb.ca_file}\n" if sb.ca_file else ""
    if sasl:
        config = properties(tmp_path, "admin", ADMIN_SECRET, protocol=security, extra=tls)
    else:
        config = str(tmp_path / "client.properties")
        Path(config).write_text(f"security.protocol=SSL\n{tls}")
    before = sb.request_count(18)
    assert can_stop_cli(sb, "3", "--command-config", config).returncode == 0
    assert sb.request_count(18) >= before + 2  # the probes' ApiVersions, beside the client's own
    sb.kill_broker(2)
    refused = can_stop_cli(sb, "3", "--command-config", config, "--output", "json")
    assert refused.returncode == 5 and json.loads(refused.stdout)["not_answering"] == [2]
    assert ADMIN_SECRET not in refused.stdout + refused.stderr
