"""DescribeConfigs, partition reassignments and DescribeTopicPartitions through kafka-python's admin client."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest
from kafka import TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
from kafka.errors import NotControllerError

from leader_election_cli.sandbox import Sandbox

PREFERRED = 0


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox], mode: str) -> Sandbox:
    sandbox = sandbox_factory(mode=mode)
    sandbox.create_topic("t1", assignment={0: [1, 2, 3], 1: [2, 3, 1]}, configs={"min.insync.replicas": "2"})
    sandbox.create_topic("t2", assignment={0: [3, 1]})
    return sandbox


@pytest.fixture
def admin(sb: Sandbox):
    with KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, request_timeout_ms=5000) as client:
        yield client


def test_describe_configs_reports_topic_overrides_and_defaults(sb: Sandbox, admin: KafkaAdminClient) -> None:
    result = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "t1"),
                                     ConfigResource(ConfigResourceType.TOPIC, "t2")], config_filter="all")
    t1, t2 = result["topic"]["t1"], result["topic"]["t2"]
    assert (t1["min.insync.replicas"]["value"], t1["min.insync.replicas"]["config_source"]) == (
        "2", "DYNAMIC_TOPIC_CONFIG")
    # a 4.1 KRaft cluster (ELR on) keeps min.insync.replicas as a cluster-wide dynamic default
    # (kafka-4.1.0-configs.txt); a ZooKeeper-mode cluster has Kafka's default alone
    inherited = "DYNAMIC_DEFAULT_BROKER_CONFIG" if sb.mode == "kraft" else "DEFAULT_CONFIG"
    assert (t2["min.insync.replicas"]["value"], t2["min.insync.replicas"]["config_source"]) == ("1", inherited)
    assert t2["unclean.leader.election.enable"]["value"] == "false"
    modified = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "t1")])
    assert list(modified["topic"]["t1"]) == ["min.insync.replicas"]


def test_describe_configs_filters_keys_and_reports_unknown_topics(sb: Sandbox, admin: KafkaAdminClient) -> None:
    result = admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "t1", ["unclean.leader.election.enable"]),
                                     ConfigResource(ConfigResourceType.TOPIC, "nosuch")], config_filter="all")
    assert list(result["topic"]["t1"]) == ["unclean.leader.election.enable"]
    assert result["topic"]["nosuch"] == {}


def test_reordering_replicas_completes_at_once_then_preferred_election(sb: Sandbox, admin: KafkaAdminClient) -> None:
    result = admin.alter_partition_reassignments({TopicPartition("t1", 0): [3, 1, 2]})
    assert result == {TopicPartition("t1", 0): None}
    assert admin.list_partition_reassignments() == {}
    state = sb.partition_state("t1", 0)
    assert (state.replicas, state.leader) == ((3, 1, 2), 1)
    response = admin.elect_leaders(PREFERRED, {"t1": [0]}, raise_errors=False)
    assert response.replica_election_results[0].partition_result[0].error_code == 0
    assert sb.partition_state("t1", 0).leader == 3


def test_adding_a_replica_stays_pending_until_finished(sb: Sandbox, admin: KafkaAdminClient) -> None:
    admin.alter_partition_reassignments({TopicPartition("t2", 0): [2, 1]})
    pending = admin.list_partition_reassignments()
    assert pending == {TopicPartition("t2", 0): {"replicas": [2, 1, 3], "adding_replicas": [2],
                                                 "removing_replicas": [3]}}
    assert admin.list_partition_reassignments({"t1": [0]}) == {}
    sb.finish_reassignment("t2", 0)
    assert admin.list_partition_reassignments() == {}
    state = sb.partition_state("t2", 0)
    assert (state.replicas, state.leader, set(state.isr)) == ((2, 1), 2, {1, 2})  # 3 left: first valid


def test_cancelling_a_reassignment(sb: Sandbox, admin: KafkaAdminClient) -> None:
    admin.alter_partition_reassignments({TopicPartition("t2", 0): [2, 1]})
    assert admin.alter_partition_reassignments({TopicPartition("t2", 0): None}) == {TopicPartition("t2", 0): None}
    assert sb.partition_state("t2", 0).replicas == (1, 3)  # Kafka rebuilds it as replicas - adding
    again = admin.alter_partition_reassignments({TopicPartition("t2", 0): None})
    assert again[TopicPartition("t2", 0)].errno == 85  # NO_REASSIGNMENT_IN_PROGRESS


def test_invalid_reassignments(sb: Sandbox, admin: KafkaAdminClient) -> None:
    result = admin.alter_partition_reassignments({
        TopicPartition("t1", 0): [1, 1, 2], TopicPartition("t1", 1): [9, 1], TopicPartition("nosuch", 0): [1]})
    assert {tp: err.errno for tp, err in result.items()} == {
        TopicPartition("t1", 0): 39, TopicPartition("t1", 1): 39, TopicPartition("nosuch", 0): 3}


def test_reassignments_need_the_zk_controller() -> None:
    from kafka.protocol.admin import ListPartitionReassignmentsRequest
    with Sandbox(brokers=2, mode="zk") as sb, \
            KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, request_timeout_ms=5000) as admin:
        request = ListPartitionReassignmentsRequest(version=0, timeout_ms=1000)
        assert admin._manager.run(_send, admin, request, 2).error_code == NotControllerError.errno
        assert admin._manager.run(_send, admin, request, 1).error_code == 0


async def _send(admin: KafkaAdminClient, request: object, node_id: int) -> object:
    return await admin._manager.send(request, node_id=node_id)


def test_describe_topic_partitions_reports_elr_and_pages() -> None:
    with Sandbox(brokers=3, mode="kraft", features={"eligible.leader.replicas.version": 1}) as sb:
        sb.create_topic("a", assignment={0: [1, 2, 3], 1: [2, 3, 1]}, configs={"min.insync.replicas": "2"})
        sb.create_topic("b", assignment={0: [1, 2], 1: [2, 1], 2: [1, 2]})
        sb.stop_broker(3)
        sb.stop_broker(2)  # a-0's ISR drops below min.insync.replicas: 2 moves to the ELR
        with KafkaAdminClient(bootstrap_servers=f"127.0.0.1:{sb.brokers[1][1]}", request_timeout_ms=5000) as admin:
            first = admin.describe_topic_partitions(["b", "a", "nosuch"], response_partition_limit=3)
            (a0, _), _ = first["topics"][0]["partitions"], first["topics"][1]["partitions"][0]
            assert [t["name"] for t in first["topics"]] == ["a", "b"]
            assert (a0["isr_nodes"], a0["eligible_leader_replicas"], a0["leader_id"]) == ([1], [2], 1)
            assert first["next_cursor"] == {"topic_name": "b", "partition_index": 1}
            rest = admin.describe_topic_partitions(["b", "a", "nosuch"], cursor=first["next_cursor"])
            assert [(t["name"], [p["partition_index"] for p in t["partitions"]]) for t in rest["topics"]] == [
                ("b", [1, 2]), ("nosuch", [])]
            assert rest["topics"][1]["error_code"] == 3 and rest["next_cursor"] is None


def test_kafkas_internal_topics_are_reported_internal() -> None:
    with Sandbox(brokers=1) as sb:
        sb.create_topic("__consumer_offsets", assignment={0: [1]})
        sb.create_topic("orders", assignment={0: [1]})
        admin = KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers)
        try:
            internal = {t["name"]: t["is_internal"] for t in admin.describe_topics()}
        finally:
            admin.close()
        assert internal == {"__consumer_offsets": True, "orders": False}


def test_create_topics_refuses_bad_partition_counts_and_replication_factors() -> None:
    from kafka.admin import NewTopic
    from kafka.errors import InvalidPartitionsError, InvalidReplicationFactorError

    with Sandbox(brokers=2) as sb:
        admin = KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers)
        try:
            with pytest.raises(InvalidPartitionsError):
                admin.create_topics([NewTopic("none", num_partitions=0, replication_factor=1)])
            with pytest.raises(InvalidReplicationFactorError):
                admin.create_topics([NewTopic("wide", num_partitions=1, replication_factor=3)])
        finally:
            admin.close()


@pytest.mark.parametrize("mode", ["kraft", "zk"])
def test_the_controller_moves_leaders_back_on_its_own_as_kafka_does(mode: str) -> None:
    """auto.leader.rebalance.enable (on by default): the check every leader.imbalance.check.interval.seconds
    elects the preferred replicas; the broker's DescribeConfigs shows the settings."""
    configs = {"leader.imbalance.check.interval.seconds": "0.2"}
    with Sandbox(brokers=3, mode=mode, broker_configs=configs) as sb, \
            KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, request_timeout_ms=5000) as admin:
        sb.create_topic("t", assignment={0: [1, 2, 3], 1: [2, 3, 1]})
        sb.set_leader("t", 0, 3)
        sb.set_leader("t", 1, 3)
        deadline = time.monotonic() + 60  # a check every 0.2 s: bounded far above
        while [sb.partition_state("t", p).leader for p in (0, 1)] != [1, 2] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [sb.partition_state("t", p).leader for p in (0, 1)] == [1, 2]
        broker = admin.describe_configs([ConfigResource(ConfigResourceType.BROKER, "1")], config_filter="all")
        shown = {k: (v["value"], v["config_source"]) for k, v in broker["broker"]["1"].items()}
        assert shown["auto.leader.rebalance.enable"] == ("true", "DEFAULT_CONFIG")
        assert shown["leader.imbalance.check.interval.seconds"] == ("0.2", "STATIC_BROKER_CONFIG")
        if mode == "zk":  # a 4.x KRaft broker has no such config (kafka-4.1.0-configs.txt)
            assert shown["leader.imbalance.per.broker.percentage"] == ("10", "DEFAULT_CONFIG")
        else:
            assert "leader.imbalance.per.broker.percentage" not in shown


