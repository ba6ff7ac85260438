"""`kafka-leaders roll` in a hostile world: another broker dies at each step of it, a command outlives its
kill, two rolls run at once, state and restore files that do not fit. Every roll here that changes the
cluster is watched by an outside sampler (`sampler.Sampler`): no partition may go offline or under its min
ISR because of the roll."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path

import pytest
from commands import run_command
from sampler import KafkaSampler, Sampler
from test_roll import ASSIGNMENT, KL, orders, preferred_and_unchanged, restart_command, roll, state_document
from test_unix_schemas import check

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.operations.connection import Connection
from leader_election_cli.operations.hooks import Hooks
from leader_election_cli.operations.process_group import KILL_GRACE_S
from leader_election_cli.operations.roll import RollSettings
from leader_election_cli.operations.roll import roll as run_roll
from leader_election_cli.reports.maintenance import roll_document
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer

METADATA, API_VERSIONS, DESCRIBE_CONFIGS, ELECT_LEADERS, ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS = (
    3, 18, 32, 43, 45, 46)
MIN_ISR = {"orders": 2, "logs": 1}


def make_cluster(sandbox_factory: Callable[..., Sandbox], catch_up_seconds: float = 0.3
                 ) -> tuple[Sandbox, ControlServer]:
    """RF 3, min.insync.replicas=2 (`orders`), and RF 2 with 1 (`logs`), as test_roll's sandbox (KRaft)."""
    sb = sandbox_factory(3)
    sb.create_topic("orders", assignment=ASSIGNMENT, configs={"min.insync.replicas": "2"})
    sb.create_topic("logs", assignment={0: [2, 3], 1: [3, 1]}, configs={"min.insync.replicas": "1"})
    return sb, ControlServer(sb, catch_up_seconds=catch_up_seconds).start()


@pytest.fixture
def cluster(sandbox_factory: Callable[..., Sandbox]) -> Iterator[tuple[Sandbox, ControlServer]]:
    sb, control = make_cluster(sandbox_factory, catch_up_seconds=0)  # a restarted broker is back at once
    yield sb, control
    control.stop()


def but(sb: Sandbox, broker: int) -> str:
    """The bootstrap servers but `broker`'s, the one a test stops: the roll's connection (to one of them, at
    random) is not lost with it (a lost read-back fails a drain, exit 1: safe, but not the case tested)."""
    return ",".join(f"{host}:{port}" for b, (host, port) in sb.brokers.items() if b != broker)


