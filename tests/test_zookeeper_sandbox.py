"""The sandbox's ZooKeeper-mode controller: the cluster as Kafka registers it in a real ZooKeeper."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kafka.admin import KafkaAdminClient
from kazoo.client import KazooClient
from zk_server import ZooKeeperServer, zookeeper_server  # noqa: F401 (fixture)

from leader_election_cli.sandbox import Sandbox

pytestmark = pytest.mark.zookeeper

ELECTION_PATH = "/admin/preferred_replica_election"
KAFKA_LEADERS = str(Path(sys.executable).parent / "kafka-leaders")  # the installed console script


@pytest.fixture
def connect(zookeeper_server: ZooKeeperServer) -> str:  # noqa: F811
    return f"{zookeeper_server.address}/sandbox-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def sandbox(connect: str) -> Iterator[Sandbox]:
    with Sandbox(brokers=3, mode="zk", zookeeper=connect) as sb:
        sb.create_topic("t1", assignment={0: [1, 2, 3], 1: [2, 3, 1]}, configs={"min.insync.replicas": "2"})
        yield sb


@pytest.fixture
def zk(sandbox: Sandbox, connect: str) -> Iterator[KazooClient]:
    """A client in the sandbox's chroot (which the sandbox created, as a Kafka broker does)."""
    client = KazooClient(hosts=connect)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


def read(zk: KazooClient, path: str) -> Any:
    return json.loads(zk.get(path)[0])


def state(zk: KazooClient, topic: str, partition: int) -> dict[str, Any]:
    return read(zk, f"/brokers/topics/{topic}/partitions/{partition}/state")


