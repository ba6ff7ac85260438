"""The hostile-world campaign (issue 18): every class of docs/RELIABILITY.md's "Hostile world" tried again,
against real processes, a sandbox and hostile TCP servers on 127.0.0.1, with more cases than the tests.

    .venv/bin/python benchmarks/hostile_world.py [--only CLASS ...]

Classes: signals (SIGINT, SIGTERM, SIGHUP in each phase of elect, the drop-in, prefer and rebalance),
zookeeper (a hostile ZooKeeper port: garbage, a huge frame or array, a stall, a reset, a close; JSON and
text), files (symlinks planted where a run writes, special files as the lock), inputs (special files as
every input file, pathological sizes), config-values (a marker in every value of broken config files,
both commands, --debug), small (values that were internal errors or hangs); issue 34's: oauth (a hostile
token endpoint, special token files), secrets (values never echoed, the sandbox's credential files), numbers
(ASCII digits, weights in range), exits (exit codes and leftovers of balance, prefer, snapshot, rebalance,
sandbox --run), output (a whole document through a slow reader and signals; plan files in linear time),
second (what a second signal still says) and analyze (hostile rows: bad rows, never a refused artifact);
issue 40's: control (sandbox-ctl against a control socket that is not a sandbox: no ok, a 50 MB line, endless
bytes, a trickle, silence) and round-three (long broker lists quoted cut, a 300,000-entry prefer file refused
on the metadata alone, one error line for a blank election file and a silent server, a refused token
endpoint said refused). Each case checks a promise;
a broken one is a failure, with what was seen on stderr. The last line of stdout is the JSON object
benchmarks/run reads: cases and failures per class (target: 0 failures).
"""

from __future__ import annotations

import argparse
import functools
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
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests"))

import test_reliability_exits as exits  # noqa: E402
import test_reliability_numbers as numbers  # noqa: E402
import test_reliability_small as small  # noqa: E402
from hostile_server import BEHAVIOURS, HTTP_BEHAVIOURS, hostile_server, hostile_token_endpoint  # noqa: E402
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
from test_sandbox_remote import fake_control, replying, streaming  # noqa: E402

from leader_election_cli.cluster.wire_codec import API_VERSIONS  # noqa: E402
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


# -- issue 34: a hostile token endpoint, special token files -----------------------------------------------

def oauth_cases(tmp: Path) -> Iterator[Case]:
    for behaviour in HTTP_BEHAVIOURS:
        yield f"token endpoint: {behaviour}", lambda b=behaviour: _token_endpoint(b)
    for tool in ("drop-in", "elect"):
        yield f"{tool}: a token endpoint dripping bytes, --timeout 2", lambda t=tool: _dripping(tmp, t)
    for kind in KINDS:
        yield f"file: token URL naming {kind}", lambda k=kind: _token_file(tmp, k)


def _token_endpoint(behaviour: str) -> None:
    from leader_election_cli.cluster.oauth import OAuthTokenProvider
    from leader_election_cli.config.login import OAuthSettings
    from leader_election_cli.errors import ExitCode, LeaderElectionError

    secret = "S3cret-0f-the-client"
    with hostile_token_endpoint(behaviour) as (url, elsewhere):
        started = time.monotonic()
        try:
            OAuthTokenProvider(OAuthSettings(token_endpoint=url, client_id="c", client_secret=secret,
                                             read_timeout_ms=1000), on_secret=lambda _s: None, total_s=2).token()
        except LeaderElectionError as failure:
            error = failure
        else:
            raise AssertionError("a token from a hostile endpoint")
        took = time.monotonic() - started
    check(error.exit_code == ExitCode.UNREACHABLE and "\n" not in str(error) and secret not in str(error), str(error))
    check(elsewhere == [] and took < 3.5, f"{elsewhere} {took:.1f} s")


def _dripping(tmp: Path, tool: str) -> None:
    import test_reliability_oauth_http as oauth_http

    directory = Path(tempfile.mkdtemp(dir=tmp))
    oauth_http.test_the_commands_end_within_their_timeout_with_one_line(directory, tool)


