"""The sandbox seen by unmodified Kafka clients: kafka-python's KafkaAdminClient and raw frames."""

from __future__ import annotations

import logging
import socket
import struct
import threading
import time
from collections.abc import Callable

import pytest
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaTimeoutError, UnsupportedVersionError
from kafka.protocol.admin import (
    AlterPartitionReassignmentsRequest,
    AlterPartitionReassignmentsResponse,
    ElectLeadersRequest,
    ElectLeadersResponse,
)
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse, MetadataRequest, MetadataResponse
from kafka.protocol.sasl import SaslAuthenticateRequest, SaslAuthenticateResponse

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.controller.cluster import Cluster

PREFERRED, UNCLEAN = 0, 1


def admin_for(sb: Sandbox, **config: object) -> KafkaAdminClient:
    """An admin client bootstrapped from the live brokers only (kafka-python retries dead ones slowly)."""
    live = ",".join(f"{h}:{p}" for b, (h, p) in sb.brokers.items() if b in sb.live_brokers)
    return KafkaAdminClient(bootstrap_servers=live, request_timeout_ms=5000, **config)


def recv_exact(sock: socket.socket, n: int) -> bytes:
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


def call(address: tuple[str, int], request: object, response_class: type, version: int) -> object:
    """Send one request over a fresh connection and decode the answer."""
    request.with_header(correlation_id=7, client_id="sandbox-test")
    frame = request.encode(version=version, header=True, framed=True)
    with socket.create_connection(address, timeout=5) as sock:
        sock.sendall(frame)
        size = struct.unpack(">i", recv_exact(sock, 4))[0]
        payload = recv_exact(sock, size)
    return response_class.decode(payload, version=version, header=True)


def elect_raw(address: tuple[str, int], election_type: int, partitions: dict[str, list[int]] | None,
              version: int = 2) -> object:
    topics = None if partitions is None else [
        ElectLeadersRequest.TopicPartitions(topic=t, partitions=ps) for t, ps in partitions.items()]
    fields = {"election_type": election_type} if version >= 1 else {}
    request = ElectLeadersRequest(version=version, topic_partitions=topics, timeout_ms=5000, **fields)
    return call(address, request, ElectLeadersResponse, version)


def codes(response: object) -> dict[tuple[str, int], tuple[int, str | None]]:
    return {(r.topic, p.partition_id): (p.error_code, p.error_message)
            for r in response.replica_election_results for p in r.partition_result}


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox], mode: str) -> Sandbox:
    sandbox = sandbox_factory(3, mode)
    sandbox.create_topic("t1", assignment={0: [1, 2, 3], 1: [2, 3, 1]}, configs={"min.insync.replicas": "2"})
    sandbox.create_topic("t2", partitions=6, replication_factor=3)  # round-robin replicas, as Kafka assigns
    return sandbox


@pytest.fixture
def admin(sb: Sandbox):
    client = admin_for(sb)
    yield client
    client.close()


def test_describe_cluster_lists_brokers_and_a_live_controller(sb: Sandbox, admin: KafkaAdminClient) -> None:
    """ZooKeeper mode: the controller. KRaft: a random live broker at each request, as Kafka's brokers say."""
    cluster = admin.describe_cluster()
    assert [(b["broker_id"], b["port"]) for b in cluster["brokers"]] == [
        (b, port) for b, (_, port) in sb.brokers.items()]
    if sb.mode == "zk":
        assert cluster["controller_id"] == sb.controller_id == 1
        sb.move_controller(3)
        assert admin.describe_cluster()["controller_id"] == 3
    else:
        reported = {admin.describe_cluster()["controller_id"] for _ in range(60)}
        assert reported == {1, 2, 3}  # 60 draws miss one of three with odds under 10**-10


def test_describe_topics_shows_round_robin_assignment(sb: Sandbox, admin: KafkaAdminClient) -> None:
    (t2,) = admin.describe_topics(["t2"])
    replicas = [p["replica_nodes"] for p in sorted(t2["partitions"], key=lambda p: p["partition_index"])]
    assert replicas == [[1, 2, 3], [2, 3, 1], [3, 1, 2], [1, 3, 2], [2, 1, 3], [3, 2, 1]]
    assert all(p["leader_id"] == p["replica_nodes"][0] == p["isr_nodes"][0] for p in t2["partitions"])
    (missing,) = admin.describe_topics(["nosuch"])
    assert missing["error_code"] == 3


