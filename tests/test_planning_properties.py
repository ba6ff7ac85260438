"""Invariants of the election predictor over random clusters, in both controller modes."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from strategies import cluster_states

from leader_election_cli import kafka_errors as E
from leader_election_cli.model import NO_LEADER, ClusterState, ControllerMode, ElectionType, Outcome
from leader_election_cli.planning.balance import fixable_by_preferred
from leader_election_cli.planning.predicates import clean_leaders, is_under_min_isr
from leader_election_cli.planning.prediction import apply, predict
from leader_election_cli.planning.rules import decide

election_types = st.sampled_from(list(ElectionType))


def acceptable(state: ClusterState, tp, broker: int) -> bool:
    return broker in state.live_brokers and broker not in state.partitions[tp].offline_replicas


@given(cluster_states(), election_types)
def test_every_partition_is_predicted_once_and_left_out_only_when_not_needed(state, election_type):
    predictions = predict(state, election_type, None, state.mode)
    assert [p.tp for p in predictions] == sorted(state.partitions)
    assert all(p.left_out == (p.error_code == E.ELECTION_NOT_NEEDED) for p in predictions)


@given(cluster_states(), election_types, st.data())
def test_a_partition_is_predicted_alone_as_in_the_whole_cluster(state, election_type, data):
    subset = data.draw(st.lists(st.sampled_from(sorted(state.partitions)), unique=True))
    everything = {p.tp: p for p in predict(state, election_type, None, state.mode)}
    for p in predict(state, election_type, subset, state.mode):
        assert p == everything[p.tp]._replace(left_out=False)


@given(cluster_states(), election_types)
def test_outcomes_match_error_codes_and_failures_change_nothing(state, election_type):
    for p in predict(state, election_type, None, state.mode):
        before = state.partitions[p.tp]
        assert p.leader_before == before.leader
        expected = {E.NONE: Outcome.ELECTED, E.ELECTION_NOT_NEEDED: Outcome.ALREADY_ELECTED}
        assert p.outcome is expected.get(p.error_code, Outcome.FAILED)
        if p.outcome is not Outcome.ELECTED:
            assert (p.leader_after, p.isr_after, p.elr_after, p.unclean) == (
                before.leader, before.isr, before.elr, False)
        failure = E.PREFERRED_LEADER_NOT_AVAILABLE if election_type is ElectionType.PREFERRED \
            else E.ELIGIBLE_LEADERS_NOT_AVAILABLE
        assert p.error_code in (E.NONE, E.ELECTION_NOT_NEEDED, failure)


@given(cluster_states(), election_types)
def test_a_new_leader_is_an_acceptable_replica_chosen_cleanly_unless_flagged(state, election_type):
    for p in predict(state, election_type, None, state.mode):
        before = state.partitions[p.tp]
        if p.outcome is not Outcome.ELECTED:
            continue
        if p.leader_after == NO_LEADER:
            # only KRaft, only when the current leader is not valid and nobody can replace it
            assert state.mode is ControllerMode.KRAFT and election_type is ElectionType.PREFERRED
            valid = acceptable(state, p.tp, before.leader) and before.leader in (before.isr or before.elr)
            assert not valid
            continue
        assert p.leader_after in before.replicas
        assert p.leader_after != before.leader
        assert acceptable(state, p.tp, p.leader_after)
        eligible = before.isr or before.elr
        assert p.unclean == (p.leader_after not in eligible)
        if p.unclean:
            assert p.isr_after == (p.leader_after,)
        else:
            assert p.leader_after in p.isr_after


@given(cluster_states(), election_types)
def test_unclean_is_flagged_only_for_unclean_elections_or_a_kraft_last_known_leader(state, election_type):
    for p in predict(state, election_type, None, state.mode):
        if p.unclean and election_type is ElectionType.PREFERRED:
            before = state.partitions[p.tp]
            assert state.mode is ControllerMode.KRAFT
            assert (before.isr, before.elr, before.last_known_elr) == ((), (), (p.leader_after,))


@given(cluster_states(modes=(ControllerMode.ZK,)))
def test_zk_preferred_success_means_the_preferred_replica_leads(state):
    for p in predict(state, ElectionType.PREFERRED, None, state.mode):
        if p.outcome is Outcome.ELECTED:
            assert p.leader_after == state.partitions[p.tp].replicas[0]


@given(cluster_states(), election_types)
def test_below_min_isr_follows_the_isr_after_the_election(state, election_type):
    for p in predict(state, election_type, None, state.mode):
        assert p.below_min_isr == is_under_min_isr(p.isr_after, state.min_isr(p.tp))


@given(cluster_states(), election_types)
def test_electing_again_after_a_success_is_not_needed(state, election_type):
    first = predict(state, election_type, None, state.mode)
    after = apply(state, first)
    again = {p.tp: p for p in predict(after, election_type, None, state.mode)}
    for p in first:
        if p.outcome is not Outcome.ELECTED or p.leader_after == NO_LEADER:
            continue
        preferred_now = p.leader_after == state.partitions[p.tp].replicas[0]
        if election_type is ElectionType.UNCLEAN or preferred_now:
            assert again[p.tp].outcome is Outcome.ALREADY_ELECTED
        else:  # KRaft's non-preferred fallback: the preferred replica is still not valid, the new leader is
            assert state.mode is ControllerMode.KRAFT
            assert again[p.tp].error_code == E.PREFERRED_LEADER_NOT_AVAILABLE


@given(cluster_states(), election_types)
def test_apply_changes_exactly_the_elected_partitions(state, election_type):
    predictions = predict(state, election_type, None, state.mode)
    after = apply(state, predictions)
    assert after.partitions.keys() == state.partitions.keys()
    for p in predictions:
        changed = after.partitions[p.tp]
        assert changed.replicas == state.partitions[p.tp].replicas
        assert (changed.leader, changed.isr, changed.elr) == (p.leader_after, p.isr_after, p.elr_after)
        if p.outcome is not Outcome.ELECTED:
            assert changed is state.partitions[p.tp]


@given(cluster_states())
def test_preferred_elections_elect_the_preferred_replica_where_it_is_fixable(state):
    """ZooKeeper mode: exactly the fixable partitions. KRaft also elects it from the ELR or as the last
    known leader, both only when the ISR is empty. Offline log directories are outside `is_fixable`."""
    clean = {tp for tp, p in state.partitions.items() if not p.offline_replicas}
    predictions = predict(state, ElectionType.PREFERRED, None, state.mode)
    to_preferred = clean & {p.tp for p in predictions if p.outcome is Outcome.ELECTED
                            and p.leader_after == state.partitions[p.tp].replicas[0]}
    fixable = set(fixable_by_preferred(state)) & clean
    assert fixable <= to_preferred
    if state.mode is ControllerMode.ZK:
        assert to_preferred == fixable
    assert all(not state.partitions[tp].isr for tp in to_preferred - fixable)
    assert not set(fixable_by_preferred(apply(state, predictions))) & clean


@given(cluster_states(modes=(ControllerMode.KRAFT,)), st.sampled_from([None, False, True]))
def test_clean_leaders_are_the_replicas_a_kraft_election_takes_without_data_loss(state, elr_enabled):
    """`clean_leaders` (status, the unclean warnings, can-stop) names exactly the replicas a KRaft controller
    elects cleanly once they are the only live broker, whether the cluster reports ELR on, off or unknown."""
    for p in state.partitions.values():
        leaderless = p._replace(leader=NO_LEADER, offline_replicas=())
        for replica in p.replicas:
            decision = decide(leaderless, ElectionType.UNCLEAN, ControllerMode.KRAFT, frozenset({replica}),
                              elr_enabled)
            clean = decision.leader == replica and not decision.unclean
            assert clean == (replica in clean_leaders(p.isr, p.elr)), (p, replica)