def _token_file(tmp: Path, kind: str) -> None:
    directory = Path(tempfile.mkdtemp(dir=tmp))
    result = subprocess.run([*TOOLKIT, *INPUTS["token file"](special(kind, directory), directory)],
                            capture_output=True, text=True, timeout=30)
    check(result.returncode == 2 and "Unable to read the token file" in result.stderr, result.stderr)


# -- issue 34: values never echoed, the sandbox's credential files ----------------------------------------------

def secret_cases(tmp: Path) -> Iterator[Case]:
    for value in ("admin=S3cretValue", "S3cretValue", ":S3cretValue", "admin:"):
        yield f"sandbox --sasl-user {value!r}", lambda v=value: _sasl_user(v)
    for option in ("--tls-cert", "--tls-client-ca", "--kerberos-keytab"):
        for kind in ("fifo", "dev-zero", "directory"):
            yield f"sandbox {option} {kind}", lambda o=option, k=kind: _sandbox_file(tmp, o, k)


def _sasl_user(value: str) -> None:
    result = _toolkit("sandbox", "--sasl-user", value, "--run", "true")
    check(result.returncode == 2 and "S3cret" not in result.stderr, result.stderr)


def _sandbox_file(tmp: Path, option: str, kind: str) -> None:
    directory = Path(tempfile.mkdtemp(dir=tmp))
    path = special(kind, directory)
    pem = directory / "key.pem"
    pem.write_text("unused\n")
    extra = {"--tls-cert": ["--tls", "--tls-key", str(pem)], "--tls-client-ca": ["--tls"]}.get(option, [])
    result = subprocess.run([*TOOLKIT, "sandbox", option, path, *extra, "--run", "true"], capture_output=True,
                            text=True, timeout=30)
    said = f"Unable to read {option} " if kind != "directory" else "is a directory"  # (click's check, then)
    check(result.returncode == 2 and said in result.stderr, result.stderr)
    check(len(result.stderr.strip().splitlines()) == 2, result.stderr)  # the line and its hint


# -- issue 34: numbers ------------------------------------------------------------------------------------------

UNICODE_NUMBERS = (["balance", "--exclude-broker", "²"], ["balance", "--exclude-broker", "١"],
                   ["balance", "--max-moves", "٣"], ["balance", "--batch-size", "٣"], ["status", "--timeout", "٣"],
                   ["status", "--batch-size", "٣"], ["elect", "--all-topic-partitions", "--batch-size", "٣"],
                   ["elect", "--all-topic-partitions", "--batch-interval", "٣"], ["rebalance", "--threshold", "١٠"],
                   ["prefer", "--topic", "t", "--partition", "٠", "--leader", "1"],
                   ["prefer", "--topic", "t", "--partition", "0", "--leader", "١"], ["demote", "--broker", "١"],
                   ["demote", "--broker", "1", "--batch-size", "٣"], ["snapshot", "--output", "x.jsonl",
                                                                     "--timeout", "٣"])


def number_cases(tmp: Path) -> Iterator[Case]:
    for args in UNICODE_NUMBERS:
        yield " ".join(args), lambda a=args: _numbers(lambda sb: numbers.test_numbers_are_ascii_digits(sb, a))
    yield "the drop-in's --timeout ٣", lambda: _numbers(numbers.test_the_drop_ins_own_numbers_are_ascii_digits_too)
    yield "balance --exclude-broker every broker", \
        lambda: _numbers(numbers.test_excluding_every_broker_is_an_input_error)
    for weight in (1e308, 1.797e308, 5e-324, 1e19, 1e-7):
        yield f"weights all {weight:g}", lambda w=weight: _numbers(
            lambda sb: numbers.test_weights_out_of_range_are_refused_before_connecting(sb, _fresh(tmp), w))
    for weight in (0, 1e-6, 1, 1e18):
        yield f"weights all {weight:g}: an optimal plan", lambda w=weight: _numbers(
            lambda sb: numbers.test_weights_in_range_make_a_plan(sb, _fresh(tmp), w))


def _fresh(tmp: Path) -> Path:
    return Path(tempfile.mkdtemp(dir=tmp))


def _numbers(case: Callable[[Sandbox], None]) -> None:
    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sb:
        sb.create_topic("t", assignment={p: [1, 2, 3] for p in range(6)})
        case(sb)


# -- issue 34: exit codes and leftovers -------------------------------------------------------------------------

