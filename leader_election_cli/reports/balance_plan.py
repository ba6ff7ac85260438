"""The `balance` report: the leadership plan (per broker before -> after, the proven lower bound, each
partition's new order) and, once executed, what each partition became and the leaders read back.

Its JSON document (schemas/balance.schema.json) is also the plan file: `balance --plan-file PATH`
writes it for review, `balance --execute --plan-file PATH` runs exactly its `partitions`
(`plan_from_document` reads it back).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from leader_election_cli.errors import ExitCode
from leader_election_cli.model import TopicPartition

# What the report holds, per broker, per rack and per partition (planning's own values):
from leader_election_cli.planning.leadership_plan import (
    BrokerLeadership,
    LeaderChange,
    LeadershipPlan,
    LoadFigures,
    RackLeadership,
)
from leader_election_cli.reports.moves import MoveReport, MoveResult
from leader_election_cli.reports.outcomes import outcome_word
from leader_election_cli.reports.run import Report

SCHEMA_VERSION = 1
WEIGHT_SOURCES = ("size", "file")  # --weight size (log sizes, DescribeLogDirs) or --weights FILE

__all__ = ["BalanceOptions", "BalanceReport", "BalanceStopped", "BrokerLeadership", "LeaderChange", "LeadershipPlan",
           "RackLeadership", "document", "plan_from_document", "stopped_document"]


@dataclass(frozen=True)
class BalanceOptions:
    """What the plan was asked to honour."""

    exclude_brokers: tuple[int, ...] = ()
    exclude_topic_regex: str | None = None
    rack_aware: bool = False
    weight: str | None = None  # None (leader counts), or one of WEIGHT_SOURCES
    max_moves: int | None = None


@dataclass
class BalanceReport(Report):
    """A plan (dry run) or a run of it (`moves` says what each partition became)."""

    plan: LeadershipPlan
    options: BalanceOptions
    cluster_id: str | None
    elect_only: list[LeaderChange] = field(default_factory=list)  # plan.elect_only: same order, an election
    dry_run: bool = True
    created_at: str = field(default_factory=lambda: _now())
    plan_file: str | None = None  # written (dry run) or run (--execute)
    moves: MoveReport | None = None  # when executed
    leaders_now: dict[int, int] | None = None  # read back after a run: leaders per broker (None: not read)
    aborted_exit: ExitCode | None = None
    aborted_reason: str | None = None

    @property
    def interrupted(self) -> bool:  # type: ignore[override]
        return bool(self.moves and self.moves.interrupted)

    @property
    def stop_signal(self) -> int | None:  # type: ignore[override]
        """The moves' signal: SIGTERM exits 143 and SIGHUP 129 (every one was 130)."""
        return self.moves.stop_signal if self.moves else None

    @property
    def has_failures(self) -> bool:
        """A partition whose change failed, was refused or was left undone (a dry run fails nothing)."""
        return self.moves is not None and self.moves.has_failures

    @property
    def partitions(self) -> list[LeaderChange]:
        """Every partition the plan touches: the reorders, and those that only need an election."""
        return sorted([*self.plan.changes, *self.elect_only])

    @property
    def results(self) -> dict[TopicPartition, MoveResult]:
        return {r.tp: r for r in self.moves.results} if self.moves is not None else {}

    @property
    def max_now(self) -> int | None:
        """The most leaders on a broker that may lead, read back after the run."""
        if self.leaders_now is None:
            return None
        return max((self.leaders_now.get(b.broker, 0) for b in self.plan.brokers if b.may_lead), default=0)

    @property
    def restore_file(self) -> str | None:
        return self.moves.restore_file if self.moves is not None else None


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- the JSON document (and plan file) ---------------------------------------------------------------

