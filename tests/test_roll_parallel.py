"""`roll --parallel`: brokers restarted in rounds, each a set the can-stop rule allows down together, the fewest
rounds found (`planning.rounds`); each round drained, checked at the moment of acting, restarted at once, waited
for and given its leadership back. Watched from outside (`sampler.Sampler`): no partition goes offline or under
its min ISR because of the roll."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from sampler import Sampler
from test_roll import KL, restart_command
from test_unix_schemas import check

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer

RACKS = {b: "abc"[(b - 1) % 3] for b in range(1, 13)}


def run_roll(sb: Sandbox, *args: str) -> tuple[int, dict, str]:
    done = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--output", "json", *args],
                          capture_output=True, text=True, timeout=600)
    return done.returncode, json.loads(done.stdout) if done.stdout else {}, done.stderr


def test_a_rack_aware_cluster_is_rolled_one_rack_a_round_and_nothing_goes_under_min_isr(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """The issue's case: 12 brokers on racks a, b, c, RF 3, min.insync.replicas 2 (Kafka places each partition's
    replicas on the three racks): `--parallel auto` restarts every broker once in 3 rounds, one per rack,
    found from the partitions alone."""
    sb = sandbox_factory(12, racks=RACKS, broker_configs={"auto.leader.rebalance.enable": "false"})
    sb.create_topic("orders", 48, 3, configs={"min.insync.replicas": "2"})
    sb.create_topic("logs", 24, 3, configs={"min.insync.replicas": "2"})
    control = ControlServer(sb, catch_up_seconds=0.5).start()
    log = tmp_path / "restarted.txt"
    try:
        with Sampler(sb, {"orders": 2, "logs": 2}, interval_s=0.05) as sampler:
            code, report, err = run_roll(sb, "--brokers", "all", "--parallel", "auto", "--state-file",
                                         str(tmp_path / "roll.json"), "--exec", restart_command(control, log))
    finally:
        control.stop()
    assert code == 0, err
    check(report, "roll.schema.json")
    assert report["rounds"] == [[1, 4, 7, 10], [2, 5, 8, 11], [3, 6, 9, 12]]
    assert report["rounds_bound"]["proven"] and report["rounds_bound"]["serial"] == 12
    assert sorted(int(b) for b in log.read_text().split()) == list(range(1, 13))  # each once
    assert all(b["status"] == "done" for b in report["brokers"])
    assert sampler.samples >= 10 and sampler.seen() == set()
    leaders = [sb.partition_state(t, p) for t, n in (("orders", 48), ("logs", 24)) for p in range(n)]
    assert all(s.leader == s.replicas[0] for s in leaders)  # the leadership given back


def test_rf5_min_isr_2_takes_fewer_rounds_than_no_replica_in_common(sandbox_factory: Callable[..., Sandbox],
                                                                     tmp_path: Path) -> None:
    """Three replicas of an RF 5, min ISR 2 partition may restart together: fewer rounds than colouring brokers
    that share a partition (at least 5 rounds: a partition's replicas pairwise apart)."""
    sb = sandbox_factory(10)
    sb.create_topic("wide", 20, 5, configs={"min.insync.replicas": "2"})
    code, report, err = run_roll(sb, "--brokers", "all", "--parallel", "auto", "--dry-run", "--exec", "true",
                                 "--state-file", str(tmp_path / "roll.json"))
    assert code == 0, err
    check(report, "roll.schema.json")
    assert len(report["rounds"]) < 5 and sorted(b for r in report["rounds"] for b in r) == list(range(1, 11))
    table = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "all", "--parallel",
                            "2", "--dry-run", "--exec", "true", "--output", "table", "--state-file",
                            str(tmp_path / "roll.json")], capture_output=True, text=True, timeout=120)
    assert table.returncode == 0, table.stderr
    assert "5 round(s), proven the fewest the can-stop rule allows; a serial roll takes 10." in table.stdout


