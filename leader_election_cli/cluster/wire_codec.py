"""The few requests an election or a reorder makes, encoded and decoded without kafka-python: ApiVersions
(v0-v4), Metadata (v9-v13, answers decoded by `metadata_wire`), ElectLeaders (v0-v2) and
AlterPartitionReassignments (v0-v1), with their headers.

Each request is a `Call`: its API key, the versions it can be written in, its body for a version, and a
decoder for the answer's body. Any other request is a `KafkaPythonCall`: kafka-python's own class,
imported only where such a request is made (`cluster/admin.py`), encodes and decodes it.
`tests/test_wire_codec.py` checks these encoders and decoders against kafka-python's classes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple, Protocol

from leader_election_cli import kafka_errors
from leader_election_cli.cluster import metadata_wire
from leader_election_cli.cluster.metadata_wire import MetadataRead
from leader_election_cli.model import TopicPartition

API_VERSIONS, METADATA, ELECT_LEADERS, ALTER_PARTITION_REASSIGNMENTS = 18, 3, 43, 45
_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_INT64 = struct.Struct(">q")
_API_KEY = struct.Struct(">hhh")
_PARTITION_RESULT = struct.Struct(">ih")
_REQUEST_HEAD = struct.Struct(">hhi")


class Call(Protocol):
    """One request: what a transport needs to send it and to read its answer."""

    name: str  # as kafka-python names it in its errors
    api_key: int
    min_version: int
    max_version: int

    def flexible(self, version: int) -> bool: ...
    def encode(self, version: int) -> bytes: ...
    def decode(self, body: memoryview, version: int) -> Any: ...


# -- primitives ----------------------------------------------------------------------------------------


def uvarint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _string(text: str | None, compact: bool) -> bytes:
    """A (nullable) string: int16 length, or a compact one (length + 1 as a varint, 0 for null)."""
    if text is None:
        return b"\x00" if compact else b"\xff\xff"
    raw = text.encode("utf-8")
    return (uvarint(len(raw) + 1) if compact else _INT16.pack(len(raw))) + raw


def _array_size(size: int | None, compact: bool) -> bytes:
    if size is None:
        return b"\x00" if compact else b"\xff\xff\xff\xff"
    return uvarint(size + 1) if compact else _INT32.pack(size)


class _Reader:
    """Reads the fields of an answer's body in order; an answer shorter than its fields raises ValueError."""

    __slots__ = ("b", "o", "compact")

    def __init__(self, body: memoryview, compact: bool):
        self.b, self.o, self.compact = body, 0, compact

    def _unpack(self, fmt: struct.Struct) -> int:
        try:
            value = fmt.unpack_from(self.b, self.o)[0]
        except struct.error as exc:
            raise ValueError(f"an answer ends at byte {self.o}, inside a field") from exc
        self.o += fmt.size
        return value

    def int8(self) -> int:
        return self.bytes_(1)[0]

    def int16(self) -> int:
        return self._unpack(_INT16)

    def int32(self) -> int:
        return self._unpack(_INT32)

    def int64(self) -> int:
        return self._unpack(_INT64)

    def bytes_(self, size: int) -> bytes:
        if size < 0 or self.o + size > len(self.b):
            raise ValueError(f"an answer ends at byte {len(self.b)}, inside a field of {size} bytes")
        value = bytes(self.b[self.o:self.o + size])
        self.o += size
        return value

    def uvarint(self) -> int:
        value = shift = 0
        for _ in range(5):
            byte = self.bytes_(1)[0]
            value |= (byte & 0x7F) << shift
            if byte < 0x80:
                return value
            shift += 7
        raise ValueError("a varint longer than 5 bytes")

    def array_size(self) -> int | None:
        """An array's length (None: null)."""
        if self.compact:
            size = self.uvarint()
            return None if size == 0 else size - 1
        size = self.int32()
        return None if size < 0 else size

    def string(self) -> str | None:
        size = self.uvarint() - 1 if self.compact else self.int16()
        if size < 0:
            return None
        return self.bytes_(size).decode("utf-8")

    def tags(self) -> dict[int, memoryview]:
        """Tagged fields (flexible versions only): tag -> its bytes."""
        if not self.compact:
            return {}
        tags = {}
        for _ in range(self.uvarint()):
            tag, size = self.uvarint(), self.uvarint()
            self.bytes_(size)
            tags[tag] = self.b[self.o - size:self.o]
        return tags

    def end(self, what: str) -> None:
        if self.o != len(self.b):
            raise ValueError(f"a {what} answer of {len(self.b)} bytes does not end where its fields do ({self.o})")


# -- headers -------------------------------------------------------------------------------------------


def request_header(api_key: int, version: int, correlation_id: int, client_id: str | None, flexible: bool) -> bytes:
    """Request header v1 (v2, with empty tagged fields, for a flexible version)."""
    head = _REQUEST_HEAD.pack(api_key, version, correlation_id) + _string(client_id, compact=False)
    return head + b"\x00" if flexible else head


