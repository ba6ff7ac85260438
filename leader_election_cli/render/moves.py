"""The leadership-move report (`prefer`, `demote`, `restore`) as a table."""

from __future__ import annotations

from collections import Counter
from typing import IO

from leader_election_cli import kafka_errors
from leader_election_cli.model import Outcome
from leader_election_cli.render.tables import broker_text, ids, inert, make_console, make_table, print_line, print_table
from leader_election_cli.reports.moves import MoveReport, MoveResult
from leader_election_cli.reports.outcomes import outcome_word


def render_moves_table(report: MoveReport, out: IO[str], err: IO[str], color: bool | None = None) -> None:
    """One row per partition: replica order and leader before -> after, and why when it is not done."""
    console = make_console(out, color)
    title = f"{'Planned ' if report.dry_run else ''}{report.command}: leadership moves"
    table = make_table(title, ("Topic", "left"), ("Partition", "right"), ("Outcome", "left"),
                   ("Replicas", "left"), ("Leader", "left"), ("Reason", "left"))
    for r in report.results:
        replicas = ids(r.replicas_before) if r.replicas_after == r.replicas_before else \
            f"{ids(r.replicas_before)} -> {ids(r.replicas_after)}"
        after = r.leader_after
        leader = broker_text(r.leader_before) if after in (None, r.leader_before) else \
            f"{broker_text(r.leader_before)} -> {broker_text(after)}"
        error = r.error or ""
        if r.error_code and r.error:
            error = f"{kafka_errors.lookup(r.error_code).name}: {r.error}"
        table.add_row(inert(r.tp.topic), str(r.tp.partition), _move_label(r), replicas, leader, inert(error))
    print_table(console, table)
    counts = ", ".join(f"{n} {label}" for label, n in Counter(map(_move_label, report.results)).items())
    console.print(f"{len(report.results)} partition(s): {counts or 'nothing to do'}")
    if report.restore_file:
        print_line(console, f"Restore file: {report.restore_file} (kafka-leaders restore {report.restore_file} "
                      "puts the replica orders back)")
    if report.interrupted:
        err.write("Interrupted: stopped after the request in flight.\n")
    if report.aborted_reason:
        err.write(f"Stopped: {report.aborted_reason}\n")


def _move_label(r: MoveResult) -> str:
    if r.outcome is Outcome.SKIPPED:
        return "refused"
    return outcome_word(r.outcome, r.error_code).replace("_", " ")
