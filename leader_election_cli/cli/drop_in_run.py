"""The drop-in's run, from its parsed options to its exit code (`cli.drop_in` and `cli.drop_in_command`
both call `run_drop_in`): Kafka's checks (`selection.drop_in`), then the election, through the broker or
the deprecated --zookeeper path, rendered in Kafka's lines, a table or JSON.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from leader_election_cli.cli.common import (
    configure_logging,
    document_on_failure,
    echo,
    hooks,
    run,
    show,
    stopped_election,
)
from leader_election_cli.cli.drop_in_options import OPTIONS
from leader_election_cli.errors import (
    NOT_AUTHORIZED_LINE,
    TIMEOUT_LINE,
    AuthError,
    ExitCode,
    InputError,
    TimedOutError,
)
from leader_election_cli.gc_pause import cyclic_gc_paused
from leader_election_cli.render.modes import KAFKA_LINE_MODES, is_json, resolve


def run_drop_in(options: dict[str, Any]) -> int:
    """Run the drop-in with its parsed options (as click gives them); the exit code."""
    return run(lambda: _elect(options), options["debug"], kafka_lines=True)


# Kafka's options that take one value (click collects each as a tuple), by their Kafka names.
_SINGLE_VALUED = {option.dest: option.name.removeprefix("--") for option in OPTIONS if option.kind == "text"}


@cyclic_gc_paused()
def _elect(o: dict[str, Any]) -> int:
    from leader_election_cli.operations.connection import Connection
    from leader_election_cli.operations.elect import Election, elect

    validated = _validated(o)
    if o["debug"] or validated.zookeeper is not None:  # (kazoo logs with no handler of its own; without
        configure_logging(o["debug"])  # either, nothing loads `logging` but SASL's kafka-python: see log.py)
    output = resolve(o["output"], sys.stdout, KAFKA_LINE_MODES)
    if validated.zookeeper is not None:
        for warning in validated.warnings:  # KIP-183: the deprecation goes to stderr
            echo(warning, err=True)
        return _elect_through_zookeeper(o, validated.request().partitions, output)
    if o["no_wait"]:
        raise InputError("Option --no-wait is only allowed with --zookeeper",
                         hint="Drop --no-wait: through --bootstrap-server the election completes before the answer.")
    partitions = validated.request().partitions
    for warning in validated.warnings:  # Kafka prints --admin.config's deprecation on stdout, after the file
        echo(warning, err=output != "text")
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
        echo(TIMEOUT_LINE)  # an answer was lost: Kafka's line first, then what the cluster shows
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
        repeated={_SINGLE_VALUED[key]: values for key, values in given.items() if len(values) > 1}))


@contextmanager
def _kafka_failure_lines(text: bool, dry_run: bool) -> Iterator[None]:
    """Kafka's own stdout lines before a timeout or a refused election, which scripts grep for (with
    Kafka's text output only)."""
    try:
        yield
    except TimedOutError:
        if text and not dry_run:
            echo(TIMEOUT_LINE)
        raise
    except AuthError as exc:
        if text and exc.message == NOT_AUTHORIZED_LINE:
            echo(NOT_AUTHORIZED_LINE)
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
                                     batch_interval=o["batch_interval"], wait=not o["no_wait"], json=is_json(output))
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
        echo(f"Warning: {result.tp} left out of the election: {result.error}", err=True)
    for line in zookeeper_election.no_wait_lines(started) if started else ():
        echo(line)
    return 1 if left_out else 0
