"""`kafka-leaders elect` and `kafka-leaders plan`: choose partitions precisely, predict, elect in batches.

`plan` takes every flag `elect` takes and sends nothing: it is `elect --dry-run`. The selection flags
are checked before connecting; names are then resolved against one metadata read (`resolve`), and an
unknown topic or partition is an error before anything is sent.
"""

from __future__ import annotations

import gc
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import click

from leader_election_cli.cli.common import (
    INTERVAL_SECONDS,
    OUTPUT_CHOICES,
    Command,
    bootstrap_servers,
    configure_logging,
    connection_options,
    resolve_output,
    run,
    verbatim,
)
from leader_election_cli.completion import complete_topics
from leader_election_cli.errors import EXIT_CODE_HELP, InputError
from leader_election_cli.model import ClusterState, ControllerMode, ElectionReport, ElectionType, TopicPartition
from leader_election_cli.selection import load_election_file, parse_partition_specs, shown, topic_problem

DEFAULT_BATCH_SIZE = 1000
_LISTED = 10  # names listed in an error message; the rest are counted

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


# -- selection ---------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Selection:
    """The selection flags, checked without the cluster."""

    topics: tuple[str, ...] = ()
    topic_regex: re.Pattern[str] | None = None
    exclude_regex: re.Pattern[str] | None = None
    partitions: tuple[TopicPartition, ...] = ()  # --partition and the election file, in order
    all_partitions: bool = False
    include_internal: bool = False
    file: str | None = None


def parse_selection(topics: tuple[str, ...] = (), topic_regex: str | None = None,
                    exclude_topic_regex: str | None = None, partitions: tuple[str, ...] = (),
                    path_to_json_file: str | None = None, all_topic_partitions: bool = False,
                    include_internal: bool = False) -> Selection:
    """Check the selection flags (names, patterns, specs, the file) before anything is sent."""
    sources = bool(topics) or topic_regex is not None or bool(partitions) or path_to_json_file is not None
    if not sources and not all_topic_partitions:
        raise InputError("No partitions selected: give --topic, --topic-regex, --partition, --path-to-json-file "
                         "or --all-topic-partitions", hint="For example --topic orders, or -p orders:0,1.")
    if sources and all_topic_partitions:
        raise InputError("Option --all-topic-partitions can't be used with --topic, --topic-regex, --partition "
                         "or --path-to-json-file", hint="It already takes every topic; narrow it with "
                                                        "--exclude-topic-regex, or drop it.")
    for topic in topics:
        problem = topic_problem(topic)
        if problem:
            raise InputError(f"Invalid --topic '{shown(topic)}': {problem}",
                             hint="Topic names use only ASCII letters, digits, '.', '_' and '-'.")
    explicit = parse_partition_specs(partitions)
    if path_to_json_file is not None:
        explicit = tuple(dict.fromkeys(explicit + load_election_file(path_to_json_file)))
    return Selection(tuple(dict.fromkeys(topics)), _pattern("--topic-regex", topic_regex),
                     _pattern("--exclude-topic-regex", exclude_topic_regex), explicit, all_topic_partitions,
                     include_internal, path_to_json_file)


def _pattern(option: str, text: str | None) -> re.Pattern[str] | None:
    if text is None:
        return None
    try:
        return re.compile(text)
    except re.error as exc:
        raise InputError(f"Invalid {option} '{shown(text)}': {exc}",
                         hint="Use a Python regular expression matching whole topic names, "
                              "e.g. 'orders\\..*'.") from None


def is_internal(topic: str, state: ClusterState) -> bool:
    """Kafka's internal topics (as Metadata says), and by convention any name starting with "__"."""
    return topic in state.internal_topics or topic.startswith("__")


def resolve(selection: Selection, state: ClusterState) -> list[TopicPartition]:
    """The selected partitions of `state`, sorted; unknown names and an empty result are errors."""
    s = selection
    sizes = Counter(tp.topic for tp in state.partitions)
    named = dict.fromkeys([*s.topics, *(tp.topic for tp in s.partitions)])
    _check_known(named, s.partitions, state, sizes)
    internal = [t for t in named if is_internal(t, state)]
    if internal and not s.include_internal:
        raise InputError(f"Topic(s) {_listed(internal)} are internal: add --include-internal to elect their leaders",
                         hint="Internal topics are Kafka's own (consumer offsets, transactions).")
    pattern = s.topic_regex
    matched = [t for t in sizes if s.all_partitions or (pattern is not None and pattern.fullmatch(t))]
    topics = set(s.topics).union(t for t in matched if s.include_internal or not is_internal(t, state))
    explicit = set(s.partitions)
    chosen = [tp for tp in state.partitions if tp.topic in topics or tp in explicit]
    selected_any, exclude = bool(chosen), s.exclude_regex
    if exclude is not None:
        kept = {t for t in sizes if not exclude.fullmatch(t)}
        chosen = [tp for tp in chosen if tp.topic in kept]
    if not chosen:
        if selected_any and exclude is not None:
            why = f"--exclude-topic-regex '{shown(exclude.pattern)}' leaves every selected topic out"
        elif matched:
            why = "only internal topics match (add --include-internal)"
        elif pattern is not None:
            why = f"--topic-regex '{shown(pattern.pattern)}' matches no topic"
        else:
            why = "the cluster has no topics" if s.all_partitions else \
                f"the election file {shown(s.file or '')} lists no partitions"
        raise InputError(f"The selection matches no partition: {why}",
                         hint="Check the names and patterns against the cluster's topics (kafka-topics --list).")
    return sorted(chosen)


