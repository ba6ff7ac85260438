"""`kafka-leaders prefer` end to end against the sandbox, in both controller modes."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from functools import partial
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from commands import run_command

from leader_election_cli import kafka_errors
from leader_election_cli.cli.toolkit import cli
from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.model import TopicPartition
from leader_election_cli.operations.moves import wait_for_reassignments
from leader_election_cli.sandbox import Sandbox

API_VERSIONS, METADATA, ELECT_LEADERS, ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS = 18, 3, 43, 45, 46
RESTORE_SCHEMA = json.loads(resources.files("leader_election_cli").joinpath("schemas/restore-file.schema.json")
                            .read_text())


kl = partial(run_command, cli)


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox], mode: str) -> Sandbox:
    return sandbox_factory(mode=mode, topics={"t": {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}})


def prefer(sb: Sandbox, *args: str) -> tuple[int, str, str]:
    return kl("prefer", "--bootstrap-server", sb.bootstrap_servers, "--output", "json", *args)


def rows(out: str) -> dict[str, dict]:
    return {f"{p['topic']}-{p['partition']}": p for p in json.loads(out)["partitions"]}


def test_prefer_elects_the_chosen_replica_after_saving_the_order(sb: Sandbox, tmp_path: Path) -> None:
    restore = tmp_path / "restore.json"
    code, out, err = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "3", "--restore-file", str(restore))
    assert (code, err) == (0, "")
    state = sb.partition_state("t", 0)
    assert (state.leader, state.replicas) == (3, (3, 1, 2))  # the same replicas, broker 3 first
    doc = json.loads(out)
    assert doc["restore_file"] == str(restore)
    assert doc["partitions"] == [{
        "topic": "t", "partition": 0, "outcome": "elected", "replicas_before": [1, 2, 3],
        "replicas_after": [3, 1, 2], "leader_before": 1, "expected_leader": 3, "leader_after": 3,
        "error_code": 0, "error": None}]
    saved = json.loads(restore.read_text())
    jsonschema.validate(saved, RESTORE_SCHEMA)
    assert saved["command"] == "prefer"
    assert saved["partitions"] == [{"topic": "t", "partition": 0, "replicas": [1, 2, 3], "leader": 1}]
    assert (sb.request_count(ALTER_REASSIGNMENTS), sb.request_count(ELECT_LEADERS)) == (1, 1)
    assert sb.request_count(LIST_REASSIGNMENTS) >= 2  # the plan's read, then the wait


def test_the_default_restore_file_is_in_the_state_directory_named_after_the_cluster(
        sb: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    code, out, _ = kl("prefer", "--bootstrap-server", sb.bootstrap_servers, "--output", "table",
                      "--topic", "t", "--partition", "1", "--leader", "3")
    assert code == 0
    [written] = list((tmp_path / "state" / "kafka-leaders").iterdir())
    assert re.fullmatch(rf"{sb.cluster.cluster_id}-prefer-\d{{8}}T\d{{9}}Z\.json", written.name)
    assert oct(written.parent.stat().st_mode & 0o777) == "0o700"
    assert [p.name for p in tmp_path.iterdir()] == ["state"]  # nothing in the current directory
    assert f"Restore file: {written}" in out
    assert "2,3,1 -> 3,2,1" in out and "elected" in out


def test_a_file_of_partitions_and_leaders(sb: Sandbox, tmp_path: Path) -> None:
    file = tmp_path / "leaders.json"
    file.write_text(json.dumps({"partitions": [{"topic": "t", "partition": 2, "leader": 1},
                                               {"topic": "t", "partition": 0, "leader": 2}]}))
    code, out, _ = prefer(sb, "--path-to-json-file", str(file), "--restore-file", str(tmp_path / "r.json"))
    assert code == 0
    assert list(rows(out)) == ["t-2", "t-0"]  # file order
    assert [sb.partition_state("t", p).leader for p in range(3)] == [2, 2, 1]


@pytest.mark.parametrize("mode", ["kraft", "zk"])
def test_each_refusal_reason_and_only_the_rest_is_changed(tmp_path: Path, mode: str) -> None:
    with Sandbox(brokers=4, mode=mode) as sb:
        for name, replicas in (("a", [1, 2, 3]), ("b", [1, 4]), ("c", [1, 2, 3]), ("d", [1, 2]), ("e", [1, 2, 3])):
            sb.create_topic(name, assignment={0: replicas})
        sb.stop_broker(4)
        sb.set_isr("c", 0, [1, 2])
        assert sb.cluster.alter_reassignment("d", 0, [1, 2, 3]) == (0, None)  # adds a replica: stays pending
        file = tmp_path / f"{mode}.json"
        file.write_text(json.dumps({"partitions": [
            {"topic": "a", "partition": 0, "leader": 4}, {"topic": "b", "partition": 0, "leader": 4},
            {"topic": "c", "partition": 0, "leader": 3}, {"topic": "d", "partition": 0, "leader": 2},
            {"topic": "e", "partition": 0, "leader": 2}]}))
        restore = tmp_path / f"{mode}-restore.json"
        code, out, _ = prefer(sb, "--path-to-json-file", str(file), "--restore-file", str(restore))
        assert code == 1
        found = {name: (r["outcome"], r["error"]) for name, r in rows(out).items()}
        assert found == {
            "a-0": ("skipped", "broker 4 is not a replica of a-0 (replicas: 1,2,3)"),
            "b-0": ("skipped", "broker 4 is not alive"),
            "c-0": ("skipped", "broker 3 is not in the ISR of c-0 (ISR: 1,2)"),
            "d-0": ("skipped", "a reassignment of d-0 is pending"),
            "e-0": ("elected", None),
        }
        assert sb.partition_state("e", 0).leader == 2
        assert [sb.partition_state(t, 0).replicas for t in "ac"] == [(1, 2, 3), (1, 2, 3)]
        assert [p["topic"] for p in json.loads(restore.read_text())["partitions"]] == ["e"]
        assert sb.request_count(ALTER_REASSIGNMENTS) == 1


def test_a_large_file_naming_an_unknown_partition_near_its_end_is_refused_on_the_metadata_alone(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """100,000 entries (4.9 MB), the last but one naming a partition the topic lacks: exit 2 after the metadata
    read, before any other request (it read the pending reassignments too: 3 requests), nothing changed."""
    count = 100_000
    sb = sandbox_factory(3, topics={"t": {p: [1 + p % 3, 1 + (p + 1) % 3] for p in range(count)}})
    wanted = [{"topic": "t", "partition": p, "leader": 1 + (p + 1) % 3} for p in range(count)]
    wanted.insert(-1, {"topic": "t", "partition": count + 7, "leader": 1})
    file = tmp_path / "leaders.json"
    file.write_text(json.dumps({"partitions": wanted}))
    before = {p: sb.partition_state("t", p) for p in (0, 1, count - 1)}
    code, out, err = prefer(sb, "--path-to-json-file", str(file))
    assert (code, out) == (2, "") and err.startswith(f"Unknown partition(s): t-{count + 7} (t has {count})"), err
    assert [r.api_key for r in sb.request_log] == [API_VERSIONS, METADATA]
    assert {p: sb.partition_state("t", p) for p in before} == before


def test_a_file_of_300000_partitions_the_cluster_lacks_is_refused_whole_on_the_metadata_alone(
        sb: Sandbox, tmp_path: Path) -> None:
    """Issue 44: every entry is checked against the one Metadata read (ApiVersions and Metadata are what it takes
    to know the cluster; nothing else is sent), and one line names every kind of problem the file has: its
    unknown topics were named alone, and a second run then found its unknown partitions."""
    wanted = [{"topic": "gone", "partition": p, "leader": 1} for p in range(150_000)]
    wanted += [{"topic": "t", "partition": p, "leader": 1} for p in range(3, 150_003)]
    file = tmp_path / "leaders.json"
    file.write_text(json.dumps({"partitions": wanted}))
    before = len(sb.request_log)
    code, out, err = prefer(sb, "--path-to-json-file", str(file))
    assert (code, out) == (2, "")
    assert err.splitlines() == [
        "Unknown topic(s): gone; unknown partition(s): t-3, t-4, t-5, t-6, t-7, t-8, t-9, t-10, t-11, t-12 ... "
        "(149990 more) (t has 3): nothing was sent",
        "Hint: Remove them, or check that --bootstrap-server names the cluster they are on (kafka-topics "
        "--describe lists its topics; partitions are numbered from 0)."]
    assert [r.api_key for r in sb.request_log[before:]] == [API_VERSIONS, METADATA]

def test_refusals_in_the_table(sb: Sandbox) -> None:
    code, out, _ = kl("prefer", "--bootstrap-server", sb.bootstrap_servers, "--output", "table",
                      "--topic", "t", "--partition", "0", "--leader", "7")
    assert code == 1
    assert "refused" in out and "broker 7 is not a replica of t-0 (replicas: 1,2,3)" in out
    assert "1 partition(s): 1 refused" in out and "Restore file" not in out
    assert sb.request_count(ALTER_REASSIGNMENTS) == 0


def test_dry_run_sends_and_writes_nothing(sb: Sandbox, tmp_path: Path) -> None:
    restore = tmp_path / "r.json"
    code, out, _ = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "2", "--dry-run",
                          "--restore-file", str(restore))
    assert code == 0
    doc = json.loads(out)
    assert doc["dry_run"] is True and doc["restore_file"] is None
    assert (doc["partitions"][0]["outcome"], doc["partitions"][0]["leader_after"]) == ("would_elect", 2)
    assert (sb.request_count(ALTER_REASSIGNMENTS), sb.request_count(ELECT_LEADERS)) == (0, 0)
    assert not restore.exists()
    assert sb.partition_state("t", 0).replicas == (1, 2, 3)


def test_nothing_to_do_when_the_broker_leads_and_comes_first(sb: Sandbox, tmp_path: Path) -> None:
    code, out, _ = prefer(sb, "--topic", "t", "--partition", "1", "--leader", "2",
                          "--restore-file", str(tmp_path / "r.json"))
    assert (code, rows(out)["t-1"]["outcome"]) == (0, "already_elected")
    assert (sb.request_count(ALTER_REASSIGNMENTS), sb.request_count(ELECT_LEADERS)) == (0, 0)
    assert not (tmp_path / "r.json").exists()


def test_a_leader_that_is_not_first_is_made_the_preferred_replica(sb: Sandbox, tmp_path: Path) -> None:
    sb.set_leader("t", 0, 2)
    code, out, _ = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "2",
                          "--restore-file", str(tmp_path / "r.json"))
    row = rows(out)["t-0"]
    assert (code, row["outcome"], row["replicas_after"], row["leader_after"]) == (0, "already_elected", [2, 1, 3], 2)
    assert sb.partition_state("t", 0).replicas == (2, 1, 3)


def test_an_existing_restore_file_is_never_overwritten(sb: Sandbox, tmp_path: Path) -> None:
    restore = tmp_path / "r.json"
    restore.write_text("keep me")
    code, out, err = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "3", "--restore-file", str(restore))
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == f"Restore file {restore} already exists; nothing was changed"
    assert restore.read_text() == "keep me"
    assert (sb.request_count(ALTER_REASSIGNMENTS), sb.request_count(ELECT_LEADERS)) == (0, 0)


def test_the_restore_file_is_written_before_the_reorder_is_sent(sb: Sandbox, tmp_path: Path) -> None:
    restore = tmp_path / "r.json"
    sb.fail_next(ALTER_REASSIGNMENTS, kafka_errors.CLUSTER_AUTHORIZATION_FAILED)
    code, out, err = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "3", "--restore-file", str(restore))
    assert code == 4
    doc = json.loads(out)
    assert doc["restore_file"] == str(restore) and doc["partitions"][0]["outcome"] == "not_attempted"
    assert "Not authorized while reordering replicas" in doc["summary"]["stopped"]
    assert json.loads(restore.read_text())["partitions"][0]["replicas"] == [1, 2, 3]
    assert sb.request_count(ELECT_LEADERS) == 0


def test_a_reorder_the_controller_refuses_is_a_failure(sb: Sandbox, tmp_path: Path) -> None:
    sb.stop_broker(2)  # a ZooKeeper-mode controller refuses a reassignment naming a dead broker; KRaft does not
    code, out, _ = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "3",
                          "--restore-file", str(tmp_path / "r.json"))
    row = rows(out)["t-0"]
    if sb.mode == "kraft":
        assert (code, row["outcome"], sb.partition_state("t", 0).leader) == (0, "elected", 3)
        return
    assert (code, row["outcome"], row["error_code"]) == (1, "failed", kafka_errors.INVALID_REPLICA_ASSIGNMENT)
    assert row["error"] == ("the reorder was refused: Some brokers specified for partition t-0 reassignment are "
                            "not alive: List(2)")
    assert row["replicas_after"] == [1, 2, 3] and sb.partition_state("t", 0).replicas == (1, 2, 3)
    assert sb.request_count(ELECT_LEADERS) == 0


def test_bootstrap_servers_from_the_environment(sb: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KAFKA_BOOTSTRAP_SERVERS", sb.bootstrap_servers)
    code, _, _ = kl("prefer", "--topic", "t", "--partition", "0", "--leader", "2", "--output", "json",
                    "--restore-file", str(tmp_path / "r.json"))
    assert code == 0 and sb.partition_state("t", 0).leader == 2


@pytest.mark.parametrize("args, message", [
    (["--topic", "t", "--partition", "0", "--leader", "1"], "Missing required option --bootstrap-server"),
    (["--bootstrap-server", "x:1"], "Missing required option(s): --topic, --partition, --leader"),
    (["--bootstrap-server", "x:1", "--topic", "t", "--partition", "0"], "Missing required option(s): --leader"),
    (["--bootstrap-server", "x:1", "--topic", "t", "--partition", "0", "--leader", "1", "--path-to-json-file", "f"],
     "Give either --path-to-json-file or --topic/--partition/--leader, not both"),
    (["--bootstrap-server", "x:1", "--topic", "a b", "--partition", "0", "--leader", "1"],
     "Invalid --topic 'a b': Topic name is invalid: 'a b' contains one or more characters other than ASCII "
     "alphanumerics, '.', '_' and '-'"),
    (["--bootstrap-server", "x:1", "--path-to-json-file", "/nonexistent/leaders.json"],
     "Unable to read file /nonexistent/leaders.json: No such file or directory"),
])
def test_input_errors_exit_2_before_connecting(args: list[str], message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KAFKA_BOOTSTRAP_SERVERS", raising=False)
    code, out, err = kl("prefer", *args)
    assert (code, out, err.splitlines()[0]) == (2, "", message)


@pytest.mark.parametrize("output", ["json", "table"])
def test_an_unreachable_cluster_exits_3(output: str) -> None:
    code, out, err = kl("prefer", "--bootstrap-server", "127.0.0.1:1", "--timeout", "0.5", "--output", output,
                        "--topic", "t", "--partition", "0", "--leader", "1")
    assert code == 3 and "127.0.0.1:1 refused the connection" in err
    if output == "table":
        assert out == ""
    else:  # a CI job reading stdout still gets a document: nothing done, and why
        document = json.loads(out)
        assert (document["command"], document["dry_run"], document["partitions"]) == ("prefer", False, [])
        assert document["summary"]["exit_code"] == 3 and document["summary"]["stopped"] == err.splitlines()[0]


def test_waiting_for_a_reassignment_is_bounded(sb: Sandbox) -> None:
    sb.create_topic("grow", assignment={0: [1, 2]})
    sb.cluster.alter_reassignment("grow", 0, [1, 2, 3])  # adds a replica: pending until it catches up
    with ClusterConnection.connect(sb.bootstrap_servers, ClientSettings(api_timeout_ms=5000)) as cluster:
        pending = [TopicPartition("grow", 0), TopicPartition("t", 0)]
        assert wait_for_reassignments(cluster, pending, 0.3) == {TopicPartition("grow", 0)}
        sb.finish_reassignment("grow", 0)
        assert wait_for_reassignments(cluster, pending, 0.3) == set()


def test_a_failure_after_the_reorder_reports_what_was_done_and_the_restore_file(sb: Sandbox, tmp_path: Path) -> None:
    restore = tmp_path / "r.json"
    sb.fail_next(ELECT_LEADERS, kafka_errors.CLUSTER_AUTHORIZATION_FAILED)
    code, out, err = kl("prefer", "--bootstrap-server", sb.bootstrap_servers, "--output", "table",
                        "--topic", "t", "--partition", "0", "--leader", "3", "--restore-file", str(restore))
    assert code == 4
    assert "not attempted" in out and "1,2,3 -> 3,1,2" in out and f"Restore file: {restore}" in out
    assert err == "Stopped: Not authorized to perform leader election\n"
    assert sb.partition_state("t", 0).replicas == (3, 1, 2)  # reordered, not elected: restore puts it back
    code, _, _ = kl("restore", "--bootstrap-server", sb.bootstrap_servers, "--output", "json", str(restore))
    assert code == 0 and sb.partition_state("t", 0).replicas == (1, 2, 3) and sb.partition_state("t", 0).leader == 1


def test_a_reorder_refused_as_a_whole_shows_the_order_unchanged(sb: Sandbox, tmp_path: Path) -> None:
    """Not authorized to reassign: nothing changed, and the report must not show the order asked for."""
    sb.fail_next(ALTER_REASSIGNMENTS, kafka_errors.CLUSTER_AUTHORIZATION_FAILED)
    code, out, _ = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "3",
                          "--restore-file", str(tmp_path / "r.json"))
    row = rows(out)["t-0"]
    assert (code, row["outcome"], row["replicas_after"], row["error"]) == (4, "not_attempted", [1, 2, 3], None)
    assert sb.partition_state("t", 0).replicas == (1, 2, 3)


def test_a_reorder_whose_answer_is_lost_says_it_may_still_be_applied(sb: Sandbox, tmp_path: Path) -> None:
    """The answer comes after --timeout: the order read back is unchanged, yet the controller applies it later
    (once the report is checked; it was 2.5 s after it came, which a slow run's read-back could see)."""
    checked = threading.Event()
    sb.hold_next(ALTER_REASSIGNMENTS, lambda: checked.wait(60))
    try:
        code, out, _ = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "3", "--timeout", "1",
                              "--restore-file", str(tmp_path / "r.json"))
        row = rows(out)["t-0"]
        assert (code, row["outcome"], row["replicas_after"]) == (3, "not_attempted", [1, 2, 3])
        assert row["error"] == ("the answer to its reorder was lost: the controller may still apply it: the restore "
                                "file puts the order back")
    finally:
        checked.set()
    deadline = time.monotonic() + 60
    while sb.partition_state("t", 0).replicas != (3, 1, 2) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert sb.partition_state("t", 0).replicas == (3, 1, 2)  # as the report warned


