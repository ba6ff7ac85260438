"""The drop-in's start-up and a one-partition election, beside Python and kafka-python's own CLI.

Each command runs as a fresh process several times against the same sandbox; the table shows the
median wall time and the peak memory (max RSS) of the process, each beside its target. Nothing here
asserts. Run:
    .venv/bin/python benchmarks/drop_in.py [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from leader_election_cli.sandbox import Sandbox

BIN = Path(sys.executable).parent


def measure(argv: list[str], runs: int) -> tuple[float, float]:
    """(median seconds, max RSS in MiB) of `argv` over `runs` fresh processes."""
    times, peaks = [], []
    for _ in range(runs):
        started = time.perf_counter()
        process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        times.append(time.perf_counter() - started)
        peaks.append(usage.ru_maxrss / 1024)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"benchmark command failed: {' '.join(argv)}")
    return statistics.median(times), max(peaks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs

    python = measure([sys.executable, "-c", "pass"], runs)
    help_ = measure([str(BIN / "kafka-leader-election"), "--help"], runs)
    rows = [("python -c pass", python, None), ("kafka-leader-election --help", help_, 0.15)]
    with Sandbox(brokers=3, mode="kraft") as sb:
        sb.create_topic("bench", assignment={0: [1, 2, 3]})
        ours_argv = [str(BIN / "kafka-leader-election"), "--bootstrap-server", sb.bootstrap_servers,
                     "--election-type", "preferred", "--topic", "bench", "--partition", "0", "--output", "text"]
        theirs_argv = [sys.executable, "-m", "kafka.admin", "-b", sb.bootstrap_servers, "partitions",
                       "elect-leaders", "--election-type", "preferred", "-p", "bench:0", "--no-raise-errors"]
        ours, theirs = [], []
        for _ in range(runs):  # interleaved, so both see the same machine load
            sb.set_leader("bench", 0, 2)
            ours.append(measure(ours_argv, 1))
            sb.set_leader("bench", 0, 2)
            theirs.append(measure(theirs_argv, 1))
    election = (statistics.median(t for t, _ in ours), max(m for _, m in ours))
    kafka_python = (statistics.median(t for t, _ in theirs), max(m for _, m in theirs))
    rows += [("one-partition election (ours)", election, None),
             ("python -m kafka.admin ... elect-leaders", kafka_python, None)]

    print(f"{'command':42} {'median s':>9} {'max RSS MiB':>12}  target")
    for name, (seconds, mib), target in rows:
        goal = f"< {target} s" if target else ""
        print(f"{name:42} {seconds:9.3f} {mib:12.1f}  {goal}")
    print()
    print(f"--help vs python -c pass:            {help_[0] / python[0]:.2f}x the time")
    print(f"election vs kafka-python's CLI:      {election[0] / kafka_python[0]:.2f}x the time "
          f"(target <= 1.00), {election[1] / kafka_python[1]:.2f}x the memory")
    print(json.dumps({"benchmark": "drop_in", "figures": [  # the last line: read by benchmarks/run
        {"name": "python -c pass", "value": python[0], "unit": "s"},
        {"name": "kafka-leader-election --help", "value": help_[0], "unit": "s", "target": 0.15},
        {"name": "--help / python -c pass", "value": help_[0] / python[0], "unit": "x"},
        {"name": "one-partition election", "value": election[0], "unit": "s"},
        {"name": "kafka-python CLI, same election", "value": kafka_python[0], "unit": "s"},
        {"name": "election time / kafka-python CLI", "value": election[0] / kafka_python[0], "unit": "x",
         "target": 1.0},
        {"name": "election memory / kafka-python CLI", "value": election[1] / kafka_python[1], "unit": "x"}]}))


if __name__ == "__main__":
    main()