def roll_without(sb: Sandbox, broker: int, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([KL, "roll", "--bootstrap-server", but(sb, broker), "--output", "json", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def resume(sb: Sandbox, state_file: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume", "--state-file",
                           str(state_file), "--output", "json", *args], capture_output=True, text=True, timeout=300)


def restarted(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


# -- 1. decided at the moment of acting ---------------------------------------------------------------------

def test_a_broker_dying_after_the_drain_election_keeps_the_drained_one_from_its_restart(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """The issue's case: broker 2 dies just after broker 1's drain election is answered. The roll ran broker
    1's command anyway (11 samples under min ISR); now it waits, drained, and stops with exit 5 past
    --safe-timeout; with broker 2 back, --resume finishes the roll."""
    sb, control = make_cluster(sandbox_factory)
    try:
        before = orders(sb)
        first, other = 1, 2
        log, state_file = tmp_path / "restarted.txt", tmp_path / "roll.json"
        sb.after_next(ELECT_LEADERS, lambda: sb.stop_broker(other))
        with Sampler(sb, MIN_ISR) as sampler:
            process = roll_without(sb, other, "--brokers", "all", "--state-file", str(state_file),
                                   "--safe-timeout", "1.5", "--exec", restart_command(control, log))
            out, err = process.communicate(timeout=300)
            assert process.returncode == 5, out
            report = json.loads(out)
            check(report, "roll.schema.json")
            assert restarted(log) == []  # its command never ran
            steps = report["brokers"][0]["steps"]
            assert [s["step"] for s in steps] == ["wait_safe", "drain", "restart"]
            assert not steps[2]["ok"] and "no longer safe to stop" in steps[2]["detail"]
            assert steps[2]["verdict"]["blocking"] and steps[2]["verdict_age_s"] is None
            saved = json.loads(state_file.read_text())
            check(saved, "roll-state.schema.json")
            assert saved["brokers"][0]["step"] == "drained" and saved["stopped"]["exit_code"] == 5
            assert "no longer safe to stop" in saved["stopped"]["error"]
            assert all(sb.partition_state("orders", p).leader != first for p in ASSIGNMENT)  # kept drained
            sb.start_broker(other)
            resumed = resume(sb, state_file)
        assert resumed.returncode == 0, resumed.stderr
        document = json.loads(resumed.stdout)
        restart = document["brokers"][0]["steps"][0]
        assert restart["step"] == "restart" and restart["ok"] and 0 <= restart["verdict_age_s"] < 1
        assert json.loads(state_file.read_text())["stopped"] is None
        assert len(restarted(log)) == 3 and preferred_and_unchanged(sb, before)
        assert sampler.samples >= 10 and sampler.seen() == set()
    finally:
        control.stop()


def test_in_zookeeper_mode_too_a_broker_dying_after_the_drain_keeps_the_drained_one_from_its_restart(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """The same in ZooKeeper mode (the order 2, 3, then the controller 1): broker 3 dies after broker 2's drain
    election; broker 2 is not restarted while it is down."""
    sb = sandbox_factory(3, mode="zk")
    sb.create_topic("orders", assignment=ASSIGNMENT, configs={"min.insync.replicas": "2"})
    log = tmp_path / "restarted.txt"
    sb.after_next(ELECT_LEADERS, lambda: sb.stop_broker(3))
    with Sampler(sb, {"orders": 2}) as sampler:
        process = roll_without(sb, 3, "--brokers", "all", "--state-file", str(tmp_path / "roll.json"),
                               "--safe-timeout", "1", "--exec", f"echo {{broker}} >> {log}")
        out, err = process.communicate(timeout=300)
    assert process.returncode == 5, out + err
    assert json.loads(out)["brokers"][0]["broker"] == 2 and restarted(log) == []
    assert sampler.seen() == set()


@pytest.mark.parametrize("stop", ["failed command", "SIGTERM in the drain"])
def test_a_resume_does_not_restart_a_drained_broker_at_once_when_another_died(
        cluster: tuple[Sandbox, ControlServer], tmp_path: Path, stop: str) -> None:
    """A roll stopped with broker 1 drained (its command failed, or a SIGTERM came during its drain), then
    broker 2 dies: `roll --resume` went straight to broker 1's restart; now it asks again first."""
    sb, control = cluster
    log, state_file = tmp_path / "restarted.txt", tmp_path / "roll.json"
    with Sampler(sb, MIN_ISR) as sampler:
        if stop == "failed command":
            process = roll(sb, "--brokers", "1,2,3", "--state-file", str(state_file), "--exec", "exit 7")
        else:
            process = roll(sb, "--brokers", "1,2,3", "--state-file", str(state_file),
                           "--exec", restart_command(control, log))
            sb.hold_next(ELECT_LEADERS, lambda: process.send_signal(signal.SIGTERM))
        _, err = process.communicate(timeout=300)
        assert process.returncode == (1 if stop == "failed command" else 143), err
        document = json.loads(state_file.read_text())
        assert document["brokers"][0]["step"] in ("safe", "drained")
        document["command"] = restart_command(control, log)
        state_file.write_text(json.dumps(document))
        sb.stop_broker(2)
        resumed = resume(sb, state_file, "--safe-timeout", "1")
        assert resumed.returncode == 5, resumed.stderr
        assert restarted(log) == []
        assert "no longer safe to stop" in json.loads(resumed.stdout)["error"]
        assert json.loads(state_file.read_text())["brokers"][0]["step"] == "drained"
    assert sampler.seen() == set()


def _kill_at(step: str, sb: Sandbox, other: int, crash: bool = False) -> Hooks:
    """Stop broker `other` at `step` of the first broker's roll (`crash`: kill it, SIGKILL, the cluster noticing
    only when its session times out): in the middle of the step's own requests (the sandbox holds one until the
    broker is stopped), or at the roll's own hooks."""
    def kill() -> None:
        if crash:
            sb.kill_broker(other)
        else:
            sb.stop_broker(other)

    if step == "wait_safe":  # after its metadata read, before its configs are answered: a safe verdict, now stale
        sb.hold_next(DESCRIBE_CONFIGS, kill)
    elif step == "drain":
        sb.after_next(ELECT_LEADERS, kill)
    elif step == "restore":  # its reorder, once the drain's election was answered
        sb.after_next(ELECT_LEADERS, lambda: sb.hold_next(ALTER_REASSIGNMENTS, kill))
    killed: list[bool] = []

    def once() -> None:
        if not killed:
            killed.append(True)
            kill()

    def note(line: str) -> None:  # right before the check the command waits on
        if "checking it is still safe to stop" not in line:
            return
        if step == "before_command":
            once()
        elif step == "after_the_check_read":  # once the read it judges is answered, before its confirmation
            sb.after_next(METADATA, kill)

    @contextmanager
    def progress(*_args: object) -> Iterator[None]:  # wait_back's first look at the restarted broker
        if step == "wait_back":
            once()
        yield None

    return Hooks(note=note, progress=progress)


@pytest.mark.parametrize("crash", [False, True], ids=["stopped", "crashed"])
@pytest.mark.parametrize("step", ["wait_safe", "drain", "before_command", "after_the_check_read", "wait_back",
                                  "restore"])
def test_another_broker_dying_at_each_step_never_leaves_a_partition_offline_or_under_min_isr(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path, step: str, crash: bool) -> None:
    """Broker 2 dies during broker 1's `step`: stopped, or crashed (the cluster lists it alive, leading and in
    every ISR until its session times out, 1.5 s here: the probes see it at once). Before the restart (even after
    the read the check judged, whose verdict a second read confirms): broker 1 is not restarted while broker 2 is
    down (exit 5; drained unless the wait_safe's probe found broker 2 down first), and the roll finishes once
    broker 2 is back. After it (broker 1 back): the roll goes on, broker 2 (down, so safe to stop) restarted in
    its turn. Never a partition offline or under min ISR because of the roll (the sampler sees a crashed broker
    down at once; what it sees while only broker 2 is down is the crash's own doing)."""
    sb, control = make_cluster(lambda n: sandbox_factory(n, broker_session_timeout_s=1.5), catch_up_seconds=0)
    log, state_file = tmp_path / "restarted.txt", tmp_path / "roll.json"
    settings = RollSettings(None, restart_command(control, log), safe_wait_s=1.5, state_file=state_file)
    connection = Connection(but(sb, 2))
    output = open(os.devnull, "w")  # noqa: SIM115 (the commands' output)
    with Sampler(sb, MIN_ISR, interval_s=0.05) as sampler, KafkaSampler(sb, MIN_ISR, interval_s=0.05) as outside, \
            output:  # (a roll of brokers back at once is short)
        report = run_roll(connection, settings, _kill_at(step, sb, 2, crash), command_output=output)
        check(roll_document(report), "roll.schema.json")
        if step in ("wait_back", "restore"):
            assert int(report.exit_code) == 0, report.aborted_reason
        else:
            assert int(report.exit_code) == 5, report.aborted_reason
            # in wait_safe the probe of broker 2 (still listed: its stop is noticed after the metadata read) finds
            # it down before anything is done to broker 1; later, the check right before the restart does
            refused = "wait_safe: still not safe" if step == "wait_safe" else "no longer safe to stop"
            assert refused in (report.aborted_reason or "") and restarted(log) == []
            sb.start_broker(2)
            report = run_roll(connection, RollSettings(None, None, resume=True, state_file=state_file),
                              command_output=output)
            assert int(report.exit_code) == 0, report.aborted_reason
    control.stop()
    assert restarted(log) == ["1", "2", "3"]
    assert sampler.samples >= 3 and sampler.seen(crashed={2}) == set()
    assert outside.samples >= 3 and outside.seen(crashed={2}) == set()


def test_the_time_from_the_last_read_to_the_command_is_in_the_report_and_the_table(
        cluster: tuple[Sandbox, ControlServer], tmp_path: Path) -> None:
    sb, control = cluster
    code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "1",
                                 "--state-file", str(tmp_path / "roll.json"), "--output", "table",
                                 "--exec", restart_command(control, tmp_path / "log"))
    assert code == 0, err
    assert "checking it is still safe to stop, then restarting it" in err
    (row,) = [line for line in out.splitlines() if " restart " in line]
    assert "ms before it started" in out and "ok" in row


def test_the_check_before_a_restart_reads_only_what_the_verdict_needs(
        cluster: tuple[Sandbox, ControlServer], tmp_path: Path) -> None:
    """Right before the command: a connection and the metadata (the ELR too where it counts), then the
    metadata once more to confirm the verdict at a later moment; not the topic configs again (wait_safe's read
    has them) nor the reassignments (they do not change the verdict)."""
    sb, control = cluster
    seen: dict[str, int] = {}

    class FirstLine:  # the command's output: its first line comes once it has started
        def write(self, _text: str) -> None:
            seen.setdefault("command", len(sb.request_log))

        def flush(self) -> None:
            pass

    def note(line: str) -> None:
        if "checking it is still safe to stop" in line:
            seen["check"] = len(sb.request_log)

    settings = RollSettings((1,), f"echo started; {restart_command(control, tmp_path / 'log')}",
                            state_file=tmp_path / "roll.json")
    report = run_roll(Connection(sb.bootstrap_servers), settings, Hooks(note=note), command_output=FirstLine())
    assert int(report.exit_code) == 0, report.aborted_reason
    between = [r.api_key for r in sb.request_log[seen["check"]:seen["command"]]]
    assert between.count(METADATA) == 2 and set(between) <= {API_VERSIONS, METADATA}, between  # read, confirmed
    restart = next(s for s in report.brokers[0].steps if s.name == "restart")
    assert restart.polls == 1 and restart.verdict is not None and restart.verdict.safe
    assert restart.verdict_age_s is not None and 0 <= restart.verdict_age_s < 1


def test_a_check_whose_reads_keep_changing_is_not_taken_as_safe(cluster: tuple[Sandbox, ControlServer],
                                                                 tmp_path: Path) -> None:
    """Right before the restart, every metadata read shows another leader for a partition on broker 1 (for 12
    reads): no verdict is confirmed by the read after it, so the roll waits (polls again) and runs the command
    only once two reads agree."""
    sb, control = cluster
    flips = iter(range(12))

    def flip() -> None:
        if next(flips, None) is not None:
            state = sb.partition_state("orders", 1)
            sb.set_leader("orders", 1, 3 if state.leader == 2 else 2)
            sb.after_next(METADATA, flip)

    def note(line: str) -> None:
        if "checking it is still safe to stop" in line:
            sb.after_next(METADATA, flip)

    settings = RollSettings((1,), restart_command(control, tmp_path / "log"), state_file=tmp_path / "roll.json")
    with open(os.devnull, "w") as output, Sampler(sb, MIN_ISR) as sampler:
        report = run_roll(Connection(sb.bootstrap_servers), settings, Hooks(note=note), command_output=output)
    assert int(report.exit_code) == 0, report.aborted_reason
    restart = next(s for s in report.brokers[0].steps if s.name == "restart")
    assert restart.polls is not None and restart.polls >= 2 and next(flips, None) is None  # waited out the flips
    assert restart.verdict_age_s is not None and restart.verdict_age_s < 1 and sampler.seen() == set()


# -- 2. every process it starts ----------------------------------------------------------------------------

def group_left(group: int) -> list[str]:
    """The live (not zombie) processes of a process group, as ps lists them."""
    listing = subprocess.run(["ps", "-e", "-o", "pgid=,pid=,stat=,comm="], capture_output=True, text=True,
                             timeout=30).stdout
    return [line for line in listing.splitlines()
            if line.split()[0] == str(group) and not line.split()[2].startswith("Z")]


def test_a_killed_command_cannot_restart_the_broker_afterwards(cluster: tuple[Sandbox, ControlServer],
                                                               tmp_path: Path) -> None:
    """--exec-timeout kills the command: its subshell, which would restart broker 1 two seconds later, goes
    with it (it restarted broker 1 2.4 s after the kill, the report saying "killed", the broker drained)."""
    sb, control = cluster
    later = tmp_path / "later.txt"
    command = f"(sleep 2; echo late >> {later}; {restart_command(control, tmp_path / 'log')}) & sleep 300"
    with Sampler(sb, MIN_ISR) as sampler:
        code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "1",
                                     "--exec-timeout", "1", "--state-file", str(tmp_path / "roll.json"),
                                     "--output", "json", "--exec", command)
        report = json.loads(out)
        check(report, "roll.schema.json")
        restart = report["brokers"][0]["steps"][-1]
        assert code == 1 and "was killed" in restart["detail"], err
        killed = restart["killed"]
        assert killed["gone_at"] and killed["sigkill_at"] is None  # sh and sleep end at the SIGTERM
        assert {p["name"] for p in killed["processes"]} >= {"sh", "sleep"}
        assert group_left(killed["process_group"]) == []  # nothing of it is left when the roll has ended
        stopped_at = time.monotonic()
        while time.monotonic() < stopped_at + 3:  # past the subshell's 2 s: it never writes
            assert not later.exists() and 1 in sb.live_brokers
            time.sleep(0.1)
    assert sampler.seen() == set()


def test_a_command_ignoring_sigterm_is_killed_and_gone_when_the_roll_ends(cluster: tuple[Sandbox, ControlServer],
                                                                         tmp_path: Path) -> None:
    sb, _ = cluster
    command = "(trap '' TERM; sleep 300) & trap '' TERM; sleep 300"
    started = time.monotonic()
    code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "1",
                                 "--exec-timeout", "0.5", "--state-file", str(tmp_path / "roll.json"),
                                 "--output", "json", "--exec", command)
    assert code == 1, err
    killed = json.loads(out)["brokers"][0]["steps"][-1]["killed"]
    assert killed["sigkill_at"] and killed["gone_at"]
    assert group_left(killed["process_group"]) == []
    assert time.monotonic() - started >= KILL_GRACE_S  # the grace period was given


def test_a_second_signal_ends_the_command_with_every_process_it_started(cluster: tuple[Sandbox, ControlServer],
                                                                       tmp_path: Path) -> None:
    """The first SIGTERM waits for the command (a restart is not cut in half); the second exits at once, now
    ending the command's process group first (it ended only the roll: the command ran on after it)."""
    sb, _ = cluster
    group_file = tmp_path / "group"
    command = f"echo $$ > {group_file}; (sleep 300; echo late) & sleep 300"
    process = roll(sb, "--brokers", "1", "--state-file", str(tmp_path / "roll.json"), "--exec", command)
    deadline = time.monotonic() + 120
    while not group_file.exists() or not group_file.read_text().strip():
        assert time.monotonic() < deadline and process.poll() is None, process.communicate()
        time.sleep(0.02)
    group = int(group_file.read_text())
    process.send_signal(signal.SIGTERM)
    with suppress(subprocess.TimeoutExpired):
        process.wait(timeout=0.5)
    assert process.poll() is None  # the first one waits for the command
    while process.poll() is None:  # the second (signals sent before the first is handled count as one)
        assert time.monotonic() < deadline
        process.send_signal(signal.SIGTERM)
        with suppress(subprocess.TimeoutExpired):
            process.wait(timeout=1)
    _, err = process.communicate(timeout=120)
    assert process.returncode == 143 and f"Ending the --exec command (process group {group})" in err, err
    assert group_left(group) == []


def test_the_grace_period_is_named_in_the_help() -> None:
    code, out, _ = run_command(cli, "roll", "--help")
    assert code == 0 and f"SIGKILL {KILL_GRACE_S:g} s later" in " ".join(out.split())


# -- 3. one roll per cluster ---------------------------------------------------------------------------------

def test_a_second_roll_or_resume_while_one_runs_is_refused_before_anything_is_done(
        cluster: tuple[Sandbox, ControlServer], tmp_path: Path) -> None:
    sb, control = cluster
    log, gates, state_file = tmp_path / "restarted.txt", tmp_path / "gates", tmp_path / "roll.json"
    gates.mkdir()
    with Sampler(sb, MIN_ISR) as sampler:
        first = roll(sb, "--brokers", "1,2", "--state-file", str(state_file),
                     "--exec", restart_command(control, log, gates))
        deadline = time.monotonic() + 120
        while restarted(log) != ["1"]:  # the first roll is inside broker 1's command
            assert time.monotonic() < deadline and first.poll() is None, first.communicate()
            time.sleep(0.02)
        counts = [sb.request_count(key) for key in (DESCRIBE_CONFIGS, LIST_REASSIGNMENTS, ALTER_REASSIGNMENTS,
                                                    ELECT_LEADERS)]
        saved = state_file.read_text()
        for args in (("--brokers", "3", "--exec", "true", "--state-file", str(tmp_path / "other.json")),
                     ("--resume", "--state-file", str(state_file))):
            second = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, *args], text=True,
                                    capture_output=True, timeout=120)
            assert second.returncode == 5, second.stderr
            assert second.stderr.startswith("Another roll is running") and f"process {first.pid}" in second.stderr
        assert [sb.request_count(key) for key in (DESCRIBE_CONFIGS, LIST_REASSIGNMENTS, ALTER_REASSIGNMENTS,
                                                  ELECT_LEADERS)] == counts
        assert state_file.read_text() == saved and not (tmp_path / "other.json").exists()
        (gates / "1").touch()
        (gates / "2").touch()
        _, err = first.communicate(timeout=300)
        assert first.returncode == 0, err
    assert restarted(log) == ["1", "2"] and sampler.seen() == set()


