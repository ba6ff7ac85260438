"""The leadership balance solver against an independent brute force on small random clusters."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leader_election_cli.model import NO_LEADER, ClusterState, PartitionState, TopicPartition
from leader_election_cli.planning.leadership_balance import BalanceInputError, solve_leadership

BROKERS = [1, 2, 3, 4, 5]


@st.composite
def problems(draw: st.DrawFn, max_partitions: int = 7) -> dict:
    """A small cluster (some brokers dead), an exclusion or two, and optionally racks and weights."""
    live = draw(st.sets(st.sampled_from(BROKERS), min_size=1)) | ({1} if draw(st.booleans()) else set())
    partitions = {}
    for i in range(draw(st.integers(0, max_partitions))):
        topic = draw(st.sampled_from(["a", "b"]))
        size = draw(st.integers(1, 3))
        # Skewed on purpose: broker 1 first more often than not.
        replicas = tuple(draw(st.permutations(BROKERS))[:size])
        if draw(st.booleans()) and 1 not in replicas[:1]:
            replicas = (1, *(r for r in replicas if r != 1))[:size]
        isr = tuple(r for r in replicas if draw(st.integers(0, 4)) > 0)
        leader = draw(st.sampled_from([NO_LEADER, *isr])) if isr else NO_LEADER
        offline = tuple(r for r in replicas if draw(st.integers(0, 9)) == 0)
        partitions[TopicPartition(topic, i)] = PartitionState(topic, i, leader, replicas, isr, offline_replicas=offline)
    reassigning = {tp: () for tp in partitions if draw(st.integers(0, 9)) == 0}
    state = ClusterState({b: ("127.0.0.1", 9000 + b) for b in sorted(live)}, min(live), partitions,
                         reassigning=reassigning)
    return {
        "state": state,
        "exclude_brokers": draw(st.sets(st.sampled_from(BROKERS), max_size=1)),
        "exclude_topic": draw(st.sampled_from([None, "b"])),
    }


def kwargs(case: dict, **more) -> dict:
    topic = case["exclude_topic"]
    return {"exclude_brokers": case["exclude_brokers"], "exclude_topic": (topic.__eq__ if topic else None), **more}


# -- the independent model: who may lead, what is free, and every assignment --------------------------

def may_lead(case: dict) -> set[int]:
    return set(case["state"].brokers) - case["exclude_brokers"]


def movable(case: dict) -> dict[TopicPartition, tuple[list[int], int | None]]:
    """Partition -> (brokers that may lead it, the broker it keeps at no change, if any)."""
    state, allowed = case["state"], may_lead(case)
    out = {}
    for tp, p in state.partitions.items():
        if tp.topic == case["exclude_topic"] or tp in state.reassigning:
            continue
        able = [r for r in p.replicas if r in state.brokers and r in p.isr and r not in p.offline_replicas]
        eligible = [r for r in able if r in allowed]
        if not eligible:
            continue
        first = p.replicas[0]
        if first in eligible:
            keep = first
        elif first in able:
            keep = None
        else:
            keep = p.leader if p.leader in eligible else None
        out[tp] = (eligible, keep)
    return out


def fixed_leaders(case: dict) -> Counter:
    moving = movable(case)
    return Counter(p.leader for tp, p in case["state"].partitions.items()
                   if tp not in moving and p.leader != NO_LEADER)


def assignments(case: dict):
    """(leaders per broker, changes, choice per partition) of every possible plan."""
    moving = movable(case)
    fixed = fixed_leaders(case)
    tps = sorted(moving)
    for choice in itertools.product(*(moving[tp][0] for tp in tps)):
        counts = fixed + Counter(choice)
        changes = sum(c != moving[tp][1] for tp, c in zip(tps, choice, strict=True))
        yield counts, changes, dict(zip(tps, choice, strict=True))


def peak(counts: Counter, brokers: set[int]) -> int:
    return max((counts[b] for b in brokers), default=0)


def racks(counts: Counter, rack_of: dict[int, str]) -> int:
    per: Counter = Counter()
    for broker, n in counts.items():
        if broker in rack_of:
            per[rack_of[broker]] += n
    return max(per.values(), default=0)


# -- what every plan must satisfy ---------------------------------------------------------------------

def check_plan(case: dict, plan) -> Counter:
    """The plan's invariants; returns the leaders per broker it leads to."""
    state, moving = case["state"], movable(case)
    changed = {c.tp: c for c in plan.changes}
    assert len(changed) == len(plan.changes)
    after = Counter()
    for tp, p in state.partitions.items():
        change = changed.get(tp)
        if change is None:
            leader = moving[tp][1] if tp in moving else p.leader
        else:
            assert tp in moving, f"{tp} is not to be touched"
            assert change.replicas_before == p.replicas and change.leader_before == p.leader
            assert sorted(change.replicas_after) == sorted(p.replicas), "a replica set changed"
            assert change.replicas_after != p.replicas
            leader = change.leader_after
            assert leader == change.replicas_after[0]
            assert change.replicas_after[1:] == tuple(r for r in p.replicas if r != leader)
            assert leader in moving[tp][0], f"{leader} may not lead {tp}"
            assert leader != moving[tp][1]
        assert tp in moving or change is None
        if tp in moving:
            assert leader is not None and leader in moving[tp][0]
        if leader != NO_LEADER:
            after[leader] += 1
    by_broker = {b.broker: b for b in plan.brokers}
    assert {b for b, n in after.items() if n} <= set(by_broker)
    for broker, b in by_broker.items():
        assert b.leaders_after == after[broker]
        assert b.leaders_before == sum(p.leader == broker for p in state.partitions.values())
        assert b.may_lead == (broker in may_lead(case))
    assert plan.max_after == peak(after, may_lead(case))
    assert set(plan.elect_only) == {tp for tp in moving if tp not in changed
                                    and state.partitions[tp].leader != moving[tp][1]}
    return after


