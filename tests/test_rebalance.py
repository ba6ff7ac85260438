"""`kafka-leaders rebalance` against the sandbox: the threshold, batches, lock, audit log and metrics."""

from __future__ import annotations

import fcntl
import json
import math
import subprocess
import sys
from collections.abc import Callable
from functools import partial
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from commands import run_command
from prometheus_client.parser import text_string_to_metric_families

from leader_election_cli import kafka_errors
from leader_election_cli.cli.toolkit import cli
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.scenarios import build

ELECT_LEADERS = 43


kl = partial(run_command, cli)


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox], mode: str) -> Sandbox:
    """Three topics of six partitions, a third of them led off their preferred replica."""
    sandbox = sandbox_factory(mode=mode)
    build(sandbox, "imbalanced", topics=3, partitions=6, replication_factor=3)
    return sandbox


def rebalance(sb: Sandbox, tmp_path: Path, *args: str) -> tuple[int, str, str]:
    return kl("rebalance", "--bootstrap-server", sb.bootstrap_servers, "--lock-file", str(tmp_path / "lock"), *args)


def ratios(sb: Sandbox) -> dict[int, float]:
    """Kafka's imbalance ratio per broker, from the sandbox's own state."""
    preferred: dict[int, int] = {}
    not_led: dict[int, int] = {}
    for topic in sb.cluster.topics.values():
        for pid in range(len(topic.partitions)):
            p = sb.partition_state(topic.name, pid)
            preferred[p.replicas[0]] = preferred.get(p.replicas[0], 0) + 1
            not_led[p.replicas[0]] = not_led.get(p.replicas[0], 0) + (p.leader != p.replicas[0])
    return {b: not_led[b] / n for b, n in preferred.items()}


def candidates(sb: Sandbox) -> int:
    """Partitions off their preferred replica whose preferred broker is above 10% (all fixable here)."""
    above = {b for b, ratio in ratios(sb).items() if ratio > 0.1}
    return sum(1 for topic in sb.cluster.topics.values() for pid in range(len(topic.partitions))
               if (p := sb.partition_state(topic.name, pid)).leader != p.replicas[0] and p.replicas[0] in above)


def metrics(path: Path) -> dict[tuple[str, tuple], float]:
    """The samples by name and labels, less the cluster_id label every one of them carries."""
    samples = [s for family in text_string_to_metric_families(path.read_text()) for s in family.samples]
    assert all("cluster_id" in s.labels for s in samples)
    return {(s.name, tuple(sorted((k, v) for k, v in s.labels.items() if k != "cluster_id"))): s.value
            for s in samples}


def test_rebalance_brings_every_broker_under_the_threshold(sb: Sandbox, tmp_path: Path) -> None:
    before, expected = ratios(sb), candidates(sb)
    assert max(before.values()) > 0.1 and expected > 0
    code, out, err = rebalance(sb, tmp_path, "--output", "json")
    assert (code, err) == (0, "")
    assert all(ratio <= 0.1 for ratio in ratios(sb).values())
    doc = json.loads(out)
    elected = [p for p in doc["partitions"] if p["outcome"] == "elected"]
    assert len(elected) == doc["candidates"] == expected and doc["brokers_still_above_threshold"] == []
    assert sorted(doc["brokers_above_threshold"]) == sorted(b for b, r in before.items() if r > 0.1)
    assert all(p["leader_after"] == sb.partition_state(p["topic"], p["partition"]).replicas[0] for p in elected)
    assert [b["imbalance_ratio"] for b in doc["after"]["brokers"]] == [0.0, 0.0, 0.0]


def test_batches(sb: Sandbox, tmp_path: Path) -> None:
    expected = candidates(sb)
    code, out, _ = rebalance(sb, tmp_path, "--output", "json", "--batch-size", "4")
    assert code == 0 and json.loads(out)["summary"]["elected"] == expected
    assert sb.request_count(ELECT_LEADERS) == math.ceil(expected / 4)


def test_only_brokers_above_the_threshold_are_rebalanced(tmp_path: Path) -> None:
    with Sandbox(brokers=2) as sb:
        sb.create_topic("t", assignment={p: [1, 2] if p < 10 else [2, 1] for p in range(20)})
        sb.set_leader("t", 0, 2)  # broker 1: 1 of 10 off, exactly 10%
        sb.set_leader("t", 10, 1)
        sb.set_leader("t", 11, 1)  # broker 2: 2 of 10 off, 20%
        code, out, _ = rebalance(sb, tmp_path, "--output", "json")
        doc = json.loads(out)
        assert (code, doc["brokers_above_threshold"]) == (0, [2])
        assert sorted(p["partition"] for p in doc["partitions"]) == [10, 11]
        assert sb.partition_state("t", 0).leader == 2  # at the threshold, not above: left alone
        code, out, _ = rebalance(sb, tmp_path, "--output", "json", "--threshold", "9.9")
        assert code == 0 and [p["partition"] for p in json.loads(out)["partitions"]] == [0]


