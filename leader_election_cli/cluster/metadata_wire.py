"""A Metadata answer (v9 and later: the flexible versions) decoded straight into `PartitionState`s.

kafka-python decodes every field of every partition into objects, which `describe()` then copies into
`PartitionState`s: at 1,000,000 partitions that is most of `status`'s time. This decoder reads only
what the tool uses, from the bytes, in one pass, and takes about half the time (benchmarks/elect_1m.py;
`tests/test_metadata_wire.py` checks it against kafka-python's decoder over random answers). Older
versions are left to kafka-python.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from leader_election_cli.model import PartitionState, TopicPartition

FIRST_VERSION = 9  # the first flexible version of Metadata (compact arrays and strings, tagged fields)
_INT32 = struct.Struct(">i").unpack_from
_INT16 = struct.Struct(">h").unpack_from
_PARTITION_HEAD = struct.Struct(">hiii").unpack_from  # error code, partition index, leader, leader epoch
_INT32_ARRAYS: dict[int, struct.Struct] = {}
# a compact int32 array by its size byte (the count + 1; 0 for null) below 0x80: its unpacker, its length
_ARRAY = [struct.Struct(f">{max(0, n - 1)}i").unpack_from for n in range(0x80)]
_ARRAY_BYTES = [1 + 4 * max(0, n - 1) for n in range(0x80)]
_new = tuple.__new__


class Broker(NamedTuple):
    """One broker of a Metadata answer (unpacks as kafka-python's MetadataResponseBroker does)."""

    node_id: int
    host: str
    port: int
    rack: str | None


class MetadataRead(NamedTuple):
    """What the tool uses of a Metadata answer; topics answered with an error are left out."""

    API_VERSION: int
    brokers: list[Broker]
    cluster_id: str | None
    controller_id: int
    partitions: dict[TopicPartition, PartitionState]
    internal_topics: frozenset[str]
    throttle_time_ms: int
    leaders: dict[TopicPartition, int] | None = None  # decoded `leaders_only`: each partition's leader alone

    def __repr__(self) -> str:  # kafka-python logs each answer at DEBUG: not a million partitions
        return f"MetadataRead(v{self.API_VERSION}, {len(self.brokers)} brokers, {len(self.partitions)} partitions)"


def decode(data: bytes | memoryview, version: int, *, leaders_only: bool = False,
           replicas_of: frozenset[int] | None = None) -> MetadataRead:
    """A Metadata answer's body (after the response header) of a flexible `version` (9 or later).

    `leaders_only`: each partition's leader alone, in `leaders` (no `partitions`), in about half the time: the
    replica lists are stepped over, not read (a read-back after an election). `replicas_of`: only the
    partitions with a replica on one of these brokers (the others' ISRs stepped over: what a broker's stop
    touches)."""
    if version < FIRST_VERSION:
        raise ValueError(f"Metadata v{version} is not a flexible version")
    with memoryview(data) as b:
        return _decode(b, version, leaders_only, replicas_of)


def _decode(b: memoryview, version: int, leaders_only: bool, replicas_of: frozenset[int] | None) -> MetadataRead:
    throttle = _INT32(b, 0)[0]
    count, o = _uvarint(b, 4)
    brokers = []
    for _ in range(count - 1):
        node = _INT32(b, o)[0]
        host, o = _string(b, o + 4)
        port = _INT32(b, o)[0]
        rack, o = _string(b, o + 4)
        o = _skip_tags(b, o)
        brokers.append(Broker(node, host or "", port, rack))
    cluster_id, o = _string(b, o)
    controller = _INT32(b, o)[0]
    o += 4
    topic_id_size = 16 if version >= 10 else 0
    partitions: dict[TopicPartition, PartitionState] = {}
    leaders: dict[TopicPartition, int] = {}
    internal = set()
    count, o = _uvarint(b, o)
    for _ in range(count - 1):
        error = _INT16(b, o)[0]
        name, o = _string(b, o + 2)
        o += topic_id_size
        is_internal = b[o]
        o += 1
        size, o = _uvarint(b, o)
        keep = not error and name is not None
        if leaders_only:
            o = _leaders(b, o, size - 1, name, leaders if keep else {})
        else:
            o = _partitions(b, o, size - 1, name, partitions if keep else {}, replicas_of)
        o = _skip_tags(b, o + 4)  # topic authorized operations, then the topic's tagged fields
        if is_internal and not error and name is not None:
            internal.add(name)
    o += (4 if version <= 10 else 0) + (2 if version >= 13 else 0)  # cluster authorized operations; error code
    if _skip_tags(b, o) != len(b):
        raise ValueError(f"a Metadata v{version} answer of {len(b)} bytes does not end where its fields do")
    return MetadataRead(version, brokers, cluster_id, controller, partitions, frozenset(internal), throttle,
                        leaders if leaders_only else None)


def _partitions(b: memoryview, o: int, count: int, name: str | None,
                partitions: dict[TopicPartition, PartitionState], replicas_of: frozenset[int] | None) -> int:
    """`count` partitions of topic `name` into `partitions` (only those with a replica on `replicas_of`,
    unless None); returns the offset after them."""
    for _ in range(count):
        _, index, leader, _ = _PARTITION_HEAD(b, o)
        o += 14
        # the replicas, ISR and offline replicas: compact int32 arrays, each of fewer than 127 (its size a
        # single varint byte) read inline, without a function call (most of the decode's time)
        n = b[o]
        if n < 0x80:
            replicas = _ARRAY[n](b, o + 1)
            o += _ARRAY_BYTES[n]
        else:
            replicas, o = _int32s(b, o)
        if replicas_of is not None and replicas_of.isdisjoint(replicas):
            o = _step_over_partition_rest(b, o)
            continue
        n = b[o]
        if n < 0x80:
            isr = _ARRAY[n](b, o + 1)
            o += _ARRAY_BYTES[n]
        else:
            isr, o = _int32s(b, o)
        n = b[o]
        if n < 0x80:
            offline = _ARRAY[n](b, o + 1)
            o += _ARRAY_BYTES[n]
        else:
            offline, o = _int32s(b, o)
        o = _skip_tags(b, o) if b[o] else o + 1  # tagged fields (none known to the tool): rarely any
        # the NamedTuples made as their own __new__ makes them, without its Python frame (a third of the
        # decode); in PartitionState's field order, which tests/test_metadata_wire.py holds
        partitions[_new(TopicPartition, (name, index))] = _new(
            PartitionState, (name, index, leader, replicas, isr, (), (), offline))
    return o


def _leaders(b: memoryview, o: int, count: int, name: str | None, leaders: dict[TopicPartition, int]) -> int:
    """`count` partitions of topic `name`: their leaders into `leaders`, the rest stepped over."""
    for _ in range(count):
        _, index, leader, _ = _PARTITION_HEAD(b, o)
        o += 14
        n = b[o]  # the replicas stepped over, then the rest
        o = _step_over_partition_rest(b, o + _ARRAY_BYTES[n] if n < 0x80 else _int32s(b, o)[1])
        leaders[_new(TopicPartition, (name, index))] = leader
    return o


def _step_over_partition_rest(b: memoryview, o: int) -> int:
    """The offset after a partition's ISR, offline replicas and tagged fields, starting at its ISR."""
    n = b[o]
    o = o + _ARRAY_BYTES[n] if n < 0x80 else _int32s(b, o)[1]
    n = b[o]
    o = o + _ARRAY_BYTES[n] if n < 0x80 else _int32s(b, o)[1]
    return _skip_tags(b, o) if b[o] else o + 1


def _uvarint(b: memoryview, o: int) -> tuple[int, int]:
    value = b[o]
    if value < 0x80:
        return value, o + 1
    value &= 0x7F
    shift = 7
    while True:
        o += 1
        byte = b[o]
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, o + 1
        shift += 7


def _string(b: memoryview, o: int) -> tuple[str | None, int]:
    """A compact (nullable) string: its length + 1 as an unsigned varint, 0 for null."""
    size, o = _uvarint(b, o)
    if size == 0:
        return None, o
    end = o + size - 1
    return str(b[o:end], "utf-8"), end


def _int32s(b: memoryview, o: int) -> tuple[tuple[int, ...], int]:
    """A compact array of int32."""
    size, o = _uvarint(b, o)
    if size <= 1:
        return (), o
    size -= 1
    unpack = _INT32_ARRAYS.get(size)
    if unpack is None:
        unpack = _INT32_ARRAYS[size] = struct.Struct(f">{size}i")
    return unpack.unpack_from(b, o), o + 4 * size


def _skip_tags(b: memoryview, o: int) -> int:
    """Tagged fields: a count, then (tag, size, bytes) each; the tool uses none."""
    count, o = _uvarint(b, o)
    for _ in range(count):
        _, o = _uvarint(b, o)
        size, o = _uvarint(b, o)
        o += size
    return o
