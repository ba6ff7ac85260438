"""Every group and its committed offsets, which broker coordinates each, and the sandbox's bounds on them.

As Kafka's group coordinator (`GroupCoordinatorService`, `GroupMetadataManager`, `OffsetMetadataManager`, 4.1):
- A group lives in one partition of `__consumer_offsets`: `Utils.abs(groupId.hashCode()) % partitions`
  (`GroupCoordinatorService.topicPartitionFor`, Java's `String.hashCode`); that partition's leader is its
  coordinator. The topic is made on the first FindCoordinator, with `offsets.topic.num.partitions` (50) and
  `offsets.topic.replication.factor` (3, here at most the brokers there are) (`KafkaApis.getCoordinator`,
  `AutoTopicCreationManager`).
- When the partition's leader changes, the new leader loads the group as last written and its committed offsets
  (`classic_group.ClassicGroup.reload`); until a client asks the new one, the old broker answers NOT_COORDINATOR.
  While it loads (`CoordinatorRuntime`: the partition's context LOADING until `CoordinatorLoaderImpl` has replayed
  it) the groups of that partition are COORDINATOR_LOAD_IN_PROGRESS, a Heartbeat NONE ("the group is still
  loading, so blindly respond", `GroupCoordinatorService.heartbeat`). A partition with groups loads for `LOAD_MS`
  (the sandbox's figure: Kafka's time is its log's replay), one without at once.
- Offsets (`OffsetMetadataManager.commitOffset`): metadata longer than `offset.metadata.max.bytes` (4096) is
  OFFSET_METADATA_TOO_LARGE; a commit with generation -1 and no member id to a group that does not exist makes
  an empty ("simple") group.
The sandbox's bounds (sizing.py): at most `MAX_GROUPS` groups, `MAX_COMMITTED_OFFSETS` committed offsets and
`MAX_GROUP_BYTES` of member metadata and assignments in all, and `group.max.size` members a group. Past them the
empty group used longest ago goes first with its offsets (as `offsets.retention.minutes` expires an empty
group's offsets); with none to let go, a new group is COORDINATOR_NOT_AVAILABLE, a new offset
INVALID_COMMIT_OFFSET_SIZE (Kafka's answer to a commit its log cannot take), a member GROUP_MAX_SIZE_REACHED.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from leader_election_cli import kafka_errors as ke
from leader_election_cli.java_order import java_string_hash
from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox.groups.classic_group import ClassicGroup, Committed, GroupConfig, State
from leader_election_cli.sandbox.sizing import MAX_COMMITTED_OFFSETS, MAX_GROUP_BYTES, MAX_GROUPS

OFFSET_METADATA_MAX_BYTES = 4096  # offset.metadata.max.bytes
LOAD_MS = 100  # how long a new coordinator loads a partition with groups
# The group coordinator's broker configs, as the sandbox's brokers set them (a broker_configs key each):
# group.initial.rebalance.delay.ms 0 as Kafka's own config/server.properties sets it (and the 4.1.0 cluster
# recorded, reference/kafka-4.1.0-configs.txt); group.max.size the sandbox's bound (Kafka: 2147483647); the
# consumer protocol (KIP-848) left out: ConsumerGroupHeartbeat is answered UNSUPPORTED_VERSION
# (KafkaApis.handleConsumerGroupHeartbeat when isConsumerGroupProtocolEnabled is false).
GROUP_DEFAULTS = {"group.initial.rebalance.delay.ms": "0", "group.min.session.timeout.ms": "6000",
                  "group.max.session.timeout.ms": "1800000", "group.max.size": "1000",
                  "group.coordinator.rebalance.protocols": "classic", "offsets.topic.num.partitions": "50",
                  "offsets.topic.replication.factor": "3"}
_NUMBERS = ("group.initial.rebalance.delay.ms", "group.min.session.timeout.ms", "group.max.session.timeout.ms",
            "group.max.size", "offsets.topic.num.partitions", "offsets.topic.replication.factor")


def group_config_problem(configs: Mapping[str, str]) -> str | None:
    """Why the group settings among `configs` cannot be (ConfigDef's ranges), or None."""
    for name in _NUMBERS:
        try:
            value = int(configs[name])
        except ValueError:
            return f"{name} must be a whole number"
        if value < (0 if name == "group.initial.rebalance.delay.ms" else 1) or value > 2**31 - 1:
            return f"{name} is out of range"
    if configs["group.coordinator.rebalance.protocols"] != "classic":
        return "group.coordinator.rebalance.protocols can only be classic in the sandbox"
    return None


def partition_for(group_id: str, partitions: int) -> int:
    """`Utils.abs(groupId.hashCode()) % partitions` (Utils.abs: 0 for Integer.MIN_VALUE)."""
    h = java_string_hash(group_id)
    return (0 if h == -2**31 else abs(h)) % partitions


class GroupCoordinator:
    """The groups of every coordinator broker (one model: each group answers at the leader of its partition)."""

    def __init__(self, configs: Mapping[str, str]):
        self.configs = configs  # the brokers' configs (GROUP_DEFAULTS and what the sandbox was given)
        self.groups: dict[str, ClassicGroup] = {}
        self.coordinators: dict[str, int] = {}  # group -> the broker that loaded it
        self.committed = 0  # committed offsets kept, all groups together
        self.leaders: list[int] | None = None  # the offsets topic's partition leaders, as last followed
        self.loading: dict[int, float] = {}  # offsets topic partition -> when its new leader has loaded it (ms)
        self.load_ms = LOAD_MS

    @property
    def config(self) -> GroupConfig:
        c = self.configs
        return GroupConfig(int(c["group.min.session.timeout.ms"]), int(c["group.max.session.timeout.ms"]),
                           int(c["group.initial.rebalance.delay.ms"]), int(c["group.max.size"]))

    def group(self, group_id: str, now: float) -> ClassicGroup | None:
        """The group as its timers leave it by `now`."""
        group = self.groups.get(group_id)
        if group is not None:
            group.tick(now)
        return group

    def create(self, group_id: str, coordinator: int, now: float) -> ClassicGroup | None:
        """A new empty group; None past the bound on groups with no empty group to let go."""
        if len(self.groups) >= MAX_GROUPS and not self._let_go(keep=group_id):
            return None
        group = self.groups[group_id] = ClassicGroup(group_id, self.config, now)
        self.coordinators[group_id] = coordinator
        return group

    def delete(self, group_id: str) -> None:
        group = self.groups.pop(group_id)
        self.coordinators.pop(group_id, None)
        self.committed -= len(group.offsets)

    def in_all(self, now: float) -> Iterator[ClassicGroup]:
        for group in list(self.groups.values()):
            group.tick(now)
            yield group

    def room_for(self, group: ClassicGroup, more_bytes: int) -> bool:
        """Whether the members' metadata and assignments may grow by `more_bytes` (letting empty groups go)."""
        while sum(g.cost() for g in self.groups.values()) + more_bytes > MAX_GROUP_BYTES:
            if not self._let_go(keep=group.group_id):
                return False
        return True

    def commit(self, group: ClassicGroup, offsets: dict[tuple[str, int], Committed]) -> dict[tuple[str, int], int]:
        """Keep `offsets` (already checked); the error of each that cannot be kept (the bound)."""
        refused = {}
        for key, committed in offsets.items():
            if key not in group.offsets:
                while self.committed >= MAX_COMMITTED_OFFSETS and self._let_go(keep=group.group_id):
                    pass
                if self.committed >= MAX_COMMITTED_OFFSETS:
                    refused[key] = ke.INVALID_COMMIT_OFFSET_SIZE
                    continue
                self.committed += 1
            group.offsets[key] = committed
        return refused

    def delete_offsets(self, group: ClassicGroup, keys: list[tuple[str, int]]) -> None:
        for key in keys:
            if group.offsets.pop(key, None) is not None:
                self.committed -= 1

    def forget_topic(self, topic: str) -> None:
        """A deleted topic's committed offsets go from every group (`GroupMetadataManager.cleanupGroupMetadata`)."""
        for group in self.groups.values():
            self.delete_offsets(group, [key for key in group.offsets if key[0] == topic])

    def _let_go(self, keep: str) -> bool:
        """Drop the empty group used longest ago, with its offsets (not `keep`); False when there is none."""
        empty = [g for g in self.groups.values() if g.state is State.EMPTY and g.group_id != keep]
        if not empty:
            return False
        self.delete(min(empty, key=lambda g: g.used_at).group_id)
        return True

    def is_loading(self, group_id: str, now: float) -> bool:
        """Whether the group's partition is still being loaded by its new coordinator."""
        if self.leaders is None:
            return False
        return now < self.loading.get(partition_for(group_id, len(self.leaders)), 0)

    def loads_on(self, broker: int, now: float) -> bool:
        """Whether `broker` is still loading a partition it has become the leader of."""
        leaders = self.leaders or []
        return any(now < until and leaders[partition] == broker for partition, until in self.loading.items())

    def follow(self, leaders: list[int] | None, now: float) -> None:
        """The offsets topic's partition leaders now (None: no such topic): a group whose partition has a new
        leader is loaded by it, as last written; one with nothing written is gone."""
        previous, self.leaders = self.leaders, leaders
        if leaders is None:
            self.loading.clear()
        elif previous is not None and len(previous) == len(leaders):
            moved = [i for i, (before, after) in enumerate(zip(previous, leaders, strict=True))
                     if after != before and after != NO_LEADER]
            with_groups = {partition_for(g, len(leaders)) for g in self.groups} if moved else set()
            for partition in with_groups.intersection(moved):
                self.loading[partition] = now + self.load_ms
        for group_id in list(self.coordinators):
            leader = NO_LEADER if leaders is None else leaders[partition_for(group_id, len(leaders))]
            if leader == self.coordinators[group_id]:
                continue
            self.coordinators[group_id] = leader
            if not self.groups[group_id].reload(now):
                self.delete(group_id)
