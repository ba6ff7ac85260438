"""Every API key a release advertises answers well-formed, at its lowest and highest advertised version: what the
sandbox models as Kafka does, the rest in the API's own schema with UNSUPPORTED_VERSION (35) on each entry
(sandbox/apis/unmodelled.py); an API kafka-python has no classes for closes the connection (docs/SANDBOX_APIS.md)."""

from __future__ import annotations

import socket
import struct
from typing import Any

import pytest

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.apis.registry import APIS, INTER_BROKER_APIS, advertised
from leader_election_cli.sandbox.apis.unmodelled import request_class, response_class
from leader_election_cli.sandbox.versions import VERSIONS

SCALARS = {"string": "t", "bool": False, "bytes": b"", "float64": 0.0, "uuid": None}
CASES = [(name, mode) for name, release in VERSIONS.items() for mode in release.api_versions]
# what docs/SANDBOX_APIS.md lists as closed: keys kafka-python has no classes for, and zk's inter-broker APIs
CLOSED = {4, 5, 6, 7, 38, 39, 40, 41, 56, 58, 64, 67, 68, 69, 76, 77, 78, 79, 80, 81, 83, 84, 85, 86, 87, 90, 91, 92}


def sample(fields: dict[str, Any]) -> dict[str, Any]:
    """A request level with one entry in every array and a plain value in every field."""
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
    """Every error code of a decoded response, at every level the version has."""
    if isinstance(value, list):
        return [c for item in value for c in error_codes(item, version)]
    fields = {n: f for n, f in (getattr(value, "fields", None) or {}).items() if f.for_version_q(version)}
    codes = [getattr(value, name) for name in fields if name.endswith("error_code")]
    return codes + [c for name in fields for c in error_codes(getattr(value, name, None), version)]


@pytest.mark.parametrize(("release", "mode"), CASES)
def test_every_advertised_key_answers_in_its_own_schema(release: str, mode: str) -> None:
    with Sandbox(3, mode, kafka_version=release) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        versions = advertised(sb._server.settings, sb.cluster.mode)
        closed, answered = set(), set()
        for key, (low, high) in sorted(versions.items()):
            ask, answer = request_class(key), response_class(key)
            for version in sorted({low, high}):
                if ask is None or key in INTER_BROKER_APIS:
                    closed.add(key)
                    continue
                request = ask[version](**sample(ask.fields))
                if key == 0:
                    request.acks = -1  # an acks=0 Produce is never answered
                request.with_header(correlation_id=7, client_id="every-api")
                payload = exchange(sb.brokers[1], request.encode(version=version, header=True, framed=True))
                assert payload is not None, f"key {key} v{version}: connection closed"
                response = answer.decode(payload, version=version, header=True)
                assert response.version == version
                if key not in APIS:
                    codes = error_codes(response, version)
                    assert codes and set(codes) == {35}, f"key {key} v{version}: {response}"
                answered.add(key)
        assert closed <= CLOSED
        assert answered | closed == set(versions)


def test_a_mirrored_answer_has_one_entry_per_requested_resource(sandbox_factory: Any) -> None:
    """DeleteTopics, which the sandbox does not model: each topic named gets its own UNSUPPORTED_VERSION."""
    sb = sandbox_factory()
    ask, answer = request_class(20), response_class(20)
    request = ask[6](topics=[ask.DeleteTopicState(name=n, topic_id=None) for n in ("a", "b", "c")], timeout_ms=1000)
    request.with_header(correlation_id=7, client_id="every-api")
    payload = exchange(sb.brokers[1], request.encode(version=6, header=True, framed=True))
    response = answer.decode(payload, version=6, header=True)
    assert [(r.name, r.error_code) for r in response.responses] == [("a", 35), ("b", 35), ("c", 35)]
