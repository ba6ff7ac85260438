"""`kafka-leaders analyze --master spark://...` on a real Spark standalone cluster: a master and two
workers started here from the pyspark installation's own `spark-class`, on 127.0.0.1. Their executors
get no help: a plain `python3` without this package. The results, balance plans included, must be
identical to a local run's. The balance plans run the solver in the executors' Python, which needs
OR-Tools, NumPy, pandas and pyarrow there (docs/SPARK.md): the cluster run gets exactly those
distributions and what they require, linked from this environment into one directory on the
executors' PYTHONPATH (what a packed environment in `spark.archives` gives a real cluster).
"""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

pyspark = pytest.importorskip("pyspark")
pq = pytest.importorskip("pyarrow.parquet")

from leader_election_cli import snapshot  # noqa: E402
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition  # noqa: E402
from leader_election_cli.pipeline import cluster_mode, job  # noqa: E402

pytestmark = pytest.mark.spark

T0 = datetime(2024, 5, 1, tzinfo=timezone.utc)
KAFKA_LEADERS = str(Path(sys.executable).parent / "kafka-leaders")


def started_ports(log: Path) -> dict[str, int]:
    """The ports a Spark daemon's services bound, as its log says ("Successfully started service 'sparkMaster'
    on port 41234."): each is started on port 0, so the system picks a free one as it binds (a port picked
    before, then closed, could be taken by another test's server meanwhile: Spark then took the next one)."""
    text = log.read_text(errors="replace") if log.exists() else ""
    return {name: int(port) for name, port in re.findall(r"Successfully started service '(\w+)' on port (\d+)", text)}


def plain_environment(work: Path) -> dict[str, str]:
    """Spark's daemons without this project's virtualenv: its python3 cannot import leader_election_cli."""
    venv_bin = str(Path(sys.executable).parent)
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("PYTHONPATH", "VIRTUAL_ENV", "PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}
    environment.update(PATH=os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep) if p != venv_bin),
                       SPARK_HOME=str(Path(pyspark.__file__).parent), SPARK_LOCAL_IP="127.0.0.1",
                       SPARK_DAEMON_MEMORY="256m", SPARK_LOG_DIR=str(work / "logs"),
                       SPARK_WORKER_DIR=str(work / "worker"))
    return environment


def wait_for(condition, what: str, seconds: float = 120) -> None:
    """Until `condition()` holds (a state, polled), at most `seconds`: a JVM's start takes 5 s on an idle
    machine and several times that on a busy one."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.5)
    pytest.fail(f"{what} within {seconds} s")


def alive_workers(ui_port: int) -> int:
    """The workers the master's web UI reports; -1 until it answers with its JSON (under load it first
    answered /json/ with an HTML page, once in a whole-suite run)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{ui_port}/json/", timeout=2) as answer:
            return int(json.load(answer).get("aliveworkers", 0))
    except (OSError, ValueError):  # ValueError: not JSON (yet)
        return -1


@pytest.fixture(scope="module")
def standalone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """spark://127.0.0.1:PORT with two workers of one core each; every process is stopped afterwards."""
    work = tmp_path_factory.mktemp("standalone")
    environment = plain_environment(work)
    spark_class = str(Path(pyspark.__file__).parent / "bin" / "spark-class")
    processes = []

    def start(*args: str, log: str) -> None:
        with open(work / log, "wb") as output:  # the child keeps its own descriptor
            processes.append(subprocess.Popen([spark_class, *args], env=environment, cwd=work, stdout=output,
                                              stderr=subprocess.STDOUT, start_new_session=True))

    try:
        start("org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port", "0", "--webui-port", "0",
              log="master.log")
        wait_for(lambda: {"sparkMaster", "MasterUI"} <= set(started_ports(work / "master.log")),
                 "the master did not start")
        ports = started_ports(work / "master.log")
        master, ui_port = f"spark://127.0.0.1:{ports['sparkMaster']}", ports["MasterUI"]
        wait_for(lambda: alive_workers(ui_port) >= 0, "the master did not answer")
        for number in (1, 2):
            start("org.apache.spark.deploy.worker.Worker", master, "--host", "127.0.0.1", "--port", "0",
                  "--webui-port", "0", "--cores", "1", "--memory", "768m",
                  "--work-dir", str(work / f"worker-{number}"), log=f"worker-{number}.log")
        wait_for(lambda: alive_workers(ui_port) == 2, "two workers did not register")
        yield master
    finally:
        for process in processes:  # each in its own session: the group holds its executors too
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
        for process in processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


# What docs/SPARK.md says the executors' Python needs for --balance-plans, besides this package's zip.
EXECUTOR_REQUIREMENTS = ("ortools", "numpy", "pandas", "pyarrow")


