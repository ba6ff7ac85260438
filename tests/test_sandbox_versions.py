"""The sandbox as a chosen Kafka release, checked against what real Kafka 4.0.0, 4.1.0 and 4.2.0 brokers answered.

tests/reference/ holds, from a real Apache Kafka 4.0.0 cluster: kafka-broker-api-versions.sh's
table, kafka-features.sh describe (before and after enabling ELR), and two step-by-step walk-throughs
(ELR off, 4.0's default, and on) with kafka-topics --describe at every step and the answers of Kafka's own
kafka-leader-election.sh beside this project's drop-in; from a real 4.1.0 cluster (ELR on by default) the
same tables and a longer walk-through (RF 3 and 2, a topic with unclean.leader.election.enable, a replica
outside the ELR coming back first); from a real 4.2.0 cluster the same tables and the same walk-through,
Kafka's tool alone (4.2 lists a rejoining replica by broker id). Each walk-through is replayed here against a
sandbox of the same release: every recorded Leader/Isr/Elr/LastKnownElr (read over the wire with
DescribeTopicPartitions, as kafka-topics does) and every answer must come out the same.
"""

from __future__ import annotations

import re
import signal
import socket
import struct
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner
from kafka import KafkaAdminClient
from kafka.protocol.broker_version_data import BROKER_API_VERSIONS
from kafka.protocol.metadata import ApiVersionsRequest, ApiVersionsResponse

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.sandbox_command import sandbox as sandbox_command
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.sizing import MAX_PARTITIONS, size_problem
from leader_election_cli.sandbox.versions import METADATA_VERSION_NAMES

REFERENCE = Path(__file__).resolve().parent / "reference"


def api_versions(sb: Sandbox, version: int = 4) -> ApiVersionsResponse:
    request = ApiVersionsRequest(version=version, client_software_name="t", client_software_version="1")
    request.with_header(correlation_id=7, client_id="versions-test")
    with socket.create_connection(sb.brokers[1], timeout=5) as sock:
        sock.sendall(request.encode(version=version, header=True, framed=True))
        size = struct.unpack(">i", _recv(sock, 4))[0]
        return ApiVersionsResponse.decode(_recv(sock, size), version=version, header=True)


def _recv(sock: socket.socket, n: int) -> bytes:
    data = b""
    for _ in range(n):  # bounded: each pass reads at least one byte
        if len(data) == n:
            break
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed")
        data += chunk
    return data


# -- ApiVersions and features ------------------------------------------------------------------------

def recorded_api_versions(release: str = "4.0.0") -> dict[int, tuple[int, int] | None]:
    """kafka-broker-api-versions.sh's lines: `Name(key): MIN to MAX`, `Name(key): V` or UNSUPPORTED."""
    table: dict[int, tuple[int, int] | None] = {}
    for line in (REFERENCE / f"kafka-{release}-api-versions.txt").read_text().splitlines():
        match = re.match(r"\s*\w+\((\d+)\): (?:(\d+)(?: to (\d+))?|(UNSUPPORTED))", line)
        if match:
            key, low, high, unsupported = match.groups()
            table[int(key)] = None if unsupported else (int(low), int(high or low))
    return table


@pytest.mark.parametrize(("version", "release"), [("4.0", "4.0.0"), ("4.1", "4.1.0"), (None, "4.2.0")],
                         ids=["4.0", "4.1", "default-4.2"])
def test_each_release_advertises_exactly_what_a_real_broker_of_it_does(version: str | None, release: str) -> None:
    recorded = recorded_api_versions(release)
    assert len(recorded) > 70
    with Sandbox(brokers=1, kafka_version=version) as sb:
        assert sb.kafka_version.release == release
        answer = {k.api_key: (k.min_version, k.max_version) for k in api_versions(sb).api_keys}
    assert answer == {key: ranges for key, ranges in recorded.items() if ranges is not None}


def recorded_features(after_upgrade: bool, release: str = "4.0.0") -> dict[str, tuple[int, int, int]]:
    """kafka-features describe: name -> (supported min, supported max, finalized), metadata.version by level."""
    text = (REFERENCE / f"kafka-{release}-features.txt").read_text()
    block = text.split("$ kafka-features.sh describe")[1] if after_upgrade else text.split("\n\n")[1]
    level = {name: number for number, name in METADATA_VERSION_NAMES.items()}
    features = {}
    for name, low, high, final in re.findall(
            r"Feature: (\S+)\tSupportedMinVersion: (\S+)\tSupportedMaxVersion: (\S+)\tFinalizedVersionLevel: (\S+)",
            block):
        features[name] = tuple(int(level.get(v, v)) for v in (low, high, final))
    return features


