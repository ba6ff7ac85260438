"""The benchmark scripts still load against the package as it is: each one is imported in a fresh process,
which resolves its module-level imports without running it (a name moved in the package would otherwise
break a benchmark unnoticed: the suite runs no benchmark, they time things)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).parent.parent / "benchmarks"
SCRIPTS = sorted(BENCHMARKS.glob("*.py"))


def test_there_are_benchmarks() -> None:
    assert len(SCRIPTS) >= 10


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_a_benchmark_script_loads(script: Path) -> None:
    load = f"import sys; sys.path.insert(0, {str(BENCHMARKS)!r}); import {script.stem}"
    run = subprocess.run([sys.executable, "-c", load], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
