"""`balance`'s plan of a cluster state, without I/O: what its dry run shows, and what `analyze
--balance-plans` writes per cluster from a snapshot.

Kept apart from `operations.balance` (which executes plans through the cluster layer and its Kafka
client): Spark executors import this module to plan, and have only this package, OR-Tools, NumPy,
pandas and pyarrow (an import-linter contract in pyproject.toml keeps it so).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from leader_election_cli.errors import InputError
from leader_election_cli.model import ClusterState, TopicPartition
from leader_election_cli.planning.leadership_balance import BalanceInputError, LeaderChange, solve_leadership
from leader_election_cli.reports.balance_plan import BalanceOptions, BalanceReport

DEFAULT_OPTIONS = BalanceOptions()


def plan_report(state: ClusterState, options: BalanceOptions = DEFAULT_OPTIONS, *,
                exclude_topic: Callable[[str], bool] | None = None,
                weights: dict[TopicPartition, float] | None = None, plan_file: str | None = None) -> BalanceReport:
    """The dry-run report of `state`'s plan, no I/O: what `balance` shows, and what `analyze
    --balance-plans` writes per cluster from a snapshot (`exclude_topic` is `options.exclude_topic_regex`
    compiled, `weights` the partitions' weights when `options.weight` is set)."""
    try:
        plan = solve_leadership(state, exclude_brokers=options.exclude_brokers, exclude_topic=exclude_topic,
                                rack_of=state.racks if options.rack_aware else None, weights=weights,
                                max_moves=options.max_moves)
    except BalanceInputError as exc:
        raise refused(exc) from None
    if not options.rack_aware:  # shown beside each broker all the same
        plan = replace(plan, brokers=[b._replace(rack=state.racks.get(b.broker)) for b in plan.brokers])
    return BalanceReport(plan, options, state.cluster_id, [_elect_only(state, tp) for tp in plan.elect_only],
                         plan_file=plan_file)


def refused(exc: BalanceInputError) -> InputError:
    """Options (or weights) the solver cannot honour, as the input error `balance` reports."""
    return InputError(f"Cannot balance leadership: {exc}",
                      hint="Change the options (--rack-aware, --weight/--weights, --max-moves) or the --weights file.")


def _elect_only(state: ClusterState, tp: TopicPartition) -> LeaderChange:
    p = state.partitions[tp]
    return LeaderChange(tp, p.replicas, p.replicas, p.leader, p.replicas[0])
