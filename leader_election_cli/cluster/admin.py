"""The admin connection to a Kafka cluster: the only client module that imports kafka-python.

It connects (PLAINTEXT, SSL, SASL), reads metadata into a `ClusterState`, and sends ElectLeaders,
AlterPartitionReassignments and ListPartitionReassignments requests. Everything it returns is a plain
value from `model`; every failure is a `LeaderElectionError` with the right exit code.
"""

from __future__ import annotations

import logging
import random
import re
import socket
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from types import SimpleNamespace
from typing import Any, NamedTuple

import kafka.errors as Errors
from kafka.net.compat import KafkaNetClient
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    DescribeConfigsRequest,
    DescribeLogDirsRequest,
    DescribeTopicPartitionsRequest,
    ElectLeadersRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.metadata import ApiVersionsRequest, MetadataRequest

from leader_election_cli import kafka_errors
from leader_election_cli.cluster import metadata_wire
from leader_election_cli.cluster.metadata_wire import MetadataRead
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.errors import (
    AuthError,
    InputError,
    LeaderElectionError,
    TimedOutError,
    UnreachableError,
    shown,
)
from leader_election_cli.model import (
    ClusterState,
    ControllerMode,
    ElectionType,
    PartitionState,
    TopicPartition,
)

log = logging.getLogger(__name__)

# API keys that only ZooKeeper-mode brokers advertise (LeaderAndIsr, StopReplica, UpdateMetadata,
# ControlledShutdown): how a client tells the controller modes apart from ApiVersions alone.
_ZK_ONLY_API_KEYS = {4, 5, 6, 7}
_NOT_CONTROLLER_RETRIES = 3
_RECONNECT_ATTEMPTS = 30  # bounded; the API timeout usually ends the asking first
_RESOURCE_TYPE_TOPIC, _RESOURCE_TYPE_BROKER = 2, 4
# Kafka's Utils.HOST_PORT_PATTERN (an optional scheme, a host, IPv6 in brackets, a port), brackets paired.
_HOST_PORT = re.compile(r"(?:[a-zA-Z][a-zA-Z\d+._-]*://)?(?:\[(?P<ipv6>[0-9a-zA-Z._%:-]+)]|(?P<host>[0-9a-zA-Z._%:-]+))"
                        r":(?P<port>[0-9]+)")
MAX_BOOTSTRAP_SERVERS = 1000
_BOOTSTRAP_HINT = "Give --bootstrap-server as HOST:PORT, several separated by commas."


@dataclass(frozen=True)
class ElectionResponse:
    """One ElectLeaders answer: the top-level error and each partition's (code, message)."""

    error_code: int
    results: dict[TopicPartition, tuple[int, str | None]]


class LeaderRead(NamedTuple):
    """A light Metadata read: each partition's leader, and the brokers alive."""

    leaders: dict[TopicPartition, int]
    live: frozenset[int]


def bootstrap_addresses(bootstrap_servers: str) -> list[str]:
    """The comma-separated servers, each checked as Kafka's ClientUtils does before anything is sent:
    the form, the port, and the host's name (a name that does not resolve is left out, as Kafka does;
    none resolving is an error at once, not a timeout)."""
    addresses = [s.strip() for s in bootstrap_servers.split(",") if s.strip()]
    if len(addresses) > MAX_BOOTSTRAP_SERVERS:
        raise InputError(f"Too many bootstrap servers: {len(addresses)} given, at most {MAX_BOOTSTRAP_SERVERS}",
                         hint="A few brokers of the cluster are enough: the client finds the others itself.")
    hosts: dict[str, str] = {}
    for address in addresses:
        match = _HOST_PORT.fullmatch(address)
        if match is None:
            raise InputError(f"Invalid url in bootstrap.servers: {shown(address)}", hint=_BOOTSTRAP_HINT)
        if int(match["port"]) > 65535:
            raise InputError(f"Invalid port in bootstrap.servers: {shown(address)}", hint=_BOOTSTRAP_HINT)
        hosts[address] = match["ipv6"] or match["host"]
    if not addresses:
        raise InputError("No resolvable bootstrap urls given in bootstrap.servers", hint=_BOOTSTRAP_HINT)
    resolves = {host: _resolves(host) for host in dict.fromkeys(hosts.values())}  # each name looked up once
    resolvable = [address for address in addresses if resolves[hosts[address]]]
    if not resolvable:
        names = ", ".join(dict.fromkeys(shown(host) for host in hosts.values()))
        raise UnreachableError("No resolvable bootstrap urls given in bootstrap.servers",  # Kafka's line; DNS: exit 3
                               hint=f"No host name resolves ({names}): check them in --bootstrap-server, and DNS.")
    return resolvable


