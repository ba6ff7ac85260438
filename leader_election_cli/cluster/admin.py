"""The admin connection to a Kafka cluster: what the operations layer asks of a cluster.

It connects (PLAINTEXT and SSL through our own `socket_client`, SASL through kafka-python's client,
`kafka_python_client`), reads metadata into a `ClusterState`, and sends ElectLeaders,
AlterPartitionReassignments and ListPartitionReassignments requests. Everything it returns is a plain
value from `model`; every failure is a `LeaderElectionError` with the right exit code. kafka-python is
imported only for SASL, or for a request other than ApiVersions, Metadata and ElectLeaders (its
protocol classes encode those, `wire_codec.KafkaPythonCall`).
"""

from __future__ import annotations

import socket
import time
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from leader_election_cli import kafka_errors
from leader_election_cli.cluster import metadata_wire
from leader_election_cli.cluster.metadata_wire import MetadataRead
from leader_election_cli.cluster.redaction import hide_in_logs
from leader_election_cli.cluster.transport import Transport, host_and_port, lookup_name, tls_failure
from leader_election_cli.cluster.wire_codec import (
    API_VERSIONS,
    ELECT_LEADERS,
    METADATA,
    AlterReassignmentsCall,
    ElectionAnswer,
    ElectLeadersCall,
    KafkaPythonCall,
    MetadataCall,
)
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.errors import (
    FORWARDED_NO_ANSWER,
    NO_CONTROLLER_IN_TIME,
    AuthError,
    InputError,
    LeaderElectionError,
    TimedOutError,
    UnreachableError,
    shown,
)
from leader_election_cli.log import Logger
from leader_election_cli.model import (
    ClusterState,
    ControllerMode,
    ElectionType,
    PartitionState,
    QuorumReplica,
    QuorumState,
    TopicPartition,
)

log = Logger(__name__)

# API keys that only ZooKeeper-mode brokers advertise (LeaderAndIsr, StopReplica, UpdateMetadata,
# ControlledShutdown): how a client tells the controller modes apart from ApiVersions alone.
_ZK_ONLY_API_KEYS = {4, 5, 6, 7}
_NOT_CONTROLLER_RETRIES = 3
_RECONNECT_ATTEMPTS = 30  # bounded; the API timeout usually ends the asking first
_RESOURCE_TYPE_TOPIC, _RESOURCE_TYPE_BROKER = 2, 4
_DESCRIBE_TOPIC_PARTITIONS = 75  # API key
_DESCRIBE_QUORUM = 55  # API key
# (API key, version): one that only Kafka 3.7 and later speak, as kafka-python infers a broker's release
_SINCE_3_7 = ((35, 5), (2, 11), (0, 13), (2, 10), (1, 17), (0, 11), (1, 16))
MAX_BOOTSTRAP_SERVERS = 1000
_BOOTSTRAP_HINT = ("Give each server as HOST:PORT, several separated by commas (--bootstrap-server, "
                   "--bootstrap-controller).")
# Kafka's line for a bad bootstrap.servers: KafkaAdminClient.createInternal wraps ClientUtils' ConfigException
# (our message), and Kafka's tools print the wrapper's message. (DNS: exit 3, unreachable.)
_ADMIN_NOT_CREATED = "Failed to create new KafkaAdminClient"


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
        parsed = host_and_port(address)
        if parsed is None:
            raise InputError(f"Invalid url in bootstrap.servers: {shown(address)}", hint=_BOOTSTRAP_HINT,
                             kafka_line=_ADMIN_NOT_CREATED)
        if parsed[1] > 65535:
            raise InputError(f"Invalid port in bootstrap.servers: {shown(address)}", hint=_BOOTSTRAP_HINT,
                             kafka_line=_ADMIN_NOT_CREATED)
        hosts[address] = parsed[0]
    if not addresses:
        raise InputError("No resolvable bootstrap urls given in bootstrap.servers", hint=_BOOTSTRAP_HINT,
                         kafka_line=_ADMIN_NOT_CREATED)
    resolves = {host: _resolves(host) for host in dict.fromkeys(hosts.values())}  # each name looked up once
    resolvable = [address for address in addresses if resolves[hosts[address]]]
    if not resolvable:
        names = ", ".join(dict.fromkeys(shown(host) for host in hosts.values()))
        raise UnreachableError("No resolvable bootstrap urls given in bootstrap.servers", kafka_line=_ADMIN_NOT_CREATED,
                               hint=f"No host name resolves ({names}): check them in --bootstrap-server, and DNS.")
    return resolvable


