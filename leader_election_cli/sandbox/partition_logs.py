"""The sandbox's logs: the records written to each partition, per replica a log end offset, per partition a
high watermark, the idempotent producers' state, within a memory budget.

Modelled on Kafka's broker (read from its sources):
- `ReplicaManager.appendRecords` and `Partition.appendRecordsToLeader`: a partition this broker does not lead
  is NOT_LEADER_OR_FOLLOWER (UNKNOWN_TOPIC_OR_PARTITION when the metadata does not know it); with acks=all an
  ISR smaller than the effective min ISR (`effectiveMinIsr`: min.insync.replicas, at most the replication
  factor) is NOT_ENOUGH_REPLICAS before anything is written.
- `UnifiedLog.append` / `LogValidator`: the batch is checked against its header and records first
  (record_batches.py: nothing is written of a batch Kafka refuses), then the leader assigns the offsets (the
  batch's base offset rewritten, its partition leader epoch set), LogAppendTime topics get the broker's time.
- `ProducerStateManager` / `ProducerAppendInfo` (idempotent producers): an epoch older than the producer's
  is INVALID_PRODUCER_EPOCH; a new epoch must start at sequence 0; within an epoch the first sequence must
  follow the last one (`inSequence`), else OUT_OF_ORDER_SEQUENCE_NUMBER; a batch equal to one of the
  producer's last five (`NUM_BATCHES_TO_RETAIN`) is a duplicate, not written again, answered with the
  original batch's offsets (UnifiedLog's `maybeDuplicate`); a producer none of whose batches is left
  (truncated) starts afresh with any sequence.
- Replication (`Partition.maybeIncrementLeaderHW`, `maybeExpandIsr`, `maybeShrinkIsr`): the high watermark is
  the lowest log end offset of the ISR. Followers in the ISR that are live fetch at once, so an append
  reaches them before it is answered; a follower out of the ISR (down, or catching up after a restart) gets
  nothing, and when the controller takes it back into the ISR (the sandbox's catch-up, controller/cluster.py) it has
  caught up to the leader's log end, as `maybeExpandIsr` requires. A stopped broker leaves the ISRs when the
  controller fences it (controller/cluster.py), sooner than replica.lag.time.max.ms (30 s) would take it out.
- Leader changes (`Partition.makeLeader`, followers' truncation to the leader's epoch end offset): the new
  leader's log end offset becomes the partition's; records above it are lost. A clean election (an ISR
  member) loses none of what the high watermark covers; an unclean one loses what its leader lacked: the
  count is logged and kept (`lost`, `sandbox-ctl status`).
- Retention: the records of all partitions are kept up to `max_bytes` in all (each batch counted with what
  holding it costs, `BATCH_OVERHEAD`); past it the oldest batches go first and their partition's log start
  offset moves past them (as retention deletes whole segments).
- Producer ids (`RPCProducerIdManager`): each broker takes blocks of 1000 ids from the controller
  (AllocateProducerIds); with its block used up and no active controller it answers
  COORDINATOR_LOAD_IN_PROGRESS, which clients retry: a new producer waits for a quorum.

Nothing is allocated for a partition until it is first written to.
"""

from __future__ import annotations

import logging
import struct
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kafka.record.default_records import DefaultRecordBatch
from kafka.record.util import calc_crc32c

from leader_election_cli import kafka_errors as ke
from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox.record_batches import CRC_FROM, TIMESTAMP_TYPE_FLAG, Refused, validate
from leader_election_cli.sandbox.sizing import DEFAULT_MAX_LOG_BYTES

log = logging.getLogger("leader_election_cli.sandbox")

PRODUCER_ID_BLOCK_SIZE = 1000  # ProducerIdsBlock.PRODUCER_ID_BLOCK_SIZE
BATCHES_TO_RETAIN = 5  # ProducerStateEntry.NUM_BATCHES_TO_RETAIN
MAX_SEQUENCE = 2**31 - 1
BATCH_OVERHEAD = 200  # bytes a kept batch costs beyond its own (its Batch, deque slots, the bytes object)


