"""`kafka-leader-election` end to end against the sandbox, in both controller modes."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from commands import run_command

from leader_election_cli.cli.drop_in_command import command
from leader_election_cli.java_order import java_hash_set_order
from leader_election_cli.model import TopicPartition
from leader_election_cli.sandbox import Sandbox

REPORT_SCHEMA = json.loads(resources.files("leader_election_cli").joinpath("schemas/report.schema.json").read_text())
ELECT_LEADERS, METADATA = 43, 3


elect = partial(run_command, command)


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox], mode: str) -> Sandbox:
    return sandbox_factory(mode=mode, topics={"t1": {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}})


def preferred(sb: Sandbox, *selection: str, output: str = "text") -> tuple[int, str, str]:
    return elect("--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                 "--output", output, *selection)


def test_preferred_election_after_a_broker_restart(sb: Sandbox) -> None:
    sb.stop_broker(1)
    sb.start_broker(1)
    assert sb.partition_state("t1", 0).leader != 1
    code, out, err = preferred(sb, "--all-topic-partitions")
    assert (code, out, err) == (0, "Successfully completed leader election (PREFERRED) for partitions t1-0\n", "")
    assert [sb.partition_state("t1", p).leader for p in range(3)] == [1, 2, 3]


def test_the_election_request_gets_a_whole_timeout_after_slow_reads(sb: Sandbox) -> None:
    """The read before the election takes 2.5 s of --timeout 4, the election 2.5 s more: the election
    still gets a whole timeout, as Kafka's AdminClient gives each call (it got the 1.5 s the read left).
    Each request has 1.5 s to spare on a loaded machine (it was 0.6 s of --timeout 1: 0.4 s)."""
    sb.set_leader("t1", 0, 2)
    sb.delay_next(METADATA, 0)  # kafka-python's bootstrap
    sb.delay_next(METADATA, 2.5)  # the read of every partition's leader
    sb.delay_next(ELECT_LEADERS, 2.5)
    code, out, err = preferred(sb, "--all-topic-partitions", "--timeout", "4")
    assert (code, out) == (0, "Successfully completed leader election (PREFERRED) for partitions t1-0\n"), err


def test_nothing_to_do_explicit_partition_vs_all_partitions(sb: Sandbox) -> None:
    assert preferred(sb, "--topic", "t1", "--partition", "0") == (
        0, "Valid replica already elected for partitions t1-0\n", "")
    assert preferred(sb, "--all-topic-partitions") == (0, "", "")  # Kafka prints nothing here


def test_unknown_topic_and_partition_fail_with_the_brokers_message(sb: Sandbox, tmp_path: Path) -> None:
    file = tmp_path / "p.json"
    file.write_text(json.dumps({"partitions": [{"topic": "nosuch", "partition": 0},
                                               {"topic": "t1", "partition": 99}]}))
    code, out, err = preferred(sb, "--path-to-json-file", str(file))
    assert code == 1
    prefix = "Error completing leader election (PREFERRED) for partition: "
    exc = "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: "
    if sb.mode == "kraft":
        assert f"{prefix}nosuch-0: {exc}No such topic as nosuch" in out.splitlines()
        assert f"{prefix}t1-99: {exc}No such partition as t1-99" in out.splitlines()
    else:
        assert f"{prefix}nosuch-0: {exc}The partition does not exist." in out.splitlines()
    assert err == "2 replica(s) could not be elected\n"


def test_preferred_replica_down_is_a_failure_and_others_still_elect(sb: Sandbox) -> None:
    sb.set_leader("t1", 1, 3)  # t1-1 prefers broker 2, which stays up
    sb.stop_broker(1)  # t1-0 prefers broker 1
    code, out, err = preferred(sb, "--all-topic-partitions")
    assert code == 1
    lines = out.splitlines()
    assert lines[0] == "Successfully completed leader election (PREFERRED) for partitions t1-1"
    assert lines[1].startswith("Error completing leader election (PREFERRED) for partition: t1-0: "
                               "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: ")
    assert err == "1 replica(s) could not be elected\n"
    assert sb.partition_state("t1", 1).leader == 2


def test_unclean_election_on_a_leaderless_partition(sb: Sandbox) -> None:
    sb.create_topic("u", assignment={0: [1, 2], 1: [1, 3]})
    sb.set_isr("u", 0, [1])
    sb.set_isr("u", 1, [1])
    sb.stop_broker(3)
    sb.stop_broker(1)  # u-0: leaderless, broker 2 live but out of sync; u-1: no live replica
    assert sb.partition_state("u", 0).leader == -1
    code, out, err = elect("--bootstrap-server", sb.bootstrap_servers, "--election-type", "UNCLEAN",
                           "--topic", "u", "--partition", "0", "--output", "text")
    assert (code, out) == (0, "Successfully completed leader election (UNCLEAN) for partitions u-0\n")
    state = sb.partition_state("u", 0)
    assert (state.leader, list(state.isr)) == (2, [2])
    code, out, err = elect("--bootstrap-server", sb.bootstrap_servers, "--election-type", "unclean",
                           "--topic", "u", "--partition", "1", "--output", "text")
    assert code == 1
    assert "org.apache.kafka.common.errors.EligibleLeadersNotAvailableException" in out


def test_unclean_on_a_partition_with_a_live_leader_needs_no_election(sb: Sandbox) -> None:
    code, out, _ = elect("--bootstrap-server", sb.bootstrap_servers, "--election-type", "unclean",
                         "--topic", "t1", "--partition", "0", "--output", "text")
    assert (code, out) == (0, "Valid replica already elected for partitions t1-0\n")


def test_json_output_reports_every_partition_with_leaders(sb: Sandbox) -> None:
    sb.set_leader("t1", 0, 2)
    code, out, _ = preferred(sb, "--all-topic-partitions", output="json")
    doc = json.loads(out)
    jsonschema.validate(doc, REPORT_SCHEMA)
    rows = {(p["topic"], p["partition"]): p for p in doc["partitions"]}
    assert code == 0 and len(rows) == 3
    assert rows[("t1", 0)]["outcome"] == "elected"
    assert (rows[("t1", 0)]["leader_before"], rows[("t1", 0)]["leader_after"]) == (2, 1)
    assert rows[("t1", 1)]["outcome"] == "already_elected"


def test_table_output(sb: Sandbox) -> None:
    sb.set_leader("t1", 0, 2)
    code, out, _ = preferred(sb, "--topic", "t1", "--partition", "0", output="table")
    assert code == 0 and "elected" in out and "2 -> 1" in out


def test_batches_go_out_at_most_batch_size_at_a_time(sb: Sandbox) -> None:
    sb.create_topic("wide", partitions=10, replication_factor=2)
    before = sb.request_count(ELECT_LEADERS)
    code, _, _ = preferred(sb, "--all-topic-partitions", "--batch-size", "4")
    assert code == 0
    sent = sb.request_count(ELECT_LEADERS) - before
    sizes = [r.partitions for r in sb.request_log if r.api_key == ELECT_LEADERS][-sent:]
    assert sizes and max(sizes) <= 4 and sum(sizes) == 13


def test_invalid_input_sends_nothing(sb: Sandbox) -> None:
    before = sb.request_count()
    code, out, err = elect("--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                           "--topic", "t1")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == "Missing required option(s): partition"
    assert sb.request_count() == before


@pytest.mark.parametrize("repeat, name", [(["--election-type", "unclean"], "election-type"),
                                          (["--topic", "t2"], "topic"), (["--partition", "1"], "partition")])
def test_an_option_given_twice_is_refused_as_kafka_does(sb: Sandbox, repeat: list[str], name: str) -> None:
    """joptsimple's valueOf refuses a repeated option; click would silently take the last value."""
    before = sb.request_count()
    code, out, err = preferred(sb, "--topic", "t1", "--partition", "0", *repeat)
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == f"Found multiple arguments for option {name}, but you asked for only one"
    assert sb.request_count() == before


