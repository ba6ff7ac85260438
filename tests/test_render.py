"""Rendering: Kafka's exact lines, the JSON document against its shipped schema, the rich table."""

from __future__ import annotations

import io
import json
import random
from importlib import resources

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from leader_election_cli.errors import ExitCode
from leader_election_cli.model import ElectionType, Outcome, PartitionResult, TopicPartition
from leader_election_cli.render import election as render
from leader_election_cli.render.election_json import render_json
from leader_election_cli.reports import election as election_report
from leader_election_cli.reports.election import ElectionReport

SCHEMA = json.loads(resources.files("leader_election_cli").joinpath("schemas/report.schema.json").read_text())


def _report(*results: PartitionResult, **kw: object) -> ElectionReport:
    return ElectionReport(ElectionType.PREFERRED, list(results), **kw)  # type: ignore[arg-type]


def _text(report: ElectionReport) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    render.render_text(report, out, err)
    return out.getvalue(), err.getvalue()


MIXED = _report(
    PartitionResult(TopicPartition("t", 0), Outcome.ELECTED, leader_before=2, leader_after=1),
    PartitionResult(TopicPartition("t", 1), Outcome.ELECTED, leader_before=3, leader_after=2),
    PartitionResult(TopicPartition("t", 2), Outcome.ALREADY_ELECTED, 84,
                    "Leader election not needed for topic partition.", 3, 3),
    PartitionResult(TopicPartition("t", 3), Outcome.FAILED, 80, None, 2, 2),
    PartitionResult(TopicPartition("nosuch", 0), Outcome.FAILED, 3, "No such topic as nosuch", None, None),
)


def test_text_reproduces_kafkas_lines_in_kafkas_order() -> None:
    out, err = _text(MIXED)
    assert out.splitlines() == [
        "Successfully completed leader election (PREFERRED) for partitions t-1, t-0",  # HashSet order
        "Valid replica already elected for partitions t-2",
        "Error completing leader election (PREFERRED) for partition: t-3: "
        "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: The preferred leader was not available.",
        "Error completing leader election (PREFERRED) for partition: nosuch-0: "
        "org.apache.kafka.common.errors.UnknownTopicOrPartitionException: No such topic as nosuch",
    ]
    assert err == "2 replica(s) could not be elected\n"
    assert MIXED.exit_code is ExitCode.PARTITION_FAILED


def test_text_all_partitions_never_prints_the_already_elected_line() -> None:
    report = _report(PartitionResult(TopicPartition("t", 0), Outcome.ALREADY_ELECTED, 84, None, 1, 1),
                     all_partitions=True)
    assert _text(report) == ("", "")
    assert report.exit_code is ExitCode.OK


def test_text_unclean_names_the_election_type() -> None:
    report = ElectionReport(ElectionType.UNCLEAN, [PartitionResult(TopicPartition("t", 0), Outcome.ELECTED)])
    assert _text(report)[0] == "Successfully completed leader election (UNCLEAN) for partitions t-0\n"


def test_interrupted_report_lists_what_was_not_attempted() -> None:
    report = _report(PartitionResult(TopicPartition("t", 0), Outcome.ELECTED),
                     PartitionResult(TopicPartition("t", 1), Outcome.NOT_ATTEMPTED), interrupted=True)
    out, err = _text(report)
    assert "not attempted: t-1" in err and report.exit_code is ExitCode.INTERRUPTED


def test_json_document_validates_and_keeps_every_partition() -> None:
    doc = election_report.document(MIXED)
    jsonschema.validate(doc, SCHEMA)
    assert [(p["topic"], p["partition"]) for p in doc["partitions"]] == [tuple(r.tp) for r in MIXED.results]
    assert doc["summary"]["failed"] == 2 and doc["summary"]["exit_code"] == 1
    assert doc["partitions"][3]["error"].startswith("org.apache.kafka.common.errors.PreferredLeaderNotAvailable")


def test_table_lists_rows_and_a_summary() -> None:
    out, err = io.StringIO(), io.StringIO()
    render.render_table(MIXED, out, err, color=False)
    text = out.getvalue()
    assert "PREFERRED_LEADER_NOT_AVAILABLE" in text and "2 -> 1" in text
    assert "5 partition(s): 2 elected, 1 already elected, 2 failed" in text


def test_the_table_tells_no_leader_from_a_leader_that_could_not_be_read() -> None:
    """-1 is "none"; None (the leaders could not be read afterwards) is "?": it was "none" too, which
    showed every partition of a run cut short as leaderless."""
    out = io.StringIO()
    render.render_table(_report(
        PartitionResult(TopicPartition("t", 0), Outcome.ELECTED, leader_before=-1, leader_after=2),
        PartitionResult(TopicPartition("t", 1), Outcome.NOT_ATTEMPTED, leader_before=3, leader_after=None)),
        out, io.StringIO(), color=False)
    rows = [line for line in out.getvalue().splitlines() if "│ t " in line]
    assert "none -> 2" in rows[0] and "3 -> ?" in rows[1]


def test_large_table_counts_quiet_rows_instead_of_listing_them() -> None:
    results = [PartitionResult(TopicPartition("big", i), Outcome.ELECTED, leader_before=2, leader_after=1)
               for i in range(render.TABLE_ROW_LIMIT + 5)]
    results.append(PartitionResult(TopicPartition("big", 9999), Outcome.FAILED, 80))
    out = io.StringIO()
    render.render_table(_report(*results), out, io.StringIO(), color=False)
    assert "big" in out.getvalue() and "9999" in out.getvalue()
    assert f"Not listed: {render.TABLE_ROW_LIMIT + 5} elected" in out.getvalue()


