"""Listeners, framing and dispatch: one asyncio loop on a background thread serves every broker.

Each broker has its own TCP listener. A connection is served one request at a time, in order, as a
Kafka broker does. What a broker refuses it refuses the way Kafka's SocketServer does: a frame with
a negative or oversized length, a header it cannot parse, an unknown API key, an unsupported version
of any API but ApiVersions, or a body that does not decode closes that one connection (with a log
line); an ApiVersions request of a version it does not know gets the v0 UNSUPPORTED_VERSION answer.
A TLS listener's handshake is `tls_stream.TlsStream`'s: a client it refuses reads OpenSSL's alert first.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import socket
import ssl
import struct
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

from kafka.protocol.sasl import SaslAuthenticateResponse, SaslHandshakeResponse

from leader_election_cli import kafka_errors as ke
from leader_election_cli.gc_pause import cyclic_gc_paused
from leader_election_cli.sandbox.apis.context import Context, Encoded, Settings
from leader_election_cli.sandbox.apis.elections import elect_leaders_without_electing, leave_out_of_answer
from leader_election_cli.sandbox.apis.metadata_topics import Leaders, leaders_now, metadata_as_of
from leader_election_cli.sandbox.apis.produce_fetch import NO_ANSWER
from leader_election_cli.sandbox.apis.registry import (
    APIS,
    FORWARDED_APIS,
    Api,
    advertised,
)
from leader_election_cli.sandbox.apis.unmodelled import unimplemented
from leader_election_cli.sandbox.controller.cluster import Cluster
from leader_election_cli.sandbox.controller.model import Mode
from leader_election_cli.sandbox.request_log import RequestLog, RequestRecord
from leader_election_cli.sandbox.security import AuthenticationFailed, SaslExchange
from leader_election_cli.sandbox.tls_stream import TlsStream

FAILED_AUTHENTICATION_DELAY_S = 0.1  # Kafka's connection.failed.authentication.delay.ms default
TLS_HANDSHAKE_TIMEOUT_S = 60.0  # a client that does not finish its handshake by then is closed
CONTROLLER_POLL_S = 0.1  # NodeToControllerRequestThread: with no controller known, it looks again every 100 ms

log = logging.getLogger("leader_election_cli.sandbox")

MAX_REQUEST_BYTES = 104_857_600  # Kafka's socket.request.max.bytes default
MAX_REQUEST_LOG = 1_000_000  # requests `Sandbox.request_log` keeps (the latest; 12 bytes each)
API_VERSIONS = 18
METADATA = 3
ELECT_LEADERS = 43
ALTER_REASSIGNMENTS = 45
SASL_HANDSHAKE = 17
SASL_AUTHENTICATE = 36


class Fault(NamedTuple):
    # "fail" | "delay" | "drop" | "corrupt" | "hold" | "after"; ElectLeaders answers that lie:
    # "lie" (success, nothing done), "omit" (done, `partitions` left out of the answer), "lag" (done, and
    # the next `value` Metadata answers still show the leaders from before it)
    kind: str
    api_key: int
    value: float = 0  # the error code for "fail", seconds for "delay", Metadata reads for "lag"
    action: Callable[[], object] | None = None  # "hold": run before the request is handled; "after": once answered
    partitions: frozenset[tuple[str, int]] = frozenset()  # "omit"


class Faults:
    """Faults queued by the test-control API, taken by the next matching requests in order."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: list[Fault] = []
        self.failed_actions: list[Exception] = []  # a test's action that raised: `Sandbox.stop` says so

    async def act(self, fault: Fault) -> None:
        """Run a fault's action on a worker thread; if it raises, the request goes on and it is kept."""
        try:
            await asyncio.to_thread(fault.action or (lambda: None))
        except Exception as exc:
            log.exception("the action of a %s fault (API key %d) failed", fault.kind, fault.api_key)
            self.failed_actions.append(exc)

    def add(self, fault: Fault, count: int) -> None:
        with self._lock:
            self._pending.extend([fault] * count)

    def take(self, api_key: int) -> Fault | None:
        with self._lock:
            for i, fault in enumerate(self._pending):
                if fault.api_key == api_key:
                    return self._pending.pop(i)
        return None


class Connection:
    """One client connection's state: who it is and, with SASL, how far authentication got."""

    def __init__(self, broker_id: int, writer: asyncio.StreamWriter | TlsStream, security_protocol: str):
        self.broker_id = broker_id
        self.writer = writer
        self.security_protocol = security_protocol
        peer = writer.get_extra_info("peername") or ("?", 0)
        local = writer.get_extra_info("sockname") or ("?", 0)
        self.id = f"{local[0]}:{local[1]}-{peer[0]}:{peer[1]}-0"
        self.principal = "ANONYMOUS"
        self.authenticated = not security_protocol.startswith("SASL")
        self.sasl: SaslExchange | None = None  # the exchange its SaslHandshake started


