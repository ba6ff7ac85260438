"""The Spark pipeline on a real local SparkSession (local[2], one for the whole module).

Its results must equal the pure planner's on the same clusters; bad rows must be counted; plan files
must be valid election files that, fed to the drop-in, bring a sandbox back to preferred leaders.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta, timezone
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

# The pipeline's modules import PySpark: skip (not fail) where the [spark] extra is not installed.
pytest.importorskip("pyspark")
pq = pytest.importorskip("pyarrow.parquet")
from pyspark.sql import functions as F  # noqa: E402
from strategies import cluster_states  # noqa: E402

from leader_election_cli import snapshot  # noqa: E402
from leader_election_cli.cli.drop_in_command import command as drop_in  # noqa: E402
from leader_election_cli.cli.toolkit import cli  # noqa: E402
from leader_election_cli.errors import InputError  # noqa: E402
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition  # noqa: E402
from leader_election_cli.operations.balance_dry_run import plan_report  # noqa: E402
from leader_election_cli.operations.plan_file import load_plan_file  # noqa: E402
from leader_election_cli.operations.status import status_report  # noqa: E402
from leader_election_cli.pipeline import files, job  # noqa: E402
from leader_election_cli.planning import balance as planned_balance  # noqa: E402
from leader_election_cli.planning import predicates  # noqa: E402
from leader_election_cli.reports.balance_plan import document  # noqa: E402
from leader_election_cli.sandbox import Sandbox  # noqa: E402
from leader_election_cli.sandbox.scenarios import build  # noqa: E402

pytestmark = pytest.mark.spark

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
ELECTION_FILE_SCHEMA = json.loads(
    resources.files("leader_election_cli").joinpath("schemas/election-file.schema.json").read_text())


@pytest.fixture(scope="module")
def spark():
    session = job.spark_session("local[2]", {"spark.ui.enabled": "false"})
    yield session
    session.stop()


def table(out: Path, name: str) -> list[dict]:
    """An output table's rows, read with pyarrow (no Spark job; times come back as aware UTC)."""
    return pq.read_table(out / name).to_pylist()


def plan_files(out: Path, cluster: str) -> list[Path]:
    return sorted((out / "plans" / cluster).glob("batch-*.json"))


def planned_partitions(out: Path, cluster: str, batch_size: int) -> list[dict]:
    """Every partition in a cluster's plan files, checking each file on the way."""
    partitions: list[dict] = []
    paths = plan_files(out, cluster)
    for number, path in enumerate(paths, 1):
        assert path.name == f"batch-{number:04d}.json"
        document = json.loads(path.read_text())
        jsonschema.validate(document, ELECTION_FILE_SCHEMA)
        size = len(document["partitions"])
        assert 0 < size <= batch_size and (size == batch_size or number == len(paths))
        partitions += document["partitions"]
    return partitions


@st.composite
def fleet_states(draw: st.DrawFn) -> ClusterState:
    """A random cluster as `snapshot` reads one: pending reassignments adding some of the replicas (or
    none), the min.insync.replicas cap of Kafka 3.7 or not; ELR, dead brokers and RF=1 topics come from
    `cluster_states`."""
    state = draw(cluster_states())
    reassigning = {tp: tuple(r for r in state.partitions[tp].replicas[1:] if draw(st.booleans()))
                   for tp in state.partitions if draw(st.integers(0, 4)) == 0}
    return replace(state, reassigning=reassigning, min_isr_capped=draw(st.booleans()))


# One example: snapshots of up to three clusters (several snapshots of each), and the format of its rows' file.
Example = tuple[list[tuple[str, ClusterState]], bool]
examples = st.tuples(st.lists(st.tuples(st.sampled_from(["east", "west", "north"]), fleet_states()), min_size=1,
                              max_size=8), st.booleans())
ANALYZE_EXAMPLES = 20  # generated per run, all checked by two `analyze` jobs (half each), whatever the load
JOB_SETTINGS = st.tuples(st.integers(1, 4), st.sampled_from([0, 9.2, 10, 25, 50]))  # batch size, threshold


def names(partitions: list[TopicPartition]) -> tuple[str, ...]:
    return tuple(f"{tp.topic}-{tp.partition}" for tp in sorted(partitions))


def as_recorded(state: ClusterState) -> ClusterState:
    """What a snapshot keeps for the balance planner: no racks, no offline log directories."""
    partitions = {tp: p._replace(offline_replicas=()) for tp, p in state.partitions.items()}
    return replace(state, racks={}, partitions=partitions)


@pytest.mark.timeout(300)  # two Spark jobs, whatever the load: 64-74 s at load 7.5-8.9 on 2 cores
def test_results_equal_status_and_the_planners(spark, tmp_path: Path) -> None:
    """`analyze` over snapshots of clusters says what `status` says of the same clusters, and plans what
    `rebalance` would elect, and writes the balance plans `solve_leadership` makes of each cluster's latest
    state: the expected side is computed from the ClusterStates, not from the rows. The generated examples
    are checked together, each under cluster names of its own (no shrinking or replay: a failure shows
    its examples), by one job with generated code and one interpreted (as small local inputs run), each
    with its own batch size and threshold."""
    drawn_examples = dict(enumerate(drawn(examples, ANALYZE_EXAMPLES)))
    # Hypothesis' first example is its simplest, (1, 0): the jobs take the random ones after it
    for interpreted, (batch_size, threshold) in zip((False, True), drawn(JOB_SETTINGS, 3)[1:], strict=True):
        _check_analyze(spark, tmp_path / f"interpreted-{interpreted}", batch_size, threshold, interpreted,
                       {n: e for n, e in drawn_examples.items() if n % 2 == interpreted})


