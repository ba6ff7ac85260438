"""The KRaft controller quorum: DescribeQuorum's answer, and a cluster whose quorum has no leader.

A KRaft broker forwards what only the controller does (KafkaApis `forwardToController`: CreateTopics,
ElectLeaders, Alter/ListPartitionReassignments, DescribeQuorum) through its forwarding channel; with no active
controller the request waits in the channel's queue (NodeToControllerRequestThread looks for one every
100 ms) and, after the channel's retryTimeoutMs (60 s, BrokerServer), ForwardingManagerImpl.onTimeout answers
`getErrorResponse(new TimeoutException())`: REQUEST_TIMED_OUT. Metadata is answered from the broker's cache.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable

import pytest
from commands import DROP_IN, TOOLKIT
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DescribeQuorumRequest,
    DescribeQuorumResponse,
    ElectLeadersRequest,
    ListPartitionReassignmentsRequest,
    ListPartitionReassignmentsResponse,
)
from kafka.protocol.metadata import MetadataRequest, MetadataResponse
from test_sandbox import PREFERRED, call, codes, elect_raw

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer

REQUEST_TIMED_OUT = 7
ELECT_LEADERS = 43
FORWARDING_S = 0.5  # the brokers' forwarding timeout in these tests (Kafka: 60 s)


@pytest.fixture
def no_quorum(sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    """Dedicated controllers 1000-1002, two of them down: no quorum leader. t-0 is led by broker 2, not by
    its preferred replica 1 (the automatic rebalance is off so that only the tests move leaders)."""
    sb = sandbox_factory(3, topics={"t": {0: [1, 2, 3], 1: [2, 3, 1]}}, forwarding_timeout_s=FORWARDING_S,
                         broker_configs={"auto.leader.rebalance.enable": "false"})
    sb.set_leader("t", 0, 2)
    sb.stop_controller(1001)
    sb.stop_controller(1002)
    assert sb.quorum_leader == -1
    return sb


def refuses(address: tuple[str, int]) -> bool:
    try:
        socket.create_connection(address, timeout=2).close()
    except ConnectionRefusedError:
        return True
    return False


def describe_quorum(address: tuple[str, int], version: int = 2) -> object:
    partition = DescribeQuorumRequest.TopicData.PartitionData(partition_index=0)
    request = DescribeQuorumRequest(version=version, topics=[DescribeQuorumRequest.TopicData(
        topic_name="__cluster_metadata", partitions=[partition])])
    return call(address, request, DescribeQuorumResponse, version)


def metadata(address: tuple[str, int]) -> object:
    request = MetadataRequest(version=12, topics=[MetadataRequest.MetadataRequestTopic(name="t", topic_id=None)],
                              allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    return call(address, request, MetadataResponse, 12)


def test_without_a_quorum_leader_an_election_times_out_at_the_broker_and_nothing_is_elected(no_quorum: Sandbox) -> None:
    sb = no_quorum
    started = time.monotonic()
    response = elect_raw(sb.brokers[1], PREFERRED, {"t": [0]})
    assert time.monotonic() - started >= FORWARDING_S  # held in the forwarding queue first
    assert response.error_code == REQUEST_TIMED_OUT
    assert codes(response) == {("t", 0): (REQUEST_TIMED_OUT, None)}  # ElectLeadersRequest.getErrorResponse
    assert sb.partition_state("t", 0).leader == 2
    # the broker's own answers still come, from its metadata cache
    started = time.monotonic()
    leaders = [p.leader_id for p in metadata(sb.brokers[3]).topics[0].partitions]
    assert leaders == [2, 2] and time.monotonic() - started < FORWARDING_S


def test_in_combined_mode_two_voters_down_leave_no_controller_to_elect(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(5, topics={"t": {0: [4, 5]}}, combined=True, forwarding_timeout_s=FORWARDING_S,
                         broker_configs={"auto.leader.rebalance.enable": "false"})
    sb.set_leader("t", 0, 5)
    sb.stop_broker(1)
    sb.stop_broker(2)  # voters 1 and 2 of 1, 2, 3
    assert codes(elect_raw(sb.brokers[4], PREFERRED, {"t": [0]})) == {("t", 0): (REQUEST_TIMED_OUT, None)}
    assert sb.partition_state("t", 0).leader == 5


REQUESTS = {
    "CreateTopics": (CreateTopicsRequest(version=5, topics=[CreateTopicsRequest.CreatableTopic(
        name="new", num_partitions=1, replication_factor=1, assignments=[], configs=[])], timeout_ms=5000,
        validate_only=False), CreateTopicsResponse, 5,
        lambda r: [(t.name, t.error_code) for t in r.topics] == [("new", REQUEST_TIMED_OUT)]),
    "AlterPartitionReassignments": (AlterPartitionReassignmentsRequest(version=0, timeout_ms=5000, topics=[
        AlterPartitionReassignmentsRequest.ReassignableTopic(name="t", partitions=[
            AlterPartitionReassignmentsRequest.ReassignableTopic.ReassignablePartition(partition_index=0,
                                                                                    replicas=[2, 1, 3])])]),
        AlterPartitionReassignmentsResponse, 0,
        lambda r: (r.error_code, [p.error_code for t in r.responses for p in t.partitions])
        == (REQUEST_TIMED_OUT, [REQUEST_TIMED_OUT])),
    "ListPartitionReassignments": (ListPartitionReassignmentsRequest(version=0, timeout_ms=5000, topics=None),
                                   ListPartitionReassignmentsResponse, 0,
                                   lambda r: (r.error_code, r.topics) == (REQUEST_TIMED_OUT, [])),
    "DescribeQuorum": (None, DescribeQuorumResponse, 2,  # DescribeQuorumRequest.getTopLevelErrorResponse
                       lambda r: (r.error_code, r.topics, r.nodes) == (REQUEST_TIMED_OUT, [], [])),
}


@pytest.mark.parametrize("api", sorted(REQUESTS))
def test_every_request_for_the_controller_times_out_without_one(no_quorum: Sandbox, api: str) -> None:
    request, response_class, version, expected = REQUESTS[api]
    if request is None:
        response = describe_quorum(no_quorum.brokers[2])
    else:
        response = call(no_quorum.brokers[2], request, response_class, version)
    assert expected(response), response
    assert "new" not in no_quorum.cluster.topics
    assert no_quorum.partition_state("t", 0).replicas == (1, 2, 3)


def test_a_held_request_is_forwarded_once_a_quorum_leader_is_elected(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, topics={"t": {0: [1, 2, 3]}}, forwarding_timeout_s=30,
                         broker_configs={"auto.leader.rebalance.enable": "false"})
    sb.set_leader("t", 0, 2)
    sb.stop_controller(1000)
    sb.stop_controller(1001)
    answers: list[object] = []
    asker = threading.Thread(target=lambda: answers.append(elect_raw(sb.brokers[1], PREFERRED, {"t": [0]})))
    asker.start()
    wait_for(lambda: sb.request_count(ELECT_LEADERS) == 1)
    assert sb.partition_state("t", 0).leader == 2  # held: no controller to take it
    sb.start_controller(1001)  # a majority again: 1001 leads
    asker.join(timeout=30)
    assert [codes(a) for a in answers] == [{("t", 0): (0, None)}]
    assert sb.partition_state("t", 0).leader == 1 and sb.quorum_leader == 1001


def wait_for(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_a_request_the_client_gave_up_on_is_still_carried_out_when_a_leader_comes(no_quorum: Sandbox) -> None:
    """The broker's forwarding queue does not know the client left: the election happens after all."""
    sb = no_quorum
    sb.settings.forwarding_timeout_s = 30
    with pytest.raises(TimeoutError), socket.create_connection(sb.brokers[1], timeout=5) as sock:
        request = elect_request_frame()
        sock.sendall(request)
        sock.settimeout(0.2)
        sock.recv(4)
    sb.start_controller(1002)
    wait_for(lambda: sb.partition_state("t", 0).leader == 1)


