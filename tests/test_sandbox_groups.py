"""Consumer groups on the sandbox (sandbox/groups/, sandbox/apis/groups.py, committed_offsets.py): kafka-python's
KafkaConsumer(group_id=...) and its admin client's group calls unchanged, and the classic group coordinator's
answers on the wire (MEMBER_ID_REQUIRED, static membership, session timeouts, NOT_COORDINATOR, the bounds),
each as Kafka's GroupMetadataManager, ClassicGroup and OffsetMetadataManager give them."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import KafkaAdminClient
from kafka.protocol.admin import DescribeGroupsRequest, DescribeGroupsResponse, ListGroupsRequest, ListGroupsResponse
from kafka.protocol.consumer import (
    HeartbeatRequest,
    HeartbeatResponse,
    JoinGroupRequest,
    JoinGroupResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.metadata import FindCoordinatorRequest, FindCoordinatorResponse
from kafka.structs import OffsetAndMetadata
from test_sandbox import call

from leader_election_cli import kafka_errors as ke
from leader_election_cli.java_order import java_string_hash
from leader_election_cli.model import OFFSETS_TOPIC
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.apis.groups import coordinator_of
from leader_election_cli.sandbox.groups.coordinator import partition_for


def wait_for(condition: Callable[[], Any], what: str, seconds: float = 30) -> Any:
    """Poll `condition` until it is true (its value), at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"not within {seconds} s: {what}")


def produce(sb: Sandbox, topic: str, count: int, start: int = 0) -> None:
    producer = KafkaProducer(bootstrap_servers=sb.bootstrap_servers, acks="all")
    for i in range(start, start + count):
        producer.send(topic, str(i).encode())
    producer.flush(timeout=30)
    producer.close()


def consume(sb: Sandbox, topic: str, group: str, count: int) -> tuple[KafkaConsumer, list[int]]:
    """A group consumer of `topic` and the first `count` values it reads (bounded by consumer_timeout_ms)."""
    consumer = KafkaConsumer(topic, bootstrap_servers=sb.bootstrap_servers, group_id=group,
                             auto_offset_reset="earliest", enable_auto_commit=False, consumer_timeout_ms=20_000)
    values = []
    for record in consumer:
        values.append(int(record.value))
        if len(values) == count:
            break
    return consumer, values


def coordinator(sb: Sandbox, group: str) -> int:
    with sb.cluster.lock:
        return coordinator_of(sb.cluster, group)


def find(sb: Sandbox, group: str, version: int = 3) -> Any:
    request = FindCoordinatorRequest(version=version, key=group, key_type=0)
    return call(sb.brokers[1], request, FindCoordinatorResponse, version)


def join(address: tuple[str, int], group: str, member_id: str = "", instance_id: str | None = None,
         session_ms: int = 10_000, version: int = 7) -> Any:
    protocol = JoinGroupRequest.JoinGroupRequestProtocol(name="range", metadata=b"\x00\x00\x00\x00\x00\x00")
    request = JoinGroupRequest(version=version, group_id=group, session_timeout_ms=session_ms,
                               rebalance_timeout_ms=10_000, member_id=member_id, group_instance_id=instance_id,
                               protocol_type="consumer", protocols=[protocol], reason=None)
    return call(address, request, JoinGroupResponse, version)


def sync(address: tuple[str, int], group: str, member_id: str, generation: int, assignment: bytes = b"",
         instance_id: str | None = None) -> Any:
    request = SyncGroupRequest(version=5, group_id=group, generation_id=generation, member_id=member_id,
                               group_instance_id=instance_id, protocol_type="consumer", protocol_name="range",
                               assignments=[SyncGroupRequest.SyncGroupRequestAssignment(
                                   member_id=member_id, assignment=assignment)])
    return call(address, request, SyncGroupResponse, 5)


def heartbeat(address: tuple[str, int], group: str, member_id: str, generation: int,
              instance_id: str | None = None) -> int:
    request = HeartbeatRequest(version=4, group_id=group, generation_id=generation, member_id=member_id,
                               group_instance_id=instance_id)
    return call(address, request, HeartbeatResponse, 4).error_code


def describe(address: tuple[str, int], group: str) -> Any:
    request = DescribeGroupsRequest(version=5, groups=[group], include_authorized_operations=False)
    return call(address, request, DescribeGroupsResponse, 5).groups[0]


def offsets_ready(sb: Sandbox, group: str) -> tuple[str, int]:
    """Make `__consumer_offsets` (the first FindCoordinator) and return the group's coordinator's address."""
    wait_for(lambda: find(sb, group).error_code == ke.NONE, "a coordinator")
    return sb.brokers[coordinator(sb, group)]


