"""The drop-in's quick parse answers only what click would answer, and exactly as click would."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from leader_election_cli.cli.drop_in_command import command
from leader_election_cli.cli.drop_in_options import COMPLETE_VAR, OPTIONS, PROG_NAME, kafka_words, quick_parse
from leader_election_cli.errors import InputError

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
    ["--dry-run=yes"], ["--bootstrap"], ["-h"],
])
def test_everything_else_is_left_to_click(argv: list[str]) -> None:
    assert quick_parse(argv, {}) is None


@pytest.mark.parametrize("argv", [["--", "--topic"], ["extra"], ["-"], ["--all-topic-partitions", "true"]])
def test_the_words_kafka_ignores_are_ignored_by_both(argv: list[str]) -> None:
    quick = quick_parse(argv, {})
    assert quick is not None and quick == click_options(argv)


# What Kafka 4.0.0's parser (jopt-simple 5.0.4, `new OptionParser(false)` in CommandDefaultOptions) makes of
# each command line: the options it reads, or the message it fails with (got by running that parser).
@pytest.mark.parametrize("argv, expected", [
    (["--bogus"], "bogus is not a recognized option"),
    (["--bogus=1"], "bogus is not a recognized option"),
    (["--help", "--bogus"], "bogus is not a recognized option"),  # parsed before the help is looked at
    (["--bootstrap", "h:9092"], "bootstrap is not a recognized option"),  # no abbreviations
    (["--Topic", "t"], "Topic is not a recognized option"),
    (["-x"], "x is not a recognized option"),
    (["-bogus"], "b is not a recognized option"),  # a short-option cluster: its first letter
    (["---topic", "t"], "-topic is not a recognized option"),
    (["--topic", "t", "--partition"], "Option partition requires an argument"),
    (["--election-type"], "Option election-type requires an argument"),
    (["-topic=t", "-partition", "0"], ["--topic=t", "--partition=0"]),  # one hyphen: a long option
    (["--topic", "--partition", "0"], ["--topic=--partition"]),  # a value is the next word, whatever it is
    (["--topic=", "t"], ["--topic="]),  # `=` and nothing: an empty value, the next word ignored
    (["--topic=a=b"], ["--topic=a=b"]),
    (["--all-topic-partitions=false", "x", "-", "--", "--bogus"], ["--all-topic-partitions"]),
    (["--help=x", "-version"], ["--help", "--version"]),
    (["--dry-run=yes", "-h"], ["--dry-run=yes", "-h"]),  # our own flags take no value: click refuses one
])
def test_the_words_are_read_as_kafkas_parser_reads_them(argv: list[str], expected: str | list[str]) -> None:
    if isinstance(expected, str):
        with pytest.raises(InputError) as error:
            kafka_words(argv)
        assert error.value.message == expected
        assert click_error(argv) == expected
    else:
        assert kafka_words(argv) == expected == kafka_words(expected)


def click_error(argv: list[str]) -> str:
    with pytest.raises(click.UsageError) as error:
        click_options(argv)
    return error.value.format_message()


def test_an_unknown_option_suggests_the_right_one() -> None:
    with pytest.raises(InputError) as error:
        kafka_words(["--bootstrap", "h:9092"])
    assert error.value.hint == "Did you mean --bootstrap-server? (options are never abbreviated)"


def test_completion_is_left_to_click() -> None:
    argv = ["--bootstrap-server", "h:9092", "--topic", "t"]
    assert quick_parse(argv, {COMPLETE_VAR: "bash_complete"}) is None
    assert f"_{PROG_NAME}_COMPLETE".replace("-", "_").upper() == COMPLETE_VAR


def test_the_table_is_the_click_commands() -> None:
    declared = [param for param in command.params if isinstance(param, click.Option) and param.name != "version"]
    assert [param.name for param in declared] == [option.dest for option in OPTIONS]


def test_no_arguments_start_with_kafkas_usage_line() -> None:
    """CommandLineUtils.printUsageAndExit: the tool's description first, on stderr (then our help)."""
    result = CliRunner().invoke(command, [], prog_name=PROG_NAME)
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.splitlines()[0] == ("This tool attempts to elect a new leader for a set of topic partitions. "
                                             "The type of elections supported are preferred replicas and unclean "
                                             "replicas.")
    assert "Usage: kafka-leader-election [OPTIONS]" in result.stderr
