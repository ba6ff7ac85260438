"""`cluster.socket_client`, our own transport: ApiVersions' fallback against the sandbox, and answers no
broker should send (another request's, too large, cut short, none at all) from a scripted one on
127.0.0.1, each one line with exit 3 and the connection closed."""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import struct
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import security_fixtures
from kafka.protocol.metadata import ApiVersionsResponse, MetadataResponse

from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.cluster.socket_client import MAX_FRAME_BYTES
from leader_election_cli.config.settings import ClientSettings, load_client_settings
from leader_election_cli.errors import TimedOutError, UnreachableError
from leader_election_cli.sandbox import Sandbox

API_VERSIONS = 18
Reply = Callable[[int, int, int], bytes]  # (api key, version, correlation id) -> the bytes sent back


def test_api_versions_falls_back_to_the_version_the_broker_names() -> None:
    with Sandbox(brokers=1) as sb:
        sb.set_max_version(API_VERSIONS, 2)
        with ClusterConnection.connect(sb.bootstrap_servers, ClientSettings(api_timeout_ms=5000)) as cluster:
            assert cluster.max_version(API_VERSIONS) == 2
            assert cluster.finalized_features() == {}  # v3+ only
            cluster.describe()
        asked = [r.api_version for r in sb.request_log if r.api_key == API_VERSIONS]
        assert asked == [4, 2]


def test_finalized_features_come_with_the_connection() -> None:
    """ApiVersions v3+ carries them: no second ApiVersions request (the request plan)."""
    with Sandbox(brokers=1) as sb:
        with ClusterConnection.connect(sb.bootstrap_servers, ClientSettings(api_timeout_ms=5000)) as cluster:
            assert cluster.finalized_features()["metadata.version"] > 0
        assert [r.api_key for r in sb.request_log] == [API_VERSIONS]


def frame(correlation_id: int, body: bytes) -> bytes:
    return struct.pack(">ii", len(body) + 4, correlation_id) + body


def api_versions_answer(correlation_id: int) -> bytes:
    R = ApiVersionsResponse
    body = R(error_code=0, api_keys=[R.ApiVersion(api_key=k, min_version=0, max_version=v)
                                     for k, v in ((3, 12), (18, 3), (43, 2))], throttle_time_ms=0)
    return frame(correlation_id, bytes(body.encode(version=3)))


@pytest.fixture
def scripted() -> Iterator[Callable[[Reply], str]]:
    """A one-connection broker on 127.0.0.1 that answers ApiVersions, then the next request with `reply`
    and closes the connection (an empty reply: no answer, the connection kept open)."""
    threads: list[threading.Thread] = []
    listeners: list[socket.socket] = []

    def start(reply: Reply) -> str:
        listener = socket.create_server(("127.0.0.1", 0))
        listener.settimeout(10)
        listeners.append(listener)

        def serve() -> None:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(10)
                for _ in range(10):  # bounded: a test makes a few requests
                    head = conn.recv(4, socket.MSG_WAITALL)
                    if len(head) < 4:
                        return
                    request = conn.recv(struct.unpack(">i", head)[0], socket.MSG_WAITALL)
                    api_key, version, correlation_id = struct.unpack_from(">hhi", request)
                    if api_key == API_VERSIONS:
                        conn.sendall(api_versions_answer(correlation_id))
                        continue
                    out = reply(api_key, version, correlation_id)
                    if out:
                        conn.sendall(out)  # then closes
                    else:
                        conn.recv(1)  # no answer: wait until the client gives up
                    return

        thread = threading.Thread(target=serve, daemon=True)
        thread.start()
        threads.append(thread)
        return f"127.0.0.1:{listener.getsockname()[1]}"

    yield start
    for listener in listeners:
        listener.close()
    for thread in threads:
        thread.join(timeout=10)