class Batch(NamedTuple):
    """One record batch as the log holds it (offsets assigned)."""

    base_offset: int
    last_offset: int
    max_timestamp: int
    data: bytes
    producer_id: int
    producer_epoch: int
    first_sequence: int
    last_sequence: int


class Appended(NamedTuple):
    """What the leader answers for one partition of a Produce request."""

    error_code: int
    base_offset: int = -1
    log_append_time: int = -1
    log_start_offset: int = -1
    message: str | None = None


@dataclass
class PartitionLog:
    """One partition's log: the leader's batches; every replica's log is a prefix of it, up to its `leo`."""

    topic_id: object  # the topic it belongs to (a topic made again under the same name starts a new log)
    leader: int
    isr: list[int]
    batches: deque[Batch] = field(default_factory=deque)
    log_start_offset: int = 0
    end_offset: int = 0  # the leader's log end offset
    high_watermark: int = 0
    leo: dict[int, int] = field(default_factory=dict)  # replica -> log end offset
    producers: dict[int, tuple[int, deque[Batch]]] = field(default_factory=dict)  # id -> (epoch, last batches)
    lost: int = 0  # records lost to leader changes (unclean elections)
    epochs: list[tuple[int, int]] = field(default_factory=list)  # LeaderEpochFileCache: (epoch, start offset)

    def replica_end(self, replica: int) -> int:
        return self.leo.get(replica, 0)

    def epoch_at(self, offset: int) -> int:
        """The leader epoch of the record at `offset` (of the last record, at the log end); -1 for none."""
        epoch = -1
        for e, start in self.epochs:
            if start > offset or (start == offset == self.end_offset):
                break
            epoch = e
        return epoch

    def end_offset_for(self, epoch: int) -> tuple[int, int]:
        """`LeaderEpochFileCache.endOffsetFor`: the latest epoch ends at the log end; an earlier one where the
        next epoch starts, as (the largest known epoch at most `epoch`, or `epoch` itself below them all, that
        offset); (-1, -1) for an epoch later than any, or none asked."""
        if epoch < 0 or not self.epochs:
            return -1, -1
        if self.epochs[-1][0] == epoch:
            return epoch, self.end_offset
        higher = next(((e, start) for e, start in self.epochs if e > epoch), None)
        if higher is None:
            return -1, -1
        floor = [e for e, _ in self.epochs if e <= epoch]
        return (floor[-1] if floor else epoch), higher[1]

    def advance_high_watermark(self) -> None:
        """`maybeIncrementLeaderHW`: the lowest log end offset of the ISR, never backwards but for truncation."""
        ends = [self.replica_end(r) for r in self.isr]
        if ends:
            self.high_watermark = max(self.high_watermark, min(ends))

    def batches_from(self, offset: int) -> Iterator[Batch]:
        for batch in self.batches:
            if batch.last_offset >= offset:
                yield batch

    def record_at(self, timestamp: int) -> tuple[int, int] | None:
        """`UnifiedLog.fetchOffsetByTimestamp`: the first committed record whose timestamp is at or after
        `timestamp`, as (its timestamp, its offset)."""
        for batch in self.batches:
            if batch.base_offset >= self.high_watermark:
                break
            if batch.max_timestamp >= timestamp:
                found = self._first_record(batch, lambda t: t >= timestamp)
                if found is not None:
                    return found
        return None

    def max_timestamp(self) -> tuple[int, int] | None:
        """ListOffsets MAX_TIMESTAMP (-3): the first committed record with the largest timestamp (KAFKA-16310:
        the record's own offset), as (its timestamp, its offset)."""
        committed = [b for b in self.batches if b.last_offset < self.high_watermark]
        if not committed:
            return None
        batch = max(committed, key=lambda b: b.max_timestamp)  # the first of equals
        return self._first_record(batch, lambda t: t == batch.max_timestamp)

    @staticmethod
    def _first_record(batch: Batch, wanted: Callable[[int], bool]) -> tuple[int, int] | None:
        for record in DefaultRecordBatch(batch.data):
            if wanted(record.timestamp):
                return record.timestamp, record.offset
        return None


