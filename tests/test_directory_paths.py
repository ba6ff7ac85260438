"""Paths as users write them: a trailing "/" names a directory, created when missing, for every option that
takes one (`local_files.names_a_directory`); the run names its file in it. A file-only option refuses it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from pathlib import Path

import pytest
from commands import run_command

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.local_files import make_directories, names_a_directory
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.scenarios import build

kl = partial(run_command, cli)


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    """Leaders skewed over their preferred replicas and off them: every command has work to do."""
    sandbox = sandbox_factory()
    build(sandbox, "skewed", 1, 6, 3)
    sandbox.set_leader("topic-1", 0, sandbox.partition_state("topic-1", 0).replicas[1])
    return sandbox


def test_a_trailing_slash_names_a_directory_made_level_by_level(tmp_path: Path) -> None:
    assert names_a_directory(f"{tmp_path}/a/b/") and names_a_directory(str(tmp_path))
    assert not names_a_directory(f"{tmp_path}/a/b")
    assert make_directories(tmp_path / "a" / "b", "--x").is_dir()
    (tmp_path / "file").write_text("")
    with pytest.raises(Exception, match="is not a directory"):
        make_directories(tmp_path / "file" / "c", "--x")


def test_rebalance_metrics_and_lock_directories_are_created(sb: Sandbox, tmp_path: Path) -> None:
    """The README's cron line: --metrics-file /var/lib/node_exporter/textfile/ before the directory exists."""
    code, _, err = kl("rebalance", "--bootstrap-server", sb.bootstrap_servers, "--threshold", "0",
                      "--metrics-file", f"{tmp_path}/textfile/", "--lock-file", f"{tmp_path}/locks/")
    assert code == 0, err
    assert (tmp_path / "textfile").is_dir() and [p.suffix for p in (tmp_path / "textfile").iterdir()] == [".prom"]
    assert [p.name.startswith("rebalance-") for p in (tmp_path / "locks").iterdir()] == [True]


def test_an_audit_log_ending_in_slash_is_refused(sb: Sandbox, tmp_path: Path) -> None:
    code, _, err = kl("rebalance", "--bootstrap-server", sb.bootstrap_servers, "--audit-log", f"{tmp_path}/logs/")
    assert code == 2 and "--audit-log" in err and "names a directory (it ends in /)" in err and "Traceback" not in err


def test_snapshot_output_directory_is_created(sb: Sandbox, tmp_path: Path) -> None:
    code, out, err = kl("snapshot", "--bootstrap-server", sb.bootstrap_servers, "--output", f"{tmp_path}/snapdir/",
                        "--format", "jsonl")
    assert code == 0, err
    written = list((tmp_path / "snapdir").iterdir())
    assert [p.suffix for p in written] == [".jsonl"] and str(written[0]) in out


def test_prefer_restore_directory_is_created_and_a_dry_run_creates_nothing(sb: Sandbox, tmp_path: Path) -> None:
    p = sb.partition_state("topic-1", 1)
    args = ("prefer", "--bootstrap-server", sb.bootstrap_servers, "--topic", "topic-1", "--partition", "1",
            "--leader", str(p.replicas[1]), "--restore-file", f"{tmp_path}/backups/", "--output", "json")
    assert kl(*args, "--dry-run").code == 0 and not (tmp_path / "backups").exists()
    code, _, err = kl(*args)
    assert code == 0, err
    assert [f.name.endswith(".json") and "-prefer-" in f.name for f in (tmp_path / "backups").iterdir()] == [True]


def test_balance_plan_and_restore_directories_are_created(sb: Sandbox, tmp_path: Path) -> None:
    code, _, err = kl("balance", "--bootstrap-server", sb.bootstrap_servers, "--plan-file", f"{tmp_path}/plans/")
    assert code == 0, err
    plans = list((tmp_path / "plans").iterdir())
    assert len(plans) == 1 and "-balance-plan-" in plans[0].name
    code, _, err = kl("balance", "--bootstrap-server", sb.bootstrap_servers, "--execute", "--plan-file",
                      str(plans[0]), "--restore-file", f"{tmp_path}/restore/")
    assert code == 0, err
    assert ["-balance-" in f.name for f in (tmp_path / "restore").iterdir()] == [True]
