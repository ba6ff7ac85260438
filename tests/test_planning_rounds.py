"""Restart rounds (`planning/rounds.py`) against the can-stop rule itself and a brute force over small clusters:
each round passes `stop_verdict` (and `quorum_verdict`) in the steady state, built here independently; proven
counts are the brute force's; the lower bound never exceeds it. Then the placements the issue names: rack-aware
(one round per rack), RF 5 with min ISR 2 (fewer rounds than brokers sharing no replica)."""

from __future__ import annotations

import dataclasses
import itertools
import random
from collections.abc import Collection, Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leader_election_cli.model import ClusterState, PartitionState, QuorumReplica, QuorumState, TopicPartition
from leader_election_cli.planning.colouring import Conflicts, colour
from leader_election_cli.planning.maintenance import stop_verdict
from leader_election_cli.planning.quorum import quorum_verdict
from leader_election_cli.planning.rounds import Rounds, plan_rounds
from leader_election_cli.sandbox.controller.cluster import rack_aware_assignment
from tests.strategies import cluster_states


def steady(state: ClusterState, rolled: Collection[int]) -> ClusterState:
    """The state between rounds: the live and the rolled brokers up, each ISR its replicas on them, no ELR."""
    up = state.live_brokers | set(rolled)
    partitions = {tp: p._replace(isr=tuple(r for r in p.replicas if r in up), elr=(), last_known_elr=())
                  for tp, p in state.partitions.items()}
    return dataclasses.replace(state, brokers={b: ("127.0.0.1", 9000 + b) for b in up}, partitions=partitions)


def caught_up_quorum(voters: Collection[int]) -> QuorumState:
    """A quorum whose voters have all caught up with the first of them, its leader."""
    ids = sorted(voters)
    return QuorumState(ids[0], 1, 100, tuple(QuorumReplica(v, 100, 5000, 5000) for v in ids))


class Judge:
    """Whether brokers may be down together: the verdicts themselves, remembered."""

    def __init__(self, state: ClusterState, rolled: Collection[int], allow_rf1: bool = False,
                 voters: Collection[int] = (), cap: int | None = None):
        self.state, self.allow_rf1, self.cap = steady(state, rolled), allow_rf1, cap
        self.quorum = caught_up_quorum(voters) if voters else None
        self.known: dict[frozenset[int], bool] = {}

    def safe(self, brokers: frozenset[int]) -> bool:
        if brokers not in self.known:
            self.known[brokers] = (self.cap is None or len(brokers) <= self.cap) \
                and stop_verdict(self.state, brokers, allow_rf1=self.allow_rf1).safe \
                and (self.quorum is None or quorum_verdict(self.quorum, brokers).safe)
        return self.known[brokers]

    def round_ok(self, brokers: frozenset[int]) -> bool:
        """A safe round, or a broker that is never safe to stop, alone."""
        return self.safe(brokers) or (len(brokers) == 1 and not self.safe(brokers))

    def fewest(self, brokers: list[int]) -> int:
        """The fewest rounds of any plan, by trying every partition of the brokers into rounds."""
        return min((len(p) for p in _set_partitions(brokers, self.round_ok)), default=0)


def _set_partitions(items: list[int], ok) -> Iterator[list[frozenset[int]]]:
    if not items:
        yield []
        return
    first, rest = items[0], items[1:]
    for partition in _set_partitions(rest, ok):
        for i, block in enumerate(partition):
            if ok(block | {first}):
                yield [*partition[:i], block | {first}, *partition[i + 1:]]
        yield [frozenset([first]), *partition]


@st.composite
def problems(draw: st.DrawFn) -> dict:
    """A small random cluster (some min ISRs unknown, capped or not), the brokers to roll (dead ones too), and the
    options."""
    state = draw(cluster_states(max_brokers=6))
    ids = sorted(state.live_brokers.union(*(p.replicas for p in state.partitions.values())))
    unknown = draw(st.sets(st.sampled_from(sorted(state.topics())), max_size=1))
    state = dataclasses.replace(
        state, min_isr_capped=draw(st.booleans()), min_isr_unknown=frozenset(unknown),
        min_insync_replicas={t: m for t, m in state.min_insync_replicas.items() if t not in unknown})
    rolled = draw(st.lists(st.sampled_from(ids), min_size=1, unique=True))
    return {
        "state": state, "brokers": rolled, "allow_rf1": draw(st.booleans()),
        "voters": draw(st.sets(st.sampled_from(ids), max_size=5)) if draw(st.booleans()) else set(),
        "max_per_round": draw(st.none() | st.integers(1, 3)),
        "last": draw(st.none() | st.sampled_from(ids)),
    }


