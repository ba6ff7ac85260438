"""Client-side cost of planning and electing 100,000 partitions against the sandbox.

The sandbox runs in its own process (`kafka-leaders sandbox`), so its work is not counted; each client
command runs as a real process too, and its CPU time (user + system) and peak resident memory come from
the kernel's accounting of that process. Each round starts a fresh sandbox; the figures are medians
over the rounds (3 by default), printed beside their targets; nothing asserts.
Run:
    .venv/bin/python benchmarks/elect_100k.py [--partitions 100000] [--mode kraft] [--batch-size 1000] [--rounds 3]
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

import leader_election_cli

TOOLKIT = [sys.executable, "-c", "from leader_election_cli.cli.toolkit import main; main()"]
IMPORTS = ("import leader_election_cli.cli.elect_command, leader_election_cli.operations.execution, "
           "leader_election_cli.render.election")
TARGET_SECONDS = 3.0
TARGET_MIB = 300
TOPICS = 10


class Usage(NamedTuple):
    wall: float
    cpu: float  # user + system seconds of the client process
    peak_mib: float  # its peak resident set
    sandbox_cpu: float | None  # what the sandbox process spent meanwhile


def sandbox_cpu(pid: int) -> float | None:
    """user + system seconds of a process that is not our child (Linux /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# Run from a small Python process: a child's ru_maxrss starts at its parent's resident size when it
# forks (Linux keeps that high-water mark across exec), and this benchmark's process grows as it reads
# the 100,000-partition reports.
USAGE = """import os, subprocess, sys
with open(sys.argv[1], "w") as out:
    child = subprocess.Popen(sys.argv[2:], stdout=out, stderr=subprocess.PIPE, text=True)
    _, status, usage = os.wait4(child.pid, 0)
print(usage.ru_utime + usage.ru_stime, usage.ru_maxrss, os.waitstatus_to_exitcode(status))
print(child.stderr.read(), end="")"""


def measure(args: list[str], output: Path, sandbox_pid: int) -> Usage:
    """Run one client command to completion; its own CPU time and peak memory, as the kernel counted them."""
    sandbox_before = sandbox_cpu(sandbox_pid)
    started = time.perf_counter()
    result = subprocess.run([sys.executable, "-c", USAGE, str(output), *args], capture_output=True, text=True,
                            check=True)
    wall = time.perf_counter() - started
    first, _, stderr = result.stdout.partition("\n")
    cpu, maxrss, code = first.split()
    if int(code) not in (0, 1):
        raise SystemExit(f"{' '.join(args[3:5])} exited {code}: {stderr}")
    sandbox_after = sandbox_cpu(sandbox_pid)
    spent = None if sandbox_before is None or sandbox_after is None else sandbox_after - sandbox_before
    return Usage(wall, float(cpu), int(maxrss) / 1024, spent)


FIGURES: list[dict[str, object]] = []  # printed as the last line, for benchmarks/run


def show(label: str, usage: Usage) -> None:
    verdict = "ok" if usage.cpu <= TARGET_SECONDS and usage.peak_mib <= TARGET_MIB else "OVER TARGET"
    sandbox = "" if usage.sandbox_cpu is None else f"   (sandbox meanwhile: {usage.sandbox_cpu:5.2f} s CPU)"
    print(f"{label:<34} client {usage.cpu:5.2f} s CPU (target <= {TARGET_SECONDS:.0f} s), "
          f"peak {usage.peak_mib:6.1f} MiB (target <= {TARGET_MIB}), wall {usage.wall:5.2f} s  {verdict}{sandbox}")
    FIGURES.extend([{"name": f"{label}: client CPU", "value": usage.cpu, "unit": "s", "target": TARGET_SECONDS},
                    {"name": f"{label}: peak memory", "value": usage.peak_mib, "unit": "MiB", "target": TARGET_MIB}])


def start_sandbox(partitions: int, mode: str, ready: Path) -> tuple[subprocess.Popen, str]:
    process = subprocess.Popen([*TOOLKIT, "sandbox", "--brokers", "6", "--mode", mode, "--topics", str(TOPICS),
                                "--partitions", str(partitions // TOPICS), "--scenario", "imbalanced",
                                "--ready-file", str(ready)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 300
    while not ready.exists():
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            raise SystemExit(f"the sandbox did not start: {process.communicate()[1].decode()}")
        time.sleep(0.1)
    return process, json.loads(ready.read_text())["bootstrap_servers"]


def one_round(args: argparse.Namespace, work: Path) -> dict[str, Usage]:
    """Imports alone, then plan and elect against a fresh sandbox (elect changes the leaders)."""
    ready, out = work / "ready.json", work / "out.json"
    ready.unlink(missing_ok=True)
    sandbox, bootstrap = start_sandbox(args.partitions, args.mode, ready)
    try:
        common = ["--bootstrap-server", bootstrap, "--all-topic-partitions", "--output", "json"]
        usages = {"start-up and imports alone": measure([sys.executable, "-c", IMPORTS], out, sandbox.pid)}
        usage = measure([*TOOLKIT, "plan", *common], out, sandbox.pid)  # plan takes no --batch-size
        summary = json.loads(out.read_text())["summary"]
        usages[f"plan {summary['total']:,} partitions"] = usage
        print(f"  plan: {summary['predicted']:,} predicted; client {usage.cpu:.2f} s CPU")
        usage = measure([*TOOLKIT, "elect", *common, "--batch-size", str(args.batch_size)], out, sandbox.pid)
        summary = json.loads(out.read_text())["summary"]
        usages[f"elect {summary['total']:,} partitions"] = usage
        print(f"  elect: {summary['elected']:,} elected, {summary['already_elected']:,} already elected, "
              f"{summary['failed']:,} failed, in batches of {args.batch_size}; client {usage.cpu:.2f} s CPU")
        return usages
    finally:
        sandbox.send_signal(signal.SIGINT)
        sandbox.wait(timeout=60)


def median_usage(usages: list[Usage]) -> Usage:
    """Each figure's median over the rounds: a VM's CPU speed drifts from one run to the next."""
    sandbox = [u.sandbox_cpu for u in usages if u.sandbox_cpu is not None]
    return Usage(statistics.median(u.wall for u in usages), statistics.median(u.cpu for u in usages),
                 statistics.median(u.peak_mib for u in usages), statistics.median(sandbox) if sandbox else None)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--mode", choices=["kraft", "zk"], default="kraft")
    parser.add_argument("--batch-size", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3, help="Measure this many times; medians are shown.")
    args = parser.parse_args()
    # With PYTHONDONTWRITEBYTECODE set, an editable install compiles our modules at every start: compile
    # them first, as an install would, so that start-up costs what it costs an installed tool.
    compileall.compile_dir(Path(leader_election_cli.__file__).parent, quiet=1)
    with tempfile.TemporaryDirectory(prefix="elect-100k-") as work:
        rounds = []
        for number in range(1, args.rounds + 1):
            print(f"round {number} of {args.rounds}")
            rounds.append(one_round(args, Path(work)))
    print(f"medians over {args.rounds} round(s):")
    for label in rounds[0]:
        show(label, median_usage([r[label] for r in rounds]))
    print(json.dumps({"benchmark": "elect_100k", "figures": FIGURES}))


if __name__ == "__main__":
    main()
