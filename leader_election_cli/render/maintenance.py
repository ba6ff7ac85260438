"""`can-stop` and `roll` as tables."""

from __future__ import annotations

from typing import IO

from leader_election_cli.render.tables import ids, inert, make_console, make_table, print_line, print_table
from leader_election_cli.reports.maintenance import (
    CanStopReport,
    PartitionRisk,
    QuorumVerdict,
    RollReport,
    RollStep,
    StopVerdict,
    silent_brokers_text,
)

_PROBLEMS = {"offline": "offline", "under_min_isr": "under min ISR", "min_isr_unknown": "min ISR unknown",
             "rf1": "offline (RF=1)"}
SHOWN = 50  # partitions listed in a table; JSON has them all


def verdict_line(v: StopVerdict) -> str:
    """One line: safe or not, and why."""
    who = ",".join(map(str, v.brokers))
    down = f" (already down: {','.join(map(str, v.already_down))})" if v.already_down else ""
    silent = f"; {silent_brokers_text(v.not_answering)}, counted as down" if v.not_answering else ""
    if v.safe:
        extra = f"; {len(v.risks)} partition(s) already unhealthy or RF=1, listed" if v.risks else ""
        return f"Safe to stop broker(s) {who}{down}: no partition would go offline or under min ISR{extra}{silent}."
    return (f"NOT safe to stop broker(s) {who}{down}: {len(v.blocking)} partition(s) would go offline or under "
            f"min ISR{silent}.")


def _row(r: PartitionRisk) -> tuple[str, ...]:
    state = "blocks" if r.blocking else ("already" if r.already else "allowed")
    adding = f" (adding {ids(r.adding)})" if r.adding else ""
    return (inert(r.tp.topic), str(r.tp.partition), _PROBLEMS[r.problem.value], state, ids(r.replicas) + adding,
            f"{ids(r.isr)} -> {ids(r.isr_after)}", "?" if r.min_isr is None else str(r.min_isr))


def render_verdict(v: StopVerdict, out: IO[str], color: bool | None, title: str) -> None:
    console = make_console(out, color)
    if v.risks:
        table = make_table(title, ("Topic", "left"), ("Partition", "right"), ("After the stop", "left"),
                           ("Verdict", "left"), ("Replicas", "left"), ("ISR", "left"), ("Min ISR", "right"))
        for r in v.risks[:SHOWN]:
            table.add_row(*_row(r))
        print_table(console, table)
        if len(v.risks) > SHOWN:
            print_line(console, f"... and {len(v.risks) - SHOWN} more (--output json lists them all)", markup=False)
    print_line(console, verdict_line(v), markup=False)


def quorum_line(q: QuorumVerdict) -> str:
    """One line: whether the controller quorum keeps a caught-up majority without the voters."""
    who = ids(tuple(q.nodes))
    timeout = f"{q.fetch_timeout_ms} ms ({'its config' if q.fetch_timeout_read else 'Kafka default'})"
    if q.safe:
        return (f"Safe to stop controller(s) {who}: {q.caught_up_after} of {len(q.voters)} voters stay caught up with "
                f"the leader (a majority is {q.needed}; controller.quorum.fetch.timeout.ms {timeout}).")
    return f"NOT safe to stop controller(s) {who}: {q.reason} (controller.quorum.fetch.timeout.ms {timeout})."


def render_quorum(q: QuorumVerdict, out: IO[str], color: bool | None) -> None:
    console = make_console(out, color)
    table = make_table(f"Controller quorum (leader {q.leader}, epoch {q.epoch})", ("Voter", "right"),
                       ("Role", "left"), ("Log end", "right"), ("Lag", "right"), ("Caught up", "right"),
                       ("Verdict", "left"))
    for v in q.voters:
        age = "never" if v.caught_up_age_ms is None else f"{v.caught_up_age_ms} ms ago"
        state = "stopping" if v.stopping else ("caught up" if v.caught_up else
                                               "behind" if v.answering else "does not answer")
        table.add_row(str(v.node), "leader" if v.leader else "follower", str(v.log_end_offset),
                      "?" if v.lag is None else str(v.lag), age, state)
    print_table(console, table)
    print_line(console, quorum_line(q), markup=False)


def render_can_stop_table(report: CanStopReport, out: IO[str], err: IO[str], color: bool | None = None) -> None:
    if report.verdict is not None and (report.brokers or report.quorum is None):
        render_verdict(report.verdict, out, color, f"Stopping broker(s) {','.join(map(str, report.brokers))}")
    if report.quorum is not None:
        render_quorum(report.quorum, out, color)
    if report.aborted_reason:
        err.write(f"Stopped: {report.aborted_reason}\n")


def _checked(s: RollStep) -> str:
    """A restart's safety check: how long before the command the read it was decided on ended."""
    if s.verdict_age_s is None:
        return ""
    return f" (safe to stop by a read {s.verdict_age_s * 1000:.0f} ms before it started)"


def rounds_lines(report: RollReport) -> list[str]:
    """--parallel: each round with its brokers' racks, and how its count stands against the fewest possible."""
    rounds = report.rounds
    assert rounds is not None
    lines = []
    for i, r in enumerate(rounds.rounds, 1):
        racks = sorted({report.racks[b] for b in r if b in report.racks})
        on = f" (rack{'s' if len(racks) > 1 else ''} {', '.join(racks)})" if racks else ""
        lines.append(f"Round {i}: broker{'s' if len(r) > 1 else ''} {ids(r)}{on}")
    count = len(rounds.rounds)
    if rounds.proven:
        bound = "proven the fewest the can-stop rule allows"
    else:
        bound = f"at most {count - rounds.lower_bound} more than the fewest possible (no plan has fewer than " \
                f"{rounds.lower_bound})"
    lines.append(f"{count} round(s), {bound}; a serial roll takes {rounds.serial}.")
    return lines


def render_roll_table(report: RollReport, out: IO[str], err: IO[str], color: bool | None = None) -> None:
    """One row per broker and step: how long it took and what it found or did."""
    console = make_console(out, color)
    title = f"{'Planned roll' if report.dry_run else 'Roll'} (state file {report.state_file})"
    controllers = {b.broker for b in report.brokers if b.role == "controller"}
    columns = [("Node" if controllers else "Broker", "right"), ("Step", "left"), ("Result", "left"),
               ("Seconds", "right"), ("Detail", "left")]
    if report.dry_run:
        del columns[3]
    table = make_table(title, *columns)
    for b in report.brokers:
        for s in b.steps:
            if report.dry_run:
                table.add_row(str(b.broker), s.name, "ok" if s.ok else "not now", inert(s.detail))
                continue
            result = ("ok" if s.ok else "FAILED") if s.completed else "stopped"
            table.add_row(str(b.broker), s.name, result, f"{s.seconds:.2f}", inert(s.detail + _checked(s)))
    print_table(console, table)
    if report.rounds is not None:
        for line in rounds_lines(report):
            print_line(console, line, markup=False)
    done = sum(1 for b in report.brokers if b.status == "done" and b.broker not in controllers)
    if not report.dry_run:
        caught_up = sum(1 for b in report.brokers if b.status == "done" and b.broker in controllers)
        also = f"; {caught_up} controller(s) restarted and caught up with the quorum" if controllers else ""
        print_line(console, f"{done} broker(s) restarted and given their leadership back{also}.", markup=False)
    if report.interrupted:
        err.write(f"Interrupted: the roll stops here; kafka-leaders roll --resume --state-file {report.state_file} "
                  "carries on.\n")
    if report.aborted_reason:
        err.write(f"Stopped: {report.aborted_reason}\n")
