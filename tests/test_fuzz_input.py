"""Bad input never reaches the cluster: election files, properties files and command lines, fuzzed.

Every bad case, through both `kafka-leader-election` and `kafka-leaders elect`, must end in exit 2 with
a one-line error on stderr (at most a `Hint:` line after it, after any of Kafka's deprecation
warnings), no results on stdout, no traceback, and not one request at the sandbox the command points at:
not even ApiVersions (key 18), which kafka-python sends first on every connection.

The generators build bad input by construction (a valid document plus at least one defect) where
random data would mostly be valid; random bytes are filtered through an independent validity oracle.
"""

from __future__ import annotations

import json
import re
import string
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from click.testing import CliRunner
from election_file_oracle import LEGAL_TOPIC, is_valid_election_file
from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import cli as toolkit
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.selection.drop_in import ADMIN_CONFIG_DEPRECATED, ZOOKEEPER_DEPRECATED

API_VERSIONS, METADATA, ELECT_LEADERS, ALTER_REASSIGNMENTS = 18, 3, 43, 45
WRITE_APIS = (ELECT_LEADERS, ALTER_REASSIGNMENTS)
DOCUMENTED_EXIT_CODES = {0, 1, 2, 3, 4, 5, 130}
MAX_ERROR_LINE = 1000  # a path and a value are each cut to a few hundred characters in messages
KAFKA_WARNINGS = (ADMIN_CONFIG_DEPRECATED, *ZOOKEEPER_DEPRECATED)
# kafka-leaders elect can only tell these from a metadata read: they follow reads, never writes.
RESOLUTION_ERRORS = ("Unknown topic(s)", "Unknown partition(s)", "The selection matches no partition", "Topic(s) ")
FUZZ = settings(max_examples=100, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


@dataclass(frozen=True)
class Run:
    code: int
    out: str
    err: str
    sent: list[int]  # API keys of the requests the sandbox received during the run


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(brokers=3, mode="kraft") as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2, 3], 1: [2, 3, 1]})
        yield sandbox


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A directory with a good election file, a good config file and room for generated ones."""
    directory = tmp_path_factory.mktemp("fuzz")
    (directory / "good.json").write_text('{"partitions": [{"topic": "t1", "partition": 0}]}')
    (directory / "good.properties").write_text("security.protocol=PLAINTEXT\ndefault.api.timeout.ms=5000\n")
    (directory / "bad.json").write_text('{"partitions": [{"topic": "t1"}]}')
    (directory / "bad.properties").write_text("security.protocol=PLAINTEXTT\n")
    (directory / "a-directory").mkdir()
    return directory


def invoke(sb: Sandbox, program: object, args: list[str]) -> Run:
    before = len(sb.request_log)
    result = CliRunner().invoke(program, args, catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr, [r.api_key for r in sb.request_log[before:]])


def error_line(err: str) -> str:
    """The single error line of a refusal: Kafka's deprecation warnings may come first, a detail line (where,
    exactly, when the error line is Kafka's own) and a hint after."""
    lines = err.splitlines()
    while lines and (lines[0] in KAFKA_WARNINGS or lines[0].startswith("Warning: ")):
        lines.pop(0)
    assert len(lines) in (1, 2, 3), f"expected one error line, at most a detail and a hint, got {lines!r}"
    assert lines[0].strip() and not lines[0].startswith(("Hint:", "Warning:")), lines
    assert len(lines) == 1 or lines[-1].startswith("Hint: "), lines
    assert all(len(line) <= MAX_ERROR_LINE for line in lines[1:-1]), lines
    assert len(lines[0]) <= MAX_ERROR_LINE, f"error line of {len(lines[0])} characters"
    return lines[0]


def assert_no_results(out: str) -> None:
    """Nothing on stdout but Kafka's deprecation line (Kafka prints --admin.config's there)."""
    assert all(line in KAFKA_WARNINGS for line in out.splitlines()), out


def assert_refused(run: Run) -> str:
    """Exit 2, one line on stderr, nothing on stdout, no traceback, not one request sent."""
    assert "Traceback" not in run.out + run.err
    assert run.code == 2, (run.code, run.err)
    assert_no_results(run.out)
    line = error_line(run.err)
    assert run.sent == [], f"bad input sent {run.sent} (first line: {line})"
    return line


