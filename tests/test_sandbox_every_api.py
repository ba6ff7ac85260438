"""Every API key a release advertises answers well-formed, at its lowest and highest advertised version, no key
excepted: what the sandbox models as Kafka does, the rest in the API's own schema with UNSUPPORTED_VERSION (35)
on each entry, the inter-broker APIs only a ZooKeeper-mode broker serves with CLUSTER_AUTHORIZATION_FAILED (31)
(sandbox/apis/unmodelled.py, docs/SANDBOX_APIS.md).

Each answer is parsed by a decoder independent of the one that wrote it: kafka-python's classes for the keys it
has (the sandbox answers with them), Aiven's kio (generated from Kafka's message definitions) for the keys the
sandbox answers from its own schemas, and, for the few versions kio has not, the exact bytes Kafka's message
definitions give the answer (`BY_HAND`).
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import io
import socket
import struct
import typing
import uuid
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.apis import schema_codec
from leader_election_cli.sandbox.apis.message_schemas import MESSAGES
from leader_election_cli.sandbox.apis.registry import APIS, advertised
from leader_election_cli.sandbox.apis.unmodelled import request_class, response_class
from leader_election_cli.sandbox.versions import VERSIONS

kio_index = pytest.importorskip("kio.index", reason="kio (Python 3.11+) parses the answers kafka-python cannot")
from kio.schema.errors import ErrorCode  # noqa: E402
from kio.serial import entity_reader, entity_writer  # noqa: E402
from kio.static.constants import EntityType  # noqa: E402

SCALARS = {"string": "t", "bool": False, "bytes": b"", "float64": 0.0, "uuid": None}
CASES = [(name, mode) for name, release in VERSIONS.items() for mode in release.api_versions]
CORRELATION_ID = 7
ZK_ONLY = {4, 5, 6, 7, 56, 58, 67}  # the inter-broker APIs: CLUSTER_AUTHORIZATION_FAILED
# The answers kio cannot read (APIs and versions Kafka 4.0 removed), byte for byte as Kafka 3.9's message
# definitions lay them out: (flexible header, body). An empty array: int32 0, or compact 0x01; 0x00 ends a
# flexible struct (no tagged fields).
_EMPTY, _CODE31, _CODE35 = struct.pack(">i", 0), struct.pack(">h", 31), struct.pack(">h", 35)
_STRING = struct.pack(">h", 4) + b"User" + struct.pack(">h", 9) + b"ANONYMOUS"
_INT, _TOPIC_ID = struct.Struct(">i"), bytes(range(16))


def _partition_state_v7(index: int) -> bytes:
    """PartitionIndex ControllerEpoch Leader LeaderEpoch Isr PartitionEpoch Replicas AddingReplicas RemovingReplicas
    IsNew LeaderRecoveryState, no tagged fields."""
    return struct.pack(">iiii", index, 1, 1, 1) + b"\x02" + _INT.pack(1) + _INT.pack(0) + b"\x02" + _INT.pack(1) + (
        b"\x01\x01\x00\x00\x00")


# LeaderAndIsr and StopReplica requests naming partitions 0 and 1 of topic "t" (Kafka 3.9's definitions)
REQUESTS = {
    # ControllerId ControllerEpoch UngroupedPartitionStates[TopicName PartitionIndex ControllerEpoch Leader
    # LeaderEpoch Isr PartitionEpoch Replicas] LiveLeaders
    (4, 0): struct.pack(">iii", 1, 1, 2) + b"".join(
        struct.pack(">h", 1) + b"t" + struct.pack(">iiiiiiiii", i, 1, 1, 1, 1, 1, 0, 1, 1) for i in (0, 1)) + _EMPTY,
    # ControllerId IsKRaftController ControllerEpoch BrokerEpoch Type TopicStates[TopicName TopicId
    # PartitionStates] LiveLeaders
    (4, 7): struct.pack(">i?iqb", 1, False, 1, -1, 0) + b"\x02" + b"\x02t" + _TOPIC_ID + b"\x03" + (
        _partition_state_v7(0) + _partition_state_v7(1) + b"\x00" + b"\x01" + b"\x00"),
    # ControllerId ControllerEpoch DeletePartitions UngroupedPartitions[TopicName PartitionIndex]
    (5, 0): struct.pack(">ii?i", 1, 1, False, 2) + b"".join(struct.pack(">h", 1) + b"t" + _INT.pack(i) for i in (0, 1)),
    # ControllerId IsKRaftController ControllerEpoch BrokerEpoch TopicStates[TopicName PartitionStates[
    # PartitionIndex LeaderEpoch DeletePartition]]
    (5, 4): struct.pack(">i?iq", 1, False, 1, -1) + b"\x02" + b"\x02t" + b"\x03" + b"".join(
        struct.pack(">ii?", i, 1, False) + b"\x00" for i in (0, 1)) + b"\x00" + b"\x00",
}
BY_HAND = {
    # ErrorCode PartitionErrors[TopicName PartitionIndex ErrorCode]: LeaderAndIsrRequest.getErrorResponse
    (4, 0): (False, _CODE31 + _INT.pack(2) + b"".join(struct.pack(">h", 1) + b"t" + _INT.pack(i) + _CODE31
                                                      for i in (0, 1))),
    # ErrorCode Topics[TopicId PartitionErrors[PartitionIndex ErrorCode]]
    (4, 7): (True, _CODE31 + b"\x02" + _TOPIC_ID + b"\x03" + b"".join(_INT.pack(i) + _CODE31 + b"\x00" for i in (0, 1))
             + b"\x00\x00"),
    # ErrorCode PartitionErrors[TopicName PartitionIndex ErrorCode]: StopReplicaRequest.getErrorResponse
    (5, 0): (False, _CODE31 + _INT.pack(2) + b"".join(struct.pack(">h", 1) + b"t" + _INT.pack(i) + _CODE31
                                                      for i in (0, 1))),
    (5, 4): (True, _CODE31 + b"\x03" + b"".join(b"\x02t" + _INT.pack(i) + _CODE31 + b"\x00" for i in (0, 1)) + b"\x00"),
    (6, 0): (False, _CODE31),  # ErrorCode
    (6, 8): (True, _CODE31 + b"\x00"),
    (7, 0): (False, _CODE31 + _EMPTY),  # ErrorCode RemainingPartitions
    (7, 3): (True, _CODE31 + b"\x01\x00"),
    # ErrorCode PrincipalType PrincipalName IssueTimestampMs ExpiryTimestampMs MaxTimestampMs TokenId Hmac Throttle
    (38, 0): (False, _CODE35 + _STRING + bytes(24) + struct.pack(">h", 0) + _EMPTY + _EMPTY),
    (39, 0): (False, _CODE35 + bytes(8) + _EMPTY),  # ErrorCode ExpiryTimestampMs ThrottleTimeMs
    (40, 0): (False, _CODE35 + bytes(8) + _EMPTY),
    (41, 0): (False, _CODE35 + _EMPTY + _EMPTY),  # ErrorCode Tokens ThrottleTimeMs
    (56, 0): (True, _EMPTY + _CODE31 + b"\x01\x00"),  # ThrottleTimeMs ErrorCode Topics
}


def sample(fields: dict[str, Any]) -> dict[str, Any]:
    """A kafka-python request level with one entry in every array and a plain value in every field."""
    values: dict[str, Any] = {}
    for name, field in fields.items():
        if field.is_struct_array():
            values[name] = [field.data_class(**sample(field.fields))]
        elif field.is_array():
            kind = field.array_of.type_str
            values[name] = [0] if kind.startswith("int") else [SCALARS[kind]] if kind in SCALARS else []
        elif field.is_struct():
            values[name] = field.data_class(**sample(field.fields))
        else:
            kind = field.type_str
            values[name] = 0 if kind.startswith("int") else SCALARS.get(kind)
    return values


KIO_VALUES = {"bool": False, "bytes": b"", "string": "t", "uuid": uuid.UUID(int=1), "records": None,
              "datetime_i64": datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc),
              "timedelta_i32": datetime.timedelta(0), "timedelta_i64": datetime.timedelta(0), "float64": 0.0}


def kio_sample(cls: type, entries: int = 1) -> Any:
    """A kio request with `entries` entries in every array and a plain value in every field."""
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        declared = next((t for t in typing.get_args(f.type) if typing.get_origin(t) is tuple), f.type)  # nullable
        kind = typing.get_origin(declared)
        inner = typing.get_args(declared)[0] if kind is tuple else declared
        struct_type = next((t for t in (inner, *typing.get_args(inner)) if dataclasses.is_dataclass(t)), None)
        if struct_type is not None:
            value = kio_sample(struct_type, entries)
            values[f.name] = tuple(kio_sample(struct_type, entries) for _ in range(entries)) if kind is tuple else value
            continue
        kafka_type = f.metadata["kafka_type"]
        value = ErrorCode.none if kafka_type == "error_code" else KIO_VALUES.get(kafka_type, 0)
        values[f.name] = (value,) * entries if kind is tuple else value
    return cls(**values)


def kio_class(key: int, version: int, entity: str) -> Any:
    """kio's request or response class of a key's version, None when kio has none."""
    try:
        module = kio_index.load_payload_module(key, version, EntityType[entity])
    except kio_index.KioIndexError:
        return None
    return next(getattr(module, n) for n in dir(module)
                if n.endswith(entity.capitalize()) and dataclasses.is_dataclass(getattr(module, n)))


def schema_request(key: int, version: int, body: bytes) -> bytes:
    """A framed request: Kafka's request header (no client id in ControlledShutdown v0's; tagged fields in a
    flexible version's), then `body`."""
    header = struct.pack(">hhi", key, version, CORRELATION_ID)
    if not (key == 7 and version == 0):
        header += struct.pack(">h", 9) + b"every-api"
    if MESSAGES[key].is_flexible(version):
        header += b"\x00"
    return struct.pack(">i", len(header) + len(body)) + header + body