@settings(max_examples=300)
@given(problems())
def test_the_maximum_is_the_least_possible_with_the_fewest_changes(case):
    plan = solve_leadership(case["state"], **kwargs(case))
    after = check_plan(case, plan)
    brokers = may_lead(case)
    best = min((peak(counts, brokers) for counts, _, _ in assignments(case)), default=0)
    fewest = min(changes for counts, changes, _ in assignments(case) if peak(counts, brokers) == best)
    assert plan.max_after == plan.lower_bound == best
    assert len(plan.changes) == plan.changes_for_optimum == fewest
    assert plan.optimal
    # Spread: among those plans, the least loaded broker (up to what it could lead) is as loaded as can be.
    moving, fixed = movable(case), fixed_leaders(case)
    reach = {b: fixed[b] + sum(b in eligible for eligible, _ in moving.values()) for b in brokers}

    def floor(counts: Counter) -> int:
        return min((min(counts[b], reach[b]) for b in brokers), default=0)

    assert floor(after) == max(floor(c) for c, n, _ in assignments(case) if peak(c, brokers) == best and n == fewest)


@settings(max_examples=200)
@given(problems(), st.integers(0, 4))
def test_max_moves_takes_the_best_moves(case, moves):
    brokers = may_lead(case)
    within = [(peak(c, brokers), n) for c, n, _ in assignments(case) if n <= moves]
    if not within:  # more partitions must change than allowed
        with pytest.raises(BalanceInputError, match="must change"):
            solve_leadership(case["state"], **kwargs(case, max_moves=moves))
        return
    plan = solve_leadership(case["state"], **kwargs(case, max_moves=moves))
    check_plan(case, plan)
    best = min(m for m, _ in within)
    assert len(plan.changes) <= moves
    assert plan.max_after == best
    assert len(plan.changes) == min(n for m, n in within if m == best)
    assert plan.lower_bound <= plan.max_after


@settings(max_examples=150)
@given(problems(max_partitions=6), st.lists(st.sampled_from("xyz"), min_size=len(BROKERS), max_size=len(BROKERS)))
def test_rack_aware_spreads_racks_without_giving_up_the_broker_optimum(case, names):
    rack_of = dict(zip(BROKERS, names, strict=True))
    plan = solve_leadership(case["state"], **kwargs(case, rack_of=rack_of))
    after = check_plan(case, plan)
    brokers = may_lead(case)
    best = min((peak(c, brokers) for c, _, _ in assignments(case)), default=0)
    rack_best = min(racks(c, rack_of) for c, _, _ in assignments(case) if peak(c, brokers) == best)
    fewest = min(n for c, n, _ in assignments(case) if peak(c, brokers) == best and racks(c, rack_of) == rack_best)
    assert plan.max_after == best
    assert racks(after, rack_of) == rack_best == plan.rack_lower_bound
    assert max((r.leaders_after for r in plan.racks), default=0) == rack_best
    assert len(plan.changes) == fewest


