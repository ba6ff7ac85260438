"""`kafka-leaders snapshot`: one metadata read written as rows (JSON lines or Parquet) for `analyze`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from leader_election_cli.cli.common import configure_logging, connection, hooks, run
from leader_election_cli.cli.options import COMMAND_SETTINGS, Command, connection_options, verbatim
from leader_election_cli.errors import InputError, exit_code_help
from leader_election_cli.gc_pause import cyclic_gc_paused

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
              help="Where to write the rows: a .jsonl (JSON lines) or .parquet file, or a directory (an existing "
                   "one, or a path ending in /, created) for a new file named after the cluster and time (Parquet "
                   "unless --format jsonl).")
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


@cyclic_gc_paused()
def _snapshot(o: dict[str, Any]) -> int:
    from leader_election_cli import snapshot as snapshots
    from leader_election_cli.operations.snapshot import take_snapshot

    configure_logging(o["debug"])
    connection_ = connection(o)
    if not o["output"].strip():  # Path("") is ".": a new file in the current directory
        raise InputError("--output is empty", hint="Give --output a file or directory path.")
    output = Path(o["output"])
    kind, in_directory = snapshots.check_target(o["output"], o["file_format"], o["append"])
    if o["cluster_name"] is not None and not o["cluster_name"].strip():
        raise InputError("--cluster-name must not be blank")
    taken = take_snapshot(connection_, o["cluster_name"], hooks("text"))
    if in_directory:
        output = snapshots.file_in(output, taken.cluster, taken.taken_at, kind)
    snapshots.write(taken.rows, output, append=o["append"])
    click.echo(f"Wrote {len(taken.rows)} partition rows of cluster {taken.cluster} ({taken.live_brokers} live "
               f"brokers) taken at {snapshots.format_time(taken.taken_at)} to {output}")
    return 0
