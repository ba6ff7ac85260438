"""Rolling the whole KRaft cluster, controllers first: `kafka-leaders roll --nodes all` against sandboxes with
dedicated and with combined controllers, watched from outside the tool (partitions offline or under min ISR,
and the controller quorum's caught-up majority, sampled every 100 ms); a roll that refuses to stop a controller
while another is down or lagging; and `can-stop` of a controller against the quorum rule worked out here from
a DescribeQuorum answer read by the test."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sampler import Sampler
from test_roll import KL
from test_sandbox_quorum import describe_quorum, wait_for
from test_unix_schemas import check

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer

FETCH_TIMEOUT_MS = 2000  # controller.quorum.fetch.timeout.ms, Kafka's default (the sandbox has no other)
ASSIGNMENT = {p: [1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3] for p in range(6)}


def running(sb: Sandbox, node: int) -> bool:
    """Whether a voter's process runs (a dedicated controller, or a broker in combined mode)."""
    if node in sb.cluster.broker_ids:
        return sb.cluster.is_running(node)
    return node not in sb.cluster.controllers_down


def caught_up_voters(answer: object, sb: Sandbox) -> tuple[int, set[int]]:
    """(leader, the running voters caught up with it): written out here from the answer, as Strimzi's
    KafkaQuorumCheck counts (the leader, and voters whose LastCaughtUpTimestamp is within the fetch timeout
    of the leader's)."""
    partition = answer.topics[0].partitions[0]
    times = {v.replica_id: v.last_caught_up_timestamp for v in partition.current_voters}
    leader = partition.leader_id
    if leader < 0:
        return leader, set()
    return leader, {n for n, t in times.items() if running(sb, n) and t >= 0
                    and (n == leader or times[leader] - t < FETCH_TIMEOUT_MS)}


def behind(answer: object, node: int) -> bool:
    """Whether the voter's last caught-up time is past the fetch timeout of the leader's (running or not)."""
    partition = answer.topics[0].partitions[0]
    times = {v.replica_id: v.last_caught_up_timestamp for v in partition.current_voters}
    return times[node] < 0 or times[partition.leader_id] - times[node] >= FETCH_TIMEOUT_MS


class QuorumSampler(Sampler):
    """DescribeQuorum through a broker every 100 ms: the fewest running voters caught up with a leader seen."""

    def __init__(self, sb: Sandbox):
        super().__init__(sb, {})
        self.fewest = 99

    def _look(self) -> None:
        while not self.stopping.wait(0.1):
            for broker in self.sb.cluster.broker_ids:  # one that is up
                if not self.sb.cluster.is_running(broker):
                    continue
                try:
                    answer = describe_quorum(self.sb.brokers[broker])
                except OSError:
                    continue
                self.samples += 1
                self.fewest = min(self.fewest, len(caught_up_voters(answer, self.sb)[1]))
                break


@pytest.fixture(params=["dedicated", "combined"])
def cluster(request: pytest.FixtureRequest, sandbox_factory: Callable[..., Sandbox]
            ) -> Iterator[tuple[Sandbox, ControlServer]]:
    sb = sandbox_factory(3, combined=request.param == "combined")
    sb.create_topic("orders", assignment=ASSIGNMENT, configs={"min.insync.replicas": "2"})
    sb.create_topic("logs", assignment={0: [2, 3], 1: [3, 1]}, configs={"min.insync.replicas": "1"})
    control = ControlServer(sb, catch_up_seconds=1.5).start()
    yield sb, control
    control.stop()


def restart_command(control: ControlServer, log: Path) -> str:
    """--exec: note the node in `log`, then restart it through the sandbox's control socket (a dedicated
    controller's ids are 1000 and up)."""
    ctl = f"{shlex.quote(KL)} sandbox-ctl --control {shlex.quote(control.path)}"
    return (f"echo {{node}} >> {shlex.quote(str(log))}; if [ {{node}} -ge 1000 ]; then {ctl} restart-controller "
            f"{{node}}; else {ctl} restart-broker {{broker}}; fi")


