"""Rendering the leadership move and balance reports (`prefer`/`demote`/`restore`, `status`, `rebalance`).

Each report has a rich table for people and a versioned JSON document for scripts; only this module
decides how they look.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from typing import IO, Any

from leader_election_cli import kafka_errors
from leader_election_cli.model import NO_LEADER, ControllerMode, Outcome, TopicPartition
from leader_election_cli.operations.moves import MoveReport, MoveResult
from leader_election_cli.operations.status import RebalanceRun, StatusReport, balance_document
from leader_election_cli.planning import BrokerBalance, ClusterBalance
from leader_election_cli.render import election as render

SCHEMA_VERSION = 1
LISTED_PARTITIONS = 20  # a table lists at most this many partitions of a kind; JSON lists them all


def write_json(document: dict[str, Any], out: IO[str]) -> None:
    json.dump(document, out, indent=2)
    out.write("\n")


def _console(out: IO[str]) -> Any:
    from rich.console import Console

    return Console(file=out, width=None if out.isatty() else 200)  # a pipe has no width: do not fold at 80


def _table(title: str, *columns: tuple[str, str]) -> Any:
    from rich.table import Table

    table = Table(title=title, title_justify="left")
    for name, justify in columns:
        table.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    return table


def _leader(broker: int | None) -> str:
    return "none" if broker is None or broker == NO_LEADER else str(broker)


def _ids(brokers: tuple[int, ...]) -> str:
    return ",".join(map(str, brokers)) or "none"


def _names(items: Sequence[TopicPartition | str]) -> str:
    """Partitions (or topics) for one line: the first few, and how many more."""
    listed = ", ".join(map(str, items[:LISTED_PARTITIONS]))
    more = len(items) - LISTED_PARTITIONS
    return listed + (f", ... ({more} more; --output json lists them all)" if more > 0 else "")


def _pct(ratio: float) -> str:
    return f"{ratio * 100:.1f}%"


def _brokers(above: Sequence[BrokerBalance]) -> str:
    """Brokers above a threshold, with their counts: a rounded ratio alone can look like the threshold."""
    return ", ".join(f"{b.broker} ({b.not_led_by_preferred} of {b.preferred} not led by it, {_pct(b.ratio)})"
                     for b in above)


# -- prefer / demote / restore ------------------------------------------------------------------------

def moves_document(report: MoveReport) -> dict[str, Any]:
    summary = render.summary_document(report)
    return {
        "schema_version": SCHEMA_VERSION,
        "command": report.command,
        "dry_run": report.dry_run,
        "restore_file": report.restore_file,
        "partitions": [_move_entry(r) for r in report.results],
        "summary": summary,
    }


def _move_entry(r: MoveResult) -> dict[str, Any]:
    return {"topic": r.tp.topic, "partition": r.tp.partition, "outcome": r.outcome.value,
            "replicas_before": list(r.replicas_before), "replicas_after": list(r.replicas_after),
            "leader_before": r.leader_before, "expected_leader": r.expected_leader, "leader_after": r.leader_after,
            "error_code": r.error_code, "error": r.error}


def render_moves_table(report: MoveReport, out: IO[str], err: IO[str]) -> None:
    """One row per partition: replica order and leader before -> after, and why when it is not done."""
    console = _console(out)
    title = f"{'Planned ' if report.dry_run else ''}{report.command}: leadership moves"
    table = _table(title, ("Topic", "left"), ("Partition", "right"), ("Outcome", "left"),
                   ("Replicas", "left"), ("Leader", "left"), ("Reason / error", "left"))
    for r in report.results:
        replicas = _ids(r.replicas_before) if r.replicas_after == r.replicas_before else \
            f"{_ids(r.replicas_before)} -> {_ids(r.replicas_after)}"
        after = r.leader_after
        leader = _leader(r.leader_before) if after in (None, r.leader_before) else \
            f"{_leader(r.leader_before)} -> {_leader(after)}"
        error = r.error or ""
        if r.error_code and r.error:
            error = f"{kafka_errors.lookup(r.error_code).name}: {r.error}"
        table.add_row(r.tp.topic, str(r.tp.partition), _move_label(r), replicas, leader, error)
    console.print(table)
    counts = ", ".join(f"{n} {label}" for label, n in Counter(map(_move_label, report.results)).items())
    console.print(f"{len(report.results)} partition(s): {counts or 'nothing to do'}")
    if report.restore_file:
        console.print(f"Restore file: {report.restore_file} (kafka-leaders restore {report.restore_file} "
                      "puts the replica orders back)", highlight=False, soft_wrap=True)
    if report.interrupted:
        err.write("Interrupted: stopped after the request in flight.\n")
    if report.aborted_reason:
        err.write(f"Stopped: {report.aborted_reason}\n")


def _move_label(r: MoveResult) -> str:
    if r.outcome is Outcome.SKIPPED:
        return "refused"
    if r.outcome is Outcome.PREDICTED:
        return "would fail" if r.error_code else "would elect"
    return r.outcome.value.replace("_", " ")


# -- status -------------------------------------------------------------------------------------------

def status_document(report: StatusReport) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "cluster_id": report.cluster_id,
        "controller_id": report.controller_id,
        "mode": report.mode.value if report.mode else None,
        "fail_above_pct": report.fail_above,
        **(balance_document(report.balance, report.fail_above) or {}),
        "offline_partitions": [str(tp) for tp in report.offline],
        "under_min_isr_partitions": [str(tp) for tp in report.under_min_isr],
        "min_isr_unknown_topics": report.min_isr_unknown,
        "reassigning_partitions": [str(tp) for tp in report.reassigning],
        "failing_brokers": [b.broker for b in report.failing],
        "auto_leader_rebalance": report.auto_rebalance or None,
        "exit_code": int(report.exit_code),
    }


def status_unread_document(error: str, exit_code: int) -> dict[str, Any]:
    """`status --output json` when the cluster could not be read (unreachable, login refused)."""
    return {"schema_version": SCHEMA_VERSION, "cluster_id": None, "error": error, "exit_code": int(exit_code)}


def _broker_table(title: str, b: ClusterBalance, threshold: float | None, after: ClusterBalance | None = None) -> Any:
    columns = [("Broker", "right"), ("Alive", "left"), ("Leads", "right"), ("Preferred for", "right"),
               ("Not led by it", "right"), ("Imbalance", "right")]
    if after is not None:
        columns.append(("Imbalance after", "right"))
    table = _table(title, *columns)
    ratios_after = {x.broker: x for x in after.brokers} if after else {}
    for x in b.brokers:
        row = [str(x.broker), "yes" if x.alive else "[red]no[/]", str(x.leaders), str(x.preferred),
               str(x.not_led_by_preferred), _marked(x.ratio, threshold is not None and x.above(threshold))]
        if after is not None:
            y = ratios_after.get(x.broker)
            row.append(_marked(y.ratio, threshold is not None and y.above(threshold)) if y else "")
        table.add_row(*row)
    return table


def _marked(ratio: float, above: bool) -> str:
    return f"[bold red]{_pct(ratio)}[/]" if above else _pct(ratio)


def render_status_table(report: StatusReport, out: IO[str]) -> None:
    console = _console(out)
    b = report.balance
    about = [f"controller {report.controller_id}"] if report.controller_id is not None else []
    about += [report.mode.value] if report.mode else []
    title = f"Leadership of cluster {report.cluster_id or '(no id)'}" + (f" ({', '.join(about)})" if about else "")
    console.print(_broker_table(title, b, report.fail_above))
    lines = [
        ("Partitions", b.partitions, []),
        ("Not led by their preferred replica", b.not_preferred_leader, []),
        ("  of which a preferred election would fix", b.fixable, []),
        ("Under-replicated", b.under_replicated, []),
        ("Under min.insync.replicas", b.under_min_isr, report.under_min_isr),
        ("Leaderless or offline", b.offline, report.offline),
        ("Pending reassignments", b.reassigning, report.reassigning),
    ]
    for label, count, partitions in lines:
        style = "bold red" if count and partitions and label != "Pending reassignments" else ""
        text = f"{label}: {count}" + (f" ({_names(partitions)})" if partitions else "")
        console.print(f"[{style}]{text}[/]" if style else text, highlight=False, soft_wrap=True)
        if label == "Under min.insync.replicas" and report.min_isr_unknown:
            console.print(f"[bold yellow]  not known for {len(report.min_isr_unknown)} topic(s), whose configs "
                          f"could not be read (DESCRIBE_CONFIGS needed): {_names(report.min_isr_unknown)}[/]",
                          highlight=False, soft_wrap=True)
    console.print(f"Automatic leader rebalance: {_auto_rebalance(report)}", highlight=False, soft_wrap=True)
    if report.fail_above is not None:
        failing = _brokers(report.failing)
        console.print(f"Brokers above {report.fail_above:g}%: {failing}" if failing else
                      f"Every broker is at or under {report.fail_above:g}%", highlight=False)


def _auto_rebalance(report: StatusReport) -> str:
    """What the controller does by itself, as the brokers' configs say (auto.leader.rebalance.enable)."""
    configs = report.auto_rebalance
    enabled = configs.get("auto.leader.rebalance.enable", "").strip().lower()
    if enabled not in ("true", "false"):
        return "unknown (the broker did not report auto.leader.rebalance.enable)"
    if enabled == "false":
        return ("off (auto.leader.rebalance.enable=false): only elections such as `kafka-leaders rebalance` move "
                "leaders back")
    every = configs.get("leader.imbalance.check.interval.seconds", "?")
    scope = ("every partition led off its preferred replica" if report.mode is ControllerMode.KRAFT else
             f"the partitions of brokers above leader.imbalance.per.broker.percentage "
             f"({configs.get('leader.imbalance.per.broker.percentage', '?')}%)")
    said = f"on: the controller elects preferred leaders every {every} s for {scope}"
    if report.mode is ControllerMode.KRAFT:  # the controllers' own configs decide, and brokers cannot show them
        said += f" (broker {report.auto_rebalance_broker}'s setting: the KRaft controllers' own decides)"
    return said


