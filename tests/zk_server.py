"""A real ZooKeeper server for the tests: Debian's `zookeeper` package, run standalone.

Each server gets a free loopback port, its own data directory and config (admin server off, only the
`ruok` and `srvr` four-letter words), and is ready once it answers `ruok` with `imok`. scripts/test
installs the package; without it every test that starts a server skips with one reason line (a failure
under CI=true: tests/services.py), never passes silently.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from services import missing_service

ZOOKEEPER_JAR = Path("/usr/share/java/zookeeper.jar")  # its manifest's Class-Path lists its dependencies
MAIN_CLASS = "org.apache.zookeeper.server.ZooKeeperServerMain"  # standalone, one config file argument
JVM_OPTIONS = ["-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",  # small and quick to start
               "-Dzookeeper.forceSync=no"]  # no fsync per write: a busy disk cannot eat a test's --timeout
START_ATTEMPTS = 3  # a free port can be taken between choosing it and the server binding it
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


def missing_reason() -> str | None:
    """Why a ZooKeeper server cannot be started here, or None when it can."""
    if not ZOOKEEPER_JAR.is_file():
        return f"{ZOOKEEPER_JAR} is missing: apt-get install zookeeper"
    if shutil.which("java") is None:
        return "no java on PATH to run it: apt-get install default-jdk-headless"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def four_letter_word(port: int, word: str, timeout: float = 1.0) -> str:
    """Send a ZooKeeper four-letter command and return the answer ("" if there is none)."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
            s.sendall(word.encode())
            return s.recv(64).decode(errors="replace")
    except OSError:
        return ""


@dataclass
class ZooKeeperServer:
    """One running standalone server."""

    port: int
    workdir: Path
    process: subprocess.Popen[bytes]

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log_tail(self, lines: int = 20) -> str:
        log = self.workdir / "zookeeper.log"
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:]) if log.exists() else ""

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(STOP_TIMEOUT)


def _launch(workdir: Path, port: int) -> ZooKeeperServer:
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "data").mkdir(exist_ok=True)
    config = workdir / "zoo.cfg"
    config.write_text("\n".join([
        "tickTime=500",  # session timeouts between 1 s and 10 s
        f"dataDir={workdir / 'data'}",
        f"clientPort={port}",
        "clientPortAddress=127.0.0.1",
        "admin.enableServer=false",
        "4lw.commands.whitelist=ruok,srvr",
        "maxClientCnxns=0",
    ]) + "\n")
    with open(workdir / "zookeeper.log", "wb") as log:
        process = subprocess.Popen(["java", *JVM_OPTIONS, "-cp", str(ZOOKEEPER_JAR), MAIN_CLASS, str(config)],
                                   stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    return ZooKeeperServer(port, workdir, process)


def start_zookeeper(workdir: Path) -> ZooKeeperServer:
    """Start a server on a free loopback port and wait (bounded) until it answers `ruok` (the test skips, with
    the reason, where none can run)."""
    reason = missing_reason()
    if reason:
        missing_service("ZooKeeper", reason)
    failures = []
    for attempt in range(START_ATTEMPTS):
        server = _launch(workdir / f"attempt-{attempt}", free_port())
        deadline = time.monotonic() + START_TIMEOUT
        while server.process.poll() is None and time.monotonic() < deadline:
            if four_letter_word(server.port, "ruok") == "imok":
                return server
            time.sleep(0.1)
        server.stop()
        failures.append(f"port {server.port}: exit {server.process.returncode}: {server.log_tail()}")
    raise RuntimeError("ZooKeeper did not start:\n" + "\n".join(failures))


@pytest.fixture(scope="session")
def zookeeper_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ZooKeeperServer]:
    """A real ZooKeeper server for the whole session (skipped, with the reason, if none can run)."""
    server = start_zookeeper(tmp_path_factory.mktemp("zookeeper"))
    try:
        yield server
    finally:
        server.stop()