def assert_sane(run: Run, refused_before_connecting: bool = True, debug: bool = False) -> None:
    """Any run: a documented exit code, no traceback (--debug asks for them); a refusal (exit 2) sent no
    write, and sent nothing at all when it was refused before connecting."""
    assert run.code in DOCUMENTED_EXIT_CODES, (run.code, run.err)
    assert "Internal error" not in run.err  # what the commands call a bug
    if not debug:
        assert "Traceback" not in run.out + run.err
    if run.code == 2:
        assert_no_results(run.out)
        if not debug:
            error_line(run.err)
        assert not set(run.sent) & set(WRITE_APIS), run.sent
        if refused_before_connecting:
            assert run.sent == [], run.sent


def drop_in_file(sb: Sandbox, path: Path) -> Run:
    return invoke(sb, drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                                "--path-to-json-file", str(path), "--output", "json"])


def elect_file(sb: Sandbox, path: Path) -> Run:
    return invoke(sb, toolkit, ["elect", "--bootstrap-server", sb.bootstrap_servers, "--path-to-json-file", str(path),
                                "--output", "json"])


# -- election files ----------------------------------------------------------------------------------



json_scalars = (st.none() | st.booleans() | st.integers(-(2**80), 2**80) | st.floats(allow_nan=False)
                | st.text(max_size=8))
json_values = st.recursive(json_scalars, lambda inner: st.lists(inner, max_size=3)
                           | st.dictionaries(st.text(max_size=6), inner, max_size=3), max_leaves=10)
legal_topics = st.text(string.ascii_letters + string.digits + "._-", min_size=1, max_size=20).filter(
    lambda t: t not in (".", ".."))
illegal_topics = st.one_of(
    st.just(""), st.just("."), st.just(".."), st.just("a" * 250),
    st.text(min_size=1, max_size=12).filter(lambda t: not LEGAL_TOPIC.fullmatch(t) or t in (".", "..")),
    st.text(st.characters(codec="utf-8", categories=("Cc", "Cf", "Zs", "Zl", "Zp")), min_size=1, max_size=6),
    st.builds(lambda a, b: a + b, legal_topics, st.sampled_from(["\x00", "\n", "\x1b[31m", "\u202e", "é", " ", "/"])),
)
bad_partition_ids = st.one_of(
    st.integers(max_value=-1), st.integers(min_value=2**31), st.integers(-(10**300), 10**300).filter(
        lambda n: not 0 <= n < 2**31),
    st.floats(), st.booleans(), st.none(), st.text(max_size=5), st.lists(json_scalars, max_size=2),
    st.dictionaries(st.text(max_size=3), json_scalars, max_size=2),
)
good_entries = st.builds(lambda t, p: {"topic": t, "partition": p}, legal_topics, st.integers(0, 2**31 - 1))


@st.composite
def bad_entries(draw: st.DrawFn) -> object:
    """One entry with a defect: not an object, a field missing, or a field with a bad value."""
    kind = draw(st.sampled_from(["not-object", "no-topic", "no-partition", "topic-type", "topic-name", "partition"]))
    good = draw(good_entries)
    extra = draw(st.dictionaries(st.text(max_size=6).filter(lambda k: k not in ("topic", "partition")), json_values,
                                 max_size=2))
    if kind == "not-object":
        return draw(json_scalars | st.lists(json_values, max_size=3))
    if kind == "no-topic":
        return {"partition": good["partition"], **extra}
    if kind == "no-partition":
        return {"topic": good["topic"], **extra}
    if kind == "topic-type":
        return {**extra, **good, "topic": draw(json_values.filter(lambda v: not isinstance(v, str)))}
    if kind == "topic-name":
        return {**extra, **good, "topic": draw(illegal_topics)}
    return {**extra, **good, "partition": draw(bad_partition_ids)}


