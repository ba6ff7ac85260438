"""The `balance` report as tables: leaders (and load) per broker before -> after with a small bar chart,
the lower bound, and each partition's new replica order (and, after a run, what became of it)."""

from __future__ import annotations

from typing import IO, Any

from leader_election_cli import kafka_errors
from leader_election_cli.model import Outcome
from leader_election_cli.render.tables import broker_text, ids, make_console, make_table, print_line, print_table
from leader_election_cli.reports.balance_plan import BalanceReport
from leader_election_cli.reports.outcomes import outcome_word

BAR_WIDTH = 20  # characters for the busiest broker's bar
LISTED_CHANGES = 200  # partitions a table lists; the JSON document (and plan file) lists them all


def bar(value: float, largest: float, width: int = BAR_WIDTH) -> str:
    """A bar of up to `width` characters, in eighths of a character, proportional to value / largest."""
    if largest <= 0 or value <= 0:
        return ""
    eighths = max(1, round(value / largest * width * 8))
    full, part = divmod(eighths, 8)
    return "█" * full + ("" if not part else " ▏▎▍▌▋▊▉"[part])


def render_balance_table(report: BalanceReport, out: IO[str], err: IO[str], color: bool | None = None) -> None:
    console = make_console(out, color)
    plan = report.plan
    weighted = plan.load is not None
    now = report.leaders_now
    racks = any(b.rack for b in plan.brokers)
    columns = [("Broker", "right"), *([("Rack", "left")] if racks else []), ("Leaders before", "right"),
               ("", "left"), ("Leaders after", "right"), ("", "left")]
    if now is not None:
        columns.append(("Leaders now", "right"))
    if weighted:
        columns += [("Load before", "right"), ("Load after", "right")]
    title = (f"{'Planned leadership balance' if report.dry_run else 'Leadership balance'} of cluster "
             f"{report.cluster_id or '(no id)'}")
    table = make_table(title, *columns)
    largest = max((max(b.leaders_before, b.leaders_after) for b in plan.brokers), default=0)
    for b in plan.brokers:
        name = str(b.broker) if b.may_lead else f"{b.broker} [dim](may not lead)[/]"
        row = [name, *([b.rack or ""] if racks else []), str(b.leaders_before),
               f"[red]{bar(b.leaders_before, largest)}[/]",
               str(b.leaders_after), f"[green]{bar(b.leaders_after, largest)}[/]"]
        if now is not None:
            row.append(str(now.get(b.broker, 0)))
        if weighted:
            row += [_number(b.load_before), _number(b.load_after)]
        table.add_row(*row)
    print_table(console, table)
    if plan.racks is not None:
        per_rack = make_table("Leaders per rack", ("Rack", "left"), ("Before", "right"), ("After", "right"))
        for r in plan.racks:
            per_rack.add_row(r.rack, str(r.leaders_before), str(r.leaders_after))
        print_table(console, per_rack)
    for line in summary_lines(report):
        print_line(console, line)
    _partitions(report, console)
    if report.restore_file:
        print_line(console, f"Restore file: {report.restore_file} (kafka-leaders restore {report.restore_file} "
                            "puts the replica orders back)")
    if report.plan_file and report.dry_run:
        print_line(console, f"Plan written to {report.plan_file}: kafka-leaders balance --execute --plan-file "
                      f"{report.plan_file} runs exactly this plan")
    if report.interrupted:
        err.write("Interrupted: stopped after the request in flight.\n")
    if report.aborted_reason:
        err.write(f"Stopped: {report.aborted_reason}\n")


def summary_lines(report: BalanceReport) -> list[str]:
    """The figures that say how good the plan is, one per line."""
    plan = report.plan
    optimal = "[bold green]optimal[/]" if plan.max_after == plan.lower_bound else "above it"
    lines = [f"Most leaders on a broker: {plan.max_before} -> {plan.max_after} (lower bound {plan.lower_bound}: "
             f"{optimal}); spread {plan.spread_before} -> {plan.spread_after}"]
    if plan.rack_lower_bound is not None and plan.racks:
        lines.append(f"Most leaders on a rack: {max(r.leaders_after for r in plan.racks)} "
                     f"(lower bound {plan.rack_lower_bound})")
    if plan.load is not None:
        load = plan.load
        state = "[bold green]optimal[/]" if plan.optimal else f"within {load.gap:.2%} of it"
        lines.append(f"Heaviest leader load: {_number(load.max_before)} -> {_number(load.max_after)} (proven lower "
                     f"bound {_number(load.lower_bound)}: {state}; the count solution's: "
                     f"{_number(load.count_solution_max)})")
    changes = len(plan.changes)
    capped = f", at most {plan.max_moves} allowed (--max-moves)" if plan.max_moves is not None else ""
    lines.append(f"Partitions whose replica order changes: {changes} (the optimum needs {plan.changes_for_optimum}"
                 f"{capped}); {len(report.elect_only)} keep their order and only need a preferred election")
    if plan.excluded or plan.skipped:
        lines.append(f"Left alone: {plan.excluded} partition(s) of excluded topics, {len(plan.skipped)} other(s) "
                     "(--output json lists them with the reason)")
    if report.moves is not None:
        counts = {o: report.moves.count(o) for o in Outcome}
        done = (f"Done: {counts[Outcome.ELECTED]} elected, {counts[Outcome.ALREADY_ELECTED]} already led as planned, "
                f"{counts[Outcome.FAILED]} failed, {counts[Outcome.NOT_ATTEMPTED]} not attempted")
        if report.max_now is not None:
            done += f"; most leaders on a broker now: {report.max_now}"
        else:
            done += "; the leaders afterwards could not be read"
        lines.append(done)
    return lines


def _partitions(report: BalanceReport, console: Any) -> None:
    partitions = report.partitions
    if not partitions:
        console.print("Nothing to change.", highlight=False)
        return
    results = report.results
    columns = [("Topic", "left"), ("Partition", "right"), ("Replicas", "left"), ("Leader", "left")]
    if results:
        columns += [("Outcome", "left"), ("Error", "left")]
    table = make_table("Partitions" if results else "Planned changes", *columns)
    for c in partitions[:LISTED_CHANGES]:
        order = ids(c.replicas_before) if c.replicas_after == c.replicas_before else \
            f"{ids(c.replicas_before)} -> {ids(c.replicas_after)}"
        row = [c.tp.topic, str(c.tp.partition), order, f"{broker_text(c.leader_before)} -> {c.leader_after}"]
        r = results.get(c.tp)
        if r is not None:
            error = r.error or ""
            if r.error_code and r.error:
                error = f"{kafka_errors.lookup(r.error_code).name}: {r.error}"
            row += [outcome_word(r.outcome, r.error_code).replace("_", " "), error]
        elif results:
            row += ["", ""]
        table.add_row(*row)
    print_table(console, table)
    more = len(partitions) - LISTED_CHANGES
    if more > 0:
        console.print(f"... {more} more partition(s): --output json lists them all", highlight=False)


def _number(value: float | None) -> str:
    if value is None:
        return ""
    return f"{value:,.0f}" if value >= 100 else f"{value:,.4g}"

