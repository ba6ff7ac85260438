"""`kafka-leaders elect` / `plan` selection: each form against the sandbox, and `resolve`'s invariants."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from commands import invoke
from hypothesis import given
from hypothesis import strategies as st

from leader_election_cli.cli.elect_command import elect, plan
from leader_election_cli.errors import InputError
from leader_election_cli.model import ClusterState, PartitionState, TopicPartition
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.selection.topics import Selection, resolve

ELECT_LEADERS = 43
TOPICS = {"orders": 3, "orders.eu": 2, "orders-dlq": 1, "payments": 2, "__consumer_offsets": 2}


@pytest.fixture(scope="module")
def sb(module_sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    sandbox = module_sandbox_factory(3)
    for name, count in TOPICS.items():
        sandbox.create_topic(name, partitions=count, replication_factor=3)
    return sandbox


def planned(sb: Sandbox, *args: str) -> list[str]:
    """The partitions `plan` selects, as topic-partition names in report order."""
    code, out, err = invoke(plan, sb, "--output", "json", *args)
    assert code == 0, err
    document = json.loads(out)
    predictions = {"would_elect", "not_needed", "would_fail"}
    assert document["dry_run"] and {p["outcome"] for p in document["partitions"]} <= predictions
    return [f"{p['topic']}-{p['partition']}" for p in document["partitions"]]


def refused(sb: Sandbox, *args: str) -> str:
    """The one-line error of a selection that must fail before any election is sent."""
    before = sb.request_count(ELECT_LEADERS)
    code, out, err = invoke(elect, sb, "--output", "json", *args)
    assert (code, out, sb.request_count(ELECT_LEADERS)) == (2, "", before)
    return err.splitlines()[0]


def test_topic_takes_every_partition_and_repeats(sb: Sandbox) -> None:
    assert planned(sb, "--topic", "payments", "--topic", "orders", "--topic", "payments") == [
        "orders-0", "orders-1", "orders-2", "payments-0", "payments-1"]


def test_topic_regex_matches_whole_names_and_exclude_leaves_topics_out(sb: Sandbox) -> None:
    assert planned(sb, "--topic-regex", r"orders.*", "--exclude-topic-regex", r".*-dlq") == [
        "orders-0", "orders-1", "orders-2", "orders.eu-0", "orders.eu-1"]
    assert planned(sb, "--topic-regex", r"orders\..*") == ["orders.eu-0", "orders.eu-1"]
    assert refused(sb, "--topic-regex", "order") == \
        "The selection matches no partition: --topic-regex 'order' matches no topic"


def test_partition_specs(sb: Sandbox) -> None:
    assert planned(sb, "-p", "orders:2,0", "--partition", "payments:1", "-p", "orders:0") == [
        "orders-0", "orders-2", "payments-1"]


def test_election_file_and_the_other_forms_add_up(sb: Sandbox, tmp_path: Path) -> None:
    file = tmp_path / "election.json"
    file.write_text(json.dumps({"partitions": [{"topic": "orders.eu", "partition": 1},
                                               {"topic": "orders", "partition": 0}]}))
    assert planned(sb, "--path-to-json-file", str(file)) == ["orders-0", "orders.eu-1"]
    assert planned(sb, "--path-to-json-file", str(file), "--topic", "payments", "-p", "orders:1") == [
        "orders-0", "orders-1", "orders.eu-1", "payments-0", "payments-1"]


def test_all_topic_partitions_takes_internal_topics_only_when_asked(sb: Sandbox) -> None:
    every = planned(sb, "--all-topic-partitions")
    assert len(every) == sum(TOPICS.values()) - 2 and not any(p.startswith("__") for p in every)
    with_internal = planned(sb, "--all-topic-partitions", "--include-internal")
    assert sorted(with_internal) == sorted(every + ["__consumer_offsets-0", "__consumer_offsets-1"])
    assert planned(sb, "--all-topic-partitions", "--exclude-topic-regex", "orders.*") == ["payments-0", "payments-1"]


def test_internal_topic_named_explicitly_needs_include_internal(sb: Sandbox) -> None:
    assert refused(sb, "--topic", "__consumer_offsets") == \
        "Topic(s) __consumer_offsets are internal: add --include-internal to elect their leaders"
    assert refused(sb, "--topic-regex", "__.*") == \
        "The selection matches no partition: only internal topics match (add --include-internal)"
    assert planned(sb, "-p", "__consumer_offsets:1", "--include-internal") == ["__consumer_offsets-1"]


def test_unknown_names_are_errors_before_anything_is_sent(sb: Sandbox, tmp_path: Path) -> None:
    assert refused(sb, "--topic", "orders", "--topic", "nosuch") == "Unknown topic(s): nosuch: nothing was sent"
    assert refused(sb, "-p", "orders:1,7") == "Unknown partition(s): orders-7 (orders has 3): nothing was sent"
    file = tmp_path / "election.json"
    file.write_text(json.dumps({"partitions": [{"topic": "gone", "partition": 0}]}))
    assert refused(sb, "--path-to-json-file", str(file)) == "Unknown topic(s): gone: nothing was sent"


def test_empty_and_contradictory_selections_are_errors(sb: Sandbox, tmp_path: Path) -> None:
    assert refused(sb).startswith("No partitions selected: give --topic, --topic-regex, --partition")
    assert refused(sb, "--all-topic-partitions", "--topic", "orders").startswith(
        "Option --all-topic-partitions can't be used with --topic")
    assert refused(sb, "--topic", "orders", "--exclude-topic-regex", "ord.*") == \
        "The selection matches no partition: --exclude-topic-regex 'ord.*' leaves every selected topic out"
    empty = tmp_path / "empty.json"
    empty.write_text('{"partitions": []}')
    assert refused(sb, "--path-to-json-file", str(empty)) == \
        f"The selection matches no partition: the election file {empty} lists no partitions"
    assert refused(sb, "--topic-regex", "(").startswith("Invalid --topic-regex '(': missing ), unterminated subpattern")
    assert refused(sb, "--topic", "bad name").startswith("Invalid --topic 'bad name': Topic name is invalid")
    assert refused(sb, "-p", "orders").startswith("Invalid partition spec 'orders'")


def test_preferred_election_leaves_out_partitions_already_led_by_their_preferred_replica(
        sandbox_factory: Callable[..., Sandbox], mode: str) -> None:
    sb = sandbox_factory(3, mode, topics={"t": {0: [1, 2, 3], 1: [2, 3, 1], 2: [3, 1, 2]}})
    sb.set_leader("t", 1, 3)
    code, out, err = invoke(elect, sb, "--topic", "t", "--output", "text")
    assert (code, err) == (0, "2 partition(s) already led by their preferred replica: left out of the request.\n")
    assert out.splitlines() == ["Successfully completed leader election (PREFERRED) for partitions t-1",
                                "Valid replica already elected for partitions t-2, t-0"]
    assert [r.partitions for r in sb.request_log if r.api_key == ELECT_LEADERS] == [1]
    code, out, _ = invoke(elect, sb, "--topic", "t", "--output", "json")
    document = json.loads(out)
    assert (code, document["summary"]["already_elected"], sb.request_count(ELECT_LEADERS)) == (0, 3, 1)


# -- resolve, without a cluster --------------------------------------------------------------------

names = st.from_regex(r"(__)?[a-c]{1,3}", fullmatch=True)


@st.composite
def states_and_selections(draw: st.DrawFn) -> tuple[ClusterState, Selection]:
    sizes = draw(st.dictionaries(names, st.integers(1, 3), max_size=6))
    partitions = {TopicPartition(t, p): PartitionState(t, p, 1, (1,), (1,)) for t, n in sizes.items() for p in range(n)}
    state = ClusterState(brokers={1: ("h", 1)}, controller_id=1, partitions=partitions)
    existing = sorted(partitions)
    explicit = draw(st.lists(st.sampled_from(existing), unique=True)) if existing else []
    everything = draw(st.booleans())
    selection = Selection(
        topics=() if everything or not sizes else tuple(draw(st.lists(st.sampled_from(sorted(sizes)), unique=True))),
        topic_regex=None if everything else draw(st.none() | names.map(lambda n: re.compile(n[:2] + ".*"))),
        exclude_regex=draw(st.none() | names.map(re.compile)),
        partitions=() if everything else tuple(explicit),
        all_partitions=everything,
        include_internal=draw(st.booleans()))
    return state, selection


@given(states_and_selections())
def test_resolve_takes_exactly_what_the_flags_say(case: tuple[ClusterState, Selection]) -> None:
    state, s = case

    def wanted(tp: TopicPartition) -> bool:
        internal = tp.topic.startswith("__")
        named = tp in s.partitions or tp.topic in s.topics
        implicit = (s.all_partitions or bool(s.topic_regex and s.topic_regex.fullmatch(tp.topic))) and \
            (s.include_internal or not internal)
        return (named or implicit) and not (s.exclude_regex and s.exclude_regex.fullmatch(tp.topic))

    internal_named = any(t.startswith("__") for t in {*s.topics, *(tp.topic for tp in s.partitions)})
    expected = sorted(tp for tp in state.partitions if wanted(tp))
    try:
        assert resolve(s, state) == expected
        assert s.include_internal or not internal_named
    except InputError as exc:
        assert (internal_named and not s.include_internal) or not expected, exc.message