def test_the_group_partition_is_javas_string_hash() -> None:
    assert java_string_hash("hello") == 99162322  # "hello".hashCode()
    assert java_string_hash("polygenelubricants") == -2**31  # Integer.MIN_VALUE: Utils.abs gives 0
    assert partition_for("polygenelubricants", 50) == 0
    assert partition_for("g1", 50) == (103 * 31 + 49) % 50


def test_the_first_find_coordinator_makes_the_offsets_topic() -> None:
    """KafkaApis.getCoordinator: COORDINATOR_NOT_AVAILABLE while __consumer_offsets is made (50 partitions, RF
    min(3, brokers)), then the leader of the group's partition; nothing exists before a group is used."""
    with Sandbox(2) as sb:
        assert OFFSETS_TOPIC not in sb.cluster.topics and not sb.cluster.groups.groups
        first = find(sb, "g")
        assert (first.error_code, first.node_id, first.error_message) == (
            ke.COORDINATOR_NOT_AVAILABLE, -1, "The coordinator is not available.")
        topic = sb.cluster.topics[OFFSETS_TOPIC]
        assert len(topic.partitions) == 50 and {len(p.replicas) for p in topic.partitions} == {2}
        answer = find(sb, "g")
        assert (answer.error_code, answer.error_message) == (ke.NONE, "NONE")
        assert answer.node_id == topic.partitions[partition_for("g", 50)].leader
        batched = call(sb.brokers[1], FindCoordinatorRequest(version=4, key_type=0, coordinator_keys=["g", "h"]),
                       FindCoordinatorResponse, 4)
        assert [(c.key, c.error_code, c.node_id) for c in batched.coordinators] == [
            ("g", 0, coordinator(sb, "g")), ("h", 0, coordinator(sb, "h"))]
        transactional = call(sb.brokers[1], FindCoordinatorRequest(version=3, key="t", key_type=1),
                             FindCoordinatorResponse, 3)
        assert transactional.error_code == ke.COORDINATOR_NOT_AVAILABLE


def test_a_group_consumer_commits_and_a_new_one_resumes_from_its_offsets() -> None:
    with Sandbox(3) as sb:
        sb.create_topic("orders", partitions=4, replication_factor=3)
        produce(sb, "orders", 40)
        first, values = consume(sb, "orders", "billing", 40)
        assert sorted(values) == list(range(40))
        first.commit()
        first.close()
        produce(sb, "orders", 10, start=40)
        second, values = consume(sb, "orders", "billing", 10)
        assert sorted(values) == list(range(40, 50))  # nothing read again: it resumed from the commits
        second.close()


def test_two_members_share_the_partitions_and_one_leaving_rebalances() -> None:
    with Sandbox(3) as sb:
        sb.create_topic("orders", partitions=4, replication_factor=3)
        produce(sb, "orders", 8)
        a, _ = consume(sb, "orders", "pair", 1)
        b = KafkaConsumer("orders", bootstrap_servers=sb.bootstrap_servers, group_id="pair",
                          auto_offset_reset="earliest", enable_auto_commit=False)

        def split() -> bool:
            a.poll(timeout_ms=100)
            b.poll(timeout_ms=100)
            return len(a.assignment()) == len(b.assignment()) == 2
        wait_for(split, "the two members to get two partitions each")
        assert a.assignment() | b.assignment() == {TopicPartition("orders", p) for p in range(4)}
        generation = describe(sb.brokers[coordinator(sb, "pair")], "pair")
        assert generation.group_state == "Stable" and len(generation.members) == 2
        b.close()  # LeaveGroup: a rebalance gives `a` everything
        wait_for(lambda: a.poll(timeout_ms=100) is not None and len(a.assignment()) == 4, "a to take all four")
        a.close()


def test_the_admin_clients_group_calls() -> None:
    with Sandbox(3) as sb:
        sb.create_topic("orders", partitions=2, replication_factor=3)
        produce(sb, "orders", 6)
        consumer, _ = consume(sb, "orders", "ops", 6)
        consumer.commit()
        admin = KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers)
        try:
            assert [g["group_id"] for g in admin.list_groups()] == ["ops"]
            described = admin.describe_groups(["ops"])["ops"]
            assert described["group_state"] == "Stable" and len(described["members"]) == 1
            assert admin.delete_groups(["ops"])["ops"] != "OK"  # NON_EMPTY_GROUP: a member is in it
            consumer.close()
            committed = admin.list_group_offsets("ops")["ops"]
            assert sum(o.offset for o in committed.values()) == 6
            admin.alter_group_offsets("ops", {TopicPartition("orders", 0): OffsetAndMetadata(0, "", -1)})
            assert admin.list_group_offsets("ops")["ops"][TopicPartition("orders", 0)].offset == 0
            admin.delete_group_offsets("ops", [TopicPartition("orders", 1)])
            assert set(admin.list_group_offsets("ops")["ops"]) == {TopicPartition("orders", 0)}
            assert admin.delete_groups(["ops"]) == {"ops": "OK"}
            assert admin.list_groups() == []
        finally:
            admin.close()


