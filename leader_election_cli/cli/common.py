"""What every command shares: running a command body with one-line errors, logging, output choice."""

from __future__ import annotations

import gc
import logging
import math
import os
import sys
import traceback
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import click
from click.shell_completion import BashComplete, add_completion_class

from leader_election_cli.errors import (
    AuthError,
    ExitCode,
    InputError,
    LeaderElectionError,
    RefusedError,
    UnreachableError,
    interrupted_exit,
    one_line,
    shown,
)

if TYPE_CHECKING:
    from leader_election_cli.model import ElectionType, TopicPartition
    from leader_election_cli.operations.connection import Connection
    from leader_election_cli.operations.hooks import Hooks
    from leader_election_cli.reports.run import Report

# Every command's click settings: -h too, whether the command runs alone or under `kafka-leaders` (click
# caches a command's help option the first time it is built, with the names of that context).
COMMAND_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


class Finite(click.FloatRange):
    """A finite number within a range (click's FloatRange lets nan and inf through)."""

    unit = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        number = super().convert(value, param, ctx)
        if not math.isfinite(number):
            self.fail(f"{value!r} is not a finite {self.unit}.", param, ctx)
        return number


class Seconds(Finite):
    """A finite number of seconds within a range."""

    unit = "number of seconds"


# Kafka's timeouts are Java ints of milliseconds; ElectLeaders carries --timeout as one (TimeoutMs).
TIMEOUT_SECONDS = Seconds(min=0.1, max=(2**31 - 1) / 1000)
INTERVAL_SECONDS = Seconds(min=0)


def verbatim(*paragraphs: str) -> str:
    """Help text paragraphs that click must print as written (its `\\b` marker), e.g. exit codes."""
    return "\n\n".join("\b\n" + p for p in paragraphs)


BOOTSTRAP_ENV = "KAFKA_BOOTSTRAP_SERVERS"  # read by the toolkit only: the drop-in keeps Kafka's required flag


def connection_options(command: Callable[..., Any]) -> Callable[..., Any]:
    """The toolkit's connection options: --bootstrap-server (or $KAFKA_BOOTSTRAP_SERVERS), --command-config,
    --timeout, --debug. `connection` makes them one value when the command runs."""
    for option in reversed((
        click.option("--bootstrap-server", envvar=BOOTSTRAP_ENV, show_envvar=True, metavar="HOST:PORT",
                     help="Broker(s) to connect to, comma-separated host:port. REQUIRED unless the environment "
                          "variable is set."),
        click.option("--command-config", metavar="FILE",
                     help="Properties file with configs for the admin client (security, timeouts, client.id)."),
        click.option("--timeout", type=TIMEOUT_SECONDS, metavar="SECONDS",
                     help="Time limit for connecting and for each request batch "
                          "(default: default.api.timeout.ms, 30 s)."),
        click.option("--debug", is_flag=True, help="Log the protocol exchange and show tracebacks."),
    )):
        command = option(command)
    return command


def color_option(command: Callable[..., Any]) -> Callable[..., Any]:
    """--color/--no-color: tables in colour or not (default: colour on a terminal, unless NO_COLOR is set or
    TERM is dumb)."""
    return click.option("--color/--no-color", "color", default=None,
                        help="Colour the table, or not (default: on a terminal, unless NO_COLOR is set or "
                             "TERM=dumb).")(command)


def configure_logging(debug: bool) -> None:
    """kafka-python logs loudly; keep it quiet unless --debug."""
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


def ask(question: str) -> bool:
    """A yes/no question on stderr (stdout may carry a document); no answer (Ctrl-D, Ctrl-C) is no."""
    try:
        return click.confirm(question, err=True)
    except click.exceptions.Abort:
        click.echo(err=True)  # end the question's line
        from leader_election_cli.operations.signals import Stopped, received

        signum = received()
        if signum is not None:  # a stop signal, not a "no": the run stops as the signal policy says
            raise Stopped(signum) from None
        return False


