"""FindCoordinator, JoinGroup, SyncGroup, Heartbeat, LeaveGroup, ListGroups, DescribeGroups and DeleteGroups, over
the group coordinator of sandbox/groups/ (whose docstrings name the Kafka rules).

As Kafka's `KafkaApis` and `GroupCoordinatorService` answer them:
- FindCoordinator (`KafkaApis.getCoordinator`): a group's coordinator is the leader of its `__consumer_offsets`
  partition; the topic is made by the first request, which is answered COORDINATOR_NOT_AVAILABLE, as is a
  partition without a live leader. The sandbox has no transaction coordinator (InitProducerId with a
  transactional id is COORDINATOR_NOT_AVAILABLE: produce_fetch.py), so a TRANSACTION key is answered the same;
  share groups are not enabled: a SHARE key is UNSUPPORTED_VERSION; an unknown key type INVALID_REQUEST. The
  error message is `Errors.message()`, "NONE" when there is none, as Kafka sends it.
- Every group request but FindCoordinator and ListGroups to a broker that does not lead the group's partition:
  NOT_COORDINATOR; while it loads the partition COORDINATOR_LOAD_IN_PROGRESS (a Heartbeat NONE; ListGroups as a
  whole, `GroupCoordinatorService.listGroups`); an empty group id: INVALID_GROUP_ID; a session timeout outside
  group.min/max.session.timeout.ms: INVALID_SESSION_TIMEOUT (`GroupCoordinatorService.joinGroup`).
- JoinGroup and SyncGroup wait, held as Kafka holds them, until the group answers (`classic_group.Waiter`).
- ListGroups: the groups this broker coordinates, by state (v4+) and type (v5+, "classic").
- DescribeGroups (`GroupMetadataManager.describeGroups`): a Stable group's protocol and its members' metadata and
  assignments, other states' members without them; a group that does not exist is Dead, GROUP_ID_NOT_FOUND from v6.
- DeleteGroups: GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP (`ClassicGroup.validateDeleteGroup`), else the group and its
  offsets are gone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from kafka.protocol.admin import DeleteGroupsResponse, DescribeGroupsResponse, ListGroupsResponse
from kafka.protocol.consumer import HeartbeatResponse, JoinGroupResponse, LeaveGroupResponse, SyncGroupResponse
from kafka.protocol.metadata import FindCoordinatorResponse

from leader_election_cli import kafka_errors as ke
from leader_election_cli.model import NO_LEADER, OFFSETS_TOPIC
from leader_election_cli.sandbox.apis.context import Context
from leader_election_cli.sandbox.apis.produce_fetch import POLL_S
from leader_election_cli.sandbox.controller.cluster import Cluster
from leader_election_cli.sandbox.controller.model import Mode
from leader_election_cli.sandbox.groups.classic_group import (
    MEMBER_OVERHEAD,
    ClassicGroup,
    JoinAnswer,
    Joining,
    State,
    SyncAnswer,
    Waiter,
)
from leader_election_cli.sandbox.groups.coordinator import partition_for

GROUP, TRANSACTION, SHARE = 0, 1, 2  # CoordinatorType
GROUP_OPERATIONS = {3, 6, 8}  # READ DELETE DESCRIBE (AclEntry.supportedOperations(GROUP))
# GroupCoordinator.groupMetadataTopicConfigs: what __consumer_offsets is made with
OFFSETS_TOPIC_CONFIGS = {"cleanup.policy": "compact", "compression.type": "producer", "segment.bytes": "104857600"}


def now_ms() -> float:
    return time.monotonic() * 1000


def coordinator_of(c: Cluster, group_id: str) -> int:
    """The leader of the group's `__consumer_offsets` partition (NO_LEADER without one, or without the topic)."""
    topic = c.topics.get(OFFSETS_TOPIC)
    if topic is None:
        return NO_LEADER
    return topic.partitions[partition_for(group_id, len(topic.partitions))].leader


