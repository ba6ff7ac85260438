"""`can-stop`'s report (the verdict on stopping brokers now), `roll`'s (each broker's steps), and their JSON
documents."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from leader_election_cli.errors import ExitCode
from leader_election_cli.planning.maintenance import PartitionRisk, StopVerdict
from leader_election_cli.planning.quorum import QuorumVerdict
from leader_election_cli.planning.rounds import Rounds
from leader_election_cli.reports.run import Report

__all__ = ["BrokerRoll", "CanStopReport", "Ended", "PartitionRisk", "QuorumVerdict", "RollReport", "RollStep",
           "Rounds", "StopVerdict", "document", "quorum_document", "roll_document", "silent_brokers_text",
           "verdict_document"]  # its values too

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
    quorum: QuorumVerdict | None = None  # the voters asked about (KRaft): the quorum rule

    @property
    def has_failures(self) -> bool:
        return False

    @property
    def safe(self) -> bool | None:
        if self.verdict is None:
            return None
        return self.verdict.safe and (self.quorum is None or self.quorum.safe)

    @property
    def exit_code(self) -> ExitCode:
        """0: safe to stop; 5: unsafe (the partitions are listed); else the failure that stopped the read."""
        code = super().exit_code
        if code is ExitCode.OK and self.safe is False:
            return ExitCode.REFUSED
        return code


def silent_brokers_text(brokers: tuple[int, ...]) -> str:
    """Why brokers the cluster lists as live count as down (the verdict's `not_answering`)."""
    one = len(brokers) == 1
    return (f"broker{'' if one else 's'} {','.join(map(str, brokers))} do{'es' if one else ''} not answer (the cluster "
            f"still lists {'it' if one else 'them'}: a crashed broker is fenced after broker.session.timeout.ms)")


def risk_entry(r: PartitionRisk) -> dict[str, Any]:
    return {"topic": r.tp.topic, "partition": r.tp.partition, "problem": r.problem.value, "blocking": r.blocking,
            "already": r.already, "replicas": list(r.replicas), "isr": list(r.isr), "isr_after": list(r.isr_after),
            "min_isr": r.min_isr, "adding": list(r.adding)}


def verdict_document(v: StopVerdict) -> dict[str, Any]:
    """The verdict's own fields (shared by can-stop's document and roll's steps)."""
    return {"safe": v.safe, "brokers": list(v.brokers), "already_down": list(v.already_down),
            "not_answering": list(v.not_answering),
            "elr_counted": v.elr_counted, "allow_rf1": v.allow_rf1,
            "blocking": sum(1 for r in v.risks if r.blocking), "partitions": [risk_entry(r) for r in v.risks]}


def quorum_document(q: QuorumVerdict) -> dict[str, Any]:
    """The quorum rule's verdict: each voter's lag and the age of its last caught-up time (the leader's clock)."""
    return {"safe": q.safe, "controllers": list(q.nodes), "leader": q.leader, "epoch": q.epoch,
            "fetch_timeout_ms": q.fetch_timeout_ms,
            "fetch_timeout_from": "config" if q.fetch_timeout_read else "default",
            "caught_up_after": q.caught_up_after, "needed": q.needed, "reason": q.reason,
            "voters": [{"node": v.node, "leader": v.leader, "log_end_offset": v.log_end_offset, "lag": v.lag,
                        "last_caught_up_age_ms": v.caught_up_age_ms, "caught_up": v.caught_up, "stopping": v.stopping,
                        "answering": v.answering}
                       for v in q.voters]}


def document(report: CanStopReport) -> dict[str, Any]:
    verdict = verdict_document(report.verdict) if report.verdict is not None else {
        "safe": None, "brokers": list(report.brokers), "already_down": [], "not_answering": [], "elr_counted": False,
        "allow_rf1": False, "blocking": 0, "partitions": []}
    return {"schema_version": SCHEMA_VERSION, "command": "can-stop", "cluster_id": report.cluster_id, **verdict,
            "safe": report.safe, "quorum": quorum_document(report.quorum) if report.quorum is not None else None,
            "exit_code": int(report.exit_code), "error": report.aborted_reason}


# -- roll -----------------------------------------------------------------------------------------------

ROLL_SCHEMA_VERSION = 1  # schemas/roll.schema.json


@dataclass(frozen=True)
class Ended:
    """A command's process group ended by the roll: its processes when the SIGTERM went (pid, name), and the
    times (UTC, ISO 8601)."""

    process_group: int
    processes: tuple[tuple[int, str], ...]
    sigterm_at: str
    sigkill_at: str | None  # None: every process was gone within the grace period
    gone_at: str | None  # None: some process was still there after the wait for it


@dataclass
class RollStep:
    """One step of one broker's roll: wait_safe, drain, restart, wait_back or restore."""

    name: str
    seconds: float
    ok: bool
    detail: str
    moved: int | None = None  # partitions whose leadership moved (drain, restore)
    coordinators_moved: int | None = None  # drain, restore: how many of them are __consumer_offsets partitions
    polls: int | None = None  # cluster reads of a wait
    command_exit: int | None = None  # the restart command's exit code
    verdict: StopVerdict | None = None  # wait_safe, restart: the last verdict read
    quorum: QuorumVerdict | None = None  # a controller's wait_safe, wait_back: the last quorum verdict read
    exit_code: ExitCode | None = None  # the roll's exit code when the step failed
    completed: bool = True  # False: a stop signal ended it; --resume runs it again
    verdict_age_s: float | None = None  # restart: from the end of the verdict's read to the command's start
    killed: Ended | None = None  # restart: the command's process group, ended


@dataclass
class BrokerRoll:
    broker: int
    host: str | None
    status: str  # planned (dry run), running, done, refused, failed, interrupted
    steps: list[RollStep]
    role: str = "broker"  # or "controller": a dedicated KRaft controller


@dataclass
class RollReport(Report):
    state_file: str | None  # None: not known (the cluster, whose id names it, was not read)
    command: str | None
    dry_run: bool = False
    brokers: list[BrokerRoll] = field(default_factory=list)
    interrupted: bool = False
    aborted_exit: ExitCode | None = None
    aborted_reason: str | None = None
    rounds: Rounds | None = None  # --parallel: the rounds planned
    racks: dict[int, str] = field(default_factory=dict)  # broker.rack of the brokers of the rounds

    @property
    def has_failures(self) -> bool:
        return any(b.status in ("failed", "refused") for b in self.brokers)


def _step_entry(s: RollStep) -> dict[str, Any]:
    entry: dict[str, Any] = {"step": s.name, "seconds": s.seconds, "ok": s.ok, "completed": s.completed,
                             "detail": s.detail, "moved": s.moved, "polls": s.polls, "command_exit": s.command_exit}
    if s.verdict is not None:
        entry["verdict"] = {"safe": s.verdict.safe, "not_answering": list(s.verdict.not_answering),
                            "blocking": [risk_entry(r) for r in s.verdict.blocking]}
    if s.quorum is not None:
        entry["quorum"] = quorum_document(s.quorum)
    if s.name in ("drain", "restore"):
        entry["coordinators_moved"] = s.coordinators_moved
    if s.name == "restart":
        entry["verdict_age_s"] = s.verdict_age_s
        entry["killed"] = None if s.killed is None else {
            "process_group": s.killed.process_group, "sigterm_at": s.killed.sigterm_at,
            "sigkill_at": s.killed.sigkill_at, "gone_at": s.killed.gone_at,
            "processes": [{"pid": pid, "name": name} for pid, name in s.killed.processes]}
    return entry


def roll_document(report: RollReport) -> dict[str, Any]:
    return {"schema_version": ROLL_SCHEMA_VERSION, "command": "roll", "dry_run": report.dry_run,
            "state_file": report.state_file, "exec": report.command,
            "brokers": [{"broker": b.broker, "role": b.role, "host": b.host, "status": b.status,
                         "seconds": round(sum(s.seconds for s in b.steps), 3),
                         "steps": [_step_entry(s) for s in b.steps]} for b in report.brokers],
            "rounds": [list(r) for r in report.rounds.rounds] if report.rounds is not None else None,
            "rounds_bound": None if report.rounds is None else {
                "proven": report.rounds.proven, "lower_bound": report.rounds.lower_bound,
                "serial": report.rounds.serial, "conflicts": list(report.rounds.conflicts),
                "alone": list(report.rounds.alone), "racks": {str(b): r for b, r in report.racks.items()}},
            "interrupted": report.interrupted, "exit_code": int(report.exit_code), "error": report.aborted_reason}
