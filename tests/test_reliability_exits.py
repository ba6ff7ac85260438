"""Exit codes and leftovers of issue 34: an empty snapshot --output, a directory as --restore-file, a full file
system under the rebalance lock and the balance plan file, a --run command killed by a signal."""

from __future__ import annotations

import os
import resource
import subprocess
from pathlib import Path

import pytest
from commands import TOOLKIT

from leader_election_cli.sandbox import Sandbox


def toolkit(*args: str, cwd: Path | None = None, file_size: int | None = None) -> subprocess.CompletedProcess[str]:
    """A real process; `file_size`: the most bytes it may write to a file (RLIMIT_FSIZE: a full file system's
    EFBIG, with Python's SIGXFSZ ignored)."""
    limit = (lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (file_size, file_size))) if file_size is not None \
        else None
    result = subprocess.run([*TOOLKIT, *args], capture_output=True, text=True, timeout=60, cwd=cwd, preexec_fn=limit)
    assert "Traceback" not in result.stderr and "Internal error" not in result.stderr, result.stderr
    return result


def test_an_empty_snapshot_output_is_an_input_error(quiet_sandbox: Sandbox, tmp_path: Path) -> None:
    """It exited 0 and wrote '.parquet' into the current directory (a regression)."""
    before = quiet_sandbox.request_count()
    result = toolkit("snapshot", "--bootstrap-server", quiet_sandbox.bootstrap_servers, "--output", "", cwd=tmp_path)
    assert result.returncode == 2 and "--output is empty" in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == [] and quiet_sandbox.request_count() == before


@pytest.mark.parametrize("command", ["prefer", "demote"])
def test_a_special_file_as_restore_file_is_refused_before_any_request(quiet_sandbox: Sandbox, tmp_path: Path,
                                                                      command: str) -> None:
    """Refused only after three metadata reads before (a directory takes the default name: test_directory_paths)."""
    what = ["--topic", "t", "--partition", "0", "--leader", "2"] if command == "prefer" else ["--broker", "1"]
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    before = quiet_sandbox.request_count()
    result = toolkit(command, "--bootstrap-server", quiet_sandbox.bootstrap_servers, *what, "--restore-file", str(fifo))
    assert result.returncode == 2 and "is a FIFO (named pipe), not a file or a directory" in result.stderr, \
        result.stderr
    assert quiet_sandbox.request_count() == before


def test_a_full_file_system_under_the_rebalance_lock_is_no_internal_error(quiet_sandbox: Sandbox,
                                                                          tmp_path: Path) -> None:
    """The lock holds by flock; the pid written into it only names the holder ('Internal error: OSError EFBIG')."""
    lock = tmp_path / "lock"
    result = toolkit("rebalance", "--bootstrap-server", quiet_sandbox.bootstrap_servers, "--lock-file", str(lock),
                     "--output", "json", file_size=0)
    assert result.returncode == 0, result.stderr


def test_a_full_file_system_leaves_no_plan_file_behind(quiet_sandbox: Sandbox, tmp_path: Path) -> None:
    plan = tmp_path / "plan.json"
    for p in range(6):
        quiet_sandbox.set_leader("t", p, 1)  # every leader on broker 1: a plan to write
    result = toolkit("balance", "--bootstrap-server", quiet_sandbox.bootstrap_servers, "--plan-file", str(plan),
                     file_size=100)
    assert result.returncode == 2 and "Cannot write the plan file" in result.stderr, result.stderr
    assert list(tmp_path.iterdir()) == []  # it left an empty plan file


def test_a_run_command_killed_by_a_signal_exits_as_a_shell_says() -> None:
    result = toolkit("sandbox", "--brokers", "1", "--topics", "0", "--run", "sh -c 'kill -9 $$'")
    assert result.returncode == 128 + 9, result.stderr  # it was 247 (256 - 9)


ALTER_REASSIGNMENTS, LIST_REASSIGNMENTS, ELECT_LEADERS = 45, 46, 43


def _unbalanced(sandbox: Sandbox) -> None:
    for p in range(6):
        sandbox.set_leader("t", p, 1)


def test_a_reorder_refused_for_want_of_topic_authorization_exits_4(tmp_path: Path) -> None:
    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sandbox:
        sandbox.create_topic("t", assignment={p: [1, 2, 3] for p in range(6)})
        sandbox.fail_next(ALTER_REASSIGNMENTS, 29)  # TOPIC_AUTHORIZATION_FAILED
        result = toolkit("balance", "--bootstrap-server", sandbox.bootstrap_servers, "--execute", "--restore-file",
                         str(tmp_path / "restore.json"))
    assert result.returncode == 4, result.stderr  # it was 3


def test_partitions_reordered_but_not_elected_say_so(tmp_path: Path) -> None:
    """A refused ElectLeaders after the reorders left them not_attempted with no error text."""
    import json

    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sandbox:
        sandbox.create_topic("t", assignment={p: [1, 2, 3] for p in range(6)})
        _unbalanced(sandbox)
        sandbox.after_next(ELECT_LEADERS, lambda: sandbox.fail_next(ELECT_LEADERS, 31))
        result = toolkit("balance", "--bootstrap-server", sandbox.bootstrap_servers, "--execute", "--batch-size", "1",
                         "--restore-file", str(tmp_path / "restore.json"), "--output", "json")
    assert result.returncode == 4, result.stderr
    rows = json.loads(result.stdout)["partitions"]
    undone = [row for row in rows if row["outcome"] == "not_attempted"]
    assert undone and all("reordered, but no election was run" in (row["error"] or "") for row in undone), rows


@pytest.mark.parametrize("sig, code", [(15, 143), (1, 129), (2, 130)])
def test_balance_stopped_by_a_signal_exits_128_plus_it(tmp_path: Path, sig: int, code: int) -> None:
    from test_reliability_signals import signalled

    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sandbox:
        sandbox.create_topic("t", assignment={p: [1, 2, 3] for p in range(6)})
        _unbalanced(sandbox)
        rc, _, err = signalled([*TOOLKIT, "balance", "--bootstrap-server", sandbox.bootstrap_servers, "--execute",
                                "--restore-file", str(tmp_path / "restore.json")],
                               lambda send: sandbox.after_next(ALTER_REASSIGNMENTS,
                                                               lambda: sandbox.hold_next(LIST_REASSIGNMENTS, send)),
                               sig)
    assert rc == code, err  # SIGTERM and SIGHUP exited 130
