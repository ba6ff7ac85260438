"""`kafka-leaders demote` and `restore` end to end against the sandbox, in both controller modes."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from commands import run_command

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.sandbox import Sandbox

API_VERSIONS, METADATA, ELECT_LEADERS, ALTER_REASSIGNMENTS = 18, 3, 43, 45
ASSIGNMENT = {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2], 3: [1, 3, 2], 4: [2, 1, 3], 5: [3, 2, 1]}


kl = partial(run_command, cli)


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox], mode: str) -> Sandbox:
    return sandbox_factory(mode=mode, topics={"t": ASSIGNMENT, "u": {0: [2, 1]}})


def partitions(sb: Sandbox) -> dict[str, tuple[int, tuple[int, ...]]]:
    """Every partition's (leader, replicas), read from the sandbox itself."""
    found = {f"t-{p}": sb.partition_state("t", p) for p in ASSIGNMENT}
    found["u-0"] = sb.partition_state("u", 0)
    return {name: (s.leader, s.replicas) for name, s in found.items()}


def demote(sb: Sandbox, *args: str) -> tuple[int, str, str]:
    return kl("demote", "--bootstrap-server", sb.bootstrap_servers, "--output", "json", *args)


def restore(sb: Sandbox, file: Path, *args: str) -> tuple[int, str, str]:
    return kl("restore", "--bootstrap-server", sb.bootstrap_servers, "--output", "json", str(file), *args)


def rows(out: str) -> dict[str, dict]:
    return {f"{p['topic']}-{p['partition']}": p for p in json.loads(out)["partitions"]}


def test_demotion_leaves_the_broker_leading_nothing_and_restore_returns_every_leader(
        sb: Sandbox, tmp_path: Path) -> None:
    before = partitions(sb)
    file = tmp_path / "before-maintenance.json"
    code, out, err = demote(sb, "--broker", "1", "--include-preferred", "--restore-file", str(file))
    assert (code, err) == (0, "")
    during = partitions(sb)
    assert all(leader != 1 for leader, _ in during.values())
    assert all(replicas[0] != 1 for _, replicas in during.values())  # no preferred election brings it back
    assert all(sorted(during[n][1]) == sorted(before[n][1]) for n in before)  # no data moved
    moved = rows(out)
    assert set(moved) == {"t-0", "t-3"} and {r["outcome"] for r in moved.values()} == {"elected"}
    assert moved["t-0"]["replicas_after"] == [2, 3, 1]  # the successor first, the broker last

    code, out, err = restore(sb, file)
    assert (code, err) == (0, "")
    assert partitions(sb) == before
    assert {r["outcome"] for r in rows(out).values()} == {"elected"}


def test_without_include_preferred_only_the_partitions_it_leads_move(sb: Sandbox, tmp_path: Path) -> None:
    sb.set_leader("t", 0, 2)  # broker 1 is preferred here but does not lead
    code, out, _ = demote(sb, "--broker", "1", "--restore-file", str(tmp_path / "r.json"))
    assert code == 0 and set(rows(out)) == {"t-3"}
    assert sb.partition_state("t", 0).replicas == (1, 2, 3)
    code, out, _ = demote(sb, "--broker", "1", "--include-preferred", "--restore-file", str(tmp_path / "r2.json"))
    assert code == 0 and rows(out)["t-0"]["outcome"] == "already_elected"  # leader 2 stays, now first
    assert sb.partition_state("t", 0).replicas == (2, 3, 1)


def test_a_partition_with_no_other_in_sync_replica_is_reported_not_forced(sb: Sandbox, tmp_path: Path) -> None:
    sb.set_isr("u", 0, [2])
    file = tmp_path / "r.json"
    code, out, _ = demote(sb, "--broker", "2", "--restore-file", str(file))
    assert code == 1
    found = rows(out)
    assert (found["u-0"]["outcome"], found["u-0"]["error"]) == ("skipped", "no other in-sync replica")
    assert sb.partition_state("u", 0).leader == 2 and sb.partition_state("u", 0).replicas == (2, 1)
    assert {n: r["outcome"] for n, r in found.items() if n != "u-0"} == {"t-1": "elected", "t-4": "elected"}
    assert [p["topic"] for p in json.loads(file.read_text())["partitions"]] == ["t", "t"]


def test_topic_regex_matches_whole_names(sb: Sandbox, tmp_path: Path) -> None:
    code, out, _ = demote(sb, "--broker", "2", "--topic-regex", "u", "--restore-file", str(tmp_path / "r.json"))
    assert code == 0 and set(rows(out)) == {"u-0"}
    code, out, _ = demote(sb, "--broker", "2", "--topic-regex", "t|x", "--restore-file", str(tmp_path / "r2.json"))
    assert code == 0 and set(rows(out)) == {"t-1", "t-4"}
    assert all(leader != 2 for leader, _ in partitions(sb).values())


