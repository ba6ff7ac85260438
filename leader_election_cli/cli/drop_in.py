"""`kafka-leader-election`: a drop-in for Kafka's `bin/kafka-leader-election.sh`.

Kafka's flags and rules, checked in Kafka's order with Kafka's messages (see `selection`), plus options
that never change those rules: --output, --timeout, --dry-run, --batch-size, --batch-interval,
--debug. Kafka's tool never asks a question; neither does this one (an unclean election's risk is
printed on stderr instead).

A plain command line runs without click (`drop_in_options.quick_parse`, then `drop_in_run`): a
one-partition election is mostly the Python start and the imports. Help, --version, completion and every
other command line go through the click command (`drop_in_command`), built from the same option table.
"""

from __future__ import annotations

import os
import sys

from leader_election_cli.cli.common import process_main
from leader_election_cli.cli.drop_in_options import PROG_NAME, quick_parse


def main() -> None:
    options = quick_parse(sys.argv[1:], os.environ)
    if options is not None:
        from leader_election_cli.cli.drop_in_run import run_drop_in

        process_main(lambda: sys.exit(run_drop_in(options)))
    else:
        from leader_election_cli.cli.drop_in_command import command

        process_main(lambda: command(prog_name=PROG_NAME))
