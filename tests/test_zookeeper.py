"""The deprecated --zookeeper path (KIP-183) of the drop-in, against a real ZooKeeper and a zk-mode sandbox.

Every test gets its own chroot on one session-wide ZooKeeper server, so tests never see each other's
znodes. "No controller" setups stop every sandbox broker: the election znode then stays where the
command wrote it, so what was (or was not) written can be inspected.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st
from kazoo.client import KazooClient
from kazoo.security import make_digest_acl
from zk_server import ZooKeeperServer, start_zookeeper, zookeeper_server  # noqa: F401 (fixture)

from leader_election_cli.cli.drop_in_command import command
from leader_election_cli.cluster import zookeeper
from leader_election_cli.cluster.zookeeper import MAX_ELECTION_BYTES, Deadline, ZooKeeper, start_election
from leader_election_cli.errors import InputError
from leader_election_cli.model import TopicPartition
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.znodes import ELECTION_PATH, encode_election, parse_connect_string

pytestmark = pytest.mark.zookeeper

DEPRECATION = ("Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.\n"
               "Use --bootstrap-server instead to specify a broker to connect to.\n")
ASSIGNMENT = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}


def run(*args: str) -> Result:
    return CliRunner().invoke(command, list(args))


def elect(connect: str, *args: str) -> Result:
    return run("--zookeeper", connect, "--election-type", "preferred", "--output", "text", "--timeout", "10", *args)


@pytest.fixture
def connect(zookeeper_server: ZooKeeperServer) -> str:  # noqa: F811
    """A fresh chroot on the shared server."""
    return f"{zookeeper_server.address}/test-{uuid.uuid4().hex[:12]}"


@pytest.fixture
def zk(connect: str) -> Iterator[KazooClient]:
    """A plain kazoo client in the test's chroot, to look at what was written."""
    hosts, _, chroot = connect.partition("/")
    with_root = KazooClient(hosts=hosts)
    with_root.start(timeout=10)
    with_root.ensure_path("/" + chroot)
    with_root.stop()
    with_root.close()
    client = KazooClient(hosts=connect)
    client.start(timeout=10)
    yield client
    client.stop()
    client.close()


@pytest.fixture
def sandbox(connect: str) -> Iterator[Sandbox]:
    """Three zk-mode brokers mirrored into the test's chroot; topic t1, leaders off their preferred replicas."""
    with Sandbox(brokers=3, mode="zk", zookeeper=connect) as sb:
        sb.create_topic("t1", assignment=ASSIGNMENT)
        sb.create_topic("t2", assignment={0: [2, 1]})
        sb.set_leader("t1", 0, 2)  # t1-0 and t1-2 need an election, t1-1 and t2-0 do not
        sb.set_leader("t1", 2, 1)
        yield sb


@pytest.fixture
def no_controller(sandbox: Sandbox) -> Sandbox:
    """The same cluster with every broker stopped: nobody acts on the election znode."""
    for broker in (1, 2, 3):
        sandbox.stop_broker(broker)
    return sandbox


def leaders(sb: Sandbox) -> dict[str, int]:
    return {f"t1-{p}": sb.partition_state("t1", p).leader for p in ASSIGNMENT} | {
        "t2-0": sb.partition_state("t2", 0).leader}