def roll(sb: Sandbox, *args: str, timeout: float = 300) -> tuple[int, dict, str]:
    process = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--output", "json", *args],
                             capture_output=True, text=True, timeout=timeout)
    return process.returncode, json.loads(process.stdout), process.stderr


def test_a_whole_cluster_roll_restarts_every_node_once_keeping_the_quorum_and_the_partitions(
        cluster: tuple[Sandbox, ControlServer], tmp_path: Path) -> None:
    sb, control = cluster
    dedicated = sb.cluster.voters is None
    leader = sb.quorum_leader
    log = tmp_path / "restarted.txt"
    with Sampler(sb, {"orders": 2, "logs": 1}) as partitions, QuorumSampler(sb) as quorum:
        code, report, err = roll(sb, "--nodes", "all", "--state-file", str(tmp_path / "roll.json"),
                                 "--exec", restart_command(control, log))
    assert code == 0, err
    check(report, "roll.schema.json")
    check(json.loads((tmp_path / "roll.json").read_text()), "roll-state.schema.json")
    restarted = [int(n) for n in log.read_text().split()]
    voters = [1000, 1001, 1002] if dedicated else [1, 2, 3]
    controllers = [v for v in voters if v != leader] + [leader]  # the quorum's leader last among them
    assert restarted == controllers + ([1, 2, 3] if dedicated else [])  # every node once, controllers first
    roles = {b["broker"]: b["role"] for b in report["brokers"]}
    assert roles == {n: "controller" if n >= 1000 else "broker" for n in restarted}
    for b in report["brokers"]:
        steps = [s["step"] for s in b["steps"]]
        assert b["status"] == "done" and steps == (["wait_safe", "restart", "wait_back"] if b["role"] == "controller"
                                                   else ["wait_safe", "drain", "restart", "wait_back", "restore"])
        if b["broker"] in voters:  # the quorum rule held before each voter's stop
            assert b["steps"][0]["quorum"]["safe"] and b["steps"][0]["quorum"]["controllers"] == [b["broker"]]
    assert partitions.samples >= 10 and quorum.samples >= 10  # the whole roll was watched
    assert partitions.seen() == set()
    assert quorum.fewest >= 2 and quorum.error is None  # never below a caught-up majority of the three voters


def test_a_roll_refuses_to_stop_a_controller_while_another_is_down_or_lagging(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    log = tmp_path / "restarted.txt"
    sb.stop_controller(1001)
    for lagging in (False, True):
        if lagging:  # back, but catching up with the leader for a long while
            sb.start_controller_catching_up(1001, 60)
        wait_for(lambda: behind(describe_quorum(sb.brokers[1]), 1001))
        state_file = tmp_path / f"roll-{lagging}.json"
        code, report, _ = roll(sb, "--controllers", "1002", "--safe-timeout", "1", "--state-file", str(state_file),
                               "--exec", f"echo {{node}} >> {shlex.quote(str(log))}")
        check(report, "roll.schema.json")
        assert code == 5 and report["error"].startswith("controller 1002, wait_safe: still not safe to stop"), report
        (step,) = report["brokers"][0]["steps"]
        lag = {v["node"]: v for v in step["quorum"]["voters"]}[1001]
        assert not lag["caught_up"] and lag["last_caught_up_age_ms"] >= FETCH_TIMEOUT_MS
        assert step["quorum"]["caught_up_after"] == 1 and step["quorum"]["needed"] == 2
        assert not log.exists() and 1002 not in sb.cluster.controllers_down  # nothing was done to it


@pytest.mark.parametrize("down,lagging", [((), False), ((1001,), False), ((1000,), False), ((1001,), True),
                                          ((1000, 1002), False)])
def test_can_stop_of_a_controller_agrees_with_the_rule_worked_out_from_describe_quorum(
        sandbox_factory: Callable[..., Sandbox], down: tuple[int, ...], lagging: bool) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT}, forwarding_timeout_s=2)
    for node in down:
        sb.stop_controller(node)
    if lagging:  # back, catching up for a long while: running, but behind
        wait_for(lambda: all(behind(describe_quorum(sb.brokers[1]), n) for n in down))
        for node in down:
            sb.start_controller_catching_up(node, 60)
    if len(down) < 2:  # the stopped voter's last caught-up time is past the fetch timeout: no boundary case
        wait_for(lambda: all(behind(describe_quorum(sb.brokers[1]), n) for n in down))
    for node in (1000, 1001, 1002, 2):
        process = subprocess.run([KL, "can-stop", "--bootstrap-server", sb.bootstrap_servers, str(node),
                                  "--timeout", "3", "--output", "json"], capture_output=True, text=True, timeout=60)
        if len(down) == 2:  # no quorum leader: what the broker forwards to the controller is never answered
            assert process.returncode == 3 and "controller quorum has no leader" in process.stdout, process.stdout
            continue
        leader, caught = caught_up_voters(describe_quorum(sb.brokers[1]), sb)
        expected = node not in (1000, 1001, 1002) or (len(caught - {node}) >= 2 and (node != leader or caught >= {
            1000, 1001, 1002}))
        report = json.loads(process.stdout)
        check(report, "can-stop.schema.json")
        assert (process.returncode, report["safe"]) == ((0, True) if expected else (5, False)), (node, report)
        if node >= 1000:
            assert [v["node"] for v in report["quorum"]["voters"]] == [1000, 1001, 1002]
            assert all(v["lag"] is not None or v["node"] in down for v in report["quorum"]["voters"])
            assert [v["caught_up"] for v in report["quorum"]["voters"]] == [n in caught for n in (1000, 1001, 1002)]
        else:
            assert report["quorum"] is None


