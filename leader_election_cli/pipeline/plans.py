"""Election files for each cluster's fixable partitions: `plans/<cluster>/batch-0001.json`, ...

Each file is Kafka's `{"partitions": [{"topic": ..., "partition": ...}]}` format with at most
`batch_size` partitions, sorted by topic and partition, ready for `kafka-leader-election
--path-to-json-file`. The rows stream to the driver one Spark partition at a time and leave it one
batch at a time.
"""

from __future__ import annotations

import hashlib
import itertools
import operator
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from leader_election_cli.pipeline.files import delete_tree, write_files

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


_LONGEST = 120  # a directory name of at most 129 characters (file systems allow 255 bytes)


def cluster_dir(cluster: str) -> str:
    """A directory name for a cluster: its name when that is safe and short, else a cleaned name (cut to
    120 characters) and a hash (a 5,000-character name ended in 'Mkdirs failed')."""
    cleaned = _UNSAFE.sub("_", cluster)
    if cleaned == cluster and cluster not in (".", "..") and len(cluster) <= _LONGEST:
        return cluster
    return f"{cleaned[:_LONGEST]}-{hashlib.sha256(cluster.encode()).hexdigest()[:8]}"


def batch_name(number: int) -> str:
    return f"batch-{number:04d}.json"


def election_file(entries: Iterable[str]) -> bytes:
    """Kafka's election file, one partition a line, from each partition's JSON object."""
    return ('{"partitions": [\n  ' + ",\n  ".join(entries) + "\n]}\n").encode()


def _chunks(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    """Consecutive lists of at most `size` items, taken from `items` as they come."""
    return iter(lambda: list(itertools.islice(items, size)), [])


def write_plans(spark: SparkSession, planned: DataFrame, plans_dir: str, batch_size: int
                ) -> dict[str, tuple[int, int]]:
    """Replace `plans_dir` with every cluster's election files; return (files, partitions) per cluster.

    Spark writes each partition's JSON object (`{"topic":...,"partition":...}`): one string a row
    reaches Python, not a Row to take apart and encode again.
    """
    delete_tree(spark, plans_dir)
    ordered = (planned.orderBy("cluster", "topic", "partition")
               .select("cluster", F.to_json(F.struct("topic", "partition")).alias("entry")))
    written: dict[str, tuple[int, int]] = {}

    def batches() -> Iterator[tuple[str, bytes]]:
        for cluster, rows in itertools.groupby(ordered.toLocalIterator(), key=operator.itemgetter(0)):
            for number, batch in enumerate(_chunks((row[1] for row in rows), batch_size), 1):
                written[cluster] = (number, written.get(cluster, (0, 0))[1] + len(batch))
                yield f"{cluster_dir(cluster)}/{batch_name(number)}", election_file(batch)

    write_files(spark, plans_dir, batches())
    return written
