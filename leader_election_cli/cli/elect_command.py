"""`kafka-leaders elect` and `kafka-leaders plan`: choose partitions precisely, predict, elect in batches.

`plan` takes every flag `elect` takes and sends nothing: it is `elect --dry-run`. The selection flags
are checked before connecting; names are then resolved against one metadata read (`resolve`), and an
unknown topic or partition is an error before anything is sent.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from leader_election_cli.cli import common
from leader_election_cli.cli.common import (
    COMMAND_SETTINGS,
    INTERVAL_SECONDS,
    OUTPUT_CHOICES,
    Command,
    bootstrap_servers,
    configure_logging,
    connection_options,
    json_document_on_cluster_failure,
    progress_bar,
    render_report,
    resolve_output,
    run,
    verbatim,
    without_cyclic_gc,
)
from leader_election_cli.cli.completion import complete_topics
from leader_election_cli.errors import EXIT_CODE_HELP
from leader_election_cli.model import ControllerMode, ElectionType
from leader_election_cli.selection.topics import parse_selection, resolve

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

_OPTIONS = [
    click.option("--election-type", type=click.Choice(["preferred", "unclean"], case_sensitive=False),
                 default="preferred", show_default=True,
                 help="preferred: move leadership back to each partition's first replica; unclean: elect a "
                      "leader for partitions without one, even out of sync (data loss possible)."),
    click.option("--topic", "topics", multiple=True, metavar="TOPIC", shell_complete=complete_topics,
                 help="Every partition of TOPIC; repeatable."),
    click.option("--topic-regex", metavar="REGEX", help="Every partition of the topics whose whole name matches."),
    click.option("--exclude-topic-regex", metavar="REGEX", help="Leave out the topics whose whole name matches."),
    click.option("-p", "--partition", "partitions", multiple=True, metavar="TOPIC:P[,P...]",
                 help="Partitions of one topic, e.g. orders:0 or orders:0,1,2; repeatable."),
    click.option("--path-to-json-file", metavar="FILE",
                 help='JSON file listing partitions: {"partitions": [{"topic": "foo", "partition": 1}]}.'),
    click.option("--all-topic-partitions", is_flag=True, help="Every partition of every (non-internal) topic."),
    click.option("--include-internal", is_flag=True, help="Also take internal topics (__consumer_offsets, ...)."),
    click.option("--dry-run", is_flag=True, help="Predict each partition's outcome and send nothing (as `plan`)."),
    click.option("--controller-mode", type=click.Choice([m.value for m in ControllerMode]),
                 help="Predict with this controller's rules (default: detected from the brokers)."),
    click.option("--batch-size", type=click.IntRange(min=1), default=DEFAULT_BATCH_SIZE, show_default=True,
                 metavar="N", help="Send at most N partitions per request."),
    click.option("--batch-interval", type=INTERVAL_SECONDS, default=0.0, metavar="SECONDS",
                 help="Pause between batches."),
    click.option("--yes", is_flag=True, help="Go ahead with an unclean election that may lose data without asking."),
    click.option("--output", type=click.Choice(OUTPUT_CHOICES), default="auto", show_default=True,
                 help="auto: a table on a terminal, Kafka's own lines when piped; text; table; json."),
]



def _with_options(command: Callable[..., None]) -> Callable[..., None]:
    """The connection options every toolkit command takes, then the election's own."""
    for option in reversed(_OPTIONS):
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
    sys.exit(run(lambda: without_cyclic_gc(_run, options, dry_run=options["dry_run"]), options["debug"]))


@click.command(cls=Command, epilog=verbatim(SELECTION_NOTES, PLAN_EXAMPLES, EXIT_CODE_HELP),
               context_settings=COMMAND_SETTINGS)
@_with_options
def plan(**options: Any) -> None:
    """Predict an election without sending it: the leader or error each partition would get.

    Takes every flag of `elect`. Unclean plans flag partitions that would elect outside the ISR (data
    loss possible) or end up below min.insync.replicas.
    """
    sys.exit(run(lambda: without_cyclic_gc(_run, options, dry_run=True), options["debug"]))


def _run(o: dict[str, Any], dry_run: bool) -> int:
    from leader_election_cli import planning
    from leader_election_cli.cluster.admin import Cluster
    from leader_election_cli.config.settings import load_client_settings
    from leader_election_cli.operations import execution
    from leader_election_cli.planning import risk as safety

    configure_logging(o["debug"])
    election_type = ElectionType[o["election_type"].upper()]
    selection = parse_selection(o["topics"], o["topic_regex"], o["exclude_topic_regex"], o["partitions"],
                                o["path_to_json_file"], o["all_topic_partitions"], o["include_internal"])
    settings = load_client_settings(o["command_config"], int(o["timeout"] * 1000) if o["timeout"] else None)
    for warning in settings.warnings:
        click.echo(f"Warning: {warning}", err=True)
    output = resolve_output(o["output"], sys.stdout)
    predicting = dry_run or election_type is ElectionType.UNCLEAN
    with json_document_on_cluster_failure(output, election_type, None, dry_run), \
            Cluster.connect(bootstrap_servers(o), settings) as cluster:
        mode = ControllerMode(o["controller_mode"]) if o["controller_mode"] else cluster.mode()
        state = execution.read_for_prediction(cluster, election_type, mode) if predicting else cluster.describe()
        selected = resolve(selection, state)
        if predicting:
            predictions = planning.predict(state, election_type, selected, mode)
            risk = safety.assess(predictions, state.min_isr_unknown)
            risk_lines = safety.warning_lines(risk, state)
            for line in risk_lines:
                click.echo(line, err=True)
            if dry_run:
                report = execution.dry_run_report(predictions, election_type)
            else:
                safety.require_confirmation(risk, yes=o["yes"], interactive=common.interactive(), confirm=common.ask)
        if not dry_run:
            already = execution.led_by_preferred(state, selected) if election_type is ElectionType.PREFERRED else []
            if already and output != "json":
                click.echo(f"{len(already)} partition(s) already led by their preferred replica: "
                           "left out of the request.", err=True)
            with progress_bar(output, len(selected) - len(already), o["batch_size"]) as advance:
                report = execution.elect(cluster, election_type, selected, state, batch_size=o["batch_size"],
                                         batch_interval=o["batch_interval"], progress=advance,
                                         already_elected=already)
        if predicting and output == "json":  # stdout is the document: it carries the warnings too
            report.warnings.extend(line.removeprefix("Warning: ") for line in risk_lines)
    render_report(report, output)
    return int(report.exit_code)
