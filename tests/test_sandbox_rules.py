"""The controller rules of `sandbox.controller`, case by case and as invariants over random histories."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leader_election_cli.sandbox.controller.cluster import Cluster, round_robin_assignment
from leader_election_cli.sandbox.controller.elections import PREFERRED, UNCLEAN
from leader_election_cli.sandbox.controller.model import Partition
from leader_election_cli.sandbox.controller.partition_change import (
    ElectionKind,
    expanded_isr,
    kraft_partition_change,
)

LIVE = {1, 2, 3}.__contains__


def change(p: Partition, kind: ElectionKind, live=LIVE, min_isr: int = 1, elr: bool = True):
    return kraft_partition_change(p, kind, live, elr_enabled=elr, min_isr=min_isr)


def test_kraft_preferred_elects_the_first_replica_when_valid() -> None:
    assert change(Partition([1, 2, 3], [1, 2, 3], 2), ElectionKind.PREFERRED).leader == 1


def test_kraft_preferred_keeps_a_valid_leader_when_the_first_replica_is_not() -> None:
    assert change(Partition([1, 2, 3], [2, 3], 2), ElectionKind.PREFERRED) is None


def test_kraft_preferred_falls_back_to_the_other_replicas_when_leaderless() -> None:
    result = change(Partition([1, 2, 3], [2, 3], -1), ElectionKind.PREFERRED, live={2, 3}.__contains__)
    assert (result.leader, result.isr) == (2, [2, 3])


def test_kraft_elects_from_the_elr_when_the_isr_is_empty() -> None:
    result = change(Partition([1, 2, 3], [], -1, elr=[3], last_known_elr=[1]), ElectionKind.ONLINE, min_isr=2)
    assert (result.leader, result.isr, result.elr, result.last_known_elr) == (3, [3], [], [])


def test_kraft_last_known_leader_when_isr_and_elr_are_empty() -> None:
    result = change(Partition([1, 2], [], -1, last_known_elr=[2]), ElectionKind.ONLINE)
    assert (result.leader, result.isr) == (2, [2])
    assert change(Partition([1, 2], [], -1, last_known_elr=[2]), ElectionKind.ONLINE, live={1}.__contains__) is None


def test_kraft_unclean_takes_the_first_live_replica_with_isr_of_one() -> None:
    p = Partition([1, 2, 3], [1], -1)
    assert change(p, ElectionKind.ONLINE, live={3}.__contains__, elr=False) is None
    result = change(p, ElectionKind.UNCLEAN, live={3}.__contains__, elr=False)
    assert (result.leader, result.isr) == (3, [3])


@pytest.mark.parametrize(("leaderless_rule", "last_known"), [(False, []), (True, [1])], ids=["4.1", "4.2"])
def test_a_change_that_takes_the_leader_away_keeps_it_as_the_last_known_leader_from_4_2(
        leaderless_rule: bool, last_known: list[int]) -> None:
    """Leader 1 goes with 2 still in the ISR but not able to lead: 4.2's record (commit 162db130f6) keeps 1 as
    the last known leader although the ISR is not empty; 4.1's keeps it only when a change empties the ISR."""
    result = kraft_partition_change(Partition([1, 2], [1, 2], 1), ElectionKind.ONLINE, {3}.__contains__,
                                    elr_enabled=True, min_isr=1, target_isr=[2], leaderless_rule=leaderless_rule)
    assert (result.leader, result.isr, result.last_known_elr) == (-1, [2], last_known)


@pytest.mark.parametrize(("leaderless_rule", "last_known"), [(False, []), (True, [3])], ids=["4.1", "4.2"])
def test_only_a_change_that_names_a_leader_clears_the_last_known_leader_from_4_2(
        leaderless_rule: bool, last_known: list[int]) -> None:
    """An ISR change that keeps leader 1: 4.1 clears a stale last known leader, 4.2 leaves it."""
    result = kraft_partition_change(Partition([1, 2], [1], 1, last_known_elr=[3]), ElectionKind.ONLINE, LIVE,
                                    elr_enabled=True, min_isr=1, target_isr=[1, 2], leaderless_rule=leaderless_rule)
    assert (result.leader, result.isr, result.last_known_elr) == (1, [1, 2], last_known)


@pytest.mark.parametrize(("by_broker_id", "isr"), [(False, [5, 6, 4]), (True, [4, 5, 6])], ids=["4.1", "4.2"])
def test_a_replica_that_catches_up_is_appended_or_listed_by_broker_id(by_broker_id: bool, isr: list[int]) -> None:
    """kafka-4.1.0- and kafka-4.2.0-leaderless-elr-on.txt, step 6: rf3-min2 led by 5, a (4) rejoins."""
    assert expanded_isr([5, 6], [4], by_broker_id) == isr
    assert expanded_isr([5, 6], [6], by_broker_id) == [5, 6]


def test_round_robin_matches_kafkas_fixed_start() -> None:
    assert round_robin_assignment([1, 2, 3], 4, 2) == {0: [1, 2], 1: [2, 3], 2: [3, 1], 3: [1, 3]}


