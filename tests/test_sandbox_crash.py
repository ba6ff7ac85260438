"""The sandbox crashes a node as Kafka does (reference/kafka-4.1.0-crash-window.txt, recorded on real 4.1.0 with
dedicated controllers): a broker killed with SIGKILL refuses connections from the first millisecond, yet
DescribeCluster and Metadata list it alive, leading and in every ISR until broker.session.timeout.ms has passed;
then it is fenced and leaves the ISRs (per the release's ELR rules). A killed controller stops fetching: its last
caught-up time stops and its lag grows; a killed quorum leader leaves the quorum without one for the followers'
fetch timeout. Each read here is a client's, over the wire."""

from __future__ import annotations

import socket
import subprocess
import time
from collections.abc import Callable

import pytest
from test_roll import KL
from test_sandbox_quorum import describe_quorum, wait_for
from test_sandbox_quorum import metadata as read_metadata

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer

SESSION_S = 1.0  # broker.session.timeout.ms, shortened: the window is timed from the kill


def refused(sb: Sandbox, broker: int) -> bool:
    try:
        socket.create_connection(sb.brokers[broker], timeout=1).close()
    except ConnectionRefusedError:
        return True
    return False


def metadata(sb: Sandbox, via: int) -> object:
    return read_metadata(sb.brokers[via])


def listed(answer: object) -> set[int]:
    return {b.node_id for b in answer.brokers}


def isrs(answer: object) -> dict[int, list[int]]:
    return {p.partition_index: list(p.isr_nodes) for t in answer.topics for p in t.partitions}


def test_a_killed_broker_is_refused_at_once_listed_until_its_session_times_out_then_fenced(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, broker_session_timeout_s=SESSION_S, topics={"t": {p: [1, 2, 3] for p in range(4)}})
    sb.set_leader("t", 1, 2)
    sb.kill_broker(2)
    killed = time.monotonic()
    assert refused(sb, 2)  # from the first moment
    during = metadata(sb, 1)
    assert time.monotonic() - killed < SESSION_S, "the machine was too slow to look inside the window"
    assert listed(during) == {1, 2, 3} and all(2 in isr for isr in isrs(during).values())
    assert {p.partition_index: p.leader_id for t in during.topics for p in t.partitions}[1] == 2  # nothing handed over
    wait_for(lambda: 2 not in listed(metadata(sb, 1)))
    assert time.monotonic() - killed >= SESSION_S * 0.9  # not before its session timed out
    after = metadata(sb, 3)
    assert all(isr == [1, 3] for isr in isrs(after).values())
    assert {p.partition_index: p.leader_id for t in after.topics for p in t.partitions}[1] in (1, 3)


@pytest.mark.parametrize("version, isr, elr", [("4.1", [], [3]), ("4.0", [3], [])])
def test_the_last_in_sync_replica_killed_is_fenced_by_the_release_s_elr_rule(
        sandbox_factory: Callable[..., Sandbox], version: str, isr: list[int], elr: list[int]) -> None:
    """The crash ends as a stop does once fenced: 4.1 (ELR on) empties the ISR and keeps the replica eligible,
    4.0 (ELR off) keeps it in the ISR (reference/kafka-4.0.0-leaderless-elr-*.txt)."""
    sb = sandbox_factory(3, kafka_version=version, broker_session_timeout_s=SESSION_S, topics={"t": {0: [3, 1, 2]}})
    sb.set_isr("t", 0, [3])
    sb.kill_broker(3)
    assert sb.partition_state("t", 0).isr == (3,)  # unnoticed yet
    wait_for(lambda: 3 not in sb.live_brokers)
    state = sb.partition_state("t", 0)
    assert (state.leader, list(state.isr), list(state.elr)) == (-1, isr, elr)


def test_a_broker_back_before_its_session_timed_out_was_never_fenced(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, broker_session_timeout_s=30, topics={"t": {0: [1, 2, 3]}})
    sb.kill_broker(2)
    assert refused(sb, 2)
    sb.start_broker(2)
    assert not refused(sb, 2) and sb.partition_state("t", 0).isr == (1, 2, 3)


