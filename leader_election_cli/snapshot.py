"""Metadata snapshots: one row per partition per point in time, the input of the Spark pipeline.

A row holds what a leadership analysis needs and nothing else: the cluster, the time, the partition's
replicas, ISR, ELR and leader, its topic's `min.insync.replicas` (null when unknown) and the brokers
alive at that moment. Rows are written as JSON lines (`.jsonl`) or Parquet (`.parquet`, via pyarrow)
and read back into the same rows, or into `ClusterState`s for the pure planner.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from collections.abc import Iterable, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypedDict

from leader_election_cli.errors import InputError, extra_hint
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition

JSONL_SUFFIX = ".jsonl"
PARQUET_SUFFIX = ".parquet"


class SnapshotRow(TypedDict):
    cluster: str
    taken_at: datetime  # timezone-aware, UTC
    topic: str
    partition: int
    replicas: list[int]
    isr: list[int]
    elr: list[int]
    leader: int
    min_insync_replicas: int | None
    live_brokers: list[int]


COLUMNS: tuple[str, ...] = tuple(SnapshotRow.__annotations__)


def rows(state: ClusterState, cluster: str, taken_at: datetime) -> list[SnapshotRow]:
    """One row per partition of `state`, sorted by topic and partition."""
    live = sorted(state.live_brokers)
    return [SnapshotRow(cluster=cluster, taken_at=taken_at, topic=p.topic, partition=p.partition,
                        replicas=list(p.replicas), isr=list(p.isr), elr=list(p.elr), leader=p.leader,
                        min_insync_replicas=state.min_isr(tp), live_brokers=live)
            for tp, p in sorted(state.partitions.items())]


def states(snapshot_rows: Iterable[SnapshotRow]) -> dict[tuple[str, datetime], ClusterState]:
    """The rows back as one `ClusterState` per (cluster, taken_at): what the planner reads.

    A snapshot keeps no broker addresses (each live broker gets an empty one), no controller and no mode.
    """
    grouped: dict[tuple[str, datetime], list[SnapshotRow]] = defaultdict(list)
    for row in snapshot_rows:
        grouped[(row["cluster"], row["taken_at"])].append(row)
    result = {}
    for (cluster, taken_at), group in grouped.items():
        partitions = {TopicPartition(r["topic"], r["partition"]): PartitionState(
            r["topic"], r["partition"], r["leader"], tuple(r["replicas"]), tuple(r["isr"]), tuple(r["elr"]))
            for r in group}
        min_isr = {r["topic"]: r["min_insync_replicas"] for r in group if r["min_insync_replicas"] is not None}
        result[(cluster, taken_at)] = ClusterState(
            brokers={b: ("", 0) for b in group[0]["live_brokers"]}, controller_id=-1, partitions=partitions,
            cluster_id=cluster, min_insync_replicas=min_isr)
    return result


def format_of(path: Path) -> str:
    """`jsonl` or `parquet`, from the file name; anything else is an input error."""
    if path.suffix == JSONL_SUFFIX:
        return "jsonl"
    if path.suffix == PARQUET_SUFFIX:
        return "parquet"
    raise InputError(f"Unsupported snapshot file {path}: the name must end in {JSONL_SUFFIX} or {PARQUET_SUFFIX}",
                     hint=f"For example --output metadata{JSONL_SUFFIX}.")


def write(snapshot_rows: Sequence[SnapshotRow], path: Path, append: bool = False) -> None:
    """Write `snapshot_rows` to `path` (.jsonl or .parquet); `append` adds them to an existing file.

    Without `append` an existing file is refused rather than overwritten: snapshots are history.
    """
    try:
        if check_output(path, append) == "jsonl":
            with path.open("a" if append else "w", encoding="utf-8") as out:
                out.writelines(json.dumps(_jsonable(r), separators=(",", ":")) + "\n" for r in snapshot_rows)
        else:
            _write_parquet(snapshot_rows, path, append)
    except OSError as exc:  # checked before connecting, yet a disk can fill or a file system refuse
        raise InputError(f"Cannot write {path}: {exc.strerror or exc}", hint="Choose another --output.") from None


def check_output(path: Path, append: bool) -> str:
    """Refuse an output that `write` could not write, before any cluster is contacted; return its format."""
    kind = format_of(path)
    if ":" in path.name:  # Hadoop's paths (and so `kafka-leaders analyze`) cannot read such a name
        raise InputError(f"Snapshot file name {path.name} has a ':', which Spark cannot read back",
                         hint="Name it without ':', e.g. with the time as 20240501T1200Z.")
    if path.exists() and not append:
        raise InputError(f"Snapshot file {path} already exists",
                         hint="Pass --append to add this snapshot to it, or choose another --output.")
    if not path.parent.is_dir():
        raise InputError(f"Cannot write {path}: directory {path.parent} does not exist")
    if not os.access(path if path.exists() else path.parent, os.W_OK):
        raise InputError(f"Cannot write {path}: permission denied", hint="Choose a writable --output.")
    if kind == "parquet":
        _pyarrow_parquet()
    return kind


def read(path: Path) -> list[SnapshotRow]:
    """Every row of a snapshot file written by `write`."""
    kind = format_of(path)
    if not path.is_file():
        raise InputError(f"Snapshot file {path} does not exist")
    if kind == "parquet":
        pq = _pyarrow_parquet()
        return [_normalised(r) for r in pq.read_table(path, schema=arrow_schema()).to_pylist()]
    result = []
    with path.open(encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                raw = json.loads(line)
                result.append(_normalised({**raw, "taken_at": _parse_time(raw["taken_at"])}))
            except (ValueError, KeyError, TypeError) as exc:
                raise InputError(f"{path}:{number}: not a snapshot row ({type(exc).__name__}: {exc})") from exc
    return result


def arrow_schema() -> Any:
    """The Parquet schema of a snapshot row."""
    import pyarrow as pa

    ids = pa.list_(pa.int32())
    return pa.schema([
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("taken_at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("replicas", ids, nullable=False),
        pa.field("isr", ids, nullable=False),
        pa.field("elr", ids, nullable=False),
        pa.field("leader", pa.int32(), nullable=False),
        pa.field("min_insync_replicas", pa.int32()),
        pa.field("live_brokers", ids, nullable=False),
    ])


def _write_parquet(snapshot_rows: Sequence[SnapshotRow], path: Path, append: bool) -> None:
    """Parquet files cannot grow in place: an append rewrites old and new rows, then renames."""
    import pyarrow as pa

    pq = _pyarrow_parquet()
    table = pa.Table.from_pylist(list(snapshot_rows), schema=arrow_schema())
    if append and path.exists():
        try:
            table = pa.concat_tables([pq.read_table(path, schema=arrow_schema()), table])
        except (pa.ArrowInvalid, OSError) as exc:
            raise InputError(f"Cannot append to {path}: it is not a snapshot Parquet file ({exc})") from exc
    partial = path.with_name(f".{path.name}.partial")
    pq.write_table(table, partial)
    os.replace(partial, path)


def _pyarrow_parquet() -> Any:
    try:
        import pyarrow.parquet as pq
    except ImportError as exc:
        raise InputError("Parquet snapshots need pyarrow, which is not installed",
                         hint=f"{extra_hint('spark')} Or use a {JSONL_SUFFIX} file.") from exc
    return pq


def _jsonable(row: SnapshotRow) -> dict[str, Any]:
    return {**row, "taken_at": format_time(row["taken_at"])}


def format_time(moment: datetime) -> str:
    """UTC ISO-8601 with microseconds and a Z, e.g. 2024-05-01T12:00:00.000000Z."""
    return moment.astimezone(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _parse_time(text: str) -> datetime:
    moment = datetime.fromisoformat(text.removesuffix("Z") + "+00:00" if text.endswith("Z") else text)  # 3.10
    if moment.tzinfo is None:
        raise ValueError(f"taken_at {text!r} has no time zone")
    return moment.astimezone(timezone.utc)


def _normalised(raw: dict[str, Any]) -> SnapshotRow:
    """A row with exactly the snapshot columns and their Python types."""
    missing = [c for c in COLUMNS if c not in raw and c != "min_insync_replicas"]
    if missing:
        raise KeyError(", ".join(missing))
    taken_at = raw["taken_at"]
    return SnapshotRow(
        cluster=str(raw["cluster"]), taken_at=taken_at.astimezone(timezone.utc), topic=str(raw["topic"]),
        partition=int(raw["partition"]), replicas=[int(b) for b in raw["replicas"]],
        isr=[int(b) for b in raw["isr"]], elr=[int(b) for b in raw["elr"]], leader=int(raw["leader"]),
        min_insync_replicas=None if raw.get("min_insync_replicas") is None else int(raw["min_insync_replicas"]),
        live_brokers=[int(b) for b in raw["live_brokers"]])
