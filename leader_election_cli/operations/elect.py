"""The election operation behind `kafka-leader-election`, `kafka-leaders elect` and `plan`.

One flow for all three: read the cluster once, resolve the selection, predict with the controller's
own rules where needed, say what an unclean election risks (and, for the toolkit, ask), leave out
what needs no election, then elect in batches (`execution`). The report lists every selected
partition once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.errors import AuthError, InputError, RefusedError, UnreachableError
from leader_election_cli.model import (
    ClusterState,
    ControllerMode,
    ElectionType,
    Outcome,
    PartitionResult,
    TopicPartition,
)
from leader_election_cli.operations import execution
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import SILENT, Hooks
from leader_election_cli.planning.batches import SAFE_CHANGES_PER_REQUEST, request_size
from leader_election_cli.planning.prediction import Prediction, predict
from leader_election_cli.reports.election import ElectionReport

if TYPE_CHECKING:  # imported where used: an election by exact partitions needs neither
    from leader_election_cli.planning.risk import Risk
    from leader_election_cli.selection.topics import Selection


@dataclass(frozen=True)
class Election:
    """What to elect, and how.

    `partitions` are exact partitions (None: every partition, sent as Kafka's null list); `selection`,
    when given instead, is the toolkit's selection, resolved against the metadata read. The toolkit
    leaves out partitions already led by their preferred replica (`skip_already_elected`) and asks
    before an unclean election that may lose data (`ask_unclean`, or `yes`); the drop-in, like Kafka's
    tool, sends every partition and only warns.
    """

    election_type: ElectionType = ElectionType.PREFERRED
    partitions: Sequence[TopicPartition] | None = None
    selection: Selection | None = None
    dry_run: bool = False
    controller_mode: ControllerMode | None = None  # predict with these rules (default: the brokers')
    batch_size: int | None = None
    batch_interval: float = 0.0
    skip_already_elected: bool = False
    ask_unclean: bool = False
    yes: bool = False


def elect(connection: Connection, election: Election, hooks: Hooks = SILENT) -> ElectionReport:
    """Run (or, with `dry_run`, predict) an election; `hooks` hear warnings, notes, progress, questions."""
    settings = connection.settings(hooks.warn)
    unclean = election.election_type is ElectionType.UNCLEAN
    predicting = election.dry_run or (unclean and election.ask_unclean)
    with connection.open(settings) as cluster:
        mode = election.controller_mode or cluster.mode()
        state = execution.read_for_prediction(cluster, election.election_type, mode) if predicting \
            else cluster.describe()
        selected = election.partitions if election.selection is None else _resolved(election.selection, state)
        risk, risk_lines = None, []
        if predicting:
            predictions = predict(state, election.election_type, selected, mode)
            if election.ask_unclean and unclean:  # (the drop-in's plan says the risks in its own lines;
                # a preferred election's leader is in sync, and the ISR stays: nothing to assess)
                risk, risk_lines = _assessed(predictions, state)
        elif unclean:  # the drop-in never asks: it warns as best it can
            risk_lines = _risk_warnings(cluster, state, election.election_type, selected, mode)
        for line in risk_lines:
            hooks.warn(line)
        if election.dry_run:
            report = execution.dry_run_report(predictions, election.election_type, all_partitions=selected is None)
        else:
            if risk is not None:
                try:
                    confirm_unclean(risk, election.yes, hooks)
                except RefusedError as exc:  # the refused run's document lists every partition, risks flagged
                    exc.results = [PartitionResult(p.tp, Outcome.NOT_ATTEMPTED, leader_before=p.leader_before,
                                                   leader_after=p.leader_before, unclean=p.unclean,
                                                   below_min_isr=p.below_min_isr) for p in predictions]
                    raise
            report = _send(cluster, election, selected, state, hooks)
    report.warnings.extend(line.removeprefix("Warning: ") for line in risk_lines)
    return report


def _risk_warnings(cluster: ClusterConnection, state: ClusterState, election_type: ElectionType,
                   selected: Sequence[TopicPartition] | None, mode: ControllerMode) -> list[str]:
    """The data-loss warnings of an unclean election, or why they could not be worked out (the topics'
    configs and ELR read onto `state`, the election's own read)."""
    try:
        assessed = execution.read_for_prediction(cluster, election_type, mode, state)
    except (InputError, UnreachableError, AuthError) as exc:
        return [f"Warning: could not assess the unclean election's data-loss risk: {exc.message}"]
    return _assessed(predict(assessed, election_type, selected, mode), assessed)[1]


def _assessed(predictions: list[Prediction], state: ClusterState) -> tuple[Risk, list[str]]:
    """What an unclean election risks, and its warning lines."""
    from leader_election_cli.planning.risk import assess, warning_lines

    risk = assess(predictions, state.min_isr_unknown)
    return risk, warning_lines(risk, state)


def _resolved(selection: Selection, state: ClusterState) -> list[TopicPartition]:
    """The toolkit's selection, resolved against the metadata read."""
    from leader_election_cli.selection.topics import resolve

    return resolve(selection, state)


def confirm_unclean(risk: Risk, yes: bool, hooks: Hooks) -> None:
    """Go ahead, or raise `RefusedError` (exit 5): data loss needs `yes` or a "yes" from someone asked."""
    from leader_election_cli.planning.risk import at_risk_names

    if not risk.needs_confirmation or yes:
        return
    count, names = len(risk.outside_isr), at_risk_names(risk)
    if hooks.confirm is None:
        raise RefusedError(f"Refusing an unclean election that may lose data on {count} partition(s) ({names}) "
                           "without confirmation: nothing was sent",
                           hint="Review them with 'kafka-leaders plan', then run again on a terminal or with --yes.")
    if not hooks.confirm(f"Elect a leader outside the ISR for {count} partition(s) ({names}), accepting data loss?"):
        raise RefusedError("Unclean election cancelled: nothing was sent")


def _send(cluster: ClusterConnection, election: Election, selected: Sequence[TopicPartition] | None,
          state: ClusterState, hooks: Hooks) -> ElectionReport:
    """The election itself, in batches, without the partitions that need none (when asked to skip them).

    No request carries more than `SAFE_CHANGES_PER_REQUEST` (5,000, half of what a KRaft controller
    changes in one: planning/batches.py), whatever batch size was asked. Without a batch size, an election
    of more partitions than that goes out in requests of that size at once, without the partitions already
    led by their preferred replica (a preferred election), rather than as one request refused and halved
    again and again: the report (and Kafka's lines) is the same, those partitions being already elected."""
    total = len(state.partitions) if selected is None else len(selected)
    large = election.batch_size is None and total > SAFE_CHANGES_PER_REQUEST
    batch_size = request_size(election.batch_size) if election.batch_size is not None or large else None
    already = []
    if (election.skip_already_elected or large) and election.election_type is ElectionType.PREFERRED:
        already = execution.led_by_preferred(state, state.partitions if selected is None else selected)
    if already and election.skip_already_elected:
        hooks.note(f"{len(already)} partition(s) already led by their preferred replica: left out of the request.")
    with hooks.progress(total - len(already), batch_size) as advance:
        return execution.elect(cluster, election.election_type, selected, state, batch_size=batch_size,
                               batch_interval=election.batch_interval, progress=advance, already_elected=already)
