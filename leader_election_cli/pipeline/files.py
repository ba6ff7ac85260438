"""Files on whatever file system Spark uses (local, HDFS, S3, ...), through Hadoop's FileSystem API.

The driver finds the snapshot files and writes the plan files and the plot with the same file system
Spark reads and writes Parquet with, so `--out hdfs://...` or `s3a://...` works unchanged on a cluster.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from py4j.java_gateway import is_instance_of
from pyspark.sql import SparkSession

from leader_election_cli.errors import InputError

JSON_SUFFIXES = (".jsonl", ".jsonl.gz")
PARQUET_SUFFIXES = (".parquet",)
_GLOB = re.compile(r"[\\{}\[\]*?]")  # Hadoop's glob characters (GlobPattern)


def _path(spark: SparkSession, uri: str) -> tuple[Any, Any]:
    """A Hadoop Path and its FileSystem (the local one without its .crc checksum files)."""
    jvm: Any = spark._jvm
    path = jvm.org.apache.hadoop.fs.Path(uri)
    fs = path.getFileSystem(spark._jsc.hadoopConfiguration())
    if is_instance_of(spark.sparkContext._gateway, fs, "org.apache.hadoop.fs.ChecksumFileSystem"):
        fs = fs.getRawFileSystem()
    return path, fs


def find_snapshots(spark: SparkSession, patterns: Iterable[str], exclude: str | None = None,
                   ) -> tuple[list[str], list[str]]:
    """Expand files, directories (recursively) and globs into (JSON lines files, Parquet files).

    Hidden files (`.x`, `_SUCCESS`) found by a glob or inside a directory are skipped, and so are other
    suffixes found by a glob or inside directories, and anything below `exclude` (the run's own output
    directory); a pattern that matches nothing, or a file named explicitly with an unknown suffix, is an
    input error. A pattern with glob characters that matches nothing as a glob but names an existing path
    (a directory `snapshots[eu]`) is that path, as a shell leaves a pattern that matches nothing.
    """
    json_files: set[str] = set()
    parquet_files: set[str] = set()
    if exclude:  # in the form the listings below use (file:/..., hdfs://...)
        excluded, excluded_fs = _path(spark, exclude)
        exclude = excluded_fs.makeQualified(excluded).toString()
    for pattern in patterns:
        path, fs = _path(spark, pattern)
        matches = fs.globStatus(path)
        is_glob = any(char in pattern for char in "*?[{")
        if not matches and _GLOB.search(pattern):  # no match as a glob: the path as named, if it exists
            path, fs = _path(spark, literal(pattern))
            matches, is_glob = fs.globStatus(path), False
        if not matches:
            raise InputError(f"No snapshot file matches {pattern}", hint="Check the path, glob or directory.")
        for status in matches:
            if is_glob and _hidden(status.getPath().toString()):
                continue
            if status.isDirectory():
                listing = fs.listFiles(status.getPath(), True)
                found = [listing.next().getPath() for _ in iter(listing.hasNext, False)]
                names = [p.toString() for p in found if not _hidden(p.toString(), status.getPath().toString())]
            else:
                names = [status.getPath().toString()]
                if not names[0].endswith(JSON_SUFFIXES + PARQUET_SUFFIXES):
                    if is_glob:
                        continue
                    raise InputError(f"Unsupported snapshot file {names[0]}",
                                     hint="Snapshot files end in .jsonl, .jsonl.gz or .parquet.")
            if exclude:
                names = [n for n in names if not (n + "/").startswith(exclude.rstrip("/") + "/")]
            json_files.update(n for n in names if n.endswith(JSON_SUFFIXES))
            parquet_files.update(n for n in names if n.endswith(PARQUET_SUFFIXES))
    if not json_files and not parquet_files:
        raise InputError("No snapshot files (.jsonl, .jsonl.gz, .parquet) found in " + ", ".join(patterns))
    return sorted(json_files), sorted(parquet_files)


def local_path(uri: str, plain_paths_are_local: bool) -> str | None:
    """The local path `uri` names, read as Hadoop's Path reads it, or None when it may be on another
    file system (another scheme, a `file:` URI with a host, a plain path that may not be local)."""
    colon, slash = uri.find(":"), uri.find("/")
    if colon == -1 or -1 < slash < colon:  # no scheme
        return uri if plain_paths_are_local else None
    if uri[:colon] != "file":
        return None
    path = uri[colon + 1:]
    if path.startswith("//"):  # an authority: only an empty one is surely this machine
        authority, _, rest = path[2:].partition("/")
        return None if authority else "/" + rest
    return path


def matches_no_local_file(pattern: str, plain_paths_are_local: bool) -> bool:
    """A local file pattern that matches nothing. Hadoop globs that Python reads otherwise ({a,b}, [^a],
    escapes) are not judged here."""
    path = local_path(pattern, plain_paths_are_local)
    if path is None or any(token in path for token in ("{", "[^", "\\")):
        return False
    return not _local_matches(path)


def _local_matches(path: str) -> list[str]:
    """What a local glob matches, as Hadoop's does (but for dot files: a glob's are skipped there anyway), or
    the path as named when that exists (`find_snapshots`)."""
    return glob.glob(path) or ([path] if os.path.lexists(path) else [])


JSON_BYTES_PER_ROW = 200  # a snapshot row as a JSON line is 150-300 bytes
GZIP_RATIO = 10


def local_rows(patterns: Iterable[str], plain_paths_are_local: bool) -> int | None:
    """About how many rows the snapshot files `patterns` hold (Parquet: the footers' counts; JSON lines:
    from their size), or None when any pattern may not be on this machine's file system."""
    total = 0
    for pattern in patterns:
        path = local_path(pattern, plain_paths_are_local)
        if path is None:
            return None
        for match in _local_matches(path):
            below = os.path.join(glob.escape(match), "**", "*")  # the directory as named, then every file below
            found = glob.glob(below, recursive=True) if os.path.isdir(match) else [match]
            for name in found:
                total += _rows_in(name)
    return total


