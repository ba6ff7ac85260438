"""Writes and reads on the sandbox: kafka-python's producer (acks=all, idempotent) and consumer (assign) unchanged,
Kafka's errors (NOT_ENOUGH_REPLICAS, NOT_LEADER_OR_FOLLOWER, the idempotence checks), ListOffsets, what an
unclean election costs, the log budget, and the logs' model itself (sandbox/partition_logs.py)."""

from __future__ import annotations

import struct
import threading
import time
import tracemalloc
from collections.abc import Callable, Iterator

import pytest
from commands import run_command
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient
from kafka.errors import NotEnoughReplicasError
from kafka.protocol.consumer import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.producer import InitProducerIdRequest, InitProducerIdResponse, ProduceRequest, ProduceResponse
from kafka.record.default_records import DefaultRecordBatchBuilder
from test_sandbox import call

from leader_election_cli import kafka_errors as ke
from leader_election_cli.cli.toolkit import cli
from leader_election_cli.sandbox import Sandbox, server
from leader_election_cli.sandbox.apis.registry import advertised
from leader_election_cli.sandbox.controller.elections import UNCLEAN
from leader_election_cli.sandbox.partition_logs import BATCH_OVERHEAD, Logs
from leader_election_cli.sandbox.remote import ControlServer
from leader_election_cli.sandbox.versions import DEFAULT_VERSION, VERSIONS

TOPIC_ID = object()


def batch(count: int = 1, producer_id: int = -1, epoch: int = -1, sequence: int = -1, timestamp: int = 1000,
          value: bytes = b"v") -> bytes:
    """One v2 record batch as kafka-python's producer builds it."""
    builder = DefaultRecordBatchBuilder(magic=2, compression_type=0, is_transactional=False, producer_id=producer_id,
                                        producer_epoch=epoch, base_sequence=sequence, batch_size=2**20)
    for i in range(count):
        builder.append(i, timestamp=timestamp + i, key=str(i).encode(), value=value, headers=[])
    return bytes(builder.build())


def produce_raw(address: tuple[str, int], topic: str, partition: int, records: bytes, acks: int = -1,
                version: int = 11) -> object:
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(version=version, transactional_id=None, acks=acks, timeout_ms=5000, topic_data=[
        P(name=topic, partition_data=[P.PartitionProduceData(index=partition, records=records)])])
    answer = call(address, request, ProduceResponse, version)
    return answer.responses[0].partition_responses[0], answer


def fetch_raw(address: tuple[str, int], topic: str, partition: int, offset: int, last_fetched_epoch: int = -1,
              version: int = 12, max_wait_ms: int = 0) -> object:
    F = FetchRequest.FetchTopic
    request = FetchRequest(version=version, replica_id=-1, max_wait_ms=max_wait_ms, min_bytes=1, max_bytes=2**20,
                           isolation_level=0, session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                           topics=[F(topic=topic, partitions=[F.FetchPartition(
                               partition=partition, current_leader_epoch=-1, fetch_offset=offset,
                               last_fetched_epoch=last_fetched_epoch, log_start_offset=-1,
                               partition_max_bytes=2**20)])])
    return call(address, request, FetchResponse, version).responses[0].partitions[0]


def producer(sb: Sandbox, **config: object) -> KafkaProducer:
    return KafkaProducer(bootstrap_servers=sb.bootstrap_servers, **{
        "acks": "all", "enable_idempotence": True, "request_timeout_ms": 10_000, **config})


def consumer(sb: Sandbox) -> KafkaConsumer:
    return KafkaConsumer(bootstrap_servers=sb.bootstrap_servers, enable_auto_commit=False, request_timeout_ms=10_000)


def read_all(c: KafkaConsumer, tp: TopicPartition, count: int) -> list:
    got: list = []
    deadline = time.monotonic() + 60
    while len(got) < count and time.monotonic() < deadline:
        for records in c.poll(500).values():
            got.extend(records)
    return got


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox], mode: str) -> Sandbox:
    sandbox = sandbox_factory(3, mode, broker_configs={"auto.leader.rebalance.enable": "false"})
    sandbox.create_topic("t", assignment={0: [1, 2, 3], 1: [2, 3, 1]}, configs={"min.insync.replicas": "2"})
    return sandbox