def test_a_table_of_more_rows_than_it_shows_counts_every_hidden_one() -> None:
    """A plan of 300 partitions showed 200 rows and never said 100 were left out."""
    results = [PartitionResult(TopicPartition("plan", i), Outcome.PREDICTED, 0, leader_before=2, leader_after=1)
               for i in range(render.TABLE_ROW_LIMIT + 100)]
    results += [PartitionResult(TopicPartition("done", 0), Outcome.ALREADY_ELECTED, 84, leader_before=1)]
    out = io.StringIO()
    render.render_table(_report(*results), out, io.StringIO(), color=False)
    shown = sum(1 for line in out.getvalue().splitlines() if " plan " in line)
    assert shown == render.TABLE_ROW_LIMIT
    assert "Not listed: 1 already elected, 100 would elect" in out.getvalue()


_results = st.lists(
    st.builds(
        PartitionResult,
        tp=st.builds(TopicPartition, st.from_regex(r"[a-zA-Z0-9._-]{1,20}", fullmatch=True),
                     st.integers(0, 2**31 - 1)),
        outcome=st.sampled_from(list(Outcome)),
        error_code=st.sampled_from([0, 3, 7, 17, 31, 41, 44, 80, 83, 84, 999]),
        error=st.none() | st.text(max_size=30),
        leader_before=st.none() | st.integers(-1, 5),
        leader_after=st.none() | st.integers(-1, 5),
    ),
    max_size=30,
    unique_by=lambda r: r.tp,
)


@given(_results, st.sampled_from(list(ElectionType)), st.booleans(), st.booleans())
def test_every_report_renders_to_valid_json_and_text(results: list[PartitionResult], kind: ElectionType,
                                                      dry_run: bool, interrupted: bool) -> None:
    report = ElectionReport(kind, results, dry_run=dry_run, interrupted=interrupted)
    doc = json.loads(json.dumps(election_report.document(report)))
    jsonschema.validate(doc, SCHEMA)
    assert len(doc["partitions"]) == len(results) == doc["summary"]["total"]
    out, err = _text(report)
    failed = [r for r in results if r.outcome is Outcome.FAILED]
    for r in failed:
        assert f"for partition: {r.tp}: " in out
    assert (f"{len(failed)} replica(s) could not be elected" in err) == bool(failed)


@given(st.lists(st.builds(
    PartitionResult, st.builds(TopicPartition, st.text(min_size=1, max_size=8), st.integers(0, 2**31 - 1)),
    st.sampled_from(list(Outcome)), st.sampled_from([0, 5, 80, 84, -1, 10_000]), st.none() | st.text(max_size=12),
    st.none() | st.integers(-1, 2**31 - 1), st.none() | st.integers(-1, 2**31 - 1), st.booleans(), st.booleans()),
    max_size=5), st.booleans())
def test_each_json_row_is_json_dumps_of_its_row(results: list[PartitionResult], dry_run: bool) -> None:
    """The rows are written by hand for speed: each must be exactly what `json.dumps` makes of `row`."""
    out = io.StringIO()
    render_json(ElectionReport(ElectionType.PREFERRED, results, dry_run=dry_run), out)
    document = json.loads(out.getvalue())
    assert document["partitions"] == [json.loads(json.dumps(election_report.row(r, dry_run))) for r in results]
    lines = [line.strip().rstrip(",") for line in out.getvalue().splitlines() if line.strip().startswith('{"topic"')]
    assert lines == [json.dumps(election_report.row(r, dry_run)) for r in results]


def test_the_result_lines_list_partitions_in_the_order_of_kafkas_hash_sets(kafka_order) -> None:
    """Kafka's own code (tests/java/KafkaOrder.java, run by the JDK) gives the order to match: for selected
    partitions from their order in the election file (through Kafka's request); with --all-topic-partitions
    from the controller's answer, which has no already elected partitions."""
    rng = random.Random(7)
    outcomes = {"E": Outcome.ELECTED, "N": Outcome.ALREADY_ELECTED, "F": Outcome.FAILED}
    cases = []
    for size in [2, 3, 5, 12, 13, 40, 100, 700] * 4:
        topics = [f"{rng.choice(['orders', 't', 'topic-1', 'a.b_c'])}{rng.randint(0, 30)}" for _ in range(4)]
        chosen = dict.fromkeys(TopicPartition(rng.choice(topics), rng.randint(0, 200)) for _ in range(size))
        case = [(tp, rng.choice("EEENF")) for tp in chosen]
        cases += [(case, False), (case, True)]
    lines = ["\t".join(f"{tp.topic} {tp.partition} {o}" for tp, o in case if not (everything and o == "N"))
             for case, everything in cases]
    answers = iter(kafka_order("results", lines[1::2]))  # in the answer's order
    selections = iter(kafka_order("selection", lines[::2]))  # in the election file's order
    for case, everything in cases:
        kafkas = next(answers if everything else selections)
        elected, noop, failed = kafkas.split(" | ")
        report = _report(*(PartitionResult(tp, outcomes[o], 80 if o == "F" else 0) for tp, o in case),
                         all_partitions=everything)
        lines_of = _text(report)[0].splitlines()
        assert [line.removeprefix("Successfully completed leader election (PREFERRED) for partitions ")
                for line in lines_of if line.startswith("Successfully")] == ([elected] if elected else [])
        assert [line.removeprefix("Valid replica already elected for partitions ")
                for line in lines_of if line.startswith("Valid")] == ([noop] if noop else [])
        assert ", ".join(line.split(": ")[1] for line in lines_of if line.startswith("Error")) == failed