def test_silent_when_there_is_nothing_to_do_unless_verbose(sb: Sandbox, tmp_path: Path) -> None:
    assert rebalance(sb, tmp_path, "--output", "json")[0] == 0
    assert rebalance(sb, tmp_path) == (0, "", "")
    assert rebalance(sb, tmp_path, "--output", "table") == (0, "", "")
    code, out, _ = rebalance(sb, tmp_path, "--output", "table", "-v")
    assert code == 0 and "Every broker is at or under 10%: nothing to do." in out


def test_table_output(sb: Sandbox, tmp_path: Path) -> None:
    expected = candidates(sb)
    code, out, _ = rebalance(sb, tmp_path, "--output", "table")
    assert code == 0
    assert "Leader imbalance (threshold 10%)" in out and "% -> 0.0%" in out  # each broker's ratio before -> after
    assert (f"elected the preferred leader of {expected} partition(s), 0 failed. "
            "Every broker is now at or under 10%.") in out


def test_dry_run_sends_no_election_and_takes_no_lock(sb: Sandbox, tmp_path: Path) -> None:
    before, expected = ratios(sb), candidates(sb)
    with open(tmp_path / "lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        code, out, _ = rebalance(sb, tmp_path, "--output", "json", "--dry-run",
                                 "--audit-log", str(tmp_path / "a.jsonl"))
    doc = json.loads(out)
    assert (code, doc["dry_run"], doc["candidates"]) == (0, True, expected)
    assert {p["outcome"] for p in doc["partitions"]} == {"would_elect"}
    assert doc["summary"]["would_elect"] == doc["summary"]["total"] == expected
    audit = json.loads((tmp_path / "a.jsonl").read_text())
    assert (audit["schema_version"], audit["done"]["would_elect"], audit["done"]["not_needed"]) == (2, expected, 0)
    jsonschema.validate(audit, json.loads(resources.files("leader_election_cli").joinpath(
        "schemas", "audit-line.schema.json").read_text()))
    assert sb.request_count(ELECT_LEADERS) == 0 and ratios(sb) == before