@pytest.mark.parametrize("api_key", [ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS])
def test_a_reassignment_request_answered_not_controller_is_resent(api_key: int, tmp_path: Path) -> None:
    """ZooKeeper mode: a broker that just lost the controllership refuses the whole request; find the new one."""
    with Sandbox(brokers=3, mode="zk") as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        sb.fail_next(api_key, kafka_errors.NOT_CONTROLLER)
        code, out, err = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "3",
                                "--restore-file", str(tmp_path / "r.json"))
        assert (code, rows(out)["t-0"]["outcome"]) == (0, "elected"), err
        assert (sb.partition_state("t", 0).leader, sb.partition_state("t", 0).replicas) == (3, (3, 1, 2))


# -- answers lost or refused part way: every row true of the cluster ------------------------------------

def test_an_applied_election_whose_answers_were_lost_is_judged_against_the_new_order(sb: Sandbox,
                                                                                     tmp_path: Path) -> None:
    """The election is applied, its answer and the resent one's are cut: the leader read back is the one
    asked for (it was reported failed, "its leader did not change", judged against the old order)."""
    sb.set_leader("t", 0, 2)
    sb.corrupt_next(ELECT_LEADERS, count=2)
    code, out, _ = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "3", "--timeout", "3",
                          "--restore-file", str(tmp_path / "r.json"))
    row = rows(out)["t-0"]
    assert sb.partition_state("t", 0).leader == 3
    assert (code, row["outcome"], row["leader_after"]) == (3, "elected", 3)