def _check_analyze(spark, work: Path, batch_size: int, threshold: float, interpreted: bool,
                   examples: dict[int, Example]) -> None:
    """One `analyze` job over `examples`, the clusters of example N named N-east, N-west, N-north."""
    states: dict[tuple[str, datetime], ClusterState] = {}
    rows: dict[bool, list[snapshot.SnapshotRow]] = {False: [], True: []}  # by format: Parquet or not
    for number, (snapshots, parquet) in examples.items():
        for i, (name, state) in enumerate(snapshots):
            cluster, at = f"{number}-{name}", T0 + timedelta(minutes=i)
            states[(cluster, at)] = state
            rows[parquet] += snapshot.rows(state, cluster, at)
    work.mkdir()
    sources = {work / ("in.parquet" if parquet else "in.jsonl"): part for parquet, part in rows.items() if part}
    for source, part in sources.items():
        snapshot.write(part, source)

    def shown(keys: Iterable[tuple]) -> str:
        """The examples of `keys` (each starting with a cluster name), the first as drawn, and the job's settings."""
        numbers = sorted({int(key[0].partition("-")[0]) for key in keys})
        return (f"examples {numbers} differ (batch size {batch_size}, threshold {threshold}, interpreted "
                f"{interpreted}); example {numbers[0]}: {examples[numbers[0]]!r}")

    def differing(found: dict, expected: dict) -> str:
        return shown(key for key in found.keys() | expected.keys() if found.get(key) != expected.get(key))

    with generated_code(spark, interpreted):
        result = job.analyze(spark, [str(s) for s in sources], str(work / "out"), batch_size=batch_size,
                             threshold_pct=threshold, balance=True)

    out = work / "out"
    assert (result.rows, result.bad_rows, result.snapshots, result.legacy_rows) == (
        sum(map(len, rows.values())), {}, len(states), 0)
    expected_brokers, expected_health = {}, {}
    for (cluster, at), state in states.items():
        report = status_report(state)
        balance = report.balance
        for b in balance.brokers:
            expected_brokers[(cluster, at, b.broker)] = (b.alive, b.leaders, b.preferred, b.not_led_by_preferred,
                                                          b.ratio, b.above(threshold))
        positive = [b for b in balance.brokers if b.ratio > 0]
        under_replicated = [tp for tp, p in state.partitions.items() if predicates.is_under_replicated(
            p.replicas, p.isr, state.reassigning.get(tp, ()))]
        down = sorted({r for p in state.partitions.values() for r in p.replicas} - state.live_brokers)
        expected_health[(cluster, at)] = (
            balance.partitions, balance.not_preferred_leader, balance.under_replicated, balance.under_min_isr,
            balance.offline, balance.fixable, len(balance.brokers), len(balance.above(threshold)),
            max((b.ratio for b in balance.brokers), default=0.0),
            min(positive, key=lambda b: (-b.ratio, b.broker)).broker if positive else None,
            names(under_replicated), names(report.under_min_isr), names(report.offline), down)
    found_brokers = {(r["cluster"], r["taken_at"], r["broker"]): (
        r["alive"], r["leaders"], r["preferred"], r["not_led_by_preferred"], r["imbalance_ratio"],
        r["above_threshold"]) for r in table(out, "broker_balance")}
    assert found_brokers == expected_brokers, differing(found_brokers, expected_brokers)
    found_health = {(r["cluster"], r["taken_at"]): (
        r["partitions"], r["not_preferred_leader"], r["under_replicated"], r["under_min_isr"], r["offline"],
        r["fixable"], r["brokers"], r["brokers_above_threshold"], r["max_imbalance_ratio"], r["worst_broker"],
        *(tuple(f"{p['topic']}-{p['partition']}" for p in r[name]) for name in (
            "under_replicated_partitions", "under_min_isr_partitions", "offline_partitions")),
        r["down_brokers"]) for r in table(out, "cluster_health")}
    assert found_health == expected_health, differing(found_health, expected_health)
    for cluster in {c for c, _ in states}:
        latest = max(at for c, at in states if c == cluster)
        candidates = planned_balance.rebalance_candidates(states[(cluster, latest)], threshold)
        assert planned_partitions(out, cluster, batch_size) == [
            {"topic": tp.topic, "partition": tp.partition} for tp in candidates], shown([(cluster,)])
        summary = next(c for c in result.clusters if c.cluster == cluster)
        fixable = planned_balance.fixable_by_preferred(states[(cluster, latest)])
        assert (summary.latest, summary.fixable, summary.planned, summary.plan_files) == (
            latest, len(fixable), len(candidates), -(-len(candidates) // batch_size)), shown([(cluster,)])
        path = out / "balance" / f"{cluster}.json"
        written = load_plan_file(str(path))  # what balance --execute --plan-file reads, checked as it checks it
        expected = document(plan_report(as_recorded(states[(cluster, latest)]), plan_file=str(path)))
        assert {**written, "created_at": None} == {**expected, "created_at": None}, shown([(cluster,)])
        assert (summary.balance_plan, summary.balance_max_after, summary.balance_changes) == (
            str(path), expected["summary"]["max_leaders_after"], len(expected["partitions"])), shown([(cluster,)])


def test_bad_rows_are_counted_kept_and_left_out(spark, tmp_path: Path) -> None:
    good = snapshot.SnapshotRow(cluster="c", taken_at=T0, topic="t", partition=0, replicas=[1, 2], isr=[1, 2],
                                elr=[], leader=2, min_insync_replicas=2, live_brokers=[1, 2])
    lines = [
        json.dumps({**good, "taken_at": snapshot.format_time(T0)}),
        "this is not json",
        json.dumps({**good, "taken_at": snapshot.format_time(T0), "partition": "seven"}),
        json.dumps({**good, "taken_at": snapshot.format_time(T0), "partition": 1, "leader": None}),
        json.dumps({**good, "taken_at": snapshot.format_time(T0), "partition": -1}),
        json.dumps({**good, "taken_at": snapshot.format_time(T0), "partition": 2, "isr": [1, None]}),
        json.dumps({**good, "taken_at": snapshot.format_time(T0), "partition": 3, "topic": " "}),
        json.dumps({**good, "taken_at": snapshot.format_time(T0), "partition": 4}),
        json.dumps({**good, "taken_at": snapshot.format_time(T0), "partition": 4, "leader": 1}),
    ]
    (tmp_path / "in").mkdir()
    (tmp_path / "in" / "mixed.jsonl").write_text("\n".join(lines) + "\n")
    import pyarrow as pa

    without_elr = pa.Table.from_pylist([{**good, "partition": 5}], schema=snapshot.arrow_schema()).drop(
        ["elr", "format_version", "adding_replicas", "removing_replicas"])
    pq.write_table(without_elr, tmp_path / "in" / "old.parquet")

    result = job.analyze(spark, [str(tmp_path / "in")], str(tmp_path / "out"))

    assert result.rows == 10 and result.bad_row_count == 8
    assert result.bad_rows == {
        "malformed JSON or a value of the wrong type": 2, "missing leader": 1, "negative partition": 1,
        "null broker id in isr": 1, "blank topic": 1, "partition listed twice in one snapshot": 2}
    bad = table(tmp_path / "out", "bad_rows")
    assert len(bad) == 8 and all(r["source_file"].endswith("mixed.jsonl") for r in bad)
    assert {r["raw_record"] for r in bad if r["bad_reason"].startswith("malformed")} == {lines[1], lines[2]}
    (cluster,) = result.clusters
    # the first line, and the older snapshot's row without elr; neither has a format_version (version 1)
    assert (cluster.partitions, cluster.fixable, result.legacy_rows) == (2, 2, 2)
    assert planned_partitions(tmp_path / "out", "c", 1000) == [{"topic": "t", "partition": 0},
                                                                {"topic": "t", "partition": 5}]


def test_names_with_glob_characters_are_read_as_named(spark, tmp_path: Path) -> None:
    """Spark's readers read a path as a glob: a snapshot file found in a directory, and --out, named with
    [ ] { } are read back as named (they failed: 'Path does not exist: .../snap[1].jsonl')."""
    (tmp_path / "in").mkdir()
    snapshot.write(snapshot.rows(two_partitions_one_fixable(), "c", T0), tmp_path / "in" / "snap[1]{a}.jsonl")
    out = tmp_path / "out[2024]"

    result = job.analyze(spark, [str(tmp_path / "in")], str(out))

    assert (result.rows, result.bad_rows) == (2, {}) and result.clusters[0].fixable == 1
    assert len(table(out, "cluster_health")) == 1 and planned_partitions(out, "c", 1000) == [
        {"topic": "t", "partition": 1}]


def test_globs_and_directories_find_snapshot_files(spark, tmp_path: Path) -> None:
    nested = tmp_path / "snaps" / "2024" / "05"
    nested.mkdir(parents=True)
    for name in ("a.jsonl", "b.parquet", "notes.txt", ".hidden.jsonl", "_SUCCESS"):
        (nested / name).write_text("")
    (tmp_path / "snaps" / "top.jsonl").write_text("")
    json_files, parquet_files = files.find_snapshots(spark, [str(tmp_path / "snaps")])
    assert [Path(f).name for f in json_files] == ["a.jsonl", "top.jsonl"]
    assert [Path(f).name for f in parquet_files] == ["b.parquet"]
    json_files, parquet_files = files.find_snapshots(spark, [str(tmp_path / "snaps" / "*" / "*" / "*.jsonl"),
                                                             str(nested / "a.jsonl")])
    assert ([Path(f).name for f in json_files], parquet_files) == (["a.jsonl"], [])
    with pytest.raises(InputError, match="No snapshot file matches"):
        files.find_snapshots(spark, [str(tmp_path / "nothing-*.jsonl")])
    with pytest.raises(InputError, match="Unsupported snapshot file"):
        files.find_snapshots(spark, [str(nested / "notes.txt")])
    # a name with glob characters that matches nothing as a glob is the path as named, if it exists
    named = tmp_path / "snaps[eu]"
    (named / "2024").mkdir(parents=True)
    (named / "2024" / "c.jsonl").write_text("")
    (tmp_path / "snapse").mkdir()  # what [eu] matches as a glob: but it holds no snapshot
    with pytest.raises(InputError, match="No snapshot files"):
        files.find_snapshots(spark, [str(named)])
    (tmp_path / "snapse").rmdir()
    json_files, _ = files.find_snapshots(spark, [str(named)])
    assert [Path(f).name for f in json_files] == ["c.jsonl"]


def test_the_command_prints_a_summary_draws_a_plot_and_removes_stale_plans(spark, tmp_path: Path) -> None:
    state = two_partitions_one_fixable()
    rows = snapshot.rows(state, "prod/eu", T0) + snapshot.rows(state, "prod/eu", T0 + timedelta(hours=1))
    snapshot.write(rows, tmp_path / "s.jsonl")
    stale = tmp_path / "out" / "plans" / "gone" / "batch-0001.json"
    stale.parent.mkdir(parents=True)
    stale.write_text("{}")

    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "out"),
                                      "--plot", "--batch-size", "1"], catch_exceptions=False)

    assert result.exit_code == 0, result.output
    assert "Read 4 row(s) from 1 file(s): 2 snapshot(s) of 1 cluster(s)" in result.stdout
    assert "No bad rows." in result.stdout and "prod/eu" in result.stdout
    assert not stale.exists()
    (plan_dir,) = (tmp_path / "out" / "plans").iterdir()
    assert plan_dir.name.startswith("prod_eu-") and len(list(plan_dir.iterdir())) == 1
    assert f"--path-to-json-file {tmp_path / 'out' / 'plans' / plan_dir.name / 'batch-0001.json'}" in result.stdout
    assert (tmp_path / "out" / "imbalance.png").read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert written["rows"] == 4 and written["clusters"][0]["fixable"] == 1