def test_preferred_election_moves_leadership_back(sb: Sandbox, admin: KafkaAdminClient) -> None:
    sb.set_leader("t1", 0, 2)
    response = admin.elect_leaders(PREFERRED, {"t1": [0, 1]}, raise_errors=False)
    assert response.error_code == 0
    assert codes(response) == {("t1", 0): (0, None),
                               ("t1", 1): (84, "Leader election not needed for topic partition.")}
    assert sb.partition_state("t1", 0).leader == 1


def test_preferred_replica_down_cannot_be_elected(sb: Sandbox) -> None:
    sb.stop_broker(1)
    assert sb.partition_state("t1", 0).leader == 2  # offline rule: first live ISR replica
    with admin_for(sb) as admin:
        response = admin.elect_leaders(PREFERRED, {"t1": [0]}, raise_errors=False)
    code, message = codes(response)[("t1", 0)]
    assert code == 80
    expected = {"kraft": "The preferred leader was not available.",
                "zk": "Failed to elect leader for partition t1-0 under strategy "
                      "PreferredReplicaPartitionLeaderElectionStrategy"}
    assert message == expected[sb.mode]


def test_preferred_on_leaderless_partition_differs_by_mode(sb: Sandbox) -> None:
    sb.stop_broker(1)
    sb.set_leader("t1", 0, -1)  # leaderless, with 2 and 3 live and in the ISR
    with admin_for(sb) as admin:
        response = admin.elect_leaders(PREFERRED, {"t1": [0]}, raise_errors=False)
    if sb.mode == "kraft":  # the first valid replica of replicas[1:]
        assert codes(response)[("t1", 0)] == (0, None)
        assert sb.partition_state("t1", 0).leader == 2
    else:
        assert codes(response)[("t1", 0)][0] == 80
        assert sb.partition_state("t1", 0).leader == -1


def test_unclean_election_picks_an_out_of_sync_replica(sb: Sandbox) -> None:
    for broker in (2, 3, 1):
        sb.stop_broker(broker)
    sb.start_broker(2, rejoin_isr=False)
    state = sb.partition_state("t1", 0)
    assert state.leader == -1 and 2 not in state.isr
    with admin_for(sb) as admin:
        response = admin.elect_leaders(UNCLEAN, {"t1": [0]}, raise_errors=False)
    assert codes(response)[("t1", 0)] == (0, None)
    state = sb.partition_state("t1", 0)
    assert (state.leader, state.isr, state.elr) == (2, (2,), ())


def test_unclean_with_a_live_leader_is_not_needed(sb: Sandbox, admin: KafkaAdminClient) -> None:
    response = admin.elect_leaders(UNCLEAN, {"t1": [0]}, raise_errors=False)
    assert codes(response)[("t1", 0)][0] == 84


def test_unclean_without_any_live_replica_fails(sb: Sandbox) -> None:
    sb.create_topic("solo", assignment={0: [3]})
    sb.stop_broker(3)
    with admin_for(sb) as admin:
        response = admin.elect_leaders(UNCLEAN, {"solo": [0]}, raise_errors=False)
    code, message = codes(response)[("solo", 0)]
    assert code == 83
    if sb.mode == "zk":
        assert message == ("Failed to elect leader for partition solo-0 under strategy "
                           "OfflinePartitionLeaderElectionStrategy(true)")
    else:
        assert message == "Eligible topic partition leaders are not available."


def test_unknown_topic_and_partition(sb: Sandbox, admin: KafkaAdminClient) -> None:
    response = admin.elect_leaders(PREFERRED, {"nosuch": [0], "t1": [99]}, raise_errors=False)
    got = codes(response)
    if sb.mode == "kraft":
        assert got == {("nosuch", 0): (3, "No such topic as nosuch"), ("t1", 99): (3, "No such partition as t1-99")}
    else:
        assert got == {("nosuch", 0): (3, "The partition does not exist."),
                       ("t1", 99): (3, "The partition does not exist.")}