# -- 4. state and restore files checked before use -------------------------------------------------------------

def test_a_state_file_naming_a_broker_twice_is_refused_before_connecting(tmp_path: Path) -> None:
    state_file = tmp_path / "roll.json"
    document = state_document("any", "true")
    document["brokers"].append(dict(document["brokers"][0]))
    state_file.write_text(json.dumps(document))
    code, _, err = run_command(cli, "roll", "--bootstrap-server", "127.0.0.1:1", "--timeout", "1", "--resume",
                               "--state-file", str(state_file))  # nothing listens there: exit 3 if it connected
    assert code == 2 and "names node 1 twice" in err and len(err.splitlines()) == 2, err


def test_a_state_file_naming_brokers_the_cluster_lacks_is_an_input_error(cluster: tuple[Sandbox, ControlServer],
                                                                        tmp_path: Path) -> None:
    sb, _ = cluster
    state_file = tmp_path / "roll.json"
    document = state_document(sb.cluster.cluster_id, "true", broker=77)
    document["brokers"].append({**document["brokers"][0], "broker": 78})
    state_file.write_text(json.dumps(document))
    code, _, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume",
                               "--state-file", str(state_file))
    assert code == 2 and "names brokers the cluster lacks: Broker 77,78" in err and len(err.splitlines()) == 2, err
    assert sb.request_count(DESCRIBE_CONFIGS) == sb.request_count(ALTER_REASSIGNMENTS) == 0


