"""`kafka-leaders roll` against the sandbox, run as a shell runs it: every broker restarted once through
`sandbox-ctl`, with no partition offline or under min ISR that was not already, sampled every 100 ms by
an outside watcher (`sampler.Sampler`); an interrupted roll resumed; a roll that would be unsafe stopped before
the stop. test_roll_safety.py holds the roll to its safety when other brokers die during its steps."""

from __future__ import annotations

import json
import shlex
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from commands import BIN, run_command
from sampler import Sampler
from test_unix_schemas import check

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.cluster.admin import ClusterConnection
from leader_election_cli.operations.connection import Connection
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer

KL = str(BIN / "kafka-leaders")
ASSIGNMENT = {p: [1 + p % 3, 1 + (p + 1) % 3, 1 + (p + 2) % 3] for p in range(6)}


@pytest.fixture
def sandbox(sandbox_factory: Callable[..., Sandbox], mode: str) -> Iterator[tuple[Sandbox, ControlServer]]:
    sb = sandbox_factory(3, mode=mode)
    sb.create_topic("orders", assignment=ASSIGNMENT, configs={"min.insync.replicas": "2"})
    sb.create_topic("logs", assignment={0: [2, 3], 1: [3, 1]}, configs={"min.insync.replicas": "1"})
    control = ControlServer(sb, catch_up_seconds=0.6).start()
    yield sb, control
    control.stop()


def restart_command(control: ControlServer, log: Path, gates: Path | None = None) -> str:
    """--exec: note the broker in `log`, then restart it through the sandbox's control socket; with `gates`,
    only once the file named by the broker's id is there (bounded: 60 s)."""
    gate = (f"i=0; while [ ! -e {shlex.quote(str(gates))}/{{broker}} ] && [ $i -lt 1200 ]; do sleep 0.05; "
            "i=$((i + 1)); done; " if gates else "")
    return (f"echo {{broker}} >> {shlex.quote(str(log))}; {gate}"
            f"{shlex.quote(KL)} sandbox-ctl --control {shlex.quote(control.path)} restart-broker {{broker}}")