class Logs:
    """Every partition's log, written ones only; callers hold the cluster's lock."""

    def __init__(self, max_bytes: int = DEFAULT_MAX_LOG_BYTES):
        if max_bytes < 0:
            raise ValueError("the log budget cannot be negative")
        self.max_bytes = max_bytes
        self.bytes = 0
        self.changes = 0  # appends and catch-ups so far (a held Fetch looks again when it moves)
        self.partitions: dict[tuple[str, int], PartitionLog] = {}
        self._oldest: deque[tuple[PartitionLog, Batch]] = deque()  # every batch kept, in append order
        self._next_block = 0  # the controller's next producer id block
        self._blocks: dict[int, tuple[int, int]] = {}  # broker -> (next id, end of its block)

    # -- producer ids ----------------------------------------------------------------------------

    def producer_id(self, broker: int, controller: bool) -> int | None:
        """A new producer id from `broker`'s block; None when its block is used up and no controller can
        give it another (`controller`: there is an active one)."""
        next_id, end = self._blocks.get(broker, (0, 0))
        if next_id >= end:
            if not controller:
                return None
            next_id, end = self._next_block, self._next_block + PRODUCER_ID_BLOCK_SIZE
            self._next_block = end
        self._blocks[broker] = (next_id + 1, end)
        return next_id

    # -- replication -----------------------------------------------------------------------------

    def follow(self, key: tuple[str, int], topic_id: object, leader: int, isr: list[int], live: set[int]) -> None:
        """The partition's registration changed (or may have): a new leader's log becomes the partition's
        (records above it are lost), followers new in the ISR have caught up, the high watermark moves."""
        plog = self.partitions.get(key)
        if plog is None:
            return
        if plog.topic_id != topic_id:  # the topic was deleted (and perhaps made again)
            self._drop(key)
            return
        if leader == plog.leader and isr == plog.isr:  # unchanged (most partitions at any one change): the
            return  # high watermark moves only with the ISR's ends, which appends and catch-ups move themselves
        if leader != plog.leader and (leader == NO_LEADER or leader in live):  # (a leader not running yet: later)
            if leader != NO_LEADER:
                self._truncate(key, plog, plog.replica_end(leader))
            plog.leader = leader
        for replica in isr:
            if replica not in plog.isr and replica in live and plog.leader in live:
                plog.leo[replica] = plog.end_offset  # maybeExpandIsr: it joins having caught up
        plog.isr = list(isr)
        plog.advance_high_watermark()

    def follow_all(self, topics: dict[str, Any], live: set[int]) -> None:
        """`follow` for every written partition (after any change of the cluster: O(partitions written))."""
        for key in list(self.partitions):
            topic = topics.get(key[0])
            if topic is None or key[1] >= len(topic.partitions):
                self._drop(key)
                continue
            p = topic.partitions[key[1]]
            self.follow(key, topic.topic_id, p.leader, p.isr, live)

    def caught_up(self, broker: int) -> None:
        """A follower still in the ISR runs again: it fetches what it missed (the high watermark moves on)."""
        self.changes += 1
        for plog in self.partitions.values():
            if broker in plog.isr and broker != plog.leader:
                plog.leo[broker] = plog.end_offset
                plog.advance_high_watermark()

    def _truncate(self, key: tuple[str, int], plog: PartitionLog, end: int) -> None:
        lost = plog.end_offset - end
        if lost <= 0:
            return
        plog.batches = deque(b for b in plog.batches if b.last_offset < end)  # (counted until the budget's turn)
        plog.end_offset = end
        if end < plog.log_start_offset:  # the new leader's log ends before the old log start
            plog.log_start_offset = end
        plog.high_watermark = min(plog.high_watermark, end)
        plog.leo = {r: min(e, end) for r, e in plog.leo.items()}
        plog.epochs = [(e, start) for e, start in plog.epochs if start < end]
        for producer, (epoch, recent) in list(plog.producers.items()):
            left = deque(b for b in recent if b.last_offset < end)
            if left:
                plog.producers[producer] = (epoch, left)
            else:
                del plog.producers[producer]
        plog.lost += lost
        # an error, so that `kafka-leaders sandbox` shows it without --debug: a rehearsal sees what it cost
        log.error("%s-%d: %d records lost: the new leader's log ends at offset %d (an unclean election)",
                  key[0], key[1], lost, end)

    def _drop(self, key: tuple[str, int]) -> None:
        self.partitions.pop(key).batches.clear()  # (their bytes count until the budget's turn comes)

    @property
    def lost(self) -> dict[str, int]:
        """Records lost to leader changes, by partition ("topic-N"), of the partitions that lost any."""
        return {f"{t}-{p}": lost for (t, p), lost in sorted((tp, plog.lost) for tp, plog in self.partitions.items()
                                                             if plog.lost)}  # in topic, then partition order

    # -- appends ---------------------------------------------------------------------------------

    def append(self, key: tuple[str, int], topic_id: object, leader: int, leader_epoch: int, isr: list[int],
               live: set[int], batch: bytes, log_append_time: bool) -> Appended:
        """The leader appends a Produce request's batch for one partition (`record_batches.validate`'s checks, then
        the idempotent producer's, before anything is written); live ISR members get it at once."""
        plog = self.partitions.get(key)
        partition = f"{key[0]}-{key[1]}"
        try:
            header = validate(batch, partition)
        except Refused as e:  # ReplicaManager.appendToLocalLog: a CorruptRecordException with no log start offset
            log.warning("%s: error processing append operation: %s", partition, e)
            start = -1 if e.error_code == ke.CORRUPT_MESSAGE else plog.log_start_offset if plog else 0
            return Appended(e.error_code, log_start_offset=start, message=e.message)
        if plog is None:
            plog = self.partitions[key] = PartitionLog(topic_id, leader, list(isr), leo={leader: 0})
        now = int(time.time() * 1000)
        producer_id, epoch, first_seq = header.producer_id, header.producer_epoch, header.base_sequence
        last_seq = -1 if first_seq < 0 else (first_seq + header.last_offset_delta) % (MAX_SEQUENCE + 1)
        if producer_id >= 0:
            problem = check_producer(plog, producer_id, epoch, first_seq, last_seq, plog.end_offset, partition)
            if isinstance(problem, Batch):  # a duplicate: the original's offsets, nothing written
                return Appended(ke.NONE, problem.base_offset, now if log_append_time else -1, plog.log_start_offset)
            if problem is not None:
                return problem
        base = plog.end_offset
        max_ts = now if log_append_time else header.max_timestamp
        data = rewrite(batch, base, leader_epoch, header.attributes | TIMESTAMP_TYPE_FLAG,
                       max_ts if log_append_time else None)
        appended = Batch(base, base + header.last_offset_delta, max_ts, data, producer_id, epoch, first_seq, last_seq)
        plog.batches.append(appended)
        if not plog.epochs or plog.epochs[-1][0] != leader_epoch:
            plog.epochs.append((leader_epoch, base))
        plog.end_offset = appended.last_offset + 1
        if producer_id >= 0:
            old_epoch, recent = plog.producers.get(producer_id, (epoch, deque()))
            if old_epoch != epoch:
                recent = deque()
            recent.append(appended)
            while len(recent) > BATCHES_TO_RETAIN:
                recent.popleft()
            plog.producers[producer_id] = (epoch, recent)
        plog.leo[leader] = plog.end_offset
        for replica in isr:
            if replica in live:
                plog.leo[replica] = plog.end_offset
        plog.advance_high_watermark()
        self.changes += 1
        self.bytes += batch_cost(appended)
        self._oldest.append((plog, appended))
        self._enforce_budget()
        return Appended(ke.NONE, base, now if log_append_time else -1, plog.log_start_offset)

    # -- DeleteRecords ---------------------------------------------------------------------------

    def delete_records(self, key: tuple[str, int], offset: int) -> tuple[int, int]:
        """`Partition.deleteRecordsOnLeader` and `UnifiedLog.maybeIncrementLogStartOffset` (the caller checked
        that this broker leads the partition and its cleanup policy allows it): the log start offset moves up to
        `offset` (-1: the high watermark; below 0, or above the high watermark, OFFSET_OUT_OF_RANGE), whole
        batches below it go (one it falls in stays: Fetch and ListOffsets earliest follow the log start offset),
        as do producers none of whose batches is left (`ProducerStateManager.truncateHead`); (error code, low
        watermark). A partition never written to stays unallocated."""
        plog = self.partitions.get(key)
        high_watermark = plog.high_watermark if plog else 0
        wanted = high_watermark if offset == -1 else offset
        if not 0 <= wanted <= high_watermark:
            return ke.OFFSET_OUT_OF_RANGE, -1
        if plog is None or wanted <= plog.log_start_offset:
            return ke.NONE, plog.log_start_offset if plog else 0
        while plog.batches and plog.batches[0].last_offset < wanted:  # (counted until the budget's turn)
            plog.batches.popleft()
        plog.log_start_offset = wanted
        for producer, (_, recent) in list(plog.producers.items()):
            if recent[-1].last_offset < wanted:
                del plog.producers[producer]
        self.changes += 1
        return ke.NONE, wanted

    def _enforce_budget(self) -> None:
        """Drop the oldest batches of all until the records fit `max_bytes`; their log start offset moves on.
        Batches truncated away or of a deleted topic count until their turn comes, as the memory they hold."""
        while self.bytes > self.max_bytes and self._oldest:
            plog, batch = self._oldest.popleft()
            self.bytes -= batch_cost(batch)
            if not plog.batches or plog.batches[0] is not batch:
                continue  # truncated, or its topic deleted
            plog.batches.popleft()
            plog.log_start_offset = batch.last_offset + 1
            plog.high_watermark = max(plog.high_watermark, min(plog.log_start_offset, plog.end_offset))


