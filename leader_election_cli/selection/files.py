"""JSON input files, each checked against its shipped schema: Kafka's election file
(`{"partitions": [{"topic": "foo", "partition": 1}]}`), the prefer file (`... "leader": 2 ...`) and the
weights file (`... "weight": 2.5 ...`). An error says exactly where a file is wrong; every failure is an
`InputError`. The checks are linear: the document's shape first, then each entry checked fast as the
schema does; only the first bad entry is handed to jsonschema, which says what is wrong with it
(validating 300,000 entries with jsonschema took over a minute).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

from leader_election_cli.errors import InputError, shown
from leader_election_cli.gc_pause import cyclic_gc_paused
from leader_election_cli.java_order import java_hash_set_order
from leader_election_cli.local_files import read_regular_file
from leader_election_cli.model import TopicPartition
from leader_election_cli.planning.leadership_plan import weight_problem
from leader_election_cli.selection.names import MAX_PARTITION, topic_problem

# Kafka's line for an election file with no document in it, or JSON it cannot read (Json.parseFull: none)
_KAFKA_EMPTY = "Replica election data is empty"
MAX_ELECTION_FILE_BYTES = 256 * 2**20  # about five million entries; a bigger file is a mistake


class _Kind(NamedTuple):
    """One kind of file: its schema, the option naming it, how its messages name it, and its format."""

    schema: str
    option: str
    invalid: str  # "Invalid ... {path} at $...: ..."
    named: str  # "... {path} is not valid JSON", "... {path} names t-0 twice"
    hint: str


_ELECTION = _Kind("election-file", "--path-to-json-file", "Invalid replica election data in",
                  "Replica election data in",
                  'The file must look like {"partitions": [{"topic": "foo", "partition": 1}]}.')
_PREFER = _Kind("prefer-file", "--path-to-json-file", "Invalid prefer file", "Prefer file",
                'The file must look like {"partitions": [{"topic": "foo", "partition": 1, "leader": 2}]}.')
_WEIGHTS = _Kind("weights-file", "--weights", "Invalid weights file", "Weights file",
                 'The file must look like {"partitions": [{"topic": "foo", "partition": 1, "weight": 2.5}]}.')


def load_election_file(path: str) -> tuple[TopicPartition, ...]:
    """The partitions of a Kafka election file, in file order; an empty list is valid (nothing to do)."""
    with cyclic_gc_paused():
        document = _parse(path, _ELECTION, _read(path, _ELECTION.option, kafka_line=True))
        partitions = tuple(_entries(path, _ELECTION, document, _election_entry))
        repeats = _repeats(partitions)
        if repeats:  # Kafka's message, every repeat (`[t-1, t-2]`, in its HashSet's order), then where the first is
            listed = ", ".join(shown(str(tp)) for tp in java_hash_set_order(partitions, repeats))
            first, again = next(iter(repeats.values()))
            raise InputError(f"Replica election data contains duplicate partitions: [{listed}]",
                             detail=f"{shown(path)}: $.partitions[{again}] repeats $.partitions[{first}]",
                             hint="List each partition once.")
        return partitions


def load_prefer_file(path: str) -> tuple[tuple[TopicPartition, int], ...]:
    """(partition, broker that should lead it) pairs of a prefer file, in file order, each partition once."""
    document = _parse(path, _PREFER, _read(path, _PREFER.option))
    pairs = tuple(_entries(path, _PREFER, document, _prefer_entry))
    _check_once(path, _PREFER, [tp for tp, _ in pairs], "List each partition once, with its leader.")
    return pairs


def load_weights_file(path: str) -> dict[TopicPartition, float]:
    """The weight of each partition in a weights file (schemas/weights-file.schema.json), each partition once."""
    document = _parse(path, _WEIGHTS, _read(path, _WEIGHTS.option))
    pairs = _entries(path, _WEIGHTS, document, _weights_entry)
    _check_once(path, _WEIGHTS, [tp for tp, _ in pairs], "Give each partition one weight.")
    for index, (_, weight) in enumerate(pairs):  # 1e400 reads as infinity; an integer too large for a float
        problem = "too large" if weight == float("inf") else weight_problem(weight)
        if problem:
            raise InputError(f"{_WEIGHTS.invalid} {shown(path)} at $.partitions[{index}].weight: {problem}",
                             hint=_WEIGHTS.hint)
    return dict(pairs)


def _read(path: str, option: str, *, kafka_line: bool = False) -> bytes:
    """The file's bytes, bounded; a failure is one line, "Unable to read file PATH: reason". `kafka_line`:
    Kafka's election file, where the drop-in prints Kafka's own line above it when the system refused the file:
    "java.io.IOException: Unable to read file PATH" (Utils.readFileAsString's IOException, wrapped in a
    RuntimeException whose message is its toString)."""
    kafkas = (lambda _: f"java.io.IOException: Unable to read file {shown(path)}") if kafka_line else None
    return read_regular_file(path, what="file", limit=MAX_ELECTION_FILE_BYTES, hint=f"Check the {option} path.",
                             kafka_io_line=kafkas,
                             too_large_hint="Split the partitions over several files and run once per file.")


class _NonStandardConstant(ValueError):
    """NaN or Infinity: Python's json accepts them, JSON (and Kafka's Jackson) does not."""


def _reject_constant(name: str) -> Any:
    raise _NonStandardConstant(name)


def _parse(path: str, kind: _Kind, data: bytes) -> Any:
    """The file's JSON document; Kafka's election file is "empty" in Kafka's words."""
    where = f"{kind.named} {shown(path)}"
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, column = _position(data, exc.start, b"\n")
        raise InputError(f"{where} is not UTF-8 text: byte 0x{data[exc.start]:02x} "
                         f"at line {line}, column {column}", hint="Save the file as UTF-8 JSON.") from None
    text = text.removeprefix("\ufeff")
    if not text.strip(" \t\r\n"):
        if kind is _ELECTION:
            raise InputError(f"{_KAFKA_EMPTY}: {shown(path)} holds no JSON document", hint=kind.hint,
                             kafka_line=_KAFKA_EMPTY)  # the drop-in: Kafka's line first, byte for byte
        raise InputError(f"{where} is empty", hint=kind.hint)
    try:
        return _decode(text, where, kind)
    except InputError as exc:  # Kafka's Json.parseFull answers no document for any JSON it cannot read
        if kind is _ELECTION:
            exc.kafka_line = _KAFKA_EMPTY
        raise


