"""The `analyze` job: snapshot files in; Parquet tables, election files, a summary (and a plot) out.

Outputs under DIR:
  broker_balance/  per cluster, snapshot and broker: leaders, preferred, not_led_by_preferred,
                   imbalance_ratio, above_threshold, alive
  cluster_health/  per cluster and snapshot: partitions, not_preferred_leader, under_replicated,
                   under_min_isr, offline, fixable, brokers, live_brokers, max_imbalance_ratio,
                   worst_broker, brokers_above_threshold
  fixable/         each cluster's latest snapshot: partitions a preferred election would fix
  bad_rows/        rejected input rows with their reason and source file
  plans/<cluster>/batch-0001.json ...  election files for kafka-leader-election --path-to-json-file
  balance/<cluster>.json  with --balance-plans: leadership-balance plan files for
                   kafka-leaders balance --execute --plan-file (`balance_plans`)
  summary.json     the printed summary; imbalance.png with --plot
"""

from __future__ import annotations

import importlib
import json
import os
import re
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import replace
from pathlib import Path

import pyspark
from py4j.protocol import Py4JError, Py4JJavaError
from pyspark import SparkContext, StorageLevel
from pyspark.errors import AnalysisException, PySparkException
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F

from leader_election_cli import snapshot
from leader_election_cli.errors import ExitCode, InputError, LeaderElectionError, UnreachableError, shown
from leader_election_cli.local_files import read_regular_file
from leader_election_cli.operations import signals
from leader_election_cli.pipeline import analysis, cluster_mode, driver_jvm, files, inputs, java_errors, plans, summary
from leader_election_cli.pipeline.class_archive import ClassArchive, shares_classes
from leader_election_cli.pipeline.jvm_calls import forget_interrupted_call
from leader_election_cli.pipeline.plot import imbalance_png
from leader_election_cli.planning.balance import DEFAULT_THRESHOLD_PCT

DEFAULT_MASTER = "local[*]"
DEFAULT_BATCH_SIZE = 1000
QUIET_LOGGING = Path(__file__).with_name("log4j2-quiet.properties")
# Below this many input rows a local run is mostly the JVM's start and warm-up: its quick (C1) compiler
# alone starts Spark and runs the small jobs in about two thirds of the time; larger runs keep the
# optimising compiler (see docs/SPARK.md, "Performance").
QUICK_START_MAX_ROWS = 100_000
QUICK_START_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"
# ... and with no generated code: compiling each query's Java (Janino, then the JIT) costs more than
# running a few thousand rows through Spark's interpreted expressions and operators.
INTERPRETED = {"spark.sql.codegen.wholeStage": "false", "spark.sql.codegen.factoryMode": "NO_CODEGEN"}
# A local driver JVM runs every task itself: the throughput collector does the same work in about 10 CPU
# seconds less than G1 at 5,000,000 rows (no concurrent marking, cheaper write barriers), unless the
# user's Java options pick a collector (two would stop the JVM from starting).
THROUGHPUT_GC_JAVA_OPTIONS = "-XX:+UseParallelGC"
_PICKS_A_COLLECTOR = re.compile(r"-XX:\+Use\w+GC\b")
MAX_JAVA_CAUSES = 32  # a Java exception's causes are a few deep: the bound only guards against a cycle
MAX_SPARK_DEFAULTS_BYTES = 2**20  # a spark-defaults.conf is a few lines of settings
# Spark gives a driver 1g of heap, sized for a driver beside executors; a local driver runs every task and
# caches every row: at 5,000,000 rows 1g meant 18 full collections, 7 s of pauses and 157 MB spilled to disk.
# A local driver JVM started here gets a quarter of the memory (the JVM's own default), at most 4g.
LOCAL_DRIVER_MEMORY_MAX_MB = 4096
CGROUP_MEMORY_LIMITS = ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes")  # v2, v1


