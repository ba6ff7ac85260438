"""Kafka's leadership balance: per-partition predicates, per-broker ratios, cluster counts."""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st
from strategies import cluster_states

from leader_election_cli.model import (
    NO_LEADER,
    ClusterState,
    ControllerMode,
    ElectionType,
    PartitionState,
    TopicPartition,
)
from leader_election_cli.planning.balance import (
    BrokerBalance,
    balance,
    fixable_by_preferred,
    rebalance_candidates,
    tally,
)
from leader_election_cli.planning.predicates import (
    imbalance_ratio,
    is_above_threshold,
    is_fixable,
    is_offline,
    is_preferred_leader,
    is_under_min_isr,
    is_under_replicated,
)
from leader_election_cli.planning.prediction import apply, predict


def cluster(live, partitions, min_isr=None, reassigning=()) -> ClusterState:
    return ClusterState(brokers={b: ("localhost", 9000 + b) for b in live}, controller_id=live[0],
                        partitions={p.tp: p for p in partitions}, min_insync_replicas=min_isr or {},
                        reassigning=dict.fromkeys(reassigning, ()))


def part(topic, partition, leader, replicas, isr) -> PartitionState:
    return PartitionState(topic, partition, leader, tuple(replicas), tuple(isr))


def test_predicates_on_plain_values():
    assert is_preferred_leader(1, [1, 2])
    assert not is_preferred_leader(2, [1, 2]) and not is_preferred_leader(1, [])
    assert is_fixable(2, [1, 2], [2, 1], [1, 2])
    assert not is_fixable(1, [1, 2], [1, 2], [1, 2])  # already led by the preferred replica
    assert not is_fixable(2, [1, 2], [2], [1, 2])  # preferred replica out of sync
    assert not is_fixable(2, [1, 2], [1, 2], [2])  # preferred replica dead
    assert is_under_replicated([1, 2, 3], [1, 2]) and not is_under_replicated([1, 2], [2, 1])
    assert not is_under_replicated([1, 2, 3], [1, 2], adding=[3])  # a reassignment adding broker 3
    assert is_under_replicated([1, 2, 3, 4], [1], adding=[3, 4])
    assert is_under_min_isr([1], 2) and not is_under_min_isr([1, 2], 2) and not is_under_min_isr([], None)
    assert is_offline(NO_LEADER, [1]) and is_offline(2, [1]) and not is_offline(1, [1])


def test_imbalance_ratio_and_kafkas_strict_threshold():
    assert imbalance_ratio(0, 0) == 0.0 and imbalance_ratio(1, 4) == 0.25
    assert not is_above_threshold(1, 10, 10)  # exactly 10 %: not above (1/10*100 is 10.000000000000002)
    assert is_above_threshold(2, 10, 10)
    assert not is_above_threshold(0, 0, 0)
    assert is_above_threshold(1, 1000, 0.05) and not is_above_threshold(1, 1000, 0.1)
    # the threshold as written: 9.2 * 750 is 6899.999... in floats, so 69/750 (exactly 9.2 %) looked above
    assert not is_above_threshold(69, 750, 9.2) and is_above_threshold(70, 750, 9.2)
    assert is_above_threshold(1, 3, 33.33) and not is_above_threshold(1, 3, 33.34)


def test_balance_counts_per_broker_and_for_the_cluster():
    state = cluster((1, 2, 3), [
        part("a", 0, 1, [1, 2, 3], [1, 2, 3]),  # balanced
        part("a", 1, 2, [1, 2, 3], [1, 2, 3]),  # preferred 1, led by 2: fixable
        part("a", 2, 3, [1, 2, 3], [2, 3]),  # preferred 1 out of sync: not fixable, under-replicated
        part("b", 0, NO_LEADER, [4, 2], [4]),  # preferred 4 dead, leaderless, under min ISR
        part("b", 1, 4, [2, 4], [4]),  # led by a dead broker
    ], min_isr={"b": 2}, reassigning=[TopicPartition("a", 0)])
    result = balance(state)
    assert result.brokers == (
        BrokerBalance(1, True, leaders=1, preferred=3, not_led_by_preferred=2),
        BrokerBalance(2, True, leaders=1, preferred=1, not_led_by_preferred=1),
        BrokerBalance(3, True, leaders=1, preferred=0, not_led_by_preferred=0),
        BrokerBalance(4, False, leaders=1, preferred=1, not_led_by_preferred=1),
    )
    assert (result.partitions, result.not_preferred_leader, result.under_replicated, result.under_min_isr,
            result.offline, result.fixable, result.reassigning) == (5, 4, 3, 2, 2, 1, 1)
    assert [b.broker for b in result.above(50)] == [1, 2, 4]
    assert [b.broker for b in result.above(70)] == [2, 4]
    assert result.brokers[0].ratio == 2 / 3
    assert fixable_by_preferred(state) == [TopicPartition("a", 1)]
    assert rebalance_candidates(state, 50) == [TopicPartition("a", 1)]
    assert rebalance_candidates(state, 70) == []  # broker 1 (66 %) is under the threshold


