"""Long lists in human output are summarised (a count, the first few, where the whole list is); the JSON
document stays complete."""

from __future__ import annotations

import io
import json

from leader_election_cli.model import ElectionType, Outcome, PartitionResult, TopicPartition
from leader_election_cli.render import election as render
from leader_election_cli.render.election_json import render_json
from leader_election_cli.render.tables import LISTED_PARTITIONS
from leader_election_cli.reports.election import ElectionReport

SIZE = 100_000


def _interrupted() -> ElectionReport:
    results = [PartitionResult(TopicPartition("orders", 0), Outcome.ELECTED)]
    results += [PartitionResult(TopicPartition("orders", p), Outcome.NOT_ATTEMPTED) for p in range(1, SIZE)]
    return ElectionReport(ElectionType.PREFERRED, results, interrupted=True)


def test_an_interrupted_large_election_names_a_few_and_counts_the_rest() -> None:
    for draw in (lambda r, out, err: render.render_text(r, out, err),
                 lambda r, out, err: render.render_table(r, out, err, color=False)):
        out, err = io.StringIO(), io.StringIO()
        draw(_interrupted(), out, err)
        (line,) = [line for line in err.getvalue().splitlines() if "not attempted" in line]
        assert line.startswith(f"{SIZE - 1} partition(s) not attempted: orders-1, orders-2, ")
        assert f"... ({SIZE - 1 - LISTED_PARTITIONS} more; --output json lists them all)" in line
        assert len(line) < 600 and len(err.getvalue()) < 1000


def test_the_json_document_still_lists_every_partition() -> None:
    out = io.StringIO()
    render_json(_interrupted(), out)
    rows = json.loads(out.getvalue())["partitions"]
    assert len(rows) == SIZE and sum(r["outcome"] == "not_attempted" for r in rows) == SIZE - 1
