"""Who leads one partition: the KRaft controller's `PartitionChangeBuilder` and ZooKeeper's `Election`.

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
- The last known leader (`maybeUpdateLastKnownLeader`, ELR on): to 4.1, kept when a change empties the ISR
  and cleared by a change that leaves a leader; from 4.2 (commit 162db130f6), kept when a change takes the
  leader away and cleared only by one that names a leader (`leaderless_rule`; versions.py, `PartitionRules`).
- A replica that catches up rejoins the ISR as the partition leader's AlterPartition lists it
  (`expanded_isr`): appended to 4.1, by broker id from 4.2 (KAFKA-19301).

zk mode follows the ZooKeeper-mode controller of Kafka 3.x (`KafkaController`, `Election.scala`,
`PartitionStateMachine`): preferred elects `replicas[0]` only if it is live and in the ISR; unclean
(only for a partition without a live leader) takes the first live ISR replica, else the first live
replica with ISR = [it]; failures carry the controller's "Failed to elect leader ..." message.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from enum import Enum
from typing import NamedTuple

from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox.controller.model import Partition


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
    leaderless_rule: bool = False,
) -> Change | None:
    """`PartitionChangeBuilder.build()` for leadership and ISR: the change record, or None for no-op.
    `leaderless_rule`: 4.2's LastKnownElr rule."""
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
    last_known = _last_known_elr(p, new_leader, new_isr, leaderless_rule) if elr_enabled else []
    change = Change(p.leader if new_leader is None else new_leader,
                    p.isr if new_isr is None else new_isr, t_elr, last_known)
    if (change.leader, change.isr, change.elr, change.last_known_elr) == (
            p.leader, p.isr, p.elr, p.last_known_elr):
        return None
    return change


def _last_known_elr(p: Partition, new_leader: int | None, new_isr: list[int] | None,
                    leaderless_rule: bool) -> list[int]:
    """`maybeUpdateLastKnownLeader`: the record's LastKnownElr (`new_leader`, `new_isr`: None when the record
    leaves them as they are)."""
    if leaderless_rule:  # 4.2: the change that takes the leader away keeps it; one that names a leader clears it
        if new_leader == NO_LEADER and not p.last_known_elr:
            return [p.leader]
        if new_leader is not None and new_leader >= 0:
            return []
        return list(p.last_known_elr)
    if new_isr == [] and p.last_known_elr != [p.leader]:
        return [p.leader]
    if (new_leader is not None and new_leader >= 0) or (p.leader != NO_LEADER and new_leader != NO_LEADER):
        return []
    return list(p.last_known_elr)


def expanded_isr(isr: list[int], joining: Iterable[int], by_broker_id: bool) -> list[int]:
    """The ISR a partition leader's AlterPartition asks for when `joining` have caught up
    (`Partition.prepareIsrExpand`): appended (to 4.1: an immutable Scala Set, which keeps up to four members in
    the order given; past four, Kafka's order is a hash trie's, not modelled), or listed by broker id (4.2: a
    Scala `mutable.HashSet`, whose order for small ids is ascending)."""
    added = isr + [r for r in joining if r not in isr]
    return sorted(added) if by_broker_id else added


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
