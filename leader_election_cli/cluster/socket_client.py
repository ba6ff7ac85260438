"""Our own small Kafka client transport: one blocking socket per broker, PLAINTEXT or TLS.

It carries every request of a PLAINTEXT or SSL connection (SASL's stay with kafka-python,
`kafka_python_client.py`): the election's own requests are encoded by `wire_codec`, any other by
kafka-python's classes, imported only then. A connection sends ApiVersions once as it opens (v4, then
the version the broker names when it answers UNSUPPORTED_VERSION, as kafka-python does) and versions
every request by its answer. Every wait (connect, TLS handshake, send, answer) is bounded by the time
the caller gives; a request that times out closes its connection (its late answer would be another's).
Failures come out as `LeaderElectionError`s with the same lines as kafka-python's translated ones.
"""

from __future__ import annotations

import random
import socket
import struct
import time
from typing import TYPE_CHECKING, Any

from leader_election_cli import kafka_errors
from leader_election_cli.cluster.metadata_wire import MetadataRead
from leader_election_cli.cluster.transport import (
    CLIENT_ID,
    SOFTWARE,
    BootstrapAttempts,
    NotKafka,
    failure,
    host_and_port,
    lookup_name,
    not_tls,
    strange_frame,
    tls_failure,
)
from leader_election_cli.cluster.wire_codec import (
    ApiVersionsAnswer,
    Call,
    request_header,
    response_header_size,
)
from leader_election_cli.errors import LeaderElectionError
from leader_election_cli.log import Logger

if TYPE_CHECKING:
    import ssl

log = Logger(__name__)

MAX_FRAME_BYTES = 100_000_000  # a Metadata answer about a million partitions is tens of megabytes
_API_VERSIONS_ATTEMPTS = 3  # v4, then the version the broker names, then v0
_BACKOFF_MS, _BACKOFF_MAX_MS = 50, 1000  # kafka-python's reconnect backoff, as configured before
_SIZE = struct.Struct(">i")


class ConnectionLost(ConnectionError):
    """The broker closed the connection, or it could not be opened."""


class HandshakeFailed(ConnectionError):
    """The TLS handshake with `address` (HOST:PORT) failed: the text is the TLS library's reason; `closed`:
    the server closed the connection in the middle of it (as a listener without TLS does)."""

    def __init__(self, reason: str, address: str, closed: bool = False):
        super().__init__(reason)
        self.address = address
        self.closed = closed


class AnswerTimedOut(TimeoutError):
    """No answer (or no connection) within the time given."""


class IncompatibleBroker(Exception):
    """No version of a request is spoken by both this client and the broker."""


class MalformedAnswer(Exception):
    """An answer that does not fit its request (wrong correlation id, too large, cut short)."""


def translate(exc: BaseException, what: str) -> LeaderElectionError:
    """A transport failure as the one-line error kafka-python's was translated to (`cluster/admin.py`)."""
    if isinstance(exc, LeaderElectionError):
        return exc
    if isinstance(exc, TimeoutError):  # ours, or the socket's
        return failure("timed out", what)
    if isinstance(exc, IncompatibleBroker):
        return failure("incompatible", what, str(exc))
    if isinstance(exc, (ConnectionError, OSError)):
        return failure("lost", what, "KafkaConnectionError")
    return failure("unexpected", what, f"{type(exc).__name__}: {exc}")


