"""Read snapshot files with an explicit schema and sort every row into valid or bad, with a reason.

The Spark schema is derived from the one Parquet schema of a snapshot row (`snapshot.arrow_schema`),
with every column nullable so that a missing value becomes a counted bad row, not a failed job. JSON
lines that do not parse, or carry a value of the wrong type, keep their text in `_corrupt_record`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema

from leader_election_cli import snapshot

CORRUPT = "_corrupt_record"
SOURCE = "source_file"
REASON = "bad_reason"
SNAPSHOT_KEY = ("cluster", "taken_at")
PARTITION_KEY = (*SNAPSHOT_KEY, "topic", "partition")
BROKER_LISTS = ("replicas", "isr", "elr", "live_brokers")


def row_schema() -> T.StructType:
    """The snapshot columns, all nullable, plus the corrupt-record column of the JSON reader."""
    columns = from_arrow_schema(snapshot.arrow_schema()).fields
    return T.StructType([T.StructField(c.name, c.dataType, True) for c in columns]
                        + [T.StructField(CORRUPT, T.StringType(), True)])


def required_columns() -> list[str]:
    """The columns a snapshot row cannot do without: the non-nullable ones of the Parquet schema."""
    return [f.name for f in snapshot.arrow_schema() if not f.nullable]


def read_snapshots(spark: SparkSession, json_files: Sequence[str], parquet_files: Sequence[str]) -> DataFrame:
    """Every input row, with its source file and, for a bad row, the reason (null for a valid row).

    Duplicates are found afterwards (`duplicate_keys`, `mark_duplicates`), from the cached rows, so
    that the files are read only once.
    """
    schema = row_schema()
    frames = []
    if json_files:
        frames.append(spark.read.schema(schema).option("mode", "PERMISSIVE")
                      .option("columnNameOfCorruptRecord", CORRUPT).json(list(json_files)))
    if parquet_files:
        frames.append(spark.read.schema(schema).parquet(*parquet_files))
    rows = reduce(DataFrame.unionByName, (f.withColumn(SOURCE, F.col("_metadata.file_path")) for f in frames))
    return _classify(rows)


def _classify(rows: DataFrame) -> DataFrame:
    """Add `bad_reason`: the first problem found in a row, or null."""
    checks: list[tuple[Column, str]] = [(F.col(CORRUPT).isNotNull(), "malformed JSON or a value of the wrong type")]
    checks += [(F.col(c).isNull(), f"missing {c}") for c in required_columns()]
    checks += [(F.trim(F.col(c)) == "", f"blank {c}") for c in ("cluster", "topic")]
    checks += [(F.col("partition") < 0, "negative partition"), (F.col("min_insync_replicas") < 1,
                                                                  "min_insync_replicas below 1")]
    checks += [(F.exists(c, lambda b: b.isNull()), f"null broker id in {c}") for c in BROKER_LISTS]
    return rows.withColumn(REASON, F.coalesce(*(F.when(problem, reason) for problem, reason in checks)))


def duplicate_keys(rows: DataFrame) -> DataFrame:
    """The partition keys that more than one valid row of one snapshot has (read `rows` from a cache)."""
    return (rows.where(F.col(REASON).isNull()).groupBy(*PARTITION_KEY).count().where(F.col("count") > 1)
            .select(*PARTITION_KEY, F.lit(True).alias("_duplicate")))


def mark_duplicates(rows: DataFrame, duplicates: DataFrame) -> DataFrame:
    """A partition listed twice in one snapshot is ambiguous: every copy becomes a bad row."""
    return (rows.join(duplicates, list(PARTITION_KEY), "left")  # not broadcast: there may be millions
            .withColumn(REASON, F.when(F.col(REASON).isNull() & F.col("_duplicate"),
                                       "partition listed twice in one snapshot").otherwise(F.col(REASON)))
            .drop("_duplicate"))