def two_partitions_one_fixable() -> ClusterState:
    return ClusterState(brokers={1: ("h", 1), 2: ("h", 2)}, controller_id=1, partitions={
        TopicPartition("t", 0): PartitionState("t", 0, 1, (1, 2), (1, 2)),
        TopicPartition("t", 1): PartitionState("t", 1, 1, (2, 1), (1, 2))})


@pytest.mark.parametrize(("name", "content", "cause"), [
    ("other.parquet", b"not parquet at all", r"java\.lang\.RuntimeException: \S+other\.parquet is not a Parquet file"),
    ("other.jsonl.gz", b"not gzip at all", r"java\.io\.IOException: not a gzip file"),
])
def test_unreadable_input_is_one_line_with_its_cause(spark, tmp_path: Path, name: str, content: bytes,
                                                    cause: str) -> None:
    """The cause was left out: "Encountered error while reading file ...", and no word of why. Nothing is
    written yet: the last run's set in --out stays whole, its summary included."""
    (tmp_path / name).write_bytes(content)
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / "summary.json").write_text("{}")
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / name), "--out", str(tmp_path / "o")])
    assert result.exit_code == 2
    assert re.match(rf"Spark could not read the input: .*{re.escape(name)}.* \(caused by {cause}", result.stderr)
    assert "Traceback" not in result.stderr and len(result.stderr.splitlines()) == 2
    assert (tmp_path / "o" / "summary.json").read_text() == "{}"


