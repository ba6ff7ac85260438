"""The `analyze` job: snapshot files in; Parquet tables, election files, a summary (and a plot) out.

Outputs under DIR:
  broker_balance/  per cluster, snapshot and broker: leaders, preferred, not_led_by_preferred,
                   imbalance_ratio, above_threshold, alive
  cluster_health/  per cluster and snapshot: partitions, not_preferred_leader, under_replicated,
                   under_min_isr, offline, fixable, brokers, live_brokers, max_imbalance_ratio,
                   worst_broker, brokers_above_threshold
  fixable/         each cluster's latest snapshot: partitions a preferred election would fix
  bad_rows/        rejected input rows with their reason and source file
  plans/<cluster>/batch-0001.json ...  election files for kafka-leader-election --path-to-json-file
  summary.json     the printed summary; imbalance.png with --plot
"""

from __future__ import annotations

import json
import os
import re
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import pyspark
from py4j.protocol import Py4JError
from pyspark import StorageLevel
from pyspark.errors import AnalysisException, PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from leader_election_cli import snapshot
from leader_election_cli.errors import CliError, ExitCode, InputError
from leader_election_cli.pipeline import analysis, files, inputs, plans, summary
from leader_election_cli.pipeline.plot import imbalance_png
from leader_election_cli.planning import DEFAULT_THRESHOLD_PCT

DEFAULT_MASTER = "local[*]"
DEFAULT_BATCH_SIZE = 1000
QUIET_LOGGING = Path(__file__).with_name("log4j2-quiet.properties")


