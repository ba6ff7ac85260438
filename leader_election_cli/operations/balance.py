"""The `balance` operation: new preferred replicas so that no broker leads more than it must, with the
fewest partitions changed (`planning.leadership_balance`), planned and, with `execute`, carried out.

A dry run reads the cluster (and, for `weight="size"`, every live broker's log directories), solves,
and reports; `plan_file` writes the report's document for review. With `execute` the plan is run by
the reorder-then-elect steps of `operations.moves.run_moves` (restore file first, order-only
reassignments in batches, wait, preferred elections, verification, Ctrl-C after the batch in flight),
then the leaders are read back. `execute` with `plan_file` runs exactly that file's plan, and refuses
(exit 5, nothing sent) when the cluster is another one or any planned partition's replicas differ
from the plan's `replicas_before`. A plan that would change a replica set is always refused.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable
from pathlib import Path

from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.errors import InputError, LeaderElectionError, RefusedError, listed, shown
from leader_election_cli.model import NO_LEADER, ClusterState, TopicPartition
from leader_election_cli.operations.balance_dry_run import plan_report, refused
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import SILENT, Hooks
from leader_election_cli.operations.moves import DEFAULT_BATCH_SIZE, run_moves
from leader_election_cli.operations.plan_file import check_writable, load_plan_file, plan_path, write_plan_file
from leader_election_cli.operations.restore_file import restore_path as restore_file_path
from leader_election_cli.planning.leadership_balance import BalanceInputError, LeaderChange, check_options
from leader_election_cli.planning.reorders import Move, MovePlan
from leader_election_cli.reports.balance_plan import (
    BalanceOptions,
    BalanceReport,
    document,
    plan_from_document,
)
from leader_election_cli.selection.files import load_weights_file
from leader_election_cli.selection.topics import topic_matcher

_LISTED = 5  # partitions named in a refusal


def balance(connection: Connection, *, execute: bool = False, exclude_brokers: Collection[int] = (),
            exclude_topic_regex: str | None = None, rack_aware: bool = False, weight: str | None = None,
            weights_file: str | None = None, max_moves: int | None = None, plan_file: str | None = None,
            batch_size: int = DEFAULT_BATCH_SIZE, restore_path: Path | None = None,
            hooks: Hooks = SILENT) -> BalanceReport:
    """Plan (and with `execute`, carry out) the leadership balance; see the module docstring.

    `weight="size"` balances leader load by log size; `weights_file` by the file's numbers. Every input
    problem is an `InputError` raised before anything is sent; a plan file that no longer fits the
    cluster is a `RefusedError`.
    """
    options = BalanceOptions(tuple(sorted(set(exclude_brokers))), exclude_topic_regex, rack_aware,
                             "file" if weights_file is not None else weight, max_moves)
    _check_options(options, weight, weights_file, execute, plan_file)
    excluded_topic = topic_matcher(exclude_topic_regex, "--exclude-topic-regex")
    weights = load_weights_file(weights_file) if weights_file is not None else None
    saved = load_plan_file(plan_file) if execute and plan_file is not None else None
    if not execute and plan_file is not None:
        check_writable(Path(plan_file))
    settings = connection.settings(hooks.warn)
    with connection.open(settings) as cluster:
        state = cluster.describe(with_reassignments=True)
        if saved is not None:
            plan, elect_only, options = plan_from_document(saved)
            _check_unchanged(state, saved.get("cluster_id"), [*plan.changes, *elect_only], plan_file or "")
        else:
            _check_brokers(state, options.exclude_brokers)
            if weight == "size":
                weights = _log_size_weights(state, cluster.log_sizes(state.live_brokers))
            elif weights is not None:
                _note_unknown(weights, state, hooks)
            planned = plan_report(state, options, exclude_topic=excluded_topic, weights=weights)
            plan, elect_only = planned.plan, planned.elect_only
        _check_same_replicas([*plan.changes, *elect_only])
        written = plan_file  # a directory takes a new file named after the cluster
        if plan_file is not None and not execute:
            written = str(plan_path(Path(plan_file), state.cluster_id))
        report = BalanceReport(plan, options, state.cluster_id, elect_only, dry_run=not execute, plan_file=written)
        if not execute:
            if written is not None:
                write_plan_file(Path(written), document(report))
            return report
        moves = _move_plan(state, report.partitions)
        restore = restore_file_path("balance", restore_path, state.cluster_id)
        report.moves = run_moves(cluster, state, moves, restore_path=restore, batch_size=batch_size,
                                 wait_seconds=settings.api_timeout_ms / 2000)
        if report.moves.aborted_exit is not None:
            report.abort(report.moves.aborted_exit, report.moves.aborted_reason or "stopped")
        if restore_path is not None and report.restore_file is None:
            hooks.warn(f"No restore file written to {shown(str(restore_path))}: no replica order changes.")
        report.leaders_now = _leaders_now(cluster)
    return report


def _check_options(o: BalanceOptions, weight: str | None, weights_file: str | None, execute: bool,
                   plan_file: str | None) -> None:
    if weight not in (None, "size"):
        raise InputError(f"Unknown weight {shown(weight)}", hint="Use --weight size, or --weights FILE.")
    if weight is not None and weights_file is not None:
        raise InputError("--weight size and --weights FILE both give weights", hint="Choose one of them.")
    try:
        check_options(rack_aware=o.rack_aware, weighted=o.weight is not None, max_moves=o.max_moves)
    except BalanceInputError as exc:
        raise refused(exc) from None
    if execute and plan_file is not None:
        given = [name for name, value in (("--exclude-broker", o.exclude_brokers),
                                          ("--exclude-topic-regex", o.exclude_topic_regex),
                                          ("--rack-aware", o.rack_aware), ("--weight", weight),
                                          ("--weights", weights_file), ("--max-moves", o.max_moves))
                 if value not in (None, False, ())]
        if given:
            raise InputError(f"--execute --plan-file runs the plan as written: {', '.join(given)} cannot change it",
                             hint="Make a new plan with those options (without --execute), or drop them.")


def _check_brokers(state: ClusterState, excluded: Iterable[int]) -> None:
    known = set(state.live_brokers).union(*(p.replicas for p in state.partitions.values()))
    unknown = [b for b in excluded if b not in known]
    if unknown:
        raise InputError(f"--exclude-broker {listed(unknown, ',')}: neither live nor a replica of any "
                         f"partition (live brokers: {listed(sorted(state.live_brokers), ',')})",
                         hint="Check the broker ids.")
    if state.live_brokers and set(state.live_brokers) <= set(excluded):
        raise InputError(f"--exclude-broker names every live broker ({listed(sorted(state.live_brokers), ',')}"
                         "): no broker would be left to lead", hint="Exclude fewer brokers.")


def _log_size_weights(state: ClusterState, sizes: dict[TopicPartition, dict[int, int]]) -> dict[TopicPartition, float]:
    """A partition's weight is its largest replica's log (a follower that lags holds less); a partition no
    live broker reported (every replica down, so it has no leader) weighs nothing."""
    return {tp: float(max(sizes.get(tp, {}).values(), default=0)) for tp in state.partitions}


def _note_unknown(weights: dict[TopicPartition, float], state: ClusterState, hooks: Hooks) -> None:
    unknown = sorted(tp for tp in weights if tp not in state.partitions)
    if unknown:
        hooks.warn(f"Warning: the --weights file names {len(unknown)} partition(s) this cluster does not have "
                   f"(e.g. {shown(str(unknown[0]))}); they are ignored.")


def _check_same_replicas(changes: Iterable[LeaderChange]) -> None:
    """Refuse a plan that would change any replica set (it would move data): only orders may change."""
    bad = [c for c in changes
           if sorted(c.replicas_after) != sorted(c.replicas_before) or c.replicas_after[0] != c.leader_after]
    if bad:
        raise RefusedError(f"The plan would change the replicas of {len(bad)} partition(s) ({_named(bad)}), not "
                           "only their order; nothing was changed",
                           hint="balance only reorders replicas: make a new plan with kafka-leaders balance.")


def _check_unchanged(state: ClusterState, cluster_id: str | None, planned: list[LeaderChange], path: str) -> None:
    """A plan file runs only on the cluster and the replica orders it was made for."""
    if cluster_id and state.cluster_id and cluster_id != state.cluster_id:
        raise RefusedError(f"Plan file {shown(path)} was made for cluster {shown(cluster_id)}, not this one "
                           f"({shown(state.cluster_id)}); nothing was changed", hint="Check --bootstrap-server.")
    changed = [c for c in planned if (p := state.partitions.get(c.tp)) is None or p.replicas != c.replicas_before
               or c.tp in state.reassigning]
    if changed:
        raise RefusedError(f"The cluster changed since plan file {shown(path)} was made: {len(changed)} planned "
                           f"partition(s) no longer have the replicas it saw, or are being reassigned "
                           f"({_named(changed)}); nothing was changed",
                           hint="Make a new plan: kafka-leaders balance --plan-file NEW_PATH.")


def _named(changes: list[LeaderChange]) -> str:
    return listed((c.tp for c in changes), limit=_LISTED)


def _move_plan(state: ClusterState, partitions: list[LeaderChange]) -> MovePlan:
    """The plan as moves from the cluster read now (its current leaders)."""
    return MovePlan("balance", tuple(Move(c.tp, c.replicas_before, c.replicas_after, state.partitions[c.tp].leader,
                                          c.leader_after) for c in partitions))


def _leaders_now(cluster: ClusterConnection) -> dict[int, int] | None:
    """Leaders per broker read back after the run; None when the cluster could not be read."""
    try:
        cluster.restart_timeout()
        now = cluster.describe()
    except (LeaderElectionError, KeyboardInterrupt):
        return None
    return dict(Counter(p.leader for p in now.partitions.values() if p.leader != NO_LEADER))
