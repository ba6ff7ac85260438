"""Running on a Spark cluster (standalone, YARN, Kubernetes) with no setup beyond a reachable master.

- The master is checked before the JVM starts: a `spark://` or `k8s://` master that refuses a TCP
  connection is an error at once; then the session must start within the connect timeout (Spark
  itself retries a standalone master's registration for a minute).
- This package is shipped to the executors as a zip (`SparkContext.addPyFile`, what Spark's Python
  package management guide recommends for pure-Python code), and their Python is chosen explicitly
  (`spark.pyspark.python`, default `python3`, Python 3.10+). Every rule is a built-in expression, so
  the executors run code of this package only for `--balance-plans` (the solver, which needs OR-Tools,
  NumPy, pandas and pyarrow there).
- A path on the driver's local file system cannot be read or written by executors on other machines:
  with a non-local master it is refused unless named as a `file:` URI (a mount every executor shares).
- What Spark would refuse only late, or never say, is refused before anything starts: `yarn` without
  Hadoop's configuration directory, a `k8s://` master without the executors' container image (Spark
  logs that in a thread of its own and the job waits for executors forever).
- YARN and Kubernetes hold a session's start until 80% of the executors have registered (up to 30 s):
  here the session starts as soon as the master runs the application, and jobs begin as executors come
  (`spark.scheduler.minRegisteredResourcesRatio` 0), so that the connect timeout measures the master.
"""

from __future__ import annotations

import atexit
import os
import re
import socket
import tempfile
import threading
import zipfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from pyspark import __version__ as SPARK_VERSION

from leader_election_cli.errors import InputError, UnreachableError

T = TypeVar("T")
DEFAULT_CONNECT_TIMEOUT_S = 15.0
DEFAULT_EXECUTOR_PYTHON = "python3"
EXECUTOR_IMAGES = ("spark.kubernetes.executor.container.image", "spark.kubernetes.container.image")
MIN_REGISTERED_RATIO = "spark.scheduler.minRegisteredResourcesRatio"
PACKAGE = Path(__file__).resolve().parents[1]


def is_local(master: str) -> bool:
    return master.startswith("local")


# Spark's own forms of a local master (SparkMasterRegex), with at least one thread: local, local[N],
# local[N,F], local-cluster[N,C,M]
_LOCAL_MASTER = re.compile(r"local|local\[(?:0*[1-9][0-9]*|\*)(?:\s*,\s*[0-9]+)?\]"
                           r"|local-cluster\[\s*[0-9]+\s*,\s*[0-9]+\s*,\s*[0-9]+\s*\]")


def check_master(master: str) -> None:
    """Refuse a master spark-submit would not run, before anything starts: one that is not yarn and does not
    start with spark, k8s or local (spark-submit's own rule), or a local master not in Spark's forms
    (`local[0]`, `local[x]`)."""
    if not (master == "yarn" or master.startswith(("spark", "k8s", "local"))):
        raise InputError(f"--master {master} is not a master Spark runs: it must be yarn or start with spark, "
                         "k8s or local", hint="Use spark://HOST:PORT, yarn, k8s://https://HOST:PORT or local[N].")
    if is_local(master) and not _LOCAL_MASTER.fullmatch(master):
        raise InputError(f"--master {master} is not a local master Spark runs",
                         hint="Use local[N] (N threads, at least 1) or local[*] (one per core); local[N,F] lets "
                              "a task fail F times.")


def master_endpoints(master: str) -> list[tuple[str, int]]:
    """The (host, port) a master URL names for a TCP check: each host of `spark://h1:7077,h2:7077`, the
    API server of `k8s://https://host:port`; none for yarn (its address is in Hadoop's configuration)."""
    if master.startswith("spark://"):
        endpoints = []
        for hostport in master[len("spark://"):].split(","):
            host, _, port = hostport.rpartition(":")
            if not host or not port.isdigit():
                raise InputError(f"--master {master} is not spark://HOST:PORT[,HOST:PORT...]")
            endpoints.append((host, int(port)))
        return endpoints
    if master.startswith("k8s://"):
        rest = master[len("k8s://"):]
        url = urlsplit(rest if "://" in rest else "https://" + rest)  # Spark's default scheme is https
        return [(url.hostname or "", url.port or (443 if url.scheme == "https" else 80))]
    return []


