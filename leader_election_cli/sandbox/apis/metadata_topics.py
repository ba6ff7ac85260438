"""Metadata, DescribeCluster, CreateTopics, DescribeTopicPartitions and DescribeLogDirs."""

from __future__ import annotations

import re
from typing import Any

from kafka.protocol.admin import (
    CreateTopicsResponse,
    DescribeClusterResponse,
    DescribeLogDirsResponse,
    DescribeTopicPartitionsResponse,
)
from kafka.protocol.metadata import MetadataResponse

from leader_election_cli import kafka_errors as ke
from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox.apis import metadata_answer
from leader_election_cli.sandbox.apis.configs import topic_configs
from leader_election_cli.sandbox.apis.context import (
    ALTER,
    CLUSTER_OPERATIONS,
    TOPIC_OPERATIONS,
    UNSET_OPERATIONS,
    Context,
    Encoded,
)
from leader_election_cli.sandbox.apis.topic_admin import unreachable_replication_factor
from leader_election_cli.sandbox.controller.cluster import Cluster, round_robin_assignment
from leader_election_cli.sandbox.controller.configs import topic_config_problem
from leader_election_cli.sandbox.controller.model import (
    LOG_DIR,
    LOG_DIR_VOLUME_BYTES,
    Mode,
    Topic,
)

UNSUPPORTED_ENDPOINT_TYPE = 119
DESCRIBE_TOPIC_PARTITIONS_LIMIT = 2000  # the broker's max.request.partition.size.limit
TOPIC_NAME = re.compile(r"[a-zA-Z0-9._-]+")


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
            topic = c.topics.get(name) if name is not None else c.topic_by_id(topic_id)
            if topic is None:
                code = unknown_topic_error(name) if name is not None else 100  # UNKNOWN_TOPIC_ID
                topics.append(A.Topic(code, name, topic_id, name is not None and is_internal(name), [], topic_ops))
                continue
            partitions = []
            for pid, p in enumerate(topic.partitions):
                replicas, isr, leader = p.replicas, p.isr, p.leader
                led = leader != NO_LEADER and leader in live
                error = ke.NONE if led else ke.LEADER_NOT_AVAILABLE
                if v == 0:
                    replicas = [r for r in replicas if r in live]
                    isr = [r for r in isr if r in live]
                    # getPartitionMetadata: v0 (errorUnavailableEndpoints) says when it left a replica out
                    if led and (len(replicas) < len(p.replicas) or len(isr) < len(p.isr)):
                        error = ke.REPLICA_NOT_AVAILABLE
                leader, epoch = (leader if led else NO_LEADER), p.leader_epoch
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
    problem = topic_config_problem(configs)
    if problem:
        return ke.INVALID_CONFIG, problem, -1, -1
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
        message = unreachable_replication_factor(c, rf)
        if message:
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
    if code == ke.NONE and ctx.version >= 5 and topic is not None:  # every config, as DescribeConfigs has it
        configs = [R.CreatableTopicConfigs(name=d.name, value=d.value, read_only=d.read_only, config_source=d.source,
                                           is_sensitive=d.sensitive) for d in topic_configs(ctx, topic)]
    return R(name=name, topic_id=topic.topic_id if topic else None, error_code=code, error_message=message,
             num_partitions=count, replication_factor=rf, configs=configs)


def create_topics_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return CreateTopicsResponse(version=ctx.version, throttle_time_ms=0,
                                topics=[_topic_result(ctx, t.name, code, message, -1, -1) for t in req.topics])


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
