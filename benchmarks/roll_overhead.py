"""The roll's own overhead per broker on a 100,000-partition sandbox: everything `kafka-leaders roll` does
but the --exec command and the wait for the restarted broker to catch up.

A sandbox of 6 brokers and 100,000 partitions (RF 3, leaders on their preferred replicas, about 16,700
led by each broker) is built in this process, and served as `kafka-leaders sandbox` serves it
(`gc_pause.long_lived_heap`); `kafka-leaders roll --exec 'kafka-leaders sandbox-ctl ...
restart-broker {broker}'` restarts --brokers of them (default 2) in another process, and its JSON report
gives each step's time. Per broker: the overhead is wait_safe + drain + restore (the steps that are the
roll's alone) and the roll's start-up, shared out: the wall time but the restart commands and the waits
for the brokers to come back (the catch-up, plus the poll that sees it, whose lag is shown apart).
Prints each figure beside its target; nothing asserts.

    .venv/bin/python benchmarks/roll_overhead.py [--partitions 100000] [--brokers-rolled 2] [--catch-up 2]
        [--kafka-version 4.1]
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

from leader_election_cli.gc_pause import long_lived_heap
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer
from leader_election_cli.sandbox.scenarios import build

KL = str(Path(sys.executable).parent / "kafka-leaders")
OVERHEAD_TARGET_S = 5.0  # per broker at 100,000 partitions (issue 39)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--brokers-rolled", type=int, default=2)
    parser.add_argument("--catch-up", type=float, default=2.0)
    parser.add_argument("--batch-size", type=int, default=1000, help="roll's --batch-size")
    parser.add_argument("--kafka-version", help="the sandbox's release (default: its default)")
    args = parser.parse_args()
    topics = 100
    started = time.perf_counter()
    with Sandbox(6, broker_configs={"auto.leader.rebalance.enable": "false"}, kafka_version=args.kafka_version) as sb:
        build(sb, "balanced", topics, args.partitions // topics, 3)
        print(f"built {args.partitions:,} partitions in {time.perf_counter() - started:.1f} s")
        control = ControlServer(sb, args.catch_up).start()
        try:
            with long_lived_heap(), tempfile.TemporaryDirectory() as directory:  # as `kafka-leaders sandbox` serves
                brokers = ",".join(str(b) for b in range(1, args.brokers_rolled + 1))
                command = (f"{shlex.quote(KL)} sandbox-ctl --control {shlex.quote(control.path)} "
                           "restart-broker {broker}")
                env = {**os.environ, "XDG_STATE_HOME": directory}
                started = time.perf_counter()
                result = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", brokers,
                                         "--exec", command, "--output", "json", "--timeout", "120",
                                         "--batch-size", str(args.batch_size),
                                         "--state-file", str(Path(directory) / "roll.json")],
                                        capture_output=True, text=True, env=env, timeout=3600)
                wall = time.perf_counter() - started
        finally:
            control.stop()
    if result.returncode != 0:
        sys.exit(f"roll failed (exit {result.returncode}): {result.stderr.strip().splitlines()[-1:]}")
    report = json.loads(result.stdout)
    figures = []
    overheads = []
    for b in report["brokers"]:
        steps = {s["step"]: s for s in b["steps"]}
        own = sum(steps[s]["seconds"] for s in ("wait_safe", "drain", "restore"))
        overheads.append(own)
        print(f"broker {b['broker']}: " + ", ".join(f"{name} {s['seconds']:.2f} s" for name, s in steps.items())
              + f"; moved {steps['drain']['moved']:,} off and {steps['restore']['moved']:,} back; overhead {own:.2f} s")
    steps_of = [{s["step"]: s["seconds"] for s in b["steps"]} for b in report["brokers"]]
    n = len(steps_of)
    mean = {name: sum(s[name] for s in steps_of) / n for name in steps_of[0]}
    per_broker = (wall - sum(s["restart"] + s["wait_back"] for s in steps_of)) / n
    print(f"whole roll of {n} broker(s): {wall:.1f} s; its own overhead per broker (the wall time but the "
          f"commands and the waits for the brokers to come back, start-up included): {per_broker:.2f} s "
          f"(target <= {OVERHEAD_TARGET_S:g} s); its steps alone: {sum(overheads) / n:.2f} s")
    figures.append({"name": f"roll overhead per broker, {args.partitions:,} partitions", "value": round(per_broker, 2),
                    "unit": "s", "target": OVERHEAD_TARGET_S})
    for name in ("wait_safe", "drain", "restore"):
        figures.append({"name": f"  of which {name}", "value": round(mean[name], 2), "unit": "s", "target": None})
    figures.append({"name": f"  wait_back beyond the catch-up ({args.catch_up:g} s): the polls' lag",
                    "value": round(mean["wait_back"] - args.catch_up, 2), "unit": "s", "target": None})
    print(json.dumps({"benchmark": "roll_overhead", "figures": figures}))


if __name__ == "__main__":
    main()
