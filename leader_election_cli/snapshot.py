"""Metadata snapshots: one row per partition per point in time, the input of the Spark pipeline.

A row holds what a leadership analysis needs and nothing else: its format version, the cluster (the
name it was given, and the cluster id its brokers reported), the time, the partition's replicas, ISR,
ELR and leader, the replicas a pending reassignment is adding and removing (null when none is
pending), the `min.insync.replicas` its leader applies (null when unknown) and the brokers alive at
that moment. Rows are written as JSON lines (`.jsonl`) or Parquet (`.parquet`,
via pyarrow) and read back into the same rows, or into `ClusterState`s for the pure planner.

Format versions (`format_version`; a row without one is version 1):
  1  no format_version, adding_replicas or removing_replicas column (partitions being reassigned cannot
     be told apart, so they may count as under-replicated); `min_insync_replicas` as the topic sets it,
     before the Kafka 3.7 cap; `elr` possibly missing (older snapshots)
  2  every column above; `min_insync_replicas` as the leader applies it. `cluster_id` (the id the brokers
     reported, which `balance --execute --plan-file` checks) is optional: rows written before it existed
     have none, and read as an unknown id

`row_problem` is the one validation of a raw row: `read` refuses a file at its first bad row with it,
and the Spark pipeline's column expressions give the very same reasons (a test holds both to that).
"""

from __future__ import annotations

import json
import os
import re
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypedDict

from leader_election_cli.errors import InputError, extra_hint
from leader_election_cli.local_files import make_directories, names_a_directory
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition

JSONL_SUFFIX = ".jsonl"
PARQUET_SUFFIX = ".parquet"
FORMAT_VERSION = 2  # what `rows` writes and the newest `read` and `analyze` understand
LEGACY_FORMAT_VERSION = 1  # a row without format_version
# taken_at in JSON lines: ISO-8601 with a zone, as `format_time` writes it (no epoch numbers, no naive times)
TAKEN_AT_PATTERN = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3}|\.\d{6})?(Z|[+-]\d{2}:\d{2})$"
ZONELESS_PATTERN = r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$"
NUMBER_PATTERN = r"^-?\d+(\.\d+)?([eE][+-]?\d+)?$"

# The reasons a row is refused: `row_problem` here, `pipeline.inputs` in Spark.
WRONG_TYPE = "malformed JSON or a value of the wrong type"
TAKEN_AT_ZONELESS = "taken_at has no time zone (write it as 2024-05-01T12:00:00Z)"
TAKEN_AT_NUMBER = "taken_at is a number, not an ISO-8601 time (epoch times are refused: write 2024-05-01T12:00:00Z)"
TAKEN_AT_NOT_ISO = "taken_at is not an ISO-8601 time with a zone, such as 2024-05-01T12:00:00Z"
TAKEN_AT_OUT_OF_RANGE = "taken_at is not between 1970-01-01 and 9998-12-31 (UTC)"
ILLEGAL_TOPIC = "topic is not a legal Kafka topic name (1 to 249 of a-z A-Z 0-9 . _ -, not '.' or '..')"
NEGATIVE_PARTITION = "negative partition"
MIN_ISR_BELOW_1 = "min_insync_replicas below 1"
TOPIC_ILLEGAL_CHARACTER = r"[^a-zA-Z0-9._-]"  # a legal topic has none, 1 to 249 characters, not '.' or '..'
TOPIC_LONGEST = 249
EARLIEST_S, LATEST_S = 0, 253_370_764_800  # taken_at from 1970-01-01 to before 9999-01-01 (UTC), in epoch seconds
FORMAT_VERSION_BELOW_1 = "format_version below 1"
FORMAT_VERSION_NEWER = f"format_version newer than this tool reads ({FORMAT_VERSION}): upgrade leader-election-cli"
DUPLICATE = "partition listed twice in one snapshot"
REQUIRED = ("cluster", "taken_at", "topic", "partition", "replicas", "isr", "leader", "live_brokers")
BROKER_LISTS = ("replicas", "isr", "elr", "adding_replicas", "removing_replicas", "live_brokers")


