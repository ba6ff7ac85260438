"""Which partitions to elect: the drop-in's flags and Kafka's JSON election file, validated.

Pure input handling, no cluster access. `validate_drop_in` applies Kafka's checks in Kafka's order with
Kafka's messages (tools/.../LeaderElectionCommand.java); `load_election_file` reads
`{"partitions": [{"topic": "foo", "partition": 1}, ...]}` against the shipped JSON schema and says
exactly where a file is wrong. Every failure is an `InputError`.
"""

from __future__ import annotations

import functools
import gc
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import islice
from typing import Any

from leader_election_cli.errors import InputError, shown
from leader_election_cli.model import ElectionType, TopicPartition

MAX_PARTITION = 2**31 - 1  # partition ids are non-negative Java ints
MAX_TOPIC_LENGTH = 249  # org.apache.kafka.common.internals.Topic.MAX_NAME_LENGTH
MAX_ELECTION_FILE_BYTES = 256 * 2**20  # about five million entries; a bigger file is a mistake
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")
_FILE_FORMAT_HINT = 'The file must look like {"partitions": [{"topic": "foo", "partition": 1}]}.'


# -- shared rules -------------------------------------------------------------------------------------

def topic_problem(name: str) -> str | None:
    """Kafka's InvalidTopicException message for an illegal topic name, or None when it is legal."""
    if name == "":
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name.encode("utf-16-le", "surrogatepass")) // 2 > MAX_TOPIC_LENGTH:  # Java counts UTF-16 units
        reason = f"the length of '{shown(name)}' is longer than the max allowed length {MAX_TOPIC_LENGTH}"
    elif not _LEGAL_TOPIC.fullmatch(name):
        reason = f"'{shown(name)}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return None
    return f"Topic name is invalid: {reason}"


def parse_partition_spec(spec: str) -> tuple[TopicPartition, ...]:
    """`T:P` or `T:P1,P2,...` (split on the last colon) as partitions, in order, without repeats."""
    topic, colon, numbers = spec.rpartition(":")
    if not colon or not numbers:
        raise InputError(f"Invalid partition spec '{shown(spec)}': expected TOPIC:PARTITION or TOPIC:P1,P2,...",
                         hint="For example orders:0 or orders:0,1,2.")
    problem = topic_problem(topic)
    if problem:
        raise InputError(f"Invalid partition spec '{shown(spec)}': {problem}",
                         hint="Topic names use only ASCII letters, digits, '.', '_' and '-'.")
    ids = numbers.split(",")
    for text in ids:
        if not re.fullmatch(r"[0-9]{1,10}", text) or int(text) > MAX_PARTITION:
            raise InputError(f"Invalid partition spec '{shown(spec)}': '{shown(text)}' is not a partition id",
                             hint=f"Partition ids are whole numbers from 0 to {MAX_PARTITION}.")
    return tuple(dict.fromkeys(TopicPartition(topic, int(text)) for text in ids))


def parse_partition_specs(specs: Iterable[str]) -> tuple[TopicPartition, ...]:
    """Several specs as one ordered selection; a partition named twice is kept once."""
    return tuple(dict.fromkeys(tp for spec in specs for tp in parse_partition_spec(spec)))


# -- the drop-in's flags ------------------------------------------------------------------------------

@dataclass(frozen=True)
class ElectionRequest:
    """What to elect: `partitions` None means every partition (Kafka sends a null list)."""

    election_type: ElectionType
    partitions: tuple[TopicPartition, ...] | None


@dataclass(frozen=True)
class DropInOptions:
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
    repeated: frozenset[str] = frozenset()  # options given more than once (Kafka's names), the last value above


@dataclass(frozen=True)
class ValidatedDropIn:
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
    election_type = _parse_election_type(o.election_type)
    _refuse_repeated(o.repeated, ("election-type", "path-to-json-file", "topic"))
    if o.zookeeper is not None and election_type is ElectionType.UNCLEAN:
        raise InputError("Unclean elections cannot be made through ZooKeeper: only preferred ones can",
                         hint="Use --bootstrap-server for an unclean election.")
    partitions = None
    if o.topic is not None:
        partitions = (TopicPartition(o.topic, _parse_partition(o.partition)),)
        _refuse_repeated(o.repeated, ("partition",))
        problem = topic_problem(o.topic)
        if problem:
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
    """Java's Integer.valueOf (optional sign, decimal digits), limited to non-negative ids."""
    if text is not None and re.fullmatch(r"[+-]?\d{1,10}", text):
        value = int(text)
        if 0 <= value <= MAX_PARTITION:
            return value
        if -MAX_PARTITION - 1 <= value < 0:  # Kafka would send it and get UNKNOWN_TOPIC_OR_PARTITION
            raise InputError(f"Invalid partition {value} of option partition: partition ids start at 0",
                             hint=f"--partition takes a partition id from 0 to {MAX_PARTITION}.")
    raise InputError(f"Cannot parse argument '{shown(text or '')}' of option partition",
                     hint=f"--partition takes a partition id from 0 to {MAX_PARTITION}.")


