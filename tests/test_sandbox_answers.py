"""The sandbox's answers field by field, as a Kafka 4.0.0 broker and controller give them.

Each case calls a handler directly (no sockets) and encodes the answer, so it is also a valid frame.
The Kafka sources each case follows are named in its docstring.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
)
from kafka.protocol.metadata import MetadataRequest, MetadataResponse

from leader_election_cli.sandbox.apis.context import Context, Settings
from leader_election_cli.sandbox.apis.elections import elect_leaders
from leader_election_cli.sandbox.apis.metadata_topics import describe_topic_partitions, metadata
from leader_election_cli.sandbox.controller.cluster import Cluster
from leader_election_cli.sandbox.controller.elections import PREFERRED
from leader_election_cli.sandbox.versions import DEFAULT_VERSION, VERSIONS

# Utils.to32BitField of AclEntry.supportedOperations(TOPIC): READ WRITE CREATE DELETE ALTER DESCRIBE
# DESCRIBE_CONFIGS ALTER_CONFIGS (3 4 5 6 7 8 10 11), all allowed without an authorizer.
EVERY_TOPIC_OPERATION = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))


def cluster_with_a_leaderless_partition() -> Cluster:
    """t-0 on brokers 1, 2 with ISR [1]; broker 1 stops: no leader, ISR [1] (ELR off, as on a new 4.0)."""
    cluster = Cluster([1, 2, 3], "kraft", elr=False)
    cluster.create_topic("t", {0: [1, 2], 1: [2, 3]})
    cluster.edit("t", 0, isr=[1])
    cluster.stop_broker(1)
    return cluster


def answer(handler: Any, cluster: Cluster, request: Any, response_class: type, version: int) -> Any:
    """The handler's answer, encoded and decoded as a client reads it."""
    response = handler(Context(broker_id=2, cluster=cluster, settings=Settings(), version=version), request)
    body = getattr(response, "body", None)
    if body is None:
        body = bytes(response.encode(version=version))
    return response_class.decode(body, version=version)


def describe(cluster: Cluster, names: list[str], limit: int = 2000, cursor: tuple[str, int] | None = None) -> Any:
    request = DescribeTopicPartitionsRequest(
        topics=[DescribeTopicPartitionsRequest.TopicRequest(name=n) for n in names], response_partition_limit=limit,
        cursor=None if cursor is None else DescribeTopicPartitionsRequest.Cursor(topic_name=cursor[0],
                                                                                partition_index=cursor[1]))
    return answer(describe_topic_partitions, cluster, request, DescribeTopicPartitionsResponse, 0)


def metadata_of(cluster: Cluster, names: list[str], version: int = 12) -> Any:
    request = MetadataRequest(version=version, topics=[MetadataRequest.MetadataRequestTopic(name=n, topic_id=None)
                                                       for n in names], allow_auto_topic_creation=False,
                              include_topic_authorized_operations=False)
    return answer(metadata, cluster, request, MetadataResponse, version)


def test_a_leaderless_partition_has_no_error_in_describe_topic_partitions_but_has_one_in_metadata() -> None:
    """KRaftMetadataCache.getPartitionMetadataForDescribeTopicResponse sets no ErrorCode (0) for a partition
    without a live leader; getPartitionMetadata (Metadata) sets LEADER_NOT_AVAILABLE (5). Both: leader -1,
    the leader epoch, every replica, the ISR as the controller holds it, the fenced replicas offline."""
    cluster = cluster_with_a_leaderless_partition()
    epoch = cluster.topics["t"].partitions[0].leader_epoch
    (topic,) = describe(cluster, ["t"]).topics
    (meta,) = metadata_of(cluster, ["t"]).topics
    for p, code in ((topic.partitions[0], 0), (meta.partitions[0], 5)):
        assert (p.error_code, p.leader_id, p.leader_epoch) == (code, -1, epoch)
        assert (p.replica_nodes, p.isr_nodes, p.offline_replicas) == ([1, 2], [1], [1])
    assert (topic.partitions[1].error_code, topic.partitions[1].leader_id) == (0, 2)


def test_describe_topic_partitions_reports_each_topics_authorized_operations() -> None:
    """DescribeTopicPartitionsRequestHandler sets TopicAuthorizedOperations on every topic the metadata cache
    answered (authHelper.authorizedOperations), a topic it does not know included."""
    cluster = cluster_with_a_leaderless_partition()
    topics = describe(cluster, ["t", "nosuch"]).topics
    assert [(t.name, t.topic_authorized_operations) for t in topics] == [
        ("nosuch", EVERY_TOPIC_OPERATION), ("t", EVERY_TOPIC_OPERATION)]


def test_unknown_topics_are_answered_as_kafka_names_them() -> None:
    """KafkaApis.getTopicMetadata and KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse: a name that
    Topic.validate refuses is INVALID_TOPIC_EXCEPTION (17), another unknown one UNKNOWN_TOPIC_OR_PARTITION (3);
    IsInternal is Topic.isInternal(name) even for a topic that does not exist."""
    cluster = cluster_with_a_leaderless_partition()
    names = ["bad name", "__consumer_offsets", "x" * 250, "nosuch"]
    expected = {"bad name": (17, False), "__consumer_offsets": (3, True), "x" * 250: (17, False), "nosuch": (3, False)}
    for response in (describe(cluster, names), metadata_of(cluster, names)):
        assert {t.name: (t.error_code, t.is_internal) for t in response.topics} == expected
        assert all(t.partitions == [] for t in response.topics)


