"""The deprecated `--zookeeper` election (KIP-183): write the election znode, wait for the controller,
and report every partition, as the broker path does (`cluster.zookeeper` does the ZooKeeper calls)."""

from __future__ import annotations

from collections.abc import Sequence

from leader_election_cli import kafka_errors
from leader_election_cli.cluster.zookeeper import (
    DEFAULT_TIMEOUT,
    HINT_READ_TIMEOUT,
    OUTCOME_READ_TIMEOUT,
    ZK_STRATEGY,
    Deadline,
    ZooKeeper,
    live_brokers,
    read_states,
    select,
    start_election,
    topics_being_deleted,
    wait_for_controller,
)
from leader_election_cli.errors import InputError, LeaderElectionError
from leader_election_cli.model import ElectionType, Outcome, PartitionResult, PartitionState, TopicPartition
from leader_election_cli.operations.signals import stop_on_signals
from leader_election_cli.reports.election import ElectionReport
from leader_election_cli.znodes import ELECTION_PATH, parse_connect_string, state_path


def check_options(*, dry_run: bool, batch_size: int | None, batch_interval: float, wait: bool, json: bool) -> None:
    """What the ZooKeeper path cannot do, refused before anything is sent."""
    if dry_run:
        raise InputError("Option --dry-run can't be used with --zookeeper",
                         hint="Use --bootstrap-server to plan an election.")
    if batch_size is not None or batch_interval:
        option = "--batch-size" if batch_size is not None else "--batch-interval"
        raise InputError(f"Option {option} can't be used with --zookeeper: ZooKeeper takes one election at a time",
                         hint=f"Drop {option}, or use --bootstrap-server.")
    if not wait and json:
        raise InputError("Option --no-wait has no per-partition results to print as JSON",
                         hint="Drop --no-wait to wait for the controller and get every partition's outcome.")


def no_wait_lines(partitions: Sequence[TopicPartition]) -> list[str]:
    """What the old tool printed after writing the znode (its partition set in Scala's `Set(...)` form)."""
    return [f"Created preferred replica election path with {','.join(map(str, partitions))}",
            f"Successfully started preferred replica election for partitions Set({', '.join(map(str, partitions))})"]


def left_out(assignments: dict[TopicPartition, tuple[int, ...]], states: dict[TopicPartition, PartitionState],
             deleting: frozenset[str]) -> dict[TopicPartition, PartitionResult]:
    """Partitions the election znode must not name, each with why: Kafka's controller skips a topic queued
    for deletion, and fails its whole election event (and never deletes the znode) on a partition that
    has no state znode yet."""
    results = {}
    for tp in assignments:
        if tp.topic in deleting:
            results[tp] = PartitionResult(tp, Outcome.FAILED, kafka_errors.INVALID_TOPIC_EXCEPTION,
                                          "The topic is being deleted")
        elif tp not in states:
            results[tp] = PartitionResult(tp, Outcome.FAILED, kafka_errors.LEADER_NOT_AVAILABLE,
                                          f"{state_path(tp)} does not exist yet (the partition is being created, "
                                          "or its replicas never came up): left out of the election")
    return results


def outcome(before: PartitionState, after: PartitionState, live: frozenset[int]) -> PartitionResult:
    """What the controller did with one partition, judged from its state before and after."""
    preferred = after.preferred
    common = {"leader_before": before.leader, "leader_after": after.leader}
    if preferred is not None and after.leader == preferred:
        if before.leader == preferred:
            return PartitionResult(after.tp, Outcome.ALREADY_ELECTED, kafka_errors.ELECTION_NOT_NEEDED,
                                   kafka_errors.lookup(kafka_errors.ELECTION_NOT_NEEDED).message, **common)
        return PartitionResult(after.tp, Outcome.ELECTED, **common)
    if preferred not in live:
        why = f"preferred replica {preferred} is not live"
    elif preferred not in after.isr:
        why = f"preferred replica {preferred} is not in the ISR {list(after.isr)}"
    else:
        why = f"the controller did not move leadership to preferred replica {preferred}"
    return PartitionResult(after.tp, Outcome.FAILED, kafka_errors.PREFERRED_LEADER_NOT_AVAILABLE,
                           f"Failed to elect leader for partition {after.tp} under strategy {ZK_STRATEGY}: {why}",
                           **common)


