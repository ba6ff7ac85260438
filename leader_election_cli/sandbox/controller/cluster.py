"""The controller's cluster: brokers, topics, partitions, and what a broker's stop and start change.

Its elections (elections.py), reassignments (reassignments.py) and controller quorum (quorum.py) are the
parts `Cluster` is built of; the rules for one partition are in partition_change.py.

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

Leader epochs go up as Kafka writes them: kraft with every record that sets a leader (a new one, or
the same one when a reassignment removes a replica); zk with every LeaderAndIsr write (an election, a
replica leaving the ISR, each step of a reassignment).
"""

from __future__ import annotations

import random
import threading
import time
import uuid
from collections.abc import Callable, Iterable

from leader_election_cli.model import NO_LEADER, OFFSETS_TOPIC, PartitionState
from leader_election_cli.sandbox.controller.config_control import ConfigControl
from leader_election_cli.sandbox.controller.configs import topic_config_problem
from leader_election_cli.sandbox.controller.elections import Elections
from leader_election_cli.sandbox.controller.model import (
    DEFAULT_CONFIGS,
    REBALANCE_DEFAULTS,
    Mode,
    Partition,
    Topic,
    default_log_size,
)
from leader_election_cli.sandbox.controller.partition_change import (
    Change,
    ElectionKind,
    expanded_isr,
    kraft_partition_change,
    zk_offline_leader,
)
from leader_election_cli.sandbox.controller.quorum import DEDICATED_CONTROLLERS, Quorum
from leader_election_cli.sandbox.controller.reassignments import Reassignments
from leader_election_cli.sandbox.groups.coordinator import GROUP_DEFAULTS, GroupCoordinator
from leader_election_cli.sandbox.partition_logs import Logs
from leader_election_cli.sandbox.versions import DEFAULT_VERSION, VERSIONS, ControllerLimits, KafkaVersion


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


def random_assignment(brokers: list[int], partitions: int, replication_factor: int,
                      rng: random.Random) -> dict[int, list[int]]:
    """Each partition's replicas drawn at random among `brokers` (a placement Kafka never makes by itself, but
    a cluster reassigned over the years can have: `kafka-leaders sandbox --placement random`)."""
    return {p: rng.sample(brokers, replication_factor) for p in range(partitions)}


def rack_aware_assignment(racks: dict[int, str], partitions: int, replication_factor: int, start_index: int = 0,
                          replica_shift: int = 0) -> dict[int, list[int]]:
    """Kafka's rack-aware `assignReplicasToBrokersRackAware` (AdminUtils; KRaft's `StripedReplicaPlacer` places
    the same way: each partition's replicas on as many racks as it can), with a fixed start index and shift: the
    brokers in rack-alternating order (a1, b1, c1, a2, ...), each next replica the next broker of a rack and a
    broker the partition has not used yet."""
    by_rack: dict[str, list[int]] = {}
    for broker in sorted(racks):
        by_rack.setdefault(racks[broker], []).append(broker)
    ordered = sorted(by_rack)
    brokers = [by_rack[rack][i] for i in range(max(len(b) for b in by_rack.values()))
               for rack in ordered if i < len(by_rack[rack])]  # getRackAlternatedBrokerList
    n, rack_count = len(brokers), len(ordered)
    assignment: dict[int, list[int]] = {}
    shift = replica_shift
    for p in range(partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start_index) % n
        replicas = [brokers[first]]
        used_racks, k = {racks[brokers[first]]}, 0
        for _ in range(replication_factor - 1):
            while True:
                broker = brokers[(first + 1 + (shift * rack_count + k) % (n - 1)) % n]
                k += 1
                if ((racks[broker] not in used_racks or len(used_racks) == rack_count)
                        and (broker not in replicas or len(replicas) == n)):
                    replicas.append(broker)
                    used_racks.add(racks[broker])
                    break
        assignment[p] = replicas
    return assignment


