"""The balance reports (`status`, `rebalance`) as tables."""

from __future__ import annotations

from typing import IO, Any

from leader_election_cli.model import ControllerMode, Outcome, TopicPartition
from leader_election_cli.render import election as render
from leader_election_cli.render.tables import (
    brokers_above,
    make_console,
    make_table,
    names,
    pct,
    print_line,
    print_table,
)
from leader_election_cli.reports.balance import ClusterBalance, LeadershipOptimum, RebalanceRun, StatusReport

# -- status -------------------------------------------------------------------------------------------

def _broker_table(title: str, b: ClusterBalance, threshold: float | None, after: ClusterBalance | None = None) -> Any:
    """Per broker: leads, preferred replica of, of those not led by it, imbalance ratio (before -> after an
    election, when `after` is given)."""
    table = make_table(title, ("Broker", "right"), ("Alive", "left"), ("Leads", "right"), ("Preferred", "right"),
                       ("Not led", "right"), ("Imbalance", "right"))
    ratios_after = {x.broker: x for x in after.brokers} if after else {}
    for x in b.brokers:
        imbalance = _marked(x.ratio, threshold is not None and x.above(threshold))
        y = ratios_after.get(x.broker)
        if y is not None:
            imbalance += " -> " + _marked(y.ratio, threshold is not None and y.above(threshold))
        table.add_row(str(x.broker), "yes" if x.alive else "[red]no[/]", str(x.leaders), str(x.preferred),
                      str(x.not_led_by_preferred), imbalance)
    return table


def _marked(ratio: float, above: bool) -> str:
    return f"[bold red]{pct(ratio)}[/]" if above else pct(ratio)


_NOT_ALARMING = ("Not led by their preferred replica", "Pending reassignments")


def render_status_table(report: StatusReport, out: IO[str], color: bool | None = None) -> None:
    console = make_console(out, color)
    b = report.balance
    about = [f"controller {report.controller_id}"] if report.controller_id is not None else []
    about += [report.mode.value] if report.mode else []
    title = f"Leadership of cluster {report.cluster_id or '(no id)'}" + (f" ({', '.join(about)})" if about else "")
    print_table(console, _broker_table(title, b, report.fail_above))
    lines = [
        ("Partitions", b.partitions, []),
        ("Not led by their preferred replica", b.not_preferred_leader, report.not_preferred_leader),
        ("  of which a preferred election would fix", b.fixable, []),
        ("Under-replicated", b.under_replicated, report.under_replicated),
        ("Under min.insync.replicas", b.under_min_isr, report.under_min_isr),
        ("Leaderless or offline", b.offline, report.offline),
        ("Pending reassignments", b.reassigning, report.reassigning),
    ]
    for label, count, partitions in lines:
        style = "bold red" if count and partitions and label not in _NOT_ALARMING else ""
        text = f"{label}: {count}" + (f" ({names(partitions)})" if partitions else "")
        print_line(console, f"[{style}]{text}[/]" if style else text)
        if label == "Leaderless or offline" and report.offline_recovery:
            _recovery_lines(console, report.offline_recovery)
        if label == "Under min.insync.replicas" and report.min_isr_unknown:
            print_line(console, f"[bold yellow]  not known for {len(report.min_isr_unknown)} topic(s), whose configs "
                          f"could not be read (DESCRIBE_CONFIGS needed): {names(report.min_isr_unknown)}[/]")
    print_line(console, f"Automatic leader rebalance: {_auto_rebalance(report)}")
    if report.optimum is not None:
        print_line(console, optimum_line(report.optimum))
    if report.fail_above is not None:
        failing = brokers_above(report.failing)
        console.print(f"Brokers above {report.fail_above:g}%: {failing}" if failing else
                      f"Every broker is at or under {report.fail_above:g}%", highlight=False)


def _recovery_lines(console: Any, recovery: dict[TopicPartition, tuple[int, ...]]) -> None:
    """Which offline partitions an in-sync or eligible replica's return recovers without data loss."""
    waiting = [f"{tp} (broker {' or '.join(map(str, brokers))})" for tp, brokers in recovery.items() if brokers]
    lost = [tp for tp, brokers in recovery.items() if not brokers]
    if waiting:
        print_line(console, f"  of which recover without data loss when an in-sync or eligible replica returns: "
                            f"{len(waiting)} ({names(waiting)})")
    if lost:
        print_line(console, f"[bold red]  of which have no in-sync or eligible replica left (only an unclean election "
                            f"brings them back): {len(lost)} ({names(lost)})[/]")


def optimum_line(o: LeadershipOptimum) -> str:
    """Today's most leaders on a broker beside what new replica orders reach."""
    if o.reached:
        return f"Most leaders on a broker: {o.max_leaders}, the optimum (no replica order change does better)"
    how = (f"by changing the replica order of {o.partitions_to_change} partition(s)" if o.partitions_to_change
           else "with preferred elections alone")
    return (f"[bold yellow]Most leaders on a broker: {o.max_leaders}; the optimum is {o.optimum}, {how} "
            "(kafka-leaders balance)[/]")


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

def render_rebalance_table(run: RebalanceRun, out: IO[str], err: IO[str], color: bool | None = None) -> None:
    console = make_console(out, color)
    if run.before is not None:
        after = run.after if run.election is not None and not run.dry_run else None
        title = f"Leader imbalance (threshold {run.threshold:g}%)"
        print_table(console, _broker_table(title, run.before, run.threshold, after))
    if run.election is not None:
        render.render_table(run.election, out, err, color=color)
    print_line(console, rebalance_summary(run))


def rebalance_summary(run: RebalanceRun) -> str:
    """One line: what was found and what was done."""
    if run.before is None:
        return "Nothing was done: the cluster could not be read."
    above = brokers_above(run.above)
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
    still = ", ".join(f"{b.broker} ({pct(b.ratio)})" for b in run.still_above)
    return done + (f"Still above: {still}." if still else f"Every broker is now at or under {run.threshold:g}%.")
