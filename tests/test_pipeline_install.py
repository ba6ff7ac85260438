"""`kafka-leaders analyze` before any Spark starts: a missing PySpark and bad options are one-line errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from leader_election_cli.cli.toolkit import cli


def analyze(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["analyze", *args], catch_exceptions=False)
    return result.exit_code, result.stderr


HINT = ("Hint: Reinstall with the [spark] extra, in the project's directory: pipx install --force '.[spark]' "
        "(or pip install '.[spark]' in its virtualenv). It needs Java 17 or newer too.\n")


def test_without_pyspark_it_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)  # what an environment without the extra looks like
    assert analyze("snapshots.jsonl", "--out", str(tmp_path)) == (
        2, "kafka-leaders analyze needs PySpark, which is not installed\n" + HINT)


def test_every_missing_part_of_the_extra_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    assert analyze("snapshots.jsonl", "--out", str(tmp_path), "--plot") == (
        2, "kafka-leaders analyze needs pyarrow and matplotlib, which are not installed\n" + HINT)


@pytest.mark.parametrize(("args", "message"), [
    (["--conf", "spark.driver.memory"], "--conf 'spark.driver.memory' is not KEY=VALUE"),
    (["--batch-size", "0"], "Invalid value for '--batch-size'"),
    (["--threshold", "-1"], "Invalid value for '--threshold'"),
])
def test_bad_options_are_refused_before_spark_starts(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                      args: list[str], message: str) -> None:
    monkeypatch.setitem(sys.modules, "pyspark", None)  # proves no Spark was needed to refuse them
    code, err = analyze("snapshots.jsonl", "--out", str(tmp_path), *args)
    assert code == 2 and err.startswith(message) and "Traceback" not in err


def test_snapshots_and_out_are_required() -> None:
    code, err = analyze("--out", "x")
    assert code == 2 and "Missing argument 'SNAPSHOT...'" in err
