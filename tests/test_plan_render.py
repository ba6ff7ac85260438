"""How a dry run reads: Kafka-like lines with the risks, table labels, and JSON that parses back exactly."""

from __future__ import annotations

import io
import json
from unittest.mock import patch

from hypothesis import example, given
from hypothesis import strategies as st

from leader_election_cli.model import ElectionType, Outcome, PartitionResult, TopicPartition
from leader_election_cli.render import election as render
from leader_election_cli.render import election_json
from leader_election_cli.render.election_json import render_json
from leader_election_cli.reports import election as election_report
from leader_election_cli.reports.election import ElectionReport

UNCLEAN = ElectionType.UNCLEAN


def predicted(partition: int, code: int, before: int, after: int, *, unclean: bool = False,
              below_min_isr: bool = False, error: str | None = None) -> PartitionResult:
    return PartitionResult(TopicPartition("t", partition), Outcome.PREDICTED, code, error, before, after,
                           unclean, below_min_isr)


PLAN = ElectionReport(UNCLEAN, [
    predicted(0, 0, -1, 2, unclean=True, below_min_isr=True),
    predicted(1, 0, -1, 3, below_min_isr=True),
    predicted(2, 84, 1, 1),
    predicted(3, 83, -1, -1, error="Failed to elect leader for partition t-3 under strategy "
                                   "OfflinePartitionLeaderElectionStrategy(true)"),
], dry_run=True)


def test_text_names_the_leader_the_risks_and_the_failures() -> None:
    out, err = io.StringIO(), io.StringIO()
    render.render_text(PLAN, out, err)
    assert out.getvalue().splitlines() == [
        "Would elect leader (UNCLEAN) for partition: t-0: none -> 2 "
        "(outside the ISR: data loss possible; below min.insync.replicas)",
        "Would elect leader (UNCLEAN) for partition: t-1: none -> 3 (below min.insync.replicas)",
        "Would find a valid replica already elected for partitions t-2",
        "Would fail leader election (UNCLEAN) for partition: t-3: org.apache.kafka.common.errors."
        "EligibleLeadersNotAvailableException: Failed to elect leader for partition t-3 under strategy "
        "OfflinePartitionLeaderElectionStrategy(true)"]
    assert err.getvalue() == "" and PLAN.exit_code == 0


def test_text_of_an_all_partitions_plan_leaves_out_what_kafka_would() -> None:
    out = io.StringIO()
    render.render_text(ElectionReport(UNCLEAN, [predicted(2, 84, 1, 1)], dry_run=True, all_partitions=True),
                       out, io.StringIO())
    assert out.getvalue() == ""


def test_table_says_what_would_happen() -> None:
    out = io.StringIO()
    render.render_table(PLAN, out, io.StringIO(), color=False)
    text = out.getvalue()
    assert "outside the ISR: data loss possible; below min.insync.replicas" in text
    assert "ELIGIBLE_LEADERS_NOT_AVAILABLE" in text
    assert "4 partition(s): 2 would elect, 1 not needed, 1 would fail" in text


def test_json_carries_the_flags_only_in_a_dry_run() -> None:
    rows = election_report.document(PLAN)["partitions"]
    assert [(r["unclean"], r["below_min_isr"]) for r in rows] == [(True, True), (False, True), (False, False),
                                                                   (False, False)]
    real = ElectionReport(UNCLEAN, [PartitionResult(TopicPartition("t", 0), Outcome.ELECTED)])
    assert "unclean" not in election_report.document(real)["partitions"][0]


reports = st.builds(
    ElectionReport,
    election_type=st.sampled_from(list(ElectionType)),
    results=st.lists(st.builds(
        PartitionResult,
        tp=st.builds(TopicPartition, st.from_regex(r"[a-zA-Z0-9._-]{1,12}", fullmatch=True), st.integers(0, 9)),
        outcome=st.sampled_from(list(Outcome)),
        error_code=st.sampled_from([0, 3, 80, 83, 84]),
        error=st.none() | st.text(max_size=20),
        leader_before=st.none() | st.integers(-1, 5),
        leader_after=st.none() | st.integers(-1, 5),
        unclean=st.booleans(),
        below_min_isr=st.booleans()), max_size=8, unique_by=lambda r: r.tp),
    dry_run=st.booleans(),
    warnings=st.lists(st.text(max_size=10), max_size=2))


@given(reports)
@example(ElectionReport(UNCLEAN, [predicted(0, 83, 1, 1, error='x"}, {"topic": "y'),
                                  predicted(1, 83, 1, 1, error='}, {"topic": ')], dry_run=True))
def test_render_json_is_the_document_exactly_one_partition_per_line(report: ElectionReport) -> None:
    out, in_threes = io.StringIO(), io.StringIO()
    render_json(report, out)
    with patch.object(election_json, "_ROWS_PER_WRITE", 3):  # written a few rows at a time: the same text
        render_json(report, in_threes)
    assert in_threes.getvalue() == out.getvalue()
    assert json.loads(out.getvalue()) == election_report.document(report)
    assert out.getvalue().endswith("}\n")
    lines = out.getvalue().splitlines()
    rows = lines[lines.index('  "partitions": [') + 1:lines.index("  ],")] if report.results else []
    assert [json.loads(line.strip().removesuffix(",")) for line in rows] == \
        election_report.document(report)["partitions"]
