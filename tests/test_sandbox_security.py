"""SASL (PLAIN, SCRAM-SHA-256/512), TLS and the ALTER-on-CLUSTER ACL, through kafka-python's admin client."""

from __future__ import annotations

import socket
import struct

import pytest
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaError
from kafka.protocol.metadata import MetadataRequest

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.security import AuthenticationFailed, SaslExchange

USERS = {"admin": "admin-secret", "bob": "bob-secret"}
PREFERRED = 0


def admin_for(sb: Sandbox, user: str | None = None, password: str | None = None,
              mechanism: str = "PLAIN", **config: object) -> KafkaAdminClient:
    if user is not None:
        config.update(sasl_mechanism=mechanism, sasl_plain_username=user, sasl_plain_password=password)
    if sb.ca_file:
        config.update(ssl_cafile=sb.ca_file)
    config.setdefault("bootstrap_timeout_ms", 5000)
    return KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, security_protocol=sb.security_protocol,
                            request_timeout_ms=5000, **config)


def codes(response: object) -> set[int]:
    return {p.error_code for r in response.replica_election_results for p in r.partition_result}


@pytest.fixture(scope="module", params=["kraft", "zk"])
def secured(request: pytest.FixtureRequest):
    with Sandbox(brokers=2, mode=request.param, sasl_users=USERS, cluster_alter={"admin"}) as sb:
        sb.create_topic("t", assignment={0: [1, 2], 1: [2, 1]})
        yield sb


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_sasl_users_authenticate_and_the_acl_decides(secured: Sandbox, mechanism: str) -> None:
    secured.set_leader("t", 0, 2)
    with admin_for(secured, "bob", "bob-secret", mechanism) as bob:
        assert [b["broker_id"] for b in bob.describe_cluster()["brokers"]] == [1, 2]
        denied = bob.elect_leaders(PREFERRED, {"t": [0]}, raise_errors=False)
        assert denied.error_code == 31 and codes(denied) == {31}
    assert secured.partition_state("t", 0).leader == 2
    with admin_for(secured, "admin", "admin-secret", mechanism) as admin:
        allowed = admin.elect_leaders(PREFERRED, {"t": [0]}, raise_errors=False)
        assert allowed.error_code == 0 and codes(allowed) == {0}
    assert secured.partition_state("t", 0).leader == 1


@pytest.fixture(scope="module")
def kraft_secured():
    with Sandbox(brokers=1, sasl_users=USERS) as sb:
        yield sb


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_wrong_password_fails_authentication(kraft_secured: Sandbox, mechanism: str,
                                             caplog: pytest.LogCaptureFixture) -> None:
    with pytest.raises(KafkaError):
        admin_for(kraft_secured, "admin", "wrong", mechanism, bootstrap_timeout_ms=1000).close()
    assert any("Authentication failed" in r.getMessage() for r in caplog.records)


def test_unknown_user_fails(kraft_secured: Sandbox) -> None:
    with pytest.raises(KafkaError):
        admin_for(kraft_secured, "mallory", "x", "SCRAM-SHA-256", bootstrap_timeout_ms=1000).close()


def test_requests_before_authentication_close_the_connection(secured: Sandbox) -> None:
    request = MetadataRequest(version=1, topics=[])
    request.with_header(correlation_id=1, client_id="x")
    with socket.create_connection(secured.brokers[1], timeout=5) as sock:
        sock.sendall(request.encode(version=1, header=True, framed=True))
        assert sock.recv(10) == b""