def test_rebalance_skips_partitions_being_reassigned():
    state = cluster((1, 2), [part("a", 0, 2, [1, 2], [1, 2])], reassigning=[TopicPartition("a", 0)])
    assert fixable_by_preferred(state) == [TopicPartition("a", 0)]
    assert rebalance_candidates(state) == []


@given(cluster_states())
def test_counts_add_up(state):
    result = balance(state)
    parts = state.partitions.values()
    assert sum(b.leaders for b in result.brokers) == sum(p.leader != NO_LEADER for p in parts)
    assert sum(b.preferred for b in result.brokers) == result.partitions == len(state.partitions)
    assert sum(b.not_led_by_preferred for b in result.brokers) == result.not_preferred_leader
    assert all(b.not_led_by_preferred <= b.preferred and 0 <= b.ratio <= 1 for b in result.brokers)
    assert result.fixable == len(fixable_by_preferred(state)) <= result.not_preferred_leader
    assert {b.broker for b in result.brokers} >= state.live_brokers
    assert all(b.alive == (b.broker in state.live_brokers) for b in result.brokers)


@given(cluster_states(), st.booleans(), st.data())
def test_one_pass_lists_each_rule_per_partition(state, capped, data):
    """`tally` (status's one pass) finds the partitions each predicate names, and counts them as `balance`."""
    adding = {tp: tuple(data.draw(st.lists(st.sampled_from(p.replicas), max_size=2, unique=True)))
              for tp, p in state.partitions.items() if p.replicas and tp in state.reassigning}
    state = replace(state, min_isr_capped=capped, reassigning={**state.reassigning, **adding})
    counts, health = tally(state)
    live, parts = state.live_brokers, state.partitions.items()
    assert health.not_preferred_leader == [tp for tp, p in parts if not is_preferred_leader(p.leader, p.replicas)]
    assert health.under_replicated == [tp for tp, p in parts
                                       if is_under_replicated(p.replicas, p.isr, state.reassigning.get(tp, ()))]
    assert health.under_min_isr == [tp for tp, p in parts if is_under_min_isr(p.isr, state.min_isr(tp))]
    assert health.offline == [tp for tp, p in parts if is_offline(p.leader, live)]
    assert counts == balance(state)
    assert (counts.not_preferred_leader, counts.under_replicated, counts.under_min_isr, counts.offline) == (
        len(health.not_preferred_leader), len(health.under_replicated), len(health.under_min_isr),
        len(health.offline))
    assert counts.fixable == sum(is_fixable(p.leader, p.replicas, p.isr, live) for _, p in parts)
    if capped:
        assert all(state.min_isr(tp) <= len(p.replicas) for tp, p in parts if state.min_isr(tp) is not None)


@given(cluster_states(), st.integers(0, 100))
def test_a_rebalance_leaves_no_candidates_behind(state, threshold):
    """Electing the candidates fixes them in both modes (when no log directory is offline)."""
    candidates = rebalance_candidates(state, threshold)
    above = {b.broker for b in balance(state).above(threshold)}
    assert all(state.partitions[tp].replicas[0] in above for tp in candidates)
    after = apply(state, predict(state, ElectionType.PREFERRED, candidates, state.mode))
    left = rebalance_candidates(after, threshold)
    assert all(state.partitions[tp].offline_replicas for tp in left)


@given(cluster_states(modes=(ControllerMode.ZK,)))
def test_after_a_full_preferred_election_only_unfixable_partitions_are_unbalanced(state):
    state = replace(state, partitions={tp: p._replace(offline_replicas=())
                                       for tp, p in state.partitions.items()})
    after = apply(state, predict(state, ElectionType.PREFERRED, None, state.mode))
    before_fixable = len(fixable_by_preferred(state))
    assert balance(after).not_preferred_leader == balance(state).not_preferred_leader - before_fixable
    assert fixable_by_preferred(after) == []
