"""The sandbox's cluster model and its controller: Kafka's leadership rules, one set per mode.

Everything that decides who leads a partition lives here, written from Kafka's own sources and kept
independent of the CLI's planner (a separate implementation checked against this one).

kraft mode follows the KRaft controller of Kafka 4.x: `ReplicationControlManager.electLeaders` and
`PartitionChangeBuilder`. Eligible leader replicas (KIP-966) follow the finalized feature
`eligible.leader.replicas.version` (`elr=`; on as on a new 4.1 cluster, off on a new 4.0 one: see
versions.py). With ELR off an ISR never empties (its last member stays when it dies), as a real 4.0.0
cluster shows (tests/reference/kafka-4.0.0-leaderless-elr-off.txt); with ELR on the ISR may empty and the
ELR and last known ELR fill as recorded in kafka-4.0.0-leaderless-elr-on.txt and, on 4.1.0 (RF 3 too,
and a topic with unclean.leader.election.enable), kafka-4.1.0-leaderless-elr-on.txt.

- Admin preferred election: ELECTION_NOT_NEEDED when the leader is `replicas[0]`; otherwise elect
  `replicas[0]` if valid, else keep a valid current leader (no change: PREFERRED_LEADER_NOT_AVAILABLE),
  else the first valid replica of `replicas[1:]`, else the last known leader, else fail (80).
- Admin unclean election: ELECTION_NOT_NEEDED when there is a leader; otherwise the first valid
  replica, else the last known leader (ISR = [it]), else the first live replica (ISR = [it]), else
  fail (83).
- "Valid" = live (not fenced) and in the ISR, or in the ELR while the ISR is empty. A leader taken
  from the ELR gets ISR = [leader]. The last known leader is taken only when it is live.
- Every change an election request would write is one metadata record (a PartitionChangeRecord, nothing
  else); more than `max_records_per_request` (Kafka: 10,000, a `BoundedList`) fails the whole request
  with POLICY_VIOLATION. Each requested partition is judged against the state before the request.
  A release whose Raft refuses the empty batch `QuorumController.appendRecords` adds after exactly
  10,000 records (`ControllerLimits.empty_batch_fails`, Kafka 4.1) fails such a request with
  UNKNOWN_SERVER_ERROR after a controller failover, in which the 10,000 changes survive or are lost
  (`failover_keeps_writes`; None: either, at random, as the race decides on a real cluster).
  AlterPartitionReassignments counts its records the same way (one per partition it changes).
- Brokers' metadata can lag the controller (`metadata_lag_per_record_s`, 0 unless asked): the changes
  of one election request show in Metadata answers only that long per record after the answer, as a
  broker publishes a large metadata delta (see Sandbox).

zk mode follows the ZooKeeper-mode controller of Kafka 3.x (`KafkaController`, `Election.scala`,
`PartitionStateMachine`): preferred elects `replicas[0]` only if it is live and in the ISR; unclean
(only for a partition without a live leader) takes the first live ISR replica, else the first live
replica with ISR = [it]; failures carry the controller's "Failed to elect leader ..." message.

Broker stop is a clean shutdown that the controller sees at once:
- kraft: the broker is fenced. Every partition with it in the ISR goes through the controller's
  ONLINE election (UNCLEAN when the topic sets `unclean.leader.election.enable=true`) with the broker
  removed from the ISR. Without ELR an ISR never empties: its last member stays (and the partition
  is leaderless). With ELR the ISR may empty; members that drop the ISR below `min.insync.replicas`
  move to the ELR, and when the ISR empties the old leader is kept as the last known leader.
- zk: partitions it led get a new leader by the offline rule (first live ISR replica in replica
  order, ISR = the live ISR; unclean fallback only when the topic enables it), otherwise none; then
  it leaves every ISR except where it is the last member (`doRemoveReplicasFromIsr`).
Broker start: leaderless partitions are elected again by the same offline rule (the broker is now
live), then, unless `rejoin_isr=False`, its replicas rejoin the ISR of every partition with a leader
(in kraft mode this also recomputes the ELR, as an AlterPartition does), and so do the other live
replicas of a partition that got a leader again (`rejoin_followers`: followers again, they catch up: on
4.1.0, a=4 elected from the ELR on its return took b=5, live but leaderless until then, back into its
ISR, kafka-4.1.0-leaderless-elr-on.txt step B6). A restart that catches up (`Sandbox.start_broker_catching_up`)
starts with `rejoin_isr=False`, takes those followers back at once and its own replicas step by step.

Reassignments (both modes): the replica list becomes target + the replicas being removed; with no
replica to add it completes at once (a reorder), else it waits for `finish_reassignment`. A
cancelled one keeps `replicas - adding`, in that order, as Kafka rebuilds it. A leader that leaves
the replica set is replaced: kraft by the online rule, zk by the first of the new replicas alive and in
the ISR.

Leader epochs go up as Kafka writes them: kraft with every record that sets a leader (a new one, or
the same one when a reassignment removes a replica); zk with every LeaderAndIsr write (an election, a
replica leaving the ISR, each step of a reassignment).

The automatic leader rebalance (`auto.leader.rebalance.enable`, on by default as in Kafka; the Sandbox
runs `rebalance_leaders` every `leader.imbalance.check.interval.seconds`): zk mode elects the preferred
replicas of a broker whose share of partitions led elsewhere is above
`leader.imbalance.per.broker.percentage`, while no reassignment is in progress; kraft mode has no
threshold and takes every partition led off its preferred replica.

The controller: in zk mode one live broker (the lowest id when a new one is needed) and the only one
that accepts ElectLeaders. Kraft's controller quorum is not a broker: Metadata and DescribeCluster
report a random live broker as the controller, as a real KRaft broker does at each request
(`getRandomAliveBrokerId`; an answer about every topic is encoded once per change of the cluster, so it
keeps its pick until then), and clients must not read it as the active controller (`kafka-leaders
status` does not show it). `controller_id` stays one broker there, for tests to aim faults at. In KRaft
combined mode (`voters`: brokers that are the quorum too) it is the quorum's leader: always a voter,
and none (-1) while a majority of the voters is down. In dedicated mode the quorum is three controller
nodes that are not brokers (`DEDICATED_CONTROLLERS`), stopped and started by `stop_controller` and
`start_controller`; its leader is the lowest live one while a majority of them is live, else none.
Without a quorum leader there is no active controller, and the brokers' metadata stands still: nothing
runs the automatic leader rebalance, no ISR grows (AlterPartition), no reassignment completes, a broker that
stops stays in the metadata as it was (`unnoticed`: named as a live broker, a leader, an ISR member, while
its listener refuses connections) and one that starts stays fenced (`unregistered`); the next leader fences
and unfences them. The requests a broker forwards to the controller wait for one (sandbox/server.py). In
combined mode a stopped voter counts as down for the quorum at once, whatever the metadata says.
"""

