"""CreatePartitions and DeleteTopics, as the controller carries them out.

KRaft (`ReplicationControlManager.createPartitions`, `ControllerApis.deleteTopics`; a broker forwards both to the
controller, registry.FORWARDED_APIS); ZooKeeper mode (`ZkAdminManager.createPartitions`, `KafkaApis`'s
`handleDeleteTopicsRequest`): only the controller takes them, NOT_CONTROLLER elsewhere.
- CreatePartitions: an unknown topic is UNKNOWN_TOPIC_OR_PARTITION; a count that does not grow is
  INVALID_PARTITIONS; the new partitions are placed as the topic's first ones would be (the sandbox's
  `Cluster.default_assignment` over the count asked for, of which the new partitions' part, as Kafka's placer
  does from the first new partition id) with the replication factor of partition 0, unless assignments are
  given: one per new partition, of registered brokers, none twice, as many as that replication factor, one of
  them unfenced (INVALID_REPLICA_ASSIGNMENT otherwise). `validate_only` checks and changes nothing. More
  partitions than the sandbox holds (sizing.py) is INVALID_PARTITIONS with its reason.
- DeleteTopics: by name (v0-v5's names, or a name from v6) or by topic id (v6); an unknown name is
  UNKNOWN_TOPIC_OR_PARTITION, an unknown id UNKNOWN_TOPIC_ID, both or neither given INVALID_REQUEST, a name or
  id given twice INVALID_REQUEST. The topic's logs, pending reassignments and committed offsets go with it
  (`Cluster.delete_topic`).
"""

from __future__ import annotations

import uuid
from typing import Any

from kafka.protocol.admin import CreatePartitionsResponse, DeleteTopicsResponse

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.context import Context
from leader_election_cli.sandbox.controller.cluster import Cluster
from leader_election_cli.sandbox.controller.model import Mode
from leader_election_cli.sandbox.sizing import size_problem

ZERO_UUID = uuid.UUID(int=0)
Result = tuple[int, str | None]  # an error code and message


def unreachable_replication_factor(c: Cluster, rf: int) -> str | None:
    """The placer's refusal of a replication factor more than the unfenced brokers (CreateTopics and
    CreatePartitions: `StripedReplicaPlacer.place` in KRaft, `AdminUtils.assignReplicasToBrokers` in zk mode)."""
    live = len(c.live)
    if 1 <= rf <= live:
        return None
    if c.mode is Mode.KRAFT:
        return (f"Unable to replicate the partition {rf} time(s): The target replication factor of {rf} cannot be "
                f"reached because only {live} broker(s) are registered.")
    return f"Replication factor: {rf} larger than available brokers: {live}."


def _not_controller(ctx: Context) -> bool:
    c = ctx.cluster
    return c.mode is Mode.ZK and ctx.broker_id != c.controller_id


# -- CreatePartitions -------------------------------------------------------------------------------

def create_partitions(ctx: Context, req: Any) -> Any:
    if _not_controller(ctx):
        return create_partitions_error(ctx, req, ke.NOT_CONTROLLER, None)
    names = [t.name for t in req.topics]
    results = []
    with ctx.cluster.lock:
        for t in req.topics:
            if names.count(t.name) > 1:
                code, message = ke.INVALID_REQUEST, "Duplicate topic name."
            else:
                code, message = _create_partitions(ctx.cluster, t, bool(req.validate_only))
            results.append(CreatePartitionsResponse.CreatePartitionsTopicResult(
                name=t.name, error_code=code, error_message=message))
    return CreatePartitionsResponse(version=ctx.version, throttle_time_ms=0, results=results)


def _create_partitions(c: Cluster, t: Any, validate_only: bool) -> Result:
    topic = c.topics.get(t.name)
    if topic is None:
        return ke.UNKNOWN_TOPIC_OR_PARTITION, None
    now = len(topic.partitions)
    if t.count <= now:
        return ke.INVALID_PARTITIONS, _no_increase(c, t.name, now, t.count)
    rf = len(topic.partitions[0].replicas)
    too_big = size_problem(sum(len(other.partitions) for other in c.topics.values()) + t.count - now, rf)
    if too_big:  # the sandbox's own bound (sizing.py)
        return ke.INVALID_PARTITIONS, too_big
    if t.assignments is not None:
        assignments = [list(a.broker_ids) for a in t.assignments]
        problem = _assignment_problem(c, assignments, t.count - now, rf, now)
        if problem:
            return ke.INVALID_REPLICA_ASSIGNMENT, problem
    else:
        problem = unreachable_replication_factor(c, rf)
        if problem:
            return ke.INVALID_REPLICATION_FACTOR, problem
        placed = c.default_assignment(t.count, rf)
        assignments = [placed[pid] for pid in range(now, t.count)]
    if not validate_only:
        c.add_partitions(t.name, assignments)
    return ke.NONE, None