def spark_session(master: str | None = None, conf: Mapping[str, str] | None = None, verbose: bool = False,
                  connect_timeout_s: float = cluster_mode.DEFAULT_CONNECT_TIMEOUT_S,
                  small_input: bool = False, archive: ClassArchive | None = None) -> SparkSession:
    """The session to run on: `master`; else spark-submit's own master; else local[*].

    A local master runs its Python workers with this very interpreter, so they import this package, and
    is tuned for one machine (no UI, shuffle partitions from local[N], Arrow). Another master is checked
    for reachability within `connect_timeout_s` first, and gets this package shipped to its executors
    (`cluster_mode`). `conf` (e.g. --conf settings) is applied last and wins.
    Spark's own logs and progress bars stay off unless `verbose`: failures are reported in one line.
    A local driver JVM started here collects with the throughput collector (unless the user's Java options
    pick one) and, with `small_input` (`is_small_input`), compiles with C1 only and runs the queries
    interpreted (no generated code), and with `archive` maps its classes from that archive or dumps them
    into it (`class_archive`; `session` publishes it).
    """
    conf = dict(conf or {})
    master = _master(master, conf)
    settings = {"spark.app.name": "kafka-leaders analyze",
                "spark.sql.session.timeZone": "UTC",
                "spark.sql.parquet.outputTimestampType": "TIMESTAMP_MICROS",  # not legacy INT96
                "spark.log.level": "WARN" if verbose else "OFF",
                "spark.ui.showConsoleProgress": str(verbose).lower()}
    local = bool(master) and cluster_mode.is_local(master or "")
    if master:
        settings["spark.master"] = master
    if local:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        settings.update(local_settings(master, small_input, conf, starts_a_jvm()))
    shipping = bool(master) and not local and not session_running()
    if shipping:
        def users(key: str) -> bool:
            return user_sets(key, conf)

        cluster_mode.check_settings(master, users)
        cluster_mode.check_reachable(master, connect_timeout_s)
        settings.update(cluster_mode.executor_settings(master, users))
    settings.update(conf)
    builder = SparkSession.builder
    for key, value in settings.items():
        builder = builder.config(key, value)
    with spark_errors("cluster"), _driver_java_options(not verbose, quick=small_input and local,
                                                       throughput_gc=local and not picks_a_collector(conf),
                                                       archive=archive.java_options() if archive else ()):
        if starts_a_jvm():  # the driver's JVM first (outside the connect timeout), with every setting
            _import_while_the_jvm_starts()
            driver_jvm.start(settings, verbose)
        if not shipping:
            return builder.getOrCreate()
        session = cluster_mode.within(connect_timeout_s, master, builder.getOrCreate)
        session.sparkContext.addPyFile(cluster_mode.package_zip())
    return session


def local_settings(master: str, small_input: bool, conf: Mapping[str, str], new_jvm: bool) -> dict[str, str]:
    """A local master's tuning for one machine (`conf` is applied after it and wins): `small_input` runs
    interpreted, and a `new_jvm` (one this process starts) gets its heap from `local_driver_memory_mb`."""
    threads = local_threads(master)
    settings = {
        # Spark's 200 shuffle partitions suit a cluster; one machine runs far faster with a few per thread.
        "spark.sql.shuffle.partitions": str(2 * threads),
        # input splits of at most 1/(8N) of the input, so that the last wave of tasks (reading the files,
        # then every pass over the cached rows) leaves few of the N threads idle
        "spark.sql.files.minPartitionNum": str(8 * threads),
        "spark.ui.enabled": "false",  # a web server nobody looks at: 1-2 s of start
        "spark.sql.execution.arrow.pyspark.enabled": "true",
        **(INTERPRETED if small_input else {})}
    memory = local_driver_memory_mb(conf) if new_jvm else None
    if memory:
        settings["spark.driver.memory"] = f"{memory}m"
    return settings


def _import_while_the_jvm_starts() -> None:
    """PySpark's first call into the JVM that passes an argument imports `pyspark.testing.utils` (its numpy
    converter asks it whether numpy is there), and pandas with it: half a second in which the new JVM
    waits. A thread imports it while the JVM starts instead; on any failure the first call imports it."""
    def load() -> None:
        with suppress(Exception):
            importlib.import_module("pyspark.testing.utils")

    threading.Thread(target=load, name="imports", daemon=True).start()


