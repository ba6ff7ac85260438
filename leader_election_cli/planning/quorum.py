"""Whether KRaft controllers can be stopped now: the quorum rule, which `can-stop` and `roll` apply to the
controller quorum's voters (dedicated controllers, or brokers that are voters too in combined mode). Pure, no I/O.

The rule is Strimzi's (KafkaRoller's `KafkaQuorumCheck.isQuorumHealthyWithoutNode`): stopping voters S is safe
only if, without them, a majority of all the voters has caught up with the quorum's leader, a voter counting
as caught up when its last caught-up time is within `controller.quorum.fetch.timeout.ms` (2,000 ms by
default, Kafka's QuorumConfig) of the leader's own, both as the leader reports them in DescribeQuorum (so the
client's clock plays no part). The leader counts as caught up. Kafka's `LeaderState.ReplicaState.
updateFollowerState` sets a follower's LastCaughtUpTimestamp when a fetch reaches the leader's log end offset
(or the one of its previous fetch); a voter the leader never heard from reports -1 (a new leader after a
failover knows nothing of the voters that are down: they show -1) and is not caught up.

Beyond Strimzi's check, which shares the quorum's blind spot (a crashed voter keeps a recent caught-up time,
and counts, for the fetch timeout): a voter that did not answer a probe (`not_answering`: neither on its
controller listener nor by progress between two reads, `operations.probes`) is not caught up, whatever its
time says; the leader is never stopped while another voter lags (its successor must be one that has
everything), there is no quorum leader at all nothing is safe, and a quorum of one or two voters is never
stopped from (Strimzi lets those roll with a warning; a majority of them cannot stay).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from leader_election_cli.model import QuorumReplica, QuorumState

DEFAULT_FETCH_TIMEOUT_MS = 2000  # QuorumConfig.DEFAULT_QUORUM_FETCH_TIMEOUT_MS
FETCH_TIMEOUT_CONFIG = "controller.quorum.fetch.timeout.ms"


@dataclass(frozen=True)
class VoterCheck:
    """One voter as the rule sees it: its lag (leader's log end offset minus its own; None when unknown) and
    the age of its last caught-up time against the leader's (None when unknown)."""

    node: int
    leader: bool
    log_end_offset: int
    lag: int | None
    caught_up_age_ms: int | None
    caught_up: bool
    stopping: bool
    answering: bool = True  # False: it did not answer a probe (counted as not caught up)


@dataclass(frozen=True)
class QuorumVerdict:
    """The verdict on stopping the voters `nodes` now; `reason` says why not (None: safe)."""

    nodes: tuple[int, ...]
    leader: int
    epoch: int
    fetch_timeout_ms: int
    fetch_timeout_read: bool  # read from the controllers' config (else Kafka's default)
    voters: tuple[VoterCheck, ...]
    caught_up_after: int  # voters caught up that stay
    needed: int  # a majority of the voters
    reason: str | None

    @property
    def safe(self) -> bool:
        return self.reason is None


def majority(voters: int) -> int:
    return voters // 2 + 1


def caught_up(quorum: QuorumState, replica: QuorumReplica, fetch_timeout_ms: int) -> bool:
    """Whether a voter has caught up with the leader within the fetch timeout (the leader always has)."""
    if replica.node == quorum.leader:
        return True
    reference = _leader_time(quorum)
    return reference is not None and replica.last_caught_up_ms >= 0 and \
        reference - replica.last_caught_up_ms < fetch_timeout_ms


def counted_caught_up(quorum: QuorumState, nodes: Iterable[int], fetch_timeout_ms: int) -> frozenset[int]:
    """The voters a verdict on stopping `nodes` counts as caught up, the leader aside (those a probe must find
    answering: the leader answered the DescribeQuorum read)."""
    stopping = frozenset(nodes)
    return frozenset(v.node for v in quorum.voters if v.node not in stopping and v.node != quorum.leader
                     and caught_up(quorum, v, fetch_timeout_ms))


def quorum_verdict(quorum: QuorumState, nodes: Iterable[int], fetch_timeout_ms: int = DEFAULT_FETCH_TIMEOUT_MS,
                   fetch_timeout_read: bool = False, not_answering: Iterable[int] = ()) -> QuorumVerdict:
    """Whether stopping the voters `nodes` now keeps a caught-up majority (module docstring), the voters
    `not_answering` counted as not caught up. Nodes that are not voters change nothing."""
    silent = frozenset(not_answering)
    stopping = frozenset(nodes) & frozenset(quorum.voter_ids)
    leader = quorum.voter(quorum.leader)
    leader_end = leader.log_end_offset if leader is not None and leader.log_end_offset >= 0 else None
    reference = _leader_time(quorum)
    checks = tuple(VoterCheck(
        v.node, v.node == quorum.leader, v.log_end_offset,
        leader_end - v.log_end_offset if leader_end is not None and v.log_end_offset >= 0 else None,
        reference - v.last_caught_up_ms if reference is not None and v.last_caught_up_ms >= 0 else None,
        caught_up(quorum, v, fetch_timeout_ms) and v.node not in silent, v.node in stopping, v.node not in silent)
        for v in quorum.voters)
    staying = sum(1 for c in checks if c.caught_up and not c.stopping)
    needed = majority(len(checks))
    reason = None
    lagging = [c.node for c in checks if not c.caught_up and not c.stopping]
    if quorum.leader < 0 or leader is None:
        reason = "the controller quorum has no leader"
    elif reference is None:
        reason = "the quorum's leader reports no last caught-up time (DescribeQuorum v1 or later needed)"
    elif stopping and staying < needed:
        behind = f"; behind or down: {_ids(lagging)}" if lagging else ""
        behind += "".join(f"; controller {n} does not answer ({_STILL_COUNTED})" for n in sorted(silent & set(lagging)))
        reason = (f"without {_ids(sorted(stopping))} only {staying} of {len(checks)} voters would be caught up "
                  f"with the leader, a majority is {needed}{behind}")
    elif quorum.leader in stopping and lagging:
        reason = f"it is the quorum's leader and voter {_ids(lagging)} has not caught up (it would have to lead)"
    return QuorumVerdict(tuple(sorted(stopping)), quorum.leader, quorum.epoch, fetch_timeout_ms, fetch_timeout_read,
                         checks, staying, needed, reason)


def back_in_quorum(quorum: QuorumState, node: int, fetch_timeout_ms: int, since: tuple[int, int] | None) -> bool:
    """Whether a restarted voter is back: a voter of a quorum with a leader, its log end at the leader's (lag 0)
    and caught up within the fetch timeout, after `since` ((epoch, the leader's time) read before the restart:
    in the same epoch its last caught-up time must be later; a new leader only knows times after its election)."""
    replica, leader = quorum.voter(node), quorum.voter(quorum.leader)
    if replica is None or leader is None:
        return False
    if replica.log_end_offset < leader.log_end_offset or not caught_up(quorum, replica, fetch_timeout_ms):
        return False
    return since is None or quorum.epoch != since[0] or replica.last_caught_up_ms > since[1]


def leader_time(quorum: QuorumState) -> tuple[int, int] | None:
    """(epoch, the leader's own last caught-up time): the mark `back_in_quorum` compares with."""
    reference = _leader_time(quorum)
    return None if reference is None else (quorum.epoch, reference)


def _leader_time(quorum: QuorumState) -> int | None:
    """The leader's clock as it reports it: its own last caught-up time (None when it reports none)."""
    leader = quorum.voter(quorum.leader)
    return leader.last_caught_up_ms if leader is not None and leader.last_caught_up_ms >= 0 else None


_STILL_COUNTED = ("DescribeQuorum still counts it as caught up: a crashed controller stops counting only after "
                  "controller.quorum.fetch.timeout.ms")


def _ids(nodes: Iterable[int]) -> str:
    return ",".join(map(str, nodes))
