"""Ctrl-C in the middle of a batched election: a real process, a real SIGINT, a complete report."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from leader_election_cli.errors import ExitCode
from leader_election_cli.sandbox import Sandbox

ELECT_LEADERS = 43
PARTITIONS = 12
TOOLKIT = [sys.executable, "-c", "from leader_election_cli.cli.toolkit import main; main()", "elect", "--topic", "t"]
DROP_IN = [sys.executable, "-m", "leader_election_cli", "--election-type", "preferred", "--all-topic-partitions"]


def interrupted(sb: Sandbox, argv: list[str], api_key: int = ELECT_LEADERS) -> tuple[int, str, str]:
    """Run `argv`; SIGINT reaches it while the sandbox holds its first `api_key` request; (code, out, err)."""
    started: list[subprocess.Popen[str]] = []
    sb.hold_next(api_key, lambda: started[0].send_signal(signal.SIGINT))
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started.append(process)
    try:
        out, err = process.communicate(timeout=60)
    finally:
        process.kill()
    assert sb.request_count(api_key) > 0, err
    return process.returncode, out, err


@pytest.mark.parametrize("command", [TOOLKIT, DROP_IN], ids=["kafka-leaders elect", "kafka-leader-election"])
def test_ctrl_c_stops_after_the_batch_in_flight_and_reports_every_partition_once(command: list[str]) -> None:
    with Sandbox(brokers=3) as sb:
        sb.create_topic("t", partitions=PARTITIONS, replication_factor=3)
        for p in range(PARTITIONS):
            sb.set_leader("t", p, sb.partition_state("t", p).replicas[1])
        code, out, err = interrupted(sb, [*command, "--bootstrap-server", sb.bootstrap_servers, "--batch-size", "2",
                                          "--batch-interval", "2", "--output", "json"])
        sent = sb.request_count(ELECT_LEADERS)
    assert code == ExitCode.INTERRUPTED, err
    document = json.loads(out)
    names = [(p["topic"], p["partition"]) for p in document["partitions"]]
    assert sorted(names) == [("t", p) for p in range(PARTITIONS)]
    outcomes = [p["outcome"] for p in document["partitions"]]
    assert outcomes.count("elected") == 2 * sent and outcomes.count("not_attempted") == PARTITIONS - 2 * sent > 0
    assert document["summary"]["interrupted"] is True and document["summary"]["exit_code"] == 130


def test_ctrl_c_during_an_all_partitions_request_lets_it_finish_and_reports_it() -> None:
    """Kafka's single all-partitions request was sent before Ctrl-C was caught: the run said
    'Interrupted before anything was sent.' while the controller applied the election."""
    with Sandbox(brokers=3) as sb:
        sb.create_topic("t", partitions=PARTITIONS, replication_factor=3)
        for p in range(PARTITIONS):
            sb.set_leader("t", p, sb.partition_state("t", p).replicas[1])
        code, out, err = interrupted(sb, [*DROP_IN, "--bootstrap-server", sb.bootstrap_servers, "--output", "json"])
        leaders = [sb.partition_state("t", p).leader for p in range(PARTITIONS)]
        preferred = [sb.partition_state("t", p).replicas[0] for p in range(PARTITIONS)]
    assert "Interrupted" not in err
    assert code == ExitCode.OK, err
    assert leaders == preferred
    document = json.loads(out)
    assert [p["outcome"] for p in document["partitions"]] == ["elected"] * PARTITIONS


def test_ctrl_c_during_a_demotions_reorder_finishes_that_reorder_and_reports_it(tmp_path: Path) -> None:
    """The reorder in flight is finished, not abandoned: its partitions show their new order (reordered,
    not elected), the rest are untouched."""
    alter_reassignments = 45
    with Sandbox(brokers=3, broker_configs={"auto.leader.rebalance.enable": "false"}) as sb:
        sb.create_topic("a", assignment={p: [1, 2, 3] for p in range(4)})
        code, out, err = interrupted(sb, [
            sys.executable, "-c", "from leader_election_cli.cli.toolkit import main; main()", "demote", "--broker", "1",
            "--bootstrap-server", sb.bootstrap_servers, "--batch-size", "2", "--output", "json",
            "--restore-file", str(tmp_path / "restore.json")], api_key=alter_reassignments)
        orders = [sb.partition_state("a", p).replicas for p in range(4)]
    assert code == ExitCode.INTERRUPTED, err
    assert orders == [(2, 3, 1), (2, 3, 1), (1, 2, 3), (1, 2, 3)]  # batch 1 finished, batch 2 never sent
    rows = json.loads(out)["partitions"]
    assert [tuple(r["replicas_after"]) for r in rows] == orders
    assert [r["outcome"] for r in rows] == ["not_attempted"] * 4
    assert [r["error"] is not None and r["error"].startswith("reordered, but no election was run") for r in rows] \
        == [True, True, False, False]


def _ctrl_c(*args: object, **kwargs: object) -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize("command", [["elect", "--topic", "t"], ["prefer", "--topic", "t", "--partition", "0",
                                                                  "--leader", "2"]])
def test_ctrl_c_while_the_report_prints_does_not_say_nothing_was_sent(command: list[str], tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The election is done by then: `Interrupted before anything was sent.` would be a lie."""
    from click.testing import CliRunner

    from leader_election_cli.cli.toolkit import cli
    from leader_election_cli.render import election_json as render
    from leader_election_cli.render import output as render_output

    monkeypatch.chdir(tmp_path)  # prefer writes its restore file here
    monkeypatch.setattr(render, "render_json", _ctrl_c)
    monkeypatch.setattr(render_output, "write_json", _ctrl_c)
    with Sandbox(brokers=3) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        sb.set_leader("t", 0, 3)
        result = CliRunner().invoke(cli, [*command, "--bootstrap-server", sb.bootstrap_servers, "--output", "json"])
        assert sb.request_count(ELECT_LEADERS) == 1 and sb.partition_state("t", 0).leader in (1, 2)
    assert result.exit_code == ExitCode.INTERRUPTED
    assert result.stderr.splitlines()[0] == "Interrupted while printing the report: the run itself had finished"