@st.composite
def bad_documents(draw: st.DrawFn) -> object:
    """A Kafka election document with at least one defect, anywhere."""
    kind = draw(st.sampled_from(["top-level", "no-partitions", "partitions-type", "entry", "duplicate"]))
    entries = draw(st.lists(good_entries, max_size=6, unique_by=lambda e: (e["topic"], e["partition"])))
    if kind == "top-level":
        return draw(json_values.filter(lambda v: not isinstance(v, dict)))
    if kind == "no-partitions":
        return draw(st.dictionaries(st.text(max_size=6).filter(lambda k: k != "partitions"), json_values, max_size=3))
    if kind == "partitions-type":
        return {"partitions": draw(json_values.filter(lambda v: not isinstance(v, list)))}
    if kind == "entry":
        entries.insert(draw(st.integers(0, len(entries))), draw(bad_entries()))
        return {"partitions": entries}
    if not entries:
        entries.append(draw(good_entries))
    repeat = entries[draw(st.integers(0, len(entries) - 1))]
    entries.insert(draw(st.integers(0, len(entries))), dict(repeat))
    return {"partitions": entries}


def encode(document: object) -> bytes:
    return json.dumps(document, ensure_ascii=False).encode("utf-8", "surrogatepass")


@settings(FUZZ, max_examples=300)
@given(document=bad_documents(), through=st.sampled_from(["drop-in", "elect"]))
def test_bad_election_documents_are_refused_before_connecting(sb: Sandbox, files: Path, document: object,
                                                              through: str) -> None:
    data = encode(document)
    assert not is_valid_election_file(data)
    path = files / "document.json"
    path.write_bytes(data)
    line = assert_refused((drop_in_file if through == "drop-in" else elect_file)(sb, path))
    event(line.split(":")[0][:40])


@FUZZ
@given(data=st.binary(max_size=200) | st.builds(lambda b, t: b + t, st.binary(max_size=8), st.text(max_size=40).map(
    lambda t: t.encode("utf-8", "surrogatepass"))))
def test_random_bytes_as_an_election_file(sb: Sandbox, files: Path, data: bytes) -> None:
    assume(not is_valid_election_file(data))
    path = files / "bytes.json"
    path.write_bytes(data)
    assert_refused(drop_in_file(sb, path))


@st.composite
def mutated_text(draw: st.DrawFn) -> bytes:
    """A valid election file with a few characters inserted, deleted or replaced."""
    text = encode({"partitions": draw(st.lists(good_entries, min_size=1, max_size=4,
                                               unique_by=lambda e: (e["topic"], e["partition"])))}).decode()
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["insert", "delete", "replace"]))
        char = draw(st.sampled_from(list('{}[]",:-.eE0123456789 \\\x00\n') + ["NaN", "Infinity", "\ud800", "é"]))
        if edit == "insert":
            text = text[:at] + char + text[at:]
        elif edit == "delete":
            text = text[:at] + text[at + 1:]
        else:
            text = text[:at] + char + text[at + 1:]
    return text.encode("utf-8", "surrogatepass")


@FUZZ
@given(data=mutated_text(), through=st.sampled_from(["drop-in", "elect"]))
def test_mutated_election_files(sb: Sandbox, files: Path, data: bytes, through: str) -> None:
    assume(not is_valid_election_file(data))
    path = files / "mutated.json"
    path.write_bytes(data)
    assert_refused((drop_in_file if through == "drop-in" else elect_file)(sb, path))


# JSON Kafka's parser cannot read: Kafka's line ("empty") first in the drop-in, ours (where it breaks) in elect
UNREADABLE_JSON = ("Replica election data is empty", "Replica election data in")