@pytest.mark.parametrize("reply, line", [
    (lambda key, version, cid: frame(cid + 1, b"\x00" * 8),
     "Unexpected failure while reading cluster metadata: MalformedAnswer: the answer to request"),
    (lambda key, version, cid: struct.pack(">i", MAX_FRAME_BYTES + 1),
     f"Unexpected failure while reading cluster metadata: MalformedAnswer: an answer of {MAX_FRAME_BYTES + 1} bytes"),
    (lambda key, version, cid: frame(cid, b"\x00\x00\x00\x00\x02"),
     "Unexpected failure while reading cluster metadata: MalformedAnswer: "),
    (lambda key, version, cid: frame(cid, b"")[:6],
     "Lost the connection while reading cluster metadata: KafkaConnectionError"),
])
def test_an_answer_that_does_not_fit_is_one_line(scripted: Callable[[Reply], str], reply: Reply, line: str) -> None:
    with ClusterConnection.connect(scripted(reply), ClientSettings(api_timeout_ms=5000)) as cluster, \
            pytest.raises(UnreachableError) as failure:
        cluster.describe()
    assert str(failure.value).startswith(line) and "\n" not in str(failure.value)
    assert failure.value.exit_code == 3


def test_no_answer_is_a_timeout_within_the_request_timeout(scripted: Callable[[Reply], str]) -> None:
    settings = ClientSettings(api_timeout_ms=5000, request_timeout_ms=300)
    with ClusterConnection.connect(scripted(lambda *_: b""), settings) as cluster, \
            pytest.raises(TimedOutError, match="^Timed out while reading cluster metadata$"):
        cluster.describe()


def test_a_client_certificate_refused_after_the_handshake_is_a_tls_failure_at_once(tmp_path: Path) -> None:
    """Under TLS 1.3 a broker that requires client certificates (ssl.client.auth=required) refuses a client
    without one after the client's side of the handshake is done, with a certificate_required alert: as
    Kafka's Java client does, the run ends at once with the TLS line (not as unreachable after the timeout)."""
    pki = security_fixtures.make_pki(tmp_path)
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(pki.server_cert, pki.server_key)
    server.load_verify_locations(pki.ca_pem)
    server.verify_mode = ssl.CERT_REQUIRED
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)

    def serve() -> None:  # one connection, refused in the handshake: the server's side sends the alert
        with contextlib.suppress(OSError), listener.accept()[0] as conn, \
                server.wrap_socket(conn, server_side=True, do_handshake_on_connect=False) as tls:
            try:
                tls.do_handshake()
            except ssl.SSLError:  # then closes once the client has (Kafka delays its close by connection.failed.
                # authentication.delay.ms): a close with the client's request unread resets the connection, and
                # the reset can overtake the alert on a client that has not read it yet
                with socket.socket(fileno=os.dup(tls.fileno())) as raw:
                    raw.settimeout(30)
                    for _ in range(1000):  # bounded: reads what the client sent, until its close
                        if not raw.recv(65536):
                            break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    config = tmp_path / "client.properties"
    # an API timeout far above the bound below: the run ends at the alert, not when the timeout passes
    config.write_text(pki.config("ssl.truststore.type=PEM", f"ssl.truststore.location={pki.ca_pem}",
                                 "default.api.timeout.ms=120000"))
    bootstrap = f"127.0.0.1:{listener.getsockname()[1]}"
    started = time.monotonic()
    with pytest.raises(UnreachableError) as failure:
        ClusterConnection.connect(bootstrap, load_client_settings(str(config)))
    thread.join(timeout=30)
    listener.close()
    assert str(failure.value).startswith(
        f"TLS handshake with {bootstrap} failed: [SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED]")
    assert time.monotonic() - started < 60  # not the API timeout


def test_a_throttled_client_waits_before_its_next_request() -> None:
    """A broker that answers with throttle_time_ms expects no request on that connection until it has
    passed (KIP-219, as kafka-python and Kafka's clients wait): the next one is sent after it."""
    R = MetadataResponse
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(10)
    answered_at: list[float] = []
    asked_at: list[float] = []

    def serve() -> None:
        with contextlib.suppress(OSError), listener.accept()[0] as conn:
            conn.settimeout(10)
            for _ in range(3):  # ApiVersions, then two Metadata requests
                size = struct.unpack(">i", conn.recv(4, socket.MSG_WAITALL))[0]
                request = conn.recv(size, socket.MSG_WAITALL)
                asked_at.append(time.monotonic())
                api_key, version, correlation_id = struct.unpack_from(">hhi", request)
                if api_key == API_VERSIONS:
                    conn.sendall(api_versions_answer(correlation_id))
                    continue
                body = R(throttle_time_ms=300, brokers=[], cluster_id="c", controller_id=1, topics=[])
                answered_at.append(time.monotonic())  # before the answer leaves: the client's wait starts later
                conn.sendall(frame(correlation_id, b"\x00" + bytes(body.encode(version=version))))  # header v1

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    with ClusterConnection.connect(f"127.0.0.1:{listener.getsockname()[1]}",
                                   ClientSettings(api_timeout_ms=5000)) as cluster:
        assert cluster.cluster_id() == "c" and cluster.cluster_id() == "c"
    thread.join(timeout=10)
    listener.close()
    assert asked_at[2] - answered_at[0] >= 0.3