@contextmanager
def session(master: str | None, conf: Mapping[str, str], verbose: bool, connect_timeout_s: float,
            small_input: bool, announce_archive: Callable[[], None] = lambda: None) -> Iterator[SparkSession]:
    """The command's session (`spark_session`), stopped at the end unless it was active before (say, a
    notebook's). A local driver JVM it starts maps the class archive, or dumps it (`class_archive`):
    published once the block has run without an error, after `announce_archive` (the wait is 20-30 s).
    A block that ends in an exception stops the session over a fresh Py4J connection
    (`stop_after_a_failure`); one that ends in an error after a stop signal (`signals.received`) ends in
    that signal's `Stopped`: PySpark's own clean-up calls, made as the signal's exception passes, fail
    for it (a collect's serving thread, the call site), and would have made exit 143 an exit 1."""
    shared = session_running()
    archive = _class_archive(master, conf)
    spark = spark_session(master, conf, verbose=verbose, connect_timeout_s=connect_timeout_s,
                          small_input=small_input, archive=archive)
    if archive is not None:
        archive.remember_class_path(spark.sparkContext._jvm)
    try:
        yield spark
    except BaseException as exc:
        if not shared:
            stop_after_a_failure(spark)
        signum = signals.received()
        if signum is not None and not isinstance(exc, KeyboardInterrupt):  # a stop signal cut a call into the
            raise signals.Stopped(signum) from exc  # JVM: PySpark's clean-up calls after it failed for that
        raise
    if not shared:
        spark.stop()
    if archive is not None:
        archive.publish(getattr(SparkContext._gateway, "proc", None), announce_archive)


def stop_after_a_failure(spark: SparkSession) -> None:
    """Stop `spark` while an exception (a stop signal, a failed job) ends the run: once every call the
    exception cut has ended, over a fresh Py4J connection (`jvm_calls`), and without letting a failure to
    stop hide the exception (the driver JVM exits with this process anyway: its standard input closes)."""
    forget_interrupted_call()
    with suppress(Exception):
        spark.stop()


def _class_archive(master: str | None, conf: Mapping[str, str]) -> ClassArchive | None:
    """The class archive for a local driver JVM this process starts, unless the user's Java options
    already decide on class sharing."""
    chosen = _master(master, conf) or ""
    if not (cluster_mode.is_local(chosen) and starts_a_jvm()) or shares_classes(" ".join(_users_java_options(conf))):
        return None
    return ClassArchive.for_spark(spark_home(), conf.get("spark.driver.extraClassPath", ""), _spark_defaults())


def session_running() -> bool:
    """Whether a Spark session runs in this process already (a notebook's, a test's): the command uses it
    and leaves it running. Asked of PySpark, not of the JVM, whose active session is its thread's: a call cut
    by an exception leaves Py4J a new connection, served by a thread without one."""
    return SparkContext._active_spark_context is not None


def starts_a_jvm() -> bool:
    """Whether the next session starts the driver JVM: none runs in this process yet, and this process is not
    spark-submit's (whose JVM has started already)."""
    return SparkContext._gateway is None and "PYSPARK_GATEWAY_PORT" not in os.environ


def spark_home() -> Path:
    """The Spark installation spark-submit runs from: $SPARK_HOME, else the pyspark package's own."""
    return Path(os.environ.get("SPARK_HOME") or Path(pyspark.__file__).parent)


def local_threads(master: str) -> int:
    """The worker threads of a local master: N of local[N] / local[N,F], the cores for local[*] or local."""
    found = re.match(r"local(?:-cluster)?\[(\d+|\*)", master)
    if found and found.group(1) != "*":
        return max(1, int(found.group(1)))
    return 1 if master == "local" else os.cpu_count() or 1


def _master(master: str | None, conf: Mapping[str, str]) -> str | None:
    """The master a session gets: --conf spark.master (applied last); else --master; else spark-submit's
    own (None); else local[*]."""
    return conf.get("spark.master") or master or (None if "PYSPARK_GATEWAY_PORT" in os.environ else DEFAULT_MASTER)


def is_small_input(snapshots: Sequence[str], master: str | None, conf: Mapping[str, str]) -> bool:
    """Local snapshot files of fewer than QUICK_START_MAX_ROWS rows (about), for a local master."""
    chosen = _master(master, conf) or ""
    if not chosen.startswith("local") or session_running() or _hadoop_configured(conf):
        return False
    rows = files.local_rows(snapshots, plain_paths_are_local=True)
    return rows is not None and rows < QUICK_START_MAX_ROWS


