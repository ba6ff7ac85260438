"""The Kafka releases the sandbox can be: per release and controller mode, what its brokers advertise.

For each release: the ApiVersions ranges a broker advertises (default configuration, no client-telemetry
plugin, unstable APIs off), the features it supports and those a new cluster finalizes, and the
controller behaviour that depends on the release. Where each table comes from:

- 4.2 (KRaft), the default: recorded on a real Apache Kafka 4.2.0 cluster built from the release commit
  a18251bae0b8, fresh (tests/reference/kafka-4.2.0-api-versions.txt, kafka-4.2.0-features.txt; what changed
  since 4.1.0, read in the two release commits' sources: kafka-4.2.0-changes.txt). 75 keys, 4.1's with 12
  ranges changed: ListOffsets 1-11, OffsetCommit 2-10, OffsetFetch 1-10, WriteTxnMarkers 1-2, ShareFetch and
  ShareAcknowledge 1-2, AddRaftVoter 0-1, WriteShareGroupState, ReadShareGroupStateSummary and
  DescribeShareGroupOffsets 0-1, and the streams group APIs StreamsGroupHeartbeat 88 and StreamsGroupDescribe
  89 at 0 (KIP-1071; 4.1 left them out). Features: metadata.version 3.3-IV3 to 4.2-IV1 (29) finalized at 29
  (4.2-IV0 is 28: `ShareVersion.SV_1` bootstraps at IBP_4_2_IV0, `StreamsVersion.SV_1` at IBP_4_2_IV1),
  share.version 0-1 and streams.version 0-1 both finalized at 1 (share groups and streams groups on in a
  new cluster), eligible.leader.replicas.version finalized at 1 as in 4.1. streams.version=1 depends on no
  other feature (`StreamsVersion.SV_1`, `Map.of()`); share.version=1 on metadata.version 27, as in 4.1.
  Broker configs: kafka-4.2.0-configs.txt (4.1's and config.providers, controller.quorum.auto.join.enable,
  group.streams.initial.rebalance.delay.ms, remote.log.manager.follower.thread.pool.size; the
  group and share coordinators' append.linger.ms default -1); the topic configs are 4.1's.
  Its rules (`PartitionRules`), each seen in kafka-4.2.0-leaderless-elr-on.txt, where every Leader, Elr and
  LastKnownElr value and every answer of Kafka's tool is 4.1's:
  - a replica that rejoins an ISR is listed by broker id (`Isr: 4,5,6`; 4.1 appends it: `Isr: 5,6,4`). The
    partition leader's AlterPartition builds the ISR from a Scala `mutable.HashSet` since the broker's
    partition state moved to Java (KAFKA-19301: `CommittedPartitionState` holds `Set.copyOf(isr)`;
    `Partition.prepareIsrExpand` sends `partitionState.isr.asScala.map(_.toInt) + newInSyncReplicaId`), and
    the controller stores the list as sent. A hash set of small ints iterates in ascending order, as every
    recorded ISR is; for larger broker ids Kafka's order is the hash table's, which the sandbox does not
    reproduce: it sorts. A leader's own ISR shrink (`prepareIsrShrink`) is not modelled.
  - LastKnownElr (`PartitionChangeBuilder.maybeUpdateLastKnownLeader`, commit 162db130f6, apache/kafka#20629
    "simplify last known elr update"): set to the leader by the change that takes the leader away, when it
    is empty, and cleared only by a change that names a leader (4.1: set when a change empties the ISR,
    cleared by any change that leaves a leader). The usual sequence (the last ISR member, the leader, stops;
    a replica returns and is elected) gives the same values in both, as recorded.
  Controller limits: 4.1's (the empty batch after exactly 10,000 records refused, KAFKA-21129 filed against
  trunk; not recorded on 4.2.0). kafka-python 3.0.12's `BROKER_API_VERSIONS[(4, 2)]` is the same table.
- 4.1 (KRaft): recorded on a real Apache Kafka 4.1.0 cluster built from the release commit,
  fresh (tests/reference/kafka-4.1.0-api-versions.txt, kafka-4.1.0-features.txt): Produce 0-13, Fetch
  4-18, JoinGroup 0-9, AlterPartitionReassignments 0-1 (KIP-860), ListTransactions 0-2,
  ListConfigResources 74 0-1, the share-group APIs 76-79 (v1), 83-87 and 90-92, metadata.version 3.3-IV3
  to 4.1-IV1 (27) finalized at 27, share.version 0-1 finalized at 0, and eligible.leader.replicas.version
  finalized at 1: a new 4.1 cluster has ELR on (4.1's `EligibleLeaderReplicasVersion.ELRV_1` bootstraps
  at metadata.version 4.1-IV0). kafka-python 3.0.12's `BROKER_API_VERSIONS[(4, 1)]` is the same table.
  share.version=1 requires metadata.version 27 (4.1-IV1): `ShareVersion.SV_1` of the 4.1 branch ("a
  preview in 4.1", LATEST_PRODUCTION SV_0). Not confirmed for 4.1.0: which metadata.version ELR level 1
  requires there (4.0.0 recorded 23; a later 4.1-era source says 24); on 4.1 it cannot matter, its
  metadata.version being 27 and fixed here.
  The controller's rules for ISR, ELR and LastKnownElr are 4.0's with ELR on (`PartitionChangeBuilder`:
  `maybePopulateTargetElr`, `electLeader`, `maybeUpdateRecordElr`, `maybeUpdateLastKnownLeader`): the
  walk-through kafka-4.1.0-leaderless-elr-on.txt (RF 3 and 2, min.insync.replicas 1 and 2,
  unclean.leader.election.enable on one topic; the last ISR member dying, an ELR member coming back
  alone, a replica outside the ELR coming back alone, Kafka's tool's preferred and unclean elections at
  every step) replays step by step on these rules (tests/test_sandbox_versions.py), so no 4.1-only
  rule was needed. Not confirmed by that record: the fenced last known leader (KAFKA-19522, below), whose
  case the record never reaches (its LastKnownElr is only ever set while the ELR is not empty), and
  AlterPartitionReassignments v1's `AllowReplicationFactorChange=false` (KIP-860), which the sandbox
  ignores (this project's clients never change a replication factor).
- 4.0 (KRaft): recorded on a real Apache Kafka 4.0.0 broker, fresh cluster, static quorum
  (tests/reference/kafka-4.0.0-api-versions.txt and kafka-4.0.0-features.txt:
  kafka-broker-api-versions.sh and kafka-features.sh describe / version-mapping / feature-dependencies).
  kafka-python 3.0.12's `BROKER_API_VERSIONS[(4, 0)]` is the same table (tests/test_sandbox_versions.py
  checks the sandbox's answer against the recording, range by range).
- 3.9, ZooKeeper mode: kafka-python 3.0.12's `BROKER_API_VERSIONS[(3, 9)]`, a 3.9 ZooKeeper-mode broker's answer
  (it lists the inter-broker APIs 4-7, AlterPartition 56, Envelope 58 and AllocateProducerIds 67, which
  only a ZooKeeper-mode broker serves). The ZooKeeper controller has no KRaft features (no
  metadata.version, no ELR): the sandbox reports none.
- 3.9, KRaft mode: derived from the ZooKeeper-mode table by the `listeners` of Kafka 3.9's
  `clients/src/main/resources/common/message/*Request.json` (`ApiVersionsResponse.filterApis` for the
  "broker" listener): without the "zkBroker"-only APIs 4-7 and the "zkBroker"/"controller" APIs 56, 58
  and 67; with the "broker" APIs DescribeQuorum 55 (0-2, KIP-853), UnregisterBroker 64 (0),
  ListClientMetricsResources 74 (0), DescribeTopicPartitions 75 (0), AddRaftVoter 80 and RemoveRaftVoter
  81 (0). Features from 3.9's `BrokerFeatures.defaultSupportedFeatures` (metadata.version from
  `MINIMUM_KRAFT_VERSION` 3.0-IV1 to `latestProduction` 3.9-IV0; every other feature whose latest
  production level is above 0: kraft.version 0-1; transaction.version and group.version are 0 in 3.9
  and eligible.leader.replicas.version does not exist before 4.0, where ELR was the unsupported config
  `eligible.leader.replicas.enable`). Not recorded on a real 3.9 cluster.

Feature levels of 0 are not sent among the finalized features (`ApiVersionsResponse.
createFinalizedFeatureKeys` leaves them out; kafka-features describe then prints 0). Changing a level
(`--feature NAME=LEVEL`) is checked as the controller's `FeatureControlManager` checks `kafka-features
upgrade`/`downgrade`: a known feature, a level in the supported range, and the dependencies
(`kafka-features feature-dependencies`: eligible.leader.replicas.version=1 requires metadata.version 23,
4.0-IV1, as recorded). metadata.version stays at the release's latest level (the only one a new cluster
can be upgraded to; Kafka refuses unsafe downgrades) and kraft.version at 0 (a static quorum cannot be
made dynamic before 4.1, KAFKA-16538).

metadata.version names by level: `server-common/.../MetadataVersion.java` (3.0-IV1 is 1, 3.3-IV3 is 7,
3.9-IV0 is 21, 4.0-IV1 is 23, 4.0-IV3 is 25, 4.1-IV1 is 27, 4.2-IV1 is 29).

Not modelled: 4.0's election of a last known leader that is fenced (4.0 skips that check; KAFKA-19522,
apache/kafka#20200, merged in July 2025 and so in 4.1's line, adds it): the sandbox, like the planner,
checks it in every release; with ELR on it matters only when a partition's ISR and ELR are both empty,
which the sandbox reaches only through test edits. Whether 4.1.0 itself carries the fix could not be
confirmed from the record. Kafka 4.3 and later are not modelled.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

# Light on purpose (no kafka-python, no sandbox state): `kafka-leaders sandbox --help` reads it.
KRAFT, ZK = "kraft", "zk"

METADATA_VERSION = "metadata.version"
ELR_VERSION = "eligible.leader.replicas.version"

METADATA_VERSION_NAMES: Mapping[int, str] = MappingProxyType({
    1: "3.0-IV1", 2: "3.1-IV0", 3: "3.2-IV0", 4: "3.3-IV0", 5: "3.3-IV1", 6: "3.3-IV2", 7: "3.3-IV3",
    8: "3.4-IV0", 9: "3.5-IV0", 10: "3.5-IV1", 11: "3.5-IV2", 12: "3.6-IV0", 13: "3.6-IV1", 14: "3.6-IV2",
    15: "3.7-IV0", 16: "3.7-IV1", 17: "3.7-IV2", 18: "3.7-IV3", 19: "3.7-IV4", 20: "3.8-IV0", 21: "3.9-IV0",
    22: "4.0-IV0", 23: "4.0-IV1", 24: "4.0-IV2", 25: "4.0-IV3", 26: "4.1-IV0", 27: "4.1-IV1", 28: "4.2-IV0",
    29: "4.2-IV1",
})

# FeatureVersion.dependencies() of the levels that have any (kafka-features feature-dependencies, 4.0.0;
# share.version: 4.1's ShareVersion.SV_1).
DEPENDENCIES: Mapping[tuple[str, int], Mapping[str, int]] = MappingProxyType({
    (ELR_VERSION, 1): {METADATA_VERSION: 23},
    ("share.version", 1): {METADATA_VERSION: 27},
})
FIXED = (METADATA_VERSION, "kraft.version")  # levels the sandbox does not let --feature change

# API key -> (min, max) version. kafka-python 3.0.12 holds the same tables (BROKER_API_VERSIONS[(3, 9)]
# and [(4, 0)]); they are written out here so that a kafka-python upgrade cannot change what the sandbox is.
API_VERSIONS_3_9_ZK: Mapping[int, tuple[int, int]] = MappingProxyType({
    0: (0, 11), 1: (0, 17), 2: (0, 9), 3: (0, 12), 4: (0, 7), 5: (0, 4), 6: (0, 8), 7: (0, 3), 8: (0,
    9), 9: (0, 9), 10: (0, 6), 11: (0, 9), 12: (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 5), 16: (0, 5),
    17: (0, 1), 18: (0, 4), 19: (0, 7), 20: (0, 6), 21: (0, 2), 22: (0, 5), 23: (0, 4), 24: (0, 5), 25:
    (0, 4), 26: (0, 4), 27: (0, 1), 28: (0, 4), 29: (0, 3), 30: (0, 3), 31: (0, 3), 32: (0, 4), 33: (0,
    2), 34: (0, 2), 35: (0, 4), 36: (0, 2), 37: (0, 3), 38: (0, 3), 39: (0, 2), 40: (0, 2), 41: (0, 3),
    42: (0, 2), 43: (0, 2), 44: (0, 1), 45: (0, 0), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50:
    (0, 0), 51: (0, 0), 56: (0, 3), 57: (0, 1), 58: (0, 0), 60: (0, 1), 61: (0, 0), 65: (0, 0), 66: (0,
    1), 67: (0, 0), 68: (0, 0), 69: (0, 0)})
API_VERSIONS_4_0: Mapping[int, tuple[int, int]] = MappingProxyType({
    0: (0, 12), 1: (4, 17), 2: (1, 10), 3: (0, 13), 8: (2, 9), 9: (1, 9), 10: (0, 6), 11: (2, 9), 12:
    (0, 4), 13: (0, 5), 14: (0, 5), 15: (0, 6), 16: (0, 5), 17: (0, 1), 18: (0, 4), 19: (2, 7), 20: (1,
    6), 21: (0, 2), 22: (0, 5), 23: (2, 4), 24: (0, 5), 25: (0, 4), 26: (0, 5), 27: (1, 1), 28: (0, 5),
    29: (1, 3), 30: (1, 3), 31: (1, 3), 32: (1, 4), 33: (0, 2), 34: (1, 2), 35: (1, 4), 36: (0, 2), 37:
    (0, 3), 38: (1, 3), 39: (1, 2), 40: (1, 2), 41: (1, 3), 42: (0, 2), 43: (0, 2), 44: (0, 1), 45: (0,
    0), 46: (0, 0), 47: (0, 0), 48: (0, 1), 49: (0, 1), 50: (0, 0), 51: (0, 0), 55: (0, 2), 57: (0, 2),
    60: (0, 2), 61: (0, 0), 64: (0, 0), 65: (0, 0), 66: (0, 1), 68: (0, 1), 69: (0, 1), 74: (0, 0), 75:
    (0, 0), 80: (0, 0), 81: (0, 0)})
# 4.1.0 as recorded: 4.0's table with these ranges changed or added.
API_VERSIONS_4_1: Mapping[int, tuple[int, int]] = MappingProxyType(dict(sorted({
    **API_VERSIONS_4_0, 0: (0, 13), 1: (4, 18), 11: (0, 9), 45: (0, 1), 66: (0, 2), 74: (0, 1),
    76: (1, 1), 77: (1, 1), 78: (1, 1), 79: (1, 1), 83: (0, 0), 84: (0, 0), 85: (0, 0), 86: (0, 0),
    87: (0, 0), 90: (0, 0), 91: (0, 0), 92: (0, 0)}.items())))
# 4.2.0 as recorded: 4.1's table with these ranges changed or added.
API_VERSIONS_4_2: Mapping[int, tuple[int, int]] = MappingProxyType(dict(sorted({
    **API_VERSIONS_4_1, 2: (1, 11), 8: (2, 10), 9: (1, 10), 27: (1, 2), 78: (1, 2), 79: (1, 2), 80: (0, 1),
    85: (0, 1), 87: (0, 1), 88: (0, 0), 89: (0, 0), 90: (0, 1)}.items())))
_ZK_ONLY = {4, 5, 6, 7, 56, 58, 67}
_KRAFT_BROKER_39 = {55: (0, 2), 64: (0, 0), 74: (0, 0), 75: (0, 0), 80: (0, 0), 81: (0, 0)}


@dataclass(frozen=True)
class ControllerLimits:
    """How many metadata records a release's KRaft controller takes from one request, and how it fails at
    the edges (the sources: planning/batches.py's docstring, docs/RELIABILITY.md "Requests a controller
    accepts").

    More than `max_records_per_user_op` records (a `BoundedList`) fail the whole request with
    POLICY_VIOLATION, nothing written. Below that, `QuorumController.appendRecords` writes a non-atomic
    result in Raft batches of `max_records_per_batch`, and when the count is an exact multiple of it, ends
    with one more, empty batch: `empty_batch_fails` says whether Raft refuses it (IllegalArgumentException
    "Append failed because there are no records"; the controller renounces, the request gets
    UNKNOWN_SERVER_ERROR, and the full batch written before survives the failover or not).
    """

    max_records_per_user_op: int = 10_000  # QuorumController.MAX_RECORDS_PER_USER_OP
    max_records_per_batch: int = 10_000  # QuorumController.(DEFAULT_)MAX_RECORDS_PER_BATCH
    empty_batch_fails: bool = False  # 3.9, 4.0: an empty append is a no-op in BatchAccumulator.append


# Kafka 4.1.0: the empty batch is refused, as the controller's log of a real 4.1.0 cluster shows for a request
# of exactly 10,000 changes (issue 35; KAFKA-21129 describes it on trunk).
KAFKA_4_1_LIMITS = ControllerLimits(empty_batch_fails=True)


@dataclass(frozen=True)
class PartitionRules:
    """Where releases write a partition's ISR and LastKnownElr differently (controller/partition_change.py)."""

    isr_by_broker_id: bool = False  # a rejoining replica listed by broker id (4.2), not appended (to 4.1)
    last_known_elr_when_leaderless: bool = False  # set when the leader goes (4.2), not when the ISR empties


KAFKA_4_2_RULES = PartitionRules(isr_by_broker_id=True, last_known_elr_when_leaderless=True)


@dataclass(frozen=True)
class KafkaVersion:
    """One Kafka release as the sandbox plays it."""

    name: str  # "4.0"
    release: str  # the release whose answers these are: "4.0.0"
    api_versions: Mapping[str, Mapping[int, tuple[int, int]]]  # modes it can run in ("kraft", "zk") -> key -> range
    supported: Mapping[str, tuple[int, int]] = field(default_factory=dict)  # KRaft: feature -> (min, max)
    finalized: Mapping[str, int] = field(default_factory=dict)  # KRaft: a new cluster's levels
    controller: ControllerLimits = ControllerLimits()  # KRaft: what one request may write
    rules: PartitionRules = PartitionRules()
    configs: str = "kafka-4.1.0-configs.txt"  # sandbox/data/: the recorded config listing its brokers describe

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(self.api_versions)


def _kraft_39() -> dict[int, tuple[int, int]]:
    table = {k: v for k, v in API_VERSIONS_3_9_ZK.items() if k not in _ZK_ONLY}
    return dict(sorted({**table, **_KRAFT_BROKER_39}.items()))


VERSIONS: Mapping[str, KafkaVersion] = MappingProxyType({
    "3.9": KafkaVersion(
        "3.9", "3.9.0",
        {KRAFT: _kraft_39(), ZK: dict(API_VERSIONS_3_9_ZK)},
        supported={METADATA_VERSION: (1, 21), "kraft.version": (0, 1)},
        finalized={METADATA_VERSION: 21, "kraft.version": 0},
    ),
    "4.0": KafkaVersion(
        "4.0", "4.0.0",
        {KRAFT: dict(API_VERSIONS_4_0)},
        supported={ELR_VERSION: (0, 1), "group.version": (0, 1), "kraft.version": (0, 1),
                   METADATA_VERSION: (7, 25), "transaction.version": (0, 2)},
        finalized={ELR_VERSION: 0, "group.version": 1, "kraft.version": 0, METADATA_VERSION: 25,
                   "transaction.version": 2},
    ),
    "4.1": KafkaVersion(
        "4.1", "4.1.0",
        {KRAFT: dict(API_VERSIONS_4_1)},
        supported={ELR_VERSION: (0, 1), "group.version": (0, 1), "kraft.version": (0, 1),
                   METADATA_VERSION: (7, 27), "share.version": (0, 1), "transaction.version": (0, 2)},
        finalized={ELR_VERSION: 1, "group.version": 1, "kraft.version": 0, METADATA_VERSION: 27,
                   "share.version": 0, "transaction.version": 2},
        controller=KAFKA_4_1_LIMITS,
    ),
    "4.2": KafkaVersion(
        "4.2", "4.2.0",
        {KRAFT: dict(API_VERSIONS_4_2)},
        supported={ELR_VERSION: (0, 1), "group.version": (0, 1), "kraft.version": (0, 1),
                   METADATA_VERSION: (7, 29), "share.version": (0, 1), "streams.version": (0, 1),
                   "transaction.version": (0, 2)},
        finalized={ELR_VERSION: 1, "group.version": 1, "kraft.version": 0, METADATA_VERSION: 29,
                   "share.version": 1, "streams.version": 1, "transaction.version": 2},
        controller=KAFKA_4_1_LIMITS,
        rules=KAFKA_4_2_RULES,
        configs="kafka-4.2.0-configs.txt",
    ),
})
DEFAULT_VERSION = "4.2"
ZK_DEFAULT_VERSION = "3.9"  # the last release with ZooKeeper mode


def metadata_version_name(level: int) -> str:
    return METADATA_VERSION_NAMES.get(level, f"UNKNOWN {level}")


def _mode(mode: str) -> str:
    return str(getattr(mode, "value", mode))  # sandbox.controller.model.Mode is a str enum


def resolve(name: str | None, mode: str) -> KafkaVersion:
    """The release called `name` (None: the default for `mode`), or ValueError with one line that says why."""
    mode = _mode(mode)
    if name is None:
        name = ZK_DEFAULT_VERSION if mode == ZK else DEFAULT_VERSION
    version = VERSIONS.get(name.strip().removesuffix(".0") if name.count(".") == 2 else name.strip())
    if version is None:
        raise ValueError(f"unsupported Kafka version {name!r}; choose one of {', '.join(VERSIONS)}")
    if mode not in version.modes:
        raise ValueError(f"Kafka {version.name} has no {mode} mode; "
                         f"{mode} mode needs Kafka {', '.join(v.name for v in VERSIONS.values() if mode in v.modes)}")
    return version


def parse_feature(text: str) -> tuple[str, int]:
    """`NAME=LEVEL` (metadata.version also by name, e.g. 4.0-IV1), or ValueError."""
    name, sep, value = text.partition("=")
    name, value = name.strip(), value.strip()
    if not sep or not name or not value:
        raise ValueError(f"--feature needs NAME=LEVEL, got {text!r}")
    if name == METADATA_VERSION:
        by_name = {v: k for k, v in METADATA_VERSION_NAMES.items()}
        if value in by_name:
            return name, by_name[value]
    if not value.isdigit():
        raise ValueError(f"the level of feature {name} must be a number, got {value!r}")
    return name, int(value)


def finalized_features(version: KafkaVersion, mode: str, changes: Mapping[str, int]) -> dict[str, int]:
    """The finalized levels after `changes`, checked as Kafka's controller checks an UpdateFeatures request
    (none in zk mode)."""
    if _mode(mode) == ZK:
        if changes:
            raise ValueError("--feature needs KRaft mode: a ZooKeeper-mode cluster has no finalized features")
        return {}
    levels = dict(version.finalized)
    for name, level in changes.items():
        if name not in version.supported:
            raise ValueError(f"Kafka {version.name} has no feature {name}; "
                             f"it has {', '.join(sorted(version.supported))}")
        low, high = version.supported[name]
        if not low <= level <= high:
            shown = (lambda n: f"{n} ({metadata_version_name(n)})") if name == METADATA_VERSION else str
            raise ValueError(f"Kafka {version.name} supports {name} levels {shown(low)} to {shown(high)}, "
                             f"not {shown(level)}")
        if name in FIXED and level != levels[name]:
            raise ValueError(f"the sandbox keeps {name} at {levels[name]}: Kafka {version.name} cannot move a "
                             f"new cluster's {name} to {level}")
        levels[name] = level
    for name, level in levels.items():
        for needed, at_least in DEPENDENCIES.get((name, level), {}).items():
            if levels.get(needed, 0) < at_least:
                wanted = metadata_version_name(at_least) if needed == METADATA_VERSION else at_least
                raise ValueError(f"{name}={level} requires {needed} {at_least} ({wanted}) or higher, "
                                 f"but it is {levels.get(needed, 0)}")
    return levels