def test_all_partitions_request_leaves_out_election_not_needed(sb: Sandbox) -> None:
    sb.set_leader("t2", 0, 2)
    sb.set_leader("t2", 1, 3)
    response = elect_raw(sb.brokers[sb.controller_id], PREFERRED, None)
    assert response.error_code == 0
    assert codes(response) == {("t2", 0): (0, None), ("t2", 1): (0, None)}
    again = elect_raw(sb.brokers[sb.controller_id], PREFERRED, None, version=0)
    # KRaft lists every topic, even with nothing left to report; ZooKeeper mode groups what is left
    expected = [("t1", []), ("t2", [])] if sb.mode == "kraft" else []
    assert [(r.topic, r.partition_result) for r in again.replica_election_results] == expected


def test_stopped_broker_refuses_connections_and_rejoins(sb: Sandbox) -> None:
    sb.stop_broker(3)
    with pytest.raises(OSError):
        socket.create_connection(sb.brokers[3], timeout=2).close()
    with admin_for(sb) as admin:
        brokers = {b["broker_id"]: b.get("is_fenced") for b in admin.describe_cluster()["brokers"]}
        (t2,) = admin.describe_topics(["t2"])
    # kafka-python asks for fenced brokers too: a KRaft broker lists a stopped broker as fenced
    assert brokers == ({1: False, 2: False, 3: True} if sb.mode == "kraft" else {1: None, 2: None})
    assert [p["offline_replicas"] for p in t2["partitions"] if p["partition_index"] == 2] == [[3]]
    state = sb.partition_state("t2", 2)  # led by 3 before
    assert state.leader == 1 and 3 not in state.isr and state.offline_replicas == (3,)
    sb.start_broker(3)
    state = sb.partition_state("t2", 2)
    assert state.leader == 1 and set(state.isr) == {1, 2, 3}
    socket.create_connection(sb.brokers[3], timeout=2).close()


def test_a_stopped_brokers_port_is_held_until_it_listens_again(sb: Sandbox) -> None:
    """A stopped broker's port stays bound, not listening: connections are refused, and no other program can
    take it meanwhile (a port is free once closed: any bind(0) on the machine could take it, and the restart
    then failed, or a client expecting a refusal met another cluster). The sandbox's stop lets it go."""
    host, port = sb.brokers[3]
    sb.stop_broker(3)
    with socket.socket() as other, pytest.raises(OSError, match="in use"):
        other.bind((host, port))
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection((host, port), timeout=5).close()
    sb.start_broker(3)
    socket.create_connection((host, port), timeout=5).close()
    with Sandbox(brokers=1, mode=sb.mode) as alone:
        host, port = alone.brokers[1]
        alone.stop_broker(1)
    with socket.socket() as other:
        other.bind((host, port))  # (no connection was made to it: no TIME_WAIT holds it)


def test_a_crash_is_noticed_late(sb: Sandbox) -> None:
    """`noticed_after`: the listener closes at once, but until the controller notices, the metadata still
    names the broker as leader and controller; a restart before then changes no state."""
    sb.move_controller(3)
    led_by_3 = sb.partition_state("t2", 2)
    sb.stop_broker(3, noticed_after=60)
    with pytest.raises(OSError):
        socket.create_connection(sb.brokers[3], timeout=2).close()
    metadata = call(sb.brokers[1], MetadataRequest(version=1, topics=[]), MetadataResponse, 1)
    assert (3 in sb.live_brokers, sb.partition_state("t2", 2)) == (True, led_by_3)
    assert metadata.controller_id == 3 if sb.mode == "zk" else metadata.controller_id in sb.brokers  # KRaft: random
    sb.stop_broker(3)  # noticed now
    assert sb.controller_id != 3 and sb.partition_state("t2", 2).leader != 3
    sb.start_broker(3)
    sb.stop_broker(3, noticed_after=0.1)
    deadline = time.monotonic() + 60  # the timer fires at 0.1 s: bounded far above
    while 3 in sb.live_brokers and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 3 not in sb.live_brokers  # the timer noticed it
    sb.start_broker(3)
    sb.stop_broker(3, noticed_after=30)
    sb.start_broker(3)  # back before the controller noticed: nothing moved
    socket.create_connection(sb.brokers[3], timeout=2).close()
    assert 3 in sb.live_brokers and 3 in sb.partition_state("t2", 2).isr


