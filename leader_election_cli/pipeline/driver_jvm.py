"""Starting the driver JVM with its stderr watched.

What Spark's launcher and the JVM print while the JVM starts is held back: once it has started it is
shown (the JVM's notices, as before), and when it does not start one line says why, in the JVM's or
Spark's own words ("Invalid maximum heap size: -Xmxabc", "org.apache.spark.SparkException: Executor cores
must be a positive number"), never a Java stack trace. Later lines pass on as they come, but for Java
stack traces (a session stopped while a job runs, say by Ctrl-C, prints some: the command says what
happened in its own line). With `verbose` everything is shown as it comes.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Mapping, Sequence

from pyspark import SparkConf, SparkContext
from pyspark.errors import PySparkRuntimeError
from pyspark.java_gateway import launch_gateway

from leader_election_cli.errors import InputError
from leader_election_cli.pipeline import java_errors

_JOIN_SECONDS = 5.0  # for the last lines of a JVM that has exited
# Spark 4 starts its JVM with the incubating Vector API: Java says so on every start, a line no setting silences
# and no operator can act on (in a cron job's mail every run); shown with --verbose / --debug only
_INCUBATOR_NOTICE = "WARNING: Using incubator modules"
_NOISE = (_INCUBATOR_NOTICE, "Error: Could not create the Java Virtual Machine",
          "Error: A fatal exception has occurred")
_FRAME = r"\s+at \S"  # a stack frame: "\tat org.apache.spark..."
# a line of a Java stack trace: the exception (qualified class name first), a frame, its cause, or "... N more"
_STACK_TRACE = re.compile(r'(Exception in thread "[^"]*" )?([a-z_][\w$]*\.)+[A-Z][\w$]*(Exception|Error|Throwable)\b'
                          rf"|{_FRAME}|\s*\.\.\. \d+ more|\s*(Caused by|Suppressed): ")
_SETTINGS_HINT = ("Check the --conf settings, spark-defaults.conf, SPARK_SUBMIT_OPTS and PYSPARK_SUBMIT_ARGS "
                  "(--debug shows all the JVM printed).")


def start(settings: Mapping[str, str], verbose: bool) -> None:
    """Start the JVM the next SparkContext runs on, with `settings` (the session's, so that those read only
    when the JVM starts, such as spark.driver.memory, apply); an InputError saying why if it does not."""
    read, write = os.pipe()
    watcher = Watcher(read, verbose)
    try:
        try:
            gateway = launch_gateway(SparkConf().setAll(list(settings.items())), popen_kwargs={"stderr": write})
        finally:
            os.close(write)  # the JVM has its own copy: its exit ends the watcher
    except OSError as exc:  # Spark's launcher script itself: SPARK_HOME names no Spark installation
        raise InputError(f"Could not start Spark's driver JVM: {os.path.normpath(exc.filename or '')}: "
                         f"{exc.strerror or exc}",
                         hint="Point SPARK_HOME at a Spark installation (its bin/spark-submit), or unset it to use "
                              "the pyspark package's own.") from None
    except PySparkRuntimeError:
        watcher.join(_JOIN_SECONDS)
        reason = why_it_did_not_start(watcher.held)
        raise InputError(f"Could not start Spark's driver JVM: {reason}", hint=hint(reason)) from None
    watcher.show()
    SparkContext._ensure_initialized(gateway=gateway)


def why_it_did_not_start(lines: Sequence[str]) -> str:
    """The line that says why: the exception that ended the launcher's or the JVM's main thread, with its
    root cause (`java_errors.one_line`), else the first line that is not a notice, a stack frame or the
    JVM's closing words."""
    for i, line in enumerate(lines):
        if line.startswith('Exception in thread "main" '):  # and its causes ("Caused by: ..."): one line
            causes = [cause.removeprefix("Caused by: ") for cause in lines[i + 1:] if cause.startswith("Caused by: ")]
            thrown = [line.removeprefix('Exception in thread "main" '), *causes]
            return java_errors.one_line([_named(exception.strip()) for exception in thrown])
    said = [line.strip() for line in lines if line.strip() and not line.startswith(_NOISE)
            and not re.match(_FRAME, line)]
    return (said or [line.strip() for line in lines if line.strip()] or ["the JVM exited without a word"])[0]


def _named(exception: str) -> tuple[str, str]:
    """An exception as Java prints it ("a.B: what happened") as its class name and message."""
    name, _, message = exception.partition(": ")
    return name, message


def hint(reason: str) -> str:
    """The fix when the reason says what is wrong (`java_errors.known_hint`); else where the JVM's settings
    come from."""
    return java_errors.known_hint(reason) or _SETTINGS_HINT


class Watcher(threading.Thread):
    """Reads the JVM's stderr: keeps the lines printed until `show` (`held`), shown then (at once with
    `verbose`), and passes on the later ones as they come; without `verbose`, stack traces and the
    incubator-module notice stay out."""

    def __init__(self, fd: int, verbose: bool) -> None:
        super().__init__(name="driver-jvm-stderr", daemon=True)
        self._fd = fd
        self._lock = threading.Lock()
        self._verbose = verbose
        self._passing_on = False
        self.held: list[str] = []
        self.start()

    def run(self) -> None:
        with open(self._fd, encoding="utf-8", errors="replace") as stream:
            for line in stream:
                with self._lock:
                    if not self._passing_on:
                        self.held.append(line)
                    if self._verbose or (self._passing_on and not _STACK_TRACE.match(line) and not _notice(line)):
                        _write(line)

    def show(self) -> None:
        with self._lock:
            if not self._verbose:
                for line in self.held:
                    if not _notice(line):
                        _write(line)
            self._passing_on = True


def _notice(line: str) -> bool:
    return line.startswith(_INCUBATOR_NOTICE)


def _write(line: str) -> None:
    try:
        sys.stderr.write(line)
        sys.stderr.flush()
    except (OSError, ValueError):  # our stderr closed: the JVM's words have nowhere to go
        pass