def wait_until(condition: object, timeout: float = 60.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


# -- waiting for the controller and reporting ----------------------------------------------------------

def test_all_partitions_are_elected_and_reported(sandbox: Sandbox, connect: str, zk: KazooClient) -> None:
    result = elect(connect, "--all-topic-partitions")
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Successfully completed leader election (PREFERRED) for partitions t1-2, t1-0\n"
    assert result.stderr == DEPRECATION
    assert leaders(sandbox) == {"t1-0": 1, "t1-1": 2, "t1-2": 3, "t2-0": 2}
    assert zk.exists(ELECTION_PATH) is None
    state = json.loads(zk.get("/brokers/topics/t1/partitions/0/state")[0])
    assert state["leader"] == 1 and state["isr"] == [1, 2, 3]


def test_a_dead_preferred_replica_fails_its_partition(sandbox: Sandbox, connect: str) -> None:
    sandbox.stop_broker(3)  # preferred replica of t1-2; t1-0 can still move to broker 1
    result = elect(connect, "--all-topic-partitions")
    assert result.exit_code == 1
    assert result.stdout.splitlines() == [
        "Successfully completed leader election (PREFERRED) for partitions t1-0",
        "Error completing leader election (PREFERRED) for partition: t1-2: "
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for "
        "partition t1-2 under strategy PreferredReplicaPartitionLeaderElectionStrategy: "
        "preferred replica 3 is not live",
    ]
    assert result.stderr.endswith("1 replica(s) could not be elected\n")
    assert leaders(sandbox)["t1-0"] == 1 and leaders(sandbox)["t1-2"] == 1


def test_a_preferred_replica_out_of_the_isr_fails_its_partition(sandbox: Sandbox, connect: str) -> None:
    sandbox.set_isr("t1", 0, [2, 3])
    result = elect(connect, "--topic", "t1", "--partition", "0", "--output", "json")
    assert result.exit_code == 1
    [entry] = json.loads(result.stdout)["partitions"]
    assert entry["outcome"] == "failed" and entry["error_code"] == 80
    assert entry["error"].endswith("preferred replica 1 is not in the ISR [2, 3]")
    assert (entry["leader_before"], entry["leader_after"]) == (2, 2)


def test_topic_and_partition_selection(sandbox: Sandbox, connect: str) -> None:
    result = elect(connect, "--topic", "t1", "--partition", "0", "--output", "json")
    assert result.exit_code == 0, result.stderr
    [entry] = json.loads(result.stdout)["partitions"]
    assert (entry["topic"], entry["partition"], entry["outcome"]) == ("t1", 0, "elected")
    assert (entry["leader_before"], entry["leader_after"]) == (2, 1)
    assert leaders(sandbox)["t1-2"] == 1  # not selected, not touched


def test_json_file_selection_reports_already_elected(sandbox: Sandbox, connect: str, tmp_path: Path) -> None:
    file = tmp_path / "election.json"
    file.write_text(json.dumps({"partitions": [{"topic": "t1", "partition": 2}, {"topic": "t2", "partition": 0}]}))
    result = elect(connect, "--path-to-json-file", str(file))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Successfully completed leader election (PREFERRED) for partitions t1-2",
        "Valid replica already elected for partitions t2-0",
    ]
    assert leaders(sandbox)["t1-0"] == 2  # not selected, not touched


def test_a_cluster_at_the_root_without_chroot(zookeeper_server: ZooKeeperServer) -> None:  # noqa: F811
    with Sandbox(brokers=2, mode="zk", zookeeper=zookeeper_server.address) as sb:
        sb.create_topic("root-topic", assignment={0: [1, 2]})
        sb.set_leader("root-topic", 0, 2)
        result = elect(zookeeper_server.address, "--topic", "root-topic", "--partition", "0")
        assert result.exit_code == 0, result.stderr
        assert sb.partition_state("root-topic", 0).leader == 1


def test_another_chroot_holds_no_cluster(sandbox: Sandbox, zookeeper_server: ZooKeeperServer) -> None:  # noqa: F811
    result = elect(f"{zookeeper_server.address}/nothing-here-{uuid.uuid4().hex[:8]}", "--all-topic-partitions")
    assert result.exit_code == 2
    assert "No Kafka cluster in ZooKeeper" in result.stderr and "/brokers/topics does not exist" in result.stderr


@pytest.mark.parametrize("selection", [["--topic", "t1", "--partition", "0"], ["--all-topic-partitions"]])
def test_a_wrong_chroot_is_named_whatever_the_selection(sandbox: Sandbox, zookeeper_server: ZooKeeperServer,  # noqa: F811
                                                        selection: list[str]) -> None:
    result = elect(f"{zookeeper_server.address}/nothing-here-{uuid.uuid4().hex[:8]}", *selection)
    assert result.exit_code == 2
    assert "No Kafka cluster in ZooKeeper" in result.stderr