def _decode(text: str, where: str, kind: _Kind) -> Any:
    try:
        return json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where} is not valid JSON: {exc.msg.removesuffix(' at')} "
                         f"at line {exc.lineno}, column {exc.colno}", hint=kind.hint) from None
    except _NonStandardConstant as exc:
        line, column = _position(text, _constant_offset(text), "\n")
        raise InputError(f"{where} is not valid JSON: {exc} is not a JSON value "
                         f"at line {line}, column {column}", hint=kind.hint) from None
    except RecursionError:
        raise InputError(f"{where} is nested too deeply to read",
                         hint=kind.hint) from None
    except ValueError:  # an integer literal longer than Python's 4300-digit conversion limit
        raise InputError(f"{where} holds a number too long to read",
                         hint=kind.hint) from None


def _position(text: Any, offset: int, newline: Any) -> tuple[int, int]:
    """1-based line and column of an offset (bytes or characters)."""
    return text.count(newline, 0, offset) + 1, offset - text.rfind(newline, 0, offset)


def _constant_offset(text: str) -> int:
    """Where the first NaN/Infinity outside a string is, in a text that parsed up to it."""
    for match in re.finditer(r'"(?:[^"\\]|\\.)*"|(NaN|-?Infinity)', text, re.S):
        if match.group(1):
            return match.start(1)
    return 0


def shipped_schema(name: str) -> dict[str, Any]:
    """The JSON schema `schemas/NAME.schema.json` shipped in the package."""
    from importlib.resources import files

    return json.loads(files("leader_election_cli").joinpath(f"schemas/{name}.schema.json").read_text("utf-8"))


def strict_validator(schema: dict[str, Any]) -> Any:
    """A Draft 2020-12 validator of `schema` whose integers are strict: 1.0 and true are not ids."""
    import jsonschema

    strict = jsonschema.Draft202012Validator.TYPE_CHECKER.redefine("integer",
                                                                     lambda _checker, value: type(value) is int)
    return jsonschema.validators.extend(jsonschema.Draft202012Validator, type_checker=strict)(schema)


@functools.cache
def _validator(schema: str) -> Any:
    """The validator of a shipped schema."""
    return strict_validator(shipped_schema(schema))


def _hollow(value: Any) -> Any:
    """A small value of the same JSON type: the schema's shape checks give the same answer, cheaply."""
    if isinstance(value, str):
        return value[:100]
    return type(value)() if isinstance(value, (list, dict)) else value


def _entries(path: str, kind: _Kind, document: Any, plain: Callable[[Any, set[str]], Any]) -> list[Any]:
    """Each entry of the document as `plain` makes it from an entry the schema accepts (None for any
    other: it may be wrong); the first problem raised as one line, as jsonschema finds it."""
    from jsonschema.exceptions import best_match

    validator = _validator(kind.schema)
    if isinstance(document, dict) and "partitions" in document:
        skeleton = {**document, "partitions": _hollow(document["partitions"])}
    else:
        skeleton = _hollow(document)
    error = best_match(validator.iter_errors(skeleton))
    if error is not None:
        if kind is _ELECTION and error.validator == "required" and not error.path:
            raise InputError('Replica election data is missing "partitions" field', detail=f"{shown(path)} at $",
                             hint=kind.hint)
        raise _invalid(path, kind, tuple(error.absolute_path), error)
    entries, values, legal_topics = document["partitions"], [], set()
    append = values.append
    for entry in entries:
        value = plain(entry, legal_topics)
        if value is None:
            break
        append(value)
    else:
        return values
    index = len(values)
    error = best_match(validator.iter_errors({"partitions": [entries[index]]}))
    assert error is not None, f"{kind.schema}: an entry the fast check refused, the schema accepts"
    raise _invalid(path, kind, ("partitions", index, *tuple(error.absolute_path)[2:]), error)