def elect_request_frame() -> bytes:
    request = ElectLeadersRequest(version=2, election_type=PREFERRED, timeout_ms=5000, topic_partitions=[
        ElectLeadersRequest.TopicPartitions(topic="t", partitions=[0])])
    request.with_header(correlation_id=1, client_id="gives-up")
    return request.encode(version=2, header=True, framed=True)


def test_a_broker_that_stops_drops_the_requests_it_held(no_quorum: Sandbox) -> None:
    sb = no_quorum
    sb.settings.forwarding_timeout_s = 30
    errors: list[BaseException] = []

    def elect() -> None:
        try:
            elect_raw(sb.brokers[3], PREFERRED, {"t": [0]})
        except (ConnectionError, OSError) as exc:
            errors.append(exc)

    asker = threading.Thread(target=elect)
    asker.start()
    wait_for(lambda: sb.request_count(ELECT_LEADERS) == 1)
    sb.stop_broker(3)
    asker.join(timeout=10)
    assert errors and not asker.is_alive()
    wait_for(lambda: sb.open_connections() == 0)  # its held request ended with it
    sb.start_controller(1001)
    assert sb.partition_state("t", 0).leader == 2


def test_no_automatic_rebalance_without_an_active_controller(no_quorum: Sandbox) -> None:
    assert no_quorum.rebalance_leaders() == 0 and no_quorum.partition_state("t", 0).leader == 2
    no_quorum.start_controller(1001)
    assert no_quorum.rebalance_leaders() == 1 and no_quorum.partition_state("t", 0).leader == 1