# -- rebalance ----------------------------------------------------------------------------------------

def rebalance_document(run: RebalanceRun) -> dict[str, Any]:
    election = render.report_document(run.election) if run.election else None
    return {
        "schema_version": SCHEMA_VERSION,
        "command": "rebalance",
        "threshold_pct": run.threshold,
        "dry_run": run.dry_run,
        "brokers_above_threshold": [b.broker for b in run.above],
        "candidates": len(run.candidates),
        "before": balance_document(run.before, run.threshold),
        "partitions": election["partitions"] if election else [],
        "after": balance_document(run.after, run.threshold),
        "brokers_still_above_threshold": None if run.still_above is None else [b.broker for b in run.still_above],
        "summary": {**(election["summary"] if election else {}), "exit_code": int(run.exit_code),
                    "duration_seconds": round(run.duration_s, 3)},
        "error": run.error,
    }


def render_rebalance_table(run: RebalanceRun, out: IO[str], err: IO[str]) -> None:
    console = _console(out)
    if run.before is not None:
        after = run.after if run.election is not None and not run.dry_run else None
        title = f"Leader imbalance (threshold {run.threshold:g}%)"
        console.print(_broker_table(title, run.before, run.threshold, after))
    if run.election is not None:
        render.render_table(run.election, out, err)
    console.print(rebalance_summary(run), highlight=False, soft_wrap=True)