def kio_body(cls: Any, value: Any) -> bytes:
    buffer = io.BytesIO()
    entity_writer(cls)(buffer, value)
    return buffer.getvalue()


def exchange(address: tuple[str, int], frame: bytes) -> bytes | None:
    """The answer's payload, or None when the broker closes the connection."""
    with socket.create_connection(address, timeout=10) as sock:
        sock.sendall(frame)
        data = b""
        while len(data) < 4 or len(data) < 4 + struct.unpack(">i", data[:4])[0]:
            chunk = sock.recv(65536)
            if not chunk:
                return None
            data += chunk
        return data[4:]


def error_codes(value: Any, version: int) -> list[int]:
    """Every error code of a kafka-python response, at every level the version has."""
    if isinstance(value, list):
        return [c for item in value for c in error_codes(item, version)]
    fields = {n: f for n, f in (getattr(value, "fields", None) or {}).items() if f.for_version_q(version)}
    codes = [getattr(value, name) for name in fields if name.endswith("error_code")]
    return codes + [c for name in fields for c in error_codes(getattr(value, name, None), version)]


def kio_error_codes(value: Any) -> list[int]:
    """Every error code of a kio response, at every level."""
    if isinstance(value, tuple):
        return [c for item in value for c in kio_error_codes(item)]
    if not dataclasses.is_dataclass(value):
        return []
    codes: list[int] = []
    for f in dataclasses.fields(value):
        field_value = getattr(value, f.name)
        is_code = f.metadata.get("kafka_type") == "error_code"
        codes += [int(field_value.value)] if is_code else kio_error_codes(field_value)
    return codes


