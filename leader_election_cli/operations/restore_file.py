"""Restore files: the replica orders `prefer`, `demote` and `balance` change, saved before anything is sent, and
read back by `restore` (schemas/restore-file.schema.json)."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from leader_election_cli.errors import InputError, RefusedError, shown
from leader_election_cli.local_files import read_regular_file, run_file_name, write_atomically
from leader_election_cli.model import ClusterState, TopicPartition
from leader_election_cli.planning.reorders import Move
from leader_election_cli.selection.files import shipped_schema, strict_validator

RESTORE_SCHEMA_VERSION = 1
MAX_RESTORE_FILE_BYTES = 256 * 2**20  # some two million partitions; a bigger file is not one of ours
_ENCODE = json.JSONEncoder().encode  # json.dumps' defaults


@dataclass(frozen=True)
class RestoreFile:
    """The saved replica orders, in file order."""

    command: str | None
    cluster_id: str | None
    created_at: str | None
    orders: tuple[tuple[TopicPartition, tuple[int, ...]], ...] = field(default=())


def state_directory() -> Path:
    """Where restore files go by default: $XDG_STATE_HOME/kafka-leaders (~/.local/state/kafka-leaders),
    created (0700: replica orders are the operator's business) when missing."""
    root = os.environ.get("XDG_STATE_HOME") or ""
    directory = (Path(root) if Path(root).is_absolute() else Path.home() / ".local" / "state") / "kafka-leaders"
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"Cannot create the directory for restore files {shown(str(directory))}: "
                         f"{exc.strerror or exc}; nothing was changed",
                         hint="Give --restore-file PATH, or set XDG_STATE_HOME to a writable directory.") from None
    return directory


def default_restore_path(command: str, cluster_id: str | None, now: datetime | None = None) -> Path:
    """<state directory>/<cluster id>-<command>-<UTC time>.json (`state_directory`, `default_restore_name`)."""
    return state_directory() / default_restore_name(command, cluster_id, now)


def default_restore_name(command: str, cluster_id: str | None, now: datetime | None = None) -> str:
    """<cluster id>-<command>-<UTC time>.json, the name of a restore file nobody named."""
    return run_file_name(cluster_id, command, now)


def restore_path(command: str, given: Path | None, cluster_id: str | None) -> Path:
    """Where a run's restore file goes: `given`, or under its default name in `given` when that is a
    directory, or the default (`default_restore_path`) when nothing was given."""
    if given is None:
        return default_restore_path(command, cluster_id)
    return given / default_restore_name(command, cluster_id) if given.is_dir() else given


def restore_document(command: str, state: ClusterState, moves: Sequence[Move],
                     now: datetime | None = None) -> dict[str, Any]:
    """The restore file's content: the orders before the moves (schemas/restore-file.schema.json)."""
    now = now or datetime.now(timezone.utc)
    return {
        "schema_version": RESTORE_SCHEMA_VERSION,
        "command": command,
        "created_at": now.isoformat(timespec="seconds").replace("+00:00", "Z"),
        "cluster_id": state.cluster_id,
        "partitions": [{"topic": m.tp.topic, "partition": m.tp.partition, "replicas": list(m.replicas),
                        "leader": m.leader_before} for m in moves],
    }


def write_restore_file(path: Path, command: str, state: ClusterState, moves: Sequence[Move]) -> None:
    """Write the restore file whole and on disk before anything changes: never over an existing file (or
    through a symlink), and never half of it (a temporary file linked into place; nothing is left on failure)."""
    text = restore_text(restore_document(command, state, moves))
    try:
        write_atomically(path, text.encode("utf-8"), replace=False)
    except FileExistsError:
        raise InputError(f"Restore file {shown(str(path))} already exists; nothing was changed",
                         hint="Give another --restore-file path: an existing restore file is never overwritten.") \
            from None
    except OSError as exc:
        raise InputError(f"Cannot write the restore file {shown(str(path))}: {exc.strerror or exc}; "
                         "nothing was changed", hint="Give a writable --restore-file path.") from None


