"""`kafka-leaders analyze` stopped by a signal while Spark works (cron's SIGTERM, Ctrl-C): the signal's exit
code, one line of its own, no Java stack trace (the stopped session's JVM printed some), and no summary.json
left in --out (a summary marks a finished run's whole set: the last run's was left beside this run's
half-written tables)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path

import pytest

pytest.importorskip("pyspark")

from py4j.protocol import Py4JNetworkError  # noqa: E402
from pyspark import SparkContext  # noqa: E402

from leader_election_cli import snapshot  # noqa: E402
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition  # noqa: E402
from leader_election_cli.operations import signals  # noqa: E402
from leader_election_cli.operations.signals import Stopped  # noqa: E402
from leader_election_cli.pipeline import job, jvm_calls  # noqa: E402

pytestmark = pytest.mark.spark

KAFKA_LEADERS = str(Path(sys.executable).parent / "kafka-leaders")
PARTITIONS = 20_000  # about 10 s of Spark jobs on local[1] after the summary is removed
JAVA_STACK_TRACE = re.compile(r"\s+at \S|([a-z_][\w$]*\.)+[A-Z][\w$]*(Exception|Error)\b")


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    state = ClusterState({b: ("h", 9092) for b in (1, 2, 3)}, 1, {
        TopicPartition("t", p): PartitionState("t", p, 1 + p % 3, (1 + p % 3, 1 + (p + 1) % 3), (1 + p % 3,))
        for p in range(PARTITIONS)})
    path = tmp_path_factory.mktemp("fleet") / "fleet.jsonl"
    snapshot.write(snapshot.rows(state, "prod", datetime(2024, 5, 1, tzinfo=timezone.utc)), path)
    return path


@pytest.mark.timeout(300)  # a JVM start and 20,000 partitions on a machine that may be busy
def test_sigterm_while_spark_works_is_one_line_and_leaves_no_summary(fleet: Path, tmp_path: Path, processes) -> None:
    """(Ctrl-C takes the same path, with `Interrupted` and 130: one run is enough, each costs 25 s.)"""
    out = tmp_path / "out"
    out.mkdir()
    (out / "summary.json").write_text("{}")  # the last run's
    run = processes.start([KAFKA_LEADERS, "analyze", str(fleet), "--out", str(out), "--master", "local[1]",
                           "--conf", "spark.driver.extraJavaOptions=-Xshare:auto"],  # no class archive dump
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    while (out / "summary.json").exists() and run.poll() is None:  # bounded by the test's timeout
        time.sleep(0.05)
    assert not (out / "summary.json").exists() and run.poll() is None, "the analysis did not start"
    time.sleep(0.2)  # into the Spark jobs (the first table is being written: several jobs remain)
    run.send_signal(signal.SIGTERM)
    _, stderr = run.communicate(timeout=120)
    assert run.returncode == 143, stderr
    assert stderr.splitlines()[-1] == "Stopped by SIGTERM before the analysis finished."
    assert not [said for said in stderr.splitlines() if JAVA_STACK_TRACE.match(said)], stderr
    assert not (out / "summary.json").exists()


class Cut(BaseException):
    """As pytest-timeout's failure: an exception raised in the wait of a call into the JVM."""


@contextmanager
def raised_during(seconds: float, exception: BaseException) -> Iterator[None]:
    """`exception` raised in the main thread after `seconds`, by a signal handler (SIGUSR1: pytest-timeout
    keeps SIGALRM), as a stop signal's `Stopped` is."""
    def handler(signum: int, frame: object) -> None:
        raise exception

    previous = signal.signal(signal.SIGUSR1, handler)
    timer = threading.Timer(seconds, os.kill, (os.getpid(), signal.SIGUSR1))
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
        signal.signal(signal.SIGUSR1, previous)


@pytest.mark.timeout(300)
def test_a_stop_signal_that_cuts_a_jvm_call_stops_the_session_and_stays_the_error() -> None:
    """It raced: a SIGTERM raised in a call into the JVM, and PySpark's clean-up calls as its exception passed
    (a collect's `finally`) failed for it ("Answer from Java side is empty"); that error replaced the
    signal's: exit 1, not 143."""
    conf = {"spark.driver.extraJavaOptions": "-Xshare:auto"}  # no class archive dump
    with signals.policy(), pytest.raises(Stopped) as stopped, \
            job.session("local[1]", conf, verbose=False, connect_timeout_s=60, small_input=True) as spark:
        jvm = spark.sparkContext._jvm
        assert jvm.java.lang.Math.abs(-5) == 5
        timer = threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGTERM))
        timer.start()
        try:
            jvm.java.lang.Thread.sleep(5000)
        finally:  # as PySpark's collect does: a call to the JVM in a `finally`, which fails
            timer.cancel()
            raise Py4JNetworkError("Answer from Java side is empty")
    assert stopped.value.signum == signal.SIGTERM
    assert SparkContext._active_spark_context is None  # the session was stopped

    # and a call cut by any exception (pytest-timeout's, kept with its traceback) leaves the next call right
    # once the connection is forgotten, as conftest.py does after every Spark test
    spark = job.spark_session("local[1]", conf)
    try:
        jvm = spark.sparkContext._jvm
        with pytest.raises(Cut), raised_during(0.5, Cut()):
            jvm.java.lang.Thread.sleep(3000)
        jvm_calls.forget_interrupted_call()
        assert [jvm.java.lang.Math.abs(-n) for n in range(3)] == [0, 1, 2]
        # the fresh connection's JVM thread has no active session: the command's session still finds this one
        # running and leaves it so (it asked the JVM, and stopped a session it had not started)
        with job.session("local[1]", conf, verbose=False, connect_timeout_s=60, small_input=True) as same:
            assert same.sparkContext is spark.sparkContext
        assert spark.sparkContext._jsc is not None and jvm.java.lang.Math.abs(-3) == 3
    finally:
        spark.stop()



@pytest.mark.timeout(300)
def test_a_ctrl_c_in_a_jvm_call_leaves_no_cancel_behind() -> None:
    """On a KeyboardInterrupt (a stop signal's `Stopped` is one) in a call, Py4J sends a cancel over the cut
    call's own connection, which the JVM read only once that call had finished, seconds later: it then shut
    every connection and interrupted its thread, the stop of the session after a stop signal among them
    (on a busy machine: its context never cleared, "Only one SparkContext should be running in this JVM").
    Forgetting the cut call ends it at once: here, its take() no longer waits for an element offered
    afterwards."""
    spark = job.spark_session("local[1]", {"spark.driver.extraJavaOptions": "-Xshare:auto"})
    try:
        jvm = spark.sparkContext._jvm
        queue = jvm.java.util.concurrent.SynchronousQueue()
        SparkContext._gateway._gateway_client.close()  # the other threads' connections: the cut one's cancel
        with pytest.raises(KeyboardInterrupt), raised_during(0.5, KeyboardInterrupt()):  # is the only one
            queue.take()
        jvm_calls.forget_interrupted_call()
        assert not queue.offer(1)  # nobody takes it: before, the cut take() did, then ran its cancel
    finally:
        spark.stop()