class JavaException:
    """What a Py4J Java exception answers to: its message, cause and class name (and Py4J's object id)."""

    _target_id = "o1"

    def __init__(self, name: str, message: str | None, cause: JavaException | None = None) -> None:
        self.name, self.message, self.cause = name, message, cause

    def getMessage(self) -> str | None:  # noqa: N802 (Java's names)
        return self.message

    def getCause(self) -> JavaException | None:  # noqa: N802
        return self.cause

    def getClass(self) -> JavaException:  # noqa: N802
        return self

    def getName(self) -> str:  # noqa: N802
        return self.name


@pytest.mark.parametrize(("chain", "said"), [
    (JavaException("a.B", "read failed\n\tat x", JavaException("c.D", None, JavaException("e.F", "no disk"))),
     "a.B: read failed (caused by e.F: no disk)"),
    (JavaException("a.Wrapper", None, JavaException("a.B", "read failed")), "a.B: read failed"),
    (JavaException("a.B", "failed: e.F: no disk", JavaException("e.F", "no disk")), "a.B: failed: e.F: no disk"),
    # no message anywhere (it was an internal error: None.strip())
    (JavaException("java.lang.NullPointerException", None), "java.lang.NullPointerException"),
])
def test_a_java_failure_is_its_first_message_and_its_root_cause(chain: JavaException, said: str) -> None:
    from py4j.protocol import Py4JJavaError

    assert job._what_went_wrong(Py4JJavaError("An error occurred while calling o41.count", chain)) == said


def test_a_plan_file_brings_the_sandbox_back_to_preferred_leaders(spark, tmp_path: Path) -> None:
    with Sandbox(brokers=3, mode="kraft") as sb:
        sb.create_topic("orders", partitions=6, replication_factor=3)
        sb.create_topic("logs", partitions=3, replication_factor=2)
        sb.stop_broker(1)  # its partitions move to other replicas
        sb.start_broker(1)
        moved = [(t, p) for t, n in (("orders", 6), ("logs", 3)) for p in range(n)
                 if sb.partition_state(t, p).leader != sb.partition_state(t, p).replicas[0]]
        assert moved
        runner = CliRunner()
        snap = runner.invoke(cli, ["snapshot", "--bootstrap-server", sb.bootstrap_servers, "--cluster-name", "sb",
                                   "--output", str(tmp_path / "s.parquet")], catch_exceptions=False)
        assert snap.exit_code == 0, snap.output
        analyzed = runner.invoke(cli, ["analyze", str(tmp_path / "s.parquet"), "--out", str(tmp_path / "out")],
                                 catch_exceptions=False)
        assert analyzed.exit_code == 0, analyzed.output
        (plan,) = plan_files(tmp_path / "out", "sb")
        assert sorted((p["topic"], p["partition"]) for p in json.loads(plan.read_text())["partitions"]) == sorted(moved)

        elected = runner.invoke(drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                                          "--path-to-json-file", str(plan), "--output", "json"])

        assert elected.exit_code == 0, elected.output
        assert {p["outcome"] for p in json.loads(elected.stdout)["partitions"]} == {"elected"}
        for topic, count in (("orders", 6), ("logs", 3)):
            for p in range(count):
                state = sb.partition_state(topic, p)
                assert state.leader == state.replicas[0]


def test_a_balance_plan_from_analyze_runs_on_the_sandbox_and_is_refused_once_it_changed(
        spark, tmp_path: Path) -> None:
    """A snapshot of a skewed sandbox (named, so only its cluster_id column says which cluster it is) ->
    analyze --balance-plans -> balance --execute --plan-file: refused (exit 5, nothing sent) while a planned
    partition's replicas differ, then run exactly, reaching the optimum."""
    with Sandbox(brokers=4, mode="kraft") as sb:
        build(sb, "skewed", 1, 8, 2)
        runner = CliRunner()
        snap = runner.invoke(cli, ["snapshot", "--bootstrap-server", sb.bootstrap_servers, "--cluster-name", "sb",
                                   "--output", str(tmp_path / "s.parquet")], catch_exceptions=False)
        assert snap.exit_code == 0, snap.output
        analyzed = runner.invoke(cli, ["analyze", str(tmp_path / "s.parquet"), "--out", str(tmp_path / "out"),
                                       "--balance-plans"], catch_exceptions=False)
        assert analyzed.exit_code == 0, analyzed.output
        plan = tmp_path / "out" / "balance" / "sb.json"
        assert "sb: most leaders on a broker 8 -> 2 (optimal)" in analyzed.stdout and str(plan) in analyzed.stdout
        saved = json.loads(plan.read_text())
        assert saved["cluster_id"] == sb.cluster.cluster_id and saved["dry_run"]
        first = saved["partitions"][0]

        def execute() -> tuple[int, dict, str]:
            run = runner.invoke(cli, ["balance", "--bootstrap-server", sb.bootstrap_servers, "--execute",
                                      "--plan-file", str(plan), "--restore-file", str(tmp_path / "restore.json"),
                                      "--output", "json"], catch_exceptions=False)
            return run.exit_code, json.loads(run.stdout), run.stderr

        sb.set_replicas(first["topic"], first["partition"], list(reversed(first["replicas_before"])))
        code, _, err = execute()
        assert code == 5 and "The cluster changed since plan file" in err
        assert sb.request_count(45) == sb.request_count(43) == 0  # no AlterPartitionReassignments, no election

        sb.set_replicas(first["topic"], first["partition"], first["replicas_before"])
        code, doc, err = execute()
        assert (code, err) == (0, "")
        assert [(p["topic"], p["partition"], p["outcome"], p["replicas_now"]) for p in doc["partitions"]] == [
            (p["topic"], p["partition"], "elected", p["replicas_after"]) for p in saved["partitions"]]
        assert doc["summary"]["max_leaders_now"] == 2


