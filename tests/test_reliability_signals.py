"""One signal policy in every phase (issue 18, class 1): SIGINT, SIGTERM and SIGHUP stop a real process after
the step in flight, with the whole report, the audit line and a documented exit code; a second signal
exits at once. Each signal reaches the process while the sandbox holds a chosen request, so the phase
is certain on any machine."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from commands import TOOLKIT

from leader_election_cli.errors import ExitCode
from leader_election_cli.sandbox import Sandbox

METADATA, ELECT_LEADERS, ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS = 3, 43, 45, 46
PARTITIONS = 6


def signalled(argv: list[str], arm: Callable[[Callable[[], None]], None], *signals: int) -> tuple[int, str, str]:
    """Run `argv`; `arm(send)` sets up when `send()` runs, which delivers `signals` one after the other.

    Two signals are two different ones, the lower-numbered first: the kernel merges a signal sent again
    before the process took the first, and Python runs the handlers of signals pending together in the
    order of their numbers; so the process sees both, in the order sent, however late it runs."""
    assert list(signals) == sorted(set(signals)), "distinct signals, lowest number first"
    started: list[subprocess.Popen[str]] = []

    def send() -> None:
        for sig in signals:
            started[0].send_signal(sig)

    arm(send)
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started.append(process)
    try:
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    return process.returncode, out, err


def off_preferred(sb: Sandbox, topic: str = "t") -> None:
    sb.create_topic(topic, partitions=PARTITIONS, replication_factor=3)
    for p in range(PARTITIONS):
        sb.set_leader(topic, p, sb.partition_state(topic, p).replicas[1])


def after_the_election(sb: Sandbox, api_key: int, skip: int = 0) -> Callable[[Callable[[], None]], None]:
    """Hold the first `api_key` request after the first ElectLeaders answer (and `skip` more), and signal then."""

    def arm(send: Callable[[], None]) -> None:
        def hold(left: int) -> None:
            if left:
                sb.after_next(api_key, lambda: hold(left - 1))
            else:
                sb.hold_next(api_key, send)

        sb.after_next(ELECT_LEADERS, lambda: hold(skip))

    return arm


def test_sigterm_during_the_read_back_after_an_election_still_prints_the_whole_report() -> None:
    """The read-back completes and the report is printed whole: all the work was done, so the run's own code."""
    with Sandbox(brokers=3) as sb:
        off_preferred(sb)
        code, out, err = signalled([*TOOLKIT, "elect", "--topic", "t", "--bootstrap-server", sb.bootstrap_servers,
                                    "--output", "json"], after_the_election(sb, METADATA), signal.SIGTERM)
    assert code == ExitCode.OK, err
    document = json.loads(out)
    assert [p["outcome"] for p in document["partitions"]] == ["elected"] * PARTITIONS


def test_sigterm_that_cuts_the_read_back_short_is_a_run_cut_short() -> None:
    """The metadata lags the election: the read-back would read again, but SIGTERM stops it. The partitions
    it could not confirm are `unconfirmed`, and the run exits 143 (cut short), not 3 or 0."""
    with Sandbox(brokers=3) as sb:
        off_preferred(sb)
        sb.lag_metadata_after_next_election(reads=100)  # the election's fault: the signal is armed otherwise,
        # once the first read (before the election) is answered: it strikes while the next read is held
        code, out, err = signalled([*TOOLKIT, "elect", "--topic", "t", "--bootstrap-server", sb.bootstrap_servers,
                                    "--output", "json"],
                                   lambda send: sb.after_next(METADATA, lambda: sb.hold_next(METADATA, send)),
                                   signal.SIGTERM)
        assert [r.api_key for r in sb.request_log][-2:] == [ELECT_LEADERS, METADATA]  # one read-back, cut short
    assert code == 143, err
    document = json.loads(out)
    assert [p["outcome"] for p in document["partitions"]] == ["unconfirmed"] * PARTITIONS
    assert document["summary"]["exit_code"] == 143 and document["summary"]["interrupted"]


def test_a_signal_while_the_report_prints_cannot_cut_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """The JSON document is printed whole (a cut one was printed before, with exit 130)."""
    from click.testing import CliRunner

    from leader_election_cli.cli.toolkit import cli
    from leader_election_cli.render import output as render_output

    write_json = render_output.write_json

    def signalled_midway(document: dict[str, object], out: object) -> None:
        signal.raise_signal(signal.SIGINT)
        write_json(document, out)  # type: ignore[arg-type]

    monkeypatch.setattr(render_output, "write_json", signalled_midway)
    with Sandbox(brokers=3) as sb:
        off_preferred(sb)
        result = CliRunner().invoke(cli, ["status", "--bootstrap-server", sb.bootstrap_servers, "--output", "json"])
    assert result.exit_code == ExitCode.OK, result.stderr
    assert json.loads(result.stdout)["brokers"]