def test_topics_being_deleted_and_partitions_without_state_are_left_out(sandbox: Sandbox, connect: str,
                                                                         zk: KazooClient,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """Kafka's controller skips a topic queued for deletion, and a partition with no state znode would fail
    its whole election event (the znode never deleted): neither goes into the znode, both are reported."""
    zk.create("/admin/delete_topics/t2", makepath=True)
    zk.create("/brokers/topics/fresh", b'{"version":3,"partitions":{"0":[1,2]},"adding_replicas":{},'
                                       b'"removing_replicas":{}}')
    seen = []  # what the command writes (a watch could miss it: the controller deletes it within milliseconds)
    monkeypatch.setattr(zookeeper, "encode_election",
                        lambda partitions: seen.append(encode_election(partitions)) or seen[-1])
    result = elect(connect, "--all-topic-partitions")
    assert result.exit_code == 1, result.stderr
    lines = result.stdout.splitlines()
    assert lines, result.stderr
    assert lines[0] == "Successfully completed leader election (PREFERRED) for partitions t1-2, t1-0"
    assert any(line.startswith("Error completing leader election (PREFERRED) for partition: t2-0: "
                               "org.apache.kafka.common.errors.InvalidTopicException: The topic is being deleted")
               for line in lines)
    assert any("fresh-0: org.apache.kafka.common.errors.LeaderNotAvailableException: "
               "/brokers/topics/fresh/partitions/0/state does not exist yet" in line for line in lines)
    assert seen and b"t2" not in seen[0] and b"fresh" not in seen[0]
    assert zk.exists(ELECTION_PATH) is None


def test_an_unreadable_election_znode_is_refused_and_left_alone(no_controller: Sandbox, connect: str,
                                                                 zk: KazooClient) -> None:
    zk.create(ELECTION_PATH, b'{"version":1}', makepath=True)
    result = elect(connect, "--topic", "t1", "--partition", "0")
    assert result.exit_code == 5
    assert "is not an election Kafka can read" in result.stderr and "Internal error" not in result.stderr
    assert zk.get(ELECTION_PATH)[0] == b'{"version":1}'


# -- what is written, and what is not ---------------------------------------------------------------

def test_no_wait_writes_the_znode_and_returns(no_controller: Sandbox, connect: str, zk: KazooClient) -> None:
    result = elect(connect, "--all-topic-partitions", "--no-wait")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.splitlines() == [
        "Created preferred replica election path with t1-0,t1-1,t1-2,t2-0",
        "Successfully started preferred replica election for partitions Set(t1-0, t1-1, t1-2, t2-0)",
    ]
    data, _ = zk.get(ELECTION_PATH)
    assert data == (b'{"version":1,"partitions":[{"topic":"t1","partition":0},{"topic":"t1","partition":1},'
                    b'{"topic":"t1","partition":2},{"topic":"t2","partition":0}]}')
    no_controller.start_broker(1)  # a new controller takes the pending election over and deletes the znode
    assert wait_until(lambda: zk.exists(ELECTION_PATH) is None)


def test_an_election_in_progress_is_refused_and_left_untouched(no_controller: Sandbox, connect: str,
                                                                zk: KazooClient) -> None:
    zk.create(ELECTION_PATH, b'{"version":1,"partitions":[{"topic":"t1","partition":1}]}', makepath=True)
    before = zk.get(ELECTION_PATH)
    result = elect(connect, "--topic", "t1", "--partition", "0")
    assert result.exit_code == 5
    assert result.stdout == ""
    assert "Preferred replica leader election currently in progress for t1-1. Aborting operation" in result.stderr
    assert zk.get(ELECTION_PATH) == before  # same data, same version, same modification zxid


@pytest.mark.parametrize("selection", [["--topic", "nosuch", "--partition", "0"],
                                       ["--topic", "t1", "--partition", "99"],
                                       "file"])
def test_unknown_partitions_are_refused_before_writing(no_controller: Sandbox, connect: str, zk: KazooClient,
                                                       tmp_path: Path, selection: object) -> None:
    if selection == "file":
        file = tmp_path / "election.json"
        file.write_text(json.dumps({"partitions": [{"topic": "t1", "partition": 0},
                                                   {"topic": "t1", "partition": 99}]}))
        selection = ["--path-to-json-file", str(file)]
    result = elect(connect, *selection)  # type: ignore[arg-type]
    assert result.exit_code == 2
    assert "Unknown topic or partition in ZooKeeper:" in result.stderr
    assert zk.exists(ELECTION_PATH) is None


@pytest.mark.parametrize("topic", ["", "..", "../../admin", "a/b"])
def test_a_name_no_topic_can_have_is_refused_before_zookeeper_is_read(no_controller: Sandbox, connect: str,
                                                                      zk: KazooClient, topic: str) -> None:
    """On this path a topic name becomes a znode's path (/brokers/topics/NAME): Kafka's rules first."""
    result = elect(connect, "--topic", topic, "--partition", "0")
    assert result.exit_code == 2
    first = result.stderr.removeprefix(DEPRECATION).splitlines()[0]
    assert first.startswith("Topic name") and "Internal error" not in result.stderr
    assert zk.exists(ELECTION_PATH) is None


def test_an_acl_refusal_writes_nothing(sandbox: Sandbox, connect: str, zk: KazooClient) -> None:
    zk.set_acls("/admin", [make_digest_acl("kafka", "secret", all=True)])  # as a secured cluster would
    result = elect(connect, "--all-topic-partitions")
    assert result.exit_code == 4
    assert "ZooKeeper refused creating /admin/preferred_replica_election" in result.stderr
    assert "NoAuth" in result.stderr and "secret" not in result.stderr
    assert leaders(sandbox)["t1-0"] == 2


def test_an_election_too_large_for_one_znode_is_refused(connect: str, zk: KazooClient) -> None:
    partitions = [TopicPartition("t" * 200, p) for p in range(MAX_ELECTION_BYTES // 200)]
    with ZooKeeper.session(connect, Deadline(10)) as session, pytest.raises(InputError, match="more than ZooKeeper"):
        start_election(session, partitions)
    assert zk.exists(ELECTION_PATH) is None


# -- waiting that cannot finish ----------------------------------------------------------------------

def test_no_controller_times_out_and_says_the_election_was_started(no_controller: Sandbox, connect: str,
                                                                   zk: KazooClient) -> None:
    result = run("--zookeeper", connect, "--election-type", "preferred", "--all-topic-partitions", "--timeout", "3")
    assert result.exit_code == 3
    assert "Timed out after 3 s waiting for the controller" in result.stderr
    assert "the election was started" in result.stderr
    assert "No controller is registered" in result.stderr
    assert zk.exists(ELECTION_PATH) is not None


def test_losing_zookeeper_while_waiting(tmp_path: Path) -> None:
    server = start_zookeeper(tmp_path)  # its own server: this test kills it
    try:
        with Sandbox(brokers=2, mode="zk", zookeeper=server.address) as sb:
            sb.create_topic("t", assignment={0: [1, 2]})
            sb.stop_broker(1)
            sb.stop_broker(2)  # no controller: the command waits until ZooKeeper goes away
            watcher = KazooClient(hosts=server.address)
            watcher.start(timeout=10)

            def kill_when_written() -> None:
                wait_until(lambda: watcher.exists(ELECTION_PATH) is not None)
                server.process.kill()  # at once: a graceful stop could outlast the command's timeout

            killer = threading.Thread(target=kill_when_written)
            killer.start()
            result = run("--zookeeper", server.address, "--election-type", "preferred",
                         "--all-topic-partitions", "--timeout", "3")
            killer.join()
            watcher.stop()
            watcher.close()
        assert result.exit_code == 3
        assert "Lost the connection to ZooKeeper" in result.stderr
        assert "the election was started" in result.stderr
    finally:
        server.stop()


def test_an_unreachable_ensemble(refused_address: Callable[[], str]) -> None:
    address = refused_address()
    result = run("--zookeeper", f"{address}/kafka", "--election-type", "preferred", "--all-topic-partitions",
                 "--timeout", "1")
    assert result.exit_code == 3
    assert result.stderr.splitlines()[-2:] == [
        f"Could not connect to ZooKeeper at {address}/kafka within 1 s",
        "Hint: Check the --zookeeper host:port list and that the ensemble is running; nothing was written."]


# -- refused before connecting -----------------------------------------------------------------------

@pytest.mark.parametrize(("args", "message"), [
    (["--zookeeper", "127.0.0.1:1", "--election-type", "unclean", "--all-topic-partitions"],
     "Unclean elections cannot be made through ZooKeeper"),
    (["--zookeeper", "127.0.0.1:1", "--bootstrap-server", "127.0.0.1:1", "--election-type", "preferred",
      "--all-topic-partitions"], "Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided"),
    (["--bootstrap-server", "127.0.0.1:1", "--no-wait", "--election-type", "preferred", "--all-topic-partitions"],
     "Option --no-wait is only allowed with --zookeeper"),
    (["--zookeeper", "127.0.0.1:1", "--batch-size", "10", "--election-type", "preferred", "--all-topic-partitions"],
     "Option --batch-size can't be used with --zookeeper"),
    (["--zookeeper", "127.0.0.1:1", "--batch-interval", "1", "--election-type", "preferred",
      "--all-topic-partitions"], "Option --batch-interval can't be used with --zookeeper"),
    (["--zookeeper", "127.0.0.1:1", "--no-wait", "--output", "json", "--election-type", "preferred",
      "--all-topic-partitions"], "Option --no-wait has no per-partition results to print as JSON"),
    (["--zookeeper", "zk1:2181,:2181", "--election-type", "preferred", "--all-topic-partitions"],
     "Invalid ZooKeeper server ':2181'"),
    (["--zookeeper", "zk1:abc/kafka", "--election-type", "preferred", "--all-topic-partitions"],
     "Invalid ZooKeeper server 'zk1:abc'"),
    (["--zookeeper", "zk1:2181/kafka/", "--election-type", "preferred", "--all-topic-partitions"],
     "Invalid ZooKeeper chroot '/kafka/'"),
])
def test_refused_before_connecting(args: list[str], message: str) -> None:
    result = run(*args)
    assert result.exit_code == 2
    assert message in result.stderr
    assert result.stdout == ""


hosts = st.tuples(st.from_regex(r"[a-z0-9][a-z0-9.-]{0,20}", fullmatch=True),
                  st.none() | st.integers(1, 65535)).map(lambda h: h[0] if h[1] is None else f"{h[0]}:{h[1]}")
chroots = st.none() | st.lists(st.from_regex(r"[A-Za-z0-9_.-]{1,10}", fullmatch=True).filter(
    lambda part: part not in (".", "..")), min_size=1, max_size=3)


@given(st.lists(hosts, min_size=1, max_size=4), chroots)
def test_valid_connect_strings_are_kept(servers: list[str], chroot: list[str] | None) -> None:
    connect = ",".join(servers) + ("/" + "/".join(chroot) if chroot else "")
    assert parse_connect_string(connect) == connect
    assert parse_connect_string(" , ".join(servers) + ("/" + "/".join(chroot) if chroot else "")) == connect


@given(st.text(max_size=60))
def test_any_connect_string_is_accepted_or_refused_in_one_line(text: str) -> None:
    try:
        parse_connect_string(text)
    except InputError as exc:
        assert "\n" not in exc.message