def rebalance_summary(run: RebalanceRun) -> str:
    """One line: what was found and what was done."""
    if run.before is None:
        return "Nothing was done: the cluster could not be read."
    above = _brokers(run.above)
    if not run.above:
        return f"Every broker is at or under {run.threshold:g}%: nothing to do."
    if not run.candidates:
        return (f"Brokers above {run.threshold:g}%: {above}; no partition can take its preferred leader now "
                "(preferred replicas down or out of sync, or reassignments pending).")
    if run.dry_run:
        return (f"Brokers above {run.threshold:g}%: {above}; would elect the preferred leader of "
                f"{len(run.candidates)} partition(s).")
    not_attempted = run.count(Outcome.NOT_ATTEMPTED)
    done = (f"Brokers above {run.threshold:g}%: {above}; elected the preferred leader of "
            f"{run.count(Outcome.ELECTED)} partition(s), {run.count(Outcome.FAILED)} failed"
            + (f", {not_attempted} not attempted" if not_attempted else "") + ". ")
    if run.still_above is None:
        return done + "The balance afterwards could not be read."
    still = ", ".join(f"{b.broker} ({_pct(b.ratio)})" for b in run.still_above)
    return done + (f"Still above: {still}." if still else f"Every broker is now at or under {run.threshold:g}%.")
