"""What the controller holds: topics and their partitions' registrations, the modelled configs, the mode."""

from __future__ import annotations

import uuid
import zlib
from dataclasses import dataclass, field
from enum import Enum

DEFAULT_CONFIGS = {"min.insync.replicas": "1", "unclean.leader.election.enable": "false"}
REBALANCE_DEFAULTS = {"auto.leader.rebalance.enable": "true", "leader.imbalance.check.interval.seconds": "300",
                      "leader.imbalance.per.broker.percentage": "10"}
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

    def config(self, name: str) -> str:
        return self.configs.get(name, DEFAULT_CONFIGS.get(name, ""))

    @property
    def min_isr(self) -> int:
        return int(self.config("min.insync.replicas"))

    @property
    def unclean_enabled(self) -> bool:
        return self.config("unclean.leader.election.enable").strip().lower() == "true"


def config_problem(configs: dict[str, str]) -> str | None:
    """Kafka's `ConfigDef` message for a bad value of a modelled topic config, else None."""
    value = configs.get("min.insync.replicas")
    if value is not None:
        if not value.strip().lstrip("-").isdigit():
            return f"Invalid value {value} for configuration min.insync.replicas: Not a number of type INT"
        if int(value) < 1:
            return f"Invalid value {value} for configuration min.insync.replicas: Value must be at least 1"
    value = configs.get("unclean.leader.election.enable")
    if value is not None and value.strip().lower() not in ("true", "false"):
        return (f"Invalid value {value} for configuration unclean.leader.election.enable: "
                "Expected value to be either true or false")
    return None
