"""Execution: send an election in batches and record every partition's outcome; or predict it.

Batches go one at a time, each with a whole API timeout, none larger than planning/batches.py's
`SAFE_CHANGES_PER_REQUEST`. POLICY_VIOLATION (a KRaft controller refusing a request that would change
more than 10,000 partitions) splits the batch in halves and retries; UNKNOWN_SERVER_ERROR on a whole
request is the controller failing (4.1 at exactly 10,000 changes, then a failover), not the partitions'
verdict: their leaders are read again (the batch may have been applied or reverted), and what still
needs electing is sent again in halves, a bounded number of times; NOT_CONTROLLER is retried by the
cluster layer; a lost connection reconnects once, and a second loss stops the run; a stop signal
(operations/signals.py) stops it after the batch in flight. Whatever happens, the report lists every
selected partition exactly once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import replace

from leader_election_cli import kafka_errors
from leader_election_cli.cluster.admin import ClusterConnection, ElectionAnswer
from leader_election_cli.errors import (
    NO_CONTROLLER_IN_TIME,
    NOT_AUTHORIZED_LINE,
    AuthError,
    ExitCode,
    LeaderElectionError,
    UnreachableError,
)
from leader_election_cli.log import Logger
from leader_election_cli.model import (
    NO_LEADER,
    ClusterState,
    ControllerMode,
    ElectionType,
    Outcome,
    PartitionResult,
    TopicPartition,
)
from leader_election_cli.operations.signals import StopFlag, note_for_a_hard_stop, stop_on_signals
from leader_election_cli.planning.batches import SAFE_CHANGES_PER_REQUEST, batches, request_size, split_in_halves
from leader_election_cli.planning.predicates import is_preferred_leader
from leader_election_cli.planning.prediction import Prediction, outcome_of
from leader_election_cli.reports.election import ElectionReport

log = Logger(__name__)
ProgressCallback = Callable[[int], None]  # called with the number of partitions just finished
Answers = dict[TopicPartition, tuple[int, str | None]]  # partition -> (error code, broker's message)
LEFT_OUT = "Already led by its preferred replica: left out of the request."
NOT_ANSWERED = "The controller did not answer for this partition."
GONE = "The partition no longer exists: its topic was deleted during the election."
# How long the read-back waits for the metadata to show what the controller answered: 10 s and 2 ms more
# per partition answered elected (a broker publishes a large metadata delta in proportion to its records:
# 8,002 changes were not shown after 10 s on a real 4.1.0 cluster), at most the API timeout (--timeout).
# It re-reads after 0.5 ms per partition still waiting (5 to 50 ms), then twice as long each time up to a
# second: no fixed sleep.
READ_BACK_WAIT_S = 10.0
READ_BACK_WAIT_PER_PARTITION_S = 0.002
_READ_BACK_MAX_PAUSE_S = 1.0
# A controller failure (UNKNOWN_SERVER_ERROR on a whole request): read the leaders and send what is left again,
# in halves, at most this many times in a row, after a pause that doubles from this (a failover takes a moment).
_CONTROLLER_FAILURE_RETRIES = 3
_CONTROLLER_FAILURE_PAUSE_S = 0.2


# -- before an election ----------------------------------------------------------------------------

def led_by_preferred(state: ClusterState, partitions: Iterable[TopicPartition]) -> list[TopicPartition]:
    """The partitions already led by their preferred replica: a preferred election needs not send them."""
    known = state.partitions
    return [tp for tp in partitions if (p := known.get(tp)) is not None and is_preferred_leader(p.leader, p.replicas)]


def read_for_prediction(cluster: ClusterConnection, election_type: ElectionType, mode: ControllerMode,
                        state: ClusterState | None = None) -> ClusterState:
    """One metadata read (or `state`, a read already made) with what predicting needs besides.

    A KRaft controller counts eligible leader replicas only where the ISR is empty, so they, and whether
    the cluster's features enable ELR, are read only for topics with such a partition; unclean elections
    also read min.insync.replicas.
    """
    if state is None:
        state = cluster.describe(with_configs=election_type is ElectionType.UNCLEAN)
    elif election_type is ElectionType.UNCLEAN:
        state = cluster.add_min_isr(state)
    if mode is ControllerMode.KRAFT:
        topics = {tp.topic for tp, p in state.partitions.items() if not p.isr}
        state = cluster.add_elr(state, topics)
        if topics:
            state = replace(state, features=cluster.finalized_features())
    return state


def dry_run_report(predictions: Sequence[Prediction], election_type: ElectionType, *,
                   all_partitions: bool = False) -> ElectionReport:
    """A plan as a report: every partition `predicted`, with the leader or the error it would get."""
    results = [PartitionResult(p.tp, Outcome.PREDICTED, p.error_code, error_text(p.error_code, p.message),
                               p.leader_before, p.leader_after, p.unclean, p.below_min_isr)
               for p in predictions]
    return ElectionReport(election_type, results, dry_run=True, all_partitions=all_partitions)


# -- the election ----------------------------------------------------------------------------------

class _Sender:
    """Sends batches into one `answers` map: splits on POLICY_VIOLATION, reads back and resends what is left
    after a controller failure, reconnects once when cut off."""

    def __init__(self, cluster: ClusterConnection, election_type: ElectionType, answers: Answers,
                 before: ClusterState):
        self.cluster = cluster
        self.election_type = election_type
        self.answers = answers
        self.before = before
        self.reconnected = False
        # sent, then sent again or judged from the leaders (answer lost, or the controller failed): the first
        # request may have acted, so "not needed" afterwards may be this run's own election
        self.lost: list[TopicPartition] = []
        self.unanswered: list[TopicPartition] = []  # sent, left out of the answer: the read-back tells

    def send(self, batch: list[TopicPartition], *, failed: bool = False) -> None:
        """Send `batch` (`failed`: it was sent in a request the controller failed as a whole: read it back first)."""
        self.cluster.restart_timeout()
        try:
            if failed:
                self._after_controller_failure(batch, 1)
            else:
                self._send_with_split(batch)
        except UnreachableError as exc:
            if self.reconnected or isinstance(exc, _RequestFailed):  # the controller answered: no resend
                raise
            self.reconnected = True
            lost = [tp for tp in batch if tp not in self.answers]
            self.lost.extend(lost)
            self.cluster.restart_timeout()
            self.cluster.reconnect()
            self._send_with_split(lost)

    def _send_with_split(self, batch: list[TopicPartition], failures: int = 0) -> None:
        response = self.cluster.elect(self.election_type, batch)
        if response.error_code == kafka_errors.POLICY_VIOLATION and len(batch) > 1:
            for half in split_in_halves(batch):
                self._send_with_split(half, failures)
            return
        if response.error_code == kafka_errors.UNKNOWN_SERVER_ERROR and failures < _CONTROLLER_FAILURE_RETRIES:
            self._after_controller_failure(batch, failures + 1)
            return
        _check_top_level(response)
        for tp in batch:
            answer = response.results.get(tp)
            if answer is None:
                self.unanswered.append(tp)
                answer = (kafka_errors.UNKNOWN_SERVER_ERROR, NOT_ANSWERED)
            self.answers[tp] = answer

    def _after_controller_failure(self, batch: list[TopicPartition], failures: int) -> None:
        """The controller failed the whole request: its changes may stand or be lost. After a pause, read
        the batch's leaders; those that show the election are judged from them, the rest sent again in halves."""
        log.info("The controller failed an election request of %d partition(s); reading their leaders and "
                 "sending what is left again", len(batch))
        self.lost.extend(batch)
        time.sleep(_CONTROLLER_FAILURE_PAUSE_S * 2 ** (failures - 1))
        self.cluster.restart_timeout()
        try:
            after: dict[TopicPartition, int] | None = self.cluster.leaders({tp.topic for tp in batch}).leaders
        except LeaderElectionError:
            after = None
        rest = []
        for tp in batch:
            if _elected_meanwhile(tp, self.election_type, self.before, after):
                self.answers[tp] = (kafka_errors.NONE, None)
            else:
                rest.append(tp)
        for part in split_in_halves(rest) if len(rest) > 1 else [rest] if rest else []:
            self.cluster.restart_timeout()
            self._send_with_split(part, failures)


