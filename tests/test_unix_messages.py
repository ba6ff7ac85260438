"""Kafka's validation messages, byte for byte, as the first stderr line of the drop-in; our detail and hint
on the lines after it. The texts are Kafka's `LeaderElectionCommand`'s (4.0; /work/shared/KAFKA_BEHAVIOUR.md)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from click.testing import CliRunner

from leader_election_cli.cli.drop_in_command import command
from leader_election_cli.cli.toolkit import cli as toolkit
from leader_election_cli.config.properties import java_io_message

NOWHERE = "127.0.0.1:1"  # validation comes first: nothing is ever sent


def files(tmp: Path) -> dict[str, str]:
    contents = {"empty.json": "  \n", "no-partitions.json": '{"partition": []}',
                "duplicates.json": '{"partitions": [{"topic": "t1", "partition": 0}, {"topic": "t1", "partition": 0}]}'}
    for name, text in contents.items():
        (tmp / name).write_text(text)
    return {name: str(tmp / name) for name in contents}


# (arguments after the bootstrap server, Kafka's line, whether a detail line follows it)
CASES = [
    ([], "Missing required option(s): election-type", False),
    (["--election-type", "preferred"],
     "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file", False),
    (["--election-type", "preferred", "--topic", "t1"], "Missing required option(s): partition", False),
    (["--election-type", "preferred", "--partition", "0"],
     "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file", False),
    (["--election-type", "preferred", "--all-topic-partitions", "--admin.config", "a", "--command-config", "b"],
     'Option "[admin.config]" can\'t be used with option "[command-config]"', False),
    (["--election-type", "bogus", "--all-topic-partitions"], "Cannot parse argument 'bogus' of option election-type",
     False),
    (["--election-type", "preferred", "--topic", "t1", "--partition", "abc"],
     "Cannot parse argument 'abc' of option partition", False),
    (["--election-type", "preferred", "--path-to-json-file", "{empty.json}"], "Replica election data is empty", True),
    (["--election-type", "preferred", "--path-to-json-file", "{no-partitions.json}"],
     'Replica election data is missing "partitions" field', True),
    (["--election-type", "preferred", "--path-to-json-file", "{duplicates.json}"],
     "Replica election data contains duplicate partitions: [t1-0]", True),
]


@pytest.mark.parametrize(("args", "kafka_line", "detailed"), CASES, ids=[c[1][:40] for c in CASES])
def test_kafkas_line_first_then_detail_and_hint(tmp_path: Path, args: list[str], kafka_line: str,
                                                detailed: bool) -> None:
    paths = files(tmp_path)
    args = [paths[a[1:-1]] if a.startswith("{") else a for a in args]
    result = CliRunner().invoke(command, ["--bootstrap-server", NOWHERE, *args], catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (2, "")
    lines = result.stderr.splitlines()
    assert lines[0] == kafka_line
    assert lines[-1].startswith("Hint: ")
    assert len(lines) == (3 if detailed else 2)
    if detailed:
        assert str(tmp_path) in lines[1]  # the detail says which file, and where in it
    if "duplicate" in kafka_line:
        assert lines[1].endswith("duplicates.json: $.partitions[1] repeats $.partitions[0]")


def test_a_missing_election_file_is_kafkas_line_then_the_reason(tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.json")
    result = CliRunner().invoke(command, ["--bootstrap-server", NOWHERE, "--election-type", "preferred",
                                          "--path-to-json-file", missing], catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (2, "")
    assert result.stderr.splitlines() == [f"java.io.IOException: Unable to read file {missing}",
                                          "No such file or directory", "Hint: Check the --path-to-json-file path."]
    # Kafka's Java text is the drop-in's alone: the toolkit says it in its own words
    result = CliRunner().invoke(toolkit, ["elect", "--bootstrap-server", NOWHERE, "--path-to-json-file", missing])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [f"Unable to read file {missing}: No such file or directory",
                                          "Hint: Check the --path-to-json-file path."]  # one line (issue 34)


@pytest.mark.parametrize("option", ["--command-config", "--admin.config"])
def test_an_unreadable_config_file_is_javas_message_then_ours(tmp_path: Path, option: str) -> None:
    """Kafka's Utils.loadProps opens the file with Files.newInputStream: a missing file's exception says only
    its path (as Paths.get prints it), a directory's read says "Is a directory"; that is Kafka's first line."""
    for given, kafkas, reason in ((f"{tmp_path}//missing.properties", f"{tmp_path}/missing.properties",
                                   "No such file or directory"), (f"{tmp_path}/", "Is a directory", "Is a directory")):
        result = CliRunner().invoke(command, ["--bootstrap-server", NOWHERE, "--election-type", "preferred",
                                              "--all-topic-partitions", option, given], catch_exceptions=False)
        assert result.exit_code == 2
        assert result.stderr.splitlines() == [kafkas, f"Unable to read the config file {given}: {reason}",
                                              "Hint: Check the --command-config (or --admin.config) path."]
    # the toolkit says it in its own words only
    result = CliRunner().invoke(toolkit, ["elect", "--bootstrap-server", NOWHERE, "--all-topic-partitions",
                                          "--command-config", f"{tmp_path}/missing.properties"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == f"Unable to read the config file {tmp_path}/missing.properties: " \
                                            "No such file or directory"


def test_javas_message_for_each_refusal_names_the_path_as_java_prints_it() -> None:
    message = java_io_message("/etc//kafka/client.properties/")
    assert message(errno.ENOENT) == message(errno.EACCES) == "/etc/kafka/client.properties"
    assert message(errno.EISDIR) == "Is a directory"
    assert message(errno.ENOTDIR) == "/etc/kafka/client.properties: Not a directory"
    assert message(errno.ELOOP).endswith(": Too many levels of symbolic links or unable to access attributes of "
                                         "symbolic link")
    assert java_io_message("/")(errno.ENOENT) == "/"
