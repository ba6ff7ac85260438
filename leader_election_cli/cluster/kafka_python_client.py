"""The transport of SASL connections: kafka-python's KafkaNetClient, for its SASL mechanisms (PLAIN,
SCRAM, OAUTHBEARER, GSSAPI). PLAINTEXT and SSL connections use our own `socket_client.py` instead.

The requests `wire_codec` describes are sent as kafka-python's classes (a Metadata answer still decoded
by `metadata_wire`) and their answers handed back as `wire_codec`'s values, so that `ClusterConnection`
sees one interface whichever transport carries it. kafka-python's own bootstrap (ApiVersions, a Metadata
read, then closing that connection and opening another) is not used.
"""

from __future__ import annotations

import errno
import random
import socket
import struct
import time
from types import SimpleNamespace
from typing import Any

import kafka.errors as Errors
from kafka.net.compat import KafkaNetClient
from kafka.protocol.admin import ElectLeadersRequest
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest

from leader_election_cli import kafka_errors
from leader_election_cli.cluster import metadata_wire
from leader_election_cli.cluster.metadata_wire import MetadataRead
from leader_election_cli.cluster.redaction import REDACT
from leader_election_cli.cluster.transport import (
    CLIENT_ID,
    SOFTWARE,
    BootstrapAttempts,
    NotKafka,
    failure,
    strange_frame,
    tls_failure,
)
from leader_election_cli.cluster.wire_codec import (
    Call,
    ElectionAnswer,
    ElectLeadersCall,
    KafkaPythonCall,
    MetadataCall,
    by_topic,
)
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.errors import AuthError, LeaderElectionError, UnreachableError
from leader_election_cli.log import Logger
from leader_election_cli.model import TopicPartition

log = Logger(__name__)


