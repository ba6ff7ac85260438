"""The planner's own predicates as Spark columns: one definition of the rules, no copy that can drift.

Each UDF calls the very function of `leader_election_cli.planning.balance` that `status` and
`rebalance` use; Spark only ships the columns to it.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql import types as T

from leader_election_cli.planning.balance import (
    imbalance_ratio,
    is_above_threshold,
    is_fixable,
    is_offline,
    is_preferred_leader,
    is_under_min_isr,
    is_under_replicated,
)

FLAG_NAMES = ("preferred_leader", "fixable", "under_replicated", "under_min_isr", "offline")


def _partition_flags(leader: int, replicas: list[int], isr: list[int], live_brokers: list[int],
                     min_insync_replicas: int | None) -> tuple[bool, ...] | None:
    if leader is None or replicas is None or isr is None or live_brokers is None:
        return None  # a bad row (Spark calls Python UDFs before any condition around them)
    return (is_preferred_leader(leader, replicas),
            is_fixable(leader, replicas, isr, live_brokers),
            is_under_replicated(replicas, isr),
            is_under_min_isr(isr, min_insync_replicas),
            is_offline(leader, live_brokers))


# Plain pickled Python UDFs (useArrow=False): no pandas needed.
_FLAGS = T.StructType([T.StructField(name, T.BooleanType(), False) for name in FLAG_NAMES])
# Non-deterministic only to stop Spark from calling the UDF once per struct field it expands.
_flags_udf = F.udf(_partition_flags, _FLAGS, useArrow=False).asNondeterministic()
_ratio_udf = F.udf(imbalance_ratio, T.DoubleType(), useArrow=False)
_above_udf = F.udf(is_above_threshold, T.BooleanType(), useArrow=False)


def flags() -> Column:
    """A struct of the planner's per-partition predicates over a snapshot row's columns."""
    return _flags_udf("leader", "replicas", "isr", "live_brokers", "min_insync_replicas")


def ratio(not_led_by_preferred: str, preferred: str) -> Column:
    """Kafka's per-broker imbalance ratio, as the planner computes it."""
    return _ratio_udf(not_led_by_preferred, preferred)


def above(not_led_by_preferred: str, preferred: str, threshold_pct: float) -> Column:
    """Whether that ratio is above `threshold_pct` percent, as the planner decides it."""
    return _above_udf(not_led_by_preferred, preferred, F.lit(float(threshold_pct)))