def test_a_topic_named_twice_is_answered_once() -> None:
    """Both handlers collect the requested names into a set."""
    cluster = cluster_with_a_leaderless_partition()
    assert [t.name for t in describe(cluster, ["t", "t"]).topics] == ["t"]
    assert [t.name for t in metadata_of(cluster, ["t", "t"]).topics] == ["t"]


def test_the_page_ends_before_an_unknown_topic_once_the_limit_is_reached() -> None:
    """getTopicMetadataForDescribeTopicResponse: with no partition left to give, the cursor points at the next
    topic (partition 0), known or not; an unknown topic is answered only while the budget lasts."""
    cluster = cluster_with_a_leaderless_partition()
    first = describe(cluster, ["t", "u"], limit=2)
    assert [t.name for t in first.topics] == ["t"]
    assert (first.next_cursor.topic_name, first.next_cursor.partition_index) == ("u", 0)
    rest = describe(cluster, ["t", "u"], cursor=("u", 0))
    assert [(t.name, t.error_code) for t in rest.topics] == [("u", 3)] and rest.next_cursor is None


def test_a_cursor_on_a_topic_not_asked_for_is_an_invalid_request() -> None:
    """DescribeTopicPartitionsRequestHandler throws InvalidRequestException when the cursor's topic is not in
    the request's topic list; getErrorResponse answers every requested topic with INVALID_REQUEST (42)."""
    cluster = cluster_with_a_leaderless_partition()
    response = describe(cluster, ["t", "u"], cursor=("other", 0))
    assert [(t.name, t.error_code, t.partitions) for t in response.topics] == [("t", 42, []), ("u", 42, [])]
    assert response.next_cursor is None
    assert [t.name for t in describe(cluster, [], cursor=("t", 1)).topics] == ["t"]  # every topic: no check


def elect(cluster: Cluster, timeout_ms: int, topics: dict[str, list[int]] | None) -> Any:
    request = ElectLeadersRequest(version=2, election_type=PREFERRED, timeout_ms=timeout_ms, topic_partitions=None
                                  if topics is None else [ElectLeadersRequest.TopicPartitions(topic=t, partitions=ps)
                                                          for t, ps in topics.items()])
    return answer(elect_leaders, cluster, request, ElectLeadersResponse, 2)


def test_kraft_an_election_whose_timeout_has_already_passed_times_out() -> None:
    """ControllerApis.handleElectLeaders gives the controller's write event the deadline now + TimeoutMs;
    KafkaEventQueue times out an event whose deadline has passed before running it, so TimeoutMs <= 0 is
    REQUEST_TIMED_OUT (7) at the top and on every partition (getErrorResponse, no message) and nothing is
    elected. An empty partition list is answered before the event is queued."""
    cluster = cluster_with_a_leaderless_partition()
    cluster.edit("t", 1, leader=3)
    for timeout_ms in (0, -1):
        response = elect(cluster, timeout_ms, {"t": [1]})
        assert response.error_code == 7
        assert [(p.partition_id, p.error_code, p.error_message)
                for r in response.replica_election_results for p in r.partition_result] == [(1, 7, None)]
        assert cluster.partition_state("t", 1).leader == 3
        everything = elect(cluster, timeout_ms, None)
        assert (everything.error_code, everything.replica_election_results) == (7, [])
    assert (elect(cluster, 0, {}).error_code, cluster.partition_state("t", 1).leader) == (0, 3)
    assert elect(cluster, 1000, {"t": [1]}).error_code == 0 and cluster.partition_state("t", 1).leader == 2


def test_a_cluster_built_without_limits_is_the_default_release_throughout() -> None:
    """ELR on (4.1's new cluster) goes with 4.1's controller limits, as Settings' default release."""
    cluster = Cluster([1, 2, 3], "kraft")
    assert cluster.elr_enabled and cluster.limits == VERSIONS[DEFAULT_VERSION].controller
    assert Settings().kafka_version is VERSIONS[DEFAULT_VERSION]


def test_describe_topic_partitions_lags_the_controller_as_metadata_does() -> None:
    """A broker's metadata cache (KRaftMetadataCache) serves Metadata and DescribeTopicPartitions alike: until
    it has published an election's records, both show the leader, epoch and ISR of before."""
    cluster = Cluster([1, 2, 3], "kraft")
    cluster.create_topic("t", {0: [1, 2, 3]})
    cluster.edit("t", 0, leader=2)
    before = cluster.partition_state("t", 0)
    epoch = cluster.topics["t"].partitions[0].leader_epoch
    cluster.metadata_lag_per_record_s = 60
    assert elect(cluster, 1000, {"t": [0]}).error_code == 0 and cluster.partition_state("t", 0).leader == 1
    (meta,) = metadata_of(cluster, ["t"]).topics
    (described,) = describe(cluster, ["t"]).topics
    for p in (meta.partitions[0], described.partitions[0]):
        assert (p.leader_id, p.leader_epoch, tuple(p.isr_nodes)) == (2, epoch, before.isr)
