"""The quorum rule for stopping KRaft controllers (`planning.quorum`): against Strimzi's count, written out
here independently, on generated quorums; and on the DescribeQuorum answers of a real 4.1.0 cluster with
three dedicated controllers (reference/kafka-4.1.0-dedicated-controllers.txt)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from leader_election_cli.model import QuorumReplica, QuorumState
from leader_election_cli.planning.quorum import back_in_quorum, leader_time, quorum_verdict

NOW = 1_795_881_991_797


@st.composite
def quorums(draw: st.DrawFn) -> QuorumState:
    ids = draw(st.lists(st.integers(1, 200), min_size=1, max_size=7, unique=True))
    leader = draw(st.sampled_from([*ids, -1]))
    end = draw(st.integers(0, 10_000))
    voters = []
    for node in ids:
        if node == leader:
            voters.append(QuorumReplica(node, end, NOW, NOW))
            continue
        known = draw(st.booleans())
        age, behind = draw(st.integers(0, 5000)), draw(st.integers(0, 3000))
        voters.append(QuorumReplica(node, end - draw(st.integers(0, 50)) if known else -1,
                                    NOW - age if known else -1, NOW - age - behind if known else -1))
    return QuorumState(leader, draw(st.integers(1, 9)), end, tuple(voters))


def strimzi_can_roll(q: QuorumState, node: int, timeout_ms: int) -> bool:
    """KafkaQuorumCheck.isQuorumHealthyWithoutNode, for 3 voters or more: the voters but `node` that are the
    leader or caught up within the timeout of the leader's time, at least (voters + 2) / 2 of them."""
    if q.leader < 0:
        return False
    times = {v.node: v.last_caught_up_ms for v in q.voters}
    leader_time_ms = times[q.leader]
    caught = [n for n, t in times.items()
              if t >= 0 and (n == q.leader or leader_time_ms - t < timeout_ms) and n != node]
    return len(caught) >= (len(times) + 2) // 2


@given(quorums(), st.data(), st.sampled_from([500, 2000, 5000]))
def test_the_rule_is_strimzis_count_and_never_stops_the_leader_while_a_voter_lags(q: QuorumState, data: st.DataObject,
                                                                                    timeout: int) -> None:
    node = data.draw(st.sampled_from(q.voter_ids))
    verdict = quorum_verdict(q, [node], timeout)
    others_lag = [v for v in verdict.voters if v.node != node and not v.caught_up]
    expected = strimzi_can_roll(q, node, timeout) if len(q.voters) >= 3 else False
    if node == q.leader and others_lag:
        expected = False
    assert verdict.safe == expected, verdict
    assert verdict.needed == len(q.voters) // 2 + 1
    assert verdict.nodes == (node,)
    for check in verdict.voters:
        replica = q.voter(check.node)
        assert replica is not None
        if q.leader >= 0 and replica.log_end_offset >= 0:
            assert check.lag == q.high_watermark - replica.log_end_offset
        assert check.caught_up_age_ms == (None if replica.last_caught_up_ms < 0 or q.leader < 0
                                          else NOW - replica.last_caught_up_ms)


@given(quorums())
def test_stopping_no_voter_or_a_non_voter_is_safe_whenever_there_is_a_leader(q: QuorumState) -> None:
    assert quorum_verdict(q, [9999]).safe == (q.leader >= 0)
    assert quorum_verdict(q, [9999]).nodes == ()


def recorded(rows: list[tuple[int, int, int, int]], leader: int, epoch: int) -> QuorumState:
    """Rows of `kafka-metadata-quorum.sh describe --replication`: NodeId, LogEndOffset, LastFetchTimestamp,
    LastCaughtUpTimestamp."""
    end = next(r[1] for r in rows if r[0] == leader)
    return QuorumState(leader, epoch, end, tuple(QuorumReplica(*r) for r in rows))


# (b) follower controller 103 stopped at 16:06:12; the replication poll that ended 16:06:34
FOLLOWER_DOWN = recorded([(102, 486, 1795881991797, 1795881991797), (101, 486, 1795881991504, 1795881991504),
                          (103, 447, 1795881972387, 1795881971948)], leader=102, epoch=1)
# (c) leader 102 stopped: 101 leads epoch 2 and knows nothing of 102 (-1); the poll that ended 16:08:52
AFTER_FAILOVER = recorded([(101, 773, 1795882132396, 1795882132396), (102, -1, -1, -1),
                           (103, 773, 1795882131921, 1795882131921)], leader=101, epoch=2)


def test_on_the_recorded_cluster_a_second_controller_may_not_stop_while_one_is_down() -> None:
    for node in (101, 102):
        verdict = quorum_verdict(FOLLOWER_DOWN, [node])
        assert not verdict.safe and verdict.caught_up_after == 1 and verdict.needed == 2, verdict
    assert "behind or down: 103" in str(quorum_verdict(FOLLOWER_DOWN, [101]).reason)
    assert quorum_verdict(FOLLOWER_DOWN, [103]).safe  # already down: the other two are caught up
    lagging = next(v for v in quorum_verdict(FOLLOWER_DOWN, [103]).voters if v.node == 103)
    assert (lagging.lag, lagging.caught_up_age_ms, lagging.caught_up) == (39, 19849, False)
    after = quorum_verdict(AFTER_FAILOVER, [103])
    assert not after.safe and [(v.node, v.lag, v.caught_up_age_ms) for v in after.voters if v.node == 102] == \
        [(102, None, None)]


def test_a_restarted_voter_is_back_once_at_the_leaders_end_and_caught_up_after_the_mark() -> None:
    mark = leader_time(FOLLOWER_DOWN)
    assert mark == (1, 1795881991797)
    assert not back_in_quorum(FOLLOWER_DOWN, 103, 2000, mark)
    # 16:07:25.841: 103 at the leader's end, caught up (the poll that ended 16:07:32)
    back = recorded([(102, 610, 1795882051579, 1795882051579), (101, 610, 1795882051295, 1795882051295),
                     (103, 610, 1795882051303, 1795882051303)], leader=102, epoch=1)
    assert back_in_quorum(back, 103, 2000, mark)
    behind = recorded([(102, 610, 1795882051579, 1795882051579), (101, 610, 1795882051295, 1795882051295),
                       (103, 609, 1795882051303, 1795882051303)], leader=102, epoch=1)
    assert not back_in_quorum(behind, 103, 2000, mark)  # lag 1
    assert not back_in_quorum(back, 103, 2000, (1, 1795882051400))  # caught up before the mark: not since
    assert back_in_quorum(back, 103, 2000, (0, 1795882051400))  # a new epoch since: its times are new
    assert not back_in_quorum(AFTER_FAILOVER, 102, 2000, mark)  # -1: never fetched from the new leader