@pytest.mark.parametrize("mode, elr, isr_after", [("zk", True, (1,)), ("kraft", False, (1,)), ("kraft", True, ())])
def test_the_last_isr_member_stopping(mode: str, elr: bool, isr_after: tuple[int, ...]) -> None:
    cluster = Cluster([1, 2], mode, elr=elr)
    cluster.create_topic("t", {0: [1, 2]})
    cluster.edit("t", 0, isr=[1])
    cluster.stop_broker(1)
    state = cluster.partition_state("t", 0)
    assert (state.leader, state.isr) == (-1, isr_after)


@pytest.mark.parametrize("mode", ["zk", "kraft"])
def test_topic_unclean_config_elects_out_of_sync_replicas_on_failure(mode: str) -> None:
    cluster = Cluster([1, 2], mode)
    cluster.create_topic("t", {0: [1, 2]}, {"unclean.leader.election.enable": "true"})
    cluster.edit("t", 0, isr=[1])
    cluster.stop_broker(1)
    state = cluster.partition_state("t", 0)
    assert (state.leader, state.isr) == (2, (2,))


def test_zk_controller_fails_over_to_the_lowest_live_broker() -> None:
    cluster = Cluster([1, 2, 3], "zk")
    cluster.stop_broker(1)
    assert cluster.controller_id == 2
    cluster.stop_broker(2)
    cluster.stop_broker(3)
    assert cluster.controller_id == -1
    cluster.start_broker(3)
    assert cluster.controller_id == 3


def test_kraft_duplicates_are_judged_against_the_state_before_the_request() -> None:
    cluster = Cluster([1, 2], "kraft", max_records_per_request=1)
    cluster.create_topic("t", {0: [1, 2]})
    cluster.edit("t", 0, leader=2)
    answer = cluster.elect_leaders(PREFERRED, [("t", [0, 0])], broker=1)
    assert answer.error_code == 44  # two records for one partition exceed a limit of one
    answer = Cluster([1], "zk").elect_leaders(UNCLEAN, [("t", [0, 0])], broker=1)
    assert [(name, [i.partition for i in items]) for name, items in answer.results] == [("t", [0])]


def test_unknown_election_type() -> None:
    cluster = Cluster([1], "kraft")
    answer = cluster.elect_leaders(7, [("t", [0])], broker=1)
    assert answer.error_code == 42 and answer.results[0][1][0].message == "Unknown election type 7"
    assert Cluster([1], "zk").elect_leaders(7, None, broker=1).error_code == -1


def test_kraft_an_empty_partition_list_is_nothing_to_do_whatever_the_election_type() -> None:
    """QuorumController.electLeaders answers an empty (not null) list before reading the election type."""
    answer = Cluster([1], "kraft").elect_leaders(7, [], broker=1)
    assert (answer.error_code, answer.results) == (0, [])


def epoch(cluster: Cluster, partition: int = 0) -> int:
    return cluster.topics["t"].partitions[partition].leader_epoch


def test_zk_a_follower_leaving_the_isr_bumps_the_leader_epoch() -> None:
    """doRemoveReplicasFromIsr writes leaderAndIsr.newLeaderAndIsr: epoch + 1 even when the leader stays."""
    cluster = Cluster([1, 2, 3], "zk")
    cluster.create_topic("t", {0: [1, 2, 3], 1: [1, 2]})
    cluster.stop_broker(3)
    assert [(cluster.partition_state("t", p).isr, epoch(cluster, p)) for p in (0, 1)] == [((1, 2), 1), ((1, 2), 0)]
    kraft = Cluster([1, 2, 3], "kraft")  # a KRaft ISR shrink without a leader change keeps the epoch
    kraft.create_topic("t", {0: [1, 2, 3]})
    kraft.stop_broker(3)
    assert (kraft.partition_state("t", 0).isr, epoch(kraft)) == ((1, 2), 0)


def test_kraft_a_partition_named_twice_is_two_records_and_two_epoch_bumps() -> None:
    cluster = Cluster([1, 2], "kraft")
    cluster.create_topic("t", {0: [1, 2]})
    cluster.edit("t", 0, leader=2)
    before = epoch(cluster)
    answer = cluster.elect_leaders(PREFERRED, [("t", [0, 0])], broker=1)
    assert [i.error_code for i in answer.results[0][1]] == [0, 0]
    assert (cluster.partition_state("t", 0).leader, epoch(cluster)) == (1, before + 2)


@pytest.mark.parametrize("mode, target, leader, bumps", [
    ("kraft", [2, 1, 3], 1, 0),  # a reorder: no replica leaves, the leader stays
    ("kraft", [1, 2], 1, 1),     # a follower leaves: triggerLeaderEpochBumpForReplicaReassignmentIfNeeded
    ("kraft", [2, 3], 2, 1),     # the leader leaves: one bump, the leader change's
    ("zk", [2, 1, 3], 1, 1),     # B3: the leader stays, with a new epoch
    ("zk", [1, 2], 1, 2),        # B3, then B4 removes 3 from the ISR
    ("zk", [2, 3], 2, 2),        # B3 elects 2, then B4 removes 1 from the ISR
])
def test_leader_epochs_across_a_reassignment(mode: str, target: list[int], leader: int, bumps: int) -> None:
    cluster = Cluster([1, 2, 3], mode)
    cluster.create_topic("t", {0: [1, 2, 3]})
    assert cluster.alter_reassignment("t", 0, target) == (0, None)
    state = cluster.partition_state("t", 0)
    assert (state.replicas, state.isr, state.leader, epoch(cluster)) == (
        tuple(target), tuple(r for r in (1, 2, 3) if r in target), leader, bumps)


