"""The leader balance of LinkedIn's kafka-tools (`kafka-assigner balance --types leader`), re-implemented
from its description for comparison only: it is not part of the package.

For each partition in order (topic, then partition number), the new leader is the first replica that
leads nothing yet, else the replica with the lowest ratio of leaders so far to the partitions it holds
(the first such on a tie); it then swaps places with the first replica. The current order, liveness,
the ISR and load are not looked at.
"""

from __future__ import annotations

from collections import Counter

from leader_election_cli.model import ClusterState, TopicPartition


def greedy_leaders(state: ClusterState) -> dict[TopicPartition, tuple[int, ...]]:
    """The new replica order of every partition whose first replica changes."""
    holds = Counter(r for p in state.partitions.values() for r in p.replicas)
    leaders: Counter = Counter()
    changed = {}
    for tp in sorted(state.partitions):
        replicas = list(state.partitions[tp].replicas)
        choice = next((r for r in replicas if leaders[r] == 0), None)
        if choice is None:
            choice = min(replicas, key=lambda r: leaders[r] / holds[r])  # min keeps the first on a tie
        if choice != replicas[0]:
            at = replicas.index(choice)
            replicas[0], replicas[at] = replicas[at], replicas[0]
            changed[tp] = tuple(replicas)
        leaders[choice] += 1
    return changed