def _check_known(named: dict[str, None], partitions: tuple[TopicPartition, ...], state: ClusterState,
                 sizes: Counter[str]) -> None:
    unknown = [t for t in named if t not in sizes]
    if unknown:
        raise InputError(f"Unknown topic(s): {_listed(unknown)}: nothing was sent",
                         hint="Check the names given to --topic, --partition and --path-to-json-file.")
    missing = [tp for tp in partitions if tp not in state.partitions]
    if missing:
        counts = ", ".join(f"{t} has {sizes[t]}" for t in dict.fromkeys(tp.topic for tp in missing[:_LISTED]))
        raise InputError(f"Unknown partition(s): {_listed([str(tp) for tp in missing])} ({counts}): nothing was sent",
                         hint="Partitions are numbered from 0.")


def _listed(names: list[str]) -> str:
    more = len(names) - _LISTED
    return ", ".join(shown(n) for n in names[:_LISTED]) + (f" ... ({more} more)" if more > 0 else "")


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

_SETTINGS = {"help_option_names": ["-h", "--help"], "max_content_width": 100}


def _with_options(command: Callable[..., None]) -> Callable[..., None]:
    """The connection options every toolkit command takes, then the election's own."""
    for option in reversed(_OPTIONS):
        command = option(command)
    return connection_options(command)


@click.command(cls=Command, epilog=verbatim(SELECTION_NOTES, EXAMPLES, EXIT_CODE_HELP), context_settings=_SETTINGS)
@_with_options
def elect(**options: Any) -> None:
    """Elect partition leaders: choose partitions precisely, in batches, with unclean-election safety.

    Before an unclean election that would elect a replica outside the ISR it lists those partitions
    and asks; without a terminal it refuses (exit 5) unless --yes is given. Each batch gets the whole
    --timeout; Ctrl-C stops after the batch in flight and reports every partition (exit 130).
    """
    sys.exit(run(lambda: _without_cyclic_gc(_run, options, dry_run=options["dry_run"]), options["debug"]))


@click.command(cls=Command, epilog=verbatim(SELECTION_NOTES, PLAN_EXAMPLES, EXIT_CODE_HELP),
               context_settings=_SETTINGS)
@_with_options
def plan(**options: Any) -> None:
    """Predict an election without sending it: the leader or error each partition would get.

    Takes every flag of `elect`. Unclean plans flag partitions that would elect outside the ISR (data
    loss possible) or end up below min.insync.replicas.
    """
    sys.exit(run(lambda: _without_cyclic_gc(_run, options, dry_run=True), options["debug"]))


def _without_cyclic_gc(body: Callable[..., int], *args: Any, **kwargs: Any) -> int:
    """Run `body` with the cyclic garbage collector paused.

    A large election makes hundreds of thousands of acyclic objects (partition states, predictions,
    results) that reference counting frees; the collector would only walk them again and again (a
    quarter of the run's CPU time at 100,000 partitions).
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        return body(*args, **kwargs)
    finally:
        if was_enabled:
            gc.enable()


def _interactive() -> bool:
    """A person can answer: stdin is a terminal."""
    return sys.stdin.isatty()


def _run(o: dict[str, Any], dry_run: bool) -> int:
    from leader_election_cli import execution, planning, safety
    from leader_election_cli.cluster import Cluster
    from leader_election_cli.config import load_client_settings

    configure_logging(o["debug"])
    election_type = ElectionType[o["election_type"].upper()]
    selection = parse_selection(o["topics"], o["topic_regex"], o["exclude_topic_regex"], o["partitions"],
                                o["path_to_json_file"], o["all_topic_partitions"], o["include_internal"])
    settings = load_client_settings(o["command_config"], int(o["timeout"] * 1000) if o["timeout"] else None)
    for warning in settings.warnings:
        click.echo(f"Warning: {warning}", err=True)
    output = resolve_output(o["output"], sys.stdout)
    predicting = dry_run or election_type is ElectionType.UNCLEAN
    with Cluster.connect(bootstrap_servers(o), settings) as cluster:
        mode = ControllerMode(o["controller_mode"]) if o["controller_mode"] else cluster.mode()
        state = execution.read_for_prediction(cluster, election_type, mode) if predicting else cluster.describe()
        selected = resolve(selection, state)
        if predicting:
            predictions = planning.predict(state, election_type, selected, mode)
            risk = safety.assess(predictions)
            for line in safety.warning_lines(risk, state):
                click.echo(line, err=True)
            if dry_run:
                report = execution.dry_run_report(predictions, election_type)
            else:
                safety.require_confirmation(risk, yes=o["yes"], interactive=_interactive(),
                                            confirm=lambda question: click.confirm(question, err=True))
        if not dry_run:
            already = execution.led_by_preferred(state, selected) if election_type is ElectionType.PREFERRED else []
            if already and output != "json":
                click.echo(f"{len(already)} partition(s) already led by their preferred replica: "
                           "left out of the request.", err=True)
            with _progress(output, len(selected) - len(already), o["batch_size"]) as advance:
                report = execution.elect(cluster, election_type, selected, state, batch_size=o["batch_size"],
                                         batch_interval=o["batch_interval"], progress=advance,
                                         already_elected=already)
    _render(report, output)
    return int(report.exit_code)


@contextmanager
def _progress(output: str, total: int, batch_size: int) -> Iterator[Callable[[int], None] | None]:
    """A rich progress bar on a terminal when several batches go out; never with --output json."""
    if output == "json" or total <= batch_size or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import Progress

    with Progress(console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("Electing leaders", total=total)
        yield lambda n: bar.advance(task, n)


def _render(report: ElectionReport, output: str) -> None:
    from leader_election_cli import render

    if output == "json":
        render.render_json(report, sys.stdout)
    elif output == "table":
        render.render_table(report, sys.stdout, sys.stderr)
    else:
        render.render_text(report, sys.stdout, sys.stderr)