def document(report: BalanceReport) -> dict[str, Any]:
    """The versioned document (schemas/balance.schema.json)."""
    plan, o = report.plan, report.options
    results = report.results
    now = report.leaders_now or {}
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "balance",
        "created_at": report.created_at,
        "cluster_id": report.cluster_id,
        "dry_run": report.dry_run,
        "options": {"exclude_brokers": list(o.exclude_brokers), "exclude_topic_regex": o.exclude_topic_regex,
                    "rack_aware": o.rack_aware, "weight": o.weight, "max_moves": o.max_moves},
        "summary": {
            "max_leaders_before": plan.max_before, "max_leaders_after": plan.max_after,
            "lower_bound": plan.lower_bound, "optimal": plan.optimal,
            "spread_before": plan.spread_before, "spread_after": plan.spread_after,
            "partitions_changed": len(plan.changes), "elect_only": len(plan.elect_only),
            "changes_for_optimum": plan.changes_for_optimum, "movable": plan.movable, "excluded": plan.excluded,
            "rack_lower_bound": plan.rack_lower_bound,
            "load": None if plan.load is None else {
                "max_before": plan.load.max_before, "max_after": plan.load.max_after,
                "count_solution_max": plan.load.count_solution_max, "lower_bound": plan.load.lower_bound,
                "gap": plan.load.gap},
            "max_leaders_now": report.max_now,
            "exit_code": int(report.exit_code), "interrupted": report.interrupted,
            "stopped": report.aborted_reason,
        },
        "brokers": [{"broker": b.broker, "rack": b.rack, "may_lead": b.may_lead, "leaders_before": b.leaders_before,
                     "leaders_after": b.leaders_after, "load_before": b.load_before, "load_after": b.load_after,
                     "leaders_now": now.get(b.broker, 0) if report.leaders_now is not None else None}
                    for b in plan.brokers],
        "racks": None if plan.racks is None else [
            {"rack": r.rack, "leaders_before": r.leaders_before, "leaders_after": r.leaders_after} for r in plan.racks],
        "partitions": [_entry(c, results.get(c.tp)) for c in report.partitions],
        "skipped": [{"topic": tp.topic, "partition": tp.partition, "reason": why} for tp, why in plan.skipped],
        "restore_file": report.restore_file,
        "plan_file": report.plan_file,
    }


def _entry(c: LeaderChange, r: MoveResult | None) -> dict[str, Any]:
    entry: dict[str, Any] = {"topic": c.tp.topic, "partition": c.tp.partition,
                             "replicas_before": list(c.replicas_before), "replicas_after": list(c.replicas_after),
                             "leader_before": c.leader_before, "leader_after": c.leader_after}
    if r is not None:
        entry.update(outcome=outcome_word(r.outcome, r.error_code), leader_now=r.leader_after,
                     replicas_now=list(r.replicas_after), error_code=r.error_code, error=r.error)
    return entry


def plan_from_document(doc: dict[str, Any]) -> tuple[LeadershipPlan, list[LeaderChange], BalanceOptions]:
    """A plan file (a document validated against schemas/balance.schema.json) as the plan it holds: the
    plan, the partitions that only need an election, and the options it was made with."""
    s, o = doc["summary"], doc["options"]
    changes, elect_only = [], []
    for e in doc["partitions"]:
        change = LeaderChange(TopicPartition(e["topic"], e["partition"]), tuple(e["replicas_before"]),
                              tuple(e["replicas_after"]), e["leader_before"], e["leader_after"])
        (elect_only if change.replicas_after == change.replicas_before else changes).append(change)
    load = s["load"]
    plan = LeadershipPlan(
        changes=sorted(changes), elect_only=sorted(c.tp for c in elect_only),
        brokers=[BrokerLeadership(b["broker"], b["rack"], b["may_lead"], b["leaders_before"], b["leaders_after"],
                                  b["load_before"], b["load_after"]) for b in doc["brokers"]],
        max_before=s["max_leaders_before"], max_after=s["max_leaders_after"], lower_bound=s["lower_bound"],
        changes_for_optimum=s["changes_for_optimum"], movable=s["movable"], excluded=s["excluded"],
        skipped=[(TopicPartition(e["topic"], e["partition"]), e["reason"]) for e in doc["skipped"]],
        max_moves=o["max_moves"],
        racks=None if doc["racks"] is None else [RackLeadership(r["rack"], r["leaders_before"], r["leaders_after"])
                                                 for r in doc["racks"]],
        rack_lower_bound=s["rack_lower_bound"],
        load=None if load is None else LoadFigures(load["max_before"], load["max_after"], load["count_solution_max"],
                                                   load["lower_bound"]))
    options = BalanceOptions(tuple(o["exclude_brokers"]), o["exclude_topic_regex"], o["rack_aware"], o["weight"],
                             o["max_moves"])
    return plan, sorted(elect_only), options


@dataclass
class BalanceStopped(Report):
    """`balance` stopped before it had a plan (unreachable, login refused, a plan file refused): only why."""

    error: str
    aborted_exit: ExitCode | None = None
    interrupted: bool = False
    aborted_reason: str | None = None
    has_failures = False


def stopped_document(report: BalanceStopped) -> dict[str, Any]:
    return {"schema_version": SCHEMA_VERSION, "command": "balance", "cluster_id": None, "error": report.error,
            "exit_code": int(report.exit_code)}