def missing(column: str) -> str:
    return f"missing {column}"


def blank(column: str) -> str:
    return f"blank {column}"


def null_broker(column: str) -> str:
    return f"null broker id in {column}"


class SnapshotRow(TypedDict):
    format_version: int
    cluster: str
    cluster_id: str | None  # the id the brokers reported; None when unknown (older rows)
    taken_at: datetime  # timezone-aware, UTC
    topic: str
    partition: int
    replicas: list[int]
    isr: list[int]
    elr: list[int]  # [] when an older snapshot has no elr column
    leader: int
    adding_replicas: list[int] | None  # a pending reassignment's; None when none is pending
    removing_replicas: list[int] | None
    min_insync_replicas: int | None
    live_brokers: list[int]


COLUMNS: tuple[str, ...] = tuple(SnapshotRow.__annotations__)


def rows(state: ClusterState, cluster: str, taken_at: datetime,
         removing: Mapping[TopicPartition, Sequence[int]] | None = None) -> list[SnapshotRow]:
    """One row per partition of `state`, sorted by topic and partition; `removing` holds the replicas
    each pending reassignment (`state.reassigning`) is removing, when read."""
    live = sorted(state.live_brokers)
    removing = removing or {}
    return [SnapshotRow(format_version=FORMAT_VERSION, cluster=cluster, cluster_id=state.cluster_id,
                        taken_at=taken_at, topic=p.topic, partition=p.partition, replicas=list(p.replicas),
                        isr=list(p.isr), elr=list(p.elr), leader=p.leader,
                        adding_replicas=list(state.reassigning[tp]) if tp in state.reassigning else None,
                        removing_replicas=list(removing.get(tp, ())) if tp in state.reassigning else None,
                        min_insync_replicas=state.min_isr(tp), live_brokers=live)
            for tp, p in sorted(state.partitions.items())]


def states(snapshot_rows: Iterable[SnapshotRow]) -> dict[tuple[str, datetime], ClusterState]:
    """The rows back as one `ClusterState` per (cluster, taken_at): what the planner reads.

    A snapshot keeps no broker addresses (each live broker gets an empty one), no controller, no mode, no
    racks and no offline log directories; a topic's min.insync.replicas is taken from one of its rows (as
    its leaders applied it); the cluster id is the rows' `cluster_id` (None when unknown).
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
        reassigning = {TopicPartition(r["topic"], r["partition"]): tuple(r["adding_replicas"])
                       for r in group if r["adding_replicas"] is not None}
        result[(cluster, taken_at)] = ClusterState(
            brokers={b: ("", 0) for b in group[0]["live_brokers"]}, controller_id=-1, partitions=partitions,
            cluster_id=group[0].get("cluster_id"), min_insync_replicas=min_isr, reassigning=reassigning)
    return result


def file_in(directory: Path, cluster: str, taken_at: datetime, kind: str = "parquet") -> Path:
    """A new snapshot file's path in `directory`: `<cluster>-<UTC time>.parquet` (or `.jsonl`), a name
    Spark can read back (no ':'; a cluster name's other characters made safe)."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", cluster).lstrip(".") or "cluster"
    stamp = taken_at.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%S%fZ")
    return directory / f"{safe}-{stamp}{PARQUET_SUFFIX if kind == 'parquet' else JSONL_SUFFIX}"


def check_directory(directory: Path, kind: str) -> None:
    """Refuse an output directory `write` could not write a new `kind` file in, before connecting."""
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"Cannot write in {directory}: permission denied", hint="Choose a writable --output.")
    if kind == "parquet":
        _pyarrow_parquet()


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
    """Every row of a snapshot file (any format version); the first bad row is an input error naming the
    file, the line (or row) and `row_problem`'s reason."""
    kind = format_of(path)
    if not path.is_file():
        raise InputError(f"Snapshot file {path} does not exist")
    if kind == "parquet":
        pq = _pyarrow_parquet()
        try:
            raws = pq.read_table(path, schema=arrow_schema()).to_pylist()
        except Exception as exc:  # pyarrow's errors share no base class
            raise InputError(f"{path}: not a snapshot Parquet file ({type(exc).__name__}: {exc})") from None
        where = "row"
    else:
        raws = []
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                try:
                    raws.append(json.loads(line) if line.strip() else None)
                except ValueError:
                    raws.append(WRONG_TYPE)
        where = "line"
    result = []
    seen: set[tuple[str, datetime, str, int]] = set()
    for number, raw in enumerate(raws, 1):
        if raw is None:
            continue
        problem = WRONG_TYPE if not isinstance(raw, dict) else row_problem(raw)
        row = None if problem else _normalised(raw)
        if row is not None:
            key = (row["cluster"], row["taken_at"], row["topic"], row["partition"])
            problem = DUPLICATE if key in seen else None
            seen.add(key)
        if problem:
            raise InputError(f"{path}:{number}: not a snapshot row: {problem}" if where == "line"
                             else f"{path}: {where} {number}: not a snapshot row: {problem}",
                             hint="Snapshot files come from kafka-leaders snapshot.")
        result.append(row)
    return result