def test_without_a_controller_a_stopped_broker_stays_in_the_metadata_until_one_is_elected(no_quorum: Sandbox) -> None:
    """Nobody fences it: the brokers' metadata still names it (as a broker, a leader, in the ISRs) while its
    listener refuses connections; the next active controller fences it (its heartbeats do not come)."""
    sb = no_quorum
    sb.stop_broker(2)  # t-0's leader
    answer = metadata(sb.brokers[1])
    assert [b.node_id for b in answer.brokers] == [1, 2, 3] and answer.topics[0].partitions[0].leader_id == 2
    assert sb.partition_state("t", 0).isr == (1, 2, 3) and refuses(sb.brokers[2])
    assert ControlServer(sb, 0).brokers() == {"1": "up", "2": "down", "3": "up"}  # sandbox-ctl status
    sb.start_controller(1001)
    assert (sb.partition_state("t", 0).leader, sb.partition_state("t", 0).isr) == (1, (1, 3))
    assert [b.node_id for b in metadata(sb.brokers[1]).brokers] == [1, 3]


def test_without_a_controller_a_started_broker_stays_fenced_until_one_is_elected(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, topics={"t": {0: [1, 2, 3]}}, broker_configs={"auto.leader.rebalance.enable": "false"})
    sb.stop_broker(3)
    sb.stop_controller(1000)
    sb.stop_controller(1001)
    sb.start_broker(3)
    assert not refuses(sb.brokers[3]) and 3 not in sb.live_brokers  # listening, fenced
    assert [b.node_id for b in metadata(sb.brokers[1]).brokers] == [1, 2]
    assert ControlServer(sb, 0).brokers()["3"] == "fenced"
    sb.start_broker(3)  # already running: nothing more
    sb.start_controller(1000)
    assert 3 in sb.live_brokers and sb.partition_state("t", 0).isr == (1, 2, 3)


