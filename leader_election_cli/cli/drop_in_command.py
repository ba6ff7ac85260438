"""The drop-in as a click command, built from its option table (`cli.drop_in_options`): help, --version,
shell completion, and every command line the quick path leaves to click (`cli.drop_in.main`); both run
`cli.drop_in_run`."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from leader_election_cli import __version__
from leader_election_cli.cli.completion import complete_topics
from leader_election_cli.cli.drop_in_options import OPTIONS, PROG_NAME, Option, kafka_words
from leader_election_cli.cli.options import (
    COMMAND_SETTINGS,
    INTERVAL_SECONDS,
    TIMEOUT_SECONDS,
    Command,
    HintedUsageError,
    IntRange,
    verbatim,
)
from leader_election_cli.errors import InputError, exit_code_help

# The first line of Kafka's usage (CommandLineUtils.printUsageAndExit, on stderr, for no arguments at all).
KAFKA_USAGE_LINE = ("This tool attempts to elect a new leader for a set of topic partitions. The type of elections "
                    "supported are preferred replicas and unclean replicas.")
HELP = f"""\
{KAFKA_USAGE_LINE}

The preferred replica of a partition is the first broker in its replica list; a preferred election
moves leadership back to it, undoing the imbalance left by broker restarts. It is not needed when the
brokers run with auto.leader.rebalance.enable=true. An unclean election elects a replica that may be
out of sync when a partition has no leader: it can lose data. The partitions at risk are named on
stderr (the election goes ahead, as with Kafka's tool).
"""

EXIT_CODES = exit_code_help({5: "refused for safety (--zookeeper: another election is in progress)"})

EXAMPLES = """\
Examples:
  kafka-leader-election --bootstrap-server localhost:9092 --election-type preferred --all-topic-partitions
  kafka-leader-election --bootstrap-server localhost:9092 --election-type preferred --topic orders --partition 3
  kafka-leader-election --bootstrap-server localhost:9092 --election-type preferred \\
      --path-to-json-file partitions.json --output json
"""

NUMBERS = {"timeout": TIMEOUT_SECONDS, "batch_size": IntRange(min=1), "batch_interval": INTERVAL_SECONDS}
COMPLETIONS: dict[str, Callable[..., Any]] = {
    "election_type": lambda ctx, param, incomplete: [t for t in ("preferred", "unclean")
                                                     if t.startswith(incomplete.lower())],
    "topic": complete_topics,
}


def _click_option(option: Option) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    if option.kind == "color":
        return click.option("--color/--no-color", option.dest, default=None, help=option.help)
    settings: dict[str, Any] = {"help": option.help, "metavar": option.metavar}
    if option.kind == "text":
        settings.update(multiple=True, shell_complete=COMPLETIONS.get(option.dest))
    elif option.kind == "flag":
        settings.update(is_flag=True, default=option.default)
    elif option.kind == "choice":
        settings.update(type=click.Choice(option.choices), default=option.default, show_default=True, metavar=None)
    else:
        settings.update(type=NUMBERS[option.dest], default=option.default)
    names = [option.name] if option.name.lstrip("-").replace("-", "_") == option.dest else [option.name, option.dest]
    return click.option(*names, **settings)


class DropInCommand(Command):
    """The drop-in's command: it reads the words as Kafka's parser does first (`kafka_words`); its help is
    for no words at all (words Kafka ignores alone reach Kafka's checks)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.resilient_parsing:  # shell completion: click's own reading of the words typed so far
            return super().parse_args(ctx, args)
        if not args:  # Kafka's usage line first, as its tool prints it, then the help
            click.echo(KAFKA_USAGE_LINE, err=True)
            raise click.exceptions.NoArgsIsHelpError(ctx)
        try:
            words = kafka_words(args)
        except InputError as exc:
            raise HintedUsageError(exc.message, exc.hint, ctx) from None
        return super().parse_args(ctx, words)


def _elect(**options: Any) -> None:
    from leader_election_cli.cli.drop_in_run import run_drop_in

    sys.exit(run_drop_in(options))


command = click.version_option(__version__, prog_name=PROG_NAME)(_elect)
for _option in reversed(OPTIONS):
    command = _click_option(_option)(command)
command = click.command(cls=DropInCommand, name=PROG_NAME, help=HELP, epilog=verbatim(EXAMPLES, EXIT_CODES),
                        context_settings=COMMAND_SETTINGS)(command)