@pytest.mark.parametrize(("sig", "expected"), [(signal.SIGTERM, 143), (signal.SIGHUP, 129), (signal.SIGINT, 130)])
def test_a_signal_between_batches_reports_every_partition_with_its_own_exit_code(sig: int, expected: int) -> None:
    with Sandbox(brokers=3) as sb:
        off_preferred(sb)
        code, out, err = signalled([*TOOLKIT, "elect", "--topic", "t", "--bootstrap-server", sb.bootstrap_servers,
                                    "--batch-size", "2", "--output", "json"],
                                   lambda send: sb.hold_next(ELECT_LEADERS, send), sig)
    assert code == expected, err
    document = json.loads(out)
    assert len(document["partitions"]) == PARTITIONS
    assert [p["outcome"] for p in document["partitions"]] == ["elected"] * 2 + ["not_attempted"] * (PARTITIONS - 2)
    assert document["summary"]["exit_code"] == expected and document["summary"]["interrupted"] is True


def test_sigterm_before_anything_was_sent_says_so_and_exits_143() -> None:
    with Sandbox(brokers=3) as sb:
        off_preferred(sb)
        code, out, err = signalled([*TOOLKIT, "elect", "--topic", "t", "--bootstrap-server", sb.bootstrap_servers],
                                   lambda send: sb.hold_next(METADATA, send), signal.SIGTERM)
        assert sb.request_count(ELECT_LEADERS) == 0
    assert code == ExitCode.TERMINATED
    assert err.splitlines()[-1] == "Stopped by SIGTERM before anything was sent."


def test_a_second_signal_exits_at_once() -> None:
    """The first signal waits for the batch in flight; the second does not wait for anything."""
    with Sandbox(brokers=3) as sb:
        off_preferred(sb)
        code, out, err = signalled([*TOOLKIT, "elect", "--topic", "t", "--bootstrap-server", sb.bootstrap_servers,
                                    "--output", "json"], lambda send: sb.hold_next(ELECT_LEADERS, send),
                                   signal.SIGINT, signal.SIGTERM)
    assert code == ExitCode.TERMINATED
    assert out == ""
    assert "Stopped at once by a second signal (SIGTERM)" in err
    # issue 34: what was done is not lost with the report
    assert err.splitlines()[-1] == ("6 of 6 partitions were sent for election before the stop: kafka-leaders "
                                    "status shows their leaders now."), err


def test_a_second_signal_still_says_where_the_restore_file_is(tmp_path: Path) -> None:
    """prefer stopped twice while it waits for its reorder: no report, but the way back is named."""
    restore = tmp_path / "restore.json"
    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        code, out, err = signalled([*TOOLKIT, "prefer", "--topic", "t", "--partition", "0", "--leader", "3",
                                    "--bootstrap-server", sb.bootstrap_servers, "--restore-file", str(restore)],
                                   lambda send: sb.after_next(ALTER_REASSIGNMENTS,
                                                              lambda: sb.hold_next(LIST_REASSIGNMENTS, send)),
                                   signal.SIGHUP, signal.SIGINT)
    assert code == ExitCode.INTERRUPTED and out == ""
    assert f"kafka-leaders restore {restore} puts back those this run changed." in err, err
    assert restore.exists()