def wait_until(condition: Any, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def test_the_cluster_is_registered_as_kafka_does(sandbox: Sandbox, zk: KazooClient) -> None:
    assert sorted(zk.get_children("/brokers/ids")) == ["1", "2", "3"]
    host, port = sandbox.brokers[2]
    broker = read(zk, "/brokers/ids/2")
    assert (broker["version"], broker["host"], broker["port"], broker["jmx_port"]) == (5, host, port, -1)
    assert broker["endpoints"] == [f"PLAINTEXT://{host}:{port}"]
    assert broker["listener_security_protocol_map"] == {"PLAINTEXT": "PLAINTEXT"}
    assert zk.get("/brokers/ids/2")[1].ephemeralOwner != 0
    controller = read(zk, "/controller")
    assert (controller["version"], controller["brokerid"]) == (1, sandbox.controller_id)
    assert int(controller["timestamp"]) > 0
    assert zk.get("/controller_epoch")[0] == b"1"
    assert read(zk, "/cluster/id") == {"version": "1", "id": sandbox.cluster.cluster_id}
    topic = read(zk, "/brokers/topics/t1")
    assert topic["version"] == 3 and topic["partitions"] == {"0": [1, 2, 3], "1": [2, 3, 1]}  # Kafka 2.8+
    assert (topic["adding_replicas"], topic["removing_replicas"]) == ({}, {})
    assert len(topic["topic_id"]) == 22
    assert read(zk, "/config/topics/t1") == {"version": 1, "config": {"min.insync.replicas": "2"}}
    assert state(zk, "t1", 1) == {"controller_epoch": 1, "leader": 2, "version": 1, "leader_epoch": 0,
                                  "isr": [2, 3, 1]}
    assert zk.exists(ELECTION_PATH) is None


def test_broker_stop_and_start_are_mirrored(sandbox: Sandbox, zk: KazooClient) -> None:
    sandbox.stop_broker(1)  # the controller and the leader of t1-0
    assert sorted(zk.get_children("/brokers/ids")) == ["2", "3"]
    assert read(zk, "/controller")["brokerid"] == 2
    assert zk.get("/controller_epoch")[0] == b"2"
    assert state(zk, "t1", 0) == {"controller_epoch": 2, "leader": 2, "version": 1, "leader_epoch": 1,
                                  "isr": [2, 3]}
    assert state(zk, "t1", 1)["isr"] == [2, 3]
    sandbox.start_broker(1)
    assert sorted(zk.get_children("/brokers/ids")) == ["1", "2", "3"]
    assert state(zk, "t1", 0)["isr"] == [2, 3, 1]


def test_test_control_edits_are_mirrored(sandbox: Sandbox, zk: KazooClient) -> None:
    sandbox.set_isr("t1", 0, [1, 3])
    sandbox.set_leader("t1", 0, 3)
    assert state(zk, "t1", 0) == {"controller_epoch": 1, "leader": 3, "version": 1, "leader_epoch": 1,
                                  "isr": [1, 3]}
    sandbox.create_topic("t2", partitions=2, replication_factor=2)
    assert sorted(zk.get_children("/brokers/topics/t2/partitions")) == ["0", "1"]


def test_a_reassignment_in_flight_is_mirrored(sandbox: Sandbox, zk: KazooClient) -> None:
    sandbox.create_topic("t3", assignment={0: [1, 2]})
    sandbox.cluster.alter_reassignment("t3", 0, [3, 1])  # what an AlterPartitionReassignments request does
    topic = read(zk, "/brokers/topics/t3")
    assert (topic["partitions"], topic["adding_replicas"], topic["removing_replicas"]) == (
        {"0": [3, 1, 2]}, {"0": [3]}, {"0": [2]})
    sandbox.finish_reassignment("t3", 0)
    topic = read(zk, "/brokers/topics/t3")
    assert (topic["partitions"], topic["adding_replicas"], topic["removing_replicas"]) == ({"0": [3, 1]}, {}, {})


def test_an_election_over_the_wire_is_mirrored(sandbox: Sandbox, zk: KazooClient) -> None:
    sandbox.set_leader("t1", 0, 2)
    host, port = sandbox.brokers[sandbox.controller_id]
    admin = KafkaAdminClient(bootstrap_servers=f"{host}:{port}", request_timeout_ms=5000)
    try:
        admin.elect_leaders(0, {"t1": [0]}, raise_errors=False)
    finally:
        admin.close()
    assert state(zk, "t1", 0)["leader"] == 1


def test_the_election_znode_is_served_and_deleted(sandbox: Sandbox, zk: KazooClient) -> None:
    sandbox.set_leader("t1", 0, 3)
    epoch = state(zk, "t1", 0)["leader_epoch"]
    zk.create(ELECTION_PATH, b'{"version":1,"partitions":[{"topic":"t1","partition":0},'
                             b'{"topic":"nosuch","partition":0}]}')  # unknown partitions are skipped
    assert wait_until(lambda: zk.exists(ELECTION_PATH) is None)
    assert sandbox.partition_state("t1", 0).leader == 1
    assert state(zk, "t1", 0) == {"controller_epoch": 1, "leader": 1, "version": 1, "leader_epoch": epoch + 1,
                                  "isr": [1, 2, 3]}


def test_a_pending_election_waits_for_a_controller(sandbox: Sandbox, zk: KazooClient) -> None:
    for broker in (1, 2, 3):
        sandbox.stop_broker(broker)
    assert zk.exists("/controller") is None and zk.get_children("/brokers/ids") == []
    zk.create(ELECTION_PATH, b'{"version":1,"partitions":[{"topic":"t1","partition":1}]}')
    time.sleep(0.3)  # give a (wrong) controller-less election the chance to happen
    assert zk.exists(ELECTION_PATH) is not None
    sandbox.start_broker(2)  # the new controller takes the pending election over, as on failover
    assert wait_until(lambda: zk.exists(ELECTION_PATH) is None)
    assert read(zk, "/controller")["brokerid"] == 2


def test_an_expired_session_is_registered_again(sandbox: Sandbox, zk: KazooClient,
                                                zookeeper_server: ZooKeeperServer) -> None:  # noqa: F811
    owner = zk.exists("/brokers/ids/1").ephemeralOwner
    session_id, password = sandbox._zookeeper._client.client_id
    # ZooKeeper's way to expire a session: a second client with its id and password closes it
    impostor = KazooClient(hosts=zookeeper_server.address, client_id=(session_id, password))
    impostor.start(timeout=10)
    impostor.stop()
    impostor.close()

    def registered_again() -> bool:
        stat = zk.exists("/brokers/ids/1")
        return stat is not None and stat.ephemeralOwner != owner

    assert wait_until(registered_again)
    sandbox.set_leader("t1", 0, 2)  # returns once the re-registration in progress is complete
    assert sorted(zk.get_children("/brokers/ids")) == ["1", "2", "3"]
    assert zk.get("/controller_epoch")[0] == b"2"  # the controller registered anew
    zk.create(ELECTION_PATH, b'{"version":1,"partitions":[{"topic":"t1","partition":0}]}')
    assert wait_until(lambda: zk.exists(ELECTION_PATH) is None)  # the new session watches the znode again
    assert state(zk, "t1", 0)["leader"] == 1


def test_stopping_the_sandbox_removes_its_ephemeral_znodes(connect: str) -> None:
    with Sandbox(brokers=2, mode="zk", zookeeper=connect):
        pass
    client = KazooClient(hosts=connect)
    client.start(timeout=10)
    try:
        assert client.get_children("/brokers/ids") == [] and client.exists("/controller") is None
    finally:
        client.stop()
        client.close()


def test_a_reused_chroot_holds_only_the_running_cluster(connect: str) -> None:
    with Sandbox(brokers=3, mode="zk", zookeeper=connect) as first:
        first.create_topic("earlier", assignment={0: [1, 2]})
    with Sandbox(brokers=2, mode="zk", zookeeper=connect) as second:
        second.create_topic("now", assignment={0: [2, 1]})
        client = KazooClient(hosts=connect)
        client.start(timeout=10)
        try:
            assert client.get_children("/brokers/topics") == ["now"]
            assert client.get_children("/config/topics") == ["now"]
            assert sorted(client.get_children("/brokers/ids")) == ["1", "2"]
            assert read(client, "/cluster/id")["id"] == second.cluster.cluster_id
        finally:
            client.stop()
            client.close()


def test_zookeeper_needs_zk_mode(zookeeper_server: ZooKeeperServer) -> None:  # noqa: F811
    with pytest.raises(ValueError, match="mode='zk'"):
        Sandbox(brokers=1, mode="kraft", zookeeper=zookeeper_server.address)


def test_the_sandbox_command_serves_the_zookeeper_path(connect: str) -> None:
    election = [sys.executable, "-m", "leader_election_cli", "--zookeeper", connect, "--election-type", "preferred",
                "--all-topic-partitions", "--output", "text"]
    completed = subprocess.run(
        [KAFKA_LEADERS, "sandbox", "--mode", "zk", "--zookeeper", connect,
         "--topics", "1", "--partitions", "6", "--scenario", "imbalanced", "--run", shlex.join(election)],
        capture_output=True, text=True, timeout=90)
    assert completed.returncode == 0, completed.stderr
    assert f"ZooKeeper: {connect}" in completed.stdout
    assert "Successfully completed leader election (PREFERRED) for partitions" in completed.stdout
    assert "--zookeeper is deprecated" in completed.stderr


def test_the_sandbox_command_needs_zk_mode_for_zookeeper(zookeeper_server: ZooKeeperServer) -> None:  # noqa: F811
    completed = subprocess.run(
        [KAFKA_LEADERS, "sandbox", "--zookeeper", zookeeper_server.address],
        capture_output=True, text=True, timeout=60)
    assert completed.returncode == 2
    assert "--zookeeper needs --mode zk" in completed.stderr
