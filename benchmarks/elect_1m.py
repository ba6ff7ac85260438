"""1,000,000 partitions in one command: the drop-in without --batch-size, `status` and `plan`, and the
slope from 100,000 to 1,000,000 partitions.

For each size, a fresh sandbox (`kafka-leaders sandbox --scenario imbalanced`, its own process, not
counted) holds the partitions over 10 topics, about a third led off their preferred replica. Then, as
real processes whose CPU time and peak memory the kernel counts: `kafka-leaders status`, `kafka-leaders
plan --all-topic-partitions`, and `kafka-leader-election --all-topic-partitions --election-type
preferred` (no --batch-size: requests of at most 10,000, partitions already on their preferred replica
left out). The figures are printed beside their targets; nothing asserts. The sandbox takes a while to
build at 1,000,000 partitions. Run:
    .venv/bin/python benchmarks/elect_1m.py [--sizes 100000 1000000]
"""

from __future__ import annotations

import argparse
import compileall
import json
import signal
import sys
import tempfile
from pathlib import Path

from elect_100k import TOOLKIT, Usage, measure, start_sandbox

import leader_election_cli

DROP_IN = [sys.executable, "-c", "from leader_election_cli.cli.drop_in import main; main()"]
TARGETS = {"drop-in": (12.0, 1200), "status": (6.0, None), "plan": (6.0, None)}  # CPU s, peak MiB


def one_size(partitions: int, work: Path) -> dict[str, Usage]:
    ready, out = work / "ready.json", work / "out.json"
    ready.unlink(missing_ok=True)
    sandbox, bootstrap = start_sandbox(partitions, "kraft", ready)
    try:
        # CPU is measured: a loaded machine's slow answers (a 1,000,000-partition Metadata answer is ~40 MB)
        # must not end the run, so requests get five minutes
        config = work / "client.properties"
        config.write_text("request.timeout.ms=300000\ndefault.api.timeout.ms=300000\n")
        server = ["--bootstrap-server", bootstrap, "--command-config", str(config)]
        usages = {"status": measure([*TOOLKIT, "status", *server, "--output", "json"], out, sandbox.pid)}
        usages["plan"] = measure([*TOOLKIT, "plan", *server, "--all-topic-partitions", "--output", "json"], out,
                                 sandbox.pid)
        predicted = json.loads(out.read_text())["summary"]
        usage = measure([*DROP_IN, *server, "--election-type", "preferred", "--all-topic-partitions",
                         "--output", "json"], out, sandbox.pid)
        summary = json.loads(out.read_text())["summary"]
        usages["drop-in"] = usage
        print(f"  {partitions:,} partitions: drop-in exit {summary['exit_code']}, {summary['elected']:,} elected, "
              f"{summary['already_elected']:,} already elected, {summary['failed']:,} failed "
              f"(plan: {predicted['total']:,} predicted)")
        return usages
    finally:
        sandbox.send_signal(signal.SIGINT)
        sandbox.wait(timeout=300)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100_000, 1_000_000])
    sizes = parser.parse_args().sizes
    compileall.compile_dir(Path(leader_election_cli.__file__).parent, quiet=1)
    figures: list[dict[str, object]] = []
    results: dict[int, dict[str, Usage]] = {}
    with tempfile.TemporaryDirectory(prefix="elect-1m-") as work:
        for size in sizes:
            results[size] = one_size(size, Path(work))
    for size, usages in results.items():
        for command, usage in usages.items():
            cpu_target, mib_target = TARGETS[command] if size >= 1_000_000 else (None, None)
            print(f"{command:>8} {size:>9,}: client {usage.cpu:6.2f} s CPU, peak {usage.peak_mib:7.1f} MiB, "
                  f"wall {usage.wall:6.2f} s")
            figures.append({"name": f"{command} {size:,}: client CPU", "value": usage.cpu, "unit": "s",
                            "target": cpu_target})
            figures.append({"name": f"{command} {size:,}: peak memory", "value": usage.peak_mib, "unit": "MiB",
                            "target": mib_target})
    if len(sizes) >= 2:
        small, large = sizes[0], sizes[-1]
        for command in TARGETS:
            growth = results[large][command].cpu / results[small][command].cpu
            print(f"{command:>8}: client CPU x{growth:.1f} from {small:,} to {large:,} partitions "
                  f"(x{large / small:.0f} the partitions: linear)")
            figures.append({"name": f"{command}: CPU growth {small:,} -> {large:,}", "value": growth, "unit": "x",
                            "target": large / small * 1.2})
    print(json.dumps({"benchmark": "elect_1m", "figures": figures}))


if __name__ == "__main__":
    main()