def test_committed_offsets_survive_the_coordinators_crash() -> None:
    """Killed (no controlled shutdown): its broker still leads the group's partition, so the group has no
    coordinator that answers, until its session times out and the controller fences it; the new coordinator
    then loads the offsets as committed."""
    with Sandbox(3, broker_session_timeout_s=1) as sb:
        sb.create_topic("orders", partitions=2, replication_factor=3)
        produce(sb, "orders", 4)
        consumer, _ = consume(sb, "orders", "crashing", 4)
        consumer.commit()
        consumer.close()
        old = coordinator(sb, "crashing")
        sb.kill_broker(old)
        assert coordinator(sb, "crashing") == old  # not noticed yet
        new = wait_for(lambda: coordinator(sb, "crashing") not in (old, -1) and coordinator(sb, "crashing"),
                       "the coordinator to move once the broker is fenced")
        fetch = OffsetFetchRequest(version=7, group_id="crashing", topics=None, require_stable=False)
        answer = wait_for(lambda: (a := call(sb.brokers[new], fetch, OffsetFetchResponse, 7)).error_code == ke.NONE
                          and a, "the new coordinator to have loaded the group")
        assert sum(p.committed_offset for t in answer.topics for p in t.partitions) == 4


def test_committed_offsets_survive_the_coordinators_stop_loaded_by_the_new_one() -> None:
    """Others answer NOT_COORDINATOR; the new coordinator COORDINATOR_LOAD_IN_PROGRESS while it loads (a Heartbeat
    NONE, blindly: `GroupCoordinatorService.heartbeat`), then the offsets as committed."""
    with Sandbox(3) as sb:
        sb.create_topic("orders", partitions=2, replication_factor=3)
        produce(sb, "orders", 4)
        consumer, _ = consume(sb, "orders", "moving", 4)
        consumer.commit()
        consumer.close()
        old = coordinator(sb, "moving")
        other = next(b for b in sb.brokers if b != old)
        fetch = OffsetFetchRequest(version=7, group_id="moving", topics=None, require_stable=False)
        assert call(sb.brokers[other], fetch, OffsetFetchResponse, 7).error_code == ke.NOT_COORDINATOR
        sb.cluster.groups.load_ms = 600_000  # the new coordinator's load lasts until the test ends it
        sb.stop_broker(old)
        new = coordinator(sb, "moving")
        assert new not in (old, -1)
        assert call(sb.brokers[new], fetch, OffsetFetchResponse, 7).error_code == ke.COORDINATOR_LOAD_IN_PROGRESS
        beat = HeartbeatRequest(version=4, group_id="moving", generation_id=1, member_id="m", group_instance_id=None)
        assert call(sb.brokers[new], beat, HeartbeatResponse, 4).error_code == ke.NONE  # answered blindly
        listing = ListGroupsRequest(version=4, states_filter=[])
        assert call(sb.brokers[new], listing, ListGroupsResponse, 4).error_code == ke.COORDINATOR_LOAD_IN_PROGRESS
        with sb.cluster.lock:
            sb.cluster.groups.loading.clear()  # loaded
        answer = call(sb.brokers[new], fetch, OffsetFetchResponse, 7)
        assert sum(p.committed_offset for t in answer.topics for p in t.partitions) == 4
        assert call(sb.brokers[new], beat, HeartbeatResponse, 4).error_code == ke.UNKNOWN_MEMBER_ID
        resumed = KafkaConsumer("orders", bootstrap_servers=sb.bootstrap_servers, group_id="moving",
                                auto_offset_reset="earliest", enable_auto_commit=False)
        produce(sb, "orders", 2, start=4)
        values = []
        wait_for(lambda: values.extend(int(r.value) for rs in resumed.poll(timeout_ms=200).values() for r in rs)
                 or len(values) == 2, "the two new records")
        assert sorted(values) == [4, 5]
        resumed.close()


