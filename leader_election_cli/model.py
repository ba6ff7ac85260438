"""The data every layer shares: partitions, cluster state, election outcomes and the report.

Plain immutable values, no I/O. The cluster layer fills them from the wire, the planner reads them,
the executor writes `PartitionResult`s, which `reports` gathers for the renderers. The
per-partition values are named tuples (`_replace` makes a changed copy): an election over 100,000
partitions builds a few of them per partition, and a named tuple takes about 0.6 times as long to
build as a frozen dataclass.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum, IntEnum
from typing import NamedTuple

NO_LEADER = -1
# Kafka's consumer offsets topic: the leader of each of its partitions coordinates the consumer groups on it
OFFSETS_TOPIC = "__consumer_offsets"


class TopicPartition(NamedTuple):
    topic: str
    partition: int

    def __str__(self) -> str:  # Kafka's own spelling: topic-partition
        return f"{self.topic}-{self.partition}"


class ElectionType(IntEnum):
    """ElectLeaders' ElectionType field (KIP-460)."""

    PREFERRED = 0
    UNCLEAN = 1


class ControllerMode(str, Enum):
    KRAFT = "kraft"
    ZK = "zk"


class PartitionState(NamedTuple):
    """One partition as the cluster describes it."""

    topic: str
    partition: int
    leader: int
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()
    offline_replicas: tuple[int, ...] = ()

    @property
    def tp(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    @property
    def preferred(self) -> int | None:
        return self.replicas[0] if self.replicas else None


@dataclass(frozen=True)
class ClusterState:
    """A consistent read of the cluster: brokers, controller, partitions and topic settings."""

    brokers: dict[int, tuple[str, int]]  # live brokers: id -> (host, port)
    controller_id: int
    partitions: dict[TopicPartition, PartitionState]
    mode: ControllerMode | None = None  # None when it could not be detected
    cluster_id: str | None = None
    internal_topics: frozenset[str] = frozenset()
    min_insync_replicas: dict[str, int] = field(default_factory=dict)  # per topic, when read
    min_isr_unknown: frozenset[str] = frozenset()  # topics whose min.insync.replicas could not be read
    min_isr_capped: bool = False  # Kafka 3.7+: a leader applies at most its replica count (KAFKA-15583)
    # Pending reassignments, when read: partition -> the replicas each is adding.
    reassigning: dict[TopicPartition, tuple[int, ...]] = field(default_factory=dict)
    racks: dict[int, str] = field(default_factory=dict)  # broker.rack of the live brokers that have one
    features: dict[str, int] | None = None  # finalized feature levels (ApiVersions), when read

    @property
    def elr_enabled(self) -> bool | None:
        """Whether the cluster reports eligible.leader.replicas.version >= 1; None when not read."""
        return None if self.features is None else self.features.get("eligible.leader.replicas.version", 0) >= 1

    @property
    def live_brokers(self) -> frozenset[int]:
        return frozenset(self.brokers)

    def topics(self) -> set[str]:
        return {tp.topic for tp in self.partitions}

    def min_isr(self, tp: TopicPartition) -> int | None:
        """The min.insync.replicas the leader of `tp` applies (None when unknown): the topic's, and since
        Kafka 3.7 at most the partition's replica count (an RF=1 topic with min.insync.replicas=2 takes
        acks=all writes there, and is not under min ISR)."""
        partition = self.partitions.get(tp)
        return self.min_insync_replicas.get(tp.topic) if partition is None else self.min_isr_of(partition)

    def min_isr_of(self, partition: PartitionState) -> int | None:
        """`min_isr` of a partition of this state."""
        value = self.min_insync_replicas.get(partition.topic)
        if value is None or not self.min_isr_capped:
            return value
        return min(value, len(partition.replicas))


class QuorumReplica(NamedTuple):
    """One replica of the KRaft metadata log as the quorum's leader reports it (DescribeQuorum's
    ReplicaState); -1 where it does not know (a voter it never heard from, as a new leader after a failover)."""

    node: int
    log_end_offset: int
    last_fetch_ms: int
    last_caught_up_ms: int


@dataclass(frozen=True)
class QuorumState:
    """A DescribeQuorum answer: the KRaft controller quorum's leader (-1: none), its epoch and high watermark,
    the voters' progress, the observers (brokers) and each voter's controller listener (v2 Nodes; empty before
    v2)."""

    leader: int
    epoch: int
    high_watermark: int
    voters: tuple[QuorumReplica, ...]
    observers: tuple[int, ...] = ()
    endpoints: dict[int, tuple[str, int]] = field(default_factory=dict)

    @property
    def voter_ids(self) -> tuple[int, ...]:
        return tuple(v.node for v in self.voters)

    def voter(self, node: int) -> QuorumReplica | None:
        return next((v for v in self.voters if v.node == node), None)


class Outcome(str, Enum):
    """What happened to one selected partition."""

    ELECTED = "elected"
    ALREADY_ELECTED = "already_elected"
    FAILED = "failed"
    SKIPPED = "skipped"  # left out on purpose (refused per partition, filtered)
    PREDICTED = "predicted"  # dry run
    NOT_ATTEMPTED = "not_attempted"  # interrupted or stopped before its batch was sent
    # The controller's answer and the leaders read back disagree, even after waiting for the metadata to
    # catch up: `error_code` is the controller's answer, `leader_after` what was read, `error` says both.
    UNCONFIRMED = "unconfirmed"


class PartitionResult(NamedTuple):
    """The outcome for one partition, with the leader before and after."""

    tp: TopicPartition
    outcome: Outcome
    error_code: int = 0
    error: str | None = None  # the broker's message, or the error's default text
    leader_before: int | None = None
    leader_after: int | None = None
    unclean: bool = False  # dry run: the predicted leader is outside the ISR (data loss possible)
    below_min_isr: bool = False  # dry run: fewer in-sync replicas than min.insync.replicas afterwards
