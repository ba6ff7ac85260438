"""Rendering an `ElectionReport`: Kafka's own text lines or a rich table (its JSON document:
`election_json`).

Only these modules decide how an election report looks; the document's content and the exit code
come from the report itself (`reports.election`).
"""

from __future__ import annotations

from collections import Counter
from typing import IO

from leader_election_cli import kafka_errors
from leader_election_cli.errors import one_line
from leader_election_cli.java_order import java_iteration_order, kafka_request_order, spread_hashes
from leader_election_cli.model import NO_LEADER, Outcome, PartitionResult
from leader_election_cli.render.tables import inert, make_console, make_table, names, print_table
from leader_election_cli.reports.election import ElectionReport
from leader_election_cli.reports.outcomes import OUTCOME_WORDS, outcome_word

TABLE_ROW_LIMIT = 200  # beyond this, successful rows are counted rather than listed

_OUTCOME_STYLE = {
    Outcome.ELECTED: "green",
    Outcome.ALREADY_ELECTED: "dim",
    Outcome.FAILED: "bold red",
    Outcome.SKIPPED: "yellow",
    Outcome.PREDICTED: "cyan",
    Outcome.NOT_ATTEMPTED: "yellow",
    Outcome.UNCONFIRMED: "bold yellow",
}


def _names(results: list[PartitionResult]) -> str:
    return ", ".join(one_line(str(r.tp)) for r in results)


def render_text(report: ElectionReport, out: IO[str], err: IO[str]) -> None:
    """Kafka's `LeaderElectionCommand` lines, byte for byte, so existing scripts keep grepping.

    Kafka's tool has no unconfirmed outcome: such a partition is in none of Kafka's stdout lines (not
    in "Successfully completed": that was not seen), and has its own line on stderr (exit code 3)."""
    kind = report.election_type.name
    by_outcome = _in_kafkas_order(report.results, report.all_partitions)
    if by_outcome[Outcome.ELECTED]:
        out.write(f"Successfully completed leader election ({kind}) for partitions "
                  f"{_names(by_outcome[Outcome.ELECTED])}\n")
    # With --all-topic-partitions the controller leaves these out, so Kafka never prints the line.
    if by_outcome[Outcome.ALREADY_ELECTED] and not report.all_partitions:
        out.write(f"Valid replica already elected for partitions {_names(by_outcome[Outcome.ALREADY_ELECTED])}\n")
    for r in by_outcome[Outcome.FAILED]:
        out.write(f"Error completing leader election ({kind}) for partition: {one_line(str(r.tp))}: "
                  f"{one_line(kafka_errors.describe(r.error_code, r.error))}\n")
    _write_predictions(report, by_outcome[Outcome.PREDICTED], out)
    if by_outcome[Outcome.FAILED]:
        err.write(f"{len(by_outcome[Outcome.FAILED])} replica(s) could not be elected\n")
    for r in by_outcome[Outcome.UNCONFIRMED]:
        err.write(f"Unconfirmed leader election ({kind}) for partition: {r.tp}: {r.error}\n")
    _write_stop_notes(report, err)


def _in_kafkas_order(results: list[PartitionResult], all_partitions: bool) -> dict[Outcome, list[PartitionResult]]:
    """The results by outcome, the answered ones in the order Kafka's tool prints them: the admin client
    puts the answer in a HashMap (in the order of the response: for selected partitions, that of Kafka's
    request, `kafka_request_order`), the tool copies it, in that map's order, into a HashSet of the elected,
    one of the already elected and a HashMap of the failed, and prints each in its own order. (With
    --all-topic-partitions, the controller's answer leaves the already elected out, and its order is taken
    as the results'.)"""
    by_outcome: dict[Outcome, list[PartitionResult]] = {o: [] for o in Outcome}
    for result in results:
        by_outcome[result.outcome].append(result)
    kafkas = (Outcome.ELECTED, Outcome.FAILED) if all_partitions else (Outcome.ELECTED, Outcome.ALREADY_ELECTED,
                                                                       Outcome.FAILED)
    in_map = [i for i, r in enumerate(results) if r.outcome in kafkas]  # (each partition once)
    if len(in_map) > 1:
        if all_partitions:
            hashes = spread_hashes([results[i].tp for i in in_map])
        else:  # in the order of Kafka's request for every selected partition
            every_hash = spread_hashes([r.tp for r in results])
            in_map = [i for i in kafka_request_order([r.tp for r in results], every_hash)
                      if results[i].outcome in kafkas]
            hashes = [every_hash[i] for i in in_map]
        answered = [results[i] for i in in_map]
        copies: dict[Outcome, list[int]] = {outcome: [] for outcome in kafkas}
        for i in java_iteration_order(hashes):
            copies[answered[i].outcome].append(i)
        for outcome, copied in copies.items():
            if len(copied) < len(answered):  # (a copy of the whole map iterates in the map's order)
                copied = [copied[j] for j in java_iteration_order([hashes[i] for i in copied])]
            by_outcome[outcome] = [answered[i] for i in copied]
    return by_outcome


