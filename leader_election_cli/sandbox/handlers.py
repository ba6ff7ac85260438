"""One function per Kafka API: a decoded request in, a response object out.

Each API also has an error answer in the shape of Kafka's `AbstractRequest.getErrorResponse` (the
code at top level, where the response has one, and on every requested item), used for fault
injection and for requests the broker refuses as a whole.
"""

from __future__ import annotations

import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DescribeClusterRequest,
    DescribeClusterResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    DescribeLogDirsRequest,
    DescribeLogDirsResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    DescribeTopicPartitionsRequest,
    DescribeTopicPartitionsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from kafka.protocol.api_header import ResponseClassRegistry
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.sasl import (
    SaslAuthenticateRequest,
    SaslAuthenticateResponse,
    SaslHandshakeRequest,
    SaslHandshakeResponse,
)

from leader_election_cli import kafka_errors as ke
from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox import metadata_answer
from leader_election_cli.sandbox.state import (
    DEFAULT_CONFIGS,
    LOG_DIR,
    LOG_DIR_VOLUME_BYTES,
    POLICY_VIOLATION_MESSAGE,
    REBALANCE_DEFAULTS,
    Cluster,
    ElectionAnswer,
    ItemResult,
    Mode,
    Topic,
    config_problem,
    error_answer,
    round_robin_assignment,
)
from leader_election_cli.sandbox.versions import DEFAULT_VERSION, VERSIONS, KafkaVersion

# ApiVersions exactly as real brokers of the sandbox's Kafka release advertise them (versions.py); zk
# brokers also list the inter-broker APIs 4-7. The APIs the sandbox implements are capped at the versions
# kafka-python can decode (no cap applies to 3.9 and 4.0); the others are answered with an
# UNSUPPORTED_VERSION error response (see `unimplemented`).
INTER_BROKER_APIS = frozenset({4, 5, 6, 7})  # advertised by zk brokers, never served to clients
UNSUPPORTED_ENDPOINT_TYPE = 119

# AclOperation codes, and the operations each resource type supports (for authorized_operations).
ALTER = 7
DESCRIBE_TOPIC_PARTITIONS_LIMIT = 2000  # the broker's max.request.partition.size.limit
TOPIC_RESOURCE, BROKER_RESOURCE = 2, 4
DYNAMIC_TOPIC_CONFIG, STATIC_BROKER_CONFIG, DEFAULT_CONFIG = 1, 4, 5  # ConfigSource
BROKER_DEFAULTS = {**DEFAULT_CONFIGS, **REBALANCE_DEFAULTS}  # every modelled config's Kafka default
CONFIG_TYPES = {"min.insync.replicas": 3, "unclean.leader.election.enable": 1,  # ConfigType: INT, BOOLEAN,
                "auto.leader.rebalance.enable": 1, "leader.imbalance.check.interval.seconds": 5,  # LONG
                "leader.imbalance.per.broker.percentage": 3}
ILLEGAL_SASL_STATE = 34
# BrokerServer: the forwarding channel's retryTimeoutMs (60000), after which NodeToControllerRequestThread
# gives up a request no controller took and ForwardingManagerImpl answers it REQUEST_TIMED_OUT
FORWARDING_TIMEOUT_S = 60.0
# KafkaApis (KRaft broker): the APIs the sandbox serves that forwardToController sends to the active controller
FORWARDED_APIS = frozenset({19, 43, 45, 46, 55})  # CreateTopics ElectLeaders Alter/ListPartitionReassignments
#                                                   DescribeQuorum
UNSET_OPERATIONS = -2147483648  # authorized operations not asked for
CLUSTER_OPERATIONS = {5, 7, 8, 9, 10, 11, 12}  # CREATE ALTER DESCRIBE CLUSTER_ACTION ... IDEMPOTENT_WRITE
TOPIC_OPERATIONS = {3, 4, 5, 6, 7, 8, 10, 11}
CLIENT_SOFTWARE = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?")
TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")


@dataclass
class Settings:
    """Sandbox-wide options the handlers read."""

    cluster_alter: set[str] | None = None  # principals with ALTER on CLUSTER; None = no authorizer
    max_versions: dict[int, int] = field(default_factory=dict)  # set_max_version overrides
    kafka_version: KafkaVersion = VERSIONS[DEFAULT_VERSION]  # the release the brokers are
    encoded: dict[tuple[Any, ...], bytes] = field(default_factory=dict)  # the last all-topics Metadata
    forwarding_timeout_s: float = FORWARDING_TIMEOUT_S  # how long a broker holds a request for a controller

    def advertised(self, mode: Mode) -> dict[int, tuple[int, int]]:
        versions = {}
        for key, (low, high) in self.kafka_version.api_versions[Mode(mode).value].items():
            if key in APIS:
                high = min(high, APIS[key].request.max_version)
            high = min(high, self.max_versions.get(key, high))
            if high >= low:
                versions[key] = (low, high)
        return versions