def test_member_id_required_then_a_generation() -> None:
    """JoinGroup v4+: MEMBER_ID_REQUIRED with the id to join with (classicGroupJoinNewDynamicMember)."""
    with Sandbox(1) as sb:
        address = offsets_ready(sb, "raw")
        first = join(address, "raw")
        assert first.error_code == ke.MEMBER_ID_REQUIRED and first.member_id.startswith("sandbox-test-")
        joined = join(address, "raw", member_id=first.member_id)
        assert (joined.error_code, joined.generation_id, joined.leader) == (0, 1, first.member_id)
        assert [m.member_id for m in joined.members] == [first.member_id]
        synced = sync(address, "raw", first.member_id, 1, b"plan")
        assert (synced.error_code, synced.assignment) == (0, b"plan")
        assert heartbeat(address, "raw", first.member_id, 0) == ke.ILLEGAL_GENERATION
        assert heartbeat(address, "raw", "nobody", 1) == ke.UNKNOWN_MEMBER_ID
        assert join(address, "raw", session_ms=100).error_code == ke.INVALID_SESSION_TIMEOUT


def test_a_session_timeout_removes_the_member() -> None:
    with Sandbox(1) as sb:
        address = offsets_ready(sb, "quiet")
        member = join(address, "quiet").member_id
        joined = join(address, "quiet", member_id=member, session_ms=6000)
        sync(address, "quiet", member, joined.generation_id)
        assert describe(address, "quiet").group_state == "Stable"
        wait_for(lambda: describe(address, "quiet").group_state == "Empty", "the session to time out", 15)
        assert heartbeat(address, "quiet", member, joined.generation_id) == ke.UNKNOWN_MEMBER_ID


def test_a_static_member_rejoining_replaces_its_old_id_without_a_rebalance() -> None:
    """updateStaticMemberThenRebalanceOrCompleteJoin: a Stable group keeps its generation; the old id is fenced."""
    with Sandbox(1) as sb:
        address = offsets_ready(sb, "static")
        first = join(address, "static", instance_id="host-1")
        assert first.error_code == 0  # a static member needs no MEMBER_ID_REQUIRED round
        sync(address, "static", first.member_id, first.generation_id, b"a", instance_id="host-1")
        again = join(address, "static", instance_id="host-1")
        assert again.error_code == 0 and again.member_id != first.member_id
        assert again.generation_id == first.generation_id
        assert heartbeat(address, "static", first.member_id, first.generation_id, "host-1") == ke.FENCED_INSTANCE_ID
        assert heartbeat(address, "static", again.member_id, again.generation_id, "host-1") == ke.NONE


def test_group_max_size_is_refused_as_kafka_refuses_it() -> None:
    with Sandbox(1, broker_configs={"group.max.size": "1"}) as sb:
        address = offsets_ready(sb, "small")
        member = join(address, "small").member_id
        join(address, "small", member_id=member)
        assert join(address, "small").error_code == ke.GROUP_MAX_SIZE_REACHED


def test_offset_commits_are_checked_as_kafka_checks_them() -> None:
    with Sandbox(1) as sb:
        address = offsets_ready(sb, "commits")
        T = OffsetCommitRequest.OffsetCommitRequestTopic

        def commit(generation: int, member: str, metadata: str = "") -> int:
            request = OffsetCommitRequest(version=8, group_id="commits", generation_id_or_member_epoch=generation,
                                          member_id=member, group_instance_id=None, topics=[T(name="t", partitions=[
                                              T.OffsetCommitRequestPartition(partition_index=0, committed_offset=5,
                                                                             committed_leader_epoch=-1,
                                                                             committed_metadata=metadata)])])
            return call(address, request, OffsetCommitResponse, 8).topics[0].partitions[0].error_code

        assert commit(3, "someone") == ke.ILLEGAL_GENERATION  # no such group, a generation: before v9
        assert commit(-1, "", "x" * 4097) == ke.OFFSET_METADATA_TOO_LARGE
        assert commit(-1, "") == ke.NONE  # a simple group, made by the commit
        member = join(address, "commits").member_id
        joined = join(address, "commits", member_id=member)
        assert commit(-1, "") == ke.UNKNOWN_MEMBER_ID  # the group has a member now
        assert commit(joined.generation_id, member) == ke.REBALANCE_IN_PROGRESS  # CompletingRebalance


@pytest.mark.parametrize("mode", ["kraft", "zk"])
def test_groups_work_in_either_mode(mode: str) -> None:
    with Sandbox(3, mode) as sb:
        sb.create_topic("orders", partitions=2, replication_factor=2)
        produce(sb, "orders", 3)
        consumer, values = consume(sb, "orders", "modes", 3)
        consumer.commit()
        consumer.close()
        assert sorted(values) == [0, 1, 2]
