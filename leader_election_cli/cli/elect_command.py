"""`kafka-leaders elect` and `kafka-leaders plan`: choose partitions precisely, predict, elect in batches.

`plan` is `elect --dry-run`: it takes elect's flags but those about sending (--dry-run, --batch-size,
--batch-interval, --yes), and sends nothing. The selection flags
are checked before connecting; names are then resolved against one metadata read (`resolve`), and an
unknown topic or partition is an error before anything is sent.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from leader_election_cli.cli.common import (
    configure_logging,
    connection,
    document_on_failure,
    hooks,
    run,
    show,
    stopped_election,
)
from leader_election_cli.cli.completion import complete_topics
from leader_election_cli.cli.options import (
    COMMAND_SETTINGS,
    INTERVAL_SECONDS,
    Command,
    IntRange,
    color_option,
    connection_options,
    verbatim,
)
from leader_election_cli.errors import EXIT_CODE_HELP
from leader_election_cli.gc_pause import cyclic_gc_paused
from leader_election_cli.model import ControllerMode, ElectionType
from leader_election_cli.render.modes import KAFKA_LINE_MODES, resolve

DEFAULT_BATCH_SIZE = 1000

EXAMPLES = """\
Examples:
  kafka-leaders plan --bootstrap-server localhost:9092 --topic orders
  kafka-leaders elect --bootstrap-server localhost:9092 --topic-regex 'orders\\..*' --exclude-topic-regex '.*-dlq'
  kafka-leaders elect --bootstrap-server localhost:9092 -p orders:0,1,2 -p payments:3 --output json
  kafka-leaders elect --bootstrap-server localhost:9092 --all-topic-partitions --batch-size 500 --batch-interval 2
  kafka-leaders elect --bootstrap-server localhost:9092 --election-type unclean --topic orders --yes"""

PLAN_EXAMPLES = """\
Examples:
  kafka-leaders plan --bootstrap-server localhost:9092 --all-topic-partitions
  kafka-leaders plan --bootstrap-server localhost:9092 --election-type unclean --topic orders --output json
  kafka-leaders plan --bootstrap-server localhost:9092 -p orders:0,1 --controller-mode zk"""

SELECTION_NOTES = """\
Selection: --topic, --topic-regex, --partition and --path-to-json-file add up;
--all-topic-partitions takes every topic; --exclude-topic-regex then leaves topics out.
Regular expressions match whole topic names. Internal topics (Kafka's own, and names
starting with "__") are only taken with --include-internal. A preferred election leaves
out partitions already led by their preferred replica and reports them as already elected."""


# -- the commands ------------------------------------------------------------------------------------

_OPTIONS: dict[str, Callable[[Callable[..., Any]], Callable[..., Any]]] = {  # by long name, in --help order
    "--election-type": click.option(
        "--election-type", type=click.Choice(["preferred", "unclean"], case_sensitive=False), default="preferred",
        show_default=True, help="preferred: move leadership back to each partition's first replica; unclean: elect "
                                "a leader for partitions without one, even out of sync (data loss possible)."),
    "--topic": click.option("--topic", "topics", multiple=True, metavar="TOPIC", shell_complete=complete_topics,
                            help="Every partition of TOPIC; repeatable."),
    "--topic-regex": click.option("--topic-regex", metavar="REGEX",
                                  help="Every partition of the topics whose whole name matches."),
    "--exclude-topic-regex": click.option("--exclude-topic-regex", metavar="REGEX",
                                          help="Leave out the topics whose whole name matches."),
    "--partition": click.option("-p", "--partition", "partitions", multiple=True, metavar="TOPIC:P[,P...]",
                                help="Partitions of one topic, e.g. orders:0 or orders:0,1,2; repeatable."),
    "--path-to-json-file": click.option(
        "--path-to-json-file", metavar="FILE",
        help='JSON file listing partitions: {"partitions": [{"topic": "foo", "partition": 1}]}.'),
    "--all-topic-partitions": click.option("--all-topic-partitions", is_flag=True,
                                           help="Every partition of every (non-internal) topic."),
    "--include-internal": click.option("--include-internal", is_flag=True,
                                       help="Also take internal topics (__consumer_offsets, ...)."),
    "--dry-run": click.option("--dry-run", is_flag=True,
                              help="Predict each partition's outcome and send nothing (as `plan`)."),
    "--controller-mode": click.option(
        "--controller-mode", type=click.Choice([m.value for m in ControllerMode]),
        help="Predict with this controller's rules (default: detected from the brokers)."),
    "--batch-size": click.option("--batch-size", type=IntRange(min=1), default=DEFAULT_BATCH_SIZE,
                                 show_default=True, metavar="N",
                                 help="Send at most N partitions per request (never more than 5,000)."),
    "--batch-interval": click.option("--batch-interval", type=INTERVAL_SECONDS, default=0.0, metavar="SECONDS",
                                     help="Pause between batches."),
    "--yes": click.option("--yes", is_flag=True,
                          help="Go ahead with an unclean election that may lose data without asking."),
    "--output": click.option(
        "--output", type=click.Choice(KAFKA_LINE_MODES), default="auto", show_default=True,
        help="auto: a table on a terminal, Kafka's own lines when piped; text; table; json."),
    "--color": color_option,
}


_SENDING_ONLY = ("--dry-run", "--batch-size", "--batch-interval", "--yes")  # they mean nothing for a plan


def _with_options(command: Callable[..., None], *, plan: bool = False) -> Callable[..., None]:
    """The connection options every toolkit command takes, then the election's own (a plan's: those that
    mean something when nothing is sent)."""
    for name, option in reversed(_OPTIONS.items()):
        if not (plan and name in _SENDING_ONLY):
            command = option(command)
    return connection_options(command)


@click.command(cls=Command, epilog=verbatim(SELECTION_NOTES, EXAMPLES, EXIT_CODE_HELP),
               context_settings=COMMAND_SETTINGS)
@_with_options
def elect(**options: Any) -> None:
    """Elect partition leaders: choose partitions precisely, in batches, with unclean-election safety.

    Before an unclean election that would elect a replica outside the ISR it lists those partitions
    and asks; without a terminal it refuses (exit 5) unless --yes is given. Each batch gets the whole
    --timeout; Ctrl-C stops after the batch in flight and reports every partition (exit 130).
    """
    sys.exit(run(lambda: _run(options, dry_run=options["dry_run"]), options["debug"]))


@click.command(cls=Command, epilog=verbatim(SELECTION_NOTES, PLAN_EXAMPLES, EXIT_CODE_HELP),
               context_settings=COMMAND_SETTINGS)
@lambda command: _with_options(command, plan=True)
def plan(**options: Any) -> None:
    """Predict an election without sending it: the leader or error each partition would get.

    Takes the selection and prediction flags of `elect`, not those about sending. Unclean plans flag
    partitions that would elect outside the ISR (data loss possible) or end up below min.insync.replicas.
    """
    sys.exit(run(lambda: _run(options, dry_run=True), options["debug"]))


@cyclic_gc_paused()
def _run(o: dict[str, Any], dry_run: bool) -> int:
    from leader_election_cli.operations.elect import Election, elect
    from leader_election_cli.selection.topics import parse_selection

    configure_logging(o["debug"])
    election_type = ElectionType[o["election_type"].upper()]
    election = Election(election_type, dry_run=dry_run, batch_size=o.get("batch_size"),
                        batch_interval=o.get("batch_interval", 0.0),
                        selection=parse_selection(o["topics"], o["topic_regex"], o["exclude_topic_regex"],
                                                  o["partitions"], o["path_to_json_file"], o["all_topic_partitions"],
                                                  o["include_internal"]),
                        controller_mode=ControllerMode(o["controller_mode"]) if o["controller_mode"] else None,
                        skip_already_elected=True, ask_unclean=True, yes=o.get("yes", False))
    output = resolve(o["output"], sys.stdout, KAFKA_LINE_MODES)
    with document_on_failure(output, stopped_election(election_type, None, dry_run)):
        report = elect(connection(o), election, hooks(output, ask_unclean=True))
    show(report, output, o["color"])
    return int(report.exit_code)
