"""The JSON election file, topic-name rules and `topic:partition` specs."""

from __future__ import annotations

import itertools
import json
import random
import re
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from leader_election_cli.errors import InputError, shown
from leader_election_cli.model import TopicPartition
from leader_election_cli.selection import files as selection
from leader_election_cli.selection.files import load_election_file
from leader_election_cli.selection.names import parse_partition_spec, parse_partition_specs, topic_problem

FORMAT_HINT = 'The file must look like {"partitions": [{"topic": "foo", "partition": 1}]}.'
LEGAL_CHARS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-"


def write(tmp_path: Path, content: bytes | str, name: str = "election.json") -> str:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(path)


def load_error(path: str) -> InputError:
    with pytest.raises(InputError) as caught:
        load_election_file(path)
    return caught.value


def entries(*pairs: tuple[object, object]) -> str:
    return json.dumps({"partitions": [{"topic": t, "partition": p} for t, p in pairs]})


# -- good files ------------------------------------------------------------------------------------------

def test_partitions_in_file_order(tmp_path: Path) -> None:
    path = write(tmp_path, entries(("b", 2), ("a", 0), ("b", 1), ("a.b_c-D9", 2147483647)))
    assert load_election_file(path) == (TopicPartition("b", 2), TopicPartition("a", 0), TopicPartition("b", 1),
                                        TopicPartition("a.b_c-D9", 2147483647))


def test_empty_list_is_valid_and_distinct_from_all_partitions(tmp_path: Path) -> None:
    assert load_election_file(write(tmp_path, '{"partitions": []}')) == ()


def test_unknown_fields_are_ignored_as_kafka_does(tmp_path: Path) -> None:
    content = '{"version": 1, "partitions": [{"topic": "t", "partition": 0, "replicas": [1, 2]}], "x": null}'
    assert load_election_file(write(tmp_path, content)) == (TopicPartition("t", 0),)


def test_utf8_bom_and_surrounding_whitespace(tmp_path: Path) -> None:
    path = write(tmp_path, b"\xef\xbb\xbf\n  " + entries(("t", 1)).encode() + b"\r\n\t")
    assert load_election_file(path) == (TopicPartition("t", 1),)


# -- Kafka's messages ------------------------------------------------------------------------------------

@pytest.mark.parametrize("content", ["", "   \n\t\r\n"])
def test_empty_file(tmp_path: Path, content: str) -> None:
    path = write(tmp_path, content)
    error = load_error(path)
    assert (error.message, error.detail) == (f"Replica election data is empty: {path} holds no JSON document", None)
    assert error.hint == FORMAT_HINT


@pytest.mark.parametrize("content", ["{}", '{"partition": []}', '{"Partitions": []}'])
def test_missing_partitions_field(tmp_path: Path, content: str) -> None:
    path = write(tmp_path, content)
    error = load_error(path)
    assert (error.message, error.detail) == ('Replica election data is missing "partitions" field', f"{path} at $")


def test_duplicates_in_kafkas_format_with_the_first_repeat(tmp_path: Path) -> None:
    path = write(tmp_path, entries(("a", 1), ("b", 1), ("a", 1), ("c", 0), ("b", 1), ("a", 1)))
    error = load_error(path)
    assert error.message == "Replica election data contains duplicate partitions: [a-1, b-1]"
    assert error.detail == f"{path}: $.partitions[2] repeats $.partitions[0]"