def elect_preferred(connect: str, requested: Sequence[TopicPartition] | None, timeout: float = DEFAULT_TIMEOUT,
                    ) -> ElectionReport:
    """Start a preferred election through ZooKeeper, wait for the controller, report every partition.

    `requested=None` elects every partition (Kafka's --all-topic-partitions). Once the election znode may
    have been written, every stop (a signal, a timeout, a lost or frozen ZooKeeper) still reports every
    partition: what the states read back show, else in doubt.
    """
    with ZooKeeper.session(parse_connect_string(connect), Deadline(timeout)) as zk:
        assignments = select(zk, requested)
        report = ElectionReport(ElectionType.PREFERRED, [], all_partitions=requested is None)
        if not assignments:
            return report
        before = read_states(zk, assignments)
        skipped = left_out(assignments, before, topics_being_deleted(zk))
        electing = {tp: assignments[tp] for tp in assignments if tp not in skipped}
        after: dict[TopicPartition, PartitionState] = {}
        live: frozenset[int] = frozenset()
        finished = True
        if electing:
            with stop_on_signals() as stop:
                zk.stopped = lambda: stop.stopped
                try:
                    start_election(zk, list(electing))
                    finished = not stop.stopped and wait_for_controller(zk, zk.stopped)
                    if finished:
                        after, live = _read_outcome(zk, electing)
                except LeaderElectionError as exc:
                    if not zk.election_sent:
                        raise  # nothing was written
                    finished = False
                    if not stop.stopped:
                        report.abort(exc.exit_code, f"{exc.message}. {exc.hint}" if exc.hint else exc.message)
                if not finished:  # a short read of what the controller did so far
                    zk.stopped = lambda: False
                    after = _states_if_readable(zk, electing)
                report.interrupted, report.stop_signal = stop.stopped, stop.signum
        missing = [tp for tp in electing if tp not in after]
        if missing and finished:  # a state znode gone while the controller worked: the topic was deleted meanwhile
            skipped.update(left_out({tp: assignments[tp] for tp in missing}, {}, frozenset(tp.topic for tp in missing)))
    report.results = [skipped[tp] if tp in skipped
                      else outcome(before[tp], after[tp], live) if finished
                      else _in_doubt(before[tp], after.get(tp)) for tp in assignments]
    return report


def _states_if_readable(zk: ZooKeeper, electing: dict[TopicPartition, tuple[int, ...]],
                        ) -> dict[TopicPartition, PartitionState]:
    """The states now, with a short allowance of their own; none when ZooKeeper cannot say."""
    try:
        return read_states(zk, electing, HINT_READ_TIMEOUT)
    except LeaderElectionError:
        return {}


def _in_doubt(before: PartitionState, now: PartitionState | None) -> PartitionResult:
    """A partition of an election that was started but not seen to finish: what its state shows, else in doubt."""
    preferred = before.preferred
    leader_now = now.leader if now is not None else None
    common = {"leader_before": before.leader, "leader_after": leader_now}
    if before.leader == preferred:
        return PartitionResult(before.tp, Outcome.ALREADY_ELECTED, kafka_errors.ELECTION_NOT_NEEDED,
                               kafka_errors.lookup(kafka_errors.ELECTION_NOT_NEEDED).message, **common)
    if preferred is not None and leader_now == preferred:
        return PartitionResult(before.tp, Outcome.ELECTED, **common)
    seen = "its state could not be read" if now is None else "its leader had not changed"
    return PartitionResult(before.tp, Outcome.FAILED, kafka_errors.REQUEST_TIMED_OUT,
                           f"The election was started ({ELECTION_PATH} written) but not seen to finish, and {seen}: "
                           "the controller may still elect it; check this partition", **common)


def _read_outcome(zk: ZooKeeper, assignments: dict[TopicPartition, tuple[int, ...]],
                  ) -> tuple[dict[TopicPartition, PartitionState], frozenset[int]]:
    """The states the controller left, with a time allowance of their own: the wait may have used the rest."""
    allowance = max(zk.deadline.remaining(), OUTCOME_READ_TIMEOUT)
    try:
        return read_states(zk, assignments, allowance), live_brokers(zk, allowance)
    except LeaderElectionError as exc:
        raise type(exc)(f"{exc.message}: the controller finished the election, but its outcome could not be read",
                        "Check the partitions' leaders, for example with --bootstrap-server or this command again.",
                        exc.exit_code) from None


def start_preferred(connect: str, requested: Sequence[TopicPartition] | None, timeout: float = DEFAULT_TIMEOUT,
                    ) -> tuple[list[TopicPartition], list[PartitionResult]]:
    """The old fire-and-forget: write the election znode; the partitions it names, and those left out."""
    with ZooKeeper.session(parse_connect_string(connect), Deadline(timeout)) as zk:
        assignments = select(zk, requested)
        skipped = left_out(assignments, read_states(zk, assignments), topics_being_deleted(zk)) if assignments else {}
        partitions = [tp for tp in assignments if tp not in skipped]
        if partitions:
            with stop_on_signals():  # the write in flight completes; the lines after it are still printed
                start_election(zk, partitions)
    return partitions, list(skipped.values())
