"""The outcome words of every partition report, one rule for its table and its JSON: a dry run's
partition is counted as what it predicts (`would_elect`, `not_needed`, `would_fail`), never as a bare
"predicted", and the `summary` object counts each word."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from operator import attrgetter
from typing import Any, Protocol

from leader_election_cli import kafka_errors
from leader_election_cli.errors import ExitCode
from leader_election_cli.model import Outcome

WOULD_ELECT, NOT_NEEDED, WOULD_FAIL = "would_elect", "not_needed", "would_fail"
PREDICTIONS = (WOULD_ELECT, NOT_NEEDED, WOULD_FAIL)
# every outcome word, in the order tables and summaries list them
OUTCOME_WORDS = tuple(word for o in Outcome for word in (PREDICTIONS if o is Outcome.PREDICTED else (o.value,)))


class _Result(Protocol):
    outcome: Outcome
    error_code: int


class _Report(Protocol):
    @property
    def results(self) -> Sequence[_Result]: ...
    @property
    def exit_code(self) -> ExitCode: ...
    interrupted: bool
    aborted_reason: str | None


def outcome_word(outcome: Outcome, error_code: int) -> str:
    """A partition's outcome as its report shows it: a prediction by its error code (none: would elect;
    ELECTION_NOT_NEEDED: not needed; any other: would fail), any other outcome by its value."""
    if outcome is not Outcome.PREDICTED:
        return outcome.value
    if error_code == kafka_errors.NONE:
        return WOULD_ELECT
    return NOT_NEEDED if error_code == kafka_errors.ELECTION_NOT_NEEDED else WOULD_FAIL


_OUTCOME, _ERROR_CODE = attrgetter("outcome"), attrgetter("error_code")


def outcome_counts(results: Sequence[_Result]) -> Counter[str]:
    """How many partitions have each outcome word."""
    counts = Counter({o.value: n for o, n in Counter(map(_OUTCOME, results)).items()})  # (C loops: a million)
    predicted = counts.pop(Outcome.PREDICTED.value, 0)
    if predicted:  # a dry run predicts every partition: counted by error code, in C loops too
        among = results if predicted == len(results) else [r for r in results if r.outcome is Outcome.PREDICTED]
        for code, n in Counter(map(_ERROR_CODE, among)).items():
            counts[outcome_word(Outcome.PREDICTED, code)] += n
    return counts


def summary_document(report: _Report) -> dict[str, Any]:
    """The `summary` object of every partition report: a count per outcome word, the total, the exit code."""
    counts = outcome_counts(report.results)
    summary: dict[str, Any] = {word: counts[word] for word in OUTCOME_WORDS}
    summary.update(total=len(report.results), exit_code=int(report.exit_code), interrupted=report.interrupted)
    if report.aborted_reason:
        summary["stopped"] = report.aborted_reason
    return summary
