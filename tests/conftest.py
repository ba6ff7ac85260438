"""Settings and fixtures for the whole suite.

Hypothesis: no per-example deadline and no "too slow" health check. A property is about what the code
does, not how fast a loaded CI machine runs one example; speed has its own benchmarks (`benchmarks/`).

Sandboxes: `sandbox_factory` (one test) and `module_sandbox_factory` (one test file) start sandboxes with
their topics and stop every one they started; `mode` runs a test, or a file's sandbox, in both controller
modes. Commands run through `commands.run_command` (beside this file).

Processes: `processes` starts a test's processes, each in a session of its own, and kills each one's whole
process group (a driver's JVM, a Spark daemon's executors) when the test ends, however it ends: a failure,
a `subprocess` timeout, or pytest-timeout's (its signal method, set in pyproject.toml, raises inside the
test, so fixtures and finally-blocks still run). Spark tests start on a fresh Py4J connection each
(`_fresh_jvm_connection`).

Order: the slowest files first (`SLOWEST_FILES`); workers: one per core and one more.

Services: a test that needs a JDK, ZooKeeper, a Kerberos KDC or gssapi skips through `services.missing_service`
where it cannot be had (a failure under CI=true); the summary gives each reason once, with its count.

Ports: `refused_address()` gives a 127.0.0.1 address that refuses connections for the whole test (a port
picked, then closed, could be taken meanwhile by a sandbox or server of another test on the machine).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, suppress
from typing import Any

import pytest
import services
from hypothesis import HealthCheck, settings
from services import PREFIX, missing_service, require_command, require_gssapi

from leader_election_cli.sandbox import Sandbox

settings.register_profile("suite", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("suite")

SandboxFactory = Callable[..., Sandbox]
# The files that run Spark take about half of the suite's time: they come first, so that with pytest-xdist
# (pyproject.toml) one worker starts on them while the other runs the rest, instead of both ending on them.
SLOWEST_FILES = ("test_pipeline_cluster.py", "test_pipeline.py", "test_pipeline_class_archive.py")


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: a worker per core and one more. The suite waits much of its time (sandboxes, JVMs, other
    processes): on 2 cores, two workers took 11 min 17 s; three kept the cores 65% busy and took 9 min 31 s
    to 11 min 17 s over four runs (four were no faster)."""
    return len(os.sched_getaffinity(0)) + 1


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: item.path.name not in SLOWEST_FILES)  # stable: each file keeps its order


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A skip for a missing service is reported where services.py raised it, not at each test: pytest's
    summary folds each reason into one line with its count ("SKIPPED [42] tests/services.py:...: missing
    service ZooKeeper: ...")."""
    outcome = yield
    report = outcome.get_result()
    if report.skipped and isinstance(report.longrepr, tuple) and PREFIX in report.longrepr[2]:
        report.longrepr = (services.__file__, missing_service.__code__.co_firstlineno, report.longrepr[2])


@pytest.fixture(scope="session")
def _cache_home(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("cache"))


@pytest.fixture(autouse=True)
def _user_directories(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch,
                      _cache_home: str) -> None:
    """Default restore files go under $XDG_STATE_HOME, a directory of the test's; caches (`analyze`'s class
    archive, dumped once) under $XDG_CACHE_HOME, one of the suite's: never the user's."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
    monkeypatch.setenv("XDG_CACHE_HOME", _cache_home)


class Processes:
    """The processes one test starts (`start`, `run`), each the leader of a process group of its own."""

    def __init__(self) -> None:
        self.started: list[subprocess.Popen[Any]] = []

    def start(self, args: Sequence[str], **popen_kwargs: Any) -> subprocess.Popen[Any]:
        process = subprocess.Popen(args, start_new_session=True, **popen_kwargs)
        self.started.append(process)
        return process

    def run(self, args: Sequence[str], timeout: float, **popen_kwargs: Any) -> subprocess.CompletedProcess[Any]:
        """As `subprocess.run(args, capture_output=True, timeout=timeout)`; the whole group is killed at the end."""
        process = self.start(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **popen_kwargs)
        stdout, stderr = process.communicate(timeout=timeout)
        return subprocess.CompletedProcess(process.args, process.returncode, stdout, stderr)

    def kill_all(self) -> None:
        """SIGKILL to every group (the leader may have exited and left a JVM behind), then reap the leaders."""
        for process in self.started:
            with suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        for process in self.started:
            with suppress(subprocess.TimeoutExpired):
                process.communicate(timeout=30)


@pytest.fixture
def processes() -> Iterator[Processes]:
    started = Processes()
    try:
        yield started
    finally:
        started.kill_all()


@pytest.fixture(autouse=True)
def _fresh_jvm_connection(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a Spark test, this thread's Py4J connection is closed (`jvm_calls.forget_interrupted_call`): a test cut
    by pytest-timeout in a call into the JVM left that call's answer on it, and every later test of the
    worker read it as its own ("org does not exist in the JVM", by the dozen on a loaded machine)."""
    yield
    if request.node.get_closest_marker("spark") and "pyspark" in sys.modules:
        from leader_election_cli.pipeline import jvm_calls

        jvm_calls.forget_interrupted_call()


@pytest.fixture(scope="module", params=["kraft", "zk"])
def mode(request: pytest.FixtureRequest) -> str:
    """The controller mode: every test (or file's sandbox) that asks for it runs in KRaft and ZooKeeper mode."""
    return request.param


def _sandboxes() -> Iterator[SandboxFactory]:
    """`make(brokers, mode, topics={name: {partition: replicas}}, **sandbox_kwargs)`: a started sandbox
    with those topics; every sandbox made is stopped at teardown (each one, even if another's stop fails)."""
    with ExitStack() as stack:
        def make(brokers: int = 3, mode: str = "kraft", topics: dict[str, dict[int, list[int]]] | None = None,
                 **sandbox_kwargs: object) -> Sandbox:
            sandbox = stack.enter_context(Sandbox(brokers=brokers, mode=mode, **sandbox_kwargs))
            for name, assignment in (topics or {}).items():
                sandbox.create_topic(name, assignment=assignment)
            return sandbox

        yield make


@pytest.fixture(scope="module")
def quiet_sandbox() -> Iterator[Sandbox]:
    """Three brokers that never rebalance leaders by themselves, and topic t: six partitions on [1, 2, 3]."""
    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sandbox:
        sandbox.create_topic("t", assignment={p: [1, 2, 3] for p in range(6)})
        yield sandbox


sandbox_factory = pytest.fixture(_sandboxes, name="sandbox_factory")
module_sandbox_factory = pytest.fixture(_sandboxes, name="module_sandbox_factory", scope="module")


@pytest.fixture(scope="module")
def kdc(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A real MIT Kerberos KDC on 127.0.0.1 with a realm of its own (tests/security_fixtures.py); it sets
    KRB5_CONFIG, which the processes a test starts inherit, and the Kerberos variables are put back after.
    Its tests skip (fail under CI=true) without the KDC's programs or the gssapi package."""
    import security_fixtures

    security_fixtures.Kdc.require()
    require_gssapi()
    before = {name: os.environ.get(name) for name in ("KRB5_CONFIG", "KRB5CCNAME", "KRB5_CLIENT_KTNAME")}
    server = security_fixtures.Kdc(tmp_path_factory.mktemp("kdc"))
    yield server
    server.close()
    for name, value in before.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


@pytest.fixture(scope="session")
def java() -> None:
    """A JDK's java (Spark's driver, the stores Java writes)."""
    require_command("java", "default-jdk-headless")


@pytest.fixture(scope="session")
def java_parse() -> Callable[[str, list[str]], list[str]]:
    """Runs Java's own parsing (tests/java/ConfigParse.java, on the JDK): `java_parse(mode, values)`, mode
    "int", "long", "double", "boolean" (ConfigDef's) or "urlencode" (URLEncoder's), one answer per value.
    Skips without a JDK."""
    import shutil
    import subprocess
    from pathlib import Path

    if shutil.which("javac") is None:
        missing_service("JDK", "javac is missing, to run Java's parsing: apt-get install default-jdk-headless")
    source = Path(__file__).parent / "java" / "ConfigParse.java"

    def run(mode: str, values: list[str]) -> list[str]:
        lines = "".join(value.encode("utf-8").hex() + "\n" for value in values)
        java = subprocess.run(["java", str(source), mode], input=lines, capture_output=True, text=True,
                              timeout=120, check=True)
        answer = java.stdout.splitlines()
        assert len(answer) == len(values)
        return answer

    return run


@pytest.fixture(scope="session")
def kafka_order() -> Callable[[str, list[str]], list[str]]:
    """Runs Kafka's own ordering code (tests/java/KafkaOrder.java, on the JDK): `kafka_order(mode, lines)`,
    mode "duplicates", "results" or "selection", one output line per input line. Skips without a JDK."""
    import shutil
    import subprocess
    from pathlib import Path

    if shutil.which("javac") is None:
        missing_service("JDK", "javac is missing, to run Kafka's code: apt-get install default-jdk-headless")
    source = Path(__file__).parent / "java" / "KafkaOrder.java"

    def run(mode: str, lines: list[str]) -> list[str]:
        java = subprocess.run(["java", str(source), mode], input="".join(line + "\n" for line in lines),
                              capture_output=True, text=True, timeout=120, check=True)
        answer = java.stdout.splitlines()
        assert len(answer) == len(lines)
        return answer

    return run


@pytest.fixture
def refused_address() -> Iterator[Callable[[], str]]:
    """`refused_address()`: "127.0.0.1:PORT" where nothing listens until the test ends: a socket bound there
    and never listening, so every connection is refused and no other socket can bind the port."""
    with ExitStack() as stack:
        def address() -> str:
            held = stack.enter_context(socket.socket())
            held.bind(("127.0.0.1", 0))
            return f"127.0.0.1:{held.getsockname()[1]}"

        yield address