@pytest.mark.parametrize("name, text, first_words", [
    ("deep nesting", "[" * 200_000, UNREADABLE_JSON),
    ("deep nesting in an entry", '{"partitions": [{"topic": "t1", "partition": ' + "[" * 990 + "]" * 990 + "}]}",
     UNREADABLE_JSON),
    ("deep object as a topic", '{"partitions": [{"topic": ' + '{"a":' * 900 + "0" + "}" * 900 + ', "partition": 0}]}',
     "Invalid replica election data in"),
    ("a 4,000-digit partition", '{"partitions": [{"topic": "t1", "partition": ' + "9" * 4000 + "}]}",
     "Invalid replica election data in"),
    ("a 5,000-digit partition", '{"partitions": [{"topic": "t1", "partition": -' + "9" * 5000 + "}]}",
     UNREADABLE_JSON),
    ("1e400", '{"partitions": [{"topic": "t1", "partition": 1e400}]}', "Invalid replica election data in"),
    ("NaN", '{"partitions": [{"topic": "t1", "partition": NaN}]}', UNREADABLE_JSON),
    ("control characters", '{"partitions": [{"topic": "t1\\u0000\\u001b[2J\\n\\u202e", "partition": 0}]}',
     "Invalid replica election data in"),
    ("a lone surrogate", '{"partitions": [{"topic": "\\ud800", "partition": 0}]}', "Invalid replica election data in"),
    ("a 100,000-character topic", json.dumps({"partitions": [{"topic": "é" * 100_000, "partition": 0}]}),
     "Invalid replica election data in"),
    ("a 300-character topic of escapes", json.dumps({"partitions": [{"topic": "\x1b" * 300, "partition": 0}]}),
     "Invalid replica election data in"),
    ("not UTF-8", b'{"partitions": [{"topic": "\xff\xfe", "partition": 0}]}', "Replica election data in"),
    ("empty", "", "Replica election data is empty"),
])
@pytest.mark.parametrize("through", ["drop-in", "elect"])
def test_hostile_election_files(sb: Sandbox, files: Path, name: str, text: str | bytes, first_words: str,
                                through: str) -> None:
    path = files / "hostile.json"
    path.write_bytes(text if isinstance(text, bytes) else text.encode("utf-8", "surrogatepass"))
    line = assert_refused((drop_in_file if through == "drop-in" else elect_file)(sb, path))
    if first_words is UNREADABLE_JSON:
        first_words = UNREADABLE_JSON[through == "elect"]
    assert line.startswith(first_words)
    assert line.isprintable()  # control characters and surrogates are escaped, never written raw


def test_a_million_duplicates(sb: Sandbox, files: Path) -> None:
    path = files / "duplicates.json"
    path.write_text('{"partitions": [' + ", ".join(['{"topic": "t1", "partition": 0}'] * 1_000_000) + "]}")
    run = drop_in_file(sb, path)
    assert assert_refused(run) == "Replica election data contains duplicate partitions: [t1-0]"
    assert run.err.splitlines()[1].endswith("$.partitions[1] repeats $.partitions[0]")


def test_a_million_entries_with_one_bad_entry_last(sb: Sandbox, files: Path) -> None:
    entries = [f'{{"topic": "t{i % 1000}", "partition": {i // 1000}}}' for i in range(999_999)]
    path = files / "one-bad.json"
    path.write_text('{"partitions": [' + ", ".join([*entries, '{"topic": "t1", "partition": -1}']) + "]}")
    line = assert_refused(elect_file(sb, path))
    assert "$.partitions[999999].partition: -1 is negative" in line


# -- properties files ------------------------------------------------------------------------------

JAAS = {"PLAIN": "org.apache.kafka.common.security.plain.PlainLoginModule",
        "SCRAM-SHA-256": "org.apache.kafka.common.security.scram.ScramLoginModule"}
property_text = st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=20)


def java_trim(value: str) -> str:
    """String.trim(): what Kafka's ConfigDef does to every value."""
    return value.strip("".join(map(chr, range(33))))


def prop(key: str, value: str) -> str:
    """A key=value line, with the value's backslashes and line breaks escaped as Properties.store does."""
    escaped = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r")
    return f"{key}={escaped}"


