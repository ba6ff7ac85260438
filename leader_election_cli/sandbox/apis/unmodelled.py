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
An API kafka-python has no classes for cannot be answered in its schema: the broker closes the connection
instead (docs/SANDBOX_APIS.md lists them).
"""

from __future__ import annotations

import sys
from typing import Any

from kafka.protocol.api_header import ResponseClassRegistry

from leader_election_cli import kafka_errors as ke


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


def unimplemented(api_key: int, version: int, frame: bytes) -> Any:
    """The UNSUPPORTED_VERSION answer to the request in `frame` (None: no class to answer it in)."""
    answer, ask = response_class(api_key), request_class(api_key)
    if answer is None or ask is None or not answer.min_version <= version <= answer.max_version:
        return None
    try:
        request = ask.decode(frame, version=version, header=True)
    except Exception:  # a malformed request: closed, as for a modelled API
        return None
    return answer(version=version, **_mirrored(answer.fields, request, version, ke.UNSUPPORTED_VERSION, None))


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