def duplicate_cases() -> list[list[TopicPartition]]:
    """Election files with duplicates: random ones, many (the table grows), and names whose hashes collide
    ("Aa" and "BB" hash alike in Java), so that a crowded bucket grows a small table."""
    rng = random.Random(1)
    cases = []
    for _ in range(300):
        names = ["".join(rng.choices(LEGAL_CHARS, k=rng.randint(1, 6))) for _ in range(rng.randint(1, 4))]
        chosen = [TopicPartition(rng.choice(names), rng.choice([0, 1, 2, 7, 31, 1000, 2**31 - 1]))
                  for _ in range(rng.randint(2, 40))]
        cases.append(chosen + rng.sample(chosen, rng.randint(1, len(chosen))))
    # 10 names of one hash: a bucket of 8 then 9 grows the table twice (a 9th in a bucket of a table of
    # 64 would make it a tree, which java_hash_set_order does not model); two crowded buckets of 8
    colliding = ["".join(p) for p in itertools.product(["Aa", "BB"], repeat=4)]
    for others in (["a", "b"], ["x1", "y2"], ["topic", "q"], ["m", "zz"]):  # 12 entries: only crowding grows it
        cases.append([*(TopicPartition(name, 0) for name in colliding[:10]),
                      *(TopicPartition(o, 3) for o in others)] * 2)
    cases.append([TopicPartition(name, p) for name in colliding[:8] for p in (0, 31)] * 2)
    cases.append([TopicPartition(f"t{i}", i % 5) for i in range(200)] * 2)
    return cases


def test_duplicates_are_listed_in_the_order_of_kafkas_hash_set(kafka_order) -> None:
    """Kafka's own code (tests/java/KafkaOrder.java, run by the JDK) gives the order to match."""
    cases = duplicate_cases()
    expected = kafka_order("duplicates", ["\t".join(f"{tp.topic} {tp.partition}" for tp in case) for case in cases])
    for case, kafkas in zip(cases, expected, strict=True):
        repeats = {tp for tp in case if case.count(tp) > 1}
        assert "[" + ", ".join(map(str, selection.java_hash_set_order(case, repeats))) + "]" == kafkas


def test_many_duplicates_are_all_listed_as_kafka_does(tmp_path: Path) -> None:
    path = write(tmp_path, entries(*[("t", i) for i in range(30)] * 2))
    # only the list: the file's path (pytest-208/...) once contained "t-20"
    listed = load_error(path).message.split("duplicate partitions: ", 1)[1].split("]", 1)[0]
    assert listed.startswith("[t-21, t-19, t-17, ")
    assert sorted(listed[1:].split(", ")) == sorted(f"t-{i}" for i in range(30))


@pytest.mark.parametrize("make_path, reason, java", [
    (lambda tmp: str(tmp / "missing.json"), "No such file or directory", True),
    (lambda tmp: str(tmp), "Is a directory", True),
    (lambda tmp: str(tmp / "nul\0.json"), "embedded null byte", False),  # (Java: an InvalidPathException)
])
def test_unreadable_file(tmp_path: Path, make_path, reason: str, java: bool) -> None:
    path = make_path(tmp_path)
    error = load_error(path)
    assert error.message.startswith(f"Unable to read file {shown(str(path))}: ") and error.message.endswith(reason)
    assert error.detail is None  # one line (issue 34)
    # the drop-in's first line: Kafka's (Utils.readFileAsString's IOException, as a RuntimeException says it)
    assert error.kafka_line == (f"java.io.IOException: Unable to read file {shown(str(path))}" if java else None)
    assert "\0" not in error.message


def test_a_file_over_the_size_limit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selection, "MAX_ELECTION_FILE_BYTES", 100)
    path = write(tmp_path, entries(*[("t", i) for i in range(10)]))
    error = load_error(path)
    assert (error.message, error.detail) == (f"Unable to read file {path}: larger than 100 bytes", None)
    assert error.hint == "Split the partitions over several files and run once per file."


# -- better than Kafka: file, JSON path and problem -------------------------------------------------------

