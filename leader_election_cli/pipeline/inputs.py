"""Read snapshot files with an explicit schema and sort every row into valid or bad, with a reason.

The Spark schema is derived from the one Parquet schema of a snapshot row (`snapshot.arrow_schema`),
with every column nullable so that a missing value becomes a counted bad row, not a failed job. JSON
lines that do not parse, or carry a value of the wrong type, keep their text in `_corrupt_record`.
The checks and their reasons are `snapshot.row_problem`'s, as column expressions. A row without
format_version is version 1; a missing elr is read as empty.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from pyspark.sql import Column, DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql import types as T
from pyspark.sql.pandas.types import from_arrow_schema

from leader_election_cli import snapshot
from leader_election_cli.pipeline.files import literal

CORRUPT = "_corrupt_record"
SOURCE = "source_file"
REASON = "bad_reason"
TAKEN_AT_PROBLEM = "_taken_at_problem"
SNAPSHOT_KEY = ("cluster", "taken_at")
PARTITION_KEY = (*SNAPSHOT_KEY, "topic", "partition")
KEY_HASH = "_key_hash"


def row_schema(taken_at_text: bool = False) -> T.StructType:
    """The snapshot columns, all nullable, plus the corrupt-record column of the JSON reader; with
    `taken_at_text`, taken_at as the text it was written as (JSON lines: checked, then parsed)."""
    columns = from_arrow_schema(snapshot.arrow_schema()).fields
    return T.StructType([T.StructField(c.name, T.StringType() if taken_at_text and c.name == "taken_at"
                                       else c.dataType, True) for c in columns]
                        + [T.StructField(CORRUPT, T.StringType(), True)])


def read_snapshots(spark: SparkSession, json_files: Sequence[str], parquet_files: Sequence[str]) -> DataFrame:
    """Every input row, with its source file and, for a bad row, the reason (null for a valid row).

    Duplicates are found afterwards (`colliding_hashes`, `duplicate_keys`, `mark_duplicates`), from the cached rows, so
    that the files are read only once.
    """
    frames = []
    if json_files:
        text = (spark.read.schema(row_schema(taken_at_text=True)).option("mode", "PERMISSIVE")
                .option("columnNameOfCorruptRecord", CORRUPT).json([literal(f) for f in json_files]))
        frames.append(text.withColumn(SOURCE, F.col("_metadata.file_path"))
                      .withColumn(TAKEN_AT_PROBLEM, _taken_at_problem(F.col("taken_at")))
                      .withColumn("taken_at", F.when(F.col(TAKEN_AT_PROBLEM).isNull(),
                                                     F.try_to_timestamp(F.col("taken_at")))))
    if parquet_files:
        frames.append(spark.read.schema(row_schema()).parquet(*map(literal, parquet_files))
                      .withColumn(SOURCE, F.col("_metadata.file_path"))
                      .withColumn(TAKEN_AT_PROBLEM, F.lit(None).cast(T.StringType())))
    rows = reduce(DataFrame.unionByName, frames)
    return _classify(rows).drop(TAKEN_AT_PROBLEM)


def _taken_at_problem(text: Column) -> Column:
    """`snapshot.taken_at_problem` over a JSON line's taken_at text: the same patterns, the same reasons."""
    parsed = F.try_to_timestamp(text)
    return (F.when(text.isNull(), F.lit(None))
            .when(text.rlike(snapshot.TAKEN_AT_PATTERN),
                  F.when(parsed.isNull(), F.lit(snapshot.TAKEN_AT_NOT_ISO)))
            .when(text.rlike(snapshot.ZONELESS_PATTERN), F.lit(snapshot.TAKEN_AT_ZONELESS))
            .when(text.rlike(snapshot.NUMBER_PATTERN), F.lit(snapshot.TAKEN_AT_NUMBER))
            .otherwise(F.lit(snapshot.TAKEN_AT_NOT_ISO)))


def _absent(column: str) -> Column:
    """Null in the input (a taken_at refused as text is null too, with its own reason)."""
    if column == "taken_at":
        return F.col(column).isNull() & F.col(TAKEN_AT_PROBLEM).isNull()
    return F.col(column).isNull()