from __future__ import annotations

import random
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from enum import Enum
from typing import NamedTuple

from leader_election_cli import kafka_errors as ke
from leader_election_cli.model import NO_LEADER, PartitionState
from leader_election_cli.sandbox.partition_logs import Logs
from leader_election_cli.sandbox.versions import DEFAULT_VERSION, VERSIONS, ControllerLimits

POLICY_VIOLATION_MESSAGE = "Unable to perform excessively large batch operation."
PREFERRED, UNCLEAN = 0, 1
DEFAULT_CONFIGS = {"min.insync.replicas": "1", "unclean.leader.election.enable": "false"}
# The controller's automatic preferred-leader elections, Kafka's broker defaults.
REBALANCE_DEFAULTS = {"auto.leader.rebalance.enable": "true", "leader.imbalance.check.interval.seconds": "300",
                      "leader.imbalance.per.broker.percentage": "10"}
LOG_DIR = "/var/lib/kafka/data"  # every sandbox broker's one log directory
LOG_DIR_VOLUME_BYTES = 2**40  # the size of the volume it is on


def default_log_size(topic: str, partition: int) -> int:
    """A partition's log size unless a test sets one: 1 to 100 MiB, the same on every run (CRC-32 of the
    name), so that --weight size has uneven, reproducible weights."""
    return (1 + zlib.crc32(f"{topic}-{partition}".encode()) % 100) * 2**20


MAX_ELECTIONS_PER_IMBALANCE = 1000  # QuorumController: one pass of maybeBalancePartitionLeaders
DEDICATED_CONTROLLERS = (1000, 1001, 1002)  # the KRaft controller quorum's nodes when they are not brokers


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


class ItemResult(NamedTuple):
    partition: int
    error_code: int
    message: str | None


@dataclass
class ElectionAnswer:
    """What the controller answers an ElectLeaders request: top-level code and per-topic results."""

    error_code: int
    results: list[tuple[str, list[ItemResult]]]


class Change(NamedTuple):
    """A partition change record: the new leader, ISR, ELR and last known ELR."""

    leader: int
    isr: list[int]
    elr: list[int]
    last_known_elr: list[int]


class ElectionKind(Enum):
    PREFERRED = "preferred"
    ONLINE = "online"
    UNCLEAN = "unclean"


def kraft_partition_change(
    p: Partition,
    election: ElectionKind,
    acceptable: Callable[[int], bool],
    *,
    elr_enabled: bool,
    min_isr: int,
    target_isr: list[int] | None = None,
) -> Change | None:
    """`PartitionChangeBuilder.build()` for leadership and ISR: the change record, or None for no-op."""
    t_isr = list(p.isr) if target_isr is None else list(target_isr)
    t_elr = list(p.elr)
    if elr_enabled:  # maybePopulateTargetElr
        if len(t_isr) >= min_isr:
            t_elr = []
        else:
            candidates = sorted(set(t_elr) | set(p.isr))
            t_elr = [r for r in candidates if r not in t_isr]

    def valid(r: int) -> bool:
        return (r in t_isr or (not t_isr and r in t_elr)) and acceptable(r)

    def last_known_leader() -> int | None:
        if elr_enabled and not t_elr and not t_isr and len(p.last_known_elr) == 1 and acceptable(p.last_known_elr[0]):
            return p.last_known_elr[0]
        return None

    node, unclean = NO_LEADER, False
    if election is ElectionKind.PREFERRED and valid(p.replicas[0]):
        node = p.replicas[0]
    elif valid(p.leader):
        node = p.leader
    else:
        candidates = p.replicas[1:] if election is ElectionKind.PREFERRED else p.replicas
        node = next((r for r in candidates if valid(r)), NO_LEADER)
        if node == NO_LEADER and (known := last_known_leader()) is not None:
            node, unclean = known, True
        if node == NO_LEADER and election is ElectionKind.UNCLEAN:
            node = next((r for r in p.replicas if acceptable(r)), NO_LEADER)
            unclean = node != NO_LEADER

    new_leader: int | None = None  # None = no leader change in the record
    new_isr: list[int] | None = None
    if node != p.leader:
        if node in t_elr:
            t_isr = [node]
            t_elr = [r for r in t_elr if r != node]
        new_leader = node
        if unclean:
            new_isr = [node]
    if new_isr is not None or not elr_enabled:  # maybeUpdateRecordElr
        t_elr = []
    if new_isr is None and (t_isr or elr_enabled) and t_isr != p.isr:
        new_isr = t_isr
    last_known = list(p.last_known_elr)
    if elr_enabled:  # maybeUpdateLastKnownLeader
        if new_isr == [] and p.last_known_elr != [p.leader]:
            last_known = [p.leader]
        elif ((new_leader is not None and new_leader >= 0)
              or (p.leader != NO_LEADER and new_leader != NO_LEADER)) and p.last_known_elr:
            last_known = []
    else:
        last_known = []
    change = Change(p.leader if new_leader is None else new_leader,
                    p.isr if new_isr is None else new_isr, t_elr, last_known)
    if (change.leader, change.isr, change.elr, change.last_known_elr) == (
            p.leader, p.isr, p.elr, p.last_known_elr):
        return None
    return change


def round_robin_assignment(brokers: list[int], partitions: int, replication_factor: int,
                           start_index: int = 0, replica_shift: int = 0) -> dict[int, list[int]]:
    """Kafka's rack-unaware `assignReplicasToBrokers` with a fixed start index and shift."""
    n = len(brokers)
    assignment: dict[int, list[int]] = {}
    shift = replica_shift
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start_index) % n
        replicas = [brokers[first]]
        for j in range(replication_factor - 1):
            replicas.append(brokers[(first + 1 + (shift + j) % (n - 1)) % n])
        assignment[p] = replicas
    return assignment


