"""`kafka-leaders analyze` when Spark's driver JVM does not start: one line in the JVM's or Spark's own words
and a hint naming where settings come from, exit 2, never a Java stack trace."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
from leader_election_cli.pipeline.driver_jvm import Watcher, hint, why_it_did_not_start  # noqa: E402

KAFKA_LEADERS = str(Path(sys.executable).parent / "kafka-leaders")
SETTINGS_HINT = ("Hint: Check the --conf settings, spark-defaults.conf, SPARK_SUBMIT_OPTS and PYSPARK_SUBMIT_ARGS "
                 "(--debug shows all the JVM printed).\n")
JAVA_HINT = "Spark needs Java 17 or newer: install it and set JAVA_HOME."


@pytest.mark.parametrize(("lines", "reason"), [
    (["WARNING: Using incubator modules: jdk.incubator.vector\n",
      'Exception in thread "main" org.apache.spark.SparkException: Executor cores must be a positive number\n',
      "\tat org.apache.spark.deploy.SparkSubmitArguments.error(SparkSubmitArguments.scala:670)\n"],
     "org.apache.spark.SparkException: Executor cores must be a positive number"),
    (["Invalid maximum heap size: -Xmxabc\n", "Error: Could not create the Java Virtual Machine.\n",
      "Error: A fatal exception has occurred. Program will exit.\n"], "Invalid maximum heap size: -Xmxabc"),
    (["Error: Could not create the Java Virtual Machine.\n"], "Error: Could not create the Java Virtual Machine."),
    (["JAVA_HOME is not set\n"], "JAVA_HOME is not set"),
    ([], "the JVM exited without a word"),
])
def test_the_reason_is_the_line_that_says_why(lines: list[str], reason: str) -> None:
    assert why_it_did_not_start(lines) == reason


@pytest.mark.parametrize(("reason", "java"), [
    ("/opt/spark/bin/spark-class: line 97: /usr/lib/jvm/none/bin/java: No such file or directory", True),
    ("JAVA_HOME is not set", True),
    ("java.lang.UnsupportedClassVersionError: org/apache/spark/launcher/Main has been compiled by a more recent "
     "version of the Java Runtime", True),
    # a file named in the settings is not Java's absence (the hint said "install Java")
    ("java.io.FileNotFoundException: /etc/spark/driver.jks (No such file or directory)", False),
    ("Invalid maximum heap size: -Xmxabc", False),
])
def test_the_hint_is_javas_only_when_java_is_missing_or_too_old(reason: str, java: bool) -> None:
    assert hint(reason) == (JAVA_HINT if java else SETTINGS_HINT.removeprefix("Hint: ").rstrip("\n"))


# What the JVM printed when SIGTERM stopped a 5,000,000-row analyze mid-job (two such traces), and a notice
STOPPED_MID_JOB = """\
java.util.concurrent.RejectedExecutionException: Task Future(<not completed>) rejected from \
java.util.concurrent.ThreadPoolExecutor@3761a06b[Shutting down, pool size = 1, active threads = 1]
\tat java.base/java.util.concurrent.ThreadPoolExecutor$AbortPolicy.rejectedExecution(ThreadPoolExecutor.java:2065)
\tat scala.concurrent.impl.Promise$Transformation.run(Promise.scala:537)
\tat java.base/java.lang.Thread.run(Thread.java:840)
a notice of the JVM's
org.apache.spark.SparkException: Job 3 cancelled because SparkContext was shut down
\tat org.apache.spark.scheduler.DAGScheduler.cleanUpAfterSchedulerStop(DAGScheduler.scala:1253)
Caused by: java.lang.InterruptedException
\t... 12 more
"""


@pytest.mark.parametrize(("verbose", "shown"), [(False, "a notice of the JVM's\n"), (True, STOPPED_MID_JOB)])
def test_once_started_the_jvms_lines_pass_on_but_its_stack_traces(capsys: pytest.CaptureFixture[str],
                                                                     verbose: bool, shown: str) -> None:
    read, write = os.pipe()
    watcher = Watcher(read, verbose)
    watcher.show()
    os.write(write, STOPPED_MID_JOB.encode())
    os.close(write)
    watcher.join(5)
    assert capsys.readouterr().err == shown


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An input file (not read: the JVM stops first)."""
    path = tmp_path_factory.mktemp("fleet") / "fleet.jsonl"
    path.write_text("{}\n")
    return path


@pytest.mark.parametrize(("settings", "environment", "expected"), [
    (["--conf", "spark.driver.memory=abc"], {},
     re.escape("Could not start Spark's driver JVM: Invalid maximum heap size: -Xmxabc\n" + SETTINGS_HINT)),
    (["--conf", "spark.executor.cores=abc"], {},  # refused by spark-submit, with a stack trace of its own
     re.escape("Could not start Spark's driver JVM: org.apache.spark.SparkException: Executor cores must be a "
               "positive number\n" + SETTINGS_HINT)),
    ([], {"JAVA_HOME": "/nonexistent"},
     r"Could not start Spark's driver JVM: \S+/spark-class: line \d+: /nonexistent/bin/java: No such file or "
     r"directory\nHint: Spark needs Java 17 or newer: install it and set JAVA_HOME\.\n"),
    ([], {"SPARK_HOME": "/nonexistent"},  # it was "Internal error: FileNotFoundError", exit 1
     re.escape("Could not start Spark's driver JVM: /nonexistent/bin/spark-submit: No such file or directory\n"
               "Hint: Point SPARK_HOME at a Spark installation (its bin/spark-submit), or unset it to use the "
               "pyspark package's own.\n")),
])
def test_a_driver_jvm_that_does_not_start_is_one_line_saying_why(fleet: Path, tmp_path: Path, settings: list[str],
                                                                 environment: dict[str, str], expected: str,
                                                                 processes) -> None:
    result = processes.run([KAFKA_LEADERS, "analyze", str(fleet), "--out", str(tmp_path / "out"),
                            "--master", "local[1]", *settings], text=True, timeout=120,
                           env={**os.environ, **environment})
    assert result.returncode == 2 and re.fullmatch(expected, result.stderr), result.stderr


def test_a_setting_spark_refuses_once_started_is_an_input_error(fleet: Path, tmp_path: Path, processes) -> None:
    """It was "Spark job failed", exit 1."""
    result = processes.run([KAFKA_LEADERS, "analyze", str(fleet), "--out", str(tmp_path / "out"), "--master",
                            "local[1]", "--conf", "spark.sql.shuffle.partitions=-1"], text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-2:] == [
        "Spark refused a setting: [INVALID_CONF_VALUE.REQUIREMENT] The value '-1' in the config "
        '"spark.sql.shuffle.partitions" is invalid. The value of spark.sql.shuffle.partitions must be positive '
        "SQLSTATE: 22022", "Hint: Check the --conf values and spark-defaults.conf."]
