"""Leadership balance on a skewed cluster: this solver against the kafka-tools greedy.

The cluster: 24 brokers, replication factor 3, preferred leaders concentrated as after adding brokers
(four in five partitions prefer one of brokers 1-4, the rest one of brokers 1-12; the followers are
anywhere). Each size runs in a fresh process, which reports the time to solve, the peak resident
memory of that process (the ClusterState it reads included), the maximum of leaders per broker and
the partitions changed by each method, and the proven lower bound; then the
weighted heuristic (lognormal log sizes) and its gap to its lower bound. Nothing asserts. Run:
    .venv/bin/python benchmarks/leadership_balance.py [--sizes 10000,100000,1000000]
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

from leader_election_cli.model import ClusterState, PartitionState, TopicPartition
from leader_election_cli.planning.leadership_balance import solve_leadership

sys.path.insert(0, str(Path(__file__).resolve().parent))
from kafka_tools_greedy import greedy_leaders  # noqa: E402

BROKERS = 24
TARGET_SECONDS = 10.0  # at 1,000,000 partitions
TARGET_MIB = 1024


def skewed(partitions: int, seed: int = 7) -> ClusterState:
    rng = random.Random(seed)
    brokers = list(range(1, BROKERS + 1))
    interned: dict[tuple[int, ...], tuple[int, ...]] = {}
    states = {}
    for i in range(partitions):
        first = rng.randint(1, 4) if rng.random() < 0.8 else rng.randint(1, 12)
        followers = rng.sample([b for b in brokers if b != first], 2)
        replicas = (first, *followers)
        replicas = interned.setdefault(replicas, replicas)
        topic, number = f"topic-{i // 1000}", i % 1000
        states[TopicPartition(topic, number)] = PartitionState(topic, number, first, replicas, replicas)
    return ClusterState({b: ("127.0.0.1", 9000 + b) for b in brokers}, 1, states)


def peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(partitions: int) -> dict:
    state = skewed(partitions)
    state_mib = peak_mib()
    started = time.perf_counter()
    plan = solve_leadership(state)
    seconds = time.perf_counter() - started
    solve_mib = peak_mib()
    started = time.perf_counter()
    greedy = greedy_leaders(state)
    greedy_seconds = time.perf_counter() - started
    leaders = Counter(greedy.get(tp, p.replicas)[0] for tp, p in state.partitions.items())
    rng = random.Random(3)  # weights as log sizes: lognormal around 500 MB
    weights = {tp: rng.lognormvariate(20, 1.0) for tp in state.partitions}
    started = time.perf_counter()
    load = solve_leadership(state, weights=weights).load
    weighted = {"weighted_seconds": time.perf_counter() - started, "gap": load.gap,
                "seed_ratio": load.count_solution_max / load.lower_bound}
    return {**weighted, "partitions": partitions, "seconds": seconds, "state_mib": state_mib, "peak_mib": solve_mib,
            "max_before": plan.max_before, "max_after": plan.max_after, "lower_bound": plan.lower_bound,
            "average": -(-partitions // BROKERS), "changed": len(plan.changes), "spread": plan.spread_after,
            "greedy_max": max(leaders.values()), "greedy_changed": len(greedy), "greedy_seconds": greedy_seconds}


def label(n: int) -> str:
    return f"{n // 1_000_000}M" if n >= 1_000_000 else f"{n // 1000}k"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)  # the child process: one size
    args = parser.parse_args()
    if args.one:
        print(json.dumps(measure(args.one)))
        return
    figures = []
    for size in map(int, args.sizes.split(",")):
        child = subprocess.run([sys.executable, __file__, "--one", str(size)], capture_output=True, text=True,
                               check=True)
        r = json.loads(child.stdout.splitlines()[-1])
        name = label(size)
        print(f"{size:>9,} partitions: max leaders {r['max_before']:,} -> {r['max_after']:,} (lower bound "
              f"{r['lower_bound']:,}, average {r['average']:,}, spread {r['spread']}), {r['changed']:,} changed, "
              f"{r['seconds']:.2f} s, peak {r['peak_mib']:.0f} MiB (state alone {r['state_mib']:.0f} MiB); "
              f"kafka-tools greedy: max {r['greedy_max']:,}, {r['greedy_changed']:,} changed, "
              f"{r['greedy_seconds']:.2f} s")
        big = size >= 1_000_000
        figures += [
            {"name": f"{name}: max leaders per broker", "value": r["max_after"], "unit": "",
             "target": r["lower_bound"]},
            {"name": f"{name}: max leaders, kafka-tools greedy", "value": r["greedy_max"], "unit": "", "target": None},
            {"name": f"{name}: partitions changed", "value": r["changed"], "unit": "", "target": None},
            {"name": f"{name}: partitions changed, kafka-tools greedy", "value": r["greedy_changed"], "unit": "",
             "target": None},
            {"name": f"{name}: solve time", "value": r["seconds"], "unit": "s",
             "target": TARGET_SECONDS if big else None},
            {"name": f"{name}: peak memory (with the cluster state)", "value": r["peak_mib"], "unit": "MiB",
             "target": TARGET_MIB if big else None},
        ]
        print(f"{'':>9} weighted by log size: {r['weighted_seconds']:.2f} s, heaviest load {r['gap']:.2e} above "
              f"the lower bound (relative; the count solution's: {r['seed_ratio'] - 1:.2%})")
        figures += [
            {"name": f"{name}: weighted, gap to the lower bound", "value": 100 * r["gap"], "unit": "%",
             "target": None},
            {"name": f"{name}: weighted, solve time", "value": r["weighted_seconds"], "unit": "s", "target": None},
        ]
    print(json.dumps({"benchmark": "leadership_balance", "figures": figures}))


if __name__ == "__main__":
    main()
