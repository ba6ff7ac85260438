"""Record files of a rebalance run: the audit log line and the Prometheus metrics file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from leader_election_cli.local_files import append_line, write_atomically
from leader_election_cli.model import Outcome
from leader_election_cli.reports.balance import RebalanceRun

METRIC_PREFIX = "kafka_leaders_rebalance"


def append_audit_line(path: Path, record: dict[str, Any]) -> None:
    """Append one line in a single write (O_APPEND), so concurrent runs never interleave within a line; never
    through a symlink, never to a FIFO or device."""
    append_line(path, json.dumps(record, separators=(",", ":")) + "\n")


def metrics_labels(run: RebalanceRun, cluster_name: str | None) -> dict[str, str]:
    """The labels every series carries, so that several clusters' files can share one textfile directory:
    the cluster id the brokers report ("" when the cluster could not be read), and --cluster-name if given."""
    return {"cluster_id": run.cluster_id or "", **({"cluster_name": cluster_name} if cluster_name else {})}


def metrics_file_name(run: RebalanceRun, cluster_name: str | None, bootstrap_servers: str) -> str:
    """The file a --metrics-file directory gets: kafka_leaders_<cluster>.prom, after --cluster-name, else the
    cluster id, else (the cluster could not be read) the bootstrap servers; only [A-Za-z0-9_.-] kept."""
    cluster = cluster_name or run.cluster_id or bootstrap_servers
    return f"kafka_leaders_{re.sub(r'[^A-Za-z0-9_.-]', '_', cluster)}.prom"


def write_metrics(path: Path, run: RebalanceRun, labels: dict[str, str] | None = None) -> None:
    """Prometheus text format (node_exporter's textfile collector), written atomically (a temporary file in
    the same directory, renamed over `path`: a symlink there is replaced, never followed); every series with
    `labels` (`metrics_labels`)."""
    from prometheus_client import CollectorRegistry, Gauge, generate_latest

    labels = labels or {}
    registry = CollectorRegistry()
    ratio = Gauge(f"{METRIC_PREFIX}_imbalance_ratio",
                  "Kafka's leader imbalance ratio per broker after the last run (0 to 1)", [*labels, "broker"],
                  registry=registry)
    shown = run.after or run.before
    for b in shown.brokers if shown else ():
        ratio.labels(**labels, broker=str(b.broker)).set(b.ratio)
    gauges = {
        "threshold_ratio": ("The --threshold of the last run (0 to 1)", run.threshold / 100),
        "brokers_above_threshold": ("Brokers above the threshold after the last run (before it, when the "
                                    "balance afterwards could not be read)",
                                    len(run.above if run.still_above is None else run.still_above)),
        "candidates": ("Partitions the last run found to elect", len(run.candidates)),
        "partitions_moved": ("Partitions whose leader moved to the preferred replica in the last run",
                             run.count(Outcome.ELECTED)),
        "failures": ("Partitions that failed to elect in the last run", run.count(Outcome.FAILED)),
        "run_duration_seconds": ("How long the last run took", run.duration_s),
        "exit_code": ("The exit code of the last run", int(run.exit_code)),
        "last_run_timestamp_seconds": ("When the last run started (Unix time)", run.started_at.timestamp()),
        "dry_run": ("1 when the last run was a dry run", int(run.dry_run)),
    }
    for name, (text, value) in gauges.items():
        gauge = Gauge(f"{METRIC_PREFIX}_{name}", text, list(labels), registry=registry)
        (gauge.labels(**labels) if labels else gauge).set(value)
    write_atomically(path, generate_latest(registry))