class BrokerConnection:
    """One open connection to one broker, its ApiVersions answer read."""

    def __init__(self, host: str, port: int, ssl_context: ssl.SSLContext | None, client_id: str,
                 deadline: float):
        self.host, self.port = host, port
        self._client_id = client_id
        self._correlation_id = 0
        self._throttled_until = 0.0  # a broker that throttles a client expects no request before then (KIP-219)
        self.closed = False
        self._sock = _open(host, port, ssl_context, deadline)
        try:
            self.versions = self._api_versions(deadline)
        except MalformedAnswer as exc:  # the first answer: not a broker's
            self.close()
            raise exc.__cause__ if isinstance(exc.__cause__, NotKafka) else NotKafka(
                f"answered, but not in Kafka's protocol ({exc})") from exc
        except OSError as exc:
            self.close()
            if type(exc).__module__ == "ssl":  # an alert after the handshake: under TLS 1.3 the broker refuses
                # the client's certificate (or its lack) only now
                raise HandshakeFailed(str(exc), f"{host}:{port}") from exc
            raise
        except BaseException:
            self.close()
            raise

    def __repr__(self) -> str:
        return f"<BrokerConnection {self.host}:{self.port}>"

    @property
    def api_versions(self) -> dict[int, tuple[int, int]]:
        return self.versions.api_versions

    def _api_versions(self, deadline: float) -> ApiVersionsAnswer:
        version = SOFTWARE.max_version
        for _ in range(_API_VERSIONS_ATTEMPTS):
            answer: ApiVersionsAnswer = self.request(SOFTWARE, version, deadline)
            if answer.error_code != kafka_errors.UNSUPPORTED_VERSION:
                break
            version = min(version - 1, answer.api_versions.get(SOFTWARE.api_key, (0, 0))[1])
            version = max(version, 0)
        if answer.error_code != kafka_errors.NONE:
            raise ConnectionLost(f"ApiVersions answered {kafka_errors.describe(answer.error_code)}")
        return answer

    def version_for(self, call: Call) -> int:
        """The highest version of `call` both sides speak, as kafka-python picks it."""
        name = call.name
        versions = self.api_versions.get(call.api_key)
        if versions is None:
            raise IncompatibleBroker(f"Kafka broker does not support the '{name}' Kafka protocol.")
        low, high = versions
        if call.min_version > high or call.max_version < low:
            raise IncompatibleBroker(f"No version of the '{name}' Kafka protocol is supported by both the client "
                                     f"[{call.min_version}-{call.max_version}] and broker [{low}-{high}].")
        return min(call.max_version, high)

    def request(self, call: Call, version: int, deadline: float) -> Any:
        """Send `call` in `version` and wait for its answer until `deadline` (time.monotonic())."""
        if self.closed:
            raise ConnectionLost("closed")
        self._correlation_id = correlation_id = (self._correlation_id + 1) & 0x7FFFFFFF
        flexible = call.flexible(version)
        frame = request_header(call.api_key, version, correlation_id, self._client_id, flexible) + call.encode(version)
        try:
            self._wait_out_throttle(deadline)
            log.debug("%s Request %d: %s v%d", self, correlation_id, call, version)
            started = time.monotonic()
            self._settimeout(deadline)
            self._sock.sendall(_SIZE.pack(len(frame)) + frame)
            head = self._read(4, deadline)
            size = _SIZE.unpack(head)[0]
            if not 0 <= size <= MAX_FRAME_BYTES:
                raise MalformedAnswer(f"an answer of {size} bytes (at most {MAX_FRAME_BYTES} are read)") \
                    from strange_frame(bytes(head), size)
            body = memoryview(self._read(size, deadline))
            answered_id, header_size = response_header_size(body, call.api_key, flexible)
            if answered_id != correlation_id:
                raise MalformedAnswer(f"the answer to request {answered_id} came for request {correlation_id}")
            answer = call.decode(body[header_size:], version)
        except ValueError as exc:  # cut short or malformed: this connection's stream can no longer be trusted
            self.close()
            raise MalformedAnswer(str(exc)) from exc
        except BaseException:
            self.close()
            raise
        log.debug("%s Response %d (%.0f ms): %s", self, correlation_id, (time.monotonic() - started) * 1000, answer)
        throttle_ms = getattr(answer, "throttle_time_ms", 0) or 0
        if throttle_ms > 0:
            log.warning("%s: %s throttled by the broker (%d ms)", self, type(answer).__name__, throttle_ms)
            self._throttled_until = time.monotonic() + throttle_ms / 1000
        return answer

    def _wait_out_throttle(self, deadline: float) -> None:
        wait = self._throttled_until - time.monotonic()
        if wait > 0:
            if time.monotonic() + wait >= deadline:
                raise AnswerTimedOut()
            time.sleep(wait)

    def _settimeout(self, deadline: float) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise AnswerTimedOut()
        self._sock.settimeout(left)

    def _read(self, size: int, deadline: float) -> bytearray:
        data = bytearray(size)
        view, got = memoryview(data), 0
        while got < size:
            self._settimeout(deadline)
            try:
                n = self._sock.recv_into(view[got:], size - got)
            except TimeoutError as exc:  # socket.timeout; the SSL socket raises it as well
                raise AnswerTimedOut() from exc
            if n == 0:
                raise ConnectionLost("closed by the broker")
            got += n
        return data

    def close(self) -> None:
        if not self.closed:
            self.closed = True
            self._sock.close()