def without_cyclic_gc(body: Callable[..., int], *args: Any, **kwargs: Any) -> int:
    """Run `body` with the cyclic garbage collector paused.

    A large cluster's read makes millions of acyclic objects (partition states, predictions, results)
    that reference counting frees; the collector would only walk them again and again (a quarter of an
    election's CPU time at 100,000 partitions, a third of `status`'s at 1,000,000). For the commands
    that read a cluster once and end, not for the sandbox, which serves until stopped.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return body(*args, **kwargs)
    finally:
        if was_enabled:
            gc.enable()


@contextmanager
def progress_bar(output: str, total: int, batch_size: int | None) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on a terminal when several batches go out; never with --output json."""
    if output == "json" or not batch_size or total <= batch_size or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("Electing leaders", total=total)
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

    def echo(line: str) -> None:
        click.echo(line, err=True)

    def note(line: str) -> None:
        if output != "json":
            click.echo(line, err=True)

    return Hooks(warn=echo, note=note, progress=lambda total, batch_size: progress_bar(output, total, batch_size),
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
        if output == "json":
            show(stopped(exc), "json")
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
        stopped.abort(exc.exit_code, exc.message)
        return stopped

    return report


def fail(message: str, hint: str | None = None, detail: str | None = None) -> None:
    """The one-line error format of both commands (plus optional detail and hint lines); user values in the
    message (click quotes them in its usage errors) cannot break it into several lines."""
    click.echo(one_line(message), err=True)
    if detail:
        click.echo(one_line(detail), err=True)
    if hint:
        click.echo(f"Hint: {one_line(hint)}", err=True)


def run(body: Callable[[], int], debug: bool) -> int:
    """Run a command body under the one signal policy (operations/signals.py); every failure becomes a
    one-line message and a documented exit code."""
    from leader_election_cli.operations import signals

    with signals.policy() as stop:
        try:
            return body()
        except LeaderElectionError as exc:
            if debug:
                traceback.print_exc()
            fail(exc.message, exc.hint, exc.detail)
            if exc.exit_code is ExitCode.INTERRUPTED:
                return int(interrupted_exit(stop.signum))
            return int(exc.exit_code)
        except KeyboardInterrupt as exc:  # before anything was sent (after it, a signal only sets the flag)
            signum = exc.signum if isinstance(exc, signals.Stopped) else stop.signum
            name = "Interrupted" if signum in (None, 2) else f"Stopped by {exc}"
            fail(f"{name} before anything was sent." if not debug else f"{name}.")
            return int(interrupted_exit(signum))
        except Exception as exc:  # a bug: say so in one line, the traceback only with --debug
            if debug:
                traceback.print_exc()
            fail(f"Internal error: {type(exc).__name__}: {exc}", "Run again with --debug and report the traceback.")
            return int(ExitCode.PARTITION_FAILED)


def process_main(command: click.Command, prog_name: str) -> None:
    """Run `command` as the whole of this process (an entry point's `main`).

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
        command(prog_name=prog_name)
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


class OneLineUsageErrors:
    """A click command mixin: click's own usage errors become our one-line format (exit 2)."""

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,
             standalone_mode: bool = True, **extra: Any) -> Any:
        if not standalone_mode:
            return super().main(args, prog_name, standalone_mode=False, **extra)  # type: ignore[misc]
        try:
            code = super().main(args, prog_name, standalone_mode=False, **extra)  # type: ignore[misc]
        except click.exceptions.NoArgsIsHelpError as exc:
            click.echo(exc.ctx.get_help() if exc.ctx else str(exc), err=True)
            code = int(ExitCode.USAGE)
        except click.UsageError as exc:
            name = exc.ctx.command_path if exc.ctx else prog_name
            fail(shown(exc.format_message(), limit=600), f"Run '{name} --help' for usage.")
            code = int(ExitCode.USAGE)
        except click.exceptions.Abort:
            fail("Aborted.")
            code = int(ExitCode.INTERRUPTED)
        except click.exceptions.Exit as exc:
            code = exc.exit_code
        sys.exit(code or 0)


class _BashComplete(BashComplete):
    """click's bash completion, with the words bash split at ':' (it is in COMP_WORDBREAKS) put back
    together, so that `--bootstrap-server host:9092` reaches the command as one value."""

    def get_completion_args(self) -> tuple[list[str], str]:
        args, incomplete = super().get_completion_args()
        return rejoin_colon_words(args), incomplete


def rejoin_colon_words(words: Sequence[str]) -> list[str]:
    """["h", ":", "9092,h2", ":", "9093"] -> ["h:9092,h2:9093"]: bash's split at ':' undone."""
    joined: list[str] = []
    glue = False
    for word in words:
        if word == ":" and joined:
            joined[-1] += ":"
            glue = True
        elif glue:
            joined[-1] += word
            glue = False
        else:
            joined.append(word)
    return joined


add_completion_class(_BashComplete, "bash")


class Command(OneLineUsageErrors, click.Command):
    """A click command with one-line usage errors."""


class Group(OneLineUsageErrors, click.Group):
    """A click group with one-line usage errors."""