# -- the JSON election file ---------------------------------------------------------------------------

def load_election_file(path: str) -> tuple[TopicPartition, ...]:
    """The partitions of a Kafka election file, in file order; an empty list is valid (nothing to do)."""
    with _gc_paused():
        document = _parse(path, _read(path))
        _check_document(path, document)
        partitions = _entries(path, document["partitions"])
        _check_duplicates(path, partitions)
        return partitions


@contextmanager
def _gc_paused() -> Iterator[None]:
    """A big file makes millions of acyclic objects: the cyclic collector would only slow the load down."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _read(path: str) -> bytes:
    try:
        with open(path, "rb") as file:
            data = file.read(MAX_ELECTION_FILE_BYTES + 1)
    except OSError as exc:
        raise InputError(f"Unable to read file {shown(str(path))}: {exc.strerror or type(exc).__name__}",
                         hint="Check the --path-to-json-file path.") from None
    except ValueError as exc:  # e.g. a NUL character in the path
        raise InputError(f"Unable to read file {shown(str(path))}: {exc}",
                         hint="Check the --path-to-json-file path.") from None
    if len(data) > MAX_ELECTION_FILE_BYTES:
        raise InputError(f"Unable to read file {shown(path)}: larger than {MAX_ELECTION_FILE_BYTES // 2**20} MiB",
                         hint="Split the partitions over several files and run once per file.")
    return data


class _NonStandardConstant(ValueError):
    """NaN or Infinity: Python's json accepts them, JSON (and Kafka's Jackson) does not."""


def _reject_constant(name: str) -> Any:
    raise _NonStandardConstant(name)


def _parse(path: str, data: bytes) -> Any:
    where = shown(path)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(data, exc.start, b"\n")
        raise InputError(f"Replica election data in {where} is not UTF-8 text: byte 0x{data[exc.start]:02x} "
                         f"at line {line}, column {column}", hint="Save the file as UTF-8 JSON.") from None
    text = text.removeprefix("\ufeff")
    if not text.strip(" \t\r\n"):
        raise InputError(f"Replica election data is empty: {where} holds no JSON document", hint=_FILE_FORMAT_HINT)
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"Replica election data in {where} is not valid JSON: {exc.msg.removesuffix(' at')} "
                         f"at line {exc.lineno}, column {exc.colno}", hint=_FILE_FORMAT_HINT) from None
    except _NonStandardConstant as exc:
        line, column = _position(text, _constant_offset(text), "\n")
        raise InputError(f"Replica election data in {where} is not valid JSON: {exc} is not a JSON value "
                         f"at line {line}, column {column}", hint=_FILE_FORMAT_HINT) from None
    except RecursionError:
        raise InputError(f"Replica election data in {where} is nested too deeply to read",
                         hint=_FILE_FORMAT_HINT) from None
    except ValueError:  # an integer literal longer than Python's 4300-digit conversion limit
        raise InputError(f"Replica election data in {where} holds a number too long to read",
                         hint=_FILE_FORMAT_HINT) from None


def _position(text: Any, offset: int, newline: Any) -> tuple[int, int]:
    """1-based line and column of an offset (bytes or characters)."""
    return text.count(newline, 0, offset) + 1, offset - text.rfind(newline, 0, offset)


def _constant_offset(text: str) -> int:
    """Where the first NaN/Infinity outside a string is, in a text that parsed up to it."""
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|(NaN|-?Infinity)', text, re.S):
        if match.group(1):
            return match.start(1)
    return 0


@functools.cache
def _validator() -> Any:
    """The shipped schema's Draft 2020-12 validator, with a strict integer type (1.0 and true are not ids)."""
    from importlib.resources import files

    import jsonschema

    schema = json.loads(files("leader_election_cli").joinpath("schemas/election-file.schema.json").read_text("utf-8"))
    strict = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer",
                                                                     lambda _checker, value: type(value) is int)
    return jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=strict)(schema)


def _hollow(value: Any) -> Any:
    """A small value of the same JSON type: the schema's shape checks give the same answer, cheaply."""
    if isinstance(value, str):
        return value[:100]
    return type(value)() if isinstance(value, (list, dict)) else value


def _check_document(path: str, document: Any) -> None:
    """The document's shape (entries are checked one by one in `_entries`)."""
    from jsonschema.exceptions import best_match

    if isinstance(document, dict) and "partitions" in document:
        skeleton = {**document, "partitions": _hollow(document["partitions"])}
    else:
        skeleton = _hollow(document)
    error = best_match(_validator().iter_errors(skeleton))
    if error is None:
        return
    if error.validator == "required" and not error.path:
        raise InputError(f'Replica election data is missing "partitions" field: {shown(path)} at $',
                         hint=_FILE_FORMAT_HINT)
    raise _schema_error(path, error, ())