def test_a_stop_noticed_at_once_serves_no_request_before_the_controller_reacts(
        sb: Sandbox, monkeypatch: pytest.MonkeyPatch) -> None:
    """The listener closes and the controller reacts in one step: a client that finds the broker gone and asks
    another one at once never sees it still live (the controller's reaction came on the stopping thread, and
    a loaded machine let an election resent elsewhere in before it: answered as if the broker were up)."""
    react = Cluster.stop_broker

    def slow_to_react(cluster: Cluster, broker: int) -> None:
        time.sleep(0.5)  # the stopping thread descheduled
        react(cluster, broker)

    monkeypatch.setattr(Cluster, "stop_broker", slow_to_react)
    stopping = threading.Thread(target=sb.stop_broker, args=(3,))
    stopping.start()
    deadline = time.monotonic() + 60
    while True:  # until broker 3 refuses connections
        try:
            socket.create_connection(sb.brokers[3], timeout=5).close()
        except OSError:
            break
        assert time.monotonic() < deadline, "broker 3 still listens"
    metadata = call(sb.brokers[1], MetadataRequest(version=1, topics=["t2"]), MetadataResponse, 1)
    stopping.join(timeout=60)
    assert 3 not in {b[0] for b in metadata.brokers}
    assert all(3 not in p[4] for t in metadata.topics for p in t[3])  # in no ISR


def test_fault_actions_strike_at_their_point_and_a_failing_one_is_not_lost() -> None:
    """`hold_next` runs its action before the request is handled, `after_next` once it is answered (one
    fault per request, in order); an action that raises is logged, the request still answered, and
    `stop()` raises it."""
    seen: list[str] = []
    sb = Sandbox(brokers=1).start()
    try:
        sb.create_topic("t", assignment={0: [1]})
        sb.hold_next(43, lambda: seen.append(f"held, {sb.request_count(43)} received"))
        sb.after_next(43, lambda: seen.append("answered"))
        sb.hold_next(43, lambda: 1 / 0)
        for _ in range(3):
            response = elect_raw(sb.brokers[1], PREFERRED, {"t": [0]})
            assert response.replica_election_results[0].partition_result[0].error_code == 84  # not needed
        assert seen == ["held, 1 received", "answered"]
    finally:
        with pytest.raises(RuntimeError, match="1 fault action.s. failed, the first: ZeroDivisionError"):
            sb.stop()
    sb.stop()  # said once


def test_stopped_sole_isr_member(sb: Sandbox) -> None:
    sb.create_topic("one", assignment={0: [1, 2]})
    sb.set_isr("one", 0, [1])
    sb.stop_broker(1)
    state = sb.partition_state("one", 0)
    assert state.leader == -1
    if sb.mode == "zk":  # zk (and kraft without ELR, Kafka 4.0's default): the ISR keeps its last member
        assert (state.isr, state.elr, state.last_known_elr) == ((1,), (), ())
    else:  # kraft with ELR (Kafka 4.1's default): it moves to the ELR, and is the last known leader
        assert (state.isr, state.elr, state.last_known_elr) == ((), (1,), (1,))
    sb.start_broker(1)
    state = sb.partition_state("one", 0)
    # 1 leads again, and 2, live all along but without a leader to follow, catches up and rejoins
    assert (state.leader, state.isr, state.elr, state.last_known_elr) == (1, (1, 2), (), ())


def test_stopped_sole_isr_member_without_elr() -> None:
    with Sandbox(brokers=2, kafka_version="4.0") as sb:
        sb.create_topic("one", assignment={0: [1, 2]})
        sb.set_isr("one", 0, [1])
        sb.stop_broker(1)
        state = sb.partition_state("one", 0)
        assert (state.leader, state.isr, state.elr, state.last_known_elr) == (-1, (1,), (), ())
        sb.start_broker(1, rejoin_isr=False)
        assert sb.partition_state("one", 0).isr == (1,)


def test_zk_non_controller_answers_not_controller(sb: Sandbox) -> None:
    response = elect_raw(sb.brokers[2], PREFERRED, {"t1": [0, 1]})
    if sb.mode == "zk":
        assert response.error_code == 0
        assert codes(response) == {("t1", 0): (41, None), ("t1", 1): (41, None)}
    else:  # any kraft broker forwards to the controller
        assert {c for c, _ in codes(response).values()} == {84}


