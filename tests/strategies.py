"""Hypothesis strategies for random clusters, shared by every test that needs one.

`cluster_states()` draws brokers (some dead), topics with or without a known min.insync.replicas, and
partitions with random replica orders, ISR subsets, leaders (none, in the ISR, possibly on a dead
broker), offline log directories and, in KRaft mode, eligible leader replicas (KIP-966) kept
consistent the way a KRaft controller keeps them: the ELR is disjoint from the ISR, exists only while
the ISR is below min.insync.replicas, and a last known leader is recorded only once both are empty.
"""

from __future__ import annotations

from hypothesis import strategies as st

from leader_election_cli.model import (
    NO_LEADER,
    ClusterState,
    ControllerMode,
    PartitionState,
    TopicPartition,
)


@st.composite
def partition_states(draw: st.DrawFn, topic: str, partition: int, broker_ids: list[int],
                     mode: ControllerMode, min_isr: int | None) -> PartitionState:
    """One partition over `broker_ids`; ELR fields only in KRaft mode."""
    size = draw(st.integers(1, min(4, len(broker_ids))))
    replicas = tuple(draw(st.permutations(broker_ids))[:size])
    isr = tuple(draw(st.permutations(replicas))[:draw(st.integers(0, size))])
    leader = draw(st.one_of(st.just(NO_LEADER), st.sampled_from(isr) if isr else st.nothing(),
                            st.sampled_from(replicas)))
    offline = tuple(r for r in replicas if draw(st.integers(0, 9)) == 0)
    elr: tuple[int, ...] = ()
    last_known: tuple[int, ...] = ()
    if mode is ControllerMode.KRAFT and len(isr) < (min_isr or 2):
        outside = [r for r in replicas if r not in isr]
        elr = tuple(r for r in outside if draw(st.booleans()))
        if not isr and not elr:
            last_known = tuple(draw(st.lists(st.sampled_from(replicas), max_size=2, unique=True)))
    return PartitionState(topic, partition, leader, replicas, isr, elr, last_known, offline)


@st.composite
def cluster_states(draw: st.DrawFn, max_brokers: int = 5, max_topics: int = 3, max_partitions: int = 4,
                   modes: tuple[ControllerMode, ...] = tuple(ControllerMode)) -> ClusterState:
    """A random cluster; `state.mode` is drawn from `modes`."""
    mode = draw(st.sampled_from(modes))
    broker_ids = list(range(1, draw(st.integers(1, max_brokers)) + 1))
    live = [b for b in broker_ids if draw(st.integers(0, 3)) > 0]
    partitions: dict[TopicPartition, PartitionState] = {}
    min_isr: dict[str, int] = {}
    for t in range(draw(st.integers(1, max_topics))):
        topic = f"t{t}"
        topic_min_isr = draw(st.none() | st.integers(1, 3))
        if topic_min_isr is not None:
            min_isr[topic] = topic_min_isr
        for p in range(draw(st.integers(1, max_partitions))):
            partitions[TopicPartition(topic, p)] = draw(
                partition_states(topic, p, broker_ids, mode, topic_min_isr))
    reassigning = {tp: () for tp in partitions if draw(st.integers(0, 9)) == 0}
    return ClusterState(
        brokers={b: ("127.0.0.1", 9090 + b) for b in live},
        controller_id=live[0] if live else NO_LEADER,
        partitions=partitions,
        mode=mode,
        cluster_id="random-cluster",
        min_insync_replicas=min_isr,
        reassigning=reassigning,
    )