class _Refused(AuthError):
    """The controller refused a whole request: not authorized (ALTER on CLUSTER)."""


class _RequestFailed(LeaderElectionError):
    """The controller answered a whole request with an error (the top-level ErrorCode): as Kafka's
    AdminClient does, no partition's own answer counts; what happened is read back from the leaders."""

    def __init__(self, code: int):
        self.code = code
        timed_out = code == kafka_errors.REQUEST_TIMED_OUT  # Kafka's tool: "Timeout waiting for election results"
        error = kafka_errors.lookup(code)
        super().__init__(f"Timed out while waiting for election results: {NO_CONTROLLER_IN_TIME}" if timed_out else
                         f"The controller failed the whole election request with {error.name}: {error.message}",
                         exit_code=UnreachableError.exit_code if timed_out else ExitCode.PARTITION_FAILED)


class _TimedOut(_RequestFailed, UnreachableError):
    """A top-level REQUEST_TIMED_OUT: the elections may still complete, the leaders tell."""


# Whole-request answers to an all-partitions request after which the partitions are listed and sent again.
_NOT_A_VERDICT = (kafka_errors.POLICY_VIOLATION, kafka_errors.UNKNOWN_SERVER_ERROR)


def _check_top_level(response: ElectionAnswer) -> None:
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
    presumed: list[TopicPartition] = []  # left out of an all-partitions answer: no election needed, or gone
    failed = False  # the all-partitions request failed as a whole: what it did is read back first
    with stop_on_signals() as stop:  # from the first request on: a signal lets the request in flight finish
        if all_partitions and batch_size is None and len(before.partitions) <= SAFE_CHANGES_PER_REQUEST:
            try:
                response = cluster.elect(election_type, None)
                if response.error_code not in _NOT_A_VERDICT:
                    _check_top_level(response)
            except (UnreachableError, _RequestFailed) as exc:
                aborted, in_doubt = exc, sorted(before.partitions)  # what the cluster did is read back below
            else:
                if response.error_code in _NOT_A_VERDICT:  # too many changes, or the controller failed
                    selected = sorted(before.partitions)
                    failed = response.error_code == kafka_errors.UNKNOWN_SERVER_ERROR
                else:
                    answers.update(response.results)
                    selected = sorted(set(before.partitions) | set(answers))
                    # The controller leaves partitions that need no election out of an all-partitions answer.
                    presumed = [tp for tp in selected if tp not in answers]
                    for tp in presumed:
                        answers[tp] = (kafka_errors.ELECTION_NOT_NEEDED, None)
                    if progress:
                        progress(len(selected))
        if selected is None:
            selected = sorted(before.partitions)
        todo = [tp for tp in dict.fromkeys(selected) if tp not in answers] if aborted is None else []
        sender = _Sender(cluster, election_type, answers, before)
        sent = 0
        for number, batch in enumerate(batches(todo, request_size(batch_size))):
            if number and batch_interval > 0:
                stop.sleep(batch_interval)
            if stop.stopped:
                interrupted = True
                break
            sent += len(batch)
            note_for_a_hard_stop("election", f"{sent} of {len(todo)} partitions were sent for election before the "
                                             "stop: kafka-leaders status shows their leaders now.")
            try:
                sender.send(batch, failed=failed)
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
        claimed = [tp for tp, (code, _) in answers.items() if code == kafka_errors.NONE]
        watched = claimed + sender.unanswered  # read back until they show the election, or the wait ends
        checked = [*watched, *in_doubt, *sender.lost, *presumed]
        after, lagging = _read_back(cluster, election_type, before, watched, checked, stop)
        interrupted = interrupted or bool(lagging and stop.stopped)  # the read-back was cut short
    for tp in sender.lost:  # "not needed" the second time may be this run's own first request at work
        if answers.get(tp, (None,))[0] == kafka_errors.ELECTION_NOT_NEEDED and \
                _elected_meanwhile(tp, election_type, before, after):
            answers[tp] = (kafka_errors.NONE, None)
    if aborted is not None:
        answers.update(_judged_from_leaders(in_doubt, election_type, before, after, aborted))
    answers.update(_judged_unanswered(sender.unanswered, election_type, before, after))
    answers.update(_judged_presumed(presumed, election_type, before, after))
    unconfirmed = _disagreements(claimed, presumed, election_type, before, after, lagging)
    results = [_result(tp, answers.get(tp), before, after, unconfirmed.get(tp)) for tp in dict.fromkeys(selected)]
    report = ElectionReport(election_type, results, interrupted=interrupted, all_partitions=all_partitions)
    report.stop_signal = stop.signum
    if aborted is not None:
        report.abort(aborted.exit_code, aborted.message)
    return report


