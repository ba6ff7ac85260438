"""Ready-made cluster situations for rehearsals, and a summary of what a sandbox looks like now.

- balanced: every partition led by its preferred replica.
- imbalanced: a fixed pseudo-random pick of partitions (each with odds of one in three) led by another in-sync
  replica while their preferred replica stays live and in the ISR, so a preferred election puts
  them back.
- broker-down: the highest-numbered broker stopped; its partitions moved to other replicas and a
  preferred election cannot bring them back until it returns.
- leaderless: the partitions preferring broker 1 had only it in their ISR when it stopped, so they
  have no leader; only an unclean election (data loss possible), or broker 1's return, brings them back
  (with ELR, Kafka 4.1's default, broker 1 is their eligible leader replica; without it, their ISR).
- no-controller (KRaft): as imbalanced, then two of the three controllers stopped: the controller quorum
  has no leader, so the brokers answer from their metadata but hold what they forward to the controller
  (an election, a reassignment) until they answer REQUEST_TIMED_OUT, 60 s later, as Kafka's do.
- skewed: as after adding brokers: every preferred replica (and so every leader) is on one of the
  first third of the brokers (at least one), the followers spread over all of them. Leadership is
  badly spread although every partition is led by its preferred replica, so no preferred election
  (nor Kafka's automatic rebalance) changes anything; only new replica orders do.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox.control import Sandbox
from leader_election_cli.sandbox.controller.cluster import random_assignment

SCENARIOS = ("balanced", "imbalanced", "broker-down", "leaderless", "no-controller", "skewed")


def topic_names(count: int) -> list[str]:
    return [f"topic-{i}" for i in range(1, count + 1)]


def build(sb: Sandbox, scenario: str, topics: int, partitions: int, replication_factor: int,
          configs: dict[str, str] | None = None, placement: str = "kafka") -> None:
    """Create the topics (placed as Kafka places them, round-robin or rack-aware; `placement` random: at random,
    seeded; skewed: `skewed_assignment`) with `configs`, then bring the cluster into `scenario`."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; choose one of {', '.join(SCENARIOS)}")
    names = topic_names(topics)
    draw = random.Random(7)
    for offset, name in enumerate(names):
        if placement == "random" and scenario != "skewed":
            sb.create_topic(name, assignment=random_assignment(sorted(sb.live_brokers), partitions,
                                                               replication_factor, draw), configs=configs)
        elif scenario == "skewed":
            sb.create_topic(name, assignment=skewed_assignment(sorted(sb.live_brokers), partitions,
                                                               replication_factor, offset * partitions),
                            configs=configs)
        else:
            sb.create_topic(name, partitions=partitions, replication_factor=replication_factor, configs=configs)
    if scenario == "no-controller" and sb.mode != "kraft":
        raise ValueError("the no-controller scenario is KRaft's (a controller quorum); use --mode kraft")
    if scenario in ("imbalanced", "no-controller"):
        pick = random.Random(42)
        for name in names:
            for pid in range(partitions):
                state = sb.partition_state(name, pid)
                if pick.random() < 1 / 3 and len(state.isr) > 1:
                    sb.set_leader(name, pid, next(r for r in state.isr if r != state.replicas[0]))
        if scenario == "no-controller":
            sb.stop_controller(1001)
            sb.stop_controller(1002)
    elif scenario == "broker-down" and len(sb.brokers) > 1:
        sb.stop_broker(max(sb.brokers))
    elif scenario == "leaderless":
        for name in names:
            for pid in range(partitions):
                state = sb.partition_state(name, pid)
                if state.replicas[0] == 1:
                    sb.set_isr(name, pid, [1])
        sb.stop_broker(1)


def skewed_assignment(brokers: list[int], partitions: int, replication_factor: int,
                      start: int = 0) -> dict[int, list[int]]:
    """Preferred replicas taken in turn from the first third of `brokers` (at least one), followers in
    turn from the others, so that every broker holds replicas but only a few are preferred."""
    if not 1 <= replication_factor <= len(brokers):
        raise ValueError(f"replication factor {replication_factor} needs 1 to {len(brokers)} brokers")
    preferred = brokers[:max(1, len(brokers) // 3)]
    assignment = {}
    for pid in range(partitions):
        n = start + pid
        first = preferred[n % len(preferred)]
        rest = [b for b in brokers if b != first]
        assignment[pid] = [first, *(rest[(n + k) % len(rest)] for k in range(replication_factor - 1))]
    return assignment


@dataclass(frozen=True)
class BrokerSummary:
    broker: int
    address: str
    live: bool
    leaders: int  # partitions it leads
    preferred: int  # partitions whose preferred replica it is
    rack: str | None = None  # broker.rack


@dataclass(frozen=True)
class Summary:
    brokers: list[BrokerSummary]
    partitions: int
    off_preferred: list[str]  # led by a replica other than the preferred one
    leaderless: list[str]
    under_min_isr: list[str]


def summarize(sb: Sandbox) -> Summary:
    cluster = sb.cluster
    with cluster.lock:
        leaders = {b: 0 for b in cluster.broker_ids}
        preferred = {b: 0 for b in cluster.broker_ids}
        off, leaderless, under, total = [], [], [], 0
        for topic in cluster.topics.values():
            for pid, p in enumerate(topic.partitions):
                total += 1
                name = f"{topic.name}-{pid}"
                preferred[p.replicas[0]] += 1
                if p.leader == NO_LEADER:
                    leaderless.append(name)
                else:
                    leaders[p.leader] += 1
                    if p.leader != p.replicas[0]:
                        off.append(name)
                if len(p.isr) < topic.min_isr:
                    under.append(name)
        brokers = [BrokerSummary(b, "{}:{}".format(*cluster.addresses[b]), b in cluster.live, leaders[b], preferred[b],
                                 cluster.racks.get(b))
                   for b in cluster.broker_ids]
    return Summary(brokers, total, off, leaderless, under)