def response_header_size(body: memoryview, api_key: int, flexible: bool) -> tuple[int, int]:
    """(correlation id, size of the response header): v0, or v1 (tagged fields) for a flexible version
    other than ApiVersions' (whose answer header is always v0, so that any client can read it)."""
    reader = _Reader(body, compact=flexible and api_key != API_VERSIONS)
    correlation_id = reader.int32()
    reader.tags()
    return correlation_id, reader.o


# -- ApiVersions ----------------------------------------------------------------------------------------


class ApiVersionsAnswer(NamedTuple):
    error_code: int
    api_versions: dict[int, tuple[int, int]]  # api key -> (min, max)
    throttle_time_ms: int
    finalized_features: dict[str, int]  # name -> max version level (v3+)


class ApiVersionsCall(NamedTuple):
    """ApiVersions: v3+ names the client and answers with the finalized features (KIP-584)."""

    software_name: str
    software_version: str
    name = "ApiVersionsRequest"  # class attributes, not fields (no annotation): a call's repr is its arguments
    api_key = API_VERSIONS
    min_version = 0
    max_version = 4

    @staticmethod
    def flexible(version: int) -> bool:
        return version >= 3

    def encode(self, version: int) -> bytes:
        if version < 3:
            return b""
        return _string(self.software_name, True) + _string(self.software_version, True) + b"\x00"

    @staticmethod
    def decode(body: memoryview, version: int) -> ApiVersionsAnswer:
        """A broker that does not speak `version` answers UNSUPPORTED_VERSION in v0's layout."""
        if len(body) >= 2 and _INT16.unpack_from(body)[0] == kafka_errors.UNSUPPORTED_VERSION:
            version = 0
        reader = _Reader(body, compact=version >= 3)
        error = reader.int16()
        versions = {}
        for _ in range(reader.array_size() or 0):
            key, low, high = reader.int16(), reader.int16(), reader.int16()
            reader.tags()
            versions[key] = (low, high)
        throttle = reader.int32() if version >= 1 else 0
        features: dict[str, int] = {}
        finalized = reader.tags().get(2)
        if finalized is not None:
            inner = _Reader(finalized, compact=True)
            for _ in range(inner.array_size() or 0):
                name, level = inner.string(), inner.int16()
                inner.int16()  # min version level
                inner.tags()
                if name is not None:
                    features[name] = level
        reader.end("ApiVersions")
        return ApiVersionsAnswer(error, versions, throttle, features)


# -- Metadata -----------------------------------------------------------------------------------------


class MetadataCall(NamedTuple):
    """Metadata of some topics (None: every topic; empty: none, only brokers, controller and cluster id).
    Flexible versions only: their answers go straight into `PartitionState`s (`metadata_wire`), or with
    `leaders_only` into each partition's leader alone; with `replicas_of`, only the partitions with a replica
    on one of those brokers."""

    topics: tuple[str, ...] | None
    leaders_only: bool = False
    replicas_of: frozenset[int] | None = None
    name = "MetadataRequest"
    api_key = METADATA
    min_version = metadata_wire.FIRST_VERSION
    max_version = 13

    @staticmethod
    def flexible(version: int) -> bool:
        return True

    def encode(self, version: int) -> bytes:
        topic_id = b"\x00" * 16 if version >= 10 else b""
        parts = [_array_size(None if self.topics is None else len(self.topics), True)]
        for name in self.topics or ():
            parts.append(topic_id + _string(name, True) + b"\x00")
        parts.append(b"\x00")  # allow_auto_topic_creation: false
        if version <= 10:
            parts.append(b"\x00")  # include_cluster_authorized_operations: false
        parts.append(b"\x00\x00")  # include_topic_authorized_operations: false; tagged fields
        return b"".join(parts)

    def decode(self, body: memoryview, version: int) -> MetadataRead:
        try:
            return metadata_wire.decode(body, version, leaders_only=self.leaders_only, replicas_of=self.replicas_of)
        except (IndexError, UnicodeDecodeError, struct.error) as exc:
            raise ValueError(f"malformed Metadata answer: {exc}") from exc


# -- ElectLeaders ---------------------------------------------------------------------------------------


class ElectionAnswer(NamedTuple):
    """An ElectLeaders answer: the top-level error (NONE before v1) and each partition's (code, message)."""

    error_code: int
    results: dict[TopicPartition, tuple[int, str | None]]
    throttle_time_ms: int = 0


def by_topic(partitions: Iterable[TopicPartition]) -> dict[str, list[int]]:
    """Partitions grouped by topic, each topic where it first appears."""
    grouped: dict[str, list[int]] = {}
    for tp in partitions:
        grouped.setdefault(tp.topic, []).append(tp.partition)
    return grouped