@st.composite
def property_defects(draw: st.DrawFn) -> list[str]:
    """The lines of one defect that makes a config file unusable (each is an InputError in config.py)."""
    kind = draw(st.sampled_from(["protocol", "timeout", "timeouts-order", "mechanism", "jaas", "jaas-module",
                                 "jaas-credentials", "providers", "escape", "truststore", "algorithm",
                                 "keystore"]))
    sasl = draw(st.sampled_from(["SASL_PLAINTEXT", "SASL_SSL"]))
    if kind == "protocol":
        value = draw(property_text.filter(lambda v: java_trim(v).upper() not in
                                          ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")))
        return [prop("security.protocol", value)]
    if kind == "timeout":
        key = draw(st.sampled_from(["request.timeout.ms", "default.api.timeout.ms"]))
        value = draw(st.one_of(st.integers(max_value=-1).map(str), st.integers(min_value=2**31).map(str),
                               property_text.filter(lambda v: not re.fullmatch(r"[+-]?[0-9]{1,10}", java_trim(v)))))
        return [prop(key, value)]
    if kind == "timeouts-order":
        request = draw(st.integers(1, 2**31 - 1))
        return [f"request.timeout.ms={request}", f"default.api.timeout.ms={draw(st.integers(0, request - 1))}"]
    if kind == "mechanism":
        mechanism = draw(property_text.filter(lambda v: java_trim(v) not in JAAS
                                              and v.strip() != "SCRAM-SHA-512"))
        return [f"security.protocol={sasl}", prop("sasl.mechanism", mechanism),
                f'sasl.jaas.config={JAAS["PLAIN"]} required username="u" password="p";']
    if kind == "jaas":
        jaas = draw(st.sampled_from(
            ["", ";", "x", f"{JAAS['PLAIN']}", f"{JAAS['PLAIN']} required", f"{JAAS['PLAIN']} bogus;",
             f'{JAAS["PLAIN"]} required username="u"', f'{JAAS["PLAIN"]} required username=;',
             f'{JAAS["PLAIN"]} required username="u" password="p"; {JAAS["PLAIN"]} required;']))
        jaas += draw(property_text.filter(lambda v: ";" not in v))
        return [f"security.protocol={sasl}", "sasl.mechanism=PLAIN",
                *([] if draw(st.booleans()) else [prop("sasl.jaas.config", jaas)])]
    if kind == "jaas-module":
        return [f"security.protocol={sasl}", "sasl.mechanism=PLAIN",
                f'sasl.jaas.config={draw(st.sampled_from([JAAS["SCRAM-SHA-256"], "com.example.Login", "x.y"]))} '
                'required username="u" password="p";']
    if kind == "jaas-credentials":
        present = draw(st.sampled_from(['username="u"', 'password="p"', 'username="u" password="p" tokenauth="true"']))
        return [f"security.protocol={sasl}", "sasl.mechanism=SCRAM-SHA-256",
                f"sasl.jaas.config={JAAS['SCRAM-SHA-256']} required {present};"]
    if kind == "providers":
        return [prop("config.providers", draw(property_text))]
    if kind == "escape":
        broken = draw(st.sampled_from(["\\u", "\\u1", "\\u12", "\\uZZZZ", "\\u12G4"]))
        return [draw(st.sampled_from([f"client.id=a{broken}", f"x{broken}.key=1"]))]
    if kind == "truststore":
        location = draw(st.sampled_from(["/nonexistent/ca.pem", "/", "/dev/null"]))
        return ["security.protocol=SSL", "ssl.truststore.type=PEM", prop("ssl.truststore.location", location)]
    if kind == "algorithm":
        algorithm = draw(property_text.filter(lambda v: java_trim(v).lower()
                                              not in ("", "https")))
        return ["security.protocol=SSL", prop("ssl.endpoint.identification.algorithm", algorithm)]
    return ["security.protocol=SSL", "ssl.keystore.type=PEM",
            draw(st.sampled_from(["ssl.keystore.key=-----BEGIN PRIVATE KEY-----", "ssl.keystore.certificate.chain=x",
                                  "ssl.keystore.password=secret", "ssl.truststore.password=secret"]))]


harmless_lines = st.one_of(
    st.builds(lambda t: "# " + t, property_text), st.builds(lambda t: "! " + t, property_text), st.just(""),
    st.just("   "), st.builds(lambda k, v: prop("x.custom." + k, v), st.text(string.ascii_lowercase, min_size=1,
                                                                         max_size=5), property_text),
    st.sampled_from(["retries=3", "client.dns.lookup=use_all_dns_ips", "metadata.max.age.ms=1000",
                     "sasl.kerberos.service.name=kafka"]),
)


@settings(FUZZ, max_examples=300)
@given(defect=property_defects(), before=st.lists(harmless_lines, max_size=4),
       after=st.lists(harmless_lines, max_size=4), through=st.sampled_from(["drop-in", "elect"]),
       flag=st.sampled_from(["--command-config", "--admin.config"]))
def test_bad_config_files_are_refused_before_connecting(sb: Sandbox, files: Path, defect: list[str],
                                                        before: list[str], after: list[str], through: str,
                                                        flag: str) -> None:
    path = files / "client.properties"
    path.write_bytes("\n".join([*before, *defect, *after]).encode("latin-1"))
    if through == "drop-in":
        run = invoke(sb, drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                                   "--topic", "t1", "--partition", "0", flag, str(path)])
    else:
        run = invoke(sb, toolkit, ["elect", "--bootstrap-server", sb.bootstrap_servers, "--topic", "t1",
                                   "--command-config", str(path)])
    line = assert_refused(run)
    event(line.split(":")[0][:40])


@FUZZ
@given(data=st.binary(max_size=300))
def test_random_bytes_as_a_config_file_never_crash(sb: Sandbox, files: Path, data: bytes) -> None:
    """Random bytes are usually a valid (if useless) properties file: refused or not, never a crash, and
    a refusal sends nothing."""
    path = files / "random.properties"
    path.write_bytes(data)
    run = invoke(sb, drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                               "--topic", "t1", "--partition", "0", "--command-config", str(path),
                               "--timeout", "2"])
    assert_sane(run)
    event("refused" if run.code == 2 else f"exit {run.code}")


