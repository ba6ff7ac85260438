"""Kafka's validation messages, byte for byte, as the first stderr line of the drop-in; our detail and hint
on the lines after it. The texts are Kafka's `LeaderElectionCommand`'s (4.0; /work/shared/KAFKA_BEHAVIOUR.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from leader_election_cli.cli.drop_in_command import command
from leader_election_cli.cli.toolkit import cli as toolkit

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
    assert result.stderr.splitlines()[:2] == [f"Unable to read file {missing}", "No such file or directory"]
