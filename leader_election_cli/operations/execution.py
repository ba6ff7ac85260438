"""Execution: send an election in batches and record every partition's outcome; or predict it.

Batches go one at a time, each with a whole API timeout. POLICY_VIOLATION (a KRaft controller refusing
a request that would change more than 10,000 partitions) splits the batch in halves and retries;
NOT_CONTROLLER is retried by the cluster layer; a lost connection reconnects once, and a second loss
stops the run; a stop signal (operations/signals.py) stops it after the batch in flight. Whatever happens,
the report lists every selected partition exactly once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Sequence

from leader_election_cli import kafka_errors
from leader_election_cli.cluster.admin import ClusterConnection, ElectionResponse
from leader_election_cli.errors import NOT_AUTHORIZED_LINE, AuthError, ExitCode, LeaderElectionError, UnreachableError
from leader_election_cli.model import (
    NO_LEADER,
    ClusterState,
    ControllerMode,
    ElectionType,
    Outcome,
    PartitionResult,
    TopicPartition,
)
from leader_election_cli.operations.signals import StopFlag, stop_on_signals
from leader_election_cli.planning import Prediction, batches, is_preferred_leader, outcome_of, split_in_halves
from leader_election_cli.reports.election import ElectionReport

ProgressCallback = Callable[[int], None]  # called with the number of partitions just finished
Answers = dict[TopicPartition, tuple[int, str | None]]  # partition -> (error code, broker's message)
LEFT_OUT = "Already led by its preferred replica: left out of the request."
_LEADER_SETTLE_READS = 5


# -- before an election ----------------------------------------------------------------------------

def led_by_preferred(state: ClusterState, partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    """The partitions already led by their preferred replica: a preferred election needs not send them."""
    known = state.partitions
    return [tp for tp in partitions if (p := known.get(tp)) is not None and is_preferred_leader(p.leader, p.replicas)]


def read_for_prediction(cluster: ClusterConnection, election_type: ElectionType, mode: ControllerMode) -> ClusterState:
    """One metadata read with what predicting needs besides.

    A KRaft controller counts eligible leader replicas only where the ISR is empty, so they are read
    only for topics with such a partition; unclean elections also read min.insync.replicas.
    """
    state = cluster.describe(with_configs=election_type is ElectionType.UNCLEAN)
    if mode is ControllerMode.KRAFT:
        state = cluster.add_elr(state, {tp.topic for tp, p in state.partitions.items() if not p.isr})
    return state


def dry_run_report(predictions: Sequence[Prediction], election_type: ElectionType, *,
                   all_partitions: bool = False) -> ElectionReport:
    """A plan as a report: every partition `predicted`, with the leader or the error it would get."""
    results = [PartitionResult(p.tp, Outcome.PREDICTED, p.error_code, _error(p.error_code, p.message),
                               p.leader_before, p.leader_after, p.unclean, p.below_min_isr)
               for p in predictions]
    return ElectionReport(election_type, results, dry_run=True, all_partitions=all_partitions)


# -- the election ----------------------------------------------------------------------------------

class _Sender:
    """Sends batches into one `answers` map: splits on POLICY_VIOLATION, reconnects once when cut off."""

    def __init__(self, cluster: ClusterConnection, election_type: ElectionType, answers: Answers):
        self.cluster = cluster
        self.election_type = election_type
        self.answers = answers
        self.reconnected = False
        self.lost: list[TopicPartition] = []  # sent, answer lost, sent again: the first request may have acted

    def send(self, batch: list[TopicPartition]) -> None:
        self.cluster.restart_timeout()
        try:
            self._send_with_split(batch)
        except UnreachableError as exc:
            if self.reconnected or isinstance(exc, _RequestFailed):  # the controller answered: no resend
                raise
            self.reconnected = True
            self.lost = [tp for tp in batch if tp not in self.answers]
            self.cluster.restart_timeout()
            self.cluster.reconnect()
            self._send_with_split(self.lost)

    def _send_with_split(self, batch: list[TopicPartition]) -> None:
        response = self.cluster.elect(self.election_type, batch)
        if response.error_code == kafka_errors.POLICY_VIOLATION and len(batch) > 1:
            for half in split_in_halves(batch):
                self._send_with_split(half)
            return
        _check_top_level(response)
        for tp in batch:
            self.answers[tp] = response.results.get(tp) or (
                kafka_errors.UNKNOWN_SERVER_ERROR, "The controller did not answer for this partition.")


class _Refused(AuthError):
    """The controller refused a whole request: not authorized (ALTER on CLUSTER)."""


class _RequestFailed(LeaderElectionError):
    """The controller answered a whole request with an error (the top-level ErrorCode): as Kafka's
    AdminClient does, no partition's own answer counts; what happened is read back from the leaders."""

    def __init__(self, code: int):
        self.code = code
        timed_out = code == kafka_errors.REQUEST_TIMED_OUT  # Kafka's tool: "Timeout waiting for election results"
        error = kafka_errors.lookup(code)
        super().__init__(f"The controller failed the whole election request with {error.name}: {error.message}",
                         exit_code=UnreachableError.exit_code if timed_out else ExitCode.PARTITION_FAILED)


