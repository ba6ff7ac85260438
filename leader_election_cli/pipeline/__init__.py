"""The Spark pipeline behind `kafka-leaders analyze`: leadership analysis over many metadata snapshots.

- `files`: find snapshot files and write plan files on Spark's file system (local, HDFS, S3, ...).
- `inputs`: read snapshots with an explicit schema; classify bad rows.
- `rules`: the planner's predicates as Spark built-in expressions (proved equal to them by tests).
- `cluster_mode`: a non-local master: reachability, shipping this package, storage executors share.
- `analysis`: the DataFrame computations.
- `plans`: election files in batches.
- `summary`, `report`, `plot`: the final summary, its rendering and the PNG.
- `job`: the whole run; `__main__` runs it under spark-submit.

Types are `pyspark.sql.types` objects, never strings ("long"): a type string makes Spark start its SQL
parser, which nothing else here needs (0.1-0.4 s of a new JVM's start, measured).
"""