@pytest.fixture
def clients(sb: Sandbox) -> Iterator[tuple[KafkaProducer, KafkaConsumer]]:
    p, c = producer(sb), consumer(sb)
    yield p, c
    p.close(timeout=10)
    c.close()


# -- with kafka-python's clients ----------------------------------------------------------------------

def test_an_idempotent_acks_all_producer_writes_and_a_consumer_reads_back_in_order(
        sb: Sandbox, clients: tuple[KafkaProducer, KafkaConsumer]) -> None:
    p, c = clients
    futures = [p.send("t", key=f"k{i}".encode(), value=f"value {i}".encode(), partition=i % 2) for i in range(1000)]
    p.flush(timeout=60)
    sent = [f.get(timeout=10) for f in futures]
    assert [m.offset for m in sent[0::2]] == list(range(500)) == [m.offset for m in sent[1::2]]
    tp = TopicPartition("t", 1)
    c.assign([tp])
    c.seek_to_beginning(tp)
    got = read_all(c, tp, 500)
    assert [r.offset for r in got] == list(range(500))
    assert [(r.key, r.value) for r in got] == [(f"k{i}".encode(), f"value {i}".encode()) for i in range(1, 1000, 2)]
    assert c.beginning_offsets([tp]) == {tp: 0} and c.end_offsets([tp]) == {tp: 500}
    assert sb.request_count(22) >= 1  # InitProducerId: the producer is idempotent


def test_list_offsets_earliest_latest_and_by_time(sb: Sandbox, clients: tuple[KafkaProducer, KafkaConsumer]) -> None:
    p, c = clients
    for i in range(10):
        p.send("t", value=b"x", partition=0, timestamp_ms=1_000_000 + i * 1000)
    p.flush(timeout=30)
    tp = TopicPartition("t", 0)
    assert c.beginning_offsets([tp]) == {tp: 0} and c.end_offsets([tp]) == {tp: 10}
    found = c.offsets_for_times({tp: 1_004_500})[tp]
    assert (found.offset, found.timestamp) == (5, 1_005_000)
    assert c.offsets_for_times({tp: 2_000_000})[tp] is None
    assert c.end_offsets([TopicPartition("t", 1)]) == {TopicPartition("t", 1): 0}  # never written


def test_acks_all_below_min_insync_replicas_fails_with_not_enough_replicas(sb: Sandbox) -> None:
    sb.set_isr("t", 0, [1])
    p = producer(sb, retries=0, enable_idempotence=False)  # an error once, not retried until the ISR grows
    try:
        with pytest.raises(NotEnoughReplicasError):
            p.send("t", value=b"x", partition=0).get(timeout=30)
        assert p.send("t", value=b"y", partition=1).get(timeout=30).offset == 0  # its ISR is whole
    finally:
        p.close(timeout=10)
    answer, _ = produce_raw(sb.brokers[1], "t", 0, batch())
    assert (answer.error_code, answer.error_message) == (ke.NOT_ENOUGH_REPLICAS, "The size of the current ISR Set(1) "
                                                         "is insufficient to satisfy the min.isr requirement of 2 "
                                                         "for partition t-0")
    answer, _ = produce_raw(sb.brokers[1], "t", 0, batch(), acks=1)  # acks=1 does not ask for the ISR
    assert (answer.error_code, answer.base_offset) == (ke.NONE, 0)
    admin = KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, request_timeout_ms=10_000)
    try:  # min.insync.replicas lowered to 1 as kafka-configs.sh --alter does: acks=all is taken again
        admin.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "t", configs={"min.insync.replicas": "1"})])
    finally:
        admin.close()
    assert produce_raw(sb.brokers[1], "t", 0, batch())[0].error_code == ke.NONE


def test_a_produce_to_a_follower_is_not_leader_or_follower_and_names_the_leader(sb: Sandbox) -> None:
    answer, whole = produce_raw(sb.brokers[2], "t", 0, batch(), version=11)
    assert answer.error_code == ke.NOT_LEADER_OR_FOLLOWER
    assert (answer.current_leader.leader_id, answer.current_leader.leader_epoch) == (1, 0)
    assert [(e.node_id, e.port) for e in whole.node_endpoints] == [(1, sb.brokers[1][1])]
    answer, _ = produce_raw(sb.brokers[1], "nope", 0, batch())
    assert answer.error_code == ke.UNKNOWN_TOPIC_OR_PARTITION