def _kafka_kwargs(addresses: list[str], settings: ClientSettings) -> dict[str, Any]:
    """kafka-python's admin-client settings for a `ClientSettings`."""
    kwargs: dict[str, Any] = {
        "bootstrap_servers": addresses,
        "security_protocol": settings.security_protocol,
        "request_timeout_ms": settings.request_timeout_ms,
        "reconnect_backoff_max_ms": 1000,
        # KafkaAdminClient's defaults where its connections' differ: a Metadata answer about a million
        # partitions is tens of megabytes (the connection's own default frame limit is 1 MB)
        "receive_message_max_bytes": 100_000_000,
        "socket_options": [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
        "client_id": settings.client_id or CLIENT_ID,
    }
    if settings.sasl_mechanism and settings.oauth is not None:
        from leader_election_cli.cluster.oauth import OAuthTokenProvider

        provider = OAuthTokenProvider(settings.oauth, on_secret=REDACT.hide, total_s=settings.api_timeout_ms / 1000)
        provider.token()  # the first token now: an unreachable or refusing endpoint ends the run before Kafka
        kwargs.update(sasl_mechanism="OAUTHBEARER", sasl_oauth_token_provider=provider)
    elif settings.sasl_mechanism and settings.kerberos is not None:
        from leader_election_cli.cluster.kerberos import login

        login(settings.kerberos)
        kwargs.update(sasl_mechanism="GSSAPI", sasl_kerberos_service_name=settings.kerberos.service_name)
    elif settings.sasl_mechanism:
        kwargs.update(sasl_mechanism=settings.sasl_mechanism, sasl_plain_username=settings.sasl_username,
                      sasl_plain_password=settings.sasl_password)
    if settings.ssl_context is not None:
        kwargs["ssl_context"] = settings.ssl_context
    return kwargs


class _BootstrapWatch:
    """Stops the bootstrap (`_bootstrap`) at the first failed login or TLS handshake.

    Retrying a rejected SASL login or an untrusted certificate against every bootstrap server until the
    timeout passes would report only a timeout. Kafka's AdminClient fails at once; so do we: this
    factory makes the kafka-python client, sees each connection's handshake fail, records why and with
    which server (`failed_at`, HOST:PORT), and closes the client, which ends the bootstrap loop. The
    transport keeps it: a login refused later in the run (a user deleted, a broker restarted with other
    users) is then an authentication error, not a timeout. A listener without SASL answers the SASL
    handshake ILLEGAL_SASL_STATE (Kafka's KafkaApis does): `sasl_not_spoken`. An answer that is not Kafka's
    protocol closes its connection at once (kafka-python would leave its request to time out).
    """

    def __init__(self) -> None:
        self.client: KafkaNetClient | None = None
        self.auth_failure: BaseException | None = None
        self.tls_failure: str | None = None
        self.sasl_not_spoken = False
        self.failed_at = ""
        self.mechanism = ""

    def __call__(self, **configs: Any) -> KafkaNetClient:
        self.mechanism = str(configs.get("sasl_mechanism"))
        self.client = client = KafkaNetClient(**configs)
        manager = client._manager
        get_connection = manager.get_connection

        def watched_get_connection(node_id: Any, *args: Any, **kwargs: Any) -> Any:
            conn = get_connection(node_id, *args, **kwargs)
            broker = manager.cluster.broker_metadata(node_id)
            address = f"{broker.host}:{broker.port}" if broker is not None else str(node_id)
            conn.init_future.add_errback(lambda exc: self._on_failure(exc, address))
            if "data_received" not in vars(conn):
                conn.data_received = _checked_frames(conn)
            return conn

        manager.get_connection = watched_get_connection
        return client

    def _on_failure(self, exc: BaseException, address: str) -> None:
        if self.auth_failure is not None or self.tls_failure is not None:
            return
        if isinstance(exc, Errors.IllegalSaslStateError):  # only ever the SaslHandshake's answer here
            self.auth_failure, self.sasl_not_spoken = exc, True
        elif isinstance(exc, (Errors.SaslAuthenticationFailedError, Errors.UnsupportedSaslMechanismError)):
            self.auth_failure = exc
        elif isinstance(exc, Errors.KafkaConnectionError) and "Handshake failed" in str(exc):
            self.tls_failure = str(exc).split("Handshake failed:", 1)[-1].strip()
        elif isinstance(exc, Errors.KafkaConnectionError) and "_ALERT_" in str(exc):  # TLS 1.3: the broker's
            self.tls_failure = str(exc).removeprefix("KafkaConnectionError: ")  # refusal (no client
            # certificate) arrives after the handshake
        else:
            return
        self.failed_at = address
        if self.client is not None:
            self.client._manager.close()

    def refusal(self, what: str) -> LeaderElectionError:
        """The error of a refused SASL handshake (`auth_failure`): a listener without SASL, or the login."""
        if self.sasl_not_spoken:
            return _sasl_not_spoken(self.failed_at, self.mechanism)
        assert self.auth_failure is not None
        return _translate(self.auth_failure, what)

    def shut_down(self) -> None:
        """Stop the network thread of a client whose admin wrapper never finished starting."""
        if self.client is not None:
            self.client.close()
            self.client._manager._net.stop()


def _checked_frames(conn: Any) -> Any:
    """`conn.data_received`, closing the connection with a `NotKafka` on a frame no broker sends (kafka-python
    raises where nothing catches it: its reader stops, and the request waits out its timeout)."""
    receive, first = conn.data_received, bytearray()

    def checked(data: bytes) -> Any:
        if len(first) < 4:
            first.extend(data[:4 - len(first)])
        try:
            return receive(data)
        except Errors.InvalidReceiveError:
            head = bytes(first).ljust(4, b"\0")
            return conn.close(strange_frame(head, struct.unpack(">i", head)[0]))

    return checked


def _sasl_not_spoken(address: str, mechanism: str) -> UnreachableError:
    """`address` answered the SASL handshake as a listener without SASL does: exit 3, a connection-level
    mismatch, not a credential. Kafka's tool prints the IllegalSaslStateException it gets."""
    return UnreachableError(
        f"{address} does not speak SASL: its listener answered the SASL handshake with ILLEGAL_SASL_STATE "
        "(no SASL mechanism enabled there)",
        hint="Set security.protocol=PLAINTEXT (SSL with TLS) in the config file, or give the broker's SASL "
             "listener in --bootstrap-server.",
        kafka_line="java.util.concurrent.ExecutionException: org.apache.kafka.common.errors.IllegalSaslStateException: "
                   f"Unexpected handshake request with client mechanism {mechanism}, enabled mechanisms are []")


def _translate(exc: BaseException, what: str) -> LeaderElectionError:
    """A kafka-python exception as a one-line `LeaderElectionError` that never carries a secret."""
    if isinstance(exc, LeaderElectionError):
        return exc
    if isinstance(exc, (Errors.SaslAuthenticationFailedError, Errors.UnsupportedSaslMechanismError,
                        Errors.IllegalSaslStateError)):
        reason = getattr(exc, "description", None) or type(exc).__name__
        return AuthError(f"Authentication failed while {what}: {reason}",
                         hint="Check sasl.mechanism and the credentials in the --command-config file.")
    if isinstance(exc, Errors.AuthorizationError):
        return AuthError(f"Not authorized while {what}: {type(exc).__name__}")
    if isinstance(exc, Errors.UnsupportedVersionError):
        return LeaderElectionError(f"The broker does not support a request needed while {what}: {exc}",
                                   exit_code=UnreachableError.exit_code)
    if isinstance(exc, Errors.IncompatibleBrokerVersion):
        return failure("incompatible", what, str(exc))
    if isinstance(exc, (Errors.KafkaTimeoutError, Errors.RequestTimedOutError)):
        return failure("timed out", what)
    if isinstance(exc, (Errors.KafkaConnectionError, Errors.NodeNotReadyError, OSError)):
        return failure("lost", what, type(exc).__name__)
    return failure("unexpected", what, f"{type(exc).__name__}: {exc}")


class _WireMetadataResponse:
    """What kafka-python's connection asks of a response class, for a flexible Metadata answer: its
    header as kafka-python reads it, its body through `metadata_wire` (a `MetadataRead`)."""

    __slots__ = ("_kafka_class", "_version")

    def __init__(self, kafka_class: Any, version: int):
        self._kafka_class, self._version = kafka_class, version

    def parse_header(self, read_buffer: Any) -> Any:
        return self._kafka_class.parse_header(read_buffer)

    def decode(self, read_buffer: Any) -> MetadataRead:
        try:
            if isinstance(read_buffer, bytearray):  # kafka-python's frame (KafkaBytes): read in place, not copied
                with memoryview(read_buffer) as whole, whole[read_buffer.tell():] as body:
                    return metadata_wire.decode(body, self._version)
            return metadata_wire.decode(read_buffer.read(), self._version)
        except (IndexError, UnicodeDecodeError) as exc:  # kafka-python turns a ValueError into a protocol error
            raise ValueError(f"malformed Metadata answer: {exc}") from exc


class _WireHeader:
    """A request header that names `_WireMetadataResponse` as its response class (flexible versions)."""

    __slots__ = ("_header", "_version")

    def __init__(self, header: Any, version: int):
        self._header, self._version = header, version

    def __getattr__(self, name: str) -> Any:
        return getattr(self._header, name)

    def get_response_class(self) -> Any:
        kafka_class = self._header.get_response_class()
        return kafka_class if self._version < metadata_wire.FIRST_VERSION else \
            _WireMetadataResponse(kafka_class, self._version)


def _with_wire_header(self: Any, correlation_id: int = 0, client_id: str = "kafka-python") -> None:
    MetadataRequest.with_header(self, correlation_id=correlation_id, client_id=client_id)
    self._header = _WireHeader(self._header, self.API_VERSION)


# kafka-python's MetadataRequest whose answer `metadata_wire` decodes. kafka-python's classes keep no
# per-instance attributes (slots) and find their schema by class name: hence a subclass of that name.
_WireMetadataRequest = type("MetadataRequest", (MetadataRequest,), {"__slots__": (), "with_header": _with_wire_header})


def _kafka_request(call: Call) -> Any:
    """The kafka-python request for a `wire_codec` call."""
    if isinstance(call, KafkaPythonCall):
        return call.request
    if isinstance(call, MetadataCall):
        topics = None if call.topics is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in call.topics]
        return _WireMetadataRequest(topics=topics, allow_auto_topic_creation=False)
    if isinstance(call, ElectLeadersCall):
        topics = None if call.partitions is None else [
            ElectLeadersRequest.TopicPartitions(topic=t, partitions=ps) for t, ps in by_topic(call.partitions).items()]
        return ElectLeadersRequest(election_type=call.election_type, topic_partitions=topics,
                                   timeout_ms=call.timeout_ms)
    raise TypeError(f"no kafka-python request for {call!r}")


