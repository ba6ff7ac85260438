"""The drop-in's start-up and a one-partition election, beside Python, the raw-socket floor and
kafka-python's own CLI.

Each command runs as a fresh process several times against the same sandbox; the table shows the
median wall time, and the peak memory (max RSS) of one more run, each beside its target. The floor is
`floor/raw_election.py`: a fresh Python process sending ApiVersions and ElectLeaders v1 over one raw
socket. The sandbox counts the requests each election makes. Nothing here asserts. Run:
    .venv/bin/python benchmarks/drop_in.py [--runs 5]
"""

from __future__ import annotations

import argparse
import compileall
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import leader_election_cli
from leader_election_cli.sandbox import Sandbox

BIN = Path(sys.executable).parent
FLOOR = Path(__file__).resolve().parent / "floor" / "raw_election.py"


# Run from a small Python process: a child's ru_maxrss starts at its parent's resident size when it
# forks (Linux keeps that high-water mark across exec), and this benchmark's process holds the sandbox.
PEAK = """import os, subprocess, sys
child = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, usage = os.wait4(child.pid, 0)
print(usage.ru_maxrss, os.waitstatus_to_exitcode(status))"""


def wall_seconds(argv: list[str]) -> float:
    """Wall time of one fresh process running `argv`."""
    started = time.perf_counter()
    if subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
        raise SystemExit(f"benchmark command failed: {' '.join(argv)}")
    return time.perf_counter() - started


def peak_mib(argv: list[str]) -> float:
    """Peak resident memory of one fresh process running `argv`, in MiB."""
    maxrss, code = subprocess.run([sys.executable, "-c", PEAK, *argv], capture_output=True, text=True,
                                  check=True).stdout.split()
    if code != "0":
        raise SystemExit(f"benchmark command failed: {' '.join(argv)}")
    return int(maxrss) / 1024


def measure(argv: list[str], runs: int) -> tuple[float, float]:
    """(median seconds over `runs` fresh processes, peak MiB of one more)."""
    return statistics.median(wall_seconds(argv) for _ in range(runs)), peak_mib(argv)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    # pip compiles an installed package's bytecode as it installs it (kafka-python's is), but an editable
    # install compiles ours at each import, and keeps none when PYTHONDONTWRITEBYTECODE is set: compile
    # it first, as an install would, so that start-up is compared like for like.
    compileall.compile_dir(Path(leader_election_cli.__file__).parent, quiet=1)

    python = measure([sys.executable, "-c", "pass"], runs)
    help_ = measure([str(BIN / "kafka-leader-election"), "--help"], runs)
    rows = [("python -c pass", python, None), ("kafka-leader-election --help", help_, 0.15)]
    with Sandbox(brokers=3, mode="kraft") as sb:
        sb.create_topic("bench", assignment={0: [1, 2, 3]})
        host, port = sb.brokers[1]
        ours_argv = [str(BIN / "kafka-leader-election"), "--bootstrap-server", sb.bootstrap_servers,
                     "--election-type", "preferred", "--topic", "bench", "--partition", "0", "--output", "text"]
        theirs_argv = [sys.executable, "-m", "kafka.admin", "-b", sb.bootstrap_servers, "partitions",
                       "elect-leaders", "--election-type", "preferred", "-p", "bench:0", "--no-raise-errors"]
        floor_argv = [sys.executable, str(FLOOR), f"{host}:{port}", "bench", "0"]
        timings: dict[str, list[float]] = {"ours": [], "theirs": [], "floor": []}
        requests: dict[str, int] = {}
        for _ in range(runs):  # interleaved, so all see the same machine load
            for name, argv in (("ours", ours_argv), ("theirs", theirs_argv), ("floor", floor_argv)):
                sb.set_leader("bench", 0, 2)
                sent = sb.request_count()
                timings[name].append(wall_seconds(argv))
                requests[name] = sb.request_count() - sent
        sb.set_leader("bench", 0, 2)
        election = (statistics.median(timings["ours"]), peak_mib(ours_argv))
        sb.set_leader("bench", 0, 2)
        kafka_python = (statistics.median(timings["theirs"]), peak_mib(theirs_argv))
        sb.set_leader("bench", 0, 2)
        floor = (statistics.median(timings["floor"]), peak_mib(floor_argv))
    rows += [("one-partition election (ours)", election, None),
             ("python -m kafka.admin ... elect-leaders", kafka_python, None),
             ("raw-socket floor (ApiVersions + ElectLeaders)", floor, None)]

    print(f"{'command':42} {'median s':>9} {'max RSS MiB':>12}  target")
    for name, (seconds, mib), target in rows:
        goal = f"< {target} s" if target else ""
        print(f"{name:42} {seconds:9.3f} {mib:12.1f}  {goal}")
    print()
    print(f"--help vs python -c pass:            {help_[0] / python[0]:.2f}x the time")
    print(f"election vs kafka-python's CLI:      {election[0] / kafka_python[0]:.2f}x the time "
          f"(target <= 0.67), {election[1] / kafka_python[1]:.2f}x the memory")
    print(f"election vs the raw-socket floor:    {election[0] / floor[0]:.2f}x the time (target <= 2.00)")
    print(f"requests per election: ours {requests['ours']}, kafka-python's CLI {requests['theirs']}, "
          f"floor {requests['floor']} (target <= 4)")
    print(json.dumps({"benchmark": "drop_in", "figures": [  # the last line: read by benchmarks/run
        {"name": "python -c pass", "value": python[0], "unit": "s"},
        {"name": "kafka-leader-election --help", "value": help_[0], "unit": "s", "target": 0.15},
        {"name": "--help / python -c pass", "value": help_[0] / python[0], "unit": "x"},
        {"name": "one-partition election", "value": election[0], "unit": "s"},
        {"name": "kafka-python CLI, same election", "value": kafka_python[0], "unit": "s"},
        {"name": "raw-socket floor, same election", "value": floor[0], "unit": "s"},
        {"name": "election time / raw-socket floor", "value": election[0] / floor[0], "unit": "x", "target": 2.0},
        {"name": "kafka-python CLI time / election time", "value": kafka_python[0] / election[0], "unit": "x",
         "target": 1.5, "goal": "min"},
        {"name": "election memory / kafka-python CLI", "value": election[1] / kafka_python[1], "unit": "x"},
        {"name": "requests per one-partition election", "value": requests["ours"], "unit": "requests",
         "target": 4},
        {"name": "requests, kafka-python CLI", "value": requests["theirs"], "unit": "requests"}]}))


if __name__ == "__main__":
    main()
