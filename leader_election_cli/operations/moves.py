"""Leadership moves on a live cluster: `prefer`, `demote` and `restore`.

Kafka cannot elect a chosen replica, so every move takes the same steps (KAFKA_BEHAVIOUR.md, seed 002):
1. save the partitions' current replica orders to a restore file, before anything changes;
2. reorder the replicas with AlterPartitionReassignments (the same set, so no data moves);
3. wait, bounded, until ListPartitionReassignments no longer lists them;
4. run a preferred election (`execution.elect`, in batches) and check that the expected broker leads.

The plans are pure (`prefer_plan`, `demote_plan`, `restore_plan`); `run_moves` does the I/O and
`predict_moves` answers a dry run. Whatever happens, the report lists every planned partition once.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from leader_election_cli import kafka_errors
from leader_election_cli.cluster.admin import Cluster
from leader_election_cli.errors import CliError, ExitCode, InputError, UnreachableError, shown
from leader_election_cli.model import (
    NO_LEADER,
    ClusterState,
    ControllerMode,
    ElectionType,
    Outcome,
    PartitionResult,
    TopicPartition,
)
from leader_election_cli.operations import execution
from leader_election_cli.planning import (
    Move,
    Refusal,
    batches,
    check_prefer,
    demotion_plan,
    predict,
    reorder_for_leader,
)

RESTORE_SCHEMA_VERSION = 1
_POLL_FIRST_S, _POLL_MAX_S = 0.05, 1.0


# -- plans (pure) -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class MovePlan:
    """What a command would do: a move or a refusal per partition, in the order to report them."""

    command: str  # prefer | demote | restore
    entries: tuple[Move | Refusal, ...]

    @property
    def moves(self) -> list[Move]:
        return [e for e in self.entries if isinstance(e, Move)]

    @property
    def reorders(self) -> list[Move]:
        """The moves that change a replica order (the others only need an election, or nothing)."""
        return [m for m in self.moves if m.new_replicas != m.replicas]


def prefer_plan(state: ClusterState, wanted: Iterable[tuple[TopicPartition, int]]) -> MovePlan:
    """Make each broker the leader of its partition: it goes first in the replica order."""
    entries: list[Move | Refusal] = []
    for tp, broker in wanted:
        reason = check_prefer(state, tp, broker)
        if reason:
            entries.append(Refusal(tp, reason))
        else:
            p = state.partitions[tp]
            entries.append(Move(tp, p.replicas, reorder_for_leader(p.replicas, broker), p.leader, broker))
    return MovePlan("prefer", tuple(entries))


def demote_plan(state: ClusterState, broker: int, include_preferred: bool = False,
                topic_filter: Callable[[str], bool] | None = None) -> MovePlan:
    """`planning.demotion_plan` (the successor first, `broker` last), partitions sorted."""
    moves, refusals = demotion_plan(state, broker, include_preferred, topic_filter)
    return MovePlan("demote", tuple(sorted([*moves, *refusals], key=lambda e: e.tp)))


def restore_plan(state: ClusterState, saved: Iterable[tuple[TopicPartition, tuple[int, ...]]]) -> MovePlan:
    """Put saved replica orders back; the first saved replica is the leader the election should give."""
    entries: list[Move | Refusal] = []
    for tp, replicas in saved:
        p = state.partitions.get(tp)
        if p is None:
            entries.append(Refusal(tp, f"partition {tp} does not exist"))
        elif sorted(p.replicas) != sorted(replicas):
            entries.append(Refusal(tp, f"the replicas of {tp} changed since the restore file was written "
                                       f"(now {_ids(p.replicas)}, saved {_ids(replicas)})"))
        elif tp in state.reassigning:
            entries.append(Refusal(tp, f"a reassignment of {tp} is pending"))
        else:
            entries.append(Move(tp, p.replicas, tuple(replicas), p.leader, replicas[0]))
    return MovePlan("restore", tuple(entries))


def topic_matcher(regex: str | None) -> Callable[[str], bool] | None:
    """A whole-name matcher for --topic-regex (as Kafka's tools match topic regexes), or None."""
    if regex is None:
        return None
    try:
        pattern = re.compile(regex)
    except re.error as exc:
        raise InputError(f"Invalid --topic-regex '{shown(regex)}': {exc}",
                         hint="Use a Python regular expression matching whole topic names, e.g. 'orders-.*'.") from None
    return lambda topic: pattern.fullmatch(topic) is not None


def _ids(brokers: Sequence[int]) -> str:
    return ",".join(map(str, brokers)) or "none"


# -- the report ---------------------------------------------------------------------------------------

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
class MoveReport:
    """Every planned partition once, in plan order."""

    command: str
    results: list[MoveResult]
    dry_run: bool = False
    restore_file: str | None = None
    interrupted: bool = False
    aborted_exit: ExitCode | None = None
    aborted_reason: str | None = None

    def abort(self, exit_code: ExitCode, reason: str) -> None:
        self.aborted_exit, self.aborted_reason = exit_code, reason

    def count(self, outcome: Outcome) -> int:
        return sum(1 for r in self.results if r.outcome is outcome)

    @property
    def exit_code(self) -> ExitCode:
        """0 when every partition has the leader asked for, or a dry run finished; 1 when one was refused
        or failed (the broker asked for does not lead it)."""
        if self.interrupted:
            return ExitCode.INTERRUPTED
        if self.aborted_exit is not None:
            return self.aborted_exit
        unhappy = (Outcome.FAILED, Outcome.SKIPPED, Outcome.NOT_ATTEMPTED)
        if not self.dry_run and any(r.outcome in unhappy for r in self.results):
            return ExitCode.PARTITION_FAILED
        return ExitCode.OK


def _initial_results(plan: MovePlan, state: ClusterState) -> dict[TopicPartition, MoveResult]:
    """Refusals skipped, moves with nothing to change already done, the rest not attempted (yet)."""
    results = {}
    for e in plan.entries:
        if isinstance(e, Refusal):
            p = state.partitions.get(e.tp)
            replicas = p.replicas if p else ()
            results[e.tp] = MoveResult(e.tp, Outcome.SKIPPED, replicas, replicas, p.leader if p else None, None,
                                       p.leader if p else None, error=e.reason)
        elif e.new_replicas == e.replicas and e.leader_before == e.leader_after:
            results[e.tp] = MoveResult(e.tp, Outcome.ALREADY_ELECTED, e.replicas, e.new_replicas, e.leader_before,
                                       e.leader_after, e.leader_before)
        else:
            results[e.tp] = MoveResult(e.tp, Outcome.NOT_ATTEMPTED, e.replicas, e.new_replicas, e.leader_before,
                                       e.leader_after)
    return results


def predict_moves(plan: MovePlan, state: ClusterState) -> MoveReport:
    """A dry run: the preferred election predicted on the reordered state; nothing is sent or written."""
    results = _initial_results(plan, state)
    todo = [tp for tp, r in results.items() if r.outcome is Outcome.NOT_ATTEMPTED]
    mode = state.mode or ControllerMode.KRAFT
    for p in predict(_reordered(state, results, todo), ElectionType.PREFERRED, todo, mode):
        r = results[p.tp]
        code, error = 0, None
        if p.outcome is Outcome.FAILED:
            code, error = p.error_code, _error_text(p.error_code, p.message)
        elif p.leader_after != r.expected_leader:
            code, error = kafka_errors.PREFERRED_LEADER_NOT_AVAILABLE, _not_led(p.tp, p.leader_after, r.expected_leader)
        results[p.tp] = replace(r, outcome=Outcome.PREDICTED, leader_after=p.leader_after, error_code=code,
                                error=error)
    return MoveReport(plan.command, list(results.values()), dry_run=True)


def _reordered(state: ClusterState, results: dict[TopicPartition, MoveResult],
               partitions: Sequence[TopicPartition]) -> ClusterState:
    """`state` with the new orders of `partitions`: what a preferred election after the reorders sees."""
    reordered = {tp: state.partitions[tp]._replace(replicas=results[tp].replicas_after) for tp in partitions}
    return replace(state, partitions={**state.partitions, **reordered})


def _not_led(tp: TopicPartition, leader: int | None, expected: int | None) -> str:
    if leader is None or leader == NO_LEADER:
        return f"{tp} has no leader after the election, not broker {expected}"
    return f"broker {leader} leads {tp} after the election, not broker {expected}"


def _error_text(code: int, message: str | None) -> str:
    return message or kafka_errors.lookup(code).message


# -- running a plan -----------------------------------------------------------------------------------

def run_moves(cluster: Cluster, state: ClusterState, plan: MovePlan, *, restore_path: Path | None,
              batch_size: int, wait_seconds: float) -> MoveReport:
    """Carry out a plan read from `state`: restore file, reorders, wait, preferred election, verification.

    The restore file (when a path is given and any order changes) is written before the first request.
    Once anything has been sent, a cluster failure or Ctrl-C stops the run and the report says what was
    done; the partitions left over are `not_attempted`, and the restore file puts their orders back.
    """
    results = _initial_results(plan, state)
    report = MoveReport(plan.command, [])
    reorders = plan.reorders
    if reorders and restore_path is not None:
        write_restore_file(restore_path, plan.command, state, reorders)
        report.restore_file = str(restore_path)
    sent: list[TopicPartition] = []  # reorders sent, answered or not
    answered: execution.Answers = {}  # the controller's answer to each reorder it answered
    try:
        with execution.stop_on_signals() as stop:  # Ctrl-C lets the reorder in flight finish, then stops
            _reorder(cluster, {m.tp: m.new_replicas for m in reorders}, batch_size, stop, sent, answered)
            if stop.stopped:
                raise KeyboardInterrupt
        _refused(results, answered)
        accepted = [m.tp for m in reorders if answered[m.tp][0] == kafka_errors.NONE]
        cluster.restart_timeout()
        for tp in wait_for_reassignments(cluster, accepted, wait_seconds):
            results[tp] = replace(results[tp], outcome=Outcome.FAILED, error_code=kafka_errors.REASSIGNMENT_IN_PROGRESS,
                                  error=f"the new replica order was still being applied after {wait_seconds:g} s, "
                                        "so no election was run")
        todo = [tp for tp, r in results.items() if r.outcome is Outcome.NOT_ATTEMPTED]
        if todo:
            cluster.restart_timeout()
            # Judged against the new orders: an answer lost on the way is read back from the leaders.
            election = execution.elect(cluster, ElectionType.PREFERRED, todo, _reordered(state, results, todo),
                                       batch_size=batch_size)
            for r in election.results:
                results[r.tp] = _verified(results[r.tp], r)
            report.interrupted = election.interrupted
            if election.aborted_exit is not None:
                report.abort(election.aborted_exit, election.aborted_reason or "stopped")
    except KeyboardInterrupt:
        report.interrupted = True
        _read_back(cluster, results, report.restore_file, answered, in_doubt=set())
    except CliError as exc:
        if not reorders:  # execution.elect raises only when nothing was elected: nothing changed
            raise
        report.abort(exc.exit_code, exc.message)
        lost = set(sent) - set(answered) if isinstance(exc, UnreachableError) else set()  # else refused as a whole
        _read_back(cluster, results, report.restore_file, answered, in_doubt=lost)
    report.results = list(results.values())
    return report


def _refused(results: dict[TopicPartition, MoveResult], answered: execution.Answers) -> None:
    """The reorders the controller refused fail, their order unchanged."""
    for tp, (code, message) in answered.items():
        if code != kafka_errors.NONE and results[tp].outcome is Outcome.NOT_ATTEMPTED:
            results[tp] = replace(results[tp], outcome=Outcome.FAILED, error_code=code,
                                  error=f"the reorder was refused: {_error_text(code, message)}",
                                  replicas_after=results[tp].replicas_before)


def _read_back(cluster: Cluster, results: dict[TopicPartition, MoveResult], restore_file: str | None,
               answered: execution.Answers, in_doubt: set[TopicPartition]) -> None:
    """After a stop, what each partition the run did not finish holds: the refusals heard, then the
    order and leader the cluster shows. `in_doubt`: reorders sent whose answer was lost, which the
    controller may still apply."""
    _refused(results, answered)
    pending = [tp for tp, r in results.items() if r.outcome is Outcome.NOT_ATTEMPTED]
    if not pending:
        return
    undo = ": the restore file puts the order back" if restore_file else ""
    accepted = f"reordered, but no election was run{undo}"
    try:
        cluster.restart_timeout()
        now = cluster.describe().partitions
    except (CliError, KeyboardInterrupt):
        for tp in pending:  # the controller's answers still say what became of the reorders
            r = results[tp]
            if tp in answered:
                results[tp] = replace(r, error=f"{accepted} (its leader could not be read)")
            elif tp in in_doubt:
                results[tp] = replace(r, replicas_after=r.replicas_before,
                                      error="the answer to its reorder was lost and the cluster could not be read: "
                                            "check its replica order")
            else:
                results[tp] = replace(r, replicas_after=r.replicas_before)
        return
    for tp in pending:
        r, p = results[tp], now.get(tp)
        if p is None:
            continue
        note = None
        if p.replicas != r.replicas_before:
            note = accepted
        elif tp in in_doubt:
            note = f"the answer to its reorder was lost: the controller may still apply it{undo}"
        results[tp] = replace(r, replicas_after=p.replicas, leader_after=p.leader, error=note)


def _reorder(cluster: Cluster, orders: dict[TopicPartition, tuple[int, ...]], batch_size: int,
             stop: execution.StopFlag, sent: list[TopicPartition], answered: execution.Answers) -> None:
    """Send the new orders in batches until `stop`, noting each in `sent` first, and each answer, with
    the controller's (code, message), in `answered`."""
    for batch in batches(list(orders), batch_size):
        if stop.stopped:
            break
        sent.extend(batch)
        cluster.restart_timeout()
        answers = cluster.alter_replica_order({tp: orders[tp] for tp in batch})
        for tp in batch:
            answered[tp] = answers.get(tp, (kafka_errors.UNKNOWN_SERVER_ERROR,
                                            "The controller did not answer for this partition."))


def wait_for_reassignments(cluster: Cluster, partitions: Sequence[TopicPartition],
                           seconds: float) -> set[TopicPartition]:
    """Poll ListPartitionReassignments until none of `partitions` is listed, or `seconds` pass
    (keep `seconds` under the cluster's API timeout: the polls share it).

    Returns the partitions still listed (empty when all are done). A reorder moves no data, so it
    normally completes at once; the poll interval doubles from 50 ms to 1 s. A lost answer (it only
    reads) is asked again once, after finding the controller again.
    """
    if not partitions:
        return set()
    deadline = time.monotonic() + seconds
    delay = _POLL_FIRST_S
    reconnected = False
    while True:
        try:
            listed = cluster.list_reassignments()
        except UnreachableError:
            if reconnected:
                raise
            reconnected = True
            cluster.reconnect()
            continue
        pending = {tp for tp in partitions if tp in listed}
        remaining = deadline - time.monotonic()
        if not pending or remaining <= 0:
            return pending
        time.sleep(min(delay, remaining))
        delay = min(delay * 2, _POLL_MAX_S)


def _verified(planned: MoveResult, elected: PartitionResult) -> MoveResult:
    """The election's answer, checked against the leader the move asked for."""
    result = replace(planned, leader_after=elected.leader_after, error_code=elected.error_code, error=elected.error)
    if elected.outcome not in (Outcome.ELECTED, Outcome.ALREADY_ELECTED):
        return replace(result, outcome=elected.outcome)
    if elected.leader_after != planned.expected_leader:
        error = (f"the leader of {planned.tp} could not be read after the election" if elected.leader_after is None
                 else _not_led(planned.tp, elected.leader_after, planned.expected_leader))
        return replace(result, outcome=Outcome.FAILED, error_code=0, error=error)
    changed = planned.leader_before != planned.expected_leader
    return replace(result, outcome=Outcome.ELECTED if changed else Outcome.ALREADY_ELECTED, error_code=0, error=None)


# -- restore files ------------------------------------------------------------------------------------

@dataclass(frozen=True)
class RestoreFile:
    """The saved replica orders, in file order."""

    command: str | None
    cluster_id: str | None
    created_at: str | None
    orders: tuple[tuple[TopicPartition, tuple[int, ...]], ...] = field(default=())


def default_restore_path(command: str, now: datetime | None = None) -> Path:
    """kafka-leaders-restore-<command>-<UTC time>.json in the current directory."""
    now = now or datetime.now(timezone.utc)
    return Path.cwd() / f"kafka-leaders-restore-{command}-{now.strftime('%Y%m%dT%H%M%SZ')}.json"


def restore_document(command: str, state: ClusterState, moves: Sequence[Move],
                     now: datetime | None = None) -> dict[str, Any]:
    """The restore file's content: the orders before the moves (schemas/restore-file.schema.json)."""
    now = now or datetime.now(timezone.utc)
    return {
        "schema_version": RESTORE_SCHEMA_VERSION,
        "command": command,
        "created_at": now.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "cluster_id": state.cluster_id,
        "partitions": [{"topic": m.tp.topic, "partition": m.tp.partition, "replicas": list(m.replicas),
                        "leader": m.leader_before} for m in moves],
    }


def write_restore_file(path: Path, command: str, state: ClusterState, moves: Sequence[Move]) -> None:
    """Write (never overwrite) the restore file and flush it to disk before anything changes."""
    text = json.dumps(restore_document(command, state, moves), indent=1) + "\n"
    try:
        with open(path, "x", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
    except FileExistsError:
        raise InputError(f"Restore file {shown(str(path))} already exists; nothing was changed",
                         hint="Give another --restore-file path: an existing restore file is never overwritten.") \
            from None
    except OSError as exc:
        raise InputError(f"Cannot write the restore file {shown(str(path))}: {exc.strerror or exc}; "
                         "nothing was changed", hint="Give a writable --restore-file path.") from None


def load_restore_file(path: str) -> RestoreFile:
    """Read and validate a restore file (schemas/restore-file.schema.json); every problem one line."""
    from jsonschema.exceptions import best_match

    where = shown(path)
    hint = "Give a file written by kafka-leaders prefer or demote (its name is in their output)."
    try:
        with open(path, "rb") as file:
            document = json.loads(file.read().decode("utf-8"))
    except OSError as exc:
        raise InputError(f"Unable to read restore file {where}: {exc.strerror or exc}", hint=hint) from None
    except UnicodeDecodeError:
        raise InputError(f"Restore file {where} is not UTF-8 text", hint=hint) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"Restore file {where} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno}", hint=hint) from None
    except (ValueError, RecursionError):
        raise InputError(f"Restore file {where} cannot be read as JSON", hint=hint) from None
    error = best_match(_restore_validator().iter_errors(document))
    if error is not None:
        raise InputError(f"Invalid restore file {where} at {error.json_path}: {shown(error.message)}", hint=hint)
    orders = tuple((TopicPartition(e["topic"], e["partition"]), tuple(e["replicas"])) for e in document["partitions"])
    seen: set[TopicPartition] = set()
    for tp, _ in orders:
        if tp in seen:
            raise InputError(f"Restore file {where} lists {shown(str(tp))} twice", hint=hint)
        seen.add(tp)
    return RestoreFile(document.get("command"), document.get("cluster_id"), document.get("created_at"), orders)


def _restore_validator() -> Any:
    from importlib.resources import files

    import jsonschema

    schema = json.loads(files("leader_election_cli").joinpath("schemas/restore-file.schema.json").read_text("utf-8"))
    strict = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer", lambda _checker, value: type(value) is int)
    return jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=strict)(schema)