def exit_cases(tmp: Path) -> Iterator[Case]:
    yield "snapshot --output ''", lambda: _numbers(lambda sb: exits.test_an_empty_snapshot_output_is_an_input_error(
        sb, _fresh(tmp)))
    for command in ("prefer", "demote"):
        yield f"{command} --restore-file DIR", lambda c=command: _numbers(
            lambda sb: exits.test_a_directory_as_restore_file_is_refused_before_any_request(sb, _fresh(tmp), c))
    yield "rebalance with its lock on a full file system", lambda: _numbers(
        lambda sb: exits.test_a_full_file_system_under_the_rebalance_lock_is_no_internal_error(sb, _fresh(tmp)))
    yield "balance --plan-file on a full file system", lambda: _numbers(
        lambda sb: exits.test_a_full_file_system_leaves_no_plan_file_behind(sb, _fresh(tmp)))
    yield "sandbox --run killed by SIGKILL", exits.test_a_run_command_killed_by_a_signal_exits_as_a_shell_says
    yield "balance --execute, reorder refused: TOPIC_AUTHORIZATION_FAILED", \
        lambda: exits.test_a_reorder_refused_for_want_of_topic_authorization_exits_4(_fresh(tmp))
    yield "balance --execute, ElectLeaders refused after the reorders", \
        lambda: exits.test_partitions_reordered_but_not_elected_say_so(_fresh(tmp))
    for sig, code in SIGNALS.items():
        yield f"balance --execute, {signal.Signals(sig).name}", \
            lambda s=sig, c=code: exits.test_balance_stopped_by_a_signal_exits_128_plus_it(_fresh(tmp), s, c)


# -- issue 34: whole documents, linear plan files ------------------------------------------------------------

def output_cases(tmp: Path) -> Iterator[Case]:
    import test_reliability_signals as signals_tests

    for attempt in range(3):
        yield f"30 MB through a slow reader with signals (#{attempt + 1})", \
            signals_tests.test_signals_while_stdout_waits_on_a_slow_reader_lose_no_byte
    yield "drop-in --output json of 100,000 partitions, SIGTERM while a slow reader reads", _big_document
    yield "a 200,000-entry plan file: its verdict within 5 s of CPU", lambda: _big_plan(tmp)