def test_plans_never_come_from_a_snapshot_older_than_the_newest(spark, tmp_path: Path) -> None:
    """The newest snapshot's rows are all bad (the same file kept twice): plans came from the older one."""
    state = two_partitions_one_fixable()
    (tmp_path / "in").mkdir()
    snapshot.write(snapshot.rows(state, "c", T0), tmp_path / "in" / "old.jsonl")
    newer = snapshot.rows(state, "c", T0 + timedelta(hours=1))
    snapshot.write(newer, tmp_path / "in" / "new.jsonl")
    snapshot.write(newer, tmp_path / "in" / "new-copy.jsonl")
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "in"), "--out", str(tmp_path / "out")],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert not (tmp_path / "out" / "plans").exists() or not list((tmp_path / "out" / "plans").iterdir())
    assert "Cluster c: its latest snapshot (2024" in result.stdout and "no plan was written" in result.stdout
    written = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert list(written["unusable_latest"]) == ["c"] and written["clusters"] == []


def test_duplicates_are_the_equal_keys_among_colliding_hashes(spark) -> None:
    """A shared key hash only makes rows candidates: with every hash taken as colliding, only the keys
    listed twice in one snapshot are duplicates (not the same partition in another snapshot or cluster)."""
    from leader_election_cli.pipeline import inputs

    at, later = T0.replace(tzinfo=None), (T0 + timedelta(hours=1)).replace(tzinfo=None)
    keys = [("c", at, "t", 0), ("c", at, "t", 0), ("c", at, "t", 1), ("c", later, "t", 0), ("d", at, "t", 0)]
    rows = spark.createDataFrame(keys, "cluster string, taken_at timestamp, topic string, partition int").withColumn(
        inputs.REASON, F.lit(None).cast("string"))
    every_hash = rows.select(F.xxhash64(*inputs.PARTITION_KEY).alias(inputs.KEY_HASH)).distinct()
    assert inputs.colliding_hashes(rows).count() == 1
    found = [tuple(r)[:4] for r in inputs.duplicate_keys(rows, every_hash).collect()]
    assert found == [("c", at, "t", 0)]


def test_no_usable_row_at_all_is_an_input_error(spark, tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text("not json\n")
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "bad.jsonl"), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2 and result.stderr.startswith("No usable snapshot row in the input: 1 bad row(s)")
    assert len(table(tmp_path / "out", "bad_rows")) == 1


def test_input_of_empty_files_says_so(spark, tmp_path: Path) -> None:
    """It said "No usable snapshot row in the input: 0 bad row(s)"."""
    (tmp_path / "empty.parquet").write_bytes(b"")
    (tmp_path / "blank.jsonl").write_text("\n\n")
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2
    assert result.stderr.startswith("No snapshot row in the input: its 2 file(s) are empty\n")


def test_cluster_names_are_shown_as_they_are(spark, tmp_path: Path) -> None:
    """A cluster named like rich markup ended the run with an internal error after every output was written."""
    snapshot.write(snapshot.rows(two_partitions_one_fixable(), "[/x] [bold]", T0), tmp_path / "s.jsonl")
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "out")],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "[/x] [bold]" in result.stdout


def test_files_below_hidden_or_temporary_directories_are_skipped(spark, tmp_path: Path) -> None:
    for name in ("_temporary/0/part-0.jsonl", ".staging/part-1.jsonl", "good.jsonl"):
        (tmp_path / "in" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "in" / name).write_text("")
    json_files, _ = files.find_snapshots(spark, [str(tmp_path / "in")])
    assert [Path(f).name for f in json_files] == ["good.jsonl"]
    (tmp_path / "in" / "README.txt").write_text("")
    json_files, _ = files.find_snapshots(spark, [str(tmp_path / "in" / "*")])  # other suffixes: skipped
    assert [Path(f).name for f in json_files] == ["good.jsonl"]
    (tmp_path / "in" / "out" / "plans").mkdir(parents=True)
    (tmp_path / "in" / "out" / "plans" / "x.jsonl").write_text("")
    json_files, _ = files.find_snapshots(spark, [str(tmp_path / "in")], exclude=str(tmp_path / "in" / "out"))
    assert [Path(f).name for f in json_files] == ["good.jsonl"]  # an --out inside the input is not read back


def test_small_local_inputs_are_counted_and_start_a_quick_driver_jvm(tmp_path: Path, monkeypatch) -> None:
    """Rows are estimated from Parquet footers and JSON lines' size, only for files on this machine; a
    small input puts the C1-only option first in the driver's Java options (a user's own come after and
    win), and the environment is left as it was."""
    state = two_partitions_one_fixable()
    (tmp_path / "d").mkdir()
    snapshot.write(snapshot.rows(state, "c", T0), tmp_path / "d" / "a.parquet")
    snapshot.write(snapshot.rows(state, "c", T0), tmp_path / "b.jsonl")
    (tmp_path / "c.jsonl").write_text("x" * 200 * 1000)
    by_size = (tmp_path / "b.jsonl").stat().st_size // files.JSON_BYTES_PER_ROW
    assert files.local_rows([str(tmp_path / "d"), str(tmp_path / "b.jsonl")], True) == 2 + by_size
    assert files.local_rows([str(tmp_path / "*.jsonl")], True) == 1000 + by_size
    assert files.local_rows([str(tmp_path / "d")], plain_paths_are_local=False) is None
    (tmp_path / "d").rename(tmp_path / "d[eu]")  # read as named (`find_snapshots`): not a glob of nothing
    assert files.local_rows([str(tmp_path / "d[eu]")], True) == 2
    assert files.local_rows(["hdfs:///snapshots"], True) is None
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-Dmine=1")
    with job._driver_java_options(quiet=False, quick=True):
        assert os.environ["SPARK_SUBMIT_OPTS"] == f"{job.QUICK_START_JAVA_OPTIONS} -Dmine=1"
    assert os.environ["SPARK_SUBMIT_OPTS"] == "-Dmine=1"


