"""`kafka-leaders snapshot`: one metadata read written as rows (JSON lines or Parquet) for `analyze`."""

from __future__ import annotations

import sys
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import click

from leader_election_cli.cli.common import (
    COMMAND_SETTINGS,
    Command,
    bootstrap_servers,
    configure_logging,
    connection_options,
    run,
    verbatim,
)
from leader_election_cli.errors import InputError, exit_code_help

EXAMPLES = """\
Examples:
  kafka-leaders snapshot --bootstrap-server localhost:9092 --output metadata.jsonl --append
  kafka-leaders snapshot --bootstrap-server localhost:9092 --cluster-name prod-eu --output snapshots/
  (writes snapshots/prod-eu-20240501T120000123456Z.parquet; --format jsonl for JSON lines)
"""


EXIT_CODES = exit_code_help({0: "the snapshot was written", 1: "an internal error", 5: None,
                            130: "interrupted: nothing was written"})


@click.command(cls=Command, epilog=verbatim(EXAMPLES, EXIT_CODES), context_settings=COMMAND_SETTINGS)
@connection_options
@click.option("--output", "output", required=True, metavar="FILE|DIR",
              help="Where to write the rows: a .jsonl (JSON lines) or .parquet file, or a directory for a new "
                   "file named after the cluster and time (Parquet unless --format jsonl).")
@click.option("--format", "file_format", type=click.Choice(["parquet", "jsonl"]), default=None,
              help="The format of a new file in an --output directory (default parquet).")
@click.option("--append", is_flag=True, help="Add the rows to an existing file instead of refusing it.")
@click.option("--cluster-name", metavar="NAME",
              help="Name the cluster in the rows (default: the cluster id the brokers report).")
def snapshot(**options: Any) -> None:
    """Write one row per partition (replicas, ISR, ELR, leader, min.insync.replicas, live brokers).

    Run it on a schedule for each cluster, then analyze the files with `kafka-leaders analyze`.
    """
    sys.exit(run(lambda: _snapshot(options), options["debug"]))


def _snapshot(o: dict[str, Any]) -> int:
    from leader_election_cli import snapshot as snapshots
    from leader_election_cli.cluster import Cluster
    from leader_election_cli.config import load_client_settings

    configure_logging(o["debug"])
    servers = bootstrap_servers(o)
    output = Path(o["output"])
    in_directory = output.is_dir()
    kind = o["file_format"] or "parquet"
    if in_directory:
        if o["append"]:
            raise InputError(f"--append needs a file, and {output} is a directory",
                             hint="Name a .jsonl or .parquet file, or leave --append out for a new file in it.")
        snapshots.check_directory(output, kind)
    else:
        kind = snapshots.check_output(output, o["append"])
        if o["file_format"] and o["file_format"] != kind:
            raise InputError(f"--format {o['file_format']} does not match the file name {output.name}",
                             hint="Leave --format out: a file's suffix chooses its format.")
    if o["cluster_name"] is not None and not o["cluster_name"].strip():
        raise InputError("--cluster-name must not be blank")
    settings = load_client_settings(o["command_config"], int(o["timeout"] * 1000) if o["timeout"] else None)
    for warning in settings.warnings:
        click.echo(f"Warning: {warning}", err=True)
    with Cluster.connect(servers, settings) as cluster:
        state = cluster.describe(with_elr=True, with_configs=True)
        moving = cluster.list_reassignment_replicas()  # under-replicated counts as status counts it
    state = replace(state, reassigning={tp: adding for tp, (adding, _) in moving.items()})
    taken_at = datetime.now(timezone.utc)
    name = o["cluster_name"] or state.cluster_id
    if not name:
        raise InputError("The cluster reported no cluster id", hint="Name it with --cluster-name.")
    rows = snapshots.rows(state, name, taken_at, {tp: removing for tp, (_, removing) in moving.items()})
    if in_directory:
        output = snapshots.file_in(output, name, taken_at, kind)
    snapshots.write(rows, output, append=o["append"])
    click.echo(f"Wrote {len(rows)} partition rows of cluster {name} ({len(state.brokers)} live brokers) "
               f"taken at {snapshots.format_time(taken_at)} to {output}")
    return 0
