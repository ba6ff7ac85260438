"""Leadership-balance plan files per cluster (`analyze --balance-plans`): `balance/<cluster>.json`.

Each cluster's latest snapshot goes, as one group, to the very function `kafka-leaders balance` plans
with (`operations.balance_dry_run.plan_report`, over `planning.leadership_balance.solve_leadership`),
run on the executors by `applyInPandas` (their Python needs this package, PySpark, OR-Tools, NumPy,
pandas and pyarrow, and nothing else: an import-linter contract keeps this module off the Kafka
client); the snapshot's rows become the planner's `ClusterState` through `snapshot.states`, as
everywhere else. The file is `balance`'s own document (schemas/balance.schema.json),
so `kafka-leaders balance --execute --plan-file FILE` runs it, and refuses it (exit 5, nothing sent) when
the cluster is another one or any planned partition's replicas changed since the snapshot.

What a snapshot does not record, the plan cannot honour: the plans are not rack-aware (snapshots keep no
`broker.rack`) and weigh every partition the same; a replica whose log directory is offline is taken as
able to lead (Kafka drops such a replica from the ISR, and only in-sync replicas are chosen).
The default options are used: no excluded broker or topic, no --max-moves.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any

import pandas as pd
from pyspark.sql import DataFrame, SparkSession

from leader_election_cli import snapshot
from leader_election_cli.operations.balance_dry_run import plan_report
from leader_election_cli.pipeline.files import delete_tree, write_bytes
from leader_election_cli.pipeline.plans import cluster_dir
from leader_election_cli.reports.balance_plan import document

RESULT_SCHEMA = ("cluster string, plan_file string, plan string, max_before int, max_after int, lower_bound int, "
                 "changes int, optimal boolean")


def plan_path(balance_dir: str, cluster: str) -> str:
    return f"{balance_dir}/{cluster_dir(cluster)}.json"


def _ids(value: Any) -> list[int] | None:
    """A broker-list cell as Arrow hands it to pandas (an array, or None) as a list of ints."""
    return None if value is None else [int(b) for b in value]


def _snapshot_row(cell: dict[str, Any]) -> snapshot.SnapshotRow:
    min_isr = cell["min_insync_replicas"]
    return snapshot.SnapshotRow(
        format_version=int(cell["format_version"]), cluster=cell["cluster"], cluster_id=cell["cluster_id"],
        taken_at=datetime.fromtimestamp(0, timezone.utc), topic=cell["topic"], partition=int(cell["partition"]),
        replicas=_ids(cell["replicas"]) or [], isr=_ids(cell["isr"]) or [], elr=_ids(cell["elr"]) or [],
        leader=int(cell["leader"]), adding_replicas=_ids(cell["adding_replicas"]),
        removing_replicas=_ids(cell["removing_replicas"]),
        min_insync_replicas=None if pd.isna(min_isr) else int(min_isr), live_brokers=_ids(cell["live_brokers"]) or [])


def plan_group(balance_dir: str, frame: pd.DataFrame) -> pd.DataFrame:
    """One snapshot's rows (one group of `applyInPandas`) -> its plan document and headline figures."""
    rows = [_snapshot_row(cell) for cell in frame.to_dict("records")]
    (state,) = snapshot.states(rows).values()
    cluster = rows[0]["cluster"]
    report = plan_report(state, plan_file=plan_path(balance_dir, cluster))
    plan = report.plan
    return pd.DataFrame({"cluster": [cluster], "plan_file": [report.plan_file],
                         "plan": [json.dumps(document(report), indent=1) + "\n"], "max_before": [plan.max_before],
                         "max_after": [plan.max_after], "lower_bound": [plan.lower_bound],
                         "changes": [len(report.partitions)], "optimal": [plan.optimal]})


def write_balance_plans(spark: SparkSession, latest_rows: DataFrame, balance_dir: str) -> dict[str, Any]:
    """Replace `balance_dir` with a plan file per snapshot in `latest_rows` (each cluster's latest, whole);
    return each cluster's headline figures (a Row: plan_file, max_before, max_after, ...)."""
    delete_tree(spark, balance_dir)
    columns = [c for c in snapshot.COLUMNS if c != "taken_at"]

    def plan(frame: pd.DataFrame) -> pd.DataFrame:
        return plan_group(balance_dir, frame)

    plans = latest_rows.select("taken_at", *columns).groupBy("cluster", "taken_at").applyInPandas(plan, RESULT_SCHEMA)
    written = {}
    for row in plans.toLocalIterator():  # one plan at a time reaches the driver
        write_bytes(spark, row.plan_file, row.plan.encode())
        written[row.cluster] = row
    return written