class _TimedOut(_RequestFailed, UnreachableError):
    """A top-level REQUEST_TIMED_OUT: the elections may still complete, the leaders tell."""


def _check_top_level(response: ElectionResponse) -> None:
    """Raise for a request answered as a whole with an error (POLICY_VIOLATION is split before this)."""
    code = response.error_code
    if code == kafka_errors.CLUSTER_AUTHORIZATION_FAILED:
        raise _Refused(NOT_AUTHORIZED_LINE, hint="The principal needs ALTER on the CLUSTER resource.")
    if code == kafka_errors.REQUEST_TIMED_OUT:
        raise _TimedOut(code)
    if code != kafka_errors.NONE:
        raise _RequestFailed(code)


def elect(cluster: ClusterConnection, election_type: ElectionType, selected: Sequence[TopicPartition] | None,
          before: ClusterState, *, batch_size: int | None = None, batch_interval: float = 0.0,
          progress: ProgressCallback | None = None,
          already_elected: Collection[TopicPartition] = ()) -> ElectionReport:
    """Run the election and return a report with one record per selected partition.

    `selected=None` means every partition, sent as Kafka's tool does (a null list) unless batching
    is asked for or the controller refuses the size, in which case the partitions are listed.
    `already_elected` partitions are reported as already elected without being sent.
    """
    cluster.check_can_elect(election_type)
    cluster.restart_timeout()  # a whole API timeout from here, however long the reads or a question took
    answers: Answers = {tp: (kafka_errors.ELECTION_NOT_NEEDED, LEFT_OUT) for tp in already_elected}
    known = len(answers)
    aborted: LeaderElectionError | None = None
    in_doubt: list[TopicPartition] = []  # sent, but the answer never came
    all_partitions = selected is None
    interrupted = False
    with stop_on_signals() as stop:  # from the first request on: a signal lets the request in flight finish
        if all_partitions and batch_size is None:
            try:
                response = cluster.elect(election_type, None)
                if response.error_code != kafka_errors.POLICY_VIOLATION:
                    _check_top_level(response)
            except (UnreachableError, _RequestFailed) as exc:
                aborted, in_doubt = exc, sorted(before.partitions)  # what the cluster did is read back below
            else:
                if response.error_code == kafka_errors.POLICY_VIOLATION:
                    selected = sorted(before.partitions)
                else:
                    answers.update(response.results)
                    selected = sorted(set(before.partitions) | set(answers))
                    # The controller leaves partitions that need no election out of an all-partitions answer.
                    for tp in selected:
                        answers.setdefault(tp, (kafka_errors.ELECTION_NOT_NEEDED, None))
                    if progress:
                        progress(len(selected))
        if selected is None:
            selected = sorted(before.partitions)
        todo = [tp for tp in dict.fromkeys(selected) if tp not in answers] if aborted is None else []
        sender = _Sender(cluster, election_type, answers)
        for number, batch in enumerate(batches(todo, batch_size or max(1, len(todo)))):
            if number and batch_interval > 0:
                _sleep_unless_stopped(batch_interval, stop)
            if stop.stopped:
                interrupted = True
                break
            try:
                sender.send(batch)
            except (UnreachableError, _RequestFailed) as exc:
                in_doubt = [tp for tp in batch if tp not in answers]
                aborted = exc  # what the cluster did is read back below; later batches not attempted
                break
            except LeaderElectionError as exc:
                if len(answers) == known and not sender.lost:
                    raise  # refused before anything changed (e.g. not authorized): a plain failure
                in_doubt = [tp for tp in sender.lost if tp not in answers]  # e.g. the login failed on reconnecting
                if isinstance(exc, _Refused):  # this batch was answered: refused as a whole
                    answers.update({tp: (kafka_errors.CLUSTER_AUTHORIZATION_FAILED, None)
                                    for tp in batch if tp not in answers and tp not in in_doubt})
                aborted = exc  # earlier batches were applied: report them, the rest not attempted
                break
            if progress:
                progress(len(batch))
        after = _settled_leaders(cluster, before, {tp.topic for tp in [*answers, *in_doubt]}, answers, stop,
                                 force=bool(in_doubt or sender.lost))
    for tp in sender.lost:  # "not needed" the second time may be this run's own first request at work
        if answers.get(tp, (None,))[0] == kafka_errors.ELECTION_NOT_NEEDED and \
                _elected_meanwhile(tp, election_type, before, after):
            answers[tp] = (kafka_errors.NONE, None)
    if aborted is not None:
        answers.update(_judged_from_leaders(in_doubt, election_type, before, after, aborted))
    results = [_result(tp, answers.get(tp), before, after) for tp in dict.fromkeys(selected)]
    report = ElectionReport(election_type, results, interrupted=interrupted, all_partitions=all_partitions)
    report.stop_signal = stop.signum
    if aborted is not None:
        report.abort(aborted.exit_code, aborted.message)
    return report


