"""A Metadata answer as plain values, and its encodings: kafka-python's `MetadataResponse` object for the
versions before 9, and, for the flexible versions (9 and later, all a current client speaks), the bytes
written straight from the values.

kafka-python builds an object per partition and encodes it field by field: 1.6 s for an answer about
100,000 partitions, where a broker takes a fraction of a second, and a sandbox that slow makes every
client loop that reads the metadata look slow. The bytes written here are exactly the ones kafka-python
writes for the same answer (`tests/test_sandbox_metadata_answer.py` compares them over random answers), in
about a tenth of the time. Field by field, as `MetadataResponse.json` (clients/src/main/resources/common/
message/) gives them for versions 9-13: ThrottleTimeMs; Brokers (NodeId, Host, Port, Rack); ClusterId;
ControllerId; Topics (ErrorCode, Name, TopicId from v10, IsInternal, Partitions (ErrorCode, PartitionIndex,
LeaderId, LeaderEpoch, ReplicaNodes, IsrNodes, OfflineReplicas), TopicAuthorizedOperations);
ClusterAuthorizedOperations (v9-10); ErrorCode (v13+); each struct ending with its tagged fields (none).
"""

from __future__ import annotations

import struct
import uuid
from collections.abc import Iterable, Sequence
from typing import Any, NamedTuple

from kafka.protocol.metadata import MetadataResponse
from kafka.protocol.schemas.fields.codecs.types import UnsignedVarInt32

FIRST_FLEXIBLE = 9
_NO_OPERATIONS = 1 << 31  # an authorized-operations set of None: {31}, as kafka-python's BitField writes it
_HEAD = struct.Struct(">hiii").pack  # a partition's error code, index, leader, leader epoch
_INT16 = struct.Struct(">h").pack
_INT32 = struct.Struct(">i").pack
_UINT32 = struct.Struct(">I").pack
_uvarint = UnsignedVarInt32.encode  # kafka-python's, as its encoder writes sizes


class Partition(NamedTuple):
    error_code: int
    partition_index: int
    leader_id: int
    leader_epoch: int
    replica_nodes: Sequence[int]
    isr_nodes: Sequence[int]
    offline_replicas: Sequence[int]


class Broker(NamedTuple):
    node_id: int
    host: str
    port: int
    rack: str | None


class Topic(NamedTuple):
    error_code: int
    name: str | None
    topic_id: uuid.UUID | None
    is_internal: bool
    partitions: list[Partition]
    authorized_operations: set[int] | None


class Answer(NamedTuple):
    brokers: list[Broker]
    cluster_id: str | None
    controller_id: int
    topics: list[Topic]
    authorized_operations: set[int] | None
    throttle_time_ms: int = 0
    error_code: int = 0


def response(answer: Answer, version: int) -> Any:
    """kafka-python's `MetadataResponse` of `answer`, to encode at `version`."""
    R = MetadataResponse
    P = R.MetadataResponseTopic.MetadataResponsePartition
    topics = [R.MetadataResponseTopic(error_code=t.error_code, name=t.name, topic_id=t.topic_id,
                                      is_internal=t.is_internal, authorized_operations=t.authorized_operations,
                                      partitions=[P(error_code=p.error_code, partition_index=p.partition_index,
                                                    leader_id=p.leader_id, leader_epoch=p.leader_epoch,
                                                    replica_nodes=list(p.replica_nodes), isr_nodes=list(p.isr_nodes),
                                                    offline_replicas=list(p.offline_replicas))
                                                  for p in t.partitions])
              for t in answer.topics]
    return R(version=version, throttle_time_ms=answer.throttle_time_ms,
             brokers=[R.MetadataResponseBroker(node_id=b.node_id, host=b.host, port=b.port, rack=b.rack)
                      for b in answer.brokers],
             cluster_id=answer.cluster_id, controller_id=answer.controller_id, topics=topics,
             authorized_operations=answer.authorized_operations, error_code=answer.error_code)


def encode(answer: Answer, version: int) -> bytes:
    """`answer`'s body at a flexible `version` (9-13): the bytes kafka-python's encoder writes."""
    if not FIRST_FLEXIBLE <= version <= 13:
        raise ValueError(f"Metadata v{version} is not a flexible version this encoder writes")
    out = [_INT32(answer.throttle_time_ms), _uvarint(len(answer.brokers) + 1)]
    for b in answer.brokers:
        out += (_INT32(b.node_id), _string(b.host), _INT32(b.port), _string(b.rack), b"\x00")
    out += (_string(answer.cluster_id), _INT32(answer.controller_id), _uvarint(len(answer.topics) + 1))
    arrays: dict[Any, bytes] = {}  # each partition's replica lists' bytes, made once per answer
    for t in answer.topics:
        out += (_INT16(t.error_code), _string(t.name))
        if version >= 10:
            out.append(_uuid(t.topic_id))
        out += (b"\x01" if t.is_internal else b"\x00", _uvarint(len(t.partitions) + 1))
        _partitions(t.partitions, arrays, out)
        out += (_operations(t.authorized_operations), b"\x00")
    if version <= 10:
        out.append(_operations(answer.authorized_operations))
    if version >= 13:
        out.append(_INT16(answer.error_code))
    out.append(b"\x00")
    return b"".join(out)


def _partitions(partitions: Iterable[Partition], arrays: dict[Any, bytes], out: list[bytes]) -> None:
    """Each partition's bytes onto `out` (a large answer's hot loop: no call but the packing). The bytes after
    a partition's head (its replicas, ISR, offline replicas and no tagged fields) are made once per answer for
    each distinct three lists."""
    append, known = out.append, arrays.get
    for error, index, leader, epoch, replicas, isr, offline in partitions:
        lists = (tuple(replicas), tuple(isr), tuple(offline))
        append(_HEAD(error, index, leader, epoch))
        append(known(lists) or _rest(lists, arrays))


def _rest(lists: tuple[tuple[int, ...], ...], arrays: dict[Any, bytes]) -> bytes:
    """A partition's three compact int32 arrays and its empty tagged fields, kept in `arrays`."""
    packed = arrays[lists] = b"".join(_uvarint(len(ids) + 1) + struct.pack(f">{len(ids)}i", *ids) for ids in lists) \
        + b"\x00"
    return packed


def _string(value: str | None) -> bytes:
    """A compact (nullable) string: its length + 1 as an unsigned varint, 0 for null."""
    if value is None:
        return b"\x00"
    data = value.encode()
    return _uvarint(len(data) + 1) + data


def _uuid(value: uuid.UUID | str | None) -> bytes:
    if value is None:
        return bytes(16)
    return value.bytes if isinstance(value, uuid.UUID) else uuid.UUID(value).bytes


def _operations(operations: set[int] | None) -> bytes:
    """An authorized-operations bitfield, as kafka-python's BitField writes it (None: bit 31 alone)."""
    if operations is None:
        return _UINT32(_NO_OPERATIONS)
    bits = 0
    for op in operations:
        bits |= 1 << op
    return _UINT32(bits)