def test_sasl_handshake_v0_raw_tokens(secured: Sandbox) -> None:
    from kafka.protocol.sasl import SaslHandshakeRequest, SaslHandshakeResponse
    handshake = SaslHandshakeRequest(version=0, mechanism="PLAIN")
    handshake.with_header(correlation_id=1, client_id="x")
    with socket.create_connection(secured.brokers[1], timeout=5) as sock:
        sock.sendall(handshake.encode(version=0, header=True, framed=True))
        size = struct.unpack(">i", sock.recv(4))[0]
        response = SaslHandshakeResponse.decode(sock.recv(size), version=0, header=True)
        assert response.error_code == 0 and "PLAIN" in response.mechanisms
        token = b"\x00admin\x00admin-secret"
        sock.sendall(struct.pack(">i", len(token)) + token)
        assert sock.recv(4) == struct.pack(">i", 0)  # empty server token: authenticated
        request = MetadataRequest(version=1, topics=[])
        request.with_header(correlation_id=2, client_id="x")
        sock.sendall(request.encode(version=1, header=True, framed=True))
        assert struct.unpack(">i", sock.recv(4))[0] > 0


def test_mechanism_subset() -> None:
    with Sandbox(brokers=1, sasl_users=USERS, sasl_mechanisms=("SCRAM-SHA-512",)) as sb:
        with pytest.raises(KafkaError):
            admin_for(sb, "admin", "admin-secret", "PLAIN", bootstrap_timeout_ms=1000).close()
        with admin_for(sb, "admin", "admin-secret", "SCRAM-SHA-512") as admin:
            assert admin.describe_cluster()["controller_id"] == 1


def test_tls_listener_with_generated_ca() -> None:
    with Sandbox(brokers=2, tls=True) as sb:
        assert sb.security_protocol == "SSL" and sb.ca_file
        sb.create_topic("t", assignment={0: [1, 2]})
        with admin_for(sb) as admin:
            assert admin.describe_topics(["t"])[0]["partitions"][0]["leader_id"] == 1


def test_sasl_over_tls() -> None:
    with Sandbox(brokers=1, mode="zk", tls=True, sasl_users=USERS, cluster_alter={"admin"}) as sb:
        assert sb.security_protocol == "SASL_SSL"
        sb.create_topic("t", assignment={0: [1]})
        with admin_for(sb, "admin", "admin-secret", "SCRAM-SHA-256") as admin:
            response = admin.elect_leaders(PREFERRED, {"t": [0]}, raise_errors=False)
            assert codes(response) == {84}


@pytest.mark.parametrize("token, message", [
    (b"\x00admin", "Invalid SASL/PLAIN response: expected 3 tokens, got 2"),
    (b"\x00admin\x00admin-secret\x00x\x00y", "Invalid SASL/PLAIN response: expected 3 tokens, got 4"),
    (b"\x00\x00admin-secret", "Authentication failed: username not specified"),
    (b"\x00admin\x00", "Authentication failed: password not specified"),
    (b"\x00admin\x00wrong", "Authentication failed: Invalid username or password"),
    (b"bob\x00admin\x00admin-secret",
     "Authentication failed: Client requested an authorization id that is different from username"),
])
def test_plain_refusals_carry_kafkas_messages(token: bytes, message: str) -> None:
    """PlainSaslServer.evaluateResponse: its checks in its order."""
    with pytest.raises(AuthenticationFailed) as refused:
        SaslExchange("PLAIN", USERS, raw=False).step(token)
    assert str(refused.value) == message


@pytest.mark.parametrize("first, message", [
    ("y,,n=admin,r=abc", "Authentication failed during authentication due to invalid credentials with SASL "
                         "mechanism SCRAM-SHA-256"),  # no channel binding in Kafka's ClientFirstMessage
    ("n,a=bob,n=admin,r=abc",
     "Authentication failed: Client requested an authorization id that is different from username"),
])
def test_scram_client_first_refusals(first: str, message: str) -> None:
    with pytest.raises(AuthenticationFailed) as refused:
        SaslExchange("SCRAM-SHA-256", USERS, raw=False).step(first.encode())
    assert str(refused.value) == message
    assert SaslExchange("SCRAM-SHA-256", USERS, raw=False).step(b"n,a=admin,n=admin,r=abc").startswith(b"r=abc")