def roll(sb: Sandbox, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--output", "json", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def preferred_and_unchanged(sb: Sandbox, before: dict[str, tuple[int, ...]]) -> bool:
    states = {f"{t}-{p}": sb.partition_state(t, p) for t, n in (("orders", 6), ("logs", 2)) for p in range(n)}
    return all(s.leader == s.replicas[0] and s.replicas == before[name] for name, s in states.items())


def orders(sb: Sandbox) -> dict[str, tuple[int, ...]]:
    return {f"{t}-{p}": sb.partition_state(t, p).replicas for t, n in (("orders", 6), ("logs", 2)) for p in range(n)}


def quorum_leader(cluster: ClusterConnection) -> int | None:
    """The quorum's leader as DescribeQuorum names it (None: no answer, or no leader)."""
    quorum = cluster.describe_quorum(errors=False)
    return quorum.leader if quorum is not None and quorum.leader >= 0 else None


def test_a_whole_cluster_roll_restarts_each_broker_once_and_never_leaves_a_partition_offline_or_under_min_isr(
        sandbox: tuple[Sandbox, ControlServer], mode: str, tmp_path: Path) -> None:
    sb, control = sandbox
    before = orders(sb)
    log = tmp_path / "restarted.txt"
    with Sampler(sb, {"orders": 2, "logs": 1}) as sampler:
        process = roll(sb, "--brokers", "all", "--state-file", str(tmp_path / "roll.json"),
                       "--exec", restart_command(control, log))
        out, err = process.communicate(timeout=300)
    assert process.returncode == 0, err
    report = json.loads(out)
    check(report, "roll.schema.json")
    check(json.loads((tmp_path / "roll.json").read_text()), "roll-state.schema.json")
    restarted = log.read_text().split()
    expected = ["2", "3", "1"] if mode == "zk" else ["1", "2", "3"]  # the ZooKeeper-mode controller (1) last
    assert restarted == expected and [str(b["broker"]) for b in report["brokers"]] == expected
    assert all(b["status"] == "done" and [s["step"] for s in b["steps"]] ==
               ["wait_safe", "drain", "restart", "wait_back", "restore"] for b in report["brokers"])
    led = {1: 2, 2: 3, 3: 3}  # orders: two each; logs-0 and logs-1 on 2 and 3
    assert all(s["moved"] == led[b["broker"]] for b in report["brokers"] for s in b["steps"]
               if s["step"] in ("drain", "restore"))
    assert preferred_and_unchanged(sb, before)
    assert sampler.samples >= 10  # the whole roll was watched
    assert sampler.seen() == set()
    assert "fenced" in err  # sandbox-ctl's output, passed through on stderr


def test_an_interrupted_roll_resumes_where_it_stopped(sandbox: tuple[Sandbox, ControlServer], mode: str,
                                                      tmp_path: Path) -> None:
    sb, control = sandbox
    before = orders(sb)
    log, state_file = tmp_path / "restarted.txt", tmp_path / "roll.json"
    first, second, third = (2, 3, 1) if mode == "zk" else (1, 2, 3)  # the ZooKeeper-mode controller (1) last
    gates = tmp_path / "gates"  # the second broker's restart waits for the signal (it was 0.5 s ahead of it)
    gates.mkdir()
    (gates / str(first)).touch()
    with Sampler(sb, {"orders": 2, "logs": 1}) as sampler:
        process = roll(sb, "--brokers", "1,2,3", "--state-file", str(state_file),
                       "--exec", restart_command(control, log, gates))
        deadline = time.monotonic() + 120
        while not (log.exists() and str(second) in log.read_text().split()):  # the second broker's restart runs
            assert time.monotonic() < deadline and process.poll() is None, process.communicate()
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        (gates / str(second)).touch()
        out, err = process.communicate(timeout=120)
        assert process.returncode == 143, err
        report = json.loads(out)
        assert report["interrupted"] and [b["status"] for b in report["brokers"]] == ["done", "interrupted"]
        saved = {b["broker"]: b["step"] for b in json.loads(state_file.read_text())["brokers"]}
        assert saved == {first: "done", second: "restarted", third: "pending"}  # the restart it waited for is kept
        assert all(sb.partition_state("orders", p).leader != second for p in ASSIGNMENT)  # still drained
        (gates / str(third)).touch()
        resumed = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume", "--state-file",
                                  str(state_file), "--output", "json"], capture_output=True, text=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr
        steps = {b["broker"]: [s["step"] for s in b["steps"]] for b in json.loads(resumed.stdout)["brokers"]}
        assert steps == {second: ["wait_back", "restore"], third: ["wait_safe", "drain", "restart", "wait_back",
                                                                    "restore"]}
    assert sampler.seen() == set()
    assert log.read_text().split() == [str(first), str(second), str(third)]  # each restarted once
    assert preferred_and_unchanged(sb, before)
    code, _, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume", "--state-file",
                               str(state_file))
    assert code == 2 and "No unfinished roll" in err


def test_a_roll_that_would_be_unsafe_stops_before_the_stop(sandbox_factory: Callable[..., Sandbox],
                                                           tmp_path: Path) -> None:
    sb = sandbox_factory(3)
    sb.create_topic("pairs", assignment={0: [1, 2]}, configs={"min.insync.replicas": "2"})
    log, state_file = tmp_path / "restarted.txt", tmp_path / "roll.json"
    code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "1",
                                 "--safe-timeout", "2", "--state-file", str(state_file), "--output", "json",
                                 "--exec", f"echo {{broker}} >> {shlex.quote(str(log))}")
    report = json.loads(out)
    assert code == 5 and "not safe to stop" in report["error"]
    (step,) = report["brokers"][0]["steps"]
    assert step["step"] == "wait_safe" and not step["ok"] and step["polls"] >= 2  # (2 s: room for a slow first poll)
    assert step["verdict"]["blocking"][0]["problem"] == "under_min_isr"
    assert not log.exists() and sb.partition_state("pairs", 0).leader == 1  # not drained, not restarted
    assert json.loads(state_file.read_text())["brokers"][0]["step"] == "pending"
    code, _, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "1",
                               "--state-file", str(state_file), "--exec", "true")
    assert code == 5 and "unfinished" in err  # the refused roll is not forgotten either


def test_a_roll_without_an_active_controller_says_it_could_not_tell_and_does_nothing(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """No KRaft quorum leader: the reassignments the can-stop rule reads never come (the broker holds the
    request for a controller). The roll stops, unreachable (exit 3), saying so, not "not safe to stop"."""
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT}, forwarding_timeout_s=30)
    sb.stop_controller(1000)
    sb.stop_controller(1001)
    log = tmp_path / "restarted.txt"
    code, out, _ = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "1",
                               "--timeout", "0.5", "--safe-timeout", "0.5", "--state-file", str(tmp_path / "roll.json"),
                               "--output", "json", "--exec", f"echo {{broker}} >> {shlex.quote(str(log))}")
    report = json.loads(out)
    check(report, "roll.schema.json")
    assert code == 3 and report["error"].startswith("broker 1, wait_safe: could not tell within 0.5 s whether it is "
                                                    "safe to stop (Timed out while listing partition reassignments")
    assert "controller quorum has no leader" in report["error"] and not log.exists()


