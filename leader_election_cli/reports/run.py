"""What every report shares: how its run ended, and the one rule that makes that an exit code."""

from __future__ import annotations

from leader_election_cli.errors import ExitCode, interrupted_exit


class Report:
    """A finished run's report. Each kind says whether it was interrupted, stopped by a failure (and
    with which code), and whether anything in it failed; `exit_code` is the one rule over the three."""

    interrupted: bool
    aborted_exit: ExitCode | None
    aborted_reason: str | None
    stop_signal: int | None = None  # the signal that interrupted the run (SIGINT when unknown)

    def abort(self, exit_code: ExitCode, reason: str) -> None:
        """The run was stopped by a failure after it had started changing the cluster."""
        self.aborted_exit, self.aborted_reason = exit_code, reason

    @property
    def has_failures(self) -> bool:
        raise NotImplementedError

    @property
    def has_unconfirmed(self) -> bool:
        """Anything whose outcome the cluster's answer and the state read back disagree about."""
        return False

    @property
    def exit_code(self) -> ExitCode:
        """Interrupted (130; 143 for SIGTERM, 129 for SIGHUP) first, then the code of the failure that stopped
        the run (3, 4, 5), then 3 when an outcome could not be confirmed (the state is not known: as after a
        timeout), then 1 when anything in it failed, else 0."""
        if self.interrupted:
            return interrupted_exit(self.stop_signal)
        if self.aborted_exit is not None:
            return self.aborted_exit
        if self.has_unconfirmed:
            return ExitCode.UNREACHABLE
        return ExitCode.PARTITION_FAILED if self.has_failures else ExitCode.OK
