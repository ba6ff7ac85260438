"""The toolkit's selection: topics, regexes, `topic:partition` lists and election files.

The flags are checked before anything is sent (`parse_selection`); the result is then resolved
against one metadata read (`resolve`), where unknown names and an empty selection are errors.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from leader_election_cli.errors import LISTED, InputError, listed, shown
from leader_election_cli.model import ClusterState, TopicPartition
from leader_election_cli.selection.files import load_election_file
from leader_election_cli.selection.names import parse_partition_specs, topic_problem


@dataclass(frozen=True)
class Selection:
    """The selection flags, checked without the cluster."""

    topics: tuple[str, ...] = ()
    topic_regex: re.Pattern[str] | None = None
    exclude_regex: re.Pattern[str] | None = None
    partitions: tuple[TopicPartition, ...] = ()  # --partition and the election file, in order
    all_partitions: bool = False
    include_internal: bool = False
    file: str | None = None


def parse_selection(topics: tuple[str, ...] = (), topic_regex: str | None = None,
                    exclude_topic_regex: str | None = None, partitions: tuple[str, ...] = (),
                    path_to_json_file: str | None = None, all_topic_partitions: bool = False,
                    include_internal: bool = False) -> Selection:
    """Check the selection flags (names, patterns, specs, the file) before anything is sent."""
    sources = bool(topics) or topic_regex is not None or bool(partitions) or path_to_json_file is not None
    if not sources and not all_topic_partitions:
        raise InputError("No partitions selected: give --topic, --topic-regex, --partition, --path-to-json-file "
                         "or --all-topic-partitions", hint="For example --topic orders, or -p orders:0,1.")
    if sources and all_topic_partitions:
        raise InputError("Option --all-topic-partitions can't be used with --topic, --topic-regex, --partition "
                         "or --path-to-json-file", hint="It already takes every topic; narrow it with "
                                                        "--exclude-topic-regex, or drop it.")
    for topic in topics:
        problem = topic_problem(topic)
        if problem:
            raise InputError(f"Invalid --topic '{shown(topic)}': {problem}",
                             hint="Topic names use only ASCII letters, digits, '.', '_' and '-'.")
    explicit = parse_partition_specs(partitions)
    if path_to_json_file is not None:
        explicit = tuple(dict.fromkeys(explicit + load_election_file(path_to_json_file)))
    return Selection(tuple(dict.fromkeys(topics)), _pattern("--topic-regex", topic_regex),
                     _pattern("--exclude-topic-regex", exclude_topic_regex), explicit, all_topic_partitions,
                     include_internal, path_to_json_file)


def _pattern(option: str, text: str | None) -> re.Pattern[str] | None:
    if text is None:
        return None
    try:
        return re.compile(text)
    except (re.error, OverflowError, RecursionError) as exc:  # a{4294967296}: "the repetition number is too large"
        raise InputError(f"Invalid {option} '{shown(text)}': {exc}",
                         hint="Use a Python regular expression matching whole topic names, "
                              "e.g. 'orders\\..*'.") from None


def is_internal(topic: str, state: ClusterState) -> bool:
    """Kafka's internal topics (as Metadata says), and by convention any name starting with "__"."""
    return topic in state.internal_topics or topic.startswith("__")


def resolve(selection: Selection, state: ClusterState) -> list[TopicPartition]:
    """The selected partitions of `state`, sorted; unknown names and an empty result are errors."""
    s = selection
    sizes = Counter(tp.topic for tp in state.partitions)
    named = dict.fromkeys([*s.topics, *(tp.topic for tp in s.partitions)])
    _check_known(named, s.partitions, state, sizes)
    internal = [t for t in named if is_internal(t, state)]
    if internal and not s.include_internal:
        raise InputError(f"Topic(s) {listed(internal)} are internal: add --include-internal to elect their leaders",
                         hint="Internal topics are Kafka's own (consumer offsets, transactions).")
    pattern = s.topic_regex
    matched = [t for t in sizes if s.all_partitions or (pattern is not None and pattern.fullmatch(t))]
    topics = set(s.topics).union(t for t in matched if s.include_internal or not is_internal(t, state))
    explicit = set(s.partitions)
    chosen = [tp for tp in state.partitions if tp.topic in topics or tp in explicit]
    selected_any, exclude = bool(chosen), s.exclude_regex
    if exclude is not None:
        kept = {t for t in sizes if not exclude.fullmatch(t)}
        chosen = [tp for tp in chosen if tp.topic in kept]
    if not chosen:
        if selected_any and exclude is not None:
            why = f"--exclude-topic-regex '{shown(exclude.pattern)}' leaves every selected topic out"
        elif matched:
            why = "only internal topics match (add --include-internal)"
        elif pattern is not None:
            why = f"--topic-regex '{shown(pattern.pattern)}' matches no topic"
        else:
            why = "the cluster has no topics" if s.all_partitions else \
                f"the election file {shown(s.file or '')} lists no partitions"
        raise InputError(f"The selection matches no partition: {why}",
                         hint="Check the names and patterns against the cluster's topics (kafka-topics --list).")
    return sorted(chosen)


def check_known(partitions: Iterable[TopicPartition], state: ClusterState) -> None:
    """Every partition named exists: an unknown topic or partition is an input error (exit 2), as in `elect`,
    before anything is sent."""
    partitions = tuple(partitions)
    sizes = Counter(tp.topic for tp in state.partitions)
    _check_known(dict.fromkeys(tp.topic for tp in partitions), partitions, state, sizes)


def _check_known(named: dict[str, None], partitions: tuple[TopicPartition, ...], state: ClusterState,
                 sizes: Counter[str]) -> None:
    """Every named topic and partition exists; one error names all that do not, topics and partitions alike."""
    unknown = [t for t in named if t not in sizes]
    missing = [tp for tp in partitions if tp.topic in sizes and tp not in state.partitions]
    problems = [f"Unknown topic(s): {listed(unknown)}"] if unknown else []
    if missing:
        counts = ", ".join(f"{t} has {sizes[t]}" for t in dict.fromkeys(tp.topic for tp in missing[:LISTED]))
        problems.append(f"{'unknown' if problems else 'Unknown'} partition(s): {listed([str(tp) for tp in missing])} "
                        f"({counts})")
    if problems:
        raise InputError(f"{'; '.join(problems)}: nothing was sent",
                         hint="Remove them, or check that --bootstrap-server names the cluster they are on "
                              "(kafka-topics --describe lists its topics; partitions are numbered from 0).")


def topic_matcher(regex: str | None, option: str = "--topic-regex") -> Callable[[str], bool] | None:
    """A whole-name matcher for a topic regex option (as Kafka's tools match topic regexes), or None."""
    pattern = _pattern(option, regex)
    if pattern is None:
        return None
    return lambda topic: pattern.fullmatch(topic) is not None
