"""The roll's state file: where a rolling restart stands, written whole after every step, so that a roll
stopped by a signal, a failed command or a broker that did not come back is never forgotten with a
broker drained: `roll --resume` carries on from it (schemas/roll-state.schema.json).

Each broker goes through the steps in order; `step` is the last one finished:
pending -> safe -> drained -> restarted -> back -> done. `restore_files` are the demote's restore files
of the broker being rolled (a drain run again after a stop adds one): the restore step puts all of them
back, the first file's order winning.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from leader_election_cli.errors import InputError, shown
from leader_election_cli.local_files import write_atomically

SCHEMA_VERSION = 1
STEPS = ("pending", "safe", "drained", "restarted", "back", "done")


@dataclass
class BrokerState:
    broker: int
    host: str | None = None
    step: str = "pending"
    restore_files: list[str] = field(default_factory=list)


@dataclass
class RollState:
    """What `--resume` needs: the cluster, the order, how to restart a broker, where each broker stands."""

    cluster_id: str | None
    command: str | None  # --exec's template; None with --pause
    brokers: list[BrokerState]
    finished: bool = False

    def current(self) -> BrokerState | None:
        return next((b for b in self.brokers if b.step != "done"), None)

    def document(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "cluster_id": self.cluster_id, "command": self.command,
                "finished": self.finished, "brokers": [asdict(b) for b in self.brokers]}


def default_state_path(cluster_id: str | None) -> Path:
    """<state directory>/<cluster id>-roll.json: one roll per cluster at a time."""
    from leader_election_cli.operations.restore_file import state_directory

    return state_directory() / f"{cluster_id or 'unknown-cluster'}-roll.json".replace("/", "_")


def save(path: Path, state: RollState) -> None:
    """Write the state whole (a temporary file renamed into place), so a reader never sees half of it."""
    try:
        write_atomically(path, (json.dumps(state.document(), indent=1) + "\n").encode())
    except OSError as exc:
        raise InputError(f"Cannot write the roll's state file {shown(str(path))}: {exc.strerror or exc}",
                         hint="Give a writable --state-file path.") from None


def load(path: Path) -> RollState | None:
    """The state in `path`, None when there is no such file; a file that is not one is an input error."""
    hint = "Give the --state-file a roll wrote, or remove it to start a new roll."
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else "not JSON"
        raise InputError(f"Cannot read the roll's state file {shown(str(path))}: {reason}", hint=hint) from None
    try:
        if document["schema_version"] != SCHEMA_VERSION:
            raise ValueError("schema_version")
        brokers = [BrokerState(int(b["broker"]), b.get("host"), str(b["step"]), [str(f) for f in b["restore_files"]])
                   for b in document["brokers"]]
        if any(b.step not in STEPS for b in brokers):
            raise ValueError("step")
        return RollState(document.get("cluster_id"), document.get("command"), brokers, bool(document["finished"]))
    except (KeyError, TypeError, ValueError) as exc:
        raise InputError(f"The roll's state file {shown(str(path))} is not one kafka-leaders roll wrote ({exc})",
                         hint=hint) from None
