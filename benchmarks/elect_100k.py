"""Client-side cost of planning and electing 100,000 partitions against the sandbox.

The sandbox runs in its own process (`kafka-leaders sandbox`), so its work is not counted; each client
command runs as a real process too, and its CPU time (user + system) and peak resident memory come from
the kernel's accounting of that process. Figures are printed beside their targets; nothing asserts.
Run:
    .venv/bin/python benchmarks/elect_100k.py [--partitions 100000] [--mode kraft] [--batch-size 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

TOOLKIT = [sys.executable, "-c", "from leader_election_cli.cli.toolkit import main; main()"]
IMPORTS = "import leader_election_cli.cli.elect_command, leader_election_cli.execution, leader_election_cli.render"
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


def measure(args: list[str], output: Path, sandbox_pid: int) -> Usage:
    """Run one client command to completion; its own CPU time and peak memory, as the kernel counted them."""
    sandbox_before = sandbox_cpu(sandbox_pid)
    started = time.perf_counter()
    with output.open("w") as out:
        process = subprocess.Popen(args, stdout=out, stderr=subprocess.PIPE, text=True)
        _, status, rusage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args[3:5])} exited {process.returncode}: {process.stderr.read()}")
    sandbox_after = sandbox_cpu(sandbox_pid)
    spent = None if sandbox_before is None or sandbox_after is None else sandbox_after - sandbox_before
    return Usage(wall, rusage.ru_utime + rusage.ru_stime, rusage.ru_maxrss / 1024, spent)


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--mode", choices=["kraft", "zk"], default="kraft")
    parser.add_argument("--batch-size", type=int, default=1000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="elect-100k-") as work:
        ready, out = Path(work) / "ready.json", Path(work) / "out.json"
        sandbox, bootstrap = start_sandbox(args.partitions, args.mode, ready)
        try:
            common = ["--bootstrap-server", bootstrap, "--all-topic-partitions", "--output", "json",
                      "--batch-size", str(args.batch_size)]
            show("start-up and imports alone", measure([sys.executable, "-c", IMPORTS], out, sandbox.pid))
            usage = measure([*TOOLKIT, "plan", *common], out, sandbox.pid)
            summary = json.loads(out.read_text())["summary"]
            show(f"plan {summary['total']:,} partitions", usage)
            print(f"{'':<34} {summary['predicted']:,} predicted")
            usage = measure([*TOOLKIT, "elect", *common], out, sandbox.pid)
            summary = json.loads(out.read_text())["summary"]
            show(f"elect {summary['total']:,} partitions", usage)
            print(f"{'':<34} {summary['elected']:,} elected, {summary['already_elected']:,} already elected, "
                  f"{summary['failed']:,} failed, in batches of {args.batch_size}")
        finally:
            sandbox.send_signal(signal.SIGINT)
            sandbox.wait(timeout=60)
    print(json.dumps({"benchmark": "elect_100k", "figures": FIGURES}))


if __name__ == "__main__":
    main()