@dataclass
class Context:
    """One request as the broker sees it."""

    broker_id: int
    cluster: Cluster
    settings: Settings
    version: int
    principal: str = "ANONYMOUS"  # the SASL user name once authenticated
    security_protocol: str = "PLAINTEXT"
    connection_id: str = ""

    def may(self, operation: int) -> bool:
        """The sandbox's authorizer: only ALTER on CLUSTER is restricted, to `cluster_alter`."""
        acl = self.settings.cluster_alter
        return operation != ALTER or acl is None or self.principal in acl

    def allowed(self, operations: set[int]) -> set[int]:
        return {op for op in operations if self.may(op)}


class Encoded(NamedTuple):
    """A response body already encoded (a cached answer)."""

    body: bytes


class Api(NamedTuple):
    request: type
    response: type
    handle: Callable[[Context, Any], Any]
    error: Callable[[Context, Any, int, str | None], Any]


def unimplemented(api_key: int, version: int) -> Any:
    """The answer to an API a real broker offers but the sandbox does not model: UNSUPPORTED_VERSION.

    None when kafka-python has no class for that API (the connection is then closed).
    """
    response_class = ResponseClassRegistry._response_class_registry.get(api_key)
    if response_class is None or version > response_class.max_version:
        return None
    response = response_class[version]()
    if "error_code" in response_class.fields:
        response.error_code = ke.UNSUPPORTED_VERSION
    return response


# -- ApiVersions ------------------------------------------------------------------------------------

def api_versions(ctx: Context, req: Any) -> Any:
    R = ApiVersionsResponse
    if ctx.version >= 3 and not (CLIENT_SOFTWARE.fullmatch(req.client_software_name or "")
                                 and CLIENT_SOFTWARE.fullmatch(req.client_software_version or "")):
        return api_versions_error(ctx, req, ke.INVALID_REQUEST, None)
    keys = [R.ApiVersion(api_key=k, min_version=lo, max_version=hi)
            for k, (lo, hi) in sorted(ctx.settings.advertised(ctx.cluster.mode).items())]
    features: dict[str, Any] = {}
    if ctx.version >= 3 and ctx.cluster.mode is Mode.KRAFT:
        # Kafka leaves out finalized levels of 0 (createFinalizedFeatureKeys) and, for ApiVersions v3
        # clients, supported ranges starting at 0 (they could not read them, KAFKA-17011).
        supported = ctx.settings.kafka_version.supported
        features = dict(
            supported_features=[R.SupportedFeatureKey(name=n, min_version=lo, max_version=hi)
                                for n, (lo, hi) in sorted(supported.items()) if lo > 0 or ctx.version >= 4],
            finalized_features_epoch=ctx.cluster.version,
            finalized_features=[R.FinalizedFeatureKey(name=n, max_version_level=lvl, min_version_level=lvl)
                                for n, lvl in sorted(ctx.cluster.features.items()) if lvl > 0],
        )
    return R(version=ctx.version, error_code=0, api_keys=keys, throttle_time_ms=0, **features)


def api_versions_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = ApiVersionsResponse
    keys = []
    if code == ke.UNSUPPORTED_VERSION:  # KIP-511: tell the client which ApiVersions versions work
        lo, hi = ctx.settings.advertised(ctx.cluster.mode)[18]
        keys = [R.ApiVersion(api_key=18, min_version=lo, max_version=hi)]
    return R(version=ctx.version, error_code=code, api_keys=keys, throttle_time_ms=0)


# -- Metadata ---------------------------------------------------------------------------------------

def metadata(ctx: Context, req: Any) -> Any:
    """Metadata; an answer about every topic is encoded once per cluster change (large clusters), unless
    the brokers have election writes still to publish."""
    every_topic = req.topics is None or (ctx.version == 0 and not req.topics)
    stale = ctx.cluster.unpublished()
    if stale:
        return metadata_as_of(ctx, req, stale)
    if not every_topic:
        return _metadata(ctx, req)
    with ctx.cluster.lock:
        key = (ctx.cluster.version, ctx.version, bool(req.include_topic_authorized_operations),
               bool(req.include_cluster_authorized_operations), ctx.may(ALTER))
        if key not in ctx.settings.encoded:
            ctx.settings.encoded.clear()
            answer = _metadata(ctx, req)
            ctx.settings.encoded[key] = answer.body if isinstance(answer, Encoded) else bytes(
                answer.encode(version=ctx.version))
        return Encoded(ctx.settings.encoded[key])


# org.apache.kafka.common.internals.Topic.INTERNAL_TOPICS: what brokers report with IsInternal = true.
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})


def is_internal(topic: str) -> bool:
    return topic in INTERNAL_TOPICS


def legal_topic_name(name: str) -> bool:
    """`Topic.validate`: not empty, not "." or "..", at most 249 characters of [a-zA-Z0-9._-]."""
    return bool(name) and name not in (".", "..") and len(name) <= 249 and TOPIC_NAME.fullmatch(name) is not None


def unknown_topic_error(name: str) -> int:
    """The code for a topic name the metadata cache does not hold (KafkaApis.getTopicMetadata)."""
    return ke.UNKNOWN_TOPIC_OR_PARTITION if legal_topic_name(name) else ke.INVALID_TOPIC_EXCEPTION


Leaders = dict[tuple[str, int], tuple[int, int, list[int]]]  # (topic, partition) -> (leader, epoch, ISR)
_new = tuple.__new__


