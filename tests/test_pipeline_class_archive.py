"""The local driver JVM's class archive (`pipeline/class_archive.py`): dumped by a first `analyze`, published
only once another JVM has mapped it, then mapped by later runs; named after Java, Spark's jars and the
class path settings; never taken from a directory other users could write to."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from leader_election_cli import snapshot  # noqa: E402
from leader_election_cli.cli.analyze_command import ARCHIVE_NOTICE  # noqa: E402
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition  # noqa: E402
from leader_election_cli.pipeline import class_archive, job  # noqa: E402
from leader_election_cli.pipeline.class_archive import (  # noqa: E402
    DUMP_WAIT_S,
    PREFIX,
    SUFFIX,
    ClassArchive,
    archive_name,
    shares_classes,
)

KAFKA_LEADERS = str(Path(sys.executable).parent / "kafka-leaders")
JAVA = shutil.which("java")
needs_java = pytest.mark.usefixtures("java")


@needs_java
def test_the_name_follows_java_the_jars_and_the_class_path_settings(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    spark_home = tmp_path / "spark"
    (spark_home / "jars").mkdir(parents=True)
    jar = spark_home / "jars" / "spark-core.jar"
    jar.write_bytes(b"1")
    first = archive_name(JAVA, spark_home)
    assert first == archive_name(JAVA, spark_home) and first.startswith(PREFIX) and first.endswith(SUFFIX)
    jar.write_bytes(b"22")  # another build of the jar
    rebuilt = archive_name(JAVA, spark_home)
    assert rebuilt != first
    monkeypatch.setenv("SPARK_DIST_CLASSPATH", "/opt/hadoop/share/*")
    with_hadoop = archive_name(JAVA, spark_home)
    assert with_hadoop != rebuilt
    assert archive_name(JAVA, spark_home, "/opt/extra.jar") != with_hadoop  # --conf spark.driver.extraClassPath
    assert archive_name(JAVA, spark_home, spark_defaults="spark.driver.extraClassPath /opt/extra.jar\n") != with_hadoop


@pytest.mark.parametrize(("options", "shares"), [
    ("-Xshare:off", True), ("-Xmx2g -XX:SharedArchiveFile=/opt/app.jsa", True), ("-XX:ArchiveClassesAtExit=a", True),
    ("-XX:-UseSharedSpaces", True), ("-Xmx4g -XX:+UseG1GC -Dx=-Xshare", False), ("", False)])
def test_java_options_that_decide_on_class_sharing_leave_ours_out(options: str, shares: bool) -> None:
    assert shares_classes(options) is shares


@needs_java
def test_no_archive_in_a_cache_directory_others_can_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "leader-election-cli").mkdir(mode=0o700)
    (tmp_path / "leader-election-cli").chmod(0o777)  # someone else could plant an archive: code in the JVM
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert ClassArchive.for_spark(job.spark_home()) is None


@needs_java
def test_no_archive_where_the_launcher_would_split_its_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "my cache"))
    assert ClassArchive.for_spark(job.spark_home()) is None


@needs_java
def test_publishing_keeps_the_archive_used_last_and_removes_older_ones(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    archive = ClassArchive.for_spark(job.spark_home())
    assert archive is not None
    others = [archive.path.with_name(f"{PREFIX}{n:016x}{SUFFIX}") for n in range(3)]
    for age, other in enumerate(others):  # others[0] used last
        other.write_bytes(b"x")
        os.utime(other, (time.time() - 60 * (age + 1),) * 2)
    archive.dump.write_bytes(b"dumped classes")
    archive.class_path = "unused"
    monkeypatch.setattr(class_archive.subprocess, "run", lambda *args, **kwargs: subprocess.CompletedProcess(args, 0))
    announced = []
    archive.publish(subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL),
                    lambda: announced.append(True))
    assert announced == [True]  # the wait is said before it starts
    assert sorted((tmp_path / "leader-election-cli").iterdir()) == sorted([archive.path, others[0]])
    assert archive.path.read_bytes() == b"dumped classes"


@needs_java
def test_a_dump_no_jvm_can_map_is_never_published(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    archive = ClassArchive.for_spark(job.spark_home())
    assert archive is not None and archive.dumping
    archive.dump.write_bytes(b"\0" * 65536)  # say, what a JVM killed mid-dump leaves
    archive.class_path = str(job.spark_home() / "jars" / "*")
    driver = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)  # exits as its input closes
    archive.publish(driver, lambda: None)
    assert driver.returncode == 0
    assert list(tmp_path.rglob("*")) == [tmp_path / "leader-election-cli"]


@needs_java
def test_dumps_of_runs_that_ended_without_publishing_are_removed(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    name = archive_name(JAVA, job.spark_home())
    directory = tmp_path / "leader-election-cli"
    directory.mkdir(mode=0o700)
    gone = subprocess.Popen(["true"])  # a run that has ended
    gone.wait()
    old = time.time() - DUMP_WAIT_S - 60
    abandoned = directory / f".{name}.{gone.pid}.tmp"
    running = directory / f".{name}.{os.getpid()}.tmp"  # its run is still going
    recent = directory / f".{PREFIX}0000000000000000{SUFFIX}.{gone.pid}.tmp"  # its JVM may still be writing it
    for dump in (abandoned, running, recent):
        dump.write_bytes(b"x")
    for dump in (abandoned, running):
        os.utime(dump, (old, old))
    ClassArchive.for_spark(job.spark_home())
    assert (abandoned.exists(), running.exists(), recent.exists()) == (False, True, True)


@pytest.mark.timeout(600)  # a first run waits for its dump: 90 s here, alone on 2 cores
def test_a_first_run_publishes_the_archive_and_later_runs_map_their_classes_from_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, processes) -> None:
    """Fresh processes and JVMs, as an operator runs them, which also print nothing of Spark's own on
    stderr: its start-up warnings and log lines stay off, the JVM's incubator-module notice too (on every
    run before, in a cron job's mail). Only the first run's notice that it waits for its class archive
    remains."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    state = ClusterState(brokers={1: ("h", 1), 2: ("h", 2)}, controller_id=1, partitions={
        TopicPartition("t", 0): PartitionState("t", 0, 2, (1, 2), (1, 2))})
    snapshot.write(snapshot.rows(state, "c", datetime(2024, 5, 1, tzinfo=timezone.utc)), tmp_path / "s.jsonl")

    def analyze(out: str, *java_options: str) -> dict:
        conf = ["--conf", f"spark.driver.extraJavaOptions={' '.join(java_options)}"] if java_options else []
        done = processes.run([KAFKA_LEADERS, "analyze", str(tmp_path / "s.jsonl"), "--out", str(tmp_path / out),
                              "--master", "local[1]", *conf], text=True, timeout=600)
        assert done.returncode == 0, done.stderr
        assert (ARCHIVE_NOTICE in done.stderr) == (out == "first")  # the first run says why it waits
        assert [line for line in done.stderr.splitlines() if line != ARCHIVE_NOTICE] == []
        assert "Election plans in" in done.stdout
        summary = json.loads((tmp_path / out / "summary.json").read_text())
        return {key: value for key, value in summary.items() if key not in ("out", "tables", "plans_dir",
                                                                            "elapsed_seconds")}

    first = analyze("first")
    (archive,) = (cache / "leader-election-cli").iterdir()  # published, and no dump left beside it
    assert archive.name.startswith(PREFIX) and archive.name.endswith(SUFFIX)

    loaded = tmp_path / "classes.log"
    assert analyze("second", f"-Xlog:class+load=info:file={loaded}") == first
    assert "org.apache.spark.SparkContext source: shared objects file (top)" in loaded.read_text()
    assert list((cache / "leader-election-cli").iterdir()) == [archive]
