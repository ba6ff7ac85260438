"""What `kafka-leaders analyze` costs beside plain Python, from 1 row to a fleet.

For each size (default 1 row and 1,000,000 rows of generated Parquet snapshots, see
`pipeline_throughput.generate`) it times, each in a fresh process:
  - the whole `analyze` command on local[1] and on local[2] (JVM and session start included), and
  - a plain-Python computation of the same per-broker figures (pyarrow reads the file, the planner's
    `planning.balance` counts each snapshot), the one-process alternative below Spark's break-even.
It prints each wall time, the plain-Python time over the Spark time (above 1: Spark is faster), the
local[1] / local[2] speed-up, and the 1-row wall time beside its target. Nothing asserts. Run:
    .venv/bin/python benchmarks/pipeline_cost.py [--rows 1 1000000] [--masters 'local[1]' 'local[2]']
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_ONE_ROW_S = 15.0  # a 1-row fleet, the whole command on this machine
KAFKA_LEADERS = str(Path(sys.executable).parent / "kafka-leaders")


def generate_parquet(rows: int, directory: Path) -> Path:
    """`rows` snapshot rows (50 clusters x 4 snapshots when there are enough) as Parquet, by Spark."""
    sys.path.insert(0, str(Path(__file__).parent))
    from pipeline_throughput import generate

    from leader_election_cli.pipeline import job

    spark = job.spark_session("local[2]", {})
    clusters, snapshots = (50, 4) if rows >= 200 else (1, 1)
    target = directory / f"snapshots-{rows}"
    generate(spark, rows, clusters, snapshots).coalesce(2).write.parquet(str(target))
    spark.stop()
    return target


def time_analyze(source: Path, master: str, out: Path) -> float:
    started = time.perf_counter()
    run = subprocess.run([KAFKA_LEADERS, "analyze", str(source), "--out", str(out), "--master", master],
                         capture_output=True, text=True)
    if run.returncode:
        raise SystemExit(f"analyze on {master} failed: {run.stderr.strip()}")
    return time.perf_counter() - started


def plain_python(source: str) -> tuple[float, int]:
    """In a fresh process: the per-broker figures of every snapshot with pyarrow and the planner."""
    code = f"""
import time
started = time.perf_counter()
from collections import defaultdict
import pyarrow.parquet as pq
from leader_election_cli import planning
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition
table = pq.read_table({source!r}, columns=["cluster", "taken_at", "topic", "partition", "replicas", "isr", "leader",
                                         "live_brokers"])
groups = defaultdict(dict)
live = {{}}
columns = [table.column(name).to_pylist() for name in table.column_names]
for cluster, at, topic, partition, replicas, isr, leader, brokers in zip(*columns):
    groups[(cluster, at)][TopicPartition(topic, partition)] = PartitionState(topic, partition, leader, tuple(replicas),
                                                                             tuple(isr))
    live[(cluster, at)] = brokers
figures = sum(len(planning.balance(ClusterState({{b: ("", 0) for b in live[key]}}, -1, partitions)).brokers)
              for key, partitions in groups.items())
print(time.perf_counter() - started, figures)
"""
    # the interpreter's own start is part of a one-process run too
    started = time.perf_counter()
    output = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True).stdout.split()
    return time.perf_counter() - started, int(output[1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, nargs="+", default=[1, 1_000_000])
    parser.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    args = parser.parse_args()
    figures = []
    with tempfile.TemporaryDirectory(prefix="pipeline-cost-") as work:
        for rows in args.rows:
            source = generate_parquet(rows, Path(work))
            baseline, broker_rows = plain_python(str(source))
            print(f"{rows:,} rows: plain Python {baseline:.1f} s ({broker_rows:,} broker figures)")
            walls = {}
            for master in args.masters:
                walls[master] = time_analyze(source, master, Path(work) / f"out-{rows}-{len(walls)}")
                print(f"{rows:,} rows: analyze on {master} {walls[master]:.1f} s; plain Python / Spark = "
                      f"{baseline / walls[master]:.2f}")
                figures.append({"name": f"analyze wall, {rows:,} rows, {master}", "value": round(walls[master], 1),
                                "unit": "s", "target": TARGET_ONE_ROW_S if rows == 1 else None, "goal": "max"})
                figures.append({"name": f"plain Python / analyze, {rows:,} rows, {master}",
                                "value": round(baseline / walls[master], 2), "unit": "x", "target": None})
            if "local[1]" in walls and "local[2]" in walls:
                print(f"{rows:,} rows: local[2] is {walls['local[1]'] / walls['local[2]']:.2f}x as fast as local[1]")
            figures.append({"name": f"plain Python wall, {rows:,} rows", "value": round(baseline, 1), "unit": "s",
                            "target": None})
    print(json.dumps({"benchmark": "pipeline_cost", "figures": figures}))


if __name__ == "__main__":
    main()