def _sleep_unless_stopped(seconds: float, stop: StopFlag) -> None:
    deadline = time.monotonic() + seconds
    while not stop.stopped and time.monotonic() < deadline:
        time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))


def _settled_leaders(cluster: ClusterConnection, before: ClusterState, topics: set[str], answers: Answers,
                     stop: StopFlag, force: bool = False) -> dict[TopicPartition, int] | None:
    """Leaders after the election (None if they could not be read); metadata can lag an election
    briefly, so re-read a few times. When nothing was elected nothing changed: the leaders before,
    unless `force` (an answer was lost: only the cluster can say what happened).
    """
    elected = [tp for tp, (code, _) in answers.items() if code == kafka_errors.NONE]
    if not elected and not force:
        return {tp: p.leader for tp, p in before.partitions.items()}
    after = None
    for attempt in range(_LEADER_SETTLE_READS):
        cluster.restart_timeout()
        try:
            after = cluster.leaders(topics)
        except LeaderElectionError:
            return after
        stale = [tp for tp in elected if tp in before.partitions and after.get(tp) == before.partitions[tp].leader]
        if not stale or stop.stopped:
            break
        time.sleep(0.1 * (attempt + 1))
    return after


def _judged_from_leaders(in_doubt: list[TopicPartition], election_type: ElectionType, before: ClusterState,
                         after: dict[TopicPartition, int] | None, lost: LeaderElectionError) -> Answers:
    """Outcomes of partitions whose answer was lost, as the leaders read afterwards show them.

    Never claims an election that the cluster does not show: elected only when the leader is now the
    one the election would pick (the preferred replica; any leader for a leaderless partition).
    """
    judged: Answers = {}
    refused = lost.code if isinstance(lost, _RequestFailed) and not isinstance(lost, _TimedOut) else None
    for tp in in_doubt:
        p = before.partitions.get(tp)
        preferred = election_type is ElectionType.PREFERRED
        if p is not None and (p.leader == p.preferred if preferred else p.leader != NO_LEADER):
            judged[tp] = (kafka_errors.ELECTION_NOT_NEEDED, None)  # it had the leader asked for already
        elif _elected_meanwhile(tp, election_type, before, after):
            judged[tp] = (kafka_errors.NONE, None)
        elif refused is not None:
            judged[tp] = (refused, None)  # the whole request failed: the error is every partition's answer
        elif after is None:
            judged[tp] = (kafka_errors.REQUEST_TIMED_OUT, f"No result for this partition ({lost.message}), "
                                                          "and the leaders could not be read: check this partition")
        else:
            judged[tp] = (kafka_errors.REQUEST_TIMED_OUT, f"No result for this partition ({lost.message}); "
                                                          "its leader did not change")
    return judged


def _elected_meanwhile(tp: TopicPartition, election_type: ElectionType, before: ClusterState,
                       after: dict[TopicPartition, int] | None) -> bool:
    """The leader read afterwards is a new one, the one the election would pick (the preferred replica;
    any leader for an unclean election)."""
    p = before.partitions.get(tp)
    now = None if after is None else after.get(tp)
    return (p is not None and now is not None and now != p.leader
            and (now == p.preferred or election_type is ElectionType.UNCLEAN))


def _error(code: int, message: str | None) -> str | None:
    """The broker's message, or the error's default text; None for a success."""
    return None if code == kafka_errors.NONE else (message or kafka_errors.lookup(code).message)


def _result(tp: TopicPartition, answer: tuple[int, str | None] | None, before: ClusterState,
            after: dict[TopicPartition, int] | None) -> PartitionResult:
    p = before.partitions.get(tp)
    leader_before = None if p is None else p.leader
    leader_after = after.get(tp) if after is not None else None
    if answer is None:
        return PartitionResult(tp, Outcome.NOT_ATTEMPTED, leader_before=leader_before, leader_after=leader_after)
    code, message = answer
    return PartitionResult(tp, outcome_of(code), code, _error(code, message), leader_before, leader_after)
