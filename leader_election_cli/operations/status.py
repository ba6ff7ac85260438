"""The `status` operation: one read of the cluster, Kafka's per-broker leader imbalance and the
partitions that need attention."""

from __future__ import annotations

from contextlib import suppress

from leader_election_cli.errors import LeaderElectionError
from leader_election_cli.model import ClusterState, ControllerMode, TopicPartition
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import SILENT, Hooks
from leader_election_cli.planning.balance import tally
from leader_election_cli.planning.leadership_balance import solve_leadership
from leader_election_cli.planning.predicates import clean_leaders
from leader_election_cli.reports.balance import LeadershipOptimum, StatusReport

# The controller's own preferred-leader elections (Kafka's broker configs): status shows them.
AUTO_REBALANCE_CONFIGS = ("auto.leader.rebalance.enable", "leader.imbalance.check.interval.seconds",
                          "leader.imbalance.per.broker.percentage")


def status(connection: Connection, fail_above: float | None = None, hooks: Hooks = SILENT) -> StatusReport:
    """Read the cluster (partitions, topic configs, reassignments, the auto-rebalance settings) and report
    its balance; `fail_above` (a percentage) makes brokers above it a failure (exit 1)."""
    settings = connection.settings(hooks.warn)
    with connection.open(settings) as cluster:
        state = cluster.describe(with_configs=True, with_reassignments=True)
        if state.mode is ControllerMode.KRAFT:  # the ELR (and whether it is on) where an ISR is empty
            from leader_election_cli.model import ElectionType
            from leader_election_cli.operations.execution import read_for_prediction

            state = read_for_prediction(cluster, ElectionType.PREFERRED, state.mode, state)
        auto_rebalance = {}
        broker = auto_rebalance_broker(state)
        with suppress(LeaderElectionError):  # shown as unknown: the balance itself was read
            if broker is not None:
                auto_rebalance = cluster.broker_configs(broker, AUTO_REBALANCE_CONFIGS)
    return status_report(state, fail_above, auto_rebalance, broker)


def auto_rebalance_broker(state: ClusterState) -> int | None:
    """The broker whose configs say what the controller does by itself: in ZooKeeper mode the controller
    (only its own auto.leader.rebalance.enable counts); in KRaft mode the controllers are not brokers,
    so the lowest live broker, as a hint."""
    if state.mode is ControllerMode.ZK and state.controller_id in state.live_brokers:
        return state.controller_id
    return min(state.live_brokers) if state.live_brokers else None


def status_report(state: ClusterState, fail_above: float | None = None,
                  auto_rebalance: dict[str, str] | None = None, asked: int | None = None) -> StatusReport:
    """Kafka's per-broker imbalance and the cluster's partition health, from one read; `auto_rebalance`
    are the AUTO_REBALANCE_CONFIGS broker `asked` reported."""
    counts, health = tally(state)
    controller = None if state.mode is ControllerMode.KRAFT else state.controller_id
    return StatusReport(counts, sorted(health.offline), sorted(health.under_min_isr), sorted(state.min_isr_unknown),
                        sorted(state.reassigning), state.cluster_id, controller, state.mode, fail_above,
                        dict(auto_rebalance or {}), asked, not_preferred_leader=sorted(health.not_preferred_leader),
                        under_replicated=sorted(health.under_replicated),
                        optimum=leadership_optimum(state), offline_recovery=offline_recovery(state, health.offline))


def offline_recovery(state: ClusterState, offline: list[TopicPartition]) -> dict[TopicPartition, tuple[int, ...]]:
    """Per offline partition, the in-sync or eligible replicas whose return would recover it without data
    loss (empty: none is left; only an unclean election brings it back)."""
    return {tp: clean_leaders(p.isr, p.elr)
            for tp in sorted(offline) if (p := state.partitions.get(tp)) is not None}


def leadership_optimum(state: ClusterState) -> LeadershipOptimum:
    """The most leaders on a live broker now, beside the least maximum new replica orders reach (what
    `balance` would do, with no option)."""
    plan = solve_leadership(state)
    return LeadershipOptimum(plan.max_before, plan.lower_bound, plan.changes_for_optimum)