@pytest.mark.parametrize("content, where, problem", [
    ("[1, 2]", "$", "expected an object, got an array"),
    ('"partitions"', "$", 'expected an object, got a string "partitions"'),
    ("42", "$", "expected an object, got 42"),
    ("null", "$", "expected an object, got null"),
    ('{"partitions": {"topic": "t"}}', "$.partitions", "expected an array, got an object"),
    ('{"partitions": null}', "$.partitions", "expected an array, got null"),
    (entries(("t", 0), ("t", 1), ("t", 2), ("t", 1.0)), "$.partitions[3].partition", "expected an integer, got 1.0"),
    (entries(("t", True)), "$.partitions[0].partition", "expected an integer, got true"),
    (entries(("t", "1")), "$.partitions[0].partition", 'expected an integer, got a string "1"'),
    (entries(("t", None)), "$.partitions[0].partition", "expected an integer, got null"),
    (entries(("t", -1)), "$.partitions[0].partition", "-1 is negative: partition ids start at 0"),
    (entries(("t", 2**31)), "$.partitions[0].partition",
     "2147483648 is larger than 2147483647, the largest partition id"),
    (entries(("t", 10**30)), "$.partitions[0].partition",
     "1000000000000000000000000000000 is larger than 2147483647, the largest partition id"),
    ('{"partitions": [{"topic": "t", "partition": 1e400}]}', "$.partitions[0].partition",
     "expected an integer, got Infinity"),
    (entries((1, 0)), "$.partitions[0].topic", "expected a string, got 1"),
    (entries(("", 0)), "$.partitions[0].topic", "Topic name is invalid: the empty string is not allowed"),
    (entries((".", 0)), "$.partitions[0].topic", "Topic name is invalid: '.' is not allowed"),
    (entries(("..", 0)), "$.partitions[0].topic", "Topic name is invalid: '..' is not allowed"),
    (entries(("a" * 250, 0)), "$.partitions[0].topic",
     f"Topic name is invalid: the length of '{'a' * 250}' is longer than the max allowed length 249"),
    (entries(("a/b", 0)), "$.partitions[0].topic", "Topic name is invalid: 'a/b' contains one or more "
                                                   "characters other than ASCII alphanumerics, '.', '_' and '-'"),
    (entries(("a\u0000\n\ud800", 0)), "$.partitions[0].topic", "Topic name is invalid: 'a\\x00\\n\\ud800' contains "
                                                               "one or more characters other than ASCII "
                                                               "alphanumerics, '.', '_' and '-'"),
    ('{"partitions": [{"topic": "t", "partition": 0}, 7]}', "$.partitions[1]", "expected an object, got 7"),
    ('{"partitions": [["t", 0]]}', "$.partitions[0]", "expected an object, got an array"),
    ('{"partitions": [{"partition": 0}]}', "$.partitions[0]", 'the field "topic" is missing'),
    ('{"partitions": [{"topic": "t"}]}', "$.partitions[0]", 'the field "partition" is missing'),
])
def test_schema_errors_name_file_path_and_problem(tmp_path: Path, content: str, where: str, problem: str) -> None:
    path = write(tmp_path, content)
    error = load_error(path)
    assert error.message == f"Invalid replica election data in {path} at {where}: {problem}"
    assert error.hint == FORMAT_HINT


def test_a_topic_over_249_utf16_units_reports_its_length_first(tmp_path: Path) -> None:
    name = "\U0001F600" * 125  # 125 characters, 250 UTF-16 units, as Java counts
    error = load_error(write(tmp_path, entries((name, 0))))
    assert "is longer than the max allowed length 249" in error.message


@pytest.mark.parametrize("content, problem", [
    ('{"partitions": [{"topic": "a", "partition": 1},\n {"topic": "b" "partition": 2}]}',
     "Expecting ',' delimiter at line 2, column 16"),
    ('{"partitions": [', "Expecting value at line 1, column 17"),
    ('{"partitions": [{"topic": "a\x01", "partition": 1}]}', "Invalid control character at line 1, column 29"),
    ('{"partitions": []} {}', "Extra data at line 1, column 20"),
    ('{"partitions": [{"topic": "NaN", "partition": NaN}]}', "NaN is not a JSON value at line 1, column 47"),
    ('{"partitions": [],\n "x": -Infinity}', "-Infinity is not a JSON value at line 2, column 7"),
    ("{'partitions': []}", "Expecting property name enclosed in double quotes at line 1, column 2"),
])
def test_broken_json_is_kafkas_empty_data_and_says_where(tmp_path: Path, content: str, problem: str) -> None:
    """Kafka's Json.parseFull gives no document for JSON it cannot read: "Replica election data is empty"."""
    path = write(tmp_path, content)
    error = load_error(path)
    assert (error.kafka_line, error.message) == ("Replica election data is empty",
                                                 f"Replica election data in {path} is not valid JSON: {problem}")


