"""Every command's default path works: each `kafka-leaders` subcommand (listed from the click group itself,
so a new one cannot be forgotten) and the drop-in, run as a real process with only its required options (and
once with --execute where it has one), against a sandbox where it has work to do (leaders off their
preferred replicas, replica orders skewed). Each run must exit with the code the README's exit-code table
gives for that case (0: the work was done, or the dry run printed), and print no internal error or traceback.

Everything a run writes by default (restore files, the rebalance lock) goes to this test's XDG directories.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from collections.abc import Callable, Iterator
from itertools import count
from pathlib import Path
from typing import NamedTuple

import click
import pytest
from commands import BIN

from leader_election_cli.cli.sandbox_ctl_command import CONTROL_ENV
from leader_election_cli.cli.toolkit import cli
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.remote import ControlServer
from leader_election_cli.sandbox.scenarios import skewed_assignment

README = Path(__file__).resolve().parent.parent / "README.md"
BROKERS = [1, 2, 3]
_topics = count(1)


class Case(NamedTuple):
    args: Callable[[Sandbox, Path], list[str]]  # the command line after the program's name
    expected: int  # the README's exit code for this case


@pytest.fixture(scope="module")
def sb(module_sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    """One sandbox for the whole file; each case adds its own topic with work in it (`work`)."""
    return module_sandbox_factory(3)


@pytest.fixture(scope="module")
def control(sb: Sandbox) -> Iterator[str]:
    """The sandbox's control socket, as `kafka-leaders sandbox` makes one (for sandbox-ctl and roll's --exec)."""
    server = ControlServer(sb, catch_up_seconds=0.3).start()
    yield server.path
    server.stop()


def work(sb: Sandbox) -> str:
    """A new topic of six partitions with skewed replica orders, two of them led off their preferred replica:
    work for every command (elect, rebalance, balance, prefer, demote)."""
    topic = f"work-{next(_topics)}"
    sb.create_topic(topic, assignment=skewed_assignment(BROKERS, 6, 3, 0))
    for partition in (0, 1):
        replicas = sb.partition_state(topic, partition).replicas
        sb.set_leader(topic, partition, replicas[1])
    return topic


def b(sb: Sandbox) -> list[str]:
    return ["--bootstrap-server", sb.bootstrap_servers]


def restore_file(sb: Sandbox, tmp: Path) -> list[str]:
    """A restore file written by a prefer run on its default path (the state directory)."""
    topic = work(sb)
    done = run(["prefer", *b(sb), "--topic", topic, "--partition", "2",
                "--leader", str(sb.partition_state(topic, 2).replicas[1]), "--output", "json"], tmp)
    assert done.returncode == 0, done.stderr
    return [json.loads(done.stdout)["restore_file"]]


def balance_plan(sb: Sandbox, tmp: Path) -> list[str]:
    """balance --execute --plan-file PLAN: the plan made by a dry run before (the crash of issue 31)."""
    work(sb)
    plan = tmp / "plan.json"
    done = run(["balance", *b(sb), "--plan-file", str(plan)], tmp)
    assert done.returncode == 0, done.stderr
    return [*b(sb), "--execute", "--plan-file", str(plan)]


def snapshot_file(sb: Sandbox, tmp: Path) -> str:
    work(sb)
    done = run(["snapshot", *b(sb), "--output", str(tmp / "cluster.jsonl")], tmp)
    assert done.returncode == 0, done.stderr
    return str(tmp / "cluster.jsonl")


def analyze(sb: Sandbox, tmp: Path) -> list[str]:
    pytest.importorskip("pyspark")
    return [snapshot_file(sb, tmp), "--out", str(tmp / "report")]


def prefer(sb: Sandbox, _tmp: Path) -> list[str]:
    topic = work(sb)
    return [*b(sb), "--topic", topic, "--partition", "2", "--leader", str(sb.partition_state(topic, 2).replicas[1])]


def with_work(*args: str) -> Callable[[Sandbox, Path], list[str]]:
    def make(sb: Sandbox, _tmp: Path) -> list[str]:
        work(sb)
        return [*b(sb), *args]

    return make


DROP_IN = "kafka-leader-election"
# command -> its cases: only the required options, and --execute once where the command has it
CASES: dict[str, dict[str, Case]] = {
    "elect": {"required": Case(with_work("--all-topic-partitions"), 0)},
    "plan": {"required": Case(with_work("--all-topic-partitions"), 0)},
    "prefer": {"required": Case(prefer, 0)},
    "demote": {"required": Case(with_work("--broker", "2"), 0)},
    "restore": {"required": Case(lambda sb, tmp: [*b(sb), *restore_file(sb, tmp)], 0)},
    "status": {"required": Case(with_work(), 0)},
    "rebalance": {"required": Case(with_work(), 0)},
    "balance": {"required": Case(with_work(), 0), "execute": Case(with_work("--execute"), 0),
                "execute-plan-file": Case(balance_plan, 0)},
    "snapshot": {"required": Case(lambda sb, tmp: [*b(sb), "--output", snapshot_file(sb, tmp) + ".2.jsonl"], 0)},
    "analyze": {"required": Case(analyze, 0)},
    "sandbox": {"required": Case(lambda sb, tmp: [
        "--scenario", "imbalanced", "--run",
        f"{BIN}/{DROP_IN} --bootstrap-server {{bootstrap}} --election-type preferred --all-topic-partitions"], 0)},
    "can-stop": {"required": Case(lambda sb, _tmp: [*b(sb), "2"], 0)},
    "roll": {"required": Case(with_work("--brokers", "2",
                                        "--exec", f"{BIN}/kafka-leaders sandbox-ctl restart-broker {{broker}}"), 0)},
    "sandbox-ctl": {"required": Case(lambda _sb, _tmp: ["status"], 0)},
    DROP_IN: {"required": Case(with_work("--election-type", "preferred", "--all-topic-partitions"), 0)},
}


def run(args: list[str], tmp: Path, control: str | None = None) -> subprocess.CompletedProcess[str]:
    program = [f"{BIN}/{DROP_IN}", *args[1:]] if args[0] == DROP_IN else [f"{BIN}/kafka-leaders", *args]
    environment = {**os.environ, "XDG_RUNTIME_DIR": str(tmp / "runtime"), **({CONTROL_ENV: control} if control else {})}
    (tmp / "runtime").mkdir(mode=0o700, exist_ok=True)
    return subprocess.run(program, capture_output=True, text=True, timeout=540, env=environment, cwd=tmp,
                          stdin=subprocess.DEVNULL)


def test_every_subcommand_has_a_case() -> None:
    assert set(cli.list_commands(click.Context(cli))) | {DROP_IN} == set(CASES)
    with_execute = {name for name in cli.list_commands(click.Context(cli))
                    if any("--execute" in p.opts for p in cli.get_command(click.Context(cli), name).params)}
    assert all("execute" in CASES[name] for name in with_execute), with_execute


def test_the_expected_codes_are_the_readme_s() -> None:
    table = README.read_text().split("## Exit codes", 1)[1].split("\n\n", 2)[1]
    documented = {int(code) for code in re.findall(r"^\| (\d+) \|", table, re.MULTILINE)}
    assert {case.expected for cases in CASES.values() for case in cases.values()} <= documented


@pytest.mark.parametrize(("command", "case"), [
    pytest.param(c, k, marks=pytest.mark.timeout(600) if c == "analyze" else ())  # Spark: minutes on busy cores
    for c, cases in CASES.items() for k in cases])
def test_the_default_path_runs(sb: Sandbox, control: str, tmp_path: Path, command: str, case: str) -> None:
    tmp = tmp_path
    spec = CASES[command][case]
    done = run([command, *spec.args(sb, tmp)], tmp, control)
    shown = f"exit {done.returncode}\nstdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert "Internal error" not in done.stderr and "Traceback" not in done.stderr + done.stdout, shown
    assert done.returncode == spec.expected, shown
