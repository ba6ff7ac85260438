"""Leadership moves: reorder a partition's replicas, then let a preferred election do the rest.

Kafka cannot elect a chosen replica directly. `prefer` puts the chosen broker first; `demote` puts a
broker last so that it leads nothing; `restore` puts the saved orders back. The replica set never
changes, so no data moves (AlterPartitionReassignments with the same replicas in a new order).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass

from leader_election_cli.model import ClusterState, PartitionState, TopicPartition
from leader_election_cli.planning.rules import acceptable_leaders


@dataclass(frozen=True)
class Move:
    """A new replica order for one partition, and the leader the preferred election should give it."""

    tp: TopicPartition
    replicas: tuple[int, ...]  # before
    new_replicas: tuple[int, ...]
    leader_before: int
    leader_after: int  # expected after the preferred election that follows the reorder


@dataclass(frozen=True)
class Refusal:
    """A partition left alone, and why."""

    tp: TopicPartition
    reason: str


def reorder_for_leader(replicas: Sequence[int], broker: int) -> tuple[int, ...]:
    """`broker` first, the other replicas in their order."""
    _require_replica(replicas, broker)
    return (broker, *(r for r in replicas if r != broker))


def reorder_for_demotion(replicas: Sequence[int], broker: int) -> tuple[int, ...]:
    """`broker` last, the other replicas in their order."""
    _require_replica(replicas, broker)
    return (*(r for r in replicas if r != broker), broker)


def _require_replica(replicas: Sequence[int], broker: int) -> None:
    if broker not in replicas:
        raise ValueError(f"broker {broker} is not one of the replicas {list(replicas)}")


def check_prefer(state: ClusterState, tp: TopicPartition, broker: int,
                 reassigning: Collection[TopicPartition] | None = None) -> str | None:
    """Why `broker` cannot be made the leader of `tp` (None when it can).

    `reassigning` defaults to the pending reassignments recorded in `state`.
    """
    partition = state.partitions.get(tp)
    if partition is None:
        return f"partition {tp} does not exist"
    if broker not in partition.replicas:
        return f"broker {broker} is not a replica of {tp} (replicas: {_ids(partition.replicas)})"
    if broker not in state.live_brokers:
        return f"broker {broker} is not alive"
    if broker in partition.offline_replicas:
        return f"the replica of {tp} on broker {broker} is offline (log directory failure)"
    if broker not in partition.isr:
        return f"broker {broker} is not in the ISR of {tp} (ISR: {_ids(partition.isr)})"
    if tp in (state.reassigning if reassigning is None else reassigning):
        return f"a reassignment of {tp} is pending"
    return None


def _ids(brokers: Sequence[int]) -> str:
    return ",".join(map(str, brokers)) or "none"


def demotion_plan(state: ClusterState, broker: int, include_preferred: bool = False,
                  topic_filter: Callable[[str], bool] | None = None, *, together: Collection[int] = ()
                  ) -> tuple[list[Move], list[Refusal]]:
    """Move `broker` last in every partition it leads (and, optionally, every one it is preferred for).

    The new first replica is the replica that should lead afterwards: the current leader when it is
    another valid (live, in-sync) replica, otherwise the first valid other replica, so the preferred
    election that follows succeeds in both controller modes. A partition with no other valid replica is
    refused ("no other in-sync replica"), not forced; so is one with a pending reassignment.
    `together`: brokers stepping back at the same time (a round of a parallel roll): their partitions are
    concerned too, they go last as well (in their replica order), and none of them leads afterwards.
    Partitions come out sorted.
    """
    stepping = frozenset((broker, *together))
    moves: list[Move] = []
    refusals: list[Refusal] = []
    live = state.live_brokers
    for tp in sorted(state.partitions):
        p = state.partitions[tp]
        concerned = p.leader in stepping or (include_preferred and p.replicas[0] in stepping)
        if not concerned or stepping.isdisjoint(p.replicas):
            continue
        if topic_filter is not None and not topic_filter(tp.topic):
            continue
        if tp in state.reassigning:
            refusals.append(Refusal(tp, f"a reassignment of {tp} is pending"))
            continue
        successor = _successor(p, stepping, live)
        if successor is None:
            refusals.append(Refusal(tp, "no other in-sync replica"))
            continue
        last = (*(r for r in p.replicas if r not in stepping), *(r for r in p.replicas if r in stepping))
        moves.append(Move(tp, p.replicas, reorder_for_leader(last, successor), p.leader, successor))
    return moves, refusals


def _successor(p: PartitionState, stepping: frozenset[int], live: frozenset[int]) -> int | None:
    """The replica that should lead once the brokers `stepping` step back: live, in the ISR, none of them."""
    acceptable = acceptable_leaders(p, live)

    def valid(replica: int) -> bool:
        return replica not in stepping and replica in p.isr and acceptable(replica)

    if valid(p.leader):
        return p.leader
    return next((r for r in p.replicas if valid(r)), None)


# -- whole plans -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MovePlan:
    """What a command would do: a move or a refusal per partition, in the order to report them."""

    command: str  # prefer | demote | restore
    entries: tuple[Move | Refusal, ...]

    @property
    def moves(self) -> list[Move]:
        return [e for e in self.entries if isinstance(e, Move)]

    @property
    def reorders(self) -> list[Move]:
        """The moves that change a replica order (the others only need an election, or nothing)."""
        return [m for m in self.moves if m.new_replicas != m.replicas]


def prefer_plan(state: ClusterState, wanted: Iterable[tuple[TopicPartition, int]]) -> MovePlan:
    """Make each broker the leader of its partition: it goes first in the replica order."""
    entries: list[Move | Refusal] = []
    for tp, broker in wanted:
        reason = check_prefer(state, tp, broker)
        if reason:
            entries.append(Refusal(tp, reason))
        else:
            p = state.partitions[tp]
            entries.append(Move(tp, p.replicas, reorder_for_leader(p.replicas, broker), p.leader, broker))
    return MovePlan("prefer", tuple(entries))


def demote_plan(state: ClusterState, broker: int, include_preferred: bool = False,
                topic_filter: Callable[[str], bool] | None = None, *, together: Collection[int] = ()) -> MovePlan:
    """`planning.demotion_plan` (the successor first, `broker` and those `together` last), partitions sorted."""
    moves, refusals = demotion_plan(state, broker, include_preferred, topic_filter, together=together)
    return MovePlan("demote", tuple(sorted([*moves, *refusals], key=lambda e: e.tp)))


def restore_plan(state: ClusterState, saved: Iterable[tuple[TopicPartition, tuple[int, ...]]]) -> MovePlan:
    """Put saved replica orders back; the first saved replica is the leader the election should give."""
    entries: list[Move | Refusal] = []
    for tp, replicas in saved:
        p = state.partitions.get(tp)
        if p is None:
            entries.append(Refusal(tp, f"partition {tp} does not exist"))
        elif sorted(p.replicas) != sorted(replicas):
            entries.append(Refusal(tp, f"the replicas of {tp} changed since the restore file was written "
                                       f"(now {_ids(p.replicas)}, saved {_ids(replicas)})"))
        elif tp in state.reassigning:
            entries.append(Refusal(tp, f"a reassignment of {tp} is pending"))
        else:
            entries.append(Move(tp, p.replicas, tuple(replicas), p.leader, replicas[0]))
    return MovePlan("restore", tuple(entries))


def _ids(brokers: Sequence[int]) -> str:
    return ",".join(map(str, brokers)) or "none"
