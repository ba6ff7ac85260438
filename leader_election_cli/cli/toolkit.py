"""`kafka-leaders`: the leadership toolkit, a click group whose subcommands load on demand."""

from __future__ import annotations

import importlib

import click

from leader_election_cli import __version__
from leader_election_cli.cli.common import process_main
from leader_election_cli.cli.options import Group, verbatim
from leader_election_cli.errors import EXIT_CODE_HELP

# name -> ("module:attribute", one-line help). A subcommand's module is imported only when that
# subcommand runs, so `kafka-leaders --help` stays fast.
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "elect": ("leader_election_cli.cli.elect_command:elect",
              "Elect leaders: precise selection, batches, unclean safety."),
    "plan": ("leader_election_cli.cli.elect_command:plan",
             "Predict an election's outcome per partition; send nothing."),
    "prefer": ("leader_election_cli.cli.moves_command:prefer",
               "Make a chosen replica the leader of a partition."),
    "demote": ("leader_election_cli.cli.moves_command:demote",
               "Move leadership off a broker (before maintenance)."),
    "restore": ("leader_election_cli.cli.moves_command:restore",
                "Put back replica orders saved by prefer, demote or balance."),
    "status": ("leader_election_cli.cli.status_command:status",
               "Show leadership balance per broker and partition health."),
    "can-stop": ("leader_election_cli.cli.maintenance_command:can_stop",
                 "Whether stopping brokers now leaves a partition offline or under min ISR."),
    "rebalance": ("leader_election_cli.cli.status_command:rebalance",
                  "Elect preferred leaders where a broker is unbalanced (cron)."),
    "balance": ("leader_election_cli.cli.balance_command:balance",
                "New preferred replicas: the fewest leaders per broker, no data moved."),
    "roll": ("leader_election_cli.cli.maintenance_command:roll",
             "Restart brokers one at a time or in safe rounds: wait until safe, drain, restart, wait, restore."),
    "snapshot": ("leader_election_cli.cli.snapshot_command:snapshot",
                 "Write one metadata row per partition (.jsonl or .parquet) for analyze."),
    "analyze": ("leader_election_cli.cli.analyze_command:analyze",
                "Analyze leadership over many snapshots on Spark; write election plans."),
    "sandbox": ("leader_election_cli.cli.sandbox_command:sandbox",
                "Run a local simulated Kafka cluster (real wire protocol) in the foreground."),
    "sandbox-ctl": ("leader_election_cli.cli.sandbox_ctl_command:sandbox_ctl",
                    "Stop, kill, start or restart a broker of a running sandbox (from another process)."),
}


class LazyGroup(Group):
    """A group that imports a subcommand's module only when it is used."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(SUBCOMMANDS)

    def get_command(self, ctx: click.Context, name: str) -> click.Command | None:
        if name not in SUBCOMMANDS:
            return None
        module, attribute = SUBCOMMANDS[name][0].split(":")
        return getattr(importlib.import_module(module), attribute)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(name, SUBCOMMANDS[name][1]) for name in self.list_commands(ctx)])


@click.group(cls=LazyGroup, epilog=verbatim(EXIT_CODE_HELP), context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kafka-leaders")
def cli() -> None:
    """Kafka leadership toolkit: elect, plan, move and balance partition leaders."""


def main() -> None:
    process_main(lambda: cli(prog_name="kafka-leaders"))