def test_a_failed_command_leaves_the_broker_drained_and_recorded(sandbox: tuple[Sandbox, ControlServer],
                                                                 tmp_path: Path) -> None:
    sb, _ = sandbox
    state_file = tmp_path / "roll.json"
    with Sampler(sb, {"orders": 2, "logs": 1}) as sampler:
        code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "3",
                                     "--state-file", str(state_file), "--output", "json", "--exec", "exit 7")
    assert sampler.seen() == set()
    assert code == 1 and "the command exited 7" in json.loads(out)["error"]
    (entry,) = json.loads(state_file.read_text())["brokers"]
    assert entry["step"] == "drained" and len(entry["restore_files"]) == 1 and Path(entry["restore_files"][0]).exists()
    assert json.loads(out)["brokers"][0]["steps"][-1]["command_exit"] == 7


def test_required_options_only(sandbox_factory: Callable[..., Sandbox]) -> None:
    sb = sandbox_factory(3)
    code, _, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers)
    assert code == 2 and err.startswith("Missing --brokers")
    code, _, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "all")
    assert code == 2 and "exactly one of --exec and --pause" in err
    code, _, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "all",
                               "--pause", input="")
    assert code == 2 and "--pause needs a terminal" in err
    code, _, err = run_command(cli, "roll", "--brokers", "all", "--exec", "true")
    assert code == 2 and "--bootstrap-server" in err
    code, _, err = run_command(cli, "can-stop")
    assert code == 2 and "Missing argument" in err


def test_allow_rf1_rolls_a_broker_holding_a_single_replica_and_it_leads_it_again(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    sb = sandbox_factory(3, topics={"solo": {0: [2]}, "t": {0: [2, 1, 3]}})
    control = ControlServer(sb, catch_up_seconds=0.3).start()
    try:
        args = ["roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "2", "--output", "json",
                "--exec", restart_command(control, tmp_path / "log"), "--safe-timeout", "0.3"]
        code, out, _ = run_command(cli, *args, "--state-file", str(tmp_path / "refused.json"))
        assert code == 5 and json.loads(out)["brokers"][0]["steps"][0]["verdict"]["blocking"][0]["problem"] == "rf1"
        with Sampler(sb, {"t": 1}) as sampler:  # (solo-0 is offline while its broker restarts: allowed)
            code, out, err = run_command(cli, *args, "--allow-rf1", "--state-file", str(tmp_path / "allowed.json"))
        assert sampler.seen() == set()
        assert code == 0, err
        drain = json.loads(out)["brokers"][0]["steps"][1]
        assert drain["ok"] and drain["moved"] == 1  # t-0 moved; solo-0 could not be, and is allowed
        assert sb.partition_state("solo", 0).leader == 2 and sb.partition_state("t", 0).leader == 2
    finally:
        control.stop()


def test_a_dry_run_shows_each_step_and_changes_nothing(sandbox_factory: Callable[..., Sandbox],
                                                       tmp_path: Path) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    sb.create_topic("pairs", assignment={0: [1, 2]}, configs={"min.insync.replicas": "2"})
    state_file = tmp_path / "roll.json"
    code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "all",
                                 "--dry-run", "--state-file", str(state_file), "--output", "table")
    assert (code, err) == (0, "")
    rows = [line for line in out.splitlines() if "wait_safe" in line]
    assert ["not now" in row for row in rows] == [True, True, False]  # pairs-0 is on 1 and 2
    assert "would move leadership off 2 partition(s)" in out and "no --exec or --pause given" in out
    assert not state_file.exists()
    assert sb.request_count(45) == sb.request_count(43) == 0  # no reorder, no election


def test_a_state_file_that_is_not_one_is_a_one_line_input_error(sandbox_factory: Callable[..., Sandbox],
                                                                tmp_path: Path) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    bad = tmp_path / "roll.json"
    for content in ("{", '{"schema_version": 1}', '{"schema_version": 9, "brokers": []}'):
        bad.write_text(content)
        code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume",
                                     "--state-file", str(bad))
        assert code == 2 and err.startswith(("Cannot read the roll's state file", "The roll's state file")), err
        assert "Traceback" not in err and len(err.splitlines()) == 2