def test_non_utf8_bytes_say_where(tmp_path: Path) -> None:
    path = write(tmp_path, b'{"partitions": [\n{"topic": "\xe9t\xe9", "partition": 1}]}')
    assert load_error(path).message == (f"Replica election data in {path} is not UTF-8 text: "
                                        "byte 0xe9 at line 2, column 12")


def test_deeply_nested_and_huge_numbers_are_input_errors(tmp_path: Path) -> None:
    deep = write(tmp_path, "[" * 200_000 + "]" * 200_000, "deep.json")
    error = load_error(deep)  # (Jackson's limits, 1,000 levels and 1,000 digits, also make Kafka's "empty")
    assert (error.kafka_line, error.message) == ("Replica election data is empty",
                                                 f"Replica election data in {deep} is nested too deeply to read")
    long_number = write(tmp_path, '{"partitions": [{"topic": "t", "partition": 1' + "0" * 5000 + "}]}", "n.json")
    error = load_error(long_number)
    assert error.message == f"Replica election data in {long_number} holds a number too long to read"


# -- properties ------------------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-2**40, max_value=2**40)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=8)
topics = st.one_of(st.text(alphabet=LEGAL_CHARS, min_size=1, max_size=12), st.sampled_from([".", "..", ""]),
                   st.text(max_size=6), st.text(alphabet=LEGAL_CHARS, min_size=249, max_size=251), json_values)
partition_values = st.one_of(st.integers(min_value=-3, max_value=2**31 + 3), st.sampled_from([2**31 - 1, 2**31, 0, -1]),
                             st.floats(allow_nan=False, allow_infinity=False), st.booleans(), json_values)
numbers = st.one_of(st.integers(min_value=-3, max_value=2**31 + 3), st.sampled_from([-1, -0.5, 0, 2**31 - 1, 2**31]),
                    st.floats(allow_nan=False, allow_infinity=False), st.booleans(), st.just(10**400), json_values)


def entries_of(third: str | None) -> st.SearchStrategy:
    """Entries of a file with fields topic, partition and `third` (the prefer file's leader, the weights
    file's weight): most of them right but for one field (a value out of range, of another type, a
    field missing or unknown), the others anything."""
    fields = {"topic": topics, "partition": partition_values, **({third: numbers} if third else {})}
    good = {"topic": st.text(alphabet=LEGAL_CHARS, min_size=1, max_size=3),
            "partition": st.integers(min_value=0, max_value=3),
            **({third: st.integers(min_value=0, max_value=3)} if third else {})}
    near = st.sampled_from(sorted(fields)).flatmap(lambda wrong: st.fixed_dictionaries(
        {**good, wrong: fields[wrong]}, optional={"replicas": json_values}))
    return st.one_of(near, near, st.fixed_dictionaries(fields, optional={"replicas": json_values}),
                     st.fixed_dictionaries({}, optional=fields), json_values)


FILE_KINDS = {"election": ("election-file", None, selection.load_election_file),
              "prefer": ("prefer-file", "leader", selection.load_prefer_file),
              "weights": ("weights-file", "weight", selection.load_weights_file)}


@pytest.mark.parametrize("kind", FILE_KINDS)
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_the_fast_entry_check_agrees_with_jsonschema(tmp_path: Path, kind: str, data: st.DataObject) -> None:
    """Entries are checked without jsonschema for speed: the verdict must be the schema's, exactly, and
    a refusal must name the first entry the schema refuses."""
    schema, third, load = FILE_KINDS[kind]
    items = data.draw(st.lists(entries_of(third), max_size=4))
    document = {"partitions": items}
    validator = selection._validator(schema)
    schema_valid = validator.is_valid(document)
    path = write(tmp_path, json.dumps(document))
    try:
        loaded = load(path)
    except InputError as error:
        repeated = "duplicate partitions" in error.message or " twice: " in error.message
        too_large = error.message.endswith(".weight: too large")  # a number the schema takes, no float holds
        assert not schema_valid or repeated or too_large, error.message
        if not schema_valid:
            bad = next(i for i, item in enumerate(items) if not validator.is_valid({"partitions": [item]}))
            assert f" at $.partitions[{bad}]" in error.message
    else:
        assert schema_valid
        tps = [TopicPartition(item["topic"], item["partition"]) for item in items]
        expected = {"election": tuple(tps), "prefer": tuple(zip(tps, (i.get("leader") for i in items), strict=True)),
                    "weights": {tp: float(i.get("weight", 0)) for tp, i in zip(tps, items, strict=True)}}[kind]
        assert loaded == expected


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.one_of(st.binary(max_size=200),
                 st.builds(lambda prefix, junk: prefix + junk,
                           st.sampled_from([b'{"partitions": [', b'{"partitions": [{"topic": "t", "partition": ']),
                           st.binary(max_size=40))))