def restore_text(document: dict[str, Any]) -> str:
    """`document` as the file's JSON: its header fields a line each, then one line per partition. Each entry is
    written by the json module's C encoder, which `indent` turns off (the indented encoder in pure Python took
    0.14-0.29 s for 16,700 partitions, a roll's drain of one broker at 100,000)."""
    head = json.dumps({k: v for k, v in document.items() if k != "partitions"}, indent=1)
    entries = ",\n  ".join(map(_ENCODE, document["partitions"]))
    return head[:-2] + ',\n "partitions": [' + (f"\n  {entries}\n " if entries else "") + "]\n}\n"


def load_restore_file(path: str) -> RestoreFile:
    """Read and validate a restore file (schemas/restore-file.schema.json); every problem one line."""
    from jsonschema.exceptions import best_match

    where = shown(path)
    hint = "Give a file written by kafka-leaders prefer, demote or balance (its name is in their output)."
    data = read_regular_file(path, what="restore file", limit=MAX_RESTORE_FILE_BYTES, hint=hint)
    try:
        document = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError:
        raise InputError(f"Restore file {where} is not UTF-8 text", hint=hint) from None
    except json.JSONDecodeError as exc:
        raise InputError(f"Restore file {where} is not valid JSON: {exc.msg} at line {exc.lineno}, "
                         f"column {exc.colno}", hint=hint) from None
    except (ValueError, RecursionError):
        raise InputError(f"Restore file {where} cannot be read as JSON", hint=hint) from None
    _check_replica_lists(document, where, hint)
    error = best_match(_restore_validator().iter_errors(document))
    if error is not None:
        raise InputError(f"Invalid restore file {where} at {error.json_path}: {shown(error.message)}", hint=hint)
    orders = tuple((TopicPartition(e["topic"], e["partition"]), tuple(e["replicas"])) for e in document["partitions"])
    seen: set[TopicPartition] = set()
    for tp, _ in orders:
        if tp in seen:
            raise InputError(f"Restore file {where} lists {shown(str(tp))} twice", hint=hint)
        seen.add(tp)
    return RestoreFile(document.get("command"), document.get("cluster_id"), document.get("created_at"), orders)


def check_written_for(saved: RestoreFile, path: str, cluster_id: str | None) -> None:
    """`restore`'s rule: the orders of a restore file written for another cluster are never put back (refused,
    exit 5). A file or a cluster without an id (Kafka before 0.10.1) cannot be told apart and passes."""
    if saved.cluster_id and cluster_id and saved.cluster_id != cluster_id:
        raise RefusedError(f"Restore file {shown(path)} was written for cluster {shown(saved.cluster_id)}, not "
                           f"this one ({shown(cluster_id)}); nothing was changed", hint="Check --bootstrap-server.")


_JSON_TYPES = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", float: "a number",
               type(None): "null"}


def _check_replica_lists(document: Any, where: str, hint: str) -> None:
    """Every replica a broker id (an integer), checked before the schema: jsonschema's uniqueItems compares
    values that cannot be sorted pair by pair (5,000 objects as replicas took 46 s); integers it sorts."""
    partitions = document.get("partitions") if isinstance(document, dict) else None
    for index, entry in enumerate(partitions if isinstance(partitions, list) else ()):
        replicas = entry.get("replicas") if isinstance(entry, dict) else None
        for position, replica in enumerate(replicas if isinstance(replicas, list) else ()):
            if type(replica) is not int:
                raise InputError(f"Invalid restore file {where} at $.partitions[{index}].replicas[{position}]: "
                                 f"expected an integer (a broker id), got {_JSON_TYPES.get(type(replica), 'a value')}",
                                 hint=hint)


def _restore_validator() -> Any:
    return strict_validator(shipped_schema("restore-file"))
