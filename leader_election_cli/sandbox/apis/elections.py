"""ElectLeaders, AlterPartitionReassignments and ListPartitionReassignments, as a broker answers them."""

from __future__ import annotations

from typing import Any

from kafka.protocol.admin import (
    AlterPartitionReassignmentsResponse,
    ElectLeadersResponse,
    ListPartitionReassignmentsResponse,
)

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.context import (
    ALTER,
    Context,
)
from leader_election_cli.sandbox.controller.elections import (
    POLICY_VIOLATION_MESSAGE,
    ElectionAnswer,
    ItemResult,
    error_answer,
)
from leader_election_cli.sandbox.controller.model import (
    Mode,
)

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


def _request_text(ctx: Context) -> str:
    """How Kafka's `RequestChannel.Request` prints itself in an authorization failure."""
    return (f"Request(processor=0, connectionId={ctx.connection_id}, "
            f"session=Session(User:{ctx.principal},/127.0.0.1), "
            f"listenerName=ListenerName({ctx.security_protocol}), "
            f"securityProtocol={ctx.security_protocol}, buffer=null, envelope=None)")
