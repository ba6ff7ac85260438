"""The admin operations Kafka's tools use, on the sandbox (sandbox/apis/topic_admin.py, log_admin.py, acls.py,
transactions.py): kafka-python's admin client's create_partitions, delete_topics and delete_records unchanged,
and the errors Kafka gives (ReplicationControlManager.createPartitions, ControllerApis.deleteTopics,
Partition.deleteRecordsOnLeader, AclApis without an authorizer, TransactionCoordinator with no transactions)."""

from __future__ import annotations

from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import (
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    KafkaAdminClient,
    NewPartitions,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import SecurityDisabledError
from kafka.protocol.admin import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
)
from kafka.protocol.consumer import ListOffsetsRequest, ListOffsetsResponse
from test_sandbox import call

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox import Sandbox


def admin(sb: Sandbox) -> KafkaAdminClient:
    return KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, request_timeout_ms=10_000)


def produce(sb: Sandbox, topic: str, partition: int, count: int) -> None:
    producer = KafkaProducer(bootstrap_servers=sb.bootstrap_servers, acks="all", enable_idempotence=True)
    for i in range(count):
        producer.send(topic, str(i).encode(), partition=partition)
    producer.flush(timeout=30)
    producer.close()


def leader(sb: Sandbox, topic: str, partition: int) -> int:
    return sb.cluster.partition_state(topic, partition).leader


@pytest.mark.parametrize("mode", ["kraft", "zk"])
def test_create_partitions_places_the_new_ones_as_kafka_does(sandbox_factory: Any, mode: str) -> None:
    sb = sandbox_factory(brokers=4, mode=mode)
    sb.create_topic("grow", 2, 2)
    client = admin(sb)
    client.create_partitions({"grow": NewPartitions(total_count=5)})
    placed = sb.cluster.default_assignment(5, 2)
    assert [list(sb.cluster.partition_state("grow", p).replicas) for p in range(5)] == [placed[p] for p in range(5)]
    client.create_partitions({"grow": NewPartitions(total_count=6, new_assignments=[[4, 1]])})
    assert sb.cluster.partition_state("grow", 5).replicas == (4, 1)
    assert sb.cluster.partition_state("grow", 5).leader == 4
    client.close()


def create_partitions(sb: Sandbox, topic: str, count: int, assignments: list[list[int]] | None = None,
                      validate_only: bool = False) -> tuple[int, str | None]:
    R = CreatePartitionsRequest
    request = R(version=1, topics=[R.CreatePartitionsTopic(
        name=topic, count=count,
        assignments=None if assignments is None else [R.CreatePartitionsTopic.CreatePartitionsAssignment(
            broker_ids=a) for a in assignments])], timeout_ms=5000, validate_only=validate_only)
    result = call(sb.brokers[1], request, CreatePartitionsResponse, 1).results[0]
    return result.error_code, result.error_message


def test_create_partitions_errors_are_kafkas(sandbox_factory: Any) -> None:
    sb = sandbox_factory(brokers=3)
    sb.create_topic("t", 3, 2)
    assert create_partitions(sb, "t", 3) == (ke.INVALID_PARTITIONS, "Topic already has 3 partition(s).")
    assert create_partitions(sb, "t", 2) == (
        ke.INVALID_PARTITIONS, "The topic t currently has 3 partition(s); 2 would not be an increase.")
    assert create_partitions(sb, "nosuch", 4) == (ke.UNKNOWN_TOPIC_OR_PARTITION, None)
    assert create_partitions(sb, "t", 5, [[1, 2]]) == (
        ke.INVALID_REPLICA_ASSIGNMENT, "Attempted to add 2 additional partition(s), but only 1 assignment(s) were "
                                       "specified.")
    assert create_partitions(sb, "t", 4, [[1, 9]])[0] == ke.INVALID_REPLICA_ASSIGNMENT
    assert create_partitions(sb, "t", 4, [[1, 1]])[0] == ke.INVALID_REPLICA_ASSIGNMENT
    assert create_partitions(sb, "t", 4, [[1]]) == (
        ke.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes a partition with 1 replica(s), "
                                       "but this is not consistent with previous partitions, which have 2 replica(s).")
    assert create_partitions(sb, "t", 4, validate_only=True) == (ke.NONE, None)
    assert len(sb.cluster.topics["t"].partitions) == 3
    sb.stop_broker(3)
    assert create_partitions(sb, "t", 4, [[3, 2]]) == (ke.NONE, None)
    assert sb.cluster.partition_state("t", 3).isr == (2,)


def test_delete_topics_by_name_and_by_id(sandbox_factory: Any) -> None:
    sb = sandbox_factory(brokers=3)
    for name in ("a", "b"):
        sb.create_topic(name, 2, 2)
    produce(sb, "a", 0, 5)
    client = admin(sb)
    client.delete_topics(["a"])
    assert "a" not in sb.cluster.topics and ("a", 0) not in sb.cluster.logs.partitions
    b_id = sb.cluster.topics["b"].topic_id
    R = DeleteTopicsRequest
    request = R(version=6, topics=[R.DeleteTopicState(name=None, topic_id=b_id),
                                   R.DeleteTopicState(name=None, topic_id=b_id.__class__(int=7)),
                                   R.DeleteTopicState(name="gone", topic_id=None)], timeout_ms=5000)
    answer = call(sb.brokers[2], request, DeleteTopicsResponse, 6)
    assert [(r.name, r.error_code) for r in answer.responses] == [
        ("b", ke.NONE), (None, ke.UNKNOWN_TOPIC_ID), ("gone", ke.UNKNOWN_TOPIC_OR_PARTITION)]
    assert not sb.cluster.topics
    client.close()


