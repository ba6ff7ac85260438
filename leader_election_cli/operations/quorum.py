"""Reading the KRaft controller quorum for `can-stop` and `roll`: DescribeQuorum, through the brokers or
straight from the controllers (KIP-919), and the fetch timeout the quorum rule (`planning.quorum`) judges it
with."""

from __future__ import annotations

from collections.abc import Callable, Collection
from contextlib import suppress
from dataclasses import dataclass, replace

from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.config.settings import ClientSettings
from leader_election_cli.errors import InputError, LeaderElectionError, UnreachableError
from leader_election_cli.model import ClusterState, ControllerMode, QuorumState
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.probes import silent_voters
from leader_election_cli.planning.quorum import (
    DEFAULT_FETCH_TIMEOUT_MS,
    FETCH_TIMEOUT_CONFIG,
    QuorumVerdict,
    quorum_verdict,
)


@dataclass(frozen=True)
class QuorumRead:
    """The quorum, and the controller.quorum.fetch.timeout.ms to judge it with (`read`: from the config)."""

    quorum: QuorumState
    fetch_timeout_ms: int = DEFAULT_FETCH_TIMEOUT_MS
    read: bool = False

    def verdict(self, nodes: Collection[int], not_answering: Collection[int] = ()) -> QuorumVerdict:
        return quorum_verdict(self.quorum, nodes, self.fetch_timeout_ms, self.read, not_answering)

    def probed_verdict(self, nodes: Collection[int], settings: ClientSettings, timeout_s: float,
                       read_again: Callable[[], QuorumState]) -> QuorumVerdict:
        """The verdict once the voters it counts as caught up are probed (`probes.silent_voters`, `read_again`
        reading the quorum anew): one that does not answer is not caught up. An unsafe verdict is not probed
        (no probe can make it safe)."""
        verdict = self.verdict(nodes)
        if not verdict.safe:
            return verdict
        return self.verdict(nodes, silent_voters(settings, self.quorum, nodes, self.fetch_timeout_ms, timeout_s,
                                                 read_again))


def read_quorum(cluster: ClusterConnection, state: ClusterState, required: bool,
                fetch_timeout_ms: int | None = None) -> QuorumRead | None:
    """The KRaft quorum (None in ZooKeeper mode, or where the brokers do not offer or answer DescribeQuorum and
    it is not `required`). The fetch timeout: `fetch_timeout_ms` when known, else the quorum leader's own
    config where a client can ask it (a broker, in combined mode: DescribeConfigs is answered by the node
    itself), else Kafka's default, 2,000 ms (a dedicated controller is not reachable through the brokers)."""
    if state.mode is not ControllerMode.KRAFT:
        return None
    try:
        quorum = cluster.describe_quorum()
    except LeaderElectionError:
        if required:
            raise
        return None
    if quorum is None:
        if required:
            raise InputError("The brokers do not offer DescribeQuorum: the controller quorum cannot be read",
                             hint="Controllers can be judged on Kafka 3.3 or newer.")
        return None
    if fetch_timeout_ms is not None:
        return QuorumRead(quorum, fetch_timeout_ms, True)
    if quorum.leader in state.brokers:
        return _with_fetch_timeout(cluster, quorum)
    return QuorumRead(quorum, DEFAULT_FETCH_TIMEOUT_MS, False)


def quorum_now(cluster: ClusterConnection) -> QuorumState:
    """The quorum read again through the brokers; brokers that no longer answer DescribeQuorum are unreachable."""
    quorum = cluster.describe_quorum()
    if quorum is None:
        raise UnreachableError("The brokers no longer answer DescribeQuorum")
    return quorum


def _with_fetch_timeout(cluster: ClusterConnection, quorum: QuorumState, bootstrap: bool = False) -> QuorumRead:
    """The quorum with its leader's own fetch timeout, where the node asked answers DescribeConfigs for it
    (`bootstrap`: the connection's own node), else Kafka's default."""
    with suppress(LeaderElectionError):
        value = cluster.broker_configs(quorum.leader, [FETCH_TIMEOUT_CONFIG],
                                       bootstrap=bootstrap).get(FETCH_TIMEOUT_CONFIG)
        if value is not None and value.isdigit():
            return QuorumRead(quorum, int(value), True)
    return QuorumRead(quorum, DEFAULT_FETCH_TIMEOUT_MS, False)


def read_quorum_from_controllers(connection: Connection, settings: ClientSettings) -> QuorumRead:
    """The quorum asked of the controllers themselves (`--bootstrap-controller`, KIP-919), where only they are
    reachable: a controller answers DescribeQuorum only while it leads the quorum (KafkaRaftClient.
    handleDescribeQuorumRequest: NOT_LEADER_OR_FOLLOWER otherwise), so each one given is asked in turn; the
    leader also answers DescribeConfigs for its own node id: the fetch timeout is its own."""
    addresses = [a.strip() for a in connection.bootstrap_servers.split(",") if a.strip()]
    unreachable: UnreachableError | None = None
    for address in addresses:
        try:
            with replace(connection, bootstrap_servers=address).open(settings) as cluster:
                quorum = cluster.describe_quorum(errors=False)
                if quorum is None or quorum.leader < 0:
                    continue
                return _with_fetch_timeout(cluster, quorum, bootstrap=True)
        except UnreachableError as exc:
            unreachable = exc
    if unreachable is not None and len(addresses) == 1:
        raise unreachable
    raise UnreachableError(f"None of the controllers given ({', '.join(addresses)}) answered as the quorum's leader",
                           hint="Give every controller in --bootstrap-controller (the quorum may have no leader).")