def kafka_python_answer(address: tuple[str, int], key: int, version: int) -> None:
    ask, answer = request_class(key), response_class(key)
    request = ask[version](**sample(ask.fields))
    if key == 0:
        request.acks = -1  # an acks=0 Produce is never answered
    request.with_header(correlation_id=CORRELATION_ID, client_id="every-api")
    payload = exchange(address, request.encode(version=version, header=True, framed=True))
    assert payload is not None, f"key {key} v{version}: connection closed"
    response = answer.decode(payload, version=version, header=True)
    assert response.version == version
    if key not in APIS:
        codes = error_codes(response, version)
        assert codes and set(codes) == {35}, f"key {key} v{version}: {response}"


def schema_answer(address: tuple[str, int], key: int, version: int) -> Any:
    """Send a key kafka-python has no classes for (the body kio writes, else `REQUESTS`'s, else none: those
    answers do not read it) and check the answer: the correlation id, the header, the whole frame read, every
    error code the expected one. The kio response, None where kio has none."""
    ask = kio_class(key, version, "request")
    body = REQUESTS.get((key, version), b"") if ask is None else kio_body(ask, kio_sample(ask))
    payload = exchange(address, schema_request(key, version, body))
    assert payload is not None, f"key {key} v{version}: connection closed"
    assert struct.unpack_from(">i", payload)[0] == CORRELATION_ID
    expected = 31 if key in ZK_ONLY else 35
    answer = kio_class(key, version, "response")
    if answer is None:
        flexible, body = BY_HAND[(key, version)]
        assert payload[4:] == (b"\x00" if flexible else b"") + body, f"key {key} v{version}: {payload!r}"
        return None
    at = 4 + answer.__flexible__
    assert payload[4:at] == b"\x00" * answer.__flexible__  # a flexible header's empty tagged fields
    response, size = entity_reader(answer)(payload, at)
    assert at + size == len(payload), f"key {key} v{version}: {len(payload) - at - size} bytes left"
    codes = kio_error_codes(response)
    assert codes and set(codes) == {expected}, f"key {key} v{version}: {response}"
    return response