def _no_increase(c: Cluster, name: str, now: int, count: int) -> str:
    if c.mode is Mode.ZK:
        return (f"Topic already has {now} partitions." if count == now else
                f"Topic currently has {now} partitions, which is higher than the requested {count}.")
    return (f"Topic already has {now} partition(s)." if count == now else
            f"The topic {name} currently has {now} partition(s); {count} would not be an increase.")


def _assignment_problem(c: Cluster, assignments: list[list[int]], additional: int, rf: int,
                        first: int) -> str | None:
    """`createPartitions`' checks of the assignments given, and `validateManualPartitionAssignment`'s."""
    if len(assignments) != additional:
        return (f"Attempted to add {additional} additional partition(s), but only {len(assignments)} "
                "assignment(s) were specified.")
    for i, replicas in enumerate(assignments):
        if not replicas:
            return "The manual partition assignment includes an empty replica list."
        previous = None
        for broker in sorted(replicas):
            if broker not in c.broker_ids:
                return (f"The manual partition assignment includes broker {broker}, but no such broker is "
                        "registered.")
            if broker == previous:
                return f"The manual partition assignment includes the broker {broker} more than once."
            previous = broker
        if len(replicas) != rf:
            return (f"The manual partition assignment includes a partition with {len(replicas)} replica(s), but "
                    f"this is not consistent with previous partitions, which have {rf} replica(s).")
        if not any(r in c.live for r in replicas):
            return (f"All brokers specified in the manual partition assignment for partition {first + i} are "
                    "fenced or in controlled shutdown.")
    return None


def create_partitions_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = CreatePartitionsResponse
    return R(version=ctx.version, throttle_time_ms=0, results=[
        R.CreatePartitionsTopicResult(name=t.name, error_code=code, error_message=message) for t in req.topics])


# -- DeleteTopics -----------------------------------------------------------------------------------

def delete_topics(ctx: Context, req: Any) -> Any:
    if _not_controller(ctx):
        return delete_topics_error(ctx, req, ke.NOT_CONTROLLER, None)
    asked = _asked(ctx, req)
    names = [name for name, topic_id in asked if name is not None and topic_id == ZERO_UUID]
    ids = [topic_id for name, topic_id in asked if name is None and topic_id != ZERO_UUID]
    results = []
    c = ctx.cluster
    with c.lock:
        for name, topic_id in asked:
            if name is not None and topic_id != ZERO_UUID:
                results.append((name, topic_id, ke.INVALID_REQUEST,
                                "You may not specify both topic name and topic id."))
            elif name is None and topic_id == ZERO_UUID:
                results.append((None, ZERO_UUID, ke.INVALID_REQUEST, "Neither topic name nor id were specified."))
            elif name is not None and names.count(name) > 1:
                results.append((name, ZERO_UUID, ke.INVALID_REQUEST, "Duplicate topic name."))
            elif name is None and ids.count(topic_id) > 1:
                results.append((None, topic_id, ke.INVALID_REQUEST, "Duplicate topic id."))
            else:
                results.append(_delete_one(c, name, topic_id))
    return _delete_topics_response(ctx, results)


def _asked(ctx: Context, req: Any) -> list[tuple[str | None, uuid.UUID]]:
    """The topics a request names: (name, id), the id ZERO_UUID where only a name is given."""
    if ctx.version < 6:
        return [(name, ZERO_UUID) for name in req.topic_names]
    return [(t.name, t.topic_id or ZERO_UUID) for t in req.topics]


def _delete_one(c: Cluster, name: str | None, topic_id: uuid.UUID) -> tuple[str | None, uuid.UUID, int, str | None]:
    topic = c.topics.get(name) if name is not None else c.topic_by_id(topic_id)
    if topic is None:
        return name, topic_id, (ke.UNKNOWN_TOPIC_OR_PARTITION if name is not None else ke.UNKNOWN_TOPIC_ID), None
    c.delete_topic(topic.name)
    return topic.name, topic.topic_id, ke.NONE, None


def _delete_topics_response(ctx: Context, results: list[tuple[str | None, uuid.UUID, int, str | None]]) -> Any:
    R = DeleteTopicsResponse
    return R(version=ctx.version, throttle_time_ms=0, responses=[
        R.DeletableTopicResult(name=name, topic_id=topic_id, error_code=code, error_message=message)
        for name, topic_id, code, message in results])


def delete_topics_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return _delete_topics_response(ctx, [(name, topic_id, code, message) for name, topic_id in _asked(ctx, req)])
