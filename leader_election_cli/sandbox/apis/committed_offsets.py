"""OffsetCommit, OffsetFetch and OffsetDelete: the offsets a group commits, kept with it by its coordinator
(sandbox/groups/), so that a new leader of the group's `__consumer_offsets` partition serves them.

As Kafka's `OffsetMetadataManager` (4.1) and `ClassicGroup` check them:
- OffsetCommit (`validateOffsetCommit`): to a group that does not exist, generation -1 makes an empty ("simple")
  group; otherwise GROUP_ID_NOT_FOUND from v9, ILLEGAL_GENERATION before. `ClassicGroup.validateOffsetCommit`:
  generation -1 to an Empty group is accepted; a member id, instance id or generation names a member (UNKNOWN_MEMBER_ID,
  FENCED_INSTANCE_ID) of this generation (ILLEGAL_GENERATION); neither to a group with members is UNKNOWN_MEMBER_ID;
  a group completing a rebalance is REBALANCE_IN_PROGRESS. The error goes on every partition. A partition's metadata
  past offset.metadata.max.bytes is OFFSET_METADATA_TOO_LARGE. A commit from a member of a Stable group is also
  its heartbeat.
- OffsetFetch: the committed offset, leader epoch and metadata of each partition asked (all the group has when
  none are named), -1 and "" for one without; by group from v8; the coordinator's error at the top level from v2
  (on each partition before).
- OffsetDelete (`deleteOffsets`, `ClassicGroup.validateDeleteOffsets`): GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP for a
  group with members that does not use the consumer protocol, GROUP_SUBSCRIBED_TO_TOPIC for a topic its members
  subscribe to.
"""

from __future__ import annotations

import time
from typing import Any

from kafka.protocol.consumer import OffsetCommitResponse, OffsetDeleteResponse, OffsetFetchResponse

from leader_election_cli import kafka_errors as ke
from leader_election_cli.sandbox.apis.context import Context
from leader_election_cli.sandbox.apis.groups import coordinator_problem, now_ms
from leader_election_cli.sandbox.groups.classic_group import ClassicGroup, Committed, State
from leader_election_cli.sandbox.groups.coordinator import OFFSET_METADATA_MAX_BYTES

Fetched = tuple[int, int, int, str, int]  # partition, offset, leader epoch, metadata, error code


# -- OffsetCommit -------------------------------------------------------------------------------------

