"""The end-of-run summary on a terminal (rich): inputs, bad rows, each cluster's latest state, outputs."""

from __future__ import annotations

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from leader_election_cli.pipeline.summary import Summary


def render(summary: Summary, console: Console) -> None:
    console.print(f"[bold]Read[/bold] {summary.rows:,} row(s) from {summary.input_files} file(s): "
                  f"{summary.snapshots:,} snapshot(s) of {len(summary.clusters)} cluster(s) "
                  f"in {summary.elapsed_seconds:.1f} s.")
    if summary.bad_rows:
        console.print(f"Bad rows: {summary.bad_row_count:,}, left out of the analysis and kept in "
                      f"{escape(summary.tables['bad_rows'])}", highlight=False)
        bad = Table()
        bad.add_column("reason")
        bad.add_column("rows", justify="right")
        for reason, count in sorted(summary.bad_rows.items(), key=lambda item: (-item[1], item[0])):
            bad.add_row(escape(reason), f"{count:,}")
        console.print(bad)
    else:
        console.print("No bad rows.")
    if summary.clusters:
        console.print(_clusters_table(summary))
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
                      soft_wrap=True, highlight=False, markup=False)
    else:
        console.print("No partition needs a preferred election: no plan files written.")
    if summary.plot:
        console.print(f"Plot: {escape(summary.plot)}")


def _clusters_table(summary: Summary) -> Table:
    table = Table(title=f"Latest snapshot per cluster (imbalance threshold {summary.threshold_pct:g}%)",
                  title_justify="left")
    for name in ("cluster", "latest (UTC)", "partitions", "not preferred", "under-repl.", "under min ISR",
                 "offline", "fixable", "worst broker", "brokers above", "plan files"):
        table.add_column(name, justify="left" if name in ("cluster", "latest (UTC)") else "right")
    for c in summary.clusters:
        worst = f"{c.max_imbalance_ratio:.1%} (broker {c.worst_broker})" if c.worst_broker is not None else "-"
        above = f"[red]{c.brokers_above_threshold}[/red]" if c.brokers_above_threshold else "0"
        table.add_row(escape(c.cluster), c.latest.strftime("%Y-%m-%d %H:%M"), f"{c.partitions:,}",
                      f"{c.not_preferred_leader:,}", f"{c.under_replicated:,}", f"{c.under_min_isr:,}",
                      f"{c.offline:,}", f"{c.fixable:,}", worst, above, f"{c.plan_files:,}")
    return table