def test_in_kraft_combined_mode_the_quorum_leader_goes_last(sandbox_factory: Callable[..., Sandbox],
                                                            tmp_path: Path) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT}, combined=True)
    sb.move_controller(2)  # the quorum's leader, as DescribeQuorum reports it
    control = ControlServer(sb, catch_up_seconds=0.3).start()
    try:
        log = tmp_path / "restarted.txt"
        with Sampler(sb, {"t": 1}) as sampler:
            code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "all",
                                         "--state-file", str(tmp_path / "roll.json"), "--output", "json",
                                         "--exec", restart_command(control, log))
        assert sampler.seen() == set()
        assert code == 0, err
        assert [b["broker"] for b in json.loads(out)["brokers"]] == [1, 3, 2]
        assert log.read_text().split() == ["1", "3", "2"]
    finally:
        control.stop()


def test_the_quorum_leader_is_read_only_where_a_broker_says_it(sandbox_factory: Callable[..., Sandbox]) -> None:
    for kwargs, leader in (({"combined": True}, 1), ({}, 1000), ({"mode": "zk"}, None)):
        sb = sandbox_factory(3, **kwargs)
        connection = Connection(sb.bootstrap_servers)
        with connection.open(connection.settings(lambda _line: None)) as cluster:
            assert quorum_leader(cluster) == leader, kwargs


def state_document(cluster_id: str, command: str | None, **broker: object) -> dict:
    return {"schema_version": 1, "cluster_id": cluster_id, "command": command, "finished": False,
            "brokers": [{"broker": 1, "host": None, "step": "pending", "restore_files": [], **broker}]}