def _partition_results(reader: _Reader) -> dict[TopicPartition, tuple[int, str | None]]:
    """Topics, each with its partitions' (index, error code, error message): ElectLeaders' and
    AlterPartitionReassignments' answers share the shape."""
    results: dict[TopicPartition, tuple[int, str | None]] = {}
    for _ in range(reader.array_size() or 0):
        topic = reader.string()
        for _ in range(reader.array_size() or 0):
            partition, code = reader.int32(), reader.int16()
            results[TopicPartition(topic or "", partition)] = (code, reader.string())
            reader.tags()
        reader.tags()
    return results


class ElectLeadersCall(NamedTuple):
    """ElectLeaders (None: every partition). v0 has no election type: preferred only."""

    election_type: int
    partitions: Sequence[TopicPartition] | None
    timeout_ms: int
    name = "ElectLeadersRequest"
    api_key = ELECT_LEADERS
    min_version = 0
    max_version = 2

    @staticmethod
    def flexible(version: int) -> bool:
        return version >= 2

    def encode(self, version: int) -> bytes:
        compact = version >= 2
        parts = [bytes((self.election_type,))] if version >= 1 else []
        topics = None if self.partitions is None else by_topic(self.partitions)
        parts.append(_array_size(None if topics is None else len(topics), compact))
        for topic, indexes in (topics or {}).items():
            parts.append(_string(topic, compact) + _array_size(len(indexes), compact))
            parts.append(struct.pack(f">{len(indexes)}i", *indexes))
            if compact:
                parts.append(b"\x00")
        parts.append(_INT32.pack(self.timeout_ms))
        if compact:
            parts.append(b"\x00")
        return b"".join(parts)

    @staticmethod
    def decode(body: memoryview, version: int) -> ElectionAnswer:
        reader = _Reader(body, compact=version >= 2)
        throttle = reader.int32()
        error = reader.int16() if version >= 1 else kafka_errors.NONE
        results = _partition_results(reader)
        reader.tags()
        reader.end("ElectLeaders")
        return ElectionAnswer(error, results, throttle)


# -- AlterPartitionReassignments ------------------------------------------------------------------------


class ReassignmentAnswer(NamedTuple):
    """An AlterPartitionReassignments answer: the top-level error and each partition's (code, message)."""

    error_code: int
    error_message: str | None
    results: dict[TopicPartition, tuple[int, str | None]]
    throttle_time_ms: int = 0


class AlterReassignmentsCall(NamedTuple):
    """AlterPartitionReassignments to these replica lists (all versions flexible; v1's
    AllowReplicationFactorChange sent as Kafka's default, true)."""

    orders: Mapping[TopicPartition, Sequence[int]]
    timeout_ms: int
    name = "AlterPartitionReassignmentsRequest"
    api_key = ALTER_PARTITION_REASSIGNMENTS
    min_version = 0
    max_version = 1

    @staticmethod
    def flexible(version: int) -> bool:
        return True

    def encode(self, version: int) -> bytes:
        grouped: dict[str, list[tuple[int, Sequence[int]]]] = {}
        for tp, replicas in self.orders.items():
            grouped.setdefault(tp.topic, []).append((tp.partition, replicas))
        parts = [_INT32.pack(self.timeout_ms), b"\x01" if version >= 1 else b"", uvarint(len(grouped) + 1)]
        for topic, partitions in grouped.items():
            parts.append(_string(topic, True) + uvarint(len(partitions) + 1))
            for index, replicas in partitions:
                parts.append(b"".join((_INT32.pack(index), uvarint(len(replicas) + 1),
                                       struct.pack(f">{len(replicas)}i", *replicas), b"\x00")))
            parts.append(b"\x00")
        parts.append(b"\x00")
        return b"".join(parts)

    @staticmethod
    def decode(body: memoryview, version: int) -> ReassignmentAnswer:
        reader = _Reader(body, compact=True)
        throttle = reader.int32()
        if version >= 1:
            reader.int8()  # AllowReplicationFactorChange, as asked
        error, message = reader.int16(), reader.string()
        results = _partition_results(reader)
        reader.tags()
        reader.end("AlterPartitionReassignments")
        return ReassignmentAnswer(error, message, results, throttle)


# -- anything else: kafka-python's classes ---------------------------------------------------------------


class KafkaPythonCall:
    """A request kafka-python's protocol classes encode and decode (those the election path does not
    make: DescribeConfigs, DescribeTopicPartitions, DescribeLogDirs, ListPartitionReassignments, ...)."""

    __slots__ = ("request", "name", "api_key", "min_version", "max_version")

    def __init__(self, request: Any):
        self.request = request
        self.name: str = request.name
        self.api_key: int = request.API_KEY
        self.min_version = 0
        self.max_version: int = request.max_version

    def flexible(self, version: int) -> bool:
        return bool(self.request.flexible_version_q(version))

    def encode(self, version: int) -> bytes:
        return bytes(self.request.encode(version=version))

    def decode(self, body: memoryview, version: int) -> Any:
        from kafka.protocol.api_header import ResponseClassRegistry

        self.request.API_VERSION = version
        self.request.with_header()
        return ResponseClassRegistry.get_response_class(self.request.header).decode(body, version=version)

    def __repr__(self) -> str:
        return repr(self.request)