def test_dry_run_sends_and_writes_nothing(sb: Sandbox, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    before = partitions(sb)
    code, out, _ = demote(sb, "--broker", "3", "--include-preferred", "--dry-run")
    assert code == 0
    predicted = rows(out)
    assert {r["outcome"] for r in predicted.values()} == {"would_elect"}
    assert all(r["leader_after"] not in (3, None) and r["error_code"] == 0 for r in predicted.values())
    assert (sb.request_count(ALTER_REASSIGNMENTS), sb.request_count(ELECT_LEADERS)) == (0, 0)
    assert partitions(sb) == before and list(tmp_path.iterdir()) == []


def test_table_output_names_the_restore_file(sb: Sandbox, tmp_path: Path) -> None:
    file = tmp_path / "r.json"
    code, out, _ = kl("demote", "--bootstrap-server", sb.bootstrap_servers, "--output", "table", "--broker", "3",
                      "--restore-file", str(file))
    assert code == 0
    assert "demote: leadership moves" in out and "3,1,2 -> 1,2,3" in out and "3 -> 1" in out
    assert f"Restore file: {file} (kafka-leaders restore {file} puts the replica orders back)" in out


def test_an_unknown_broker_is_an_input_error(sb: Sandbox) -> None:
    code, out, err = demote(sb, "--broker", "9")
    assert (code, out) == (2, "")
    assert err.splitlines()[0] == "Broker 9 is neither live nor a replica of any partition (live brokers: 1,2,3)"
    assert [r.api_key for r in sb.request_log] == [API_VERSIONS, METADATA]  # the metadata said it all


def test_a_broker_that_leads_nothing_has_nothing_to_do(sb: Sandbox, tmp_path: Path) -> None:
    code, out, err = demote(sb, "--broker", "1", "--topic-regex", "u", "--restore-file", str(tmp_path / "r.json"))
    assert (code, json.loads(out)["partitions"], json.loads(out)["restore_file"]) == (0, [], None)
    assert not (tmp_path / "r.json").exists()
    assert err == f"No restore file written to {tmp_path / 'r.json'}: no replica order changes.\n"


def test_an_invalid_regex_is_an_input_error() -> None:
    code, _, err = kl("demote", "--bootstrap-server", "127.0.0.1:1", "--broker", "1", "--topic-regex", "(")
    assert code == 2 and err.startswith("Invalid --topic-regex '(': missing ), unterminated subpattern")


def test_restore_refuses_a_partition_whose_replicas_changed(sb: Sandbox, tmp_path: Path) -> None:
    file = tmp_path / "r.json"
    assert demote(sb, "--broker", "1", "--include-preferred", "--restore-file", str(file))[0] == 0
    sb.set_replicas("t", 3, [3, 2])  # broker 1 was removed meanwhile
    code, out, _ = restore(sb, file)
    found = rows(out)
    assert code == 1
    assert (found["t-3"]["outcome"], found["t-3"]["error"]) == (
        "skipped", "the replicas of t-3 changed since the restore file was written (now 3,2, saved 1,3,2)")
    assert found["t-0"]["outcome"] == "elected" and sb.partition_state("t", 0).leader == 1


def test_restore_refuses_a_file_from_another_cluster(sb: Sandbox, tmp_path: Path) -> None:
    file = tmp_path / "r.json"
    assert demote(sb, "--broker", "1", "--restore-file", str(file))[0] == 0
    document = json.loads(file.read_text())
    file.write_text(json.dumps({**document, "cluster_id": "another-cluster"}))
    since = len(sb.request_log)
    code, out, err = restore(sb, file)
    assert code == 5
    assert err.startswith(f"Restore file {file} was written for cluster another-cluster, not this one")
    document = json.loads(out)  # --output json still gets its document: nothing done, and why
    assert (document["command"], document["partitions"]) == ("restore", [])
    assert document["summary"]["exit_code"] == 5 and document["summary"]["stopped"] == err.splitlines()[0]
    assert sb.request_count(ALTER_REASSIGNMENTS) == 1  # the demotion's only
    assert [r.api_key for r in sb.request_log[since:]] == [API_VERSIONS, METADATA]  # refused on the metadata alone


def test_restore_dry_run_sends_nothing(sb: Sandbox, tmp_path: Path) -> None:
    file = tmp_path / "r.json"
    assert demote(sb, "--broker", "2", "--restore-file", str(file))[0] == 0
    sent = (sb.request_count(ALTER_REASSIGNMENTS), sb.request_count(ELECT_LEADERS))
    code, out, _ = restore(sb, file, "--dry-run")
    assert code == 0
    assert {(n, r["outcome"], r["leader_after"]) for n, r in rows(out).items()} == {
        ("t-1", "would_elect", 2), ("t-4", "would_elect", 2), ("u-0", "would_elect", 2)}
    assert (sb.request_count(ALTER_REASSIGNMENTS), sb.request_count(ELECT_LEADERS)) == sent


@pytest.mark.parametrize("content, message", [
    ("", "is not valid JSON: Expecting value at line 1, column 1"),
    ('{"schema_version": 1}', "at $: 'partitions' is a required property"),
    ('{"schema_version": 2, "partitions": []}', "at $.schema_version: 1 was expected"),
    ('{"schema_version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": []}]}',
     "at $.partitions[0].replicas: [] should be non-empty"),
    ('{"schema_version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 1]}]}',
     "at $.partitions[0].replicas: [1, 1] has non-unique elements"),
])
def test_invalid_restore_files(tmp_path: Path, content: str, message: str) -> None:
    file = tmp_path / "r.json"
    file.write_text(content)
    code, out, err = kl("restore", "--bootstrap-server", "127.0.0.1:1", str(file))
    assert (code, out) == (2, "")
    assert message in err.splitlines()[0] and str(file) in err