def test_a_state_file_of_another_cluster_is_refused(cluster: tuple[Sandbox, ControlServer], tmp_path: Path) -> None:
    sb, _ = cluster
    state_file = tmp_path / "roll.json"
    state_file.write_text(json.dumps(state_document("another-cluster", "true")))
    code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume",
                                 "--state-file", str(state_file), "--output", "json")
    assert code == 5 and "is of cluster another-cluster" in err
    assert json.loads(out)["exit_code"] == 5 and sb.request_count(DESCRIBE_CONFIGS) == 0


def test_a_restore_file_of_another_cluster_is_refused_as_restore_refuses_it(cluster: tuple[Sandbox, ControlServer],
                                                                           tmp_path: Path) -> None:
    """`restore` refuses a restore file written for another cluster (exit 5); `roll --resume` applied it
    (orders-0 (1, 2, 3) -> (3, 2, 1))."""
    sb, _ = cluster
    before = orders(sb)
    restore_file = tmp_path / "other.json"
    restore_file.write_text(json.dumps({
        "schema_version": 1, "command": "demote", "created_at": "2026-01-01T00:00:00Z", "cluster_id": "another",
        "partitions": [{"topic": "orders", "partition": 0, "replicas": [3, 2, 1], "leader": 3}]}))
    state_file = tmp_path / "roll.json"
    state_file.write_text(json.dumps(state_document(sb.cluster.cluster_id, "true", step="back",
                                                    restore_files=[str(restore_file)])))
    code, _, restore_err = run_command(cli, "restore", "--bootstrap-server", sb.bootstrap_servers, str(restore_file))
    assert code == 5
    code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume",
                                 "--state-file", str(state_file), "--output", "json")
    assert code == 5 and err == restore_err, err
    assert json.loads(out)["exit_code"] == 5
    assert orders(sb) == before and sb.request_count(ALTER_REASSIGNMENTS) == sb.request_count(ELECT_LEADERS) == 0