def test_a_fetch_from_a_follower_or_out_of_range_is_refused(sb: Sandbox) -> None:
    produce_raw(sb.brokers[1], "t", 0, batch(3))

    def fetch(broker: int, offset: int) -> object:
        return fetch_raw(sb.brokers[broker], "t", 0, offset)

    answer = fetch(1, 0)
    assert (answer.error_code, answer.high_watermark, answer.log_start_offset) == (ke.NONE, 3, 0)
    assert answer.records[:8] == struct.pack(">q", 0)  # the batch as stored, offsets assigned
    assert fetch(2, 0).error_code == ke.NOT_LEADER_OR_FOLLOWER
    assert fetch(1, 4).error_code == ke.OFFSET_OUT_OF_RANGE


def test_a_fetch_from_a_follower_names_the_leader_from_v16_only(sb: Sandbox) -> None:
    """KIP-951 in `KafkaApis.handleFetchRequest` (`versionId >= 16`): below it the leader is not named, so a
    client (kafka-python 3.0.12 fetches at v12) is never told of a leader whose address it does not have."""
    answer = fetch_raw(sb.brokers[2], "t", 0, 0)
    assert (answer.error_code, answer.current_leader) == (ke.NOT_LEADER_OR_FOLLOWER, None)  # the default: -1, -1
    F = FetchRequest.FetchTopic
    request = FetchRequest(version=16, replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=2**20,
                           isolation_level=0, session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                           topics=[F(topic_id=sb.cluster.topics["t"].topic_id, partitions=[F.FetchPartition(
                               partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                               log_start_offset=-1, partition_max_bytes=2**20)])])
    whole = call(sb.brokers[2], request, FetchResponse, 16)
    answer = whole.responses[0].partitions[0]
    assert (answer.error_code, answer.current_leader.leader_id) == (ke.NOT_LEADER_OR_FOLLOWER, 1)
    assert [(e.node_id, e.port) for e in whole.node_endpoints] == [(1, sb.brokers[1][1])]


def test_a_fetch_with_nothing_to_read_waits_for_a_write(sb: Sandbox) -> None:
    """DelayedFetch: held until min_bytes are there (max_wait_ms at most), answered as soon as a write comes."""
    started = time.monotonic()
    assert fetch_raw(sb.brokers[1], "t", 0, 0, max_wait_ms=300).records == b""  # nothing came: after max_wait_ms
    assert time.monotonic() - started >= 0.25
    threading.Timer(0.3, produce_raw, (sb.brokers[1], "t", 0, batch(2))).start()
    started = time.monotonic()
    answer = fetch_raw(sb.brokers[1], "t", 0, 0, max_wait_ms=4000)  # (the test client waits 5 s at most)
    assert answer.high_watermark == 2 and answer.records and time.monotonic() - started < 3.5


def test_a_fetch_with_nothing_to_wait_for_is_answered_at_once(sb: Sandbox) -> None:
    """KafkaApis.handleFetchRequest answers a Fetch of no partitions at once (`interesting.isEmpty`), as
    ReplicaManager.fetchMessages answers a diverging epoch or min_bytes 0; max_wait_ms (any, even 2^31-1: Kafka
    does not bound it) only holds a Fetch that waits for records. The test client waits 5 s at most."""
    request = FetchRequest(version=4, replica_id=-1, max_wait_ms=2**31 - 1, min_bytes=1, max_bytes=2**20,
                           isolation_level=0, topics=[])
    started = time.monotonic()
    assert call(sb.brokers[1], request, FetchResponse, 4).responses == []
    F = FetchRequest.FetchTopic
    request = FetchRequest(version=12, replica_id=-1, max_wait_ms=2**31 - 1, min_bytes=0, max_bytes=2**20,
                           isolation_level=0, session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                           topics=[F(topic="t", partitions=[F.FetchPartition(
                               partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                               log_start_offset=-1, partition_max_bytes=2**20)])])
    assert call(sb.brokers[1], request, FetchResponse, 12).responses[0].partitions[0].records == b""
    produce_raw(sb.brokers[1], "t", 0, batch(2))
    diverging = fetch_raw(sb.brokers[1], "t", 0, 5, last_fetched_epoch=0, max_wait_ms=2**31 - 1).diverging_epoch
    assert (diverging.epoch, diverging.end_offset) == (0, 2)
    assert time.monotonic() - started < 5