@st.composite
def healthy(draw: st.DrawFn) -> dict:
    """A small cluster of live brokers, min ISR 1 to 3 by topic, RF above it up to 5: rounds of several brokers,
    limits of k >= 2, and now and then a greedy count above the first bound (odd cycles), which CP-SAT settles."""
    ids = list(range(1, draw(st.integers(4, 7)) + 1))
    min_isr = {t: draw(st.integers(1, 3)) for t in ("a", "b")}
    placed = {t: [tuple(draw(st.permutations(ids))[:draw(st.integers(min_isr[t] + 1, min(5, len(ids))))])
                  for _ in range(draw(st.integers(0, 8)))] for t in min_isr}
    state = cluster(placed, 1)
    state = dataclasses.replace(state, brokers={b: ("127.0.0.1", 9000 + b) for b in ids}, min_insync_replicas=min_isr)
    return {
        "state": state, "brokers": draw(st.lists(st.sampled_from(ids), min_size=1, unique=True)), "allow_rf1": False,
        "voters": set(), "max_per_round": draw(st.none() | st.integers(2, 4)), "last": draw(st.none() | st.just(1)),
    }


def judge_of(problem: dict) -> Judge:
    return Judge(problem["state"], problem["brokers"], problem["allow_rf1"], problem["voters"],
                 problem["max_per_round"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems() | healthy())
def test_each_round_passes_the_can_stop_rule_and_each_broker_goes_once(problem: dict) -> None:
    rounds = plan_rounds(time_limit_s=2.0, **problem)
    judge = judge_of(problem)
    flat = [b for r in rounds.rounds for b in r]
    assert sorted(flat) == sorted(problem["brokers"])
    assert rounds.serial == len(problem["brokers"])
    assert rounds.alone == tuple(sorted(b for b in problem["brokers"] if not judge.safe(frozenset([b]))))
    for r in rounds.rounds:
        assert list(r) == sorted(r)
        assert judge.safe(frozenset(r)) or (len(r) == 1 and r[0] in rounds.alone), r
        assert problem["max_per_round"] is None or len(r) <= problem["max_per_round"]
    if problem["last"] in problem["brokers"]:
        assert problem["last"] in rounds.rounds[-1]
    assert all(not judge.safe(frozenset(pair)) for pair in _pairs(rounds.conflicts))
    assert rounds.lower_bound <= len(rounds.rounds)
    assert rounds.proven == (rounds.lower_bound == len(rounds.rounds))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(problems() | healthy())
def test_a_proven_count_is_the_fewest_and_the_bound_is_never_above_it(problem: dict) -> None:
    rounds = plan_rounds(time_limit_s=2.0, **problem)
    fewest = judge_of(problem).fewest(sorted(problem["brokers"]))
    assert rounds.lower_bound <= fewest <= len(rounds.rounds)
    if rounds.proven:
        assert len(rounds.rounds) == fewest


def _pairs(brokers: tuple[int, ...]) -> list[tuple[int, int]]:
    return list(itertools.combinations(brokers, 2))


@st.composite
def conflict_sets(draw: st.DrawFn) -> Conflicts:
    """Random edges (about half the pairs), limits of k >= 2 and a cap on up to 8 vertices: graphs whose greedy
    count is above the clique now and then, where CP-SAT has to find or prove the count."""
    vertices = tuple(range(draw(st.integers(1, 8))))
    edges = frozenset(p for p in itertools.combinations(vertices, 2) if draw(st.booleans()))
    limits = []
    for _ in range(draw(st.integers(0, 3)) if len(vertices) >= 3 else 0):
        members = frozenset(draw(st.sets(st.sampled_from(vertices), min_size=3)))
        limits.append((members, draw(st.integers(2, len(members) - 1))))
    return Conflicts(vertices, edges, tuple(limits), draw(st.none() | st.integers(1, 4)))


def fits(conflicts: Conflicts, block: frozenset[int]) -> bool:
    return (conflicts.cap is None or len(block) <= conflicts.cap) \
        and not any(u in block and v in block for u, v in conflicts.edges) \
        and all(len(block & members) <= k for members, k in conflicts.limits)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(conflict_sets())
def test_the_colouring_is_valid_and_proven_counts_are_the_fewest(conflicts: Conflicts) -> None:
    found = colour(conflicts, 2.0)
    assert sorted(v for c in found.classes for v in c) == list(conflicts.vertices)
    assert all(fits(conflicts, frozenset(c)) for c in found.classes)
    fewest = min(len(p) for p in _set_partitions(list(conflicts.vertices), lambda b: fits(conflicts, b)))
    assert found.lower_bound <= fewest <= len(found.classes)
    assert len(found.classes) == fewest  # small enough to be solved within the limit
    assert all(not fits(conflicts, frozenset(pair)) for pair in _pairs(found.clique))


def colourable(conflicts: Conflicts, colours: int) -> bool:
    """Whether some colouring uses at most `colours` colours: backtracking, a vertex at a time."""
    classes: list[set[int]] = []

    def place(i: int) -> bool:
        if i == len(conflicts.vertices):
            return True
        v = conflicts.vertices[i]
        for c in [*classes, set()][:colours]:
            if fits(conflicts, frozenset(c | {v})):
                if not c:
                    classes.append(c)
                c.add(v)
                if place(i + 1):
                    return True
                c.discard(v)
                if not c:
                    classes.remove(c)
        return False

    return place(0)


@pytest.mark.parametrize("seed", range(8))
def test_limits_left_out_of_the_model_come_in_when_a_solution_breaks_them(seed: int) -> None:
    """Forty "at most 2 of these 4" limits on 12 brokers (RF 4, min ISR 2, without edges): the first model has
    only the limits the greedy colouring fills, its solutions break others, which are added and solved again."""
    rng = random.Random(seed)
    limits = {frozenset(rng.sample(range(12), 4)): 2 for _ in range(40)}
    conflicts = Conflicts(tuple(range(12)), frozenset(), tuple(limits.items()))
    found = colour(conflicts, 5.0)
    assert all(fits(conflicts, frozenset(c)) for c in found.classes)
    assert found.lower_bound == len(found.classes)
    assert not colourable(conflicts, len(found.classes) - 1)


def test_a_triangle_free_conflict_graph_needs_four_rounds_proven_beyond_its_clique() -> None:
    """Grötzsch's graph (Mycielski's of the 5-cycle): no three brokers pairwise in conflict, yet four rounds; the
    clique bound says 2, CP-SAT proves 4."""
    cycle = [(i, (i + 1) % 5) for i in range(5)]
    edges = cycle + [(u, v + 5) for u, v in cycle] + [(v, u + 5) for u, v in cycle] + [(i + 5, 10) for i in range(5)]
    state = cluster({"t": [(u + 1, v + 1) for u, v in edges]}, 1)
    rounds = plan_rounds(state, range(1, 12))
    assert len(rounds.conflicts) == 2
    assert len(rounds.rounds) == 4 and rounds.proven


def rack_aware(racks: dict[int, str], partitions: int, rf: int, start: int, shift: int) -> list[tuple[int, ...]]:
    """Kafka's rack-aware replica assignment, as the sandbox places replicas (`rack_aware_assignment`)."""
    return [tuple(r) for r in rack_aware_assignment(racks, partitions, rf, start, shift).values()]


def cluster(placements: dict[str, list[tuple[int, ...]]], min_isr: int) -> ClusterState:
    partitions = {TopicPartition(t, i): PartitionState(t, i, r[0], r, r)
                  for t, placed in placements.items() for i, r in enumerate(placed)}
    brokers = sorted({b for placed in placements.values() for r in placed for b in r})
    return ClusterState({b: ("127.0.0.1", 9000 + b) for b in brokers}, min(brokers, default=1), partitions,
                        min_insync_replicas=dict.fromkeys(placements, min_isr), min_isr_capped=True)


RACKS_12 = {b: "abc"[(b - 1) % 3] for b in range(1, 13)}


def test_a_rack_aware_placement_gives_one_round_per_rack() -> None:
    rng = random.Random(45)
    state = cluster({f"t{t}": rack_aware(RACKS_12, 12, 3, rng.randrange(12), rng.randrange(12)) for t in range(4)}, 2)
    rounds = plan_rounds(state, list(range(1, 13)), last=1)
    assert rounds.proven and rounds.lower_bound == 3 and rounds.serial == 12
    assert sorted(rounds.rounds) == [tuple(b for b in range(1, 13) if RACKS_12[b] == rack) for rack in "abc"]
    assert 1 in rounds.rounds[-1]


def test_rf5_min_isr_2_takes_fewer_rounds_than_no_replica_in_common() -> None:
    """Three of a partition's five replicas may restart together; "no replica in common" (min ISR 4: one per
    round) allows one."""
    rng = random.Random(5)
    placements = {f"t{t}": rack_aware(RACKS_12, 12, 5, rng.randrange(12), rng.randrange(12)) for t in range(4)}
    by_min_isr = {m: plan_rounds(cluster(placements, m), list(range(1, 13))) for m in (2, 4)}
    assert by_min_isr[2].proven and by_min_isr[4].proven
    assert len(by_min_isr[2].rounds) < len(by_min_isr[4].rounds)
    judge = Judge(cluster(placements, 2), range(1, 13))
    assert all(judge.safe(frozenset(r)) for r in by_min_isr[2].rounds)


def test_rf5_on_five_racks_restarts_three_racks_at_once() -> None:
    racks = {b: "abcde"[(b - 1) % 5] for b in range(1, 16)}
    state = cluster({"t": rack_aware(racks, 60, 5, 0, 0)}, 2)
    rounds = plan_rounds(state, list(range(1, 16)))
    assert len(rounds.rounds) == 2 and rounds.proven
    assert all(len({racks[b] for b in r}) in (2, 3) for r in rounds.rounds)


def test_brokers_sharing_a_partition_two_by_two_go_one_at_a_time() -> None:
    placed = [(a, b, c) for a in range(1, 7) for b in range(a + 1, 7) for c in range(b + 1, 7)]
    rounds = plan_rounds(cluster({"t": placed}, 2), range(1, 7))
    assert rounds.rounds == tuple((b,) for b in range(1, 7)) and rounds.proven
    assert rounds.conflicts == (1, 2, 3, 4, 5, 6)


def test_a_broker_never_safe_to_stop_goes_alone() -> None:
    state = cluster({"a": [(1, 2, 3)], "b": [(4, 5, 6)]}, 2)
    state = dataclasses.replace(state, min_insync_replicas={"a": 2}, min_isr_unknown=frozenset({"b"}))
    rounds = plan_rounds(state, range(1, 7))
    assert rounds.alone == (4, 5, 6)
    assert rounds.rounds == ((1,), (2,), (3,), (4,), (5,), (6,)) and rounds.proven
    assert not stop_verdict(steady(state, range(1, 7)), [4]).safe


def test_combined_voters_keep_a_majority_and_the_cap_holds() -> None:
    state = cluster({"t": [(b,) for b in range(1, 8)]}, 1)  # RF 1: no limit with allow_rf1
    rounds = plan_rounds(state, range(1, 8), allow_rf1=True, voters=[1, 2, 3, 4, 5], max_per_round=3)
    assert all(len(set(r) & {1, 2, 3, 4, 5}) <= 2 for r in rounds.rounds)
    assert len(rounds.rounds) == 3 and rounds.proven
    assert plan_rounds(state, [1, 2], allow_rf1=True, voters=[1, 2]).alone == (1, 2)


def test_cut_short_the_greedy_plan_stands_and_is_safe() -> None:
    rng = random.Random(7)
    placed = [tuple(rng.sample(range(1, 61), 3)) for _ in range(400)]
    state = cluster({"t": placed}, 2)
    rounds = plan_rounds(state, range(1, 61), time_limit_s=0.0)
    judge = Judge(state, range(1, 61))
    assert all(judge.safe(frozenset(r)) for r in rounds.rounds)
    assert rounds.lower_bound <= len(rounds.rounds) < 60


def test_max_per_round_must_be_positive() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        plan_rounds(cluster({"t": [(1, 2)]}, 1), [1, 2], max_per_round=0)


def test_rounds_is_the_interface_the_roll_builds_on() -> None:
    assert [f.name for f in dataclasses.fields(Rounds)][:5] == ["rounds", "proven", "lower_bound", "serial",
                                                                 "conflicts"]
