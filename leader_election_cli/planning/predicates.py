"""One partition's health and one broker's imbalance, over plain values (ints and sequences of ints):
the rules `status`, `rebalance`, the election's predictions and the Spark pipeline share. Plain values
let the tests hold the pipeline's column expressions (`pipeline/rules.py`) to these very functions.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from leader_election_cli.model import NO_LEADER


def is_preferred_leader(leader: int, replicas: Sequence[int]) -> bool:
    """Led by its preferred replica (replicas[0])."""
    return len(replicas) > 0 and leader == replicas[0]


def is_fixable(leader: int, replicas: Sequence[int], isr: Collection[int],
               live_brokers: Collection[int]) -> bool:
    """A preferred election would fix it: led by another broker, preferred replica alive and in the ISR."""
    return (len(replicas) > 0 and leader != replicas[0]
            and replicas[0] in live_brokers and replicas[0] in isr)


def is_under_replicated(replicas: Sequence[int], isr: Collection[int], adding: Collection[int] = ()) -> bool:
    """Fewer in-sync replicas than replicas, not counting those a pending reassignment is adding (as
    Kafka's UnderReplicatedPartitions and `kafka-topics --under-replicated-partitions` count)."""
    return len(isr) < len(replicas) - len(adding)


def is_under_min_isr(isr: Collection[int], min_insync_replicas: int | None) -> bool:
    """Fewer in-sync replicas than the topic's min.insync.replicas (False when that is unknown)."""
    return min_insync_replicas is not None and len(isr) < min_insync_replicas


def is_offline(leader: int, live_brokers: Collection[int]) -> bool:
    """No leader, or a leader that is not a live broker."""
    return leader == NO_LEADER or leader not in live_brokers


def imbalance_ratio(not_led_by_preferred: int, preferred: int) -> float:
    """Kafka's per-broker imbalance ratio; 0 for a broker that is preferred for nothing."""
    return not_led_by_preferred / preferred if preferred else 0.0


def is_above_threshold(not_led_by_preferred: int, preferred: int, threshold_pct: float) -> bool:
    """ratio > threshold_pct / 100, compared exactly: the threshold as the decimal it was written
    (9.2, not the float just under it), so a ratio of exactly 9.2% is not above 9.2."""
    from fractions import Fraction  # here: 4 ms of imports an election does not need

    return preferred > 0 and not_led_by_preferred * 100 > Fraction(repr(threshold_pct)) * preferred


def clean_leaders(isr: Sequence[int], elr: Sequence[int]) -> tuple[int, ...]:
    """The replicas that may lead a partition without data loss, were they live: its ISR, else its eligible
    leader replicas (ELR, KIP-966), as a KRaft controller's `PartitionChangeBuilder.isValidNewLeader` has
    it (less `isAcceptableLeader`: live, log directory online). The ELR counts as the partition records
    it, whatever eligible.leader.replicas.version says: the controller asks only whether the ISR is empty,
    so an ELR kept from before ELR was turned off is elected from by the very change that clears it.
    Without ELR an ISR keeps its dead last member. Empty: none is known to hold every acknowledged message.
    The one rule for KRaft elections (`rules.py`; ZooKeeper mode has no ELR), the unclean-election warnings
    (`risk.py`), `status` and `can-stop` (`maintenance.py`)."""
    return tuple(isr) if isr else tuple(elr)
