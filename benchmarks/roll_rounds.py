"""roll --parallel's restart rounds (`planning/rounds.plan_rounds`) at 100 brokers and 100,000 partitions.

Four placements, each built in this process, then planned with a 5 s solver limit (the time shown is the whole
plan_rounds call: reading the partitions into limits, the greedy colouring, the clique, CP-SAT):

- random: each partition's 3 replicas on 3 brokers at random, min ISR 2 (the issue's case: computed within 10 s,
  proven minimal or within 1 of the lower bound). So dense that every two brokers share a partition: no two may
  restart together, and the clique of all of them proves it;
- racks: 3 racks, each partition's replicas on 3 distinct racks (at random within each), min ISR 2: one round a
  rack, found without the racks;
- RF 5 on 5 racks, min ISR 2: three racks at once, 2 rounds, where "no replica in common" takes 5;
- sparse random: 1,000 partitions (RF 3, min ISR 2) on the 100 brokers, a conflict graph of about half the
  pairs, where the count is hard to prove: the rounds found beside the lower bound.

Prints each placement's rounds, lower bound, serial count and time; nothing asserts. Run:
    .venv/bin/python benchmarks/roll_rounds.py [--brokers 100] [--partitions 100000] [--time-limit 5]
"""

from __future__ import annotations

import argparse
import json
import random
import time

from leader_election_cli.model import ClusterState, PartitionState, TopicPartition
from leader_election_cli.planning.rounds import Rounds, plan_rounds

TARGET_SECONDS = 10.0  # the random placement at 100 brokers and 100,000 partitions (issue 45)
TARGET_GAP = 1  # rounds above the lower bound


def placed(brokers: int, partitions: int, rf: int, racks: int, seed: int) -> ClusterState:
    """Replicas at random: on `rf` distinct racks of `racks` (broker b on rack b % racks), or anywhere (racks 0)."""
    rng = random.Random(seed)
    ids = list(range(1, brokers + 1))
    on_rack = [[b for b in ids if b % racks == r] for r in range(racks)]
    interned: dict[tuple[int, ...], tuple[int, ...]] = {}
    states = {}
    for i in range(partitions):
        replicas = tuple(rng.choice(on_rack[r]) for r in rng.sample(range(racks), rf)) if racks \
            else tuple(rng.sample(ids, rf))
        replicas = interned.setdefault(replicas, replicas)
        topic, number = f"topic-{i // 1000}", i % 1000
        states[TopicPartition(topic, number)] = PartitionState(topic, number, replicas[0], replicas, replicas)
    topics = {tp.topic for tp in states}
    return ClusterState({b: ("127.0.0.1", 9000 + b) for b in ids}, 1, states,
                        min_insync_replicas=dict.fromkeys(topics, 2), min_isr_capped=True)


def measure(state: ClusterState, time_limit: float) -> tuple[Rounds, float]:
    started = time.perf_counter()
    rounds = plan_rounds(state, sorted(state.live_brokers), last=1, time_limit_s=time_limit)
    return rounds, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--brokers", type=int, default=100)
    parser.add_argument("--partitions", type=int, default=100_000)
    parser.add_argument("--time-limit", type=float, default=5.0, help="plan_rounds' time_limit_s")
    args = parser.parse_args()
    n, size = args.brokers, args.partitions
    cases = {
        "random": placed(n, size, 3, 0, 45),
        "racks": placed(n, size, 3, 3, 45),
        "RF 5 on 5 racks": placed(n, size, 5, 5, 45),
        "sparse random": placed(n, max(size // 100, 1), 3, 0, 45),
    }
    figures = []
    for name, state in cases.items():
        rounds, seconds = measure(state, args.time_limit)
        sizes = sorted(len(r) for r in rounds.rounds)
        print(f"{name:>15}: {len(state.partitions):>7,} partitions, {len(rounds.rounds)} rounds "
              f"({'proven minimal' if rounds.proven else f'lower bound {rounds.lower_bound}'}; serial "
              f"{rounds.serial}; clique {len(rounds.conflicts)}), {sizes[0]}-{sizes[-1]} brokers a round, "
              f"{seconds:.2f} s")
        headline = name == "random"
        figures += [
            {"name": f"{name}: time", "value": seconds, "unit": "s", "target": TARGET_SECONDS if headline else None},
            {"name": f"{name}: rounds", "value": len(rounds.rounds), "unit": "", "target": None},
            {"name": f"{name}: rounds above the lower bound", "value": len(rounds.rounds) - rounds.lower_bound,
             "unit": "", "target": TARGET_GAP if headline else None},
            {"name": f"{name}: lower bound", "value": rounds.lower_bound, "unit": "", "target": None},
            {"name": f"{name}: serial rounds", "value": rounds.serial, "unit": "", "target": None},
        ]
    print(json.dumps({"benchmark": "roll_rounds", "figures": figures}))


if __name__ == "__main__":
    main()