def _metadata(ctx: Context, req: Any, lagging: Leaders | None = None) -> Any:
    """The answer: encoded at once for the flexible versions (`metadata_answer.encode`), else kafka-python's
    object. `lagging`: partitions whose leader, epoch and ISR the broker's cache still shows as they were."""
    answer = _metadata_answer(ctx, req, lagging or {})
    if ctx.version >= metadata_answer.FIRST_FLEXIBLE:
        return Encoded(metadata_answer.encode(answer, ctx.version))
    return metadata_answer.response(answer, ctx.version)


def _metadata_answer(ctx: Context, req: Any, lagging: Leaders) -> metadata_answer.Answer:
    A = metadata_answer
    c = ctx.cluster
    v = ctx.version
    with c.lock:
        live = c.live
        brokers = [A.Broker(b, host, port, c.racks.get(b)) for b, (host, port) in sorted(c.addresses.items())
                   if b in live]
        if req.topics is None or (v == 0 and not req.topics):
            wanted = [(t.name, None) for t in c.topics.values()]
        else:
            wanted = list(dict.fromkeys((t.name, t.topic_id) for t in req.topics))  # KafkaApis: a set
        topic_ops = ctx.allowed(TOPIC_OPERATIONS) if req.include_topic_authorized_operations else None
        topics = []
        for name, topic_id in wanted:
            topic = c.topics.get(name) if name is not None else _topic_by_id(c, topic_id)
            if topic is None:
                code = unknown_topic_error(name) if name is not None else 100  # UNKNOWN_TOPIC_ID
                topics.append(A.Topic(code, name, topic_id, name is not None and is_internal(name), [], topic_ops))
                continue
            partitions = []
            for pid, p in enumerate(topic.partitions):
                replicas, isr = p.replicas, p.isr
                if v == 0:
                    replicas = [r for r in replicas if r in live]
                    isr = [r for r in isr if r in live]
                led = p.leader != NO_LEADER and p.leader in live
                # getPartitionMetadata: v0 (errorUnavailableEndpoints) says when it left a replica out
                short = len(replicas) < len(p.replicas) or len(isr) < len(p.isr)
                error = ke.LEADER_NOT_AVAILABLE if not led else ke.REPLICA_NOT_AVAILABLE if short else ke.NONE
                leader, epoch = (p.leader if led else NO_LEADER), p.leader_epoch
                old = lagging.get((topic.name, pid)) if lagging else None
                if old is not None:  # a lagging broker's cache: the leader, epoch and ISR it still holds
                    leader, epoch, isr = old
                    error = ke.LEADER_NOT_AVAILABLE if leader == NO_LEADER else ke.NONE
                # made as NamedTuple.__new__ makes it, without its Python frame (a large answer's hot loop)
                offline = () if live.issuperset(p.replicas) else [r for r in p.replicas if r not in live]
                partitions.append(_new(A.Partition, (error, pid, leader, epoch, replicas, isr, offline)))
            topics.append(A.Topic(0, topic.name, topic.topic_id, is_internal(topic.name), partitions, topic_ops))
        cluster_ops = ctx.allowed(CLUSTER_OPERATIONS) if req.include_cluster_authorized_operations else None
        return A.Answer(brokers, c.cluster_id, c.reported_controller(), topics, cluster_ops)


def leaders_now(c: Cluster) -> Leaders:
    """Every partition's leader, leader epoch and ISR: what a lagging broker's metadata cache still holds."""
    with c.lock:
        return {(t.name, pid): (p.leader, p.leader_epoch, list(p.isr))
                for t in c.topics.values() for pid, p in enumerate(t.partitions)}


def metadata_as_of(ctx: Context, req: Any, leaders: Leaders) -> Any:
    """A Metadata answer from a broker whose cache lags the controller: the partitions' leaders, epochs and
    ISRs as they were in `leaders` (a topic deleted since is still gone: the lag is only the leaders')."""
    return _metadata(ctx, req, leaders)


def metadata_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = MetadataResponse
    topics = [R.MetadataResponseTopic(error_code=code, name=t.name, topic_id=t.topic_id, is_internal=False,
                                      partitions=[]) for t in (req.topics or [])]
    return R(version=ctx.version, throttle_time_ms=0, brokers=[], cluster_id=None, controller_id=NO_LEADER,
             topics=topics, error_code=code)


def _topic_by_id(c: Cluster, topic_id: Any) -> Any:
    return next((t for t in c.topics.values() if t.topic_id == topic_id), None)


# -- DescribeCluster --------------------------------------------------------------------------------

def describe_cluster(ctx: Context, req: Any) -> Any:
    R = DescribeClusterResponse
    c = ctx.cluster
    if ctx.version >= 1 and req.endpoint_type != 1:
        return describe_cluster_error(ctx, req, UNSUPPORTED_ENDPOINT_TYPE,
                                      "The broker does not support DescribeCluster requests with "
                                      "endpoint type CONTROLLER")
    with c.lock:
        fenced_too = c.mode is Mode.KRAFT and ctx.version >= 2 and req.include_fenced_brokers
        brokers = [R.DescribeClusterBroker(broker_id=b, host=host, port=port, rack=c.racks.get(b),
                                           is_fenced=b not in c.live)
                   for b, (host, port) in sorted(c.addresses.items()) if fenced_too or b in c.live]
        ops = ctx.allowed(CLUSTER_OPERATIONS) if req.include_cluster_authorized_operations else None
        return R(version=ctx.version, throttle_time_ms=0, error_code=0, error_message=None, endpoint_type=1,
                 cluster_id=c.cluster_id, controller_id=c.reported_controller(), brokers=brokers,
                 authorized_operations=ops)