def spark_session(master: str | None = None, conf: Mapping[str, str] | None = None,
                  verbose: bool = False) -> SparkSession:
    """The session to run on: `master`; else spark-submit's own master; else local[*].

    A local master runs its Python workers with this very interpreter, so they import this package.
    `conf` (e.g. --conf settings) is applied last and wins.
    Spark's own logs and progress bars stay off unless `verbose`: failures are reported in one line.
    """
    conf = dict(conf or {})
    master = _master(master, conf)
    builder = (SparkSession.builder.appName("kafka-leaders analyze")
               .config("spark.sql.session.timeZone", "UTC")
               .config("spark.sql.parquet.outputTimestampType", "TIMESTAMP_MICROS")  # not legacy INT96
               .config("spark.log.level", "WARN" if verbose else "OFF")
               .config("spark.ui.showConsoleProgress", str(verbose).lower()))
    if master:
        builder = builder.master(master)
    if master and master.startswith("local"):
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        # Spark's 200 shuffle partitions suit a cluster; one machine runs far faster with a few per thread.
        builder = (builder.config("spark.sql.shuffle.partitions", str(2 * local_threads(master)))
                   .config("spark.ui.enabled", "false")  # a web server nobody looks at: 1-2 s of start
                   .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
    for key, value in conf.items():
        builder = builder.config(key, value)
    with spark_errors(), _quiet_jvm(not verbose):
        return builder.getOrCreate()


def local_threads(master: str) -> int:
    """The worker threads of a local master: N of local[N] / local[N,F], the cores for local[*] or local."""
    found = re.match(r"local(?:-cluster)?\[(\d+|\*)", master)
    if found and found.group(1) != "*":
        return max(1, int(found.group(1)))
    return 1 if master == "local" else os.cpu_count() or 1


def _master(master: str | None, conf: Mapping[str, str]) -> str | None:
    """The master a session gets: --conf spark.master (applied last); else --master; else spark-submit's
    own (None); else local[*]."""
    return conf.get("spark.master") or master or (None if "PYSPARK_GATEWAY_PORT" in os.environ else DEFAULT_MASTER)


@contextmanager
def _quiet_jvm(quiet: bool) -> Iterator[None]:
    """A driver JVM started meanwhile logs nothing (spark-submit's has started already). The setting goes
    before the driver's own Java options (SPARK_SUBMIT_OPTS): a -D of a user's or spark-defaults.conf's
    still wins, and neither is replaced."""
    before = os.environ.get("SPARK_SUBMIT_OPTS")
    if quiet:
        os.environ["SPARK_SUBMIT_OPTS"] = f"-Dlog4j2.configurationFile={QUIET_LOGGING.as_uri()} {before or ''}".strip()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("SPARK_SUBMIT_OPTS", None)
        else:
            os.environ["SPARK_SUBMIT_OPTS"] = before


def preflight(snapshots: Sequence[str], out: str, master: str | None, conf: Mapping[str, str]) -> None:
    """The input checks that need no Spark, made before it starts (a typo costs no JVM): local snapshot
    patterns that match nothing, and an --out that is a file. Only where paths are surely local: a
    `file:` URI, or a plain path when this process starts a local master and no configuration Spark
    would read could name another default file system. `analyze` checks everything again on Spark's
    own file system."""
    plain_paths_are_local = ((_master(master, conf) or "").startswith("local")
                             and SparkSession.getActiveSession() is None and not _hadoop_configured(conf))
    for pattern in snapshots:
        if files.matches_no_local_file(pattern, plain_paths_are_local):
            raise InputError(f"No snapshot file matches {pattern}", hint="Check the path, glob or directory.")
    if files.local_file(out, plain_paths_are_local):
        raise InputError(f"--out {out} is a file: it must be a directory (made if missing)",
                         hint="Choose a directory for the tables, plans and summary.")


def _hadoop_configured(conf: Mapping[str, str]) -> bool:
    """Configuration that may point plain paths at another default file system (HDFS, S3): a --conf,
    an environment variable Spark's launcher reads, or a file in Spark's conf directory."""
    if any(key.startswith("spark.hadoop.fs.default") for key in conf):  # fs.defaultFS, fs.default.name
        return True
    if any(os.environ.get(name) for name in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_CONF_DIR", "HADOOP_HOME")):
        return True
    conf_dir = Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent) / "conf"
    return any((conf_dir / name).exists() for name in ("spark-defaults.conf", "spark-env.sh", "core-site.xml"))


@contextmanager
def spark_errors() -> Iterator[None]:
    """Spark's failures as one-line errors: unreadable input or no Java (exit 2), anything else (exit 1)."""
    try:
        yield
    except (PySparkException, Py4JError) as exc:
        message = _what_went_wrong(exc)
        if "JAVA_GATEWAY_EXITED" in message or "JAVA_HOME" in message:
            raise InputError("Could not start Spark: the Java gateway did not start",
                             hint="Spark needs Java 17 or newer: install it and set JAVA_HOME.") from exc
        if isinstance(exc, AnalysisException) or "[FAILED_READ_FILE" in message:
            raise InputError(f"Spark could not read the input: {message}",
                             hint="Pass only snapshot files (kafka-leaders snapshot), not other data.") from exc
        raise CliError(f"Spark job failed: {message}", hint="Run again with --debug for the details.",
                       exit_code=ExitCode.PARTITION_FAILED) from exc


def _what_went_wrong(exc: BaseException) -> str:
    """The line that says what went wrong: a Python worker's exception, Spark's error-class message, or
    the first line."""
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for pattern in (r"^(\w+(?:Error|Exception): .+)$", r"(\[[A-Z][A-Z_.]+\] .+)$"):
        found = re.search(pattern, text, re.MULTILINE)
        if found:
            return found.group(1)[:500]
    return (lines[0] if lines else type(exc).__name__)[:500]


def _save(frame: DataFrame, path: str) -> DataFrame:
    """Write a table as Parquet and read it back, so later steps never recompute it."""
    frame.write.mode("overwrite").parquet(path)
    return frame.sparkSession.read.parquet(path)


def analyze(spark: SparkSession, snapshots: Sequence[str], out: str, *, batch_size: int = DEFAULT_BATCH_SIZE,
            threshold_pct: float = DEFAULT_THRESHOLD_PCT, plot: bool = False) -> summary.Summary:
    """Run the whole analysis on `spark` and return its summary (also written to OUT/summary.json)."""
    if batch_size < 1:
        raise InputError(f"--batch-size must be at least 1, got {batch_size}")
    started = time.monotonic()
    with spark_errors():
        out = files.qualified(spark, out.rstrip("/") or "/")
        if files.is_file(spark, out):
            raise InputError(f"--out {out} is a file: it must be a directory (made if missing)",
                             hint="Choose a directory for the tables, plans and summary.")
        json_files, parquet_files = files.find_snapshots(spark, snapshots, exclude=out)  # not our own output
        rows = analysis.with_flags(inputs.read_snapshots(spark, json_files, parquet_files))
        rows = rows.persist(StorageLevel.MEMORY_AND_DISK)  # the files are read and the rules run once
        duplicates = inputs.duplicate_keys(rows).cache()
        try:
            result = _run(spark, inputs.mark_duplicates(rows, duplicates), out, len(json_files) + len(parquet_files),
                          batch_size, threshold_pct, plot)
        finally:
            duplicates.unpersist()
            rows.unpersist()
        result = replace(result, elapsed_seconds=time.monotonic() - started)
        files.write_bytes(spark, f"{out}/summary.json", json.dumps(result.to_json(), indent=2).encode())
    return result


def _run(spark: SparkSession, rows: DataFrame, out: str, input_files: int, batch_size: int,
         threshold_pct: float, plot: bool) -> summary.Summary:
    counted = rows.groupBy(inputs.REASON, (F.col("format_version") == snapshot.LEGACY_FORMAT_VERSION).alias("legacy"))
    reasons: dict[str | None, int] = {}
    legacy_rows = 0
    for r in counted.count().collect():
        reasons[r[inputs.REASON]] = reasons.get(r[inputs.REASON], 0) + r["count"]
        legacy_rows += r["count"] if r[inputs.REASON] is None and r["legacy"] else 0
    tables = {name: f"{out}/{name}" for name in ("broker_balance", "cluster_health", "fixable", "bad_rows")}
    (rows.where(F.col(inputs.REASON).isNotNull())
     .select(inputs.SOURCE, inputs.REASON, F.col(inputs.CORRUPT).alias("raw_record"), *snapshot.COLUMNS)
     .write.mode("overwrite").parquet(tables["bad_rows"]))
    if not reasons.get(None):
        raise InputError(f"No usable snapshot row in the input: {sum(reasons.values()):,} bad row(s), kept in "
                         f"{tables['bad_rows']}", hint="Read their reasons there; snapshot files come from "
                                                       "kafka-leaders snapshot.")
    valid = rows.where(F.col(inputs.REASON).isNull())
    brokers = _save(analysis.broker_balance(valid, threshold_pct), tables["broker_balance"])
    health = _save(analysis.cluster_health(valid, brokers), tables["cluster_health"])
    latest = analysis.latest_snapshots(rows, health).cache()
    fixable = _save(analysis.latest_fixable(valid, latest, brokers), tables["fixable"])
    plans_dir = f"{out}/plans"
    planned = plans.write_plans(spark, fixable.where(F.col("planned")), plans_dir, batch_size)
    clusters = tuple(replace(c, plan_files=planned.get(c.cluster, (0, 0))[0],
                             planned=planned.get(c.cluster, (0, 0))[1], plan_dir=plans.cluster_dir(c.cluster))
                     for c in summary.cluster_summaries(health, latest))
    unusable = summary.unusable_latest(health, latest)
    latest.unpersist()
    plot_path = None
    if plot:
        plot_path = f"{out}/imbalance.png"
        points = health.select("cluster", "taken_at", "max_imbalance_ratio").collect()
        files.write_bytes(spark, plot_path, imbalance_png(
            [(p.cluster, summary.utc(p.taken_at), p.max_imbalance_ratio) for p in points], threshold_pct))
    else:
        files.delete_tree(spark, f"{out}/imbalance.png")
    return summary.Summary(
        out=out, input_files=input_files, rows=sum(reasons.values()),
        bad_rows={reason: count for reason, count in reasons.items() if reason is not None},
        snapshots=sum(c.snapshots for c in clusters), threshold_pct=threshold_pct, batch_size=batch_size,
        clusters=clusters, tables=tables, plans_dir=plans_dir, plot=plot_path, unusable_latest=unusable,
        legacy_rows=legacy_rows)
