"""The end-of-run summary on a terminal (rich): inputs, bad rows, each cluster's latest state, outputs."""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.markup import escape

from leader_election_cli.pipeline.summary import Summary
from leader_election_cli.render.tables import make_table, print_line, print_table


def render(summary: Summary, console: Console) -> None:
    console.print(f"[bold]Read[/bold] {summary.rows:,} row(s) from {summary.input_files} file(s): "
                  f"{summary.snapshots:,} snapshot(s) of {len(summary.clusters)} cluster(s) "
                  f"in {summary.elapsed_seconds:.1f} s.")
    if summary.bad_rows:
        console.print(f"Bad rows: {summary.bad_row_count:,}, left out of the analysis and kept in "
                      f"{escape(summary.tables['bad_rows'])}", highlight=False)
        bad = make_table(None, ("reason", "left"), ("rows", "right"))
        for reason, count in sorted(summary.bad_rows.items(), key=lambda item: (-item[1], item[0])):
            bad.add_row(escape(reason), f"{count:,}")
        print_table(console, bad)
    else:
        console.print("No bad rows.")
    if summary.legacy_rows:
        console.print(f"[yellow]{summary.legacy_rows:,} row(s) in snapshot format 1[/] (no format_version): "
                      f"they say nothing of pending reassignments, so partitions being reassigned count as "
                      f"under-replicated there, and their min_insync_replicas may be the topic's, uncapped; "
                      f"take new snapshots for exact counts", highlight=False)
    if summary.clusters:
        print_table(console, _clusters_table(summary))
        _partition_lists(summary, console)
    for cluster, taken_at in summary.unusable_latest.items():
        console.print(f"[bold red]Cluster {escape(cluster)}: its latest snapshot ({taken_at}) has no usable row, "
                      f"so no plan was written for it[/] (see the bad rows)")
    console.print(f"Tables (Parquet): {escape(', '.join(summary.tables.values()))}")
    planned = [c for c in summary.clusters if c.plan_files]
    if planned:
        console.print(f"Election plans in {escape(summary.plans_dir)}/<cluster>/batch-NNNN.json "
                      f"(at most {summary.batch_size:,} partitions each), run each with:")
        console.print(f"  kafka-leader-election --bootstrap-server HOST:PORT --election-type preferred "
                      f"--path-to-json-file {summary.plans_dir}/{planned[0].plan_dir}/batch-0001.json",
                      soft_wrap=True, highlight=False, markup=False)  # a command: whole, to copy
    else:
        console.print(f"No partition needs a preferred election at threshold {summary.threshold_pct:g}%: "
                      f"no plan files written.")
    if summary.plot:
        console.print(f"Plot: {escape(summary.plot)}")
    if summary.balance_dir is not None:
        _balance_plans(summary, console)


def _balance_plans(summary: Summary, console: Console) -> None:
    """Each cluster's leadership-balance plan: most leaders on a broker before -> after, and the file."""
    console.print(f"Leadership-balance plans in {escape(summary.balance_dir or '')}/<cluster>.json, run each with "
                  f"kafka-leaders balance --bootstrap-server HOST:PORT --execute --plan-file FILE:", highlight=False)
    for c in summary.clusters:
        if c.balance_plan is None:
            console.print(f"  {escape(c.cluster)}: no plan (its latest snapshot has bad rows)", highlight=False)
            continue
        optimal = " (optimal)" if c.balance_max_after == c.balance_lower_bound else ""
        print_line(console, f"  {escape(c.cluster)}: most leaders on a broker {c.balance_max_before} -> "
                      f"{c.balance_max_after}{optimal}, {c.balance_changes:,} partition(s) to change: "
                      f"{escape(c.balance_plan)}")


SHOWN = 5  # partitions listed per condition on the terminal; the tables hold them all


def _clusters_table(summary: Summary) -> Any:
    """One row per cluster; on a narrow terminal one block per cluster (`render.tables.print_table`)."""
    table = make_table(f"Latest snapshot per cluster (imbalance threshold {summary.threshold_pct:g}%)",
                       *((name, "left" if name in ("cluster", "latest (UTC)", "down brokers") else "right")
                         for name in ("cluster", "latest (UTC)", "partitions", "down brokers", "not preferred",
                                      "under-repl.", "under min ISR", "offline", "fixable", "planned",
                                      "worst broker", "brokers above", "plan files")))
    for c in summary.clusters:
        worst = f"{c.max_imbalance_ratio:.1%} (broker {c.worst_broker})" if c.worst_broker is not None else "-"
        above = f"[red]{c.brokers_above_threshold}[/red]" if c.brokers_above_threshold else "0"
        down = f"[red]{', '.join(map(str, c.down_brokers))}[/red]" if c.down_brokers else "-"
        table.add_row(escape(c.cluster), c.latest.strftime("%Y-%m-%d %H:%M"), f"{c.partitions:,}", down,
                      f"{c.not_preferred_leader:,}", f"{c.under_replicated:,}", f"{c.under_min_isr:,}",
                      f"{c.offline:,}", f"{c.fixable:,}", f"{c.planned:,}", worst, above, f"{c.plan_files:,}")
    return table


def _partition_lists(summary: Summary, console: Console) -> None:
    """The first few partitions of each condition, per cluster (all of them are in cluster_health)."""
    for c in summary.clusters:
        for label, names in (("offline", c.offline_partitions), ("under min ISR", c.under_min_isr_partitions),
                             ("under-replicated", c.under_replicated_partitions)):
            if names:
                more = f" and {len(names) - SHOWN:,} more" if len(names) > SHOWN else ""
                print_line(console, f"{escape(c.cluster)}: {label}: {escape(', '.join(names[:SHOWN]))}{more}")