def test_a_local_driver_jvm_gets_the_throughput_collector_unless_the_user_picks_one(tmp_path: Path,
                                                                                   monkeypatch) -> None:
    """Two collectors would stop the JVM from starting: a user's choice anywhere the driver reads Java
    options keeps the collector out of ours."""
    for name in ("SPARK_SUBMIT_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS", "SPARK_CONF_DIR"):
        monkeypatch.delenv(name, raising=False)
    assert not job.picks_a_collector({"spark.driver.extraJavaOptions": "-Xss4m"})
    assert job.picks_a_collector({"spark.driver.extraJavaOptions": "-Xss4m -XX:+UseZGC"})
    assert job.picks_a_collector({"spark.driver.defaultJavaOptions": "-XX:+UseG1GC"})
    monkeypatch.setenv("JAVA_TOOL_OPTIONS", "-XX:+UseSerialGC")
    assert job.picks_a_collector({})
    monkeypatch.delenv("JAVA_TOOL_OPTIONS")
    (tmp_path / "spark-defaults.conf").write_text("spark.driver.extraJavaOptions -XX:+UseG1GC\n")
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    assert job.picks_a_collector({})
    monkeypatch.delenv("SPARK_CONF_DIR")
    monkeypatch.setenv("SPARK_SUBMIT_OPTS", "-Dmine=1")
    with job._driver_java_options(quiet=False, quick=False, throughput_gc=True):
        assert os.environ["SPARK_SUBMIT_OPTS"] == f"{job.THROUGHPUT_GC_JAVA_OPTIONS} -Dmine=1"


def test_a_local_driver_jvm_gets_a_quarter_of_the_memory_unless_the_user_sizes_it(tmp_path: Path,
                                                                                  monkeypatch) -> None:
    """Spark's 1g suits a driver beside executors; a local one gets a quarter of the machine's (or its control
    group's) memory, at most 4g, not below 4 GiB, and not where the user chose any size; small inputs run
    interpreted; a running JVM's size is left alone."""
    for name in ("SPARK_DRIVER_MEMORY", "PYSPARK_SUBMIT_ARGS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    for memory, expected in ((64 * 2**30, 4096), (8 * 2**30, 2048), (4 * 2**30, None), (None, None)):
        monkeypatch.setattr(job, "_memory_bytes", lambda memory=memory: memory)
        assert job.local_driver_memory_mb({}) == expected
    monkeypatch.setattr(job, "_memory_bytes", lambda: 8 * 2**30)
    assert job.local_settings("local[3]", False, {}, new_jvm=True) == {
        "spark.sql.shuffle.partitions": "6", "spark.sql.files.minPartitionNum": "24", "spark.ui.enabled": "false",
        "spark.sql.execution.arrow.pyspark.enabled": "true", "spark.driver.memory": "2048m"}
    assert job.local_settings("local[1]", True, {}, new_jvm=False).items() >= job.INTERPRETED.items()
    assert "spark.driver.memory" not in job.local_settings("local[1]", True, {}, new_jvm=False)
    assert job.local_driver_memory_mb({"spark.driver.memory": "3g"}) is None
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", "--driver-memory 3g pyspark-shell")
    assert job.local_driver_memory_mb({}) is None
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS")
    monkeypatch.setenv("SPARK_DRIVER_MEMORY", "3g")
    assert job.local_driver_memory_mb({}) is None
    monkeypatch.delenv("SPARK_DRIVER_MEMORY")
    (tmp_path / "spark-defaults.conf").write_text("spark.executor.memory 2g\n  spark.driver.memory=3g\n")
    assert job.local_driver_memory_mb({}) is None


def test_the_memory_read_is_the_control_groups_limit_when_lower(tmp_path: Path, monkeypatch) -> None:
    """cgroup v2's memory.max or v1's memory.limit_in_bytes, when below the machine's memory; "max" (no
    limit), a missing file or one larger than the machine's memory change nothing."""
    machine = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    v2, v1 = tmp_path / "memory.max", tmp_path / "memory.limit_in_bytes"
    monkeypatch.setattr(job, "CGROUP_MEMORY_LIMITS", (str(v2), str(v1)))
    assert job._memory_bytes() == machine  # neither file
    v2.write_text("max\n")
    v1.write_text(f"{machine * 4}\n")
    assert job._memory_bytes() == machine
    v1.write_text(f"{2 * 2**30}\n")
    assert job._memory_bytes() == min(machine, 2 * 2**30)
    v2.write_text(f"{2**30}\n")
    assert job._memory_bytes() == min(machine, 2**30)


def test_a_threshold_that_is_not_a_finite_number_is_refused(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["analyze", "x.jsonl", "--out", str(tmp_path), "--threshold", "nan"])
    assert result.exit_code == 2 and "is not a finite number" in result.stderr


def test_an_out_that_is_a_file_is_an_input_error(spark, tmp_path: Path) -> None:
    snapshot.write(snapshot.rows(two_partitions_one_fixable(), "c", T0), tmp_path / "s.jsonl")
    (tmp_path / "taken").write_text("")
    result = CliRunner().invoke(cli, ["analyze", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / "taken")])
    assert result.exit_code == 2 and "is a file: it must be a directory" in result.stderr


# -- one validation, one meaning of each rule ------------------------------------------------------

GOOD_ROW = {"format_version": 2, "cluster": "c", "taken_at": "2024-05-01T12:00:00Z", "topic": "t", "partition": 0,
            "replicas": [1, 2], "isr": [1], "elr": [], "leader": 1, "adding_replicas": None,
            "removing_replicas": None, "min_insync_replicas": 2, "live_brokers": [1, 2]}