def off_preferred(cluster: Cluster, partitions: int, off: int, topic: str = "t") -> None:
    """A topic whose partitions all prefer broker 1; the first `off` of them led by broker 2."""
    cluster.create_topic(topic, {p: [1, 2, 3] for p in range(partitions)})
    for p in range(off):
        cluster.edit(topic, p, leader=2)


@pytest.mark.parametrize("off, moved", [(1, 0), (2, 2)])
def test_zk_auto_rebalance_acts_only_above_the_per_broker_percentage(off: int, moved: int) -> None:
    """checkAndTriggerAutoLeaderRebalance: 1 of 10 is not above 10%; 2 of 10 is, and both move."""
    cluster = Cluster([1, 2, 3], "zk")
    off_preferred(cluster, 10, off)
    assert cluster.rebalance_leaders() == moved
    assert sum(cluster.partition_state("t", p).leader == 1 for p in range(10)) == 10 - off + moved


def test_zk_auto_rebalance_skips_a_preferred_replica_out_of_the_isr_and_waits_for_reassignments() -> None:
    cluster = Cluster([1, 2, 3], "zk", broker_configs={"leader.imbalance.per.broker.percentage": "0"})
    off_preferred(cluster, 4, 2)
    cluster.edit("t", 0, isr=[2, 3])
    cluster.create_topic("moving", {0: [2, 3]})
    assert cluster.alter_reassignment("moving", 0, [1, 2, 3]) == (0, None)  # pending: it adds broker 1
    assert cluster.rebalance_leaders() == 0  # partitionsBeingReassigned is not empty
    cluster.finish_reassignment("moving", 0)  # replicas [1, 2, 3], still led by 2
    assert cluster.rebalance_leaders() == 2
    assert [cluster.partition_state(t, p).leader for t, p in (("t", 0), ("t", 1), ("moving", 0))] == [2, 1, 1]


def test_kraft_auto_rebalance_has_no_threshold_and_no_batch_limit_in_effect() -> None:
    """maybeBalancePartitionLeaders: every imbalanced partition, 1000 records a pass, passes at once."""
    cluster = Cluster([1, 2, 3], "kraft")
    off_preferred(cluster, 10, 1)
    off_preferred(cluster, 2500, 2500, topic="wide")
    cluster.stop_broker(1)
    cluster.start_broker(1)  # every leader is now off broker 1
    assert cluster.rebalance_leaders() == 2510
    assert all(cluster.partition_state(t, p).leader == 1 for t, n in (("t", 10), ("wide", 2500)) for p in range(n))


def test_kraft_auto_rebalance_leaves_a_partition_whose_preferred_replica_cannot_lead() -> None:
    cluster = Cluster([1, 2, 3], "kraft")
    off_preferred(cluster, 2, 2)
    cluster.edit("t", 0, isr=[2, 3])
    assert cluster.rebalance_leaders() == 1
    assert [cluster.partition_state("t", p).leader for p in range(2)] == [2, 1]


operations = st.lists(st.tuples(st.sampled_from(["stop", "start", "start-out", "preferred", "unclean"]),
                                st.integers(1, 4)), max_size=25)


@settings(max_examples=60, deadline=None)
@given(mode=st.sampled_from(["zk", "kraft-elr", "kraft"]), ops=operations, min_isr=st.integers(1, 3))
def test_leadership_invariants_hold_over_any_history(mode: str, ops: list[tuple[str, int]], min_isr: int) -> None:
    cluster = Cluster([1, 2, 3, 4], mode.split("-")[0], elr=mode == "kraft-elr")
    cluster.create_topic("t", round_robin_assignment([1, 2, 3, 4], 8, 3), {"min.insync.replicas": str(min_isr)})
    for op, broker in ops:
        if op == "stop":
            cluster.stop_broker(broker)
        elif op.startswith("start"):
            cluster.start_broker(broker, rejoin_isr=op == "start")
        else:
            cluster.elect_leaders(PREFERRED if op == "preferred" else UNCLEAN, None, broker=cluster.controller_id)
        for pid in range(8):
            p = cluster.partition_state("t", pid)
            assert set(p.isr) <= set(p.replicas) and len(set(p.isr)) == len(p.isr)
            assert p.leader == -1 or (p.leader in cluster.live and p.leader in p.isr)
            assert not set(p.elr) & set(p.isr)
            if mode != "kraft-elr":
                assert p.isr and not p.elr
            if p.leader == -1:  # leaderless only when no live replica may lead without losing data
                assert not [r for r in p.isr if r in cluster.live]
                assert p.isr or not [r for r in p.elr if r in cluster.live]
