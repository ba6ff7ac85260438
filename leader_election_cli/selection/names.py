"""Topic names and partition ids as Kafka checks them, and the toolkit's `topic:p,p` partition lists."""

from __future__ import annotations

import re
from collections.abc import Iterable

from leader_election_cli.errors import InputError, shown
from leader_election_cli.model import TopicPartition

MAX_PARTITION = 2**31 - 1  # partition ids are non-negative Java ints
MAX_TOPIC_LENGTH = 249  # org.apache.kafka.common.internals.Topic.MAX_NAME_LENGTH
_LEGAL_TOPIC = re.compile(r"[a-zA-Z0-9._-]+")


def topic_problem(name: str) -> str | None:
    """Kafka's InvalidTopicException message for an illegal topic name, or None when it is legal."""
    if name == "":
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name.encode("utf-16-le", "surrogatepass")) // 2 > MAX_TOPIC_LENGTH:  # Java counts UTF-16 units
        reason = f"the length of '{shown(name)}' is longer than the max allowed length {MAX_TOPIC_LENGTH}"
    elif not _LEGAL_TOPIC.fullmatch(name):
        reason = f"'{shown(name)}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return None
    return f"Topic name is invalid: {reason}"


def parse_partition_spec(spec: str) -> tuple[TopicPartition, ...]:
    """`T:P` or `T:P1,P2,...` (split on the last colon) as partitions, in order, without repeats."""
    topic, colon, numbers = spec.rpartition(":")
    if not colon or not numbers:
        raise InputError(f"Invalid partition spec '{shown(spec)}': expected TOPIC:PARTITION or TOPIC:P1,P2,...",
                         hint="For example orders:0 or orders:0,1,2.")
    problem = topic_problem(topic)
    if problem:
        raise InputError(f"Invalid partition spec '{shown(spec)}': {problem}",
                         hint="Topic names use only ASCII letters, digits, '.', '_' and '-'.")
    ids = numbers.split(",")
    for text in ids:
        if not re.fullmatch(r"[0-9]{1,10}", text) or int(text) > MAX_PARTITION:
            raise InputError(f"Invalid partition spec '{shown(spec)}': '{shown(text)}' is not a partition id",
                             hint=f"Partition ids are whole numbers from 0 to {MAX_PARTITION}.")
    return tuple(dict.fromkeys(TopicPartition(topic, int(text)) for text in ids))


def parse_partition_specs(specs: Iterable[str]) -> tuple[TopicPartition, ...]:
    """Several specs as one ordered selection; a partition named twice is kept once."""
    return tuple(dict.fromkeys(tp for spec in specs for tp in parse_partition_spec(spec)))


# -- the drop-in's flags ------------------------------------------------------------------------------