def coordinator_problem(ctx: Context, group_id: str) -> int:
    """INVALID_GROUP_ID for an empty id, NOT_COORDINATOR unless this broker coordinates the group,
    COORDINATOR_LOAD_IN_PROGRESS while it loads the group's partition, else NONE."""
    if not group_id:
        return ke.INVALID_GROUP_ID
    if coordinator_of(ctx.cluster, group_id) != ctx.broker_id:
        return ke.NOT_COORDINATOR
    return ke.COORDINATOR_LOAD_IN_PROGRESS if ctx.cluster.groups.is_loading(group_id, now_ms()) else ke.NONE


def client_host(ctx: Context) -> str:
    """`RequestContext.clientAddress.toString()`: "/" and the client's address."""
    return "/" + ctx.connection_id.split("-")[1].rsplit(":", 1)[0] if "-" in ctx.connection_id else "/127.0.0.1"


async def held(ctx: Context, group_id: str, waiter: Waiter, answer: Callable[[Any], Any], lost: Any) -> Any:
    """A JoinGroup or SyncGroup held until its group answers it (the group's timers run meanwhile); `lost` is the
    answer when the group is gone."""
    c = ctx.cluster
    while True:
        with c.lock:
            group = c.groups.group(group_id, now_ms())
            if waiter.answer is not None:
                return answer(waiter.answer)
            if group is None:
                return answer(lost)
        await asyncio.sleep(POLL_S)


# -- FindCoordinator --------------------------------------------------------------------------------

def find_coordinator(ctx: Context, req: Any) -> Any:
    R = FindCoordinatorResponse
    key_type = req.key_type if ctx.version >= 1 else GROUP
    keys = list(req.coordinator_keys) if ctx.version >= 4 else [req.key]
    with ctx.cluster.lock:
        found = [_find(ctx.cluster, key_type, key) for key in keys]
    if ctx.version >= 4:
        return R(version=ctx.version, throttle_time_ms=0, coordinators=[
            R.Coordinator(key=key, node_id=node, host=host, port=port, error_code=code,
                          error_message=_message(code))
            for key, (code, node, host, port) in zip(keys, found, strict=True)])
    code, node, host, port = found[0]
    return R(version=ctx.version, throttle_time_ms=0, error_code=code, node_id=node, host=host, port=port,
             error_message=_message(code))


def _message(code: int) -> str:
    """`Errors.message()`: the exception's message, the error's name ("NONE") where it has none."""
    return "NONE" if code == ke.NONE else ke.lookup(code).message


def _find(c: Cluster, key_type: int, key: str) -> tuple[int, int, str, int]:
    """(error, node id, host, port) of the coordinator of `key` (Node.noNode with an error)."""
    if key_type == TRANSACTION:
        return ke.COORDINATOR_NOT_AVAILABLE, -1, "", -1
    if key_type == SHARE:
        return ke.UNSUPPORTED_VERSION, -1, "", -1
    if key_type != GROUP:
        return ke.INVALID_REQUEST, -1, "", -1
    if OFFSETS_TOPIC not in c.topics:
        _create_offsets_topic(c)
        return ke.COORDINATOR_NOT_AVAILABLE, -1, "", -1
    leader = coordinator_of(c, key)
    if leader == NO_LEADER or leader not in c.live or leader not in c.addresses:
        return ke.COORDINATOR_NOT_AVAILABLE, -1, "", -1
    host, port = c.addresses[leader]
    return ke.NONE, leader, host, port


def _create_offsets_topic(c: Cluster) -> None:
    """`AutoTopicCreationManager` (through the controller: none while the quorum has no leader)."""
    if (c.mode is Mode.KRAFT and not c.has_active_controller()) or not c.live:
        return
    partitions = int(c.broker_configs["offsets.topic.num.partitions"])
    rf = min(int(c.broker_configs["offsets.topic.replication.factor"]), len(c.live))
    c.create_topic(OFFSETS_TOPIC, c.default_assignment(partitions, rf), OFFSETS_TOPIC_CONFIGS)


