"""The code keeps the style pyproject.toml sets ([tool.ruff]): one check, the same on every machine."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RUFF = Path(sys.executable).with_name("ruff")


def ruff(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RUFF), "check", "--no-cache", *args], cwd=ROOT, input=stdin, capture_output=True,
                          text=True, timeout=120)


def test_ruff_finds_nothing() -> None:
    done = ruff(".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_check_can_fail() -> None:
    """The project's settings are the ones read: an unused import and a line over 120 characters are found."""
    done = ruff("--stdin-filename", "leader_election_cli/planted.py", "-",
                stdin="import os\n\nX = '" + "x" * 130 + "'\n")
    assert done.returncode == 1 and "F401" in done.stdout and "E501" in done.stdout, done.stdout