def test_a_controller_id_that_is_no_voter_is_a_usage_error(sandbox_factory: Callable[..., Sandbox],
                                                            tmp_path: Path) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    process = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--controllers", "7",
                              "--exec", "true", "--state-file", str(tmp_path / "roll.json")],
                             capture_output=True, text=True, timeout=60)
    assert process.returncode == 2 and process.stderr.splitlines()[0] == \
        "Node 7 is not a controller (the quorum's voters: 1000,1001,1002)"
    assert not (tmp_path / "roll.json").exists()
    started = time.monotonic()
    process = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--nodes", "all", "--brokers",
                              "1", "--exec", "true"], capture_output=True, text=True, timeout=60)
    assert process.returncode == 2 and "--nodes all rolls every" in process.stderr
    assert time.monotonic() - started < 30


def test_can_stop_through_the_controllers_alone_agrees_with_the_brokers(sandbox_factory: Callable[..., Sandbox]
                                                                        ) -> None:
    """--bootstrap-controller (KIP-919): DescribeQuorum straight from the controllers, the followers first
    (they answer NOT_LEADER_OR_FOLLOWER: the next is asked), the same verdicts as through the brokers."""
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    listeners = {n.node_id: f"127.0.0.1:{n.listeners[0].port}" for n in describe_quorum(sb.brokers[1]).nodes}
    controllers = ",".join(listeners[n] for n in (1002, 1001, 1000))
    sb.stop_controller(1001)
    wait_for(lambda: behind(describe_quorum(sb.brokers[1]), 1001))

    def can_stop(*args: str) -> tuple[int, dict | None, str]:
        process = subprocess.run([KL, "can-stop", *args, "--output", "json"], capture_output=True, text=True,
                                 timeout=60)
        return process.returncode, json.loads(process.stdout) if process.stdout else None, process.stderr

    for node in ("1000", "1001", "1002"):
        code, direct, _ = can_stop("--bootstrap-controller", controllers, node)
        check(direct, "can-stop.schema.json")
        through, brokers, _ = can_stop("--bootstrap-server", sb.bootstrap_servers, node)
        assert code == through and direct["safe"] == brokers["safe"] and code == (0 if node == "1001" else 5)
        assert direct["quorum"]["leader"] == 1000 and brokers["quorum"]["fetch_timeout_from"] == "default"
        # the leader answers DescribeConfigs for itself: its controller.quorum.fetch.timeout.ms
        assert (direct["quorum"]["fetch_timeout_from"], direct["quorum"]["fetch_timeout_ms"]) == ("config", 2000)
    code, _, err = can_stop("--bootstrap-controller", controllers, "2")
    assert code == 2 and err.startswith("With --bootstrap-controller only controllers can be judged: 2 is no voter")
    code, _, err = can_stop("--bootstrap-controller", controllers, "--bootstrap-server", sb.bootstrap_servers, "1000")
    assert code == 2 and err.startswith("Give only one of --bootstrap-server and --bootstrap-controller")
    code, report, _ = can_stop("--bootstrap-controller", listeners[1002], "1000")  # a follower alone
    assert code == 3 and "answered as the quorum's leader" in report["error"]