class Sasl(NamedTuple):
    """The SASL users and mechanisms of the listeners; `exchanges` makes the server side of mechanisms
    other than PLAIN and SCRAM (OAUTHBEARER, GSSAPI) for a connection, given its handshake's rawness."""

    users: dict[str, str]
    mechanisms: tuple[str, ...]
    exchanges: dict[str, Callable[[bool], Any]] = {}


def null_field(fields: dict[str, Any], value: Any, version: int) -> str | None:
    """The first array, string or bytes field of a decoded request that is null where its schema says it
    cannot be (None: none is), as Kafka's generated message readers refuse it while parsing."""
    for name, f in fields.items():
        if not f.for_version_q(version) or f.tagged_field_q(version):
            continue
        v = getattr(value, name, None)
        if v is None:
            if (f.is_array() or f.type_str in ("string", "bytes")) and not f.nullable_for_version_q(version):
                return str(f.name)
            continue
        for item in v if f.is_struct_array() else [v] if f.is_struct() else []:
            inner = null_field(f.fields, item, version)
            if inner is not None:
                return f"{f.name}.{inner}"
    return None


def _hold(family: int, address: Any) -> socket.socket | None:
    """A socket bound to `address` and never listening (SO_REUSEADDR, as the listener that binds it again);
    None if another program took the port first (a restart on it then fails, as it did without a hold)."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError:
        sock.close()
        return None
    return sock


class Server:
    """Every broker's listener on one event loop running on a daemon thread."""

    def __init__(self, cluster: Cluster, settings: Settings, *, host: str = "127.0.0.1",
                 ssl_context: ssl.SSLContext | None = None, sasl: Sasl | None = None,
                 max_request_bytes: int = MAX_REQUEST_BYTES):
        self.cluster = cluster
        self.settings = settings
        self.host = host
        self.ssl_context = ssl_context
        self.sasl = sasl
        self.security_protocol = ("SASL_SSL" if ssl_context else "SASL_PLAINTEXT") if sasl else \
            ("SSL" if ssl_context else "PLAINTEXT")
        self.max_request_bytes = max_request_bytes
        self.faults = Faults()
        self._lag: tuple[Leaders, list[int]] | None = None  # leaders before a "lag" election, reads left
        self.request_log = RequestLog(MAX_REQUEST_LOG)
        self._servers: dict[int, asyncio.AbstractServer] = {}
        self._held: dict[int, list[socket.socket]] = {}  # a stopped broker's port, held for its restart
        self._connections: dict[int, set[asyncio.StreamWriter | TlsStream]] = {}
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="kafka-sandbox", daemon=True)

    # -- lifecycle (called from other threads) -------------------------------------------------

    def start(self, ports: dict[int, int]) -> None:
        self._thread.start()
        for broker, port in ports.items():
            self.open_listener(broker, port)

    def stop(self) -> None:
        if not self._thread.is_alive():
            return
        self.close_listener(*self._servers)
        for held in self._held.values():
            for sock in held:
                sock.close()
        self._held.clear()
        self._run(self._end_tasks())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()

    def open_listener(self, broker: int, port: int = 0) -> int:
        """Listen for `broker` (port 0 = let the OS choose); returns the port."""
        port = self._run(self._open(broker, port))
        self.cluster.process_started(broker)
        return port

    def close_listener(self, *brokers: int, then: Callable[[], object] | None = None) -> None:
        """Stop listening for each broker and close its open connections, all in one step of the loop (a
        network cut: no client reaches one broker while another closes), then run `then` in that same step
        (the controller's reaction to a stop it notices at once: no request is served in between). Its port
        stays bound, not listening, until it listens again: connections are refused, as to a stopped broker,
        and no other program on the machine can take the port meanwhile (a restart on it failed, or a client
        met another cluster)."""
        for broker in brokers:
            self.cluster.process_stopped(broker)
        self._run(self._close(brokers, then))

    def _run(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout=30)

    async def _open(self, broker: int, port: int) -> int:
        server = await asyncio.start_server(lambda r, w: self._serve(broker, r, w), self.host, port,
                                            reuse_address=True)  # TLS is ours: `TlsStream`
        for held in self._held.pop(broker, []):  # (SO_REUSEADDR on both: the listener binds beside it)
            held.close()
        self._servers[broker] = server
        self._connections.setdefault(broker, set())
        return server.sockets[0].getsockname()[1]

    async def _close(self, brokers: tuple[int, ...], then: Callable[[], object] | None = None) -> None:
        closed = []
        for broker in brokers:  # no await before every one is closed
            server = self._servers.pop(broker, None)
            if server is None:
                continue
            addresses = [(sock.family, sock.getsockname()) for sock in server.sockets]
            server.close()  # the listening sockets are closed now: their ports are held at once
            self._held[broker] = [held for family, address in addresses if (held := _hold(family, address))]
            for writer in list(self._connections.get(broker, ())):
                writer.close()
            closed.append(server)
        if then is not None:
            then()
        for server in closed:
            await server.wait_closed()

    def open_connections(self) -> int:
        """Client connections the brokers have not closed yet."""
        return sum(len(writers) for writers in list(self._connections.values()))

    @staticmethod
    async def _end_tasks() -> None:
        """Cancel what is still serving (a connection closed a moment ago, a held request) and let it end."""
        tasks = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    # -- serving ---------------------------------------------------------------------------------

    def record(self, entry: RequestRecord) -> None:
        self.request_log.append(entry)

    def records(self) -> list[RequestRecord]:
        return self.request_log.records()

    async def _serve(self, broker: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if broker not in self._servers:  # accepted just before the listener closed: a stopped broker serves nothing
            writer.close()
            return
        tls = TlsStream(reader, writer, self.ssl_context) if self.ssl_context else None
        conn = Connection(broker, tls or writer, self.security_protocol)
        self._connections[broker].add(conn.writer)
        source = tls or reader
        try:
            if tls is not None and not await self._handshake(conn, tls):
                return
            while True:
                head = await source.readexactly(4)
                size = struct.unpack(">i", head)[0]
                if size < 0 or size > self.max_request_bytes:
                    log.warning("broker %d: closing %s: invalid frame size %d", broker, conn.id, size)
                    return
                frame = await source.readexactly(size)
                if conn.sasl is not None and conn.sasl.raw and not conn.authenticated:
                    if not await self._raw_sasl_token(conn, frame):
                        return
                elif not await self._dispatch(conn, frame):
                    return
        except asyncio.IncompleteReadError as e:
            if e.partial:
                log.warning("broker %d: closing %s: connection ended mid-frame", broker, conn.id)
        except (ConnectionError, ssl.SSLError, OSError):
            pass
        except asyncio.CancelledError:  # the sandbox stops (e.g. during a failed login's delay): end quietly
            pass
        finally:
            self._connections[broker].discard(conn.writer)
            conn.writer.close()

    @staticmethod
    async def _handshake(conn: Connection, tls: TlsStream) -> bool:
        """The server's side of the TLS handshake. A refused client (no certificate, an untrusted one) gets
        OpenSSL's alert, then the connection closes at once, as in Kafka: its `KafkaChannel.prepare` delays
        the close (connection.failed.authentication.delay.ms) only when the authenticator fails after the
        handshake (SASL), not when the handshake itself does."""
        try:
            await asyncio.wait_for(tls.handshake(), TLS_HANDSHAKE_TIMEOUT_S)
        except ssl.SSLError as e:
            log.warning("broker %d: closing %s: TLS handshake failed: %s", conn.broker_id, conn.id, e.reason or e)
            return False
        except asyncio.TimeoutError:
            log.warning("broker %d: closing %s: no TLS handshake within %.0f s", conn.broker_id, conn.id,
                        TLS_HANDSHAKE_TIMEOUT_S)
            return False
        return True

    async def _dispatch(self, conn: Connection, frame: bytes) -> bool:
        """Answer one request; False closes the connection."""
        broker = conn.broker_id
        if len(frame) < 8:
            log.warning("broker %d: closing %s: request header truncated", broker, conn.id)
            return False
        api_key, version, correlation_id = struct.unpack_from(">hhi", frame)
        versions = advertised(self.settings, self.cluster.mode, controller=broker not in self.cluster.broker_ids)
        if api_key not in versions:
            log.warning("broker %d: closing %s: unsupported API key %d", broker, conn.id, api_key)
            return False
        low, high = versions[api_key]
        if not low <= version <= high and api_key != API_VERSIONS:
            log.warning("broker %d: closing %s: unsupported version %d of API key %d",
                        broker, conn.id, version, api_key)
            return False
        api = APIS.get(api_key)
        if api is None:
            return await self._unimplemented(conn, api_key, version, correlation_id, frame)
        ctx = Context(broker, self.cluster, self.settings, version, conn.principal,
                      conn.security_protocol, conn.id)
        if api_key == API_VERSIONS and version > high:
            self.record(RequestRecord(broker, api_key, version))
            ctx.version = 0
            await self._send(conn, api.response, api.error(ctx, None, ke.UNSUPPORTED_VERSION, None), 0,
                             correlation_id)
            return True
        try:
            request = api.request.decode(frame, version=version, header=True)
        except Exception as e:  # any decoding failure is a malformed request
            log.warning("broker %d: closing %s: malformed API key %d v%d request: %s",
                        broker, conn.id, api_key, version, e)
            return False
        null = null_field(api.request.fields, request, version)
        if null is not None:  # Kafka's generated read(): "non-nullable field X was serialized as null"
            log.warning("broker %d: closing %s: malformed API key %d v%d request: non-nullable field %s was "
                        "serialized as null", broker, conn.id, api_key, version, null)
            return False
        partitions = None
        if api_key == ELECT_LEADERS and request.topic_partitions is not None:
            partitions = sum(len(t.partitions) for t in request.topic_partitions)
        elif api_key == ALTER_REASSIGNMENTS:
            partitions = sum(len(t.partitions) for t in request.topics)
        self.record(RequestRecord(broker, api_key, version, partitions))
        if not conn.authenticated:
            response, keep = self._sasl_step(conn, ctx, api, request)
            if response is not None:
                await self._send(conn, api.response, response, version, correlation_id)
                # Kafka delays the close so the client reads why (connection.failed.authentication.delay.ms)
                if not keep:
                    await asyncio.sleep(FAILED_AUTHENTICATION_DELAY_S)
            return keep
        fault = self.faults.take(api_key)
        if fault and fault.kind == "drop":
            log.info("broker %d: dropping %s as asked (API key %d)", broker, conn.id, api_key)
            return False
        if fault and fault.kind == "delay":
            await asyncio.sleep(fault.value)
        if fault and fault.kind == "hold":
            await self.faults.act(fault)  # the loop serves on meanwhile (the action may close this connection)
        if fault and fault.kind == "lag":
            self._lag = (leaders_now(self.cluster), [int(fault.value)])
        timed_out = False
        if self.cluster.mode is Mode.KRAFT and api_key in FORWARDED_APIS and not (fault and fault.kind == "fail") \
                and broker in self.cluster.broker_ids:  # (a controller answers itself)
            timed_out = not await self._controller_takes(broker)
            if timed_out and broker not in self._servers:  # the broker stopped, and the requests it held with it
                return False
        try:
            if timed_out:  # ForwardingManagerImpl.onTimeout: getErrorResponse(new TimeoutException())
                log.info("broker %d: no active controller took API key %d within %.1f s: REQUEST_TIMED_OUT",
                         broker, api_key, self.settings.forwarding_timeout_s)
                response = api.error(ctx, request, ke.REQUEST_TIMED_OUT, None)
            elif fault and fault.kind == "fail":
                response = api.error(ctx, request, int(fault.value), None)
            elif fault and fault.kind == "lie":
                response = elect_leaders_without_electing(ctx, request)
            else:
                with cyclic_gc_paused():  # a large answer's acyclic objects die with it (`gc_pause`)
                    response = api.handle(ctx, request)
                if inspect.isawaitable(response):  # a delayed operation (acks=all, a long-polling Fetch)
                    response = await response
            if response is NO_ANSWER:  # Produce with acks=0
                return True
            if fault and fault.kind == "omit":
                response = leave_out_of_answer(response, fault.partitions)
            lag = self._lag
            if api_key == METADATA and lag is not None and lag[1][0] > 0:
                lag[1][0] -= 1
                response = metadata_as_of(ctx, request, lag[0])
        except Exception:
            log.exception("broker %d: API key %d v%d handler failed", broker, api_key, version)
            response = api.error(ctx, request, -1, None)  # UNKNOWN_SERVER_ERROR
        try:
            with cyclic_gc_paused():
                body = response.body if isinstance(response, Encoded) else response.encode(version=ctx.version)
        except Exception:
            log.exception("broker %d: API key %d v%d answer does not encode", broker, api_key, version)
            body = api.error(ctx, request, -1, None).encode(version=ctx.version)
        try:
            await self._write(conn, api.response, body, ctx.version, correlation_id,
                              corrupt=bool(fault and fault.kind == "corrupt"))
        finally:
            if fault and fault.kind == "after":
                await self.faults.act(fault)  # before this connection's next request is read
        return True

    async def _controller_takes(self, broker: int) -> bool:
        """KafkaApis.forwardToController: the request waits in the broker's forwarding queue until the controller
        quorum has a leader (looked for every 100 ms), at most the forwarding timeout; False when that passed
        first, or the broker stopped while it waited. With a controller it is forwarded at once (a broker that
        stops after that has passed it on: the controller carries it out)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.settings.forwarding_timeout_s
        while not self.cluster.has_active_controller():
            left = deadline - loop.time()
            if left <= 0 or broker not in self._servers:
                return False
            await asyncio.sleep(min(CONTROLLER_POLL_S, left))
            if broker not in self._servers:
                return False
        return True

    def _sasl_step(self, conn: Connection, ctx: Context, api: Api, request: Any) -> tuple[Any, bool]:
        """A request before authentication: (answer or None, keep the connection open)."""
        assert self.sasl is not None
        key = api.request.API_KEY
        if key == API_VERSIONS:
            return api.handle(ctx, request), True
        if key == SASL_HANDSHAKE and conn.sasl is None:
            mechanisms = list(self.sasl.mechanisms)
            if request.mechanism not in mechanisms:
                log.warning("broker %d: closing %s: SASL mechanism %s is not enabled",
                            conn.broker_id, conn.id, request.mechanism)
                return SaslHandshakeResponse(version=ctx.version, error_code=ke.UNSUPPORTED_SASL_MECHANISM,
                                             mechanisms=mechanisms), False
            exchange = self.sasl.exchanges.get(request.mechanism)
            conn.sasl = (exchange(ctx.version == 0) if exchange else
                         SaslExchange(request.mechanism, self.sasl.users, raw=ctx.version == 0))
            return SaslHandshakeResponse(version=ctx.version, error_code=0, mechanisms=mechanisms), True
        if key == SASL_AUTHENTICATE and conn.sasl is not None:
            try:
                token = conn.sasl.step(request.auth_bytes)
            except AuthenticationFailed as e:
                log.warning("broker %d: closing %s: %s", conn.broker_id, conn.id, e)
                return SaslAuthenticateResponse(version=ctx.version, error_code=ke.SASL_AUTHENTICATION_FAILED,
                                                error_message=str(e), auth_bytes=b"", session_lifetime_ms=0), False
            self._maybe_authenticated(conn)
            return SaslAuthenticateResponse(version=ctx.version, error_code=0, error_message=None,
                                            auth_bytes=token, session_lifetime_ms=0), True
        log.warning("broker %d: closing %s: unexpected request of API key %d during SASL handshake",
                    conn.broker_id, conn.id, key)
        return None, False

    async def _raw_sasl_token(self, conn: Connection, token: bytes) -> bool:
        """Handshake v0: tokens are bare frames; a failure closes the connection."""
        try:
            reply = conn.sasl.step(token)
        except AuthenticationFailed as e:
            log.warning("broker %d: closing %s: %s", conn.broker_id, conn.id, e)
            return False
        self._maybe_authenticated(conn)
        conn.writer.write(struct.pack(">i", len(reply)) + reply)
        await conn.writer.drain()
        return True

    @staticmethod
    def _maybe_authenticated(conn: Connection) -> None:
        if conn.sasl.user is not None:
            conn.authenticated = True
            conn.principal = conn.sasl.user

    async def _unimplemented(self, conn: Connection, api_key: int, version: int, correlation_id: int,
                             frame: bytes) -> bool:
        self.record(RequestRecord(conn.broker_id, api_key, version))
        answer = unimplemented(api_key, version, frame)
        if answer is None or not conn.authenticated:
            log.warning("broker %d: closing %s: API key %d is not implemented by the sandbox",
                        conn.broker_id, conn.id, api_key)
            return False
        await self._write_frame(conn, answer.body, answer.flexible_header, correlation_id)
        return True

    async def _send(self, conn: Connection, response_class: type, response: Any, version: int,
                    correlation_id: int) -> None:
        await self._write(conn, response_class, response.encode(version=version), version, correlation_id)

    async def _write(self, conn: Connection, response_class: type, body: bytes, version: int,
                     correlation_id: int, corrupt: bool = False) -> None:
        flexible_header = response_class.flexible_version_q(version) and response_class.API_KEY != API_VERSIONS
        await self._write_frame(conn, body, flexible_header, correlation_id, corrupt)

    @staticmethod
    async def _write_frame(conn: Connection, body: bytes, flexible_header: bool, correlation_id: int,
                           corrupt: bool = False) -> None:
        header = struct.pack(">i", correlation_id) + (b"\x00" if flexible_header else b"")
        payload = header + bytes(body)
        if corrupt:
            payload = payload[: max(len(header), len(payload) // 2)]
        conn.writer.write(struct.pack(">i", len(payload)) + payload)
        await conn.writer.drain()
