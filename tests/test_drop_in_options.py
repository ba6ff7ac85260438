"""The drop-in's quick parse answers only what click would answer, and exactly as click would."""

from __future__ import annotations

import click
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from leader_election_cli.cli.drop_in_command import command
from leader_election_cli.cli.drop_in_options import COMPLETE_VAR, OPTIONS, PROG_NAME, quick_parse

NAMES = [option.name for option in OPTIONS] + ["--no-color", "--help", "-h", "--version", "--", "-", "--topi",
                                                "--bootstrap-servers", "--Topic"]
VALUES = ["preferred", "unclean", "t", "0", "-1", "", "json", "text", "table", "auto", "JSON", "x=y", "-h",
          "--topic", "--", "127.0.0.1:9092", "5", "nan"]
WORDS = st.one_of(st.sampled_from(NAMES), st.sampled_from(VALUES),
                  st.builds(lambda n, v: f"{n}={v}", st.sampled_from(NAMES), st.sampled_from(VALUES)))


def click_options(argv: list[str]) -> dict:
    with command.make_context(PROG_NAME, list(argv)) as ctx:
        return ctx.params


@settings(max_examples=600, deadline=None)
@given(st.lists(WORDS, max_size=8))
def test_a_quick_parse_equals_clicks(argv: list[str]) -> None:
    quick = quick_parse(argv, {})
    if quick is not None:  # click must accept this command line, with the same options
        assert quick == click_options(argv)


@pytest.mark.parametrize("argv", [
    ["--bootstrap-server", "h:9092", "--election-type", "preferred", "--all-topic-partitions"],
    ["--bootstrap-server=h:9092,h2:9092", "--election-type=unclean", "--topic", "t", "--partition", "0",
     "--command-config", "admin.properties", "--output", "json", "--no-color", "--dry-run"],
    ["--zookeeper", "z:2181/kafka", "--election-type", "preferred", "--path-to-json-file", "f.json", "--no-wait"],
    ["--bootstrap-server", "h:9092", "--admin.config", "a.properties", "--election-type", "preferred",
     "--topic", "t", "--topic", "u", "--partition", "1", "--debug", "--color"],
])
def test_plain_kafka_command_lines_need_no_click(argv: list[str]) -> None:
    assert quick_parse(argv, {}) == click_options(argv)


@pytest.mark.parametrize("argv", [
    [],  # click prints the help
    ["--help"], ["--version"],
    ["--bootstrap-server", "h:9092", "--election-type", "preferred", "--all-topic-partitions", "--timeout", "5"],
    ["--bootstrap-server", "h:9092", "--batch-size", "0"],  # click checks numbers, with its messages
    ["--bootstrap-server", "h:9092", "--output", "yaml"],
    ["--bootstrap-server"],  # a value missing
    ["--dry-run=yes"], ["--", "--topic"], ["extra"], ["--bootstrap"],
])
def test_everything_else_is_left_to_click(argv: list[str]) -> None:
    assert quick_parse(argv, {}) is None


def test_completion_is_left_to_click() -> None:
    argv = ["--bootstrap-server", "h:9092", "--topic", "t"]
    assert quick_parse(argv, {COMPLETE_VAR: "bash_complete"}) is None
    assert f"_{PROG_NAME}_COMPLETE".replace("-", "_").upper() == COMPLETE_VAR


def test_the_table_is_the_click_commands() -> None:
    declared = [param for param in command.params if isinstance(param, click.Option) and param.name != "version"]
    assert [param.name for param in declared] == [option.dest for option in OPTIONS]