@pytest.mark.parametrize(("release", "mode"), CASES)
def test_every_advertised_key_answers_in_its_own_schema(release: str, mode: str) -> None:
    with Sandbox(3, mode, kafka_version=release) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        versions = advertised(sb._server.settings, sb.cluster.mode)
        answered = set()
        for key, (low, high) in sorted(versions.items()):
            for version in sorted({low, high}):
                if request_class(key) is not None:
                    kafka_python_answer(sb.brokers[1], key, version)
                else:
                    schema_answer(sb.brokers[1], key, version)
                answered.add(key)
        assert answered == set(versions)


def test_every_key_kafka_python_lacks_has_a_schema_at_every_advertised_version() -> None:
    for release in VERSIONS.values():
        for table in release.api_versions.values():
            for key, (low, high) in table.items():
                if request_class(key) is None:
                    assert all(MESSAGES[key].response(v) is not None for v in range(low, high + 1)), key


def test_a_mirrored_answer_has_one_entry_per_requested_resource(sandbox_factory: Any) -> None:
    """AlterUserScramCredentials, which the sandbox does not model: each deletion and upsertion gets its own
    UNSUPPORTED_VERSION, in the request's order (deletions first)."""
    sb = sandbox_factory()
    ask, answer = request_class(51), response_class(51)
    request = ask[0](deletions=[ask.ScramCredentialDeletion(name=n, mechanism=1) for n in ("a", "b")],
                     upsertions=[ask.ScramCredentialUpsertion(name="c", mechanism=1, iterations=4096, salt=b"s",
                                                              salted_password=b"p")])
    request.with_header(correlation_id=7, client_id="every-api")
    payload = exchange(sb.brokers[1], request.encode(version=0, header=True, framed=True))
    response = answer.decode(payload, version=0, header=True)
    assert [r.error_code for r in response.results] == [35, 35, 35]


