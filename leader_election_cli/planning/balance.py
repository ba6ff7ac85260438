"""Leadership balance, as Kafka defines it: the one source of truth for `status`, `rebalance` and Spark.

It counts with the per-partition rules of `predicates`. The imbalance ratio and threshold follow the
ZooKeeper-mode controller's automatic rebalance (`KafkaController.checkAndTriggerAutoLeaderRebalance`):
per broker B, (partitions whose preferred replica is B but whose leader is not B) / (partitions whose
preferred replica is B), above `leader.imbalance.per.broker.percentage` (default 10) when ratio > pct / 100.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from leader_election_cli.model import NO_LEADER, ClusterState, TopicPartition
from leader_election_cli.planning.predicates import (
    imbalance_ratio,
    is_above_threshold,
    is_fixable,
    is_offline,
    is_preferred_leader,
    is_under_min_isr,
    is_under_replicated,
)

DEFAULT_THRESHOLD_PCT = 10  # leader.imbalance.per.broker.percentage


# -- per broker and per cluster --------------------------------------------------------------------

@dataclass(frozen=True)
class BrokerBalance:
    """One broker's leadership counts."""

    broker: int
    alive: bool
    leaders: int  # partitions it leads
    preferred: int  # partitions whose preferred replica it is
    not_led_by_preferred: int  # of those, partitions led by another broker or by none

    @property
    def ratio(self) -> float:
        return imbalance_ratio(self.not_led_by_preferred, self.preferred)

    def above(self, threshold_pct: float = DEFAULT_THRESHOLD_PCT) -> bool:
        return is_above_threshold(self.not_led_by_preferred, self.preferred, threshold_pct)


@dataclass(frozen=True)
class ClusterBalance:
    """Per-broker balance (sorted by broker id) and cluster-wide partition counts."""

    brokers: tuple[BrokerBalance, ...]
    partitions: int
    not_preferred_leader: int  # not led by their preferred replica
    under_replicated: int
    under_min_isr: int  # counted only for topics whose min.insync.replicas is known
    offline: int  # leaderless, or led by a broker that is not live
    fixable: int  # what a preferred election would fix
    reassigning: int  # pending reassignments, when read

    def above(self, threshold_pct: float = DEFAULT_THRESHOLD_PCT) -> list[BrokerBalance]:
        """Brokers whose imbalance ratio is above the threshold."""
        return [b for b in self.brokers if b.above(threshold_pct)]


@dataclass(frozen=True)
class PartitionHealth:
    """The partitions behind `ClusterBalance`'s counts that need attention, in the order of the state."""

    not_preferred_leader: list[TopicPartition]
    under_replicated: list[TopicPartition]
    under_min_isr: list[TopicPartition]
    offline: list[TopicPartition]


def balance(state: ClusterState) -> ClusterBalance:
    """Count leadership per broker and partition health for the whole cluster.

    Brokers listed: every live broker, and every broker that leads or is preferred for a partition.
    """
    return tally(state)[0]


def tally(state: ClusterState) -> tuple[ClusterBalance, PartitionHealth]:
    """`balance(state)`, and the partitions behind its health counts: one pass over the partitions."""
    live = state.live_brokers
    leaders: Counter[int] = Counter()
    preferred: Counter[int] = Counter()
    not_led: Counter[int] = Counter()
    not_preferred: list[TopicPartition] = []
    under_replicated: list[TopicPartition] = []
    under_min: list[TopicPartition] = []
    offline: list[TopicPartition] = []
    fixable = 0
    reassigning, min_isr = state.reassigning, state.min_isr_of
    for tp, p in state.partitions.items():
        if p.leader != NO_LEADER:
            leaders[p.leader] += 1
        if p.replicas:
            preferred[p.replicas[0]] += 1
        if not is_preferred_leader(p.leader, p.replicas):
            not_preferred.append(tp)
            if p.replicas:
                not_led[p.replicas[0]] += 1
            fixable += is_fixable(p.leader, p.replicas, p.isr, live)
        if is_under_replicated(p.replicas, p.isr, reassigning.get(tp, ())):
            under_replicated.append(tp)
        if is_under_min_isr(p.isr, min_isr(p)):
            under_min.append(tp)
        if is_offline(p.leader, live):
            offline.append(tp)
    brokers = tuple(
        BrokerBalance(b, b in live, leaders[b], preferred[b], not_led[b])
        for b in sorted(live | leaders.keys() | preferred.keys()))
    counts = ClusterBalance(brokers, len(state.partitions), len(not_preferred), len(under_replicated),
                            len(under_min), len(offline), fixable, len(reassigning))
    return counts, PartitionHealth(not_preferred, under_replicated, under_min, offline)


def fixable_by_preferred(state: ClusterState) -> list[TopicPartition]:
    """Partitions a preferred election would move to their preferred replica, sorted."""
    live = state.live_brokers
    return sorted(tp for tp, p in state.partitions.items() if is_fixable(p.leader, p.replicas, p.isr, live))


def rebalance_candidates(state: ClusterState,
                         threshold_pct: float = DEFAULT_THRESHOLD_PCT) -> list[TopicPartition]:
    """What the automatic rebalance elects: fixable partitions whose preferred broker is above the threshold.

    Kafka skips the whole pass while any reassignment is pending; here only the partitions being
    reassigned are skipped.
    """
    above = {b.broker for b in balance(state).above(threshold_pct)}
    return [tp for tp in fixable_by_preferred(state)
            if state.partitions[tp].replicas[0] in above and tp not in state.reassigning]
