"""The prefer plan and the prefer file, as properties over random clusters and random files."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from strategies import cluster_states

from leader_election_cli.errors import InputError
from leader_election_cli.model import ClusterState, Outcome, TopicPartition
from leader_election_cli.operations.moves import predict_moves
from leader_election_cli.planning.reorders import Move, Refusal, check_prefer, prefer_plan
from leader_election_cli.selection.files import load_prefer_file


@st.composite
def wishes(draw: st.DrawFn) -> tuple[ClusterState, list[tuple[TopicPartition, int]]]:
    """A cluster and some (partition, broker) wishes, partitions unknown to it and brokers outside included."""
    state = draw(cluster_states())
    partitions = sorted(state.partitions) + [TopicPartition("missing", 0)]
    chosen = draw(st.lists(st.sampled_from(partitions), unique=True, max_size=6))
    return state, [(tp, draw(st.integers(1, 6))) for tp in chosen]


@given(wishes())
def test_a_move_exactly_when_the_checks_pass_with_the_broker_first(case) -> None:
    state, wanted = case
    plan = prefer_plan(state, wanted)
    assert [e.tp for e in plan.entries] == [tp for tp, _ in wanted]
    for entry, (tp, broker) in zip(plan.entries, wanted, strict=True):
        reason = check_prefer(state, tp, broker)
        if reason:
            assert entry == Refusal(tp, reason)
            continue
        assert isinstance(entry, Move)
        replicas = state.partitions[tp].replicas
        assert entry.new_replicas == (broker, *(r for r in replicas if r != broker))
        assert (entry.leader_before, entry.leader_after) == (state.partitions[tp].leader, broker)


@given(wishes())
def test_the_predicted_election_gives_every_move_its_broker(case) -> None:
    state, wanted = case
    report = predict_moves(prefer_plan(state, wanted), state)
    assert report.dry_run and len(report.results) == len(wanted)
    for r in report.results:
        if r.outcome is Outcome.PREDICTED:
            assert (r.error_code, r.leader_after) == (0, r.expected_leader)
        else:
            assert r.outcome in (Outcome.SKIPPED, Outcome.ALREADY_ELECTED)


topics = st.text(st.sampled_from("abz09._-"), min_size=1, max_size=12).filter(lambda t: t not in (".", ".."))
entries = st.lists(st.tuples(topics, st.integers(0, 2**31 - 1), st.integers(0, 2**31 - 1)),
                   unique_by=lambda e: e[:2], max_size=20)


@settings(max_examples=50)
@given(entries)
def test_a_prefer_file_reads_back_in_file_order(items) -> None:
    with tempfile.TemporaryDirectory() as directory:
        file = Path(directory) / "leaders.json"
        file.write_text(json.dumps({"partitions": [{"topic": t, "partition": p, "leader": b} for t, p, b in items]}))
        assert load_prefer_file(str(file)) == tuple((TopicPartition(t, p), b) for t, p, b in items)


def _error(document: object) -> str:
    with tempfile.TemporaryDirectory() as directory:
        file = Path(directory) / "f.json"
        file.write_text(document if isinstance(document, str) else json.dumps(document))
        try:
            load_prefer_file(str(file))
        except InputError as exc:
            return exc.message.replace(str(file), "F")
    raise AssertionError("the file was accepted")


def test_prefer_file_errors_say_where() -> None:
    entry = {"topic": "t", "partition": 0, "leader": 1}
    assert _error({}) == 'Invalid prefer file F at $: the field "partitions" is missing'
    assert _error({"partitions": [entry, {"topic": "t", "partition": 0}]}) == \
        'Invalid prefer file F at $.partitions[1]: the field "leader" is missing'
    assert _error({"partitions": [{**entry, "leader": -1}]}) == \
        "Invalid prefer file F at $.partitions[0].leader: -1 is not a broker id (0 to 2147483647)"
    assert _error({"partitions": [{**entry, "leader": True}]}) == \
        "Invalid prefer file F at $.partitions[0].leader: expected an integer, got true"
    assert _error({"partitions": [{**entry, "partition": 1.0}]}) == \
        "Invalid prefer file F at $.partitions[0].partition: expected an integer, got 1.0"
    assert _error({"partitions": [{**entry, "topic": ".."}]}) == \
        "Invalid prefer file F at $.partitions[0].topic: Topic name is invalid: '..' is not allowed"
    assert _error({"partitions": [{**entry, "leadr": 2}]}) == \
        "Invalid prefer file F at $.partitions[0]: Additional properties are not allowed ('leadr' was unexpected)"
    assert _error({"partitions": [entry, {**entry, "leader": 2}]}) == \
        "Prefer file F names t-0 twice: $.partitions[1] repeats $.partitions[0]"
    # the file is named as what it is, not as Kafka's election data
    assert _error('{"partitions": [') == "Prefer file F is not valid JSON: Expecting value at line 1, column 17"
    assert _error(" ") == "Prefer file F is empty"