def offset_commit(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    generation = req.generation_id_or_member_epoch if ctx.version >= 1 else -1
    member_id = req.member_id if ctx.version >= 1 else ""
    instance_id = req.group_instance_id if ctx.version >= 7 else None
    asked = [(t.name, p) for t in req.topics for p in t.partitions]
    with c.lock:
        code = coordinator_problem(ctx, req.group_id)
        now = now_ms()
        group = c.groups.group(req.group_id, now) if code == ke.NONE else None
        if code == ke.NONE and group is None:
            if generation >= 0:
                code = ke.GROUP_ID_NOT_FOUND if ctx.version >= 9 else ke.ILLEGAL_GENERATION
            else:
                group = c.groups.create(req.group_id, ctx.broker_id, now)
                code = ke.COORDINATOR_NOT_AVAILABLE if group is None else ke.NONE
        if group is not None and code == ke.NONE:
            code = _commit_problem(group, member_id, instance_id, generation)
        if code != ke.NONE:
            return offset_commit_error(ctx, req, code, None)
        group.used_at = now
        group.touch(member_id, now)
        codes = {}
        kept = {}
        stamp = int(time.time() * 1000)
        for name, p in asked:
            if p.committed_metadata is not None and len(p.committed_metadata.encode()) > OFFSET_METADATA_MAX_BYTES:
                codes[(name, p.partition_index)] = ke.OFFSET_METADATA_TOO_LARGE
                continue
            epoch = p.committed_leader_epoch if ctx.version >= 6 else -1
            kept[(name, p.partition_index)] = Committed(p.committed_offset, epoch, p.committed_metadata or "", stamp)
        codes.update(c.groups.commit(group, kept))
    return _commit_response(ctx, req, codes)


def _commit_problem(group: ClassicGroup, member_id: str, instance_id: str | None, generation: int) -> int:
    """`ClassicGroup.validateOffsetCommit`."""
    if group.state is State.DEAD:
        return ke.COORDINATOR_NOT_AVAILABLE
    if generation < 0 and group.state is State.EMPTY:
        return ke.NONE
    if generation >= 0 or member_id or instance_id is not None:
        code = group.validate_member(member_id, instance_id)
        if code != ke.NONE:
            return code
        if generation != group.generation:
            return ke.ILLEGAL_GENERATION
    elif group.state is not State.EMPTY:
        return ke.UNKNOWN_MEMBER_ID
    return ke.REBALANCE_IN_PROGRESS if group.state is State.COMPLETING_REBALANCE else ke.NONE


def _commit_response(ctx: Context, req: Any, codes: dict[tuple[str, int], int]) -> Any:
    T = OffsetCommitResponse.OffsetCommitResponseTopic
    return OffsetCommitResponse(version=ctx.version, throttle_time_ms=0, topics=[
        T(name=t.name, topic_id=getattr(t, "topic_id", None), partitions=[
            T.OffsetCommitResponsePartition(partition_index=p.partition_index,
                                            error_code=codes.get((t.name, p.partition_index), ke.NONE))
            for p in t.partitions]) for t in req.topics])


def offset_commit_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return _commit_response(ctx, req, {(t.name, p.partition_index): code for t in req.topics for p in t.partitions})


# -- OffsetFetch --------------------------------------------------------------------------------------

def offset_fetch(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    if ctx.version >= 8:
        asked = [(g.group_id, None if g.topics is None else [(t.name, list(t.partition_indexes))
                                                              for t in g.topics]) for g in req.groups]
    else:
        topics = None if req.topics is None else [(t.name, list(t.partition_indexes)) for t in req.topics]
        asked = [(req.group_id, topics)]
    with c.lock:
        fetched = [(group_id, *_fetch(ctx, group_id, topics)) for group_id, topics in asked]
    return _fetch_response(ctx, fetched)


def _fetch(ctx: Context, group_id: str, topics: list[tuple[str, list[int]]] | None,
           ) -> tuple[int, list[tuple[str, list[Fetched]]]]:
    """(the group's error, by topic the partitions' committed offsets)."""
    code = coordinator_problem(ctx, group_id)
    if code != ke.NONE:
        return code, [(name, [(pid, -1, -1, "", code) for pid in pids]) for name, pids in topics or []]
    group = ctx.cluster.groups.group(group_id, now_ms())
    offsets = group.offsets if group is not None else {}
    if topics is None:
        names = sorted({name for name, _ in offsets})
        topics = [(name, sorted(p for t, p in offsets if t == name)) for name in names]
    answered = []
    for name, pids in topics:
        partitions = []
        for pid in pids:
            found = offsets.get((name, pid))
            partitions.append((pid, found.offset, found.leader_epoch, found.metadata, ke.NONE) if found
                              else (pid, -1, -1, "", ke.NONE))
        answered.append((name, partitions))
    return ke.NONE, answered


def _fetch_response(ctx: Context, groups: list[tuple[str, int, list[tuple[str, list[Fetched]]]]]) -> Any:
    R = OffsetFetchResponse
    if ctx.version >= 8:
        G = R.OffsetFetchResponseGroup
        T = G.OffsetFetchResponseTopics
        return R(version=ctx.version, throttle_time_ms=0, groups=[G(group_id=group_id, error_code=code, topics=[
            T(name=name, partitions=[T.OffsetFetchResponsePartitions(
                partition_index=p, committed_offset=o, committed_leader_epoch=e, metadata=m, error_code=pc)
                for p, o, e, m, pc in partitions]) for name, partitions in topics])
            for group_id, code, topics in groups])
    T = R.OffsetFetchResponseTopic
    _, code, topics = groups[0]
    return R(version=ctx.version, throttle_time_ms=0, error_code=code, topics=[
        T(name=name, partitions=[T.OffsetFetchResponsePartition(
            partition_index=p, committed_offset=o, committed_leader_epoch=e, metadata=m, error_code=pc)
            for p, o, e, m, pc in partitions]) for name, partitions in topics])


def offset_fetch_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    if ctx.version >= 8:
        return _fetch_response(ctx, [(g.group_id, code, []) for g in req.groups])
    topics = [(t.name, [(p, -1, -1, "", code) for p in t.partition_indexes]) for t in req.topics or []]
    return _fetch_response(ctx, [(req.group_id, code, topics)])


# -- OffsetDelete -------------------------------------------------------------------------------------

def offset_delete(ctx: Context, req: Any) -> Any:
    c = ctx.cluster
    with c.lock:
        code = coordinator_problem(ctx, req.group_id)
        group = c.groups.group(req.group_id, now_ms()) if code == ke.NONE else None
        if code == ke.NONE and (group is None or group.state is State.DEAD):
            code = ke.GROUP_ID_NOT_FOUND
        elif group is not None and group.state is not State.EMPTY and group.protocol_type != "consumer":
            code = ke.NON_EMPTY_GROUP
        if code != ke.NONE or group is None:
            return offset_delete_error(ctx, req, code, None)
        subscribed = group.subscribed_topics()
        codes = {}
        for t in req.topics:
            if subscribed is None or t.name in subscribed:
                codes.update({(t.name, p.partition_index): ke.GROUP_SUBSCRIBED_TO_TOPIC for p in t.partitions})
            else:
                c.groups.delete_offsets(group, [(t.name, p.partition_index) for p in t.partitions])
    return _delete_response(ctx, req, ke.NONE, codes)


def _delete_response(ctx: Context, req: Any, code: int, codes: dict[tuple[str, int], int]) -> Any:
    R = OffsetDeleteResponse
    T = R.OffsetDeleteResponseTopic
    return R(version=ctx.version, error_code=code, throttle_time_ms=0, topics=[] if code != ke.NONE else [
        T(name=t.name, partitions=[T.OffsetDeleteResponsePartition(
            partition_index=p.partition_index, error_code=codes.get((t.name, p.partition_index), ke.NONE))
            for p in t.partitions]) for t in req.topics])


def offset_delete_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return _delete_response(ctx, req, code, {})