def test_wait_for_enter_at_the_end_of_the_input_is_not_enter(monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from leader_election_cli.cli.maintenance_command import wait_for_enter

    read, write = os.pipe()
    os.close(write)
    with open(read, encoding="utf-8") as stdin:  # at end of file at once
        monkeypatch.setattr("sys.stdin", stdin)
        assert wait_for_enter("press Enter") is None


def test_a_pause_roll_whose_input_ends_fails_its_restart_step(sandbox_factory: Callable[..., Sandbox],
                                                             tmp_path: Path) -> None:
    from leader_election_cli.operations.roll import RollSettings
    from leader_election_cli.operations.roll import roll as run_roll

    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    state_file = tmp_path / "roll.json"
    report = run_roll(Connection(sb.bootstrap_servers), RollSettings((1,), None, pause=True, state_file=state_file),
                      ask=lambda _line: None)
    assert int(report.exit_code) == 1 and "the input ended before Enter was pressed" in (report.aborted_reason or "")
    assert json.loads(state_file.read_text())["brokers"][0]["step"] == "drained"  # not restarted: resumed from there


def test_resuming_a_pause_roll_without_a_terminal_is_refused_before_anything_is_done(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    state_file = tmp_path / "roll.json"
    state_file.write_text(json.dumps(state_document(sb.cluster.cluster_id, None)))
    before = state_file.read_text()
    code, _, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume",
                               "--state-file", str(state_file), input="")
    assert code == 2 and "no terminal" in err and len(err.splitlines()) == 2, err
    assert state_file.read_text() == before and sb.request_count(45) == sb.request_count(43) == 0


@pytest.mark.parametrize("changed", [{"command": 5}, {"host": 5}, {"broker": True}, {"restore_files": "abc"},
                                     {"broker": -1}, {"step": "later"}, {"finished": 0}])
def test_a_state_file_is_checked_against_its_schema(sandbox_factory: Callable[..., Sandbox], tmp_path: Path,
                                                    changed: dict) -> None:
    sb = sandbox_factory(1)
    state_file = tmp_path / "roll.json"
    document = state_document("another-cluster", "true")  # another cluster's: refused (5) if it is read
    for key, value in changed.items():
        (document if key in document else document["brokers"][0])[key] = value
    state_file.write_text(json.dumps(document))
    code, _, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume",
                               "--state-file", str(state_file))
    wrote = f"The roll's state file {state_file} is not one kafka-leaders roll wrote: at $"
    assert code == 2 and err.startswith(wrote), err
    assert len(err.splitlines()) == 2


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_a_state_file_that_is_a_fifo_or_a_device_is_refused_at_once(sandbox_factory: Callable[..., Sandbox],
                                                                    tmp_path: Path, special: str) -> None:
    import os

    sb = sandbox_factory(1)
    path = special
    if special == "fifo":
        path = str(tmp_path / "roll.json")
        os.mkfifo(path)
    done = subprocess.run([KL, "roll", "--bootstrap-server", sb.bootstrap_servers, "--resume", "--state-file", path],
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert done.returncode == 2 and "not a regular file" in done.stderr, done.stderr
    assert len(done.stderr.splitlines()) == 2


def test_a_restore_file_spoilt_while_the_broker_was_drained_stops_the_resume_before_anything_is_done(
        sandbox_factory: Callable[..., Sandbox], tmp_path: Path) -> None:
    """The restore files a resumed roll will put back are read and checked first (they were read only at the
    restore step, after the restart: exit 1 then, the broker restarted on a file that could not be used)."""
    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    state_file = tmp_path / "roll.json"
    args = ("roll", "--bootstrap-server", sb.bootstrap_servers, "--state-file", str(state_file), "--output", "json")
    code, _, _ = run_command(cli, *args, "--brokers", "1", "--exec", "exit 7")
    document = json.loads(state_file.read_text())
    assert code == 1 and document["brokers"][0]["step"] == "drained"
    assert document["stopped"]["exit_code"] == 1 and "the command exited 7" in document["stopped"]["error"]
    Path(document["brokers"][0]["restore_files"][0]).write_text("{")  # spoilt while the broker was down
    document["command"] = "true"
    state_file.write_text(json.dumps(document))
    changes = sb.request_count(45) + sb.request_count(43)
    code, _, err = run_command(cli, *args, "--resume")
    assert code == 2 and "is not valid JSON" in err and len(err.splitlines()) == 2, err
    assert json.loads(state_file.read_text()) == document  # nothing was done
    assert sb.request_count(45) + sb.request_count(43) == changes


def test_the_refused_roll_names_the_default_state_file(sandbox_factory: Callable[..., Sandbox]) -> None:
    from leader_election_cli.operations.roll_state import default_state_path

    sb = sandbox_factory(3, topics={"t": ASSIGNMENT})
    path = default_state_path(sb.cluster.cluster_id)
    path.write_text(json.dumps(state_document(sb.cluster.cluster_id, "true")))
    code, out, err = run_command(cli, "roll", "--bootstrap-server", sb.bootstrap_servers, "--brokers", "1",
                                 "--exec", "true", "--output", "json")
    assert code == 5 and "unfinished" in err
    document = json.loads(out)
    check(document, "roll.schema.json")
    assert document["state_file"] == str(path)
    code, out, _ = run_command(cli, "roll", "--bootstrap-server", "127.0.0.1:1", "--brokers", "1", "--exec", "true",
                               "--output", "json", "--timeout", "2")
    assert code == 3 and json.loads(out)["state_file"] is None  # the cluster, whose id names it, was not read


def test_the_default_state_file_name_sanitises_the_cluster_id_as_every_file_a_run_names() -> None:
    from leader_election_cli.local_files import run_file_name
    from leader_election_cli.operations.roll_state import default_state_path

    assert default_state_path("a:b/c d").name == "a_b_c_d-roll.json"
    assert run_file_name("a:b/c d", "prefer").startswith("a_b_c_d-prefer-")


def test_in_combined_mode_only_a_voter_leads_the_quorum_and_none_without_a_majority(
        sandbox_factory: Callable[..., Sandbox]) -> None:
    """Raft (KIP-595): the leader is a voter elected by a majority of the voters; with 2 of the 3 down there
    is none, and a broker that is not a voter never leads. Without a leader the broker has no controller to
    forward DescribeQuorum to: REQUEST_TIMED_OUT after its forwarding timeout, read as no leader known."""
    sb = sandbox_factory(5, topics={"t": ASSIGNMENT}, combined=True, forwarding_timeout_s=0.3)
    connection = Connection(sb.bootstrap_servers)
    leaders = []
    for broker in (1, 2, 3):
        sb.stop_broker(broker)
        with connection.open(connection.settings(lambda _line: None)) as cluster:
            leaders.append(quorum_leader(cluster))
    assert leaders == [2, None, None]  # was 2, 3, then 4 (not a voter)
    with pytest.raises(ValueError):
        sb.move_controller(4)
    sb.start_broker(3)
    sb.start_broker(1)
    with connection.open(connection.settings(lambda _line: None)) as cluster:
        assert quorum_leader(cluster) == 1  # a majority again: a voter leads