def _legal_topic(topic: Any, legal_topics: set[str]) -> bool:
    """A topic name by Kafka's rules (each distinct name checked once)."""
    if type(topic) is not str:
        return False
    if topic in legal_topics:
        return True
    if topic_problem(topic):
        return False
    legal_topics.add(topic)
    return True


def _election_entry(entry: Any, legal_topics: set[str]) -> TopicPartition | None:
    """An election file's entry, as its schema accepts it (other fields are ignored, as Kafka does)."""
    try:
        topic, partition = entry["topic"], entry["partition"]
    except (TypeError, KeyError):  # not an object, or a field missing
        return None
    if type(partition) is not int or not 0 <= partition <= MAX_PARTITION or not _legal_topic(topic, legal_topics):
        return None
    return TopicPartition(topic, partition)


def _prefer_entry(entry: Any, legal_topics: set[str]) -> tuple[TopicPartition, int] | None:
    """A prefer file's entry: an object with exactly topic, partition and leader, each valid."""
    if type(entry) is not dict or len(entry) != 3:
        return None
    topic, partition, leader = entry.get("topic"), entry.get("partition"), entry.get("leader")
    if type(partition) is not int or type(leader) is not int:
        return None
    if not (0 <= partition <= MAX_PARTITION and 0 <= leader <= MAX_PARTITION) or not _legal_topic(topic, legal_topics):
        return None
    return TopicPartition(topic, partition), leader


def _weights_entry(entry: Any, legal_topics: set[str]) -> tuple[TopicPartition, float] | None:
    """A weights file's entry: an object with exactly topic, partition and weight (a number >= 0)."""
    if type(entry) is not dict or len(entry) != 3:
        return None
    topic, partition, weight = entry.get("topic"), entry.get("partition"), entry.get("weight")
    if type(partition) is not int or not 0 <= partition <= MAX_PARTITION or type(weight) not in (int, float):
        return None
    try:
        weight = float(weight)
    except OverflowError:  # an integer too large for a float: refused by load_weights_file as too large
        weight = float("inf")
    if not weight >= 0 or not _legal_topic(topic, legal_topics):  # NaN is no weight either
        return None
    return TopicPartition(topic, partition), weight


def _invalid(path: str, kind: _Kind, where: tuple[Any, ...], error: Any) -> InputError:
    """An InputError naming the file, the JSON path and the problem of a jsonschema error."""
    return InputError(f"{kind.invalid} {shown(path)} at {_json_path(where)}: {_problem(where, error)}",
                      hint=kind.hint)


_TYPE_NAMES = {"object": "an object", "array": "an array", "string": "a string", "integer": "an integer",
               "number": "a number"}


def _problem(where: tuple[Any, ...], error: Any) -> str:
    """What is wrong with the value at `where`, in words."""
    value, field = error.instance, where[-1] if where else None
    if field == "topic" and isinstance(value, str):
        return topic_problem(value) or shown(error.message)
    if field == "leader" and error.validator in ("minimum", "maximum"):
        return f"{shown(str(value), 64)} is not a broker id (0 to {MAX_PARTITION})"
    if field == "weight" and error.validator == "minimum":
        return f"{shown(str(value), 64)} is negative: weights are numbers >= 0"
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


def _repeats(partitions: Sequence[TopicPartition]) -> dict[TopicPartition, tuple[int, int]]:
    """Each partition listed more than once: (where first, where again), in the order of the repeats."""
    if len(set(partitions)) == len(partitions):
        return {}
    first_seen: dict[TopicPartition, int] = {}
    repeats: dict[TopicPartition, tuple[int, int]] = {}
    for index, tp in enumerate(partitions):
        first = first_seen.setdefault(tp, index)
        if first != index and tp not in repeats:
            repeats[tp] = (first, index)
    return repeats


def _check_once(path: str, kind: _Kind, partitions: Sequence[TopicPartition], hint: str) -> None:
    """Each partition listed once; else the first repeat, where it is."""
    repeats = _repeats(partitions)
    if repeats:
        tp, (first, again) = next(iter(repeats.items()))
        raise InputError(f"{kind.named} {shown(path)} names {shown(str(tp))} twice: $.partitions[{again}] "
                         f"repeats $.partitions[{first}]", hint=hint)
