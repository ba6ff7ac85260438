"""Leadership balance: new preferred replicas so that no broker leads more than it must, with the
fewest partitions changed. Pure: a `ClusterState` in, a `LeadershipPlan` out, no I/O.

A change is a new replica ORDER for a partition (the same replica set, so no data moves): the chosen
broker first, the other replicas in their previous relative order. A preferred election then makes
the first replica the leader.

Who may lead. A partition is *movable* unless its topic is excluded, a reassignment of it is pending,
or none of its replicas is *eligible*: live, in the ISR, log directory online (what a controller
accepts for a preferred election) and not an excluded broker. A partition that is not movable keeps
its current leader, which still counts on its broker. Each movable partition has at most one choice
that costs nothing, its *keep* broker: its first replica when eligible (the preferred election puts
leadership there); when the first replica cannot lead at all (dead, out of the ISR, offline) the
current leader, if eligible (the order stays and so does the leader); otherwise none, and the partition
must change (e.g. its first replica is an excluded broker that would take leadership back).

The count model is a flow network. Partitions with the same eligible set and keep broker form a group
g of n_g partitions; the graph is

    source --n_g--> g --n_g, cost 0 to keep, 1 to any other eligible broker--> broker b
    broker b --L - f_b--> sink          (f_b: leaders b keeps from partitions that are not movable)

(with `rack_aware`, broker b --L - f_b--> rack r --R - f_r--> sink instead). An integral flow that
saturates the source arcs is exactly an assignment of a leader to every movable partition with at
most L leaders per broker (at most R per rack), and its cost is the number of partitions changed. So:

1. L* = the least L whose max flow saturates the source (binary search, OR-Tools' max flow): the
   least maximum possible, proven by the flow itself (a smaller L has a cut below the demand).
2. With `rack_aware`, R* = the least R feasible with L*, likewise.
3. C* = the min-cost flow at (L*, R*) (OR-Tools' min-cost flow): the fewest changes reaching them.
   With `max_moves` N < C*, L is instead the least L whose min cost is at most N (the cost only falls
   as L grows, so a binary search finds it), then R likewise, then the changes at (L, R).
4. Spread: the largest m such that every broker can be given at least min(m, f_b + the partitions it
   could lead) leaders while the min cost stays the same (a lower bound on the broker->sink arc,
   encoded as node supplies): among the plans with the fewest changes, the one whose least loaded
   broker is as loaded as possible. Raising m only adds constraints, so this too is a binary search.

Flow on g -> b is then handed back to g's partitions: those already led by their keep broker keep it,
those led by a broker that g sends flow to get that broker (their order changes but leadership does
not move), the rest fill what remains. Grouping keeps the graph small: about 3,000 groups and 9,000
arcs for a million partitions on 24 brokers with three replicas each.

With weights (bytes, bytes-in...), the objective is the heaviest broker's leader load, which is
NP-hard (it contains makespan scheduling on restricted machines). The heuristic starts from the exact
count solution (and, without `max_moves` and while still above the lower bound, from a
largest-weight-first greedy too), improves by moves and swaps off the heaviest broker while each
strictly lowers it, then gives changed partitions back their keep broker wherever that keeps the
maximum. It is never worse than the count solution. Its proven
lower bound is the larger of the fractional relaxation (a max-flow binary search over the same groups
with weights as capacities, scaled to integers and rounded so that the bound stays sound) and, per
partition, its weight plus the lightest fixed load among its eligible brokers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Mapping
from typing import NamedTuple

import numpy as np
from ortools.graph.python import max_flow, min_cost_flow

from leader_election_cli.errors import listed
from leader_election_cli.model import NO_LEADER, ClusterState, PartitionState, TopicPartition
from leader_election_cli.planning.leadership_plan import (  # noqa: F401 (the solver's results)
    BalanceInputError,
    BrokerLeadership,
    LeaderChange,
    LeadershipPlan,
    LoadFigures,
    RackLeadership,
    weight_problem,
)
from leader_election_cli.planning.reorders import reorder_for_leader


def solve_leadership(state: ClusterState, *, exclude_brokers: Collection[int] = (),
                     exclude_topic: Callable[[str], bool] | None = None,
                     rack_of: Mapping[int, str] | None = None,
                     weights: Mapping[TopicPartition, float] | None = None,
                     max_moves: int | None = None) -> LeadershipPlan:
    """The plan for `state` (see the module docstring for the model).

    `exclude_topic` says which topics to leave alone (e.g. a compiled regex's `fullmatch`).
    `rack_of` (broker -> rack) makes the balance rack-aware; it must name every broker that may lead.
    `weights` per partition (>= 0, finite) switch to balancing load; every partition with a leader or
    that may move needs one. `max_moves` caps the partitions changed (the best ones are taken).
    Raises `BalanceInputError` for inputs that cannot be honoured.
    """
    check_options(rack_aware=rack_of is not None, weighted=weights is not None, max_moves=max_moves)
    problem = _Problem.build(state, frozenset(exclude_brokers), exclude_topic, rack_of)
    counts = _solve_counts(problem, max_moves)
    assign = problem.assign(counts.flows)
    load = None
    if weights is not None:
        w, fixed_w = problem.weights(weights)
        assign, load = _balance_load(problem, assign, w, fixed_w, max_moves)
    return problem.plan(assign, counts, max_moves, load)


def check_options(*, rack_aware: bool, weighted: bool, max_moves: int | None) -> None:
    """The options `solve_leadership` cannot honour whatever the cluster: a `BalanceInputError`."""
    if max_moves is not None and max_moves < 0:
        raise BalanceInputError(f"the moves limit must be 0 or more, not {max_moves}")
    if rack_aware and weighted:
        raise BalanceInputError("rack-aware balancing of weighted load is not supported: load is balanced per "
                                "broker only")


# -- the problem -------------------------------------------------------------------------------------

class _Problem:
    """Movable partitions grouped by (eligible brokers, keep broker); brokers as indexes 0..B-1."""

    def __init__(self) -> None:
        self.candidates: list[int] = []  # brokers that may lead, sorted
        self.index: dict[int, int] = {}
        self.group_eligible: list[tuple[int, ...]] = []  # broker indexes
        self.group_keep: list[int] = []  # broker index or -1
        self.movable: list[PartitionState] = []
        self.tps: list[TopicPartition] = []  # their keys
        self.group_of: list[int] = []  # per movable partition
        self.fixed: list[PartitionState] = []  # partitions that are not movable but may have a leader
        self.excluded = 0
        self.skipped: list[tuple[TopicPartition, str]] = []
        self.rack_of: Mapping[int, str] | None = None
        self.all_brokers: list[int] = []

    @classmethod
    def build(cls, state: ClusterState, exclude: frozenset[int], exclude_topic: Callable[[str], bool] | None,
              rack_of: Mapping[int, str] | None) -> _Problem:
        self = cls()
        live = state.live_brokers
        self.candidates = sorted(live - exclude)
        self.index = {b: i for i, b in enumerate(self.candidates)}
        if rack_of is not None:
            missing = [b for b in self.candidates if rack_of.get(b) is None]
            if missing:
                raise BalanceInputError(f"rack-aware balancing needs a rack for every broker, and broker(s) "
                                        f"{listed(missing, ',')} have no broker.rack: set it, exclude "
                                        f"them, or drop rack awareness")
        self.rack_of = rack_of
        topic_excluded: dict[str, bool] = {}
        classes: dict[tuple, int] = {}  # (replicas, isr, offline, leader) -> group, or -1 when none may lead
        groups: dict[tuple[tuple[int, ...], int], int] = {}
        reassigning = state.reassigning
        leaders = set()
        for tp, p in state.partitions.items():
            leaders.add(p.leader)
            excluded = topic_excluded.get(p.topic)
            if excluded is None:
                excluded = topic_excluded[p.topic] = bool(exclude_topic and exclude_topic(p.topic))
            if excluded:
                self.excluded += 1
                self.fixed.append(p)
                continue
            if reassigning and tp in reassigning:
                self.skipped.append((tp, "a reassignment is pending"))
                self.fixed.append(p)
                continue
            key = (p.replicas, p.isr, p.offline_replicas, p.leader)
            group = classes.get(key)
            if group is None:
                group = classes[key] = self._group_of(p, live, groups)
            if group < 0:
                self.skipped.append((tp, "no replica may lead (live, in the ISR, not excluded)"))
                self.fixed.append(p)
                continue
            self.movable.append(p)
            self.tps.append(tp)
            self.group_of.append(group)
        self.skipped.sort()
        self.all_brokers = sorted(live | (leaders - {NO_LEADER}))
        return self

    def _group_of(self, p: PartitionState, live: frozenset[int], groups: dict) -> int:
        isr = set(p.isr)
        offline = set(p.offline_replicas)
        eligible = sorted(self.index[r] for r in p.replicas if r in self.index and r in isr and r not in offline)
        if not eligible:
            return -1
        first = p.replicas[0]
        if first in self.index and self.index[first] in eligible:
            keep = self.index[first]
        elif first in live and first in isr and first not in offline:
            keep = -1  # an excluded first replica would take leadership back
        elif p.leader in self.index and self.index[p.leader] in eligible:
            keep = self.index[p.leader]
        else:
            keep = -1
        key = (tuple(eligible), keep)
        group = groups.get(key)
        if group is None:
            group = groups[key] = len(self.group_eligible)
            self.group_eligible.append(key[0])
            self.group_keep.append(keep)
        return group

    def keep_index(self) -> np.ndarray:
        """Per movable partition, its keep broker's index (-1 when it has none)."""
        if not self.movable:
            return np.zeros(0, dtype=np.int64)
        return np.asarray(self.group_keep, dtype=np.int64)[np.asarray(self.group_of, dtype=np.int64)]

    def fixed_counts(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for p in self.fixed:
            if p.leader != NO_LEADER:
                counts[p.leader] = counts.get(p.leader, 0) + 1
        return counts

    def assign(self, flows: np.ndarray) -> np.ndarray:
        """Per movable partition, the broker index the group flows (G x B) give it."""
        sizes = len(self.movable)
        assign = np.full(sizes, -1, dtype=np.int64)
        if not sizes:
            return assign
        group_of = np.asarray(self.group_of, dtype=np.int64)
        order = np.argsort(group_of, kind="stable")
        bounds = np.searchsorted(group_of[order], np.arange(len(self.group_eligible) + 1))
        index = self.index
        for g, keep in enumerate(self.group_keep):
            members = order[bounds[g]:bounds[g + 1]]
            left = {b: int(flows[g, b]) for b in self.group_eligible[g] if flows[g, b] > 0}
            if keep >= 0 and left.get(keep, 0) == len(members):
                assign[members] = keep
                continue
            rest = []
            for i in members.tolist():  # those led by their keep broker keep it
                if keep >= 0 and left.get(keep, 0) > 0 and index.get(self.movable[i].leader) == keep:
                    assign[i] = keep
                    left[keep] -= 1
                else:
                    rest.append(i)
            others = []
            for i in rest:  # those led where the group sends flow go there: no leadership moves
                current = index.get(self.movable[i].leader, -1)
                if current != keep and left.get(current, 0) > 0:
                    assign[i] = current
                    left[current] -= 1
                else:
                    others.append(i)
            slots = [b for b, n in left.items() for _ in range(n)]
            slots.sort(key=lambda b: b != keep)  # keep broker first: those partitions need no change
            assign[others] = slots
        return assign

    def weights(self, weights: Mapping[TopicPartition, float]) -> tuple[np.ndarray, dict[int, float]]:
        """(weight per movable partition, fixed load per broker)."""
        missing: list[TopicPartition] = []

        def weight(tp: TopicPartition) -> float:
            value = weights.get(tp)
            if value is None:
                missing.append(tp)
                return 0.0
            problem = weight_problem(value)
            if problem:
                raise BalanceInputError(f"the weight of {tp} is {value!r}: {problem}")
            return float(value)

        w = np.fromiter(map(weight, self.tps), dtype=np.float64, count=len(self.movable))
        fixed: dict[int, float] = {}
        for p in self.fixed:
            if p.leader != NO_LEADER:
                fixed[p.leader] = fixed.get(p.leader, 0.0) + weight(p.tp)
        if missing:
            raise BalanceInputError(f"{len(missing)} partition(s) have no weight (e.g. {min(missing)}): "
                                    f"give every partition one")
        return w, fixed

    def plan(self, assign: np.ndarray, counts: _Counts, max_moves: int | None,
             load: tuple[LoadFigures, np.ndarray, dict[int, float]] | None) -> LeadershipPlan:
        candidates = np.asarray(self.candidates, dtype=np.int64)
        leaders = np.fromiter((p.leader for p in self.movable), dtype=np.int64, count=len(self.movable))
        leader_after = candidates[assign] if len(assign) else np.zeros(0, dtype=np.int64)
        changed = assign != self.keep_index()
        movable = self.movable
        orders: dict[tuple[tuple[int, ...], int], tuple[int, ...]] = {}  # many partitions share an order

        def order(replicas: tuple[int, ...], broker: int) -> tuple[int, ...]:
            key = (replicas, broker)
            found = orders.get(key)
            if found is None:
                found = orders[key] = reorder_for_leader(replicas, broker)
            return found

        tps = self.tps
        changes = [LeaderChange(tps[i], movable[i].replicas, order(movable[i].replicas, b), movable[i].leader, b)
                   for i, b in zip(np.flatnonzero(changed).tolist(), leader_after[changed].tolist(), strict=True)]
        changes.sort()
        elect_only = sorted(tps[i] for i in np.flatnonzero(~changed & (leaders != leader_after)).tolist())
        fixed = self.fixed_counts()
        before, after = Counter(fixed), Counter(fixed)
        before.update(dict(zip(*(v.tolist() for v in np.unique(leaders, return_counts=True)), strict=True)))
        after.update(dict(zip(*(v.tolist() for v in np.unique(leader_after, return_counts=True)), strict=True)))
        before.pop(NO_LEADER, None)
        rack = self.rack_of.get if self.rack_of is not None else (lambda b: None)
        load_before: dict[int, float] = {}
        load_after: dict[int, float] = {}
        if load is not None:
            _, w, fixed_w = load
            load_after, load_before = dict(fixed_w), dict(fixed_w)
            for values, into in ((leader_after, load_after), (leaders, load_before)):
                brokers, at = np.unique(values, return_inverse=True)
                for broker, total in zip(brokers.tolist(), np.bincount(at, weights=w).tolist(), strict=True):
                    into[broker] = into.get(broker, 0.0) + total
            load_before.pop(NO_LEADER, None)
        brokers = [BrokerLeadership(b, rack(b), b in self.index, before.get(b, 0), after.get(b, 0),
                                    load_before.get(b, 0.0) if load else None,
                                    load_after.get(b, 0.0) if load else None)
                   for b in self.all_brokers]
        may_lead = [b for b in brokers if b.may_lead]
        racks = None
        if self.rack_of is not None:
            per_rack: dict[str, list[int]] = {}
            for b in brokers:
                name = self.rack_of.get(b.broker)
                if name is not None:
                    totals = per_rack.setdefault(name, [0, 0])
                    totals[0] += b.leaders_before
                    totals[1] += b.leaders_after
            racks = [RackLeadership(r, *per_rack[r]) for r in sorted(per_rack)]
        return LeadershipPlan(
            changes=changes, elect_only=elect_only, brokers=brokers,
            max_before=max((b.leaders_before for b in may_lead), default=0),
            max_after=max((b.leaders_after for b in may_lead), default=0),
            lower_bound=counts.lower_bound, changes_for_optimum=counts.changes_for_optimum,
            movable=len(self.movable), excluded=self.excluded, skipped=self.skipped, max_moves=max_moves,
            racks=racks, rack_lower_bound=counts.rack_lower_bound, load=load[0] if load else None)


# -- counts: the flow network --------------------------------------------------------------------------

class _Network:
    """source -> group -> broker [-> rack] -> sink over a `_Problem`; capacities set per solve."""

    SOURCE, SINK = 0, 1

    def __init__(self, problem: _Problem) -> None:
        groups = len(problem.group_eligible)
        brokers = len(problem.candidates)
        self.groups, self.brokers = groups, brokers
        self.size = np.bincount(np.asarray(problem.group_of, dtype=np.int64), minlength=groups).astype(np.int64)
        self.total = int(self.size.sum())
        fixed = problem.fixed_counts()
        self.fixed = np.array([fixed.get(b, 0) for b in problem.candidates], dtype=np.int64)
        group_node = 2 + np.arange(groups)
        self.broker_node = 2 + groups + np.arange(brokers)
        tails = [np.zeros(groups, dtype=np.int64)]
        heads = [group_node]
        caps = [self.size]
        costs = [np.zeros(groups, dtype=np.int64)]
        gb_tail, gb_head, gb_cost = [], [], []
        for g, (eligible, keep) in enumerate(zip(problem.group_eligible, problem.group_keep, strict=True)):
            for b in eligible:
                gb_tail.append(g)
                gb_head.append(b)
                gb_cost.append(0 if b == keep else 1)
        self.gb_group = np.array(gb_tail, dtype=np.int64)
        self.gb_broker = np.array(gb_head, dtype=np.int64)
        tails.append(group_node[self.gb_group])
        heads.append(self.broker_node[self.gb_broker])
        caps.append(self.size[self.gb_group])
        costs.append(np.array(gb_cost, dtype=np.int64))
        self.gb_arcs = np.arange(groups, groups + len(gb_tail))
        # Each broker's reach: the movable partitions it could lead.
        self.reach = np.bincount(self.gb_broker, weights=self.size[self.gb_group], minlength=brokers).astype(np.int64)
        self.rack = None
        if problem.rack_of is not None:
            names = sorted({problem.rack_of[b] for b in problem.candidates})
            rack_index = {name: i for i, name in enumerate(names)}
            self.rack = np.array([rack_index[problem.rack_of[b]] for b in problem.candidates], dtype=np.int64)
            self.rack_fixed = np.zeros(len(names), dtype=np.int64)
            elsewhere: dict[str, int] = {}  # racks with no broker that may lead: their load is fixed
            for broker, n in fixed.items():  # every broker's fixed leaders count on its rack
                name = problem.rack_of.get(broker)
                if name in rack_index:
                    self.rack_fixed[rack_index[name]] += n
                elif name is not None:
                    elsewhere[name] = elsewhere.get(name, 0) + n
            self.fixed_racks_max = max(elsewhere.values(), default=0)
            rack_node = 2 + groups + brokers + np.arange(len(names))
            tails += [self.broker_node, rack_node]
            heads += [rack_node[self.rack], np.ones(len(names), dtype=np.int64)]
        else:
            tails.append(self.broker_node)
            heads.append(np.ones(brokers, dtype=np.int64))
        self.tails = np.concatenate(tails)
        self.heads = np.concatenate(heads)
        self.base_caps = np.concatenate(caps)
        self.costs = np.concatenate([*costs, np.zeros(len(self.tails) - sum(map(len, costs)), dtype=np.int64)])
        self.broker_arcs = groups + len(gb_tail) + np.arange(brokers)
        self.nodes = int(max(self.tails.max(initial=1), self.heads.max(initial=1))) + 1

    def _caps(self, limit: int, rack_limit: int | None, floor: np.ndarray | None) -> np.ndarray:
        caps = np.concatenate([self.base_caps, np.maximum(limit - self.fixed, 0)])
        if floor is not None:
            caps[self.broker_arcs] -= floor
        if self.rack is not None:
            rack_caps = np.full(len(self.rack_fixed), self.total) if rack_limit is None else \
                np.maximum(rack_limit - self.rack_fixed, 0)
            caps = np.concatenate([caps, rack_caps])
        return caps

    def feasible(self, limit: int, rack_limit: int | None = None) -> bool:
        """Every movable partition placed with at most `limit` leaders per broker (`rack_limit` per rack)."""
        if self.total == 0:
            return True
        if (limit < self.fixed).any() or (rack_limit is not None and (rack_limit < self.rack_fixed).any()):
            return False
        flow = max_flow.SimpleMaxFlow()
        flow.add_arcs_with_capacity(self.tails, self.heads, self._caps(limit, rack_limit, None))
        status = flow.solve(self.SOURCE, self.SINK)
        if status != flow.OPTIMAL:
            raise RuntimeError(f"max flow failed with status {status}")
        return flow.optimal_flow() == self.total

    def min_cost(self, limit: int, rack_limit: int | None = None,
                 least: int | None = None) -> tuple[int, np.ndarray] | None:
        """(fewest changes, flows group x broker) with those limits and every broker given at least
        min(least, fixed + reach) leaders; None when infeasible."""
        if self.total == 0:
            return 0, np.zeros((self.groups, self.brokers), dtype=np.int64)
        if (limit < self.fixed).any() or (rack_limit is not None and (rack_limit < self.rack_fixed).any()):
            return None
        floor = None
        supplies = np.zeros(self.nodes, dtype=np.int64)
        supplies[self.SOURCE], supplies[self.SINK] = self.total, -self.total
        if least is not None:
            floor = np.clip(np.minimum(least - self.fixed, self.reach), 0, None)
            floor = np.minimum(floor, np.maximum(limit - self.fixed, 0))
            supplies[self.broker_node] -= floor
            np.add.at(supplies, self.heads[self.broker_arcs], floor)
        flow = min_cost_flow.SimpleMinCostFlow()
        arcs = flow.add_arcs_with_capacity_and_unit_cost(self.tails, self.heads,
                                                         self._caps(limit, rack_limit, floor), self.costs)
        flow.set_nodes_supplies(np.arange(self.nodes), supplies)
        status = flow.solve()
        if status == flow.INFEASIBLE:
            return None
        if status != flow.OPTIMAL:
            raise RuntimeError(f"min-cost flow failed with status {status}")
        flows = np.zeros((self.groups, self.brokers), dtype=np.int64)
        flows[self.gb_group, self.gb_broker] = flow.flows(arcs[self.gb_arcs])
        return flow.optimal_cost(), flows


def _least(low: int, high: int, ok: Callable[[int], bool]) -> int:
    """The least value in [low, high] for which `ok` holds; `ok(high)` must hold and `ok` be monotone."""
    while low < high:
        middle = (low + high) // 2
        if ok(middle):
            high = middle
        else:
            low = middle + 1
    return high


class _Counts(NamedTuple):
    flows: np.ndarray  # group x broker
    lower_bound: int
    changes_for_optimum: int
    rack_lower_bound: int | None


def _solve_counts(problem: _Problem, max_moves: int | None) -> _Counts:
    net = _Network(problem)
    top = int(net.fixed.max(initial=0)) + net.total  # feasible: every broker may take them all
    average = -(-(net.total + int(net.fixed.sum())) // max(net.brokers, 1))
    best = _least(max(int(net.fixed.max(initial=0)), average), top, net.feasible)
    rack_top = int(net.rack_fixed.max(initial=0)) + net.total if net.rack is not None else None
    best_rack = None if net.rack is None else max(
        net.fixed_racks_max, _least(int(net.rack_fixed.max(initial=0)), rack_top, lambda r: net.feasible(best, r)))
    fewest = net.min_cost(best, best_rack)
    assert fewest is not None  # feasible by construction
    limit, rack_limit, changes = best, best_rack, fewest[0]
    if max_moves is not None and changes > max_moves:
        forced = int(net.size[np.asarray(problem.group_keep) < 0].sum()) if net.groups else 0
        if forced > max_moves:
            raise BalanceInputError(f"{forced} partition(s) must change (their first replica is an excluded "
                                    f"broker, or the replica leading them may not), more than the "
                                    f"{max_moves} moves allowed: raise the moves limit to at least {forced}")

        def within(lim: int, rack: int | None = None) -> bool:
            result = net.min_cost(lim, rack)
            return result is not None and result[0] <= max_moves

        limit = _least(best, top, within)
        if net.rack is not None:
            rack_limit = max(net.fixed_racks_max,
                             _least(int(net.rack_fixed.max(initial=0)), rack_top, lambda r: within(limit, r)))
        changes = net.min_cost(limit, rack_limit)[0]

    def same_cost(least: int) -> bool:
        result = net.min_cost(limit, rack_limit, least)
        return result is not None and result[0] <= changes

    # The largest m with same_cost(m): the least m' = limit - m for which same_cost(limit - m') holds.
    spread = limit - _least(0, limit, lambda m: same_cost(limit - m))
    flows = net.min_cost(limit, rack_limit, spread)[1]
    return _Counts(flows, best, fewest[0], best_rack)


# -- weighted load: a heuristic seeded by the count solution ------------------------------------------

def _balance_load(problem: _Problem, seed: np.ndarray, w: np.ndarray, fixed_w: dict[int, float],
                  max_moves: int | None) -> tuple[np.ndarray, tuple[LoadFigures, np.ndarray, dict[int, float]]]:
    brokers = len(problem.candidates)
    fixed = np.array([fixed_w.get(b, 0.0) for b in problem.candidates], dtype=np.float64)
    keep = problem.keep_index()
    width = max((len(e) for e in problem.group_eligible), default=1)
    table = np.full((len(problem.group_eligible), width), -1, dtype=np.int64)
    for g, eligible in enumerate(problem.group_eligible):
        table[g, :len(eligible)] = eligible
    eligible = table[np.asarray(problem.group_of, dtype=np.int64)] if problem.movable else \
        np.zeros((0, width), dtype=np.int64)

    def loads(assign: np.ndarray) -> np.ndarray:
        return fixed + np.bincount(assign, weights=w, minlength=brokers) if brokers else fixed

    seed_max = float(loads(seed).max(initial=0.0))
    bound = _load_lower_bound(problem, w, fixed, eligible)
    limit = max_moves if max_moves is not None else len(w)
    candidates = [_improve(seed.copy(), keep, eligible, w, fixed, limit)]
    if max_moves is None and float(loads(candidates[0]).max(initial=0.0)) > bound * (1 + 1e-9):
        candidates.append(_improve(_largest_first(keep, eligible, w, fixed), keep, eligible, w, fixed, limit))
    best = min(candidates, key=lambda a: (float(loads(a).max(initial=0.0)), int((a != keep).sum())))
    best = _give_back(best, keep, w, fixed)
    before = {}
    for i, p in enumerate(problem.movable):
        if p.leader in problem.index:
            before[p.leader] = before.get(p.leader, 0.0) + float(w[i])
    max_before = max((before.get(b, 0.0) + fixed_w.get(b, 0.0) for b in problem.candidates), default=0.0)
    figures = LoadFigures(max_before, float(loads(best).max(initial=0.0)), seed_max, bound)
    return best, (figures, w, fixed_w)


def _largest_first(keep: np.ndarray, eligible: np.ndarray, w: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """Heaviest partition first, each to the eligible broker left lightest (its keep broker on a tie)."""
    load = fixed.copy()
    assign = np.empty(len(w), dtype=np.int64)
    for i in np.argsort(-w, kind="stable").tolist():
        options = [b for b in eligible[i].tolist() if b >= 0]
        choice = min(options, key=lambda b: (load[b] + w[i], b != keep[i]))
        assign[i] = choice
        load[choice] += w[i]
    return assign


def _improve(assign: np.ndarray, keep: np.ndarray, eligible: np.ndarray, w: np.ndarray, fixed: np.ndarray,
             max_changes: int, rounds: int = 20_000) -> np.ndarray:
    """Moves and swaps off the heaviest broker, each lowering it strictly and keeping the changes within
    `max_changes`; stops when none helps (or after `rounds`). Every step lowers the sum of squared loads."""
    if not len(w):
        return assign
    load = fixed + np.bincount(assign, weights=w, minlength=len(fixed))
    changes = int((assign != keep).sum())
    tolerance = 1e-9 * max(float(load.max()), 1.0)
    for _ in range(rounds):
        heavy = int(load.argmax())
        top = load[heavy]
        mine = np.flatnonzero((assign == heavy) & (w > 0))
        if not len(mine):
            break
        step = _best_move(mine, heavy, top, assign, keep, eligible, w, load, changes, max_changes, tolerance)
        if step is None:
            step = _best_swap(mine, heavy, top, assign, keep, eligible, w, load, changes, max_changes, tolerance)
        if step is None:
            break
        for i, b in step:
            changes += int(b != keep[i]) - int(assign[i] != keep[i])
            load[assign[i]] -= w[i]
            load[b] += w[i]
            assign[i] = b
    return assign


def _best_move(mine, heavy, top, assign, keep, eligible, w, load, changes, max_changes, tolerance):
    targets = eligible[mine]
    valid = (targets >= 0) & (targets != heavy)
    weight = w[mine][:, None]
    after = np.where(valid, load[np.where(valid, targets, 0)] + weight, np.inf)
    delta = (targets != keep[mine][:, None]).astype(np.int64) - (heavy != keep[mine])[:, None]
    valid &= (after < top - tolerance) & (changes + delta <= max_changes)
    if not valid.any():
        return None
    score = np.where(valid, np.maximum(after, top - weight), np.inf)
    row, col = np.unravel_index(int(np.argmin(score)), score.shape)
    return [(int(mine[row]), int(targets[row, col]))]


def _best_swap(mine, heavy, top, assign, keep, eligible, w, load, changes, max_changes, tolerance):
    """The swap of a partition on `heavy` with a lighter one elsewhere that lowers the pair's maximum most."""
    best, best_score = None, top - tolerance
    movable_here = np.flatnonzero((assign != heavy) & (eligible == heavy).any(axis=1))
    by_broker = movable_here[np.argsort(assign[movable_here], kind="stable")]
    starts = np.searchsorted(assign[by_broker], np.arange(len(load) + 1))
    for other in np.argsort(load).tolist():
        if other == heavy or load[other] >= best_score:
            continue
        room = top - load[other]  # the weight difference d must lie in (0, room); best near room / 2
        ours = mine[(eligible[mine] == other).any(axis=1)]
        theirs = by_broker[starts[other]:starts[other + 1]]
        if not len(ours) or not len(theirs):
            continue
        theirs = theirs[np.argsort(w[theirs], kind="stable")]
        at = np.searchsorted(w[theirs], w[ours] - room / 2)
        for j in (np.maximum(at - 1, 0), np.minimum(at, len(theirs) - 1)):
            q = theirs[j]
            d = w[ours] - w[q]
            delta = ((other != keep[ours]).astype(np.int64) - (heavy != keep[ours]) + (heavy != keep[q])
                     - (other != keep[q]))
            valid = (d > 0) & (d < room) & (changes + delta <= max_changes)
            if not valid.any():
                continue
            score = np.where(valid, np.maximum(load[other] + d, top - d), np.inf)
            k = int(np.argmin(score))
            if score[k] < best_score:
                best, best_score = [(int(ours[k]), other), (int(q[k]), heavy)], float(score[k])
    return best


def _give_back(assign: np.ndarray, keep: np.ndarray, w: np.ndarray, fixed: np.ndarray) -> np.ndarray:
    """Changed partitions back on their keep broker wherever that keeps the heaviest load as it is."""
    if not len(w):
        return assign
    load = fixed + np.bincount(assign, weights=w, minlength=len(fixed))
    top = float(load.max())
    changed = np.flatnonzero((assign != keep) & (keep >= 0))
    for i in changed[np.argsort(w[changed], kind="stable")].tolist():
        if load[keep[i]] + w[i] <= top:
            load[assign[i]] -= w[i]
            load[keep[i]] += w[i]
            assign[i] = keep[i]
    return assign


def _load_lower_bound(problem: _Problem, w: np.ndarray, fixed: np.ndarray, eligible: np.ndarray) -> float:
    """A proven lower bound on the heaviest load: the fractional relaxation's and each partition's own."""
    if not len(w):
        return float(fixed.max(initial=0.0))
    single = float((w + np.where(eligible >= 0, fixed[np.maximum(eligible, 0)], np.inf).min(axis=1)).max())
    total = float(w.sum()) + float(fixed.sum())
    if total <= 0:
        return max(single, float(fixed.max(initial=0.0)))
    scale = 2.0 ** 50 / total
    # Groups by eligible set only; capacities scaled to integers, demands rounded down and broker room
    # rounded up, so the least feasible scaled limit L' satisfies (L' - 1) / scale < the true optimum.
    sets: dict[tuple[int, ...], int] = {}
    set_of = np.array([sets.setdefault(problem.group_eligible[g], len(sets)) for g in problem.group_of])
    demand = np.floor(np.bincount(set_of, weights=w, minlength=len(sets)) * scale).astype(np.int64)
    room = np.floor(fixed * scale).astype(np.int64)
    names = list(sets)
    tails = [np.zeros(len(names), dtype=np.int64)]
    heads = [2 + np.arange(len(names))]
    caps = [demand]
    for s, brokers in enumerate(names):
        tails.append(np.full(len(brokers), 2 + s))
        heads.append(2 + len(names) + np.asarray(brokers))
        caps.append(np.full(len(brokers), int(demand[s])))
    broker_nodes = 2 + len(names) + np.arange(len(fixed))
    tails.append(broker_nodes)
    heads.append(np.ones(len(fixed), dtype=np.int64))
    tails, heads, base = np.concatenate(tails), np.concatenate(heads), np.concatenate(caps)
    need = int(demand.sum())

    def feasible(limit: int) -> bool:
        flow = max_flow.SimpleMaxFlow()
        flow.add_arcs_with_capacity(tails, heads, np.concatenate([base, np.maximum(limit - room, 0)]))
        flow.solve(0, 1)
        return flow.optimal_flow() == need

    least = _least(int(room.max()), int(room.max()) + need, feasible)
    return max(single, (least - 1) / scale, float(fixed.max()))
