"""The balance reports: `status` (a look at the cluster) and `rebalance` (the cron job's run), with their
JSON documents and the rebalance audit line."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from leader_election_cli.errors import ExitCode, LeaderElectionError
from leader_election_cli.model import ControllerMode, Outcome, TopicPartition
from leader_election_cli.planning.balance import (  # what the reports hold, per broker and in all
    BrokerBalance,
    ClusterBalance,
)
from leader_election_cli.reports import election as election_report
from leader_election_cli.reports.election import ElectionReport
from leader_election_cli.reports.outcomes import OUTCOME_WORDS, outcome_counts
from leader_election_cli.reports.run import Report

SCHEMA_VERSION = 1  # status
REBALANCE_SCHEMA_VERSION = 2  # 2: a dry run's partitions are would_elect, not_needed or would_fail
AUDIT_SCHEMA_VERSION = 2  # 2: a dry run's counts are would_elect, not_needed and would_fail (1: predicted)


@dataclass(frozen=True)
class LeadershipOptimum:
    """Today's most leaders on a live broker, beside the least maximum that new replica orders reach
    (`kafka-leaders balance`), and the fewest partitions whose order must change for it."""

    max_leaders: int
    optimum: int
    partitions_to_change: int

    @property
    def reached(self) -> bool:
        return self.max_leaders <= self.optimum


@dataclass(frozen=True)
class StatusReport(Report):
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
    optimum: LeadershipOptimum | None = None  # None when not computed
    not_preferred_leader: list[TopicPartition] = field(default_factory=list)  # led off their preferred replica
    under_replicated: list[TopicPartition] = field(default_factory=list)
    # per offline partition, the in-sync or eligible replicas whose return recovers it without data loss
    offline_recovery: dict[TopicPartition, tuple[int, ...]] = field(default_factory=dict)

    @property
    def failing(self) -> list[BrokerBalance]:
        """Brokers whose imbalance ratio is above --fail-above (none without it)."""
        return [] if self.fail_above is None else self.balance.above(self.fail_above)

    interrupted = False  # a status run reads only
    aborted_exit = None
    aborted_reason = None

    @property
    def has_failures(self) -> bool:
        return bool(self.failing)


def status_document(report: StatusReport) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "cluster_id": report.cluster_id,
        "controller_id": report.controller_id,
        "mode": report.mode.value if report.mode else None,
        "fail_above_pct": report.fail_above,
        **(balance_document(report.balance, report.fail_above) or {}),
        "not_preferred_leader_partitions": [str(tp) for tp in report.not_preferred_leader],
        "under_replicated_partitions": [str(tp) for tp in report.under_replicated],
        "offline_partitions": [str(tp) for tp in report.offline],
        "offline_recovery": {str(tp): list(brokers) for tp, brokers in report.offline_recovery.items()},
        "under_min_isr_partitions": [str(tp) for tp in report.under_min_isr],
        "min_isr_unknown_topics": report.min_isr_unknown,
        "reassigning_partitions": [str(tp) for tp in report.reassigning],
        "failing_brokers": [b.broker for b in report.failing],
        "auto_leader_rebalance": report.auto_rebalance or None,
        "leadership_optimum": None if report.optimum is None else {
            "max_leaders": report.optimum.max_leaders, "optimum": report.optimum.optimum,
            "partitions_to_change": report.optimum.partitions_to_change, "reached": report.optimum.reached},
        "exit_code": int(report.exit_code),
    }


@dataclass
class StatusUnread(Report):
    """`status` when the cluster could not be read (unreachable, login refused): only why."""

    error: str
    aborted_exit: ExitCode | None = None
    interrupted: bool = False
    aborted_reason: str | None = None
    has_failures = False


def status_unread_document(error: str, exit_code: int) -> dict[str, Any]:
    """`status --output json` when the cluster could not be read (unreachable, login refused)."""
    return {"schema_version": SCHEMA_VERSION, "cluster_id": None, "error": error, "exit_code": int(exit_code)}


# -- rebalance ----------------------------------------------------------------------------------------

@dataclass
class RebalanceRun(Report):
    """One rebalance run: what it found, what it did, and how it ended."""

    threshold: float
    dry_run: bool
    cluster_id: str | None = None  # as the brokers report it; None until the cluster was read
    started_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))
    clock: float = field(default_factory=time.monotonic, repr=False)  # for the duration
    before: ClusterBalance | None = None  # None when the cluster could not be read
    candidates: list[TopicPartition] = field(default_factory=list)
    election: ElectionReport | None = None  # None when nothing was (or would be) elected
    after: ClusterBalance | None = None
    duration_s: float = 0.0  # set by finish()
    error: str | None = None  # the one-line failure that ended the run early
    error_exit: ExitCode | None = None
    stopped_by: LeaderElectionError | None = field(default=None, repr=False)

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

    def finish(self) -> None:
        self.duration_s = time.monotonic() - self.clock

    @property
    def interrupted(self) -> bool:
        return bool(self.election and self.election.interrupted)

    @property
    def stop_signal(self) -> int | None:  # type: ignore[override]
        return self.election.stop_signal if self.election else None

    @property
    def aborted_exit(self) -> ExitCode | None:
        """The failure that ended the run early, else the one that stopped its election."""
        return self.error_exit if self.error_exit is not None else self.election.aborted_exit if self.election else None

    @property
    def has_failures(self) -> bool:
        return bool(self.election and self.election.has_failures)

    def stop(self, failure: LeaderElectionError) -> None:
        """The failure that ended the run early (its message and hint are shown after the report)."""
        self.stopped_by = failure
        self.error_exit, self.error = failure.exit_code, failure.message

    @property
    def lock_held(self) -> bool:
        """Stopped because another run holds the lock."""
        return self.error_exit is ExitCode.REFUSED

    def count(self, outcome: Outcome) -> int:
        return self.election.count(outcome) if self.election else 0


def rebalance_document(run: RebalanceRun) -> dict[str, Any]:
    election = election_report.document(run.election) if run.election else None
    return {
        "schema_version": REBALANCE_SCHEMA_VERSION,
        "command": "rebalance",
        "cluster_id": run.cluster_id,
        "threshold_pct": run.threshold,
        "dry_run": run.dry_run,
        "brokers_above_threshold": [b.broker for b in run.above],
        "candidates": len(run.candidates),
        "before": balance_document(run.before, run.threshold),
        "partitions": election["partitions"] if election else [],
        "after": balance_document(run.after, run.threshold),
        "brokers_still_above_threshold": None if run.still_above is None else [b.broker for b in run.still_above],
        "summary": {**(election["summary"] if election else {}), "exit_code": int(run.exit_code),
                    "duration_seconds": round(run.duration_s, 3)},
        "error": run.error,
    }


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
    counts = outcome_counts(run.election.results if run.election else [])
    done = {word: counts[word] for word in OUTCOME_WORDS}
    return {
        "schema_version": AUDIT_SCHEMA_VERSION,  # schemas/audit-line.schema.json
        "time": run.started_at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        "command": "rebalance",
        "cluster_id": run.cluster_id,
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
