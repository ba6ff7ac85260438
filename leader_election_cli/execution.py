"""Execution: send an election in batches and record every partition's outcome.

Batches go one at a time. POLICY_VIOLATION (a KRaft controller refusing a request that would change
more than 10,000 partitions) splits the batch in halves and retries; NOT_CONTROLLER is retried by the
cluster layer; Ctrl-C stops after the batch in flight. Whatever happens, the report lists every
selected partition exactly once.
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager

from leader_election_cli import kafka_errors
from leader_election_cli.cluster import Cluster, ElectionResponse
from leader_election_cli.errors import NOT_AUTHORIZED_LINE, AuthError, CliError
from leader_election_cli.model import (
    ClusterState,
    ElectionReport,
    ElectionType,
    Outcome,
    PartitionResult,
    TopicPartition,
)

ProgressCallback = Callable[[int], None]  # called with the number of partitions just finished
_LEADER_SETTLE_READS = 5


class _StopFlag:
    """Set by Ctrl-C (SIGINT) or SIGTERM while batches are being sent."""

    def __init__(self) -> None:
        self.stopped = False


@contextmanager
def _stop_on_signals() -> Iterator[_StopFlag]:
    """Turn Ctrl-C into a flag checked between batches, so the batch in flight completes."""
    flag = _StopFlag()
    if threading.current_thread() is not threading.main_thread():
        yield flag
        return

    def handler(signum: int, frame: object) -> None:
        flag.stopped = True

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield flag
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _outcome(code: int) -> Outcome:
    if code == kafka_errors.NONE:
        return Outcome.ELECTED
    if code == kafka_errors.ELECTION_NOT_NEEDED:
        return Outcome.ALREADY_ELECTED
    return Outcome.FAILED


def _send_with_split(cluster: Cluster, election_type: ElectionType, batch: list[TopicPartition],
                     answers: dict[TopicPartition, tuple[int, str | None]]) -> None:
    """Send one batch; on POLICY_VIOLATION send its halves instead (bounded by the batch's size)."""
    response = cluster.elect(election_type, batch)
    if response.error_code == kafka_errors.POLICY_VIOLATION and len(batch) > 1:
        middle = len(batch) // 2
        _send_with_split(cluster, election_type, batch[:middle], answers)
        _send_with_split(cluster, election_type, batch[middle:], answers)
        return
    _check_top_level(response)
    for tp in batch:
        if tp in response.results:
            answers[tp] = response.results[tp]
        elif response.error_code:
            answers[tp] = (response.error_code, None)
        else:
            answers[tp] = (kafka_errors.UNKNOWN_SERVER_ERROR, "The controller did not answer for this partition.")


def _check_top_level(response: ElectionResponse) -> None:
    if response.error_code == kafka_errors.CLUSTER_AUTHORIZATION_FAILED:
        raise AuthError(NOT_AUTHORIZED_LINE,
                        hint="The principal needs ALTER on the CLUSTER resource.")


def elect(cluster: Cluster, election_type: ElectionType, selected: Sequence[TopicPartition] | None,
          before: ClusterState, *, batch_size: int | None = None, batch_interval: float = 0.0,
          progress: ProgressCallback | None = None) -> ElectionReport:
    """Run the election and return a report with one record per selected partition.

    `selected=None` means every partition, sent as Kafka's tool does (a null list) unless batching
    is asked for or the controller refuses the size, in which case the partitions are listed.
    """
    answers: dict[TopicPartition, tuple[int, str | None]] = {}
    aborted: CliError | None = None
    all_partitions = selected is None
    if all_partitions and batch_size is None:
        response = cluster.elect(election_type, None)
        if response.error_code == kafka_errors.POLICY_VIOLATION:
            selected = sorted(before.partitions)
        else:
            _check_top_level(response)
            answers = dict(response.results)
            selected = sorted(set(before.partitions) | set(answers))
            # The controller leaves partitions that need no election out of an all-partitions answer.
            for tp in selected:
                answers.setdefault(tp, (kafka_errors.ELECTION_NOT_NEEDED, None))
            if progress:
                progress(len(selected))
    if selected is None:
        selected = sorted(before.partitions)
    todo = [tp for tp in dict.fromkeys(selected) if tp not in answers]
    size = batch_size or max(1, len(todo))
    batches = [todo[i:i + size] for i in range(0, len(todo), size)]
    with _stop_on_signals() as stop:
        for number, batch in enumerate(batches):
            if number and batch_interval > 0:
                _sleep_unless_stopped(batch_interval, stop)
            if stop.stopped:
                break
            try:
                _send_with_split(cluster, election_type, batch, answers)
            except CliError as exc:
                if not answers:
                    raise
                aborted = exc  # earlier batches were applied: report them, the rest not attempted
                break
            if progress:
                progress(len(batch))
    after = _settled_state(cluster, before, answers)
    results = [_result(tp, answers.get(tp), before, after) for tp in dict.fromkeys(selected)]
    report = ElectionReport(election_type, results, interrupted=stop.stopped, all_partitions=all_partitions)
    if aborted is not None:
        report.abort(aborted.exit_code, aborted.message)
    return report


def _sleep_unless_stopped(seconds: float, stop: _StopFlag) -> None:
    deadline = time.monotonic() + seconds
    while not stop.stopped and time.monotonic() < deadline:
        time.sleep(min(0.1, max(0.0, deadline - time.monotonic())))


def _settled_state(cluster: Cluster, before: ClusterState,
                   answers: dict[TopicPartition, tuple[int, str | None]]) -> ClusterState | None:
    """Leaders after the election; metadata can lag an election briefly, so re-read a few times."""
    elected = [tp for tp, (code, _) in answers.items() if code == kafka_errors.NONE]
    after = None
    for attempt in range(_LEADER_SETTLE_READS):
        try:
            after = cluster.describe()
        except CliError:
            return after
        stale = [tp for tp in elected if tp in after.partitions and tp in before.partitions
                 and after.partitions[tp].leader == before.partitions[tp].leader]
        if not stale:
            break
        time.sleep(0.1 * (attempt + 1))
    return after


def _result(tp: TopicPartition, answer: tuple[int, str | None] | None, before: ClusterState,
            after: ClusterState | None) -> PartitionResult:
    leader_before = before.partitions[tp].leader if tp in before.partitions else None
    leader_after = after.partitions[tp].leader if after and tp in after.partitions else None
    if answer is None:
        return PartitionResult(tp, Outcome.NOT_ATTEMPTED, leader_before=leader_before, leader_after=leader_after)
    code, message = answer
    outcome = _outcome(code)
    error = None if outcome is Outcome.ELECTED else (message or kafka_errors.lookup(code).message)
    return PartitionResult(tp, outcome, error_code=code, error=error, leader_before=leader_before,
                           leader_after=leader_after)
