"""Whether brokers can be stopped now: the `can-stop` rule, which `roll` also waits on. Pure, no I/O.

Stopping brokers S takes them out of every ISR (a KRaft controller fences them, a ZooKeeper-mode
controller shrinks the ISRs; a controlled shutdown first moves their leadership to another ISR member).
For each partition with a replica on S, from one metadata read:

- in sync now: the ISR members that are live brokers (a KRaft ISR keeps its last member after it dies, so
  the ISR read may name a dead broker); in sync after: those minus S. A replica a pending reassignment
  is adding counts once it is in the ISR, as Kafka counts it; until then it does not;
- offline after: no replica left to lead without losing data: none in sync after and no live eligible
  leader replica (KIP-966) either, the controller's rule (`predicates.clean_leaders`) over the live
  replicas: it elects an ELR member once the ISR is empty. The ELR counts where the read carries one
  (`operations.maintenance.read_for_stop` reads it on KRaft clusters whose features enable it);
- under min ISR after: fewer in sync after than min.insync.replicas (capped at the replica count on
  3.7+, as `ClusterState.min_isr_of` says): producers with acks=all fail;
- a replication factor of 1 on S: offline while its broker is down, whatever is done (`RF1`).

A broker the read lists as live but that did not answer a probe (`not_answering`: it crashed, and the controller
has not fenced it yet, `operations.probes`) counts as down: out of every ISR and ELR it is in.

A partition blocks the stop when the stop takes an in-sync (or eligible) replica from it and it ends offline, under
its min ISR, or with a min ISR that could not be read. A partition already offline or under min ISR that
the stop does not touch further (its replica on S is not in sync) is listed, but does not block. RF=1
partitions block unless `allow_rf1`. Brokers of S already down change nothing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass
from enum import Enum

from leader_election_cli.model import ClusterState, PartitionState, TopicPartition
from leader_election_cli.planning.predicates import clean_leaders


class Problem(str, Enum):
    """What stopping the brokers would do to a partition."""

    OFFLINE = "offline"  # no live in-sync (or eligible) replica left to lead
    UNDER_MIN_ISR = "under_min_isr"  # fewer in-sync replicas than min.insync.replicas: acks=all fails
    MIN_ISR_UNKNOWN = "min_isr_unknown"  # loses an in-sync replica, and its topic's min ISR could not be read
    RF1 = "rf1"  # its only replica is on a stopped broker


@dataclass(frozen=True)
class PartitionRisk:
    """One partition the stop would leave offline, under min ISR, or that already is."""

    tp: TopicPartition
    problem: Problem
    replicas: tuple[int, ...]
    isr: tuple[int, ...]  # the live in-sync replicas now
    isr_after: tuple[int, ...]  # ... once the brokers are stopped
    min_isr: int | None
    blocking: bool  # makes the stop unsafe
    already: bool  # was so before the stop (offline, under min ISR)
    adding: tuple[int, ...] = ()  # replicas a pending reassignment is adding


@dataclass(frozen=True)
class StopVerdict:
    """The verdict on stopping `brokers` now."""

    brokers: tuple[int, ...]
    already_down: tuple[int, ...]
    risks: tuple[PartitionRisk, ...]
    elr_counted: bool  # eligible leader replicas were counted as leaders (ELR on, or an ELR in the read)
    allow_rf1: bool = False
    not_answering: tuple[int, ...] = ()  # listed as live by the cluster, but did not answer a probe: counted down

    @property
    def safe(self) -> bool:
        return not any(r.blocking for r in self.risks)

    @property
    def blocking(self) -> list[PartitionRisk]:
        return [r for r in self.risks if r.blocking]


def needs_elr(state: ClusterState, brokers: Collection[int]) -> set[str]:
    """The topics with a partition the stop would leave without an in-sync replica: where eligible leader
    replicas matter (read them only for these)."""
    stopping = set(brokers)
    live = state.live_brokers
    return {p.topic for p in state.partitions.values()
            if stopping.intersection(p.replicas) and len(p.replicas) > 1
            and not [r for r in p.isr if r in live and r not in stopping]}


def relied_on(state: ClusterState, brokers: Collection[int]) -> frozenset[int]:
    """The live brokers a verdict on stopping `brokers` counts on: the other members of the ISR and ELR of every
    partition with a replica on them (those a probe must find answering)."""
    stopping = set(brokers)
    live = state.live_brokers
    counted: set[int] = set()
    for p in state.partitions.values():
        if not stopping.isdisjoint(p.replicas):
            counted.update(p.isr)
            counted.update(p.elr)
    return frozenset(counted & live - stopping)


def metadata_read_by_verdict(state: ClusterState, brokers: Collection[int]
                             ) -> tuple[frozenset[int], dict[TopicPartition, PartitionState]]:
    """What `stop_verdict` reads of the metadata: the live brokers and the partitions with a replica on
    `brokers`. Two reads equal in these (and in the topic configs and ELR) get the same verdict: a later read
    equal to the one judged confirms the verdict at its own moment, without judging it again."""
    stopping = set(brokers)
    return state.live_brokers, {tp: p for tp, p in state.partitions.items() if not stopping.isdisjoint(p.replicas)}


def stop_verdict(state: ClusterState, brokers: Iterable[int], *, allow_rf1: bool = False,
                 not_answering: Collection[int] = ()) -> StopVerdict:
    """Whether stopping `brokers` now leaves any partition offline or under its min ISR (module docstring), the
    brokers `not_answering` counted down whatever the read says.

    The eligible leader replicas the partitions carry count (`ClusterState.partitions[...].elr`, read with
    DescribeTopicPartitions), whatever the features say, as the controller counts them."""
    stopping = frozenset(brokers)
    silent = frozenset(not_answering) & state.live_brokers
    live = state.live_brokers - silent
    risks = []
    elr_counted = state.elr_enabled is True
    for p in state.partitions.values():
        if stopping.isdisjoint(p.replicas):
            continue
        elr_counted = elr_counted or bool(p.elr)
        risk = _risk(state, p, stopping, live, allow_rf1)
        if risk is not None:
            risks.append(risk)
    risks.sort(key=lambda r: (not r.blocking, r.tp))
    return StopVerdict(tuple(sorted(stopping)), tuple(sorted(stopping - live)), tuple(risks), elr_counted, allow_rf1,
                       tuple(sorted(silent - stopping)))


def _risk(state: ClusterState, p: PartitionState, stopping: frozenset[int], live: frozenset[int],
          allow_rf1: bool) -> PartitionRisk | None:
    # (list comprehensions, the risk made only when there is one: the verdict's loop runs over every partition
    # the brokers replicate, 50,000 of 100,000 for one broker of six at RF 3)
    isr = tuple([r for r in p.isr if r in live])
    after = tuple([r for r in isr if r not in stopping])
    # Live members only, before `clean_leaders` picks the ISR or the ELR: a KRaft controller with ELR on drops
    # a fenced broker from the ISR (the ISR may empty), so the ISR a stop leaves holds live brokers only.
    eligible = tuple([r for r in p.elr if r in live]) if p.elr else ()
    eligible_after = tuple([r for r in eligible if r not in stopping]) if eligible else ()
    loses = len(after) < len(isr) or len(eligible_after) < len(eligible)
    min_isr = state.min_isr_of(p)
    problem: tuple[Problem, bool, bool] | None = None
    can_lead_now = bool(clean_leaders(isr, eligible))
    if len(p.replicas) == 1:
        problem = (Problem.RF1, not allow_rf1 and loses, not can_lead_now)
    elif not clean_leaders(after, eligible_after):
        problem = (Problem.OFFLINE, can_lead_now, not can_lead_now)
    elif min_isr is None and p.topic in state.min_isr_unknown:
        problem = (Problem.MIN_ISR_UNKNOWN, True, False) if loses else None
    elif min_isr is not None and len(after) < min_isr:
        problem = (Problem.UNDER_MIN_ISR, loses, len(isr) < min_isr)
    if problem is None:
        return None
    return PartitionRisk(p.tp, problem[0], p.replicas, isr, after, min_isr, problem[1], problem[2],
                         state.reassigning.get(p.tp, ()))