def _read_back(cluster: ClusterConnection, election_type: ElectionType, before: ClusterState,
               watched: list[TopicPartition], checked: list[TopicPartition], stop: StopFlag
               ) -> tuple[dict[TopicPartition, int] | None, set[TopicPartition]]:
    """The leaders after the election, read for the topics of the `checked` partitions only (None if they
    could not be read), and the `watched` partitions whose read still shows the leader before the election.

    A broker's metadata can lag the controller's answer, the more so the more it has to publish: the topics
    of `watched` partitions still showing the old leader are read again, after 0.5 ms per partition still
    waiting (5 to 50 ms), then twice as long each time (at most a second), until they all show it or the
    wait (`read_back_wait`: in proportion to the partitions watched, at most the API timeout) has passed,
    the last read at its end. Nothing to check: nothing changed, so the leaders are those before, and
    nothing is read; the same for the partitions of the topics not read (answered "failed" or "not needed").
    """
    if not checked:
        return {tp: p.leader for tp, p in before.partitions.items()}, set()
    deadline = time.monotonic() + read_back_wait(len(watched), cluster.api_timeout_s)
    cluster.restart_timeout()
    try:
        after, live = cluster.leaders({tp.topic for tp in checked})
    except LeaderElectionError:
        return None, set()
    pending = [tp for tp in watched if _unchanged(tp, election_type, before, after, live)]
    pause = min(0.05, max(0.005, 0.0005 * len(pending)))
    while pending and not stop.stopped and (remaining := deadline - time.monotonic()) > 0:
        time.sleep(min(pause, remaining))
        pause = min(_READ_BACK_MAX_PAUSE_S, pause * 2)
        topics = {tp.topic for tp in pending}
        cluster.restart_timeout()
        try:
            fresh, live = cluster.leaders(topics)
        except LeaderElectionError:
            break
        for tp in [tp for tp in after if tp.topic in topics and tp not in fresh]:  # a topic deleted meanwhile
            del after[tp]
        after.update(fresh)
        pending = [tp for tp in pending if _unchanged(tp, election_type, before, after, live)]
    read = {tp.topic for tp in checked}
    unread = {tp: p.leader for tp, p in before.partitions.items() if tp.topic not in read}
    return unread | after, set(pending)