def _resolves(host: str) -> bool:
    try:
        socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        log.warning("Couldn't resolve server %s from bootstrap.servers as DNS resolution failed", host)
        return False
    return True


def _kafka_kwargs(bootstrap_servers: str, settings: ClientSettings) -> dict[str, Any]:
    """kafka-python's admin-client settings for a `ClientSettings`."""
    kwargs: dict[str, Any] = {
        "bootstrap_servers": bootstrap_addresses(bootstrap_servers),
        "security_protocol": settings.security_protocol,
        "request_timeout_ms": settings.request_timeout_ms,
        "reconnect_backoff_max_ms": 1000,
        # KafkaAdminClient's defaults where its connections' differ: a Metadata answer about a million
        # partitions is tens of megabytes (the connection's own default frame limit is 1 MB)
        "receive_message_max_bytes": 100_000_000,
        "socket_options": [(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)],
    }
    if settings.client_id:
        kwargs["client_id"] = settings.client_id
    if settings.sasl_mechanism and settings.oauth is not None:
        from leader_election_cli.cluster.oauth import OAuthTokenProvider

        provider = OAuthTokenProvider(settings.oauth, on_secret=_REDACT.hide)
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


class _RedactSecrets(logging.Filter):
    """kafka-python logs its whole configuration and PLAIN's auth bytes at DEBUG: hide the secrets."""

    def __init__(self) -> None:
        super().__init__()
        self.secrets: set[str] = set()

    def hide(self, secret: str) -> None:
        """The secret as it is, and inside the repr of a str or of bytes (a frame, a config dict): Python
        escapes a quote only when the whole text holds both kinds, so both spellings are hidden."""
        raw = secret.encode("utf-8", "backslashreplace")
        self.secrets.update((secret, repr(secret)[1:-1], repr(secret + "'\"")[1:-4],
                             repr(raw)[2:-1], repr(raw + b"'\"")[2:-4]))

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(secret in message for secret in self.secrets):
            for secret in sorted(self.secrets, key=len, reverse=True):  # a longer form first: it may hold a shorter
                message = message.replace(secret, "[hidden]")
            record.msg, record.args = message, None
        return True


_REDACT = _RedactSecrets()  # one filter, however many connections a process makes (addFilter keeps one copy)


def _hide_in_logs(settings: ClientSettings) -> None:
    """Install the redaction on every handler of the root logger (where --debug output goes)."""
    secrets = {settings.sasl_password, *settings.secrets} - {None, ""}
    for secret in secrets:
        _REDACT.hide(secret)
    if secrets or settings.oauth is not None:
        for handler in logging.getLogger().handlers:
            handler.addFilter(_REDACT)


