"""The drop-in's flag checks: Kafka's order, Kafka's messages, our --zookeeper additions."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from leader_election_cli.errors import ExitCode, InputError
from leader_election_cli.model import ElectionType, TopicPartition
from leader_election_cli.selection.drop_in import (
    ADMIN_CONFIG_DEPRECATED,
    ZOOKEEPER_DEPRECATED,
    DropInOptions,
    ElectionRequest,
    validate_drop_in,
)

ONE_AND_ONLY = "One and only one of the following options is required: topic, all-topic-partitions, path-to-json-file"
GOOD = DropInOptions(bootstrap_server="localhost:9092", election_type="preferred", all_topic_partitions=True)


def error_of(options: DropInOptions) -> InputError:
    with pytest.raises(InputError) as caught:
        validate_drop_in(options)
    assert caught.value.exit_code is ExitCode.USAGE
    assert caught.value.hint
    return caught.value


@pytest.mark.parametrize("options, message", [
    (DropInOptions(all_topic_partitions=True), "Missing required option(s): bootstrap-server, election-type"),
    (GOOD._replace(bootstrap_server=None), "Missing required option(s): bootstrap-server"),
    (GOOD._replace(election_type=None), "Missing required option(s): election-type"),
    (GOOD._replace(all_topic_partitions=False), ONE_AND_ONLY),
    (GOOD._replace(topic="t", partition="0"), ONE_AND_ONLY),
    (GOOD._replace(path_to_json_file="f.json"), ONE_AND_ONLY),
    (GOOD._replace(all_topic_partitions=False, topic="t"), "Missing required option(s): partition"),
    (GOOD._replace(partition="0"), "Option partition is only allowed if topic is used"),
    (GOOD._replace(all_topic_partitions=False, partition="0"), ONE_AND_ONLY),
    (GOOD._replace(admin_config="a", command_config="c"),
     'Option "[admin.config]" can\'t be used with option "[command-config]"'),
    (GOOD._replace(election_type="bogus"), "Cannot parse argument 'bogus' of option election-type"),
    (GOOD._replace(election_type=""), "Cannot parse argument '' of option election-type"),
    (GOOD._replace(election_type=" preferred"), "Cannot parse argument ' preferred' of option election-type"),
    (GOOD._replace(all_topic_partitions=False, topic="t", partition="abc"),
     "Cannot parse argument 'abc' of option partition"),
    (GOOD._replace(all_topic_partitions=False, topic="t", partition="-2147483649"),
     "Cannot parse argument '-2147483649' of option partition"),
    (GOOD._replace(repeated={"election-type": ("preferred", "preferred"), "bootstrap-server": ("b", "b")}),
     "Found multiple arguments for option election-type, but you asked for only one"),
    (GOOD._replace(repeated={"election-type": ("bogus", "preferred")}),  # valueOf converts every value first
     "Cannot parse argument 'bogus' of option election-type"),
    (GOOD._replace(repeated={"command-config": ("c", "c"), "bootstrap-server": ("b", "b")}),
     "Found multiple arguments for option command-config, but you asked for only one"),
    (GOOD._replace(all_topic_partitions=False, topic="t", partition="0", repeated={"partition": ("0", "0"),
                                                                                   "topic": ("t", "t")}),
     "Found multiple arguments for option topic, but you asked for only one"),
    (GOOD._replace(all_topic_partitions=False, topic="t", partition="0", repeated={"partition": ("x", "0")}),
     "Cannot parse argument 'x' of option partition"),
    (GOOD._replace(all_topic_partitions=False, topic="t", partition="0", repeated={"partition": ("1", "0")}),
     "Found multiple arguments for option partition, but you asked for only one"),
    (GOOD._replace(repeated={"bootstrap-server": ("b", "b")}, all_topic_partitions=False), ONE_AND_ONLY),
    (GOOD._replace(all_topic_partitions=False, topic="t", partition="2147483648"),
     "Cannot parse argument '2147483648' of option partition"),
    (GOOD._replace(all_topic_partitions=False, topic="t", partition=" 1"),
     "Cannot parse argument ' 1' of option partition"),
    (GOOD._replace(all_topic_partitions=False, topic="t", partition="1_0"),
     "Cannot parse argument '1_0' of option partition"),
    (GOOD._replace(zookeeper="zk:2181"), "Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided"),
    (GOOD._replace(bootstrap_server=None, zookeeper="zk:2181", command_config="c"),
     'Option "[zookeeper]" can\'t be used with option "[command-config]"'),
    (GOOD._replace(bootstrap_server=None, zookeeper="zk:2181", admin_config="c"),
     'Option "[zookeeper]" can\'t be used with option "[admin.config]"'),
    (GOOD._replace(bootstrap_server=None, zookeeper="zk:2181", election_type="unclean"),
     "Unclean elections cannot be made through ZooKeeper: only preferred ones can"),
])
def test_each_message(options: DropInOptions, message: str) -> None:
    assert error_of(options).message == message


def test_hint_for_the_selection_names_every_way() -> None:
    assert error_of(GOOD._replace(all_topic_partitions=False)).hint == \
        "Use --topic with --partition, --all-topic-partitions, or --path-to-json-file."


@pytest.mark.parametrize("text, expected", [
    ("preferred", ElectionType.PREFERRED), ("PREFERRED", ElectionType.PREFERRED),
    ("Unclean", ElectionType.UNCLEAN), ("uNcLeAn", ElectionType.UNCLEAN),
])
def test_election_type_in_any_case(text: str, expected: ElectionType) -> None:
    assert validate_drop_in(GOOD._replace(election_type=text)).election_type is expected


def test_all_partitions_is_a_null_list() -> None:
    validated = validate_drop_in(GOOD)
    assert validated.partitions is None and validated.json_file is None and validated.config_path is None
    assert validated.request() == ElectionRequest(ElectionType.PREFERRED, None)
    assert validated.warnings == ()


@pytest.mark.parametrize("text, value", [("0", 0), ("+7", 7), ("007", 7), ("2147483647", 2147483647)])
def test_single_partition(text: str, value: int) -> None:
    validated = validate_drop_in(GOOD._replace(all_topic_partitions=False, topic="orders.v1_x-y", partition=text))
    assert validated.partitions == (TopicPartition("orders.v1_x-y", value),)
    assert validated.request().partitions == (TopicPartition("orders.v1_x-y", value),)


def test_json_file_source_loads_on_request(tmp_path) -> None:
    path = tmp_path / "e.json"
    path.write_text(json.dumps({"partitions": [{"topic": "t", "partition": 3}]}))
    validated = validate_drop_in(GOOD._replace(all_topic_partitions=False, path_to_json_file=str(path)))
    assert validated.json_file == str(path) and validated.partitions is None
    assert validated.request() == ElectionRequest(ElectionType.PREFERRED, (TopicPartition("t", 3),))


def test_config_paths_and_the_admin_config_deprecation() -> None:
    assert validate_drop_in(GOOD._replace(command_config="c.properties")).config_path == "c.properties"
    deprecated = validate_drop_in(GOOD._replace(admin_config="a.properties"))
    assert deprecated.config_path == "a.properties"
    assert deprecated.warnings == (ADMIN_CONFIG_DEPRECATED,)
    assert ADMIN_CONFIG_DEPRECATED == ("Option --admin.config has been deprecated and will be removed in a future "
                                       "version. Use --command-config instead.")


def test_zookeeper_replaces_bootstrap_server() -> None:
    validated = validate_drop_in(GOOD._replace(bootstrap_server=None, zookeeper="zk:2181/kafka"))
    assert validated.zookeeper == "zk:2181/kafka" and validated.bootstrap_server is None
    assert validated.warnings == ZOOKEEPER_DEPRECATED


def test_control_characters_in_arguments_stay_on_one_line() -> None:
    message = error_of(GOOD._replace(election_type="pre\nferred\x1b")).message
    assert message == "Cannot parse argument 'pre\\nferred\\x1b' of option election-type"


# -- Kafka's order, as an oracle over random flag combinations ---------------------------------------------

def kafka_first_failure(o: DropInOptions) -> str | None:
    """Kafka's validate() then its lazy conversions, then our additions, written as a list of rules."""
    missing = [n for n, absent in (("bootstrap-server", o.bootstrap_server is None and o.zookeeper is None),
                                   ("election-type", o.election_type is None)) if absent]
    election_type_ok = o.election_type is not None and o.election_type.lower() in ("preferred", "unclean")
    partition_ok = o.partition is not None and o.partition.lstrip("-").isdigit() and -2**31 <= int(o.partition) < 2**31
    # a topic name as Kafka's Topic.validate takes it (checked on the ZooKeeper path only: it becomes a znode)
    topic_ok = o.topic is not None and o.topic not in (".", "..") and re.fullmatch(r"[a-zA-Z0-9._-]{1,249}", o.topic)
    rules = [
        (bool(missing), "Missing required option(s): " + ", ".join(missing)),
        (o.bootstrap_server is not None and o.zookeeper is not None, "Exactly one of"),
        (o.admin_config is not None and o.command_config is not None, 'Option "[admin.config]"'),
        (o.zookeeper is not None and (o.admin_config or o.command_config) is not None, 'Option "[zookeeper]"'),
        (sum((o.topic is not None, o.all_topic_partitions, o.path_to_json_file is not None)) != 1, ONE_AND_ONLY),
        (o.topic is not None and o.partition is None, "Missing required option(s): partition"),
        (o.topic is None and o.partition is not None, "Option partition is only allowed if topic is used"),
        (not election_type_ok, f"Cannot parse argument '{o.election_type}' of option election-type"),
        (o.zookeeper is not None and election_type_ok and o.election_type.lower() == "unclean", "Unclean"),
        (o.topic is not None and not partition_ok, f"Cannot parse argument '{o.partition}' of option partition"),
        (o.zookeeper is not None and o.topic is not None and not topic_ok, "Topic name is invalid"),
    ]
    return next((message for failed, message in rules if failed), None)


