"""A Java failure as one line (its first message and its root cause), and the fix for the causes that say
what it is: Java missing or too old, a host name that does not resolve. Used for the driver JVM that does
not start (`driver_jvm`) and for Spark's failures once it runs (`job.spark_errors`)."""

from __future__ import annotations

from collections.abc import Sequence

# what Spark's launcher script or the JVM says when Java is missing or too old
_NO_JAVA = ("JAVA_HOME is not set", "UnsupportedClassVersionError", "java: not found",
            "bin/java: No such file or directory")
JAVA_HINT = "Spark needs Java 17 or newer: install it and set JAVA_HOME."
# Spark looks its own address up when it starts: SPARK_LOCAL_IP, else this machine's host name
# (Utils.findLocalInetAddress: an ExceptionInInitializerError caused by UnknownHostException), and binds
# spark.driver.host / SPARK_LOCAL_HOSTNAME (UnresolvedAddressException, which names no host).
_UNRESOLVED = ("java.net.UnknownHostException", "java.nio.channels.UnresolvedAddressException")
HOST_HINT = ("A host name Spark looks up does not resolve: fix or unset SPARK_LOCAL_IP, spark.driver.host and "
             "SPARK_LOCAL_HOSTNAME if set; else map this machine's name in /etc/hosts, or set SPARK_LOCAL_IP=127.0.0.1 "
             "for a local run.")


def one_line(chain: Sequence[tuple[str, str]]) -> str:
    """An exception and its causes, (class name, message) each, as one line: the first message and the root
    cause's (`Encountered error while reading file X (caused by java.io.IOException: not a gzip file)`),
    the root left out when the first part says it already."""
    told = [(name, message.strip().splitlines()[0]) for name, message in chain if message.strip()] or [
        (name, "") for name, _ in chain]
    (name, message), (root_name, root_message) = told[0], told[-1]
    said, root = _text(name, message)[:400], _text(root_name, root_message)[:200]
    if root in said or (root_name == name and root_message in message):
        return said
    return f"{said} (caused by {root})"


def _text(name: str, message: str) -> str:
    return f"{name}: {message}" if message else name


def known_hint(reason: str) -> str | None:
    """The fix when `reason` says what is wrong: Java missing or too old, a host name that does not resolve."""
    if any(words in reason for words in _NO_JAVA):
        return JAVA_HINT
    if any(name in reason for name in _UNRESOLVED):
        return HOST_HINT
    return None
