"""The leadership-move report (`prefer`, `demote`, `restore`): every planned partition once, with its
replica order and leader before and after, and its JSON document."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leader_election_cli.errors import ExitCode
from leader_election_cli.model import Outcome, TopicPartition
from leader_election_cli.reports.outcomes import outcome_word, summary_document
from leader_election_cli.reports.run import Report

SCHEMA_VERSION = 2  # 2: a dry run's partitions are would_elect, not_needed or would_fail, not "predicted"


@dataclass(frozen=True)
class MoveResult:
    """One partition: its replica order and leader before, what was asked, and what happened."""

    tp: TopicPartition
    outcome: Outcome
    replicas_before: tuple[int, ...]
    replicas_after: tuple[int, ...]  # the order asked for (= before when refused; read back after a stop)
    leader_before: int | None
    expected_leader: int | None  # None when refused
    leader_after: int | None = None
    error_code: int = 0
    error: str | None = None  # the refusal's reason, or what went wrong


@dataclass
class MoveReport(Report):
    """Every planned partition once, in plan order."""

    command: str
    results: list[MoveResult]
    dry_run: bool = False
    restore_file: str | None = None
    interrupted: bool = False
    aborted_exit: ExitCode | None = None
    aborted_reason: str | None = None

    def count(self, outcome: Outcome) -> int:
        return sum(1 for r in self.results if r.outcome is outcome)

    @property
    def has_failures(self) -> bool:
        """A partition refused, failed (the broker asked for does not lead it) or left undone; a dry run
        lists refusals and predictions, and fails nothing."""
        unhappy = (Outcome.FAILED, Outcome.SKIPPED, Outcome.NOT_ATTEMPTED)
        return not self.dry_run and any(r.outcome in unhappy for r in self.results)


def document(report: MoveReport) -> dict[str, Any]:
    summary = summary_document(report)
    return {
        "schema_version": SCHEMA_VERSION,
        "command": report.command,
        "dry_run": report.dry_run,
        "restore_file": report.restore_file,
        "partitions": [_move_entry(r) for r in report.results],
        "summary": summary,
    }


def _move_entry(r: MoveResult) -> dict[str, Any]:
    return {"topic": r.tp.topic, "partition": r.tp.partition, "outcome": outcome_word(r.outcome, r.error_code),
            "replicas_before": list(r.replicas_before), "replicas_after": list(r.replicas_after),
            "leader_before": r.leader_before, "expected_leader": r.expected_leader, "leader_after": r.leader_after,
            "error_code": r.error_code, "error": r.error}
