"""The roll's state file: where a rolling restart stands, written whole after every step, so that a roll
stopped by a signal, a failed command or a broker that did not come back is never forgotten with a
broker drained: `roll --resume` carries on from it (schemas/roll-state.schema.json).

Each broker goes through the steps in order; `step` is the last one finished:
pending -> safe -> drained -> restarted -> back -> done (a dedicated KRaft controller, `role` controller, has
no partitions: pending -> safe -> restarted -> done). `restore_files` are the demote's restore files
of the broker being rolled (a drain run again after a stop adds one): the restore step puts all of them
back, the first file's order winning. `stopped` says why the last run stopped (its exit code and error:
e.g. 5, a broker drained and waiting because stopping it was no longer safe); null once a run goes on.
`rounds` (a roll with --parallel): the brokers restarted together, round by round, each broker in one round.
A state file naming a broker twice is not one a roll wrote.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from leader_election_cli.errors import InputError, shown
from leader_election_cli.local_files import file_name_part, read_regular_file, write_atomically
from leader_election_cli.selection.files import shipped_schema, strict_validator

SCHEMA_VERSION = 1
MAX_STATE_FILE_BYTES = 2**20  # some ten thousand brokers; a bigger file is not one of ours
STEPS = ("pending", "safe", "drained", "restarted", "back", "done")


@dataclass
class BrokerState:
    broker: int
    host: str | None = None
    step: str = "pending"
    restore_files: list[str] = field(default_factory=list)
    role: str = "broker"  # or "controller": a dedicated KRaft controller (the quorum rule, no partitions)


@dataclass
class RollState:
    """What `--resume` needs: the cluster, the order, how to restart a broker, where each broker stands."""

    cluster_id: str | None
    command: str | None  # --exec's template; None with --pause
    brokers: list[BrokerState]
    finished: bool = False
    stopped: dict[str, Any] | None = None  # {"exit_code": int, "error": str}: why the last run stopped
    rounds: list[list[int]] | None = None  # --parallel: the brokers restarted together, round by round

    def document(self) -> dict[str, Any]:
        return {"schema_version": SCHEMA_VERSION, "cluster_id": self.cluster_id, "command": self.command,
                "finished": self.finished, "stopped": self.stopped, "brokers": [asdict(b) for b in self.brokers],
                **({"rounds": self.rounds} if self.rounds is not None else {})}

    def groups(self) -> list[list[BrokerState]]:
        """The nodes in the order they are rolled, as rounds: each broker of `rounds` with the others of its round
        (at the place of its round's first), every other node alone."""
        by_id = {b.broker: b for b in self.brokers}
        round_of = {n: r for r in self.rounds or () for n in r}
        groups: list[list[BrokerState]] = []
        placed: set[int] = set()
        for b in self.brokers:
            if b.broker in placed:
                continue
            members = round_of.get(b.broker, [b.broker])
            groups.append([by_id[n] for n in members])
            placed.update(members)
        return groups


def default_state_path(cluster_id: str | None) -> Path:
    """<state directory>/<cluster id>-roll.json: one roll per cluster at a time."""
    from leader_election_cli.operations.restore_file import state_directory

    return state_directory() / f"{file_name_part(cluster_id)}-roll.json"


def save(path: Path, state: RollState) -> None:
    """Write the state whole (a temporary file renamed into place), so a reader never sees half of it."""
    try:
        write_atomically(path, (json.dumps(state.document(), indent=1) + "\n").encode())
    except OSError as exc:
        raise InputError(f"Cannot write the roll's state file {shown(str(path))}: {exc.strerror or exc}",
                         hint="Give a writable --state-file path.") from None


def load(path: Path) -> RollState | None:
    """The state in `path`, None when there is no such file; anything but a regular file of at most 1 MiB
    holding a state document (schemas/roll-state.schema.json) is a one-line input error."""
    from jsonschema.exceptions import best_match

    hint = "Give the --state-file a roll wrote, or remove it to start a new roll."
    if not os.path.lexists(path):
        return None
    data = read_regular_file(path, what="the roll's state file", limit=MAX_STATE_FILE_BYTES, hint=hint)
    where = f"The roll's state file {shown(str(path))}"
    try:
        document = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        raise InputError(f"{where} is not JSON", hint=hint) from None
    error = best_match(strict_validator(shipped_schema("roll-state")).iter_errors(document))
    if error is not None:
        raise InputError(f"{where} is not one kafka-leaders roll wrote: at {error.json_path}: {shown(error.message)}",
                         hint=hint)
    brokers = [BrokerState(b["broker"], b["host"], b["step"], list(b["restore_files"]), b.get("role", "broker"))
               for b in document["brokers"]]
    twice = sorted(b for b, n in Counter(b.broker for b in brokers).items() if n > 1)
    if twice:
        raise InputError(f"{where} is not one kafka-leaders roll wrote: it names node {','.join(map(str, twice))} "
                         "twice", hint=hint)
    rounds = document.get("rounds")
    named = {b.broker for b in brokers}
    if rounds is not None and (Counter(n for r in rounds for n in r) - Counter(named) or
                               any(n not in named for r in rounds for n in r)):
        raise InputError(f"{where} is not one kafka-leaders roll wrote: its rounds name a broker twice, or one it does "
                         "not list", hint=hint)
    return RollState(document["cluster_id"], document["command"], brokers, document["finished"],
                     document.get("stopped"), rounds)