def row_problem(raw: Mapping[str, Any]) -> str | None:
    """Why a raw row (parsed JSON, or a Parquet row) cannot be used, or None: the first problem in the
    order the Spark pipeline checks them."""
    if not _well_typed(raw):
        return WRONG_TYPE
    for column in REQUIRED:
        if raw.get(column) is None:
            return missing(column)
    for column in ("cluster", "topic"):
        if not _text(raw[column]).strip():
            return blank(column)
    topic = _text(raw["topic"])
    if re.search(TOPIC_ILLEGAL_CHARACTER, topic) or len(topic) > TOPIC_LONGEST or topic in (".", ".."):
        # (Kafka's Topic.validate: '../../t0' reached the election files, which the drop-in refuses)
        return ILLEGAL_TOPIC
    if raw["partition"] < 0:
        return NEGATIVE_PARTITION
    if raw.get("min_insync_replicas") is not None and raw["min_insync_replicas"] < 1:
        return MIN_ISR_BELOW_1
    for column in BROKER_LISTS:
        if raw.get(column) is not None and any(b is None for b in raw[column]):
            return null_broker(column)
    version = raw.get("format_version")
    if version is not None and version < 1:
        return FORMAT_VERSION_BELOW_1
    if version is not None and version > FORMAT_VERSION:
        return FORMAT_VERSION_NEWER
    return taken_at_problem(raw["taken_at"])


def taken_at_problem(taken_at: Any) -> str | None:
    """A JSON line's taken_at checked as Spark checks it (any other JSON value is read as its text);
    a datetime (from Parquet) is refused only without a zone."""
    if isinstance(taken_at, datetime):
        return TAKEN_AT_ZONELESS if taken_at.tzinfo is None else _out_of_range(taken_at)
    text = taken_at if isinstance(taken_at, str) else json.dumps(taken_at)
    if re.match(TAKEN_AT_PATTERN, text):
        try:
            parsed = _parse_time(text)
        except ValueError:  # e.g. month 13
            return TAKEN_AT_NOT_ISO
        return _out_of_range(parsed)
    if re.match(ZONELESS_PATTERN, text):
        return TAKEN_AT_ZONELESS
    if re.match(NUMBER_PATTERN, text):
        return TAKEN_AT_NUMBER
    return TAKEN_AT_NOT_ISO


def _out_of_range(taken_at: datetime) -> str | None:
    """Year 1 or 9999-12-31T23:59:59.999999Z ended in an internal error or a Spark failure."""
    try:
        seconds = taken_at.timestamp()
    except (OverflowError, ValueError, OSError):
        return TAKEN_AT_OUT_OF_RANGE
    return None if EARLIEST_S <= seconds < LATEST_S else TAKEN_AT_OUT_OF_RANGE


