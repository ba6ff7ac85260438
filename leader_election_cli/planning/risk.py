"""Unclean elections can lose data: which partitions are at risk, how to say so, and when to go ahead.

An unclean election elects a replica outside the ISR when no in-sync replica can lead; whatever the old
leader had not replicated to it is gone. The prediction says which partitions that would happen to,
and which would be left with fewer in-sync replicas than `min.insync.replicas` (acks=all writes fail
until the replicas catch up). Of the partitions at risk, it also says which could instead recover without
data loss: those with an in-sync replica (ELR off: Kafka keeps the last one in the ISR) or, with eligible
leader replicas (KIP-966, on by default from Kafka 4.1), an ELR member, that is down: when it comes back
the controller elects it by itself (`PartitionChangeBuilder.isValidNewLeader`); and which have none left
to wait for. The election operation shows these lines, and (for the toolkit) asks before going ahead.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass

from leader_election_cli.model import ClusterState, Outcome
from leader_election_cli.planning.predicates import clean_leaders
from leader_election_cli.planning.prediction import Prediction

LISTED = 20  # partitions named per warning line; the rest are counted


@dataclass(frozen=True)
class Risk:
    """The predicted elections that need a warning."""

    outside_isr: tuple[Prediction, ...]  # a new leader outside the ISR: data loss possible
    below_min_isr: tuple[Prediction, ...]  # fewer in-sync replicas than min.insync.replicas afterwards
    min_isr_unknown: tuple[Prediction, ...] = ()  # not checked: their topic's min.insync.replicas is unknown

    @property
    def needs_confirmation(self) -> bool:
        return bool(self.outside_isr)


def assess(predictions: Sequence[Prediction], min_isr_unknown: Collection[str] = frozenset()) -> Risk:
    """The risks of the predicted elections (only partitions that would get a new leader count);
    `min_isr_unknown`: topics whose min.insync.replicas could not be read."""
    elected = [p for p in predictions if p.outcome is Outcome.ELECTED]
    return Risk(tuple(p for p in elected if p.unclean), tuple(p for p in elected if p.below_min_isr),
                tuple(p for p in elected if p.tp.topic in min_isr_unknown))


def at_risk_names(risk: Risk) -> str:
    """The partitions an unclean election may lose data on, named (the first `LISTED`)."""
    return _listed(risk.outside_isr, lambda p: str(p.tp))


def warning_lines(risk: Risk, state: ClusterState) -> list[str]:
    """One line per kind of risk, naming the partitions (the first `LISTED` of them)."""
    def before(p: Prediction) -> str:
        partition = state.partitions[p.tp]
        elr = f", ELR {_ids(partition.elr)}" if partition.elr and not partition.isr else ""
        return f"{p.tp} (leader {p.leader_after}, ISR was {_ids(partition.isr)}{elr})"

    def waiting_for(p: Prediction) -> tuple[int, ...]:
        partition = state.partitions[p.tp]
        return clean_leaders(partition.isr, partition.elr)

    recoverable = tuple(p for p in risk.outside_isr if waiting_for(p))
    lost = tuple(p for p in risk.outside_isr if not waiting_for(p))
    kinds = (
        (risk.outside_isr, "would elect a leader outside the ISR; messages not replicated to it are lost", before),
        (risk.below_min_isr, "would have fewer in-sync replicas than min.insync.replicas (acks=all writes fail "
                             "until replicas catch up)",
         lambda p: f"{p.tp} (ISR {_ids(p.isr_after)}, min {state.min_isr(p.tp)})"),
        (risk.min_isr_unknown, "could not be checked against min.insync.replicas (their topic configs could not "
                               "be read; DESCRIBE_CONFIGS is needed)", lambda p: str(p.tp)),
        (recoverable, "of those outside the ISR could instead recover without data loss (the controller elects "
                      "an in-sync or eligible leader replica by itself when one comes back)",
         lambda p: f"{p.tp} (broker {' or '.join(map(str, waiting_for(p)))})"),
        (lost, "of those outside the ISR have no in-sync or eligible leader replica left to wait for",
         lambda p: str(p.tp)),
    )
    return [f"Warning: {len(found)} partition(s) {what}: {_listed(found, describe)}"
            for found, what, describe in kinds if found]


def _listed(predictions: Sequence[Prediction], describe: Callable[[Prediction], str]) -> str:
    shown = ", ".join(describe(p) for p in predictions[:LISTED])
    more = len(predictions) - LISTED
    return shown + (f", ... and {more} more (see 'kafka-leaders plan --output json')" if more > 0 else "")


def _ids(brokers: Sequence[int]) -> str:
    return ",".join(map(str, brokers)) or "empty"
