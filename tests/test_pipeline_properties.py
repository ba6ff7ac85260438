"""`analyze` says what the CLI's own rules say of the same clusters: over random fleets of snapshots, each a
whole Spark job (a file of its own, so that a second worker runs it beside the rest of `test_pipeline.py`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

# The pipeline's modules import PySpark: skip (not fail) where the [spark] extra is not installed.
pytest.importorskip("pyspark")
from test_pipeline import T0, fleet_states, generated_code, planned_partitions, table  # noqa: E402

from leader_election_cli import snapshot  # noqa: E402
from leader_election_cli.model import ClusterState, TopicPartition  # noqa: E402
from leader_election_cli.operations.balance_dry_run import plan_report  # noqa: E402
from leader_election_cli.operations.plan_file import load_plan_file  # noqa: E402
from leader_election_cli.operations.status import status_report  # noqa: E402
from leader_election_cli.pipeline import job  # noqa: E402
from leader_election_cli.planning import balance as planned_balance  # noqa: E402
from leader_election_cli.planning import predicates  # noqa: E402
from leader_election_cli.reports.balance_plan import document  # noqa: E402

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def spark():
    session = job.spark_session("local[2]", {"spark.ui.enabled": "false"})
    yield session
    session.stop()


# Few examples (each one is a whole Spark job), but several clusters and snapshots in each.
snapshot_sets = st.lists(st.tuples(st.sampled_from(["east", "west", "north"]), fleet_states()), min_size=1,
                         max_size=8)


def names(partitions: list[TopicPartition]) -> tuple[str, ...]:
    return tuple(f"{tp.topic}-{tp.partition}" for tp in sorted(partitions))


def as_recorded(state: ClusterState) -> ClusterState:
    """What a snapshot keeps for the balance planner: no racks, no offline log directories."""
    partitions = {tp: p._replace(offline_replicas=()) for tp, p in state.partitions.items()}
    return replace(state, racks={}, partitions=partitions)


@pytest.mark.timeout(300)  # six Spark jobs: about 65 s here, and CI machines may be slower
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(snapshots=snapshot_sets, batch_size=st.integers(1, 4), threshold=st.sampled_from([0, 9.2, 10, 25, 50]),
       parquet=st.booleans(), interpreted=st.booleans())
def test_results_equal_status_and_the_planners(spark, tmp_path_factory: pytest.TempPathFactory,
                                               snapshots: list[tuple[str, ClusterState]], batch_size: int,
                                               threshold: float, parquet: bool, interpreted: bool) -> None:
    """`analyze` over snapshots of clusters says what `status` says of the same clusters, and plans what
    `rebalance` would elect, and writes the balance plans `solve_leadership` makes of each cluster's latest
    state: the expected side is computed from the ClusterStates, not from the rows. With generated code,
    or interpreted as small local inputs run."""
    work = tmp_path_factory.mktemp("property")
    states = {(cluster, T0 + timedelta(minutes=i)): state for i, (cluster, state) in enumerate(snapshots)}
    rows = [row for (cluster, at), state in states.items() for row in snapshot.rows(state, cluster, at)]
    source = work / ("in.parquet" if parquet else "in.jsonl")
    snapshot.write(rows, source)

    with generated_code(spark, interpreted):
        result = job.analyze(spark, [str(source)], str(work / "out"), batch_size=batch_size,
                             threshold_pct=threshold, balance=True)

    out = work / "out"
    assert (result.rows, result.bad_rows, result.snapshots, result.legacy_rows) == (len(rows), {}, len(states), 0)
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
    assert {(r["cluster"], r["taken_at"], r["broker"]): (
        r["alive"], r["leaders"], r["preferred"], r["not_led_by_preferred"], r["imbalance_ratio"],
        r["above_threshold"]) for r in table(out, "broker_balance")} == expected_brokers
    assert {(r["cluster"], r["taken_at"]): (
        r["partitions"], r["not_preferred_leader"], r["under_replicated"], r["under_min_isr"], r["offline"],
        r["fixable"], r["brokers"], r["brokers_above_threshold"], r["max_imbalance_ratio"], r["worst_broker"],
        *(tuple(f"{p['topic']}-{p['partition']}" for p in r[name]) for name in (
            "under_replicated_partitions", "under_min_isr_partitions", "offline_partitions")),
        r["down_brokers"]) for r in table(out, "cluster_health")} == expected_health
    for cluster in {c for c, _ in states}:
        latest = max(at for c, at in states if c == cluster)
        candidates = planned_balance.rebalance_candidates(states[(cluster, latest)], threshold)
        assert planned_partitions(out, cluster, batch_size) == [
            {"topic": tp.topic, "partition": tp.partition} for tp in candidates]
        summary = next(c for c in result.clusters if c.cluster == cluster)
        fixable = planned_balance.fixable_by_preferred(states[(cluster, latest)])
        assert (summary.latest, summary.fixable, summary.planned, summary.plan_files) == (
            latest, len(fixable), len(candidates), -(-len(candidates) // batch_size))
        path = out / "balance" / f"{cluster}.json"
        written = load_plan_file(str(path))  # what balance --execute --plan-file reads, checked as it checks it
        expected = document(plan_report(as_recorded(states[(cluster, latest)]), plan_file=str(path)))
        assert {**written, "created_at": None} == {**expected, "created_at": None}
        assert (summary.balance_plan, summary.balance_max_after, summary.balance_changes) == (
            str(path), expected["summary"]["max_leaders_after"], len(expected["partitions"]))
