"""Predict an election's outcome per partition from one metadata read, and the state it leaves."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace
from typing import NamedTuple

from leader_election_cli import kafka_errors
from leader_election_cli.model import (
    NO_LEADER,
    ClusterState,
    ControllerMode,
    ElectionType,
    Outcome,
    TopicPartition,
)
from leader_election_cli.planning.predicates import is_under_min_isr
from leader_election_cli.planning.rules import decide


class Prediction(NamedTuple):
    """What the controller would answer for one partition, and the partition afterwards."""

    tp: TopicPartition
    outcome: Outcome  # ELECTED, ALREADY_ELECTED or FAILED
    error_code: int  # kafka_errors code: NONE, ELECTION_NOT_NEEDED or the failure
    leader_before: int | None  # None for an unknown partition
    leader_after: int | None  # = leader_before when nothing changes
    isr_after: tuple[int, ...] = ()
    elr_after: tuple[int, ...] = ()
    unclean: bool = False  # the new leader is outside the ISR/ELR: data loss possible
    below_min_isr: bool = False  # ISR afterwards smaller than the topic's min.insync.replicas (when known)
    left_out: bool = False  # an all-partitions election leaves this one out of Kafka's answer
    message: str | None = None  # the controller's ErrorMessage, when it sets one


_OUTCOMES = {kafka_errors.NONE: Outcome.ELECTED, kafka_errors.ELECTION_NOT_NEEDED: Outcome.ALREADY_ELECTED}


def outcome_of(error_code: int) -> Outcome:
    """ELECTION_NOT_NEEDED is not a failure: the right leader is already in place."""
    return _OUTCOMES.get(error_code, Outcome.FAILED)


def predict(state: ClusterState, election_type: ElectionType, partitions: Iterable[TopicPartition] | None,
            mode: ControllerMode) -> list[Prediction]:
    """Predict each partition's outcome with the rules of the controller in `mode`.

    `partitions=None` means every partition, as Kafka's all-partitions election: each one is predicted,
    and the ELECTION_NOT_NEEDED ones are marked `left_out` because Kafka leaves them out of its answer.
    """
    everything = partitions is None
    selected: Iterable[TopicPartition] = sorted(state.partitions) if everything else partitions
    live = state.live_brokers
    topics = state.topics()
    predictions = []
    for tp in selected:
        partition = state.partitions.get(tp)
        if partition is None:
            predictions.append(_unknown(tp, mode, tp.topic in topics))
            continue
        code, leader, isr, elr, unclean, message = decide(partition, election_type, mode, live,
                                                         state.elr_enabled)
        predictions.append(Prediction(
            tp, outcome_of(code), code, partition.leader, leader, isr, elr, unclean,
            is_under_min_isr(isr, state.min_isr(tp)),
            everything and code == kafka_errors.ELECTION_NOT_NEEDED,
            message))
    return predictions


def _unknown(tp: TopicPartition, mode: ControllerMode, topic_exists: bool) -> Prediction:
    """UNKNOWN_TOPIC_OR_PARTITION, with each controller's own message."""
    if mode is ControllerMode.ZK:
        message = "The partition does not exist."
    elif topic_exists:
        message = f"No such partition as {tp}"
    else:
        message = f"No such topic as {tp.topic}"
    return Prediction(tp, Outcome.FAILED, kafka_errors.UNKNOWN_TOPIC_OR_PARTITION, None, None,
                      message=message)


def apply(state: ClusterState, predictions: Sequence[Prediction]) -> ClusterState:
    """The cluster after the predicted elections: new leaders, and the ISR/ELR they write."""
    partitions = dict(state.partitions)
    for prediction in predictions:
        if prediction.outcome is not Outcome.ELECTED:
            continue
        before = partitions[prediction.tp]
        partitions[prediction.tp] = before._replace(
            leader=prediction.leader_after,
            isr=prediction.isr_after,
            elr=prediction.elr_after,
            # KRaft clears the last known leader once the partition has a leader again, and with ELR off
            # in every change it writes.
            last_known_elr=before.last_known_elr
            if prediction.leader_after == NO_LEADER and state.elr_enabled is not False else (),
        )
    return replace(state, partitions=partitions)
