"""`can-stop`: one read of the cluster, and the verdict of `planning.maintenance` on stopping brokers now."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace

from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.errors import InputError
from leader_election_cli.model import ClusterState, ControllerMode
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import SILENT, Hooks
from leader_election_cli.planning.maintenance import needs_elr, stop_verdict
from leader_election_cli.reports.maintenance import CanStopReport


def read_for_stop(cluster: ClusterConnection, brokers: Collection[int]) -> ClusterState:
    """The metadata, every topic's min.insync.replicas (DescribeConfigs: the topic's, else the broker
    default), pending reassignments and, on a KRaft cluster whose features enable them, the eligible
    leader replicas of the topics the stop could leave without an in-sync replica. With `brokers`, only
    the partitions with a replica on one of them (all the verdict looks at, and all `check_brokers` needs:
    a broker that is a replica of anything is one of these partitions'), and their topics' configs."""
    state = cluster.describe(with_configs=True, with_reassignments=True, replicas_of=brokers or None)
    topics = needs_elr(state, brokers)
    if topics and state.mode is ControllerMode.KRAFT:
        state = replace(state, features=cluster.finalized_features())
        if state.elr_enabled:
            state = cluster.add_elr(state, topics)
    return state


def check_brokers(state: ClusterState, brokers: Collection[int]) -> None:
    """A broker neither live nor a replica of anything is a typo: an input error naming the live ones."""
    known = state.live_brokers.union(*(p.replicas for p in state.partitions.values()))
    unknown = sorted(set(brokers) - known)
    if unknown:
        live = ",".join(map(str, sorted(state.live_brokers)))
        raise InputError(f"Broker {','.join(map(str, unknown))} is neither live nor a replica of any partition "
                         f"(live brokers: {live})", hint="Check the broker ids.")


def can_stop(connection: Connection, brokers: Collection[int], *, allow_rf1: bool = False,
             hooks: Hooks = SILENT) -> CanStopReport:
    """Whether stopping `brokers` now leaves any partition offline or under its min ISR (exit 0 or 5)."""
    settings = connection.settings(hooks.warn)
    with connection.open(settings) as cluster:
        state = read_for_stop(cluster, brokers)
        check_brokers(state, brokers)
    return CanStopReport(stop_verdict(state, brokers, allow_rf1=allow_rf1), tuple(sorted(set(brokers))),
                         state.cluster_id)