maybe = lambda values: st.one_of(st.none(), st.sampled_from(values))  # noqa: E731
random_options = st.builds(
    DropInOptions,
    bootstrap_server=maybe(["b:9092"]), zookeeper=maybe(["zk:2181"]),
    election_type=maybe(["preferred", "UNCLEAN", "bogus", ""]), topic=maybe(["ok", "a.b-c_d", "bad topic", ".."]),
    partition=maybe(["0", "12", "abc", "-1", "99999999999"]), all_topic_partitions=st.booleans(),
    path_to_json_file=maybe(["f.json"]), admin_config=maybe(["a.properties"]), command_config=maybe(["c.properties"]))


def test_a_negative_partition_and_any_topic_name_are_kafkas_to_send() -> None:
    """Kafka's tool sends them (Integer.valueOf takes "-1"; no name check): the controller answers
    UNKNOWN_TOPIC_OR_PARTITION, which the result lines show."""
    for topic, partition in (("t", "-1"), ("bad topic", "0"), ("", "0"), ("t\u00f3pico", "-2147483648"), ("..", "+3")):
        validated = validate_drop_in(GOOD._replace(all_topic_partitions=False, topic=topic, partition=partition))
        assert validated.partitions == (TopicPartition(topic, int(partition)),)


@settings(max_examples=400, deadline=None)
@given(random_options)
@example(DropInOptions(bootstrap_server=None, zookeeper="zk:2181", election_type="preferred", topic="bad topic",
                       partition="0", all_topic_partitions=False))  # drew at random only now and then
def test_checks_run_in_kafkas_order(options: DropInOptions) -> None:
    expected = kafka_first_failure(options)
    if expected is None:
        validated = validate_drop_in(options)
        assert validated.election_type.name == options.election_type.upper()
    else:
        message = error_of(options).message
        assert message == expected if expected.startswith(("Missing", "Cannot")) else message.startswith(expected)