def batch_cost(batch: Batch) -> int:
    """What a kept batch counts against the budget: its bytes and what holding it costs."""
    return len(batch.data) + BATCH_OVERHEAD


def check_producer(plog: PartitionLog, producer_id: int, epoch: int, first_seq: int, last_seq: int,
                   offset: int, partition: str) -> Appended | Batch | None:
    """`ProducerAppendInfo.checkProducerEpoch` and `checkSequence`, and `findDuplicateBatch`: an error answer,
    the duplicated batch, or None (the batch may be appended)."""
    current = plog.producers.get(producer_id)
    if current is None:  # no state (new, or all its batches gone): any sequence is accepted
        return None
    current_epoch, recent = current
    if epoch < current_epoch:
        return Appended(ke.INVALID_PRODUCER_EPOCH, message=(
            f"Epoch of producer {producer_id} at offset {offset} in {partition} is {epoch}, which is smaller than "
            f"the last seen epoch {current_epoch}"))
    if epoch != current_epoch:
        if first_seq != 0:
            return Appended(ke.OUT_OF_ORDER_SEQUENCE_NUMBER, message=(
                f"Invalid sequence number for new epoch of producer {producer_id} at offset {offset} in partition "
                f"{partition}: {epoch} (request epoch), {first_seq} (seq. number), {current_epoch} (current producer "
                "epoch)"))
        return None
    for batch in recent:
        if (batch.first_sequence, batch.last_sequence) == (first_seq, last_seq):
            return batch
    last = recent[-1].last_sequence if recent else -1
    if not (first_seq == last + 1 or (first_seq == 0 and last == MAX_SEQUENCE)):
        return Appended(ke.OUT_OF_ORDER_SEQUENCE_NUMBER, message=(
            f"Out of order sequence number for producer {producer_id} at offset {offset} in partition {partition}: "
            f"{first_seq} (incoming seq. number), {last} (current end sequence number)"))
    return None


def rewrite(data: bytes, base_offset: int, leader_epoch: int, attributes: int, max_timestamp: int | None) -> bytes:
    """The batch with the leader's offsets and leader epoch (outside the CRC); with LogAppendTime also the
    timestamp type and max timestamp, and so a new CRC."""
    out = bytearray(data)
    struct.pack_into(">qiib", out, 0, base_offset, len(data) - 12, leader_epoch, 2)
    if max_timestamp is not None:
        struct.pack_into(">h", out, 21, attributes)
        struct.pack_into(">q", out, 35, max_timestamp)
        struct.pack_into(">I", out, 17, calc_crc32c(bytes(out[CRC_FROM:])))
    return bytes(out)
