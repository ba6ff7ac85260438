"""What the controller holds: topics and their partitions' registrations, the modelled configs, the mode."""

from __future__ import annotations

import uuid
import zlib
from dataclasses import dataclass, field
from enum import Enum

DEFAULT_CONFIGS = {"min.insync.replicas": "1", "unclean.leader.election.enable": "false"}
# The controller's scheduled tasks, Kafka's broker defaults: the automatic preferred-leader elections, and the
# unclean elections of leaderless partitions whose topic allows them (`unclean.leader.election.interval.ms`,
# an internal QuorumController config, runs ReplicationControlManager.maybeElectUncleanLeaders).
REBALANCE_DEFAULTS = {"auto.leader.rebalance.enable": "true", "leader.imbalance.check.interval.seconds": "300",
                      "leader.imbalance.per.broker.percentage": "10", "unclean.leader.election.interval.ms": "300000"}
LOG_DIR = "/var/lib/kafka/data"  # every sandbox broker's one log directory
LOG_DIR_VOLUME_BYTES = 2**40  # the size of the volume it is on


def default_log_size(topic: str, partition: int) -> int:
    """A partition's log size unless a test sets one: 1 to 100 MiB, the same on every run (CRC-32 of the
    name), so that --weight size has uneven, reproducible weights."""
    return (1 + zlib.crc32(f"{topic}-{partition}".encode()) % 100) * 2**20


class Mode(str, Enum):
    KRAFT = "kraft"
    ZK = "zk"


@dataclass(slots=True)
class Partition:
    """One partition's registration, as the controller holds it."""

    replicas: list[int]
    isr: list[int]
    leader: int
    leader_epoch: int = 0
    elr: list[int] = field(default_factory=list)
    last_known_elr: list[int] = field(default_factory=list)
    adding: list[int] = field(default_factory=list)
    removing: list[int] = field(default_factory=list)


@dataclass
class Topic:
    name: str
    topic_id: uuid.UUID
    partitions: list[Partition]
    configs: dict[str, str]
    defaults: dict[str, str] = field(default_factory=dict)  # the cluster's dynamic broker defaults (shared)

    def config(self, name: str) -> str:
        """The topic's value, else the cluster-wide dynamic default, else Kafka's default (as the controller
        resolves a topic config: `ConfigurationControlManager.getTopicConfig`)."""
        return self.configs.get(name, self.defaults.get(name, DEFAULT_CONFIGS.get(name, "")))

    @property
    def min_isr(self) -> int:
        return int(self.config("min.insync.replicas"))

    @property
    def unclean_enabled(self) -> bool:
        return self.config("unclean.leader.election.enable").strip().lower() == "true"