def test_a_deleted_topic_takes_its_pending_reassignment_with_it(sandbox_factory: Any) -> None:
    sb = sandbox_factory(brokers=4, topics={"moving": {0: [1, 2]}})
    client = admin(sb)
    assert sb.cluster.alter_reassignment("moving", 0, [3, 4]) == (ke.NONE, None)
    assert sb.cluster.reassignments(None)
    client.delete_topics(["moving"])
    assert not sb.cluster.reassignments(None)
    client.close()


def list_offsets(sb: Sandbox, topic: str, partition: int, timestamp: int) -> int:
    L = ListOffsetsRequest
    request = L(version=4, replica_id=-1, isolation_level=0, topics=[L.ListOffsetsTopic(
        name=topic, partitions=[L.ListOffsetsTopic.ListOffsetsPartition(
            partition_index=partition, current_leader_epoch=-1, timestamp=timestamp)])])
    answer = call(sb.brokers[leader(sb, topic, partition)], request, ListOffsetsResponse, 4)
    return answer.topics[0].partitions[0].offset


def test_delete_records_moves_the_log_start_offset(sandbox_factory: Any) -> None:
    sb = sandbox_factory(brokers=3)
    sb.create_topic("r", 1, 3)
    for _ in range(10):  # ten batches of one record
        produce(sb, "r", 0, 1)
    client = admin(sb)
    client.delete_records({TopicPartition("r", 0): 4})
    assert list_offsets(sb, "r", 0, -2) == 4
    consumer = KafkaConsumer(bootstrap_servers=sb.bootstrap_servers, auto_offset_reset="earliest",
                             consumer_timeout_ms=10_000)
    consumer.assign([TopicPartition("r", 0)])
    assert [r.offset for r in consumer][:1] == [4]
    consumer.close()
    client.delete_records({TopicPartition("r", 0): -1})
    assert list_offsets(sb, "r", 0, -2) == 10
    client.close()


def delete_records(sb: Sandbox, broker: int, topic: str, offset: int) -> tuple[int, int]:
    D = DeleteRecordsRequest
    request = D(version=1, topics=[D.DeleteRecordsTopic(name=topic, partitions=[
        D.DeleteRecordsTopic.DeleteRecordsPartition(partition_index=0, offset=offset)])], timeout_ms=5000)
    result = call(sb.brokers[broker], request, DeleteRecordsResponse, 1).topics[0].partitions[0]
    return result.error_code, result.low_watermark


def test_delete_records_errors_are_kafkas(sandbox_factory: Any) -> None:
    sb = sandbox_factory(brokers=3)
    sb.create_topic("r", 1, 3)
    sb.create_topic("compacted", 1, 1, configs={"cleanup.policy": "compact"})
    produce(sb, "r", 0, 3)
    first = leader(sb, "r", 0)
    other = next(b for b in (1, 2, 3) if b != first)
    assert delete_records(sb, first, "r", 4) == (ke.OFFSET_OUT_OF_RANGE, -1)
    assert delete_records(sb, first, "r", -5) == (ke.OFFSET_OUT_OF_RANGE, -1)
    assert delete_records(sb, other, "r", 1) == (ke.NOT_LEADER_OR_FOLLOWER, -1)
    assert delete_records(sb, first, "nosuch", 1) == (ke.UNKNOWN_TOPIC_OR_PARTITION, -1)
    assert delete_records(sb, leader(sb, "compacted", 0), "compacted", 0) == (ke.POLICY_VIOLATION, -1)
    assert delete_records(sb, first, "r", 2) == (ke.NONE, 2)
    assert delete_records(sb, first, "r", 1) == (ke.NONE, 2)  # never backwards


def test_acls_are_answered_as_a_broker_without_an_authorizer(sandbox_factory: Any) -> None:
    sb = sandbox_factory(brokers=1)
    client = admin(sb)
    topics = ResourcePatternFilter(ResourceType.TOPIC, None, ACLResourcePatternType.ANY)
    with pytest.raises(SecurityDisabledError):
        client.describe_acls(ACLFilter(principal=None, host="*", operation=ACLOperation.ANY,
                                       permission_type=ACLPermissionType.ANY, resource_pattern=topics))
    client.close()


def test_no_transactions_and_the_idempotent_producers_the_log_knows(sandbox_factory: Any) -> None:
    sb = sandbox_factory(brokers=3)
    sb.create_topic("p", 1, 3)
    produce(sb, "p", 0, 3)
    listed = call(sb.brokers[1], ListTransactionsRequest(version=0, state_filters=["Ongoing", "Nope"],
                                                         producer_id_filters=[]), ListTransactionsResponse, 0)
    assert (listed.error_code, listed.unknown_state_filters, listed.transaction_states) == (0, ["Nope"], [])
    described = call(sb.brokers[1], DescribeTransactionsRequest(version=0, transactional_ids=["tx"]),
                     DescribeTransactionsResponse, 0)
    assert [s.error_code for s in described.transaction_states] == [ke.TRANSACTIONAL_ID_NOT_FOUND]
    request = DescribeProducersRequest(version=0, topics=[DescribeProducersRequest.TopicRequest(
        name="p", partition_indexes=[0])])
    answer = call(sb.brokers[leader(sb, "p", 0)], request, DescribeProducersResponse, 0)
    partition = answer.topics[0].partitions[0]
    assert partition.error_code == ke.NONE
    assert [(p.producer_epoch, p.last_sequence) for p in partition.active_producers] == [(0, 2)]