@pytest.mark.parametrize(("sig", "expected"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_while_prefer_waits_for_its_reorder_stops_before_electing_and_reports(
        sig: int, expected: int, tmp_path: Path) -> None:
    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        code, out, err = signalled([*TOOLKIT, "prefer", "--topic", "t", "--partition", "0", "--leader", "3",
                                    "--bootstrap-server", sb.bootstrap_servers, "--output", "json",
                                    "--restore-file", str(tmp_path / "restore.json")],
                                   lambda send: sb.after_next(ALTER_REASSIGNMENTS,
                                                              lambda: sb.hold_next(LIST_REASSIGNMENTS, send)), sig)
        assert sb.request_count(ELECT_LEADERS) == 0
        replicas = sb.partition_state("t", 0).replicas
    assert code == expected, err
    (row,) = json.loads(out)["partitions"]
    assert row["outcome"] == "not_attempted" and tuple(row["replicas_after"]) == replicas == (3, 1, 2)
    assert row["error"].startswith("reordered, but no election was run: the restore file puts the order back")


@contextmanager
def led_by_broker_3() -> Iterator[Sandbox]:
    """Every leader on broker 3, which prefers none of them: brokers 1 and 2 well above any threshold."""
    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sb:
        sb.create_topic("t", assignment={p: [1, 2, 3] if p % 2 else [2, 3, 1] for p in range(PARTITIONS)})
        for p in range(PARTITIONS):
            sb.set_leader("t", p, 3)
        yield sb


def test_sigterm_while_rebalance_reads_the_balance_after_electing_still_writes_the_audit_line(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    with led_by_broker_3() as sb:
        code, out, err = signalled([*TOOLKIT, "rebalance", "--bootstrap-server", sb.bootstrap_servers,
                                    "--threshold", "10", "--output", "json", "--audit-log", str(audit),
                                    "--lock-file", str(tmp_path / "lock")],
                                   after_the_election(sb, METADATA, skip=1), signal.SIGTERM)
    assert code == ExitCode.OK, err
    (line,) = audit.read_text().splitlines()
    assert json.loads(line)["exit_code"] == 0
    assert json.loads(out)["summary"]["exit_code"] == 0


def test_sigterm_while_rebalance_elects_is_recorded_with_143(tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    with led_by_broker_3() as sb:
        code, out, err = signalled([*TOOLKIT, "rebalance", "--bootstrap-server", sb.bootstrap_servers,
                                    "--threshold", "10", "--output", "json", "--audit-log", str(audit),
                                    "--batch-size", "1", "--lock-file", str(tmp_path / "lock")],
                                   lambda send: sb.hold_next(ELECT_LEADERS, send), signal.SIGTERM)
    assert code == ExitCode.TERMINATED, err
    (line,) = audit.read_text().splitlines()
    assert json.loads(line)["exit_code"] == 143 == json.loads(out)["summary"]["exit_code"]


def test_the_signal_policy_restores_the_handlers_it_replaced() -> None:
    """A Python caller's own handlers are back after a run (the CLI's policy and an operation's window)."""
    from leader_election_cli.operations import signals

    def mine(signum: int, frame: object) -> None:
        return None

    previous = signal.signal(signal.SIGTERM, mine)
    try:
        with signals.policy(), signals.stop_on_signals() as stop:
            assert signal.getsignal(signal.SIGTERM) is not mine
            signal.raise_signal(signal.SIGTERM)
            assert stop.signum == signal.SIGTERM
        assert signal.getsignal(signal.SIGTERM) is mine
        with signals.stop_on_signals() as stop:
            signal.raise_signal(signal.SIGHUP)
            assert stop.signum == signal.SIGHUP
        assert signal.getsignal(signal.SIGTERM) is mine
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_off_the_main_thread_the_policy_leaves_signals_alone() -> None:
    from leader_election_cli.operations import signals

    seen: list[bool] = []

    def body() -> None:
        with signals.stop_on_signals() as stop:
            seen.append(stop.stopped)

    thread = threading.Thread(target=body)
    thread.start()
    thread.join()
    assert seen == [False]


SLOW_PRINTER = """
import signal
import sys
from leader_election_cli.cli.common import process_main
from leader_election_cli.operations import signals

def command():
    signal.signal(signal.SIGUSR1, lambda *_: None)  # more signals that interrupt a blocked write
    with signals.policy(), signals.stop_on_signals():
        sys.stdout.write("start\\n")
        sys.stdout.flush()
        for chunk in range(300):
            sys.stdout.write("".join(f"{chunk:05d}-{row:05d}-{'x' * 88}\\n" for row in range(1000)))

process_main(command)
"""


def test_signals_while_stdout_waits_on_a_slow_reader_lose_no_byte() -> None:
    """Python's buffered stdout dropped the rest of a write a signal cut short while it waited on a full
    pipe: a 100,000-partition JSON document lost 82 KB mid-row, exit 0 (issue 34). One writer now writes
    every byte, whatever signal interrupts it: SIGTERM (deferred: the printing goes on), then SIGUSR1s."""
    process = subprocess.Popen([sys.executable, "-c", SLOW_PRINTER], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stdout is not None and process.stderr is not None
    received = bytearray()
    while not received.startswith(b"start\n"):  # os.read, not readline: its read-ahead would be skipped below
        received += os.read(process.stdout.fileno(), 4096)
    process.send_signal(signal.SIGTERM)  # deferred by the policy: the printing goes on
    signals_sent = 1
    while chunk := os.read(process.stdout.fileno(), 4096):
        received += chunk
        if len(received) // 1_000_000 > signals_sent - 1 and signals_sent < 20:
            process.send_signal(signal.SIGUSR1)
            signals_sent += 1
        time.sleep(0.0002)
    err = process.stderr.read().decode()
    process.wait(timeout=30)
    lines = received.decode().splitlines()
    assert len(lines) == 1 + 300 * 1000, (len(lines), err)
    assert lines[1:] == [f"{c:05d}-{r:05d}-{'x' * 88}" for c in range(300) for r in range(1000)]
    assert process.returncode == 0, err