def test_admin_client_follows_a_moved_controller(sb: Sandbox, admin: KafkaAdminClient) -> None:
    admin.describe_cluster()
    admin.elect_leaders(PREFERRED, {"t1": [0]}, raise_errors=False)  # caches the controller id
    sb.move_controller(2)
    sb.set_leader("t1", 0, 3)
    response = admin.elect_leaders(PREFERRED, {"t1": [0]}, raise_errors=False)
    assert codes(response)[("t1", 0)] == (0, None)
    served = [r.broker_id for r in sb.request_log if r.api_key == 43]
    if sb.mode == "zk":
        assert served[-2:] == [1, 2]  # NOT_CONTROLLER from 1, then retried on 2


def test_cluster_authorization(sandbox_factory: Callable[..., Sandbox], mode: str) -> None:
    sb = sandbox_factory(2, mode, topics={"t": {0: [1, 2]}}, cluster_alter={"admin"})
    sb.set_leader("t", 0, 2)
    response = elect_raw(sb.brokers[sb.controller_id], PREFERRED, {"t": [0]})
    assert response.error_code == 31
    ((code, message),) = codes(response).values()
    assert code == 31
    if mode == "zk":
        assert message is None
    else:
        assert message.startswith("Request Request(") and message.endswith(" is not authorized.")
    everything = elect_raw(sb.brokers[sb.controller_id], PREFERRED, None)
    assert (everything.error_code, everything.replica_election_results) == (31, [])
    assert sb.partition_state("t", 0).leader == 2
    # AlterPartitionReassignments: authorizeClusterOperation throws in both modes, with its text
    topic = AlterPartitionReassignmentsRequest.ReassignableTopic
    reorder = AlterPartitionReassignmentsRequest(version=0, timeout_ms=5000, topics=[topic(
        name="t", partitions=[topic.ReassignablePartition(partition_index=0, replicas=[2, 1])])])
    refused = call(sb.brokers[sb.controller_id], reorder, AlterPartitionReassignmentsResponse, 0)
    ((partition,),) = [t.partitions for t in refused.responses]
    assert (refused.error_code, partition.error_code) == (31, 31)
    for message in (refused.error_message, partition.error_message):
        assert message.startswith("Request Request(") and message.endswith(" is not authorized.")
    assert sb.partition_state("t", 0).replicas == (1, 2)


def test_policy_violation_limits_kraft_batches(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, "kraft", max_records_per_request=2)
    sb.create_topic("t", partitions=4, replication_factor=3)
    for pid in range(3):
        sb.set_leader("t", pid, sb.partition_state("t", pid).replicas[1])
    too_many = elect_raw(sb.brokers[1], PREFERRED, {"t": [0, 1, 2, 3]})
    assert too_many.error_code == 44
    assert set(codes(too_many).values()) == {(44, "Unable to perform excessively large batch operation.")}
    assert sb.partition_state("t", 0).leader != sb.partition_state("t", 0).replicas[0]
    # only changed partitions count as records: 2 changes + 1 not needed is fine
    ok = elect_raw(sb.brokers[1], PREFERRED, {"t": [0, 1, 3]})
    assert [c for c, _ in codes(ok).values()] == [0, 0, 84]
    everything = elect_raw(sb.brokers[1], PREFERRED, None)
    assert codes(everything) == {("t", 2): (0, None)}


