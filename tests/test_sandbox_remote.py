"""The sandbox's control from another process (`sandbox-ctl`, sandbox/remote.py): a controlled shutdown,
and a restart that is fenced, then catches up, as a real broker's."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from commands import BIN, run_command
from test_unix_schemas import check

from leader_election_cli.cli.sandbox_command import write_ready_file
from leader_election_cli.cli.sandbox_ctl_command import CONTROL_ENV
from leader_election_cli.cli.toolkit import cli
from leader_election_cli.sandbox import Sandbox, control_client
from leader_election_cli.sandbox.control_client import MAX_ANSWER, request
from leader_election_cli.sandbox.remote import ControlServer

ASSIGNMENT = {p: [1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3] for p in range(12)}


def wait_for(condition: Callable[[], bool], seconds: float = 60) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "the state was not reached in time"
        time.sleep(0.02)


def test_a_restart_is_a_controlled_shutdown_then_fenced_then_catching_up(
        sandbox_factory: Callable[..., Sandbox], mode: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each phase is seen where it happens, not sampled: the unfencing waits until the fenced phase has been
    checked, and the state is noted around each step of the catch-up (a loaded machine outran 0.3 s of
    fencing, or a 0.12 s step, between two samples)."""
    sb = sandbox_factory(3, mode=mode, topics={"t": ASSIGNMENT})
    fenced_checked = threading.Event()
    seen: list[tuple[bool, int]] = []

    def noted() -> None:
        seen.append((2 in sb.live_brokers, sum(2 in sb.partition_state("t", p).isr for p in ASSIGNMENT)))

    def unfence(broker: int, **kwargs: object) -> object:
        assert fenced_checked.wait(60), "the fenced phase was not checked"
        return unfence_now(broker, **kwargs)

    def rejoin(broker: int, **kwargs: object) -> object:
        noted()
        try:
            return rejoin_now(broker, **kwargs)
        finally:
            noted()

    unfence_now, rejoin_now = sb.cluster.start_broker, sb.cluster.rejoin_isr
    monkeypatch.setattr(sb.cluster, "start_broker", unfence)
    monkeypatch.setattr(sb.cluster, "rejoin_isr", rejoin)
    control = ControlServer(sb, catch_up_seconds=1.5).start()
    try:
        ready = tmp_path / "sandbox.json"
        write_ready_file(ready, sb, control)
        document = json.loads(ready.read_text())
        check(document, "sandbox-ready.schema.json")
        assert stat.S_IMODE(os.stat(Path(document["control"]).parent).st_mode) == 0o700  # only its user
        code, out, err = run_command(cli, "sandbox-ctl", "--ready-file", str(ready), "restart-broker", "2")
        assert (code, err) == (0, "") and out == "1:up 2:fenced 3:up\n"
        states = [sb.partition_state("t", p) for p in ASSIGNMENT]
        assert all(s.leader != 2 and 2 not in s.isr for s in states)  # leadership moved, out of every ISR
        assert 2 not in sb.live_brokers  # registered but fenced: not in Metadata
        fenced_checked.set()
        wait_for(lambda: bool(seen) and seen[-1] == (True, len(ASSIGNMENT)))
        assert seen[0] == (True, 0)  # unfenced before any replica was back in sync
        assert any(0 < n < len(ASSIGNMENT) for live, n in seen)  # the replicas came back a few at a time
        wait_for(lambda: request(control.path, {"op": "status"})["brokers"] == {"1": "up", "2": "up", "3": "up"})
    finally:
        control.stop()
    assert not Path(document["control"]).parent.exists()


