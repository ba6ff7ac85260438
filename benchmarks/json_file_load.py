"""Loading a 1,000,000-entry --path-to-json-file: wall time, CPU time and peak memory beside a 3 s target.

    .venv/bin/python benchmarks/json_file_load.py [--entries N] [--repeat R]

The load (read, parse, schema check of the document, exact check of every entry, duplicate check) runs
in a fresh interpreter per repeat, so the peak RSS is the load's own. The script also estimates what
validating every entry with jsonschema would cost, measured on 10,000 entries: the reason entries get a
fast exact check and jsonschema only describes the first bad one.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 3.0
SAMPLE = 10_000


def write_file(path: Path, entries: int) -> None:
    """A realistic file: 1,000 topics, partitions numbered within each topic."""
    document = {"partitions": [{"topic": f"orders.region-{i % 1000:04d}", "partition": i // 1000}
                               for i in range(entries)]}
    path.write_text(json.dumps(document))


def memory_mib(field: str) -> float:
    """VmRSS or VmHWM (peak) of this process from /proc: unlike ru_maxrss, not inherited from the parent."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"{field} not in /proc/self/status")


def child(path: str) -> None:
    """Runs in a fresh interpreter: load once, print the figures as JSON."""
    from leader_election_cli.selection.files import load_election_file

    baseline = memory_mib("VmRSS")
    wall, cpu = time.perf_counter(), time.process_time()
    partitions = load_election_file(path)
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(json.dumps({"entries": len(partitions), "wall": wall, "cpu": cpu,
                      "peak_mib": memory_mib("VmHWM"), "baseline_mib": baseline}))


def jsonschema_per_entry_seconds(path: Path) -> float:
    """Seconds per entry for validating every entry with jsonschema, measured on a sample."""
    from leader_election_cli.selection.files import shipped_schema, strict_validator

    sample = {"partitions": json.loads(path.read_text())["partitions"][:SAMPLE]}
    validator = strict_validator(shipped_schema("election-file"))
    start = time.perf_counter()
    validator.validate(sample)
    return (time.perf_counter() - start) / SAMPLE


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "election.json"
        write_file(path, args.entries)
        size_mb = path.stat().st_size / 1e6
        runs = [json.loads(subprocess.run([sys.executable, __file__, "--child", str(path)], check=True,
                                          capture_output=True, text=True).stdout) for _ in range(args.repeat)]
        per_entry = jsonschema_per_entry_seconds(path)
    best = min(runs, key=lambda run: run["wall"])
    print(f"election file: {best['entries']:,} entries, {size_mb:.1f} MB")
    print(f"load (read + parse + validate + duplicate check), best of {args.repeat}: "
          f"wall {best['wall']:.2f} s, CPU {best['cpu']:.2f} s; target {TARGET_SECONDS:.2f} s, "
          f"ratio {best['wall'] / TARGET_SECONDS:.2f} ({'met' if best['wall'] <= TARGET_SECONDS else 'MISSED'})")
    walls = ", ".join(f"{run['wall']:.2f} s" for run in runs)
    print(f"all runs, wall: {walls}")
    print(f"peak memory: {best['peak_mib']:.0f} MiB RSS ({best['peak_mib'] - best['baseline_mib']:.0f} MiB over the "
          f"interpreter with the package imported)")
    estimate = per_entry * args.entries
    print(f"jsonschema on every entry instead (estimated from {SAMPLE:,} entries): {estimate:.0f} s, "
          f"{estimate / best['wall']:.0f}x the fast check")
    print(json.dumps({"benchmark": "json_file_load", "figures": [  # the last line: read by benchmarks/run
        {"name": f"load {best['entries']:,} entries", "value": best["wall"], "unit": "s", "target": TARGET_SECONDS},
        {"name": "peak memory of the load", "value": best["peak_mib"], "unit": "MiB"}]}))


if __name__ == "__main__":
    main()