def _voters(answer: object) -> dict[int, tuple[int, int]]:
    partition = answer.topics[0].partitions[0]
    return {v.replica_id: (v.log_end_offset, v.last_caught_up_timestamp) for v in partition.current_voters}


def test_a_killed_follower_controller_stops_fetching_and_falls_behind(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, topics={"t": {0: [1, 2, 3]}})
    sb.kill_controller(1001)
    assert sb.quorum_leader == 1000
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(sb.cluster.controller_addresses[1001], timeout=1).close()
    first = _voters(describe_quorum(sb.brokers[1]))
    sb.set_leader("t", 0, 2)  # a record appended
    time.sleep(0.05)  # (a timestamp in ms must move on)
    second = _voters(describe_quorum(sb.brokers[1]))
    assert second[1001] == first[1001]  # its log end and last caught-up time stopped
    assert second[1002][1] > first[1002][1] and second[1000][0] > first[1000][0]  # the others' went on
    assert second[1000][0] > second[1001][0]  # its lag grows


def test_a_killed_quorum_leader_leaves_no_leader_for_the_fetch_timeout(sandbox_factory: Callable[..., Sandbox]
                                                                        ) -> None:
    sb = sandbox_factory(3, quorum_fetch_timeout_s=0.5)
    epoch = sb.cluster.quorum_epoch
    sb.kill_controller(1000)
    killed = time.monotonic()
    assert sb.quorum_leader == -1
    wait_for(lambda: sb.quorum_leader != -1)
    assert time.monotonic() - killed >= 0.45
    assert sb.quorum_leader == 1001 and sb.cluster.quorum_epoch == epoch + 1


def test_a_killed_voter_in_combined_mode_stops_fetching_though_still_listed(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, combined=True, broker_session_timeout_s=30, quorum_fetch_timeout_s=0.5)
    follower = next(v for v in (1, 2, 3) if v != sb.quorum_leader)
    sb.kill_broker(follower)
    first = _voters(describe_quorum(sb.brokers[sb.quorum_leader]))
    time.sleep(0.05)
    second = _voters(describe_quorum(sb.brokers[sb.quorum_leader]))
    assert second[follower] == first[follower] and follower in sb.live_brokers
    sb.start_broker(follower)  # back before its session timed out: it fetches again
    wait_for(lambda: _voters(describe_quorum(sb.brokers[sb.quorum_leader]))[follower][1] > first[follower][1])
    leader = sb.quorum_leader
    sb.kill_broker(leader)
    assert sb.quorum_leader == -1 and leader in sb.live_brokers  # no leader for the fetch timeout, though listed
    wait_for(lambda: sb.quorum_leader != -1)
    assert sb.quorum_leader in {1, 2, 3} - {leader}


def test_sandbox_ctl_kills_a_broker_and_a_controller(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, broker_session_timeout_s=30)
    control = ControlServer(sb, catch_up_seconds=0).start()
    try:
        def ctl(*args: str) -> str:
            done = subprocess.run([KL, "sandbox-ctl", "--control", control.path, *args], capture_output=True,
                                  text=True, timeout=60)
            assert done.returncode == 0, done.stderr
            return done.stdout.strip()

        assert ctl("kill-broker", "2") == "1:up 2:down 3:up"
        assert 2 in sb.live_brokers and refused(sb, 2)  # down, though the controller lists it yet
        assert ctl("kill-controller", "1001") == "1000:leader 1001:down 1002:up"
        assert ctl("start-broker", "2") == "1:up 2:up 3:up"
    finally:
        control.stop()


def test_bad_crash_timeouts_are_refused() -> None:
    with pytest.raises(ValueError, match="broker_session_timeout_s must be from 0 to 3600 s"):
        Sandbox(3, broker_session_timeout_s=-1)
    with pytest.raises(ValueError, match="quorum_fetch_timeout_s"):
        Sandbox(3, quorum_fetch_timeout_s=1e9)
