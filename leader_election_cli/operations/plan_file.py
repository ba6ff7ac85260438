"""Balance plan files: the `balance` document written for review (`--plan-file PATH`), and read back
by `balance --execute --plan-file PATH` (schemas/balance.schema.json)."""

from __future__ import annotations

import functools
import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

from leader_election_cli.errors import InputError, shown
from leader_election_cli.local_files import run_file_name
from leader_election_cli.selection.files import shipped_schema, strict_validator

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
    """Write (never overwrite) the plan and flush it to disk."""
    text = json.dumps(document, indent=1) + "\n"
    try:
        with open(path, "x", encoding="utf-8") as file:
            file.write(text)
            file.flush()
            os.fsync(file.fileno())
    except FileExistsError:
        raise InputError(f"Plan file {shown(str(path))} already exists; nothing was written",
                         hint="Give another --plan-file path: an existing plan file is never overwritten.") from None
    except OSError as exc:
        raise InputError(f"Cannot write the plan file {shown(str(path))}: {exc.strerror or exc}",
                         hint="Give a writable --plan-file path.") from None


def load_plan_file(path: str) -> dict[str, Any]:
    """Read a plan file and check it against the schema's plan (every problem one line, exit 2)."""
    from jsonschema.exceptions import best_match

    where = shown(path)
    try:
        with open(path, "rb") as file:
            document = json.loads(file.read().decode("utf-8"), parse_constant=_no_constant)
    except OSError as exc:
        raise InputError(f"Unable to read plan file {where}: {exc.strerror or exc}", hint=_HINT) from None
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
    error = best_match(_plan_validator().iter_errors(document))
    if error is not None:
        raise InputError(f"Invalid plan file {where} at {error.json_path}: {shown(error.message, 160)}", hint=_HINT)
    seen: set[tuple[str, int]] = set()
    for index, entry in enumerate(document["partitions"]):
        key = (entry["topic"], entry["partition"])
        if key in seen:
            raise InputError(f"Plan file {where} lists {shown(entry['topic'])}-{entry['partition']} twice "
                             f"(again at $.partitions[{index}])", hint=_HINT)
        seen.add(key)
    return document


def _no_constant(name: str) -> Any:
    raise ValueError(name)


@functools.cache
def _plan_validator() -> Any:
    """The schema's `report` definition (a plan)."""
    schema = shipped_schema("balance")
    return strict_validator({"$schema": schema["$schema"], "$ref": "#/$defs/report", "$defs": schema["$defs"]})
