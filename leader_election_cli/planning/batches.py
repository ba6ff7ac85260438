"""Split an election into requests: fixed-size batches, and halves for POLICY_VIOLATION retries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

# A KRaft controller refuses (POLICY_VIOLATION) a request that would change more partitions than this
# (QuorumController's MAX_RECORDS_PER_USER_OP).
MAX_CHANGES_PER_REQUEST = 10_000


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
