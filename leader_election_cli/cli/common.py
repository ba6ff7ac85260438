"""What every command shares when it runs: one-line errors, exit codes, logging, hooks, printing the report.

No click here: the drop-in's quick path (`cli.drop_in`) runs an election without it; the click building
blocks (option types, shared options, command classes) are in `cli.options`.
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from leader_election_cli.errors import (
    AuthError,
    ExitCode,
    InputError,
    LeaderElectionError,
    RefusedError,
    UnreachableError,
    interrupted_exit,
    one_line,
)
from leader_election_cli.render.modes import is_json

if TYPE_CHECKING:
    from leader_election_cli.model import ElectionType, TopicPartition
    from leader_election_cli.operations.connection import Connection
    from leader_election_cli.operations.hooks import Hooks
    from leader_election_cli.reports.run import Report

BOOTSTRAP_ENV = "KAFKA_BOOTSTRAP_SERVERS"  # read by the toolkit only: the drop-in keeps Kafka's required flag


def configure_logging(debug: bool) -> None:
    """kafka-python logs loudly; keep it quiet unless --debug."""
    import logging

    logging.basicConfig(level=logging.DEBUG if debug else logging.CRITICAL, stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("kafka").setLevel(logging.DEBUG if debug else logging.CRITICAL + 1)


def interactive() -> bool:
    """A person can answer a question: stdin and stderr (where it is asked) are terminals, and this
    process is in the terminal's foreground (a background job reading it would be stopped)."""
    if sys.stdin is None or sys.stderr is None or not (sys.stdin.isatty() and sys.stderr.isatty()):
        return False
    try:
        return os.tcgetpgrp(sys.stdin.fileno()) == os.getpgrp()
    except (OSError, ValueError):  # no usable file descriptor behind the stream
        return False


def echo(line: str = "", err: bool = False) -> None:
    """One line on stdout (or stderr), flushed: what click.echo does for the plain lines we print."""
    stream = sys.stderr if err else sys.stdout
    stream.write(line + "\n")
    stream.flush()


def ask(question: str) -> bool:
    """A yes/no question on stderr (stdout may carry a document); no answer (Ctrl-D, Ctrl-C) is no."""
    import click

    try:
        return click.confirm(question, err=True)
    except click.exceptions.Abort:
        echo(err=True)  # end the question's line
        from leader_election_cli.operations.signals import Stopped, received

        signum = received()
        if signum is not None:  # a stop signal, not a "no": the run stops as the signal policy says
            raise Stopped(signum) from None
        return False


@contextmanager
def progress_bar(output: str, total: int, batch_size: int | None,
                 label: str = "Electing leaders") -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on a terminal when several batches go out; never with --output json."""
    if is_json(output) or not batch_size or total <= batch_size or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(label, total=total)
        yield lambda n: bar.advance(task, n)


@contextmanager
def printing_the_report() -> Iterator[None]:
    """Around the printing of a run's report: a KeyboardInterrupt there (a stop signal only sets a flag by
    then) cannot undo what the run did, so it says so, and not `run`'s "Interrupted before anything was sent"."""
    try:
        yield
    except KeyboardInterrupt:
        raise LeaderElectionError("Interrupted while printing the report: the run itself had finished",
                       hint="kafka-leaders status shows the leaders now.", exit_code=ExitCode.INTERRUPTED) from None


def connection(o: dict[str, Any]) -> Connection:
    """The toolkit's connection options as one value; --bootstrap-server (or $KAFKA_BOOTSTRAP_SERVERS) is
    required. (The drop-in checks its own, with Kafka's rules and messages.)"""
    from leader_election_cli.operations.connection import Connection

    servers = (o["bootstrap_server"] or "").strip()
    if not servers:
        raise InputError("Missing required option --bootstrap-server",
                         hint=f"Give --bootstrap-server HOST:PORT, or set {BOOTSTRAP_ENV}.")
    return Connection.of(servers, o["command_config"], o["timeout"])


def hooks(output: str, *, ask_unclean: bool = False) -> Hooks:
    """What an operation tells the person running it: warnings on stderr, notes too (not beside a JSON
    document), a progress bar on a terminal, and (when asked for) a question on the terminal."""
    from leader_election_cli.operations.hooks import Hooks

    def warn(line: str) -> None:
        echo(line, err=True)

    def note(line: str) -> None:
        if not is_json(output):
            echo(line, err=True)

    return Hooks(warn=warn, note=note, progress=lambda total, batch_size, *label: progress_bar(output, total,
                                                                                               batch_size, *label),
                 confirm=ask if ask_unclean and interactive() else None)


def show(report: Report, output: str, color: bool | None = None) -> None:
    """Print `report` in the resolved output mode; `color` is --color/--no-color (None: not given). A stop
    signal cannot cut the report: it is printed whole."""
    from leader_election_cli.operations.signals import stop_on_signals
    from leader_election_cli.render.output import render

    with stop_on_signals(), printing_the_report():
        render(report, output, sys.stdout, sys.stderr, color)