def test_a_controller_roll_plans_dry_and_resumes_after_a_signal(sandbox_factory: Callable[..., Sandbox],
                                                              tmp_path: Path) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    control = ControlServer(sb, catch_up_seconds=0.5).start()
    try:
        code, plan, _ = roll(sb, "--nodes", "all", "--dry-run", "--exec", "restart {node} on {host}")
        check(plan, "roll.schema.json")
        assert code == 0 and [(b["broker"], b["role"]) for b in plan["brokers"]] == [
            (1001, "controller"), (1002, "controller"), (1000, "controller"), (1, "broker"), (2, "broker"),
            (3, "broker")]  # the quorum's leader (1000) last among the controllers, then the brokers
        first = plan["brokers"][0]["steps"]
        assert [s["step"] for s in first] == ["wait_safe", "restart", "wait_back"] and first[0]["quorum"]["safe"]
        assert first[1]["detail"] == "would run: restart 1001 on 127.0.0.1"  # {host}: its controller listener's
        log, state_file, gates = tmp_path / "restarted.txt", tmp_path / "roll.json", tmp_path / "gates"
        gates.mkdir()
        (gates / "1001").touch()
        started = tmp_path / "started"  # a command begun: its node's file, before it waits at its gate
        started.mkdir()
        gate = (f"touch {shlex.quote(str(started))}/{{node}}; i=0; while [ ! -e {shlex.quote(str(gates))}/{{node}} ] "
                "&& [ $i -lt 1200 ]; do sleep 0.05; i=$((i + 1)); done; ")
        command = gate + restart_command(control, log)
        process = subprocess.Popen([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--controllers", "all",
                                    "--state-file", str(state_file), "--output", "json", "--exec", command],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 120
        while not (started / "1002").exists():  # the second controller's command waits at its gate
            assert time.monotonic() < deadline and process.poll() is None, process.communicate()
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        (gates / "1002").touch()
        out, err = process.communicate(timeout=120)
        assert process.returncode == 143, err
        saved = json.loads(state_file.read_text())
        check(saved, "roll-state.schema.json")
        assert [(b["broker"], b["role"], b["step"]) for b in saved["brokers"]] == [
            (1001, "controller", "done"), (1002, "controller", "restarted"), (1000, "controller", "pending")]
        (gates / "1000").touch()
        code, report, err = roll(sb, "--resume", "--state-file", str(state_file))
        assert code == 0, err
        assert {b["broker"]: [s["step"] for s in b["steps"]] for b in report["brokers"]} == {
            1002: ["wait_back"], 1000: ["wait_safe", "restart", "wait_back"]}
        assert [int(n) for n in log.read_text().split()] == [1001, 1002, 1000]  # each once
    finally:
        control.stop()


def test_every_node_of_a_zookeeper_mode_cluster_is_every_broker(sandbox_factory: Callable[..., Sandbox],
                                                                 tmp_path: Path) -> None:
    sb = sandbox_factory(3, mode="zk", topics={"t": ASSIGNMENT})
    code, plan, _ = roll(sb, "--nodes", "all", "--dry-run", "--exec", "true")
    assert code == 0 and [(b["broker"], b["role"]) for b in plan["brokers"]] == [(2, "broker"), (3, "broker"),
                                                                               (1, "broker")]  # controller 1 last
    process = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--controllers", "all",
                              "--exec", "true", "--state-file", str(tmp_path / "roll.json")],
                             capture_output=True, text=True, timeout=60)
    assert process.returncode == 2 and process.stderr.startswith("The controller quorum could not be read")