def _open(host: str, port: int, ssl_context: ssl.SSLContext | None, deadline: float) -> socket.socket:
    left = deadline - time.monotonic()
    if left <= 0:
        raise AnswerTimedOut()
    try:
        sock = socket.create_connection((lookup_name(host), port), timeout=left)
    except TimeoutError as exc:
        raise AnswerTimedOut() from exc
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    if ssl_context is None:
        return sock
    try:
        sock.settimeout(max(0.001, deadline - time.monotonic()))
        return ssl_context.wrap_socket(sock, server_hostname=host.rstrip("."))
    except TimeoutError as exc:
        sock.close()
        raise AnswerTimedOut() from exc
    except OSError as exc:  # kafka-python: any failure of the handshake ends the bootstrap at once
        import ssl  # (loaded already: `ssl_context` is one)

        sock.close()
        # the peer closed the handshake: OpenSSL says UNEXPECTED_EOF_WHILE_READING (an SSLEOFError) or, as
        # Debian's Python 3.11 reports a close, "TLS/SSL connection has been closed (EOF)" (SSLZeroReturnError)
        closed = isinstance(exc, (ConnectionResetError, ssl.SSLEOFError, ssl.SSLZeroReturnError))
        raise HandshakeFailed(str(exc), f"{host}:{port}", closed) from exc


def answers_without_tls(host: str, port: int, client_id: str, deadline: float) -> bool:
    """Whether HOST:PORT answers Kafka's ApiVersions in plain text (a PLAINTEXT or SASL_PLAINTEXT
    listener), within `deadline`: asked once a TLS handshake with it was closed halfway."""
    try:
        BrokerConnection(host, port, None, client_id, deadline).close()
    except Exception:
        return False
    return True


