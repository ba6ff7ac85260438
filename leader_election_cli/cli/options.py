"""The click building blocks every command shares: settings, parameter types, the toolkit's connection
options, --color, and the command classes whose usage errors are one line (the drop-in's quick path
runs without click; see `cli.drop_in`)."""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from typing import Any

import click
from click.shell_completion import BashComplete, add_completion_class

from leader_election_cli.cli.common import BOOTSTRAP_ENV, fail
from leader_election_cli.errors import ExitCode, shown

# Every command's click settings: -h too, whether the command runs alone or under `kafka-leaders` (click
# caches a command's help option the first time it is built, with the names of that context).
COMMAND_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def ascii_only(value: Any) -> bool:
    """A number's text has ASCII digits only: Python's int() and float() also read '٣' (Arabic-Indic three)
    and other Unicode digits, which no Kafka tool or config would; '²' is not even a digit to int()."""
    return not isinstance(value, str) or value.isascii()


class IntRange(click.IntRange):
    """click's IntRange, ASCII digits only."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not ascii_only(value):
            self.fail(f"{value!r} is not a number: write it with the digits 0-9.", param, ctx)
        return super().convert(value, param, ctx)


class Finite(click.FloatRange):
    """A finite number within a range (click's FloatRange lets nan and inf through), ASCII digits only."""

    unit = "number"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if not ascii_only(value):
            self.fail(f"{value!r} is not a {self.unit}: write it with the digits 0-9.", param, ctx)
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


class HintedUsageError(click.UsageError):
    """A usage error with its own hint line (instead of "Run '... --help' for usage.")."""

    def __init__(self, message: str, hint: str | None, ctx: click.Context | None = None) -> None:
        super().__init__(message, ctx)
        self.hint = hint


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
            hint = exc.hint if isinstance(exc, HintedUsageError) else None
            hint = hint or f"Run '{name} --help' for usage."
            fail(shown(exc.format_message(), limit=600), hint)
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