def described_features(sb: Sandbox) -> dict[str, tuple[int, int, int]]:
    """What kafka-features describe prints from an ApiVersions v4 answer (a feature not finalized: level 0)."""
    answer = api_versions(sb, 4)
    finalized = {f.name: f.max_version_level for f in answer.finalized_features}
    return {f.name: (f.min_version, f.max_version, finalized.get(f.name, 0)) for f in answer.supported_features}


@pytest.mark.parametrize("elr", [False, True], ids=["new-cluster", "elr-upgraded"])
def test_4_0_features_are_those_of_a_real_4_0_0_cluster(elr: bool) -> None:
    features = {"eligible.leader.replicas.version": 1} if elr else {}
    with Sandbox(brokers=1, kafka_version="4.0", features=features) as sb:
        assert described_features(sb) == recorded_features(after_upgrade=elr)
        assert sb.cluster.elr_enabled is elr


@pytest.mark.parametrize(("version", "release"), [(None, "4.2.0"), ("4.1", "4.1.0")], ids=["default-4.2", "4.1"])
def test_a_new_cluster_has_the_recorded_features_with_elr_on(version: str | None, release: str) -> None:
    with Sandbox(brokers=1, kafka_version=version) as sb:
        assert sb.kafka_version.release == release
        assert described_features(sb) == recorded_features(after_upgrade=False, release=release)
        assert sb.cluster.elr_enabled


def test_4_1_without_elr_is_4_1_with_the_feature_at_0() -> None:
    with Sandbox(brokers=1, kafka_version="4.1", features={"eligible.leader.replicas.version": 0}) as sb:
        expected = recorded_features(after_upgrade=False, release="4.1.0")
        expected["eligible.leader.replicas.version"] = (0, 1, 0)
        assert described_features(sb) == expected and not sb.cluster.elr_enabled
    result = CliRunner().invoke(sandbox_command, ["--feature", "share.version=1", "--brokers", "1",
                                                  "--kafka-version", "4.0"])
    assert result.exit_code == 2 and "Kafka 4.0 has no feature share.version" in result.stderr


@pytest.mark.parametrize(("mode", "version", "features", "expected"), [
    ("kraft", "4.0", {}, {"group.version": 1, "metadata.version": 25, "transaction.version": 2}),
    ("kraft", "4.0", {"eligible.leader.replicas.version": 1},
     {"eligible.leader.replicas.version": 1, "group.version": 1, "metadata.version": 25, "transaction.version": 2}),
    ("kraft", "4.1", {},
     {"eligible.leader.replicas.version": 1, "group.version": 1, "metadata.version": 27, "transaction.version": 2}),
    ("kraft", None, {},
     {"eligible.leader.replicas.version": 1, "group.version": 1, "metadata.version": 29, "share.version": 1,
      "streams.version": 1, "transaction.version": 2}),
    ("kraft", "4.1", {"eligible.leader.replicas.version": 0},
     {"group.version": 1, "metadata.version": 27, "transaction.version": 2}),
    ("zk", None, {}, {}),
])
def test_the_client_reads_the_features_the_cluster_reports(mode: str, version: str | None, features: dict,
                                                           expected: dict) -> None:
    from leader_election_cli.cluster.admin import ClusterConnection
    from leader_election_cli.config.settings import load_client_settings

    with Sandbox(brokers=1, mode=mode, kafka_version=version, features=features) as sb, \
            ClusterConnection.connect(sb.bootstrap_servers, load_client_settings(None)) as cluster:
        assert cluster.finalized_features() == expected


def test_api_versions_v3_leaves_out_features_whose_minimum_is_0() -> None:
    with Sandbox(brokers=1, kafka_version="4.0") as sb:
        assert [f.name for f in api_versions(sb, 3).supported_features] == ["metadata.version"]


def test_3_9_in_both_modes() -> None:
    with Sandbox(brokers=1, mode="zk") as zk, Sandbox(brokers=1, kafka_version="3.9") as kraft:
        zk_answer, kraft_answer = api_versions(zk), api_versions(kraft)
        assert zk.kafka_version.name == "3.9"
        assert {k.api_key: (k.min_version, k.max_version) for k in zk_answer.api_keys} == BROKER_API_VERSIONS[(3, 9)]
        assert not zk_answer.supported_features and not zk_answer.finalized_features
        keys = {k.api_key: (k.min_version, k.max_version) for k in kraft_answer.api_keys}
        assert not set(keys) & {4, 5, 6, 7, 56, 58, 67} and keys[75] == (0, 0) and keys[0] == (0, 11)
        assert described_features(kraft) == {"kraft.version": (0, 1, 0), "metadata.version": (1, 21, 21)}
        assert not kraft.cluster.elr_enabled


