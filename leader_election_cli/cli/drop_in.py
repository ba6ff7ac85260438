"""`kafka-leader-election`: a drop-in for Kafka's `bin/kafka-leader-election.sh`.

Kafka's flags and rules, checked in Kafka's order with Kafka's messages (see `selection`), plus options
that never change those rules: --output, --timeout, --dry-run, --batch-size, --batch-interval,
--debug. Kafka's tool never asks a question; neither does this one (an unclean election's risk is
printed on stderr instead).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import click

from leader_election_cli import __version__
from leader_election_cli.cli.common import (
    COMMAND_SETTINGS,
    INTERVAL_SECONDS,
    TIMEOUT_SECONDS,
    Command,
    color_option,
    configure_logging,
    document_on_failure,
    hooks,
    process_main,
    run,
    show,
    stopped_election,
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
    TimedOutError,
    exit_code_help,
)
from leader_election_cli.render.modes import KAFKA_LINE_MODES, resolve

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
@click.option("--output", type=click.Choice(KAFKA_LINE_MODES), default="auto", show_default=True,
              help="auto: a table on a terminal, Kafka's own lines when piped; text; table; json.")
@color_option
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
    from leader_election_cli.operations.connection import Connection
    from leader_election_cli.operations.elect import Election, elect
    from leader_election_cli.selection.files import load_election_file

    configure_logging(o["debug"])
    validated = _validated(o)
    output = resolve(o["output"], sys.stdout, KAFKA_LINE_MODES)
    if validated.zookeeper is not None:
        for warning in validated.warnings:  # KIP-183: the deprecation goes to stderr
            click.echo(warning, err=True)
        return _elect_through_zookeeper(o, validated.request().partitions, output)
    if o["no_wait"]:
        raise InputError("Option --no-wait is only allowed with --zookeeper",
                         hint="Drop --no-wait: through --bootstrap-server the election completes before the answer.")
    partitions = load_election_file(validated.json_file) if validated.json_file is not None else validated.partitions
    for warning in validated.warnings:  # Kafka prints --admin.config's deprecation on stdout, after the file
        click.echo(warning, err=output != "text")
    connection = Connection.of(o["bootstrap_server"], validated.config_path, o["timeout"])
    if partitions == ():  # an empty election file: Kafka prints nothing and exits 0; a table or JSON says so
        connection.settings(hooks(output).warn)
        return _nothing_to_elect(validated.election_type, output, o["dry_run"], o["color"])
    election = Election(validated.election_type, partitions=partitions, dry_run=o["dry_run"],
                        batch_size=o["batch_size"], batch_interval=o["batch_interval"])
    with _kafka_failure_lines(output == "text", o["dry_run"]), \
            document_on_failure(output, stopped_election(validated.election_type, partitions, o["dry_run"])):
        report = elect(connection, election, hooks(output))
    if output == "text" and report.aborted_exit is ExitCode.UNREACHABLE:
        click.echo(TIMEOUT_LINE)  # an answer was lost: Kafka's line first, then what the cluster shows
    show(report, output, o["color"])
    return int(report.exit_code)


def _validated(o: dict[str, Any]) -> Any:
    """Kafka's LeaderElectionCommand checks over the flags as given (each a tuple: click collects repeats,
    which Kafka refuses); `o` keeps the last value of each."""
    from leader_election_cli.selection.drop_in import DropInOptions, validate_drop_in

    given = {key: o[key] for key in _SINGLE_VALUED}
    o.update({key: values[-1] if values else None for key, values in given.items()})
    return validate_drop_in(DropInOptions(
        bootstrap_server=o["bootstrap_server"], zookeeper=o["zookeeper"], election_type=o["election_type"],
        topic=o["topic"], partition=o["partition"], all_topic_partitions=bool(o["all_topic_partitions"]),
        path_to_json_file=o["path_to_json_file"], admin_config=o["admin_config"],
        command_config=o["command_config"],
        repeated=frozenset(_SINGLE_VALUED[key] for key, values in given.items() if len(values) > 1)))


@contextmanager
def _kafka_failure_lines(text: bool, dry_run: bool) -> Iterator[None]:
    """Kafka's own stdout lines before a timeout or a refused election, which scripts grep for (with
    Kafka's text output only)."""
    try:
        yield
    except TimedOutError:
        if text and not dry_run:
            click.echo(TIMEOUT_LINE)
        raise
    except AuthError as exc:
        if text and exc.message == NOT_AUTHORIZED_LINE:
            click.echo(NOT_AUTHORIZED_LINE)
        raise


def _nothing_to_elect(election_type: Any, output: str, dry_run: bool, color: bool | None) -> int:
    from leader_election_cli.reports.election import ElectionReport

    if output != "text":
        show(ElectionReport(election_type, [], dry_run=dry_run), output, color)
    return 0


def _elect_through_zookeeper(o: dict[str, Any], partitions: Any, output: str) -> int:
    """The deprecated --zookeeper path: write the election znode, then (unless --no-wait) report the outcome."""
    from leader_election_cli.model import ElectionType
    from leader_election_cli.operations import zookeeper_election

    zookeeper_election.check_options(dry_run=o["dry_run"], batch_size=o["batch_size"],
                                     batch_interval=o["batch_interval"], wait=not o["no_wait"], json=output == "json")
    if partitions == ():
        return _nothing_to_elect(ElectionType.PREFERRED, output, False, o["color"])
    timeout = o["timeout"] or zookeeper_election.DEFAULT_TIMEOUT
    if not o["no_wait"]:  # a stop before the znode is written still gets a document with --output json
        with document_on_failure(output, stopped_election(ElectionType.PREFERRED, partitions, dry_run=False)):
            report = zookeeper_election.elect_preferred(o["zookeeper"], partitions, timeout)
        show(report, output, o["color"])
        return int(report.exit_code)
    started, left_out = zookeeper_election.start_preferred(o["zookeeper"], partitions, timeout)
    for result in left_out:
        click.echo(f"Warning: {result.tp} left out of the election: {result.error}", err=True)
    for line in zookeeper_election.no_wait_lines(started) if started else ():
        click.echo(line)
    return 1 if left_out else 0


def main() -> None:
    process_main(command, "kafka-leader-election")

