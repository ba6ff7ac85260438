"""The drop-in's flags, validated as Kafka's `LeaderElectionCommand` does: Kafka's checks in Kafka's
order with Kafka's messages (tools/.../LeaderElectionCommand.java). Pure input handling, no cluster
access; every failure is an `InputError`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import NamedTuple

from leader_election_cli.errors import InputError, shown
from leader_election_cli.model import ElectionType, TopicPartition
from leader_election_cli.selection.names import MAX_PARTITION, topic_problem


class ElectionRequest(NamedTuple):
    """What to elect: `partitions` None means every partition (Kafka sends a null list)."""

    election_type: ElectionType
    partitions: tuple[TopicPartition, ...] | None


class DropInOptions(NamedTuple):
    """The drop-in's raw flag values, as given (None when a flag is absent)."""

    bootstrap_server: str | None = None
    zookeeper: str | None = None
    election_type: str | None = None
    topic: str | None = None
    partition: str | None = None
    all_topic_partitions: bool = False
    path_to_json_file: str | None = None
    admin_config: str | None = None
    command_config: str | None = None
    repeated: Mapping[str, tuple[str, ...]] = {}  # options given more than once (Kafka's names): every value


class ValidatedDropIn(NamedTuple):
    """Flags that passed Kafka's checks.

    The partitions come from exactly one place: `json_file` when set (load it with `request()` or
    `load_election_file`), else `partitions`: the --topic/--partition pair, or None for all partitions.
    `warnings` are Kafka's deprecation lines, to be printed as they are.
    """

    election_type: ElectionType
    partitions: tuple[TopicPartition, ...] | None
    json_file: str | None
    config_path: str | None
    bootstrap_server: str | None
    zookeeper: str | None
    warnings: tuple[str, ...] = ()

    def request(self) -> ElectionRequest:
        if self.json_file is not None:
            from leader_election_cli.selection.files import load_election_file  # json: only for a file

            return ElectionRequest(self.election_type, load_election_file(self.json_file))
        return ElectionRequest(self.election_type, self.partitions)


ADMIN_CONFIG_DEPRECATED = ("Option --admin.config has been deprecated and will be removed in a future version. "
                           "Use --command-config instead.")
ZOOKEEPER_DEPRECATED = ("Warning: --zookeeper is deprecated and will be removed in a future version of Kafka.",
                        "Use --bootstrap-server instead to specify a broker to connect to.")


