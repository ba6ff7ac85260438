"""Leadership moves on a live cluster: `prefer`, `demote` and `restore`.

Kafka cannot elect a chosen replica, so every move takes the same steps (KAFKA_BEHAVIOUR.md, seed 002):
1. save the partitions' current replica orders to a restore file, before anything changes;
2. reorder the replicas with AlterPartitionReassignments (the same set, so no data moves);
3. wait, bounded, until ListPartitionReassignments no longer lists them;
4. run a preferred election (`execution.elect`, in batches) and check that the expected broker leads.

`prefer`, `demote` and `restore` are the operations: read the cluster, plan (pure, in
`planning.reorders`), then `predict_moves` for a dry run or `run_moves`. Whatever happens, the report
lists every planned partition once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from leader_election_cli import kafka_errors
from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.errors import InputError, LeaderElectionError, UnreachableError, shown
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
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import SILENT, Hooks
from leader_election_cli.operations.maintenance import check_brokers
from leader_election_cli.operations.restore_file import check_written_for, load_restore_file, write_restore_file
from leader_election_cli.operations.restore_file import restore_path as restore_file_path
from leader_election_cli.operations.signals import StopFlag, note_for_a_hard_stop, stop_on_signals
from leader_election_cli.planning.batches import batches, request_size
from leader_election_cli.planning.prediction import predict
from leader_election_cli.planning.reorders import MovePlan, Refusal, demote_plan, prefer_plan, restore_plan
from leader_election_cli.reports.moves import MoveReport, MoveResult
from leader_election_cli.selection.topics import check_known, topic_matcher

DEFAULT_BATCH_SIZE = 1000
_POLL_FIRST_S, _POLL_MAX_S = 0.05, 1.0  # the reorder wait's poll interval, doubling


def prefer(connection: Connection, wanted: Sequence[tuple[TopicPartition, int]], *, dry_run: bool = False,
           batch_size: int = DEFAULT_BATCH_SIZE, restore_path: Path | None = None,
           hooks: Hooks = SILENT) -> MoveReport:
    """Make each broker the leader of its partition (`selection.leaders.prefer_targets` reads them). An unknown
    topic or partition is an input error before anything is sent, as in `elect`."""
    report = _carry_out(connection, "prefer", lambda state: prefer_plan(state, wanted), dry_run=dry_run,
                        batch_size=batch_size, restore_path=_restore_path("prefer", restore_path), hooks=hooks,
                        check=lambda state: check_known((tp for tp, _ in wanted), state))
    return _restore_file_noted(report, restore_path, hooks)


def demote(connection: Connection, broker: int, *, include_preferred: bool = False, topic_regex: str | None = None,
           dry_run: bool = False, batch_size: int = DEFAULT_BATCH_SIZE, restore_path: Path | None = None,
           hooks: Hooks = SILENT) -> MoveReport:
    """Move leadership off `broker` (and, with `include_preferred`, make it last wherever it is first)."""
    matcher = topic_matcher(topic_regex)

    def check(state: ClusterState) -> None:
        check_brokers(state, [broker], hint="Check the --broker id.")
        if matcher is not None and not any(matcher(tp.topic) for tp in state.partitions):
            raise InputError(f"--topic-regex '{shown(topic_regex or '')}' matches no topic: nothing was sent",
                             hint="Check the pattern against the cluster's topics (kafka-topics --list).")

    report = _carry_out(connection, "demote", lambda state: demote_plan(state, broker, include_preferred, matcher),
                        dry_run=dry_run, batch_size=batch_size, restore_path=_restore_path("demote", restore_path),
                        hooks=hooks, check=check)
    return _restore_file_noted(report, restore_path, hooks)


def restore(connection: Connection, path: str, *, dry_run: bool = False, batch_size: int = DEFAULT_BATCH_SIZE,
            hooks: Hooks = SILENT) -> MoveReport:
    """Put back the replica orders of a restore file written for this cluster, and elect."""
    saved = load_restore_file(path)

    def check(state: ClusterState) -> None:
        check_written_for(saved, path, state.cluster_id)

    return _carry_out(connection, "restore", lambda state: restore_plan(state, saved.orders), dry_run=dry_run,
                      batch_size=batch_size, restore_path=None, hooks=hooks, check=check)


def _restore_file_noted(report: MoveReport, asked: Path | None, hooks: Hooks) -> MoveReport:
    """A runbook looks for the restore file it named: say when none was written."""
    if asked is not None and not report.dry_run and report.restore_file is None:
        hooks.warn(f"No restore file written to {shown(str(asked))}: no replica order changes.")
    return report


def _restore_path(command: str, given: Path | None) -> Callable[[ClusterState], Path]:
    """The restore file, a default name after the cluster read (`restore_file.restore_path`)."""
    return lambda state: restore_file_path(command, given, state.cluster_id)


def _carry_out(connection: Connection, command: str, plan_for: Callable[[ClusterState], MovePlan], *,
               dry_run: bool, batch_size: int, restore_path: Path | Callable[[ClusterState], Path] | None,
               hooks: Hooks, check: Callable[[ClusterState], None]) -> MoveReport:
    """Read the cluster, plan, then predict (`dry_run`) or run the moves. `check` refuses the input against the
    metadata read (unknown names, another cluster) before any other request: a 300,000-entry prefer file
    naming unknown partitions was refused after the pending reassignments were read too."""
    settings = connection.settings(hooks.warn)
    with connection.open(settings) as cluster:
        state = cluster.describe()
        check(state)
        state = replace(state, reassigning=cluster.list_reassignments())
        plan = plan_for(state)
        if dry_run:
            return predict_moves(plan, state)
        if callable(restore_path):
            restore_path = restore_path(state)
        # the reorder wait and the election share the API timeout: half of it for the wait
        return run_moves(cluster, state, plan, restore_path=restore_path, batch_size=batch_size,
                         wait_seconds=settings.api_timeout_ms / 2000)


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
            code, error = p.error_code, execution.error_text(p.error_code, p.message)
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


# -- running a plan -----------------------------------------------------------------------------------

def run_moves(cluster: ClusterConnection, state: ClusterState, plan: MovePlan, *, restore_path: Path | None,
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
        note_for_a_hard_stop("restore", "Replica orders may have changed: kafka-leaders restore "
                                        f"{shown(str(restore_path))} puts back those this run changed.")
    sent: list[TopicPartition] = []  # reorders sent, answered or not
    answered: execution.Answers = {}  # the controller's answer to each reorder it answered
    with stop_on_signals() as stop:  # a signal lets the step in flight (a reorder, a poll, a batch) finish
        try:
            _reorder(cluster, {m.tp: m.new_replicas for m in reorders}, batch_size, stop, sent, answered)
            if stop.stopped:
                raise KeyboardInterrupt
            _refused(results, answered)
            accepted = [m.tp for m in reorders if answered[m.tp][0] == kafka_errors.NONE]
            cluster.restart_timeout()
            pending = wait_for_reassignments(cluster, accepted, wait_seconds, stop)
            if stop.stopped:
                raise KeyboardInterrupt
            for tp in pending:
                results[tp] = replace(results[tp], outcome=Outcome.FAILED,
                                      error_code=kafka_errors.REASSIGNMENT_IN_PROGRESS,
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
                report.interrupted, report.stop_signal = election.interrupted, election.stop_signal
                if election.aborted_exit is not None:
                    report.abort(election.aborted_exit, election.aborted_reason or "stopped")
                if election.aborted_exit is not None or election.interrupted:  # reordered, never elected: say so
                    _read_back(cluster, results, report.restore_file, answered, in_doubt=set())
        except KeyboardInterrupt:
            report.interrupted, report.stop_signal = True, stop.signum
            _read_back(cluster, results, report.restore_file, answered, in_doubt=set())
        except LeaderElectionError as exc:
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
                                  error=f"the reorder was refused: {execution.error_text(code, message)}",
                                  replicas_after=results[tp].replicas_before)


def _read_back(cluster: ClusterConnection, results: dict[TopicPartition, MoveResult], restore_file: str | None,
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
        now = _read_again_once(cluster).partitions
    except (LeaderElectionError, KeyboardInterrupt):
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


def _read_again_once(cluster: ClusterConnection) -> ClusterState:
    """The partitions as the cluster shows them: a read changes nothing, so one whose connection was lost
    (the one that lost a reorder's answer, say) is asked again once, after finding a broker again."""
    try:
        return cluster.describe()
    except UnreachableError:
        cluster.reconnect()
        return cluster.describe()


def _reorder(cluster: ClusterConnection, orders: dict[TopicPartition, tuple[int, ...]], batch_size: int,
             stop: StopFlag, sent: list[TopicPartition], answered: execution.Answers) -> None:
    """Send the new orders in batches until `stop`, noting each in `sent` first, and each answer, with
    the controller's (code, message), in `answered`."""
    for batch in batches(list(orders), request_size(batch_size)):
        if stop.stopped:
            break
        sent.extend(batch)
        cluster.restart_timeout()
        answers = cluster.alter_replica_order({tp: orders[tp] for tp in batch})
        for tp in batch:
            answered[tp] = answers.get(tp, (kafka_errors.UNKNOWN_SERVER_ERROR,
                                            execution.NOT_ANSWERED))


def wait_for_reassignments(cluster: ClusterConnection, partitions: Sequence[TopicPartition],
                           seconds: float, stop: StopFlag | None = None) -> set[TopicPartition]:
    """Poll ListPartitionReassignments until none of `partitions` is listed, or `seconds` pass
    (keep `seconds` under the cluster's API timeout: the polls share it).

    Returns the partitions still listed (empty when all are done). A reorder moves no data, so it
    normally completes at once; the poll interval doubles from 50 ms to 1 s. A lost answer (it only
    reads) is asked again once, after finding the controller again. A stop signal (`stop`) ends the
    wait after the poll in flight.
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
        if not pending or remaining <= 0 or (stop is not None and stop.stopped):
            return pending
        (stop or StopFlag()).sleep(min(delay, remaining))
        delay = min(delay * 2, _POLL_MAX_S)


def _verified(planned: MoveResult, elected: PartitionResult) -> MoveResult:
    """The election's answer, checked against the leader the move asked for (made directly, not by `replace`:
    it is per partition, 16,700 a broker in a roll at 100,000 partitions)."""
    leader, code, error, outcome = elected.leader_after, elected.error_code, elected.error, elected.outcome
    if outcome in (Outcome.ELECTED, Outcome.ALREADY_ELECTED) and leader != planned.expected_leader:
        error = (f"the leader of {planned.tp} could not be read after the election" if leader is None
                 else _not_led(planned.tp, leader, planned.expected_leader))
        outcome, code = Outcome.FAILED, 0
    elif outcome in (Outcome.ELECTED, Outcome.ALREADY_ELECTED):
        changed = planned.leader_before != planned.expected_leader
        outcome, code, error = Outcome.ELECTED if changed else Outcome.ALREADY_ELECTED, 0, None
    return MoveResult(planned.tp, outcome, planned.replicas_before, planned.replicas_after, planned.leader_before,
                      planned.expected_leader, leader, code, error)