def read_back_wait(watched: int, api_timeout_s: float) -> float:
    """How long a read-back waits for `watched` partitions answered elected to show it, in seconds."""
    return min(api_timeout_s, READ_BACK_WAIT_S + READ_BACK_WAIT_PER_PARTITION_S * watched)


def _unchanged(tp: TopicPartition, election_type: ElectionType, before: ClusterState,
               after: dict[TopicPartition, int], live: frozenset[int]) -> bool:
    """The read shows the leader before the election (or no partition): the election is not seen yet.

    Not so when the preferred replica's broker is no longer alive (the leader went back when it died), or
    when the leader is neither the old one nor the elected one: the cluster moved on after the election;
    nor when there was no leader and still is none: a KRaft controller answers an election that only
    changed the ISR or ELR (no replica could lead) with success, and the read shows exactly that."""
    p = before.partitions.get(tp)
    now = after.get(tp)
    if now is None:
        return True
    if p is None or now != p.leader or now == NO_LEADER:
        return False
    return election_type is ElectionType.UNCLEAN or p.preferred in live


def _shows_election(tp: TopicPartition, election_type: ElectionType, before: ClusterState, leader: int | None) -> bool:
    """The leader read is the one the election picks: the preferred replica; any leader for an unclean one."""
    p = before.partitions.get(tp)
    if leader is None or leader == NO_LEADER:
        return False
    return election_type is ElectionType.UNCLEAN or (p is not None and leader == p.preferred)


