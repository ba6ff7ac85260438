"""Writes and reads: InitProducerId, Produce, ListOffsets, Fetch and OffsetForLeaderEpoch, on the logs of
sandbox/partition_logs.py (whose docstring says which Kafka rules they follow).

As Kafka's `KafkaApis` and `ReplicaManager` answer them:
- InitProducerId without a transactional id (an idempotent producer): a new producer id, epoch 0
  (`TransactionCoordinator.handleInitProducerId`), COORDINATOR_LOAD_IN_PROGRESS while the broker has no id
  left and no controller to give it a block (`RPCProducerIdManager`: clients retry; in ZooKeeper mode the
  blocks come from ZooKeeper, `ZkProducerIdManager`). The sandbox has no
  transaction coordinator: a transactional id is answered COORDINATOR_NOT_AVAILABLE.
- Produce: per partition UNKNOWN_TOPIC_OR_PARTITION (v13+, by topic id: UNKNOWN_TOPIC_ID), then its records
  checked as Kafka checks them before anything is written (sandbox/record_batches.py: one batch, its header
  against its records; INVALID_RECORD, CORRUPT_MESSAGE, ...), NOT_LEADER_OR_FOLLOWER (v10+ with the current
  leader and its endpoint, KIP-951), NOT_ENOUGH_REPLICAS (acks=all, ISR below min.insync.replicas), the
  idempotence errors; acks outside -1, 0, 1 is
  INVALID_REQUIRED_ACKS. acks=all is answered once the high watermark covers the records (`DelayedProduce`:
  when every ISR member has them), REQUEST_TIMED_OUT after the request's timeout;
  NOT_ENOUGH_REPLICAS_AFTER_APPEND when the ISR shrank below the minimum meanwhile. acks=0 gets no answer.
- ListOffsets: earliest (-2) the log start offset, latest (-1) the high watermark (read uncommitted) or the
  same for read committed (no transactions: the last stable offset is the high watermark), max timestamp
  (-3, v7+), earliest local (-4, v8+) the log start offset, by timestamp the first record at or after it;
  a leader epoch older than the partition's is FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH.
- Fetch (consumers, `ReplicaManager.fetchMessages`, `Partition.fetchRecords`): from the leader only, up to
  the high watermark, the batches as stored (at least one whole batch however small the limits), the log
  start offset; OFFSET_OUT_OF_RANGE outside [log start, log end]; NOT_LEADER_OR_FOLLOWER and FENCED_LEADER_EPOCH
  name the current leader and its endpoint from v16 only (KIP-951, `KafkaApis.handleFetchRequest`: a v12-v15
  client told of a leader would not learn its address); a diverging epoch when the consumer's last
  fetched epoch ended earlier (KIP-320); waits up to max_wait_ms for min_bytes (`DelayedFetch`), unless there is
  nothing to wait on (no partitions, an error, a diverging epoch). No fetch sessions are kept (session id 0, as
  a broker whose session cache is full answers).
- OffsetForLeaderEpoch (`LeaderEpochFileCache.endOffsetFor`): the end offset of the asked epoch.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from typing import Any

from kafka.protocol.consumer import (
    FetchResponse,
    ListOffsetsResponse,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.producer import InitProducerIdResponse, ProduceResponse

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.context import Context
from leader_election_cli.sandbox.controller.cluster import Cluster
from leader_election_cli.sandbox.controller.model import Mode, Partition, Topic
from leader_election_cli.sandbox.partition_logs import Appended, PartitionLog
from leader_election_cli.sandbox.record_batches import Refused, RequestRefused, request_batch

log = logging.getLogger("leader_election_cli.sandbox")

NO_ANSWER = object()  # acks=0: the broker sends nothing back
POLL_S = 0.01  # how often a held request looks again (the delayed operations' completion check)
EARLIEST, LATEST, MAX_TIMESTAMP, EARLIEST_LOCAL = -2, -1, -3, -4
UNDEFINED_EPOCH = -1


def partition_of(c: Cluster, name: str, pid: int) -> tuple[Topic, Partition] | None:
    topic = c.topics.get(name)
    if topic is None or not 0 <= pid < len(topic.partitions):
        return None
    return topic, topic.partitions[pid]


def leader_problem(c: Cluster, broker: int, found: tuple[Topic, Partition] | None, epoch: int = -1) -> int:
    """`ReplicaManager.getPartitionOrError` and `Partition.localLogWithEpochOrThrow` for the leader's APIs."""
    if found is None:
        return ke.UNKNOWN_TOPIC_OR_PARTITION
    p = found[1]
    if p.leader != broker:
        return ke.NOT_LEADER_OR_FOLLOWER
    if epoch >= 0 and epoch < p.leader_epoch:
        return ke.FENCED_LEADER_EPOCH
    if epoch > p.leader_epoch:
        return ke.UNKNOWN_LEADER_EPOCH
    return ke.NONE


