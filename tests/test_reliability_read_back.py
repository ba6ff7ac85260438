"""Reports reconciled with the read-back, against a sandbox whose answers lie (issue 18, class 7), and the
request plan of one election (issue 20).

Three partitions t-0..t-2, each led by its second replica, are elected (preferred) by the drop-in and by
`kafka-leaders elect` while the sandbox answers success without electing, leaves applied partitions out
of its answer, lets its metadata lag behind the controller, or deletes a topic while the request is held.
Each report must agree with what the sandbox holds afterwards, or say `unconfirmed` with both facts.
`--timeout 1` bounds the read-back's wait (at most the API timeout), so a lie costs about a second.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from importlib import resources
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from leader_election_cli import kafka_errors
from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import cli as toolkit
from leader_election_cli.sandbox import Sandbox

REPORT_SCHEMA = json.loads(resources.files("leader_election_cli").joinpath("schemas/report.schema.json").read_text())
API_VERSIONS, METADATA, ELECT_LEADERS = 18, 3, 43
TOOLS = ["drop-in", "elect"]


@pytest.fixture
def sb() -> Iterator[Sandbox]:
    with Sandbox(brokers=3) as sandbox:
        sandbox.create_topic("t", assignment={p: [1 + (p + i) % 3 for i in range(3)] for p in range(3)})
        for p in range(3):
            sandbox.set_leader("t", p, 1 + (p + 1) % 3)
        yield sandbox


def run(tool: str, sb: Sandbox, *extra: str, output: str = "json", timeout: str = "1") -> tuple[int, Any, str]:
    """A preferred election of topic t (the drop-in: of every partition, as Kafka's tool sends it: a null
    list), batch size unset; (exit code, JSON document or text, stderr)."""
    common = ["--output", output, "--timeout", timeout, *extra]
    if tool == "drop-in":
        program, args = drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                                  "--all-topic-partitions", *common]
    else:
        program, args = toolkit, ["elect", "--bootstrap-server", sb.bootstrap_servers, "--topic", "t", *common]
    result = CliRunner().invoke(program, args, catch_exceptions=False)
    assert "Traceback" not in result.stdout + result.stderr
    if output != "json":
        return result.exit_code, result.stdout, result.stderr
    document = json.loads(result.stdout)
    jsonschema.validate(document, REPORT_SCHEMA)
    assert document["summary"]["exit_code"] == result.exit_code
    return result.exit_code, document, result.stderr


def rows(document: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    return {(r["topic"], r["partition"]): r for r in document["partitions"]}


def leaders(sb: Sandbox) -> dict[tuple[str, int], int]:
    return {("t", p): sb.partition_state("t", p).leader for p in range(3)}


@pytest.mark.parametrize("tool", TOOLS)
def test_success_answered_without_electing_is_unconfirmed_with_both_facts(sb: Sandbox, tool: str) -> None:
    before = leaders(sb)
    sb.answer_next_election_without_electing()
    code, document, _ = run(tool, sb)
    assert leaders(sb) == before  # nothing was elected
    assert code == 3 and document["summary"]["unconfirmed"] == 3
    for tp, row in rows(document).items():
        assert (row["outcome"], row["error_code"]) == ("unconfirmed", kafka_errors.NONE)  # what the controller said
        assert row["leader_before"] == row["leader_after"] == before[tp]  # what was read
        assert "answered that the election succeeded" in row["error"] and f"broker {before[tp]}" in row["error"]


def test_unconfirmed_partitions_are_in_none_of_kafkas_lines(sb: Sandbox) -> None:
    sb.answer_next_election_without_electing()
    code, out, err = run("drop-in", sb, output="text")
    assert (code, out) == (3, "")
    assert err.splitlines() == [f"Unconfirmed leader election (PREFERRED) for partition: t-{p}: The controller "
                                f"answered that the election succeeded, but the leader read back is broker "
                                f"{1 + (p + 1) % 3}, not the preferred replica (broker {1 + p % 3})" for p in range(3)]


@pytest.mark.parametrize("tool", TOOLS)
def test_partitions_applied_but_left_out_of_the_answer_are_elected_not_failed(sb: Sandbox, tool: str) -> None:
    sb.leave_out_of_next_election_answer([("t", 1)])
    code, document, _ = run(tool, sb)
    assert code == 0 and document["summary"]["elected"] == 3
    assert rows(document)[("t", 1)]["leader_after"] == sb.partition_state("t", 1).leader == 2


@pytest.mark.parametrize("tool", TOOLS)
def test_a_lagging_metadata_read_is_read_again_until_it_shows_the_election(sb: Sandbox, tool: str) -> None:
    sb.lag_metadata_after_next_election(reads=2)
    code, document, _ = run(tool, sb, timeout="30")  # the read-back may wait 10 s: the third read on any machine
    assert code == 0 and document["summary"]["elected"] == 3
    for (topic, p), row in rows(document).items():
        assert row["leader_after"] == sb.partition_state(topic, p).leader == 1 + p % 3  # not the stale one


def test_metadata_that_never_catches_up_is_unconfirmed(sb: Sandbox) -> None:
    sb.lag_metadata_after_next_election(reads=1000)
    code, document, _ = run("elect", sb)
    assert code == 3 and document["summary"]["unconfirmed"] == 3
    for (topic, p), row in rows(document).items():
        assert sb.partition_state(topic, p).leader == 1 + p % 3  # the controller did elect it
        assert row["leader_after"] == row["leader_before"]  # the stale read is shown as what it is


def test_partitions_of_a_topic_deleted_during_the_request_are_not_already_elected(sb: Sandbox) -> None:
    """An election of every partition: the controller leaves out what needs no election, and what it no
    longer knows. The read-back tells the two apart."""
    sb.create_topic("gone", assignment={0: [1, 2], 1: [2, 1]})  # led by their preferred replicas
    sb.hold_next(ELECT_LEADERS, lambda: sb.delete_topic("gone"))
    result = CliRunner().invoke(drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                                          "--all-topic-partitions", "--output", "json", "--timeout", "1"])
    document = json.loads(result.stdout)
    jsonschema.validate(document, REPORT_SCHEMA)
    got = rows(document)
    assert [got[("gone", p)]["outcome"] for p in range(2)] == ["failed", "failed"]
    assert {got[("gone", p)]["error_code"] for p in range(2)} == {kafka_errors.UNKNOWN_TOPIC_OR_PARTITION}
    assert [got[("t", p)]["outcome"] for p in range(3)] == ["elected"] * 3
    assert result.exit_code == 1


def test_a_one_partition_preferred_election_takes_four_requests_on_one_connection() -> None:
    """ApiVersions, one Metadata read, ElectLeaders to the bootstrap broker (KRaft: any broker forwards it
    to the controller), one Metadata read of the topic elected: Kafka's own tool makes 4 over 2 connections."""
    with Sandbox(brokers=3) as sb:
        sb.create_topic("one", assignment={0: [1, 2, 3]})
        sb.set_leader("one", 0, 2)
        result = CliRunner().invoke(drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type",
                                              "preferred", "--topic", "one", "--partition", "0", "--output", "text"])
        assert (result.exit_code, result.stdout) == (0, "Successfully completed leader election (PREFERRED) for "
                                                        "partitions one-0\n")
        assert [r.api_key for r in sb.request_log] == [API_VERSIONS, METADATA, ELECT_LEADERS, METADATA]
        assert len({r.broker_id for r in sb.request_log}) == 1