@pytest.mark.parametrize("repeat, name, value", [
    (["--election-type", "bogus", "--election-type", "preferred"], "election-type", "bogus"),
    (["--partition", "x", "--partition", "0"], "partition", "x")])
def test_every_value_of_a_repeated_option_is_converted_first_as_kafka_does(
        sb: Sandbox, repeat: list[str], name: str, value: str) -> None:
    """joptsimple's valueOf converts every value before it refuses a second one."""
    code, out, err = elect("--bootstrap-server", sb.bootstrap_servers, "--topic", "t1", *repeat,
                           *(["--partition", "0"] if name != "partition" else ["--election-type", "preferred"]))
    assert (code, out, err.splitlines()[0]) == (2, "", f"Cannot parse argument '{value}' of option {name}")


@pytest.mark.parametrize("topic, partition, shown", [("t1", "-1", "t1--1"), ("bad name", "0", "bad name-0"),
                                                     ("t\u00f3pico", "0", "t\u00f3pico-0"), ("", "0", "-0"),
                                                     ("t" * 300, "-2147483648", "t" * 300 + "--2147483648")])
def test_a_partition_no_topic_can_have_is_sent_and_answered_as_kafka_does(
        sb: Sandbox, topic: str, partition: str, shown: str) -> None:
    """Kafka's tool checks neither the name nor the sign: the controller answers UNKNOWN_TOPIC_OR_PARTITION."""
    code, out, err = preferred(sb, "--topic", topic, "--partition", partition)
    assert out.startswith(f"Error completing leader election (PREFERRED) for partition: {shown}: "
                          "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: ")
    assert (code, err) == (1, "1 replica(s) could not be elected\n")
    code, out, err = preferred(sb, "--topic", topic, "--partition", partition, output="json")
    document = json.loads(out)  # the partition as sent, in a document its schema accepts
    jsonschema.validate(document, REPORT_SCHEMA)
    assert [(p["topic"], p["partition"], p["outcome"]) for p in document["partitions"]] == \
        [(topic, int(partition), "failed")]


