"""What a leadership balance plan is (`leadership_balance` computes one): per partition the new replica
order, per broker and rack the leaders before and after, the proven least maximum. Plain values, cheap
to import: reports and renderers use them without loading the solver (OR-Tools, NumPy)."""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import NamedTuple

from leader_election_cli.model import TopicPartition


class BalanceInputError(ValueError):
    """An input the solver cannot honour; the message names the problem and the fix."""


class LeaderChange(NamedTuple):
    """One partition's new order; the replica set is the same."""

    tp: TopicPartition
    replicas_before: tuple[int, ...]
    replicas_after: tuple[int, ...]
    leader_before: int  # NO_LEADER when it has none
    leader_after: int  # replicas_after[0], after the preferred election that follows


class BrokerLeadership(NamedTuple):
    broker: int
    rack: str | None
    may_lead: bool  # live and not excluded: the brokers the maximum is taken over
    leaders_before: int  # partitions it leads now
    leaders_after: int
    load_before: float | None = None  # with weights: the sum of its leaders' weights
    load_after: float | None = None


class RackLeadership(NamedTuple):
    rack: str
    leaders_before: int
    leaders_after: int


@dataclass(frozen=True)
class LoadFigures:
    """The weighted objective: the heaviest leader load on a broker that may lead."""

    max_before: float
    max_after: float
    count_solution_max: float  # the exact count solution's heaviest load, the heuristic's seed
    lower_bound: float  # proven: no assignment has a lighter heaviest broker

    @property
    def gap(self) -> float:
        """(max_after - lower_bound) / lower_bound; 0 when both are 0."""
        return (self.max_after - self.lower_bound) / self.lower_bound if self.lower_bound > 0 else 0.0


@dataclass(frozen=True)
class LeadershipPlan:
    """The reorders to make, and the leaders per broker before and after (after: once the changed
    partitions and those in `elect_only` have had a preferred election)."""

    changes: list[LeaderChange]  # sorted by partition
    elect_only: list[TopicPartition]  # order kept but led off its first replica: the "after" counts need an election
    brokers: list[BrokerLeadership]  # sorted by id: every live broker and every broker leading something
    max_before: int  # most leaders on a broker that may lead, now
    max_after: int
    lower_bound: int  # the least maximum any plan reaches (exact, whatever max_moves is)
    changes_for_optimum: int  # the fewest changes that reach lower_bound (and rack_lower_bound)
    movable: int  # partitions the solver could place
    excluded: int  # partitions of excluded topics: untouched, their leaders counted
    skipped: list[tuple[TopicPartition, str]]  # untouched for another reason, sorted
    max_moves: int | None = None
    racks: list[RackLeadership] | None = None  # with rack_aware, sorted by rack
    rack_lower_bound: int | None = None  # the least rack maximum given lower_bound per broker
    load: LoadFigures | None = None  # with weights

    @property
    def spread_before(self) -> int:
        return _spread([b.leaders_before for b in self.brokers if b.may_lead])

    @property
    def spread_after(self) -> int:
        return _spread([b.leaders_after for b in self.brokers if b.may_lead])

    @property
    def optimal(self) -> bool:
        """The objective reaches its proven lower bound (the load's when weighted, else the count's)."""
        if self.load is not None:  # the load's bound is rounded down by up to 2**-50 of the total: 1e-9 is reached
            return self.load.max_after <= self.load.lower_bound + 1e-9 * self.load.max_after
        return self.max_after == self.lower_bound


def _spread(values: list[int]) -> int:
    return max(values) - min(values) if values else 0


MIN_WEIGHT, MAX_WEIGHT = 1e-6, 1e18  # beyond them the scaled flow bound overflows or loses every digit


def weight_problem(value: object) -> str | None:
    """Why `value` cannot be a partition's weight, the one rule for every source (None: it can): a finite
    number, 0 or from 1e-6 to 1e18 (1e308s summed to infinity and divided by zero; 5e-324 made an optimal
    plan 'optimal: false, gap 100 %')."""
    if not (isinstance(value, numbers.Real) and math.isfinite(value) and value >= 0):
        return "weights must be finite numbers >= 0"
    if value != 0 and not MIN_WEIGHT <= value <= MAX_WEIGHT:
        return f"weights must be 0 or from {MIN_WEIGHT:g} to {MAX_WEIGHT:g}"
    return None
