"""`kafka-leaders analyze` when Spark's driver JVM does not start: one line in the JVM's or Spark's own words
and a hint naming where settings come from, exit 2, never a Java stack trace."""

from __future__ import annotations

import os
import re
import socket
import sys
from pathlib import Path

import pytest

pytest.importorskip("pyspark")
from leader_election_cli.errors import InputError  # noqa: E402
from leader_election_cli.pipeline import job  # noqa: E402
from leader_election_cli.pipeline.driver_jvm import Watcher, hint, why_it_did_not_start  # noqa: E402

KAFKA_LEADERS = str(Path(sys.executable).parent / "kafka-leaders")
SETTINGS_HINT = ("Hint: Check the --conf settings, spark-defaults.conf, SPARK_SUBMIT_OPTS and PYSPARK_SUBMIT_ARGS "
                 "(--debug shows all the JVM printed).\n")
JAVA_HINT = "Spark needs Java 17 or newer: install it and set JAVA_HOME."
HOST_HINT = ("A host name Spark looks up does not resolve: fix or unset SPARK_LOCAL_IP, spark.driver.host and "
             "SPARK_LOCAL_HOSTNAME if set; else map this machine's name in /etc/hosts, or set SPARK_LOCAL_IP=127.0.0.1 "
             "for a local run.")
# What Spark 4.3's launcher printed on a machine whose name (vm) /etc/hosts did not map (frames cut)
NAME_NOT_RESOLVED = """\
WARNING: Using incubator modules: jdk.incubator.vector
Exception in thread "main" java.lang.ExceptionInInitializerError
\tat org.apache.spark.deploy.SparkSubmitArguments.$anonfun$loadEnvironmentArguments$5(SparkSubmitArguments.scala:197)
\tat org.apache.spark.deploy.SparkSubmit.main(SparkSubmit.scala)
Caused by: java.net.UnknownHostException: vm: vm: Name or service not known
\tat java.base/java.net.InetAddress.getLocalHost(InetAddress.java:1671)
\tat org.apache.spark.util.Utils$.findLocalInetAddress(Utils.scala:893)
\t... 10 more
Caused by: java.net.UnknownHostException: vm: Name or service not known
\tat java.base/java.net.Inet6AddressImpl.lookupAllHostAddr(Native Method)
\t... 17 more
"""


@pytest.mark.parametrize(("lines", "reason"), [
    (["WARNING: Using incubator modules: jdk.incubator.vector\n",
      'Exception in thread "main" org.apache.spark.SparkException: Executor cores must be a positive number\n',
      "\tat org.apache.spark.deploy.SparkSubmitArguments.error(SparkSubmitArguments.scala:670)\n"],
     "org.apache.spark.SparkException: Executor cores must be a positive number"),
    (["Invalid maximum heap size: -Xmxabc\n", "Error: Could not create the Java Virtual Machine.\n",
      "Error: A fatal exception has occurred. Program will exit.\n"], "Invalid maximum heap size: -Xmxabc"),
    (["Error: Could not create the Java Virtual Machine.\n"], "Error: Could not create the Java Virtual Machine."),
    (["JAVA_HOME is not set\n"], "JAVA_HOME is not set"),
    # the cause, not its wrapper (it was "java.lang.ExceptionInInitializerError", and no word of why)
    (NAME_NOT_RESOLVED.splitlines(keepends=True), "java.net.UnknownHostException: vm: vm: Name or service not known"),
    (['Exception in thread "main" a.B: failed\n', "Caused by: c.D\n", "Caused by: e.F: no disk\n"],
     "a.B: failed (caused by e.F: no disk)"),
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


@pytest.mark.parametrize("reason", ["java.net.UnknownHostException: vm: vm: Name or service not known",
                                    "java.nio.channels.UnresolvedAddressException"])
def test_a_host_name_that_does_not_resolve_says_how_to_fix_it(reason: str) -> None:
    assert hint(reason) == HOST_HINT


def test_a_localhost_that_does_not_resolve_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """PySpark's accumulator server listens on "localhost": without it in /etc/hosts the bind failed with
    "Internal error: gaierror: [Errno -2] Name or service not known", exit 1 (reproduced by a run in a mount
    namespace with its own /etc/hosts)."""
    answers = {"localhost": socket.gaierror(socket.EAI_NONAME, "Name or service not known")}

    def getaddrinfo(host: str, *args: object, **kwargs: object) -> list[object]:
        raise answers[host]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    with pytest.raises(InputError) as caught, job.spark_errors("cluster"):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")  # what the bind raised
    assert (caught.value.message, caught.value.hint) == (
        "Could not start Spark: localhost does not resolve (Name or service not known)",
        "PySpark listens on localhost: map it to 127.0.0.1 in /etc/hosts.")
    monkeypatch.setattr(socket, "getaddrinfo", lambda host, *args, **kwargs: [])  # localhost resolves: not that
    with pytest.raises(socket.gaierror), job.spark_errors("cluster"):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")


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
    ([], {"SPARK_LOCAL_IP": "no-such-host.invalid"},  # it was "java.lang.ExceptionInInitializerError"
     r"Could not start Spark's driver JVM: java\.net\.UnknownHostException: no-such-host\.invalid: [^\n]+\n"
     + re.escape(f"Hint: {HOST_HINT}\n")),
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


def test_a_machine_whose_name_does_not_resolve_is_told_the_cause_and_the_fix(fleet: Path, tmp_path: Path,
                                                                            processes) -> None:
    """The machine's name resolved by no one: Java's own hosts file (jdk.net.hosts.file) stands in for an
    /etc/hosts without it. It was "Could not start Spark's driver JVM: java.lang.ExceptionInInitializerError"
    with the hint to check the settings."""
    hosts = tmp_path / "hosts"
    hosts.write_text("# no names\n")
    environment = {name: value for name, value in os.environ.items()
                   if name not in ("SPARK_LOCAL_IP", "SPARK_LOCAL_HOSTNAME")}  # either would spare the look-up
    environment["SPARK_SUBMIT_OPTS"] = f"-Djdk.net.hosts.file={hosts}"
    result = processes.run([KAFKA_LEADERS, "analyze", str(fleet), "--out", str(tmp_path / "out"),
                            "--master", "local[1]"], text=True, timeout=120, env=environment)
    name = re.escape(socket.gethostname())
    assert result.returncode == 2 and re.fullmatch(
        rf"Could not start Spark's driver JVM: java\.net\.UnknownHostException: {name}: [^\n]*{name}[^\n]*\n"
        + re.escape(f"Hint: {HOST_HINT}\n"), result.stderr), result.stderr


def test_a_setting_spark_refuses_once_started_is_an_input_error(fleet: Path, tmp_path: Path, processes) -> None:
    """It was "Spark job failed", exit 1."""
    result = processes.run([KAFKA_LEADERS, "analyze", str(fleet), "--out", str(tmp_path / "out"), "--master",
                            "local[1]", "--conf", "spark.sql.shuffle.partitions=-1"], text=True, timeout=120)
    assert result.returncode == 2
    assert result.stderr.splitlines()[-2:] == [
        "Spark refused a setting: [INVALID_CONF_VALUE.REQUIREMENT] The value '-1' in the config "
        '"spark.sql.shuffle.partitions" is invalid. The value of spark.sql.shuffle.partitions must be positive '
        "SQLSTATE: 22022", "Hint: Check the --conf values and spark-defaults.conf."]
