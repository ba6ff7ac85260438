"""The Spark pipeline's throughput: `kafka-leaders analyze` over generated snapshots on local[*].

Generates snapshot rows with Spark itself (Parquet; clusters of 12 brokers, replication factor 3, about
one partition in ten led by another replica, some ISRs shrunk, one broker down in every fourth
snapshot), runs the whole analysis (reading, bad-row checks, the planner's predicates, tables, plans,
summary) and prints rows per second and the driver's peak memory beside their targets. The issue's
fleet scale is `--rows 10000000 --clusters 50`. Nothing here asserts. Run:
    .venv/bin/python benchmarks/pipeline_throughput.py [--rows 1000000] [--clusters 50] [--snapshots 4]
"""

from __future__ import annotations

import argparse
import json
import resource
import tempfile
import time
from pathlib import Path

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from leader_election_cli.pipeline import job

BROKERS = 12
PARTITIONS_PER_TOPIC = 50
# On the 2-core machine this project is developed on; a real cluster scales with its executors.
TARGET_ROWS_PER_SECOND = 25_000  # 10 million rows in under 7 minutes
TARGET_DRIVER_JVM_MIB = 2048  # with Spark's default spark.driver.memory=1g heap


def generate(spark: SparkSession, rows: int, clusters: int, snapshots: int) -> DataFrame:
    """About `rows` snapshot rows (a multiple of clusters x snapshots): `clusters` clusters, each with
    `snapshots` points in time."""
    per_snapshot = max(1, rows // (clusters * snapshots))
    n = F.col("id")
    cluster_index = (n / (per_snapshot * snapshots)).cast("long")
    snapshot_index = (n / per_snapshot).cast("long") % snapshots
    partition_id = n % per_snapshot
    first = ((partition_id * 7 + cluster_index) % BROKERS) + 1
    replicas = F.array(first, (first % BROKERS) + 1, ((first + 1) % BROKERS) + 1)
    down = F.when(snapshot_index % 4 == 3, F.lit(BROKERS)).otherwise(F.lit(0))  # broker 12, sometimes
    isr = F.when(F.rand(1) < 0.03, F.slice(replicas, 1, 2)).otherwise(replicas)
    leader = F.when(F.rand(2) < 0.1, replicas[1]).otherwise(replicas[0])
    return spark.range(per_snapshot * clusters * snapshots).select(
        F.format_string("cluster-%03d", cluster_index).alias("cluster"),
        (F.lit("2024-05-01 00:00:00").cast("timestamp") + F.make_interval(hours=snapshot_index)).alias("taken_at"),
        F.format_string("topic-%05d", (partition_id / PARTITIONS_PER_TOPIC).cast("long")).alias("topic"),
        (partition_id % PARTITIONS_PER_TOPIC).cast("int").alias("partition"),
        replicas.cast("array<int>").alias("replicas"),
        F.filter(isr, lambda b: b != down).cast("array<int>").alias("isr"),
        F.array().cast("array<int>").alias("elr"),
        F.when(leader == down, F.lit(-1)).otherwise(leader).cast("int").alias("leader"),
        F.lit(2).alias("min_insync_replicas"),
        F.filter(F.sequence(F.lit(1), F.lit(BROKERS)), lambda b: b != down).cast("array<int>").alias("live_brokers"))


def driver_jvm_peak_mib(spark: SparkSession) -> float | None:
    """The driver JVM's peak resident memory (VmHWM; Linux only, else None)."""
    status = Path(f"/proc/{spark._jvm.java.lang.ProcessHandle.current().pid()}/status")
    if not status.exists():
        return None
    line = next(line for line in status.read_text().splitlines() if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--clusters", type=int, default=50)
    parser.add_argument("--snapshots", type=int, default=4, help="snapshots per cluster")
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args()

    spark = job.spark_session(args.master, {"spark.ui.enabled": "false"})
    with tempfile.TemporaryDirectory(prefix="pipeline-bench-") as work:
        source = str(Path(work) / "snapshots")
        started = time.perf_counter()
        generate(spark, args.rows, args.clusters, args.snapshots).write.parquet(source)
        generated = time.perf_counter() - started
        started = time.perf_counter()
        summary = job.analyze(spark, [source], str(Path(work) / "out"))
        elapsed = time.perf_counter() - started
        plan_files = sum(1 for _ in (Path(work) / "out" / "plans").rglob("batch-*.json"))
    rows_per_second = summary.rows / elapsed
    jvm = driver_jvm_peak_mib(spark)
    python_rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    spark.stop()
    fixable = sum(c.fixable for c in summary.clusters)
    print(f"generated {summary.rows:,} rows ({args.clusters} clusters x {args.snapshots} snapshots) "
          f"in {generated:.1f} s")
    print(f"analyze on {args.master}: {elapsed:.1f} s = {rows_per_second:,.0f} rows/s "
          f"(target >= {TARGET_ROWS_PER_SECOND:,}); {summary.bad_row_count} bad rows; "
          f"{fixable:,} fixable partitions in {plan_files} plan files")
    print(f"driver peak memory: JVM {'unknown' if jvm is None else f'{jvm:,.0f} MiB'} "
          f"(target <= {TARGET_DRIVER_JVM_MIB:,} MiB), Python {python_rss:,.0f} MiB")
    print(json.dumps({"benchmark": "pipeline_throughput", "figures": [
        {"name": f"rows per second ({summary.rows:,} rows, {args.master})", "value": round(rows_per_second),
         "unit": "rows/s", "target": TARGET_ROWS_PER_SECOND, "goal": "min"},
        *([] if jvm is None else [
            {"name": "driver JVM peak RSS", "value": round(jvm), "unit": "MiB", "target": TARGET_DRIVER_JVM_MIB}]),
        {"name": "driver Python peak RSS", "value": round(python_rss), "unit": "MiB", "target": None},
    ]}))


if __name__ == "__main__":
    main()