def validate_drop_in(options: DropInOptions) -> ValidatedDropIn:
    """Kafka's checks in Kafka's order (validate(), then the lazy argument conversions), then ours."""
    o = options
    missing = [name for name, absent in (("bootstrap-server", o.bootstrap_server is None and o.zookeeper is None),
                                         ("election-type", o.election_type is None)) if absent]
    if missing:
        raise InputError("Missing required option(s): " + ", ".join(missing),
                         hint="Give " + " and ".join(_MISSING_HINTS[name] for name in missing) + ".")
    if o.bootstrap_server is not None and o.zookeeper is not None:  # the old preferred-replica tool's rule
        raise InputError("Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided",
                         hint="Drop --zookeeper: it is deprecated (KIP-183) and --bootstrap-server does the same.")
    if o.admin_config is not None and o.command_config is not None:
        raise InputError('Option "[admin.config]" can\'t be used with option "[command-config]"',
                         hint="Give the file once, with --command-config (--admin.config is deprecated).")
    config_option = "command-config" if o.command_config is not None else "admin.config"
    config_path = o.command_config if o.command_config is not None else o.admin_config
    if o.zookeeper is not None and config_path is not None:
        raise InputError(f'Option "[zookeeper]" can\'t be used with option "[{config_option}]"',
                         hint="The config file configures the admin client; use --bootstrap-server with it.")
    sources = (o.topic is not None, o.all_topic_partitions, o.path_to_json_file is not None)
    if sum(sources) != 1:
        raise InputError("One and only one of the following options is required: "
                         "topic, all-topic-partitions, path-to-json-file",
                         hint="Use --topic with --partition, --all-topic-partitions, or --path-to-json-file.")
    if o.topic is not None and o.partition is None:
        raise InputError("Missing required option(s): partition",
                         hint="Add --partition ID: --topic selects one partition of a topic.")
    if o.topic is None and o.partition is not None:
        raise InputError("Option partition is only allowed if topic is used",
                         hint="Add --topic NAME, or drop --partition.")
    for text in o.repeated.get("election-type", ()):  # joptsimple's valueOf converts every value first
        _parse_election_type(text)
    election_type = _parse_election_type(o.election_type)
    _refuse_repeated(o.repeated, ("election-type", "path-to-json-file", "topic"))
    if o.zookeeper is not None and election_type is ElectionType.UNCLEAN:
        raise InputError("Unclean elections cannot be made through ZooKeeper: only preferred ones can",
                         hint="Use --bootstrap-server for an unclean election.")
    partitions = None
    if o.topic is not None:
        for text in o.repeated.get("partition", ()):
            _parse_partition(text)
        partitions = (TopicPartition(o.topic, _parse_partition(o.partition)),)  # sent as given, as Kafka
        _refuse_repeated(o.repeated, ("partition",))  # does: a name or id no topic has gets the controller's
        problem = topic_problem(o.topic) if o.zookeeper is not None else None
        if problem:  # (the ZooKeeper path is ours, not Kafka 4's: there a name becomes a znode's path)
            raise InputError(problem, hint="Topic names use only ASCII letters, digits, '.', '_' and '-'.")
    _refuse_repeated(o.repeated, ("admin.config", "command-config", "bootstrap-server", "zookeeper"))
    warnings = ((ADMIN_CONFIG_DEPRECATED,) if o.admin_config is not None else ()) + \
        (ZOOKEEPER_DEPRECATED if o.zookeeper is not None else ())
    return ValidatedDropIn(election_type=election_type, partitions=partitions, json_file=o.path_to_json_file,
                           config_path=config_path, bootstrap_server=o.bootstrap_server, zookeeper=o.zookeeper,
                           warnings=warnings)


_MISSING_HINTS = {"bootstrap-server": "--bootstrap-server HOST:PORT",
                  "election-type": "--election-type preferred|unclean"}


def _refuse_repeated(repeated: frozenset[str], names: Sequence[str]) -> None:
    """joptsimple's valueOf on an option given twice (Kafka reads the options in `names`' order)."""
    for name in names:
        if name in repeated:
            raise InputError(f"Found multiple arguments for option {name}, but you asked for only one",
                             hint=f"Give --{name} once.")


def _parse_election_type(text: str | None) -> ElectionType:
    """joptsimple's EnumConverter: the constant's name in any case (Java's equalsIgnoreCase)."""
    if text is not None and text.isascii() and text.upper() in ElectionType.__members__:
        return ElectionType[text.upper()]
    raise InputError(f"Cannot parse argument '{shown(text or '')}' of option election-type",
                     hint="Use --election-type preferred or --election-type unclean.")


def _parse_partition(text: str | None) -> int:
    """Java's Integer.valueOf: an optional sign and decimal digits (any script's in the BMP, as
    Character.digit on Java's UTF-16 chars), a Java int. A negative one is Kafka's to send (the controller
    answers UNKNOWN_TOPIC_OR_PARTITION)."""
    if text is not None and re.fullmatch(r"[+-]?\d{1,10}", text) and max(map(ord, text)) < 0x10000 \
            and -MAX_PARTITION - 1 <= int(text) <= MAX_PARTITION:
        return int(text)
    raise InputError(f"Cannot parse argument '{shown(text or '')}' of option partition",
                     hint=f"--partition takes a partition id from 0 to {MAX_PARTITION}.")


# -- the JSON election file ---------------------------------------------------------------------------