def two_reorders(tmp_path: Path) -> Path:
    """t-0 and t-1 to broker 3, one per batch (with --batch-size 1)."""
    wanted = tmp_path / "wanted.json"
    wanted.write_text(json.dumps({"partitions": [{"topic": "t", "partition": 0, "leader": 3},
                                                 {"topic": "t", "partition": 1, "leader": 3}]}))
    return wanted


def test_a_refusal_heard_before_a_lost_answer_stays_a_refusal(tmp_path: Path) -> None:
    """Batch 1's reorder is refused, batch 2's connection is cut: t-0 failed with the controller's reason
    (it was "the controller may still apply it"), t-1 may still be applied."""
    with Sandbox(brokers=4, mode="zk") as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3], 1: [1, 3, 4]})
        sb.stop_broker(2)  # a ZooKeeper-mode controller refuses an order naming a broker that is not alive
        sb.delay_next(ALTER_REASSIGNMENTS, 0)
        sb.drop_next(ALTER_REASSIGNMENTS)
        code, out, _ = prefer(sb, "--path-to-json-file", str(two_reorders(tmp_path)), "--batch-size", "1",
                              "--timeout", "3", "--restore-file", str(tmp_path / "r.json"))
        t0, t1 = rows(out)["t-0"], rows(out)["t-1"]
        assert code == 3
        assert (t0["outcome"], t0["error_code"], t0["replicas_after"]) == (
            "failed", kafka_errors.INVALID_REPLICA_ASSIGNMENT, [1, 2, 3])
        assert t0["error"].startswith("the reorder was refused")
        assert t1["outcome"] == "not_attempted" and "may still apply it" in t1["error"]


