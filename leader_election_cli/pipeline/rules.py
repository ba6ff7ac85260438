"""The planner's predicates as Spark built-in column expressions: no Python runs per row.

The reference is `leader_election_cli.planning.predicates` (what `status` and `rebalance` use); each
expression here says the same thing over a snapshot row's columns, and
`tests/test_pipeline.py::test_the_spark_expressions_are_the_planners_predicates` proves them equal on
generated snapshots. Valid rows only: every column a rule reads is non-null there
except `min_insync_replicas` (unknown) and `adding_replicas` (no reassignment pending, or a version 1
row), which the rules read as the planner does.
"""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from leader_election_cli.model import NO_LEADER

FLAG_NAMES = ("preferred_leader", "fixable", "under_replicated", "under_min_isr", "offline")


def _preferred() -> Column:
    return F.get("replicas", 0)  # null for an empty replica list


def is_preferred_leader() -> Column:
    """`balance.is_preferred_leader`: led by replicas[0]."""
    return (F.size("replicas") > 0) & F.coalesce(F.col("leader") == _preferred(), F.lit(False))


def is_fixable() -> Column:
    """`balance.is_fixable`: led elsewhere, preferred replica alive and in the ISR."""
    return ((F.size("replicas") > 0) & (F.col("leader") != _preferred())
            & F.array_contains("live_brokers", _preferred()) & F.array_contains("isr", _preferred()))


def is_under_replicated() -> Column:
    """`balance.is_under_replicated`: fewer in-sync replicas than replicas not being added."""
    adding = F.when(F.col("adding_replicas").isNull(), F.lit(0)).otherwise(F.size("adding_replicas"))
    return F.size("isr") < F.size("replicas") - adding


def is_under_min_isr() -> Column:
    """`balance.is_under_min_isr`: fewer in-sync replicas than min.insync.replicas, when known."""
    return F.col("min_insync_replicas").isNotNull() & F.coalesce(
        F.size("isr") < F.col("min_insync_replicas"), F.lit(False))


def is_offline() -> Column:
    """`balance.is_offline`: no leader, or a leader that is not live."""
    return (F.col("leader") == NO_LEADER) | ~F.array_contains("live_brokers", F.col("leader"))


def flags() -> dict[str, Column]:
    """The planner's per-partition predicates, by FLAG_NAMES."""
    return {"preferred_leader": is_preferred_leader(), "fixable": is_fixable(),
            "under_replicated": is_under_replicated(), "under_min_isr": is_under_min_isr(),
            "offline": is_offline()}


def ratio(not_led_by_preferred: str, preferred: str) -> Column:
    """`balance.imbalance_ratio`: not_led / preferred (IEEE division, as Python's), 0 when preferred is 0."""
    not_led, pref = F.col(not_led_by_preferred).cast(T.DoubleType()), F.col(preferred).cast(T.DoubleType())
    return F.when(F.col(preferred) > 0, not_led / pref).otherwise(F.lit(0.0))


# Above this denominator the threshold is below 1e-8 % (a float's repr has at most 17 digits), under the
# smallest ratio a broker preferred for fewer than 10^10 partitions can have above 0.
_MAX_DENOMINATOR = 10**24
_INTEGER = T.DecimalType(38, 0)


def above(not_led_by_preferred: str, preferred: str, threshold_pct: float) -> Column:
    """`balance.is_above_threshold`: not_led * 100 > threshold * preferred, compared exactly with the
    threshold as the decimal it was written, in 38-digit integer decimals."""
    threshold = Fraction(repr(float(threshold_pct)))
    not_led, pref = F.col(not_led_by_preferred), F.col(preferred)
    if threshold >= 100:  # a ratio is at most 1
        return F.lit(False)
    if threshold.denominator > _MAX_DENOMINATOR:
        return (pref > 0) & (not_led > 0)

    def integer(value: int | Column) -> Column:
        return (F.lit(Decimal(value)) if isinstance(value, int) else value).cast(_INTEGER)

    left = integer(not_led) * integer(100 * threshold.denominator)
    right = integer(pref) * integer(threshold.numerator)
    return (pref > 0) & (left.cast(_INTEGER) > right.cast(_INTEGER))
