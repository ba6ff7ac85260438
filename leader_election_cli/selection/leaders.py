"""`prefer`'s input: which broker should lead which partition, from --topic/--partition/--leader or a file."""

from __future__ import annotations

from leader_election_cli.errors import InputError, shown
from leader_election_cli.model import TopicPartition
from leader_election_cli.selection.files import load_prefer_file
from leader_election_cli.selection.names import topic_problem


def prefer_targets(topic: str | None, partition: int | None, leader: int | None,
                   path: str | None) -> tuple[tuple[TopicPartition, int], ...]:
    """Either one partition and its new leader, or a prefer file; never both, never part of the three."""
    single = (topic, partition, leader)
    if path is not None:
        if any(v is not None for v in single):
            raise InputError("Give either --path-to-json-file or --topic/--partition/--leader, not both",
                             hint="Put every partition in the file, or name one with the three options.")
        return load_prefer_file(path)
    missing = [name for name, value in zip(("--topic", "--partition", "--leader"), single, strict=True)
               if value is None]
    if missing:
        raise InputError(f"Missing required option(s): {', '.join(missing)}",
                         hint="Name the partition and its new leader with --topic, --partition and --leader, "
                              "or give --path-to-json-file.")
    assert topic is not None and partition is not None and leader is not None
    problem = topic_problem(topic)
    if problem:
        raise InputError(f"Invalid --topic '{shown(topic)}': {problem}",
                         hint="Topic names use only ASCII letters, digits, '.', '_' and '-'.")
    return ((TopicPartition(topic, partition), leader),)