def test_without_auto_rebalance_leaders_stay_off_their_preferred_replicas() -> None:
    configs = {"auto.leader.rebalance.enable": "false", "leader.imbalance.check.interval.seconds": "0.1"}
    with Sandbox(brokers=3, broker_configs=configs) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        sb.set_leader("t", 0, 3)
        time.sleep(0.5)
        assert sb.partition_state("t", 0).leader == 3
        assert sb.rebalance_leaders() == 1  # the check, run by hand
        assert sb.partition_state("t", 0).leader == 1


@pytest.mark.parametrize("configs", [{"auto.leader.rebalance.enable": "yes"},
                                     {"leader.imbalance.check.interval.seconds": "0"},
                                     {"leader.imbalance.per.broker.percentage": "ten"},
                                     {"num.partitions": "3"}])
def test_bad_broker_configs_are_refused(configs: dict[str, str]) -> None:
    with pytest.raises(ValueError):
        Sandbox(brokers=1, broker_configs=configs)


def test_a_reassignment_completes_once_the_added_replicas_have_caught_up(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    """As the controller completes it: the added replica fetches for the catch-up time, joins the ISR, and the
    replicas become the target (the leader, no longer among them, replaced); a stopped one holds it pending."""
    sb = sandbox_factory(4, reassignment_catch_up_s=0.2)
    sb.create_topic("r", assignment={0: [1, 2, 3], 1: [1, 2, 3]})
    sb.stop_broker(4)  # (before the client reads the metadata: it would send to 4 and not try another broker)
    running = ",".join(f"{host}:{port}" for broker, (host, port) in sb.brokers.items() if broker != 4)
    admin = KafkaAdminClient(bootstrap_servers=running, request_timeout_ms=10_000)
    try:
        admin.alter_partition_reassignments({TopicPartition("r", 0): [4, 2, 3], TopicPartition("r", 1): [3, 2]})
        assert sb.cluster.partition_state("r", 1).replicas == (3, 2)  # nothing to add: at once
        time.sleep(1)  # five times the catch-up time: 4 is stopped, so nothing completes
        assert set(admin.list_partition_reassignments()) == {TopicPartition("r", 0)}
        sb.start_broker(4)
        deadline = time.monotonic() + 30
        while admin.list_partition_reassignments() and time.monotonic() < deadline:
            time.sleep(0.05)
        state = sb.cluster.partition_state("r", 0)
        assert (state.replicas, sorted(state.isr), state.leader) == ((4, 2, 3), [2, 3, 4], 4)
    finally:
        admin.close()
