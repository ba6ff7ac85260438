"""The `snapshot` operation: one read of the cluster as metadata rows, one per partition, for `analyze`."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timezone

from leader_election_cli import snapshot as snapshots
from leader_election_cli.errors import InputError
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import SILENT, Hooks


@dataclass(frozen=True)
class Snapshot:
    """The rows of one read, and which cluster and when."""

    cluster: str
    taken_at: datetime
    rows: list[snapshots.SnapshotRow]
    live_brokers: int


def take_snapshot(connection: Connection, cluster_name: str | None = None, hooks: Hooks = SILENT) -> Snapshot:
    """Read partitions, topic configs, ELR and pending reassignments (so under-replication is counted as
    `status` counts it); the cluster is named `cluster_name`, else by its cluster id."""
    with connection.open(connection.settings(hooks.warn)) as cluster:
        state = cluster.describe(with_elr=True, with_configs=True)
        moving = cluster.list_reassignment_replicas()
    state = replace(state, reassigning={tp: adding for tp, (adding, _) in moving.items()})
    taken_at = datetime.now(timezone.utc)
    name = cluster_name or state.cluster_id
    if not name:
        raise InputError("The cluster reported no cluster id", hint="Name it with --cluster-name.")
    rows = snapshots.rows(state, name, taken_at, {tp: removing for tp, (_, removing) in moving.items()})
    return Snapshot(name, taken_at, rows, len(state.brokers))