def test_in_combined_mode_a_voter_stopped_without_a_quorum_does_not_count_towards_one(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(5, topics={"t": {0: [4, 5]}}, combined=True)
    for broker in (1, 2, 3):
        sb.stop_broker(broker)  # 3 stops without a quorum: still in the metadata, but not voting
    assert 3 in sb.live_brokers and not sb.cluster.is_running(3)
    sb.start_broker(1)
    assert sb.quorum_leader == -1 and 1 not in sb.live_brokers  # one voter of three: no leader, fenced
    sb.start_broker(2)
    assert sb.quorum_leader == 1 and sb.live_brokers == {1, 2, 4, 5}  # 1 and 2 unfenced, 3 fenced at last


def test_controller_nodes_are_only_the_dedicated_ones(sandbox_factory: Callable[..., Sandbox]) -> None:
    dedicated = sandbox_factory(3)
    with pytest.raises(KeyError, match="no such controller node: 1"):
        dedicated.stop_controller(1)
    combined = sandbox_factory(3, combined=True)
    with pytest.raises(ValueError, match="in combined mode stop and start brokers 1 to 3"):
        combined.stop_controller(1000)
    with pytest.raises(ValueError, match="forwarding_timeout_s"):
        Sandbox(3, forwarding_timeout_s=0)


# -- DescribeQuorum ----------------------------------------------------------------------------------

@pytest.mark.parametrize("combined", [False, True])
def test_describe_quorum_v2_names_the_voters_controller_listeners_and_directory_ids(
        sandbox_factory: Callable[..., Sandbox], combined: bool) -> None:
    """RaftUtil.singletonDescribeQuorumResponse: v2 has a Node per voter with its controller listener, and each
    replica's directory id: none (Uuid.ZERO) for the voters of a static quorum (kraft.version 0), a broker's
    log directory id for an observer. The leader's timestamps are now."""
    sb = sandbox_factory(4, combined=combined)
    voters = [1, 2, 3] if combined else [1000, 1001, 1002]
    before = int(time.time() * 1000)
    answer = describe_quorum(sb.brokers[4])
    partition = answer.topics[0].partitions[0]
    assert (answer.error_code, partition.leader_id) == (0, voters[0])
    assert [v.replica_id for v in partition.current_voters] == voters
    assert {v.replica_directory_id for v in partition.current_voters} == {None}  # kafka-python reads ZERO so
    observers = [4] if combined else [1, 2, 3, 4]
    assert [o.replica_id for o in partition.observers] == observers
    directories = [o.replica_directory_id for o in partition.observers]
    assert len(set(directories)) == len(observers) and all(isinstance(d, uuid.UUID) for d in directories)
    leader = partition.current_voters[0]
    assert leader.log_end_offset == partition.high_watermark and leader.last_fetch_timestamp >= before
    assert [n.node_id for n in answer.nodes] == voters
    listeners = [(n.listeners[0].name, n.listeners[0].host, n.listeners[0].port) for n in answer.nodes]
    assert all(name == "CONTROLLER" and host == "127.0.0.1" for name, host, _ in listeners)
    ports = {port for _, _, port in listeners}
    assert len(ports) == 3 and not ports & {port for _, port in sb.brokers.values()}
    if combined:  # the brokers' listeners serve; the controller ports refuse
        assert all(refuses(("127.0.0.1", port)) for port in ports)
    assert describe_quorum(sb.brokers[4], version=1).nodes in (None, [])  # Nodes is v2+


def test_a_stopped_voter_keeps_its_last_fetch_until_a_new_leader_forgets_it(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    """LeaderState keeps a voter's last fetch (its log end and time) once it stops; a leader elected later never
    saw it fetch: -1 for both. Each leader elected is a new epoch."""
    sb = sandbox_factory(5, topics={"t": {0: [4, 5]}}, combined=True)
    epoch = describe_quorum(sb.brokers[4]).topics[0].partitions[0].leader_epoch
    sb.stop_broker(3)
    sb.create_topic("later", assignment={0: [4]})  # the log grows after voter 3 stopped
    partition = describe_quorum(sb.brokers[4]).topics[0].partitions[0]
    stopped = {v.replica_id: v for v in partition.current_voters}[3]
    assert 0 < stopped.log_end_offset < partition.high_watermark and stopped.last_fetch_timestamp > 0
    assert partition.leader_epoch == epoch
    sb.move_controller(2)
    partition = describe_quorum(sb.brokers[4]).topics[0].partitions[0]
    stopped = {v.replica_id: v for v in partition.current_voters}[3]
    assert (stopped.log_end_offset, stopped.last_fetch_timestamp, stopped.last_caught_up_timestamp) == (-1, -1, -1)
    assert (partition.leader_id, partition.leader_epoch) == (2, epoch + 1)


# -- the commands against a cluster without an active controller ---------------------------------------

def test_both_commands_say_no_controller_answered_and_claim_no_election(no_quorum: Sandbox) -> None:
    """Exit 3 (timed out, README's exit codes), the reason named, no partition said to be elected."""
    sb = no_quorum
    runs = [subprocess.run([*command, "--bootstrap-server", sb.bootstrap_servers], capture_output=True, text=True,
                           timeout=60)
            for command in ([*DROP_IN, "--election-type", "preferred", "--topic", "t", "--partition", "0"],
                            [*TOOLKIT, "elect", "--topic", "t", "--output", "text", "--timeout", "10"])]
    for run in runs:
        assert run.returncode == 3, run.stderr
        assert "Successfully completed" not in run.stdout and "Traceback" not in run.stderr
        assert "Error completing leader election (PREFERRED) for partition: t-0: " in run.stdout
        assert "Stopped: Timed out while waiting for election results: no controller answered in time " \
               "(REQUEST_TIMED_OUT: no active controller to forward it to, as when the KRaft controller quorum " \
               "has no leader" in run.stderr
    drop_in, toolkit = runs
    assert drop_in.stdout.startswith("Timeout waiting for election results\n")  # Kafka's tool's line
    assert toolkit.stdout.startswith("Valid replica already elected for partitions t-1\n")  # not sent
    assert sb.partition_state("t", 0).leader == 2


def test_a_command_that_gives_up_first_says_the_request_may_still_be_carried_out(no_quorum: Sandbox) -> None:
    """Kafka's broker holds a forwarded request for 60 s, longer than the tools wait by default: the answer
    never comes, and the election may still happen once a controller is elected."""
    sb = no_quorum
    sb.settings.forwarding_timeout_s = 30
    held = "a KRaft broker passes this request to the active controller; without one, as when the controller " \
           "quorum has no leader, it holds the request up to 60 s, and a controller elected meanwhile still " \
           "carries it out"
    for command, what in (([*TOOLKIT, "elect", "--topic", "t", "--output", "text"], "waiting for election results"),
                          ([*TOOLKIT, "status"], "listing partition reassignments")):
        run = subprocess.run([*command, "--timeout", "1", "--bootstrap-server", sb.bootstrap_servers],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 3 and f"Timed out while {what} ({held})" in run.stderr, run.stderr
        assert "Successfully completed" not in run.stdout
    assert sb.partition_state("t", 0).leader == 2
    sb.start_controller(1001)  # the held election goes through after all
    wait_for(lambda: sb.partition_state("t", 0).leader == 1)


def voters(answer: object) -> dict[int, tuple[int, int, int]]:
    """Each voter's (log end offset, last fetch, last caught-up timestamp) in a DescribeQuorum answer."""
    partition = answer.topics[0].partitions[0]
    return {v.replica_id: (v.log_end_offset, v.last_fetch_timestamp, v.last_caught_up_timestamp)
            for v in partition.current_voters}


def test_a_restarted_controller_lags_then_catches_up_as_the_recorded_one_did(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    """reference/kafka-4.1.0-dedicated-controllers.txt (b): the stopped follower's log end offset and
    timestamps freeze while its lag grows; restarted, it is a voter again that first fetches nothing, then
    fetches while its last caught-up time stays the old one, then is caught up (lag 0, a fresh time). (c):
    after a failover the new leader knows nothing of the old one (-1s)."""
    sb = sandbox_factory(3, topics={"t": {0: [1, 2, 3]}})
    sb.stop_controller(1002)
    frozen = voters(describe_quorum(sb.brokers[1]))[1002]
    sb.create_topic("more", assignment={0: [1, 2, 3]})  # the leader's log grows
    answer = describe_quorum(sb.brokers[1])
    assert voters(answer)[1002] == frozen and answer.topics[0].partitions[0].high_watermark > frozen[0]
    sb.start_controller_catching_up(1002, 3)
    seen = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        answer = describe_quorum(sb.brokers[1])
        end, fetched, caught = voters(answer)[1002]
        high_watermark = answer.topics[0].partitions[0].high_watermark
        seen.append("frozen" if (end, fetched, caught) == frozen else
                    "fetching" if caught == frozen[2] and fetched > frozen[1] else
                    "caught up" if end == high_watermark and caught > frozen[2] else "other")
        if seen[-1] == "caught up":
            break
        time.sleep(0.1)
    assert seen[0] == "frozen" and "fetching" in seen and seen[-1] == "caught up" and "other" not in seen, seen
    assert sb.quorum_leader == 1000
    sb.stop_controller(1000)  # the leader: 1001 leads, epoch + 1, and never heard from 1000
    answer = describe_quorum(sb.brokers[1])
    partition = answer.topics[0].partitions[0]
    assert (partition.leader_id, partition.leader_epoch) == (1001, 2) and voters(answer)[1000] == (-1, -1, -1)


def test_sandbox_ctl_restarts_a_controller_that_catches_up_over_the_catch_up_time(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    from commands import run_command

    from leader_election_cli.cli.toolkit import cli

    sb = sandbox_factory(3, topics={"t": {0: [1, 2, 3]}})
    control = ControlServer(sb, catch_up_seconds=0).start()
    try:
        ctl = ("sandbox-ctl", "--control", control.path)
        before = voters(describe_quorum(sb.brokers[1]))[1001][2]
        result = run_command(cli, *ctl, "restart-controller", "1001", "--catch-up-seconds", "60")
        assert result.out == "1000:leader 1001:up 1002:up\n"
        answer = describe_quorum(sb.brokers[1])
        assert voters(answer)[1001][2] <= before + 1000  # lagging: its last caught-up time from before the stop
        time.sleep(0.1)
        assert voters(describe_quorum(sb.brokers[1]))[1001][2] == voters(answer)[1001][2]
        result = run_command(cli, *ctl, "restart-controller", "1001")  # the sandbox's own catch-up time: 0 s
        assert result.out == "1000:leader 1001:up 1002:up\n"
        caught = voters(describe_quorum(sb.brokers[1]))[1001][2]
        assert caught > voters(answer)[1001][2]
        code, _, err = run_command(cli, *ctl, "restart-controller", "7")
        assert code == 2 and err.startswith("no controller 7 in this sandbox")
    finally:
        control.stop()


def test_a_dedicated_controllers_own_listener_answers_describe_quorum_only_as_the_leader(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    """KIP-919 (`--bootstrap-controller`): a controller answers DescribeQuorum itself while it leads the quorum;
    another says NOT_LEADER_OR_FOLLOWER for the partition (KafkaRaftClient.handleDescribeQuorumRequest); a
    stopped one refuses connections; its ApiVersions names the controller's APIs, not the broker's."""
    from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

    sb = sandbox_factory(3, topics={"t": {0: [1, 2, 3]}})
    listeners = {n.node_id: ("127.0.0.1", n.listeners[0].port) for n in describe_quorum(sb.brokers[1]).nodes}
    leader = describe_quorum(listeners[1000])
    partition = leader.topics[0].partitions[0]
    assert (leader.error_code, partition.error_code, partition.leader_id) == (0, 0, 1000)
    assert [v.replica_id for v in partition.current_voters] == [1000, 1001, 1002]
    follower = describe_quorum(listeners[1001]).topics[0].partitions[0]
    assert (follower.error_code, follower.leader_id) == (6, -1)  # NOT_LEADER_OR_FOLLOWER
    keys = {k.api_key for k in call(listeners[1001], ApiVersionsRequest(version=0), ApiVersionsResponse, 0).api_keys}
    assert keys == {18, 32, 55}
    sb.stop_controller(1000)
    assert refuses(listeners[1000])
    assert describe_quorum(listeners[1001]).topics[0].partitions[0].leader_id == 1001  # it leads now
    sb.start_controller(1000)
    assert describe_quorum(listeners[1000]).topics[0].partitions[0].error_code == 6  # back, a follower
