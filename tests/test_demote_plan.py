"""Demotion and restore plans over random clusters: predictions, the restore file's round trip, refusals."""

from __future__ import annotations

import json
import tempfile
from dataclasses import replace
from importlib import resources
from pathlib import Path

import jsonschema
from hypothesis import given
from hypothesis import strategies as st
from strategies import cluster_states

from leader_election_cli.model import ClusterState, Outcome
from leader_election_cli.operations.moves import predict_moves
from leader_election_cli.operations.restore_file import (
    load_restore_file,
    restore_document,
    restore_text,
    write_restore_file,
)
from leader_election_cli.planning.reorders import Move, Refusal, demote_plan, restore_plan

RESTORE_SCHEMA = json.loads(resources.files("leader_election_cli").joinpath("schemas/restore-file.schema.json")
                            .read_text())


def after_moves(state: ClusterState, moves: list[Move]) -> ClusterState:
    """The cluster once every move is done: new orders, expected leaders."""
    partitions = dict(state.partitions)
    for m in moves:
        partitions[m.tp] = partitions[m.tp]._replace(replicas=m.new_replicas, leader=m.leader_after)
    return replace(state, partitions=partitions)


@given(cluster_states(), st.integers(1, 5), st.booleans())
def test_the_predicted_demotion_moves_leadership_to_the_successor(state: ClusterState, broker: int,
                                                                  include_preferred: bool) -> None:
    plan = demote_plan(state, broker, include_preferred)
    assert [e.tp for e in plan.entries] == sorted(e.tp for e in plan.entries)
    report = predict_moves(plan, state)
    for r in report.results:
        if r.outcome is Outcome.PREDICTED:
            assert (r.error_code, r.leader_after) == (0, r.expected_leader)
            assert r.leader_after != broker and r.replicas_after[-1] == broker
        else:
            assert r.outcome in (Outcome.SKIPPED, Outcome.ALREADY_ELECTED)
            assert r.outcome is Outcome.ALREADY_ELECTED or r.error in (
                "no other in-sync replica", f"a reassignment of {r.tp} is pending")


@given(cluster_states(), st.integers(1, 5))
def test_restore_puts_back_every_order_the_demotion_changed(state: ClusterState, broker: int) -> None:
    plan = demote_plan(state, broker, include_preferred=True)
    document = restore_document("demote", state, plan.reorders)
    jsonschema.validate(document, RESTORE_SCHEMA)
    with tempfile.TemporaryDirectory() as directory:
        file = Path(directory) / "r.json"
        write_restore_file(file, "demote", state, plan.reorders)
        saved = load_restore_file(str(file))
    assert (saved.command, saved.cluster_id) == ("demote", state.cluster_id)
    moved = after_moves(state, plan.moves)
    back = restore_plan(replace(moved, reassigning={}), saved.orders)
    assert all(isinstance(e, Move) for e in back.entries)
    assert {e.tp: e.new_replicas for e in back.moves} == {m.tp: m.replicas for m in plan.reorders}


@given(cluster_states(), st.integers(1, 5), st.text(), st.one_of(st.none(), st.text()))
def test_the_restore_file_text_is_its_document_one_partition_a_line(state: ClusterState, broker: int, command: str,
                                                                     cluster_id: str | None) -> None:
    plan = demote_plan(state, broker, include_preferred=True)
    document = restore_document(command, replace(state, cluster_id=cluster_id), plan.reorders)
    text = restore_text(document)
    assert json.loads(text) == document and text.endswith("}\n")
    lines = text.splitlines()
    assert lines[:5] == json.dumps(document, indent=1).splitlines()[:5]  # the header's fields a line each
    assert [json.loads(line.rstrip(",")) for line in lines[6:-2]] == document["partitions"]


@given(cluster_states())
def test_restore_refuses_missing_changed_and_reassigning_partitions(state: ClusterState) -> None:
    saved = [(tp, tuple(reversed(p.replicas))) for tp, p in state.partitions.items()]
    tp0 = next(iter(state.partitions))
    saved[0] = (tp0, (*state.partitions[tp0].replicas, 99))  # a replica set that is not the cluster's
    missing = tp0._replace(topic="missing")
    plan = restore_plan(state, [*saved, (missing, (1,))])
    entries = {e.tp: e for e in plan.entries}
    assert isinstance(entries[tp0], Refusal) and "changed since the restore file was written" in entries[tp0].reason
    assert entries[missing] == Refusal(missing, "partition missing-0 does not exist")
    for tp, replicas in saved[1:]:
        if tp in state.reassigning:
            assert entries[tp] == Refusal(tp, f"a reassignment of {tp} is pending")
        else:
            assert entries[tp] == Move(tp, state.partitions[tp].replicas, replicas, state.partitions[tp].leader,
                                       replicas[0])