def test_a_schema_answer_has_one_entry_per_requested_group_and_partition(sandbox_factory: Any) -> None:
    """ConsumerGroupDescribe and ReadShareGroupState, which kafka-python has no classes for: each group, each
    topic's partitions, named back with its own UNSUPPORTED_VERSION (ReadShareGroupStateRequest.getErrorResponse)."""
    sb = sandbox_factory()
    ask = kio_class(69, 0, "request")
    payload = exchange(sb.brokers[1], schema_request(69, 0, kio_body(ask, ask(
        group_ids=("g1", "g2", "g3"), include_authorized_operations=False))))
    groups, _ = entity_reader(kio_class(69, 0, "response"))(payload, 5)
    assert [(g.group_id, g.error_code.value) for g in groups.groups] == [("g1", 35), ("g2", 35), ("g3", 35)]
    ask = kio_class(84, 0, "request")
    request = kio_sample(ask, entries=2)
    payload = exchange(sb.brokers[1], schema_request(84, 0, kio_body(ask, request)))
    state, _ = entity_reader(kio_class(84, 0, "response"))(payload, 5)
    assert [(r.topic_id, [(p.partition, p.error_code.value) for p in r.partitions]) for r in state.results] == [
        (t.topic_id, [(p.partition, 35) for p in t.partitions]) for t in request.topics]


def test_a_malformed_schema_request_closes_the_connection(sandbox_factory: Any) -> None:
    """A ConsumerGroupDescribe whose body is cut short is not answered, as for a modelled API."""
    sb = sandbox_factory()
    assert exchange(sb.brokers[1], schema_request(69, 0, b"\x03\x03g1")) is None


@given(groups=st.lists(st.text(max_size=8), max_size=4), partitions=st.lists(st.integers(-2**31, 2**31 - 1)),
       flexible=st.booleans())
def test_the_schema_codec_reads_back_what_it_writes(groups: list[str], partitions: list[int], flexible: bool) -> None:
    fields = schema_codec.parse("Groups:[ GroupId:string Partitions:[]int32 Note:string? Topic:{? Id:uuid } ] "
                                "Operations:int32=-2147483648 Data:bytes?")
    values = {"Groups": [{"GroupId": g, "Partitions": partitions} for g in groups]}
    data = schema_codec.encode(fields, values, flexible)
    decoded, end = schema_codec.decode(fields, data, 0, flexible)
    assert end == len(data)
    assert [(g["GroupId"], g["Partitions"], g["Note"], g["Topic"]) for g in decoded["Groups"]] == [
        (g, partitions, None, None) for g in groups]
    assert (decoded["Operations"], decoded["Data"]) == (-2147483648, None)


def test_every_schema_version_the_releases_advertise_reads_back_with_kio() -> None:
    """Each version in between too (AlterPartition v1 and v2, DescribeDelegationToken v1 and v2 ...): the answer
    to an empty request, read by kio where it has the version, to its last byte."""
    checked = 0
    for key, message in MESSAGES.items():
        advertised_versions = {v for release in VERSIONS.values() for table in release.api_versions.values()
                               if key in table for v in range(table[key][0], table[key][1] + 1)}
        for version in sorted(advertised_versions):
            answer = kio_class(key, version, "response")
            if answer is None:
                continue
            assert answer.__flexible__ == message.is_flexible(version), (key, version)
            body = schema_codec.encode(message.response(version), {"ErrorCode": message.error}, answer.__flexible__)
            response, size = entity_reader(answer)(body, 0)
            assert size == len(body), (key, version)
            assert set(kio_error_codes(response)) <= {message.error}, (key, version)  # none: no group asked for
            checked += 1
    assert checked >= 33  # 4.1-era keys and versions; the zk-only APIs and versions 4.0 removed are BY_HAND


@given(data=st.binary(max_size=64), flexible=st.booleans())
def test_the_schema_codec_refuses_any_bytes_with_a_value_error(data: bytes, flexible: bool) -> None:
    """What a malformed request becomes: a ValueError (the connection closed), never another exception."""
    fields = MESSAGES[84].request(0)
    with contextlib.suppress(ValueError):
        schema_codec.decode(fields, data, 0, flexible)
