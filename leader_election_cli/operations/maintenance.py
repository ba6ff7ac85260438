"""`can-stop`: one read of the cluster, the probes of the nodes it counts on (`operations.probes`), and the verdict
of `planning.maintenance` on stopping brokers now."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.cluster.probe import DEFAULT_PROBE_TIMEOUT_S
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.errors import InputError, listed
from leader_election_cli.model import ClusterState, ControllerMode
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import SILENT, Hooks
from leader_election_cli.operations.probes import silent_brokers
from leader_election_cli.operations.quorum import QuorumRead, quorum_now, read_quorum, read_quorum_from_controllers
from leader_election_cli.planning.maintenance import StopVerdict, needs_elr, stop_verdict
from leader_election_cli.reports.maintenance import CanStopReport


def read_for_stop(cluster: ClusterConnection, brokers: Collection[int], *, with_reassignments: bool = True,
                  known: ClusterState | None = None) -> ClusterState:
    """The metadata, every topic's min.insync.replicas (DescribeConfigs: the topic's, else the broker
    default), pending reassignments and, on a KRaft cluster whose features enable them, the eligible
    leader replicas of the topics the stop could leave without an in-sync replica. With `brokers`, only
    the partitions with a replica on one of them (all the verdict looks at, and all `check_brokers` needs:
    a broker that is a replica of anything is one of these partitions'), and their topics' configs.

    Right before a stop (`roll`), only what `stop_verdict` needs: no reassignments (they only name the
    replicas being added), and the min ISR of `known` (an earlier read) when it has that of every topic with
    a replica on `brokers` (no DescribeConfigs then: the metadata is the last read, but for the ELR where it
    counts)."""
    state = cluster.describe(with_reassignments=with_reassignments, replicas_of=brokers or None)
    stopping = set(brokers)
    topics = {p.topic for p in state.partitions.values() if not stopping.isdisjoint(p.replicas)}
    if known is not None and topics <= known.min_insync_replicas.keys() | known.min_isr_unknown:
        state = replace(state, min_insync_replicas=known.min_insync_replicas, min_isr_unknown=known.min_isr_unknown,
                        min_isr_capped=known.min_isr_capped)
    else:
        state = cluster.add_min_isr(state)
    topics = needs_elr(state, brokers)
    if topics and state.mode is ControllerMode.KRAFT:
        state = replace(state, features=cluster.finalized_features())
        if state.elr_enabled:
            state = cluster.add_elr(state, topics)
    return state


def known_brokers(state: ClusterState) -> frozenset[int]:
    """The live brokers and every replica's broker."""
    return state.live_brokers.union(*(p.replicas for p in state.partitions.values()))


def check_brokers(state: ClusterState, brokers: Collection[int], hint: str = "Check the broker ids.") -> None:
    """A broker neither live nor a replica of anything is a typo: an input error naming the live ones."""
    unknown = sorted(set(brokers) - known_brokers(state))
    if unknown:
        raise InputError(f"Broker {listed(unknown, ',')} is neither live nor a replica of any partition "
                         f"(live brokers: {listed(sorted(state.live_brokers), ',')})", hint=hint)


def split_nodes(state: ClusterState, quorum: QuorumRead | None, nodes: Collection[int]) -> tuple[int, ...]:
    """The brokers among `nodes` (live, or a replica of a partition); the others must be voters of the KRaft
    quorum (dedicated controllers; a node id is unique across roles): a node that is neither is a one-line
    input error naming both."""
    if quorum is None:
        check_brokers(state, nodes)
        return tuple(nodes)
    brokers = known_brokers(state)
    voters = set(quorum.quorum.voter_ids)
    unknown = sorted(set(nodes) - brokers - voters)
    if unknown:
        raise InputError(f"Node {listed(unknown, ',')} is neither a live broker, a replica of any partition nor a "
                         f"controller (live brokers: {listed(sorted(state.live_brokers), ',')}; controllers: "
                         f"{listed(sorted(voters), ',')})",
                         hint="Check the node ids.")
    return tuple(n for n in nodes if n in brokers)


def can_stop(connection: Connection, nodes: Collection[int], *, allow_rf1: bool = False,
             probe_timeout_s: float = DEFAULT_PROBE_TIMEOUT_S, hooks: Hooks = SILENT) -> CanStopReport:
    """Whether stopping `nodes` now leaves any partition offline or under its min ISR (the brokers among
    them), or the KRaft controller quorum without a caught-up majority (the voters among them; in combined
    mode a node can be both and both rules hold): exit 0 or 5. The nodes the verdicts count on are probed
    (`operations.probes`), each within `probe_timeout_s`: one that does not answer counts as down."""
    settings = connection.settings(hooks.warn)
    if connection.controllers:
        return _can_stop_controllers(connection, settings, nodes, probe_timeout_s)
    with connection.open(settings) as cluster:
        state = read_for_stop(cluster, nodes)
        quorum = read_quorum(cluster, state, required=not set(nodes) <= known_brokers(state))
        brokers = split_nodes(state, quorum, nodes)
        silent = silent_brokers(settings, state, brokers, probe_timeout_s) if brokers else ()
        voters = sorted(set(nodes) & set(quorum.quorum.voter_ids)) if quorum is not None else []
        quorum_verdict = quorum.probed_verdict(voters, settings, probe_timeout_s, lambda: quorum_now(cluster)) \
            if quorum is not None and voters else None
    return CanStopReport(stop_verdict(state, brokers, allow_rf1=allow_rf1, not_answering=silent),
                         tuple(sorted(set(brokers))), state.cluster_id, quorum=quorum_verdict)


def _can_stop_controllers(connection: Connection, settings: ClientSettings, nodes: Collection[int],
                          probe_timeout_s: float) -> CanStopReport:
    """can-stop through the controllers alone: only voters can be judged (partitions need the brokers)."""
    quorum = read_quorum_from_controllers(connection, settings)
    voters = quorum.quorum.voter_ids
    others = sorted(set(nodes) - set(voters))
    if others:
        raise InputError(f"With --bootstrap-controller only controllers can be judged: {listed(others, ',')} "
                         f"is no voter of the quorum (voters: {listed(sorted(voters), ',')})",
                         hint="Judge brokers through --bootstrap-server: their partitions are read from the brokers.")
    verdict = quorum.probed_verdict(nodes, settings, probe_timeout_s,
                                    lambda: read_quorum_from_controllers(connection, settings).quorum)
    return CanStopReport(StopVerdict((), (), (), False), (), None, quorum=verdict)
