"""The order in which Java's HashSet and HashMap iterate `TopicPartition`s, which is the order of the
lists Kafka's tool prints (its duplicates, its result lines)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from leader_election_cli.model import TopicPartition


def java_hash_set_order(inserted: Iterable[TopicPartition],
                        members: Collection[TopicPartition]) -> list[TopicPartition]:
    """`members` in the order Java's HashSet iterates them after `inserted` was added in turn (the ones
    not in `members` skipped), as Kafka's tool lists its duplicates: by bucket (TopicPartition.hashCode,
    spread as HashMap.hash does, masked by the table's size), then in order of insertion. The table starts
    at 16 buckets and doubles when it is more than 3/4 full, or when a bucket of 8 gets another entry while
    it has fewer than 64 buckets. Not modelled: a bucket of more than 8 in a table of 64 or more becomes a
    tree, which iterates in another order (it takes names chosen to collide)."""
    added = [tp for tp in dict.fromkeys(inserted) if tp in members]
    return [added[i] for i in java_iteration_order(spread_hashes(added))]


def spread_hashes(partitions: Sequence[TopicPartition]) -> list[int]:
    """Each partition's TopicPartition.hashCode, spread as HashMap.hash does (h ^ h >>> 16), unsigned."""
    topic_hashes = {topic: _java_string_hash(topic) for topic in {tp.topic for tp in partitions}}
    hashes = [(31 * (31 + partition) + topic_hashes[topic]) & 0xFFFFFFFF for topic, partition in partitions]
    return [h ^ (h >> 16) for h in hashes]


def java_iteration_order(hashes: Sequence[int]) -> list[int]:
    """The indexes of distinct entries added to a HashSet (or HashMap) in turn, with these spread hashes,
    in the order it iterates them."""
    if len(hashes) > _TREEIFY_CAPACITY * 3 // 4:  # the table size follows from the count alone
        size = 16
        while len(hashes) > size * 3 // 4:  # HashMap.putVal: ++size > threshold
            size *= 2
    else:
        size = _small_table_size(hashes)
    buckets = [h & (size - 1) for h in hashes]
    return sorted(range(len(hashes)), key=buckets.__getitem__)  # sorted() is stable


_TREEIFY_CAPACITY = 64  # HashMap.MIN_TREEIFY_CAPACITY: below it, a crowded bucket resizes the table


def _small_table_size(hashes: Sequence[int]) -> int:
    """The table size after adding `hashes` in turn, when a crowded bucket can have grown it."""
    size, in_bucket = 16, Counter[int]()
    for count, h in enumerate(hashes, 1):
        grown = size
        if in_bucket[h & (size - 1)] >= 8 and size < _TREEIFY_CAPACITY:  # HashMap.treeifyBin resizes instead
            grown *= 2
        if count > grown * 3 // 4:  # HashMap.putVal: ++size > threshold
            grown *= 2
        if grown == size:
            in_bucket[h & (size - 1)] += 1
        else:
            size, in_bucket = grown, Counter(h & (grown - 1) for h in hashes[:count])
    return size


def _java_string_hash(text: str) -> int:
    """Java's String.hashCode: over UTF-16 code units, in 32-bit arithmetic."""
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h
