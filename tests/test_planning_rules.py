"""Hand-written cases for every election rule of both controllers (KAFKA_BEHAVIOUR.md, Kafka's source)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from leader_election_cli import kafka_errors as E
from leader_election_cli.model import (
    NO_LEADER,
    ClusterState,
    ControllerMode,
    ElectionType,
    Outcome,
    PartitionState,
    TopicPartition,
)
from leader_election_cli.planning.prediction import Prediction, apply, predict

KRAFT, ZK = ControllerMode.KRAFT, ControllerMode.ZK
PREFERRED, UNCLEAN = ElectionType.PREFERRED, ElectionType.UNCLEAN
TP = TopicPartition("t", 0)


def cluster(live: tuple[int, ...], *partitions: PartitionState,
            min_isr: dict[str, int] | None = None) -> ClusterState:
    return ClusterState(brokers={b: ("localhost", 9000 + b) for b in live}, controller_id=live[0],
                        partitions={p.tp: p for p in partitions}, min_insync_replicas=min_isr or {})


def part(leader: int, replicas: tuple[int, ...], isr: tuple[int, ...], *, partition: int = 0,
         elr: tuple[int, ...] = (), last_known: tuple[int, ...] = (),
         offline: tuple[int, ...] = ()) -> PartitionState:
    return PartitionState("t", partition, leader, replicas, isr, elr, last_known, offline)


def one(state: ClusterState, election_type: ElectionType, mode: ControllerMode) -> Prediction:
    [prediction] = predict(state, election_type, [TP], mode)
    return prediction


def assert_elected(p: Prediction, leader: int, isr: tuple[int, ...], *, unclean: bool = False) -> None:
    assert (p.outcome, p.error_code, p.leader_after, p.isr_after, p.unclean) == (
        Outcome.ELECTED, E.NONE, leader, isr, unclean)


def assert_unchanged(p: Prediction, state: ClusterState, outcome: Outcome, code: int) -> None:
    before = state.partitions[p.tp]
    assert (p.outcome, p.error_code, p.leader_before, p.leader_after, p.isr_after, p.unclean) == (
        outcome, code, before.leader, before.leader, before.isr, False)


# -- ZooKeeper mode, preferred ---------------------------------------------------------------------

@pytest.mark.parametrize("live", [(1, 2, 3), (2, 3)], ids=["leader-live", "leader-dead"])
def test_zk_preferred_not_needed_when_the_preferred_replica_leads(live):
    state = cluster(live, part(1, (1, 2, 3), (1, 2, 3)))
    assert_unchanged(one(state, PREFERRED, ZK), state, Outcome.ALREADY_ELECTED, E.ELECTION_NOT_NEEDED)


def test_zk_preferred_elects_the_live_in_sync_preferred_replica_keeping_the_isr():
    state = cluster((1, 2, 3), part(2, (1, 2, 3), (2, 3, 1)))
    p = one(state, PREFERRED, ZK)
    assert_elected(p, 1, (2, 3, 1))
    assert p.leader_before == 2


def test_zk_preferred_elects_a_leaderless_partition():
    assert_elected(one(cluster((1, 2), part(NO_LEADER, (1, 2), (1,))), PREFERRED, ZK), 1, (1,))


@pytest.mark.parametrize("live, isr, offline", [
    ((2, 3), (1, 2, 3), ()),  # preferred replica dead
    ((1, 2, 3), (2, 3), ()),  # preferred replica out of sync
    ((1, 2, 3), (1, 2, 3), (1,)),  # preferred replica's log directory offline
], ids=["dead", "out-of-sync", "offline-dir"])
def test_zk_preferred_fails_80_when_the_preferred_replica_is_not_valid(live, isr, offline):
    state = cluster(live, part(2, (1, 2, 3), isr, offline=offline))
    p = one(state, PREFERRED, ZK)
    assert_unchanged(p, state, Outcome.FAILED, E.PREFERRED_LEADER_NOT_AVAILABLE)
    assert p.message == ("Failed to elect leader for partition t-0 under strategy "
                         "PreferredReplicaPartitionLeaderElectionStrategy")


def test_zk_preferred_never_falls_back_to_another_replica():
    state = cluster((2, 3), part(NO_LEADER, (1, 2, 3), (1, 2, 3)))
    assert_unchanged(one(state, PREFERRED, ZK), state, Outcome.FAILED, E.PREFERRED_LEADER_NOT_AVAILABLE)


# -- ZooKeeper mode, unclean -----------------------------------------------------------------------

@pytest.mark.parametrize("offline", [(), (1,)], ids=["plain", "leader-dir-offline"])
def test_zk_unclean_not_needed_while_the_leader_broker_is_live(offline):
    state = cluster((1, 2), part(1, (1, 2), (1, 2), offline=offline))
    assert_unchanged(one(state, UNCLEAN, ZK), state, Outcome.ALREADY_ELECTED, E.ELECTION_NOT_NEEDED)


def test_zk_unclean_replaces_a_leader_on_a_dead_broker_with_a_live_isr_replica():
    state = cluster((2, 3), part(1, (1, 2, 3), (1, 3, 2)))
    # first live ISR replica in replica order (2), and the ISR keeps only its live members
    assert_elected(one(state, UNCLEAN, ZK), 2, (3, 2))


def test_zk_unclean_falls_back_to_the_first_live_replica_with_isr_of_one():
    state = cluster((2, 3), part(NO_LEADER, (1, 3, 2), (1,)), min_isr={"t": 2})
    p = one(state, UNCLEAN, ZK)
    assert_elected(p, 3, (3,), unclean=True)
    assert p.below_min_isr


def test_zk_unclean_fails_83_when_no_replica_is_live():
    state = cluster((4,), part(NO_LEADER, (1, 2), (1,)))
    p = one(state, UNCLEAN, ZK)
    assert_unchanged(p, state, Outcome.FAILED, E.ELIGIBLE_LEADERS_NOT_AVAILABLE)
    assert p.message == ("Failed to elect leader for partition t-0 under strategy "
                         "OfflinePartitionLeaderElectionStrategy(true)")


# -- KRaft, preferred ------------------------------------------------------------------------------

def test_kraft_preferred_not_needed_when_the_preferred_replica_leads():
    state = cluster((1, 2), part(1, (1, 2), (1, 2)))
    assert_unchanged(one(state, PREFERRED, KRAFT), state, Outcome.ALREADY_ELECTED, E.ELECTION_NOT_NEEDED)


def test_kraft_preferred_elects_the_valid_preferred_replica():
    assert_elected(one(cluster((1, 2), part(2, (1, 2), (2, 1))), PREFERRED, KRAFT), 1, (2, 1))


def test_kraft_preferred_keeps_a_valid_current_leader_and_reports_80():
    state = cluster((2, 3), part(3, (1, 2, 3), (2, 3)))
    p = one(state, PREFERRED, KRAFT)
    assert_unchanged(p, state, Outcome.FAILED, E.PREFERRED_LEADER_NOT_AVAILABLE)
    assert p.message is None  # KRaft sets no message: Kafka's default text is shown


def test_kraft_preferred_falls_back_to_the_first_valid_other_replica():
    state = cluster((2, 3), part(NO_LEADER, (1, 2, 3), (3, 1, 2)))
    assert_elected(one(state, PREFERRED, KRAFT), 2, (3, 1, 2))


def test_kraft_preferred_skips_a_replica_on_an_offline_directory():
    state = cluster((1, 2, 3), part(NO_LEADER, (1, 2, 3), (1, 2, 3), offline=(1, 2)))
    assert_elected(one(state, PREFERRED, KRAFT), 3, (1, 2, 3))


def test_kraft_preferred_fails_80_when_no_replica_is_valid():
    state = cluster((2, 3), part(NO_LEADER, (1, 2, 3), (1,)))
    assert_unchanged(one(state, PREFERRED, KRAFT), state, Outcome.FAILED, E.PREFERRED_LEADER_NOT_AVAILABLE)


def test_kraft_preferred_elects_from_the_elr_when_the_isr_is_empty():
    state = cluster((1, 2, 3), part(NO_LEADER, (1, 2, 3), (), elr=(2, 1)), min_isr={"t": 2})
    p = one(state, PREFERRED, KRAFT)
    assert_elected(p, 1, (1,))
    assert p.elr_after == (2,)
    assert p.below_min_isr


def test_kraft_elr_members_are_not_valid_while_the_isr_is_not_empty():
    state = cluster((1, 2, 3), part(3, (1, 2, 3), (3,), elr=(1, 2)))
    assert_unchanged(one(state, PREFERRED, KRAFT), state, Outcome.FAILED, E.PREFERRED_LEADER_NOT_AVAILABLE)


def test_kraft_preferred_elects_the_live_last_known_leader_as_unclean():
    state = cluster((1, 2, 3), part(NO_LEADER, (1, 2, 3), (), last_known=(2,)))
    p = one(state, PREFERRED, KRAFT)
    assert_elected(p, 2, (2,), unclean=True)
    assert apply(state, [p]).partitions[TP].last_known_elr == ()


@pytest.mark.parametrize("live, last_known", [((1, 3), (2,)), ((1, 2, 3), (2, 3))],
                         ids=["last-leader-dead", "two-last-known"])
def test_kraft_last_known_leader_needs_exactly_one_live_member(live, last_known):
    state = cluster(live, part(NO_LEADER, (1, 2, 3), (), last_known=last_known))
    assert_unchanged(one(state, PREFERRED, KRAFT), state, Outcome.FAILED, E.PREFERRED_LEADER_NOT_AVAILABLE)


ELR_OFF = {"eligible.leader.replicas.version": 0}  # what a 4.0 cluster reports by default (level 0 left out)


def test_kraft_without_elr_the_reported_features_rule_out_the_last_known_leader():
    # canElectLastKnownLeader needs ELR enabled; with it off the change record still clears the stale
    # last known ELR (maybeUpdateRecordElr), so the controller answers NONE and the leader stays none.
    state = replace(cluster((1, 2, 3), part(NO_LEADER, (1, 2, 3), (), last_known=(2,))), features={})
    p = one(state, PREFERRED, KRAFT)
    assert_elected(p, NO_LEADER, ())
    assert (p.elr_after, apply(state, [p]).partitions[TP].last_known_elr) == ((), ())
    assert_elected(one(state, UNCLEAN, KRAFT), 1, (1,), unclean=True)


def test_kraft_without_elr_fields_a_failed_election_stays_a_failure():
    state = replace(cluster((1, 3), part(3, (1, 2, 3), (3,))), features=ELR_OFF)
    assert_unchanged(one(state, PREFERRED, KRAFT), state, Outcome.FAILED, E.PREFERRED_LEADER_NOT_AVAILABLE)


def test_kraft_preferred_with_an_invalid_leader_and_no_replacement_writes_no_leader():
    # PartitionChangeBuilder writes leader -1 (a change), so the controller answers NONE.
    state = cluster((1, 3), part(2, (1, 2, 3), (2,)))
    p = one(state, PREFERRED, KRAFT)
    assert_elected(p, NO_LEADER, (2,))
    assert apply(state, [p]).partitions[TP].leader == NO_LEADER


# -- KRaft, unclean --------------------------------------------------------------------------------

@pytest.mark.parametrize("live", [(1, 2), (2,)], ids=["leader-live", "leader-fenced"])
def test_kraft_unclean_not_needed_while_there_is_a_leader(live):
    state = cluster(live, part(1, (1, 2), (1, 2)))
    assert_unchanged(one(state, UNCLEAN, KRAFT), state, Outcome.ALREADY_ELECTED, E.ELECTION_NOT_NEEDED)


def test_kraft_unclean_elects_the_first_valid_replica_in_replica_order():
    state = cluster((1, 2, 3), part(NO_LEADER, (1, 3, 2), (2, 3)))
    assert_elected(one(state, UNCLEAN, KRAFT), 3, (2, 3))


def test_kraft_unclean_elects_from_the_elr_cleanly():
    state = cluster((2, 3), part(NO_LEADER, (1, 2, 3), (), elr=(3, 2)))
    p = one(state, UNCLEAN, KRAFT)
    assert_elected(p, 2, (2,))
    assert p.elr_after == (3,)


def test_kraft_unclean_prefers_the_last_known_leader_to_any_live_replica():
    state = cluster((1, 2, 3), part(NO_LEADER, (1, 2, 3), (), last_known=(3,)))
    assert_elected(one(state, UNCLEAN, KRAFT), 3, (3,), unclean=True)


def test_kraft_unclean_falls_back_to_the_first_live_replica_and_clears_the_elr():
    state = cluster((2, 3), part(NO_LEADER, (1, 2, 3), (1,), elr=(3,)), min_isr={"t": 1})
    p = one(state, UNCLEAN, KRAFT)
    assert_elected(p, 2, (2,), unclean=True)
    assert p.elr_after == ()
    assert not p.below_min_isr


def test_kraft_unclean_fails_83_when_no_replica_is_live():
    state = cluster((4,), part(NO_LEADER, (1, 2), (1,)))
    p = one(state, UNCLEAN, KRAFT)
    assert_unchanged(p, state, Outcome.FAILED, E.ELIGIBLE_LEADERS_NOT_AVAILABLE)
    assert p.message is None


# -- both modes ------------------------------------------------------------------------------------

@pytest.mark.parametrize("mode, missing, message", [
    (KRAFT, TopicPartition("nosuch", 0), "No such topic as nosuch"),
    (KRAFT, TopicPartition("t", 99), "No such partition as t-99"),
    (ZK, TopicPartition("nosuch", 0), "The partition does not exist."),
    (ZK, TopicPartition("t", 99), "The partition does not exist."),
])
@pytest.mark.parametrize("election_type", list(ElectionType))
def test_unknown_topic_or_partition(mode, missing, message, election_type):
    state = cluster((1,), part(1, (1,), (1,)))
    [p] = predict(state, election_type, [missing], mode)
    assert (p.tp, p.outcome, p.error_code, p.message, p.leader_before, p.leader_after) == (
        missing, Outcome.FAILED, E.UNKNOWN_TOPIC_OR_PARTITION, message, None, None)


@pytest.mark.parametrize("mode", list(ControllerMode))
def test_all_partitions_are_sorted_and_mark_the_ones_kafka_leaves_out(mode):
    state = cluster((1, 2), part(1, (1, 2), (1, 2), partition=1), part(2, (1, 2), (1, 2), partition=0),
                    part(2, (2, 1), (1, 2), partition=2))
    predictions = predict(state, PREFERRED, None, mode)
    assert [(p.tp.partition, p.outcome, p.left_out) for p in predictions] == [
        (0, Outcome.ELECTED, False), (1, Outcome.ALREADY_ELECTED, True), (2, Outcome.ALREADY_ELECTED, True)]
    assert not any(p.left_out for p in predict(state, PREFERRED, list(state.partitions), mode))


@pytest.mark.parametrize("mode", list(ControllerMode))
def test_selected_partitions_keep_their_order(mode):
    state = cluster((1, 2), *(part(2, (1, 2), (1, 2), partition=i) for i in range(3)))
    order = [TopicPartition("t", 2), TopicPartition("nosuch", 0), TopicPartition("t", 0)]
    assert [p.tp for p in predict(state, PREFERRED, order, mode)] == order


def test_below_min_isr_is_false_when_the_minimum_is_unknown():
    state = cluster((2,), part(NO_LEADER, (1, 2), (1,)))
    p = one(state, UNCLEAN, ZK)
    assert p.unclean and not p.below_min_isr


def test_apply_changes_only_elected_partitions():
    state = cluster((1, 2), part(2, (1, 2), (1, 2), partition=0), part(2, (2, 1), (2, 1), partition=1),
                    part(NO_LEADER, (1, 2), (), partition=2, last_known=(1,)))
    after = apply(state, predict(state, PREFERRED, None, KRAFT))
    assert [after.partitions[TopicPartition("t", i)].leader for i in range(3)] == [1, 2, 1]
    assert after.partitions[TopicPartition("t", 2)].isr == (1,)
    assert after.partitions[TopicPartition("t", 1)] is state.partitions[TopicPartition("t", 1)]
    assert state.partitions[TP].leader == 2  # the input is left alone
