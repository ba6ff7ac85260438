"""What `kafka-leaders analyze` costs beside plain Python, from 1 row to a fleet.

For each size (default 1 row and 1,000,000 rows of generated snapshots, see
`pipeline_throughput.generate`) and format (Parquet, JSON lines) it times, each in a fresh process:
  - the whole `analyze` command on local[1] and on local[2] (JVM and session start included), and
  - a plain-Python computation of the same per-broker figures (pyarrow reads the Parquet, or `json`
    each line; the planner's `planning.balance` counts each snapshot), the one-process alternative.
It prints each wall time with the machine's load average at its start and the cores the command used
(CPU seconds of its whole process tree, JVM included, over the wall time: local[1] uses more than one,
because the JVM's JIT compilers and garbage collector run beside its one task thread), the plain-Python
time over the Spark time (above 1: Spark is faster), the local[1] / local[2] speed-up beside its target
(1.3) and the 1-row wall time beside its target. An untimed run comes first (`warm_up`). Nothing asserts.
With both local[1] and local[2], each round also runs two local[1] commands at once (`time_pair`): the
machine's ceiling for local[2] on this very work, 2 x (local[1] alone) / (the pair's wall time), how
much more of the work the whole machine does per second than local[1] alone. local[2], doing the same
work, cannot gain more over local[1]. It is below 2 even on two idle cores, since local[1] already uses
part of the second one (the JIT compilers, the collector), and lower still on shared cores. Run:
    .venv/bin/python benchmarks/pipeline_cost.py [--rows 1 1000000 5000000] [--formats parquet jsonl]
        [--masters 'local[1]' 'local[2]'] [--rounds N]
With --rounds N each master runs N times, the masters in turn, so that each round's runs see the same
load: the wall times shown are each master's median, the speed-up the median of the rounds' ratios.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_ONE_ROW_S = 15.0  # a 1-row fleet, the whole command on this machine
TARGET_SPEED_UP = 1.3  # local[2] over local[1], at 5,000,000 rows
KAFKA_LEADERS = str(Path(sys.executable).parent / "kafka-leaders")
SAMPLE_S = 0.5  # how often the command's CPU time is read


def load() -> str:
    return "load average " + " ".join(f"{value:.1f}" for value in os.getloadavg())


def generate(rows: int, directory: Path, file_format: str) -> Path:
    """`rows` snapshot rows (50 clusters x 4 snapshots when there are enough) as Parquet or JSON lines
    (taken_at as ISO-8601 in UTC, with a Z), by Spark; made once per directory (the warm-up's are reused)."""
    target = directory / f"snapshots-{rows}-{file_format}"
    if target.exists():
        return target
    sys.path.insert(0, str(Path(__file__).parent))
    from pipeline_throughput import generate

    from leader_election_cli.pipeline import job

    spark = job.spark_session("local[2]", {})
    clusters, snapshots = (50, 4) if rows >= 200 else (1, 1)
    writer = generate(spark, rows, clusters, snapshots).coalesce(2).write
    if file_format == "parquet":
        writer.parquet(str(target))
    else:
        writer.option("timestampFormat", "yyyy-MM-dd'T'HH:mm:ss.SSSXXX").json(str(target))
        for part in target.glob("part-*.json"):  # analyze reads .jsonl
            part.rename(part.with_suffix(".jsonl"))
    spark.stop()
    return target


def cpu_seconds(root: int, used: dict[int, float]) -> None:
    """Record in `used` the CPU seconds each process of `root`'s tree has used so far (Linux /proc)."""
    parents, now = {}, {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:  # exited meanwhile
            continue
        parents[int(entry)] = int(fields[1])
        now[int(entry)] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    for pid, seconds in now.items():
        ancestor = pid
        for _ in range(32):  # the JVM is a few levels below the command
            if ancestor == root or ancestor not in parents:
                break
            ancestor = parents[ancestor]
        if ancestor == root:
            used[pid] = seconds


def analyze_command(source: Path, master: str, out: Path) -> list[str]:
    return [KAFKA_LEADERS, "analyze", str(source), "--out", str(out), "--master", master]


def time_pair(source: Path, out: Path) -> float:
    """The wall time of two local[1] commands started together, to the later one's exit."""
    started = time.perf_counter()
    runs = [subprocess.Popen(analyze_command(source, "local[1]", Path(f"{out}-{n}")), stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True) for n in (1, 2)]
    failures = [run.communicate()[1].strip() for run in runs]
    for run, failure in zip(runs, failures, strict=True):
        if run.returncode:
            raise SystemExit(f"analyze on local[1], two at once, failed: {failure}")
    return time.perf_counter() - started


def time_analyze(source: Path, master: str, out: Path) -> tuple[float, float | None]:
    """The command's wall time (to its exit, not to the next sample), and the CPU seconds its process tree
    used (sampled every SAMPLE_S: the JVM is not reaped by the command, so the children's rusage would miss
    it; None without /proc). A sample reads every process's stat, about 6 ms of CPU on this machine: more
    often would take a measurable share of the cores the command is measured on."""
    used: dict[int, float] = {}
    with tempfile.TemporaryFile("w+") as errors:
        started = time.perf_counter()
        run = subprocess.Popen(analyze_command(source, master, out), stdout=subprocess.DEVNULL, stderr=errors,
                               text=True)
        while run.poll() is None:
            if os.path.isdir("/proc"):
                cpu_seconds(run.pid, used)
            with contextlib.suppress(subprocess.TimeoutExpired):
                run.wait(timeout=SAMPLE_S)  # returns at the exit
        wall = time.perf_counter() - started
        if run.returncode:
            errors.seek(0)
            raise SystemExit(f"analyze on {master} failed: {errors.read().strip()}")
    return wall, (sum(used.values()) if used else None)


def plain_python(source: str, file_format: str) -> tuple[float, int]:
    """In a fresh process: the per-broker figures of every snapshot with pyarrow (or json) and the planner."""
    names = ["cluster", "taken_at", "topic", "partition", "replicas", "isr", "leader", "live_brokers"]
    read = (f"""
import pyarrow.parquet as pq
table = pq.read_table({source!r}, columns={names!r})
columns = [table.column(name).to_pylist() for name in table.column_names]
""" if file_format == "parquet" else f"""
import glob, json
rows = [json.loads(line) for name in sorted(glob.glob({source!r} + "/*.jsonl")) for line in open(name)]
columns = [[row[name] for row in rows] for name in {names!r}]
del rows
""")
    code = f"""
import time
started = time.perf_counter()
from collections import defaultdict
from leader_election_cli.planning.balance import balance
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition
{read}
groups = defaultdict(dict)
live = {{}}
for cluster, at, topic, partition, replicas, isr, leader, brokers in zip(*columns):
    groups[(cluster, at)][TopicPartition(topic, partition)] = PartitionState(topic, partition, leader, tuple(replicas),
                                                                             tuple(isr))
    live[(cluster, at)] = brokers
figures = sum(len(balance(ClusterState({{b: ("", 0) for b in live[key]}}, -1, partitions)).brokers)
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
    parser.add_argument("--formats", nargs="+", choices=["parquet", "jsonl"], default=["parquet"])
    parser.add_argument("--masters", nargs="+", default=["local[1]", "local[2]"])
    parser.add_argument("--rounds", type=int, default=1, help="runs of each master, in turn (medians are shown)")
    args = parser.parse_args()
    figures = []
    with tempfile.TemporaryDirectory(prefix="pipeline-cost-") as work:
        warm_up(Path(work))
        for rows in args.rows:
            for file_format in args.formats:
                figures += measure(rows, file_format, args.masters, Path(work), args.rounds)
    print(json.dumps({"benchmark": "pipeline_cost", "figures": figures}))


def warm_up(work: Path) -> None:
    """One untimed run first: the first local `analyze` on a machine dumps the driver JVM's class archive
    (docs/SPARK.md), which every later run maps; the timed runs are such later runs, as a user's are."""
    wall, _ = time_analyze(generate(1, work, "parquet"), "local[1]", work / "out-warm-up")
    print(f"warm-up run (makes the class archive if missing; not counted) {wall:.1f} s", flush=True)


def measure(rows: int, file_format: str, masters: list[str], work: Path, rounds: int = 1) -> list[dict]:
    figures = []
    source = generate(rows, work, file_format)
    what = f"{rows:,} rows {file_format}"
    print(f"{what}: plain Python starts ({load()})", flush=True)
    baseline, broker_rows = plain_python(str(source), file_format)
    print(f"{what}: plain Python {baseline:.1f} s ({broker_rows:,} broker figures)", flush=True)
    runs: dict[str, list[tuple[float, float | None]]] = {master: [] for master in masters}
    both = "local[1]" in runs and "local[2]" in runs
    pairs = []
    for round_number in range(1, rounds + 1):  # the masters in turn: a round's runs see the same machine
        for master in masters:
            print(f"{what}: analyze on {master} starts, round {round_number} ({load()})", flush=True)
            wall, cpu = time_analyze(source, master, work / f"out-{rows}-{file_format}-{master}")
            runs[master].append((wall, cpu))
            cores = "" if cpu is None else f", {cpu / wall:.2f} cores used"
            print(f"{what}: analyze on {master} {wall:.1f} s{cores}; plain Python / Spark = {baseline / wall:.2f}",
                  flush=True)
        if both:
            print(f"{what}: two analyze on local[1] at once start, round {round_number} ({load()})", flush=True)
            pairs.append(time_pair(source, work / f"out-{rows}-{file_format}-pair"))
            print(f"{what}: two analyze on local[1] at once {pairs[-1]:.1f} s: the machine's two-thread ceiling "
                  f"{2 * runs['local[1]'][-1][0] / pairs[-1]:.2f}", flush=True)
    walls = {master: statistics.median(wall for wall, _ in done) for master, done in runs.items()}
    for master, done in runs.items():
        cpus = [cpu / wall for wall, cpu in done if cpu is not None]
        if cpus:
            figures.append({"name": f"cores used, {what}, {master}", "value": round(statistics.median(cpus), 2),
                            "unit": "cores", "target": None})
        figures.append({"name": f"analyze wall, {what}, {master}", "value": round(walls[master], 1),
                        "unit": "s", "target": TARGET_ONE_ROW_S if rows == 1 else None, "goal": "max"})
        figures.append({"name": f"plain Python / analyze, {what}, {master}",
                        "value": round(baseline / walls[master], 2), "unit": "x", "goal": "min",
                        "target": 1.0 if rows >= 5_000_000 and master == "local[2]" else None})
    if both:
        ratios = [one[0] / two[0] for one, two in zip(runs["local[1]"], runs["local[2]"], strict=True)]
        ceilings = [2 * one[0] / pair for one, pair in zip(runs["local[1]"], pairs, strict=True)]
        speed_up, ceiling = statistics.median(ratios), statistics.median(ceilings)
        print(f"{what}: local[2] is {speed_up:.2f}x as fast as local[1] (median of the rounds: "
              f"{', '.join(f'{ratio:.2f}' for ratio in ratios)}); the machine's two-thread ceiling {ceiling:.2f} "
              f"({', '.join(f'{c:.2f}' for c in ceilings)})", flush=True)
        figures.append({"name": f"local[1] / local[2], {what}", "value": round(speed_up, 2), "unit": "x",
                        "target": TARGET_SPEED_UP if rows >= 5_000_000 else None, "goal": "min"})
        figures.append({"name": f"two-thread ceiling (2 x local[1] / two local[1] at once), {what}",
                        "value": round(ceiling, 2), "unit": "x", "target": None})
    figures.append({"name": f"plain Python wall, {what}", "value": round(baseline, 1), "unit": "s", "target": None})
    return figures


if __name__ == "__main__":
    main()