class SocketTransport:
    """The connections of one run: the bootstrap one, and one per other broker asked by its id."""

    def __init__(self, bootstrap: BrokerConnection, ssl_context: ssl.SSLContext | None, client_id: str):
        self._bootstrap: BrokerConnection | None = bootstrap
        self._bootstrap_address = (bootstrap.host, bootstrap.port)
        self._bootstrap_broker: int | None = None
        self._ssl_context = ssl_context
        self._client_id = client_id
        self._versions = bootstrap.versions  # the bootstrap broker's: every request is versioned by them
        self._brokers: dict[int, tuple[str, int]] = {}
        self._conns: dict[int, BrokerConnection] = {}
        self._failures: dict[int, tuple[int, float]] = {}  # broker -> (failures in a row, retry not before)

    @classmethod
    def connect(cls, addresses: list[str], ssl_context: ssl.SSLContext | None, client_id: str | None,
                timeout_ms: int, request_timeout_ms: int, bootstrap_servers: str = "") -> SocketTransport:
        """One bootstrap connection, the servers tried in random order with backoff within `timeout_ms`.
        A failed TLS handshake ends it at once (`HandshakeFailed`; a TimedOutError when the server speaks
        Kafka without TLS); so does every server having refused or answered in another protocol
        (`BootstrapAttempts`); otherwise no server answering within `timeout_ms` is a TimedOutError."""
        client_id = client_id or CLIENT_ID
        deadline = time.monotonic() + timeout_ms / 1000
        attempts = BootstrapAttempts(addresses)
        backoff: dict[str, tuple[int, float]] = {}
        while time.monotonic() < deadline and not attempts.settled():
            address = random.choice([a for a in addresses if not attempts.given_up(a)])
            count, not_before = backoff.get(address, (0, 0.0))
            wait = not_before - time.monotonic()
            if wait > 0:
                time.sleep(min(wait, max(0.0, deadline - time.monotonic())))
                continue
            parsed = host_and_port(address)
            assert parsed is not None  # bootstrap_addresses checked every address
            host, port = parsed
            try:
                conn = BrokerConnection(host, port, ssl_context, client_id,
                                        min(deadline, time.monotonic() + request_timeout_ms / 1000))
            except HandshakeFailed as exc:
                if exc.closed and answers_without_tls(host, port, client_id, deadline):
                    raise not_tls(exc.address) from exc
                raise
            except (OSError, AnswerTimedOut, MalformedAnswer, NotKafka) as exc:
                backoff[address] = (count + 1, time.monotonic() + _backoff_s(count))
                attempts.failed(address, *_cause(exc))
                log.warning("Bootstrap connection to %s:%s failed: %s", host, port, str(exc) or type(exc).__name__)
                continue
            return cls(conn, ssl_context, client_id)
        raise attempts.error(bootstrap_servers or ",".join(addresses), timeout_ms)

    # -- what the layers above ask -----------------------------------------------------------------

    def api_versions(self) -> dict[int, tuple[int, int]]:
        return dict(self._versions.api_versions)

    def finalized_features(self, timeout_ms: int) -> dict[str, int]:
        """The bootstrap broker's finalized features, from its ApiVersions answer (v3+): no request."""
        return dict(self._versions.finalized_features)

    def learn_brokers(self, read: MetadataRead) -> None:
        """The brokers' addresses (to reach one by its id), and which one the bootstrap connection reached."""
        self._brokers = {b.node_id: (b.host, b.port) for b in read.brokers}
        for broker in read.brokers:
            if (broker.host, broker.port) == self._bootstrap_address:
                self._bootstrap_broker = broker.node_id

    def send(self, call: Call, node_id: int | None, what: str, timeout_ms: int) -> Any:
        deadline = time.monotonic() + timeout_ms / 1000
        try:
            conn = self._route(node_id, deadline)
            return conn.request(call, conn.version_for(call), deadline)
        except HandshakeFailed as exc:
            raise tls_failure(exc.address, str(exc)) from exc  # a broker reached after the bootstrap
        except Exception as exc:
            raise translate(exc, what) from exc

    def close(self) -> None:
        for conn in [self._bootstrap, *self._conns.values()]:
            if conn is not None:
                conn.close()
        self._conns.clear()

    # -- routing -----------------------------------------------------------------------------------

    def _route(self, node_id: int | None, deadline: float) -> BrokerConnection:
        """The bootstrap connection while it is open, for any broker (`None`) or for the broker it turned
        out to be; else an open connection to the broker asked for (any, for `None`), opened if need be."""
        if self._bootstrap is not None and self._bootstrap.closed:  # lost: forget it
            self._bootstrap = None
        if self._bootstrap is not None and (node_id is None or node_id == self._bootstrap_broker):
            return self._bootstrap
        for broker, conn in list(self._conns.items()):
            if conn.closed:
                del self._conns[broker]
        if node_id is None:
            if self._conns:
                return next(iter(self._conns.values()))
            if not self._brokers:  # nothing else known: the bootstrap server again
                return self._reopen_bootstrap(deadline)
            node_id = self._pick(deadline)
        conn = self._conns.get(node_id)
        if conn is None:
            conn = self._conns[node_id] = self._open(node_id, deadline)
        return conn

    def _reopen_bootstrap(self, deadline: float) -> BrokerConnection:
        host, port = self._bootstrap_address
        self._bootstrap = BrokerConnection(host, port, self._ssl_context, self._client_id, deadline)
        return self._bootstrap

    def _pick(self, deadline: float) -> int:
        """A broker to ask anything (after the bootstrap connection was lost): at random among those not
        waiting out a backoff, else the one whose backoff ends first (waited for, within the deadline)."""
        now = time.monotonic()
        ready = [b for b in self._brokers if self._failures.get(b, (0, 0.0))[1] <= now]
        if ready:
            return random.choice(ready)
        broker = min(self._brokers, key=lambda b: self._failures[b][1])
        wait = self._failures[broker][1] - now
        if now + wait >= deadline:
            raise AnswerTimedOut()
        time.sleep(wait)
        return broker

    def _open(self, broker: int, deadline: float) -> BrokerConnection:
        address = self._brokers.get(broker)
        if address is None:
            raise ConnectionLost(f"broker {broker} is not in the cluster's metadata")
        try:
            conn = BrokerConnection(*address, self._ssl_context, self._client_id, deadline)
        except BaseException:
            count = self._failures.get(broker, (0, 0.0))[0]
            self._failures[broker] = (count + 1, time.monotonic() + _backoff_s(count))
            raise
        self._failures.pop(broker, None)
        return conn


def _cause(exc: BaseException) -> tuple[str, str]:
    """What a failed bootstrap connection tells (`BootstrapAttempts.failed`'s kind and words)."""
    if isinstance(exc, ConnectionRefusedError):
        return "refused", "refused the connection"
    if isinstance(exc, NotKafka):
        return exc.kind, str(exc)
    if isinstance(exc, AnswerTimedOut):
        return "other", "did not answer in time"
    if isinstance(exc, ConnectionLost):
        return "other", f"closed the connection before answering ApiVersions ({exc})"
    return "other", str(exc) or type(exc).__name__


def _backoff_s(failures: int) -> float:
    """kafka-python's reconnect backoff: 50 ms doubling to 1 s, with 20% jitter."""
    return min(_BACKOFF_MAX_MS, _BACKOFF_MS * 2 ** failures) * random.uniform(0.8, 1.2) / 1000
