"""Record files of a rebalance run: the audit log line and the Prometheus metrics file."""

from __future__ import annotations

import json
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


def write_metrics(path: Path, run: RebalanceRun) -> None:
    """Prometheus text format (node_exporter's textfile collector), written atomically (a temporary file in the
    same directory, renamed over `path`: a symlink there is replaced, never followed)."""
    from prometheus_client import CollectorRegistry, Gauge, generate_latest

    registry = CollectorRegistry()
    ratio = Gauge(f"{METRIC_PREFIX}_imbalance_ratio",
                  "Kafka's leader imbalance ratio per broker after the last run (0 to 1)", ["broker"],
                  registry=registry)
    shown = run.after or run.before
    for b in shown.brokers if shown else ():
        ratio.labels(broker=str(b.broker)).set(b.ratio)
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
        Gauge(f"{METRIC_PREFIX}_{name}", text, registry=registry).set(value)
    write_atomically(path, generate_latest(registry))