def _entries(path: str, entries: Sequence[Any]) -> tuple[TopicPartition, ...]:
    """Every entry checked exactly as the schema does, fast; the first bad one is described by jsonschema."""
    legal_topics: set[str] = set()
    partitions: list[TopicPartition] = []
    append = partitions.append
    for entry in entries:
        try:
            topic, partition = entry["topic"], entry["partition"]
        except (TypeError, KeyError):  # not an object, or a field missing
            break
        if type(partition) is not int or not 0 <= partition <= MAX_PARTITION or type(topic) is not str:
            break
        if topic not in legal_topics:
            if topic_problem(topic):
                break
            legal_topics.add(topic)
        append(TopicPartition(topic, partition))
    else:
        return tuple(partitions)
    index = len(partitions)
    from jsonschema.exceptions import best_match

    error = best_match(_validator().iter_errors({"partitions": [entries[index]]}))
    raise _schema_error(path, error, ("partitions", index))


def _schema_error(path: str, error: Any, prefix: tuple[Any, ...]) -> InputError:
    """An InputError naming the file, the JSON path and the problem of a jsonschema error."""
    where = tuple(error.absolute_path)
    where = prefix + where[2:] if prefix else where
    if where and where[-1] == "topic" and isinstance(error.instance, str):
        problem = topic_problem(error.instance)
    else:
        problem = _problem(error)
    return InputError(f"Invalid replica election data in {shown(path)} at {_json_path(where)}: {problem}",
                      hint=_FILE_FORMAT_HINT)


_TYPE_NAMES = {"object": "an object", "array": "an array", "string": "a string", "integer": "an integer"}


def _problem(error: Any) -> str:
    value = error.instance
    if error.validator == "type":
        return f"expected {_TYPE_NAMES.get(error.validator_value, error.validator_value)}, got {_described(value)}"
    if error.validator == "required":
        missing = next(name for name in error.validator_value if name not in value)
        return f'the field "{missing}" is missing'
    if error.validator == "minimum":
        return f"{shown(str(value), 64)} is negative: partition ids start at 0"
    if error.validator == "maximum":
        return f"{shown(str(value), 64)} is larger than {MAX_PARTITION}, the largest partition id"
    return shown(error.message)


def _described(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string " + shown(json.dumps(value), 64)
    return shown(json.dumps(value), 64)


def _json_path(parts: Iterable[Any]) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else
                         f".{part}" if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", part) else
                         f"[{shown(json.dumps(part))}]" for part in parts)


def _check_duplicates(path: str, partitions: tuple[TopicPartition, ...]) -> None:
    """Kafka's duplicate message (`[t-1, t-2]`), plus where the first repeat is."""
    if len(set(partitions)) == len(partitions):
        return
    first_seen: dict[TopicPartition, int] = {}
    repeats: dict[TopicPartition, tuple[int, int]] = {}
    for index, tp in enumerate(partitions):
        first = first_seen.setdefault(tp, index)
        if first != index and tp not in repeats:
            repeats[tp] = (first, index)
    listed = ", ".join(shown(str(tp)) for tp in islice(repeats, 20))
    if len(repeats) > 20:
        listed += f", ... ({len(repeats)} in all)"
    first, again = next(iter(repeats.values()))
    raise InputError(f"Replica election data contains duplicate partitions: [{listed}] "
                     f"({shown(path)}: $.partitions[{again}] repeats $.partitions[{first}])",
                     hint="List each partition once.")


# -- the prefer file (kafka-leaders prefer --path-to-json-file) ---------------------------------------

_PREFER_FORMAT_HINT = 'The file must look like {"partitions": [{"topic": "foo", "partition": 1, "leader": 2}]}.'


def load_prefer_file(path: str) -> tuple[tuple[TopicPartition, int], ...]:
    """(partition, broker that should lead it) pairs of a prefer file, in file order, each partition once."""
    from jsonschema.exceptions import best_match

    document = _parse(path, _read(path))
    error = best_match(_prefer_validator().iter_errors(document))
    if error is not None:
        where = tuple(error.absolute_path)
        if where and where[-1] == "topic" and isinstance(error.instance, str):
            problem = topic_problem(error.instance)
        elif where and where[-1] == "leader" and error.validator in ("minimum", "maximum"):
            problem = f"{shown(str(error.instance), 64)} is not a broker id (0 to {MAX_PARTITION})"
        else:
            problem = _problem(error)
        raise InputError(f"Invalid prefer file {shown(path)} at {_json_path(where)}: {problem}",
                         hint=_PREFER_FORMAT_HINT)
    pairs = tuple((TopicPartition(e["topic"], e["partition"]), e["leader"]) for e in document["partitions"])
    first_seen: dict[TopicPartition, int] = {}
    for index, (tp, _) in enumerate(pairs):
        first = first_seen.setdefault(tp, index)
        if first != index:
            raise InputError(f"Prefer file {shown(path)} names {shown(str(tp))} twice: $.partitions[{index}] "
                             f"repeats $.partitions[{first}]", hint="List each partition once, with its leader.")
    return pairs


@functools.cache
def _prefer_validator() -> Any:
    """The prefer file schema's validator, with the same strict integer type as the election file's."""
    from importlib.resources import files

    schema = json.loads(files("leader_election_cli").joinpath("schemas/prefer-file.schema.json").read_text("utf-8"))
    return type(_validator())(schema)