@settings(max_examples=150)
@given(problems(max_partitions=6), st.data())
def test_weighted_load_is_no_worse_than_the_count_solution_and_above_a_true_lower_bound(case, data):
    state = case["state"]
    weights = {tp: data.draw(st.sampled_from([0, 1, 2.5, 7, 40, 1000])) for tp in state.partitions}
    moves = data.draw(st.one_of(st.none(), st.integers(0, 3)))
    if moves is not None and all(n > moves for _, n, _ in assignments(case)):
        return  # more partitions must change than allowed (refused: test_max_moves_takes_the_best_moves)
    plan = solve_leadership(state, **kwargs(case, weights=weights, max_moves=moves))
    check_plan(case, plan)
    assert moves is None or len(plan.changes) <= moves
    brokers = may_lead(case)
    fixed = Counter()
    moving = movable(case)
    for tp, p in state.partitions.items():
        if tp not in moving and p.leader != NO_LEADER:
            fixed[p.leader] += weights[tp]

    def heaviest(choice: dict) -> float:
        load = Counter(fixed)
        for tp, b in choice.items():
            load[b] += weights[tp]
        return max((load[b] for b in brokers), default=0.0)

    optimum = min((heaviest(choice) for _, _, choice in assignments(case)), default=0.0)
    load = plan.load
    tolerance = 1e-9 * max(optimum, 1)
    assert load.lower_bound <= optimum + tolerance
    assert optimum <= load.max_after + tolerance
    assert load.max_after <= load.count_solution_max + tolerance
    assert load.gap >= 0
    after = {b.broker: b.load_after for b in plan.brokers}
    assert math.isclose(max((after[b] for b in brokers), default=0.0), load.max_after, abs_tol=tolerance)


def test_a_skewed_cluster_is_balanced_with_only_the_needed_moves():
    brokers = {b: ("127.0.0.1", 9000 + b) for b in range(1, 5)}
    partitions = {}
    for i in range(12):  # broker 1 preferred for all twelve; 2-4 are the other replicas in turn
        others = [2 + (i + k) % 3 for k in range(2)]
        p = PartitionState("t", i, 1, (1, *others), (1, *others))
        partitions[p.tp] = p
    plan = solve_leadership(ClusterState(brokers, 1, partitions))
    assert (plan.max_before, plan.max_after, plan.lower_bound, len(plan.changes)) == (12, 3, 3, 9)
    assert [b.leaders_after for b in plan.brokers] == [3, 3, 3, 3]
    assert plan.spread_before == 12 and plan.spread_after == 0


def test_inputs_it_cannot_honour_are_refused_with_the_fix():
    p = PartitionState("t", 0, 1, (1, 2), (1, 2))
    state = ClusterState({1: ("h", 1), 2: ("h", 2)}, 1, {p.tp: p})
    with pytest.raises(BalanceInputError, match="broker\\(s\\) 2 have no broker.rack"):
        solve_leadership(state, rack_of={1: "x"})
    with pytest.raises(BalanceInputError, match="1 partition\\(s\\) have no weight"):
        solve_leadership(state, weights={})
    with pytest.raises(BalanceInputError, match="finite numbers"):
        solve_leadership(state, weights={p.tp: float("nan")})
    with pytest.raises(BalanceInputError, match="1 partition\\(s\\) must change"):
        solve_leadership(state, exclude_brokers={1}, max_moves=0)
    with pytest.raises(BalanceInputError, match="moves limit must be 0 or more, not -1"):
        solve_leadership(state, max_moves=-1)
    with pytest.raises(BalanceInputError, match="rack-aware balancing of weighted load is not supported"):
        solve_leadership(state, rack_of={1: "x", 2: "y"}, weights={p.tp: 1.0})


def test_among_the_fewest_changes_the_spread_is_the_smallest():
    # Broker 2 keeps 5 leaders of an excluded topic, so the maximum is 5 whatever happens; the four
    # partitions preferring excluded broker 1 must change, and go two to broker 3 and two to broker 4.
    brokers = {b: ("127.0.0.1", 9000 + b) for b in range(1, 5)}
    fixed = [PartitionState("x", i, 2, (2, 3), (2, 3)) for i in range(5)]
    moving = [PartitionState("t", i, 1, (1, 3, 4) if i % 2 else (1, 4, 3), (1, 3, 4)) for i in range(4)]
    state = ClusterState(brokers, 1, {p.tp: p for p in fixed + moving})
    plan = solve_leadership(state, exclude_brokers={1}, exclude_topic="x".__eq__)
    assert [(b.broker, b.leaders_after) for b in plan.brokers] == [(1, 0), (2, 5), (3, 2), (4, 2)]
    assert (plan.max_after, len(plan.changes), plan.spread_after) == (5, 4, 3)