MUTATIONS = st.one_of(
    st.tuples(st.sampled_from(sorted(GOOD_ROW)), st.sampled_from([None, "DELETE", "x", " ", True, 1.5, -3, 0, 3,
                                                                  2**31, [None], ["1"], [1, None]])),
    st.tuples(st.just("taken_at"), st.sampled_from([
        "2024-05-01T12:00:00", "2024-05-01 12:00:00", 1714564800000, 1.7e12, "2024-13-01T00:00:00Z",
        "2024-05-01T12:00:00.5Z", "2024-05-01T12:00:00.123+02:00", "yesterday", [1]])))


PARITY_ROWS = 300  # generated rows per run, all read by one Spark job


@pytest.mark.timeout(120)
def test_spark_refuses_the_rows_snapshot_read_refuses_for_the_same_reason(spark, tmp_path: Path) -> None:
    """`snapshot.row_problem` (what `snapshot.read` refuses a file for) and the Spark pipeline's column
    expressions give every row the same reason, or none; zone-less and epoch taken_at included. The
    generated rows go into one file, read by one Spark job."""
    mutations: list[list[tuple[str, object]]] = drawn(st.lists(MUTATIONS, max_size=2), PARITY_ROWS)
    lines = []
    for number, changes in enumerate(mutations):
        row = {**GOOD_ROW, "partition": number}
        for column, value in changes:
            if value == "DELETE":
                row.pop(column, None)
            else:
                row[column] = -1 - number if column == "partition" and value == -3 else value
        lines.append(json.dumps(row))
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n")
    reasons = [snapshot.row_problem(json.loads(line)) for line in lines]
    expected = Counter(reasons)

    found = Counter(r[0] for r in job.inputs.read_snapshots(spark, [str(path)], []).select("bad_reason").collect())

    differing = {reason for reason in found | expected if found[reason] != expected[reason]}
    assert found == expected, [line for line, reason in zip(lines, reasons, strict=True) if reason in differing][:5]
    for line, (number, _) in zip(lines, enumerate(lines, 1), strict=True):
        single = path.with_name(f"one-{number}.jsonl")
        single.write_text(line + "\n")
        problem = snapshot.row_problem(json.loads(line))
        if problem:
            with pytest.raises(InputError, match=re.escape(f":1: not a snapshot row: {problem}")):
                snapshot.read(single)
        else:
            assert len(snapshot.read(single)) == 1


HOSTILE_VALUES = [("taken_at", "0001-01-01T00:00:00Z"), ("taken_at", "9999-12-31T23:59:59.999999Z"),
                  ("taken_at", "1969-12-31T23:59:59Z"), ("taken_at", "1970-01-01T00:00:00Z"), ("topic", "../../t0"),
                  ("topic", "t" * 250), ("topic", "t" * 249), ("topic", "."), ("topic", ".."), ("topic", "t\n"),
                  ("topic", "tópico")]


@pytest.mark.timeout(120)
def test_times_out_of_range_and_illegal_topics_are_bad_rows_in_both_readers(spark, tmp_path: Path) -> None:
    """Year 1 or 9999-12-31T23:59:59.999999Z ended in an internal error or a Spark failure; '../../t0' went
    into election files the drop-in refuses (issue 34): bad rows, for the same reason in both readers."""
    lines = [json.dumps({**GOOD_ROW, "partition": number, column: value})
             for number, (column, value) in enumerate(HOSTILE_VALUES)]
    path = tmp_path / "rows.jsonl"
    path.write_text("\n".join(lines) + "\n")
    expected = Counter(snapshot.row_problem(json.loads(line)) for line in lines)
    assert expected == Counter({snapshot.TAKEN_AT_OUT_OF_RANGE: 3, snapshot.ILLEGAL_TOPIC: 6, None: 2})
    found = Counter(r[0] for r in job.inputs.read_snapshots(spark, [str(path)], []).select("bad_reason").collect())
    assert found == expected


def test_a_long_cluster_name_makes_a_short_directory_name() -> None:
    """A 5,000-character cluster name ended in 'Mkdirs failed' in a 5,000-character line."""
    from leader_election_cli.pipeline.plans import cluster_dir

    assert cluster_dir("prod-eu") == "prod-eu"
    long = cluster_dir("c" * 5000)
    assert len(long) <= 129 and long != cluster_dir("c" * 4999)