def test_any_bytes_load_or_give_an_input_error(tmp_path: Path, content: bytes) -> None:
    path = write(tmp_path, content)
    try:
        result = load_election_file(path)
    except InputError as error:
        assert error.message and "\n" not in error.message
    else:
        assert all(isinstance(tp, TopicPartition) for tp in result)


@given(st.text(max_size=260))
def test_topic_rules_match_kafka(name: str) -> None:
    legal = (name not in ("", ".", "..") and len(name) <= 249 and re.fullmatch(r"[a-zA-Z0-9._-]+", name) is not None)
    problem = topic_problem(name)
    assert (problem is None) == legal
    if problem:
        assert problem.startswith("Topic name is invalid: ") and "\n" not in problem


def test_shipped_schema_is_a_valid_draft_2020_12_schema() -> None:
    schema = json.loads(files("leader_election_cli").joinpath("schemas/election-file.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"


# -- topic:partition specs -------------------------------------------------------------------------------

@pytest.mark.parametrize("spec, expected", [
    ("orders:0", [("orders", 0)]),
    ("orders:3,1,2", [("orders", 3), ("orders", 1), ("orders", 2)]),
    ("a.b_c-d:007", [("a.b_c-d", 7)]),
    ("t:1,1,2,1", [("t", 1), ("t", 2)]),
    ("t:2147483647", [("t", 2147483647)]),
])
def test_partition_specs(spec: str, expected: list[tuple[str, int]]) -> None:
    assert parse_partition_spec(spec) == tuple(TopicPartition(*pair) for pair in expected)


@pytest.mark.parametrize("spec, problem", [
    ("orders", "expected TOPIC:PARTITION or TOPIC:P1,P2,..."),
    ("orders:", "expected TOPIC:PARTITION or TOPIC:P1,P2,..."),
    (":1", "Topic name is invalid: the empty string is not allowed"),
    ("a:b:1", "Topic name is invalid: 'a:b' contains one or more characters other than ASCII alphanumerics, "
              "'.', '_' and '-'"),
    ("t:1,,2", "'' is not a partition id"),
    ("t:-1", "'-1' is not a partition id"),
    ("t:+1", "'+1' is not a partition id"),
    ("t: 1", "' 1' is not a partition id"),
    ("t:2147483648", "'2147483648' is not a partition id"),
    ("t:" + "9" * 5000, f"'{'9' * 5000}' is not a partition id"[:40]),
])
def test_bad_partition_specs(spec: str, problem: str) -> None:
    with pytest.raises(InputError) as caught:
        parse_partition_spec(spec)
    assert caught.value.message.startswith(f"Invalid partition spec '{selection.shown(spec)}': ")
    assert problem in caught.value.message


def test_several_specs_keep_order_without_repeats() -> None:
    assert parse_partition_specs(["b:1,0", "a:0", "b:0"]) == (
        TopicPartition("b", 1), TopicPartition("b", 0), TopicPartition("a", 0))


@given(st.lists(st.tuples(st.text(alphabet=LEGAL_CHARS, min_size=1, max_size=20).filter(lambda t: t not in (".", "..")),
                          st.lists(st.integers(min_value=0, max_value=2**31 - 1), min_size=1, max_size=4)),
                min_size=1, max_size=4))
def test_specs_round_trip(selected: list[tuple[str, list[int]]]) -> None:
    specs = [f"{topic}:{','.join(map(str, ids))}" for topic, ids in selected]
    expected = tuple(dict.fromkeys(TopicPartition(topic, i) for topic, ids in selected for i in ids))
    assert parse_partition_specs(specs) == expected
