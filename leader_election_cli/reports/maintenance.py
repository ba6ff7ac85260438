"""`can-stop`'s report (the verdict on stopping brokers now) and its JSON document."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from leader_election_cli.errors import ExitCode
from leader_election_cli.planning.maintenance import PartitionRisk, StopVerdict
from leader_election_cli.reports.run import Report

__all__ = ["CanStopReport", "PartitionRisk", "StopVerdict", "document", "verdict_document"]  # the verdict's values too

SCHEMA_VERSION = 1  # schemas/can-stop.schema.json


@dataclass
class CanStopReport(Report):
    """The verdict, or why it could not be reached (`aborted_reason`, with --output json)."""

    verdict: StopVerdict | None
    brokers: tuple[int, ...]
    cluster_id: str | None = None
    interrupted: bool = False
    aborted_exit: ExitCode | None = None
    aborted_reason: str | None = None

    @property
    def has_failures(self) -> bool:
        return False

    @property
    def exit_code(self) -> ExitCode:
        """0: safe to stop; 5: unsafe (the partitions are listed); else the failure that stopped the read."""
        code = super().exit_code
        if code is ExitCode.OK and self.verdict is not None and not self.verdict.safe:
            return ExitCode.REFUSED
        return code


def risk_entry(r: PartitionRisk) -> dict[str, Any]:
    return {"topic": r.tp.topic, "partition": r.tp.partition, "problem": r.problem.value, "blocking": r.blocking,
            "already": r.already, "replicas": list(r.replicas), "isr": list(r.isr), "isr_after": list(r.isr_after),
            "min_isr": r.min_isr, "adding": list(r.adding)}


def verdict_document(v: StopVerdict) -> dict[str, Any]:
    """The verdict's own fields (shared by can-stop's document and roll's steps)."""
    return {"safe": v.safe, "brokers": list(v.brokers), "already_down": list(v.already_down),
            "elr_counted": v.elr_counted, "allow_rf1": v.allow_rf1,
            "blocking": sum(1 for r in v.risks if r.blocking), "partitions": [risk_entry(r) for r in v.risks]}


def document(report: CanStopReport) -> dict[str, Any]:
    verdict = verdict_document(report.verdict) if report.verdict is not None else {
        "safe": None, "brokers": list(report.brokers), "already_down": [], "elr_counted": False,
        "allow_rf1": False, "blocking": 0, "partitions": []}
    return {"schema_version": SCHEMA_VERSION, "command": "can-stop", "cluster_id": report.cluster_id, **verdict,
            "exit_code": int(report.exit_code), "error": report.aborted_reason}