def check_settings(master: str, user_sets: Callable[[str], bool]) -> None:
    """Refuse a `yarn` master without HADOOP_CONF_DIR or YARN_CONF_DIR (Spark's own rule, checked here before
    its JVM starts), and a `k8s://` master without an executor image (none of EXECUTOR_IMAGES set, as
    `user_sets` tells: Spark checks it only when it builds an executor's pod)."""
    if master.startswith("yarn") and not {"HADOOP_CONF_DIR", "YARN_CONF_DIR"} & os.environ.keys():
        raise InputError(f"--master {master} needs Hadoop's client configuration, but neither HADOOP_CONF_DIR nor "
                         "YARN_CONF_DIR is set",
                         hint="Set HADOOP_CONF_DIR to the directory that holds core-site.xml and yarn-site.xml "
                              "(often /etc/hadoop/conf).")
    if master.startswith("k8s://") and not any(user_sets(key) for key in EXECUTOR_IMAGES):
        raise InputError(f"--master {master} needs the executors' container image, and "
                         f"{EXECUTOR_IMAGES[1]} is not set",
                         hint=f"Add --conf {EXECUTOR_IMAGES[1]}=IMAGE: an image with Spark {SPARK_VERSION} (the "
                              "driver's) and Python 3.10 or newer.")


def check_reachable(master: str, timeout_s: float) -> None:
    """Refuse a master none of whose endpoints accepts a TCP connection within `timeout_s` seconds."""
    endpoints = master_endpoints(master)
    failures = []
    for host, port in endpoints:
        try:
            with socket.create_connection((host, port), timeout=timeout_s):
                return
        except OSError as exc:
            failures.append(f"{host}:{port}: {exc.strerror or exc}")
    if failures:
        raise UnreachableError(f"Spark master {master} is not reachable ({'; '.join(failures)})",
                               hint="Check the URL and that the master runs; --connect-timeout SECONDS waits longer.")


def within(timeout_s: float, master: str, start: Callable[[], T]) -> T:
    """`start()` (the session's start, which on a standalone master waits a minute for the master to
    register the application) unless it takes longer than `timeout_s`: then an unreachable master.
    The start left behind runs on in a daemon thread; the command exits."""
    result: list[T] = []
    failure: list[BaseException] = []

    def run() -> None:
        try:
            result.append(start())
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=run, name="spark-session-start", daemon=True)
    thread.start()
    thread.join(timeout_s)
    if failure:
        raise failure[0]
    if not result:
        raise UnreachableError(f"Spark master {master} did not accept the application within {timeout_s:g} s",
                               hint=("Check that the ResourceManager named in yarn-site.xml (under HADOOP_CONF_DIR) "
                                     "runs and that its queue has room" if master.startswith("yarn") else
                                     "Check the URL and that the master runs")
                               + "; --connect-timeout SECONDS waits longer.")
    return result[0]


@cache
def package_zip() -> str:
    """This package as a zip for `addPyFile`: made once per process, in a temporary directory removed when
    the process exits (the driver serves the file to executors as long as its session runs)."""
    directory = tempfile.TemporaryDirectory(prefix="kafka-leaders-")
    atexit.register(directory.cleanup)
    target = Path(directory.name) / "leader_election_cli.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(PACKAGE.parent))
    return str(target)


def executor_settings(master: str, user_sets: Callable[[str], bool]) -> dict[str, str]:
    """The executors' Python, unless PYSPARK_PYTHON or the user's settings (`user_sets`) chose one; on YARN
    and Kubernetes, a session that starts without waiting for executors, unless the user's settings say."""
    settings = {}
    if not (user_sets("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON")):
        settings["spark.pyspark.python"] = DEFAULT_EXECUTOR_PYTHON
    if master.startswith(("yarn", "k8s://")) and not user_sets(MIN_REGISTERED_RATIO):
        settings[MIN_REGISTERED_RATIO] = "0"
    return settings


def refuse_driver_local(what: str, given: str, qualified: str, master: str) -> None:
    """Refuse a plain path that resolved to the driver's local file system while executors run elsewhere."""
    if is_local(master) or given.startswith("file:") or not qualified.startswith(("/", "file:")):
        return
    raise InputError(
        f"{what} {given} is on this machine's local file system, which executors of {master} cannot "
        f"{'write' if what == '--out' else 'read'}",
        hint="Use a file system every executor shares: hdfs://..., s3a://..., or a shared mount named as a "
             "file: URI (file:///mnt/shared/...).")
