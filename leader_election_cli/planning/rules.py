"""How a controller decides one partition's election: Kafka's own rules, for KRaft and ZooKeeper mode.

Each rule is a pure function of one `PartitionState` and the set of acceptable leaders (live brokers
whose replica of this partition is not on an offline log directory). It returns a `Decision`: the error
code the controller would answer, and the partition's leader, ISR and ELR afterwards.

Sources (Apache Kafka):
- KRaft: `ReplicationControlManager.electLeader` (preconditions and error codes) and
  `PartitionChangeBuilder.electPreferredLeader` / `electAnyLeader` / `tryElection` (the choice and the
  ISR/ELR it writes). `LeaderAcceptor` accepts unfenced brokers whose log directory is online.
- ZooKeeper mode: `KafkaController.processReplicaLeaderElection` (preconditions), `Election.scala`
  (new ISR) and `PartitionLeaderElectionAlgorithms` (the choice); failure messages come from
  `PartitionStateMachine.doElectLeaderForPartitions`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from leader_election_cli import kafka_errors
from leader_election_cli.model import NO_LEADER, ControllerMode, ElectionType, PartitionState
from leader_election_cli.planning.predicates import clean_leaders

Acceptable = Callable[[int], bool]

ZK_STRATEGY = {
    ElectionType.PREFERRED: "PreferredReplicaPartitionLeaderElectionStrategy",
    ElectionType.UNCLEAN: "OfflinePartitionLeaderElectionStrategy(true)",
}


class Decision(NamedTuple):
    """The controller's answer for one partition and the partition's state afterwards."""

    error_code: int
    leader: int
    isr: tuple[int, ...]
    elr: tuple[int, ...]
    unclean: bool = False  # the new leader was outside the ISR and ELR: data loss possible
    message: str | None = None  # the controller's ErrorMessage, when it sets one


def acceptable_leaders(partition: PartitionState, live_brokers: frozenset[int]) -> Acceptable:
    """KRaft's LeaderAcceptor / ZooKeeper's isReplicaOnline: a live broker, log directory online."""
    offline = partition.offline_replicas
    if not offline:
        return live_brokers.__contains__
    return lambda replica: replica in live_brokers and replica not in offline


def decide(partition: PartitionState, election_type: ElectionType, mode: ControllerMode,
           live_brokers: frozenset[int], elr_enabled: bool | None = None) -> Decision:
    """What the controller of `mode` does with an election of `election_type` on `partition`.

    `elr_enabled`: whether the cluster reports eligible.leader.replicas.version 1 or more (KRaft);
    None when it was not read, and the partition's ELR fields are taken as they are.
    """
    acceptable = acceptable_leaders(partition, live_brokers)
    if mode is ControllerMode.KRAFT:
        return _kraft(partition, election_type, acceptable, elr_enabled is not False)
    return _zk(partition, election_type, acceptable, live_brokers)


def _unchanged(p: PartitionState, error_code: int, message: str | None = None) -> Decision:
    return Decision(error_code, p.leader, p.isr, p.elr, False, message)


# -- KRaft -----------------------------------------------------------------------------------------

def _kraft(p: PartitionState, election_type: ElectionType, acceptable: Acceptable, elr_enabled: bool) -> Decision:
    preferred = p.replicas[0] if p.replicas else NO_LEADER
    if election_type is ElectionType.PREFERRED:
        if p.leader == preferred:  # partition.hasPreferredLeader()
            return _unchanged(p, kafka_errors.ELECTION_NOT_NEEDED)
        node, unclean = _kraft_preferred_choice(p, acceptable, elr_enabled)
        failure = kafka_errors.PREFERRED_LEADER_NOT_AVAILABLE
    else:
        if p.leader != NO_LEADER:  # partition.hasLeader()
            return _unchanged(p, kafka_errors.ELECTION_NOT_NEEDED)
        node, unclean = _kraft_any_choice(p, acceptable, elr_enabled)
        failure = kafka_errors.ELIGIBLE_LEADERS_NOT_AVAILABLE
    stale_elr = not elr_enabled and bool(p.elr or p.last_known_elr)  # maybeUpdateRecordElr clears them
    if node == p.leader and not stale_elr:  # no PartitionChangeRecord: the controller reports the failure
        return _unchanged(p, failure)
    isr, elr = p.isr, p.elr
    if node in elr:  # elected from the ELR: it becomes the ISR (tryElection)
        isr, elr = (node,), tuple(r for r in elr if r != node)
    if unclean or not elr_enabled:  # the ISR is forced to an unclean leader; the ELR cleared
        isr, elr = ((node,) if unclean else isr), ()
    # node == NO_LEADER here means the current leader is not acceptable and nobody can replace it: the
    # controller still writes the record (leader -1) and answers NONE.
    return Decision(kafka_errors.NONE, node, isr, elr, unclean)


def _kraft_valid(p: PartitionState, acceptable: Acceptable) -> Callable[[int], bool]:
    """isValidNewLeader: a clean leader (the ISR, else the ELR) that is acceptable."""
    eligible = clean_leaders(p.isr, p.elr)
    return lambda replica: replica in eligible and acceptable(replica)


def _kraft_last_known_leader(p: PartitionState, acceptable: Acceptable, elr_enabled: bool) -> int | None:
    """canElectLastKnownLeader (KIP-966): ELR enabled, ISR and ELR empty, exactly one last known leader,
    acceptable.

    Kafka 3.7 to 4.0 skipped the acceptability check (fixed in 4.1, KAFKA-19522); we follow 4.1.
    """
    if not elr_enabled or p.isr or p.elr or len(p.last_known_elr) != 1 or not acceptable(p.last_known_elr[0]):
        return None
    return p.last_known_elr[0]


def _kraft_preferred_choice(p: PartitionState, acceptable: Acceptable, elr_enabled: bool) -> tuple[int, bool]:
    """electPreferredLeader: replicas[0]; else keep a valid leader; else the first valid other replica."""
    valid = _kraft_valid(p, acceptable)
    if p.replicas and valid(p.replicas[0]):
        return p.replicas[0], False
    if valid(p.leader):
        return p.leader, False
    for replica in p.replicas[1:]:
        if valid(replica):
            return replica, False
    last_known = _kraft_last_known_leader(p, acceptable, elr_enabled)
    if last_known is not None:
        return last_known, True
    return NO_LEADER, False


def _kraft_any_choice(p: PartitionState, acceptable: Acceptable, elr_enabled: bool) -> tuple[int, bool]:
    """electAnyLeader with Election.UNCLEAN (the current leader is NO_LEADER by precondition)."""
    valid = _kraft_valid(p, acceptable)
    for replica in p.replicas:
        if valid(replica):
            return replica, False
    last_known = _kraft_last_known_leader(p, acceptable, elr_enabled)
    if last_known is not None:
        return last_known, True
    for replica in p.replicas:
        if acceptable(replica):
            return replica, True
    return NO_LEADER, False


# -- ZooKeeper mode --------------------------------------------------------------------------------

def _zk_failure(p: PartitionState, election_type: ElectionType) -> str:
    """The StateChangeFailedException message the ZooKeeper-mode controller returns."""
    return f"Failed to elect leader for partition {p.tp} under strategy {ZK_STRATEGY[election_type]}"


def _zk(p: PartitionState, election_type: ElectionType, acceptable: Acceptable,
        live_brokers: frozenset[int]) -> Decision:
    if election_type is ElectionType.PREFERRED:
        preferred = p.replicas[0] if p.replicas else NO_LEADER
        if p.leader == preferred:
            return _unchanged(p, kafka_errors.ELECTION_NOT_NEEDED)
        if acceptable(preferred) and preferred in p.isr:  # preferredReplicaPartitionLeaderElection
            return Decision(kafka_errors.NONE, preferred, p.isr, p.elr)
        return _unchanged(p, kafka_errors.PREFERRED_LEADER_NOT_AVAILABLE, _zk_failure(p, election_type))
    if p.leader != NO_LEADER and p.leader in live_brokers:  # a live leader (liveBrokerIds only)
        return _unchanged(p, kafka_errors.ELECTION_NOT_NEEDED)
    for replica in p.replicas:  # offlinePartitionLeaderElection: first live ISR replica
        if acceptable(replica) and replica in p.isr:
            return Decision(kafka_errors.NONE, replica, tuple(r for r in p.isr if acceptable(r)), p.elr)
    for replica in p.replicas:  # unclean: first live replica, ISR = [leader]
        if acceptable(replica):
            return Decision(kafka_errors.NONE, replica, (replica,), p.elr, True)
    return _unchanged(p, kafka_errors.ELIGIBLE_LEADERS_NOT_AVAILABLE, _zk_failure(p, election_type))