class _BootstrapWatch:
    """Stops the bootstrap (`_bootstrap`) at the first failed login or TLS handshake.

    Retrying a rejected SASL login or an untrusted certificate against every bootstrap server until the
    timeout passes would report only a timeout. Kafka's AdminClient fails at once; so do we: this
    factory makes the kafka-python client, sees each connection's handshake fail, records why, and
    closes the client, which ends the bootstrap loop. The `ClusterConnection` keeps it: a login refused later in the run (a user deleted, a broker restarted with other users)
    is then an authentication error, not a timeout.
    """

    def __init__(self) -> None:
        self.client: KafkaNetClient | None = None
        self.auth_failure: BaseException | None = None
        self.tls_failure: str | None = None

    def __call__(self, **configs: Any) -> KafkaNetClient:
        self.client = client = KafkaNetClient(**configs)
        manager = client._manager
        get_connection = manager.get_connection

        def watched_get_connection(*args: Any, **kwargs: Any) -> Any:
            conn = get_connection(*args, **kwargs)
            conn.init_future.add_errback(self._on_failure)
            return conn

        manager.get_connection = watched_get_connection
        return client

    def _on_failure(self, exc: BaseException) -> None:
        if self.auth_failure is not None or self.tls_failure is not None:
            return
        if isinstance(exc, (Errors.SaslAuthenticationFailedError, Errors.UnsupportedSaslMechanismError,
                            Errors.IllegalSaslStateError)):
            self.auth_failure = exc
        elif isinstance(exc, Errors.KafkaConnectionError) and "Handshake failed" in str(exc):
            self.tls_failure = str(exc).split("Handshake failed:", 1)[-1].strip()
        else:
            return
        if self.client is not None:
            self.client._manager.close()

    def shut_down(self) -> None:
        """Stop the network thread of a client whose admin wrapper never finished starting."""
        if self.client is not None:
            self.client.close()
            self.client._manager._net.stop()


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
        return UnreachableError(f"Incompatible broker while {what}: {exc}")
    if isinstance(exc, (Errors.KafkaTimeoutError, Errors.RequestTimedOutError)):
        return TimedOutError(f"Timed out while {what}")
    if isinstance(exc, (Errors.KafkaConnectionError, Errors.NodeNotReadyError, OSError)):
        return UnreachableError(f"Lost the connection while {what}: {type(exc).__name__}")
    return UnreachableError(f"Unexpected failure while {what}: {type(exc).__name__}: {exc}")


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


def _metadata_read(response: Any) -> MetadataRead:
    """A Metadata answer as a `MetadataRead`: as decoded by `metadata_wire`, or from kafka-python's
    objects (versions before 9)."""
    if isinstance(response, MetadataRead):
        return response
    partitions: dict[TopicPartition, PartitionState] = {}
    internal = set()
    for topic in response.topics:
        if topic.error_code:
            continue
        name = topic.name
        if topic.is_internal:
            internal.add(name)
        for p in topic.partitions:
            partitions[TopicPartition(name, p.partition_index)] = PartitionState(
                name, p.partition_index, p.leader_id, tuple(p.replica_nodes), tuple(p.isr_nodes),
                offline_replicas=tuple(p.offline_replicas or ()))
    brokers = [metadata_wire.Broker(b.node_id, b.host, b.port, getattr(b, "rack", None)) for b in response.brokers]
    return MetadataRead(response.API_VERSION, brokers, getattr(response, "cluster_id", None), response.controller_id,
                        partitions, frozenset(internal), getattr(response, "throttle_time_ms", 0))


async def _bootstrap(manager: Any, timeout_ms: int) -> tuple[str, tuple[str, int]]:
    """Connect to one bootstrap server (kafka-python sends ApiVersions, and SASL's handshake, as the
    connection opens) and keep the connection: (kafka-python's id for it, its host and port). Tries the
    servers in random order with kafka-python's backoff, within `timeout_ms`, as its own bootstrap does."""
    deadline = time.monotonic() + timeout_ms / 1000
    while not manager.closed and time.monotonic() < deadline:
        broker = random.choice(manager.cluster.bootstrap_brokers())
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
            # the text, not the exception: a kept log record would keep its traceback, and the socket, alive
            log.warning("Bootstrap connection to %s:%s failed: %s", broker.host, broker.port, str(exc))
            continue
        manager.reset_backoff(broker.node_id)
        return broker.node_id, (broker.host, broker.port)
    raise Errors.KafkaTimeoutError("Unable to bootstrap")


