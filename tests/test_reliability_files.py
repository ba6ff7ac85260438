"""Files that are not ours (issue 18, class 4) and the files a run writes: never written through a symlink we
did not create, written whole or not at all, the default lock in a private directory, special files
refused (exit 2), and the sandbox's --ready-file never removing a file of the user's."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

import pytest
from click.testing import CliRunner

from leader_election_cli import local_files
from leader_election_cli.cli.toolkit import cli
from leader_election_cli.errors import InputError
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition
from leader_election_cli.operations.lock import default_lock_path, exclusive_lock
from leader_election_cli.operations.restore_file import write_restore_file
from leader_election_cli.planning.reorders import Move
from leader_election_cli.render import records

VICTIM_TEXT = "the user's own file\n"
UNUSED = "127.0.0.1:1"  # nothing listens there: the runs below must stop before connecting


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    path = tmp_path / "victim"
    path.write_text(VICTIM_TEXT)
    return path


@pytest.fixture
def private_runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    return runtime


# -- the rebalance lock --------------------------------------------------------------------------------

def test_the_default_lock_is_in_a_private_directory_not_a_shared_temporary_name(private_runtime: Path) -> None:
    path = default_lock_path("cluster-1", "h:9092")
    assert path.parent == private_runtime / "kafka-leaders"
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700


def test_the_default_lock_never_follows_a_planted_symlink(private_runtime: Path, victim: Path) -> None:
    """The classic /tmp attack on a tool run by root from cron: the lock opened through a planted link
    truncated its target."""
    path = default_lock_path("cluster-1", "h:9092")
    path.symlink_to(victim)
    with pytest.raises(InputError, match="symbolic link"), exclusive_lock(path):
        pass
    assert victim.read_text() == VICTIM_TEXT


def test_a_lock_directory_open_to_others_is_refused(private_runtime: Path) -> None:
    (private_runtime / "kafka-leaders").mkdir(mode=0o777)
    os.chmod(private_runtime / "kafka-leaders", 0o777)
    with pytest.raises(InputError, match="not private to this user"):
        default_lock_path("cluster-1", "h:9092")


def rebalance(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["rebalance", "--bootstrap-server", UNUSED, "--timeout", "1", *args])
    return result.exit_code, result.stderr


@pytest.mark.parametrize("make", ["devnull", "fifo", "symlink", "empty"])
def test_a_lock_file_that_is_not_a_regular_file_is_refused_before_connecting(
        make: str, tmp_path: Path, victim: Path) -> None:
    path = {"devnull": "/dev/null", "fifo": str(tmp_path / "fifo"), "symlink": str(tmp_path / "link"),
            "empty": ""}[make]
    if make == "fifo":
        os.mkfifo(path)
    elif make == "symlink":
        Path(path).symlink_to(victim)
    code, err = rebalance("--lock-file", path)
    assert code == 2, err
    assert err.startswith("--lock-file is empty" if make == "empty" else f"Cannot use the lock file {path}: it is")
    assert victim.read_text() == VICTIM_TEXT


# -- restore files -----------------------------------------------------------------------------------

def _state() -> tuple[ClusterState, list[Move]]:
    tp = TopicPartition("t", 0)
    state = ClusterState({1: ("h", 1)}, 1, {tp: PartitionState("t", 0, 1, (1, 2, 3), (1, 2, 3))})
    return state, [Move(tp, (1, 2, 3), (2, 1, 3), 1, 2)]


def test_a_restore_file_is_never_written_through_a_symlink(tmp_path: Path, victim: Path) -> None:
    link = tmp_path / "restore.json"
    link.symlink_to(victim)
    with pytest.raises(InputError, match="already exists"):
        write_restore_file(link, "prefer", *_state())
    assert victim.read_text() == VICTIM_TEXT
    dangling = tmp_path / "dangling.json"
    dangling.symlink_to(tmp_path / "would-be-created")
    with pytest.raises(InputError, match="already exists"):
        write_restore_file(dangling, "prefer", *_state())
    assert not (tmp_path / "would-be-created").exists()


def test_a_restore_file_that_cannot_be_written_whole_leaves_nothing_behind(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A full file system: the old code left a partial restore file, which `restore` would then trust."""
    def disk_full(fd: int) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "fsync", disk_full)
    path = tmp_path / "restore.json"
    with pytest.raises(InputError, match="No space left on device"):
        write_restore_file(path, "prefer", *_state())
    assert list(tmp_path.iterdir()) == []


def test_empty_restore_and_lock_file_options_are_refused() -> None:
    result = CliRunner().invoke(cli, ["prefer", "--bootstrap-server", UNUSED, "--topic", "t", "--partition", "0",
                                      "--leader", "1", "--restore-file", ""])
    assert result.exit_code == 2 and result.stderr.startswith("--restore-file is empty")


# -- the audit log and the metrics file ----------------------------------------------------------------

def test_the_audit_log_is_never_appended_through_a_symlink(tmp_path: Path, victim: Path) -> None:
    link = tmp_path / "audit.jsonl"
    link.symlink_to(victim)
    with pytest.raises(OSError, match="symbolic link"):
        records.append_audit_line(link, {"run": 1})
    assert victim.read_text() == VICTIM_TEXT
    code, err = rebalance("--audit-log", str(link))
    assert code == 2 and "is a symbolic link" in err


@pytest.mark.timeout(20)
def test_a_fifo_as_audit_log_or_metrics_file_is_refused_at_once(tmp_path: Path) -> None:
    """Opened for writing without a reader, a FIFO blocked the run forever."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError, match="FIFO"):
        records.append_audit_line(fifo, {"run": 1})
    for option in ("--audit-log", "--metrics-file"):
        code, err = rebalance(option, str(fifo))
        assert code == 2 and "FIFO" in err, err


def test_metrics_replace_a_symlink_never_its_target_and_never_a_device(tmp_path: Path, victim: Path) -> None:
    from leader_election_cli.reports.balance import RebalanceRun

    link = tmp_path / "metrics.prom"
    link.symlink_to(victim)
    records.write_metrics(link, RebalanceRun(10.0, False))
    assert victim.read_text() == VICTIM_TEXT and not link.is_symlink()
    assert "kafka_leaders_rebalance_exit_code" in link.read_text()
    with pytest.raises(OSError, match="character device"):
        local_files.write_atomically(Path("/dev/null"), b"x")
    assert Path("/dev/null").is_char_device()


# -- the sandbox's ready file ----------------------------------------------------------------------------

def test_the_sandbox_never_overwrites_or_removes_a_ready_file_it_did_not_write(tmp_path: Path) -> None:
    mine = tmp_path / "ready.json"
    mine.write_text(VICTIM_TEXT)
    result = CliRunner().invoke(cli, ["sandbox", "--brokers", "1", "--ready-file", str(mine), "--run", "true"])
    assert result.exit_code == 2, result.output
    assert "already exists" in result.stderr
    assert mine.read_text() == VICTIM_TEXT


def test_the_sandbox_removes_the_ready_file_it_wrote(tmp_path: Path) -> None:
    ready = tmp_path / "ready.json"
    result = CliRunner().invoke(cli, ["sandbox", "--brokers", "1", "--ready-file", str(ready), "--run",
                                      f"test -s {ready}"])
    assert result.exit_code == 0, result.output
    assert not ready.exists()