def _answer(call: Call, response: Any) -> Any:
    """kafka-python's answer as the value `wire_codec` decodes for the same call."""
    if isinstance(call, ElectLeadersCall):
        results: dict[TopicPartition, tuple[int, str | None]] = {
            TopicPartition(r.topic, p.partition_id): (p.error_code, p.error_message)
            for r in response.replica_election_results for p in r.partition_result}
        return ElectionAnswer(getattr(response, "error_code", kafka_errors.NONE), results,
                              getattr(response, "throttle_time_ms", 0))
    return response


async def _bootstrap(manager: Any, settings: ClientSettings, bootstrap_servers: str) -> tuple[str, tuple[str, int]]:
    """Connect to one bootstrap server (kafka-python sends ApiVersions, and SASL's handshake, as the
    connection opens) and keep the connection: (kafka-python's id for it, its host and port). Tries the
    servers in random order with kafka-python's backoff, within the API timeout, as its own bootstrap does,
    and stops once every one refused or answered in another protocol (`BootstrapAttempts`)."""
    timeout_ms = settings.api_timeout_ms
    deadline = time.monotonic() + timeout_ms / 1000
    brokers = manager.cluster.bootstrap_brokers()
    attempts = BootstrapAttempts([f"{b.host}:{b.port}" for b in brokers])
    while not manager.closed and time.monotonic() < deadline and not attempts.settled():
        broker = random.choice([b for b in brokers if not attempts.given_up(f"{b.host}:{b.port}")])
        try:
            conn = manager.get_connection(broker.node_id, timeout_ms=(deadline - time.monotonic()) * 1000,
                                          pop_on_close=False, refresh_metadata_on_err=False,
                                          reset_backoff_on_connect=False)
        except Errors.NodeNotReadyError:
            delay = min(manager.connection_delay(broker.node_id), max(0.0, deadline - time.monotonic()))
            await manager._bootstrap_wakeup(delay)
            continue
        try:
            await conn
        except Errors.IncompatibleBrokerVersion:
            raise
        except Exception as exc:
            manager._conns.pop(broker.node_id, conn).close(exc)
            manager.update_backoff(broker.node_id)
            cause = _cause(exc)
            if isinstance(exc, Errors.KafkaConnectionError) and cause[0] == "other":  # closed: kafka-python
                cause = _answer_seen(broker.host, broker.port, settings, deadline) or cause  # drops what came first
            attempts.failed(f"{broker.host}:{broker.port}", *cause)
            # the text, not the exception: a kept log record would keep its traceback, and the socket, alive
            log.warning("Bootstrap connection to %s:%s failed: %s", broker.host, broker.port, str(exc))
            continue
        manager.reset_backoff(broker.node_id)
        return broker.node_id, (broker.host, broker.port)
    raise attempts.error(bootstrap_servers, timeout_ms)


