"""Balance plan files: the `balance` document written for review (`--plan-file PATH`), and read back
by `balance --execute --plan-file PATH` (schemas/balance.schema.json)."""

from __future__ import annotations

import functools
import json
from datetime import datetime
from pathlib import Path
from typing import Any

from leader_election_cli.errors import InputError, shown
from leader_election_cli.gc_pause import cyclic_gc_paused
from leader_election_cli.local_files import read_regular_file, run_file_name, write_atomically
from leader_election_cli.selection.files import shipped_schema, strict_validator
from leader_election_cli.selection.names import MAX_PARTITION, topic_problem

MAX_PLAN_FILE_BYTES = 256 * 2**20  # about two million entries
_HINT = "Give a file written by kafka-leaders balance --plan-file PATH (without --execute)."


def check_writable(path: Path) -> None:
    """Before anything is read from the cluster: the plan file can be created (never overwritten); a
    directory takes a new file (`plan_path`)."""
    if path.is_dir():
        return
    if path.exists():
        raise InputError(f"Plan file {shown(str(path))} already exists; nothing was written",
                         hint="Give another --plan-file path: an existing plan file is never overwritten.")
    if not path.parent.is_dir():
        raise InputError(f"Plan file {shown(str(path))}: the directory {shown(str(path.parent))} does not exist",
                         hint="Create the directory first.")


def plan_path(path: Path, cluster_id: str | None, now: datetime | None = None) -> Path:
    """`path`, or in it <cluster id>-balance-plan-<UTC time>.json when it is a directory."""
    return path / run_file_name(cluster_id, "balance-plan", now) if path.is_dir() else path


def write_plan_file(path: Path, document: dict[str, Any]) -> None:
    """Write (never overwrite) the plan whole, flushed to disk, or nothing (a full disk left an empty file)."""
    try:
        write_atomically(path, (json.dumps(document, indent=1) + "\n").encode("utf-8"), replace=False)
    except FileExistsError:
        raise InputError(f"Plan file {shown(str(path))} already exists; nothing was written",
                         hint="Give another --plan-file path: an existing plan file is never overwritten.") from None
    except OSError as exc:
        raise InputError(f"Cannot write the plan file {shown(str(path))}: {exc.strerror or exc}",
                         hint="Give a writable --plan-file path.") from None


def load_plan_file(path: str) -> dict[str, Any]:
    """Read a plan file and check it against the schema's plan (every problem one line, exit 2), in linear
    time: jsonschema checks the document with its lists emptied, a direct check each entry (jsonschema only
    the entry it refuses, for the message); 200,000 entries took 84 s of CPU in jsonschema, now about 1 s."""
    where = shown(path)
    data = read_regular_file(path, what="plan file", limit=MAX_PLAN_FILE_BYTES, hint=_HINT)
    try:
        with cyclic_gc_paused():
            document = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except UnicodeDecodeError:
        raise InputError(f"Plan file {where} is not UTF-8 text", hint=_HINT) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"Plan file {where} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}",
                         hint=_HINT) from None
    except (ValueError, RecursionError):
        raise InputError(f"Plan file {where} cannot be read as JSON", hint=_HINT) from None
    if isinstance(document, dict) and "error" in document:
        raise InputError(f"Plan file {where} holds no plan: the run that wrote it stopped "
                         f"({shown(str(document['error']), 120)})", hint=_HINT)
    _check_schema(document, where)
    seen: set[tuple[str, int]] = set()
    for index, entry in enumerate(document["partitions"]):
        key = (entry["topic"], entry["partition"])
        if key in seen:
            raise InputError(f"Plan file {where} lists {shown(entry['topic'])}-{entry['partition']} twice "
                             f"(again at $.partitions[{index}])", hint=_HINT)
        seen.add(key)
    return document


def _check_schema(document: Any, where: str) -> None:
    """The schema's verdict on `document`, one entry of each list at a time."""
    from jsonschema.exceptions import best_match

    validator = _plan_validator()
    lists = ("partitions", "skipped")
    if isinstance(document, dict):
        skeleton = {**document, **{name: [] for name in lists if isinstance(document.get(name), list)}}
    else:
        skeleton = document
    error = best_match(validator.iter_errors(skeleton))
    if error is None:
        topics: set[str] = set()
        for name, fits in zip(lists, (_plain_change, _plain_skipped), strict=True):
            for index, entry in enumerate(document[name]):
                if fits(entry, topics):
                    continue
                error = best_match(validator.iter_errors({**skeleton, name: [entry]}))
                if error is not None:
                    path = (name, index, *tuple(error.absolute_path)[2:])
                    raise InputError(f"Invalid plan file {where} at {_json_path(path)}: {shown(error.message, 160)}",
                                     hint=_HINT)
        return
    raise InputError(f"Invalid plan file {where} at {error.json_path}: {shown(error.message, 160)}", hint=_HINT)


def _json_path(path: tuple[Any, ...]) -> str:
    return "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in path)


_CHANGE_KEYS = frozenset({"topic", "partition", "replicas_before", "replicas_after", "leader_before", "leader_after"})
_CHANGE_OPTIONAL = frozenset({"outcome", "leader_now", "replicas_now", "error_code", "error"})


def _id(value: Any, low: int = 0) -> bool:
    return type(value) is int and low <= value <= MAX_PARTITION


def _replicas(value: Any) -> bool:
    return type(value) is list and bool(value) and all(_id(b) for b in value) and len(set(value)) == len(value)


def _topic(value: Any, topics: set[str]) -> bool:
    if type(value) is not str:
        return False
    if value not in topics:
        if topic_problem(value):
            return False
        topics.add(value)
    return True


def _plain_change(entry: Any, topics: set[str]) -> bool:
    """A plan entry the schema surely accepts (False: it may not; jsonschema then decides)."""
    if type(entry) is not dict or not _CHANGE_KEYS <= entry.keys() <= _CHANGE_KEYS | _CHANGE_OPTIONAL:
        return False
    return (_topic(entry["topic"], topics) and _id(entry["partition"]) and _replicas(entry["replicas_before"])
            and _replicas(entry["replicas_after"]) and _id(entry["leader_before"], -1) and _id(entry["leader_after"])
            and len(entry) == len(_CHANGE_KEYS))  # an entry with outcomes (a run's document): jsonschema checks it


def _plain_skipped(entry: Any, topics: set[str]) -> bool:
    return (type(entry) is dict and entry.keys() == {"topic", "partition", "reason"}
            and _topic(entry["topic"], topics) and _id(entry["partition"]) and type(entry["reason"]) is str)


def _no_constant(name: str) -> Any:
    raise ValueError(name)


@functools.cache
def _plan_validator() -> Any:
    """The schema's `report` definition (a plan)."""
    schema = shipped_schema("balance")
    return strict_validator({"$schema": schema["$schema"], "$ref": "#/$defs/report", "$defs": schema["$defs"]})