def test_a_lock_held_in_this_process_refuses_with_exit_5(sb: Sandbox, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    with open(tmp_path / "lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, out, err = rebalance(sb, tmp_path, "--audit-log", str(audit), "--metrics-file", str(tmp_path / "m.prom"))
    assert (code, json.loads(out)["error"], json.loads(out)["summary"]["exit_code"]) == (5, err.splitlines()[0], 5)
    assert err.startswith(f"Another rebalance is running: the lock file {tmp_path / 'lock'} is locked")
    assert sb.request_count() == 0  # not even connected
    [line] = audit.read_text().splitlines()
    assert json.loads(line)["exit_code"] == 5 and "Another rebalance is running" in json.loads(line)["error"]
    assert not (tmp_path / "m.prom").exists()  # the run holding the lock writes the metrics
    assert rebalance(sb, tmp_path)[0] == 0  # released: the next run goes ahead


def test_a_lock_held_by_another_process_refuses_with_exit_5(sb: Sandbox, tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys\nfrom pathlib import Path\nfrom leader_election_cli.operations.lock import "
         "exclusive_lock\nwith exclusive_lock(Path(sys.argv[1])):\n    print('locked', flush=True)\n    "
         "sys.stdin.read()", str(tmp_path / "lock")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        code, _, err = rebalance(sb, tmp_path)
        assert code == 5 and f"is locked (held by process {holder.pid})" in err
        assert sb.request_count(ELECT_LEADERS) == 0
    finally:
        holder.communicate(input="", timeout=30)
    assert holder.returncode == 0
    assert rebalance(sb, tmp_path)[0] == 0 and (tmp_path / "lock").read_text() == ""


def test_the_audit_log_gets_one_line_per_run(sb: Sandbox, tmp_path: Path) -> None:
    audit, expected = tmp_path / "audit.jsonl", candidates(sb)
    assert rebalance(sb, tmp_path, "--audit-log", str(audit))[0] == 0
    assert rebalance(sb, tmp_path, "--audit-log", str(audit))[0] == 0  # nothing left to do: still a line
    first, second = [json.loads(line) for line in audit.read_text().splitlines()]
    assert first["command"] == "rebalance" and first["bootstrap_servers"] == sb.bootstrap_servers
    assert first["time"].endswith("Z") and first["threshold_pct"] == 10 and first["dry_run"] is False
    assert first["found"]["candidates"] == expected and len(first["found"]["brokers_above_threshold"]) >= 1
    assert (first["done"]["elected"], first["done"]["failed"], first["exit_code"]) == (expected, 0, 0)
    assert first["done"]["brokers_still_above_threshold"] == {} and first["error"] is None
    assert (second["found"], second["done"]["elected"]) == ({"brokers_above_threshold": {}, "candidates": 0}, 0)


def test_the_metrics_file_parses_back(sb: Sandbox, tmp_path: Path) -> None:
    before, expected = ratios(sb), candidates(sb)
    file = tmp_path / "kafka_leaders.prom"
    assert rebalance(sb, tmp_path, "--metrics-file", str(file), "--dry-run")[0] == 0
    found = metrics(file)
    assert {b: found[("kafka_leaders_rebalance_imbalance_ratio", (("broker", str(b)),))] for b in before} == before
    assert found[("kafka_leaders_rebalance_dry_run", ())] == 1
    assert rebalance(sb, tmp_path, "--metrics-file", str(file))[0] == 0
    found = metrics(file)
    assert {found[("kafka_leaders_rebalance_imbalance_ratio", (("broker", str(b)),))] for b in before} == {0.0}
    assert found[("kafka_leaders_rebalance_partitions_moved", ())] == expected
    assert found[("kafka_leaders_rebalance_candidates", ())] == expected
    assert found[("kafka_leaders_rebalance_failures", ())] == 0
    assert found[("kafka_leaders_rebalance_exit_code", ())] == 0
    assert found[("kafka_leaders_rebalance_brokers_above_threshold", ())] == 0
    assert found[("kafka_leaders_rebalance_threshold_ratio", ())] == 0.1
    assert found[("kafka_leaders_rebalance_run_duration_seconds", ())] > 0
    assert found[("kafka_leaders_rebalance_last_run_timestamp_seconds", ())] > 1.7e9


def test_failed_elections_exit_1_and_are_counted(sb: Sandbox, tmp_path: Path) -> None:
    sb.fail_next(ELECT_LEADERS, kafka_errors.PREFERRED_LEADER_NOT_AVAILABLE)
    audit, file, expected = tmp_path / "audit.jsonl", tmp_path / "m.prom", candidates(sb)
    code, out, _ = rebalance(sb, tmp_path, "--output", "json", "--audit-log", str(audit), "--metrics-file", str(file))
    doc = json.loads(out)
    assert code == 1 and doc["summary"]["failed"] == expected
    assert metrics(file)[("kafka_leaders_rebalance_failures", ())] == expected
    assert metrics(file)[("kafka_leaders_rebalance_exit_code", ())] == 1
    record = json.loads(audit.read_text())
    done = record["done"]
    assert (record["exit_code"], done["failed"], len(done["failed_partitions"])) == (1, expected, expected)


@pytest.mark.parametrize("output", ["table", "json"])
def test_an_unreachable_cluster_is_audited_and_exits_3(tmp_path: Path, output: str) -> None:
    audit, file = tmp_path / "audit.jsonl", tmp_path / "m.prom"
    code, out, err = kl("rebalance", "--bootstrap-server", "127.0.0.1:1", "--timeout", "0.5", "--lock-file",
                        str(tmp_path / "lock"), "--audit-log", str(audit), "--metrics-file", str(file),
                        "--output", output)
    assert code == 3 and "127.0.0.1:1 refused the connection" in err
    if output == "table":
        assert out == ""
    else:  # stdout was empty: a JSON consumer got nothing to read
        document = json.loads(out)
        assert (document["before"], document["partitions"], document["summary"]["exit_code"]) == (None, [], 3)
        assert document["error"] == err.splitlines()[0]
    record = json.loads(audit.read_text())
    assert record["exit_code"] == 3 and record["error"].startswith("127.0.0.1:1 refused the connection")
    assert metrics(file)[("kafka_leaders_rebalance_exit_code", ())] == 3


def test_output_files_are_checked_before_anything_is_sent(sb: Sandbox, tmp_path: Path) -> None:
    (tmp_path / "file").write_text("")
    code, _, err = rebalance(sb, tmp_path, "--audit-log", str(tmp_path / "file" / "logs" / "audit.jsonl"))
    assert code == 2 and err.startswith(f"--audit-log {tmp_path}/file/logs/audit.jsonl: {tmp_path}/file is not a "
                                        "directory"), err
    code, _, err = rebalance(sb, tmp_path, "--audit-log", str(tmp_path))
    assert code == 2 and err.startswith(f"--audit-log {tmp_path} is a directory")
    assert sb.request_count() == 0


def test_a_refused_election_never_claims_the_brokers_are_balanced(sb: Sandbox, tmp_path: Path) -> None:
    """Not authorized to elect: nothing moved, every candidate is reported not attempted, and the table,
    the JSON and the audit line say the brokers are still above the threshold (they said "now at or
    under", and listed no partition)."""
    audit, expected = tmp_path / "audit.jsonl", candidates(sb)
    sb.fail_next(ELECT_LEADERS, kafka_errors.CLUSTER_AUTHORIZATION_FAILED)
    code, out, err = rebalance(sb, tmp_path, "--output", "table", "--audit-log", str(audit))
    assert code == 4 and "now at or under" not in out and "Still above: " in out
    assert f"0 failed, {expected} not attempted" in out
    record = json.loads(audit.read_text())
    assert record["done"]["brokers_still_above_threshold"] == record["found"]["brokers_above_threshold"] != {}
    assert record["done"]["not_attempted"] == expected
    sb.fail_next(ELECT_LEADERS, kafka_errors.CLUSTER_AUTHORIZATION_FAILED)
    code, out, _ = rebalance(sb, tmp_path, "--output", "json")
    doc = json.loads(out)
    assert code == 4 and doc["brokers_still_above_threshold"] == doc["brokers_above_threshold"] != []
    assert [p["outcome"] for p in doc["partitions"]] == ["not_attempted"] * expected


def test_a_balance_that_cannot_be_read_afterwards_is_not_claimed(sb: Sandbox, tmp_path: Path) -> None:
    """The elections were sent, then the cluster could not be read: the summary says so (it said
    "Every broker is now at or under 10%") and the audit line has null."""
    audit = tmp_path / "audit.jsonl"

    def network_cut() -> None:  # the brokers stay alive for the controller, which applies the election
        sb.stop_brokers(sb.brokers, noticed_after=60)  # at once: one by one, the tool reached the last one

    sb.hold_next(ELECT_LEADERS, network_cut)  # before its answer: nothing can be read from then on
    code, out, _ = rebalance(sb, tmp_path, "--output", "table", "--audit-log", str(audit), "--timeout", "2")
    record = json.loads(audit.read_text())
    assert code == 3 and "now at or under" not in out and "The balance afterwards could not be read." in out
    assert record["done"]["brokers_still_above_threshold"] is None


def test_the_default_lock_is_the_clusters_whichever_broker_is_asked(sb: Sandbox, tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Two cron entries naming different brokers of one cluster must not elect together."""
    import tempfile

    from leader_election_cli.cluster.admin import ClusterConnection
    from leader_election_cli.config.settings import ClientSettings
    from leader_election_cli.operations.lock import default_lock_path

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    first, second = sb.bootstrap_servers.split(",")[:2]
    with ClusterConnection.connect(first, ClientSettings()) as cluster:
        cluster_id = cluster.cluster_id()
    assert cluster_id and default_lock_path(cluster_id, first) == default_lock_path(cluster_id, second)
    lock = default_lock_path(cluster_id, first)
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        code, _, err = kl("rebalance", "--bootstrap-server", second)
    assert code == 5 and f"the lock file {lock} is locked" in err
    assert sb.request_count(ELECT_LEADERS) == 0
    assert kl("rebalance", "--bootstrap-server", first)[0] == 0 and sb.request_count(ELECT_LEADERS) > 0


def test_an_audit_log_that_cannot_be_written_exits_1_and_says_so(sb: Sandbox, tmp_path: Path) -> None:
    metrics = tmp_path / "m.prom"
    code, _, err = rebalance(sb, tmp_path, "--audit-log", "/dev/full", "--metrics-file", str(metrics),
                             "--output", "table")
    assert code == 1
    assert err.splitlines()[:2] == ["Could not write the --audit-log file /dev/full: No space left on device",
                                    "Hint: Check the --audit-log path."]
    assert sb.request_count(ELECT_LEADERS) > 0  # the run itself went ahead: the exit code says the record did not
    assert "kafka_leaders_" in metrics.read_text()  # the metrics are still written