def _rows_in(name: str) -> int:
    if name.endswith(PARQUET_SUFFIXES):
        import pyarrow.parquet as pq

        try:
            return pq.ParquetFile(name).metadata.num_rows
        except Exception:  # not Parquet after all: Spark names the problem later
            return 0
    if name.endswith(JSON_SUFFIXES):
        size = os.path.getsize(name)
        return size * (GZIP_RATIO if name.endswith(".gz") else 1) // JSON_BYTES_PER_ROW
    return 0


def non_directory(directory: Path) -> Path | None:
    """What keeps the local `directory` from being one: itself, or a directory on its way, that exists and
    is not a directory; None if none does."""
    return next((level for level in (directory, *directory.parents)
                 if os.path.exists(level) and not os.path.isdir(level)), None)


def _hidden(uri: str, root: str = "") -> bool:
    """A file, or a directory on its way below `root`, named `.x` or `_x`: Spark's and Hadoop's
    `_temporary`, `.staging`, `_SUCCESS`, files still being written."""
    below = uri[len(root):] if root and uri.startswith(root) else uri.rstrip("/").rsplit("/", 1)[-1]
    return any(part.startswith((".", "_")) for part in below.strip("/").split("/") if part)


def literal(uri: str) -> str:
    """`uri` for Spark's readers, which read a path as a glob: its pattern characters escaped, so that a
    file or directory named, say, `out[1]` is read as named."""
    return _GLOB.sub(r"\\\g<0>", uri)


def write_bytes(spark: SparkSession, uri: str, data: bytes) -> None:
    """Create or replace the file at `uri` (parent directories are created)."""
    path, fs = _path(spark, uri)
    _write(fs, path, data)


def write_files(spark: SparkSession, directory: str, contents: Iterable[tuple[str, bytes]]) -> None:
    """Create or replace each (relative name, data) of `contents` below `directory`, as they come: the
    file system is looked up once, not once a file (each look-up is several calls into the JVM)."""
    root, fs = _path(spark, directory)
    make_path: Any = spark._jvm.org.apache.hadoop.fs.Path  # type: ignore[union-attr]
    for name, data in contents:
        _write(fs, make_path(root, name), data)


def _write(fs: Any, path: Any, data: bytes) -> None:
    stream = fs.create(path, True)
    try:
        stream.write(bytearray(data))
    finally:
        stream.close()


def delete_tree(spark: SparkSession, uri: str) -> None:
    """Remove a file or directory tree if it exists (stale plan files must never survive a run)."""
    path, fs = _path(spark, uri)
    fs.delete(path, True)


def is_file(spark: SparkSession, uri: str) -> bool:
    """An existing file (not a directory) at `uri`."""
    path, fs = _path(spark, uri)
    return bool(fs.exists(path)) and bool(fs.getFileStatus(path).isFile())


def qualified(spark: SparkSession, uri: str) -> str:
    """`uri` made absolute: a plain path that is on the local file system stays a plain path; anything
    else becomes a full URI (hdfs://..., file:/... for a file: URI, whatever the default file system)."""
    path, fs = _path(spark, uri)
    full = fs.makeQualified(path)
    plain = full.toUri().getScheme() == "file" and not uri.startswith("file:")
    return full.toUri().getPath() if plain else full.toString()
