"""The answer to an API a real broker advertises but the sandbox does not model: the API's own response, with
one entry per requested resource, each carrying UNSUPPORTED_VERSION (35), as `AbstractRequest.getErrorResponse`
builds an error answer: a Kafka client reports it cleanly (Java: `UnsupportedVersionException`, kafka-python:
`UnsupportedVersionError`) instead of failing on a closed connection or a response it cannot read.

The response mirrors the request: a level of the response that has an error code of its own carries the error
there, with its arrays empty (JoinGroup, DescribeAcls, a DescribeGroups group); at a level without one, each
array is filled from the request's array of the same name (the level's first array from the request level's
arrays: `topic_names` -> `responses`, `partition_indexes` -> `partitions`, `topic_data` -> `responses`),
each entry taking the request entry's fields of the same name (topic, partition, group or resource names), the
error code and message (`error_code`, or a name ending so: `partition_error_code`).
An API kafka-python has no classes for is answered the same way from its schema in `message_schemas.py`
(Kafka's message definitions; the zk-only inter-broker APIs with CLUSTER_AUTHORIZATION_FAILED, 31, there).
"""

from __future__ import annotations

import struct
import sys
from typing import Any, NamedTuple

from kafka.protocol.api_header import ResponseClassRegistry

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis import schema_codec
from leader_election_cli.sandbox.apis.message_schemas import MESSAGES, Message

CONTROLLED_SHUTDOWN = 7  # its v0 request header has no client id (Kafka's ApiKeys.requestHeaderVersion)


class Answer(NamedTuple):
    """A response body, and whether its header is flexible (has tagged fields)."""

    body: bytes
    flexible_header: bool


def response_class(api_key: int) -> Any:
    """kafka-python's response class of an API key, None when it has none. Its registry holds the class of the
    version last built (`ListGroupsResponse_v5`): the primary class is the first of its bases without a version."""
    registered = ResponseClassRegistry._response_class_registry.get(api_key)
    if registered is None:
        return None
    return next(c for c in registered.__mro__ if getattr(c, "_class_version", None) is None)


def request_class(api_key: int) -> Any:
    """kafka-python's request class of an API key (beside its response class), None when it has none."""
    response = response_class(api_key)
    if response is None:
        return None
    return getattr(sys.modules[response.__module__], response.__name__.removesuffix("Response") + "Request", None)


def unimplemented(api_key: int, version: int, frame: bytes) -> Answer | None:
    """The error answer to the request in `frame` (None: a malformed request, or no schema to answer it in)."""
    if api_key in MESSAGES:
        return _from_schema(MESSAGES[api_key], api_key, version, frame)
    answer, ask = response_class(api_key), request_class(api_key)
    if answer is None or ask is None or not answer.min_version <= version <= answer.max_version:
        return None
    try:
        request = ask.decode(frame, version=version, header=True)
    except Exception:  # a malformed request: closed, as for a modelled API
        return None
    response = answer(version=version, **_mirrored(answer.fields, request, version, ke.UNSUPPORTED_VERSION, None))
    return Answer(response.encode(version=version), answer.flexible_version_q(version))


def _from_schema(message: Message, api_key: int, version: int, frame: bytes) -> Answer | None:
    """The answer to an API kafka-python has no classes for, by the same rule as `_mirrored`."""
    response = message.response(version)
    if response is None:
        return None
    flexible = message.is_flexible(version)
    request: dict[str, Any] = {}
    schema = message.request(version)
    if schema is not None:
        try:
            request, end = schema_codec.decode(schema, frame, _body_offset(frame, api_key, version, flexible), flexible)
        except (ValueError, struct.error):  # a malformed request: closed, as for a modelled API
            return None
        if end != len(frame):
            return None
    values = {**message.values, **_level(response, request, message.error)}
    if message.partition_errors:
        values.update(_partition_errors(response, request, message.error))
    return Answer(schema_codec.encode(response, values, flexible), flexible)


def _partition_errors(fields: tuple[schema_codec.Field, ...], request: dict[str, Any], code: int) -> dict[str, Any]:
    """The error on every partition a LeaderAndIsr or StopReplica request names, as their `getErrorResponse`
    lists them: by topic id from LeaderAndIsr v5 on, else each with its topic name."""
    topics = [(t.get("TopicName", t.get("Name")), t.get("TopicId"),
               [p["PartitionIndex"] if isinstance(p, dict) else p for p in t.get("PartitionStates", t.get(
                   "PartitionIndexes", []))])
              for t in request.get("TopicStates", request.get("Topics", []))]
    topics += [(p["TopicName"], None, [p["PartitionIndex"]])
               for p in request.get("UngroupedPartitionStates", request.get("UngroupedPartitions", []))]
    if any(f.name == "Topics" for f in fields):
        return {"Topics": [{"TopicId": topic_id, "PartitionErrors": [{"PartitionIndex": i, "ErrorCode": code}
                                                                     for i in partitions]}
                           for _, topic_id, partitions in topics]}
    return {"PartitionErrors": [{"TopicName": name, "PartitionIndex": i, "ErrorCode": code}
                                for name, _, partitions in topics for i in partitions]}