@contextmanager
def document_on_failure(output: str, stopped: Callable[[LeaderElectionError], Report]) -> Iterator[None]:
    """With --output json, a cluster that cannot be reached or refuses us, or a run refused for safety (an
    unclean election not confirmed, a restore file from another cluster), still gets a document on stdout
    (the error line goes to stderr as always): `stopped` makes the report of the stop. Nothing had been
    changed when such a failure gets here."""
    try:
        yield
    except (UnreachableError, AuthError, RefusedError) as exc:
        if is_json(output):
            show(stopped(exc), output)
        raise


def stopped_election(election_type: ElectionType, partitions: Sequence[TopicPartition] | None,
                     dry_run: bool) -> Callable[[LeaderElectionError], Report]:
    """An election's report when it stopped before sending anything: the partitions asked for, when known,
    not attempted, and why (a refused unclean election: every selected partition, the at-risk ones flagged)."""

    def report(exc: LeaderElectionError) -> Report:
        from leader_election_cli.model import Outcome, PartitionResult
        from leader_election_cli.reports.election import ElectionReport

        results = exc.results if exc.results is not None else \
            [PartitionResult(tp, Outcome.NOT_ATTEMPTED) for tp in partitions or ()]
        stopped = ElectionReport(election_type, list(results), dry_run=dry_run)
        stopped.abort(exc.exit_code, f"{exc.message}: {exc.detail}" if exc.detail else exc.message)
        return stopped

    return report


def fail(message: str, hint: str | None = None, detail: str | None = None) -> None:
    """The one-line error format of both commands (plus optional detail and hint lines); user values in the
    message (click quotes them in its usage errors) cannot break it into several lines."""
    echo(one_line(message), err=True)
    if detail:
        echo(one_line(detail), err=True)
    if hint:
        echo(f"Hint: {one_line(hint)}", err=True)


def _traceback(debug: bool) -> None:
    """With --debug, the traceback of the exception being handled, on stderr."""
    if debug:
        import traceback

        traceback.print_exc()


def run(body: Callable[[], int], debug: bool, kafka_lines: bool = False,
        unfinished: str = "before anything was sent") -> int:
    """Run a command body under the one signal policy (operations/signals.py); every failure becomes a
    one-line message and a documented exit code. `kafka_lines` (the drop-in): a failure's first line is
    Kafka's own where it has one (`LeaderElectionError.kafka_line`), the message on the line below.
    `unfinished` says where a stop signal left the command (its body sends nothing once a stop signal only
    sets the flag)."""
    from leader_election_cli.operations import signals

    with signals.policy() as stop:
        try:
            return body()
        except LeaderElectionError as exc:
            _traceback(debug)
            if kafka_lines and exc.kafka_line:  # the message below it, without what Kafka's line already says
                said = exc.kafka_line.split(": ", 1)[-1]  # ("java.io.IOException: Unable to read file F")
                ours = None if exc.message in exc.kafka_line else exc.message.removeprefix(f"{said}: ")
                fail(exc.kafka_line, exc.hint, ": ".join(filter(None, (ours, exc.detail))))
            else:
                fail(exc.message, exc.hint, exc.detail)
            if exc.exit_code is ExitCode.INTERRUPTED:
                return int(interrupted_exit(stop.signum))
            return int(exc.exit_code)
        except KeyboardInterrupt as exc:  # before anything was sent (after it, a signal only sets the flag)
            signum = exc.signum if isinstance(exc, signals.Stopped) else stop.signum
            name = "Interrupted" if signum in (None, 2) else f"Stopped by {exc}"
            fail(f"{name} {unfinished}." if not debug else f"{name}.")
            return int(interrupted_exit(signum))
        except Exception as exc:  # a bug: say so in one line, the traceback only with --debug
            _traceback(debug)
            fail(f"Internal error: {type(exc).__name__}: {exc}", "Run again with --debug and report the traceback.")
            return int(ExitCode.PARTITION_FAILED)


def process_main(command: Callable[[], Any]) -> None:
    """Run `command` (a click command's `main`, or the drop-in's quick path) as the whole of this process
    (an entry point's `main`); it ends by raising SystemExit with its exit code.

    Its standard streams cannot fail it (`cli.streams`): a closed pipe or a full disk on stdout ends the
    printing, and the run ends with the exit code it earned; a lost output other than a closed pipe is
    said on stderr. At the end, the objects still alive are frozen out of the cyclic collector: the interpreter's
    final collection would only walk them (some 34,000 after an election, mostly kafka-python's
    protocol classes) for a twentieth of a one-partition election's wall time.
    """
    from leader_election_cli.cli.streams import guard_standard_streams, output_failure_line

    out, err = guard_standard_streams()
    code: Any = 0
    try:
        command()
    except SystemExit as exc:
        code = exc.code
    finally:
        gc.freeze()
    out.flush()
    said = output_failure_line(out)
    if said:
        err.write(said + "\n")
    err.flush()
    sys.exit(code)