def _classify(rows: DataFrame) -> DataFrame:
    """Add `bad_reason`: the first problem found in a row, or null (`snapshot.row_problem`'s order)."""
    version = F.col("format_version")
    checks: list[tuple[Column, str]] = [(F.col(CORRUPT).isNotNull(), snapshot.WRONG_TYPE)]
    checks += [(_absent(c), snapshot.missing(c)) for c in snapshot.REQUIRED]
    checks += [(F.trim(F.col(c)) == "", snapshot.blank(c)) for c in ("cluster", "topic")]
    topic = F.col("topic")
    checks += [(topic.rlike(snapshot.TOPIC_ILLEGAL_CHARACTER) | (F.length(topic) > snapshot.TOPIC_LONGEST)
                | topic.isin(".", ".."), snapshot.ILLEGAL_TOPIC)]
    checks += [(F.col("partition") < 0, snapshot.NEGATIVE_PARTITION),
               (F.col("min_insync_replicas") < 1, snapshot.MIN_ISR_BELOW_1)]
    checks += [(F.exists(c, lambda b: b.isNull()), snapshot.null_broker(c)) for c in snapshot.BROKER_LISTS]
    checks += [(version < 1, snapshot.FORMAT_VERSION_BELOW_1), (version > snapshot.FORMAT_VERSION,
                                                               snapshot.FORMAT_VERSION_NEWER)]
    seconds = F.col("taken_at").cast(T.LongType())
    out_of_range = F.when((seconds < snapshot.EARLIEST_S) | (seconds >= snapshot.LATEST_S),
                          F.lit(snapshot.TAKEN_AT_OUT_OF_RANGE))
    reason = F.coalesce(*(F.when(problem, F.lit(text)) for problem, text in checks), F.col(TAKEN_AT_PROBLEM),
                        out_of_range)
    no_brokers = F.array().cast(T.ArrayType(T.IntegerType()))
    # an out-of-range time is no snapshot's time (9999-12-31 would be every cluster's latest snapshot), as a
    # taken_at refused as text is none
    return rows.withColumns({REASON: reason, "taken_at": F.when(out_of_range.isNull(), F.col("taken_at")),
                             "format_version": F.coalesce(version, F.lit(
        snapshot.LEGACY_FORMAT_VERSION)), "elr": F.coalesce(F.col("elr"), no_brokers)})


def colliding_hashes(rows: DataFrame) -> DataFrame:
    """The 64-bit hashes of the partition keys that more than one valid row has (read `rows` from a
    cache): a shuffle of one long per row instead of the four key columns. Usually empty; equal keys
    always collide, and `duplicate_keys` tells them from mere hash collisions."""
    return (rows.where(F.col(REASON).isNull()).groupBy(_key_hash().alias(KEY_HASH)).count()
            .where(F.col("count") > 1).select(KEY_HASH))


def duplicate_keys(rows: DataFrame, colliding: DataFrame) -> DataFrame:
    """The partition keys that more than one valid row of one snapshot has, among the rows whose key
    hash is `colliding` (`colliding_hashes`, materialised: when it is small, as it nearly always is,
    only those rows are grouped, not every row)."""
    candidates = rows.where(F.col(REASON).isNull()).join(colliding, _key_hash() == colliding[KEY_HASH], "left_semi")
    return (candidates.groupBy(*PARTITION_KEY).count().where(F.col("count") > 1)
            .select(*PARTITION_KEY, F.lit(True).alias("_duplicate")))


def _key_hash() -> Column:
    return F.xxhash64(*PARTITION_KEY)


def mark_duplicates(rows: DataFrame, duplicates: DataFrame) -> DataFrame:
    """A partition listed twice in one snapshot is ambiguous: every copy becomes a bad row."""
    return (rows.join(duplicates, list(PARTITION_KEY), "left")  # not broadcast: there may be millions
            .withColumn(REASON, F.when(F.col(REASON).isNull() & F.col("_duplicate"),
                                       snapshot.DUPLICATE).otherwise(F.col(REASON)))
            .drop("_duplicate"))