@pytest.mark.parametrize("path, why", [
    ("/nonexistent/client.properties", "No such file or directory"),
    ("a-directory", "Is a directory"),
    ("with\x00nul", "null"),
])
@pytest.mark.parametrize("through", ["drop-in", "elect"])
def test_unreadable_config_files(sb: Sandbox, files: Path, path: str, why: str, through: str) -> None:
    path = str(files / path) if not path.startswith("/") else path
    if through == "drop-in":
        run = invoke(sb, drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred",
                                   "--all-topic-partitions", "--command-config", path])
    else:
        run = invoke(sb, toolkit, ["elect", "--bootstrap-server", sb.bootstrap_servers, "--all-topic-partitions",
                                   "--command-config", path])
    assert_refused(run)
    assert why in run.err  # the drop-in's first line may be Kafka's (a missing file's path alone)


# -- command lines ------------------------------------------------------------------------------------

def drop_in_flags(sb: Sandbox, files: Path) -> dict[str, st.SearchStrategy[str] | None]:
    """The drop-in's flags with values that are good, bad, or odd (None: a flag without a value). Values
    that would make a valid run slow (an address nobody answers) are left out."""
    paths = st.sampled_from([str(files / n) for n in ("good.json", "bad.json", "nope.json", "a-directory")])
    configs = st.sampled_from([str(files / n) for n in ("good.properties", "bad.properties", "nope.properties")])
    numbers = st.sampled_from(["0", "1", "2", "-1", "1.5", "x", "", "nan", "inf", "-inf", "1e400", "0x10", "٣"])
    return {
        "--bootstrap-server": st.sampled_from([sb.bootstrap_servers, "", "nohost", "h:99999", ":", "[::1", " , "]),
        "--zookeeper": st.sampled_from(["", "h:abc", "h:0", "h:1//x", "h:1/.", "[::1:2181", "a b:1"]),
        "--no-wait": None,
        "--command-config": configs,
        "--admin.config": configs,
        "--election-type": st.sampled_from(["preferred", "UNCLEAN", "Preferred", "bogus", "", "préféré"]) | st.text(),
        "--topic": st.sampled_from(["t1", "nosuch", "", ".", "a b", "a\x00b", "x" * 300]) | st.text(max_size=10),
        "--partition": st.sampled_from(["0", "1", "+0", "-1", "2147483648", "abc", "٣", "1e3"]),
        "--all-topic-partitions": None,
        "--path-to-json-file": paths,
        "--output": st.sampled_from(["json", "text", "table", "auto", "xml", ""]),
        "--timeout": st.sampled_from(["2", "0", "-1", "nan", "inf", "abc", "1e308", "3000000"]),
        "--batch-size": numbers,
        "--batch-interval": st.sampled_from(["0", "0.01", "-1", "nan", "inf", "x"]),
        "--dry-run": None,
        "--debug": None,
    }


