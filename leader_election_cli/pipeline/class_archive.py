"""A class-data archive for the local driver JVM (Java's AppCDS): Spark's classes mapped from one file
instead of read, parsed and verified from about 250 jars at every start.

- The first local `analyze` dumps the classes its JVM loaded (`-XX:ArchiveClassesAtExit`) into a file of
  its own. When the command ends it closes the JVM, waits for the dump, has another JVM map the file
  (`-Xshare:on`, which fails on a bad archive) and only then renames it into place: a half-written
  archive (a JVM killed mid-dump, a full disk) crashes a JVM that maps it, so it is never used.
- Later runs map it (`-XX:SharedArchiveFile`, Java's own messages about it off): when Java, Spark's jars
  or the class path settings change, the name changes with them and a new archive is made; the two
  used last are kept (two Spark installations used in turn), older ones removed.
- It lives in the user's private cache directory ($XDG_CACHE_HOME or ~/.cache, `leader-election-cli`,
  mode 0700: a planted archive would be code in the JVM), about 190 MB. Nothing is archived when that
  directory cannot be made private, or when the user's Java options share classes themselves.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from leader_election_cli.local_files import cache_directory, private_directory

PREFIX = "spark-classes-"
SUFFIX = ".jsa"
# Java's own lines about an archive it cannot use (say, after a jar changed under it) stay off the terminal.
QUIET = "-Xlog:cds=off,cds+dynamic=off"
_SHARES_CLASSES = re.compile(r"-Xshare:|-XX:(?:SharedArchiveFile|ArchiveClassesAtExit)=|-XX:[+-]UseSharedSpaces\b")
_SPLIT = re.compile(r"[\s'\"\\]")
KEEP = 2  # archives kept: the newest and the one used last before it
DUMP_WAIT_S = 120.0  # the JVM's exit, archive included (20 s on a slow 2-core machine)
TRY_WAIT_S = 60.0  # a JVM that maps the archive and prints its version


def shares_classes(java_options: str) -> bool:
    """Whether Java options already decide on class sharing (then no archive of ours is added)."""
    return bool(_SHARES_CLASSES.search(java_options))


def java_executable() -> str | None:
    """The `java` spark-submit runs: $JAVA_HOME/bin/java, else the one on PATH."""
    home = os.environ.get("JAVA_HOME")
    return os.path.join(home, "bin", "java") if home else shutil.which("java")


def archive_name(java: str, spark_home: Path, extra_class_path: str = "", spark_defaults: str = "") -> str:
    """The archive's file name: a digest of what makes an archive valid, so that a change in any of it
    (another Java, an upgraded JDK in place, another Spark or a jar replaced, class path settings: the
    environment's, `extra_class_path`, the text of spark-defaults.conf) names a new archive instead of one
    the JVM would refuse."""
    real = os.path.realpath(java)
    java_home = Path(real).parent.parent
    digest = hashlib.sha256(real.encode())
    for path in (java_home / "release", java_home / "lib" / "server" / "libjvm.so"):
        with contextlib.suppress(OSError):
            info = path.stat()
            digest.update(f"\0{path}\0{info.st_size}\0{info.st_mtime_ns}".encode())
    with contextlib.suppress(OSError):
        for jar in sorted((spark_home / "jars").iterdir()):
            info = jar.stat()
            digest.update(f"\0{jar.name}\0{info.st_size}\0{info.st_mtime_ns}".encode())
    for name in ("SPARK_DIST_CLASSPATH", "HADOOP_CONF_DIR", "YARN_CONF_DIR", "SPARK_CONF_DIR"):
        digest.update(f"\0{name}={os.environ.get(name, '')}".encode())
    digest.update(f"\0{extra_class_path}\0{spark_defaults}".encode())
    return f"{PREFIX}{digest.hexdigest()[:16]}{SUFFIX}"


class ClassArchive:
    """The archive of one local driver JVM: mapped when it exists, else dumped by this run and published."""

    def __init__(self, path: Path, java: str) -> None:
        self.path = path
        self.java = java
        self.dumping = not path.is_file()  # decided once: another run may publish one meanwhile
        self.dump = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        self.class_path: str | None = None

    @classmethod
    def for_spark(cls, spark_home: Path, extra_class_path: str = "", spark_defaults: str = "") -> ClassArchive | None:
        """The archive for the JVM spark-submit would start from `spark_home` (with the driver's
        `extra_class_path` and the `spark_defaults` it reads), or None when there is no Java to be found or
        no private cache directory."""
        java = java_executable()
        if java is None:
            return None
        try:
            directory = private_directory(cache_directory())
        except (OSError, RuntimeError):  # RuntimeError: no home directory to be found
            return None
        if _SPLIT.search(str(directory)):  # SPARK_SUBMIT_OPTS is split into options at spaces and quotes
            return None
        archive = cls(directory / archive_name(java, spark_home, extra_class_path, spark_defaults), java)
        if archive.dumping:
            _remove_abandoned_dumps(directory)
        return archive

    def java_options(self) -> list[str]:
        """Map the archive when it exists, else dump one into this run's own file."""
        if self.dumping:
            return [f"-XX:ArchiveClassesAtExit={self.dump}", QUIET]
        with contextlib.suppress(OSError):
            os.utime(self.path)  # its time says when it was last used: the older ones go first
        return [f"-XX:SharedArchiveFile={self.path}", QUIET]

    def remember_class_path(self, jvm: Any) -> None:
        """The running JVM's class path: the one a JVM trying the dump must have."""
        if self.dumping:
            self.class_path = str(jvm.java.lang.System.getProperty("java.class.path"))

    def publish(self, gateway_process: subprocess.Popen[bytes] | None, announce: Callable[[], None]) -> None:
        """Once the session has stopped: `announce` the wait, end the JVM (it exits when its standard input
        closes), wait for its dump, try the dump in another JVM and rename it into place; keep the archive
        used last before it (say, another Spark installation's, used in turn) and remove the older ones.
        Any failure leaves no archive, and the run goes on as it would without one."""
        if not self.dumping or gateway_process is None or self.class_path is None:
            return
        announce()
        try:
            if gateway_process.stdin is not None:
                gateway_process.stdin.close()
            gateway_process.wait(DUMP_WAIT_S)
            tried = subprocess.run([self.java, "-Xshare:on", f"-XX:SharedArchiveFile={self.dump}", QUIET,
                                    "-cp", self.class_path, "-version"], stdin=subprocess.DEVNULL,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=TRY_WAIT_S)
            if tried.returncode == 0 and self.dump.is_file():
                os.replace(self.dump, self.path)
                others = sorted((p for p in self.path.parent.glob(f"{PREFIX}*{SUFFIX}") if p != self.path),
                                key=lambda p: p.stat().st_mtime, reverse=True)
                for old in others[KEEP - 1:]:
                    old.unlink(missing_ok=True)
        except (OSError, subprocess.SubprocessError):
            pass
        finally:
            with contextlib.suppress(OSError):
                self.dump.unlink(missing_ok=True)


def _remove_abandoned_dumps(directory: Path) -> None:
    """Dumps of runs that ended without publishing (interrupted, killed): their process is gone and their
    JVM has had time to finish writing."""
    for dump in directory.glob(f".{PREFIX}*{SUFFIX}.*.tmp"):
        with contextlib.suppress(OSError, ValueError):
            pid = int(dump.name.rsplit(".", 2)[-2])
            if not _alive(pid) and time.time() - dump.stat().st_mtime > DUMP_WAIT_S:
                dump.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process
        return True
    return True
