"""The analysis as DataFrame operations: balance per broker, health per cluster over time, what to fix.

Every rule is the planner's, as `rules` expresses it; this module only counts, joins and picks rows.
A snapshot is identified by (cluster, taken_at).
"""

from __future__ import annotations

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from leader_election_cli.model import NO_LEADER
from leader_election_cli.pipeline import rules
from leader_election_cli.pipeline.inputs import SNAPSHOT_KEY

KEY = list(SNAPSHOT_KEY)
BROKER_COUNTS = ("leaders", "preferred", "not_led_by_preferred")
PARTITION_COUNTS = ("not_preferred_leader", "under_replicated", "under_min_isr", "offline", "fixable")


def with_flags(rows: DataFrame) -> DataFrame:
    """Add the preferred replica and the planner's flags (one boolean column each; meaningless on bad rows)."""
    return rows.withColumns({**rules.flags(), "preferred_replica": F.get("replicas", 0)})


def _count(condition: Column) -> Column:
    return F.sum(condition.cast(T.LongType()))


def _partition_conditions() -> dict[str, Column]:
    """Each per-snapshot partition count and the planner's flag it counts."""
    return {"not_preferred_leader": ~F.col("preferred_leader"),
            **{name: F.col(name) for name in PARTITION_COUNTS[1:]}}


def broker_balance(flagged: DataFrame, threshold_pct: float) -> DataFrame:
    """Per cluster, snapshot and broker: partitions led, preferred, not led by preferred, ratio, above.

    Brokers are those the planner lists: every live broker, and every broker leading or preferred for
    a partition.
    """
    def entry(broker: Column, leaders: int, preferred: int, not_led: Column, alive: bool) -> Column:
        return F.struct(broker.alias("broker"), F.lit(leaders).alias("leaders"), F.lit(preferred).alias("preferred"),
                        not_led.cast(T.LongType()).alias("not_led_by_preferred"), F.lit(alive).alias("alive"))

    per_partition = flagged.select(*KEY, F.explode(F.array(
        entry(F.when(F.col("leader") != NO_LEADER, F.col("leader")), 1, 0, F.lit(0), False),
        entry(F.col("preferred_replica"), 0, 1, ~F.col("preferred_leader"), False),
    )).alias("e"))
    live = flagged.select(*KEY, "live_brokers").distinct().select(
        *KEY, F.explode("live_brokers").alias("b")).select(*KEY, entry(F.col("b"), 0, 0, F.lit(0), True).alias("e"))
    counts = (per_partition.unionByName(live).select(*KEY, "e.*").where(F.col("broker").isNotNull())
              .groupBy(*KEY, "broker")
              .agg(F.max("alive").alias("alive"), *(F.sum(c).alias(c) for c in BROKER_COUNTS)))
    return (counts.withColumn("imbalance_ratio", rules.ratio("not_led_by_preferred", "preferred"))
            .withColumn("above_threshold", rules.above("not_led_by_preferred", "preferred", threshold_pct)))


def _partitions_where(flag: str) -> Column:
    """The (topic, partition) of the rows where `flag` holds, sorted."""
    return F.sort_array(F.collect_list(F.when(F.col(flag), F.struct("topic", "partition"))))


LISTS = {"under_replicated_partitions": "under_replicated", "under_min_isr_partitions": "under_min_isr",
         "offline_partitions": "offline"}


def cluster_health(flagged: DataFrame, brokers: DataFrame) -> DataFrame:
    """Per cluster and snapshot: partition counts by condition, the partitions under-replicated, under
    min ISR and offline, the down brokers (replicas that are not live), and the brokers' worst imbalance.

    `worst_broker` has the highest ratio (the lowest id among equals), null when no ratio is above 0.
    """
    partitions = flagged.groupBy(*KEY).agg(
        F.count(F.lit(1)).alias("partitions"),
        *(_count(flag).alias(name) for name, flag in _partition_conditions().items()),
        *(_partitions_where(flag).alias(name) for name, flag in LISTS.items()),
        F.sort_array(F.array_distinct(F.flatten(F.collect_set(F.when(  # only the rows with a down replica
            ~F.forall("replicas", lambda b: F.array_contains("live_brokers", b)),
            F.array_except("replicas", "live_brokers")))))).alias("down_brokers"))
    ratio = F.col("imbalance_ratio")
    per_broker = brokers.groupBy(*KEY).agg(
        F.count(F.lit(1)).alias("brokers"), _count(F.col("alive")).alias("live_brokers"),
        F.max(ratio).alias("max_imbalance_ratio"),
        F.max_by(F.when(ratio > 0, F.col("broker")), F.struct(ratio, -F.col("broker"))).alias("worst_broker"),
        _count(F.col("above_threshold")).alias("brokers_above_threshold"))
    return (partitions.join(per_broker, KEY, "left")
            .na.fill(0, ["brokers", "live_brokers", "brokers_above_threshold"])
            .na.fill(0.0, ["max_imbalance_ratio"]))


def latest_snapshots(rows: DataFrame, health: DataFrame) -> DataFrame:
    """Each cluster's latest snapshot (cluster, taken_at) among every row read, bad ones included, so that
    plans never come from a snapshot older than the newest; and its number of usable snapshots."""
    newest = (rows.where(F.col("cluster").isNotNull() & F.col("taken_at").isNotNull())
              .groupBy("cluster").agg(F.max("taken_at").alias("taken_at")))
    usable = health.groupBy("cluster").agg(F.count(F.lit(1)).alias("snapshots"))
    return newest.join(usable, "cluster", "left").na.fill(0, ["snapshots"])


def latest_fixable(flagged: DataFrame, latest: DataFrame, brokers: DataFrame) -> DataFrame:
    """The partitions a preferred election would fix, in each cluster's latest snapshot; `planned` when
    the plan elects them, as `planning.rebalance_candidates` picks: the preferred broker is above the
    threshold and no reassignment of the partition is pending."""
    above = (brokers.where(F.col("above_threshold"))
             .select(*KEY, F.col("broker").alias("preferred_replica"), F.lit(True).alias("_above")))
    return (flagged.where(F.col("fixable")).join(F.broadcast(latest.select(*KEY)), KEY)
            .join(above, [*KEY, "preferred_replica"], "left")
            .select(*KEY, "topic", "partition", "leader", "preferred_replica",
                    (F.coalesce(F.col("_above"), F.lit(False)) & F.col("adding_replicas").isNull()).alias("planned")))