@st.composite
def command_lines(draw: st.DrawFn, flags: dict[str, st.SearchStrategy[str] | None],
                  valid: list[list[str]]) -> list[str]:
    """Random flags, alone or added to a valid command line (no arguments at all prints the help)."""
    args = list(draw(st.sampled_from([[], *valid])))
    chosen = draw(st.lists(st.sampled_from(sorted(flags)), min_size=0 if args else 1, max_size=7))
    for flag in chosen:
        value = flags[flag]
        args += [flag] if value is None else [flag, draw(value)]
    if draw(st.integers(0, 9)) == 0:  # a stray positional argument, an unknown flag, or a flag without its value
        args.insert(draw(st.integers(0, len(args))), draw(st.sampled_from(["extra", "--nope", "-x", "--topic", "--"])))
    return args


@settings(FUZZ, max_examples=300)
@given(data=st.data())
def test_drop_in_command_lines(sb: Sandbox, files: Path, data: st.DataObject) -> None:
    base = ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred"]
    valid = [[*base, "--all-topic-partitions"], [*base, "--topic", "t1", "--partition", "0"],
             [*base, "--path-to-json-file", str(files / "good.json")],
             ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "unclean", "--topic", "t1", "--partition",
              "1"]]
    args = data.draw(command_lines(drop_in_flags(sb, files), valid))
    run = invoke(sb, drop_in, args)
    assert_sane(run, debug="--debug" in args)
    event("refused" if run.code == 2 else f"exit {run.code}")


def elect_flags(sb: Sandbox, files: Path) -> dict[str, st.SearchStrategy[str] | None]:
    base = drop_in_flags(sb, files)
    regexes = st.sampled_from([".*", "t.", "t1", "nomatch", "(", "[", "*", "a{2,1}", "(?P<x>"]) | st.text(max_size=6)
    return {
        **{flag: base[flag] for flag in ("--bootstrap-server", "--command-config", "--path-to-json-file", "--output",
                                         "--timeout", "--batch-size", "--batch-interval", "--dry-run", "--debug",
                                         "--all-topic-partitions", "--topic")},
        "--election-type": st.sampled_from(["preferred", "unclean", "PREFERRED", "bogus", ""]),
        "--topic-regex": regexes,
        "--exclude-topic-regex": regexes,
        "-p": st.sampled_from(["t1:0", "t1:0,1", "t1:99", "nosuch:0", "t1:", ":0", "t1:a", "t1:-1", "t1:0,,1",
                               "t1:2147483648"]) | st.text(max_size=8),
        "--include-internal": None,
        "--controller-mode": st.sampled_from(["kraft", "zk", "bogus"]),
        "--yes": None,
    }


@settings(FUZZ, max_examples=300)
@given(data=st.data())
def test_elect_command_lines(sb: Sandbox, files: Path, data: st.DataObject) -> None:
    base = ["--bootstrap-server", sb.bootstrap_servers]
    valid = [[*base, "--topic", "t1"], [*base, "-p", "t1:0,1"], [*base, "--all-topic-partitions"],
             [*base, "--topic-regex", "t.*"], [*base, "--election-type", "unclean", "--topic", "t1"]]
    args = ["elect", *data.draw(command_lines(elect_flags(sb, files), valid))]
    run = invoke(sb, toolkit, args)
    debug = "--debug" in args
    resolved = run.code == 2 and (debug or error_line(run.err).startswith(RESOLUTION_ERRORS))
    assert_sane(run, refused_before_connecting=not resolved, debug=debug)
    event("refused after reading metadata" if resolved else "refused" if run.code == 2 else f"exit {run.code}")


BAD_SERVERS = ["nohost", "127.0.0.1:99999", "", "[::1", "h:1\nx"]
BAD_NUMBERS = [("--timeout", "nan"), ("--timeout", "inf"), ("--timeout", "3000000"), ("--batch-interval", "inf")]


@pytest.mark.parametrize("server", BAD_SERVERS)
def test_malformed_bootstrap_servers(sb: Sandbox, server: str) -> None:
    """Kafka's ClientUtils refuses these before connecting; kafka-python crashed on some (exit 3)."""
    run = invoke(sb, drop_in, ["--bootstrap-server", server, "--election-type", "preferred", "--all-topic-partitions"])
    assert assert_refused(run) == "Failed to create new KafkaAdminClient"  # Kafka's line, ClientUtils' below it
    assert run.err.splitlines()[1].startswith(
        ("Invalid url in bootstrap.servers", "Invalid port in bootstrap.servers", "No resolvable bootstrap urls"))
    assert_refused(invoke(sb, toolkit, ["elect", "--bootstrap-server", server, "--all-topic-partitions"]))