class Cluster(Quorum, Elections, Reassignments, ConfigControl):
    """The controller's view of the cluster: brokers, topics, partitions; thread-safe (one lock)."""

    def __init__(self, broker_ids: Iterable[int], mode: Mode | str, *, elr: bool = True,
                 max_records_per_request: int | None = None, limits: ControllerLimits | None = None,
                 broker_configs: dict[str, str] | None = None, features: dict[str, int] | None = None,
                 release: KafkaVersion | None = None):
        """`release`: the Kafka release whose rules and config listing the cluster follows (None: the default
        release); `features`: the finalized feature levels ApiVersions reports (KRaft); `elr` is what their
        eligible.leader.replicas.version means to the controller (on, as on a new cluster of the default
        release); `limits`: the controller limits (None: the release's; `max_records_per_request` overrides
        its records per request)."""
        self.release = release or VERSIONS[DEFAULT_VERSION]
        self.lock = threading.RLock()
        self.mode = Mode(mode)
        self.broker_ids = sorted(broker_ids)
        self.live: set[int] = set(self.broker_ids)
        self.elr_enabled = elr and self.mode is Mode.KRAFT
        self.features = dict(features or {})
        limits = limits or self.release.controller
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
        self.crashed_voters: set[int] = set()  # combined mode: voters killed, not yet noticed by the controller
        # KRaft without an active controller nobody can fence or unfence a broker: stopped ones stay in the
        # metadata as they were (`unnoticed`), started ones stay fenced (`unregistered`) until a leader is elected
        self.unnoticed: set[int] = set()
        self.unregistered: set[int] = set()
        self._dedicated_leader = DEDICATED_CONTROLLERS[0]  # dedicated mode: the quorum's leader (-1: none)
        self.quorum_epoch = 1  # the controller quorum's leader epoch: one more for each leader elected
        # voters stopped: (log end offset, last fetch time in ms) as the quorum's leader last saw them; (-1, -1)
        # for a leader elected while they were down (it never saw them fetch)
        self.last_fetches: dict[int, tuple[int, int]] = {}
        # dedicated controllers restarted and still catching up with the leader's log: (when it started, when it
        # is caught up, the log end offset and last caught-up time as the leader last knew them), in seconds
        self.voter_catch_ups: dict[int, tuple[float, float, int, int]] = {}
        self.directory_ids = {b: uuid.uuid4() for b in self.broker_ids}  # each broker's log directory.id
        self.controller_addresses: dict[int, tuple[str, int]] = {}  # voter -> controller listener, by the server
        self.cluster_id = "sandbox-" + uuid.uuid4().hex[:14]
        self.addresses: dict[int, tuple[str, int]] = {}  # broker -> listener, filled by the server
        self.racks: dict[int, str] = {}  # broker.rack of the brokers that have one
        self.log_sizes: dict[tuple[str, int], int] = {}  # set by tests; else default_log_size
        self.topics: dict[str, Topic] = {}
        # every broker's static config
        self.broker_configs = {**REBALANCE_DEFAULTS, **GROUP_DEFAULTS, **(broker_configs or {})}
        # dynamic broker configs by broker id, "" the cluster-wide default; with ELR on the controller keeps
        # min.insync.replicas there (ConfigurationControlManager.maybeGenerateElrSafetyRecords)
        self.dynamic_configs: dict[str, dict[str, str]] = {
            "": {"min.insync.replicas": DEFAULT_CONFIGS["min.insync.replicas"]} if self.elr_enabled else {}}
        self.logs = Logs()  # the records written (partition_logs.py): they follow every change of leader and ISR
        self.listening: set[int] = set()  # brokers whose process runs: the server's open listeners
        # reassignments adding replicas -> since when every added replica fetches (reassignments.py)
        self.reassigning: dict[tuple[str, int], float] = {}
        self.groups = GroupCoordinator(self.broker_configs)  # consumer groups (groups/): they follow their coordinator
        # told of every change, under the lock
        self.observers: list[Callable[[], None]] = [self._follow_logs, self._follow_groups]
        self.version = 0  # bumped on every change (lets readers cache encoded answers)

    @property
    def version(self) -> int:
        return self._version

    @version.setter
    def version(self, value: int) -> None:
        self._version = value
        for observer in self.observers:
            observer()

    def _follow_logs(self) -> None:
        if self.logs.partitions:  # (nothing to do, and nothing to compute, until a partition is written)
            self.logs.follow_all(self.topics, self.fetching())

    def _follow_groups(self) -> None:
        topic = self.topics.get(OFFSETS_TOPIC)
        if topic is not None or self.groups.leaders is not None:  # (nothing to follow before the topic is made)
            self.groups.follow(None if topic is None else [p.leader for p in topic.partitions],
                               time.monotonic() * 1000)

    def fetching(self) -> set[int]:
        """The brokers whose replicas copy from their leaders: in the metadata and running (a stopped one whose
        failure the controller has not noticed yet is still named, still in ISRs, and copies nothing)."""
        with self.lock:
            return {b for b in self.live if self.is_running(b) and b in self.listening}

    def process_started(self, broker: int) -> None:
        """The broker listens again: where it is still in an ISR (its stop went unnoticed) it catches up."""
        with self.lock:
            self.listening.add(broker)
            self.logs.caught_up(broker)

    def process_stopped(self, broker: int) -> None:
        with self.lock:
            self.listening.discard(broker)

    # -- reading -------------------------------------------------------------------------------

    def topic(self, name: str) -> Topic:
        try:
            return self.topics[name]
        except KeyError:
            raise KeyError(f"no such topic: {name}") from None

    def topic_by_id(self, topic_id: object) -> Topic | None:
        """The topic of this id (requests name topics by id from Metadata v10, Produce v13, Fetch v13 on)."""
        return next((t for t in self.topics.values() if t.topic_id == topic_id), None)

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
            problem = topic_config_problem(configs or {})
            if problem:
                raise ValueError(problem)
            partitions = [self._new_partition(pid, assignment[pid]) for pid in range(len(assignment))]
            topic = Topic(name, uuid.uuid4(), partitions, dict(configs or {}), self.dynamic_configs[""])
            self.topics[name] = topic
            self.version += 1
            return topic

    def add_partitions(self, name: str, assignments: list[list[int]]) -> None:
        """New partitions at the end of a topic (CreatePartitions), made as `create_topic` makes them."""
        with self.lock:
            partitions = self.topic(name).partitions
            partitions.extend([self._new_partition(len(partitions) + i, replicas)
                               for i, replicas in enumerate(assignments)])
            self.version += 1

    def _new_partition(self, pid: int, replicas: list[int]) -> Partition:
        """A new partition's registration: its ISR the live replicas, its leader the first of them."""
        unknown = [r for r in replicas if r not in self.broker_ids]
        if unknown or not replicas or len(set(replicas)) != len(replicas):
            raise ValueError(f"invalid replicas for partition {pid}: {replicas}")
        isr = [r for r in replicas if r in self.live]
        return Partition(list(replicas), isr, isr[0] if isr else NO_LEADER)

    def delete_topic(self, name: str) -> None:
        """The topic goes, with its partitions' pending reassignments, its logs (dropped as the logs follow the
        change) and the groups' committed offsets of it (`GroupCoordinator.onPartitionsDeleted`)."""
        with self.lock:
            if self.topics.pop(name, None) is None:
                raise KeyError(f"no such topic: {name}")
            self.groups.forget_topic(name)
            self.version += 1

    def default_assignment(self, partitions: int, replication_factor: int) -> dict[int, list[int]]:
        live = sorted(self.live)
        if partitions < 1:
            raise ValueError("partitions must be at least 1")
        if not 1 <= replication_factor <= len(live):
            raise ValueError(f"replication factor {replication_factor} needs 1..{len(live)} live brokers")
        if live and all(b in self.racks for b in live):  # as Kafka places replicas when every broker has a rack
            return rack_aware_assignment({b: self.racks[b] for b in live}, partitions, replication_factor)
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

    def out_of_isr(self, broker: int) -> int:
        """How many of the broker's replicas are out of their partition's ISR."""
        with self.lock:
            return sum(1 for _, p in self._all_partitions() if broker in p.replicas and broker not in p.isr)

    def rejoin_isr(self, broker: int, limit: int | None = None) -> int:
        """A live broker's replicas that have caught up rejoin the ISR (the leader's AlterPartition), in
        partition order, at most `limit` of them (None: all); returns how many are still out of an ISR
        they could join (a partition without a live leader cannot take them back yet)."""
        with self.lock:
            if not self.has_active_controller():  # the leaders' AlterPartition needs the controller
                return self.out_of_isr(broker)
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

    def _kraft_fence(self, broker: int) -> None:
        def acceptable(r: int) -> bool:
            return r != broker and r in self.live
        for topic, p in self._all_partitions():
            if broker in p.isr:
                kind = ElectionKind.UNCLEAN if topic.unclean_enabled else ElectionKind.ONLINE
                change = self._kraft_change(topic, p, kind, acceptable, target_isr=[r for r in p.isr if r != broker])
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
            change = self._kraft_change(topic, p, kind)
            if change:
                self._apply(p, change)
            return
        chosen = zk_offline_leader(p, self.live, allow_unclean=topic.unclean_enabled)
        if chosen is not None:
            self._apply(p, Change(chosen[0], chosen[1], [], []))

    def _expand_isr(self, topic: Topic, p: Partition, broker: int) -> None:
        isr = expanded_isr(p.isr, [broker], self.release.rules.isr_by_broker_id)
        if self.mode is Mode.ZK:
            p.isr = isr
            return
        change = self._kraft_change(topic, p, ElectionKind.ONLINE, target_isr=isr)
        if change:
            self._apply(p, change)

    def _kraft_change(self, topic: Topic, p: Partition, kind: ElectionKind,
                      acceptable: Callable[[int], bool] | None = None,
                      target_isr: list[int] | None = None) -> Change | None:
        """The KRaft controller's change record for one partition (`kraft_partition_change`) under this
        cluster's ELR setting and release rules; `acceptable`: who may lead (None: the live brokers)."""
        return kraft_partition_change(p, kind, acceptable or self.live.__contains__, elr_enabled=self.elr_enabled,
                                      min_isr=topic.min_isr, target_isr=target_isr,
                                      leaderless_rule=self.release.rules.last_known_elr_when_leaderless)

    # -- the records -----------------------------------------------------------------------------

    def _all_partitions(self) -> Iterable[tuple[Topic, Partition]]:
        for topic in self.topics.values():
            for p in topic.partitions:
                yield topic, p

    def _apply(self, p: Partition, change: Change, sets_leader: bool | None = None) -> None:
        """Replay a change; the leader epoch goes up when the record sets a leader (by default: a new one)."""
        if change.leader != p.leader if sets_leader is None else sets_leader:
            p.leader_epoch += 1
        p.leader, p.isr, p.elr, p.last_known_elr = change
