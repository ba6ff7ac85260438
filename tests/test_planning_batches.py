"""Batching an election into requests, and halving a batch the controller refused."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leader_election_cli.planning.batches import (
    MAX_CHANGES_PER_REQUEST,
    SAFE_CHANGES_PER_REQUEST,
    batches,
    request_size,
    split_in_halves,
)


def test_batches_of_a_known_list():
    assert batches(list(range(7)), 3) == [[0, 1, 2], [3, 4, 5], [6]]
    assert batches([], 5) == []
    assert batches("ab", 5) == [["a", "b"]]


@pytest.mark.parametrize("size", [0, -1])
def test_batch_size_must_be_positive(size):
    with pytest.raises(ValueError, match="at least 1"):
        batches([1], size)


@given(st.lists(st.integers()), st.integers(1, 50))
def test_batches_cover_every_item_once_in_order(items, size):
    result = batches(items, size)
    assert [item for batch in result for item in batch] == items
    assert all(len(batch) == size for batch in result[:-1])
    assert all(1 <= len(batch) <= size for batch in result)
    assert len(result) == -(-len(items) // size)


def test_split_in_halves_of_a_known_batch():
    assert split_in_halves([1, 2, 3, 4, 5]) == ([1, 2, 3], [4, 5])
    assert split_in_halves([1, 2]) == ([1], [2])
    with pytest.raises(ValueError, match="fewer than two"):
        split_in_halves([1])


@given(st.lists(st.integers(), min_size=2))
def test_halves_are_non_empty_balanced_and_cover_the_batch(batch):
    first, second = split_in_halves(batch)
    assert first + second == batch
    assert first and second and 0 <= len(first) - len(second) <= 1


def test_a_request_never_carries_more_than_the_safe_size() -> None:
    """Half of a KRaft controller's 10,000 records per request: never its limit, never the 4.1 edge."""
    assert SAFE_CHANGES_PER_REQUEST * 2 == MAX_CHANGES_PER_REQUEST
    assert [request_size(n) for n in (None, 1, 4_999, 5_000, 9_999, 10_000, 10**9)] == \
        [5_000, 1, 4_999, 5_000, 5_000, 5_000, 5_000]
