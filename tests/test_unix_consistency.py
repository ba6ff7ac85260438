"""The same input error has the same exit code in every command; options that mean nothing for a command
are not offered by it."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest
from commands import run_command

from leader_election_cli.cli.toolkit import cli
from leader_election_cli.sandbox import Sandbox

ALTER_REASSIGNMENTS, ELECT_LEADERS = 45, 43


kl = partial(run_command, cli)


@pytest.fixture(scope="module")
def sb(module_sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    return module_sandbox_factory(topics={"t": {0: [1, 2, 3], 1: [2, 3, 1]}})


@pytest.mark.parametrize("command", [
    ["elect", "--topic", "nosuch"],
    ["elect", "-p", "t:7"],
    ["plan", "--topic", "nosuch"],
    ["prefer", "--topic", "nosuch", "--partition", "0", "--leader", "1"],
    ["prefer", "--topic", "t", "--partition", "7", "--leader", "1"],
    ["demote", "--broker", "1", "--topic-regex", "nosuch.*"],
], ids=lambda c: " ".join(c))
def test_an_unknown_topic_or_partition_is_exit_2_and_nothing_is_sent(sb: Sandbox, command: list[str]) -> None:
    before = (sb.request_count(ALTER_REASSIGNMENTS), sb.request_count(ELECT_LEADERS))
    code, out, err = kl(*command, "--bootstrap-server", sb.bootstrap_servers, "--output", "json")
    assert code == 2, (out, err)
    assert ("nosuch" in err or "t-7" in err) and "nothing was sent" in err
    assert (sb.request_count(ALTER_REASSIGNMENTS), sb.request_count(ELECT_LEADERS)) == before


@pytest.mark.parametrize("option", ["--dry-run", "--yes", "--batch-size=5", "--batch-interval=1"])
def test_plan_offers_no_option_about_sending(option: str) -> None:
    code, _, err = kl("plan", "--bootstrap-server", "127.0.0.1:1", "--all-topic-partitions", option)
    assert code == 2 and err.startswith(f"No such option '{option.split('=')[0]}'"), err
    code, out, _ = kl("plan", "--help")
    assert option.split("=")[0] not in out
    code, out, _ = kl("elect", "--help")
    assert option.split("=")[0] in out