def metadata_answer(correlation_id: int, version: int) -> bytes:
    R = MetadataResponse
    partition = R.MetadataResponseTopic.MetadataResponsePartition(
        error_code=0, partition_index=0, leader_id=1, leader_epoch=0, replica_nodes=[1], isr_nodes=[1],
        offline_replicas=[])
    topic = R.MetadataResponseTopic(error_code=0, name="t", topic_id=None, is_internal=False, partitions=[partition],
                                    authorized_operations=None)
    body = R(throttle_time_ms=0, brokers=[R.MetadataResponseBroker(node_id=1, host="127.0.0.1", port=1, rack=None)],
             cluster_id="c", controller_id=1, topics=[topic])
    return frame(correlation_id, b"\x00" + bytes(body.encode(version=version)))  # response header v1


def test_a_request_the_broker_does_not_speak_is_not_sent(scripted: Callable[[Reply], str]) -> None:
    """DescribeConfigs missing from ApiVersions: kafka-python's line, exit 3, nothing sent."""
    bootstrap = scripted(lambda key, version, cid: metadata_answer(cid, version))
    with ClusterConnection.connect(bootstrap, ClientSettings(api_timeout_ms=5000)) as cluster, \
            pytest.raises(UnreachableError) as failure:
        cluster.describe(with_configs=True)
    assert str(failure.value) == ("Incompatible broker while reading topic configs: Kafka broker does not support "
                                  "the 'DescribeConfigsRequest' Kafka protocol.")


def test_a_tls_failure_with_a_broker_reached_later_is_the_tls_line_naming_it(
        sandbox_factory: Callable[..., Sandbox], monkeypatch: pytest.MonkeyPatch) -> None:
    """After the bootstrap, a broker's handshake failure (here: the bootstrap connection reopened) is the
    same one line, with the same hint, as at the bootstrap, naming the broker asked."""
    from leader_election_cli.cluster import socket_client

    sb = sandbox_factory(1)
    with ClusterConnection.connect(sb.bootstrap_servers, ClientSettings(api_timeout_ms=5000)) as cluster:
        cluster.cluster_id()
        cluster._transport._bootstrap.close()  # lost: the next request opens a connection again

        def refuse(host: str, port: int, *_: object) -> socket.socket:
            raise socket_client.HandshakeFailed("[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed",
                                                f"{host}:{port}")

        monkeypatch.setattr(socket_client, "_open", refuse)
        with pytest.raises(UnreachableError) as failure:
            cluster.cluster_id()
    assert failure.value.message == (f"TLS handshake with {sb.bootstrap_servers} failed: "
                                     "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed")
    assert failure.value.hint.startswith("Check ssl.truststore.*")


@pytest.mark.parametrize("closing", [ssl.SSLEOFError(8, "[SSL: UNEXPECTED_EOF_WHILE_READING]"),
                                     ssl.SSLZeroReturnError(6, "TLS/SSL connection has been closed (EOF)"),
                                     ConnectionResetError(104, "Connection reset by peer")],
                         ids=["openssl-3-eof", "debian-python-close", "reset"])
def test_a_handshake_the_peer_closes_is_told_apart_from_a_refused_certificate(closing: OSError) -> None:
    """Debian's Python 3.11 reports a plaintext listener's close as SSLZeroReturnError, not SSLEOFError: it
    was taken for a certificate problem (a truststore hint) on a fresh Debian machine."""
    from leader_election_cli.cluster import socket_client

    class Closing:
        def wrap_socket(self, sock: socket.socket, server_hostname: str) -> socket.socket:
            raise closing

    with socket.create_server(("127.0.0.1", 0)) as listener:
        port = listener.getsockname()[1]
        with pytest.raises(socket_client.HandshakeFailed) as failed:
            socket_client._open("127.0.0.1", port, Closing(), time.monotonic() + 10)  # type: ignore[arg-type]
    assert failed.value.closed
