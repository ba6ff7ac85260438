"""Election files for each cluster's fixable partitions: `plans/<cluster>/batch-0001.json`, ...

Each file is Kafka's `{"partitions": [{"topic": ..., "partition": ...}]}` format with at most
`batch_size` partitions, sorted by topic and partition, ready for `kafka-leader-election
--path-to-json-file`. The rows stream to the driver one Spark partition at a time and leave it one
batch at a time.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

from pyspark.sql import DataFrame, SparkSession

from leader_election_cli.pipeline.files import delete_tree, write_bytes

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def cluster_dir(cluster: str) -> str:
    """A directory name for a cluster: its name when that is safe, else a cleaned name and a hash."""
    cleaned = _UNSAFE.sub("_", cluster)
    if cleaned == cluster and cluster not in (".", ".."):
        return cluster
    return f"{cleaned}-{hashlib.sha256(cluster.encode()).hexdigest()[:8]}"


def batch_name(number: int) -> str:
    return f"batch-{number:04d}.json"


def election_file(partitions: Iterable[dict[str, Any]]) -> bytes:
    return (json.dumps({"partitions": list(partitions)}, indent=2) + "\n").encode()


def _chunks(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    """Consecutive lists of at most `size` items, taken from `items` as they come."""
    return iter(lambda: list(itertools.islice(items, size)), [])


def write_plans(spark: SparkSession, planned: DataFrame, plans_dir: str, batch_size: int
                ) -> dict[str, tuple[int, int]]:
    """Replace `plans_dir` with every cluster's election files; return (files, partitions) per cluster."""
    delete_tree(spark, plans_dir)
    ordered = planned.select("cluster", "topic", "partition").orderBy("cluster", "topic", "partition")
    written: dict[str, tuple[int, int]] = {}
    for cluster, rows in itertools.groupby(ordered.toLocalIterator(), key=lambda row: row.cluster):
        partitions = ({"topic": row.topic, "partition": row.partition} for row in rows)
        total = 0
        for number, batch in enumerate(_chunks(partitions, batch_size), 1):
            write_bytes(spark, f"{plans_dir}/{cluster_dir(cluster)}/{batch_name(number)}", election_file(batch))
            total += len(batch)
            written[cluster] = (number, total)
    return written
