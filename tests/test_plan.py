"""`kafka-leaders plan`, `elect --dry-run` and the drop-in's `--dry-run`: predictions, never an election."""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib import resources

import jsonschema
import pytest
from click.testing import CliRunner
from commands import invoke

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.elect_command import elect, plan
from leader_election_cli.model import NO_LEADER
from leader_election_cli.sandbox import Sandbox

REPORT_SCHEMA = json.loads(resources.files("leader_election_cli").joinpath("schemas/report.schema.json").read_text())
ELECT_LEADERS = 43
FAILED_PREFERRED = ("org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: "
                    "The preferred leader was not available.")


@pytest.fixture
def sb(sandbox_factory: Callable[..., Sandbox], mode: str) -> Sandbox:
    """t-0 led off its preferred replica, t-1 fine, t-2 prefers broker 3 which is down."""
    sandbox = sandbox_factory(mode=mode, topics={"t": {0: [1, 2], 1: [2, 1], 2: [3, 1]}})
    sandbox.set_leader("t", 0, 2)
    sandbox.stop_broker(3)
    return sandbox


def test_plan_predicts_each_partition_and_sends_nothing(sb: Sandbox) -> None:
    code, out, err = invoke(plan, sb, "--topic", "t", "--output", "text")
    zk = sb.mode == "zk"
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "Would elect leader (PREFERRED) for partition: t-0: 2 -> 1",
        "Would find a valid replica already elected for partitions t-1",
        "Would fail leader election (PREFERRED) for partition: t-2: " + (
            "org.apache.kafka.common.errors.PreferredLeaderNotAvailableException: Failed to elect leader for "
            "partition t-2 under strategy PreferredReplicaPartitionLeaderElectionStrategy" if zk else FAILED_PREFERRED)]
    assert sb.request_count(ELECT_LEADERS) == 0 and sb.partition_state("t", 0).leader == 2


def test_plan_json_is_a_dry_run_report(sb: Sandbox) -> None:
    code, out, _ = invoke(plan, sb, "--topic", "t", "--output", "json")
    document = json.loads(out)
    jsonschema.validate(document, REPORT_SCHEMA)
    assert code == 0 and document["dry_run"] is True
    summary = document["summary"]
    assert (summary["would_elect"], summary["not_needed"], summary["would_fail"], summary["total"]) == (1, 1, 1, 3)
    rows = [(p["partition"], p["outcome"], p["error_code"], p["leader_before"], p["leader_after"], p["unclean"])
            for p in document["partitions"]]
    assert rows == [(0, "would_elect", 0, 2, 1, False), (1, "not_needed", 84, 2, 2, False),
                    (2, "would_fail", 80, 1, 1, False)]


def test_elect_dry_run_is_plan(sb: Sandbox) -> None:
    assert invoke(elect, sb, "--topic", "t", "--dry-run", "--output", "json") == \
        invoke(plan, sb, "--topic", "t", "--output", "json")
    assert sb.request_count(ELECT_LEADERS) == 0


def test_plan_table_names_what_would_happen(sb: Sandbox) -> None:
    code, out, _ = invoke(plan, sb, "--topic", "t", "--output", "table")
    assert code == 0 and "Planned preferred leader election" in out
    assert "3 partition(s): 1 would elect, 1 not needed, 1 would fail" in out


def test_controller_mode_overrides_the_detected_rules(sandbox_factory: Callable[..., Sandbox]) -> None:
    """Leaderless, preferred replica out of sync: KRaft falls back to another in-sync replica, ZooKeeper fails."""
    sb = sandbox_factory(brokers=3)
    sb.create_topic("t", assignment={0: [1, 2, 3]})
    sb.cluster.edit("t", 0, isr=[2], leader=NO_LEADER)
    outcomes = {}
    for mode in ("kraft", "zk"):
        code, out, _ = invoke(plan, sb, "--topic", "t", "--controller-mode", mode, "--output", "json")
        [row] = json.loads(out)["partitions"]
        outcomes[mode] = (row["error_code"], row["leader_after"])
    assert outcomes == {"kraft": (0, 2), "zk": (80, NO_LEADER)}
    assert invoke(plan, sb, "--topic", "t", "--output", "json") == \
        invoke(plan, sb, "--topic", "t", "--controller-mode", "kraft", "--output", "json")


def test_the_drop_ins_dry_run_sends_nothing(sb: Sandbox) -> None:
    code, out, err = invoke(drop_in, sb, "--election-type", "preferred", "--all-topic-partitions", "--dry-run",
                            "--output", "text")
    assert (code, err, sb.request_count(ELECT_LEADERS)) == (0, "", 0)
    lines = out.splitlines()
    assert lines[0] == "Would elect leader (PREFERRED) for partition: t-0: 2 -> 1"
    assert lines[1].startswith("Would fail leader election (PREFERRED) for partition: t-2: ") and len(lines) == 2
    code, out, _ = invoke(drop_in, sb, "--election-type", "preferred", "--topic", "t", "--partition", "1",
                          "--dry-run", "--output", "json")
    document = json.loads(out)
    assert document["dry_run"] and [p["error_code"] for p in document["partitions"]] == [84]


def test_the_drop_ins_dry_run_cannot_go_through_zookeeper() -> None:
    result = CliRunner().invoke(drop_in, ["--zookeeper", "127.0.0.1:1", "--election-type", "preferred",
                                          "--all-topic-partitions", "--dry-run"])
    assert result.exit_code == 2 and "Option --dry-run can't be used with --zookeeper" in result.stderr.splitlines()