def test_bad_requests_change_nothing(sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    control = ControlServer(sb, catch_up_seconds=0).start()
    path = control.path
    try:
        assert request(control.path, {"op": "stop-broker", "broker": 7})["error"].startswith("no broker 7")
        assert request(control.path, {"op": "reboot", "broker": 1})["ok"] is False
        assert request(control.path, {"op": "start-broker", "broker": 1, "catch_up_seconds": -1})["ok"] is False
        assert sb.live_brokers == {1, 2, 3}
        code, _, err = run_command(cli, "sandbox-ctl", "--control", control.path, "stop-broker", "3")
        assert code == 0 and sb.live_brokers == {1, 2}
        code, out, _ = run_command(cli, "sandbox-ctl", "--control", control.path, "start-broker", "3")
        assert out == "1:up 2:up 3:up\n" and all(3 in sb.partition_state("t", p).isr for p in ASSIGNMENT)
    finally:
        control.stop()
    code, _, err = run_command(cli, "sandbox-ctl", "--control", path, "status")
    assert code == 3 and "did not answer" in err and "Traceback" not in err


def test_the_sandbox_command_serves_the_control_socket_and_names_it_in_the_ready_file(tmp_path: Path) -> None:
    ready = tmp_path / "sb.json"
    sandbox = subprocess.Popen([str(BIN / "kafka-leaders"), "sandbox", "--ready-file", str(ready),
                                "--catch-up-seconds", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: ready.exists() or sandbox.poll() is not None, 60)
        ctl = [str(BIN / "kafka-leaders"), "sandbox-ctl", "--ready-file", str(ready)]
        stopped = subprocess.run([*ctl, "stop-broker", "1"], capture_output=True, text=True, timeout=60)
        assert (stopped.returncode, stopped.stdout) == (0, "1:down 2:up 3:up\n"), stopped.stderr
        started = subprocess.run([*ctl, "start-broker", "1"], capture_output=True, text=True, timeout=60)
        assert (started.returncode, started.stdout) == (0, "1:up 2:up 3:up\n"), started.stderr
    finally:
        sandbox.terminate()
        sandbox.wait(timeout=60)
    assert not ready.exists()



def test_starting_a_broker_again_while_it_catches_up_starts_its_catch_up_again(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    sb.stop_broker(3)
    sb.start_broker_catching_up(3, 30)
    sb.start_broker_catching_up(3, 0.5)  # listening already: only the catch-up starts over
    wait_for(lambda: all(3 in sb.partition_state("t", p).isr for p in ASSIGNMENT))
    wait_for(lambda: not sb.catching_up())


def test_a_restarted_broker_back_in_every_isr_is_up_though_its_catch_up_has_steps_left(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    """Three replicas out in ten steps: all back by the third, and from then on not `catching-up` (a roll
    saw a broker it had waited back still `catching-up` in the next broker's restart)."""
    few = {p: ASSIGNMENT[p] for p in range(3)}
    sb = sandbox_factory(3, topics={"t": few})
    sb.stop_broker(2)
    sb.start_broker_catching_up(2, 3)
    assert sb.catching_up() == {2}
    wait_for(lambda: 2 in sb.live_brokers and all(2 in sb.partition_state("t", p).isr for p in few))
    assert not sb.catching_up()


def test_ready_file_and_control_together_are_refused_but_the_environment_gives_way(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path, monkeypatch) -> None:
    sb = sandbox_factory(3)
    control = ControlServer(sb, catch_up_seconds=0).start()
    try:
        ready = tmp_path / "ready.json"
        ready.write_text(json.dumps({"control": control.path}))
        code, _, err = run_command(cli, "sandbox-ctl", "--ready-file", str(ready), "--control", "/nowhere", "status")
        assert code == 2 and err.startswith("Give one of --ready-file and --control, not both"), err
        monkeypatch.setenv("KAFKA_SANDBOX_CONTROL", "/nowhere")
        code, out, err = run_command(cli, "sandbox-ctl", "--ready-file", str(ready), "status")
        assert (code, out) == (0, "1:up 2:up 3:up\n"), err
    finally:
        control.stop()


def test_an_idle_client_blocks_neither_other_clients_nor_the_stop(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    control = ControlServer(sb, catch_up_seconds=0).start()
    idle = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        idle.connect(control.path)  # connected, never sends its line
        assert request(control.path, {"op": "status"}, timeout=5)["ok"] is True  # was a 30 s wait, then a timeout
    finally:
        started = time.monotonic()
        control.stop()
        stopped_in = time.monotonic() - started
        idle.close()
    assert stopped_in < 20  # it hung (30 s) while the idle client was connected


def test_a_request_that_is_not_a_json_object_gets_an_error_answer(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    control = ControlServer(sb, catch_up_seconds=0).start()
    try:
        for line in (b"[1]\n", b"2\n", b'"stop-broker"\n', b"null\n", b"{\n"):
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
                sock.settimeout(10)
                sock.connect(control.path)
                sock.sendall(line)
                answer = json.loads(sock.makefile("rb").readline())
            assert answer["ok"] is False and answer["error"].startswith("bad request"), line
        assert sb.live_brokers == {1, 2, 3}
    finally:
        control.stop()


def test_a_ready_file_that_is_a_fifo_is_refused_at_once(tmp_path: Path) -> None:
    fifo = tmp_path / "ready.json"
    os.mkfifo(fifo)
    done = subprocess.run([str(BIN / "kafka-leaders"), "sandbox-ctl", "--ready-file", str(fifo), "status"],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "FIFO" in done.stderr and len(done.stderr.splitlines()) == 2, done.stderr


@contextmanager
def fake_control(path: str, answers: list[Callable[[socket.socket], None]]) -> Iterator[list[float]]:
    """A Unix socket at `path` that serves one client per entry of `answers`, each given the connection
    once the client's request line is in; yields the seconds each client stayed connected."""
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(4)
    server.settimeout(60)
    held: list[float] = []

    def serve() -> None:
        for answer in answers:
            connection, _ = server.accept()
            with connection:
                started = time.monotonic()
                connection.recv(65536)
                with suppress(OSError):  # the client left
                    answer(connection)
                held.append(time.monotonic() - started)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield held
    finally:
        thread.join(timeout=120)
        server.close()


def replying(line: bytes) -> Callable[[socket.socket], None]:
    return lambda connection: connection.sendall(line)


def streaming(chunk: bytes, pause: float, seconds: float = 60) -> Callable[[socket.socket], None]:
    """Bytes without a newline, `chunk` every `pause` s until the client leaves (at most `seconds`)."""

    def stream(connection: socket.socket) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            connection.sendall(chunk)
            time.sleep(pause)

    return stream


def test_a_socket_that_answers_not_as_a_sandbox_does_is_one_line_exit_3(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    answers = (b"[1]\n", b'{"ok": true, "brokers": 5}\n', b"not json\n", b'{"brokers": {"1": "up"}}\n',
               b'{"ok": "yes", "brokers": {"1": "up"}}\n', b'{"ok": false}\n', b"[" * 60_000 + b"\n")
    with fake_control(path, [replying(a) for a in answers]):
        for answer in answers:
            code, out, err = run_command(cli, "sandbox-ctl", "--control", path, "status")
            assert (code, out) == (3, "") and "did not answer as a sandbox does" in err, (answer[:40], err)
            assert len(err.splitlines()) == 2 and "Traceback" not in err, err  # the line and its hint
    # was: no "ok" printed None (exit 2), "ok": false without an error the same


def test_an_answer_line_longer_than_the_limit_is_refused_unread(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    brokers = {str(b): "up" for b in range(500_000)}  # 6 MB on one line, 90 times MAX_ANSWER
    huge = (json.dumps({"ok": True, "brokers": brokers}) + "\n").encode()
    with fake_control(path, [replying(huge)]):
        code, out, err = run_command(cli, "sandbox-ctl", "--control", path, "status")
    assert (code, out) == (3, "") and f"an answer longer than {MAX_ANSWER} bytes" in err, err[:500]
    assert len(err) < 1000  # was: exit 0 and the whole line printed


def test_a_socket_that_streams_bytes_without_a_newline_is_left_at_the_limit(tmp_path: Path) -> None:
    path = str(tmp_path / "s")
    with fake_control(path, [streaming(b"x" * 65536, 0.001)]) as held:
        started = time.monotonic()
        code, out, err = run_command(cli, "sandbox-ctl", "--control", path, "status")
        took = time.monotonic() - started
    assert (code, out) == (3, "") and "an answer longer than" in err and len(err.splitlines()) == 2, err
    assert took < 30 and held[0] < 30  # was: read until the stream ended (the campaign killed it after 90 s)


def test_a_socket_that_trickles_bytes_is_left_at_the_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(control_client, "ANSWER_TIMEOUT", 1.0)
    path = str(tmp_path / "s")
    with fake_control(path, [streaming(b"x", 0.05)]) as held:
        code, out, err = run_command(cli, "sandbox-ctl", "--control", path, "status")
    assert (code, out) == (3, "") and "did not answer: no whole answer line within 1 s" in err, err
    assert held[0] < 20  # was: each byte restarted a 30 s wait: held for as long as the bytes came (60 s)


def test_the_help_lists_the_exit_codes_the_command_gives() -> None:
    code, out, _ = run_command(cli, "sandbox-ctl", "--help")
    codes = {line.split()[0]: line for line in out.split("Exit codes:")[1].splitlines() if line.strip()}
    assert code == 0 and set(codes) == {"0", "1", "2", "3", "129", "130", "143"}
    assert "internal error" in codes["1"] and "elect" not in codes["1"]


def test_a_temporary_directory_too_long_for_a_socket_puts_the_control_socket_in_tmp(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long = tmp_path / ("d" * 100)
    long.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(long))  # as TMPDIR=<long path> would
    check_socket = f"import os; assert len(os.environ['{CONTROL_ENV}']) < 108"  # the command --run starts
    code, out, err = run_command(cli, "sandbox", "--brokers", "1", "--topics", "0", "--no-auto-leader-rebalance",
                                 "--run", f'{sys.executable} -c "{check_socket}"')
    assert code == 0 and "Internal error" not in err, err  # was: Internal error: OSError: AF_UNIX path too long
    assert not list(long.iterdir())  # nothing left behind


def test_a_broker_back_through_a_catch_up_takes_the_other_live_replicas_back_into_the_isr(
        sandbox_factory: Callable[..., Sandbox], mode: str) -> None:
    sb = sandbox_factory(3, mode=mode, topics={"t": {0: [1, 2, 3]}})
    for broker in (3, 2, 1):
        sb.stop_broker(broker)
    sb.start_broker(2)
    sb.start_broker(3)
    assert sb.partition_state("t", 0).leader == -1  # 1 was the last in the ISR
    sb.start_broker_catching_up(1, 0.5)
    wait_for(lambda: not sb.catching_up())
    state = sb.partition_state("t", 0)
    assert state.leader == 1 and sorted(state.isr) == [1, 2, 3]  # was (1,) for good


def test_controllers_stop_and_start_from_another_process(sandbox_factory: Callable[..., Sandbox]) -> None:
    """stop-controller twice leaves the KRaft quorum without a leader; start-controller gives it one again."""
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    control = ControlServer(sb, catch_up_seconds=0).start()
    try:
        ctl = ("sandbox-ctl", "--control", control.path)
        assert run_command(cli, *ctl, "stop-controller", "1000").out == "1000:down 1001:leader 1002:up\n"
        assert run_command(cli, *ctl, "stop-controller", "1001").out == "1000:down 1001:down 1002:up\n"
        assert sb.quorum_leader == -1
        assert run_command(cli, *ctl, "start-controller", "1000").out == "1000:leader 1001:down 1002:up\n"
        code, _, err = run_command(cli, *ctl, "stop-controller", "3")
        assert code == 2 and err.startswith("no controller 3 in this sandbox (its controllers: 1000, 1001, 1002)")
        code, _, err = run_command(cli, *ctl, "start-controller")
        assert code == 2 and err.startswith("start-controller needs a controller id")
    finally:
        control.stop()
    zk = sandbox_factory(3, mode="zk")
    control = ControlServer(zk, catch_up_seconds=0).start()
    try:
        answer = request(control.path, {"op": "stop-controller", "controller": 1000})
        assert answer["ok"] is False and "no controller nodes apart from its brokers" in answer["error"]
    finally:
        control.stop()