def local_driver_memory_mb(conf: Mapping[str, str]) -> int | None:
    """The heap for a local driver JVM: a quarter of the memory this machine (or its control group) has, at
    most LOCAL_DRIVER_MEMORY_MAX_MB; None (Spark's 1g) below 4 GiB, where it cannot be read, or where the user
    chooses (spark.driver.memory in `user_sets`, SPARK_DRIVER_MEMORY, --driver-memory in PYSPARK_SUBMIT_ARGS)."""
    if (user_sets("spark.driver.memory", conf) or os.environ.get("SPARK_DRIVER_MEMORY")
            or "--driver-memory" in os.environ.get("PYSPARK_SUBMIT_ARGS", "")):
        return None
    memory = _memory_bytes()
    quarter = min(memory // 4 // 2**20, LOCAL_DRIVER_MEMORY_MAX_MB) if memory else 0
    return quarter if quarter > 1024 else None


def _memory_bytes() -> int | None:
    """The memory this process may use: the machine's, or its control group's limit when lower (Linux)."""
    try:
        memory = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return None
    for limit in CGROUP_MEMORY_LIMITS:
        with suppress(OSError, ValueError):  # "max": no limit
            memory = min(memory, int(Path(limit).read_text()))
    return memory


def user_sets(key: str, conf: Mapping[str, str]) -> bool:
    """Whether the user gives Spark the setting `key`: in `conf` (--conf), spark-defaults.conf, or a --conf
    in PYSPARK_SUBMIT_ARGS."""
    return (key in conf or f"{key}=" in os.environ.get("PYSPARK_SUBMIT_ARGS", "")
            or re.search(rf"^\s*{re.escape(key)}[\s=:]", _spark_defaults(), re.MULTILINE) is not None)


def picks_a_collector(conf: Mapping[str, str]) -> bool:
    """Whether Java options the driver JVM would get choose a garbage collector."""
    return any(_PICKS_A_COLLECTOR.search(source) for source in _users_java_options(conf))


def _users_java_options(conf: Mapping[str, str]) -> list[str]:
    """Where the user gives the driver JVM Java options: the driver's Java options in `conf` or
    spark-defaults.conf, and the environment variables the launcher and Java read."""
    sources = [conf.get(key, "") for key in ("spark.driver.extraJavaOptions", "spark.driver.defaultJavaOptions")]
    sources += [os.environ.get(name, "") for name in ("SPARK_SUBMIT_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS",
                                                      "_JAVA_OPTIONS")]
    return [*sources, _spark_defaults()]


def _spark_defaults() -> str:
    """The text of the spark-defaults.conf spark-submit reads, or nothing (Spark's launcher skips anything
    but a file); one it cannot read is an InputError, as it stops the launcher too."""
    defaults = Path(os.environ.get("SPARK_CONF_DIR") or spark_home() / "conf") / "spark-defaults.conf"
    if not defaults.is_file():
        return ""
    return read_regular_file(defaults, what="Spark's defaults file", limit=MAX_SPARK_DEFAULTS_BYTES,
                             hint="Make it readable, or point SPARK_CONF_DIR at another directory.",
                             ).decode(errors="replace")


@contextmanager
def _driver_java_options(quiet: bool, quick: bool, throughput_gc: bool = False,
                         archive: Sequence[str] = ()) -> Iterator[None]:
    """A driver JVM started meanwhile logs nothing (spark-submit's has started already), when `quick`
    compiles with C1 only, with `throughput_gc` collects with the throughput collector, and gets the
    `archive` options. The settings go before the driver's own Java options (SPARK_SUBMIT_OPTS): a -D or
    -XX of a user's, spark-defaults.conf's or spark.driver.extraJavaOptions still wins, and neither is
    replaced."""
    before = os.environ.get("SPARK_SUBMIT_OPTS")
    ours = ([f"-Dlog4j2.configurationFile={QUIET_LOGGING.as_uri()}"] if quiet else []) + (
        [QUICK_START_JAVA_OPTIONS] if quick else []) + ([THROUGHPUT_GC_JAVA_OPTIONS] if throughput_gc else []) + [
        *archive]
    if ours:
        os.environ["SPARK_SUBMIT_OPTS"] = " ".join([*ours, before or ""]).strip()
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("SPARK_SUBMIT_OPTS", None)
        else:
            os.environ["SPARK_SUBMIT_OPTS"] = before


def preflight(snapshots: Sequence[str], out: str, master: str | None, conf: Mapping[str, str]) -> None:
    """The input checks that need no Spark, made before it starts (a typo costs no JVM): a master Spark
    would not run, local snapshot patterns that match nothing, an --out that is (or is below) a file, and plain
    local paths with a cluster master.
    Only where paths are surely local: a `file:` URI, or a plain path when no configuration Spark would
    read could name another default file system (and, for the first two, this process starts a local
    master). `analyze` checks everything again on Spark's own file system."""
    chosen = _master(master, conf) or ""
    if chosen:
        cluster_mode.check_master(chosen)
    plain_paths_are_local = (chosen.startswith("local")
                             and not session_running() and not _hadoop_configured(conf))
    if chosen and not cluster_mode.is_local(chosen) and not _hadoop_configured(conf):
        for what, path in (("--out", out), *(("Snapshot path", pattern) for pattern in snapshots)):
            if files.local_path(path, True) is not None:  # the default file system is the local one
                cluster_mode.refuse_driver_local(what, path, path, chosen)
    for pattern in snapshots:
        if files.matches_no_local_file(pattern, plain_paths_are_local):
            raise InputError(f"No snapshot file matches {pattern}", hint="Check the path, glob or directory.")
    local_out = files.local_path(out, plain_paths_are_local)
    # "out/" names out, and "a/../b" is b, as Hadoop's Path reads them
    directory = Path(os.path.normpath(local_out)) if local_out is not None else None
    blocked = files.non_directory(directory) if directory is not None else None
    if blocked is not None:  # a file on the way was Spark's ParentNotDirectoryException, exit 1
        what = "is a file: it must be a directory (made if missing)" if blocked == directory else \
            f"is below {shown(str(blocked))}, which is not a directory"
        raise InputError(f"--out {shown(out)} {what}", hint="Choose a directory for the tables, plans and summary.")


def _hadoop_configured(conf: Mapping[str, str]) -> bool:
    """Configuration that may point plain paths at another default file system (HDFS, S3): a --conf,
    an environment variable Spark's launcher reads, or a file in Spark's conf directory."""
    if any(key.startswith("spark.hadoop.fs.default") for key in conf):  # fs.defaultFS, fs.default.name
        return True
    if any(os.environ.get(name) for name in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_CONF_DIR", "HADOOP_HOME")):
        return True
    conf_dir = spark_home() / "conf"
    return any((conf_dir / name).exists() for name in ("spark-defaults.conf", "spark-env.sh", "core-site.xml"))


@contextmanager
def spark_errors(culprit: str | None = None) -> Iterator[None]:
    """Spark's failures as one-line errors naming the real cause (a Java exception's class and message,
    not a Py4J call) and the culprit: "input" or "output" (exit 2), "cluster" (exit 3, with the fix for a
    host name that does not resolve), else the job (exit 1); unreadable input is an input error wherever
    it happens, and so is a `localhost` that does not resolve while Spark starts."""
    try:
        yield
    except socket.gaierror as exc:  # PySpark's own accumulator server listens on "localhost"
        if culprit != "cluster" or _resolves("localhost"):
            raise
        raise InputError(f"Could not start Spark: localhost does not resolve ({exc.strerror or exc})",
                         hint="PySpark listens on localhost: map it to 127.0.0.1 in /etc/hosts.") from exc
    except (PySparkException, Py4JError) as exc:
        message = _what_went_wrong(exc)
        if "[INVALID_CONF_VALUE" in message:  # a --conf or spark-defaults.conf value (ours are valid)
            raise InputError(f"Spark refused a setting: {message}",
                             hint="Check the --conf values and spark-defaults.conf.") from exc
        if culprit == "input" or isinstance(exc, AnalysisException) or "[FAILED_READ_FILE" in message:
            raise InputError(f"Spark could not read the input: {message}",
                             hint="Check the paths, and that they hold snapshot files (kafka-leaders snapshot) "
                                  "on a file system Spark reaches.") from exc
        if culprit == "output":
            raise InputError(f"Spark could not write --out: {message}",
                             hint="Check the directory is writable on a file system Spark reaches.") from exc
        if culprit == "cluster":
            fix = java_errors.known_hint(message) or "Run again with --debug for Spark's own log."
            raise UnreachableError(f"Could not start Spark on the master: {message}", hint=fix) from exc
        raise LeaderElectionError(f"Spark job failed: {message}", hint="Run again with --debug for the details.",
                                  exit_code=ExitCode.PARTITION_FAILED) from exc


def _resolves(host: str) -> bool:
    try:
        socket.getaddrinfo(host, None)
    except socket.gaierror:
        return False
    return True


def _what_went_wrong(exc: BaseException) -> str:
    """The line that says what went wrong: a Java exception's class and message (the first one with a
    message) and its root cause's (`Encountered error while reading file X` (caused by
    `java.io.IOException: not a gzip file`)), a Python worker's exception, Spark's error-class message, or
    the first line."""
    if isinstance(exc, Py4JJavaError):
        chain = [exc.java_exception]
        while len(chain) < MAX_JAVA_CAUSES and (cause := chain[-1].getCause()) is not None:
            chain.append(cause)
        return java_errors.one_line([(java.getClass().getName(), java.getMessage() or "") for java in chain])
    text = str(exc)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for pattern in (r"^(\w+(?:Error|Exception): .+)$", r"(\[[A-Z][A-Z_.]+\] .+)$"):
        found = re.search(pattern, text, re.MULTILINE)
        if found:
            return found.group(1)[:500]
    return (lines[0] if lines else type(exc).__name__)[:500]


def _save(frame: DataFrame, path: str) -> DataFrame:
    """Write a table as Parquet and read it back, so later steps never recompute it (with its schema
    given: inferring it from the files would be one more Spark job)."""
    frame.write.mode("overwrite").parquet(path)
    return frame.sparkSession.read.schema(frame.schema).parquet(files.literal(path))


def analyze(spark: SparkSession, snapshots: Sequence[str], out: str, *, batch_size: int = DEFAULT_BATCH_SIZE,
            threshold_pct: float = DEFAULT_THRESHOLD_PCT, plot: bool = False,
            balance: bool = False) -> summary.Summary:
    """Run the whole analysis on `spark` and return its summary (also written to OUT/summary.json);
    `balance` writes leadership-balance plan files too."""
    if batch_size < 1:
        raise InputError(f"--batch-size must be at least 1, got {batch_size}")
    started = time.monotonic()
    master = spark.sparkContext.master
    given = out
    with spark_errors("output"):
        out = files.qualified(spark, out.rstrip("/") or "/")
        cluster_mode.refuse_driver_local("--out", given, out, master)
        if files.is_file(spark, out):
            raise InputError(f"--out {out} is a file: it must be a directory (made if missing)",
                             hint="Choose a directory for the tables, plans and summary.")
    with spark_errors("input"):
        for pattern in snapshots:
            cluster_mode.refuse_driver_local("Snapshot path", pattern, files.qualified(spark, pattern), master)
        json_files, parquet_files = files.find_snapshots(spark, snapshots, exclude=out)  # not our own output
    with spark_errors():
        rows = analysis.with_flags(inputs.read_snapshots(spark, json_files, parquet_files))
        rows = rows.persist(StorageLevel.MEMORY_AND_DISK)  # the files are read and the rules run once
        colliding = inputs.colliding_hashes(rows).cache()
        duplicates = None
        try:
            marked = rows  # no key hash is shared (the usual case): no partition is listed twice
            if colliding.count():  # materialised first, so that the duplicates' query knows how small it is
                duplicates = inputs.duplicate_keys(rows, colliding).cache()
                marked = inputs.mark_duplicates(rows, duplicates)
            result = _run(spark, marked, out, len(json_files) + len(parquet_files), batch_size, threshold_pct,
                          plot, balance)
        finally:
            if duplicates is not None:
                duplicates.unpersist()
            colliding.unpersist()
            rows.unpersist()
        result = replace(result, elapsed_seconds=time.monotonic() - started)
        files.write_bytes(spark, f"{out}/summary.json", json.dumps(result.to_json(), indent=2).encode())
    return result


def _run(spark: SparkSession, rows: DataFrame, out: str, input_files: int, batch_size: int,
         threshold_pct: float, plot: bool, balance: bool) -> summary.Summary:
    counted = rows.groupBy(inputs.REASON, (F.col("format_version") == snapshot.LEGACY_FORMAT_VERSION).alias("legacy"))
    reasons: dict[str | None, int] = {}
    legacy_rows = 0
    for r in counted.count().collect():
        reasons[r[inputs.REASON]] = reasons.get(r[inputs.REASON], 0) + r["count"]
        legacy_rows += r["count"] if r[inputs.REASON] is None and r["legacy"] else 0
    tables = {name: f"{out}/{name}" for name in ("broker_balance", "cluster_health", "fixable", "bad_rows")}
    # removed before the first table is written, written last: a summary marks one finished run's whole set
    files.delete_tree(spark, f"{out}/summary.json")
    (rows.where(F.col(inputs.REASON).isNotNull())
     .select(inputs.SOURCE, inputs.REASON, F.col(inputs.CORRUPT).alias("raw_record"), *snapshot.COLUMNS)
     .write.mode("overwrite").parquet(tables["bad_rows"]))
    if not reasons:
        raise InputError(f"No snapshot row in the input: its {input_files:,} file(s) are empty",
                         hint="Snapshot files come from kafka-leaders snapshot; check the paths.")
    if not reasons.get(None):
        raise InputError(f"No usable snapshot row in the input: {sum(reasons.values()):,} bad row(s), kept in "
                         f"{tables['bad_rows']}", hint="Read their reasons there; snapshot files come from "
                                                       "kafka-leaders snapshot.")
    valid = rows.where(F.col(inputs.REASON).isNull())
    brokers = _save(analysis.broker_balance(valid, threshold_pct), tables["broker_balance"])
    health = _save(analysis.cluster_health(valid, brokers), tables["cluster_health"])
    latest = analysis.latest_snapshots(rows, health).cache()
    fixable = _save(analysis.latest_fixable(valid, latest, brokers), tables["fixable"])
    plans_dir = f"{out}/plans"
    planned = plans.write_plans(spark, fixable.where(F.col("planned")), plans_dir, batch_size)
    balance_dir = f"{out}/balance"
    balanced = {}
    if balance:
        whole = _whole_latest(rows, valid, latest, any_bad=set(reasons) != {None})
        from leader_election_cli.pipeline import balance_plans  # pandas and the solver: a second of every start

        balanced = balance_plans.write_balance_plans(spark, whole, balance_dir)
    else:
        files.delete_tree(spark, balance_dir)  # no stale balance plan survives a run
    latest_clusters, unusable = summary.cluster_summaries(health, latest)
    clusters = tuple(summary.with_balance(replace(c, plan_files=planned.get(c.cluster, (0, 0))[0],
                                                  planned=planned.get(c.cluster, (0, 0))[1],
                                                  plan_dir=plans.cluster_dir(c.cluster)), balanced.get(c.cluster))
                     for c in latest_clusters)
    latest.unpersist()
    plot_path = None
    if plot:
        plot_path = f"{out}/imbalance.png"
        points = health.select("cluster", "taken_at", "max_imbalance_ratio").collect()
        files.write_bytes(spark, plot_path, imbalance_png(
            [(p.cluster, summary.utc(p.taken_at), p.max_imbalance_ratio) for p in points], threshold_pct))
    else:
        files.delete_tree(spark, f"{out}/imbalance.png")
    return summary.Summary(
        out=out, input_files=input_files, rows=sum(reasons.values()),
        bad_rows={reason: count for reason, count in reasons.items() if reason is not None},
        snapshots=sum(c.snapshots for c in clusters), threshold_pct=threshold_pct, batch_size=batch_size,
        clusters=clusters, tables=tables, plans_dir=plans_dir, plot=plot_path, unusable_latest=unusable,
        legacy_rows=legacy_rows, balance_dir=balance_dir if balance else None)


def _whole_latest(rows: DataFrame, valid: DataFrame, latest: DataFrame, any_bad: bool) -> DataFrame:
    """The rows of each cluster's latest snapshot, unless a row of it is bad: a plan from part of a
    snapshot would count only some of the leaders."""
    whole = valid.join(F.broadcast(latest.select(*analysis.KEY)), analysis.KEY)
    if not any_bad:
        return whole
    broken = (rows.where(F.col(inputs.REASON).isNotNull() & F.col("cluster").isNotNull()
                         & F.col("taken_at").isNotNull()).select(*analysis.KEY).distinct())
    return whole.join(broken, analysis.KEY, "left_anti")
