"""The election report: every selected partition once, with its outcome, and its JSON document.

`document` is the versioned JSON (schemas/report.schema.json); its outcome words and `summary` are
`reports.outcomes`' (shared with leadership moves).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from operator import attrgetter, countOf
from typing import Any

from leader_election_cli import kafka_errors
from leader_election_cli.errors import ExitCode
from leader_election_cli.model import ElectionType, Outcome, PartitionResult
from leader_election_cli.reports.outcomes import outcome_word, summary_document
from leader_election_cli.reports.run import Report

SCHEMA_VERSION = 2  # 2: a dry run's partitions are would_elect, not_needed or would_fail, not "predicted"


@dataclass
class ElectionReport(Report):
    """Every selected partition once, in the order they were selected; nothing dropped."""

    election_type: ElectionType
    results: list[PartitionResult]
    dry_run: bool = False
    all_partitions: bool = False  # Kafka's --all-topic-partitions: a null list was sent
    interrupted: bool = False  # stopped by Ctrl-C or SIGTERM
    aborted_exit: ExitCode | None = None  # stopped by a cluster failure after some batches were sent
    aborted_reason: str | None = None
    warnings: list[str] = field(default_factory=list)

    def count(self, outcome: Outcome) -> int:
        return countOf(map(_OUTCOME, self.results), outcome)

    @property
    def failed(self) -> list[PartitionResult]:
        return [r for r in self.results if r.outcome is Outcome.FAILED]

    @property
    def has_failures(self) -> bool:
        return Outcome.FAILED in map(_OUTCOME, self.results)  # (C loops: a million results take milliseconds)

    @property
    def has_unconfirmed(self) -> bool:
        return Outcome.UNCONFIRMED in map(_OUTCOME, self.results)


_OUTCOME = attrgetter("outcome")


def document(report: ElectionReport) -> dict[str, Any]:
    """The versioned JSON document (validated against schemas/report.schema.json in the tests)."""
    return head(report, [row(r, report.dry_run) for r in report.results])


def head(report: ElectionReport, partitions: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "election_type": report.election_type.name,
        "dry_run": report.dry_run,
        "partitions": partitions,
        "summary": summary_document(report),
        "warnings": list(report.warnings),
    }


def row_error(r: PartitionResult) -> str | None:
    """A row's `error`: Kafka's `...Exception: message` for an error, the text as it is otherwise."""
    if r.error_code in (0, kafka_errors.ELECTION_NOT_NEEDED) or r.outcome is Outcome.UNCONFIRMED:
        return r.error
    return kafka_errors.describe(r.error_code, r.error)


def row(r: PartitionResult, dry_run: bool) -> dict[str, Any]:
    row = {
        "topic": r.tp.topic,
        "partition": r.tp.partition,
        "outcome": outcome_word(r.outcome, r.error_code),
        "error_code": r.error_code,
        "error": row_error(r),
        "leader_before": r.leader_before,
        "leader_after": r.leader_after,
    }
    if dry_run or r.unclean or r.below_min_isr:  # a plan, or a refused unclean election's at-risk partitions
        row.update(unclean=r.unclean, below_min_isr=r.below_min_isr)
    return row
