"""Ready-made cluster situations for rehearsals, and a summary of what a sandbox looks like now.

- balanced: every partition led by its preferred replica.
- imbalanced: a fixed pseudo-random pick of partitions (each with odds of one in three) led by another in-sync
  replica while their preferred replica stays live and in the ISR, so a preferred election puts
  them back.
- broker-down: the highest-numbered broker stopped; its partitions moved to other replicas and a
  preferred election cannot bring them back until it returns.
- leaderless: the partitions preferring broker 1 had only it in their ISR when it stopped, so they
  have no leader; only an unclean election (data loss possible) brings them back.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox.control import Sandbox

SCENARIOS = ("balanced", "imbalanced", "broker-down", "leaderless")


def topic_names(count: int) -> list[str]:
    return [f"topic-{i}" for i in range(1, count + 1)]


def build(sb: Sandbox, scenario: str, topics: int, partitions: int, replication_factor: int) -> None:
    """Create the topics round-robin, then bring the cluster into `scenario`."""
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown scenario {scenario!r}; choose one of {', '.join(SCENARIOS)}")
    names = topic_names(topics)
    for name in names:
        sb.create_topic(name, partitions=partitions, replication_factor=replication_factor)
    if scenario == "imbalanced":
        pick = random.Random(42)
        for name in names:
            for pid in range(partitions):
                state = sb.partition_state(name, pid)
                if pick.random() < 1 / 3 and len(state.isr) > 1:
                    sb.set_leader(name, pid, next(r for r in state.isr if r != state.replicas[0]))
    elif scenario == "broker-down" and len(sb.brokers) > 1:
        sb.stop_broker(max(sb.brokers))
    elif scenario == "leaderless":
        for name in names:
            for pid in range(partitions):
                state = sb.partition_state(name, pid)
                if state.replicas[0] == 1:
                    sb.set_isr(name, pid, [1])
        sb.stop_broker(1)


@dataclass(frozen=True)
class BrokerSummary:
    broker: int
    address: str
    live: bool
    leaders: int  # partitions it leads
    preferred: int  # partitions whose preferred replica it is


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
        brokers = [BrokerSummary(b, "{}:{}".format(*cluster.addresses[b]), b in cluster.live, leaders[b], preferred[b])
                   for b in cluster.broker_ids]
    return Summary(brokers, total, off, leaderless, under)
