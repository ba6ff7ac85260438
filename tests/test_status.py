"""`kafka-leaders status` against the sandbox: its numbers checked against the sandbox's own state."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from functools import partial

import pytest
from commands import run_command

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.scenarios import summarize

TOPICS = {"orders": {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 2, 3]},
          "logs": {0: [2, 1], 1: [1, 2]},
          "solo": {0: [3]}}
MIN_ISR = {"orders": 2, "logs": 1, "solo": 1}
DESCRIBE_CONFIGS, TOPIC_AUTHORIZATION_FAILED = 32, 29


kl = partial(run_command, cli)


@pytest.fixture(scope="module")
def sb(module_sandbox_factory: Callable[..., Sandbox], mode: str) -> Sandbox:
    """Every kind of trouble at once; the tests only read."""
    sandbox = module_sandbox_factory(mode=mode)
    for name, assignment in TOPICS.items():
        sandbox.create_topic(name, assignment=assignment, configs={"min.insync.replicas": str(MIN_ISR[name])})
    sandbox.set_leader("orders", 0, 2)  # off its preferred replica, fixable
    sandbox.set_isr("orders", 1, [2])  # under-replicated and under min.insync.replicas
    sandbox.stop_broker(3)  # solo-0 is left without a leader
    return sandbox


def states(sb: Sandbox) -> list:
    return [sb.partition_state(t, p) for t, assignment in TOPICS.items() for p in assignment]


def status(sb: Sandbox, *args: str) -> tuple[int, dict]:
    code, out, err = kl("status", "--bootstrap-server", sb.bootstrap_servers, "--output", "json", *args)
    assert err == ""
    return code, json.loads(out)


def test_per_broker_numbers_match_the_sandbox(sb: Sandbox) -> None:
    code, doc = status(sb)
    assert code == 0
    parts = states(sb)
    not_led = Counter(p.replicas[0] for p in parts if p.leader != p.replicas[0])
    summary = summarize(sb)
    expected = [{"broker": b.broker, "alive": b.live, "leaders": b.leaders, "preferred": b.preferred,
                 "not_led_by_preferred": not_led[b.broker],
                 "imbalance_ratio": round(not_led[b.broker] / b.preferred, 6) if b.preferred else 0.0}
                for b in summary.brokers]
    assert doc["brokers"] == expected
    assert doc["brokers"][2]["alive"] is False and doc["brokers"][2]["imbalance_ratio"] > 0


def test_cluster_numbers_match_the_sandbox(sb: Sandbox) -> None:
    _, doc = status(sb)
    parts = states(sb)
    summary = summarize(sb)
    live = sb.live_brokers
    offline = sorted(f"{p.topic}-{p.partition}" for p in parts if p.leader == NO_LEADER or p.leader not in live)
    assert offline == sorted(summary.leaderless) == ["solo-0"]
    assert doc["offline"] == 1 and doc["offline_partitions"] == offline
    # its only replica, broker 3, is down: in the ISR (zk) or the ELR (KRaft 4.1), it would lead without loss
    assert doc["offline_recovery"] == {"solo-0": [3]}
    assert doc["partitions"] == summary.partitions == len(parts)
    assert doc["not_preferred_leader"] == len(summary.off_preferred) + len(summary.leaderless)
    assert doc["under_replicated"] == sum(len(p.isr) < len(p.replicas) for p in parts)
    # the partitions themselves, not only their counts
    def by_partition(name: str) -> tuple[str, int]:
        topic, partition = name.rsplit("-", 1)
        return topic, int(partition)

    assert doc["not_preferred_leader_partitions"] == sorted(summary.off_preferred + summary.leaderless,
                                                            key=by_partition)
    assert doc["under_replicated_partitions"] == [f"{p.topic}-{p.partition}" for p in sorted(
        parts, key=lambda p: (p.topic, p.partition)) if len(p.isr) < len(p.replicas)]
    assert len(doc["not_preferred_leader_partitions"]) == doc["not_preferred_leader"]
    assert len(doc["under_replicated_partitions"]) == doc["under_replicated"]
    assert doc["under_min_isr_partitions"] == sorted(summary.under_min_isr)
    assert "orders-1" in doc["under_min_isr_partitions"] and doc["under_min_isr"] == len(summary.under_min_isr)
    assert doc["fixable"] == sum(p.leader != p.replicas[0] and p.replicas[0] in live and p.replicas[0] in p.isr
                                 for p in parts)
    assert (doc["reassigning"], doc["reassigning_partitions"]) == (0, [])
    assert doc["min_isr_unknown_topics"] == []
    # A KRaft broker answers Metadata with a random live broker as the controller: not shown as one.
    assert (doc["controller_id"], doc["mode"]) == (None if sb.mode == "kraft" else sb.controller_id, sb.mode)


def test_pending_reassignments_are_counted(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(brokers=3)
    sb.create_topic("grow", assignment={0: [1, 2], 1: [2, 3]})
    sb.cluster.alter_reassignment("grow", 0, [1, 2, 3])  # adds a replica: pending until it catches up
    _, doc = status(sb)
    assert (doc["reassigning"], doc["reassigning_partitions"]) == (1, ["grow-0"])
    # replicas [1, 2, 3], ISR [1, 2]: the replica being added is not missing (Kafka's count too)
    assert doc["under_replicated"] == 0


def test_topics_whose_min_isr_cannot_be_read_are_not_counted_as_fine(sb: Sandbox) -> None:
    sb.fail_next(DESCRIBE_CONFIGS, TOPIC_AUTHORIZATION_FAILED)  # per topic, as Kafka answers without DESCRIBE_CONFIGS
    _, doc = status(sb)
    assert (doc["under_min_isr"], doc["min_isr_unknown_topics"]) == (0, sorted(TOPICS))
    sb.fail_next(DESCRIBE_CONFIGS, TOPIC_AUTHORIZATION_FAILED)
    _, out, _ = kl("status", "--bootstrap-server", sb.bootstrap_servers, "--output", "table")
    assert "Under min.insync.replicas: 0\n  not known for 3 topic(s), whose configs could not be read" in out


def test_fail_above_exits_1_only_above_the_ratio(sb: Sandbox) -> None:
    _, doc = status(sb)
    worst = max(b["imbalance_ratio"] for b in doc["brokers"])
    assert worst == 1.0  # broker 3 is down: it leads none of the partitions it is preferred for
    code, doc = status(sb, "--fail-above", "100")
    assert (code, doc["failing_brokers"], doc["exit_code"]) == (0, [], 0)
    code, doc = status(sb, "--fail-above", "99.5")
    assert (code, doc["failing_brokers"], doc["exit_code"]) == (1, [3], 1)
    assert doc["brokers"][2]["above_threshold"] is True and doc["brokers"][0]["above_threshold"] is False


def test_fail_above_at_the_exact_ratio_is_not_above(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(brokers=2)
    sb.create_topic("t", assignment={p: [1, 2] for p in range(4)})
    sb.set_leader("t", 0, 2)  # broker 1: 1 of its 4 partitions led by another, 25%
    assert status(sb, "--fail-above", "25")[0] == 0
    assert status(sb, "--fail-above", "24.9")[0] == 1


def test_table_output(sb: Sandbox) -> None:
    code, out, err = kl("status", "--bootstrap-server", sb.bootstrap_servers, "--output", "table",
                        "--fail-above", "50")
    assert (code, err) == (1, "")
    assert (f"(controller {sb.controller_id}, zk)" if sb.mode == "zk" else "(kraft)") in out
    assert "100.0%" in out and "Leaderless or offline: 1 (solo-0)" in out
    assert "Under min.insync.replicas: " in out and "orders-1" in out
    assert "Brokers above 50%: 3 (2 of 2 not led by it, 100.0%)" in out


def test_balanced_cluster_passes(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(brokers=3, mode="zk")
    sb.create_topic("t", partitions=6, replication_factor=3)
    code, doc = status(sb, "--fail-above", "0")
    assert code == 0 and {b["imbalance_ratio"] for b in doc["brokers"]} == {0.0}
    assert [b["leaders"] for b in doc["brokers"]] == [2, 2, 2] == [b["preferred"] for b in doc["brokers"]]


@pytest.mark.parametrize("args, message", [
    (["--fail-above", "101"], "Invalid value for '--fail-above': 101.0 is not in the range 0<=x<=100."),
    (["--output", "text"], "Invalid value for '--output': 'text' is not one of 'auto', 'table', 'json'."),
])
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    code, out, err = kl("status", "--bootstrap-server", "127.0.0.1:1", *args)
    assert (code, out, err.splitlines()[0]) == (2, "", message)


@pytest.mark.parametrize("output", ["table", "json"])
def test_unreachable_exits_3(monkeypatch: pytest.MonkeyPatch, output: str) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", "127.0.0.1:1")
    code, out, err = kl("status", "--timeout", "0.5", "--output", output)
    assert code == 3 and "127.0.0.1:1 refused the connection" in err
    if output == "table":
        assert out == ""
    else:  # a monitor reading stdout gets a document saying why, not an empty string
        assert json.loads(out) == {"schema_version": 1, "cluster_id": None, "error": err.splitlines()[0],
                                   "exit_code": 3}


def test_status_shows_the_controllers_own_rebalance(sb: Sandbox) -> None:
    """auto.leader.rebalance.enable and its settings, as a broker's DescribeConfigs reports them."""
    _, doc = status(sb)
    # a ZooKeeper-mode broker's threshold; a 4.x KRaft broker has none (kafka-4.1.0-configs.txt)
    threshold = {"leader.imbalance.per.broker.percentage": "10"} if sb.mode == "zk" else {}
    assert doc["auto_leader_rebalance"] == {"auto.leader.rebalance.enable": "true",
                                            "leader.imbalance.check.interval.seconds": "300", **threshold}
    _, out, _ = kl("status", "--bootstrap-server", sb.bootstrap_servers, "--output", "table")
    scope = "every partition led off its preferred replica" if sb.mode == "kraft" else \
        "the partitions of brokers above leader.imbalance.per.broker.percentage (10%)"
    assert f"Automatic leader rebalance: on: the controller elects preferred leaders every 300 s for {scope}" in out
    if sb.mode == "kraft":  # what a broker says of its own config; the controllers' decides
        assert "(broker 1's setting: the KRaft controllers' own decides)" in out