@pytest.fixture(scope="module")
def executor_libraries(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A directory linking this environment's EXECUTOR_REQUIREMENTS and the distributions they require
    (not this package, nor any other of its dependencies), for the executors' PYTHONPATH."""
    target = tmp_path_factory.mktemp("executor-libraries")
    wanted, seen = [canonicalize_name(name) for name in EXECUTOR_REQUIREMENTS], set()
    while wanted:
        name = wanted.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            distribution = importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:  # a requirement of another platform or Python
            continue
        for text in distribution.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                wanted.append(canonicalize_name(requirement.name))
        for top in {file.parts[0] for file in distribution.files or ()} - {"..", "__pycache__"}:
            if not (target / top).exists():
                (target / top).symlink_to(distribution.locate_file(top))
    assert not list(target.glob("leader_election_cli*")) and (target / "ortools").exists()
    return str(target)


def fleet() -> list[snapshot.SnapshotRow]:
    """Two clusters: a dead broker, a pending reassignment, an RF=1 topic, an ELR, leaders off preferred."""
    def tp(topic: str, partition: int) -> TopicPartition:
        return TopicPartition(topic, partition)

    east = ClusterState(brokers={1: ("", 0), 2: ("", 0), 3: ("", 0)}, controller_id=1, partitions={
        tp("orders", 0): PartitionState("orders", 0, 2, (1, 2, 3), (1, 2, 3)),
        tp("orders", 1): PartitionState("orders", 1, 3, (2, 3, 1), (3, 1)),
        tp("orders", 2): PartitionState("orders", 2, 3, (3, 1, 2, 4), (3, 1, 2)),
        tp("logs", 0): PartitionState("logs", 0, 1, (1,), (1,))},
        min_insync_replicas={"orders": 2, "logs": 2}, min_isr_capped=True,
        reassigning={tp("orders", 2): (4,)})
    west = ClusterState(brokers={1: ("", 0), 2: ("", 0)}, controller_id=1, partitions={
        tp("a", p): PartitionState("a", p, 1 if p % 2 else -1, (3, 1, 2) if p % 3 else (1, 2, 3),
                                   (1,) if p % 2 else (), (2,) if p % 2 == 0 else ()) for p in range(12)},
        min_insync_replicas={"a": 2})
    return [*snapshot.rows(east, "east", T0), *snapshot.rows(east, "east", T0 + timedelta(hours=1)),
            *snapshot.rows(west, "west", T0)]


SETTINGS = {"spark.executor.memory": "512m", "spark.cores.max": "2", "spark.sql.shuffle.partitions": "4"}


def driver_environment() -> dict[str, str]:
    """The driver's, without a Python for the executors (a local session in this process may have set one)."""
    return {key: value for key, value in os.environ.items() if key not in ("PYSPARK_PYTHON", "PYSPARK_DRIVER_PYTHON")}


def analyze(processes, source: Path, out: Path, master: str) -> subprocess.Popen[str]:
    """The command, as an operator runs it, but with the JVM's own class sharing: the dump of a class
    archive (test_pipeline_class_archive.py) would add about 40 s to it. (`processes`: conftest.py's,
    which stops the run and its JVM whatever the test's end.)"""
    settings = [item for key, value in {**SETTINGS, "spark.driver.extraJavaOptions": "-Xshare:auto"}.items()
                for item in ("--conf", f"{key}={value}")]
    return processes.start([KAFKA_LEADERS, "analyze", source.as_uri(), "--out", out.as_uri(), "--master", master,
                            "--threshold", "0", "--batch-size", "2", "--balance-plans", *settings,
                            "--connect-timeout", "120"],  # a session start, on a machine shared and busy
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=driver_environment())


# The command's own session and job, then Python on the executors: where do they import the package from?
# And the driver JVM's heap: spark.driver.memory applies only when the JVM starts.
ON_THE_CLUSTER = """
import json, sys
from leader_election_cli.pipeline import job
spark = job.spark_session(sys.argv[1], json.loads(sys.argv[4]), connect_timeout_s=120)
job.analyze(spark, [sys.argv[2]], sys.argv[3], batch_size=2, threshold_pct=0, balance=True)
where = spark.sparkContext.parallelize(range(2), 2).map(
    lambda _: (__import__("leader_election_cli").__file__, __import__("sys").executable)).collect()
heap = spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory()
print(json.dumps({"executors": where, "driver_heap": heap}))
"""
DRIVER_MEMORY_MB = 600


def analyze_on_the_cluster(processes, source: Path, out: Path, master: str, libraries: str,
                           temporary: Path) -> subprocess.Popen[str]:
    """The job in a driver process of its own, whose temporary files go to `temporary` (TMPDIR)."""
    settings = {**SETTINGS, "spark.executorEnv.PYTHONPATH": libraries, "spark.driver.memory": f"{DRIVER_MEMORY_MB}m"}
    return processes.start([sys.executable, "-c", ON_THE_CLUSTER, master, source.as_uri(), out.as_uri(),
                            json.dumps(settings)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                           env={**driver_environment(), "TMPDIR": str(temporary)})


def finished(process: subprocess.Popen[str]) -> str:
    """The run's stdout, once it has exited 0 (bounded by the test's timeout)."""
    stdout, stderr = process.communicate()
    assert process.returncode == 0, stderr
    return stdout


def outputs(out: Path) -> dict:
    """Every result of a run, without where it was written, when, or how long it took."""
    def here(text: str) -> str:
        return text.replace(out.as_uri(), "OUT").replace(f"file:{out}", "OUT")

    summary = json.loads(here((out / "summary.json").read_text()))
    summary.pop("elapsed_seconds")
    tables = {name: sorted(json.dumps(row, default=str, sort_keys=True)
                           for row in pq.read_table(out / name).to_pylist())
              for name in ("broker_balance", "cluster_health", "fixable", "bad_rows")}
    plans = {str(path.relative_to(out)): path.read_text() for path in sorted((out / "plans").rglob("*.json"))}
    balance = {str(path.relative_to(out)): {**json.loads(here(path.read_text())), "created_at": None}
               for path in sorted((out / "balance").glob("*.json"))}
    return {"summary": summary, "tables": tables, "plans": plans, "balance": balance}


@pytest.mark.timeout(600)  # the cluster's start (its fixture) too: three JVMs, then two runs side by side
def test_a_standalone_cluster_without_the_package_gives_the_local_results(standalone: str, executor_libraries: str,
                                                                         tmp_path: Path, processes) -> None:
    source = tmp_path / "fleet.jsonl"
    snapshot.write(fleet(), source)
    with source.open("a") as lines:
        lines.write("not a snapshot row\n")

    local = analyze(processes, source, tmp_path / "local", "local[2]")  # side by side: the machine may be slow
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    clustered = analyze_on_the_cluster(processes, source, tmp_path / "cluster", standalone, executor_libraries,
                                       temporary)
    finished(local)
    run = json.loads(finished(clustered).splitlines()[-1])
    executors = run["executors"]

    assert outputs(tmp_path / "cluster") == outputs(tmp_path / "local")
    cluster_summary = json.loads((tmp_path / "cluster" / "summary.json").read_text())
    assert cluster_summary["bad_row_count"] == 1 and len(cluster_summary["clusters"]) == 2
    assert any((tmp_path / "cluster" / "plans").rglob("batch-0001.json"))
    # one balance plan per cluster (the solver ran on the executors), and one that changes something
    plans = outputs(tmp_path / "cluster")["balance"]
    assert sorted(plans) == ["balance/east.json", "balance/west.json"]
    assert any(plan["partitions"] for plan in plans.values())
    assert all(c["balance_plan"] for c in cluster_summary["clusters"])
    # the executors' Python is the plain python3, and the package it imports is the zip shipped to them
    assert len(executors) == 2
    for package, python in executors:
        assert "leader_election_cli.zip" in package and not python.startswith(str(Path(sys.executable).parent))
    # ... and the zip the driver made for them is gone with the driver (it was left behind in /tmp, a run each)
    assert not list(temporary.glob("kafka-leaders-*"))
    # the driver JVM started with the session's settings (it started with none with a cluster master: 1g)
    assert DRIVER_MEMORY_MB * 0.8 < run["driver_heap"] / 2**20 <= DRIVER_MEMORY_MB


def test_a_driver_local_out_is_refused_with_a_cluster_master(standalone: str, tmp_path: Path, processes) -> None:
    source = tmp_path / "fleet.jsonl"
    snapshot.write(fleet(), source)
    result = processes.run([KAFKA_LEADERS, "analyze", str(source), "--out", str(tmp_path / "out"),
                            "--master", standalone], text=True, timeout=60, env=driver_environment())
    assert result.returncode == 2
    assert result.stderr.startswith(f"--out {tmp_path / 'out'} is on this machine's local file system")
    assert "hdfs://" in result.stderr and "s3a://" in result.stderr and "file:///" in result.stderr


def test_an_unreachable_master_fails_within_the_connect_timeout(tmp_path: Path, processes) -> None:
    """A port that accepts connections but is no Spark master: the session never starts."""
    source = tmp_path / "fleet.jsonl"
    snapshot.write(fleet(), source)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        result = processes.run([KAFKA_LEADERS, "analyze", source.as_uri(), "--out", (tmp_path / "o").as_uri(),
                                "--master", f"spark://127.0.0.1:{silent.getsockname()[1]}", "--connect-timeout", "2"],
                               text=True, timeout=120)
    assert result.returncode == 3
    assert "did not accept the application within 2 s" in result.stderr and "Traceback" not in result.stderr


def test_a_setting_counts_as_the_users_in_conf_spark_defaults_or_pyspark_submit_args(tmp_path: Path,
                                                                                    monkeypatch) -> None:
    """`job.user_sets`: what the user sets wins over the command's defaults and decides its checks."""
    monkeypatch.setenv("SPARK_CONF_DIR", str(tmp_path))
    monkeypatch.delenv("PYSPARK_SUBMIT_ARGS", raising=False)
    key = "spark.kubernetes.container.image"
    assert not job.user_sets(key, {})
    assert job.user_sets(key, {key: "img"})
    (tmp_path / "spark-defaults.conf").write_text(f"{key}.pullPolicy Always\n# {key} commented\n")
    assert not job.user_sets(key, {})  # a longer key, a comment
    for line in (f"{key} img", f"  {key}=img", f"{key}\timg"):
        (tmp_path / "spark-defaults.conf").write_text(f"spark.master yarn\n{line}\n")
        assert job.user_sets(key, {})
    (tmp_path / "spark-defaults.conf").unlink()
    monkeypatch.setenv("PYSPARK_SUBMIT_ARGS", f"--conf {key}=img pyspark-shell")
    assert job.user_sets(key, {})


def test_yarn_and_kubernetes_sessions_start_without_waiting_for_executors_unless_the_user_says() -> None:
    """Spark holds a YARN or Kubernetes session's start until 80% of the executors registered (up to 30 s),
    longer than the connect timeout; the executors' Python is python3 unless the user chose one."""
    def nothing(key: str) -> bool:
        return False

    ratio = {"spark.scheduler.minRegisteredResourcesRatio": "0"}
    python = {"spark.pyspark.python": "python3"}
    assert cluster_mode.executor_settings("yarn", nothing) == {**python, **ratio}
    assert cluster_mode.executor_settings("k8s://https://api:6443", nothing) == {**python, **ratio}
    assert cluster_mode.executor_settings("spark://h:7077", nothing) == python
    assert cluster_mode.executor_settings("yarn", lambda key: key in ratio) == python
    assert cluster_mode.executor_settings("spark://h:7077", lambda key: key in python) == {}


@pytest.mark.parametrize(("master", "environment", "expected"), [
    ("yarn", {}, "--master yarn needs Hadoop's client configuration, but neither HADOOP_CONF_DIR nor YARN_CONF_DIR "
                 "is set"),
    ("k8s://https://127.0.0.1:{port}", {}, "--master k8s://https://127.0.0.1:{port} needs the executors' container "
                                           "image, and spark.kubernetes.container.image is not set"),
    # the image in spark-defaults.conf: past that check, to the master's (a closed port)
    ("k8s://https://127.0.0.1:{port}", {"SPARK_CONF_DIR": "{conf}"}, "Spark master k8s://https://127.0.0.1:{port} "
                                                                     "is not reachable"),
])
def test_a_cluster_master_missing_what_spark_needs_is_refused_before_anything_starts(
        tmp_path: Path, master: str, environment: dict[str, str], expected: str, processes,
        refused_address: Callable[[], str]) -> None:
    (tmp_path / "spark-defaults.conf").write_text("spark.kubernetes.container.image apache/spark:4-python3\n")
    source = tmp_path / "fleet.jsonl"
    snapshot.write(fleet(), source)
    port = int(refused_address().rsplit(":", 1)[1])  # nothing listens on it
    values = {"port": port, "conf": tmp_path}
    java, started = tmp_path / "jdk" / "bin" / "java", tmp_path / "a JVM started"
    java.parent.mkdir(parents=True)
    java.write_text(f"#!/bin/sh\ntouch '{started}'\nexit 1\n")  # the java Spark's launcher would run
    java.chmod(0o755)
    env = {key: value for key, value in driver_environment().items()
           if key not in ("HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_CONF_DIR", "PYSPARK_SUBMIT_ARGS")}
    result = processes.run([KAFKA_LEADERS, "analyze", source.as_uri(), "--out", (tmp_path / "out").as_uri(),
                            "--master", master.format(**values)], text=True, timeout=60,
                           env={**env, "JAVA_HOME": str(java.parent.parent),
                                **{key: value.format(**values) for key, value in environment.items()}})
    assert result.stderr.startswith(expected.format(**values)), result.stderr
    assert result.returncode == (3 if "reachable" in expected else 2)
    assert "Traceback" not in result.stderr and not started.exists()
