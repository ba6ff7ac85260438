"""What `roll` reads of the cluster, step by step: a read of every partition is what a roll spends its time
on at 100,000 partitions (benchmarks/roll_overhead.py), so a step plans from the read the step before
ended on, taken a moment before, instead of reading it all again; and the safety read keeps only the
partitions the broker replicates."""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest
from commands import BIN, run_command

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.model import TopicPartition
from leader_election_cli.operations import roll as roll_module
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.maintenance import read_for_stop
from leader_election_cli.operations.roll import RollSettings, roll
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer

ASSIGNMENT = {p: [1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3] for p in range(6)}


def test_the_drain_reads_its_brokers_partitions_and_the_restore_plans_from_the_wait_s_last_read(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sb = sandbox_factory(3, topics={"orders": ASSIGNMENT})
    control = ControlServer(sb, catch_up_seconds=0.3).start()
    reads: list[str] = []
    describe = ClusterConnection.describe
    monkeypatch.setattr(ClusterConnection, "describe",
                        lambda self, **kw: reads.append(f"read of {kw.get('replicas_of')}, topics {kw.get('topics')}")
                        or describe(self, **kw))
    for step in ("_drain", "_restore"):
        monkeypatch.setattr(roll_module._Runner, step, _noted(step, getattr(roll_module._Runner, step), reads))
    command = f"{shlex.quote(str(BIN / 'kafka-leaders'))} sandbox-ctl --control {shlex.quote(control.path)} " \
              "restart-broker {broker}"
    try:
        report = roll(Connection(sb.bootstrap_servers), RollSettings((1, 2), command,
                                                                      state_file=tmp_path / "roll.json"))
    finally:
        control.stop()
    assert report.exit_code == 0 and [b.status for b in report.brokers] == ["done", "done"]
    assert all(s.moved == 2 for b in report.brokers for s in b.steps if s.name in ("drain", "restore"))
    # start-up: the brokers alone (both are live); safety reads, waits: each of the partitions of the broker
    # rolled only, never of every partition
    assert reads[0] == "read of None, topics ()" and {what for what in reads[1:] if what.startswith("read")} == {
        "read of [1], topics None", "read of [2], topics None"}, reads
    for step, own in (("_drain", ["read of [1], topics None", "read of [2], topics None"]), ("_restore", [])):
        # the drain: a fresh read of its broker's partitions (another broker may have died since the safety
        # read); the restore: none, it plans from the read that found the broker back
        starts = [i for i, what in enumerate(reads) if what == f"{step} starts"]
        assert len(starts) == 2
        for i, read in zip(starts, own or [None, None], strict=True):
            assert reads[i + 1:i + 2 + bool(read)] == ([read] if read else []) + [f"{step} ends"], reads


def _noted(step: str, run: Callable, reads: list[str]) -> Callable:
    """`run` (a step of the roll), noting in `reads` where it starts and ends."""
    def noted(self: roll_module._Runner, b: object) -> object:
        reads.append(f"{step} starts")
        try:
            return run(self, b)
        finally:
            reads.append(f"{step} ends")
    return noted


def test_the_safety_read_holds_the_partitions_the_broker_replicates_and_their_topics_configs(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(4, topics={"orders": ASSIGNMENT, "elsewhere": {0: [2, 3], 1: [3, 4]}})
    with Connection(sb.bootstrap_servers).open(ClientSettings()) as cluster:
        state = read_for_stop(cluster, [1])
        everything = read_for_stop(cluster, [])
    assert set(state.partitions) == {tp for tp, p in everything.partitions.items() if 1 in p.replicas}
    assert set(state.partitions) == {TopicPartition("orders", p) for p in ASSIGNMENT}
    assert state.partitions == {tp: everything.partitions[tp] for tp in state.partitions}
    assert set(state.min_insync_replicas) == {"orders"} and state.live_brokers == everything.live_brokers


def test_a_broker_named_that_is_down_is_rolled_when_it_is_a_replica_and_refused_when_it_is_neither(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """The start-up reads the partitions only when a broker named is not live: a typo is still exit 2."""
    sb = sandbox_factory(3, topics={"orders": ASSIGNMENT})
    sb.stop_broker(3)
    code, _, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "9",
                               "--exec", "true", "--state-file", str(tmp_path / "typo.json"))
    assert code == 2 and "Broker 9 is neither live nor a replica of any partition" in err, err
    code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "3",
                                 "--exec", "exit 7", "--output", "json", "--state-file", str(tmp_path / "down.json"))
    [broker] = json.loads(out)["brokers"]  # planned, safe to stop (down already), drained, then its command failed
    assert code == 1 and broker["broker"] == 3 and broker["steps"][-1]["command_exit"] == 7, err