def test_without_an_active_controller_a_new_producer_gets_no_id_until_the_quorum_is_back(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3)
    sb.stop_controller(1001)
    sb.stop_controller(1002)
    request = InitProducerIdRequest(version=4, transactional_id=None, transaction_timeout_ms=-1, producer_id=-1,
                                    producer_epoch=-1)
    assert call(sb.brokers[1], request, InitProducerIdResponse, 4).error_code == ke.COORDINATOR_LOAD_IN_PROGRESS
    sb.start_controller(1001)
    answer = call(sb.brokers[1], request, InitProducerIdResponse, 4)
    assert (answer.error_code, answer.producer_id, answer.producer_epoch) == (ke.NONE, 0, 0)
    assert call(sb.brokers[2], request, InitProducerIdResponse, 4).producer_id == 1000  # broker 2's own block


def test_an_unclean_election_truncates_to_the_new_leaders_log_and_the_loss_is_shown(
        sandbox_factory: Callable[..., Sandbox], caplog: pytest.LogCaptureFixture) -> None:
    sb = sandbox_factory(2, broker_configs={"auto.leader.rebalance.enable": "false"})
    sb.create_topic("u", assignment={0: [1, 2]})
    assert produce_raw(sb.brokers[1], "u", 0, batch(10))[0].error_code == ke.NONE  # on both replicas
    sb.stop_broker(2)
    assert produce_raw(sb.brokers[1], "u", 0, batch(5))[0].base_offset == 10  # on broker 1 only
    sb.stop_broker(1)
    sb.start_broker(2, rejoin_isr=False)
    assert sb.partition_state("u", 0).leader == -1 and sb.lost_records == {}
    sb.cluster.elect_leaders(UNCLEAN, [("u", [0])], broker=2)
    assert sb.partition_state("u", 0).leader == 2
    assert sb.lost_records == {"u-0": 5}
    assert ("ERROR", "u-0: 5 records lost: the new leader's log ends at offset 10 (an unclean election)") in [
        (r.levelname, r.getMessage()) for r in caplog.records]
    control = ControlServer(sb, catch_up_seconds=0).start()
    try:
        assert control.answer({"op": "status"})["lost_records"] == {"u-0": 5}
        code, out, _ = run_command(cli, "sandbox-ctl", "--control", control.path, "status")
        assert code == 0 and out.splitlines()[1] == "records lost by unclean elections: 5 (u-0:5)"
    finally:
        control.stop()
    # a consumer that had read offsets 10-14 (leader epoch 0) learns that its log diverged at 10 (KIP-320)
    Topic = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
    request = OffsetForLeaderEpochRequest(version=3, replica_id=-1, topics=[Topic(topic="u", partitions=[
        Topic.OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=0)])])
    answer = call(sb.brokers[2], request, OffsetForLeaderEpochResponse, 3).topics[0].partitions[0]
    assert (answer.error_code, answer.leader_epoch, answer.end_offset) == (ke.NONE, 0, 10)
    diverging = fetch_raw(sb.brokers[2], "u", 0, 15, last_fetched_epoch=0).diverging_epoch
    assert (diverging.epoch, diverging.end_offset) == (0, 10)
    assert produce_raw(sb.brokers[2], "u", 0, batch(1))[0].base_offset == 10  # offsets 10-14 are written again


def test_a_clean_election_loses_nothing_acknowledged(sb: Sandbox, clients: tuple[KafkaProducer, KafkaConsumer]) -> None:
    p, c = clients
    for i in range(20):
        p.send("t", value=str(i).encode(), partition=0)
    p.flush(timeout=30)
    sb.stop_broker(1)  # leader of t-0: 2 takes over from the ISR
    assert sb.partition_state("t", 0).leader == 2 and sb.lost_records == {}
    tp = TopicPartition("t", 0)
    c.assign([tp])
    c.seek_to_beginning(tp)
    assert [r.value for r in read_all(c, tp, 20)] == [str(i).encode() for i in range(20)]