def effective_min_isr(topic: Topic, p: Partition) -> int:
    """`Partition.effectiveMinIsr`: min.insync.replicas, at most the replication factor."""
    return min(topic.min_isr, len(p.replicas))


# -- InitProducerId -----------------------------------------------------------------------------------

def init_producer_id(ctx: Context, req: Any) -> Any:
    if req.transactional_id is not None:
        return init_producer_id_error(ctx, req, ke.COORDINATOR_NOT_AVAILABLE, None)
    c = ctx.cluster
    with c.lock:  # zk mode: the ids come from ZooKeeper (ZkProducerIdManager), not the controller
        producer_id = c.logs.producer_id(ctx.broker_id, c.mode is Mode.ZK or c.has_active_controller())
    if producer_id is None:
        return init_producer_id_error(ctx, req, ke.COORDINATOR_LOAD_IN_PROGRESS, None)
    return InitProducerIdResponse(version=ctx.version, throttle_time_ms=0, error_code=ke.NONE,
                                  producer_id=producer_id, producer_epoch=0)


def init_producer_id_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return InitProducerIdResponse(version=ctx.version, throttle_time_ms=0, error_code=code, producer_id=-1,
                                  producer_epoch=-1)


# -- Produce --------------------------------------------------------------------------------------------

def produce(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    if req.acks not in (-1, 0, 1):
        return produce_error(ctx, req, ke.INVALID_REQUIRED_ACKS, None)
    answers: dict[tuple[str, int], Appended] = {}
    waiting: dict[tuple[str, int], int] = {}  # acks=all: the offset the high watermark must reach
    with c.lock:
        try:
            batches = _request_batches(ctx, req, answers)
        except RequestRefused as e:
            log.warning("broker %d: a Produce request fails as a whole: %s", ctx.broker_id, e)
            return NO_ANSWER if req.acks == 0 else produce_error(ctx, req, e.error_code, None)
        live = c.fetching()
        for key, batch in batches.items():
            found = partition_of(c, *key)
            code = leader_problem(c, ctx.broker_id, found)
            if code != ke.NONE:
                answers[key] = Appended(code)
                continue
            topic, p = found  # type: ignore[misc]
            min_isr = effective_min_isr(topic, p)
            if req.acks == -1 and len(p.isr) < min_isr:  # appendRecordsToLeader's words (a Scala Set)
                answers[key] = Appended(ke.NOT_ENOUGH_REPLICAS, message=(
                    f"The size of the current ISR Set({', '.join(map(str, p.isr))}) is insufficient to satisfy "
                    f"the min.isr requirement of {min_isr} for partition {key[0]}-{key[1]}"))
                continue
            if batch is None:  # nothing to append (below v3 only): no error, nothing written
                plog = c.logs.partitions.get(key)
                answers[key] = Appended(ke.NONE, log_start_offset=plog.log_start_offset if plog else 0)
                continue
            answer = c.logs.append(key, topic.topic_id, p.leader, p.leader_epoch, p.isr, live, batch,
                                   topic.config("message.timestamp.type") == "LogAppendTime")
            answers[key] = answer
            if answer.error_code == ke.NONE and req.acks == -1:
                waiting[key] = c.logs.partitions[key].end_offset
    if req.acks == 0:
        return NO_ANSWER
    if not waiting:
        return _produce_response(ctx, req, answers)
    return _await_replication(ctx, req, answers, waiting)


def _request_batches(ctx: Context, req: Any, answers: dict[tuple[str, int], Appended]) -> dict[tuple[str, int],
                                                                                                bytes | None]:
    """`KafkaApis.handleProduceRequest` before the append: each partition's topic known (UNKNOWN_TOPIC_ID by an
    unknown topic id, v13+), then its records (`record_batches.request_batch`); the partitions left to append,
    with their batch. Refusals go into `answers`."""
    c = ctx.cluster
    batches: dict[tuple[str, int], bytes | None] = {}
    for topic_data in req.topic_data:
        name = _topic_name(c, topic_data, ctx.version)
        for data in topic_data.partition_data:
            key = (name, data.index)
            if name is None or partition_of(c, name, data.index) is None:
                answers[key] = Appended(ke.UNKNOWN_TOPIC_ID if name is None else ke.UNKNOWN_TOPIC_OR_PARTITION)
                continue
            try:
                batches[key] = request_batch(data.records, ctx.version)
            except Refused as e:
                log.warning("broker %d: %s-%d: %s", ctx.broker_id, name, data.index, e)
                answers[key] = Appended(e.error_code, message=e.message)
    return batches


async def _await_replication(ctx: Context, req: Any, answers: dict[tuple[str, int], Appended],
                             waiting: dict[tuple[str, int], int]) -> Any:
    """`DelayedProduce`: each partition is done when its high watermark reaches the records' end
    (`Partition.checkEnoughReplicasReachOffset`), or fails when the leader moved; REQUEST_TIMED_OUT after the
    request's timeout."""
    c = ctx.cluster
    deadline = time.monotonic() + max(0, req.timeout_ms) / 1000
    while True:
        with c.lock:
            for key, offset in list(waiting.items()):
                found = partition_of(c, *key)
                plog = c.logs.partitions.get(key)
                if found is None or plog is None or found[1].leader != ctx.broker_id:
                    answers[key] = Appended(ke.NOT_LEADER_OR_FOLLOWER)
                elif plog.high_watermark >= offset:
                    topic, p = found
                    if len(p.isr) < effective_min_isr(topic, p):
                        answers[key] = answers[key]._replace(error_code=ke.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
                else:
                    continue
                del waiting[key]
        if not waiting or time.monotonic() >= deadline:
            break
        await asyncio.sleep(POLL_S)
    for key in waiting:
        answers[key] = Appended(ke.REQUEST_TIMED_OUT)
    return _produce_response(ctx, req, answers)


def _topic_name(c: Cluster, topic_data: Any, version: int) -> str | None:
    """A Produce or Fetch topic's name: as asked below v13 ("" is a topic no cluster has: Kafka's
    `handleProduceRequest` answers UNKNOWN_TOPIC_OR_PARTITION); from v13 by topic id, None for an id the
    cluster does not know (UNKNOWN_TOPIC_ID)."""
    if version < 13:
        return str(getattr(topic_data, "name", None) or getattr(topic_data, "topic", None) or "")
    topic = c.topic_by_id(getattr(topic_data, "topic_id", None))
    return topic.name if topic is not None else None


def _produce_response(ctx: Context, req: Any, answers: dict[tuple[str, int], Appended]) -> Any:
    R = ProduceResponse
    T = R.TopicProduceResponse
    P = T.PartitionProduceResponse
    c = ctx.cluster
    endpoints: dict[int, Any] = {}
    topics = []
    with c.lock:
        for topic_data in req.topic_data:
            name = _topic_name(c, topic_data, ctx.version)
            partitions = []
            for data in topic_data.partition_data:
                a = answers[(name, data.index)] if name is not None else Appended(ke.UNKNOWN_TOPIC_ID)
                fields: dict[str, Any] = {}
                found = partition_of(c, name, data.index) if name is not None else None
                if a.error_code == ke.NOT_LEADER_OR_FOLLOWER and found and ctx.version >= 10:  # KIP-951
                    leader = found[1].leader
                    fields["current_leader"] = P.LeaderIdAndEpoch(leader_id=leader, leader_epoch=found[1].leader_epoch)
                    if leader in c.addresses and leader in c.live:
                        host, port = c.addresses[leader]
                        endpoints[leader] = R.NodeEndpoint(node_id=leader, host=host, port=port,
                                                           rack=c.racks.get(leader))
                partitions.append(P(index=data.index, error_code=a.error_code, base_offset=a.base_offset,
                                    log_append_time_ms=a.log_append_time, log_start_offset=a.log_start_offset,
                                    record_errors=[], error_message=a.message, **fields))
            topics.append(T(name=topic_data.name, topic_id=getattr(topic_data, "topic_id", None),
                            partition_responses=partitions))
    return R(version=ctx.version, responses=topics, throttle_time_ms=0, node_endpoints=list(endpoints.values()))


def produce_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    answers = {(_topic_name(ctx.cluster, t, ctx.version), d.index): Appended(code) for t in req.topic_data
               for d in t.partition_data}
    return _produce_response(ctx, req, answers)


# -- ListOffsets ----------------------------------------------------------------------------------------

Answer = Callable[[Any, int, "PartitionLog | None", "Partition | None"], Any]


def _each_partition(ctx: Context, topics: Any, name: str, index: str, epoch_from: int,
                    answer: Answer) -> list[tuple[str, list[Any]]]:
    """ListOffsets and OffsetForLeaderEpoch: each asked partition checked as the leader checks it (its current
    leader epoch from version `epoch_from` on), then `answer(asked, error code, its log, the partition)`;
    by topic."""
    c = ctx.cluster
    answered = []
    with c.lock:
        for t in topics:
            topic = getattr(t, name)
            partitions = []
            for asked in t.partitions:
                pid = getattr(asked, index)
                found = partition_of(c, topic, pid)
                code = leader_problem(c, ctx.broker_id, found,
                                       asked.current_leader_epoch if ctx.version >= epoch_from else -1)
                plog = c.logs.partitions.get((topic, pid)) if code == ke.NONE else None
                partitions.append(answer(asked, code, plog, found[1] if found else None))
            answered.append((topic, partitions))
    return answered


def list_offsets(ctx: Context, req: Any) -> Any:
    T = ListOffsetsResponse.ListOffsetsTopicResponse

    def answer(asked: Any, code: int, plog: PartitionLog | None, p: Partition | None) -> Any:
        timestamp = offset = epoch = -1
        if code == ke.NONE and p is not None:
            timestamp, offset, epoch = _offset_at(plog, asked.timestamp, p.leader_epoch)
        return T.ListOffsetsPartitionResponse(partition_index=asked.partition_index, error_code=code,
                                              timestamp=timestamp, offset=offset, leader_epoch=epoch,
                                              old_style_offsets=[offset] if offset >= 0 else [])

    topics = _each_partition(ctx, req.topics, "name", "partition_index", 4, answer)
    return ListOffsetsResponse(version=ctx.version, throttle_time_ms=0,
                               topics=[T(name=name, partitions=partitions) for name, partitions in topics])


def _offset_at(plog: PartitionLog | None, timestamp: int, leader_epoch: int) -> tuple[int, int, int]:
    """`UnifiedLog.fetchOffsetByTimestamp`: (timestamp, offset, leader epoch) of what ListOffsets asks."""
    if plog is None:  # never written: an empty log at offset 0
        return (-1, 0, leader_epoch) if timestamp in (EARLIEST, LATEST, EARLIEST_LOCAL) else (-1, -1, -1)
    if timestamp in (EARLIEST, EARLIEST_LOCAL):
        return -1, plog.log_start_offset, plog.epoch_at(plog.log_start_offset)
    if timestamp == LATEST:
        return -1, plog.high_watermark, plog.epoch_at(plog.high_watermark)
    if timestamp == MAX_TIMESTAMP:
        found = plog.max_timestamp()
    elif timestamp >= 0:
        found = plog.record_at(timestamp)
    else:
        found = None
    if found is None:
        return -1, -1, -1
    return found[0], found[1], plog.epoch_at(found[1])


def list_offsets_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    T = ListOffsetsResponse.ListOffsetsTopicResponse
    topics = [T(name=t.name, partitions=[T.ListOffsetsPartitionResponse(
        partition_index=p.partition_index, error_code=code, timestamp=-1, offset=-1, leader_epoch=-1,
        old_style_offsets=[]) for p in t.partitions]) for t in req.topics]
    return ListOffsetsResponse(version=ctx.version, throttle_time_ms=0, topics=topics)


# -- Fetch ----------------------------------------------------------------------------------------------

def fetch(ctx: Context, req: Any) -> Any:
    if ctx.version >= 7 and req.session_id != 0:
        return fetch_error(ctx, req, ke.FETCH_SESSION_ID_NOT_FOUND, None)
    response = _fetch_now(ctx, req)
    if req.max_wait_ms <= 0 or _complete(response, req.min_bytes):
        return response
    return _fetch_later(ctx, req)


async def _fetch_later(ctx: Context, req: Any) -> Any:
    """`DelayedFetch`: answer once it is complete (`_complete`) or max_wait_ms have passed (as asked: Kafka does
    not bound it, `KafkaApis.handleFetchRequest` hands `fetchRequest.maxWait` on as it is)."""
    deadline = time.monotonic() + req.max_wait_ms / 1000
    seen = _what_changes(ctx)
    while True:
        await asyncio.sleep(POLL_S)
        now = _what_changes(ctx)
        if now == seen and time.monotonic() < deadline:
            continue  # nothing written, no leader or ISR changed: the answer would be the same
        seen = now
        response = _fetch_now(ctx, req)
        if time.monotonic() >= deadline or _complete(response, req.min_bytes):
            return response


def _complete(response: Any, min_bytes: int) -> bool:
    """Whether a Fetch is answered now (`ReplicaManager.fetchMessages`, `DelayedFetch.tryComplete`): no partition
    to wait on (`KafkaApis.handleFetchRequest` answers at once when none is left), min_bytes there (0: at once),
    a partition in error, or a diverging epoch."""
    partitions = [p for t in response.responses for p in t.partitions]
    return (not partitions or sum(len(p.records or b"") for p in partitions) >= min_bytes
            or any(p.error_code != ke.NONE or getattr(p, "diverging_epoch", None) is not None for p in partitions))


def _what_changes(ctx: Context) -> tuple[int, int]:
    """What a held Fetch's answer depends on: the cluster's version (leaders, ISRs) and the logs' changes."""
    return ctx.cluster.version, ctx.cluster.logs.changes


def _fetch_now(ctx: Context, req: Any) -> Any:
    R = FetchResponse
    T = R.FetchableTopicResponse
    P = T.PartitionData
    c = ctx.cluster
    budget = req.max_bytes if ctx.version >= 3 else 2**31 - 1
    topics = []
    endpoints: dict[int, Any] = {}
    with c.lock:
        for t in req.topics:
            name = _topic_name(c, t, ctx.version)
            partitions = []
            for asked in t.partitions:
                found = partition_of(c, name, asked.partition) if name is not None else None
                epoch = asked.current_leader_epoch if ctx.version >= 9 else -1
                code = leader_problem(c, ctx.broker_id, found, epoch)
                if found is None and ctx.version >= 13:
                    code = ke.UNKNOWN_TOPIC_ID
                fields: dict[str, Any] = dict(high_watermark=-1, last_stable_offset=-1, log_start_offset=-1,
                                              aborted_transactions=None, preferred_read_replica=-1, records=b"")
                plog = c.logs.partitions.get((name, asked.partition)) if name is not None else None
                if code == ke.NONE:
                    code, more = _read(plog, asked, budget, ctx.version)
                    fields.update(more)
                    budget -= len(fields["records"])
                elif code in (ke.NOT_LEADER_OR_FOLLOWER, ke.FENCED_LEADER_EPOCH) and found is not None \
                        and ctx.version >= 16:  # KIP-951: the field is there from v12, Kafka fills it from v16
                    p = found[1]
                    fields["current_leader"] = P.LeaderIdAndEpoch(leader_id=p.leader, leader_epoch=p.leader_epoch)
                    if p.leader in c.addresses and p.leader in c.live:
                        host, port = c.addresses[p.leader]
                        endpoints[p.leader] = R.NodeEndpoint(node_id=p.leader, host=host, port=port,
                                                             rack=c.racks.get(p.leader))
                partitions.append(P(partition_index=asked.partition, error_code=code, **fields))
            topics.append(T(topic=getattr(t, "topic", None), topic_id=getattr(t, "topic_id", None),
                            partitions=partitions))
    return R(version=ctx.version, throttle_time_ms=0, error_code=ke.NONE, session_id=0, responses=topics,
             node_endpoints=list(endpoints.values()))


def _read(plog: PartitionLog | None, asked: Any, budget: int, version: int) -> tuple[int, dict[str, Any]]:
    """`Partition.fetchRecords` for a consumer: (error code, the partition's fields)."""
    start, end, hw = (plog.log_start_offset, plog.end_offset, plog.high_watermark) if plog else (0, 0, 0)
    fields: dict[str, Any] = dict(high_watermark=hw, last_stable_offset=hw, log_start_offset=start, records=b"")
    offset = asked.fetch_offset
    last_epoch = asked.last_fetched_epoch if version >= 12 else -1
    if plog is not None and last_epoch >= 0:
        epoch, epoch_end = plog.end_offset_for(last_epoch)
        if epoch == UNDEFINED_EPOCH or epoch < last_epoch or epoch_end < offset:
            fields["diverging_epoch"] = FetchResponse.FetchableTopicResponse.PartitionData.EpochEndOffset(
                epoch=epoch, end_offset=epoch_end)
            return ke.NONE, fields
    if offset < start or offset > end:  # readFromLocalLog's error result: no offsets known
        return ke.OFFSET_OUT_OF_RANGE, dict(fields, high_watermark=-1, last_stable_offset=-1, log_start_offset=-1)
    if plog is None:
        return ke.NONE, fields
    limit = min(asked.partition_max_bytes, budget)
    chunks: list[bytes] = []
    size = 0
    for batch in plog.batches_from(offset):
        if batch.last_offset >= hw:
            break
        if chunks and size + len(batch.data) > limit:
            break
        chunks.append(batch.data)
        size += len(batch.data)
        if size >= limit:
            break
    fields["records"] = b"".join(chunks)
    return ke.NONE, fields


def fetch_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    """`FetchRequest.getErrorResponse`: the code at top level (v7+) and on every partition."""
    R = FetchResponse
    T = R.FetchableTopicResponse
    topics = [T(topic=getattr(t, "topic", None), topic_id=getattr(t, "topic_id", None), partitions=[
        T.PartitionData(partition_index=p.partition, error_code=code, high_watermark=-1, last_stable_offset=-1,
                        log_start_offset=-1, aborted_transactions=None, preferred_read_replica=-1, records=b"")
        for p in t.partitions]) for t in req.topics]
    return R(version=ctx.version, throttle_time_ms=0, error_code=code, session_id=0, responses=topics,
             node_endpoints=[])


# -- OffsetForLeaderEpoch -------------------------------------------------------------------------------

def offset_for_leader_epoch(ctx: Context, req: Any) -> Any:
    T = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult

    def answer(asked: Any, code: int, plog: PartitionLog | None, p: Partition | None) -> Any:
        epoch, end = plog.end_offset_for(asked.leader_epoch) if plog else (UNDEFINED_EPOCH, -1)
        return T.EpochEndOffset(error_code=code, partition=asked.partition, leader_epoch=epoch, end_offset=end)

    topics = _each_partition(ctx, req.topics, "topic", "partition", 2, answer)
    return OffsetForLeaderEpochResponse(version=ctx.version, throttle_time_ms=0,
                                        topics=[T(topic=name, partitions=partitions) for name, partitions in topics])


def offset_for_leader_epoch_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    T = OffsetForLeaderEpochResponse.OffsetForLeaderTopicResult
    topics = [T(topic=t.topic, partitions=[T.EpochEndOffset(error_code=code, partition=p.partition,
                                                             leader_epoch=UNDEFINED_EPOCH, end_offset=-1)
                                           for p in t.partitions]) for t in req.topics]
    return OffsetForLeaderEpochResponse(version=ctx.version, throttle_time_ms=0, topics=topics)