def _big_document() -> None:
    with Sandbox(brokers=3) as sb:
        sb.create_topic("t", partitions=100_000, replication_factor=3)
        for p in range(100):
            sb.set_leader("t", p, sb.partition_state("t", p).replicas[1])
        started: list[subprocess.Popen[bytes]] = []
        sb.after_next(ELECT_LEADERS, lambda: sb.after_next(METADATA, lambda: started[0].send_signal(signal.SIGTERM)))
        process = subprocess.Popen([*DROP_IN, "--bootstrap-server", sb.bootstrap_servers, "--election-type",
                                    "preferred", "--all-topic-partitions", "--output", "json"],
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        started.append(process)
        assert process.stdout is not None and process.stderr is not None
        chunks = []
        while chunk := os.read(process.stdout.fileno(), 4096):
            chunks.append(chunk)
            time.sleep(0.0002)
        err = process.stderr.read().decode()
        process.wait(timeout=60)
    document = _document(b"".join(chunks).decode(), err)
    check(len(document["partitions"]) == 100_000 and process.returncode == 0, err)  # type: ignore[arg-type]


def _big_plan(tmp: Path) -> None:
    import resource

    import test_reliability_inputs as inputs

    path = inputs._plan_file(_fresh(tmp), 200_000)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = subprocess.run([*TOOLKIT, "balance", "--bootstrap-server", UNUSED, "--timeout", "1", "--execute",
                             "--plan-file", str(path)], capture_output=True, text=True, timeout=120)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    check(result.returncode == 3 and cpu < 5, f"exit {result.returncode}, {cpu:.1f} s of CPU: {result.stderr}")


# -- issue 34: what a second signal still says -----------------------------------------------------------------

def second_cases(tmp: Path) -> Iterator[Case]:
    import test_reliability_signals as signals_tests

    yield "elect, two SIGTERMs: how many partitions were sent", signals_tests.test_a_second_signal_exits_at_once
    yield "prefer, two SIGINTs: the restore file", \
        lambda: signals_tests.test_a_second_signal_still_says_where_the_restore_file_is(_fresh(tmp))


# -- issue 34: analyze over hostile rows ------------------------------------------------------------------------

HOSTILE_ROWS = {"taken_at in year 1": ("taken_at", "0001-01-01T00:00:00Z"),
                "taken_at 9999-12-31T23:59:59.999999Z": ("taken_at", "9999-12-31T23:59:59.999999Z"),
                "a topic named ../../t0": ("topic", "../../t0")}


def analyze_cases(tmp: Path) -> Iterator[Case]:
    """One analyze run (a JVM start is most of its minute) over a fixable partition of a 5,000-character
    cluster name and one row of each hostile kind; each promise a case."""
    run = functools.cache(lambda: _analyze(tmp))
    for number, (name, _) in enumerate(HOSTILE_ROWS.items(), 1):
        yield f"analyze: {name} is a bad row", lambda n=number: _bad_row(run(), n)
    yield "analyze: a 5,000-character cluster name, no internal error", lambda: check(run()[0].returncode == 0,
                                                                                       run()[0].stderr[-1500:])
    yield "analyze: every election file is one the drop-in reads", lambda: _election_files(run()[1])


def _analyze(tmp: Path) -> tuple[subprocess.CompletedProcess[str], Path]:
    directory = _fresh(tmp)
    good = {"format_version": 2, "cluster": "c" * 5000, "taken_at": "2024-05-01T12:00:00Z", "topic": "t",
            "partition": 0, "replicas": [1, 2], "isr": [1, 2], "elr": [], "leader": 2, "adding_replicas": None,
            "removing_replicas": None, "min_insync_replicas": 1, "live_brokers": [1, 2]}
    rows = [good, *({**good, "partition": number, column: value}
                    for number, (column, value) in enumerate(HOSTILE_ROWS.values(), 1))]
    (directory / "s.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = subprocess.run([*TOOLKIT, "analyze", str(directory / "s.jsonl"), "--out", str(directory / "out")],
                            capture_output=True, text=True, timeout=600)
    no_traceback(result.stderr)
    return result, directory / "out"


def _bad_row(run: tuple[subprocess.CompletedProcess[str], Path], partition: int) -> None:
    import pyarrow.parquet as pq

    result, out = run
    check((out / "bad_rows").is_dir(), result.stderr[-1500:])
    bad = pq.read_table(out / "bad_rows", columns=["partition", "bad_reason"]).to_pylist()
    check(any(row["partition"] == partition and row["bad_reason"] for row in bad), f"{bad}"[:1500])


def _election_files(out: Path) -> None:
    from leader_election_cli.selection.files import load_election_file

    files = list((out / "plans").rglob("*.json"))
    check(len(files) == 1 and all(len(part) <= 255 for f in files for part in f.parts), str(files)[:500])
    check([str(tp) for tp in load_election_file(str(files[0]))] == ["t-0"], str(files))


# -- issue 40: a control socket that is not a sandbox, and the smaller ones ---------------------------------

CONTROL_ANSWERS: dict[str, Callable[[Any], None]] = {
    "JSON without ok": replying(b'{"brokers": {"1": "up"}}\n'),
    "ok false without its error": replying(b'{"ok": false}\n'),
    "ok not a boolean": replying(b'{"ok": 1, "brokers": {"1": "up"}}\n'),
    "ok true without the states": replying(b'{"ok": true}\n'),
    "a 50 MB line": replying(b'{"ok": true, "brokers": {"1": "' + b"x" * 50_000_000 + b'"}}\n'),
    "bytes without a newline, endless": streaming(b"x" * 65536, 0.001),
    "a byte every 0.1 s": streaming(b"x", 0.1),
    "not JSON": replying(b"not json\n"),
    "not UTF-8": replying(b"\xff\xfe\n"),
    "nested 100,000 deep": replying(b"[" * 100_000 + b"\n"),
    "an answer, then more": replying(b'{"ok": true, "brokers": {"1": "up"}}\n{"ok": true}\n'),
    "closed without an answer": lambda connection: None,
    "silence": lambda connection: time.sleep(45),
}


def control_cases(tmp: Path) -> Iterator[Case]:
    for name, answer in CONTROL_ANSWERS.items():
        yield f"sandbox-ctl, a control socket: {name}", lambda a=answer: _control(tmp, a)


def _control(tmp: Path, answer: Callable[[Any], None]) -> None:
    """Exit 3 with one line and its hint, nothing on stdout, within the client's 30 s (a sandbox answers in
    milliseconds)."""
    path = str(Path(tempfile.mkdtemp(dir=tmp)) / "s")
    with fake_control(path, [answer]):
        started = time.monotonic()
        result = _toolkit("sandbox-ctl", "--control", path, "status")
        took = time.monotonic() - started
    lines = result.stderr.splitlines()
    check(result.returncode == 3 and result.stdout == "" and len(lines) == 2 and lines[1].startswith("Hint: "),
          result.stderr + result.stdout[:200])
    check(took < 45, f"{took:.1f} s")


def round_three_cases(tmp: Path) -> Iterator[Case]:
    ids = ",".join(map(str, range(1000, 11_000)))
    for args in (["can-stop", ids], ["roll", "--brokers", ids, "--exec", "true"], ["balance", "--exclude-broker", ids]):
        yield f"{args[0]} with 10,000 unknown broker ids", lambda a=args: _short_line(a)
    yield "prefer, a 300,000-entry file naming unknown partitions", lambda: _large_prefer_file(tmp)
    for program in ("drop-in", "elect"):
        yield f"{program}: an election file of white space and a BOM", \
            lambda p=program: small.test_an_election_file_of_white_space_and_a_bom_is_one_error_line(
                p, Path(tempfile.mkdtemp(dir=tmp)))
    yield "balance --execute --output json, a silent server", \
        small.test_a_silent_server_is_one_error_line_beside_the_json_document
    yield "token endpoint refusing connections", _token_endpoint_refusing


def _short_line(args: list[str]) -> None:
    with Sandbox(brokers=3) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        result = _toolkit(*args, "--bootstrap-server", sb.bootstrap_servers, "--output", "json")
        sent = [r.api_key for r in sb.request_log]
    lines = result.stderr.splitlines()
    check(result.returncode == 2 and len(lines) == 2 and len(lines[0]) < 300, result.stderr[:1500])
    check(not set(sent) & {ELECT_LEADERS, ALTER_REASSIGNMENTS}, str(sent))


def _large_prefer_file(tmp: Path) -> None:
    path = Path(tempfile.mkdtemp(dir=tmp)) / "leaders.json"
    path.write_text(json.dumps({"partitions": [{"topic": "t", "partition": p, "leader": 1} for p in range(300_000)]}))
    with Sandbox(brokers=3) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]})
        result = _toolkit("prefer", "--bootstrap-server", sb.bootstrap_servers, "--path-to-json-file", str(path))
        sent = [r.api_key for r in sb.request_log]
    check(result.returncode == 2 and sent == [API_VERSIONS, METADATA], f"{sent} {result.stderr[:1000]}")
    check(len(result.stderr.splitlines()[0]) < 300, result.stderr[:1000])


def _token_endpoint_refusing() -> None:
    import socket

    from leader_election_cli.cluster.oauth import OAuthTokenProvider
    from leader_election_cli.config.login import OAuthSettings
    from leader_election_cli.errors import LeaderElectionError

    with socket.socket() as held:  # bound, never listening: every connection is refused
        held.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{held.getsockname()[1]}/token"
        try:
            OAuthTokenProvider(OAuthSettings(token_endpoint=url, client_id="c", client_secret="s"),
                               on_secret=lambda _s: None, total_s=30).token()
        except LeaderElectionError as failure:
            check(str(failure).endswith("no connection: Connection refused"), str(failure))
        else:
            raise AssertionError("a token from a port that refuses")


# -- the campaign -------------------------------------------------------------------------------------

CLASSES: dict[str, Callable[[Path], Iterator[Case]]] = {
    "signals": signal_cases, "zookeeper": zookeeper_cases, "files": file_cases, "inputs": input_cases,
    "config-values": config_cases, "small": small_cases, "oauth": oauth_cases, "secrets": secret_cases,
    "numbers": number_cases, "exits": exit_cases, "output": output_cases, "second": second_cases,
    "analyze": analyze_cases, "control": control_cases, "round-three": round_three_cases,
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