@pytest.mark.parametrize("entries, named", [
    ([{"broker": 1000, "role": "controller", "step": "done"}, {"broker": 2, "role": "controller"}],
     "node 2 as a controller, but it is a broker"),
    ([{"broker": 1000, "role": "controller", "step": "done"}, {"broker": 1001, "role": "controller", "step": "done"},
      {"broker": 1005, "role": "controller"}],
     "node 1005 as a controller, but it is no voter of the controller quorum"),
    ([{"broker": 2**31 - 1, "role": "controller"}], f"node {2**31 - 1} as a controller, but it is no voter"),
])
def test_a_state_file_cannot_make_a_broker_or_a_stranger_a_controller(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path, entries: list[dict], named: str) -> None:
    """A tampered state file whose entry says broker 2 is a controller had broker 2 restarted after the quorum
    check alone (no partition check, no drain: with broker 3 down every partition of an RF 3, min ISR 2 topic
    went under min ISR); controllers the quorum lacks were resumed after the others were restarted. Each entry's
    role is checked against the cluster first: exit 2, one line naming it, nothing done."""
    sb = sandbox_factory(3)
    sb.create_topic("orders", assignment=ASSIGNMENT, configs={"min.insync.replicas": "2"})
    sb.stop_broker(3)
    log, state_file = tmp_path / "restarted.txt", tmp_path / "roll.json"
    document = state_document(sb.cluster.cluster_id, f"echo {{node}} >> {log}")
    document["brokers"] = [{"host": None, "step": "pending", "restore_files": [], **entry} for entry in entries]
    state_file.write_text(json.dumps(document))
    code, _, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume",
                               "--state-file", str(state_file))
    assert code == 2 and named in err.splitlines()[0], err
    assert "nothing was done" in err and not log.exists()
