"""The admin connection to a Kafka cluster: the only client module that imports kafka-python.

It connects (PLAINTEXT, SSL, SASL), reads metadata into a `ClusterState`, and sends ElectLeaders,
AlterPartitionReassignments and ListPartitionReassignments requests. Everything it returns is a plain
value from `model`; every failure is a `LeaderElectionError` with the right exit code.
"""

from __future__ import annotations

import logging
import re
import socket
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import kafka.errors as Errors
from kafka.admin import KafkaAdminClient
from kafka.net.compat import KafkaNetClient
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    DescribeConfigsRequest,
    DescribeTopicPartitionsRequest,
    ElectLeadersRequest,
    ListPartitionReassignmentsRequest,
)
from kafka.protocol.metadata import MetadataRequest

from leader_election_cli import kafka_errors
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.errors import AuthError, InputError, LeaderElectionError, UnreachableError, shown
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
        raise InputError("No resolvable bootstrap urls given in bootstrap.servers",
                         hint=f"No host name resolves ({names}): check them in --bootstrap-server.")
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
        "bootstrap_timeout_ms": settings.api_timeout_ms,
        "reconnect_backoff_max_ms": 1000,
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
    """Stops kafka-python's bootstrap at the first failed login or TLS handshake.

    kafka-python retries a rejected SASL login or an untrusted certificate against every bootstrap
    server until its bootstrap timeout passes, then reports only a timeout. Kafka's AdminClient fails
    at once; so do we: this factory (kafka-python's `kafka_client` setting) sees each connection's
    handshake fail, records why, and closes the client, which ends the bootstrap loop. The `ClusterConnection`
    keeps it: a login refused later in the run (a user deleted, a broker restarted with other users)
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
        return UnreachableError(f"Timed out while {what}")
    if isinstance(exc, (Errors.KafkaConnectionError, Errors.NodeNotReadyError, OSError)):
        return UnreachableError(f"Lost the connection while {what}: {type(exc).__name__}")
    return UnreachableError(f"Unexpected failure while {what}: {type(exc).__name__}: {exc}")


class ClusterConnection:
    """A live connection to one Kafka cluster."""

    def __init__(self, admin: KafkaAdminClient, settings: ClientSettings, watch: _BootstrapWatch | None = None):
        self._admin = admin
        self._settings = settings
        self._watch = watch  # keeps watching logins after the bootstrap: a broker may stop accepting ours
        self._deadline = time.monotonic() + settings.api_timeout_ms / 1000
        self._controller_id: int | None = None

    @classmethod
    def connect(cls, bootstrap_servers: str, settings: ClientSettings) -> ClusterConnection:
        """Bootstrap within the API timeout, or raise Unreachable/Auth errors."""
        _hide_in_logs(settings)  # first: the OAuth token fetched by _kafka_kwargs is hidden as it comes
        kwargs = _kafka_kwargs(bootstrap_servers, settings)
        watch = _BootstrapWatch()
        try:
            admin = KafkaAdminClient(kafka_client=watch, **kwargs)
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
                raise UnreachableError(
                    f"Could not reach any broker of {bootstrap_servers} within {settings.api_timeout_ms} ms",
                    hint="Check --bootstrap-server, the network, and security.protocol in the config file.",
                ) from exc
            raise _translate(exc, f"connecting to {bootstrap_servers}") from exc
        return cls(admin, settings, watch)

    def close(self) -> None:
        self._admin.close()

    def __enter__(self) -> ClusterConnection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
                if controller is None:
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
        manager = self._admin._manager  # kafka-python keeps raw sends on its connection manager
        rejected = self._watch.auth_failure if self._watch is not None else None
        if rejected is not None:  # a broker refused our login: the client is closed, nothing can be sent
            raise _translate(rejected, what)

        async def send() -> Any:
            timeout = min(self._settings.request_timeout_ms, self._remaining_ms())
            return await manager.wait_for(manager.send(request, node_id=node_id, request_timeout_ms=timeout),
                                          timeout)

        try:
            return manager.run(send)
        except Exception as exc:
            rejected = self._watch.auth_failure if self._watch is not None else None
            raise _translate(rejected or exc, what) from exc

    def api_versions(self) -> dict[int, tuple[int, int]]:
        """The bootstrap broker's ApiVersions: api key -> (min, max)."""
        return dict(self._admin._manager.broker_version_data.api_versions or {})

    def mode(self) -> ControllerMode:
        """KRaft or ZooKeeper mode, as ApiVersions tells."""
        return ControllerMode.ZK if _ZK_ONLY_API_KEYS & set(self.api_versions()) else ControllerMode.KRAFT

    def max_version(self, api_key: int) -> int | None:
        versions = self.api_versions().get(api_key)
        return versions[1] if versions else None

    # -- reads -----------------------------------------------------------------------------------

    def describe(self, *, with_elr: bool = False, with_configs: bool = False,
                 with_reassignments: bool = False) -> ClusterState:
        """One consistent read of brokers, controller and every partition."""
        response = self._send(MetadataRequest(topics=None, allow_auto_topic_creation=False),
                              what="reading cluster metadata")
        brokers = {b.node_id: (b.host, b.port) for b in response.brokers}
        partitions: dict[TopicPartition, PartitionState] = {}
        internal: set[str] = set()
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
        self._controller_id = response.controller_id
        state = ClusterState(brokers=brokers, controller_id=response.controller_id, partitions=partitions,
                             mode=self.mode(), cluster_id=response.cluster_id, internal_topics=frozenset(internal))
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

    def leaders(self, topics: Iterable[str]) -> dict[TopicPartition, int]:
        """The leader (-1 for none) of each partition of `topics`: a light read, e.g. after an election."""
        request = MetadataRequest(topics=[MetadataRequest.MetadataRequestTopic(name=t) for t in sorted(topics)],
                                  allow_auto_topic_creation=False)
        response = self._send(request, what="reading partition leaders")
        return {TopicPartition(topic.name, p.partition_index): p.leader_id
                for topic in response.topics if not topic.error_code for p in topic.partitions}

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
        capped = (self._admin._manager.broker_version or (0,)) >= (3, 7)
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

    def list_reassignments(self) -> dict[TopicPartition, tuple[int, ...]]:
        """Pending reassignments: partition -> the replicas it is adding."""
        response = self._to_controller(lambda: ListPartitionReassignmentsRequest(timeout_ms=self._remaining_ms(),
                                                                                topics=None),
                                       "listing partition reassignments")
        return {TopicPartition(t.name, p.partition_index): tuple(p.adding_replicas or ())
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
            raise UnreachableError(f"Timed out while {what}: {kafka_errors.describe(code)}")
        if code != kafka_errors.NONE:
            raise LeaderElectionError(f"The cluster refused {what}: {kafka_errors.describe(code)}",
                           exit_code=UnreachableError.exit_code)