def drawn(strategy: st.SearchStrategy, count: int) -> list:
    """`count` examples of `strategy`, generated by Hypothesis (no shrinking): for checks where each
    example costs little but each check a Spark job, so that one job checks them all."""
    examples: list = []

    @settings(max_examples=count, phases=[Phase.generate], database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(example: object) -> None:
        examples.append(example)

    collect()
    return examples


def feature_counts(rows: list[snapshot.SnapshotRow]) -> Counter:
    """What generated snapshot rows cover, by cluster (a cluster counts once per feature)."""
    seen = {(feature, r["cluster"]) for r in rows for feature, present in (
        ("pending reassignment", r["adding_replicas"] is not None),
        ("replicas being added", bool(r["adding_replicas"])),
        ("ELR", bool(r["elr"])), ("dead broker", bool(set(r["replicas"]) - set(r["live_brokers"]))),
        ("RF=1", len(r["replicas"]) == 1), ("no leader", r["leader"] == -1),
        ("leader not live", r["leader"] != -1 and r["leader"] not in r["live_brokers"]),
        ("min ISR unknown", r["min_insync_replicas"] is None), ("fixable", predicates.is_fixable(
            r["leader"], r["replicas"], r["isr"], r["live_brokers"]))) if present}
    return Counter(feature for feature, _ in seen)


FLAG_CLUSTERS = 400  # generated clusters per run, all flagged by one Spark job
THRESHOLDS = [0, 9.2, 10, 1e-30, 33.333, 99.99999, 100, 250]


@contextmanager
def generated_code(spark, interpreted: bool) -> Iterator[None]:
    """The session's queries with no generated code (`job.INTERPRETED`, as a small local input runs), or
    with it (as the session starts)."""
    for key, value in job.INTERPRETED.items():
        if interpreted:
            spark.conf.set(key, value)
        else:
            spark.conf.unset(key)
    try:
        yield
    finally:
        for key in job.INTERPRETED:
            spark.conf.unset(key)


def classes_compiled(spark) -> int:
    """How many classes Spark has compiled from generated Java in this JVM."""
    return spark._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME().getCount()


@pytest.mark.timeout(120)
@pytest.mark.parametrize("interpreted", [False, True], ids=["generated code", "interpreted"])
def test_the_spark_expressions_are_the_planners_predicates(spark, interpreted: bool) -> None:
    """Every per-row rule and the per-broker ratio and threshold, as Spark built-in expressions, equal
    the pure-Python predicates `status` and `rebalance` use: on hundreds of generated clusters (pending
    reassignments, ELR, dead brokers, RF=1 topics) and thousands of broker counts against dozens of
    thresholds, each side evaluated once (one DataFrame with a cluster column, one Spark job); with
    generated code, and interpreted (no class compiled) as small local inputs run."""
    before = classes_compiled(spark)
    with generated_code(spark, interpreted):
        _check_the_expressions(spark)
    assert not interpreted or classes_compiled(spark) == before  # Spark honours INTERPRETED


def _check_the_expressions(spark) -> None:
    from leader_election_cli.pipeline import analysis, rules

    states = drawn(fleet_states(), FLAG_CLUSTERS)
    rows = [row for i, state in enumerate(states) for row in snapshot.rows(state, f"c{i}", T0)]
    coverage = feature_counts(rows)
    assert min(coverage[f] for f in ("pending reassignment", "replicas being added", "ELR", "dead broker", "RF=1",
                                     "no leader", "leader not live", "min ISR unknown", "fixable")) >= 10, coverage
    frame = spark.createDataFrame(
        [(r["cluster"], r["topic"], r["partition"], r["leader"], r["replicas"], r["isr"], r["live_brokers"],
          r["min_insync_replicas"], r["adding_replicas"]) for r in rows],
        "cluster string, topic string, partition int, leader int, replicas array<int>, isr array<int>, "
        "live_brokers array<int>, min_insync_replicas int, adding_replicas array<int>")
    flagged = {(r["cluster"], r["topic"], r["partition"]): (*(r[name] for name in rules.FLAG_NAMES),
                                                             r["preferred_replica"])
               for r in analysis.with_flags(frame).drop("replicas", "isr", "live_brokers", "adding_replicas")
               .collect()}
    expected = {(r["cluster"], r["topic"], r["partition"]): (
        predicates.is_preferred_leader(r["leader"], r["replicas"]),
        predicates.is_fixable(r["leader"], r["replicas"], r["isr"], r["live_brokers"]),
        predicates.is_under_replicated(r["replicas"], r["isr"], r["adding_replicas"] or ()),
        predicates.is_under_min_isr(r["isr"], r["min_insync_replicas"]),
        predicates.is_offline(r["leader"], r["live_brokers"]),
        r["replicas"][0] if r["replicas"] else None) for r in rows}
    by_key = {(r["cluster"], r["topic"], r["partition"]): r for r in rows}
    wrong = [(by_key[key], flagged.get(key), want) for key, want in expected.items() if flagged.get(key) != want]
    assert not wrong and len(flagged) == len(expected), f"{len(wrong)} rows differ (row, Spark, planner): {wrong[:3]}"

    # the ratio and the threshold: broker counts (small ones hit thresholds exactly) x thresholds
    counts = drawn(st.tuples(st.integers(0, 10**6), st.integers(0, 10**6)) | st.tuples(
        st.integers(0, 40), st.integers(0, 40)), 1000)
    thresholds = THRESHOLDS + drawn(st.floats(0, 120, allow_nan=False), 32)
    pairs = [(i, min(n, p), p) for i, (n, p) in enumerate(counts)]  # not_led <= preferred
    brokers = spark.createDataFrame(pairs, "id int, not_led long, preferred long").select(
        "id", rules.ratio("not_led", "preferred").alias("ratio"),
        *(rules.above("not_led", "preferred", t).alias(f"above_{k}") for k, t in enumerate(thresholds)))
    found = {r["id"]: (r["ratio"], *(r[f"above_{k}"] for k in range(len(thresholds)))) for r in brokers.collect()}
    assert found == {i: (predicates.imbalance_ratio(n, p),
                         *(predicates.is_above_threshold(n, p, t) for t in thresholds)) for i, n, p in pairs}


def test_the_plot_of_many_clusters_draws_the_ten_worst() -> None:
    from leader_election_cli.pipeline.plot import TOP_N, imbalance_png, worst_clusters

    series = {f"c{n:02d}": [(T0, float(n % 7)), (T0 + timedelta(hours=1), float(n))] for n in range(24)}
    assert worst_clusters(series) == [f"c{n:02d}" for n in range(23, 23 - TOP_N, -1)]
    points = [(cluster, at, value / 100) for cluster, values in series.items() for at, value in values]
    assert imbalance_png(points, 10).startswith(b"\x89PNG\r\n\x1a\n")


def test_a_file_system_that_cannot_be_reached_is_named_with_its_java_cause(
        spark, tmp_path: Path, refused_address: Callable[[], str]) -> None:
    """Not `An error occurred while calling o41.exists`: the Java exception, and whether input or --out."""
    port = int(refused_address().rsplit(":", 1)[1])
    snapshot.write(snapshot.rows(two_partitions_one_fixable(), "c", T0), tmp_path / "s.jsonl")
    with pytest.raises(InputError, match=r"^Spark could not write --out: java\.net\.ConnectException: "):
        job.analyze(spark, [str(tmp_path / "s.jsonl")], f"hdfs://127.0.0.1:{port}/leadership")
    with pytest.raises(InputError, match=r"^Spark could not read the input: java\.net\.ConnectException: "):
        job.analyze(spark, [f"hdfs://127.0.0.1:{port}/s.jsonl"], str(tmp_path / "out"))
