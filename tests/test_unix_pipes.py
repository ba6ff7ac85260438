"""Every command that prints, with its stdout on a pipe nobody reads, closed (`>&-`) or on /dev/full: the
run ends with the exit code it earned, what it sent stays done, and there is no traceback."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from commands import BIN

from leader_election_cli.sandbox import Sandbox

PARTITIONS = 120  # several KB of output: more than a pipe takes in one write


@pytest.fixture(scope="module")
def sb(module_sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    return module_sandbox_factory(3, topics={"t1": {p: [1, 2, 3] for p in range(PARTITIONS)},
                                             "t2": {0: [1, 2, 3], 1: [2, 3, 1]}})


def unbalance(sb: Sandbox) -> None:
    for p in range(PARTITIONS):
        sb.set_leader("t1", p, 2)


def leaders(sb: Sandbox) -> list[int]:
    return [sb.partition_state("t1", p).leader for p in range(PARTITIONS)]


def into_closed_pipe(args: list[str]) -> tuple[int, str]:
    """Run with stdout on a pipe whose reading end is already closed: the first write gets EPIPE."""
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(args, stdout=write, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True,
                              timeout=60)
    finally:
        os.close(write)
    return done.returncode, done.stderr


def shell(line: str) -> tuple[int, str, str]:
    """`line` in bash; the exit code of its first command (a pipeline's writer)."""
    done = subprocess.run(["bash", "--norc", "-c", f"{line}; exit ${{PIPESTATUS[0]}}"], capture_output=True,
                          text=True, timeout=60, stdin=subprocess.DEVNULL)
    return done.returncode, done.stdout, done.stderr


def quiet(stderr: str) -> None:
    assert "Traceback" not in stderr and "Internal error" not in stderr and "Exception ignored" not in stderr, stderr


def commands(sb: Sandbox, tmp: Path) -> dict[str, list[str]]:
    b = ["--bootstrap-server", sb.bootstrap_servers]
    kl = str(BIN / "kafka-leaders")
    return {
        "drop-in": [str(BIN / "kafka-leader-election"), *b, "--election-type", "preferred", "--all-topic-partitions"],
        "elect": [kl, "elect", *b, "--all-topic-partitions", "--output", "json"],
        "plan": [kl, "plan", *b, "--all-topic-partitions"],
        "status": [kl, "status", *b],
        "rebalance": [kl, "rebalance", *b, "--threshold", "0", "-v", "--output", "json"],
        "prefer": [kl, "prefer", *b, "--topic", "t2", "--partition", "0", "--leader", "2", "--restore-file",
                   str(tmp / "prefer.json")],
        "demote": [kl, "demote", *b, "--broker", "3", "--dry-run"],
        "snapshot": [kl, "snapshot", *b, "--output", str(tmp / "snapshot.jsonl")],
    }


@pytest.mark.parametrize("name", ["drop-in", "elect", "rebalance"])
def test_an_election_into_a_closed_pipe_still_elects_and_exits_0(sb: Sandbox, tmp_path: Path, name: str) -> None:
    unbalance(sb)
    code, err = into_closed_pipe(commands(sb, tmp_path)[name])
    quiet(err)
    assert code == 0, err
    assert leaders(sb) == [1] * PARTITIONS


@pytest.mark.parametrize("name", ["plan", "status", "prefer", "demote", "snapshot"])
def test_every_printing_command_into_a_closed_pipe_is_quiet(sb: Sandbox, tmp_path: Path, name: str) -> None:
    code, err = into_closed_pipe(commands(sb, tmp_path)[name])
    quiet(err)
    assert code == 0, err
    assert err == "" or name == "prefer", err  # prefer notes its restore file on stderr


def test_restore_into_a_closed_pipe(sb: Sandbox, tmp_path: Path) -> None:
    args = [str(BIN / "kafka-leaders"), "prefer", "--bootstrap-server", sb.bootstrap_servers, "--topic", "t2",
            "--partition", "1", "--leader", "3", "--restore-file", str(tmp_path / "prefer.json")]
    assert subprocess.run(args, capture_output=True, timeout=60).returncode == 0
    assert sb.partition_state("t2", 1).leader == 3
    code, err = into_closed_pipe([str(BIN / "kafka-leaders"), "restore", "--bootstrap-server", sb.bootstrap_servers,
                                  str(tmp_path / "prefer.json")])
    quiet(err)
    assert code == 0, err
    assert sb.partition_state("t2", 1).leader == 2


def test_head_reads_one_line_of_a_large_document(sb: Sandbox, tmp_path: Path) -> None:
    unbalance(sb)
    code, out, err = shell(" ".join(commands(sb, tmp_path)["elect"]) + " | head -1")
    quiet(err)
    assert (code, out, err) == (0, "{\n", "")
    assert leaders(sb) == [1] * PARTITIONS


def test_a_failed_partition_keeps_exit_1_through_a_closed_pipe(sb: Sandbox, tmp_path: Path) -> None:
    code, err = into_closed_pipe([str(BIN / "kafka-leader-election"), "--bootstrap-server", sb.bootstrap_servers,
                                  "--election-type", "preferred", "--topic", "t2", "--partition", "7"])
    quiet(err)
    assert code == 1, err


@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
def test_a_lost_report_is_said_on_stderr_with_the_runs_exit_code(sb: Sandbox, tmp_path: Path, redirect: str) -> None:
    unbalance(sb)
    code, _out, err = shell(" ".join(commands(sb, tmp_path)["drop-in"]) + f" {redirect}")
    quiet(err)
    assert code == 0
    assert err.startswith("Could not write to stdout: "), err
    assert len(err.splitlines()) == 1
    assert leaders(sb) == [1] * PARTITIONS


def test_nothing_written_to_a_closed_stdout_is_nothing_lost(sb: Sandbox, tmp_path: Path) -> None:
    """rebalance is silent when there is nothing to do: a closed stdout loses nothing, so nothing is said."""
    code, _out, err = shell(f"{BIN}/kafka-leaders rebalance --bootstrap-server {sb.bootstrap_servers} "
                            "--threshold 100 >&-")
    assert (code, err) == (0, "")
