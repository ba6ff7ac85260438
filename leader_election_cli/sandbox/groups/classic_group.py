"""One classic group's state machine, as Kafka's group coordinator runs it (group-coordinator:
`GroupMetadataManager`'s classic-group methods and `classic/ClassicGroup`, `ClassicGroupState`, 4.1).

- States: Empty, PreparingRebalance, CompletingRebalance, Stable, Dead (`ClassicGroupState`).
- JoinGroup (`classicGroupJoinToClassicGroup`): a member past `group.max.size` is refused GROUP_MAX_SIZE_REACHED
  (`acceptJoiningMember`); protocols none of the members share are INCONSISTENT_GROUP_PROTOCOL
  (`supportsProtocols`); a new dynamic member gets its id with MEMBER_ID_REQUIRED from v4 on and is pending until
  it joins with it (`classicGroupJoinNewDynamicMember`); a static member (group.instance.id) joining again with
  an unknown id replaces its old id, the old one fenced (FENCED_INSTANCE_ID), and a Stable group whose protocol
  stays is not rebalanced (`updateStaticMemberThenRebalanceOrCompleteJoin`); a follower joining a Stable group
  unchanged gets the current generation, the leader or a changed member starts a rebalance
  (`classicGroupJoinExistingMember`).
- The join phase completes when every member has rejoined and none is pending (`hasAllMembersJoined`), or at the
  rebalance timeout, the dynamic members that did not rejoin removed (`completeClassicGroupJoin`); a group
  rebalancing from Empty waits `group.initial.rebalance.delay.ms` first, longer while new members keep coming, up
  to the rebalance timeout (`InitialDelayedJoin`). Each completion is a new generation; the leader (kept, else
  the first to join) gets every member's metadata of the protocol chosen by vote (`selectProtocol`).
- SyncGroup: the leader's assignment is handed to every member and the group is Stable; a member past the
  rebalance timeout without syncing is removed and the group rebalances (`expirePendingSync`).
- Heartbeat: REBALANCE_IN_PROGRESS while preparing a rebalance; a member whose session times out is removed
  and the group rebalances (`expireClassicGroupMemberHeartbeat`); members waiting in a join or sync do not
  time out.
- LeaveGroup (`classicGroupLeave`): members leave by member id, static ones by instance id (another member id
  for it: FENCED_INSTANCE_ID); the group rebalances.
- What is kept in `__consumer_offsets` (the group as of its last completed sync, or its last empty generation)
  is what a new coordinator loads (`onLoaded`): in-flight joins and syncs are answered NOT_COORDINATOR
  (`onUnloaded`).
Times are in milliseconds of `time.monotonic()`.
"""

from __future__ import annotations

import copy
import uuid
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from leader_election_cli import kafka_errors as ke

MEMBER_ID_REQUIRED_FROM = 4  # JoinGroupRequest.requiresKnownMemberId: v4+
MEMBER_OVERHEAD = 400  # bytes a member costs beyond its metadata and assignment


class State(str, Enum):
    EMPTY = "Empty"
    PREPARING_REBALANCE = "PreparingRebalance"
    COMPLETING_REBALANCE = "CompletingRebalance"
    STABLE = "Stable"
    DEAD = "Dead"


class GroupConfig(NamedTuple):
    """The broker's group settings a group follows."""

    min_session_timeout_ms: int
    max_session_timeout_ms: int
    initial_rebalance_delay_ms: int
    max_size: int


class Joining(NamedTuple):
    """A JoinGroup request as the group reads it."""

    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    version: int


class JoinAnswer(NamedTuple):
    error_code: int
    member_id: str
    generation: int = -1
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str = ""
    members: tuple[tuple[str, str | None, bytes], ...] = ()  # the leader's: (member id, instance id, metadata)
    skip_assignment: bool = False


class SyncAnswer(NamedTuple):
    error_code: int
    protocol_type: str | None = None
    protocol_name: str | None = None
    assignment: bytes = b""


@dataclass(slots=True)
class Waiter:
    """A JoinGroup or SyncGroup held until the group answers it."""

    answer: JoinAnswer | SyncAnswer | None = None