@pytest.mark.parametrize(("mode", "version", "isr"), [
    ("zk", "3.9", (2, 3, 1)), ("kraft", "3.9", (2, 3, 1)), ("kraft", "4.0", (2, 3, 1)), ("kraft", "4.1", (2, 3, 1)),
    ("kraft", None, (1, 2, 3))], ids=["3.9-zk", "3.9", "4.0", "4.1", "default-4.2"])
def test_a_rejoining_replica_is_listed_as_each_release_lists_it(mode: str, version: str | None,
                                                                isr: tuple[int, ...]) -> None:
    """Appended to 4.1 (`Isr: 5,6,4` in kafka-4.1.0-leaderless-elr-on.txt), by broker id on 4.2 (`Isr: 4,5,6`)."""
    with Sandbox(brokers=3, mode=mode, kafka_version=version) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        sb.stop_broker(1)
        assert sb.cluster.partition_state("t", 0).isr == (2, 3)
        sb.start_broker(1)
        assert sb.cluster.partition_state("t", 0).isr == isr


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"kafka_version": "2.8"}, "unsupported Kafka version '2.8'; choose one of 3.9, 4.0, 4.1, 4.2"),
    ({"kafka_version": "4.0", "mode": "zk"}, "Kafka 4.0 has no zk mode; zk mode needs Kafka 3.9"),
    ({"features": {"eligible.leader.replicas.version": 2}},
     "Kafka 4.2 supports eligible.leader.replicas.version levels 0 to 1, not 2"),
    ({"kafka_version": "3.9", "features": {"eligible.leader.replicas.version": 1}},
     "Kafka 3.9 has no feature eligible.leader.replicas.version; it has kraft.version, metadata.version"),
    ({"mode": "zk", "features": {"kraft.version": 0}}, "--feature needs KRaft mode"),
])
def test_bad_versions_and_features_are_refused(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Sandbox(brokers=1, **kwargs)


@pytest.mark.parametrize(("args", "message"), [
    (["--kafka-version", "9"], "unsupported Kafka version '9'; choose one of 3.9, 4.0, 4.1, 4.2"),
    (["--feature", "eligible.leader.replicas.version"], "--feature needs NAME=LEVEL"),
    (["--feature", "metadata.version=4.0-IV1"], "the sandbox keeps metadata.version at 29"),
    (["--kafka-version", "4.1", "--feature", "metadata.version=4.0-IV1"], "the sandbox keeps metadata.version at 27"),
    (["--kafka-version", "4.0", "--feature", "metadata.version=4.0-IV1"], "the sandbox keeps metadata.version at 25"),
    (["--topics", "20", "--partitions", "1000000"],
     f"20,000,000 partitions in all is more than the sandbox's bound of {MAX_PARTITIONS:,}"),
])
def test_the_command_refuses_them_with_one_line_and_exit_2(args: list[str], message: str) -> None:
    result = CliRunner().invoke(sandbox_command, args)
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0].startswith("--topics 20 x" if "--topics" in args else message)
    assert message in result.stderr and "Traceback" not in result.stderr


def test_the_memory_bound_is_checked_against_what_is_available() -> None:
    assert size_problem(1_000_000, 3, available=64 * 2**30) is None
    assert "need about 1.5 GiB, more than 80% of the 1.0 GiB available" in size_problem(1_000_000, 3, available=2**30)


def test_a_signal_while_building_stops_the_command_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """SIGTERM in the middle of building (here: a build that would never end) stops it with exit 130."""
    import os

    from leader_election_cli.sandbox import scenarios

    def endless_build(sb: Sandbox, *_: object) -> None:
        os.kill(os.getpid(), signal.SIGTERM)
        for _ in range(10**9):  # bounded, and ended by the signal long before
            sb.cluster.version += 0

    monkeypatch.setattr(scenarios, "build", endless_build)
    before = signal.getsignal(signal.SIGTERM)
    result = CliRunner().invoke(sandbox_command, ["--brokers", "1"])
    assert result.exit_code == 130
    assert "Stopped by SIGTERM while building the sandbox; nothing was served." in result.stderr
    assert signal.getsignal(signal.SIGTERM) is before


# -- the walk-throughs -------------------------------------------------------------------------------

DESCRIBE = re.compile(r"^ Topic: (\S+) Partition: (\d+) Leader: (\S+) Replicas: (\S*) Isr: (\S*) Elr: (\S*)"
                      r" LastKnownElr: (\S*)\s*$")
