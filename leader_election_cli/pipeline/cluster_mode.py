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
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import zipfile
from collections.abc import Callable, Mapping
from functools import cache
from pathlib import Path
from typing import TypeVar
from urllib.parse import urlsplit

from leader_election_cli.errors import InputError, UnreachableError

T = TypeVar("T")
DEFAULT_CONNECT_TIMEOUT_S = 15.0
DEFAULT_EXECUTOR_PYTHON = "python3"
PACKAGE = Path(__file__).resolve().parents[1]


def is_local(master: str) -> bool:
    return master.startswith("local")


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
                               hint="Check the URL and that the master runs; --connect-timeout SECONDS waits longer.")
    return result[0]


@cache
def package_zip() -> str:
    """This package as a zip for `addPyFile` (made once per process, in a temporary directory)."""
    target = Path(tempfile.mkdtemp(prefix="kafka-leaders-")) / "leader_election_cli.zip"
    with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in sorted(PACKAGE.rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                archive.write(path, path.relative_to(PACKAGE.parent))
    return str(target)


def executor_settings(conf: Mapping[str, str]) -> dict[str, str]:
    """The executors' Python, unless --conf or PYSPARK_PYTHON chose one."""
    if "spark.pyspark.python" in conf or os.environ.get("PYSPARK_PYTHON"):
        return {}
    return {"spark.pyspark.python": DEFAULT_EXECUTOR_PYTHON}


def refuse_driver_local(what: str, given: str, qualified: str, master: str) -> None:
    """Refuse a plain path that resolved to the driver's local file system while executors run elsewhere."""
    if is_local(master) or given.startswith("file:") or not qualified.startswith(("/", "file:")):
        return
    raise InputError(
        f"{what} {given} is on this machine's local file system, which executors of {master} cannot "
        f"{'write' if what == '--out' else 'read'}",
        hint="Use a file system every executor shares: hdfs://..., s3a://..., or a shared mount named as a "
             "file: URI (file:///mnt/shared/...).")
