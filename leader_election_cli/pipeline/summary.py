"""The run's small final summary: what was read, what was rejected, and each cluster's latest state.

Only these few rows (one per cluster, one per bad-row reason) ever reach the driver.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from datetime import datetime, timezone
from typing import Any

from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql import types as T

from leader_election_cli.pipeline.analysis import KEY, LISTS


@dataclass(frozen=True)
class ClusterSummary:
    """One cluster: how many snapshots, and its latest snapshot's figures."""

    cluster: str
    snapshots: int
    latest: datetime
    partitions: int
    brokers: int
    live_brokers: int
    not_preferred_leader: int
    under_replicated: int
    under_min_isr: int
    offline: int
    fixable: int
    max_imbalance_ratio: float
    worst_broker: int | None  # the broker with the highest ratio, when any ratio is above 0
    brokers_above_threshold: int
    down_brokers: tuple[int, ...] = ()  # replicas that are not live brokers
    under_replicated_partitions: tuple[str, ...] = ()  # "topic-partition", sorted by topic and partition
    under_min_isr_partitions: tuple[str, ...] = ()
    offline_partitions: tuple[str, ...] = ()
    planned: int = 0  # fixable partitions in the plan files (preferred broker above the threshold)
    plan_files: int = 0
    plan_dir: str = ""  # its directory under plans/ (`plans.cluster_dir`)
    balance_plan: str | None = None  # with --balance-plans: its plan file (none when its latest snapshot has bad rows)
    balance_max_before: int | None = None  # most leaders on a broker that may lead, in the latest snapshot
    balance_max_after: int | None = None  # ... once the plan has run
    balance_lower_bound: int | None = None  # the least maximum any plan reaches
    balance_changes: int | None = None  # partitions the plan reorders or elects


@dataclass(frozen=True)
class Summary:
    """Everything `analyze` reports at the end, also written as DIR/summary.json."""

    out: str
    input_files: int
    rows: int
    bad_rows: dict[str, int]  # reason -> rows
    snapshots: int
    threshold_pct: float
    batch_size: int
    clusters: tuple[ClusterSummary, ...]
    tables: dict[str, str]  # table name -> Parquet directory
    plans_dir: str
    plot: str | None = None
    unusable_latest: dict[str, str] = field(default_factory=dict)  # cluster -> its newest snapshot's time,
    # when that snapshot has no usable row: no plan is written from an older one
    legacy_rows: int = 0  # usable rows of format version 1 (see leader_election_cli.snapshot)
    balance_dir: str | None = None  # with --balance-plans: where the balance plan files are
    elapsed_seconds: float = field(default=0.0, compare=False)

    @property
    def bad_row_count(self) -> int:
        return sum(self.bad_rows.values())

    def to_json(self) -> dict[str, Any]:
        """The JSON document (`asdict`'s, made without deep-copying a fleet's partition lists)."""
        document = {f.name: getattr(self, f.name) for f in fields(self)}
        document["clusters"] = [{**{f.name: getattr(c, f.name) for f in fields(c)}, "latest": c.latest.isoformat()}
                                for c in self.clusters]
        return {"schema_version": 1, **document, "bad_row_count": self.bad_row_count}


def with_balance(cluster: ClusterSummary, plan: Any | None) -> ClusterSummary:
    """`cluster` with its balance plan's headline figures (`balance_plans.write_balance_plans`'s row)."""
    if plan is None:
        return cluster
    return replace(cluster, balance_plan=plan.plan_file, balance_max_before=plan.max_before,
                   balance_max_after=plan.max_after, balance_lower_bound=plan.lower_bound,
                   balance_changes=plan.changes)


def utc(moment: datetime) -> datetime:
    """A timestamp Spark handed to Python (naive, in this machine's local time) as an aware UTC time."""
    return moment.astimezone(timezone.utc)


def cluster_summaries(health: DataFrame, latest: DataFrame) -> tuple[list[ClusterSummary], dict[str, str]]:
    """Each cluster's latest snapshot from the health table, sorted by cluster; and the clusters whose
    newest snapshot has no usable row (cluster -> its time). One Spark job, one row per cluster."""
    as_text = {name: F.transform(name, lambda p: F.concat(p.topic, F.lit("-"), p.partition.cast(T.StringType())))
               for name in LISTS}  # "topic-partition" made by Spark: strings reach Python, not one Row each
    rows = latest.join(health, KEY, "left").withColumns(as_text).orderBy("cluster").collect()
    unusable = {r.cluster: utc(r.taken_at).isoformat() for r in rows if r.partitions is None}
    return [ClusterSummary(
        cluster=r.cluster, snapshots=r.snapshots, latest=utc(r.taken_at), partitions=r.partitions, brokers=r.brokers,
        live_brokers=r.live_brokers, not_preferred_leader=r.not_preferred_leader, under_replicated=r.under_replicated,
        under_min_isr=r.under_min_isr, offline=r.offline, fixable=r.fixable, max_imbalance_ratio=r.max_imbalance_ratio,
        worst_broker=r.worst_broker, brokers_above_threshold=r.brokers_above_threshold,
        down_brokers=tuple(r.down_brokers), **{name: tuple(r[name]) for name in LISTS})
        for r in rows if r.partitions is not None], unusable
