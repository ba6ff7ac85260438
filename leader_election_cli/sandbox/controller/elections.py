"""ElectLeaders as the controller answers it, and the controller's automatic leader rebalance.

The rules for one partition are in partition_change.py.

Every change an election request would write is one metadata record (a PartitionChangeRecord, nothing
else); more than `max_records_per_request` (Kafka: 10,000, a `BoundedList`) fails the whole request
with POLICY_VIOLATION. Each requested partition is judged against the state before the request.
A release whose Raft refuses the empty batch `QuorumController.appendRecords` adds after exactly
10,000 records (`ControllerLimits.empty_batch_fails`, Kafka 4.1) fails such a request with
UNKNOWN_SERVER_ERROR after a controller failover, in which the 10,000 changes survive or are lost
(`failover_keeps_writes`; None: either, at random, as the race decides on a real cluster).
AlterPartitionReassignments counts its records the same way (one per partition it changes).

Brokers' metadata can lag the controller (`metadata_lag_per_record_s`, 0 unless asked): the changes
of one election request show in Metadata answers only that long per record after the answer, as a
broker publishes a large metadata delta (see Sandbox).

The automatic leader rebalance (`auto.leader.rebalance.enable`, on by default as in Kafka; the Sandbox
runs `rebalance_leaders` every `leader.imbalance.check.interval.seconds`): zk mode elects the preferred
replicas of a broker whose share of partitions led elsewhere is above
`leader.imbalance.per.broker.percentage`, while no reassignment is in progress; kraft mode has no
threshold and takes every partition led off its preferred replica.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass
from typing import NamedTuple

from leader_election_cli import kafka_errors as ke
from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox.controller.model import Mode, Partition
from leader_election_cli.sandbox.controller.partition_change import Change, ElectionKind, zk_offline_leader

POLICY_VIOLATION_MESSAGE = "Unable to perform excessively large batch operation."
PREFERRED, UNCLEAN = 0, 1
MAX_ELECTIONS_PER_IMBALANCE = 1000  # QuorumController: one pass of maybeBalancePartitionLeaders


class ItemResult(NamedTuple):
    partition: int
    error_code: int
    message: str | None


@dataclass
class ElectionAnswer:
    """What the controller answers an ElectLeaders request: top-level code and per-topic results."""

    error_code: int
    results: list[tuple[str, list[ItemResult]]]


class Elections:
    """`Cluster`'s elections: ElectLeaders requests and the automatic preferred-leader election."""

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
        change = self._kraft_change(topic, p, kind)
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
                change = self._kraft_change(topic, p, ElectionKind.PREFERRED)
                if change:
                    records.append((p, change))
            for p, change in records:
                moved += change.leader != p.leader
                self._apply(p, change)
            if len(records) < MAX_ELECTIONS_PER_IMBALANCE:
                break
        return moved


    # -- unclean elections the controller runs by itself (unclean.leader.election.enable) ----------------

    def elect_unclean_leaders(self) -> int:
        """One run of KRaft's scheduled `electUnclean` task (`ReplicationControlManager.maybeElectUncleanLeaders`,
        every `unclean.leader.election.interval.ms`): each partition without a live leader whose topic enables
        unclean elections (its own config, else the cluster-wide default) gets one by the UNCLEAN rule, at most
        `MAX_ELECTIONS_PER_IMBALANCE` a run; returns how many got a leader. zk mode elects at the broker
        events themselves (`_offline_election`), so it has no such task."""
        with self.lock:
            if self.mode is not Mode.KRAFT or not self.has_active_controller():
                return 0
            elected = 0
            for topic in self.topics.values():
                if elected >= MAX_ELECTIONS_PER_IMBALANCE:
                    break
                if not topic.unclean_enabled:  # (its config once a topic, not once a partition)
                    continue
                for p in topic.partitions:
                    if elected >= MAX_ELECTIONS_PER_IMBALANCE:
                        break
                    if p.leader != NO_LEADER and p.leader in self.live:
                        continue
                    change = self._kraft_change(topic, p, ElectionKind.UNCLEAN)
                    if change and change.leader != NO_LEADER:
                        self._apply(p, change)
                        elected += 1
            if elected:
                self.version += 1
            return elected

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
