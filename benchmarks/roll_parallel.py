"""`roll --parallel auto` against the serial roll on the same sandbox: the wall time of restarting every broker.

A sandbox of 12 brokers on racks a, b, c (Kafka places each partition's replicas on the three racks), topics of
RF 3 and min.insync.replicas 2, each restart taking --catch-up seconds to come back (as `kafka-leaders sandbox
--catch-up-seconds` does), is rolled serially, then in rounds (`--parallel auto`: one per rack), the restart
command `sandbox-ctl restart-broker`. The target (issue 45): the parallel roll in at most half the serial roll's
wall time. Nothing asserts.

    .venv/bin/python benchmarks/roll_parallel.py [--partitions 1200] [--catch-up 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer

KL = str(Path(sys.executable).parent / "kafka-leaders")
RATIO_TARGET = 0.5  # the parallel roll's wall time over the serial one's, at most


def roll(sb: Sandbox, control: ControlServer, directory: str, *args: str) -> tuple[float, dict]:
    command = f"{shlex.quote(KL)} sandbox-ctl --control {shlex.quote(control.path)} restart-broker {{broker}}"
    started = time.perf_counter()
    result = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "all", "--exec",
                             command, "--output", "json", "--state-file", str(Path(directory) / f"{time.time()}.json"),
                             *args], capture_output=True, text=True, timeout=3600,
                            env={**os.environ, "XDG_STATE_HOME": directory})
    wall = time.perf_counter() - started
    if result.returncode != 0:
        sys.exit(f"roll {' '.join(args)} failed (exit {result.returncode}): {result.stderr.strip()[-300:]}")
    return wall, json.loads(result.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=1200)
    parser.add_argument("--catch-up", type=float, default=3.0)
    args = parser.parse_args()
    racks = {b: "abc"[(b - 1) % 3] for b in range(1, 13)}
    with Sandbox(12, racks=racks, broker_configs={"auto.leader.rebalance.enable": "false"}) as sb:
        for t in range(4):
            sb.create_topic(f"t{t}", args.partitions // 4, 3, configs={"min.insync.replicas": "2"})
        control = ControlServer(sb, args.catch_up).start()
        try:
            with tempfile.TemporaryDirectory() as directory:
                serial, _ = roll(sb, control, directory)
                parallel, report = roll(sb, control, directory, "--parallel", "auto")
        finally:
            control.stop()
    rounds = report["rounds"]
    print(f"12 brokers on 3 racks, {args.partitions:,} partitions (RF 3, min ISR 2), a restart back in "
          f"{args.catch_up:g} s: serial roll {serial:.1f} s; --parallel auto {parallel:.1f} s in {len(rounds)} rounds "
          f"{rounds} (proven fewest: {report['rounds_bound']['proven']}); ratio {parallel / serial:.2f}")
    print(json.dumps({"benchmark": "roll_parallel", "figures": [
        {"name": "roll --parallel auto / serial roll, wall time (12 brokers, 3 racks)",
         "value": round(parallel / serial, 3), "unit": "x", "target": RATIO_TARGET},
        {"name": "  serial roll", "value": round(serial, 1), "unit": "s", "target": None},
        {"name": "  --parallel auto", "value": round(parallel, 1), "unit": "s", "target": None},
        {"name": "  rounds", "value": len(rounds), "unit": "", "target": 3}]}))


if __name__ == "__main__":
    main()
