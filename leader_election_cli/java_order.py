"""The order in which Java's HashSet and HashMap iterate `TopicPartition`s, which is the order of the
lists Kafka's tool prints (its duplicates, its result lines)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Sequence

from leader_election_cli.model import TopicPartition


def java_hash_set_order(inserted: Iterable[TopicPartition], members: Collection[TopicPartition],
                        table_size: int = 16) -> list[TopicPartition]:
    """`members` in the order Java's HashSet iterates them after `inserted` was added in turn (the ones
    not in `members` skipped), as Kafka's tool lists its duplicates: by bucket (TopicPartition.hashCode,
    spread as HashMap.hash does, masked by the table's size), then in order of insertion. The table starts
    at `table_size` buckets (16 for `new HashSet<>()`, `copy_table_size` for a copy of a collection) and
    doubles when it is more than 3/4 full, or when a bucket of 8 gets another entry while it has fewer than
    64 buckets. Not modelled: a bucket of more than 8 in a table of 64 or more becomes a tree, which
    iterates in another order (it takes names chosen to collide)."""
    added = [tp for tp in dict.fromkeys(inserted) if tp in members]
    return [added[i] for i in java_iteration_order(spread_hashes(added), table_size)]


def copy_table_size(count: int) -> int:
    """The first table size of `new HashSet<>(collection)` of `count` elements, which sizes its map for
    them: a power of two of at least max(count / .75 + 1, 16)."""
    wanted = max(int(count / 0.75) + 1, 16)
    return 1 << (wanted - 1).bit_length()


def kafka_request_order(selected: Sequence[TopicPartition], hashes: Sequence[int]) -> list[int]:
    """The indexes of the distinct `selected` partitions (with their `spread_hashes`) in the order of
    Kafka's ElectLeaders request for them, which a KRaft controller answers in, and so the order its admin
    client fills the result map in: the tool's HashSet of them (`new HashSet<>(partitions)`, in their order)
    iterated, grouped by topic in order of first appearance (ElectLeadersRequest.Builder)."""
    by_topic: dict[str, list[int]] = {}
    for i in java_iteration_order(hashes, copy_table_size(len(hashes))):
        by_topic.setdefault(selected[i].topic, []).append(i)
    return [i for indexes in by_topic.values() for i in indexes]


def spread_hashes(partitions: Sequence[TopicPartition]) -> list[int]:
    """Each partition's TopicPartition.hashCode, spread as HashMap.hash does (h ^ h >>> 16), unsigned."""
    topic_hashes = {topic: java_string_hash(topic) for topic in {tp.topic for tp in partitions}}
    hashes = [(31 * (31 + partition) + topic_hashes[topic]) & 0xFFFFFFFF for topic, partition in partitions]
    return [h ^ (h >> 16) for h in hashes]


def java_iteration_order(hashes: Sequence[int], table_size: int = 16) -> list[int]:
    """The indexes of distinct entries added to a HashSet (or HashMap) of `table_size` buckets in turn,
    with these spread hashes, in the order it iterates them."""
    size = table_size
    if len(hashes) > _TREEIFY_CAPACITY * 3 // 4 or size >= _TREEIFY_CAPACITY:  # the size follows from the count
        while len(hashes) > size * 3 // 4:  # HashMap.putVal: ++size > threshold
            size *= 2
    else:
        size = _small_table_size(hashes, size)
    buckets = [h & (size - 1) for h in hashes]
    return sorted(range(len(hashes)), key=buckets.__getitem__)  # sorted() is stable


_TREEIFY_CAPACITY = 64  # HashMap.MIN_TREEIFY_CAPACITY: below it, a crowded bucket resizes the table


def _small_table_size(hashes: Sequence[int], size: int) -> int:
    """The table size after adding `hashes` in turn to a table of `size`, when a crowded bucket can have
    grown it."""
    in_bucket = Counter[int]()
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


def java_string_hash(text: str) -> int:
    """Java's String.hashCode: over UTF-16 code units, in 32-bit arithmetic, a signed int as Java has it (the
    sandbox's group coordinator places a group by it)."""
    h = 0
    units = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - 2**32 if h >= 2**31 else h