class Cluster:
    """The controller's view of the cluster: brokers, topics, partitions; thread-safe (one lock)."""

    def __init__(self, broker_ids: Iterable[int], mode: Mode | str, *, elr: bool = True,
                 max_records_per_request: int | None = None, limits: ControllerLimits | None = None,
                 broker_configs: dict[str, str] | None = None, features: dict[str, int] | None = None):
        """`features`: the finalized feature levels ApiVersions reports (KRaft); `elr` is what their
        eligible.leader.replicas.version means to the controller (on, as on a new cluster of the default
        release); `limits`: the release's controller limits (None: the default release's, as `elr`;
        `max_records_per_request` overrides its records per request)."""
        self.lock = threading.RLock()
        self.mode = Mode(mode)
        self.broker_ids = sorted(broker_ids)
        self.live: set[int] = set(self.broker_ids)
        self.elr_enabled = elr and self.mode is Mode.KRAFT
        self.features = dict(features or {})
        limits = limits or VERSIONS[DEFAULT_VERSION].controller
        self.max_records = limits.max_records_per_user_op if max_records_per_request is None \
            else max_records_per_request
        self.limits = limits
        self.failover_keeps_writes: bool | None = None  # after a refused empty batch: None = at random
        self.failovers = 0  # controller failovers so far (a refused empty batch)
        self.metadata_lag_per_record_s = 0.0
        # unpublished election writes: (when brokers show them, each changed partition's values before)
        self._unpublished: list[tuple[float, dict[tuple[str, int], tuple[int, int, list[int]]]]] = []
        self.controller_id = self.broker_ids[0] if self.broker_ids else NO_LEADER
        self.voters: list[int] | None = None  # KRaft combined mode: the brokers that are the controller quorum
        self.controllers_down: set[int] = set()  # dedicated mode: the controller nodes stopped
        # KRaft without an active controller nobody can fence or unfence a broker: stopped ones stay in the
        # metadata as they were (`unnoticed`), started ones stay fenced (`unregistered`) until a leader is elected
        self.unnoticed: set[int] = set()
        self.unregistered: set[int] = set()
        self._dedicated_leader = DEDICATED_CONTROLLERS[0]  # dedicated mode: the quorum's leader (-1: none)
        self.quorum_epoch = 1  # the controller quorum's leader epoch: one more for each leader elected
        # voters stopped: (log end offset, last fetch time in ms) as the quorum's leader last saw them; (-1, -1)
        # for a leader elected while they were down (it never saw them fetch)
        self.last_fetches: dict[int, tuple[int, int]] = {}
        self.directory_ids = {b: uuid.uuid4() for b in self.broker_ids}  # each broker's log directory.id
        self.controller_addresses: dict[int, tuple[str, int]] = {}  # voter -> controller listener, by the server
        self.cluster_id = "sandbox-" + uuid.uuid4().hex[:14]
        self.addresses: dict[int, tuple[str, int]] = {}  # broker -> listener, filled by the server
        self.racks: dict[int, str] = {}  # broker.rack of the brokers that have one
        self.log_sizes: dict[tuple[str, int], int] = {}  # set by tests; else default_log_size
        self.topics: dict[str, Topic] = {}
        self.broker_configs = {**REBALANCE_DEFAULTS, **(broker_configs or {})}  # every broker's static config
        self.logs = Logs()  # the records written (partition_logs.py): they follow every change of leader and ISR
        self.observers: list[Callable[[], None]] = [self._follow_logs]  # told of every change, under the lock
        self.version = 0  # bumped on every change (lets readers cache encoded answers)

    @property
    def version(self) -> int:
        return self._version

    def reported_controller(self) -> int:
        """The controller id Metadata and DescribeCluster answer: in zk mode the controller; in kraft mode,
        as KRaftMetadataCache.getRandomAliveBrokerId, a random live broker (none: -1)."""
        if not self.live:
            return NO_LEADER
        return random.choice(sorted(self.live)) if self.mode is Mode.KRAFT else self.controller_id

    @version.setter
    def version(self, value: int) -> None:
        self._version = value
        for observer in self.observers:
            observer()

    def _follow_logs(self) -> None:
        self.logs.follow_all(self.topics, {b for b in self.live if self.is_running(b)})

    # -- reading -------------------------------------------------------------------------------

    def topic(self, name: str) -> Topic:
        try:
            return self.topics[name]
        except KeyError:
            raise KeyError(f"no such topic: {name}") from None

    def partition(self, topic: str, partition: int) -> Partition:
        parts = self.topic(topic).partitions
        if not 0 <= partition < len(parts):
            raise KeyError(f"no such partition: {topic}-{partition}")
        return parts[partition]

    def partition_state(self, topic: str, partition: int) -> PartitionState:
        with self.lock:
            p = self.partition(topic, partition)
            return PartitionState(topic, partition, p.leader, tuple(p.replicas), tuple(p.isr),
                                  tuple(p.elr), tuple(p.last_known_elr),
                                  tuple(r for r in p.replicas if r not in self.live))

    def log_size(self, topic: str, partition: int) -> int:
        """The size in bytes of the partition's log (every replica reports the same)."""
        return self.log_sizes.get((topic, partition), default_log_size(topic, partition))

    # -- topics ----------------------------------------------------------------------------------

    def create_topic(self, name: str, assignment: dict[int, list[int]],
                     configs: dict[str, str] | None = None) -> Topic:
        """Create a topic; each partition's ISR is its live replicas and its leader the first one."""
        with self.lock:
            if name in self.topics:
                raise ValueError(f"topic {name} already exists")
            if sorted(assignment) != list(range(len(assignment))) or not assignment:
                raise ValueError("assignment must number partitions 0..N-1")
            problem = config_problem(configs or {})
            if problem:
                raise ValueError(problem)
            partitions = []
            for pid in range(len(assignment)):
                replicas = list(assignment[pid])
                unknown = [r for r in replicas if r not in self.broker_ids]
                if unknown or not replicas or len(set(replicas)) != len(replicas):
                    raise ValueError(f"invalid replicas for partition {pid}: {replicas}")
                isr = [r for r in replicas if r in self.live]
                partitions.append(Partition(replicas, isr, isr[0] if isr else NO_LEADER))
            topic = Topic(name, uuid.uuid4(), partitions, dict(configs or {}))
            self.topics[name] = topic
            self.version += 1
            return topic

    def delete_topic(self, name: str) -> None:
        with self.lock:
            if self.topics.pop(name, None) is None:
                raise KeyError(f"no such topic: {name}")
            self.version += 1

    def default_assignment(self, partitions: int, replication_factor: int) -> dict[int, list[int]]:
        live = sorted(self.live)
        if partitions < 1:
            raise ValueError("partitions must be at least 1")
        if not 1 <= replication_factor <= len(live):
            raise ValueError(f"replication factor {replication_factor} needs 1..{len(live)} live brokers")
        return round_robin_assignment(live, partitions, replication_factor)

    # -- test control: direct edits --------------------------------------------------------------

    def edit(self, topic: str, partition: int, **fields: object) -> None:
        with self.lock:
            p = self.partition(topic, partition)
            if "leader" in fields and fields["leader"] != p.leader:
                p.leader_epoch += 1
            for name, value in fields.items():
                setattr(p, name, value)
            self.version += 1

    # -- brokers ---------------------------------------------------------------------------------

    def stop_broker(self, broker: int) -> None:
        with self.lock:
            leader = self.quorum()[0]
            if broker in self.unregistered:  # started without a controller, stopped before one came
                self.unregistered.discard(broker)
                self._quorum_member_stopped(broker, leader)
                return
            if broker not in self.live or broker in self.unnoticed:
                return
            if self.mode is Mode.KRAFT and leader == NO_LEADER:  # nobody to fence it: the metadata keeps it
                self.unnoticed.add(broker)
                self._quorum_member_stopped(broker, leader)
                return
            self.live.discard(broker)
            if self.voters is not None and broker in self.voters:
                self._voter_stopped(broker)
            self._follow_controller()
            self._leader_elected(leader)
            if self.mode is Mode.KRAFT:
                self._kraft_fence(broker)
            else:
                self._zk_broker_failure(broker)
            self.version += 1

    def start_broker(self, broker: int, rejoin_isr: bool = True) -> list[tuple[str, int]]:
        """A broker is unfenced; returns the partitions that got a leader again. With `rejoin_isr=False`
        nobody rejoins an ISR yet (a restart catching up: `rejoin_isr` and `rejoin_followers` later)."""
        with self.lock:
            if broker not in self.broker_ids:
                raise KeyError(f"no such broker: {broker}")
            leader = self.quorum()[0]
            if broker in self.unnoticed:  # back before a controller noticed it had gone
                self.unnoticed.discard(broker)
                self._quorum_member_started(broker, leader)
                return []
            if broker in self.live or broker in self.unregistered:
                return []
            if self.mode is Mode.KRAFT and leader == NO_LEADER:  # fenced until a controller unfences it
                self.unregistered.add(broker)
                self._quorum_member_started(broker, leader)  # (its vote may elect one: it is unfenced then)
                return []
            return self._unfence(broker, leader, rejoin_isr)

    def is_running(self, broker: int) -> bool:
        """Whether the broker's process runs, whatever the metadata says yet (`unnoticed`, `unregistered`)."""
        with self.lock:
            return (broker in self.live and broker not in self.unnoticed) or broker in self.unregistered

    def _quorum_member_stopped(self, broker: int, leader: int) -> None:
        if self.voters is not None and broker in self.voters:
            self._voter_stopped(broker)
        self._follow_controller()
        self._leader_elected(leader)

    def _quorum_member_started(self, broker: int, leader: int) -> None:
        self.last_fetches.pop(broker, None)
        self._follow_controller()
        self._leader_elected(leader)

    def _unfence(self, broker: int, leader: int, rejoin_isr: bool) -> list[tuple[str, int]]:
        """The controller unfences a started broker (`leader`: the quorum's leader before it started)."""
        with self.lock:
            self.live.add(broker)
            self.last_fetches.pop(broker, None)
            self._follow_controller()
            self._leader_elected(leader)
            led_again: list[tuple[str, int]] = []
            for topic in self.topics.values():
                for pid, p in enumerate(topic.partitions):
                    if p.leader == NO_LEADER or p.leader not in self.live:
                        self._offline_election(topic, p)
                        if p.leader in self.live:
                            led_again.append((topic.name, pid))
            if rejoin_isr:
                self.rejoin_isr(broker)
                self.rejoin_followers(led_again)
            self.version += 1
            return led_again

    def rejoin_followers(self, partitions: Iterable[tuple[str, int]], behind: Iterable[int] = ()) -> None:
        """A partition led again has followers again: its live replicas out of the ISR fetch from the new
        leader, catch up and rejoin, but for the brokers `behind` (still catching up themselves)."""
        behind = set(behind)
        with self.lock:
            if not self.has_active_controller():  # the leaders' AlterPartition needs the controller
                return
            for name, pid in partitions:
                topic = self.topics.get(name)
                if topic is None or pid >= len(topic.partitions):
                    continue
                p = topic.partitions[pid]
                if p.leader not in self.live:
                    continue
                for replica in p.replicas:
                    if replica in self.live and replica not in p.isr and replica not in behind:
                        self._expand_isr(topic, p, replica)
            self.version += 1

    def rejoin_isr(self, broker: int, limit: int | None = None) -> int:
        """A live broker's replicas that have caught up rejoin the ISR (the leader's AlterPartition), in
        partition order, at most `limit` of them (None: all); returns how many are still out of an ISR
        they could join (a partition without a live leader cannot take them back yet)."""
        with self.lock:
            if not self.has_active_controller():  # the leaders' AlterPartition needs the controller
                return sum(1 for _, p in self._all_partitions() if broker in p.replicas and broker not in p.isr)
            joined = waiting = 0
            for topic, p in self._all_partitions():
                if broker in p.replicas and broker not in p.isr and p.leader in self.live and broker in self.live:
                    if limit is not None and joined >= limit:
                        waiting += 1
                        continue
                    self._expand_isr(topic, p, broker)
                    joined += 1
            if joined:
                self.version += 1
            return waiting

    def quorum(self) -> tuple[int, list[int]]:
        """(leader, voters) of the KRaft controller quorum; the leader is -1 while a majority of the voters
        is down (combined mode: brokers 1 to 3, the leader `controller_id`; dedicated: DEDICATED_CONTROLLERS)."""
        with self.lock:
            if self.voters is not None:
                return self.controller_id, list(self.voters)
            return self._dedicated_leader, list(DEDICATED_CONTROLLERS)

    def has_active_controller(self) -> bool:
        """Whether a controller can act: in KRaft mode the quorum has a leader; in zk mode a broker controls."""
        if self.mode is Mode.KRAFT:
            return self.quorum()[0] != NO_LEADER
        return self.controller_id != NO_LEADER

    def stop_controller(self, node: int) -> None:
        """Stop a dedicated controller node; the quorum's leader moves to the lowest live one, and there is
        none while a majority of them is down (Raft elects no leader without a majority)."""
        self._set_controller_down(node, True)

    def start_controller(self, node: int) -> None:
        """Start a dedicated controller node again (with a majority back, the lowest live one leads)."""
        self._set_controller_down(node, False)

    def _set_controller_down(self, node: int, down: bool) -> None:
        with self.lock:
            if self.mode is not Mode.KRAFT or self.voters is not None:
                raise ValueError("only a KRaft sandbox in dedicated mode has controller nodes apart from its brokers; "
                                 "in combined mode stop and start brokers 1 to 3")
            if node not in DEDICATED_CONTROLLERS:
                raise KeyError(f"no such controller node: {node} (the controllers: "
                               f"{', '.join(map(str, DEDICATED_CONTROLLERS))})")
            if down == (node in self.controllers_down):
                return
            leader = self._dedicated_leader
            if down:
                self.controllers_down.add(node)
                self._voter_stopped(node)
            else:
                self.controllers_down.discard(node)
                self.last_fetches.pop(node, None)
            live = [c for c in DEDICATED_CONTROLLERS if c not in self.controllers_down]
            if 2 * len(live) <= len(DEDICATED_CONTROLLERS):
                self._dedicated_leader = NO_LEADER
            elif self._dedicated_leader not in live:
                self._dedicated_leader = live[0]
            self._leader_elected(leader)
            self.version += 1

    def move_controller(self, broker: int) -> None:
        with self.lock:
            if broker not in self.live:
                raise ValueError(f"broker {broker} is not live")
            if self.voters is not None and (broker not in self.voters or self._live_voters() is None):
                raise ValueError(f"broker {broker} cannot lead the controller quorum (voters: {self.voters}, "
                                 "a majority of them live)")
            leader = self.quorum()[0]
            self.controller_id = broker
            self._leader_elected(leader)
            self.version += 1

    def _voter_stopped(self, node: int) -> None:
        """The quorum's leader stops hearing from a voter: its last fetch is now, at the log's end."""
        self.last_fetches[node] = (self.version, int(time.time() * 1000))

    def _leader_elected(self, before: int) -> None:
        """After the quorum may have changed: a new leader (another node, or one after none) is a new epoch,
        and knows nothing of the voters that are down (LeaderState starts without their fetches)."""
        leader = self.quorum()[0]
        if leader != NO_LEADER and leader != before and self.mode is Mode.KRAFT:
            self.quorum_epoch += 1
            self.last_fetches = dict.fromkeys(self.last_fetches, (-1, -1))
            self._catch_up_with_brokers(leader)

    def _catch_up_with_brokers(self, leader: int) -> None:
        """A new active controller fences the brokers that stopped without one (their heartbeats do not come)
        and unfences those that started meanwhile."""
        for broker in sorted(self.unnoticed):
            self.unnoticed.discard(broker)
            self.live.discard(broker)
            self._follow_controller()
            self._kraft_fence(broker)
        for broker in sorted(self.unregistered):
            self.unregistered.discard(broker)
            self._unfence(broker, leader, rejoin_isr=True)
        self.version += 1

    def _live_voters(self) -> list[int] | None:
        """Combined mode: the live voters, in id order, when they are a majority (else None: no quorum)."""
        voters = self.voters or []
        live = [v for v in voters if self.is_running(v)]
        return live if 2 * len(live) > len(voters) else None

    def _follow_controller(self) -> None:
        """After a broker stops or starts: a controller that is gone is replaced by the lowest live broker
        (combined mode: the lowest live voter, and none while a majority of the voters is down, as a Raft
        quorum elects no leader without a majority; a non-voter never leads)."""
        if self.voters is None:
            if self.controller_id not in self.live:
                self.controller_id = min(self.live) if self.live else NO_LEADER
            return
        live = self._live_voters()
        if live is None:
            self.controller_id = NO_LEADER
        elif self.controller_id not in live:
            self.controller_id = live[0]

    def _all_partitions(self) -> Iterable[tuple[Topic, Partition]]:
        for topic in self.topics.values():
            for p in topic.partitions:
                yield topic, p

    def _apply(self, p: Partition, change: Change, sets_leader: bool | None = None) -> None:
        """Replay a change; the leader epoch goes up when the record sets a leader (by default: a new one)."""
        if change.leader != p.leader if sets_leader is None else sets_leader:
            p.leader_epoch += 1
        p.leader, p.isr, p.elr, p.last_known_elr = change

    def _kraft_fence(self, broker: int) -> None:
        def acceptable(r: int) -> bool:
            return r != broker and r in self.live
        for topic, p in self._all_partitions():
            if broker in p.isr:
                kind = ElectionKind.UNCLEAN if topic.unclean_enabled else ElectionKind.ONLINE
                change = kraft_partition_change(p, kind, acceptable, elr_enabled=self.elr_enabled,
                                                min_isr=topic.min_isr,
                                                target_isr=[r for r in p.isr if r != broker])
                if change:
                    self._apply(p, change)

    def _zk_broker_failure(self, broker: int) -> None:
        for topic, p in self._all_partitions():
            if p.leader == broker:
                self._offline_election(topic, p)
        for _, p in self._all_partitions():
            if broker in p.isr:  # doRemoveReplicasFromIsr: one newLeaderAndIsr write, leader epoch + 1
                if len(p.isr) > 1:
                    p.isr = [r for r in p.isr if r != broker]
                if p.leader == broker:
                    p.leader = NO_LEADER
                p.leader_epoch += 1

    def _offline_election(self, topic: Topic, p: Partition) -> None:
        """Elect a leader for a partition without a live one (controller-triggered, not admin)."""
        if self.mode is Mode.KRAFT:
            kind = ElectionKind.UNCLEAN if topic.unclean_enabled else ElectionKind.ONLINE
            change = kraft_partition_change(p, kind, self.live.__contains__,
                                            elr_enabled=self.elr_enabled, min_isr=topic.min_isr)
            if change:
                self._apply(p, change)
            return
        chosen = zk_offline_leader(p, self.live, allow_unclean=topic.unclean_enabled)
        if chosen is not None:
            self._apply(p, Change(chosen[0], chosen[1], [], []))

    def _expand_isr(self, topic: Topic, p: Partition, broker: int) -> None:
        if self.mode is Mode.ZK:
            p.isr = p.isr + [broker]
            return
        change = kraft_partition_change(p, ElectionKind.ONLINE, self.live.__contains__,
                                        elr_enabled=self.elr_enabled, min_isr=topic.min_isr,
                                        target_isr=p.isr + [broker])
        if change:
            self._apply(p, change)

    # -- ElectLeaders ----------------------------------------------------------------------------

    def elect_leaders(self, election_type: int, requested: list[tuple[str, list[int]]] | None,
                      *, broker: int) -> ElectionAnswer:
        """The answer to an authorized ElectLeaders request received by `broker`."""
        with self.lock:
            if self.mode is Mode.KRAFT:
                answer = self._kraft_elect(election_type, requested)
            else:
                answer = self._zk_elect(election_type, requested, broker)
            self.version += 1
            return answer

    def _kraft_elect(self, election_type: int, requested: list[tuple[str, list[int]]] | None
                     ) -> ElectionAnswer:
        if requested is not None and not requested:  # QuorumController: "if it's empty, there is nothing to do"
            return ElectionAnswer(ke.NONE, [])
        if election_type not in (PREFERRED, UNCLEAN):
            return error_answer(requested, ke.INVALID_REQUEST, f"Unknown election type {election_type}")
        records: list[tuple[tuple[str, int], Partition, Change, bool]] = []
        results: list[tuple[str, list[ItemResult]]] = []
        if requested is None:
            for topic in self.topics.values():
                items = [self._kraft_elect_one(topic.name, pid, election_type, records)
                         for pid in range(len(topic.partitions))]
                results.append((topic.name, [i for i in items if i.error_code != ke.ELECTION_NOT_NEEDED]))
        else:
            for name, pids in requested:
                results.append((name, [self._kraft_elect_one(name, pid, election_type, records)
                                       for pid in pids]))
        if len(records) > self.max_records:
            return error_answer(requested, ke.POLICY_VIOLATION, POLICY_VIOLATION_MESSAGE)
        failed = self._empty_batch_refused(len(records))
        if not failed or self._failover_keeps():
            self._hold_back_from_brokers([(tp, p) for tp, p, _, _ in records], len(records))
            for _, p, change, sets_leader in records:  # built from the state before the request: a partition
                self._apply(p, change, sets_leader)      # named twice is two records, two epoch bumps
        if failed:
            return error_answer(requested, ke.UNKNOWN_SERVER_ERROR, None)
        return ElectionAnswer(ke.NONE, results)

    def _empty_batch_refused(self, records: int) -> bool:
        """`appendRecords` ends a write of a multiple of `max_records_per_batch` records with an empty batch;
        a release whose Raft refuses it fails the request (the controller renounces: a failover)."""
        batch = self.limits.max_records_per_batch
        failed = self.limits.empty_batch_fails and records > 0 and records % batch == 0
        self.failovers += failed
        return failed

    def _failover_keeps(self) -> bool:
        """Whether the full batches written before the refused empty one survive the failover."""
        keep = self.failover_keeps_writes
        return random.random() < 0.5 if keep is None else keep

    def _hold_back_from_brokers(self, changed: list[tuple[tuple[str, int], Partition]], records: int) -> None:
        """Keep the brokers' metadata showing `changed` as they are now, for the write's publication lag."""
        if self.metadata_lag_per_record_s <= 0 or not records:
            return
        before: dict[tuple[str, int], tuple[int, int, list[int]]] = {}
        for tp, p in changed:
            before.setdefault(tp, (p.leader, p.leader_epoch, list(p.isr)))
        self._unpublished.append((time.monotonic() + records * self.metadata_lag_per_record_s, before))

    def unpublished(self) -> dict[tuple[str, int], tuple[int, int, list[int]]]:
        """What the brokers' metadata still shows for partitions whose election writes they have not
        published yet: (leader, leader epoch, ISR) before the earliest such write; empty when caught up."""
        with self.lock:
            now = time.monotonic()
            self._unpublished = [(at, before) for at, before in self._unpublished if at > now]
            shown: dict[tuple[str, int], tuple[int, int, list[int]]] = {}
            for _, before in self._unpublished:
                for tp, values in before.items():
                    shown.setdefault(tp, values)
            return shown

    def _kraft_elect_one(self, name: str, pid: int, election_type: int,
                         records: list[tuple[tuple[str, int], Partition, Change, bool]]) -> ItemResult:
        topic = self.topics.get(name)
        if topic is None:
            return ItemResult(pid, ke.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {name}")
        if not 0 <= pid < len(topic.partitions):
            return ItemResult(pid, ke.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {name}-{pid}")
        p = topic.partitions[pid]
        if ((election_type == PREFERRED and p.leader == p.replicas[0])
                or (election_type == UNCLEAN and p.leader != NO_LEADER)):
            return _default(pid, ke.ELECTION_NOT_NEEDED)
        kind = ElectionKind.PREFERRED if election_type == PREFERRED else ElectionKind.UNCLEAN
        change = kraft_partition_change(p, kind, self.live.__contains__,
                                        elr_enabled=self.elr_enabled, min_isr=topic.min_isr)
        if change is None:
            code = ke.PREFERRED_LEADER_NOT_AVAILABLE if election_type == PREFERRED \
                else ke.ELIGIBLE_LEADERS_NOT_AVAILABLE
            return _default(pid, code)
        records.append(((name, pid), p, change, change.leader != p.leader))
        return ItemResult(pid, ke.NONE, None)

    def _zk_elect(self, election_type: int, requested: list[tuple[str, list[int]]] | None,
                  broker: int) -> ElectionAnswer:
        if election_type not in (PREFERRED, UNCLEAN):  # ElectionType.valueOf throws: unexpected error
            return error_answer(requested, ke.lookup(-1).code, None)
        if requested is None:  # KafkaApis asks for every partition in its metadata cache
            wanted = [(t.name, pid) for t in self.topics.values() for pid in range(len(t.partitions))]
        else:
            wanted = list(dict.fromkeys((name, pid) for name, pids in requested for pid in pids))
        if broker != self.controller_id:
            items = {tp: ItemResult(tp[1], ke.NOT_CONTROLLER, None) for tp in wanted}
        else:
            items = {tp: self._zk_elect_one(tp[0], tp[1], election_type) for tp in wanted}
        if requested is None:
            items = {tp: i for tp, i in items.items() if i.error_code != ke.ELECTION_NOT_NEEDED}
        grouped: dict[str, list[ItemResult]] = {}
        for (name, _), item in items.items():
            grouped.setdefault(name, []).append(item)
        return ElectionAnswer(ke.NONE, list(grouped.items()))

    def _zk_elect_one(self, name: str, pid: int, election_type: int) -> ItemResult:
        topic = self.topics.get(name)
        if topic is None or not 0 <= pid < len(topic.partitions):
            return ItemResult(pid, ke.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
        p = topic.partitions[pid]
        if election_type == PREFERRED:
            if p.leader == p.replicas[0]:
                return _default(pid, ke.ELECTION_NOT_NEEDED)
            if self._zk_elect_preferred(p):
                return ItemResult(pid, ke.NONE, None)
            return ItemResult(pid, ke.PREFERRED_LEADER_NOT_AVAILABLE,
                              f"Failed to elect leader for partition {name}-{pid} under strategy "
                              "PreferredReplicaPartitionLeaderElectionStrategy")
        if p.leader != NO_LEADER and p.leader in self.live:
            return _default(pid, ke.ELECTION_NOT_NEEDED)
        chosen = zk_offline_leader(p, self.live, allow_unclean=True)
        if chosen is None:
            return ItemResult(pid, ke.ELIGIBLE_LEADERS_NOT_AVAILABLE,
                              f"Failed to elect leader for partition {name}-{pid} under strategy "
                              "OfflinePartitionLeaderElectionStrategy(true)")
        self._apply(p, Change(chosen[0], chosen[1], [], []))
        return ItemResult(pid, ke.NONE, None)


    # -- the automatic preferred-leader election (auto.leader.rebalance.enable) -------------------

    def rebalance_leaders(self) -> int:
        """One run of the controller's automatic leader rebalance; returns how many leaders moved.

        zk (`KafkaController.checkAndTriggerAutoLeaderRebalance`): per broker B, the partitions whose
        preferred replica is B but whose leader is not (leaderless included); when they are more than
        `leader.imbalance.per.broker.percentage` percent of B's, and no partition is being reassigned,
        those whose preferred replica is alive and in the ISR elect it.
        kraft (`ReplicationControlManager.maybeBalancePartitionLeaders`): no threshold; every partition
        with a leader other than its preferred replica gets a preferred election, at most 1000 records
        a pass, passes repeated at once while a pass is full.
        """
        with self.lock:
            if not self.has_active_controller():
                return 0
            moved = self._kraft_rebalance() if self.mode is Mode.KRAFT else self._zk_rebalance()
            if moved:
                self.version += 1
            return moved

    def _zk_rebalance(self) -> int:
        threshold = float(self.broker_configs["leader.imbalance.per.broker.percentage"]) / 100
        reassigning = any(p.adding or p.removing for _, p in self._all_partitions())
        by_preferred: dict[int, list[Partition]] = {}
        for _, p in self._all_partitions():
            by_preferred.setdefault(p.replicas[0], []).append(p)
        moved = 0
        for broker, partitions in by_preferred.items():
            off = [p for p in partitions if p.leader != broker]
            if reassigning or len(off) / len(partitions) <= threshold:
                continue
            moved += sum(self._zk_elect_preferred(p) for p in off)  # canPreferredReplicaBeLeader, then elect
        return moved

    def _zk_elect_preferred(self, p: Partition) -> bool:
        """PreferredReplicaPartitionLeaderElectionStrategy: replicas[0], if it is alive and in the ISR."""
        preferred = p.replicas[0]
        if preferred not in self.live or preferred not in p.isr:
            return False
        self._apply(p, Change(preferred, p.isr, [], []))
        return True

    def _kraft_rebalance(self) -> int:
        moved = 0
        total = sum(len(t.partitions) for t in self.topics.values())
        for _ in range(total // MAX_ELECTIONS_PER_IMBALANCE + 1):  # each full pass moves 1000 partitions on
            records: list[tuple[Partition, Change]] = []
            for topic, p in self._all_partitions():
                if p.leader == NO_LEADER or p.leader == p.replicas[0]:  # not in imbalancedPartitions
                    continue
                if len(records) >= MAX_ELECTIONS_PER_IMBALANCE:
                    break
                change = kraft_partition_change(p, ElectionKind.PREFERRED, self.live.__contains__,
                                                elr_enabled=self.elr_enabled, min_isr=topic.min_isr)
                if change:
                    records.append((p, change))
            for p, change in records:
                moved += change.leader != p.leader
                self._apply(p, change)
            if len(records) < MAX_ELECTIONS_PER_IMBALANCE:
                break
        return moved

    # -- reassignments -------------------------------------------------------------------------

    def alter_reassignments(self, wanted: list[tuple[str, int, list[int] | None]]
                            ) -> tuple[int, list[tuple[int, str | None]]]:
        """A whole AlterPartitionReassignments request: (top-level code, each partition's answer).

        kraft: `ReplicationControlManager.alterPartitionReassignments` writes one record per partition it
        changes into a `BoundedList` (more than `max_records`: POLICY_VIOLATION, nothing done), then
        `appendRecords` as for an election (`_empty_batch_refused`). zk: no such limit.
        """
        with self.lock:
            failed = False
            if self.mode is Mode.KRAFT:
                records = sum(self._writes_record(name, pid, target) for name, pid, target in wanted)
                if records > self.max_records:
                    return ke.POLICY_VIOLATION, []
                failed = self._empty_batch_refused(records)
                if failed and not self._failover_keeps():
                    return ke.UNKNOWN_SERVER_ERROR, []
            answers = [self.alter_reassignment(name, pid, target) for name, pid, target in wanted]
            return (ke.UNKNOWN_SERVER_ERROR, []) if failed else (ke.NONE, answers)

    def _writes_record(self, name: str, pid: int, target: list[int] | None) -> bool:
        """Whether one partition of a reassignment request changes it (a PartitionChangeRecord)."""
        topic = self.topics.get(name)
        if topic is None or not 0 <= pid < len(topic.partitions):
            return False
        p = topic.partitions[pid]
        if target is None:
            return bool(p.adding or p.removing)
        return not self._invalid_assignment(name, pid, target) and target != p.replicas

    def alter_reassignment(self, name: str, pid: int, target: list[int] | None) -> tuple[int, str | None]:
        """One partition of AlterPartitionReassignments: (error code, message).

        A target with no new replica (a reorder, or only removals) completes at once; one that adds
        replicas stays pending until `finish_reassignment`. None cancels a pending reassignment.
        """
        with self.lock:
            topic = self.topics.get(name)
            if topic is None or not 0 <= pid < len(topic.partitions):
                return ke.UNKNOWN_TOPIC_OR_PARTITION, None
            p = topic.partitions[pid]
            if target is None:
                if not (p.adding or p.removing):
                    return ke.NO_REASSIGNMENT_IN_PROGRESS, None
                self._complete(topic, p, [r for r in p.replicas if r not in p.adding])
                self.version += 1
                return ke.NONE, None
            invalid = self._invalid_assignment(name, pid, target)
            if invalid:
                return ke.INVALID_REPLICA_ASSIGNMENT, invalid
            current = [r for r in p.replicas if r not in p.adding]
            adding = [r for r in target if r not in current]
            if not adding:
                self._complete(topic, p, list(target))
            else:
                p.removing = [r for r in current if r not in target]
                p.adding = adding
                p.replicas = list(target) + p.removing
                if self.mode is Mode.ZK:  # phase A2: a new leader epoch for RS = ORS + TRS
                    p.leader_epoch += 1
            self.version += 1
            return ke.NONE, None

    def _invalid_assignment(self, name: str, pid: int, target: list[int]) -> str | None:
        if self.mode is Mode.ZK:
            shown = "List(" + ", ".join(map(str, target)) + ")"
            if not target:
                return "Empty replica list specified in partition reassignment."
            if len(set(target)) != len(target):
                return f"Duplicate replica ids in partition reassignment replica list: {shown}"
            if any(r < 0 for r in target):
                return f"Invalid broker id in replica list: {shown}"
            missing = [r for r in target if r not in self.live]
            if missing:
                return (f"Some brokers specified for partition {name}-{pid} reassignment are not alive: "
                        "List(" + ", ".join(map(str, missing)) + ")")
            return None
        if not target:
            return "The manual partition assignment includes an empty replica list."
        previous = None
        for broker in sorted(target):
            if broker not in self.broker_ids:
                return f"The manual partition assignment includes broker {broker}, but no such broker is registered."
            if broker == previous:
                return f"The manual partition assignment includes the broker {broker} more than once."
            previous = broker
        return None

    def finish_reassignment(self, name: str, pid: int) -> None:
        """Test control: the added replicas caught up, so the pending reassignment completes."""
        with self.lock:
            topic = self.topic(name)
            p = self.partition(name, pid)
            if not (p.adding or p.removing):
                raise ValueError(f"no reassignment in progress for {name}-{pid}")
            if not self.has_active_controller():
                raise ValueError(f"no active controller to complete the reassignment of {name}-{pid}")
            down = [r for r in p.adding if r not in self.live]
            if down:
                raise ValueError(f"added replicas {down} of {name}-{pid} are not live and cannot catch up")
            p.isr = p.isr + [r for r in p.adding if r not in p.isr]
            self._complete(topic, p, [r for r in p.replicas if r not in p.removing])
            self.version += 1

    def _complete(self, topic: Topic, p: Partition, replicas: list[int]) -> None:
        """Make `replicas` the assignment; a leader no longer in it is replaced."""
        removed = [r for r in p.replicas if r not in replicas]
        p.replicas, p.adding, p.removing = replicas, [], []
        if self.mode is Mode.KRAFT:
            # PartitionChangeBuilder: the online rule; one record, whose leader epoch goes up when the leader
            # changes or a replica leaves (triggerLeaderEpochBumpForReplicaReassignmentIfNeeded)
            acceptable = lambda r: r in self.live and r in replicas  # noqa: E731
            change = kraft_partition_change(p, ElectionKind.ONLINE, acceptable, elr_enabled=self.elr_enabled,
                                            min_isr=topic.min_isr, target_isr=[r for r in p.isr if r in replicas])
            if change:
                self._apply(p, change, sets_leader=change.leader != p.leader or bool(removed))
            elif removed:
                p.leader_epoch += 1
            return
        # KafkaController.onPartitionReassignment, B3 (moveReassignedPartitionLeaderIfRequired): a leader
        # outside the new replicas, or dead, gives way to the first of them alive and in the ISR (the
        # election fails without one); a leader that stays gets a new epoch all the same.
        if p.leader not in replicas or p.leader not in self.live:
            leader = next((r for r in replicas if r in self.live and r in p.isr), None)
            if leader is not None:
                p.leader, p.leader_epoch = leader, p.leader_epoch + 1
        else:
            p.leader_epoch += 1
        for replica in removed:  # B4: each removed replica goes offline (doRemoveReplicasFromIsr, one write each)
            if replica in p.isr:
                if len(p.isr) > 1:
                    p.isr = [r for r in p.isr if r != replica]
                if p.leader == replica:
                    p.leader = NO_LEADER
                p.leader_epoch += 1

    def reassignments(self, wanted: list[tuple[str, list[int]]] | None) -> list[tuple[str, int, Partition]]:
        """Pending reassignments, of every partition or of those asked for (unknown ones left out)."""
        with self.lock:
            if wanted is None:
                wanted = [(t.name, list(range(len(t.partitions)))) for t in self.topics.values()]
            found = []
            for name, pids in wanted:
                topic = self.topics.get(name)
                for pid in pids:
                    if topic and 0 <= pid < len(topic.partitions):
                        p = topic.partitions[pid]
                        if p.adding or p.removing:
                            found.append((name, pid, p))
            return found


def zk_offline_leader(p: Partition, live: set[int], allow_unclean: bool) -> tuple[int, list[int]] | None:
    """`Election.leaderForOffline`: (leader, new ISR), or None when no replica can lead."""
    leader = next((r for r in p.replicas if r in live and r in p.isr), None)
    if leader is not None:
        return leader, [r for r in p.isr if r in live]
    if allow_unclean:
        leader = next((r for r in p.replicas if r in live), None)
        if leader is not None:
            return leader, [leader]
    return None


def _default(pid: int, code: int) -> ItemResult:
    """`new ApiError(error)`: the error's default message."""
    return ItemResult(pid, code, ke.lookup(code).message)


def error_answer(requested: list[tuple[str, list[int]]] | None, code: int,
                 message: str | None) -> ElectionAnswer:
    """`ElectLeadersRequest.getErrorResponse`: the code at top level and on every requested partition.

    `ApiError.fromThrowable` drops a message equal to the error's default text.
    """
    if message == ke.lookup(code).message:
        message = None
    results = [(name, [ItemResult(pid, code, message) for pid in pids]) for name, pids in requested or []]
    return ElectionAnswer(code, results)