def test_an_accepted_reorder_stays_reported_when_nothing_can_be_read_back(sb: Sandbox, tmp_path: Path) -> None:
    """After the reorder is answered every listener closes for good: the order asked for was applied,
    and the report says so (it showed the old order, "stopped before the outcome could be read")."""
    def listeners_closed() -> None:  # a network cut: the brokers stay alive for the controller
        sb.stop_brokers(sb.brokers, noticed_after=60)

    # once the tool asks its next question (so it has read the answer; a cut before could cost the answer),
    # that question is held until every listener is closed (it was 0.3 s after the answer)
    sb.after_next(ALTER_REASSIGNMENTS, lambda: sb.hold_next(LIST_REASSIGNMENTS, listeners_closed))
    host, port = sb.brokers[1]
    code, out, _ = kl("prefer", "--bootstrap-server", f"{host}:{port}", "--output", "json", "--topic", "t",
                      "--partition", "0", "--leader", "3", "--timeout", "2", "--restore-file", str(tmp_path / "r.json"))
    row = rows(out)["t-0"]
    assert sb.partition_state("t", 0).replicas == (3, 1, 2)
    assert (code, row["outcome"], row["replicas_after"]) == (3, "not_attempted", [3, 1, 2])
    assert row["error"].startswith("reordered, but no election was run")


