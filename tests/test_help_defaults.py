"""Each default an option's help names is the one the code applies: the help's words are checked against
the functions that choose the default (restore files, the rebalance lock, timeouts, batch sizes, formats),
and the hints name every command and a way that keeps what is installed."""

from __future__ import annotations

import re
from datetime import datetime, timezone
from pathlib import Path

import click
import pytest

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import SUBCOMMANDS, cli

COMMANDS = {name: cli.get_command(click.Context(cli), name) for name in SUBCOMMANDS}


def option_help(command: str, name: str) -> str:
    found = [p for p in COMMANDS[command].params if name in p.opts]
    assert found, f"{command} has no {name}"
    return " ".join((found[0].help or "").split())  # type: ignore[attr-defined]


def stated_default(help_text: str) -> str:
    match = re.search(r"default: (.*?)[;)]", help_text)
    assert match, help_text
    return match.group(1)


@pytest.mark.parametrize("command", ["prefer", "demote", "balance"])
def test_the_restore_file_default_is_where_the_file_goes(command: str, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from leader_election_cli.operations.restore_file import default_restore_path

    stated = stated_default(option_help(command, "--restore-file"))
    with_xdg, without_xdg = (part.strip() for part in stated.split(","))
    now = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    shown = with_xdg.replace("$XDG_STATE_HOME", str(tmp_path / "state")).replace("<command>", command)
    pattern = re.escape(shown).replace(re.escape("<cluster id>"), "c1")
    pattern = pattern.replace(re.escape("<UTC time>"), r"\d{8}T\d{9}Z")
    assert re.fullmatch(pattern, str(default_restore_path(command, "c1", now)))
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert without_xdg == "~/.local/state/kafka-leaders/... without it"
    assert default_restore_path(command, "c1", now).parent == tmp_path / "home" / ".local" / "state" / "kafka-leaders"


def test_the_lock_file_default_is_the_lock_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from leader_election_cli.operations.lock import lock_directory

    stated = option_help("rebalance", "--lock-file")
    assert "temp" not in stated
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    assert "$XDG_RUNTIME_DIR/kafka-leaders/" in stated and lock_directory() == tmp_path / "kafka-leaders"
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert "~/.cache/kafka-leaders/" in stated and lock_directory() == tmp_path / "home" / ".cache" / "kafka-leaders"


def test_the_timeout_default_is_the_api_timeout() -> None:
    from leader_election_cli.config.settings import DEFAULT_API_TIMEOUT_MS

    stated = [option_help(name, "--timeout") for name in COMMANDS if "--timeout" in
              [o for p in COMMANDS[name].params for o in p.opts]]
    stated += [" ".join(p.help.split()) for p in drop_in.params if "--timeout" in p.opts]  # type: ignore[attr-defined]
    assert stated and all(f"{DEFAULT_API_TIMEOUT_MS // 1000} s" in text for text in stated)


def test_the_batch_size_shown_is_the_operations_default() -> None:
    from leader_election_cli.cli import moves_command
    from leader_election_cli.operations import moves

    assert moves_command.DEFAULT_BATCH_SIZE == moves.DEFAULT_BATCH_SIZE
    for name in ("prefer", "demote", "restore", "balance", "rebalance"):
        option = next(p for p in COMMANDS[name].params if "--batch-size" in p.opts)
        assert option.default == moves.DEFAULT_BATCH_SIZE, name


def test_a_directory_snapshot_is_the_format_its_help_names(tmp_path: Path) -> None:
    from leader_election_cli.snapshot import check_target

    assert "(default parquet)" in option_help("snapshot", "--format")
    assert check_target(str(tmp_path), None, append=False) == ("parquet", True)


def test_the_restore_hint_names_every_command_that_writes_restore_files(tmp_path: Path) -> None:
    from leader_election_cli.errors import InputError
    from leader_election_cli.operations.restore_file import load_restore_file

    writers = [name for name, c in COMMANDS.items() if any("--restore-file" in p.opts for p in c.params)]
    assert sorted(writers) == ["balance", "demote", "prefer"]
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(InputError) as refused:
        load_restore_file(str(tmp_path / "bad.json"))
    assert all(name in (refused.value.hint or "") for name in writers), refused.value.hint
    assert all(name in SUBCOMMANDS["restore"][1] for name in writers)


@pytest.mark.parametrize("extra", ["zookeeper", "spark"])
def test_the_extras_hint_keeps_the_extras_installed(extra: str) -> None:
    """`pipx install --force '.[zookeeper]'` reinstalls with that extra alone (an installed [spark] is gone):
    the hint adds the extra's own packages with pipx inject."""
    from leader_election_cli.errors import extra_hint, extra_requirements

    hint = extra_hint(extra)
    packages = extra_requirements(extra)
    assert packages and f"pipx inject leader-election-cli {' '.join(repr(p) for p in packages)} " in hint
    assert not hint.startswith("Reinstall") and "drops" in hint
