"""All-partitions preferred elections at 28,000 and 100,000 partitions on a sandbox modelled on a real KRaft
controller, beside kafka-python's CLI in the same run; and the one-partition election beside it.

The sandbox has a Kafka 4.1 controller's limits (versions.KAFKA_4_1_LIMITS: more than 10,000 changes in a
request are refused, exactly 10,000 fail the controller) and brokers whose metadata shows an election's
changes 1.5 ms per record after the controller answered (tests/test_scale.py says where those figures
come from). Every partition starts led by its second replica. Each command runs as a fresh process with
its defaults; the table shows its wall time, CPU time (user + system) and peak memory (max RSS), its exit
code, and what it did: partitions now led by their preferred replica, and the answers it printed (the
drop-in's JSON summary; kafka-python's per-partition error codes). The one-partition figures are medians
of interleaved runs on a 4.0 sandbox and on the modelled one. Nothing here asserts. Run:
    .venv/bin/python benchmarks/elect_at_scale.py [--sizes 28000,100000] [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.versions import KAFKA_4_1_LIMITS

BIN = Path(sys.executable).parent
LAG_PER_RECORD_S = 0.0015
NO_REBALANCE = {"auto.leader.rebalance.enable": "false"}
# A small parent process runs each command: a child's ru_maxrss starts at its parent's resident size when
# it forks, and this benchmark's process holds the sandbox.
RUN = """import os, subprocess, sys, time
with open(sys.argv[1], "wb") as out:
    started = time.perf_counter()
    child = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
print(time.perf_counter() - started, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
      os.waitstatus_to_exitcode(status))"""


def run(argv: list[str]) -> tuple[float, float, float, int, str]:
    """(wall s, CPU s, peak MiB, exit code, stdout) of one fresh process running `argv`."""
    with tempfile.NamedTemporaryFile() as out:
        figures = subprocess.run([sys.executable, "-c", RUN, out.name, *argv], capture_output=True, text=True,
                                 check=True).stdout.split()
        text = Path(out.name).read_text()
    wall, cpu, mib, code = figures
    return float(wall), float(cpu), float(mib), int(code), text


def unbalance(sb: Sandbox) -> None:
    for name, topic in sb.cluster.topics.items():
        for pid, p in enumerate(topic.partitions):
            sb.set_leader(name, pid, p.replicas[1])


def led_by_preferred(sb: Sandbox) -> int:
    return sum(p.leader == p.replicas[0] for t in sb.cluster.topics.values() for p in t.partitions)


def ours(bootstrap: str, *selection: str) -> list[str]:
    return [str(BIN / "kafka-leader-election"), "--bootstrap-server", bootstrap, "--election-type", "preferred",
            *selection, "--output", "json"]


def theirs(bootstrap: str, *selection: str) -> list[str]:
    return [sys.executable, "-m", "kafka.admin", "-b", bootstrap, "partitions", "elect-leaders",
            "--election-type", "preferred", *selection, "--no-raise-errors"]


def all_partitions(size: int) -> tuple[list[dict], list[str]]:
    figures, lines = [], []
    with Sandbox(controller_limits=KAFKA_4_1_LIMITS, metadata_lag_per_record_s=LAG_PER_RECORD_S,
                 broker_configs=NO_REBALANCE) as sb:
        for topic in range(10):
            sb.create_topic(f"t{topic}", size // 10, 3)
        for name, argv in (("ours", ours(sb.bootstrap_servers, "--all-topic-partitions")),
                           ("kafka-python CLI", theirs(sb.bootstrap_servers))):
            unbalance(sb)
            wall, cpu, mib, code, out = run(argv)
            elected = led_by_preferred(sb)
            if name == "ours":
                summary = json.loads(out)["summary"]
                said = f"elected {summary['elected']}, unconfirmed {summary['unconfirmed']}, failed {summary['failed']}"
            else:
                codes = Counter(re.findall(r"partition_id=\d+, error_code=(-?\d+)", out))
                said = ", ".join(f"error {c}: {n}" for c, n in codes.most_common()) or "no partition answers"
            lines.append(f"{size:>7,} {name:17} {wall:8.2f} {cpu:7.2f} {mib:8.1f} {code:5} {elected:>9,}  {said}")
            label = f"{size:,} partitions, {name}"
            figures += [{"name": f"{label}: wall", "value": wall, "unit": "s"},
                        {"name": f"{label}: CPU", "value": cpu, "unit": "s"},
                        {"name": f"{label}: max RSS", "value": mib, "unit": "MiB"},
                        {"name": f"{label}: exit code", "value": code, "unit": "",
                         **({"target": 0} if name == "ours" else {})},
                        {"name": f"{label}: partitions elected", "value": elected, "unit": "",
                         **({"target": size, "goal": "min"} if name == "ours" else {})}]
    return figures, lines


def one_partition(runs: int, modelled: bool) -> tuple[float, float]:
    """Median wall seconds of (ours, kafka-python's CLI) electing one partition, runs interleaved."""
    kwargs = {"controller_limits": KAFKA_4_1_LIMITS, "metadata_lag_per_record_s": LAG_PER_RECORD_S} if modelled \
        else {}
    with Sandbox(broker_configs=NO_REBALANCE, **kwargs) as sb:
        sb.create_topic("bench", assignment={0: [1, 2, 3]})
        timings: dict[str, list[float]] = {"ours": [], "theirs": []}
        for _ in range(runs):
            for name, argv in (("ours", ours(sb.bootstrap_servers, "--topic", "bench", "--partition", "0")),
                               ("theirs", theirs(sb.bootstrap_servers, "-p", "bench:0"))):
                sb.set_leader("bench", 0, 2)
                timings[name].append(run(argv)[0])
        return statistics.median(timings["ours"]), statistics.median(timings["theirs"])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="28000,100000")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    figures: list[dict] = []
    print(f"{'size':>7} {'command':17} {'wall s':>8} {'CPU s':>7} {'RSS MiB':>8} {'exit':>5} {'preferred':>9}  answers")
    for size in (int(s) for s in args.sizes.split(",")):
        more, lines = all_partitions(size)
        figures += more
        print("\n".join(lines), flush=True)
    print()
    for modelled, name in ((False, "4.0 sandbox"), (True, "modelled 4.1 sandbox")):
        election, kafka_python = one_partition(args.runs, modelled)
        print(f"one partition, {name}: ours {election:.3f} s, kafka-python's CLI {kafka_python:.3f} s "
              f"({election / kafka_python:.2f}x, target <= 1.00)")
        figures += [{"name": f"one-partition election, {name}", "value": election, "unit": "s"},
                    {"name": f"kafka-python CLI, one partition, {name}", "value": kafka_python, "unit": "s"},
                    {"name": f"one-partition election / kafka-python CLI, {name}", "value": election / kafka_python,
                     "unit": "x", "target": 1.0}]
    print(json.dumps({"benchmark": "elect_at_scale", "figures": figures}))  # the last line: read by benchmarks/run


if __name__ == "__main__":
    main()