def _write_predictions(report: ElectionReport, predicted: list[PartitionResult], out: IO[str]) -> None:
    """A dry run's lines, in the order of Kafka's: who would lead, what needs nothing, what would fail."""
    kind = report.election_type.name
    for r in predicted:
        if r.error_code == kafka_errors.NONE:
            risks = f" ({_risks(r)})" if r.unclean or r.below_min_isr else ""
            out.write(f"Would elect leader ({kind}) for partition: {one_line(str(r.tp))}: {_leaders(r)}{risks}\n")
    not_needed = [r for r in predicted if r.error_code == kafka_errors.ELECTION_NOT_NEEDED]
    if not_needed and not report.all_partitions:
        out.write(f"Would find a valid replica already elected for partitions {_names(not_needed)}\n")
    for r in predicted:
        if r.error_code not in (kafka_errors.NONE, kafka_errors.ELECTION_NOT_NEEDED):
            out.write(f"Would fail leader election ({kind}) for partition: {one_line(str(r.tp))}: "
                      f"{one_line(kafka_errors.describe(r.error_code, r.error))}\n")


def _risks(r: PartitionResult) -> str:
    """A predicted election's dangers, as words."""
    return "; ".join(text for flag, text in ((r.unclean, "outside the ISR: data loss possible"),
                                             (r.below_min_isr, "below min.insync.replicas")) if flag)


def _outcome_label(r: PartitionResult) -> str:
    return outcome_word(r.outcome, r.error_code).replace("_", " ")


def _write_stop_notes(report: ElectionReport, err: IO[str]) -> None:
    not_attempted = [r for r in report.results if r.outcome is Outcome.NOT_ATTEMPTED]
    if report.interrupted:
        err.write("Interrupted: stopped after the batch in flight.\n")
    if report.aborted_reason:
        err.write(f"Stopped: {report.aborted_reason}\n")
    if not_attempted:
        err.write(f"{len(not_attempted)} partition(s) not attempted: {names([r.tp for r in not_attempted])}\n")


def _leaders(r: PartitionResult) -> str:
    before, after = _leader(r.leader_before), _leader(r.leader_after)
    return before if before == after else f"{before} -> {after}"


def _leader(broker: int | None) -> str:
    """A leader as the table shows it: "none" when there is none, "?" when it could not be read."""
    return "?" if broker is None else "none" if broker == NO_LEADER else str(broker)


def _short_error(r: PartitionResult) -> str:
    """The error's name, plus the broker's own message when it says more than the default."""
    err = kafka_errors.lookup(r.error_code)
    return err.name if not r.error or r.error == err.message else f"{err.name}: {r.error}"


def render_table(report: ElectionReport, out: IO[str], err: IO[str], *, color: bool | None = None) -> None:
    """A rich table: topic, partition, outcome, leader before -> after, error; then a summary line."""
    console = make_console(out, color)
    kind = report.election_type.name.lower()
    title = f"{'Planned ' if report.dry_run else ''}{kind} leader election"
    table = make_table(title, ("Topic", "left"), ("Partition", "right"), ("Outcome", "left"), ("Leader", "left"),
                       ("Error", "left"))
    rows = report.results
    hidden: Counter[str] = Counter()
    if len(rows) > TABLE_ROW_LIMIT:  # the partitions that went as asked first, then any beyond the limit
        quiet = (Outcome.ELECTED, Outcome.ALREADY_ELECTED)
        rows = [r for r in rows if r.outcome not in quiet]
        hidden = Counter(_outcome_label(r) for r in report.results if r.outcome in quiet)
        hidden.update(_outcome_label(r) for r in rows[TABLE_ROW_LIMIT:])
        rows = rows[:TABLE_ROW_LIMIT]
    for r in rows:
        error = r.error or "" if r.outcome is Outcome.UNCONFIRMED else \
            "" if r.error_code in (0, kafka_errors.ELECTION_NOT_NEEDED) else _short_error(r)
        style = _OUTCOME_STYLE[r.outcome]
        table.add_row(inert(r.tp.topic), str(r.tp.partition), f"[{style}]{_outcome_label(r)}[/]",
                      _leaders(r), inert("; ".join(filter(None, (error, _risks(r))))))
    print_table(console, table)
    if hidden:
        listed = ", ".join(f"{n} {label}" for label, n in hidden.items())
        console.print(f"[dim]Not listed: {listed} (use --output json for every partition)[/]")
    labels = Counter(_outcome_label(r) for r in report.results)
    order = [word.replace("_", " ") for word in OUTCOME_WORDS]
    counts = ", ".join(f"{labels[label]} {label}" for label in order if labels[label])
    console.print(f"{len(report.results)} partition(s): {counts or 'nothing selected'}")
    _write_stop_notes(report, err)
