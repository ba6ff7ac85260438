"""JSON input files: Kafka's election file (`{"partitions": [{"topic": "foo", "partition": 1}]}`) and
the prefer file (`... "leader": 2 ...`), each checked against its shipped schema; an error says exactly
where a file is wrong. Every failure is an `InputError`.
"""

from __future__ import annotations

import functools
import gc
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import islice
from typing import Any

from leader_election_cli.errors import InputError, shown
from leader_election_cli.local_files import read_regular_file
from leader_election_cli.model import TopicPartition
from leader_election_cli.selection.names import MAX_PARTITION, topic_problem

MAX_ELECTION_FILE_BYTES = 256 * 2**20  # about five million entries; a bigger file is a mistake
_FILE_FORMAT_HINT = 'The file must look like {"partitions": [{"topic": "foo", "partition": 1}]}.'


def load_election_file(path: str) -> tuple[TopicPartition, ...]:
    """The partitions of a Kafka election file, in file order; an empty list is valid (nothing to do)."""
    with _gc_paused():
        document = _parse(path, _read(path, kafka_line=True))
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


def _read(path: str, option: str = "--path-to-json-file", *, kafka_line: bool = False) -> bytes:
    """The file's bytes, bounded; `kafka_line`: Kafka's election file, whose failure is Kafka's line alone
    ("Unable to read file PATH"), the reason on a line of its own."""
    try:
        return read_regular_file(path, what="file", limit=MAX_ELECTION_FILE_BYTES, hint=f"Check the {option} path.")
    except InputError as exc:
        if "larger than" in exc.message:
            exc.hint = "Split the partitions over several files and run once per file."
        line = f"Unable to read file {shown(path)}"
        if kafka_line and exc.message.startswith(line + ": "):
            exc.message, exc.detail = line, exc.message[len(line) + 2:]
        raise


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
        raise InputError("Replica election data is empty", detail=f"{where} holds no JSON document",
                         hint=_FILE_FORMAT_HINT)
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
def _validator() -> Any:
    """The election file's validator."""
    return strict_validator(shipped_schema("election-file"))


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
        raise InputError('Replica election data is missing "partitions" field', detail=f"{shown(path)} at $",
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
    raise InputError(f"Replica election data contains duplicate partitions: [{listed}]",
                     detail=f"{shown(path)}: $.partitions[{again}] repeats $.partitions[{first}]",
                     hint="List each partition once.")


# -- the prefer file (kafka-leaders prefer --path-to-json-file) ---------------------------------------

_PREFER_FORMAT_HINT = 'The file must look like {"partitions": [{"topic": "foo", "partition": 1, "leader": 2}]}.'


def load_prefer_file(path: str) -> tuple[tuple[TopicPartition, int], ...]:
    """(partition, broker that should lead it) pairs of a prefer file, in file order, each partition once."""
    document = _parse(path, _read(path))
    where, error = _prefer_error(document)
    if error is not None:
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


def _prefer_error(document: Any) -> tuple[tuple[Any, ...], Any]:
    """The first problem of a prefer document as (its JSON path, the jsonschema error), else ((), None).
    Linear: the shape first, then each entry checked fast as the schema does; only a bad entry is
    handed to jsonschema (validating 300,000 entries with it took over a minute)."""
    from jsonschema.exceptions import best_match

    validator = _prefer_validator()
    if isinstance(document, dict) and "partitions" in document:
        skeleton = {**document, "partitions": _hollow(document["partitions"])}
    else:
        skeleton = _hollow(document)
    error = best_match(validator.iter_errors(skeleton))
    if error is not None:
        return tuple(error.absolute_path), error
    legal_topics: set[str] = set()
    for index, entry in enumerate(document["partitions"]):
        if _plain_prefer_entry(entry, legal_topics):
            continue
        error = best_match(validator.iter_errors({"partitions": [entry]}))
        if error is not None:
            return ("partitions", index, *tuple(error.absolute_path)[2:]), error
    return (), None


def _plain_prefer_entry(entry: Any, legal_topics: set[str]) -> bool:
    """The schema's entry rules, fast: an object with exactly topic, partition and leader, each valid."""
    if type(entry) is not dict or len(entry) != 3:
        return False
    topic, partition, leader = entry.get("topic"), entry.get("partition"), entry.get("leader")
    if type(partition) is not int or type(leader) is not int or type(topic) is not str:
        return False
    if not (0 <= partition <= MAX_PARTITION and 0 <= leader <= MAX_PARTITION):
        return False
    if topic not in legal_topics:
        if topic_problem(topic):
            return False
        legal_topics.add(topic)
    return True


@functools.cache
def _prefer_validator() -> Any:
    """The prefer file's validator."""
    return strict_validator(shipped_schema("prefer-file"))


# -- the weights file (kafka-leaders balance --weights) -----------------------------------------------

_WEIGHTS_FORMAT_HINT = 'The file must look like {"partitions": [{"topic": "foo", "partition": 1, "weight": 2.5}]}.'


def load_weights_file(path: str) -> dict[TopicPartition, float]:
    """The weight of each partition in a weights file (schemas/weights-file.schema.json), each partition once."""
    from jsonschema.exceptions import best_match

    document = _parse(path, _read(path, "--weights"))
    error = best_match(_weights_validator().iter_errors(document))
    if error is not None:
        where = tuple(error.absolute_path)
        if where and where[-1] == "topic" and isinstance(error.instance, str):
            problem = topic_problem(error.instance)
        elif where and where[-1] == "weight" and error.validator == "minimum":
            problem = f"{shown(str(error.instance), 64)} is negative: weights are numbers >= 0"
        elif where and where[-1] == "weight" and error.validator == "type":
            problem = f"expected a number, got {_described(error.instance)}"
        else:
            problem = _problem(error)
        raise InputError(f"Invalid weights file {shown(path)} at {_json_path(where)}: {problem}",
                         hint=_WEIGHTS_FORMAT_HINT)
    weights: dict[TopicPartition, float] = {}
    for index, entry in enumerate(document["partitions"]):
        tp = TopicPartition(entry["topic"], entry["partition"])
        if tp in weights:
            raise InputError(f"Weights file {shown(path)} names {shown(str(tp))} twice (again at "
                             f"$.partitions[{index}])", hint="Give each partition one weight.")
        try:
            weight = float(entry["weight"])
        except OverflowError:  # an integer too large for a float
            weight = float("inf")
        if weight == float("inf"):  # 1e400 reads as infinity
            raise InputError(f"Invalid weights file {shown(path)} at $.partitions[{index}].weight: too large",
                             hint=_WEIGHTS_FORMAT_HINT)
        weights[tp] = weight
    return weights


@functools.cache
def _weights_validator() -> Any:
    """The weights file's validator."""
    return strict_validator(shipped_schema("weights-file"))
