"""The deprecated --zookeeper path in a hostile world (issue 18, class 2): once the election znode is written,
every stop (a signal, a controller slower than --timeout, a ZooKeeper that freezes) still reports every
partition, in JSON and text; a hostile ZooKeeper port still gets a document and --timeout is honoured."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator

import pytest
from click.testing import CliRunner
from hostile_server import freezable_proxy, hostile_server
from kazoo.client import KazooClient
from zk_server import ZooKeeperServer, zookeeper_server  # noqa: F401 (fixture)

from leader_election_cli.cli.drop_in_command import command
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.znodes import ELECTION_PATH

ASSIGNMENT = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}
ALL = ["t1-0", "t1-1", "t1-2", "t2-0"]  # all leaderless (every broker stopped): the election names them all
ZK_ELECT = ["--election-type", "preferred", "--all-topic-partitions"]


@pytest.fixture
def chroot(zookeeper_server: ZooKeeperServer) -> str:  # noqa: F811
    return f"/test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def no_controller(zookeeper_server: ZooKeeperServer, chroot: str) -> Iterator[Sandbox]:  # noqa: F811
    """Two topics mirrored into ZooKeeper, t1-0 and t1-2 off their preferred replica, every broker stopped."""
    with Sandbox(brokers=3, mode="zk", zookeeper=zookeeper_server.address + chroot) as sb:
        sb.create_topic("t1", assignment=ASSIGNMENT)
        sb.create_topic("t2", assignment={0: [2, 1]})
        sb.set_leader("t1", 0, 2)
        sb.set_leader("t1", 2, 1)
        for broker in (1, 2, 3):
            sb.stop_broker(broker)
        yield sb


def when_written(connect: str, action: object) -> threading.Thread:
    """Run `action()` once the election znode exists (bounded: 30 s)."""

    def watch() -> None:
        client = KazooClient(hosts=connect)
        client.start(timeout=10)
        try:
            deadline = time.monotonic() + 30
            while client.exists(ELECTION_PATH) is None and time.monotonic() < deadline:
                time.sleep(0.02)
            action()  # type: ignore[operator]
        finally:
            client.stop()
            client.close()

    thread = threading.Thread(target=watch)
    thread.start()
    return thread


def outcomes(document: dict[str, object]) -> dict[str, str]:
    return {f"{p['topic']}-{p['partition']}": p["outcome"] for p in document["partitions"]}  # type: ignore[index,union-attr]


def check_every_partition_reported(document: dict[str, object]) -> None:
    """Every partition, each in doubt: started, not seen to finish, its leader unchanged."""
    assert sorted(outcomes(document)) == ALL
    for row in document["partitions"]:  # type: ignore[attr-defined]
        assert row["outcome"] == "failed"
        assert f"The election was started ({ELECTION_PATH} written) but not seen to finish" in row["error"]


@pytest.mark.parametrize(("sig", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_waiting_for_the_controller_reports_every_partition(
        no_controller: Sandbox, zookeeper_server: ZooKeeperServer, chroot: str, sig: int, expected: int) -> None:  # noqa: F811
    connect = zookeeper_server.address + chroot
    process = subprocess.Popen([sys.executable, "-m", "leader_election_cli", "--zookeeper", connect, *ZK_ELECT,
                                "--timeout", "30", "--output", "json"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    watcher = when_written(zookeeper_server.address + chroot, lambda: (time.sleep(0.3), process.send_signal(sig)))
    try:
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
        watcher.join()
    assert process.returncode == expected, err
    document = json.loads(out)
    check_every_partition_reported(document)
    assert document["summary"]["interrupted"] is True


@pytest.mark.parametrize("output", ["json", "text"])
def test_a_controller_slower_than_the_timeout_still_reports_every_partition(
        no_controller: Sandbox, zookeeper_server: ZooKeeperServer, chroot: str, output: str) -> None:  # noqa: F811
    result = CliRunner().invoke(command, ["--zookeeper", zookeeper_server.address + chroot, *ZK_ELECT,
                                          "--timeout", "2", "--output", output])
    assert result.exit_code == 3, result.stderr
    if output == "json":
        document = json.loads(result.stdout)
        check_every_partition_reported(document)
        assert "the election was started" in document["summary"]["stopped"]
    else:
        assert "the election was started" in result.stderr
        failed = [line for line in result.stdout.splitlines() if line.startswith("Error completing leader election")]
        assert sorted(line.split(": ")[1] for line in failed) == ALL  # (in Kafka's HashMap order)


def test_a_zookeeper_that_freezes_after_the_znode_is_written_still_reports_every_partition(
        no_controller: Sandbox, zookeeper_server: ZooKeeperServer, chroot: str) -> None:  # noqa: F811
    with freezable_proxy(zookeeper_server.address) as (proxy, frozen):
        watcher = when_written(zookeeper_server.address + chroot, frozen.set)
        try:
            result = CliRunner().invoke(command, ["--zookeeper", proxy + chroot, *ZK_ELECT, "--timeout", "3",
                                                  "--output", "json"])
        finally:
            frozen.set()
            watcher.join()
    assert result.exit_code == 3, result.stderr
    document = json.loads(result.stdout)
    check_every_partition_reported(document)
    assert "the election was started" in document["summary"]["stopped"]


@pytest.mark.parametrize("behaviour", ["garbage", "huge_array", "stall", "reset"])
def test_a_hostile_zookeeper_port_gets_a_document_within_the_timeout(behaviour: str) -> None:
    """The huge array took 24.6 s with --timeout 3: closing the session waited for kazoo's own timeouts."""
    with hostile_server(behaviour) as address:
        started = time.monotonic()
        result = CliRunner().invoke(command, ["--zookeeper", address, *ZK_ELECT, "--timeout", "1", "--output", "json"])
        took = time.monotonic() - started
    assert result.exit_code == 3, result.stderr
    document = json.loads(result.stdout)
    assert document["partitions"] == [] and document["summary"]["exit_code"] == 3
    assert took < 10, f"--timeout 1 took {took:.1f} s"  # a bound, not a measurement: kazoo's own timeouts are 10 s+