def _resolves(host: str) -> bool:
    try:
        socket.getaddrinfo(lookup_name(host), None, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        log.warning("Couldn't resolve server %s from bootstrap.servers as DNS resolution failed", host)
        return False
    return True


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


class ClusterConnection:
    """A live connection to one Kafka cluster.

    The request plan (docs/ARCHITECTURE.md, "The request plan"): one bootstrap connection, kept open
    and used for everything any broker can answer (its ApiVersions, sent once as it opens, is the one
    every request here is versioned by); a second connection only for a ZooKeeper-mode controller that
    is not the bootstrap broker, or after the bootstrap broker is lost. The transport carrying it is
    our own (`socket_client`) for PLAINTEXT and SSL, kafka-python's (`kafka_python_client`) for SASL.
    """

    def __init__(self, transport: Transport, settings: ClientSettings):
        self._transport = transport
        self._settings = settings
        self._deadline = time.monotonic() + settings.api_timeout_ms / 1000
        self._controller_id: int | None = None
        self._brokers_known = False  # the transport knows the brokers' addresses (to reach one by its id)

    @classmethod
    def connect(cls, bootstrap_servers: str, settings: ClientSettings) -> ClusterConnection:
        """Open one connection to a bootstrap broker (its ApiVersions) within the API timeout, or raise
        Unreachable/Auth errors."""
        hide_in_logs(settings)  # first: an OAuth token fetched as the SASL client is set up is hidden as it comes
        addresses = bootstrap_addresses(bootstrap_servers)
        if settings.sasl_mechanism:
            from leader_election_cli.cluster.kafka_python_client import KafkaPythonTransport

            return cls(KafkaPythonTransport.connect(addresses, bootstrap_servers, settings), settings)
        from leader_election_cli.cluster import socket_client

        try:
            transport = socket_client.SocketTransport.connect(addresses, settings.ssl_context, settings.client_id,
                                                              settings.api_timeout_ms, settings.request_timeout_ms,
                                                              bootstrap_servers)
        except socket_client.HandshakeFailed as exc:
            raise tls_failure(exc.address, str(exc)) from exc
        except Exception as exc:
            raise socket_client.translate(exc, f"connecting to {bootstrap_servers}") from exc
        return cls(transport, settings)

    def close(self) -> None:
        self._transport.close()

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

    def _send(self, call: Any, node_id: int | None = None, what: str = "talking to the cluster") -> Any:
        """`call`'s answer (a `wire_codec` call, or a kafka-python request) from broker `node_id` (None: any)."""
        if node_id is not None and not self._brokers_known:
            self._light_metadata("finding the brokers")  # their addresses, to reach one by its id
        if not hasattr(call, "flexible"):
            call = KafkaPythonCall(call)
        timeout = min(self._settings.request_timeout_ms, self._remaining_ms())
        return self._transport.send(call, node_id, what, timeout)

    def _metadata(self, topics: Iterable[str] | None, what: str, node_id: int | None = None,
                  leaders_only: bool = False, replicas_of: frozenset[int] | None = None) -> MetadataRead:
        """A Metadata answer about `topics` (None: every topic; empty: brokers, controller, cluster id only).
        Brokers before Kafka 2.4 (no Metadata v9) are asked with kafka-python's class. `leaders_only`: the
        answer may carry each partition's leader alone (`MetadataRead.leaders`), where it is decoded here;
        `replicas_of`: only the partitions with a replica on one of these brokers."""
        names = None if topics is None else tuple(topics)
        if (self.max_version(METADATA) or 0) >= metadata_wire.FIRST_VERSION:
            call: Any = MetadataCall(names, leaders_only, replicas_of)
        else:
            from kafka.protocol.metadata import MetadataRequest

            call = MetadataRequest(
                topics=None if names is None else [MetadataRequest.MetadataRequestTopic(name=t) for t in names],
                allow_auto_topic_creation=False)
        read = _metadata_read(self._send(call, node_id=node_id, what=what))
        if replicas_of is not None:  # (decoded so by `metadata_wire`; not by kafka-python, nor through SASL)
            read = read._replace(partitions={tp: p for tp, p in read.partitions.items()
                                             if not replicas_of.isdisjoint(p.replicas)})
        if not self._brokers_known and read.brokers:
            self._transport.learn_brokers(read)
            self._brokers_known = True
        return read

    def api_versions(self) -> dict[int, tuple[int, int]]:
        """The bootstrap broker's ApiVersions: api key -> (min, max)."""
        return self._transport.api_versions()

    def mode(self) -> ControllerMode:
        """KRaft or ZooKeeper mode, as ApiVersions tells."""
        return ControllerMode.ZK if _ZK_ONLY_API_KEYS & set(self.api_versions()) else ControllerMode.KRAFT

    def finalized_features(self) -> dict[str, int]:
        """The finalized feature levels the bootstrap broker reports (ApiVersions v3+, KIP-584): name -> level.

        Kafka leaves out features at level 0, so a missing one is at 0; brokers before 2.7 report none."""
        if (self.max_version(API_VERSIONS) or 0) < 3:
            return {}
        return self._transport.finalized_features(min(self._settings.request_timeout_ms, self._remaining_ms()))

    def max_version(self, api_key: int) -> int | None:
        versions = self.api_versions().get(api_key)
        return versions[1] if versions else None

    # -- reads -----------------------------------------------------------------------------------

    def describe(self, *, with_elr: bool = False, with_configs: bool = False, with_reassignments: bool = False,
                 replicas_of: Collection[int] | None = None, topics: Iterable[str] | None = None) -> ClusterState:
        """One consistent read of brokers, controller and every partition (`replicas_of`: every partition with
        a replica on one of these brokers, and only those; the configs are then read for their topics only;
        `topics`: the partitions of these topics only, none when empty)."""
        read = self._metadata(topics, "reading cluster metadata",
                              replicas_of=None if replicas_of is None else frozenset(replicas_of))
        self._controller_id = read.controller_id
        state = ClusterState(brokers={b.node_id: (b.host, b.port) for b in read.brokers},
                             controller_id=read.controller_id, partitions=read.partitions, mode=self.mode(),
                             cluster_id=read.cluster_id, internal_topics=read.internal_topics,
                             racks={b.node_id: b.rack for b in read.brokers if b.rack})
        if with_elr:
            state = self._with_elr(state)
        if with_configs:
            state = self.add_min_isr(state)
        if with_reassignments:
            state = replace(state, reassigning=self.list_reassignments())
        return state

    def cluster_id(self) -> str | None:
        """The cluster's id (None from a broker older than Kafka 0.10.1): a light read."""
        return self._light_metadata("reading the cluster id").cluster_id

    def leaders(self, topics: Iterable[str]) -> LeaderRead:
        """The leader (-1 for none) of each partition of `topics`, and the live brokers: a light read, e.g.
        after an election (a topic that no longer exists has no partitions in it)."""
        read = self._metadata(sorted(topics), "reading partition leaders", leaders_only=True)
        leaders = read.leaders if read.leaders is not None else {tp: p.leader for tp, p in read.partitions.items()}
        return LeaderRead(leaders, frozenset(b.node_id for b in read.brokers))

    def _with_elr(self, state: ClusterState) -> ClusterState:
        return self.add_elr(state, state.topics())

    def add_elr(self, state: ClusterState, topics: Iterable[str]) -> ClusterState:
        """Add ELR and last-known ELR of `topics` where the brokers report them (DescribeTopicPartitions, 3.8+)."""
        topics = sorted(topics)
        if self.max_version(_DESCRIBE_TOPIC_PARTITIONS) is None or not topics:
            return state
        from kafka.protocol.admin import DescribeTopicPartitionsRequest

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

    def add_min_isr(self, state: ClusterState) -> ClusterState:
        """`state` with each topic's min.insync.replicas (DescribeConfigs)."""
        topics = sorted(state.topics())
        if not topics:
            return state
        from kafka.protocol.admin import DescribeConfigsRequest

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
        versions = self.api_versions()
        capped = any(low <= version <= high for key, version in _SINCE_3_7
                     for low, high in [versions.get(key, (0, -1))])
        return replace(state, min_insync_replicas=min_isr, min_isr_unknown=frozenset(topics) - min_isr.keys(),
                       min_isr_capped=capped)

    def broker_configs(self, broker: int, names: Sequence[str], *, bootstrap: bool = False) -> dict[str, str]:
        """Some configs of one broker: its BROKER resource, asked of that broker (Kafka answers only
        for itself; `bootstrap`: the node connected to is that one, a KRaft controller say, which answers
        DescribeConfigs for its own node id too). Empty when the broker does not say (no DESCRIBE_CONFIGS on
        CLUSTER, say)."""
        from kafka.protocol.admin import DescribeConfigsRequest

        request = DescribeConfigsRequest(resources=[DescribeConfigsRequest.DescribeConfigsResource(
            resource_type=_RESOURCE_TYPE_BROKER, resource_name=str(broker), configuration_keys=list(names))])
        response = self._send(request, node_id=None if bootstrap else broker, what="reading broker configs")
        return {entry.name: entry.value for result in response.results if not result.error_code
                for entry in result.configs or () if entry.value is not None}

    def log_sizes(self, brokers: Iterable[int]) -> dict[TopicPartition, dict[int, int]]:
        """The size in bytes of each partition's current log on each of `brokers` (DescribeLogDirs, asked of
        every broker: a broker answers for its own log directories): partition -> {broker: bytes}.
        A log directory that reports an error (offline) is left out; a future log (being moved between
        directories) does not count."""
        from kafka.protocol.admin import DescribeLogDirsRequest

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
        from kafka.protocol.admin import ListPartitionReassignmentsRequest

        response = self._to_controller(lambda: ListPartitionReassignmentsRequest(timeout_ms=self._remaining_ms(),
                                                                                topics=None),
                                       "listing partition reassignments")
        return {TopicPartition(t.name, p.partition_index): (tuple(p.adding_replicas or ()),
                                                            tuple(p.removing_replicas or ()))
                for t in response.topics for p in t.partitions}

    def describe_quorum(self, errors: bool = True) -> QuorumState | None:
        """The KRaft controller quorum as its leader reports it (DescribeQuorum, KIP-595/KIP-853; v2 adds each
        voter's controller listener, Nodes), asked of a broker, which forwards it to the active controller.
        None where the brokers do not offer it (ZooKeeper mode, before Kafka 3.3); an error answer is None too
        with `errors=False`, else a `LeaderElectionError` (REQUEST_TIMED_OUT: no quorum leader in time)."""
        version = self.max_version(_DESCRIBE_QUORUM)
        if version is None:
            return None
        from kafka.protocol.admin import DescribeQuorumRequest

        request = DescribeQuorumRequest(version=min(version, 2), topics=[DescribeQuorumRequest.TopicData(
            topic_name="__cluster_metadata", partitions=[DescribeQuorumRequest.TopicData.PartitionData(
                partition_index=0)])])
        response = self._send_to_controller(request, None, "reading the controller quorum")
        partitions = [p for t in response.topics or () for p in t.partitions or ()]
        code = response.error_code or (partitions[0].error_code if len(partitions) == 1 else kafka_errors.NONE)
        if code or len(partitions) != 1:
            if not errors:
                return None
            self._raise_top_level(code or kafka_errors.UNKNOWN_SERVER_ERROR, "reading the controller quorum")
        p = partitions[0]

        def replicas(states: Any) -> tuple[QuorumReplica, ...]:
            return tuple(QuorumReplica(s.replica_id, s.log_end_offset, getattr(s, "last_fetch_timestamp", -1),
                                       getattr(s, "last_caught_up_timestamp", -1)) for s in states or ())

        endpoints = {n.node_id: (n.listeners[0].host, n.listeners[0].port)
                     for n in getattr(response, "nodes", None) or () if n.listeners}
        return QuorumState(p.leader_id, p.leader_epoch, p.high_watermark, replicas(p.current_voters),
                           tuple(s.replica_id for s in p.observers or ()), endpoints)

    # -- writes ----------------------------------------------------------------------------------

    def check_can_elect(self, election_type: ElectionType) -> None:
        """Refuse, before anything is sent, an election the brokers' ElectLeaders versions cannot carry."""
        max_version = self.max_version(ELECT_LEADERS)
        if max_version is None:
            raise LeaderElectionError("The cluster does not support leader elections (no ElectLeaders API): "
                           "it needs Kafka 2.2 or newer", exit_code=UnreachableError.exit_code)
        if election_type is ElectionType.UNCLEAN and max_version < 1:
            raise InputError("Unclean election is not supported by this cluster: its brokers only speak "
                             "ElectLeaders v0 (Kafka 2.2/2.3)",
                             hint="Upgrade to Kafka 2.4+ or enable unclean.leader.election.enable on the topic.")

    def elect(self, election_type: ElectionType, partitions: Sequence[TopicPartition] | None) -> ElectionAnswer:
        """Send one ElectLeaders request (None = all partitions) to the controller.

        A ZooKeeper-mode broker that is not the controller answers NOT_CONTROLLER: refresh the
        controller and retry those partitions, a bounded number of times.
        """
        self.check_can_elect(election_type)
        pending = None if partitions is None else list(partitions)
        results: dict[TopicPartition, tuple[int, str | None]] = {}
        retries_left = _NOT_CONTROLLER_RETRIES
        while True:
            response = self._send_to_controller(self._elect_request(election_type, pending), self._controller(),
                                                "waiting for election results")
            top_error, answered = response.error_code, response.results
            if top_error == kafka_errors.NOT_CONTROLLER:  # the whole request again (None: all partitions)
                retry, again = pending, True
            else:
                retry = [tp for tp, (code, _) in answered.items() if code == kafka_errors.NOT_CONTROLLER]
                again = bool(retry)
            if not again or not retries_left:
                results.update(answered)
                return ElectionAnswer(top_error, results, response.throttle_time_ms)
            results.update({tp: v for tp, v in answered.items() if v[0] != kafka_errors.NOT_CONTROLLER})
            log.info("Not the controller; refreshing and retrying %s", "every partition" if retry is None
                     else f"{len(retry)} partition(s)")
            self._controller_id = None
            pending, retries_left = retry, retries_left - 1

    def alter_replica_order(self, orders: dict[TopicPartition, tuple[int, ...]]
                            ) -> dict[TopicPartition, tuple[int, str | None]]:
        """Ask the controller to reassign partitions to the given replica lists (a reorder moves no data)."""
        response = self._to_controller(lambda: AlterReassignmentsCall(orders, self._remaining_ms()),
                                       "reordering replicas")
        return response.results

    # -- helpers ---------------------------------------------------------------------------------

    def _to_controller(self, request: Callable[[], Any], what: str) -> Any:
        """Send a request only the controller serves; a ZooKeeper-mode broker that is no longer the
        controller answers NOT_CONTROLLER (the whole request, nothing done): find it again and resend."""
        for retries_left in range(_NOT_CONTROLLER_RETRIES, -1, -1):
            response = self._send_to_controller(request(), self._controller(), what)
            if response.error_code != kafka_errors.NOT_CONTROLLER or not retries_left:
                break
            log.info("Not the controller; refreshing it and resending (%s)", what)
            self._controller_id = None
        self._raise_top_level(response.error_code, what)
        return response

    def _send_to_controller(self, call: Any, node_id: int | None, what: str) -> Any:
        """`_send` a request only the controller serves; in KRaft mode the broker forwards it, so no answer in
        time may be a controller quorum's without a leader (the timeout says so: `FORWARDED_NO_ANSWER`)."""
        try:
            return self._send(call, node_id=node_id, what=what)
        except TimedOutError as exc:
            if self.mode() is not ControllerMode.KRAFT:
                raise
            raise TimedOutError(f"{exc.message} ({FORWARDED_NO_ANSWER})", hint=exc.hint, detail=exc.detail,
                                kafka_line=exc.kafka_line) from exc

    def _elect_request(self, election_type: ElectionType, partitions: Sequence[TopicPartition] | None
                       ) -> ElectLeadersCall:
        return ElectLeadersCall(int(election_type), partitions, self._remaining_ms())

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
        return self._metadata((), what, node_id=node_id)

    @staticmethod
    def _raise_top_level(code: int, what: str) -> None:
        if code in (kafka_errors.CLUSTER_AUTHORIZATION_FAILED, kafka_errors.TOPIC_AUTHORIZATION_FAILED):
            raise AuthError(f"Not authorized while {what}: {kafka_errors.describe(code)}",
                            hint="The principal needs ALTER on the CLUSTER resource (and on the topics).")
        if code == kafka_errors.REQUEST_TIMED_OUT:  # e.g. a forwarding broker found no controller in time
            raise TimedOutError(f"Timed out while {what}: {NO_CONTROLLER_IN_TIME}")
        if code != kafka_errors.NONE:
            raise LeaderElectionError(f"The cluster refused {what}: {kafka_errors.describe(code)}",
                           exit_code=UnreachableError.exit_code)
