"""Leadership moves: reorders for `prefer` and `demote`, their refusals, and what the election does next."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st
from strategies import cluster_states

from leader_election_cli.model import ClusterState, ElectionType, Outcome, PartitionState, TopicPartition
from leader_election_cli.planning.prediction import apply, predict
from leader_election_cli.planning.reorders import (
    Refusal,
    check_prefer,
    demotion_plan,
    reorder_for_demotion,
    reorder_for_leader,
)

TP = TopicPartition("t", 0)


def cluster(live, *partitions, reassigning=()) -> ClusterState:
    return ClusterState(brokers={b: ("localhost", 9000 + b) for b in live}, controller_id=live[0],
                        partitions={p.tp: p for p in partitions}, reassigning=dict.fromkeys(reassigning, ()))


def part(partition, leader, replicas, isr, topic="t", offline=()) -> PartitionState:
    return PartitionState(topic, partition, leader, tuple(replicas), tuple(isr),
                          offline_replicas=tuple(offline))


def test_reorders():
    assert reorder_for_leader([1, 2, 3], 3) == (3, 1, 2)
    assert reorder_for_leader((1, 2, 3), 1) == (1, 2, 3)
    assert reorder_for_demotion([1, 2, 3], 1) == (2, 3, 1)
    with pytest.raises(ValueError, match="broker 4 is not one of the replicas"):
        reorder_for_leader([1, 2, 3], 4)
    with pytest.raises(ValueError, match="broker 4 is not one of the replicas"):
        reorder_for_demotion([1, 2, 3], 4)


@given(st.lists(st.integers(0, 20), min_size=1, unique=True), st.data())
def test_reorders_keep_the_replica_set_and_the_others_order(replicas, data):
    broker = data.draw(st.sampled_from(replicas))
    others = [r for r in replicas if r != broker]
    assert reorder_for_leader(replicas, broker) == (broker, *others)
    assert reorder_for_demotion(replicas, broker) == (*others, broker)


@pytest.mark.parametrize("broker, live, isr, offline, reassigning, reason", [
    (3, (1, 2, 3), (1, 2, 3), (), (), None),
    (4, (1, 2, 3, 4), (1, 2, 3), (), (), "broker 4 is not a replica of t-0 (replicas: 1,2,3)"),
    (3, (1, 2), (1, 2, 3), (), (), "broker 3 is not alive"),
    (3, (1, 2, 3), (1, 2, 3), (3,), (), "the replica of t-0 on broker 3 is offline (log directory failure)"),
    (3, (1, 2, 3), (1, 2), (), (), "broker 3 is not in the ISR of t-0 (ISR: 1,2)"),
    (3, (1, 2, 3), (), (), (), "broker 3 is not in the ISR of t-0 (ISR: none)"),
    (3, (1, 2, 3), (1, 2, 3), (), (TP,), "a reassignment of t-0 is pending"),
])
def test_check_prefer_reasons(broker, live, isr, offline, reassigning, reason):
    state = cluster(live, part(0, 1, (1, 2, 3), isr, offline=offline), reassigning=reassigning)
    assert check_prefer(state, TP, broker) == reason


def test_check_prefer_takes_reassignments_read_separately_and_unknown_partitions():
    state = cluster((1, 2), part(0, 1, (1, 2), (1, 2)))
    assert check_prefer(state, TP, 2, reassigning={TP}) == "a reassignment of t-0 is pending"
    assert check_prefer(state, TopicPartition("t", 9), 2) == "partition t-9 does not exist"


def test_demotion_plan_moves_leadership_to_a_valid_replica_and_refuses_the_rest():
    state = cluster((1, 2, 3), *[
        part(0, 1, (1, 2, 3), (1, 2, 3)),  # led by 1: 2 takes over
        part(1, 1, (2, 1, 3), (1, 3)),  # led by 1, 2 out of sync: 3 takes over
        part(2, 1, (1, 2), (1,)),  # led by 1, nobody else in sync: refused
        part(3, 2, (1, 2, 3), (1, 2, 3)),  # preferred 1, led by 2: 2 keeps leading (include_preferred)
        part(4, 3, (2, 3), (2, 3)),  # 1 not a replica
        part(5, 1, (1, 2), (1, 2)),  # pending reassignment: refused
        part(0, 1, (1, 2), (1, 2), topic="other"),  # filtered out by topic
    ], reassigning=[TopicPartition("t", 5)])
    only_t = "t".__eq__
    moves, refusals = demotion_plan(state, 1, include_preferred=False, topic_filter=only_t)
    assert [(m.tp.partition, m.new_replicas, m.leader_after) for m in moves] == [
        (0, (2, 3, 1), 2), (1, (3, 2, 1), 3)]
    assert refusals == [Refusal(TopicPartition("t", 2), "no other in-sync replica"),
                        Refusal(TopicPartition("t", 5), "a reassignment of t-5 is pending")]
    moves, _ = demotion_plan(state, 1, include_preferred=True, topic_filter=only_t)
    assert [(m.tp.partition, m.replicas, m.new_replicas, m.leader_before, m.leader_after)
            for m in moves] == [
        (0, (1, 2, 3), (2, 3, 1), 1, 2), (1, (2, 1, 3), (3, 2, 1), 1, 3), (3, (1, 2, 3), (2, 3, 1), 2, 2)]
    moves, _ = demotion_plan(state, 1)
    assert TopicPartition("other", 0) in {m.tp for m in moves}


def reordered(state: ClusterState, orders: dict[TopicPartition, tuple[int, ...]]) -> ClusterState:
    return replace(state, partitions={tp: p._replace(replicas=orders.get(tp, p.replicas))
                                      for tp, p in state.partitions.items()})


@given(cluster_states(), st.data())
def test_an_accepted_prefer_makes_the_broker_leader_in_both_modes(state, data):
    tp = data.draw(st.sampled_from(sorted(state.partitions)))
    broker = data.draw(st.sampled_from(state.partitions[tp].replicas))
    if check_prefer(state, tp, broker) is not None:
        return
    moved = reordered(state, {tp: reorder_for_leader(state.partitions[tp].replicas, broker)})
    [p] = predict(moved, ElectionType.PREFERRED, [tp], state.mode)
    assert p.outcome in (Outcome.ELECTED, Outcome.ALREADY_ELECTED) and p.leader_after == broker


@given(cluster_states(), st.booleans(), st.data())
def test_after_a_demotion_the_broker_leads_only_refused_partitions(state, include_preferred, data):
    broker = data.draw(st.sampled_from(sorted({r for p in state.partitions.values() for r in p.replicas})))
    moves, refusals = demotion_plan(state, broker, include_preferred)
    refused = {r.tp for r in refusals}
    assert not refused & {m.tp for m in moves}
    assert all(m.new_replicas[-1] == broker and sorted(m.new_replicas) == sorted(m.replicas) for m in moves)
    moved = reordered(state, {m.tp: m.new_replicas for m in moves})
    predictions = predict(moved, ElectionType.PREFERRED, [m.tp for m in moves], state.mode)
    assert [p.leader_after for p in predictions] == [m.leader_after for m in moves]
    after = apply(moved, predictions)
    assert {tp for tp, p in after.partitions.items() if p.leader == broker} <= refused