@dataclass(slots=True)
class Member:
    member_id: str
    instance_id: str | None
    client_id: str
    client_host: str
    session_timeout_ms: int
    rebalance_timeout_ms: int
    protocol_type: str
    protocols: tuple[tuple[str, bytes], ...]
    assignment: bytes = b""
    join: Waiter | None = None
    sync: Waiter | None = None
    expires_at: float = 0.0

    def metadata(self, protocol: str | None) -> bytes:
        return next((m for name, m in self.protocols if name == protocol), b"")

    def cost(self) -> int:
        return MEMBER_OVERHEAD + len(self.assignment) + sum(len(n) + len(m) for n, m in self.protocols)


class Committed(NamedTuple):
    """A committed offset (`OffsetAndMetadata`)."""

    offset: int
    leader_epoch: int
    metadata: str
    timestamp_ms: int


@dataclass
class Saved:
    """The group as last written to `__consumer_offsets` (its GroupMetadata record)."""

    state: State
    generation: int
    protocol_type: str | None
    protocol_name: str | None
    leader: str | None
    members: dict[str, Member]


@dataclass
class ClassicGroup:
    group_id: str
    config: GroupConfig
    used_at: float
    state: State = State.EMPTY
    generation: int = 0
    protocol_type: str | None = None
    protocol_name: str | None = None
    leader: str | None = None
    members: dict[str, Member] = field(default_factory=dict)
    pending: dict[str, float] = field(default_factory=dict)  # member id -> when it expires (MEMBER_ID_REQUIRED)
    static: dict[str, str] = field(default_factory=dict)  # group.instance.id -> member id
    deadline: float | None = None  # PreparingRebalance: the rebalance timeout; CompletingRebalance: the sync's
    initial_delay_until: float | None = None  # InitialDelayedJoin
    initial_delay_left: float = 0.0
    new_member_added: bool = False
    offsets: dict[tuple[str, int], Committed] = field(default_factory=dict)
    saved: Saved | None = None
    rebalances: int = 0  # join phases completed with members (generations handed out)

    # -- reading ---------------------------------------------------------------------------------

    def cost(self) -> int:
        return sum(m.cost() for m in self.members.values())

    def validate_member(self, member_id: str, instance_id: str | None) -> int:
        """`ClassicGroup.validateMember`."""
        if instance_id is not None:
            existing = self.static.get(instance_id)
            if existing is None:
                return ke.UNKNOWN_MEMBER_ID
            if existing != member_id:
                return ke.FENCED_INSTANCE_ID
        return ke.NONE if member_id in self.members else ke.UNKNOWN_MEMBER_ID

    def subscribed_topics(self) -> set[str] | None:
        """The topics the members subscribe to (the consumer protocol's subscriptions); None when unknown."""
        if self.protocol_type != "consumer" or self.protocol_name is None:
            return set()
        topics: set[str] = set()
        for m in self.members.values():
            found = consumer_subscription(m.metadata(self.protocol_name))
            if found is None:
                return None
            topics |= found
        return topics

    def _supports(self, protocol_type: str, protocols: tuple[tuple[str, bytes], ...]) -> bool:
        """`ClassicGroup.supportsProtocols`."""
        names = [n for n, _ in protocols]
        if self.state is State.EMPTY:
            return bool(protocol_type) and bool(names)
        return protocol_type == self.protocol_type and any(
            all(n in {p for p, _ in m.protocols} for m in self.members.values()) for n in names)

    def _accepts(self, member_id: str) -> bool:
        """`acceptJoiningMember`."""
        if self.state in (State.EMPTY, State.DEAD):
            return True
        if self.state is State.PREPARING_REBALANCE:
            member = self.members.get(member_id)
            return (member is not None and member.join is not None) or (
                sum(1 for m in self.members.values() if m.join is not None) < self.config.max_size)
        return member_id in self.members or len(self.members) < self.config.max_size

    # -- JoinGroup -------------------------------------------------------------------------------

    def join(self, request: Joining, now: float) -> JoinAnswer | Waiter:
        """A JoinGroup: its answer now, or a Waiter the join phase's end answers."""
        self.used_at = now
        if not self._accepts(request.member_id):
            self.pending.pop(request.member_id, None)
            return JoinAnswer(ke.GROUP_MAX_SIZE_REACHED, "")
        if request.member_id == "":
            return self._join_new(request, now)
        return self._join_existing(request, now)

    def _join_new(self, request: Joining, now: float) -> JoinAnswer | Waiter:
        if self.state is State.DEAD:
            return JoinAnswer(ke.COORDINATOR_NOT_AVAILABLE, "")
        if not self._supports(request.protocol_type, request.protocols):
            return JoinAnswer(ke.INCONSISTENT_GROUP_PROTOCOL, "")
        new_id = f"{request.instance_id or request.client_id}-{uuid.uuid4()}"  # generateMemberId
        if request.instance_id is not None:
            existing = self.static.get(request.instance_id)
            if existing is not None:
                return self._replace_static(request, existing, new_id, now)
            return self._add(request, new_id, now)
        if request.version >= MEMBER_ID_REQUIRED_FROM:
            self.pending[new_id] = now + request.session_timeout_ms
            return JoinAnswer(ke.MEMBER_ID_REQUIRED, new_id)
        return self._add(request, new_id, now)

    def _join_existing(self, request: Joining, now: float) -> JoinAnswer | Waiter:
        member_id = request.member_id
        if self.state is State.DEAD:
            return JoinAnswer(ke.COORDINATOR_NOT_AVAILABLE, member_id)
        if not self._supports(request.protocol_type, request.protocols):
            return JoinAnswer(ke.INCONSISTENT_GROUP_PROTOCOL, member_id)
        if member_id in self.pending and request.instance_id is None:
            return self._add(request, member_id, now)
        code = self.validate_member(member_id, request.instance_id)
        if code != ke.NONE:
            return JoinAnswer(code, member_id)
        member = self.members[member_id]
        unchanged = member.protocols == request.protocols
        if self.state is State.PREPARING_REBALANCE:
            return self._update_and_rebalance(member, request, now)
        if self.state is State.COMPLETING_REBALANCE:
            if unchanged:  # it missed the JoinGroup answer: the current generation again
                return self._current(member_id, with_members=member_id == self.leader)
            return self._update_and_rebalance(member, request, now)
        if self.state is State.STABLE:
            if member_id == self.leader or not unchanged:
                return self._update_and_rebalance(member, request, now)
            return self._current(member_id, with_members=False)
        return JoinAnswer(ke.UNKNOWN_MEMBER_ID, member_id)

    def _current(self, member_id: str, with_members: bool, skip_assignment: bool = False) -> JoinAnswer:
        return JoinAnswer(ke.NONE, member_id, self.generation, self.protocol_type, self.protocol_name,
                          self.leader or "", self._member_list() if with_members else (), skip_assignment)

    def _member_list(self) -> tuple[tuple[str, str | None, bytes], ...]:
        return tuple((m.member_id, m.instance_id, m.metadata(self.protocol_name)) for m in self.members.values())

    def _add(self, request: Joining, member_id: str, now: float) -> Waiter:
        """`addMemberThenRebalanceOrCompleteJoin`."""
        self.pending.pop(member_id, None)
        waiter = Waiter()
        member = Member(member_id, request.instance_id, request.client_id, request.client_host,
                        request.session_timeout_ms, request.rebalance_timeout_ms, request.protocol_type,
                        request.protocols, join=waiter, expires_at=now + request.session_timeout_ms)
        if not self.members:
            self.protocol_type = request.protocol_type
        self.members[member_id] = member
        if request.instance_id is not None:
            self.static[request.instance_id] = member_id
        if self.leader is None:
            self.leader = member_id
        if self.state is State.PREPARING_REBALANCE and self.initial_delay_until is not None:
            self.new_member_added = True
        self._rebalance_or_complete(now)
        return waiter

    def _update_and_rebalance(self, member: Member, request: Joining, now: float) -> Waiter:
        """`updateMemberThenRebalanceOrCompleteJoin`."""
        member.protocols = request.protocols
        member.session_timeout_ms = request.session_timeout_ms
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        if member.join is not None:  # a JoinGroup it sent before: superseded
            member.join.answer = JoinAnswer(ke.UNKNOWN_MEMBER_ID, member.member_id)
        waiter = member.join = Waiter()
        self._rebalance_or_complete(now)
        return waiter

    def _replace_static(self, request: Joining, old_id: str, new_id: str, now: float) -> JoinAnswer | Waiter:
        """`updateStaticMemberThenRebalanceOrCompleteJoin`: the instance's new member id replaces the old one."""
        member = self.members.pop(old_id)
        for waiter in (member.join, member.sync):
            if waiter is not None:
                waiter.answer = (JoinAnswer(ke.FENCED_INSTANCE_ID, old_id) if waiter is member.join
                                 else SyncAnswer(ke.FENCED_INSTANCE_ID))
        member.join = member.sync = None
        member.member_id = new_id
        self.members[new_id] = member
        self.static[request.instance_id or ""] = new_id
        if self.leader == old_id:
            self.leader = new_id
        old_protocol = self.protocol_name
        member.protocols = request.protocols
        member.session_timeout_ms = request.session_timeout_ms
        member.rebalance_timeout_ms = request.rebalance_timeout_ms
        member.expires_at = now + request.session_timeout_ms
        if self.state is State.STABLE and self._select_protocol() == old_protocol:
            self._save()
            return self._current(new_id, with_members=new_id == self.leader and request.version >= 9,
                                 skip_assignment=new_id == self.leader and request.version >= 9)
        waiter = member.join = Waiter()
        self._rebalance_or_complete(now)
        return waiter

    def _rebalance_or_complete(self, now: float) -> None:
        """`maybePrepareRebalanceOrCompleteJoin`."""
        if self.state in (State.STABLE, State.COMPLETING_REBALANCE, State.EMPTY):
            self._prepare_rebalance(now)
        else:
            self.tick(now)

    def _prepare_rebalance(self, now: float) -> None:
        """`prepareRebalance`: pending syncs answered REBALANCE_IN_PROGRESS; from Empty, the initial delay."""
        if self.state is State.COMPLETING_REBALANCE:
            for m in self.members.values():
                m.assignment = b""
                if m.sync is not None:
                    m.sync.answer = SyncAnswer(ke.REBALANCE_IN_PROGRESS)
                    m.sync = None
        timeout = max((m.rebalance_timeout_ms for m in self.members.values()), default=0)
        if self.state is State.EMPTY and self.config.initial_rebalance_delay_ms > 0:
            delay = min(self.config.initial_rebalance_delay_ms, timeout)
            self.initial_delay_until = now + delay
            self.initial_delay_left = timeout - delay
            self.new_member_added = False
        self.state = State.PREPARING_REBALANCE
        self.deadline = now + timeout

    def _complete_join(self, now: float) -> None:
        """`completeClassicGroupJoin`: a new generation of the members that rejoined (static ones stay)."""
        for m in list(self.members.values()):
            if m.join is None and m.instance_id is None:
                self._remove(m)
        self.generation += 1
        self.initial_delay_until = None
        if not self.members:
            self.state, self.protocol_name, self.leader, self.deadline = State.EMPTY, None, None, None
            self._save()
            return
        self.protocol_name = self._select_protocol()
        self.state = State.COMPLETING_REBALANCE
        self.deadline = now + max(m.rebalance_timeout_ms for m in self.members.values())
        if self.leader not in self.members:
            self.leader = next((m.member_id for m in self.members.values() if m.join is not None),
                               next(iter(self.members)))
        self.rebalances += 1
        for m in self.members.values():
            if m.join is not None:
                m.join.answer = self._current(m.member_id, with_members=m.member_id == self.leader)
                m.join = None
            m.expires_at = now + m.session_timeout_ms

    def _select_protocol(self) -> str | None:
        """`ClassicGroup.selectProtocol`: each member votes for its first protocol all members support."""
        members = list(self.members.values())
        if not members:
            return None
        common = [n for n, _ in members[0].protocols if all(n in {p for p, _ in m.protocols} for m in members)]
        votes = {n: 0 for n in common}
        for m in members:
            choice = next((n for n, _ in m.protocols if n in votes), None)
            if choice is not None:
                votes[choice] += 1
        return max(common, key=lambda n: votes[n]) if common else None

    # -- SyncGroup and Heartbeat -------------------------------------------------------------------

    def sync(self, member_id: str, instance_id: str | None, generation: int, protocol_type: str | None,
             protocol_name: str | None, assignments: dict[str, bytes], now: float) -> SyncAnswer | Waiter:
        """A SyncGroup (`classicGroupSync`): its answer now, or a Waiter the leader's assignment answers."""
        self.used_at = now
        if self.state is State.DEAD:
            return SyncAnswer(ke.COORDINATOR_NOT_AVAILABLE)
        code = self.validate_member(member_id, instance_id)
        if code != ke.NONE:
            return SyncAnswer(code)
        if generation != self.generation:
            return SyncAnswer(ke.ILLEGAL_GENERATION)
        if (protocol_type is not None and protocol_type != self.protocol_type) or (
                protocol_name is not None and protocol_name != self.protocol_name):
            return SyncAnswer(ke.INCONSISTENT_GROUP_PROTOCOL)
        member = self.members[member_id]
        if self.state is State.PREPARING_REBALANCE:
            return SyncAnswer(ke.REBALANCE_IN_PROGRESS)
        if self.state is State.STABLE:
            member.expires_at = now + member.session_timeout_ms
            return SyncAnswer(ke.NONE, self.protocol_type, self.protocol_name, member.assignment)
        if self.state is not State.COMPLETING_REBALANCE:
            return SyncAnswer(ke.UNKNOWN_MEMBER_ID)
        waiter = member.sync = Waiter()
        if member_id == self.leader:
            for m in self.members.values():
                m.assignment = assignments.get(m.member_id, b"")
            self._save()
            self.state, self.deadline = State.STABLE, None
            for m in self.members.values():
                if m.sync is not None:
                    m.sync.answer = SyncAnswer(ke.NONE, self.protocol_type, self.protocol_name, m.assignment)
                    m.sync = None
                m.expires_at = now + m.session_timeout_ms
        return waiter

    def heartbeat(self, member_id: str, instance_id: str | None, generation: int, now: float) -> int:
        """`classicGroupHeartbeat`."""
        self.used_at = now
        if self.state is State.DEAD:
            return ke.COORDINATOR_NOT_AVAILABLE
        if self.state is State.EMPTY:
            return ke.UNKNOWN_MEMBER_ID
        code = self.validate_member(member_id, instance_id)
        if code != ke.NONE:
            return code
        if generation != self.generation:
            return ke.ILLEGAL_GENERATION
        member = self.members[member_id]
        member.expires_at = now + member.session_timeout_ms
        return ke.REBALANCE_IN_PROGRESS if self.state is State.PREPARING_REBALANCE else ke.NONE

    def touch(self, member_id: str, now: float) -> None:
        """An offset commit from a member of a Stable group counts as its heartbeat."""
        member = self.members.get(member_id)
        if member is not None and self.state is State.STABLE:
            member.expires_at = now + member.session_timeout_ms

    # -- LeaveGroup and expiry -------------------------------------------------------------------

    def leave(self, leaving: list[tuple[str, str | None]], now: float) -> list[int]:
        """`classicGroupLeave`: one error code per member asked to leave."""
        self.used_at = now
        codes = []
        removed = False
        for member_id, instance_id in leaving:
            if instance_id is not None:
                found = self.static.get(instance_id)
                if found is None:
                    codes.append(ke.UNKNOWN_MEMBER_ID)
                    continue
                if member_id and member_id != found:
                    codes.append(ke.FENCED_INSTANCE_ID)
                    continue
                member_id = found
            elif member_id in self.pending:
                del self.pending[member_id]
                codes.append(ke.NONE)
                continue
            member = self.members.get(member_id)
            if member is None:
                codes.append(ke.UNKNOWN_MEMBER_ID)
                continue
            self._remove(member)
            removed = True
            codes.append(ke.NONE)
        if removed:
            self._rebalance_after_removal(now)
            self.tick(now)
        return codes

    def _remove(self, member: Member) -> None:
        for waiter, answer in ((member.join, JoinAnswer(ke.UNKNOWN_MEMBER_ID, member.member_id)),
                               (member.sync, SyncAnswer(ke.UNKNOWN_MEMBER_ID))):
            if waiter is not None:
                waiter.answer = answer
        del self.members[member.member_id]
        if member.instance_id is not None and self.static.get(member.instance_id) == member.member_id:
            del self.static[member.instance_id]
        if self.leader == member.member_id:
            self.leader = next(iter(self.members), None)

    def _rebalance_after_removal(self, now: float) -> None:
        """`removeMemberAndUpdateClassicGroup`: a Stable or completing group rebalances (a preparing one may
        complete its join phase: `tick`)."""
        if self.state in (State.STABLE, State.COMPLETING_REBALANCE):
            self._prepare_rebalance(now)

    def tick(self, now: float) -> None:
        """What the coordinator's timers do by `now`: sessions and pending members expire, the join phase or
        the sync times out, an initial delay ends, a join phase every member has reached completes."""
        for member_id, expires in list(self.pending.items()):
            if expires <= now:
                del self.pending[member_id]
        expired = [m for m in self.members.values() if m.join is None and m.sync is None and m.expires_at <= now
                   and self.state is not State.EMPTY]
        for m in expired:
            self._remove(m)
        if expired:
            self._rebalance_after_removal(now)
        if self.state is State.COMPLETING_REBALANCE and self.deadline is not None and now >= self.deadline:
            for m in [m for m in self.members.values() if m.sync is None]:
                self._remove(m)
            self._prepare_rebalance(now)
        if self.state is not State.PREPARING_REBALANCE:
            return
        if self.initial_delay_until is not None:
            if now < self.initial_delay_until:
                return
            if self.new_member_added and self.initial_delay_left > 0:
                delay = min(self.config.initial_rebalance_delay_ms, self.initial_delay_left)
                self.initial_delay_until, self.new_member_added = now + delay, False
                self.initial_delay_left -= delay
                return
            self._complete_join(now)
            return
        everyone = all(m.join is not None for m in self.members.values()) and not self.pending
        if everyone or (self.deadline is not None and now >= self.deadline):
            self._complete_join(now)

    # -- the coordinator moves -------------------------------------------------------------------

    def _save(self) -> None:
        members = {i: copy.copy(m) for i, m in self.members.items()}
        for m in members.values():
            m.join = m.sync = None
        self.saved = Saved(self.state if self.state is State.EMPTY else State.STABLE, self.generation,
                           self.protocol_type, self.protocol_name, self.leader, members)

    def reload(self, now: float) -> bool:
        """A new coordinator loads the group as last written (`onUnloaded`, then `onLoaded`): every held join
        and sync is answered NOT_COORDINATOR. False when nothing of it was written (it is gone)."""
        for m in self.members.values():
            for waiter, answer in ((m.join, JoinAnswer(ke.NOT_COORDINATOR, m.member_id)),
                                   (m.sync, SyncAnswer(ke.NOT_COORDINATOR))):
                if waiter is not None:
                    waiter.answer = answer
        self.pending.clear()
        self.deadline = self.initial_delay_until = None
        saved = self.saved
        if saved is None:
            self.members, self.static, self.state, self.leader = {}, {}, State.EMPTY, None
            return bool(self.offsets)
        self.state, self.generation = saved.state, saved.generation
        self.protocol_type, self.protocol_name, self.leader = saved.protocol_type, saved.protocol_name, saved.leader
        self.members = {i: copy.copy(m) for i, m in saved.members.items()}
        self.static = {m.instance_id: i for i, m in self.members.items() if m.instance_id is not None}
        for m in self.members.values():
            m.expires_at = now + m.session_timeout_ms
        return True


def consumer_subscription(metadata: bytes) -> set[str] | None:
    """The topics of a consumer protocol subscription (`ConsumerProtocolSubscription`: version, topics, ...);
    None when it does not read as one."""
    try:
        at = 2
        count = int.from_bytes(metadata[at:at + 4], "big", signed=True)
        at += 4
        topics = set()
        for _ in range(max(count, 0)):
            size = int.from_bytes(metadata[at:at + 2], "big", signed=True)
            at += 2
            if size < 0 or at + size > len(metadata):
                return None
            topics.add(metadata[at:at + size].decode())
            at += size
        return topics if len(metadata) >= 6 else None
    except UnicodeDecodeError:
        return None
