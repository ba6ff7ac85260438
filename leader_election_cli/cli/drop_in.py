"""`kafka-leader-election`: a drop-in for Kafka's `bin/kafka-leader-election.sh`.

Kafka's flags and rules, checked in Kafka's order with Kafka's messages (see `selection`), plus options
that never change those rules: --output, --timeout, --dry-run, --batch-size, --batch-interval,
--debug. Kafka's tool never asks a question; neither does this one (an unclean election's risk is
printed on stderr instead).
"""

from __future__ import annotations

import sys
from typing import Any

import click

from leader_election_cli import __version__
from leader_election_cli.cli.common import (
    COMMAND_SETTINGS,
    INTERVAL_SECONDS,
    OUTPUT_CHOICES,
    TIMEOUT_SECONDS,
    Command,
    configure_logging,
    json_document_on_cluster_failure,
    process_main,
    progress_bar,
    render_report,
    resolve_output,
    run,
    verbatim,
    without_cyclic_gc,
)
from leader_election_cli.cli.completion import complete_topics
from leader_election_cli.errors import (
    NOT_AUTHORIZED_LINE,
    TIMEOUT_LINE,
    AuthError,
    ExitCode,
    InputError,
    UnreachableError,
    exit_code_help,
)

HELP = """\
This tool attempts to elect a new leader for a set of topic partitions. The type of elections supported
are preferred replicas and unclean replicas.

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


@click.command(cls=Command, help=HELP, epilog=verbatim(EXAMPLES, EXIT_CODES), no_args_is_help=True,
               context_settings=COMMAND_SETTINGS)
@click.option("--bootstrap-server", metavar="HOST:PORT", multiple=True,
              help="A host name and port for the broker to connect to, in the form host:port. Multiple "
                   "comma-separated URLs can be given. REQUIRED.")
@click.option("--zookeeper", metavar="HOST:PORT[/CHROOT]", multiple=True,
              help="DEPRECATED (KIP-183), use --bootstrap-server. The ZooKeeper connect string of a ZooKeeper-mode "
                   "cluster, host:port[,host:port...][/chroot]: a preferred election through the "
                   "/admin/preferred_replica_election znode, then the outcome of every partition.")
@click.option("--no-wait", is_flag=True,
              help="With --zookeeper: only start the election and return, as the old tool did.")
@click.option("--command-config", metavar="FILE", multiple=True,
              help="Properties file with configs for the admin client (security, timeouts, client.id).")
@click.option("--admin.config", "admin_config", metavar="FILE", multiple=True,
              help="DEPRECATED: use --command-config. Admin client config properties file.")
@click.option("--election-type", metavar="preferred|unclean", multiple=True,
              shell_complete=lambda ctx, param, incomplete: [t for t in ("preferred", "unclean")
                                                              if t.startswith(incomplete.lower())],
              help='Type of election to attempt: "preferred" or "unclean". REQUIRED.')
@click.option("--topic", metavar="TOPIC", multiple=True, shell_complete=complete_topics,
              help="Name of topic for which to perform an election. REQUIRED if --partition is given.")
@click.option("--partition", metavar="ID", multiple=True, help="Partition id for which to perform an election. "
                                                "REQUIRED if --topic is given.")
@click.option("--all-topic-partitions", is_flag=True, default=None,
              help="Perform election on all of the topic partitions.")
@click.option("--path-to-json-file", metavar="FILE", multiple=True,
              help='JSON file listing the partitions: {"partitions": [{"topic": "foo", "partition": 1}]}.')
@click.option("--output", type=click.Choice(OUTPUT_CHOICES), default="auto", show_default=True,
              help="auto: a table on a terminal, Kafka's own lines when piped; text; table; json.")
@click.option("--timeout", type=TIMEOUT_SECONDS, metavar="SECONDS",
              help="Time limit for connecting and for each request batch (default: default.api.timeout.ms, "
                   "30 s); with --zookeeper, for the whole election.")
@click.option("--batch-size", type=click.IntRange(min=1), metavar="N",
              help="Send at most N partitions per request (default: one request, as Kafka does).")
@click.option("--batch-interval", type=INTERVAL_SECONDS, default=0.0, metavar="SECONDS",
              help="Pause between batches.")
@click.option("--dry-run", is_flag=True, help="Predict each partition's outcome from one metadata read; send nothing.")
@click.option("--debug", is_flag=True, help="Log the protocol exchange and show tracebacks.")
@click.version_option(__version__, prog_name="kafka-leader-election")
def command(**options: Any) -> None:
    sys.exit(run(lambda: without_cyclic_gc(_elect, options), options["debug"]))


# Options that take one value, by their Kafka names.
_SINGLE_VALUED = {"bootstrap_server": "bootstrap-server", "zookeeper": "zookeeper", "command_config": "command-config",
                  "admin_config": "admin.config", "election_type": "election-type", "topic": "topic",
                  "partition": "partition", "path_to_json_file": "path-to-json-file"}


def _elect(o: dict[str, Any]) -> int:
    from leader_election_cli.config.settings import load_client_settings
    from leader_election_cli.selection.drop_in import DropInOptions, load_election_file, validate_drop_in

    configure_logging(o["debug"])
    given = {key: o[key] for key in _SINGLE_VALUED}  # each a tuple: click collects repeats, Kafka refuses them
    o.update({key: values[-1] if values else None for key, values in given.items()})
    validated = validate_drop_in(DropInOptions(
        bootstrap_server=o["bootstrap_server"], zookeeper=o["zookeeper"], election_type=o["election_type"],
        topic=o["topic"], partition=o["partition"], all_topic_partitions=bool(o["all_topic_partitions"]),
        path_to_json_file=o["path_to_json_file"], admin_config=o["admin_config"],
        command_config=o["command_config"],
        repeated=frozenset(_SINGLE_VALUED[key] for key, values in given.items() if len(values) > 1)))
    if validated.zookeeper is not None:
        for warning in validated.warnings:  # KIP-183: the deprecation goes to stderr
            click.echo(warning, err=True)
        return _elect_through_zookeeper(o, validated.request().partitions)
    if o["no_wait"]:
        raise InputError("Option --no-wait is only allowed with --zookeeper",
                         hint="Drop --no-wait: through --bootstrap-server the election completes before the answer.")
    output = resolve_output(o["output"], sys.stdout)
    partitions = validated.partitions
    if validated.json_file is not None:
        partitions = load_election_file(validated.json_file)
    for warning in validated.warnings:  # Kafka prints --admin.config's deprecation on stdout, after the file
        click.echo(warning, err=output != "text")
    timeout_ms = int(o["timeout"] * 1000) if o["timeout"] else None
    settings = load_client_settings(validated.config_path, timeout_ms)
    for warning in settings.warnings:
        click.echo(f"Warning: {warning}", err=True)
    if partitions == ():
        return _nothing_to_elect(validated.election_type, output, o["dry_run"])
    try:
        with json_document_on_cluster_failure(output, validated.election_type, partitions, o["dry_run"]):
            report = _send(o, validated.election_type, partitions, settings, output)
    except UnreachableError:
        if output == "text" and not o["dry_run"]:  # Kafka's own stdout line, which scripts grep for
            click.echo(TIMEOUT_LINE)
        raise
    except AuthError as exc:
        if output == "text" and exc.message == NOT_AUTHORIZED_LINE:
            click.echo(NOT_AUTHORIZED_LINE)
        raise
    if output == "text" and report.aborted_exit is ExitCode.UNREACHABLE:
        click.echo(TIMEOUT_LINE)  # an answer was lost: Kafka's line first, then what the cluster shows
    render_report(report, output)
    return int(report.exit_code)


def _nothing_to_elect(election_type: Any, output: str, dry_run: bool) -> int:
    """An empty election file: Kafka prints nothing and exits 0; a table or JSON still says so."""
    from leader_election_cli.model import ElectionReport

    if output != "text":
        render_report(ElectionReport(election_type, [], dry_run=dry_run), output)
    return 0


def _send(o: dict[str, Any], election_type: Any, partitions: Any, settings: Any, output: str) -> Any:
    from leader_election_cli import planning
    from leader_election_cli.cluster.admin import Cluster
    from leader_election_cli.model import ElectionType
    from leader_election_cli.operations import execution
    from leader_election_cli.planning import risk as safety

    with Cluster.connect(o["bootstrap_server"], settings) as cluster:
        if o["dry_run"]:
            before = execution.read_for_prediction(cluster, election_type, cluster.mode())
            predictions = planning.predict(before, election_type, partitions, cluster.mode())
            return execution.dry_run_report(predictions, election_type, all_partitions=partitions is None)
        before = cluster.describe()
        warnings = []
        if election_type is ElectionType.UNCLEAN:  # Kafka never asks; we warn on stderr, as best we can
            try:
                assessed = execution.read_for_prediction(cluster, election_type, cluster.mode())
            except (InputError, UnreachableError, AuthError) as exc:
                warnings = [f"Warning: could not assess the unclean election's data-loss risk: {exc.message}"]
            else:
                predictions = planning.predict(assessed, election_type, partitions, cluster.mode())
                warnings = safety.warning_lines(safety.assess(predictions, assessed.min_isr_unknown), assessed)
            for line in warnings:
                click.echo(line, err=True)
        total = len(before.partitions) if partitions is None else len(partitions)
        with progress_bar(output, total, o["batch_size"]) as advance:
            report = execution.elect(cluster, election_type, partitions, before, batch_size=o["batch_size"],
                                     batch_interval=o["batch_interval"], progress=advance)
        if output == "json":  # stdout is the document: it carries the warnings too
            report.warnings.extend(line.removeprefix("Warning: ") for line in warnings)
        return report


def _elect_through_zookeeper(o: dict[str, Any], partitions: Any) -> int:
    """The deprecated --zookeeper path: write the election znode, then (unless --no-wait) report the outcome."""
    from leader_election_cli.cluster import zookeeper
    from leader_election_cli.model import ElectionType

    if o["dry_run"]:
        raise InputError("Option --dry-run can't be used with --zookeeper",
                         hint="Use --bootstrap-server to plan an election.")
    if o["batch_size"] is not None or o["batch_interval"]:
        option = "--batch-size" if o["batch_size"] is not None else "--batch-interval"
        raise InputError(f"Option {option} can't be used with --zookeeper: ZooKeeper takes one election at a time",
                         hint=f"Drop {option}, or use --bootstrap-server.")
    output = resolve_output(o["output"], sys.stdout)
    if partitions == ():
        return _nothing_to_elect(ElectionType.PREFERRED, output, dry_run=False)
    timeout = o["timeout"] or zookeeper.DEFAULT_TIMEOUT
    if not o["no_wait"]:
        report = zookeeper.elect_preferred(o["zookeeper"], partitions, timeout)
        render_report(report, output)
        return int(report.exit_code)
    if output == "json":
        raise InputError("Option --no-wait has no per-partition results to print as JSON",
                         hint="Drop --no-wait to wait for the controller and get every partition's outcome.")
    started, left_out = zookeeper.start_preferred(o["zookeeper"], partitions, timeout)
    for result in left_out:
        click.echo(f"Warning: {result.tp} left out of the election: {result.error}", err=True)
    for line in zookeeper.no_wait_lines(started) if started else ():
        click.echo(line)
    return 1 if left_out else 0


def main() -> None:
    process_main(command, "kafka-leader-election")