def test_a_reorder_that_timed_out_at_the_broker_may_still_be_applied(sb: Sandbox, tmp_path: Path) -> None:
    """A top-level REQUEST_TIMED_OUT (a forwarding broker gave up on the controller) is not a refusal."""
    sb.fail_next(ALTER_REASSIGNMENTS, kafka_errors.REQUEST_TIMED_OUT)
    code, out, _ = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "3",
                          "--restore-file", str(tmp_path / "r.json"))
    row = rows(out)["t-0"]
    assert (code, row["outcome"]) == (3, "not_attempted") and "may still apply it" in row["error"]


def test_a_lost_answer_to_the_reassignment_listing_is_asked_again(sb: Sandbox, tmp_path: Path) -> None:
    """The listing only reads: its connection cut, it is asked again (the move stopped, exit 3)."""
    sb.delay_next(LIST_REASSIGNMENTS, 0)  # the first listing is the plan's, before anything is sent
    sb.drop_next(LIST_REASSIGNMENTS)
    code, out, err = prefer(sb, "--topic", "t", "--partition", "0", "--leader", "3", "--timeout", "3",
                            "--restore-file", str(tmp_path / "r.json"))
    assert (code, rows(out)["t-0"]["outcome"]) == (0, "elected"), err
    assert sb.partition_state("t", 0).leader == 3