TOPIC = re.compile(r"^Topic: (\S+) TopicId: \S+ PartitionCount: \d+ ReplicationFactor: \d+ Configs: ?(.*)$")
COMMAND = re.compile(r"^\$ (kafka-leader-election\.sh|project kafka-leader-election) (.*?)(?: --output text)?$")
KAFKA_TOOL = "kafka-leader-election.sh"


@dataclass
class Answer:
    args: list[str]
    state: int  # the step's describe it was run on (the last one before it)
    rc: int = 0
    stdout: str = ""
    stderr: list[str] = field(default_factory=list)


@dataclass
class Step:
    title: str
    states: list[dict[str, tuple]] = field(default_factory=list)  # every describe: topic -> (leader, ...)
    # (Kafka's tool, the drop-in after it: None where only Kafka's tool was recorded)
    answers: list[tuple[Answer, Answer | None]] = field(default_factory=list)
    configs: dict[str, str] = field(default_factory=dict)


def ids(text: str) -> tuple[int, ...]:
    return tuple(int(b) for b in text.split(",") if b)


def parse_walkthrough(path: Path) -> list[Step]:
    steps: list[Step] = []
    describe: dict[str, tuple] | None = None
    answer: Answer | None = None
    for line in path.read_text().splitlines():
        if line.startswith("===== "):
            steps.append(Step(line[6:]))
            continue
        if not steps:
            continue
        step = steps[-1]
        if m := TOPIC.match(line):
            if describe is None:
                describe = {}
                step.states.append(describe)
            step.configs[m.group(1)] = m.group(2).strip()
            continue
        if m := DESCRIBE.match(line):
            leader = -1 if m.group(3) == "none" else int(m.group(3))
            describe[m.group(1)] = (leader, *(ids(m.group(i)) for i in range(4, 8)))
            continue
        describe = None
        if m := COMMAND.match(line):
            answer = Answer(m.group(2).split(), len(step.states) - 1)
            if m.group(1) == KAFKA_TOOL:
                step.answers.append((answer, None))
            else:
                step.answers[-1] = (step.answers[-1][0], answer)
        elif answer is not None and line.startswith("rc="):
            answer.rc = int(line[3:])
        elif answer is not None and line.startswith("stdout: "):
            answer.stdout = line[8:]
        elif answer is not None and line.startswith("stderr:"):
            answer.stderr = [line[8:]] if line[8:] else []
        elif answer is not None and answer.stderr and line.startswith(("org.apache", " at ")):
            answer.stderr.append(line)  # Kafka's stack trace
    return steps


RESET = "reset"  # the step's first describe is set as it was recorded (the brokers were cycled off the record)


@dataclass
class Walk:
    """How a recording was made: the release, the features changed, the brokers, and what happened before each
    step's first describe: (stop, start) a broker, or RESET."""

    version: str
    features: dict[str, int]
    brokers: int
    actions: list[tuple[int | None, int | None] | str]
    rebalance_before: frozenset[int] = frozenset()  # steps before which the controller's rebalance ran


# 4.0: the ELR walk-through's step 4 shows every partition back on its preferred leader 1 before any election
# was asked for, the controller's automatic preferred election (auto.leader.rebalance.enable) having run. The
# ELR-off recording's step 4 was taken before that check came round (its tool's election did the move). The
# recorded cluster had a third broker, outside these replica sets, that the tools asked.
# 4.1: brokers 1-3 are the controller quorum's combined nodes, 4-6 (a, b, c) hold the replicas; automatic
# rebalance off on every node. Part A: c, b, a stop, then b, c, a start; B0 is after a restart of all three
# that the record does not detail; part B: c, b, a stop, then c (outside the ELR), b, a start.
# 4.2: the same cluster and steps, without the restart before B0; Kafka's tool alone, with a describe after
# each pass of elections.
ACTIONS_4_0: list[tuple[int | None, int | None] | str] = [(None, None), (2, None), (1, None), (None, 2), (None, 1)]
WALKTHROUGHS = {
    "kafka-4.0.0-leaderless-elr-off.txt": Walk("4.0", {}, 3, ACTIONS_4_0),
    "kafka-4.0.0-leaderless-elr-on.txt": Walk("4.0", {"eligible.leader.replicas.version": 1}, 3, ACTIONS_4_0,
                                              frozenset({4})),
    "kafka-4.1.0-leaderless-elr-on.txt": Walk("4.1", {}, 6, [
        (None, None), (6, None), (5, None), (4, None), (None, 5), (None, 6), (None, 4), (None, None),
        RESET, (6, None), (5, None), (4, None), (None, 6), (None, 5), (None, 4)]),
    "kafka-4.2.0-leaderless-elr-on.txt": Walk("4.2", {}, 6, [
        (None, None), (6, None), (5, None), (4, None), (None, 5), (None, 6), (None, 4), (None, None),
        (None, None), (6, None), (5, None), (4, None), (None, 6), (None, 5), (None, 4)]),
}