def _answer_seen(host: str, port: int, settings: ClientSettings, deadline: float) -> tuple[str, str] | None:
    """What HOST:PORT answers ApiVersions with (which a SASL listener answers before the login), asked over
    our own socket: the cause when it is not Kafka's protocol, else None."""
    from leader_election_cli.cluster.socket_client import BrokerConnection

    try:
        BrokerConnection(host, port, settings.ssl_context, settings.client_id or CLIENT_ID,
                         min(deadline, time.monotonic() + settings.request_timeout_ms / 1000)).close()
    except NotKafka as exc:
        return exc.kind, str(exc)
    except Exception:
        return None
    return None


def _cause(exc: BaseException) -> tuple[str, str]:
    """What a failed bootstrap connection tells (`BootstrapAttempts.failed`'s kind and words)."""
    if isinstance(exc, NotKafka):
        return exc.kind, str(exc)
    if isinstance(exc, Errors.KafkaConnectionError) and errno.errorcode[errno.ECONNREFUSED] in str(exc):
        return "refused", "refused the connection"
    if isinstance(exc, (Errors.RequestTimedOutError, Errors.KafkaTimeoutError)):
        return "other", "did not answer in time"
    return "other", str(exc) or type(exc).__name__


class KafkaPythonTransport:
    """kafka-python's client, kept to one bootstrap connection (a second one only for a broker asked by
    its id, or after the bootstrap broker is lost)."""

    def __init__(self, client: KafkaNetClient, watch: _BootstrapWatch, bootstrap_node: str,
                 bootstrap_address: tuple[str, int]):
        self._client = client
        self._manager = client._manager
        self._watch = watch  # keeps watching logins after the bootstrap: a broker may stop accepting ours
        self._bootstrap_node = bootstrap_node  # kafka-python's id of the bootstrap connection ("bootstrap-N")
        self._bootstrap_address = bootstrap_address
        self._bootstrap_broker: int | None = None  # its broker id, once a Metadata answer names its address
        self._brokers_known = False  # kafka-python knows the brokers' addresses (to connect to another one)

    @classmethod
    def connect(cls, addresses: list[str], bootstrap_servers: str, settings: ClientSettings) -> KafkaPythonTransport:
        """Open one connection to a bootstrap broker (its ApiVersions, its login) within the API timeout,
        or raise Unreachable/Auth errors."""
        kwargs = _kafka_kwargs(addresses, settings)
        watch = _BootstrapWatch()
        try:
            client = watch(**kwargs)
            client._manager._net.start()  # the I/O runs on kafka-python's network thread
            node, address = client._manager.run(_bootstrap, client._manager, settings, bootstrap_servers)
        except Exception as exc:  # kafka-python raises many kinds; all become one line
            watch.shut_down()
            if watch.auth_failure is not None:
                raise watch.refusal(f"connecting to {watch.failed_at}") from exc
            if watch.tls_failure is not None:
                raise tls_failure(watch.failed_at, watch.tls_failure) from exc
            raise _translate(exc, f"connecting to {bootstrap_servers}") from exc
        return cls(client, watch, node, address)

    def close(self) -> None:
        self._client.close()
        self._manager._net.stop()

    def api_versions(self) -> dict[int, tuple[int, int]]:
        """The bootstrap broker's ApiVersions: api key -> (min, max)."""
        return dict(self._manager.broker_version_data.api_versions or {})

    def finalized_features(self, timeout_ms: int) -> dict[str, int]:
        """kafka-python keeps none of its ApiVersions answer but the versions: ask again (v3+)."""
        request = ApiVersionsRequest(client_software_name=SOFTWARE.software_name,
                                     client_software_version=SOFTWARE.software_version, min_version=3)
        response = self.send(KafkaPythonCall(request), None, "reading the cluster's features", timeout_ms)
        return {f.name: f.max_version_level for f in response.finalized_features or []}

    def learn_brokers(self, read: MetadataRead) -> None:
        """Tell kafka-python the brokers' addresses (not the topics: that would decode them twice), and
        which broker the bootstrap connection reached."""
        self._manager.cluster.update_metadata(SimpleNamespace(
            API_VERSION=read.API_VERSION, brokers=read.brokers, controller_id=read.controller_id,
            cluster_id=read.cluster_id, topics=()))
        self._brokers_known = True
        host, port = self._bootstrap_address
        for broker in read.brokers:
            if broker.port == port and broker.host == host:
                self._bootstrap_broker = broker.node_id

    def send(self, call: Call, node_id: int | None, what: str, timeout_ms: int) -> Any:
        manager = self._manager
        node = self._route(node_id)
        if self._watch.auth_failure is not None:  # a broker refused our login: the client is closed, nothing
            raise self._watch.refusal(what)  # can be sent
        request = _kafka_request(call)

        async def send() -> Any:
            return await manager.wait_for(manager.send(request, node_id=node, request_timeout_ms=timeout_ms),
                                          timeout_ms)

        try:
            response = manager.run(send)
        except Exception as exc:
            refused = self._watch.auth_failure is not None
            raise (self._watch.refusal(what) if refused else _translate(exc, what)) from exc
        return _answer(call, response)

    def _route(self, node_id: int | None) -> Any:
        """Where a request goes: the bootstrap connection while it is open, for any broker (`None`) or for
        the broker it turned out to be; else the broker asked for, or kafka-python's least-loaded one."""
        conn = self._manager._conns.get(self._bootstrap_node)
        if conn is not None and conn.closed:  # lost: forget it (a request to it would fail at once)
            self._manager._conns.pop(self._bootstrap_node, None)
            conn = None
        if conn is not None and (node_id is None or node_id == self._bootstrap_broker):
            return self._bootstrap_node
        if node_id is None and self._brokers_known:
            return self._manager.least_loaded_node()
        return node_id if node_id is not None else self._bootstrap_node