def test_a_refused_server_fails_quickly_after_kafkas_timeout_line(refused_address: Callable[[], str]) -> None:
    address = refused_address()
    code, out, err = elect("--bootstrap-server", address, "--election-type", "preferred",
                           "--all-topic-partitions", "--timeout", "1.5", "--output", "text")
    assert code == 3
    assert out == "Timeout waiting for election results\n"  # Kafka's, which it prints after its timeout
    assert err.startswith(f"{address} refused the connection")


def test_python_dash_m_runs_the_drop_in() -> None:
    done = subprocess.run([sys.executable, "-m", "leader_election_cli", "--version"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0 and "kafka-leader-election" in done.stdout


def test_unclean_against_an_elect_leaders_v0_cluster_is_refused_before_sending(sb: Sandbox) -> None:
    sb.set_max_version(ELECT_LEADERS, 0)
    code, out, err = elect("--bootstrap-server", sb.bootstrap_servers, "--election-type", "unclean",
                           "--all-topic-partitions", "--output", "text")
    assert (code, out) == (2, "")
    assert err.startswith("Unclean election is not supported by this cluster: its brokers only speak ElectLeaders v0")
    assert sb.request_count(ELECT_LEADERS) == 0


def test_not_controller_is_refreshed_and_retried() -> None:
    with Sandbox(brokers=3, mode="zk") as sb:
        sb.create_topic("t1", assignment={0: [1, 2, 3]})
        sb.set_leader("t1", 0, 2)
        sb.fail_next(ELECT_LEADERS, 41)  # as a broker that just lost the controllership answers
        code, out, _ = preferred(sb, "--topic", "t1", "--partition", "0")
        assert (code, out) == (0, "Successfully completed leader election (PREFERRED) for partitions t1-0\n")
        assert sb.request_count(ELECT_LEADERS) == 2


def test_admin_config_is_deprecated_like_kafka_says_it(sb: Sandbox, tmp_path: Path) -> None:
    config = tmp_path / "admin.properties"
    config.write_text("client.id=runbook\n")
    deprecated = ("Option --admin.config has been deprecated and will be removed in a future version. "
                  "Use --command-config instead.")
    code, out, err = preferred(sb, "--topic", "t1", "--partition", "0", "--admin.config", str(config))
    assert code == 0  # Kafka prints it on stdout, before the result lines
    assert out.splitlines() == [deprecated, "Valid replica already elected for partitions t1-0"]
    code, out, err = preferred(sb, "--topic", "t1", "--partition", "0", "--admin.config", str(config),
                               output="json")
    assert json.loads(out)["summary"]["already_elected"] == 1 and deprecated in err  # stdout stays JSON


@pytest.mark.parametrize("extra", [[], ["--dry-run"]], ids=["elect", "dry-run"])
def test_an_empty_election_file_prints_nothing_as_kafka_but_json_and_table_still_answer(
        sb: Sandbox, tmp_path: Path, extra: list[str]) -> None:
    file = tmp_path / "none.json"
    file.write_text('{"partitions": []}')
    before = sb.request_count()
    assert preferred(sb, "--path-to-json-file", str(file), *extra) == (0, "", "")
    code, out, _ = preferred(sb, "--path-to-json-file", str(file), *extra, output="json")
    document = json.loads(out)
    jsonschema.validate(document, REPORT_SCHEMA)
    assert (code, document["partitions"], document["dry_run"]) == (0, [], bool(extra))
    code, out, _ = preferred(sb, "--path-to-json-file", str(file), *extra, output="table")
    assert code == 0 and "nothing selected" in out
    assert sb.request_count() == before


def test_a_dry_run_that_cannot_reach_the_cluster_does_not_print_kafkas_timeout_line(
        refused_address: Callable[[], str]) -> None:
    address = refused_address()
    code, out, err = elect("--bootstrap-server", address, "--election-type", "preferred",
                           "--all-topic-partitions", "--timeout", "1", "--output", "text", "--dry-run")
    assert (code, out) == (3, "")  # no election was asked for, so none timed out
    assert err.startswith(f"{address} refused the connection")


def test_json_output_still_gets_a_document_when_the_cluster_cannot_be_reached(
        refused_address: Callable[[], str]) -> None:
    """CI reads stdout as JSON: exit 3 with an empty stdout broke the parse."""
    address = refused_address()
    code, out, err = elect("--bootstrap-server", address, "--election-type", "preferred",
                           "--topic", "t1", "--partition", "0", "--timeout", "1", "--output", "json")
    document = json.loads(out)
    jsonschema.validate(document, REPORT_SCHEMA)
    assert code == 3 == document["summary"]["exit_code"]
    assert [(p["topic"], p["partition"], p["outcome"]) for p in document["partitions"]] == [("t1", 0, "not_attempted")]
    assert document["summary"]["stopped"] == err.splitlines()[0]


@pytest.mark.parametrize("selection", ["all", "file"])
def test_a_large_election_goes_out_in_requests_a_kraft_controller_accepts(tmp_path: Path, selection: str) -> None:
    """Without --batch-size, more partitions than one request safely carries (5,000: half of the 10,000 a
    KRaft controller changes per request) go out in requests of 5,000 at once, without those already led
    by their preferred replica (never refused and halved); Kafka's lines are unchanged: every partition
    elected, the others already elected."""
    with Sandbox(brokers=2) as sb:
        sb.create_topic("big", assignment={p: [1, 2] for p in range(12_000)})
        for p in range(11_000):
            sb.set_leader("big", p, 2)
        args = ["--all-topic-partitions"]
        if selection == "file":
            (tmp_path / "p.json").write_text(json.dumps({"partitions": [{"topic": "big", "partition": p}
                                                                        for p in range(12_000)]}))
            args = ["--path-to-json-file", str(tmp_path / "p.json")]
        code, out, _ = preferred(sb, *args)
        lines = out.splitlines()
        elected, not_needed = [TopicPartition("big", p) for p in range(11_000)], \
            [TopicPartition("big", p) for p in range(11_000, 12_000)]
        answer = java_hash_set_order(elected + ([] if selection == "all" else not_needed), elected + not_needed)
        assert code == 0 and lines[0] == "Successfully completed leader election (PREFERRED) for partitions " + \
            ", ".join(map(str, java_hash_set_order(answer, set(elected))))  # in Kafka's HashSet order
        already = ", ".join(map(str, java_hash_set_order(answer, set(not_needed))))
        assert lines[1:] == ([] if selection == "all" else [f"Valid replica already elected for partitions {already}"])
        assert [r.partitions for r in sb.request_log if r.api_key == ELECT_LEADERS] == [5_000, 5_000, 1_000]
