"""The hostile-world campaign (issue 18): every class of docs/RELIABILITY.md's "Hostile world" tried again,
against real processes, a sandbox and hostile TCP servers on 127.0.0.1, with more cases than the tests.

    .venv/bin/python benchmarks/hostile_world.py [--only CLASS ...]

Classes: signals (SIGINT, SIGTERM, SIGHUP in each phase of elect, the drop-in, prefer and rebalance),
zookeeper (a hostile ZooKeeper port: garbage, a huge frame or array, a stall, a reset, a close; JSON and
text), files (symlinks planted where a run writes, special files as the lock), inputs (special files as
every input file, pathological sizes), config-values (a marker in every value of broken config files,
both commands, --debug), small (values that were internal errors or hangs). Each case checks a promise;
a broken one is a failure, with what was seen on stderr. The last line of stdout is the JSON object
benchmarks/run reads: cases and failures per class (target: 0 failures).
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

from hostile_server import BEHAVIOURS, hostile_server  # noqa: E402  (the tests' helpers)
from test_reliability_config_values import BROKEN, COMMANDS, MARK  # noqa: E402
from test_reliability_config_values import run_all as run_config_cases  # noqa: E402
from test_reliability_inputs import INPUTS, KINDS, special  # noqa: E402
from test_reliability_signals import (  # noqa: E402
    ALTER_REASSIGNMENTS,
    ELECT_LEADERS,
    LIST_REASSIGNMENTS,
    METADATA,
    PARTITIONS,
    TOOLKIT,
    after_the_election,
    off_preferred,
    signalled,
)

from leader_election_cli.sandbox import Sandbox  # noqa: E402

DROP_IN = [sys.executable, "-m", "leader_election_cli"]
UNUSED = "127.0.0.1:1"
Case = tuple[str, Callable[[], None]]
SIGNALS = {signal.SIGINT: 130, signal.SIGTERM: 143, signal.SIGHUP: 129}


def check(condition: bool, seen: str) -> None:
    if not condition:
        raise AssertionError(seen[-1500:])


def no_traceback(err: str) -> None:
    check("Traceback" not in err and "Internal error" not in err, err)


# -- signals ----------------------------------------------------------------------------------------

def signal_cases(tmp: Path) -> Iterator[Case]:
    commands = {"elect": [*TOOLKIT, "elect", "--topic", "t"],
                "drop-in": [*DROP_IN, "--election-type", "preferred", "--all-topic-partitions"]}
    for sig, code in SIGNALS.items():
        for name, argv in commands.items():
            yield f"{name}, {signal.Signals(sig).name} between batches", lambda a=argv, s=sig, c=code: _batches(a, s, c)
            yield f"{name}, {signal.Signals(sig).name} during the read-back", lambda a=argv, s=sig: _read_back(a, s)
            yield f"{name}, {signal.Signals(sig).name} before anything was sent", \
                lambda a=argv, s=sig, c=code: _before(a, s, c)
        yield f"prefer, {signal.Signals(sig).name} during the reorder wait", lambda s=sig, c=code: _prefer(tmp, s, c)
        yield f"rebalance, {signal.Signals(sig).name} during the balance read", lambda s=sig: _rebalance(tmp, s)
        yield f"elect, a second {signal.Signals(sig).name}", lambda s=sig, c=code: _second(s, c)


def _document(out: str, err: str) -> dict[str, object]:
    try:
        return json.loads(out)
    except ValueError:
        raise AssertionError(f"no JSON document: {out[-500:]!r} {err[-1000:]}") from None


def _batches(argv: list[str], sig: int, code: int) -> None:
    with Sandbox(brokers=3) as sb:
        off_preferred(sb)
        rc, out, err = signalled([*argv, "--bootstrap-server", sb.bootstrap_servers, "--batch-size", "2",
                                  "--output", "json"], lambda send: sb.hold_next(ELECT_LEADERS, send), sig)
    check(rc == code, err)
    no_traceback(err)
    check(len(_document(out, err)["partitions"]) == PARTITIONS, out)  # type: ignore[arg-type]


def _read_back(argv: list[str], sig: int) -> None:
    with Sandbox(brokers=3) as sb:
        off_preferred(sb)
        rc, out, err = signalled([*argv, "--bootstrap-server", sb.bootstrap_servers, "--output", "json"],
                                 after_the_election(sb, METADATA), sig)
    check(rc == 0, err)
    check([p["outcome"] for p in _document(out, err)["partitions"]] == ["elected"] * PARTITIONS, out)  # type: ignore


def _before(argv: list[str], sig: int, code: int) -> None:
    with Sandbox(brokers=3) as sb:
        off_preferred(sb)
        rc, _, err = signalled([*argv, "--bootstrap-server", sb.bootstrap_servers],
                               lambda send: sb.hold_next(METADATA, send), sig)
        sent = sb.request_count(ELECT_LEADERS)
    check(rc == code and sent == 0, err)
    check("before anything was sent" in err, err)


def _prefer(tmp: Path, sig: int, code: int) -> None:
    restore = tmp / f"restore-{time.monotonic_ns()}.json"
    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        rc, out, err = signalled([*TOOLKIT, "prefer", "--topic", "t", "--partition", "0", "--leader", "3",
                                  "--bootstrap-server", sb.bootstrap_servers, "--output", "json",
                                  "--restore-file", str(restore)],
                                 lambda send: sb.after_next(ALTER_REASSIGNMENTS,
                                                            lambda: sb.hold_next(LIST_REASSIGNMENTS, send)), sig)
        sent = sb.request_count(ELECT_LEADERS)
    check(rc == code and sent == 0, err)
    (row,) = _document(out, err)["partitions"]  # type: ignore[misc]
    check(row["outcome"] == "not_attempted" and restore.exists(), out)


def _rebalance(tmp: Path, sig: int) -> None:
    audit = tmp / f"audit-{time.monotonic_ns()}.jsonl"
    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sb:
        sb.create_topic("t", assignment={p: [1, 2, 3] if p % 2 else [2, 3, 1] for p in range(PARTITIONS)})
        for p in range(PARTITIONS):
            sb.set_leader("t", p, 3)
        rc, out, err = signalled([*TOOLKIT, "rebalance", "--bootstrap-server", sb.bootstrap_servers, "--threshold",
                                  "10", "--output", "json", "--audit-log", str(audit), "--lock-file",
                                  str(tmp / "lock")], after_the_election(sb, METADATA, skip=1), sig)
    check(rc == 0, err)
    check(audit.exists() and len(audit.read_text().splitlines()) == 1, err)
    _document(out, err)


def _second(sig: int, code: int) -> None:
    with Sandbox(brokers=3) as sb:
        off_preferred(sb)
        rc, _, err = signalled([*TOOLKIT, "elect", "--topic", "t", "--bootstrap-server", sb.bootstrap_servers],
                               lambda send: sb.hold_next(ELECT_LEADERS, send), sig, sig, pause=0.5)
    check(rc == code and "second signal" in err, err)


# -- zookeeper ----------------------------------------------------------------------------------------

def zookeeper_cases(tmp: Path) -> Iterator[Case]:
    for behaviour in BEHAVIOURS:
        for output in ("json", "text"):
            yield f"{behaviour}, --output {output}", lambda b=behaviour, o=output: _zookeeper(b, o)


def _zookeeper(behaviour: str, output: str) -> None:
    with hostile_server(behaviour) as address:
        started = time.monotonic()
        result = subprocess.run([*DROP_IN, "--zookeeper", address, "--election-type", "preferred",
                                 "--all-topic-partitions", "--timeout", "2", "--output", output],
                                capture_output=True, text=True, timeout=60)
        took = time.monotonic() - started
    check(result.returncode == 3, result.stderr)
    no_traceback(result.stderr)
    check(took < 2 + 5, f"--timeout 2 took {took:.1f} s")
    if output == "json":
        _document(result.stdout, result.stderr)


# -- files ----------------------------------------------------------------------------------------------

def file_cases(tmp: Path) -> Iterator[Case]:
    for option in ("--lock-file", "--audit-log", "--metrics-file"):
        yield f"rebalance {option} a planted symlink", lambda o=option: _planted(tmp, o)
    for name, path in (("/dev/null", "/dev/null"), ("a FIFO", "fifo"), ("an empty path", "")):
        yield f"rebalance --lock-file {name}", lambda p=path: _lock(tmp, p)
    yield "prefer --restore-file a planted symlink", lambda: _restore_symlink(tmp)
    yield "sandbox --ready-file of the user's", lambda: _ready_file(tmp)


def _victim(tmp: Path) -> Path:
    victim = tmp / f"victim-{time.monotonic_ns()}"
    victim.write_text("the user's\n")
    return victim


def _toolkit(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*TOOLKIT, *args], capture_output=True, text=True, timeout=60)


def _planted(tmp: Path, option: str) -> None:
    victim = _victim(tmp)
    link = tmp / f"link-{time.monotonic_ns()}"
    link.symlink_to(victim)
    result = _toolkit("rebalance", "--bootstrap-server", UNUSED, "--timeout", "1", option, str(link))
    check(result.returncode == 2 and victim.read_text() == "the user's\n", result.stderr)


def _lock(tmp: Path, path: str) -> None:
    if path == "fifo":
        path = str(tmp / f"fifo-{time.monotonic_ns()}")
        os.mkfifo(path)
    result = _toolkit("rebalance", "--bootstrap-server", UNUSED, "--timeout", "1", "--lock-file", path)
    check(result.returncode == 2, result.stderr)


def _restore_symlink(tmp: Path) -> None:
    victim = _victim(tmp)
    link = tmp / f"restore-{time.monotonic_ns()}.json"
    link.symlink_to(victim)
    with Sandbox(brokers=3) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        result = _toolkit("prefer", "--bootstrap-server", sb.bootstrap_servers, "--topic", "t", "--partition", "0",
                          "--leader", "2", "--restore-file", str(link))
        sent = sb.request_count(ALTER_REASSIGNMENTS)
    check(result.returncode == 2 and sent == 0 and victim.read_text() == "the user's\n", result.stderr)


def _ready_file(tmp: Path) -> None:
    mine = _victim(tmp)
    result = _toolkit("sandbox", "--brokers", "1", "--ready-file", str(mine), "--run", "true")
    check(result.returncode == 2 and mine.read_text() == "the user's\n", result.stderr)


# -- inputs ---------------------------------------------------------------------------------------------

def input_cases(tmp: Path) -> Iterator[Case]:
    for what in INPUTS:
        for kind in KINDS:
            yield f"{what}: {kind}", lambda w=what, k=kind: _special_input(tmp, w, k)
    sizes = {
        "a truststore of 200,000 BEGIN lines": ("truststore", "-----BEGIN CERTIFICATE-----\nAAAA\n" * 200_000),
        "a restore file with 5,000 object replicas": ("restore file", json.dumps({
            "schema_version": 1, "command": "prefer", "created_at": "2024-01-01T00:00:00Z", "cluster_id": None,
            "partitions": [{"topic": "t", "partition": 0, "replicas": [{"id": i} for i in range(5000)],
                            "leader": 0}]})),
        "a prefer file of 300,000 entries": ("prefer file", json.dumps({"partitions": [
            {"topic": "t", "partition": p, "leader": 1, "x": 1} for p in range(300_000)]})),
        "a config file of 1,000,000 continuation lines": ("properties file",
                                                          "client.id=a\\\n" + "b\\\n" * 1_000_000 + "c\n"),
        "a client.id of 40,000 characters": ("properties file", "client.id=" + "x" * 40_000 + "\n"),
    }
    for name, (what, text) in sizes.items():
        yield name, lambda w=what, t=text: _big_input(tmp, w, t)
    yield "--bootstrap-server with 8,000 entries (a process's argument holds at most 128 KiB)", \
        _many_bootstrap_servers


def _special_input(tmp: Path, what: str, kind: str) -> None:
    directory = Path(tempfile.mkdtemp(dir=tmp))
    program = DROP_IN if what == "election file" else TOOLKIT
    result = subprocess.run([*program, *INPUTS[what](special(kind, directory), directory)], capture_output=True,
                            text=True, timeout=30)
    check(result.returncode == 2 and "Unable to read" in result.stderr, result.stderr)


def _big_input(tmp: Path, what: str, text: str) -> None:
    directory = Path(tempfile.mkdtemp(dir=tmp))
    path = directory / "input"
    path.write_text(text)
    program = DROP_IN if what == "election file" else TOOLKIT
    result = subprocess.run([*program, *INPUTS[what](str(path), directory)], capture_output=True, text=True,
                            timeout=60)
    check(result.returncode == 2, result.stderr)
    no_traceback(result.stderr)


def _many_bootstrap_servers() -> None:
    result = subprocess.run([*TOOLKIT, "status"], capture_output=True, text=True, timeout=60,
                            env={**os.environ, "KAFKA_BOOTSTRAP_SERVERS": ",".join(["localhost:9092"] * 8_000)})
    check(result.returncode == 2 and "Too many bootstrap servers" in result.stderr, result.stderr)


# -- config values ----------------------------------------------------------------------------------------

def config_cases(tmp: Path) -> Iterator[Case]:
    for command, argv in COMMANDS.items():
        yield f"{command}: {len(BROKEN)} broken files", lambda a=argv: _config_values(tmp, a)


def _config_values(tmp: Path, argv: list[str]) -> None:
    directory = Path(tempfile.mkdtemp(dir=tmp))
    for name, result in run_config_cases(directory, argv).items():
        output = result.stdout + result.stderr
        check(MARK.lower() not in output.lower(), f"{name}: {output}")
        check(result.returncode in (2, 3, 4), f"{name}: exit {result.returncode}: {output}")


# -- the smaller ones -------------------------------------------------------------------------------------

def small_cases(tmp: Path) -> Iterator[Case]:
    for args in (["elect", "--topic-regex", "a{4294967296}"], ["demote", "--broker", "1", "--topic-regex", "(?"],
                 ["rebalance", "--threshold", "nan"], ["status", "--fail-above", "nan"],
                 ["rebalance", "--lock-file", ""], ["prefer", "--topic", "t", "--partition", "0", "--leader", "1",
                                                    "--restore-file", ""]):
        yield " ".join(args), lambda a=args: _refused_before_sending(a)
    for run in ("", "echo 'unbalanced"):
        yield f"sandbox --run {run!r}", lambda r=run: _sandbox_run(r)


def _refused_before_sending(args: list[str]) -> None:
    with Sandbox(brokers=1) as sb:
        result = _toolkit(*args, "--bootstrap-server", sb.bootstrap_servers)
        sent = sb.request_count()
    check(result.returncode == 2 and sent == 0, result.stderr)
    no_traceback(result.stderr)


def _sandbox_run(run: str) -> None:
    result = _toolkit("sandbox", "--brokers", "1", "--run", run)
    check(result.returncode == 2, result.stderr)
    no_traceback(result.stderr)


# -- the campaign -------------------------------------------------------------------------------------

CLASSES: dict[str, Callable[[Path], Iterator[Case]]] = {
    "signals": signal_cases, "zookeeper": zookeeper_cases, "files": file_cases, "inputs": input_cases,
    "config-values": config_cases, "small": small_cases,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", choices=list(CLASSES), default=list(CLASSES))
    options = parser.parse_args()
    figures = []
    total_cases = total_failures = 0
    with tempfile.TemporaryDirectory(prefix="hostile-") as directory:
        tmp = Path(directory)
        for name in options.only:
            cases = failures = 0
            started = time.monotonic()
            for label, case in CLASSES[name](tmp):
                cases += 1
                try:
                    case()
                except Exception as failure:  # a broken promise, or anything unexpected: both are findings
                    failures += 1
                    print(f"FAILED {name}: {label}: {''.join(traceback.format_exception_only(failure)).strip()}",
                          file=sys.stderr)
            print(f"{name:14} {cases:4} cases  {failures:3} failures  {time.monotonic() - started:6.1f} s",
                  file=sys.stderr)
            figures += [{"name": f"{name}: cases tried", "value": cases, "unit": "cases", "target": None},
                        {"name": f"{name}: failures found", "value": failures, "unit": "failures", "target": 0,
                         "goal": "max"}]
            total_cases, total_failures = total_cases + cases, total_failures + failures
    print(f"{total_cases} cases tried, {total_failures} failures found")
    print(json.dumps({"benchmark": "hostile_world", "figures": figures}))


if __name__ == "__main__":
    main()