def test_status_says_when_the_controller_leaves_leaders_alone(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(brokers=2, broker_configs={"auto.leader.rebalance.enable": "false"})
    sb.create_topic("t", assignment={0: [1, 2]})
    _, out, _ = kl("status", "--bootstrap-server", sb.bootstrap_servers, "--output", "table")
    assert "Automatic leader rebalance: off (auto.leader.rebalance.enable=false)" in out


def test_min_isr_above_the_replica_count_is_capped_as_kafka_3_7_does(sandbox_factory: Callable[..., Sandbox]) -> None:
    """An RF=1 topic under a min.insync.replicas=2 default takes acks=all writes since Kafka 3.7
    (KAFKA-15583: the leader applies min(min.insync.replicas, replicas)); it was listed as under min ISR."""
    sb = sandbox_factory(brokers=2)  # the sandbox's brokers speak Kafka 4.2's (3.9's in zk mode) API versions
    sb.create_topic("solo", assignment={0: [1]}, configs={"min.insync.replicas": "2"})
    sb.create_topic("pair", assignment={0: [1, 2]}, configs={"min.insync.replicas": "2"})
    sb.set_isr("pair", 0, [1])
    _, doc = status(sb)
    assert (doc["under_min_isr"], doc["under_min_isr_partitions"]) == (1, ["pair-0"])


@pytest.mark.parametrize(("version", "features"), [("4.1", {}), ("4.1", {"eligible.leader.replicas.version": 0}),
                                                   ("4.0", {})], ids=["4.1", "4.1-without-elr", "4.0"])
def test_which_leaderless_partitions_can_recover_without_data_loss(sandbox_factory: Callable[..., Sandbox],
                                                                   version: str, features: dict[str, int]) -> None:
    """kafka-4.1.0-leaderless-elr-on.txt, step 3: every replica down, the ELR holds the last in-sync ones;
    whichever returns leads without data loss. A partition whose ISR and ELR were emptied (as after
    unclean shutdowns) has nobody to wait for. Without ELR the ISR keeps its last member instead."""
    sb = sandbox_factory(brokers=4, kafka_version=version, features=features)
    sb.create_topic("rf3-min2", assignment={0: [2, 3, 4]}, configs={"min.insync.replicas": "2"})
    sb.create_topic("lost", assignment={0: [2, 3]})
    for broker in (4, 3, 2):
        sb.stop_broker(broker)
    elr = sb.cluster.elr_enabled
    assert sb.partition_state("rf3-min2", 0)[4:6] == (((), (2, 3)) if elr else ((2,), ()))
    sb.cluster.edit("lost", 0, isr=[], elr=[], last_known_elr=[])
    _, doc = status(sb)
    assert doc["offline_recovery"] == {"lost-0": [], "rf3-min2-0": [2, 3] if elr else [2]}
    _, out, _ = kl("status", "--bootstrap-server", sb.bootstrap_servers, "--output", "table")
    waiting = "rf3-min2-0 (broker 2 or 3)" if elr else "rf3-min2-0 (broker 2)"
    assert f"  of which recover without data loss when an in-sync or eligible replica returns: 1 ({waiting})" in out
    assert "  of which have no in-sync or eligible replica left (only an unclean election brings them back): 1 " \
           "(lost-0)" in out


def test_an_elr_kept_from_before_elr_was_turned_off_still_recovers_a_partition(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    """ELR off (4.0), a leaderless partition with an empty ISR and an ELR from before ELR was turned off:
    the controller (PartitionChangeBuilder.isValidNewLeader, which does not ask whether ELR is on) elects
    the ELR member when it returns, cleanly. status said nobody was left to wait for."""
    sb = sandbox_factory(brokers=3, kafka_version="4.0")
    sb.create_topic("stale", assignment={0: [1, 2]}, configs={"min.insync.replicas": "2"})
    for broker in (2, 1):
        sb.stop_broker(broker)
    sb.cluster.edit("stale", 0, isr=[], elr=[2], last_known_elr=[])
    assert not sb.cluster.elr_enabled
    _, doc = status(sb)
    assert doc["offline_recovery"] == {"stale-0": [2]}
    sb.start_broker(2)
    assert sb.partition_state("stale", 0)[2:6] == (2, (1, 2), (2,), ())  # leader 2, ISR [2]: no data lost