@pytest.mark.parametrize("output", ["text", "json"])
def test_bootstrap_hosts_that_do_not_resolve(sb: Sandbox, output: str) -> None:
    """Kafka's admin client resolves the names first: none resolving is an error at once, with Kafka's line,
    and exit 3 (unreachable: a DNS outage must page like one), naming the hosts; no timeout line, as Kafka.
    A name that does not resolve beside one that does is left out."""
    bad = "no-such-host.invalid:9092,999.999.999.999:9092"
    run = invoke(sb, drop_in, ["--bootstrap-server", bad, "--election-type", "preferred", "--all-topic-partitions",
                               "--output", output])
    assert run.code == 3 and run.sent == [] and "Traceback" not in run.err
    first, detail, hint = run.err.splitlines()
    assert (first, detail) == ("Failed to create new KafkaAdminClient", "No resolvable bootstrap urls given in "
                                                                        "bootstrap.servers")
    assert "no-such-host.invalid" in hint and "999.999.999.999" in hint
    if output == "text":
        assert run.out == ""
    else:
        assert json.loads(run.out)["summary"]["exit_code"] == 3
    run = invoke(sb, toolkit, ["status", "--bootstrap-server", "no-such-host.invalid:9092"])  # our line alone
    assert run.code == 3 and run.err.startswith("No resolvable bootstrap urls given in bootstrap.servers\n")
    from leader_election_cli.cluster.admin import bootstrap_addresses

    assert bootstrap_addresses(f"no-such-host.invalid:9092,{sb.bootstrap_servers}") == sb.bootstrap_servers.split(",")


@pytest.mark.parametrize("scheme", ["PLAINTEXT://", "SASL_PLAINTEXT://", "SASL_SSL://"])
def test_a_listener_name_before_the_address_is_accepted_as_kafka_does(scheme: str) -> None:
    """Kafka's HOST_PORT_PATTERN takes any prefix before the host; '_' was refused (exit 2)."""
    from leader_election_cli.cluster.admin import bootstrap_addresses

    assert bootstrap_addresses(f"{scheme}127.0.0.1:9092, {scheme}[::1]:9093") == [
        f"{scheme}127.0.0.1:9092", f"{scheme}[::1]:9093"]


@pytest.mark.parametrize("args", [
    ["--bootstrap-server", "SB", "--election-type", "preferred", "--topic", "t", "--partition", "\x1b" * 300],
    ["--bootstrap-server", "SB", "--election-type", "\udcef" * 300, "--all-topic-partitions"],
    ["elect", "--bootstrap-server", "SB", "-p", "\udcef" * 300 + ":1"],
    ["elect", "--bootstrap-server", "SB", "--topic-regex", "(" + "\x00" * 300],
    ["elect", "--bootstrap-server", "SB", "--topic", "--exclude-topic-regex", "\r"],  # click's usage error quotes it
    ["--bootstrap-server", "SB", "--election-type", "preferred", "--all-topic-partitions", "--" + "a\nb" * 400],
])
def test_hostile_values_still_make_short_lines(sb: Sandbox, args: list[str]) -> None:
    """Each escaped character is several characters long: an error line once grew to 1,500 of them."""
    args = [sb.bootstrap_servers if a == "SB" else a for a in args]
    assert_refused(invoke(sb, toolkit if args[0] == "elect" else drop_in, args))


@pytest.mark.parametrize("flag, value", BAD_NUMBERS)
def test_numbers_that_crashed_or_never_ended(sb: Sandbox, flag: str, value: str) -> None:
    """nan and inf got through click's FloatRange: an OverflowError (exit 1), or a pause without end;
    3,000,000 s overflowed ElectLeaders' 32-bit TimeoutMs."""
    assert assert_refused(invoke(sb, drop_in, ["--bootstrap-server", sb.bootstrap_servers, "--election-type",
                                               "preferred", "--all-topic-partitions", "--batch-size", "1", flag,
                                               value])).startswith(f"Invalid value for '{flag}'")
    assert_refused(invoke(sb, toolkit, ["elect", "--bootstrap-server", sb.bootstrap_servers, "--all-topic-partitions",
                                        "--batch-size", "1", flag, value]))
