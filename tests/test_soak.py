"""Long runs: 1,000 consecutive elections, then the failure paths, leave no file descriptor, thread or
memory behind.

Everything runs in this process: the sandbox, and the commands (their click entry points with
stdout and stderr redirected), alternating `kafka-leader-election` and `kafka-leaders elect`, each
electing a partition moved off its preferred replica just before. After a warm-up (imports, caches)
the process's open file descriptors (/proc/self/fd), threads, Python objects (the sandbox's own
request log excluded) and resident memory are recorded, and compared after the rest. Bounded: about
20 seconds in all. Marked `slow` so that `-m "not slow"` can leave it out; the default run includes it.

Not click's CliRunner: it makes new stdout/stderr objects for every run, and click keeps a text
wrapper for each stderr it has written an error to (a cache whose values hold their weak keys), which
would show as a leak of seven objects per failed run that no real process has.
"""

from __future__ import annotations

import gc
import io
import logging
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import cli as toolkit
from leader_election_cli.sandbox import Sandbox

pytestmark = pytest.mark.slow

ELECTIONS, WARM_UP = 1000, 100
PARTITIONS = 30
MAX_NEW_OBJECTS = 200  # a leak of one object every five runs would pass 200 well before run 1,000
MAX_RSS_GROWTH = 16 * 2**20  # the sandbox's request log takes about 1 MiB of it


OUT, ERR = io.StringIO(), io.StringIO()  # one pair for every run, as a real process has


def invoke(program: click.Command, args: list[str]) -> tuple[int, str]:
    """Run a command in this process; returns its exit code and stderr."""
    for stream in (OUT, ERR):
        stream.seek(0)
        stream.truncate()
    with redirect_stdout(OUT), redirect_stderr(ERR):
        try:
            program.main(args, prog_name=program.name)
        except SystemExit as done:
            return int(done.code or 0), ERR.getvalue()
    return 0, ERR.getvalue()


@dataclass(frozen=True)
class Usage:
    fds: int
    threads: int
    objects: int
    rss: int


def usage() -> Usage:
    """This process's resources, the sandbox's own objects (its request log grows by design) left out."""
    gc.collect()
    objects = sum(1 for o in gc.get_objects()  # a metaclass's __module__ may be a descriptor, not a str
                  if not str(getattr(type(o), "__module__", "")).startswith("leader_election_cli.sandbox"))
    with open("/proc/self/statm") as statm:
        rss = int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    return Usage(len(os.listdir("/proc/self/fd")), threading.active_count(), objects, rss)


def idle_usage(sb: Sandbox) -> Usage:
    """The usage once the sandbox has closed its side of every connection (it waits 0.1 s before closing
    a connection whose login failed, as Kafka does): bounded, at most 60 s."""
    deadline = time.monotonic() + 60
    while sb.open_connections() and time.monotonic() < deadline:
        time.sleep(0.1)
    return usage()


def settled(sb: Sandbox, baseline: Usage) -> Usage:
    """`idle_usage`, once the client's threads have ended too: bounded, at most 60 s more."""
    now = idle_usage(sb)
    deadline = time.monotonic() + 60
    while (now.fds > baseline.fds or now.threads > baseline.threads) and time.monotonic() < deadline:
        time.sleep(0.1)
        now = usage()
    return now


def report(name: str, baseline: Usage, now: Usage, runs: int, seconds: float) -> None:
    print(f"\n{name}: {runs} runs in {seconds:.1f} s; fds {baseline.fds} -> {now.fds}, threads {baseline.threads} -> "
          f"{now.threads}, objects {baseline.objects} -> {now.objects}, RSS {baseline.rss / 2**20:.1f} -> "
          f"{now.rss / 2**20:.1f} MiB")


@pytest.fixture(scope="module", autouse=True)
def quiet_sandbox() -> Iterator[None]:
    """The sandbox logs a warning for every refused login; pytest keeps every log record of a test,
    which would read as a leak here."""
    logger = logging.getLogger("leader_election_cli.sandbox")
    level = logger.level
    logger.setLevel(logging.ERROR)
    yield
    logger.setLevel(level)


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(brokers=3, mode="kraft", sasl_users={"admin": "admin-secret"}) as sandbox:
        sandbox.create_topic("soak", assignment={p: [1 + (p + i) % 3 for i in range(3)] for p in range(PARTITIONS)})
        yield sandbox


@pytest.fixture(scope="module")
def login(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], str]:
    directory = tmp_path_factory.mktemp("soak")

    def config(password: str) -> str:
        path = directory / f"{password}.properties"
        path.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka"
                        f'.common.security.plain.PlainLoginModule required username="admin" password="{password}";\n')
        return str(path)
    return config


def test_a_thousand_elections(sb: Sandbox, login: Callable[[str], str]) -> None:
    config = login("admin-secret")
    baseline, started = idle_usage(sb), time.monotonic()
    for run in range(ELECTIONS):
        if run == WARM_UP:
            baseline, started = idle_usage(sb), time.monotonic()
        p = run % PARTITIONS
        sb.set_leader("soak", p, 1 + (p + 1) % 3)  # its second replica
        if run % 2:
            code, err = invoke(drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                                         "--topic", "soak", "--partition", str(p), "--command-config", config,
                                         "--output", "json"])
        else:
            code, err = invoke(toolkit, ["elect", "--bootstrap-server", sb.bootstrap_servers, "-p", f"soak:{p}",
                                         "--command-config", config, "--output", "json"])
        assert code == 0, (run, err)
        assert sb.partition_state("soak", p).leader == 1 + p % 3, run
    now = settled(sb, baseline)
    report("elections", baseline, now, ELECTIONS - WARM_UP, time.monotonic() - started)
    assert (now.fds, now.threads) == (baseline.fds, baseline.threads)
    assert now.objects - baseline.objects <= MAX_NEW_OBJECTS
    assert now.rss - baseline.rss <= MAX_RSS_GROWTH


def test_the_failure_paths(sb: Sandbox, login: Callable[[str], str], tmp_path: Path,
                           refused_address: Callable[[], str]) -> None:
    """A refused login, an unreachable cluster, an unknown topic and a bad file, over and over: each
    path that gives up must close what it opened."""
    closed = refused_address()
    bad_file = tmp_path / "bad.json"
    bad_file.write_text('{"partitions": [{"topic": "soak"}]}')
    good, wrong = login("admin-secret"), login("wrong-secret")
    cases = [
        (drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred", "--topic", "soak",
                   "--partition", "0", "--command-config", wrong], 4),
        (toolkit, ["elect", "--bootstrap-server", closed, "--topic", "soak", "--timeout", "0.1"], 3),
        (toolkit, ["elect", "--bootstrap-server", sb.bootstrap_servers, "--topic", "nosuch", "--command-config", good],
         2),
        (drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                   "--path-to-json-file", str(bad_file)], 2),
    ]
    rounds, warm_up = 60, 10
    baseline, started = idle_usage(sb), time.monotonic()
    for round_ in range(rounds):
        if round_ == warm_up:
            baseline, started = idle_usage(sb), time.monotonic()
        for program, args, expected in cases:
            code, err = invoke(program, args)
            assert code == expected, (round_, args, err)
    now = settled(sb, baseline)
    report("failure paths", baseline, now, (rounds - warm_up) * len(cases), time.monotonic() - started)
    assert (now.fds, now.threads) == (baseline.fds, baseline.threads)
    assert now.objects - baseline.objects <= MAX_NEW_OBJECTS
    assert now.rss - baseline.rss <= MAX_RSS_GROWTH
