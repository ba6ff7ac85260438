"""The drop-in's options, defined once: the click command (`cli.drop_in_command`) is built from this table,
and `quick_parse` reads the plain command lines that need no click.

Both read the words through `kafka_words` first, which reads them as Kafka's parser (jopt-simple
5.0.4, without abbreviations) does: its messages for an unknown option or a missing value, and its
forms: `-name` for `--name`, a value taken from the next word whatever it is (`--topic --partition`:
the topic is "--partition"), Kafka's flags ignoring `=value`, and the words that are no option's value
(and all after `--`) ignored.

`quick_parse` is a shortcut, never a second set of rules: it answers only for a command line whose
words are the table's text options and flags (`--flag value`, `--flag=value`, `--flag`), and returns
None for anything else (help, version, completion, a number or a choice to check, an unknown word),
which click then parses. For every command line it answers, its options equal click's (a property test
checks this).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from leader_election_cli.errors import InputError
from leader_election_cli.render.modes import KAFKA_LINE_MODES

PROG_NAME = "kafka-leader-election"
# click's completion switch for this program: `_KAFKA_LEADER_ELECTION_COMPLETE=bash_complete ...`
COMPLETE_VAR = "_" + PROG_NAME.replace("-", "_").upper() + "_COMPLETE"


class Option(NamedTuple):
    """One drop-in option. `kind`: "text" (a string, may be given more than once: Kafka's own checks
    refuse repeats), "flag", "choice" (one of `choices`), "color" (--color/--no-color), or "number"
    (seconds or a count, converted and checked by click)."""

    name: str
    dest: str
    kind: str
    help: str
    metavar: str | None = None
    default: Any = None
    choices: tuple[str, ...] = ()


OPTIONS: tuple[Option, ...] = (
    Option("--bootstrap-server", "bootstrap_server", "text", metavar="HOST:PORT",
           help="A host name and port for the broker to connect to, in the form host:port. Multiple "
                "comma-separated URLs can be given. REQUIRED."),
    Option("--zookeeper", "zookeeper", "text", metavar="HOST:PORT[/CHROOT]",
           help="DEPRECATED (KIP-183), use --bootstrap-server. The ZooKeeper connect string of a ZooKeeper-mode "
                "cluster, host:port[,host:port...][/chroot]: a preferred election through the "
                "/admin/preferred_replica_election znode, then the outcome of every partition."),
    Option("--no-wait", "no_wait", "flag", default=False,
           help="With --zookeeper: only start the election and return, as the old tool did."),
    Option("--command-config", "command_config", "text", metavar="FILE",
           help="Properties file with configs for the admin client (security, timeouts, client.id)."),
    Option("--admin.config", "admin_config", "text", metavar="FILE",
           help="DEPRECATED: use --command-config. Admin client config properties file (the only name "
                "Kafka's tool has up to 4.1; 4.2 deprecates it, and this tool prints 4.2's notice)."),
    Option("--election-type", "election_type", "text", metavar="preferred|unclean",
           help='Type of election to attempt: "preferred" or "unclean". REQUIRED.'),
    Option("--topic", "topic", "text", metavar="TOPIC",
           help="Name of topic for which to perform an election. REQUIRED if --partition is given. Not allowed "
                "with --path-to-json-file or --all-topic-partitions."),
    Option("--partition", "partition", "text", metavar="ID",
           help="Partition id for which to perform an election. REQUIRED if --topic is given."),
    Option("--all-topic-partitions", "all_topic_partitions", "flag",
           help="Perform election on all of the eligible topic partitions based on the type of election (see "
                "--election-type). Not allowed with --topic or --path-to-json-file."),
    Option("--path-to-json-file", "path_to_json_file", "text", metavar="FILE",
           help='JSON file listing the partitions: {"partitions": [{"topic": "foo", "partition": 1}]}. Not '
                'allowed with --all-topic-partitions or --topic.'),
    Option("--output", "output", "choice", default="auto", choices=KAFKA_LINE_MODES,
           help="auto: a table on a terminal, Kafka's own lines when piped; text; table; json."),
    Option("--color", "color", "color",
           help="Colour the table, or not (default: on a terminal, unless NO_COLOR is set or TERM=dumb)."),
    Option("--timeout", "timeout", "number", metavar="SECONDS",
           help="Time limit for connecting and for each request batch (default: default.api.timeout.ms, "
                "30 s); with --zookeeper, for the whole election."),
    Option("--batch-size", "batch_size", "number", metavar="N",
           help="Send at most N partitions per request, never more than 5,000 (default: one request, as Kafka "
                "does, up to 5,000 partitions; requests of 5,000 above that)."),
    Option("--batch-interval", "batch_interval", "number", default=0.0, metavar="SECONDS",
           help="Pause between batches."),
    Option("--dry-run", "dry_run", "flag", default=False,
           help="Predict each partition's outcome from one metadata read; send nothing."),
    Option("--debug", "debug", "flag", default=False, help="Log the protocol exchange and show tracebacks."),
)


def defaults() -> dict[str, Any]:
    """The options click gives the command when no option is given."""
    return {option.dest: () if option.kind == "text" else option.default for option in OPTIONS}


def quick_parse(argv: Sequence[str], environ: Mapping[str, str]) -> dict[str, Any] | None:
    """The options click would give the command for `argv`, or None when click must parse it."""
    if not argv or COMPLETE_VAR in environ:
        return None
    try:
        argv = kafka_words(argv)
    except InputError:  # click's command says it, as it reads the words the same way
        return None
    by_name = {option.name: option for option in OPTIONS if option.kind != "number"}
    by_name.update({"--no-color": by_name["--color"]})
    values = defaults()
    for word in argv:  # (every value as `--name=value` now)
        name, equals, value = word.partition("=")
        option = by_name.get(name)
        if option is None or (equals and option.kind in ("flag", "color")):
            return None
        if option.kind == "flag":
            values[option.dest] = True
        elif option.kind == "color":
            values[option.dest] = name == "--color"
        elif option.kind == "text":
            values[option.dest] += (value,)
        elif value in option.choices:
            values[option.dest] = value
        else:
            return None
    return values


# Kafka's own flags: jopt-simple ignores a value given to them with `=` (ours refuse one, through click).
_KAFKA_FLAGS = ("--all-topic-partitions", "--help", "--version")


def kafka_words(argv: Sequence[str]) -> list[str]:
    """`argv` as Kafka's parser reads it, for `quick_parse` and click: every option as `--name` or
    `--name=value`, the words Kafka ignores left out; an `InputError` with Kafka's message (jopt-simple's
    UnrecognizedOptionException, OptionMissingRequiredArgumentException) for the first bad word."""
    takes_value = {option.name: option.kind not in ("flag", "color") for option in OPTIONS}
    takes_value.update({"--no-color": False, "--help": False, "--version": False})
    words: list[str] = []
    rest = iter(argv)
    for word in rest:
        if word == "--":  # jopt-simple: the rest are not options, and Kafka's tool never reads those
            break
        if word == "-h":  # click's short help, kept (Kafka's parser says "h is not a recognized option")
            words.append(word)
            continue
        if not word.startswith("-") or word == "-":
            continue  # a non-option argument: Kafka's tool ignores it
        name, equals, value = word.partition("=")
        name = "--" + name.lstrip("-") if not name.startswith("--") else name  # `-topic`: a long option
        if name not in takes_value:
            raise InputError(f"{_unknown(word)} is not a recognized option", hint=_suggestion(name))
        if not takes_value[name]:
            words.append(name if name in _KAFKA_FLAGS or not equals else word)
            continue
        if not equals:  # jopt-simple takes the next word as the value, whatever it is
            value = next(rest, None)
            if value is None:
                raise InputError(f"Option {name[2:]} requires an argument", hint=f"Give {name} a value.")
        words.append(f"{name}={value}")
    return words


def _unknown(word: str) -> str:
    """The name jopt-simple reports: a long option's without dashes or value; else the first letter of a
    short-option cluster."""
    if word.startswith("--"):
        return word[2:].partition("=")[0]
    return word[1]


def _suggestion(name: str) -> str:
    import difflib

    known = [option.name for option in OPTIONS] + ["--help", "--version"]
    close = difflib.get_close_matches(name, known, n=1) or [k for k in known if k.startswith(name) and name != "--"]
    return f"Did you mean {close[0]}? (options are never abbreviated)" if close else \
        "See kafka-leader-election --help for the options."