def describe_cluster_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return DescribeClusterResponse(version=ctx.version, throttle_time_ms=0, error_code=code,
                                   error_message=message, endpoint_type=1, cluster_id="",
                                   controller_id=NO_LEADER, brokers=[], authorized_operations=None)


# -- ElectLeaders -----------------------------------------------------------------------------------

def elect_request(req: Any) -> list[tuple[str, list[int]]] | None:
    if req.topic_partitions is None:
        return None
    return [(t.topic, list(t.partitions)) for t in req.topic_partitions]


def elect_leaders(ctx: Context, req: Any) -> Any:
    requested = elect_request(req)
    election_type = req.election_type if ctx.version >= 1 else 0
    if not ctx.may(ALTER):
        answer = unauthorized_election(ctx, requested)
    elif ctx.cluster.mode is Mode.KRAFT and req.timeout_ms <= 0 and requested != []:
        # ControllerApis: the controller's write event gets the deadline now + TimeoutMs, and KafkaEventQueue
        # times out an event whose deadline has passed before running it (an empty list is answered before)
        answer = error_answer(requested, ke.REQUEST_TIMED_OUT, None)
    else:
        answer = ctx.cluster.elect_leaders(election_type, requested, broker=ctx.broker_id)
    return election_response(ctx, answer)


def unauthorized_election(ctx: Context, requested: list[tuple[str, list[int]]] | None) -> ElectionAnswer:
    """kraft: the controller's `authorizeClusterOperation` throws; zk: KafkaApis answers each partition."""
    code = ke.CLUSTER_AUTHORIZATION_FAILED
    if ctx.cluster.mode is Mode.KRAFT:
        return error_answer(requested, code, f"Request {_request_text(ctx)} is not authorized.")
    grouped: dict[str, list[ItemResult]] = {}
    for name, pid in dict.fromkeys((n, p) for n, ps in requested or [] for p in ps):
        grouped.setdefault(name, []).append(ItemResult(pid, code, None))
    return ElectionAnswer(code, list(grouped.items()))


def election_response(ctx: Context, answer: ElectionAnswer) -> Any:
    R = ElectLeadersResponse
    Result = R.ReplicaElectionResult
    results = [Result(topic=name, partition_result=[
        Result.PartitionResult(partition_id=i.partition, error_code=i.error_code, error_message=i.message)
        for i in items]) for name, items in answer.results]
    return R(version=ctx.version, throttle_time_ms=0, error_code=answer.error_code,
             replica_election_results=results)


def elect_leaders_without_electing(ctx: Context, req: Any) -> Any:
    """A lying answer: success for every partition asked (every partition for a null list), nothing done."""
    requested = elect_request(req)
    if requested is None:
        with ctx.cluster.lock:
            requested = [(t.name, list(range(len(t.partitions)))) for t in ctx.cluster.topics.values()]
    return election_response(ctx, error_answer(requested, ke.NONE, None))


def leave_out_of_answer(response: Any, partitions: frozenset[tuple[str, int]]) -> Any:
    """An ElectLeaders answer without `partitions` (a broker that drops results it applied)."""
    for result in response.replica_election_results:
        result.partition_result = [p for p in result.partition_result
                                   if (result.topic, p.partition_id) not in partitions]
    return response


def elect_leaders_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return election_response(ctx, error_answer(elect_request(req), code, message))


# -- CreateTopics -----------------------------------------------------------------------------------

