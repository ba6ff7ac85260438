"""Leadership balance reports: `status` (a look) and `rebalance` (the cron job), with its audit and metrics.

`status_report` is pure over a `ClusterState`; `rebalance` reads the cluster, elects the preferred
replica of the partitions `planning.rebalance_candidates` picks (in batches, through `execution`) and
reads the balance it leaves. `audit_record` and `write_metrics` turn a run into one JSON line and a
Prometheus text file.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from leader_election_cli.cluster.admin import Cluster
from leader_election_cli.errors import CliError, ExitCode
from leader_election_cli.model import (
    ClusterState,
    ControllerMode,
    ElectionReport,
    ElectionType,
    Outcome,
    PartitionResult,
    TopicPartition,
)
from leader_election_cli.operations import execution
from leader_election_cli.planning import (
    BrokerBalance,
    ClusterBalance,
    balance,
    is_offline,
    is_under_min_isr,
    predict,
    rebalance_candidates,
)

METRIC_PREFIX = "kafka_leaders_rebalance"
# The controller's own preferred-leader elections (Kafka's broker configs): status shows them.
AUTO_REBALANCE_CONFIGS = ("auto.leader.rebalance.enable", "leader.imbalance.check.interval.seconds",
                          "leader.imbalance.per.broker.percentage")


# -- status -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class StatusReport:
    """The balance of one cluster read, and the partitions that need attention."""

    balance: ClusterBalance
    offline: list[TopicPartition]  # leaderless, or led by a broker that is not live
    under_min_isr: list[TopicPartition]
    min_isr_unknown: list[str]  # topics whose min.insync.replicas could not be read (not counted above)
    reassigning: list[TopicPartition]
    cluster_id: str | None
    controller_id: int | None  # None in KRaft mode: a KRaft broker names a random live broker
    mode: ControllerMode | None
    fail_above: float | None = None  # --fail-above PCT
    auto_rebalance: dict[str, str] = field(default_factory=dict)  # AUTO_REBALANCE_CONFIGS the broker reported
    auto_rebalance_broker: int | None = None  # the broker that reported them

    @property
    def failing(self) -> list[BrokerBalance]:
        """Brokers whose imbalance ratio is above --fail-above (none without it)."""
        return [] if self.fail_above is None else self.balance.above(self.fail_above)

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.PARTITION_FAILED if self.failing else ExitCode.OK


def auto_rebalance_broker(state: ClusterState) -> int | None:
    """The broker whose configs say what the controller does by itself: in ZooKeeper mode the controller
    (only its own auto.leader.rebalance.enable counts); in KRaft mode the controllers are not brokers,
    so the lowest live broker, as a hint."""
    if state.mode is ControllerMode.ZK and state.controller_id in state.live_brokers:
        return state.controller_id
    return min(state.live_brokers) if state.live_brokers else None


def status_report(state: ClusterState, fail_above: float | None = None,
                  auto_rebalance: dict[str, str] | None = None, asked: int | None = None) -> StatusReport:
    """Kafka's per-broker imbalance and the cluster's partition health, from one read; `auto_rebalance`
    are the AUTO_REBALANCE_CONFIGS broker `asked` reported."""
    live = state.live_brokers
    offline = sorted(tp for tp, p in state.partitions.items() if is_offline(p.leader, live))
    under_min = sorted(tp for tp, p in state.partitions.items()
                       if is_under_min_isr(p.isr, state.min_isr(tp)))
    controller = None if state.mode is ControllerMode.KRAFT else state.controller_id
    return StatusReport(balance(state), offline, under_min, sorted(state.min_isr_unknown), sorted(state.reassigning),
                        state.cluster_id, controller, state.mode, fail_above, dict(auto_rebalance or {}), asked)


# -- rebalance ----------------------------------------------------------------------------------------

@dataclass
class RebalanceRun:
    """One rebalance run: what it found, what it did, and how it ended."""

    threshold: float
    dry_run: bool
    started_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    clock: float = field(default_factory=time.monotonic, repr=False)  # for the duration
    before: ClusterBalance | None = None  # None when the cluster could not be read
    candidates: list[TopicPartition] = field(default_factory=list)
    election: ElectionReport | None = None  # None when nothing was (or would be) elected
    after: ClusterBalance | None = None
    duration_s: float = 0.0  # set by finish()
    error: str | None = None  # the one-line failure that ended the run early
    error_exit: ExitCode | None = None

    @property
    def above(self) -> list[BrokerBalance]:
        return self.before.above(self.threshold) if self.before else []

    @property
    def still_above(self) -> list[BrokerBalance] | None:
        """None when the balance afterwards could not be read."""
        return self.after.above(self.threshold) if self.after else None

    @property
    def nothing_to_do(self) -> bool:
        return self.error is None and not self.candidates

    def fail(self, exit_code: ExitCode, message: str) -> None:
        self.error_exit, self.error = exit_code, message

    def finish(self) -> None:
        self.duration_s = time.monotonic() - self.clock

    @property
    def exit_code(self) -> ExitCode:
        if self.error_exit is not None:
            return self.error_exit
        return self.election.exit_code if self.election else ExitCode.OK

    def count(self, outcome: Outcome) -> int:
        return self.election.count(outcome) if self.election else 0


def rebalance(cluster: Cluster, run: RebalanceRun, *, batch_size: int, batch_interval: float) -> None:
    """Elect the preferred replica where a broker is above `run.threshold` (Kafka's automatic rebalance),
    or predict it for a dry run.

    Fills `run` as it goes, so a failure part way still leaves in it what was found and done.
    """
    state = cluster.describe(with_reassignments=True)
    run.before = balance(state)
    run.candidates = rebalance_candidates(state, run.threshold)
    if run.candidates and run.dry_run:
        run.election = execution.dry_run_report(predict(state, ElectionType.PREFERRED, run.candidates,
                                                        state.mode or ControllerMode.KRAFT), ElectionType.PREFERRED)
    elif run.candidates:
        try:
            run.election = execution.elect(cluster, ElectionType.PREFERRED, run.candidates, state,
                                           batch_size=batch_size, batch_interval=batch_interval)
        except CliError:  # refused before anything changed: every candidate is still reported, as it was
            run.election = ElectionReport(ElectionType.PREFERRED, [
                PartitionResult(tp, Outcome.NOT_ATTEMPTED, leader_before=state.partitions[tp].leader,
                                leader_after=state.partitions[tp].leader) for tp in run.candidates])
            run.after = run.before
            raise
    run.after = balance(cluster.describe()) if run.election is not None and not run.dry_run else run.before


# -- audit and metrics --------------------------------------------------------------------------------

def balance_document(b: ClusterBalance | None, threshold: float | None = None) -> dict[str, Any] | None:
    """Per-broker counts and ratios, and the cluster's counts, as JSON values."""
    if b is None:
        return None
    return {
        "brokers": [{"broker": x.broker, "alive": x.alive, "leaders": x.leaders, "preferred": x.preferred,
                     "not_led_by_preferred": x.not_led_by_preferred, "imbalance_ratio": round(x.ratio, 6),
                     **({} if threshold is None else {"above_threshold": x.above(threshold)})}
                    for x in b.brokers],
        "partitions": b.partitions, "not_preferred_leader": b.not_preferred_leader,
        "under_replicated": b.under_replicated, "under_min_isr": b.under_min_isr, "offline": b.offline,
        "fixable": b.fixable, "reassigning": b.reassigning,
    }


def audit_record(run: RebalanceRun, bootstrap_servers: str | None) -> dict[str, Any]:
    """One JSON line for --audit-log: when, what was found, what was done, the exit code."""
    done = {o.value: run.count(o) for o in (Outcome.ELECTED, Outcome.ALREADY_ELECTED, Outcome.FAILED,
                                            Outcome.NOT_ATTEMPTED, Outcome.PREDICTED)}
    return {
        "time": run.started_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "command": "rebalance",
        "bootstrap_servers": bootstrap_servers,
        "threshold_pct": run.threshold,
        "dry_run": run.dry_run,
        "found": {
            "brokers_above_threshold": {str(b.broker): round(b.ratio, 6) for b in run.above},
            "candidates": len(run.candidates),
        },
        "done": {
            **done,
            "failed_partitions": [str(r.tp) for r in (run.election.failed if run.election else [])],
            "brokers_still_above_threshold": (None if run.still_above is None else
                                              {str(b.broker): round(b.ratio, 6) for b in run.still_above}),
        },
        "duration_seconds": round(run.duration_s, 3),
        "exit_code": int(run.exit_code),
        "error": run.error or (run.election.aborted_reason if run.election else None),
    }


def append_audit_line(path: Path, record: dict[str, Any]) -> None:
    """Append one line in a single write (O_APPEND), so concurrent runs never interleave within a line."""
    with open(path, "a", encoding="utf-8") as file:
        file.write(json.dumps(record, separators=(",", ":")) + "\n")


def write_metrics(path: Path, run: RebalanceRun) -> None:
    """Prometheus text format (node_exporter's textfile collector), written atomically by prometheus_client."""
    from prometheus_client import CollectorRegistry, Gauge, write_to_textfile

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
    write_to_textfile(str(path), registry)