def test_a_failed_command_in_a_round_orphans_no_other_and_resume_finishes_the_round(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    sb = sandbox_factory(12, racks=RACKS, broker_configs={"auto.leader.rebalance.enable": "false"})
    sb.create_topic("orders", 24, 3, configs={"min.insync.replicas": "2"})
    control = ControlServer(sb, catch_up_seconds=0).start()
    log, state_file = tmp_path / "restarted.txt", tmp_path / "roll.json"
    failing = f"if [ {{broker}} = 4 ]; then exit 3; fi; {restart_command(control, log)}"
    try:
        with Sampler(sb, {"orders": 2}, interval_s=0.05) as sampler:
            code, report, err = run_roll(sb, "--brokers", "all", "--parallel", "auto", "--state-file",
                                         str(state_file), "--exec", failing)
            assert code == 1, err
            assert "broker 4's command exited 3" in report["error"]
            saved = json.loads(state_file.read_text())
            steps = {b["broker"]: b["step"] for b in saved["brokers"]}
            assert steps[4] == "drained" and {steps[b] for b in (1, 7, 10)} == {"restarted"}
            assert sorted(int(b) for b in log.read_text().split()) == [1, 7, 10]
            saved["command"] = restart_command(control, log)
            state_file.write_text(json.dumps(saved))
            code, report, err = run_roll(sb, "--resume", "--state-file", str(state_file))
    finally:
        control.stop()
    assert code == 0, err
    assert sorted(int(b) for b in log.read_text().split()) == list(range(1, 13))
    assert sampler.seen() == set()


@pytest.mark.parametrize("value, message", [("0", "'0' is neither auto nor a number of brokers from 1 to 10000"),
                                            ("some", "'some' is neither auto nor")])
def test_a_bad_parallel_is_a_one_line_usage_error(sandbox_factory: Callable[..., Sandbox], value: str,
                                                  message: str) -> None:
    sb = sandbox_factory(1)
    done = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "all", "--parallel",
                           value, "--exec", "true"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and message in done.stderr and sb.request_count() == 0


def test_a_round_is_not_stopped_while_a_broker_outside_it_has_crashed(sandbox_factory: Callable[..., Sandbox],
                                                                     tmp_path: Path) -> None:
    """Broker 2 (rack b) is killed: the cluster lists it alive for its session timeout, but the round of rack a
    would leave the partitions it shares with broker 2 one in-sync replica: the probe finds broker 2 gone and
    the round waits, nothing done to it (exit 5)."""
    sb = sandbox_factory(12, racks=RACKS)
    sb.create_topic("orders", 24, 3, configs={"min.insync.replicas": "2"})
    log = tmp_path / "restarted.txt"
    sb.kill_broker(2)
    code, report, err = run_roll(sb, "--brokers", "all", "--parallel", "auto", "--safe-timeout", "1",
                                 "--state-file", str(tmp_path / "roll.json"), "--exec", f"echo {{broker}} >> {log}")
    assert code == 5, err
    assert report["rounds"][0] == [1, 4, 7, 10] and "broker 2 does not answer" in report["error"]
    assert not log.exists() and 2 in sb.live_brokers  # still listed: only the probe saw it


def test_a_randomly_placed_cluster_rolls_in_rounds_each_safe(sandbox_factory: Callable[..., Sandbox],
                                                            tmp_path: Path) -> None:
    """`kafka-leaders sandbox --placement random`'s placement (scenarios.build): each partition's replicas at
    random; RF 3, min ISR 1 allows two of a partition's replicas down together. The rounds the roll plans each
    pass can-stop as one set, every broker goes once, and the roll watched from outside sees nothing unhealthy."""
    from leader_election_cli.sandbox.scenarios import build

    sb = sandbox_factory(8, broker_configs={"auto.leader.rebalance.enable": "false"})
    build(sb, "balanced", 2, 12, 3, {"min.insync.replicas": "1"}, placement="random")
    assert len({sb.partition_state("topic-1", p).replicas for p in range(12)}) > 3  # not round-robin's pattern
    control = ControlServer(sb, catch_up_seconds=0.3).start()
    log = tmp_path / "restarted.txt"
    try:
        with Sampler(sb, {"topic-1": 1, "topic-2": 1}, interval_s=0.05) as sampler:
            code, report, err = run_roll(sb, "--brokers", "all", "--parallel", "auto", "--state-file",
                                         str(tmp_path / "roll.json"), "--exec", restart_command(control, log))
    finally:
        control.stop()
    assert code == 0, err
    assert sorted(b for r in report["rounds"] for b in r) == list(range(1, 9)) and len(report["rounds"]) < 8
    for r in report["rounds"]:
        done = subprocess.run([KL, "can-stop", "--bootstrap-server", sb.bootstrap_servers, ",".join(map(str, r))],
                              capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (r, done.stdout)
    assert sorted(int(b) for b in log.read_text().split()) == list(range(1, 9)) and sampler.seen() == set()


def test_a_broker_crashing_at_the_moment_a_round_acts_keeps_the_round_from_its_restart(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """Broker 2 (rack b) is killed right when the first round (rack a), drained, is checked before its commands:
    the cluster still lists broker 2 alive, the probes find it gone, and no broker of the round is restarted
    (exit 5, the round drained: --resume carries on once broker 2 is back)."""
    from leader_election_cli.operations.connection import Connection
    from leader_election_cli.operations.hooks import Hooks
    from leader_election_cli.operations.roll import RollSettings, roll

    sb = sandbox_factory(12, racks=RACKS, broker_configs={"auto.leader.rebalance.enable": "false"})
    sb.create_topic("orders", 24, 3, configs={"min.insync.replicas": "2"})
    log, state_file = tmp_path / "restarted.txt", tmp_path / "roll.json"

    killed: list[int] = []

    def note(line: str) -> None:
        if "checking it is still safe to stop" in line and not killed:
            killed.append(2)
            sb.kill_broker(2)

    with Sampler(sb, {"orders": 2}, interval_s=0.05) as sampler:
        report = roll(Connection(",".join(f"{h}:{p}" for b, (h, p) in sb.brokers.items() if b != 2)),
                      RollSettings(None, f"echo {{broker}} >> {log}", parallel=None, safe_wait_s=1,
                                   state_file=state_file), Hooks(note=note))
    assert int(report.exit_code) == 5, report.aborted_reason
    assert "brokers 1,4,7,10, restart: no longer safe to stop" in (report.aborted_reason or "")
    assert "broker 2 does not answer" in (report.aborted_reason or "") and 2 in sb.live_brokers
    assert not log.exists()
    assert {b["step"] for b in json.loads(state_file.read_text())["brokers"] if b["broker"] in (1, 4, 7, 10)} == {
        "drained"}
    assert sampler.seen(crashed={2}) == set()