def find_coordinator_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    R = FindCoordinatorResponse
    text = message or ke.lookup(code).message
    if ctx.version >= 4:
        return R(version=ctx.version, throttle_time_ms=0, coordinators=[
            R.Coordinator(key=k, node_id=-1, host="", port=-1, error_code=code, error_message=text)
            for k in req.coordinator_keys])
    return R(version=ctx.version, throttle_time_ms=0, error_code=code, error_message=text, node_id=-1, host="",
             port=-1)


# -- JoinGroup ----------------------------------------------------------------------------------------

def join_group(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    instance_id = req.group_instance_id if ctx.version >= 5 else None
    rebalance_timeout = req.rebalance_timeout_ms if ctx.version >= 1 else req.session_timeout_ms
    protocols = tuple((p.name, bytes(p.metadata or b"")) for p in req.protocols)
    with c.lock:
        code = coordinator_problem(ctx, req.group_id)
        config = c.groups.config
        if code == ke.NONE and not config.min_session_timeout_ms <= req.session_timeout_ms \
                <= config.max_session_timeout_ms:
            code = ke.INVALID_SESSION_TIMEOUT
        if code != ke.NONE:
            return join_group_error(ctx, req, code, None)
        now = now_ms()
        group = c.groups.group(req.group_id, now)
        if group is None:
            if req.member_id:  # GroupIdNotFoundException for a known member: UNKNOWN_MEMBER_ID
                return _join_response(ctx, JoinAnswer(ke.UNKNOWN_MEMBER_ID, req.member_id))
            group = c.groups.create(req.group_id, ctx.broker_id, now)
            if group is None:
                return join_group_error(ctx, req, ke.COORDINATOR_NOT_AVAILABLE, None)
        if not c.groups.room_for(group, MEMBER_OVERHEAD + sum(len(n) + len(m) for n, m in protocols)):
            return _join_response(ctx, JoinAnswer(ke.GROUP_MAX_SIZE_REACHED, ""))
        answer = group.join(Joining(req.member_id, instance_id, req.header.client_id or "", client_host(ctx),
                                    req.session_timeout_ms, rebalance_timeout, req.protocol_type, protocols,
                                    ctx.version), now)
    if isinstance(answer, JoinAnswer):
        return _join_response(ctx, answer)
    return held(ctx, req.group_id, answer, lambda a: _join_response(ctx, a),
                JoinAnswer(ke.NOT_COORDINATOR, req.member_id))


def _join_response(ctx: Context, a: JoinAnswer) -> Any:
    R = JoinGroupResponse
    # JoinGroupResponse: a null protocol name is sent as "" below v7 (the field is not nullable there)
    name = a.protocol_name if a.protocol_name is not None or ctx.version >= 7 else ""
    return R(version=ctx.version, throttle_time_ms=0, error_code=a.error_code, generation_id=a.generation,
             protocol_type=a.protocol_type, protocol_name=name, leader=a.leader, skip_assignment=a.skip_assignment,
             member_id=a.member_id, members=[R.JoinGroupResponseMember(member_id=m, group_instance_id=i, metadata=md)
                                             for m, i, md in a.members])


def join_group_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return _join_response(ctx, JoinAnswer(code, req.member_id if code != ke.GROUP_MAX_SIZE_REACHED else ""))


# -- SyncGroup -------------------------------------------------------------------------------------

def sync_group(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    instance_id = req.group_instance_id if ctx.version >= 3 else None
    protocol_type, protocol_name = (req.protocol_type, req.protocol_name) if ctx.version >= 5 else (None, None)
    assignments = {a.member_id: bytes(a.assignment or b"") for a in req.assignments}
    with c.lock:
        code = coordinator_problem(ctx, req.group_id)
        if code != ke.NONE:
            return sync_group_error(ctx, req, code, None)
        now = now_ms()
        group = c.groups.group(req.group_id, now)
        if group is None:
            return _sync_response(ctx, SyncAnswer(ke.UNKNOWN_MEMBER_ID))
        if assignments and not c.groups.room_for(group, sum(map(len, assignments.values()))):
            # a group record too large for the log: appendGroupMetadataErrorToResponseError's UNKNOWN_SERVER_ERROR
            return _sync_response(ctx, SyncAnswer(ke.UNKNOWN_SERVER_ERROR))
        answer = group.sync(req.member_id, instance_id, req.generation_id, protocol_type, protocol_name,
                            assignments, now)
    if isinstance(answer, SyncAnswer):
        return _sync_response(ctx, answer)
    return held(ctx, req.group_id, answer, lambda a: _sync_response(ctx, a), SyncAnswer(ke.NOT_COORDINATOR))


def _sync_response(ctx: Context, a: SyncAnswer) -> Any:
    return SyncGroupResponse(version=ctx.version, throttle_time_ms=0, error_code=a.error_code,
                             protocol_type=a.protocol_type, protocol_name=a.protocol_name, assignment=a.assignment)


def sync_group_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return _sync_response(ctx, SyncAnswer(code))


# -- Heartbeat ----------------------------------------------------------------------------------------

def heartbeat(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    with c.lock:
        code = coordinator_problem(ctx, req.group_id)
        if code == ke.NONE:
            group = c.groups.group(req.group_id, now_ms())
            code = ke.UNKNOWN_MEMBER_ID if group is None else group.heartbeat(
                req.member_id, req.group_instance_id if ctx.version >= 3 else None, req.generation_id, now_ms())
        elif code == ke.COORDINATOR_LOAD_IN_PROGRESS:  # "the group is still loading, so blindly respond"
            code = ke.NONE
    return heartbeat_error(ctx, req, code, None)


def heartbeat_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return HeartbeatResponse(version=ctx.version, throttle_time_ms=0, error_code=code)


# -- LeaveGroup ---------------------------------------------------------------------------------------

def leave_group(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    leaving = [(m.member_id, m.group_instance_id) for m in req.members] if ctx.version >= 3 \
        else [(req.member_id, None)]
    with c.lock:
        code = coordinator_problem(ctx, req.group_id)
        if code != ke.NONE:
            return leave_group_error(ctx, req, code, None)
        now = now_ms()
        group = c.groups.group(req.group_id, now)
        codes = [ke.UNKNOWN_MEMBER_ID] * len(leaving) if group is None else group.leave(leaving, now)
    R = LeaveGroupResponse
    if ctx.version < 3:  # LeaveGroupResponse: the member's error at the top level
        return R(version=ctx.version, throttle_time_ms=0, error_code=codes[0], members=[])
    return R(version=ctx.version, throttle_time_ms=0, error_code=ke.NONE, members=[
        R.MemberResponse(member_id=m, group_instance_id=i, error_code=code)
        for (m, i), code in zip(leaving, codes, strict=True)])


def leave_group_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return LeaveGroupResponse(version=ctx.version, throttle_time_ms=0, error_code=code, members=[])


# -- ListGroups, DescribeGroups, DeleteGroups ----------------------------------------------------------

def list_groups(ctx: Context, req: Any) -> Any:
    R = ListGroupsResponse
    c = ctx.cluster
    states = {s.lower() for s in req.states_filter} if ctx.version >= 4 and req.states_filter else None
    types = {t.lower() for t in req.types_filter} if ctx.version >= 5 and req.types_filter else None
    with c.lock:
        now = now_ms()
        if c.groups.loads_on(ctx.broker_id, now):
            return list_groups_error(ctx, req, ke.COORDINATOR_LOAD_IN_PROGRESS, None)
        listed = [R.ListedGroup(group_id=g.group_id, protocol_type=g.protocol_type or "", group_state=g.state.value,
                                group_type="classic")
                  for g in c.groups.in_all(now) if coordinator_of(c, g.group_id) == ctx.broker_id
                  and (states is None or g.state.value.lower() in states) and (types is None or "classic" in types)]
    return R(version=ctx.version, throttle_time_ms=0, error_code=ke.NONE, groups=listed)


def list_groups_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return ListGroupsResponse(version=ctx.version, throttle_time_ms=0, error_code=code, groups=[])


def describe_groups(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    operations = ctx.allowed(GROUP_OPERATIONS) if ctx.version >= 3 and req.include_authorized_operations else None
    with c.lock:
        described = [_describe(ctx, group_id, operations) for group_id in req.groups]
    return DescribeGroupsResponse(version=ctx.version, throttle_time_ms=0, groups=described)


def _describe(ctx: Context, group_id: str, operations: set[int] | None) -> Any:
    G = DescribeGroupsResponse.DescribedGroup
    code = coordinator_problem(ctx, group_id)
    if code != ke.NONE:
        return _described_error(ctx, group_id, code)
    group = ctx.cluster.groups.group(group_id, now_ms())
    if group is None:
        if ctx.version >= 6:
            return G(error_code=ke.GROUP_ID_NOT_FOUND, error_message=f"Group {group_id} not found.",
                     group_id=group_id, group_state=State.DEAD.value, protocol_type="", protocol_data="", members=[],
                     authorized_operations=operations)
        return G(error_code=ke.NONE, error_message=None, group_id=group_id, group_state=State.DEAD.value,
                 protocol_type="", protocol_data="", members=[], authorized_operations=operations)
    return G(error_code=ke.NONE, error_message=None, group_id=group_id, group_state=group.state.value,
             protocol_type=group.protocol_type or "",
             protocol_data=group.protocol_name or "" if group.state is State.STABLE else "",
             members=_members(group), authorized_operations=operations)


def _members(group: ClassicGroup) -> list[Any]:
    """`ClassicGroupMember.describe` in a Stable group, `describeNoMetadata` otherwise."""
    M = DescribeGroupsResponse.DescribedGroup.DescribedGroupMember
    stable = group.state is State.STABLE
    return [M(member_id=m.member_id, group_instance_id=m.instance_id, client_id=m.client_id,
              client_host=m.client_host, member_metadata=m.metadata(group.protocol_name) if stable else b"",
              member_assignment=m.assignment if stable else b"") for m in group.members.values()]


def _described_error(ctx: Context, group_id: str, code: int) -> Any:
    return DescribeGroupsResponse.DescribedGroup(
        error_code=code, error_message=None, group_id=group_id, group_state="", protocol_type="", protocol_data="",
        members=[], authorized_operations=None)


def describe_groups_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return DescribeGroupsResponse(version=ctx.version, throttle_time_ms=0,
                                  groups=[_described_error(ctx, g, code) for g in req.groups])


def delete_groups(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    results = []
    with c.lock:
        for group_id in req.groups_names:
            code = coordinator_problem(ctx, group_id)
            if code == ke.NONE:
                group = c.groups.group(group_id, now_ms())
                if group is None or group.state is State.DEAD:
                    code = ke.GROUP_ID_NOT_FOUND
                elif group.state is not State.EMPTY:
                    code = ke.NON_EMPTY_GROUP
                else:
                    c.groups.delete(group_id)
            results.append((group_id, code))
    return _delete_groups_response(ctx, results)


def _delete_groups_response(ctx: Context, results: list[tuple[str, int]]) -> Any:
    R = DeleteGroupsResponse
    return R(version=ctx.version, throttle_time_ms=0,
             results=[R.DeletableGroupResult(group_id=g, error_code=code) for g, code in results])


def delete_groups_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return _delete_groups_response(ctx, [(g, code) for g in req.groups_names])