def test_the_log_budget_drops_the_oldest_batches_and_moves_the_log_start(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    one = len(batch(1, value=b"x" * 1000)) + BATCH_OVERHEAD
    sb = sandbox_factory(1, max_log_bytes=10 * one)
    sb.create_topic("b", 2, 1)
    for _ in range(15):
        produce_raw(sb.brokers[1], "b", 0, batch(1, value=b"x" * 1000))
    answer, _ = produce_raw(sb.brokers[1], "b", 1, batch(1, value=b"x" * 1000))
    assert answer.log_start_offset == 0
    with sb.cluster.lock:
        starts = {pid: sb.cluster.logs.partitions[("b", pid)].log_start_offset for pid in (0, 1)}
        assert sb.cluster.logs.bytes <= 10 * one
    assert starts == {0: 6, 1: 0}  # 16 batches, 10 kept: b-0's six oldest went
    c = consumer(sb)
    try:
        assert c.beginning_offsets([TopicPartition("b", 0)]) == {TopicPartition("b", 0): 6}
    finally:
        c.close()


def test_a_restarted_follower_catches_up_before_it_rejoins_and_acks_all_waits_for_every_isr_member(
        sb: Sandbox) -> None:
    produce_raw(sb.brokers[1], "t", 0, batch(4))
    sb.stop_broker(3)
    produce_raw(sb.brokers[1], "t", 0, batch(4))
    with sb.cluster.lock:
        plog = sb.cluster.logs.partitions[("t", 0)]
        assert (plog.replica_end(3), plog.high_watermark, plog.isr) == (4, 8, [1, 2])
    sb.start_broker(3)  # rejoins the ISR at once: it caught up first
    with sb.cluster.lock:
        assert (plog.replica_end(3), plog.isr) == (8, [1, 2, 3])


def test_the_request_log_keeps_the_latest_requests_only(sandbox_factory: Callable[..., Sandbox],
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(server, "MAX_REQUEST_LOG", 5)  # producers running for hours must not fill the memory
    sb = sandbox_factory(1)
    sb.create_topic("r", 1, 1)
    for _ in range(8):
        produce_raw(sb.brokers[1], "r", 0, batch())
    assert [r.api_key for r in sb.request_log] == [0] * 5


def test_the_request_log_holds_a_request_in_a_few_bytes(sandbox_factory: Callable[..., Sandbox],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 44: a request took about 130 bytes, so the 1,000,000 kept after a flood of tiny produces held 127 MB
    beyond --max-log-bytes. Kept packed, 12 bytes each: 12 MB at most."""
    monkeypatch.setattr(server, "MAX_REQUEST_LOG", 100_000)
    sb = sandbox_factory(1)
    tracemalloc.start()
    try:
        for i in range(150_000):
            sb._server.record(server.RequestRecord(1, 0, 11, i % 3 or None))
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    assert held < 100_000 * 16
    kept = sb.request_log
    assert len(kept) == 100_000
    assert kept[-3:] == [server.RequestRecord(1, 0, 11, p) for p in (None, 1, 2)]  # 149,997 to 149,999, in order

def test_acks_all_waits_for_an_isr_member_not_yet_fenced_and_times_out_as_kafka_does(sb: Sandbox) -> None:
    """DelayedProduce: broker 3 stopped, its failure not yet noticed, is still in the ISR and fetches nothing:
    the high watermark stands still, so acks=all is answered once the controller takes it out of the ISR, or
    REQUEST_TIMED_OUT when the request's timeout comes first."""
    sb.stop_broker(3, noticed_after=60)
    P = ProduceRequest.TopicProduceData
    request = ProduceRequest(version=11, transactional_id=None, acks=-1, timeout_ms=300, topic_data=[
        P(name="t", partition_data=[P.PartitionProduceData(index=0, records=batch())])])
    answer = call(sb.brokers[1], request, ProduceResponse, 11).responses[0].partition_responses[0]
    assert answer.error_code == ke.REQUEST_TIMED_OUT
    assert produce_raw(sb.brokers[1], "t", 0, batch(), acks=1)[0].base_offset == 1  # written all the same
    threading.Timer(0.5, sb.stop_broker, (3,)).start()  # the controller notices: out of the ISR
    started = time.monotonic()
    answer, _ = produce_raw(sb.brokers[1], "t", 0, batch())
    assert (answer.error_code, answer.base_offset) == (ke.NONE, 2) and time.monotonic() - started >= 0.4


def test_list_offsets_max_timestamp_and_a_log_append_time_topic(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(1)
    sb.create_topic("a", 1, 1, configs={"message.timestamp.type": "LogAppendTime"})
    sb.create_topic("c", 1, 1)
    before = int(time.time() * 1000)
    answer, _ = produce_raw(sb.brokers[1], "a", 0, batch(2, timestamp=5))
    assert answer.log_append_time_ms >= before  # the broker's time, not the producer's
    assert produce_raw(sb.brokers[1], "c", 0, batch(2, timestamp=5))[0].log_append_time_ms == -1  # CreateTime
    produce_raw(sb.brokers[1], "c", 0, batch(3, timestamp=100))  # offsets 2-4 at 100, 101, 102
    produce_raw(sb.brokers[1], "c", 0, batch(1, timestamp=50))  # offset 5
    L = ListOffsetsRequest.ListOffsetsTopic

    def offset_at(topic: str, timestamp: int) -> tuple[int, int]:
        request = ListOffsetsRequest(version=7, replica_id=-1, isolation_level=0, topics=[L(
            name=topic, partitions=[L.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1,
                                                            timestamp=timestamp)])])
        p = call(sb.brokers[1], request, ListOffsetsResponse, 7).topics[0].partitions[0]
        return p.offset, p.timestamp

    assert offset_at("c", -3) == (4, 102)  # the largest timestamp: the last record of the second batch
    assert offset_at("c", 101) == (3, 101) and offset_at("c", -2) == (0, -1) and offset_at("c", -1) == (6, -1)
    assert offset_at("a", 6)[1] >= before  # LogAppendTime: the records are found by the broker's time


# -- the model alone -----------------------------------------------------------------------------------

def append(logs: Logs, records: bytes, isr: tuple[int, ...] = (1, 2), live: tuple[int, ...] = (1, 2)) -> object:
    return logs.append(("t", 0), TOPIC_ID, 1, 0, list(isr), set(live), records, False)


def test_idempotent_sequences_are_checked_as_kafka_checks_them() -> None:
    logs = Logs()
    assert append(logs, batch(3, producer_id=7, epoch=0, sequence=0)).base_offset == 0
    again = append(logs, batch(3, producer_id=7, epoch=0, sequence=0))  # a retry: the original's offsets
    assert (again.error_code, again.base_offset) == (ke.NONE, 0)
    assert logs.partitions[("t", 0)].end_offset == 3
    gap = append(logs, batch(1, producer_id=7, epoch=0, sequence=5))
    assert (gap.error_code, gap.message) == (ke.OUT_OF_ORDER_SEQUENCE_NUMBER, (
        "Out of order sequence number for producer 7 at offset 3 in partition t-0: 5 (incoming seq. number), 2 "
        "(current end sequence number)"))
    assert append(logs, batch(1, producer_id=7, epoch=0, sequence=3)).base_offset == 3
    assert append(logs, batch(1, producer_id=7, epoch=1, sequence=4)).error_code == ke.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert append(logs, batch(1, producer_id=7, epoch=1, sequence=0)).base_offset == 4  # a new epoch from 0
    assert append(logs, batch(1, producer_id=7, epoch=0, sequence=4)).error_code == ke.INVALID_PRODUCER_EPOCH
    assert append(logs, batch(1, producer_id=8, epoch=0, sequence=42)).base_offset == 5  # unknown: any sequence


def test_a_corrupt_batch_is_refused_and_nothing_is_written() -> None:
    logs = Logs()
    data = bytearray(batch(2))
    data[-1] ^= 0xFF
    assert append(logs, bytes(data)).error_code == ke.CORRUPT_MESSAGE
    assert logs.partitions == {}  # nothing allocated for a partition not written


def test_the_high_watermark_is_the_lowest_log_end_of_the_isr() -> None:
    logs = Logs()
    append(logs, batch(2), isr=(1, 2), live=(1,))  # 2 is in the ISR but not running: it gets nothing
    plog = logs.partitions[("t", 0)]
    assert (plog.end_offset, plog.high_watermark) == (2, 0)
    logs.follow(("t", 0), TOPIC_ID, 1, [1], {1})  # the ISR shrinks to the leader: what it has is committed
    assert plog.high_watermark == 2


def test_leader_epochs_end_where_the_next_begins() -> None:
    logs = Logs()
    append(logs, batch(2))
    logs.append(("t", 0), TOPIC_ID, 1, 3, [1, 2], {1, 2}, batch(2), False)
    plog = logs.partitions[("t", 0)]
    assert plog.end_offset_for(0) == (0, 2) and plog.end_offset_for(3) == (3, 4)
    assert plog.end_offset_for(2) == (0, 2) and plog.end_offset_for(4) == (-1, -1)
    assert plog.epoch_at(1) == 0 and plog.epoch_at(2) == 3


# -- every advertised version -------------------------------------------------------------------------

def requests_at(version: int, key: int) -> tuple[object, type]:
    """A minimal request of API `key` at `version` about partition t-0, and its response class."""
    if key == 0:
        P = ProduceRequest.TopicProduceData
        return ProduceRequest(version=version, transactional_id=None, acks=1, timeout_ms=5000, topic_data=[
            P(name="t", topic_id=TOPIC_IDS["t"], partition_data=[P.PartitionProduceData(index=0, records=batch())])]), \
            ProduceResponse
    if key == 1:
        F = FetchRequest.FetchTopic
        return FetchRequest(version=version, replica_id=-1, max_wait_ms=0, min_bytes=1, max_bytes=2**20,
                            isolation_level=0, session_id=0, session_epoch=-1, rack_id="", forgotten_topics_data=[],
                            topics=[F(topic="t", topic_id=TOPIC_IDS["t"], partitions=[F.FetchPartition(
                                partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1,
                                log_start_offset=-1, partition_max_bytes=2**20)])]), FetchResponse
    if key == 2:
        L = ListOffsetsRequest.ListOffsetsTopic
        return ListOffsetsRequest(version=version, replica_id=-1, isolation_level=0, timeout_ms=5000, topics=[L(
            name="t", partitions=[L.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-1,
                                                         max_num_offsets=1)])]), ListOffsetsResponse
    if key == 22:
        return InitProducerIdRequest(version=version, transactional_id=None, transaction_timeout_ms=-1,
                                     producer_id=-1, producer_epoch=-1), InitProducerIdResponse
    Topic = OffsetForLeaderEpochRequest.OffsetForLeaderTopic
    return OffsetForLeaderEpochRequest(version=version, replica_id=-1, topics=[Topic(topic="t", partitions=[
        Topic.OffsetForLeaderPartition(partition=0, current_leader_epoch=-1, leader_epoch=0)])]), \
        OffsetForLeaderEpochResponse


TOPIC_IDS: dict[str, object] = {}


@pytest.mark.parametrize("key", [0, 1, 2, 22, 23])
def test_every_advertised_version_of_the_write_and_read_apis_is_answered(
        sandbox_factory: Callable[..., Sandbox], key: int) -> None:
    sb = sandbox_factory(1)
    sb.create_topic("t", 1, 1)
    TOPIC_IDS["t"] = sb.cluster.topics["t"].topic_id
    low, high = advertised(sb.settings, sb.cluster.mode)[key]
    assert high == VERSIONS[DEFAULT_VERSION].api_versions["kraft"][key][1]  # kafka-python encodes the whole range
    for version in range(low, high + 1):
        request, response_class = requests_at(version, key)
        answer = call(sb.brokers[1], request, response_class, version)
        if key == 22:
            codes = [answer.error_code]
        else:
            topics = answer.responses if key in (0, 1) else answer.topics
            codes = [p.error_code for t in topics for p in (t.partition_responses if key == 0 else t.partitions)]
        assert codes == [ke.NONE], (key, version, answer)


@pytest.mark.parametrize("codec", ["gzip", "snappy", "lz4", "zstd"])
def test_a_producer_compressing_with_each_codec_writes_and_a_consumer_reads_back(sb: Sandbox, codec: str) -> None:
    """The sandbox decompresses a batch to check it, as a broker does, and keeps it as the producer compressed it."""
    p, c = producer(sb, compression_type=codec, linger_ms=20), consumer(sb)
    try:
        futures = [p.send("t", key=b"k%d" % i, value=b"value %d" % i * 20, partition=0) for i in range(300)]
        p.flush(timeout=60)
        assert [f.get(timeout=10).offset for f in futures] == list(range(300))
        tp = TopicPartition("t", 0)
        c.assign([tp])
        c.seek_to_beginning(tp)
        assert [r.value for r in read_all(c, tp, 300)] == [b"value %d" % i * 20 for i in range(300)]
    finally:
        p.close(timeout=10)
        c.close()
