"""`kafka-leaders analyze`: the Spark pipeline over metadata snapshots (needs the [spark] extra)."""

from __future__ import annotations

import importlib.util
import sys
from typing import Any

import click

from leader_election_cli.cli.common import configure_logging, run
from leader_election_cli.cli.options import COMMAND_SETTINGS, Command, Finite, IntRange, Seconds, verbatim
from leader_election_cli.errors import InputError, exit_code_help, extra_hint
from leader_election_cli.planning.balance import DEFAULT_THRESHOLD_PCT

# Printed on standard error before the first local run on a machine waits for its JVM's class dump.
ARCHIVE_NOTICE = ("Saving Spark's classes so that later runs start faster: once, until Java or Spark changes "
                  "(tens of seconds).")
EXAMPLES = """\
Examples:
  kafka-leaders analyze metadata.jsonl --out leadership --plot
  kafka-leaders analyze 'snapshots/*.parquet' snapshots/2024-05/ --out leadership --threshold 5
  kafka-leaders analyze hdfs:///snapshots --out hdfs:///leadership --master yarn
  kafka-leaders analyze 's3a://bucket/snapshots/*.parquet' --out s3a://bucket/leadership \
      --master spark://spark-master:7077 --conf spark.pyspark.python=/usr/bin/python3
  (spark-submit runs the same job: see docs/SPARK.md)
"""


def _conf(values: tuple[str, ...]) -> dict[str, str]:
    conf = {}
    for item in values:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--conf {item!r} is not KEY=VALUE", hint="For example --conf spark.driver.memory=4g.")
        conf[key.strip()] = value.strip()
    return conf


EXIT_CODES = exit_code_help({0: "the analysis and the plan files were written",
                            1: "the Spark job failed, or an internal error",
                            2: "usage or input error (unreadable snapshots, no usable row, a missing extra)",
                            3: "the Spark master could not be reached", 4: None, 5: None,
                            129: "stopped by SIGHUP (the terminal closed) before the analysis finished",
                            130: "interrupted (Ctrl-C, SIGINT) before the analysis finished",
                            143: "stopped by SIGTERM (timeout, systemd, Kubernetes) before the analysis finished"})


@click.command(cls=Command, epilog=verbatim(EXAMPLES, EXIT_CODES), context_settings=COMMAND_SETTINGS)
@click.argument("snapshots", nargs=-1, required=True, metavar="SNAPSHOT...")
@click.option("--out", required=True, metavar="DIR", help="Directory for the Parquet tables, plans and summary.")
@click.option("--master", metavar="URL",
              help="Spark master, e.g. local[4], spark://host:7077, yarn (default: local[*], or spark-submit's).")
@click.option("--connect-timeout", type=Seconds(min=0, min_open=True), default=15, show_default=True,
              metavar="SECONDS",
              help="How long a cluster master (spark://, yarn, k8s://) may take to accept the application.")
@click.option("--batch-size", type=IntRange(min=1), default=1000, show_default=True, metavar="N",
              help="At most N partitions per election file (a KRaft controller refuses over 10,000 at once).")
@click.option("--threshold", type=Finite(min=0), default=DEFAULT_THRESHOLD_PCT, show_default=True,
              metavar="PCT", help="Imbalance ratio above which a broker is flagged (leader.imbalance.per.broker"
                                  ".percentage).")
@click.option("--plot", is_flag=True, help="Also draw the imbalance over time as DIR/imbalance.png.")
@click.option("--balance-plans", is_flag=True,
              help="Also write a leadership-balance plan per cluster (its latest snapshot) as "
                   "DIR/balance/<cluster>.json, for kafka-leaders balance --execute --plan-file.")
@click.option("--conf", multiple=True, metavar="KEY=VALUE", help="A Spark setting; repeat as needed.")
@click.option("--debug", is_flag=True, help="Show Spark's warnings, progress and tracebacks.")
def analyze(**options: Any) -> None:
    """Analyze leadership over snapshot files (JSON lines or Parquet; files, directories or globs).

    Writes per-broker balance and per-cluster health over time as Parquet tables under DIR, and, for each
    cluster's latest snapshot, election files DIR/plans/<cluster>/batch-0001.json ... for
    `kafka-leader-election --path-to-json-file`; with --balance-plans, the plan `kafka-leaders balance` would
    make from that snapshot (new preferred replicas, no data moved) as DIR/balance/<cluster>.json.
    """
    sys.exit(run(lambda: _analyze(options), options["debug"], unfinished="before the analysis finished"))


def _analyze(o: dict[str, Any]) -> int:
    configure_logging(o["debug"])
    conf = _conf(o["conf"])
    needed = {"pyspark": "PySpark", "pyarrow": "pyarrow", **({"matplotlib": "matplotlib"} if o["plot"] else {}),
              **({"pandas": "pandas"} if o["balance_plans"] else {})}
    missing = [name for module, name in needed.items() if importlib.util.find_spec(module) is None]
    if missing:
        raise InputError(f"kafka-leaders analyze needs {' and '.join(missing)}, which "
                         f"{'is' if len(missing) == 1 else 'are'} not installed",
                         hint=f"{extra_hint('spark')} It needs Java 17 or newer too.")
    from rich.console import Console

    from leader_election_cli.pipeline import job, report

    job.preflight(o["snapshots"], o["out"], o["master"], conf)
    with job.session(o["master"], conf, verbose=o["debug"], connect_timeout_s=o["connect_timeout"],
                     small_input=job.is_small_input(o["snapshots"], o["master"], conf),
                     announce_archive=lambda: click.echo(ARCHIVE_NOTICE, err=True)) as spark:
        result = job.analyze(spark, o["snapshots"], o["out"], batch_size=o["batch_size"],
                             threshold_pct=o["threshold"], plot=o["plot"], balance=o["balance_plans"])
        # Not on a terminal (logs, pipes): the table at its natural width, no cluster name cut or folded.
        report.render(result, Console(width=None if sys.stdout.isatty() else 10_000))
    return 0
