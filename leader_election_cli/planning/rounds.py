"""Restart rounds for `roll --parallel`: the brokers to restart split into the fewest rounds, each a set of brokers
the `can-stop` rule allows to be down together. Pure, no I/O.

The rule is `maintenance.stop_verdict`'s, in the steady state the roll restores between rounds: every broker up
(those live now and those rolled), each partition's ISR its replicas on those brokers, no ELR. A set S may be
down together when that verdict is safe. For a partition whose replicas on up brokers are U, of which R are
rolled, with min ISR m (`ClusterState.min_isr_of`; None when not read) that is:

- at most k = |U| - max(m, 1) of R in S (at least one replica left to lead, and at least m in sync):
  k >= |R| asks nothing; k == 1 is a conflict between each two of R (an edge); else a limit "at most k of R";
- k < 1 (the verdict refuses any loss: m >= |U|, the min ISR of its topic could not be read, RF 1 without
  `allow_rf1`): no S holding one of R is safe, not even one broker alone. Such a broker goes in a round of its
  own (`Rounds.alone`), where the roll waits for the verdict and refuses as the serial roll does for it.

The KRaft quorum (`voters`, combined mode: brokers that are voters too) adds the quorum rule
(`quorum.quorum_verdict`, every voter caught up in the steady state): at most len(voters) - majority of them
in one round (none for a quorum of one or two voters: each goes alone). `max_per_round` caps every round.

The model. Brokers are vertices, rounds colours: the fewest rounds is the chromatic number of the conflicts,
NP-hard in general, solved by `colouring.colour` (DSatur, then OR-Tools CP-SAT within the time limit; its
docstring). Partitions with the same rolled replicas and k are one constraint, so 100,000 partitions at RF 3 on
100 brokers are at most 4,950 edges. The lower bound: the largest set of brokers no two of which may be down
together (a clique of edges, `Rounds.conflicts`), ceil(|R| / k) for each limit, ceil(brokers / max_per_round),
CP-SAT's objective bound; the rounds are proven minimal when they meet it. `last` (the active controller, as
`operations.roll.roll_order` puts it last) changes no count: its round goes last.

What it gives. A rack-aware placement (each partition's replicas on distinct racks) at RF 3, min ISR 2, comes out
as one round per rack, found from the partitions alone; at RF 5, min ISR 2, three replicas of a partition may
restart together, so rounds hold more than "no replica in common" allows. A random placement dense enough that
every two brokers share a partition allows no two brokers together: as many rounds as brokers, proven by the
clique of all of them. For contrast: Strimzi's Kafka Roller 2.0 proposal (strimzi/proposals, "Batch rolling")
batches brokers that share no partition, at most maxBrokerBatchSize, greedily and without racks (nothing
enforces a rack-aware placement); Koperator restarts up to RollingUpgradeConfig.concurrentBrokerRestartCountPerRack
brokers at once, within one rack only. Neither counts min ISR, which allows more than a disjoint replica set
whenever k >= 2, and never less.
"""

from __future__ import annotations

import time
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from itertools import combinations

from leader_election_cli.model import ClusterState
from leader_election_cli.planning.colouring import Conflicts, colour
from leader_election_cli.planning.quorum import majority


@dataclass(frozen=True)
class Rounds:
    """The rounds to restart the brokers in (broker ids, each round sorted, ordered by smallest id with the round
    of `last` last), whether their count is proven minimal, a lower bound on any plan's count, the serial roll's
    count, the largest set of brokers found no two of which may be down together (`conflicts`), and the brokers
    no round can make safe (`alone`: a round each)."""

    rounds: tuple[tuple[int, ...], ...]
    proven: bool
    lower_bound: int
    serial: int
    conflicts: tuple[int, ...]
    alone: tuple[int, ...] = ()


def plan_rounds(state: ClusterState, brokers: Sequence[int], *, max_per_round: int | None = None,
                allow_rf1: bool = False, voters: Collection[int] = (), last: int | None = None,
                time_limit_s: float = 5.0) -> Rounds:
    """The fewest rounds for restarting `brokers` (module docstring) found within `time_limit_s`;
    `max_per_round` None: no cap; `last` not among the brokers is ignored."""
    if max_per_round is not None and max_per_round < 1:
        raise ValueError(f"max_per_round must be at least 1, not {max_per_round}")
    started = time.monotonic()
    rolled = frozenset(brokers)
    limits = _limits(state, rolled, allow_rf1, voters)
    alone = frozenset().union(*(members for members, k in limits if k < 1))
    conflicts = _conflicts(sorted(rolled - alone), limits, alone, max_per_round)
    colouring = colour(conflicts, time_limit_s - (time.monotonic() - started))
    rounds = sorted([*colouring.classes, *((b,) for b in sorted(alone))], key=lambda r: (last in r, r[0]))
    lower = colouring.lower_bound + len(alone)
    return Rounds(tuple(rounds), len(rounds) == lower, lower, len(rolled), colouring.clique, tuple(sorted(alone)))


def _limits(state: ClusterState, rolled: frozenset[int], allow_rf1: bool,
            voters: Collection[int]) -> set[tuple[frozenset[int], int]]:
    """(R, k): at most k of the rolled brokers R in one round, one per distinct replica set and min ISR."""
    up = state.live_brokers | rolled
    kinds = {(p.replicas, state.min_isr_of(p), p.topic in state.min_isr_unknown) for p in state.partitions.values()}
    limits = set()
    for replicas, min_isr, unknown in kinds:
        members = frozenset(replicas) & rolled
        if not members or (len(replicas) == 1 and allow_rf1):
            continue
        if len(replicas) == 1 or (min_isr is None and unknown):
            limits.add((members, 0))
        else:
            limits.add((members, len(up.intersection(replicas)) - max(min_isr or 0, 1)))
    quorum = frozenset(voters)
    if quorum & rolled:
        limits.add((quorum & rolled, len(quorum) - majority(len(quorum))))
    return limits


def _conflicts(vertices: list[int], limits: set[tuple[frozenset[int], int]], alone: frozenset[int],
               cap: int | None) -> Conflicts:
    """The limits among the brokers that are not alone: k == 1 as edges, the least k of each set otherwise."""
    edges: set[tuple[int, int]] = set()
    least: dict[frozenset[int], int] = {}
    for members, k in limits:
        members = members - alone  # (all of them when k < 1)
        if k >= len(members) or len(members) < 2:
            continue
        if k == 1:
            edges.update(combinations(sorted(members), 2))
        else:
            least[members] = min(k, least.get(members, k))
    return Conflicts(tuple(vertices), frozenset(edges), tuple(least.items()), cap)