def test_zk_has_no_record_limit(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(2, "zk", max_records_per_request=1)
    sb.create_topic("t", partitions=4, replication_factor=2)
    for pid in range(4):
        sb.set_leader("t", pid, sb.partition_state("t", pid).replicas[1])
    response = elect_raw(sb.brokers[1], PREFERRED, {"t": [0, 1, 2, 3]})
    assert {c for c, _ in codes(response).values()} == {0}


def test_create_topics_over_the_wire(sb: Sandbox, admin: KafkaAdminClient) -> None:
    admin.create_topics({"fresh": {"num_partitions": 3, "replication_factor": 2,
                                   "configs": {"min.insync.replicas": "2"}}})
    assert [len(sb.partition_state("fresh", p).replicas) for p in range(3)] == [2, 2, 2]
    again = admin.create_topics({"fresh": {}, "odd": {"configs": {"min.insync.replicas": "zero"}}},
                                raise_errors=False)
    assert [(t["error_code"], t["error_message"]) for t in again["topics"]] == [
        (36, "Topic 'fresh' already exists."),
        (40, "Invalid value zero for configuration min.insync.replicas: Not a number of type INT")]


def test_elect_leaders_v0_only_broker(sb: Sandbox) -> None:
    sb.set_max_version(43, 0)
    versions = call(sb.brokers[1], ApiVersionsRequest(version=0), ApiVersionsResponse, 0)
    assert {k.api_key: (k.min_version, k.max_version) for k in versions.api_keys}[43] == (0, 0)
    with pytest.raises(ConnectionError):  # a v0-only broker closes on a v2 request
        elect_raw(sb.brokers[sb.controller_id], PREFERRED, {"t1": [0]}, version=2)
    sb.set_leader("t1", 0, 2)
    response = elect_raw(sb.brokers[sb.controller_id], PREFERRED, {"t1": [0]}, version=0)
    assert codes(response) == {("t1", 0): (0, None)}


def test_api_versions_tell_the_modes_apart(sb: Sandbox) -> None:
    response = call(sb.brokers[1], ApiVersionsRequest(version=3, client_software_name="t",
                                                      client_software_version="1"), ApiVersionsResponse, 3)
    keys = {k.api_key for k in response.api_keys}
    if sb.mode == "zk":
        assert {4, 5, 6, 7} <= keys and not response.finalized_features
    else:
        assert not keys & {4, 5, 6, 7}
        assert "metadata.version" in [f.name for f in response.finalized_features]


def test_api_versions_of_an_unknown_version_gets_the_v0_error(sb: Sandbox) -> None:
    request = ApiVersionsRequest(version=4, client_software_name="t", client_software_version="1")
    request.with_header(correlation_id=9, client_id="x")
    frame = bytearray(request.encode(version=4, header=True, framed=True))
    frame[6:8] = struct.pack(">h", 99)  # claim version 99
    with socket.create_connection(sb.brokers[1], timeout=5) as sock:
        sock.sendall(frame)
        payload = recv_exact(sock, struct.unpack(">i", recv_exact(sock, 4))[0])
    response = ApiVersionsResponse.decode(payload, version=0, header=True)
    assert response.error_code == 35
    assert [(k.api_key, k.max_version) for k in response.api_keys] == [(18, 4)]


@pytest.mark.parametrize("frame", [
    b"\x00\x00\x00\x05garba",  # too short for a header
    struct.pack(">i", 1 << 30),  # oversized length
    struct.pack(">i", -4),  # negative length
    struct.pack(">ihhi", 10, 999, 0, 1) + b"\x00\x00",  # unknown API key
    struct.pack(">ihhi", 10, 43, 9, 1) + b"\x00\x00",  # unsupported version
    struct.pack(">ihhih", 12, 43, 1, 1, 1) + b"x" + b"\xff",  # body does not decode
])
def test_bad_frames_close_only_that_connection(sb: Sandbox, frame: bytes, caplog: pytest.LogCaptureFixture) -> None:
    healthy = socket.create_connection(sb.brokers[1], timeout=5)
    with socket.create_connection(sb.brokers[1], timeout=5) as sock:
        sock.sendall(frame)
        assert sock.recv(10) == b""  # closed, no answer
    request = MetadataRequest(version=1, topics=[])
    request.with_header(correlation_id=3, client_id="x")
    healthy.sendall(request.encode(version=1, header=True, framed=True))
    payload = recv_exact(healthy, struct.unpack(">i", recv_exact(healthy, 4))[0])
    healthy.close()
    assert len(MetadataResponse.decode(payload, version=1, header=True).brokers) == 3
    assert any("closing" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("frame", [
    # AlterPartitionReassignments v0 with Topics null; ElectLeaders v2 with topic t1's Partitions null
    struct.pack(">ihhihbib", 17, 45, 0, 1, -1, 0, 60000, 0) + b"\x00",
    struct.pack(">ihhihbbb", 23, 43, 2, 1, -1, 0, 0, 2) + b"\x03t1" + b"\x00\x00" + struct.pack(">ib", 60000, 0),
])
def test_a_null_array_the_schema_does_not_allow_is_a_malformed_request(
        sb: Sandbox, frame: bytes, caplog: pytest.LogCaptureFixture) -> None:
    """Kafka's generated readers refuse it while parsing ("non-nullable field ... was serialized as null"):
    the connection closes, no handler runs (it was a TypeError outside the handler's try, and a traceback)."""
    with socket.create_connection(sb.brokers[1], timeout=5) as sock:
        sock.sendall(frame)
        assert sock.recv(10) == b""  # closed, no answer
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any("serialized as null" in r.getMessage() for r in caplog.records):
        time.sleep(0.01)
    assert any("serialized as null" in r.getMessage() for r in caplog.records)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR]
    assert call(sb.brokers[1], ApiVersionsRequest(version=0), ApiVersionsResponse, 0).error_code == 0


def test_truncated_frame_is_logged(sb: Sandbox, caplog: pytest.LogCaptureFixture) -> None:
    with socket.create_connection(sb.brokers[1], timeout=5) as sock:
        sock.sendall(struct.pack(">i", 100) + b"abc")
    assert call(sb.brokers[1], ApiVersionsRequest(version=0), ApiVersionsResponse, 0).error_code == 0
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any("mid-frame" in r.getMessage() for r in caplog.records):
        time.sleep(0.01)
    assert any("mid-frame" in r.getMessage() for r in caplog.records)


def test_fault_injection(sb: Sandbox, admin: KafkaAdminClient) -> None:
    sb.fail_next(43, 7)
    response = admin.elect_leaders(PREFERRED, {"t1": [0, 1]}, raise_errors=False)
    assert response.error_code == 7 and {c for c, _ in codes(response).values()} == {7}
    sb.drop_next(43)
    with pytest.raises(ConnectionError):
        elect_raw(sb.brokers[1], PREFERRED, {"t1": [0]})
    sb.corrupt_next(43)
    with pytest.raises(IndexError):  # the truncated answer: kafka-python decodes past its end
        elect_raw(sb.brokers[1], PREFERRED, {"t1": [0]})
    sb.delay_next(43, 0.2)
    assert codes(elect_raw(sb.brokers[sb.controller_id], PREFERRED, {"t1": [0]}))[("t1", 0)][0] == 84
    assert sb.request_count(43) == 4
    assert [r.partitions for r in sb.request_log if r.api_key == 43] == [2, 1, 1, 1]


def test_metadata_v0_leaves_dead_replicas_out_and_says_so(sb: Sandbox) -> None:
    """getPartitionMetadata with errorUnavailableEndpoints (v0 only): REPLICA_NOT_AVAILABLE (9)."""
    sb.stop_broker(3)
    answers = {v: call(sb.brokers[1], MetadataRequest(version=v, topics=["t1"]), MetadataResponse, v)
               for v in (0, 1)}
    partitions = {v: {p.partition_index: p for p in a.topics[0].partitions} for v, a in answers.items()}
    assert (partitions[0][0].error_code, partitions[0][0].replica_nodes) == (9, [1, 2])
    assert (partitions[1][0].error_code, partitions[1][0].replica_nodes) == (0, [1, 2, 3])


def test_sasl_authenticate_outside_a_sasl_exchange(sb: Sandbox) -> None:
    """KafkaApis.handleSaslAuthenticateRequest: ILLEGAL_SASL_STATE (34), and the connection stays open."""
    request = SaslAuthenticateRequest(version=1, auth_bytes=b"\x00u\x00p")
    response = call(sb.brokers[1], request, SaslAuthenticateResponse, 1)
    assert (response.error_code, response.error_message) == (
        34, "SaslAuthenticate request received after successful authentication")


def test_admin_client_cannot_reach_a_stopped_cluster() -> None:
    sb = Sandbox(brokers=1).start()
    address = sb.bootstrap_servers
    sb.stop()
    with pytest.raises(KafkaTimeoutError):
        KafkaAdminClient(bootstrap_servers=address, bootstrap_timeout_ms=500, request_timeout_ms=500)


def test_clients_recognise_the_emulated_broker_version(sb: Sandbox, admin: KafkaAdminClient) -> None:
    assert admin._manager.broker_version == ((4, 2) if sb.mode == "kraft" else (3, 9))
    with pytest.raises(UnsupportedVersionError):  # advertised like a real broker, not modelled
        admin.describe_user_scram_credentials()
    assert admin.describe_cluster()["controller_id"] in sb.brokers  # the connection stays usable
