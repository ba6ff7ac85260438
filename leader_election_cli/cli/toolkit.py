"""`kafka-leaders`: the leadership toolkit, a click group whose subcommands load on demand."""

from __future__ import annotations

import importlib

import click

from leader_election_cli import __version__
from leader_election_cli.errors import EXIT_CODE_HELP

# subcommand name -> "module:attribute"; imported only when that subcommand runs (fast --help).
SUBCOMMANDS: dict[str, str] = {
    "sandbox": "leader_election_cli.cli.sandbox_command:sandbox",
}


class LazyGroup(click.Group):
    """A group that imports a subcommand's module only when it is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        target = SUBCOMMANDS.get(name)
        if target is None:
            return None
        module, attribute = target.split(":")
        return getattr(importlib.import_module(module), attribute)


@click.group(cls=LazyGroup, epilog=EXIT_CODE_HELP, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kafka-leaders")
def cli() -> None:
    """Kafka leadership toolkit: elect, plan, move and balance partition leaders."""


def main() -> None:
    cli()
