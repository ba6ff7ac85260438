"""`kafka-leaders snapshot` against the sandbox, and the snapshot rows' round trip through both formats."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path

import pytest
from commands import run_command
from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import cluster_states

from leader_election_cli import snapshot
from leader_election_cli.cli.toolkit import cli
from leader_election_cli.errors import InputError
from leader_election_cli.model import ClusterState
from leader_election_cli.planning.balance import balance
from leader_election_cli.sandbox import Sandbox

T0 = datetime(2024, 5, 1, 12, 0, 0, 123456, tzinfo=timezone.utc)


run_snapshot = partial(run_command, cli, "snapshot")


@pytest.fixture(scope="module")
def sb(module_sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    sandbox = module_sandbox_factory(3, "kraft")
    sandbox.create_topic("orders", assignment={0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]},
                         configs={"min.insync.replicas": "2"})
    sandbox.create_topic("logs", assignment={0: [2, 1]})
    sandbox.set_leader("orders", 0, 2)  # off its preferred replica
    sandbox.set_isr("logs", 0, [2])
    return sandbox


def comparable(state: ClusterState) -> tuple:
    """What a snapshot keeps of a cluster: partitions' leader/replicas/ISR/ELR, min ISR, live brokers,
    pending reassignments and the replicas they add."""
    partitions = {tp: (p.leader, p.replicas, p.isr, p.elr) for tp, p in state.partitions.items()}
    return partitions, state.min_insync_replicas, state.live_brokers, state.reassigning


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_snapshot_of_the_sandbox_reads_back_as_its_state(sb: Sandbox, tmp_path: Path, suffix: str) -> None:
    output = tmp_path / f"metadata{suffix}"
    code, out, err = run_snapshot("--bootstrap-server", sb.bootstrap_servers, "--output", str(output))
    assert (code, err) == (0, "")
    assert "Wrote 4 partition rows of cluster" in out and str(output) in out
    rows = snapshot.read(output)
    assert [(r["topic"], r["partition"]) for r in rows] == [("logs", 0), ("orders", 0), ("orders", 1), ("orders", 2)]
    orders_0 = rows[1]
    assert (orders_0["leader"], orders_0["replicas"], orders_0["isr"], orders_0["min_insync_replicas"]) == (
        2, [1, 2, 3], [1, 2, 3], 2)
    assert rows[0]["isr"] == [2] and rows[0]["min_insync_replicas"] is not None  # the broker default
    assert all(r["live_brokers"] == [1, 2, 3] and r["elr"] == [] for r in rows)
    assert len({(r["cluster"], r["taken_at"]) for r in rows}) == 1
    assert rows[0]["taken_at"].tzinfo is not None
    assert abs(datetime.now(timezone.utc) - rows[0]["taken_at"]) < timedelta(minutes=5)


def test_cluster_name_override_and_append(sb: Sandbox, tmp_path: Path) -> None:
    output = tmp_path / "metadata.jsonl"
    base = ("--bootstrap-server", sb.bootstrap_servers, "--output", str(output), "--cluster-name", "prod-eu")
    assert run_snapshot(*base)[0] == 0
    code, _, err = run_snapshot(*base)
    assert code == 2 and err.startswith(f"Snapshot file {output} already exists\nHint: Pass --append")
    sb.stop_broker(3)
    try:
        assert run_snapshot(*base, "--append")[0] == 0
    finally:
        sb.start_broker(3)
    rows = snapshot.read(output)
    times = sorted({r["taken_at"] for r in rows})
    assert len(rows) == 8 and len(times) == 2 and {r["cluster"] for r in rows} == {"prod-eu"}
    assert next(r["live_brokers"] for r in rows if r["taken_at"] == times[1]) == [1, 2]


@pytest.mark.parametrize(("output", "message"), [
    ("metadata.csv", "Unsupported snapshot file"),
    ("missing-dir/metadata.jsonl", "directory"),
])
def test_bad_outputs_are_refused_before_connecting(tmp_path: Path, output: str, message: str) -> None:
    code, _, err = run_snapshot("--bootstrap-server", "127.0.0.1:1", "--output", str(tmp_path / output))
    assert code == 2 and message in err and len(err.splitlines()) <= 2


def test_a_name_spark_cannot_read_back_is_refused_before_connecting(tmp_path: Path) -> None:
    code, out, err = run_snapshot("--bootstrap-server", "127.0.0.1:1", "--output", str(tmp_path / "at-12:00.jsonl"))
    assert (code, out) == (2, "") and "has a ':'" in err


def test_a_file_the_system_refuses_is_a_one_line_error(sb: Sandbox) -> None:
    """/proc passes the checks made before connecting (root may write there), then refuses the file."""
    code, out, err = run_snapshot("--bootstrap-server", sb.bootstrap_servers, "--output", "/proc/snapshot.jsonl")
    assert (code, out) == (2, "")
    assert err.startswith("Cannot write /proc/snapshot.jsonl") and "Internal error" not in err


def test_unreachable_cluster_exits_3(tmp_path: Path) -> None:
    code, _, err = run_snapshot("--bootstrap-server", "127.0.0.1:1", "--timeout", "1",
                                "--output", str(tmp_path / "m.jsonl"))
    assert code == 3 and "Traceback" not in err
    assert not (tmp_path / "m.jsonl").exists()


@settings(max_examples=25, deadline=None)
@given(state=cluster_states(), suffix=st.sampled_from([".jsonl", ".parquet"]), data=st.data())
def test_rows_round_trip_to_the_same_cluster_states(tmp_path_factory: pytest.TempPathFactory, state: ClusterState,
                                                     suffix: str, data: st.DataObject) -> None:
    path = tmp_path_factory.mktemp("rt") / f"s{suffix}"
    later = T0 + timedelta(minutes=data.draw(st.integers(1, 60)))
    snapshot.write(snapshot.rows(state, "a", T0), path)
    snapshot.write(snapshot.rows(state, "b", later), path, append=True)
    states = snapshot.states(snapshot.read(path))
    assert set(states) == {("a", T0), ("b", later)}
    assert comparable(states[("a", T0)]) == comparable(states[("b", later)]) == comparable(state)


def test_jsonl_rows_are_plain_json_with_utc_times(tmp_path: Path) -> None:
    state = ClusterState(brokers={1: ("h", 1)}, controller_id=1, partitions={}, cluster_id="x")
    path = tmp_path / "s.jsonl"
    snapshot.write([*snapshot.rows(state, "x", T0)], path)
    assert path.read_text() == ""
    row = snapshot.SnapshotRow(cluster="x", taken_at=T0, topic="t", partition=0, replicas=[1], isr=[1], elr=[],
                               leader=1, min_insync_replicas=None, live_brokers=[1])
    snapshot.write([row], path, append=True)
    assert json.loads(path.read_text()) == {
        "cluster": "x", "taken_at": "2024-05-01T12:00:00.123456Z", "topic": "t", "partition": 0, "replicas": [1],
        "isr": [1], "elr": [], "leader": 1, "min_insync_replicas": None, "live_brokers": [1]}


def test_reading_a_broken_line_names_the_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_text('{"cluster": "x"}\n')
    with pytest.raises(InputError, match=r"s\.jsonl:1: not a snapshot row"):
        snapshot.read(path)


def test_older_snapshots_without_format_version_or_elr_are_read_as_version_1(tmp_path: Path) -> None:
    path = tmp_path / "old.jsonl"
    path.write_text(json.dumps({"cluster": "x", "taken_at": "2024-05-01T12:00:00Z", "topic": "t", "partition": 0,
                                "replicas": [1, 2], "isr": [1], "leader": 1, "min_insync_replicas": 2,
                                "live_brokers": [1, 2]}) + "\n")
    (row,) = snapshot.read(path)
    assert (row["format_version"], row["elr"], row["adding_replicas"], row["removing_replicas"]) == (1, [], None, None)


@pytest.mark.parametrize(("taken_at", "problem"), [
    ("2024-05-01T12:00:00", "taken_at has no time zone"),
    (1714564800000, "taken_at is a number, not an ISO-8601 time (epoch times are refused"),
    ("2024-05-01T12:00:00Z", "format_version newer than this tool reads (2)"),
])
def test_rows_spark_would_refuse_are_refused_with_the_same_reason(tmp_path: Path, taken_at: object,
                                                                  problem: str) -> None:
    path = tmp_path / "s.jsonl"
    row = {"format_version": 3, "cluster": "x", "taken_at": taken_at, "topic": "t", "partition": 0, "replicas": [1],
           "isr": [1], "elr": [], "leader": 1, "min_insync_replicas": None, "live_brokers": [1]}
    path.write_text("\n" + json.dumps({**row, "format_version": 2}) + "\n" + json.dumps(row) + "\n")
    with pytest.raises(InputError, match=re.escape(f"s.jsonl:{2 if problem[0] == 't' else 3}: not a snapshot row: "
                                                   f"{problem}")):
        snapshot.read(path)


def test_an_output_directory_gets_a_new_parquet_file_named_after_the_cluster_and_time(sb: Sandbox,
                                                                                      tmp_path: Path) -> None:
    code, out, err = run_snapshot("--bootstrap-server", sb.bootstrap_servers, "--cluster-name", "prod/eu",
                                  "--output", str(tmp_path))
    assert (code, err) == (0, "")
    (written,) = tmp_path.iterdir()
    assert written.name.startswith("prod_eu-2") and written.suffix == ".parquet" and ":" not in written.name
    assert out.endswith(f"to {written}\n") and len(snapshot.read(written)) == 4
    code, _, _ = run_snapshot("--bootstrap-server", sb.bootstrap_servers, "--output", str(tmp_path),
                              "--format", "jsonl")
    assert code == 0 and len(list(tmp_path.glob("*.jsonl"))) == 1


@pytest.mark.parametrize(("args", "message"), [
    (["--append"], "--append needs a file, and "),
    (["--format", "jsonl", "--output", "x.parquet"], "--format jsonl does not match the file name x.parquet"),
])
def test_contradictory_output_options_are_refused_before_connecting(tmp_path: Path, args: list[str],
                                                                    message: str) -> None:
    output = ["--output", str(tmp_path)] if "--output" not in args else []
    code, out, err = run_snapshot("--bootstrap-server", "127.0.0.1:1", *output, *args)
    assert (code, out) == (2, "") and err.startswith(message)


def test_a_pending_reassignment_is_kept_with_the_replicas_it_adds_and_removes(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """A partition moving from [3] to [2, 1] (replicas [2, 1, 3], ISR [3]) is not under-replicated for
    Kafka's count (RF = replicas - adding = 1): the snapshot must carry what tells it apart."""
    sandbox = sandbox_factory(3, "kraft", topics={"moving": {0: [3]}})
    sandbox.cluster.alter_reassignment("moving", 0, [2, 1])
    output = tmp_path / "s.jsonl"
    assert run_snapshot("--bootstrap-server", sandbox.bootstrap_servers, "--output", str(output))[0] == 0
    (row,) = snapshot.read(output)
    assert (row["replicas"], row["adding_replicas"], row["removing_replicas"]) == ([2, 1, 3], [2, 1], [3])
    (state,) = snapshot.states([row]).values()
    assert balance(state).under_replicated == 0