def described(sb: Sandbox, topics: list[str]) -> dict[str, tuple]:
    """Partition 0 of each topic as kafka-topics --describe reads it (DescribeTopicPartitions)."""
    with KafkaAdminClient(bootstrap_servers=live_servers(sb), request_timeout_ms=5000) as admin:
        answer = admin.describe_topic_partitions(topics)
    return {t["name"]: (p["leader_id"], tuple(p["replica_nodes"]), tuple(p["isr_nodes"]),
                        tuple(p["eligible_leader_replicas"] or ()), tuple(p["last_known_elr"] or ()))
            for t in answer["topics"] for p in t["partitions"]}


def live_servers(sb: Sandbox) -> str:
    return ",".join(f"{h}:{p}" for b, (h, p) in sb.brokers.items() if b in sb.live_brokers)


def run_drop_in(sb: Sandbox, args: list[str]) -> tuple[int, str, list[str]]:
    result = CliRunner().invoke(drop_in, ["--bootstrap-server", live_servers(sb), *args, "--output", "text"],
                                catch_exceptions=False)
    return result.exit_code, result.stdout.rstrip("\n"), result.stderr.splitlines()


@pytest.mark.parametrize("recording", list(WALKTHROUGHS))
def test_the_recorded_walkthrough_replays_step_by_step(recording: str) -> None:
    walk = WALKTHROUGHS[recording]
    steps = parse_walkthrough(REFERENCE / recording)
    assert len(steps) == len(walk.actions) and all(s.states for s in steps)
    start = steps[0].states[0]
    topics = sorted(start)
    with Sandbox(brokers=walk.brokers, kafka_version=walk.version, features=walk.features,
                 broker_configs={"auto.leader.rebalance.enable": "false"}) as sb:
        for topic, (_, replicas, isr, _, _) in start.items():
            configs = dict(c.split("=", 1) for c in steps[0].configs[topic].split(",") if c)
            sb.create_topic(topic, assignment={0: list(replicas)}, configs=configs)
            sb.set_isr(topic, 0, list(isr))  # the ISR's order comes from the topic's history
        compared = 0
        for number, (step, action) in enumerate(zip(steps, walk.actions, strict=True)):
            if action == RESET:
                for topic, (leader, _, isr, elr, last_known) in step.states[0].items():
                    sb.cluster.edit(topic, 0, isr=list(isr), leader=leader, elr=list(elr),
                                    last_known_elr=list(last_known))
            else:
                stop, start_again = action
                if stop:
                    sb.stop_broker(stop)
                if start_again:
                    sb.start_broker(start_again)
            if number in walk.rebalance_before:
                sb.rebalance_leaders()
            assert described(sb, topics) == step.states[0], step.title
            shown = 0
            for kafka, recorded in step.answers:
                if kafka.state != shown:  # the describe between two passes of elections
                    shown = kafka.state
                    assert described(sb, topics) == step.states[shown], step.title
                code, out, err = run_drop_in(sb, kafka.args)  # on the state Kafka's tool saw
                # Kafka's answer without its stack trace, after the drop-in's own warnings: data loss where
                # an unclean election elected a leader outside the ISR (and which replica would have led without
                # loss), and an ISR left under min.insync.replicas
                # (docs/commands/kafka-leader-election.md)
                warnings = [line for line in err if line.startswith("Warning: ")]
                elected_unclean = "unclean" in kafka.args and kafka.stdout.startswith("Successfully")
                assert (code, out, err[len(warnings):]) == (kafka.rc, kafka.stdout, kafka.stderr[:1]), \
                    (step.title, kafka.args)
                assert sum("would elect a leader outside the ISR" in w for w in warnings) == elected_unclean, \
                    (step.title, kafka.args)
                # every recorded unclean election had a lost in-sync or eligible replica to wait for instead
                assert sum("could instead recover without data loss" in w for w in warnings) == elected_unclean, \
                    (step.title, kafka.args)
                compared += 1
                if recorded is not None:  # and again, on the state the drop-in saw after Kafka's tool had run
                    assert run_drop_in(sb, recorded.args) == (recorded.rc, recorded.stdout, recorded.stderr), \
                        (step.title, recorded.args)
                    compared += 1
            assert described(sb, topics) == step.states[-1], step.title
        assert compared >= 20