class ClusterConnection:
    """A live connection to one Kafka cluster.

    The request plan (docs/ARCHITECTURE.md, "The request plan"): one bootstrap connection, kept open
    and used for everything any broker can answer (its ApiVersions, sent once as it opens, is the one
    every request here is versioned by); a second connection only for a ZooKeeper-mode controller that
    is not the bootstrap broker, or after the bootstrap broker is lost. kafka-python's own bootstrap
    (ApiVersions, a Metadata read, then closing that connection and opening another) is not used.
    """

    def __init__(self, client: KafkaNetClient, settings: ClientSettings, watch: _BootstrapWatch | None,
                 bootstrap_node: str, bootstrap_address: tuple[str, int]):
        self._client = client
        self._manager = client._manager
        self._settings = settings
        self._watch = watch  # keeps watching logins after the bootstrap: a broker may stop accepting ours
        self._deadline = time.monotonic() + settings.api_timeout_ms / 1000
        self._controller_id: int | None = None
        self._bootstrap_node = bootstrap_node  # kafka-python's id of the bootstrap connection ("bootstrap-N")
        self._bootstrap_address = bootstrap_address
        self._bootstrap_broker: int | None = None  # its broker id, once a Metadata answer names its address
        self._brokers_known = False  # kafka-python knows the brokers' addresses (to connect to another one)

    @classmethod
    def connect(cls, bootstrap_servers: str, settings: ClientSettings) -> ClusterConnection:
        """Open one connection to a bootstrap broker (its ApiVersions) within the API timeout, or raise
        Unreachable/Auth errors."""
        _hide_in_logs(settings)  # first: the OAuth token fetched by _kafka_kwargs is hidden as it comes
        kwargs = _kafka_kwargs(bootstrap_servers, settings)
        watch = _BootstrapWatch()
        client = None
        try:
            client = watch(**kwargs)
            client._manager._net.start()  # the I/O runs on kafka-python's network thread
            node, address = client._manager.run(_bootstrap, client._manager, settings.api_timeout_ms)
        except Exception as exc:  # kafka-python raises many kinds; all become one line
            watch.shut_down()
            if watch.auth_failure is not None:
                raise _translate(watch.auth_failure, f"connecting to {bootstrap_servers}") from exc
            if watch.tls_failure is not None:
                raise UnreachableError(
                    f"TLS handshake with {bootstrap_servers} failed: {watch.tls_failure}",
                    hint="Check ssl.truststore.* (the CA that signed the brokers' certificates) and "
                         "ssl.endpoint.identification.algorithm in the config file.") from exc
            if isinstance(exc, Errors.KafkaTimeoutError):
                raise TimedOutError(
                    f"Could not reach any broker of {bootstrap_servers} within {settings.api_timeout_ms} ms",
                    hint="Check --bootstrap-server, the network, and security.protocol in the config file.",
                ) from exc
            raise _translate(exc, f"connecting to {bootstrap_servers}") from exc
        return cls(client, settings, watch, node, address)

    def close(self) -> None:
        self._client.close()
        self._manager._net.stop()

    def __enter__(self) -> ClusterConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def api_timeout_s(self) -> float:
        """default.api.timeout.ms (or --timeout), in seconds."""
        return self._settings.api_timeout_ms / 1000

    def restart_timeout(self) -> None:
        """Give the next requests a whole API timeout again (each batch of a long election gets one)."""
        self._deadline = time.monotonic() + self._settings.api_timeout_ms / 1000

    def reconnect(self) -> None:
        """After a lost connection: find the controller again and make sure it answers.

        The lost broker may be asked first, and right after a crash the others still name it as the
        controller, or none (Kafka notices a crash only when its ZooKeeper session or heartbeats time
        out). As Kafka's AdminClient does, ask again after retry.backoff.ms, doubling up to
        retry.backoff.max.ms, until a controller answers, within the API timeout.
        """
        for attempt in range(_RECONNECT_ATTEMPTS):
            self._controller_id = None
            try:
                controller = self._controller()
                if controller is None and self.mode() is ControllerMode.ZK:
                    raise UnreachableError("No controller is known yet")
                self._light_metadata("reaching the controller", node_id=controller)
                return
            except UnreachableError:
                backoff_ms = min(self._settings.retry_backoff_max_ms, self._settings.retry_backoff_ms * 2 ** attempt)
                if attempt == _RECONNECT_ATTEMPTS - 1 or self._remaining_ms() <= backoff_ms:
                    raise
                log.info("The controller did not answer; asking again in %d ms", backoff_ms)
                time.sleep(backoff_ms / 1000)

    # -- low level -------------------------------------------------------------------------------

    def _remaining_ms(self) -> int:
        return max(1, int((self._deadline - time.monotonic()) * 1000))

    def _send(self, request: Any, node_id: int | None = None, what: str = "talking to the cluster") -> Any:
        manager = self._manager
        if node_id is not None and node_id != self._bootstrap_broker and not self._brokers_known:
            self._light_metadata("finding the brokers")  # their addresses, to reach one by its id
        node = self._route(node_id)
        rejected = self._watch.auth_failure if self._watch is not None else None
        if rejected is not None:  # a broker refused our login: the client is closed, nothing can be sent
            raise _translate(rejected, what)

        async def send() -> Any:
            timeout = min(self._settings.request_timeout_ms, self._remaining_ms())
            return await manager.wait_for(manager.send(request, node_id=node, request_timeout_ms=timeout),
                                          timeout)

        try:
            response = manager.run(send)
        except Exception as exc:
            rejected = self._watch.auth_failure if self._watch is not None else None
            raise _translate(rejected or exc, what) from exc
        if not self._brokers_known and getattr(response, "brokers", None):  # a Metadata answer
            self._learn_brokers(response)
        return response

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

    def _learn_brokers(self, response: Any) -> None:
        """Tell kafka-python the brokers' addresses (not the topics: that would decode them twice), and
        which broker the bootstrap connection reached."""
        self._manager.cluster.update_metadata(SimpleNamespace(
            API_VERSION=response.API_VERSION, brokers=response.brokers, controller_id=response.controller_id,
            cluster_id=getattr(response, "cluster_id", None), topics=()))
        self._brokers_known = True
        host, port = self._bootstrap_address
        for broker in response.brokers:
            if broker.port == port and broker.host == host:
                self._bootstrap_broker = broker.node_id

    def api_versions(self) -> dict[int, tuple[int, int]]:
        """The bootstrap broker's ApiVersions: api key -> (min, max)."""
        return dict(self._manager.broker_version_data.api_versions or {})

    def mode(self) -> ControllerMode:
        """KRaft or ZooKeeper mode, as ApiVersions tells."""
        return ControllerMode.ZK if _ZK_ONLY_API_KEYS & set(self.api_versions()) else ControllerMode.KRAFT

    def finalized_features(self) -> dict[str, int]:
        """The finalized feature levels the bootstrap broker reports (ApiVersions v3+, KIP-584): name -> level.

        Kafka leaves out features at level 0, so a missing one is at 0; brokers before 2.7 report none."""
        if (self.max_version(ApiVersionsRequest.API_KEY) or 0) < 3:
            return {}
        request = ApiVersionsRequest(client_software_name="leader-election-cli", client_software_version="1",
                                     min_version=3)
        response = self._send(request, what="reading the cluster's features")
        return {f.name: f.max_version_level for f in response.finalized_features or []}

    def max_version(self, api_key: int) -> int | None:
        versions = self.api_versions().get(api_key)
        return versions[1] if versions else None

    # -- reads -----------------------------------------------------------------------------------

    def describe(self, *, with_elr: bool = False, with_configs: bool = False,
                 with_reassignments: bool = False) -> ClusterState:
        """One consistent read of brokers, controller and every partition."""
        read = _metadata_read(self._send(_WireMetadataRequest(topics=None, allow_auto_topic_creation=False),
                                         what="reading cluster metadata"))
        self._controller_id = read.controller_id
        state = ClusterState(brokers={b.node_id: (b.host, b.port) for b in read.brokers},
                             controller_id=read.controller_id, partitions=read.partitions, mode=self.mode(),
                             cluster_id=read.cluster_id, internal_topics=read.internal_topics,
                             racks={b.node_id: b.rack for b in read.brokers if b.rack})
        if with_elr:
            state = self._with_elr(state)
        if with_configs:
            state = self._with_min_isr(state)
        if with_reassignments:
            state = replace(state, reassigning=self.list_reassignments())
        return state

    def cluster_id(self) -> str | None:
        """The cluster's id (None from a broker older than Kafka 0.10.1): a light read."""
        return self._light_metadata("reading the cluster id").cluster_id

    def leaders(self, topics: Iterable[str]) -> LeaderRead:
        """The leader (-1 for none) of each partition of `topics`, and the live brokers: a light read, e.g.
        after an election (a topic that no longer exists has no partitions in it)."""
        request = _WireMetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in sorted(topics)],
                                       allow_auto_topic_creation=False)
        read = _metadata_read(self._send(request, what="reading partition leaders"))
        return LeaderRead({tp: p.leader for tp, p in read.partitions.items()},
                          frozenset(b.node_id for b in read.brokers))

    def _with_elr(self, state: ClusterState) -> ClusterState:
        return self.add_elr(state, state.topics())

    def add_elr(self, state: ClusterState, topics: Iterable[str]) -> ClusterState:
        """Add ELR and last-known ELR of `topics` where the brokers report them (DescribeTopicPartitions, 3.8+)."""
        topics = sorted(topics)
        if self.max_version(DescribeTopicPartitionsRequest.API_KEY) is None or not topics:
            return state
        partitions = dict(state.partitions)
        cursor = None
        for _ in range(len(partitions) + 1):  # bounded: each page holds at least one partition
            request = DescribeTopicPartitionsRequest(
                topics=[DescribeTopicPartitionsRequest.TopicRequest(name=t) for t in topics],
                response_partition_limit=2000, cursor=cursor)
            response = self._send(request, what="reading eligible leader replicas")
            for topic in response.topics:
                for p in topic.partitions:
                    tp = TopicPartition(topic.name, p.partition_index)
                    if tp in partitions:
                        partitions[tp] = partitions[tp]._replace(elr=tuple(p.eligible_leader_replicas or ()),
                                                                 last_known_elr=tuple(p.last_known_elr or ()))
            if response.next_cursor is None:
                break
            cursor = DescribeTopicPartitionsRequest.Cursor(topic_name=response.next_cursor.topic_name,
                                                           partition_index=response.next_cursor.partition_index)
        return replace(state, partitions=partitions)

    def _with_min_isr(self, state: ClusterState) -> ClusterState:
        """Add each topic's min.insync.replicas (DescribeConfigs)."""
        topics = sorted(state.topics())
        if not topics:
            return state
        request = DescribeConfigsRequest(resources=[
            DescribeConfigsRequest.DescribeConfigsResource(
                resource_type=_RESOURCE_TYPE_TOPIC, resource_name=t, configuration_keys=["min.insync.replicas"])
            for t in topics])
        response = self._send(request, what="reading topic configs")
        min_isr: dict[str, int] = {}
        for result in response.results:
            if result.error_code:  # e.g. no DESCRIBE_CONFIGS on this topic: unknown, not "none under"
                continue
            for entry in result.configs or ():
                if entry.name == "min.insync.replicas" and entry.value is not None:
                    min_isr[result.resource_name] = int(entry.value)
        capped = (self._manager.broker_version or (0,)) >= (3, 7)
        return replace(state, min_insync_replicas=min_isr, min_isr_unknown=frozenset(topics) - min_isr.keys(),
                       min_isr_capped=capped)

    def broker_configs(self, broker: int, names: Sequence[str]) -> dict[str, str]:
        """Some configs of one broker: its BROKER resource, asked of that broker (Kafka answers only
        for itself). Empty when the broker does not say (no DESCRIBE_CONFIGS on CLUSTER, say)."""
        request = DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=_RESOURCE_TYPE_BROKER, resource_name=str(broker), configuration_keys=list(names))])
        response = self._send(request, node_id=broker, what="reading broker configs")
        return {entry.name: entry.value for result in response.results if not result.error_code
                for entry in result.configs or () if entry.value is not None}

    def log_sizes(self, brokers: Iterable[int]) -> dict[TopicPartition, dict[int, int]]:
        """The size in bytes of each partition's current log on each of `brokers` (DescribeLogDirs, asked of
        every broker: a broker answers for its own log directories): partition -> {broker: bytes}.
        A log directory that reports an error (offline) is left out; a future log (being moved between
        directories) does not count."""
        sizes: dict[TopicPartition, dict[int, int]] = defaultdict(dict)
        for broker in sorted(brokers):
            response = self._send(DescribeLogDirsRequest(topics=None), node_id=broker,
                                  what=f"reading the log directories of broker {broker}")
            top_error = getattr(response, "error_code", kafka_errors.NONE) or kafka_errors.NONE
            if top_error == kafka_errors.CLUSTER_AUTHORIZATION_FAILED:
                raise AuthError(f"Not authorized to read the log directories of broker {broker}: "
                                f"{kafka_errors.describe(top_error)}",
                                hint="The principal needs DESCRIBE on the CLUSTER resource for --weight size.")
            self._raise_top_level(top_error, f"reading the log directories of broker {broker}")
            for result in response.results:
                if result.error_code:
                    continue
                for topic in result.topics:
                    for p in topic.partitions:
                        if not p.is_future_key:
                            sizes[TopicPartition(topic.name, p.partition_index)][broker] = p.partition_size
        return dict(sizes)

    def list_reassignments(self) -> dict[TopicPartition, tuple[int, ...]]:
        """Pending reassignments: partition -> the replicas it is adding."""
        return {tp: adding for tp, (adding, _) in self.list_reassignment_replicas().items()}

    def list_reassignment_replicas(self) -> dict[TopicPartition, tuple[tuple[int, ...], tuple[int, ...]]]:
        """Pending reassignments: partition -> (the replicas it is adding, the replicas it is removing)."""
        response = self._to_controller(lambda: ListPartitionReassignmentsRequest(timeout_ms=self._remaining_ms(),
                                                                                topics=None),
                                       "listing partition reassignments")
        return {TopicPartition(t.name, p.partition_index): (tuple(p.adding_replicas or ()),
                                                            tuple(p.removing_replicas or ()))
                for t in response.topics for p in t.partitions}

    # -- writes ----------------------------------------------------------------------------------

    def check_can_elect(self, election_type: ElectionType) -> None:
        """Refuse, before anything is sent, an election the brokers' ElectLeaders versions cannot carry."""
        max_version = self.max_version(ElectLeadersRequest.API_KEY)
        if max_version is None:
            raise LeaderElectionError("The cluster does not support leader elections (no ElectLeaders API): "
                           "it needs Kafka 2.2 or newer", exit_code=UnreachableError.exit_code)
        if election_type is ElectionType.UNCLEAN and max_version < 1:
            raise InputError("Unclean election is not supported by this cluster: its brokers only speak "
                             "ElectLeaders v0 (Kafka 2.2/2.3)",
                             hint="Upgrade to Kafka 2.4+ or enable unclean.leader.election.enable on the topic.")

    def elect(self, election_type: ElectionType, partitions: Sequence[TopicPartition] | None) -> ElectionResponse:
        """Send one ElectLeaders request (None = all partitions) to the controller.

        A ZooKeeper-mode broker that is not the controller answers NOT_CONTROLLER: refresh the
        controller and retry those partitions, a bounded number of times.
        """
        self.check_can_elect(election_type)
        pending = None if partitions is None else list(partitions)
        results: dict[TopicPartition, tuple[int, str | None]] = {}
        retries_left = _NOT_CONTROLLER_RETRIES
        while True:
            response = self._send(self._elect_request(election_type, pending), node_id=self._controller(),
                                  what="waiting for election results")
            top_error = getattr(response, "error_code", kafka_errors.NONE)
            answered = {TopicPartition(r.topic, p.partition_id): (p.error_code, p.error_message)
                        for r in response.replica_election_results for p in r.partition_result}
            if top_error == kafka_errors.NOT_CONTROLLER:  # the whole request again (None: all partitions)
                retry, again = pending, True
            else:
                retry = [tp for tp, (code, _) in answered.items() if code == kafka_errors.NOT_CONTROLLER]
                again = bool(retry)
            if not again or not retries_left:
                results.update(answered)
                return ElectionResponse(top_error, results)
            results.update({tp: v for tp, v in answered.items() if v[0] != kafka_errors.NOT_CONTROLLER})
            log.info("Not the controller; refreshing and retrying %s", "every partition" if retry is None
                     else f"{len(retry)} partition(s)")
            self._controller_id = None
            pending, retries_left = retry, retries_left - 1

    def alter_replica_order(self, orders: dict[TopicPartition, tuple[int, ...]]
                            ) -> dict[TopicPartition, tuple[int, str | None]]:
        """Ask the controller to reassign partitions to the given replica lists (a reorder moves no data)."""
        by_topic: dict[str, list[Any]] = defaultdict(list)
        topic_cls = AlterPartitionReassignmentsRequest.ReassignableTopic
        for tp, replicas in orders.items():
            by_topic[tp.topic].append(topic_cls.ReassignablePartition(partition_index=tp.partition,
                                                                      replicas=list(replicas)))
        topics = [topic_cls(name=t, partitions=ps) for t, ps in by_topic.items()]
        response = self._to_controller(lambda: AlterPartitionReassignmentsRequest(timeout_ms=self._remaining_ms(),
                                                                                 topics=topics),
                                       "reordering replicas")
        return {TopicPartition(t.name, p.partition_index): (p.error_code, p.error_message)
                for t in response.responses for p in t.partitions}

    # -- helpers ---------------------------------------------------------------------------------

    def _to_controller(self, request: Callable[[], Any], what: str) -> Any:
        """Send a request only the controller serves; a ZooKeeper-mode broker that is no longer the
        controller answers NOT_CONTROLLER (the whole request, nothing done): find it again and resend."""
        for retries_left in range(_NOT_CONTROLLER_RETRIES, -1, -1):
            response = self._send(request(), node_id=self._controller(), what=what)
            if response.error_code != kafka_errors.NOT_CONTROLLER or not retries_left:
                break
            log.info("Not the controller; refreshing it and resending (%s)", what)
            self._controller_id = None
        self._raise_top_level(response.error_code, what)
        return response

    def _elect_request(self, election_type: ElectionType, partitions: Iterable[TopicPartition] | None) -> Any:
        topics = None
        if partitions is not None:
            by_topic: dict[str, list[int]] = defaultdict(list)
            for tp in partitions:
                by_topic[tp.topic].append(tp.partition)
            topics = [ElectLeadersRequest.TopicPartitions(topic=t, partitions=ps) for t, ps in by_topic.items()]
        return ElectLeadersRequest(election_type=int(election_type), topic_partitions=topics,
                                   timeout_ms=self._remaining_ms())

    def _controller(self) -> int | None:
        """Where a controller request goes. KRaft: any broker (None: the bootstrap connection's), which
        forwards it to the controller (KIP-590), as Kafka's AdminClient sends it to the broker Metadata
        names. ZooKeeper mode: the controller, as a Metadata answer names it (None: none is known)."""
        if self.mode() is ControllerMode.KRAFT:
            return None
        if self._controller_id is None or self._controller_id < 0:
            self._controller_id = self._light_metadata("finding the controller").controller_id
        return self._controller_id if self._controller_id >= 0 else None

    def _light_metadata(self, what: str, node_id: int | None = None) -> Any:
        """A Metadata answer about no topic: brokers, controller and cluster id."""
        return self._send(MetadataRequest(topics=[], allow_auto_topic_creation=False), node_id=node_id, what=what)

    @staticmethod
    def _raise_top_level(code: int, what: str) -> None:
        if code == kafka_errors.CLUSTER_AUTHORIZATION_FAILED:
            raise AuthError(f"Not authorized while {what}: {kafka_errors.describe(code)}",
                            hint="The principal needs ALTER on the CLUSTER resource.")
        if code == kafka_errors.REQUEST_TIMED_OUT:  # e.g. a forwarding broker gave up: the controller may still act
            raise TimedOutError(f"Timed out while {what}: {kafka_errors.describe(code)}")
        if code != kafka_errors.NONE:
            raise LeaderElectionError(f"The cluster refused {what}: {kafka_errors.describe(code)}",
                           exit_code=UnreachableError.exit_code)
