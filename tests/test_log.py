"""The package's loggers hand records to `logging` once something loaded it, and never load it."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

from leader_election_cli.log import Logger


def test_a_record_reaches_logging_with_its_logger_level_and_caller(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    Logger("leader_election_cli.cluster.x").warning("Bootstrap connection to %s failed", "h:9092")
    [record] = caplog.records
    assert (record.name, record.levelname, record.getMessage(), record.funcName) == (
        "leader_election_cli.cluster.x", "WARNING", "Bootstrap connection to h:9092 failed",
        "test_a_record_reaches_logging_with_its_logger_level_and_caller")


def run(code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


def test_without_logging_loaded_a_record_is_dropped_and_logging_stays_unloaded() -> None:
    done = run("import sys\nfrom leader_election_cli.log import Logger\n"
               "Logger('leader_election_cli.x').warning('lost %s', 1)\nprint('logging' in sys.modules)")
    assert (done.returncode, done.stdout, done.stderr) == (0, "False\n", "")


def test_with_logging_loaded_but_no_handler_nothing_reaches_the_last_resort() -> None:
    """As a library's records under a NullHandler: an application that configured no logging sees none."""
    done = run("import logging\nfrom leader_election_cli.log import Logger\n"
               "Logger('leader_election_cli.x').warning('lost %s', 1)")
    assert (done.returncode, done.stderr) == (0, "")
    configured = run("import logging\nlogging.basicConfig()\nfrom leader_election_cli.log import Logger\n"
                     "Logger('leader_election_cli.x').warning('said %s', 1)")
    assert configured.stderr == "WARNING:leader_election_cli.x:said 1\n"
