"""Numbers and weights that were tracebacks, internal errors or wrong verdicts (issue 34): every number is
ASCII digits, every weight finite and in range (one rule, `planning.leadership_plan.weight_problem`), and a
balance that excludes every broker is an input error, not "optimal, nothing to change"."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from commands import DROP_IN, TOOLKIT

from leader_election_cli.sandbox import Sandbox


def refused(argv: list[str]) -> str:
    result = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, (result.returncode, result.stdout[-500:], result.stderr)
    assert "Traceback" not in result.stderr and "Internal error" not in result.stderr, result.stderr
    assert "Warning" not in result.stderr and ".py" not in result.stderr, result.stderr  # no NumPy warning
    assert len([line for line in result.stderr.splitlines() if not line.startswith("Hint:")]) == 1, result.stderr
    return result.stderr


@pytest.mark.parametrize("args", [
    ["balance", "--exclude-broker", "²"], ["balance", "--exclude-broker", "١"], ["balance", "--max-moves", "٣"],
    ["status", "--timeout", "٣"], ["elect", "--all-topic-partitions", "--batch-size", "٣"],
    ["rebalance", "--threshold", "١٠"],
])
def test_numbers_are_ascii_digits(quiet_sandbox: Sandbox, args: list[str]) -> None:
    before = quiet_sandbox.request_count()
    refused([*TOOLKIT, *args, "--bootstrap-server", quiet_sandbox.bootstrap_servers])
    assert quiet_sandbox.request_count() == before


def test_the_drop_ins_own_numbers_are_ascii_digits_too(quiet_sandbox: Sandbox) -> None:
    refused([*DROP_IN, "--bootstrap-server", quiet_sandbox.bootstrap_servers, "--election-type", "preferred",
             "--all-topic-partitions", "--timeout", "٣"])


def test_excluding_every_broker_is_an_input_error(quiet_sandbox: Sandbox) -> None:
    err = refused([*TOOLKIT, "balance", "--bootstrap-server", quiet_sandbox.bootstrap_servers,
                   "--exclude-broker", "1,2,3"])
    assert "names every live broker" in err


@pytest.mark.parametrize("weight", [1e308, 1.797e308, 5e-324, 1e19, 1e-7])
def test_weights_out_of_range_are_refused_before_connecting(quiet_sandbox: Sandbox, tmp_path: Path,
                                                            weight: float) -> None:
    """All 1e308: 'Internal error: ZeroDivisionError'; 1.797e308 and 5e-324: NumPy warnings with source
    paths, and 5e-324 turned an optimal plan into 'optimal: false, gap 100 %'."""
    path = tmp_path / "weights.json"
    path.write_text(json.dumps({"partitions": [{"topic": "t", "partition": p, "weight": weight} for p in range(6)]}))
    before = quiet_sandbox.request_count()
    err = refused([*TOOLKIT, "balance", "--bootstrap-server", quiet_sandbox.bootstrap_servers, "--weights", str(path)])
    assert "$.partitions[0].weight: weights must be 0 or from 1e-06 to 1e+18" in err
    assert quiet_sandbox.request_count() == before


@pytest.mark.parametrize("weight", [0, 1e-6, 1, 1e18])
def test_weights_in_range_make_a_plan(quiet_sandbox: Sandbox, tmp_path: Path, weight: float) -> None:
    path = tmp_path / "weights.json"
    path.write_text(json.dumps({"partitions": [{"topic": "t", "partition": p, "weight": weight} for p in range(6)]}))
    result = subprocess.run([*TOOLKIT, "balance", "--bootstrap-server", quiet_sandbox.bootstrap_servers,
                             "--weights", str(path), "--output", "json"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and "Warning" not in result.stderr, result.stderr
    assert json.loads(result.stdout)["summary"]["optimal"] is True
