"""The `rebalance` operation, the cron job: elect the preferred replica where a broker's leader imbalance
is above the threshold, as Kafka's automatic rebalance does, one run per cluster at a time (a lock)."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.errors import LeaderElectionError, interrupted_exit
from leader_election_cli.model import ControllerMode, ElectionType, Outcome, PartitionResult
from leader_election_cli.operations import execution
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import SILENT, Hooks
from leader_election_cli.operations.lock import default_lock_path, exclusive_lock
from leader_election_cli.operations.signals import Stopped
from leader_election_cli.planning.balance import balance, rebalance_candidates
from leader_election_cli.planning.prediction import predict
from leader_election_cli.reports.balance import RebalanceRun
from leader_election_cli.reports.election import ElectionReport


def rebalance(connection: Connection, threshold: float, *, dry_run: bool = False, batch_size: int | None = None,
              batch_interval: float = 0.0, lock_file: Path | None = None, hooks: Hooks = SILENT) -> RebalanceRun:
    """One run. A failure once the config file is read (unreachable, refused, the lock held, Ctrl-C) does
    not raise: the run says what was found and done before it, and `stopped_by` holds the failure.

    A dry run sends nothing, so it takes no lock and never waits on a real run. A `lock_file` is taken
    before connecting; the default one is the cluster's (after its cluster id, read after connecting), in
    the user's lock directory or in `lock_file` when that is a directory.
    """
    settings = connection.settings(hooks.warn)
    run = RebalanceRun(threshold, dry_run)
    try:
        with ExitStack() as stack:
            in_directory = lock_file is not None and lock_file.is_dir()  # the cluster's lock in it
            if lock_file is not None and not in_directory and not dry_run:
                stack.enter_context(exclusive_lock(lock_file))
            cluster = stack.enter_context(connection.open(settings))
            if (lock_file is None or in_directory) and not dry_run:
                stack.enter_context(exclusive_lock(default_lock_path(cluster.cluster_id(),
                                                                     connection.bootstrap_servers, lock_file)))
            _elect_unbalanced(cluster, run, batch_size=batch_size, batch_interval=batch_interval)
    except LeaderElectionError as exc:
        run.stop(exc)
    except KeyboardInterrupt as exc:  # a stop signal before anything was sent
        signum = exc.signum if isinstance(exc, Stopped) else None
        run.stop(LeaderElectionError("Interrupted before anything was sent.", exit_code=interrupted_exit(signum)))
    run.finish()
    return run


def _elect_unbalanced(cluster: ClusterConnection, run: RebalanceRun, *, batch_size: int | None,
                      batch_interval: float) -> None:
    """Elect (or, for a dry run, predict) the candidates; fills `run` as it goes, so a failure part way
    still leaves in it what was found and done."""
    state = cluster.describe(with_reassignments=True)
    run.cluster_id = state.cluster_id
    run.before = balance(state)
    run.candidates = rebalance_candidates(state, run.threshold)
    if run.candidates and run.dry_run:
        run.election = execution.dry_run_report(predict(state, ElectionType.PREFERRED, run.candidates,
                                                        state.mode or ControllerMode.KRAFT), ElectionType.PREFERRED)
    elif run.candidates:
        try:
            run.election = execution.elect(cluster, ElectionType.PREFERRED, run.candidates, state,
                                           batch_size=batch_size, batch_interval=batch_interval)
        except LeaderElectionError:  # refused before anything changed: every candidate is still reported, as it was
            run.election = ElectionReport(ElectionType.PREFERRED, [
                PartitionResult(tp, Outcome.NOT_ATTEMPTED, leader_before=state.partitions[tp].leader,
                                leader_after=state.partitions[tp].leader) for tp in run.candidates])
            run.after = run.before
            raise
    run.after = balance(cluster.describe()) if run.election is not None and not run.dry_run else run.before
