"""The one test command (scripts/test, README "Run the tests", .ci/run) and the missing-service rule
(tests/services.py): a skip with one folded reason line, counted in the command's summary; a failure under
CI=true."""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
REASON = "thing is missing: apt-get install thing"
NEEDS_A_SERVICE = f"""from services import missing_service

import pytest


@pytest.fixture
def thing():
    missing_service("Thing", "{REASON}")


def test_in_a_fixture(thing):
    pass


@pytest.mark.parametrize("n", [1, 2])
def test_in_the_test(n):
    missing_service("Thing", "{REASON}")


def test_without_the_service():
    pass
"""


def _test_command() -> object:
    loader = importlib.machinery.SourceFileLoader("scripts_test", str(ROOT / "scripts" / "test"))
    spec = importlib.util.spec_from_loader("scripts_test", loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _pytest(tmp_path: Path, ci: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "test_needs_a_service.py").write_text(NEEDS_A_SERVICE)
    env = {**os.environ, "PYTHONPATH": str(ROOT / "tests"), "CI": ci}
    options = ["-p", "conftest", "-p", "no:cacheprovider", "-p", "no:randomly", "-p", "no:warnings", "-ra",
               "--rootdir", str(tmp_path), f"--junitxml={tmp_path / 'junit.xml'}"]
    return subprocess.run([sys.executable, "-m", "pytest", *options, str(tmp_path / "test_needs_a_service.py")],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)


def test_a_missing_service_skips_with_one_reason_line_and_is_counted(tmp_path: Path) -> None:
    done = _pytest(tmp_path, ci="")
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(lines) == 1, done.stdout  # the three skips folded into one line, where services.py raised them
    assert lines[0].startswith("SKIPPED [3] ") and "services.py:" in lines[0], lines
    assert lines[0].endswith(f": missing service Thing: {REASON}"), lines
    assert "1 passed, 3 skipped" in done.stdout
    outcomes, reasons, others = _test_command().results(tmp_path / "junit.xml")  # type: ignore[attr-defined]
    assert (dict(outcomes), dict(reasons), others) == ({"passed": 1, "skipped": 3},
                                                       {f"missing service Thing: {REASON}": 3}, 0)


@pytest.mark.parametrize("ci", ["true", "TRUE"])
def test_under_ci_a_missing_service_is_a_failure(tmp_path: Path, ci: str) -> None:
    done = _pytest(tmp_path, ci=ci)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 failed, 1 passed, 1 error" in done.stdout
    assert "CI=true: CI runs every test" in done.stdout
    outcomes, reasons, others = _test_command().results(tmp_path / "junit.xml")  # type: ignore[attr-defined]
    assert (dict(outcomes), dict(reasons), others) == ({"passed": 1, "failed": 3},  # counted, not "0 skipped"
                                                       {f"missing service Thing: {REASON}": 3}, 0)


def test_the_service_prefix_is_the_one_the_tests_raise() -> None:
    from services import PREFIX

    assert _test_command().SERVICE_SKIP == PREFIX  # type: ignore[attr-defined]


def test_a_junit_report_asked_for_is_the_one_read(tmp_path: Path) -> None:
    """pytest writes only the last --junitxml: the command reads that one (it said "no test ran")."""
    junit_path = _test_command().junit_path  # type: ignore[attr-defined]
    assert junit_path(["-x", "--junitxml", "r.xml"], tmp_path) == (Path("r.xml"), ["-x", "--junitxml", "r.xml"])
    assert junit_path(["--junit-xml=a.xml"], tmp_path) == (Path("a.xml"), ["--junit-xml=a.xml"])
    assert junit_path(["-x"], tmp_path) == (tmp_path / "junit.xml", [f"--junitxml={tmp_path / 'junit.xml'}", "-x"])


def test_a_cut_or_missing_report_counts_nothing(tmp_path: Path) -> None:
    (tmp_path / "cut.xml").write_text("<testsuites><testsuite><testcase")
    results = _test_command().results  # type: ignore[attr-defined]
    assert results(tmp_path / "cut.xml") == results(tmp_path / "none.xml") == ({}, {}, 0)


def test_the_readme_and_ci_run_the_one_command() -> None:
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Run the tests\n", 1)[1].split("\n## ", 1)[0]
    assert section.split("```sh\n", 1)[1].split("```", 1)[0] == "scripts/test\n"
    commands = [line for line in (ROOT / ".ci" / "run").read_text().splitlines()
                if line and not line.startswith(("#", "set ", "cd "))]
    assert commands == ["scripts/test"]
    assert os.access(ROOT / "scripts" / "test", os.X_OK)