def create_topics(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    if c.mode is Mode.ZK and ctx.broker_id != c.controller_id:
        return create_topics_error(ctx, req, ke.NOT_CONTROLLER, None)
    results = []
    with c.lock:
        for t in req.topics:
            code, message, count, rf = _create_one(c, t, validate_only=bool(req.validate_only))
            results.append(_topic_result(ctx, t.name, code, message, count, rf))
    return CreateTopicsResponse(version=ctx.version, throttle_time_ms=0, topics=results)


def _create_one(c: Cluster, t: Any, validate_only: bool) -> tuple[int, str | None, int, int]:
    name = t.name
    if not legal_topic_name(name):
        return ke.INVALID_TOPIC_EXCEPTION, f"Topic name {name!r} is illegal.", -1, -1
    if name in c.topics:
        return ke.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.", -1, -1
    configs = {cfg.name: cfg.value for cfg in t.configs or [] if cfg.value is not None}
    problem = config_problem(configs)
    if problem:
        return 40, problem, -1, -1  # INVALID_CONFIG
    live = sorted(c.live)
    if t.assignments:
        if t.num_partitions != -1 or t.replication_factor != -1:
            return (ke.INVALID_REQUEST, "Both numPartitions or replicationFactor and replicasAssignments "
                    "were set. Both cannot be used at the same time.", -1, -1)
        assignment = {a.partition_index: list(a.broker_ids) for a in t.assignments}
    else:
        count = 1 if t.num_partitions == -1 else t.num_partitions
        rf = 1 if t.replication_factor == -1 else t.replication_factor
        if count < 1:
            return ke.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.", -1, -1
        if rf < 1 or rf > len(live):
            message = (f"Unable to replicate the partition {rf} time(s): The target replication factor of "
                       f"{rf} cannot be reached because only {len(live)} broker(s) are registered."
                       if c.mode is Mode.KRAFT else
                       f"Replication factor: {rf} larger than available brokers: {len(live)}.")
            return ke.INVALID_REPLICATION_FACTOR, message, -1, -1
        assignment = round_robin_assignment(live, count, rf)
    if validate_only:
        return ke.NONE, None, len(assignment), len(assignment[0])
    try:
        c.create_topic(name, assignment, configs)
    except ValueError as e:
        return ke.INVALID_REPLICA_ASSIGNMENT, str(e), -1, -1
    return ke.NONE, None, len(assignment), len(assignment[0])


def _topic_result(ctx: Context, name: str, code: int, message: str | None, count: int, rf: int) -> Any:
    R = CreateTopicsResponse.CreatableTopicResult
    topic = ctx.cluster.topics.get(name) if code == ke.NONE else None
    configs = None
    if code == ke.NONE and ctx.version >= 5 and topic is not None:
        configs = [R.CreatableTopicConfigs(name=k, value=topic.config(k), read_only=False,
                                           config_source=1 if k in topic.configs else 5, is_sensitive=False)
                   for k in sorted(set(topic.configs) | {"min.insync.replicas",
                                                          "unclean.leader.election.enable"})]
    return R(name=name, topic_id=topic.topic_id if topic else None, error_code=code, error_message=message,
             num_partitions=count, replication_factor=rf, configs=configs)


def create_topics_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return CreateTopicsResponse(version=ctx.version, throttle_time_ms=0,
                                topics=[_topic_result(ctx, t.name, code, message, -1, -1) for t in req.topics])


# -- DescribeConfigs --------------------------------------------------------------------------------

def describe_configs(ctx: Context, req: Any) -> Any:
    R = DescribeConfigsResponse
    results = []
    with ctx.cluster.lock:
        for resource in req.resources:
            code, message, configs = _describe_resource(ctx, resource, bool(req.include_synonyms))
            results.append(R.DescribeConfigsResult(error_code=code, error_message=message,
                                                   resource_type=resource.resource_type,
                                                   resource_name=resource.resource_name, configs=configs))
    return R(version=ctx.version, throttle_time_ms=0, results=results)


def _describe_resource(ctx: Context, resource: Any, synonyms: bool) -> tuple[int, str | None, list[Any]]:
    name = resource.resource_name
    if resource.resource_type == TOPIC_RESOURCE:
        topic = ctx.cluster.topics.get(name)
        if topic is None:
            return ke.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{name}' does not exist.", []
        values = {key: (topic.config(key), DYNAMIC_TOPIC_CONFIG if key in topic.configs else DEFAULT_CONFIG)
                  for key in sorted(set(DEFAULT_CONFIGS) | set(topic.configs))}
    elif resource.resource_type == BROKER_RESOURCE:
        if name not in ("", str(ctx.broker_id)):
            return (ke.INVALID_REQUEST, f"Unexpected broker id, expected {ctx.broker_id} or empty string, "
                    f"but received {name}", [])
        values = {key: (value, DEFAULT_CONFIG) for key, value in DEFAULT_CONFIGS.items()}
        values.update({key: (value, DEFAULT_CONFIG if value == BROKER_DEFAULTS[key] else STATIC_BROKER_CONFIG)
                       for key, value in ctx.cluster.broker_configs.items()})
        values = dict(sorted(values.items()))
    else:
        return ke.INVALID_REQUEST, f"Unsupported resource type {resource.resource_type}", []
    wanted = resource.configuration_keys
    Entry = DescribeConfigsResponse.DescribeConfigsResult.DescribeConfigsResourceResult
    configs = []
    for key, (value, source) in values.items():
        if wanted is not None and key not in wanted:
            continue
        chain = [(key, value, source)]
        if source != DEFAULT_CONFIG:
            chain.append((key, BROKER_DEFAULTS.get(key), DEFAULT_CONFIG))
        configs.append(Entry(
            name=key, value=value, read_only=False, config_source=source, is_default=source == DEFAULT_CONFIG,
            is_sensitive=False, config_type=CONFIG_TYPES.get(key, 2), documentation=None,
            synonyms=[Entry.DescribeConfigsSynonym(name=n, value=v, source=src) for n, v, src in chain]
            if synonyms else []))
    return ke.NONE, None, configs


def describe_configs_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = DescribeConfigsResponse
    return R(version=ctx.version, throttle_time_ms=0, results=[
        R.DescribeConfigsResult(error_code=code, error_message=message, resource_type=r.resource_type,
                                resource_name=r.resource_name, configs=[]) for r in req.resources])


# -- partition reassignments ------------------------------------------------------------------------

def alter_reassignments(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    if not ctx.may(ALTER):
        # both modes: authHelper.authorizeClusterOperation throws ClusterAuthorizationException with this text
        return alter_reassignments_error(ctx, req, ke.CLUSTER_AUTHORIZATION_FAILED,
                                         f"Request {_request_text(ctx)} is not authorized.")
    if c.mode is Mode.ZK and ctx.broker_id != c.controller_id:
        return alter_reassignments_error(ctx, req, ke.NOT_CONTROLLER, ke.lookup(ke.NOT_CONTROLLER).message,
                                         per_partition=False)
    R = AlterPartitionReassignmentsResponse
    Topic_ = R.ReassignableTopicResponse
    wanted = [(topic.name, part.partition_index, None if part.replicas is None else list(part.replicas))
              for topic in req.topics for part in topic.partitions]
    code, answers = c.alter_reassignments(wanted)
    if code != ke.NONE:
        message = POLICY_VIOLATION_MESSAGE if code == ke.POLICY_VIOLATION else None
        return alter_reassignments_error(ctx, req, code, message)
    answered = iter(answers)
    responses = [Topic_(name=topic.name, partitions=[
        Topic_.ReassignablePartitionResponse(partition_index=part.partition_index, error_code=code,
                                             error_message=message)
        for part, (code, message) in zip(topic.partitions, answered, strict=False)]) for topic in req.topics]
    return R(version=ctx.version, throttle_time_ms=0, allow_replication_factor_change=True, error_code=0,
             error_message=None, responses=responses)


def alter_reassignments_error(ctx: Context, req: Any, code: int, message: str | None,
                              per_partition: bool = True) -> Any:
    """`AlterPartitionReassignmentsRequest.getErrorResponse` (or just the top level, as zk's callback)."""
    R = AlterPartitionReassignmentsResponse
    Topic_ = R.ReassignableTopicResponse
    if message == ke.lookup(code).message and per_partition:
        message = None
    responses = [Topic_(name=t.name, partitions=[
        Topic_.ReassignablePartitionResponse(partition_index=p.partition_index, error_code=code,
                                             error_message=message) for p in t.partitions])
        for t in req.topics] if per_partition else []
    return R(version=ctx.version, throttle_time_ms=0, allow_replication_factor_change=True, error_code=code,
             error_message=message, responses=responses)


def list_reassignments(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    if c.mode is Mode.ZK and ctx.broker_id != c.controller_id:
        return list_reassignments_error(ctx, req, ke.NOT_CONTROLLER, ke.lookup(ke.NOT_CONTROLLER).message)
    wanted = None if req.topics is None else [(t.name, list(t.partition_indexes)) for t in req.topics]
    R = ListPartitionReassignmentsResponse
    Ongoing = R.OngoingTopicReassignment
    grouped: dict[str, list[Any]] = {}
    for name, pid, p in c.reassignments(wanted):
        grouped.setdefault(name, []).append(Ongoing.OngoingPartitionReassignment(
            partition_index=pid, replicas=list(p.replicas), adding_replicas=list(p.adding),
            removing_replicas=list(p.removing)))
    return R(version=ctx.version, throttle_time_ms=0, error_code=0, error_message=None,
             topics=[Ongoing(name=n, partitions=ps) for n, ps in grouped.items()])


def list_reassignments_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return ListPartitionReassignmentsResponse(version=ctx.version, throttle_time_ms=0, error_code=code,
                                              error_message=message, topics=[])


# -- DescribeTopicPartitions (KIP-966: reports ELR) -------------------------------------------------

def describe_topic_partitions(ctx: Context, req: Any) -> Any:
    """`DescribeTopicPartitionsRequestHandler` and `KRaftMetadataCache.getTopicMetadataForDescribeTopicResponse`.

    The names asked for (a set; every topic when none is), from the cursor's topic on, in name order, up to
    `response_partition_limit` partitions (at most the broker's limit). An unknown topic is answered only
    when asked for by name and while partitions are left to give; once none are, the cursor points at the
    next topic. A cursor on a topic not asked for is an invalid request.
    """
    R = DescribeTopicPartitionsResponse
    c = ctx.cluster
    cursor = req.cursor
    after = "" if cursor is None else cursor.topic_name
    every_topic = not req.topics
    limit = max(1, min(req.response_partition_limit, DESCRIBE_TOPIC_PARTITIONS_LIMIT))
    operations = sum(1 << op for op in ctx.allowed(TOPIC_OPERATIONS))  # Utils.to32BitField
    stale = c.unpublished()  # the broker's metadata cache, as for Metadata
    with c.lock:
        names = sorted({n for n in (c.topics if every_topic else (t.name for t in req.topics)) if n >= after})
        if cursor is not None and not every_topic and cursor.topic_name not in names:
            return describe_topic_partitions_error(
                ctx, req, ke.INVALID_REQUEST,
                f"DescribeTopicPartitionsRequest topic list should contain the cursor topic: {cursor.topic_name}")
        topics, next_cursor, budget = [], None, limit
        for name in names:
            if budget == 0:
                next_cursor = R.Cursor(topic_name=name, partition_index=0)
                break
            topic = c.topics.get(name)
            if topic is None:
                topics.append(R.DescribeTopicPartitionsResponseTopic(
                    error_code=unknown_topic_error(name), name=name, topic_id=None, is_internal=is_internal(name),
                    partitions=[], topic_authorized_operations=operations))
                continue
            first = cursor.partition_index if name == after else 0
            stop = min(len(topic.partitions), first + budget)
            pids = range(max(first, 0), stop)
            topics.append(_describe_topic(ctx, topic, pids, operations, stale))
            if stop < len(topic.partitions):
                next_cursor = R.Cursor(topic_name=name, partition_index=stop)
                break
            budget -= len(pids)
    return R(version=ctx.version, throttle_time_ms=0, topics=topics, next_cursor=next_cursor)


def _describe_topic(ctx: Context, topic: Topic, pids: range, operations: int, stale: Leaders) -> Any:
    """One topic's partitions; one without a live leader has leader -1 and, unlike Metadata, no error code.
    A partition whose election the brokers have not published yet shows its leader, epoch and ISR of
    before (`stale`, as `metadata_as_of`)."""
    R = DescribeTopicPartitionsResponse.DescribeTopicPartitionsResponseTopic
    live = ctx.cluster.live
    partitions = []
    for pid in pids:
        p = topic.partitions[pid]
        leader, epoch, isr = stale.get((topic.name, pid), (p.leader, p.leader_epoch, p.isr))
        led = leader != NO_LEADER and leader in live
        partitions.append(R.DescribeTopicPartitionsResponsePartition(
            error_code=ke.NONE, partition_index=pid, leader_id=leader if led else NO_LEADER,
            leader_epoch=epoch, replica_nodes=list(p.replicas), isr_nodes=list(isr),
            eligible_leader_replicas=list(p.elr), last_known_elr=list(p.last_known_elr),
            offline_replicas=[r for r in p.replicas if r not in live]))
    return R(error_code=0, name=topic.name, topic_id=topic.topic_id, is_internal=is_internal(topic.name),
             partitions=partitions, topic_authorized_operations=operations)


def describe_topic_partitions_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = DescribeTopicPartitionsResponse
    return R(version=ctx.version, throttle_time_ms=0, next_cursor=None, topics=[
        R.DescribeTopicPartitionsResponseTopic(error_code=code, name=t.name, topic_id=None, is_internal=False,
                                               partitions=[], topic_authorized_operations=UNSET_OPERATIONS)
        for t in req.topics])


# -- DescribeLogDirs ------------------------------------------------------------------------------

def describe_log_dirs(ctx: Context, req: Any) -> Any:
    """The asking broker's own log directory (one per sandbox broker) and the replicas it holds: every
    topic when Topics is null, else the listed partitions it hosts (unknown ones are left out, as
    ReplicaManager.describeLogDirs does)."""
    R = DescribeLogDirsResponse
    Result = R.DescribeLogDirsResult
    c = ctx.cluster
    with c.lock:
        if req.topics is None:
            wanted = [(t.name, range(len(t.partitions))) for t in c.topics.values()]
        else:
            wanted = [(t.topic, t.partitions) for t in req.topics if t.topic in c.topics]
        topics, used = [], 0
        for name, pids in wanted:
            partitions = c.topics[name].partitions
            hosted = []
            for pid in dict.fromkeys(pids):
                if 0 <= pid < len(partitions) and ctx.broker_id in partitions[pid].replicas:
                    size = c.log_size(name, pid)
                    used += size
                    hosted.append(Result.DescribeLogDirsTopic.DescribeLogDirsPartition(
                        partition_index=pid, partition_size=size, offset_lag=0, is_future_key=False))
            if hosted:
                topics.append(Result.DescribeLogDirsTopic(name=name, partitions=hosted))
    result = Result(error_code=ke.NONE, log_dir=LOG_DIR, topics=topics, total_bytes=LOG_DIR_VOLUME_BYTES,
                    usable_bytes=max(0, LOG_DIR_VOLUME_BYTES - used), is_cordoned=False)
    return R(version=ctx.version, throttle_time_ms=0, error_code=ke.NONE, results=[result])


def describe_log_dirs_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    """DescribeLogDirsRequest.getErrorResponse: the code at top level (v3+), no log directory."""
    return DescribeLogDirsResponse(version=ctx.version, throttle_time_ms=0, error_code=code, results=[])


# -- SASL on an authenticated connection or a listener without SASL ---------------------------------

def sasl_handshake(ctx: Context, req: Any) -> Any:
    return sasl_handshake_error(ctx, req, ILLEGAL_SASL_STATE, None)


def sasl_handshake_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return SaslHandshakeResponse(version=ctx.version, error_code=code, mechanisms=[])


def sasl_authenticate(ctx: Context, req: Any) -> Any:
    return sasl_authenticate_error(ctx, req, ILLEGAL_SASL_STATE,  # KafkaApis.handleSaslAuthenticateRequest
                                   "SaslAuthenticate request received after successful authentication")


def sasl_authenticate_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return SaslAuthenticateResponse(version=ctx.version, error_code=code, error_message=message, auth_bytes=b"",
                                    session_lifetime_ms=0)


# -- DescribeQuorum ----------------------------------------------------------------------------------

METADATA_TOPIC = "__cluster_metadata"
CONTROLLER_LISTENER = "CONTROLLER"  # controller.listener.names of Kafka's example configs
NO_DIRECTORY_ID = uuid.UUID(int=0)  # ReplicaKey.NO_DIRECTORY_ID: a static quorum's voters have none


def describe_quorum(ctx: Context, req: Any) -> Any:
    """A broker forwards DescribeQuorum to the active controller (KafkaApis, KIP-595; with none the request
    waits, sandbox/server.py), whose raft leader answers for __cluster_metadata-0 alone, as
    `RaftUtil.singletonDescribeQuorumResponse` builds it: leader, epoch, high watermark, the voters and, as
    observers, the brokers that are not voters; v2 adds each replica's directory id (none for the voters of a
    static quorum, kraft.version 0 as on the recorded 4.0.0 and 4.1.0 clusters; a broker's log directory id for
    an observer) and Nodes, each voter's controller listener. The leader's own timestamps are now; a live
    replica fetches all the time (now too, its log end the high watermark); a stopped voter keeps the log end
    and time of its last fetch. An unknown partition is UNKNOWN_TOPIC_OR_PARTITION (Kafka's
    `singletonDescribeQuorumRequest` check). Offsets are the sandbox's metadata version."""
    R = DescribeQuorumResponse
    P = R.TopicData.PartitionData
    asked = [(t.topic_name, p.partition_index) for t in req.topics for p in t.partitions]
    if asked != [(METADATA_TOPIC, 0)]:
        return describe_quorum_error(ctx, req, ke.UNKNOWN_TOPIC_OR_PARTITION, None)
    c = ctx.cluster
    now = int(time.time() * 1000)
    with c.lock:
        leader, voters = c.quorum()
        epoch, offset = c.quorum_epoch, c.version
        observers = [b for b in sorted(c.live) if b not in voters]
        last_fetches = dict(c.last_fetches)
        directories = dict(c.directory_ids)
        listeners = dict(c.controller_addresses)

    def state(replica: int, directory: uuid.UUID) -> Any:
        end, fetched = last_fetches.get(replica, (offset, now))
        return P.ReplicaState(replica_id=replica, replica_directory_id=directory, log_end_offset=end,
                              last_fetch_timestamp=fetched, last_caught_up_timestamp=fetched)

    partition = P(partition_index=0, error_code=0, error_message=None, leader_id=leader, leader_epoch=epoch,
                  high_watermark=offset, current_voters=[state(v, NO_DIRECTORY_ID) for v in voters],
                  observers=[state(o, directories[o]) for o in observers])
    nodes = [R.Node(node_id=v, listeners=[R.Node.Listener(name=CONTROLLER_LISTENER, host=listeners[v][0],
                                                          port=listeners[v][1])])
             for v in voters if v in listeners]
    return R(version=ctx.version, error_code=0, error_message=None,
             topics=[R.TopicData(topic_name=METADATA_TOPIC, partitions=[partition])], nodes=nodes)


def describe_quorum_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = DescribeQuorumResponse
    return R(version=ctx.version, error_code=code, error_message=message, topics=[], nodes=[])


def _request_text(ctx: Context) -> str:
    """How Kafka's `RequestChannel.Request` prints itself in an authorization failure."""
    return (f"Request(processor=0, connectionId={ctx.connection_id}, "
            f"session=Session(User:{ctx.principal},/127.0.0.1), "
            f"listenerName=ListenerName({ctx.security_protocol}), "
            f"securityProtocol={ctx.security_protocol}, buffer=null, envelope=None)")


APIS: dict[int, Api] = {
    18: Api(ApiVersionsRequest, ApiVersionsResponse, api_versions, api_versions_error),
    3: Api(MetadataRequest, MetadataResponse, metadata, metadata_error),
    60: Api(DescribeClusterRequest, DescribeClusterResponse, describe_cluster, describe_cluster_error),
    43: Api(ElectLeadersRequest, ElectLeadersResponse, elect_leaders, elect_leaders_error),
    19: Api(CreateTopicsRequest, CreateTopicsResponse, create_topics, create_topics_error),
    32: Api(DescribeConfigsRequest, DescribeConfigsResponse, describe_configs, describe_configs_error),
    45: Api(AlterPartitionReassignmentsRequest, AlterPartitionReassignmentsResponse, alter_reassignments,
            alter_reassignments_error),
    46: Api(ListPartitionReassignmentsRequest, ListPartitionReassignmentsResponse, list_reassignments,
            list_reassignments_error),
    75: Api(DescribeTopicPartitionsRequest, DescribeTopicPartitionsResponse, describe_topic_partitions,
            describe_topic_partitions_error),
    35: Api(DescribeLogDirsRequest, DescribeLogDirsResponse, describe_log_dirs, describe_log_dirs_error),
    55: Api(DescribeQuorumRequest, DescribeQuorumResponse, describe_quorum, describe_quorum_error),
    17: Api(SaslHandshakeRequest, SaslHandshakeResponse, sasl_handshake, sasl_handshake_error),
    36: Api(SaslAuthenticateRequest, SaslAuthenticateResponse, sasl_authenticate, sasl_authenticate_error),
}