def _body_offset(frame: bytes, api_key: int, version: int, flexible: bool) -> int:
    """Where the request body starts: after the api key, version, correlation id, client id (not in
    ControlledShutdown v0's header) and, for a flexible version, the header's tagged fields."""
    at = 8
    if not (api_key == CONTROLLED_SHUTDOWN and version == 0):
        (n,) = struct.unpack_from(">h", frame, at)
        at += 2 + max(n, 0)
    if flexible:
        _, at = schema_codec.decode((), frame, at, True)
    return at


def _level(fields: tuple[schema_codec.Field, ...], source: dict[str, Any], code: int) -> dict[str, Any]:
    """One level of a schema answer: its ErrorCode set and, when it has one, its arrays left empty; otherwise its
    arrays of structs filled from the request level (the same-named array, else for the first array the
    request level's arrays), each entry taking the request entry's same-named fields."""
    values: dict[str, Any] = {}
    own_error = any(f.name == "ErrorCode" for f in fields)
    arrays = [f for f in fields if f.kind == "array" and f.fields]
    for f in fields:
        if f.name == "ErrorCode":
            values[f.name] = code
        elif f in arrays and not own_error:
            if isinstance(source.get(f.name), list):
                items = source[f.name]
            elif f is arrays[0]:
                items = [i for v in source.values() if isinstance(v, list) for i in v]
            else:
                items = []
            values[f.name] = [_level(f.fields, _as_level(f.fields, item), code) for item in items]
        elif f.kind not in ("array", "struct") and f.name in source:
            values[f.name] = source[f.name]
    return values


def _as_level(fields: tuple[schema_codec.Field, ...], item: Any) -> dict[str, Any]:
    """A request entry as a level: a struct as it is, a bare name or number as the entry's first field of its
    kind that is not an error (ConsumerGroupDescribe: a group id -> GroupId)."""
    if isinstance(item, dict):
        return item
    kind = "string" if isinstance(item, str) else "int32"
    name = next((f.name for f in fields if f.kind == kind and not f.name.startswith("Error")), None)
    return {} if name is None else {name: item}


def _present(fields: dict[str, Any], version: int) -> dict[str, Any]:
    return {name: field for name, field in fields.items() if field.for_version_q(version)}


def _mirrored(fields: dict[str, Any], source: Any, version: int, code: int, message: str | None) -> dict[str, Any]:
    """The values of a response level: error fields set, arrays mirrored from `source` (unless the level has
    an error code of its own), same-named fields copied."""
    fields = _present(fields, version)
    source_fields = _present(getattr(source, "fields", None) or {}, version)
    values: dict[str, Any] = {}
    for name, field in fields.items():
        if name.endswith("error_code"):
            values[name] = code
        elif name.endswith("error_message"):
            values[name] = message
        elif field.is_struct_array():
            items = [] if any(n.endswith("error_code") for n in fields) else _items(name, fields, source, source_fields)
            values[name] = [field.data_class(**_entry(field.fields, item, version, code, message)) for item in items]
        elif name in source_fields and not field.is_array() and not field.is_struct():
            values[name] = getattr(source, name)
    return values


def _items(name: str, fields: dict[str, Any], source: Any, source_fields: dict[str, Any]) -> list[Any]:
    """The request entries a response array answers: the same-named array, else, for the level's first array,
    the entries of the request level's arrays (AlterUserScramCredentials: its deletions and upsertions)."""
    if name in source_fields and source_fields[name].is_array():
        return list(getattr(source, name) or [])
    first = next(n for n, f in fields.items() if f.is_struct_array())
    if name != first:
        return []
    return [item for n, f in source_fields.items() if f.is_array() for item in getattr(source, n) or []]


def _entry(fields: dict[str, Any], item: Any, version: int, code: int, message: str | None) -> dict[str, Any]:
    """One response entry for one request entry (a struct, or a bare name or number)."""
    if hasattr(item, "fields"):
        return _mirrored(fields, item, version, code, message)
    fields = _present(fields, version)
    values = _mirrored(fields, None, version, code, message)
    kind = "string" if isinstance(item, str) else None
    for name, field in fields.items():
        if not field.is_array() and not field.is_struct() and not name.endswith(("error_code", "error_message")) and (
                field.type_str == kind or (kind is None and field.type_str.startswith("int"))):
            values[name] = item
            break
    return values
