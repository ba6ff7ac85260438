"""Split an election or a reorder into requests a KRaft controller accepts, and halves for retries.

What a KRaft controller takes from one request (Kafka's sources, `metadata/src/main/java/org/apache/kafka/
controller/`, the same in 3.9, 4.0, 4.1 and trunk unless said):

- `ReplicationControlManager.electLeaders` collects its records in `BoundedList.newArrayBacked(
  MAX_RECORDS_PER_USER_OP)`: one `PartitionChangeRecord` per partition whose leader (or ISR/ELR) changes,
  nothing else (a partition named twice is two records; one already led as asked, or that cannot be
  elected, none). `alterPartitionReassignments` does the same, one record per partition it changes.
- `QuorumController.MAX_RECORDS_PER_USER_OP = DEFAULT_MAX_RECORDS_PER_BATCH = 10000`. The 10,001st
  record makes `BoundedList.add` throw `BoundedListTooLongException`, which
  `EventHandlerExceptionInfo.fromInternal` answers as POLICY_VIOLATION "Unable to perform excessively
  large batch operation.", nothing written (Kafka's own tool's `PolicyViolationException` at 28,000).
- The result is non-atomic (`ControllerResult.of`), so `QuorumController.appendRecords` writes it in Raft
  batches of `maxRecordsPerBatch` (10,000; `setMaxRecordsPerBatch`, configurable only after KAFKA-20976):
  `while (true) { endIndex = startIndex + maxRecordsPerBatch; if (endIndex > records.size()) {append the
  rest; return} append [startIndex, endIndex); startIndex += maxRecordsPerBatch }`. At exactly 10,000
  records it appends the 10,000, loops, and appends `subList(10000, 10000)`: an empty batch (KAFKA-21129).
  3.9's and 4.0's `BatchAccumulator.append` takes an empty list as a no-op; 4.1's Raft refuses it
  (IllegalArgumentException "Append failed because there are no records", in a real 4.1.0 controller's
  log), an unexpected exception: `handleEventException` renounces (a controller failover, the
  uncommitted in-memory state reverted), and the request gets UNKNOWN_SERVER_ERROR. The 10,000 records
  already handed to Raft are committed by the next leader or truncated: a real 4.1.0 cluster did both.
- `KafkaRaftClient`'s batches are also bounded in bytes (8 MiB); a PartitionChangeRecord is tens of bytes,
  so 10,000 of them are far below it.

So a request changes at most `MAX_CHANGES_PER_REQUEST` partitions; this tool sends at most
`SAFE_CHANGES_PER_REQUEST` (half of it) in one, whatever the release, so that no request is refused or
meets the 10,000 edge, and a lagging broker has less to publish at once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

MAX_CHANGES_PER_REQUEST = 10_000  # QuorumController.MAX_RECORDS_PER_USER_OP (4.1: exactly this many fails)
SAFE_CHANGES_PER_REQUEST = 5_000  # what one ElectLeaders or AlterPartitionReassignments request carries at most


def request_size(batch_size: int | None) -> int:
    """The partitions one request carries: the batch size asked for, at most `SAFE_CHANGES_PER_REQUEST`."""
    return SAFE_CHANGES_PER_REQUEST if batch_size is None else min(batch_size, SAFE_CHANGES_PER_REQUEST)


def batches(items: Sequence[T], size: int) -> list[list[T]]:
    """Consecutive batches of at most `size` items, in order; every item exactly once."""
    if size < 1:
        raise ValueError(f"batch size must be at least 1, got {size}")
    return [list(items[start:start + size]) for start in range(0, len(items), size)]


def split_in_halves(batch: Sequence[T]) -> tuple[list[T], list[T]]:
    """Two non-empty halves (the first one takes the odd item) of a batch of two or more."""
    if len(batch) < 2:
        raise ValueError("a batch of fewer than two items cannot be split")
    middle = (len(batch) + 1) // 2
    return list(batch[:middle]), list(batch[middle:])