_INT_COLUMNS = ("format_version", "partition", "leader", "min_insync_replicas")


def _text(value: Any) -> str:
    """A string column's value as Spark's JSON reader takes it: a string, or any other JSON value's text."""
    return value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))


def _well_typed(raw: Mapping[str, Any]) -> bool:
    """Every known column null or of its type (as Spark's JSON reader with the row schema accepts it)."""
    def is_int(value: Any) -> bool:
        return isinstance(value, int) and not isinstance(value, bool) and -2**31 <= value < 2**31

    for column, value in raw.items():
        if value is None:
            continue
        if column in _INT_COLUMNS and not is_int(value):
            return False
        if column in BROKER_LISTS and not (isinstance(value, list) and all(b is None or is_int(b) for b in value)):
            return False
    return True


def arrow_schema() -> Any:
    """The Parquet schema of a snapshot row."""
    import pyarrow as pa

    ids = pa.list_(pa.int32())
    return pa.schema([
        pa.field("format_version", pa.int32()),  # null in a version 1 file
        pa.field("cluster", pa.string(), nullable=False),
        pa.field("cluster_id", pa.string()),  # optional: older rows have none
        pa.field("taken_at", pa.timestamp("us", tz="UTC"), nullable=False),
        pa.field("topic", pa.string(), nullable=False),
        pa.field("partition", pa.int32(), nullable=False),
        pa.field("replicas", ids, nullable=False),
        pa.field("isr", ids, nullable=False),
        pa.field("elr", ids),  # optional: older snapshots have none
        pa.field("leader", pa.int32(), nullable=False),
        pa.field("adding_replicas", ids),
        pa.field("removing_replicas", ids),
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
    return datetime.fromisoformat(text.removesuffix("Z") + "+00:00" if text.endswith("Z") else text)  # 3.10


def _normalised(raw: Mapping[str, Any]) -> SnapshotRow:
    """A row `row_problem` accepted, with exactly the snapshot columns and their Python types."""
    taken_at = raw["taken_at"]
    taken_at = _parse_time(taken_at) if isinstance(taken_at, str) else taken_at

    def optional(column: str) -> list[int] | None:
        return None if raw.get(column) is None else list(raw[column])

    return SnapshotRow(
        format_version=raw.get("format_version") or LEGACY_FORMAT_VERSION, cluster=_text(raw["cluster"]),
        cluster_id=None if raw.get("cluster_id") is None else _text(raw["cluster_id"]),
        taken_at=taken_at.astimezone(timezone.utc), topic=_text(raw["topic"]), partition=raw["partition"],
        replicas=list(raw["replicas"]), isr=list(raw["isr"]), elr=list(raw.get("elr") or ()), leader=raw["leader"],
        adding_replicas=optional("adding_replicas"), removing_replicas=optional("removing_replicas"),
        min_insync_replicas=raw.get("min_insync_replicas"), live_brokers=list(raw["live_brokers"]))


def check_target(written: str, file_format: str | None, append: bool) -> tuple[str, bool]:
    """Where `snapshot --output` writes (the path as written), checked before the cluster is read: (format,
    is a directory). A directory (`local_files.names_a_directory`: "snapdir/" is one, created when missing)
    gets a new file named after the cluster and time (Parquet unless `file_format`)."""
    output = Path(written)
    if names_a_directory(written):
        if append:
            raise InputError(f"--append needs a file, and {output} is a directory",
                             hint="Name a .jsonl or .parquet file, or leave --append out for a new file in it.")
        kind = file_format or "parquet"
        make_directories(output, "--output", written)
        check_directory(output, kind)
        return kind, True
    kind = check_output(output, append)
    if file_format and file_format != kind:
        raise InputError(f"--format {file_format} does not match the file name {output.name}",
                         hint="Leave --format out: a file's suffix chooses its format.")
    return kind, False