def _judged_unanswered(unanswered: list[TopicPartition], election_type: ElectionType, before: ClusterState,
                       after: dict[TopicPartition, int] | None) -> Answers:
    """Partitions sent but left out of the controller's answer, as the leaders read afterwards show them:
    elected when the read shows the leader the election picks and a change, not needed when it was there
    already, else failed."""
    judged: Answers = {}
    for tp in unanswered:
        p = before.partitions.get(tp)
        now = None if after is None else after.get(tp)
        if after is None:
            judged[tp] = (kafka_errors.UNKNOWN_SERVER_ERROR, f"{NOT_ANSWERED} Its leader could not be read: "
                                                             "check this partition")
        elif _shows_election(tp, election_type, before, now):
            judged[tp] = (kafka_errors.ELECTION_NOT_NEEDED if p is not None and now == p.leader
                          else kafka_errors.NONE, None)
        elif now is None:
            judged[tp] = (kafka_errors.UNKNOWN_TOPIC_OR_PARTITION, f"{NOT_ANSWERED} The partition no longer exists.")
        else:
            judged[tp] = (kafka_errors.UNKNOWN_SERVER_ERROR, f"{NOT_ANSWERED} Its leader did not change.")
    return judged


def _judged_presumed(presumed: list[TopicPartition], election_type: ElectionType, before: ClusterState,
                     after: dict[TopicPartition, int] | None) -> Answers:
    """Partitions left out of an all-partitions answer ("no election needed"), as the read-back shows them:
    gone (the topic was deleted meanwhile), or elected after all (a broker that left out what it did)."""
    if after is None:
        return {}
    judged: Answers = {}
    for tp in presumed:
        if tp not in after:
            judged[tp] = (kafka_errors.UNKNOWN_TOPIC_OR_PARTITION, GONE)
        elif _elected_meanwhile(tp, election_type, before, after):
            judged[tp] = (kafka_errors.NONE, None)
    return judged


def _disagreements(claimed: list[TopicPartition], presumed: list[TopicPartition], election_type: ElectionType,
                   before: ClusterState, after: dict[TopicPartition, int] | None,
                   lagging: set[TopicPartition]) -> dict[TopicPartition, str]:
    """Partitions whose answer the leaders read back do not show, with both facts in words.

    `claimed`: answered "elected" but, after the wait, still led by the leader before (or gone);
    `presumed`: left out of an all-partitions answer ("no election needed") but not led by it either.
    A partition gone from the read-back (its topic deleted) is unconfirmed when it was claimed elected.
    """
    if after is None:
        return {}
    expected = "a leader" if election_type is ElectionType.UNCLEAN else "the preferred replica"
    found: dict[TopicPartition, str] = {}
    for tp in claimed:
        if tp in lagging:
            wanted = f"{expected}{_preferred_words(tp, election_type, before)}"
            found[tp] = (f"The controller answered that the election succeeded, but the leader read back "
                         f"{_leader_words(after.get(tp))}, not {wanted}")
    for tp in presumed:
        now = after.get(tp)
        if now is not None and not _shows_election(tp, election_type, before, now):
            wanted = f"{expected}{_preferred_words(tp, election_type, before)}"
            found[tp] = (f"The controller's answer for every partition left it out (no election needed), but the "
                         f"leader read back is broker {now}, not {wanted}"
                         if now != NO_LEADER else
                         "The controller's answer for every partition left it out (no election needed), but the "
                         "partition read back has no leader")
    return found


def _leader_words(leader: int | None) -> str:
    return ("is missing (the partition was not found)" if leader is None else
            "is none" if leader == NO_LEADER else f"is broker {leader}")


def _preferred_words(tp: TopicPartition, election_type: ElectionType, before: ClusterState) -> str:
    p = before.partitions.get(tp)
    return "" if election_type is ElectionType.UNCLEAN or p is None else f" (broker {p.preferred})"


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


def error_text(code: int, message: str | None) -> str | None:
    """The broker's message, or the error's default text; None for a success."""
    return None if code == kafka_errors.NONE else (message or kafka_errors.lookup(code).message)


def _result(tp: TopicPartition, answer: tuple[int, str | None] | None, before: ClusterState,
            after: dict[TopicPartition, int] | None, disagreement: str | None = None) -> PartitionResult:
    p = before.partitions.get(tp)
    leader_before = None if p is None else p.leader
    leader_after = after.get(tp) if after is not None else None
    if answer is None:
        return PartitionResult(tp, Outcome.NOT_ATTEMPTED, leader_before=leader_before, leader_after=leader_after)
    code, message = answer
    if disagreement is not None:
        return PartitionResult(tp, Outcome.UNCONFIRMED, code, disagreement, leader_before, leader_after)
    return PartitionResult(tp, outcome_of(code), code, error_text(code, message), leader_before, leader_after)
