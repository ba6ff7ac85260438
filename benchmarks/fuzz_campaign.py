"""A longer fuzzing campaign than the test suite's: mutated inputs against every parser and both commands.

    .venv/bin/python benchmarks/fuzz_campaign.py [--cases N] [--seed S] [--only TARGET ...] [--out DIR]

Where tests/test_fuzz_input.py draws structured cases with hypothesis, this campaign mutates valid seeds
byte by byte (flips, insertions of tokens that parsers trip on, deletions, truncations, splices,
repeats), in the spirit of a coverage-free AFL, with a fixed seed so that a run can be repeated. Each
target checks one promise:

- election-file: `load_election_file` accepts exactly what an independent oracle calls valid, and refuses
  the rest with a one-line InputError (no other exception, at most 1,000 characters);
- config-file: `load_client_settings` returns settings or a one-line InputError, and neither the error,
  its hint, a warning nor the settings' repr shows a password or a private key of the file, unless the
  file also has that text somewhere public;
- jaas: `parse_jaas_config` returns login modules or a ValueError that never quotes the password;
- partition-spec: `parse_partition_spec` returns partitions or a one-line InputError;
- bootstrap: `bootstrap_addresses` refuses with an InputError, says no host name resolves (UnreachableError,
  exit 3) or returns addresses kafka-python parses;
- drop-in / elect: the commands (in this process, against a sandbox that counts requests) exit with a
  documented code, never print a traceback or an internal error, and an exit 2 sends nothing at all
  (elect: no write; nothing at all unless the error names what the metadata showed missing).

A failing input is written to --out (one file per failure) and counted. The last line of stdout is the
JSON object benchmarks/run reads: cases tried and failures found per target (target: 0 failures).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import random
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from kafka.cluster import collect_hosts

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import cli as toolkit
from leader_election_cli.cluster.admin import bootstrap_addresses
from leader_election_cli.config.jaas import parse_jaas_config
from leader_election_cli.config.properties import parse_properties
from leader_election_cli.config.settings import load_client_settings
from leader_election_cli.errors import InputError, UnreachableError
from leader_election_cli.sandbox import Sandbox

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from election_file_oracle import is_valid_election_file  # noqa: E402  (the tests' oracle)

from leader_election_cli.sandbox.security import make_certificates
from leader_election_cli.selection.files import load_election_file
from leader_election_cli.selection.names import parse_partition_spec

SECRET = "Fuzz-Secret-93f1"
MAX_LINE = 1000
DOCUMENTED_EXIT_CODES = {0, 1, 2, 3, 4, 5, 129, 130, 143}
WRITE_APIS = {43, 45}  # ElectLeaders, AlterPartitionReassignments
RESOLUTION_ERRORS = ("Unknown topic(s)", "Unknown partition(s)", "The selection matches no partition", "Topic(s) ")
TOKENS = [b"{", b"}", b"[", b"]", b'"', b",", b":", b"\\", b"\\u", b"\\ud800", b"\x00", b"\n", b"\r", b"\t", b" ",
          b"-", b"+", b"0", b"-1", b"2147483648", b"1e400", b"9" * 400, b"NaN", b"Infinity", b"null", b"true",
          b"\xff", b"\xc3\xa9", b"\xe2\x80\xae", b"=", b"#", b"!", b";", b"'", b"/*", b"//", b"required",
          b"\xef\xbb\xbf", b"topic", b"partition", b"partitions", b"[" * 200, b"]" * 200]

Check = Callable[[bytes], str]  # returns how the input ended ("accepted", "refused", ...); raises on a failure


# -- mutation -----------------------------------------------------------------------------------------

def mutate(data: bytes, rng: random.Random, corpus: list[bytes]) -> bytes:
    """One to four random edits of `data`."""
    out = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        at = rng.randint(0, len(out))
        kind = rng.randrange(7)
        if kind == 0 and out:  # flip a bit
            i = rng.randrange(len(out))
            out[i] ^= 1 << rng.randrange(8)
        elif kind == 1:  # insert a token parsers trip on
            out[at:at] = rng.choice(TOKENS)
        elif kind == 2:  # delete a run
            del out[at:at + rng.randint(1, 8)]
        elif kind == 3:  # truncate
            del out[at:]
        elif kind == 4:  # splice with another seed
            other = rng.choice(corpus)
            out[at:] = other[rng.randint(0, len(other)):]
        elif kind == 5 and out:  # repeat a slice
            i = rng.randrange(len(out))
            out[at:at] = out[i:i + rng.randint(1, 64)] * rng.randint(2, 50)
        else:  # a random byte
            out[at:at] = bytes([rng.randrange(256)])
    return bytes(out)


# -- the promises -------------------------------------------------------------------------------------

def one_line(error: InputError) -> None:
    assert "\n" not in error.message and len(error.message) <= MAX_LINE, f"not one short line: {error.message!r}"
    assert error.hint is None or "\n" not in error.hint, f"hint of several lines: {error.hint!r}"




def election_file_check(directory: Path) -> Check:
    path = directory / "election.json"

    def check(data: bytes) -> str:
        path.write_bytes(data)
        expected = is_valid_election_file(data)
        try:
            load_election_file(str(path))
        except InputError as error:
            one_line(error)
            assert not expected, f"a valid file was refused: {error.message}"
            return "refused"
        assert expected, "an invalid file was accepted"
        return "accepted"
    return check


SECRET_KEYS = ("sasl.jaas.config", "ssl.key.password", "ssl.keystore.password", "ssl.truststore.password",
               "ssl.keystore.key")


def secret_values(text: str) -> set[str]:
    """The passwords and keys of the file that appear nowhere public (a key, or another key's value): a
    mutation may well move the password into client.id, which may then be shown."""
    try:
        props = parse_properties(text)
    except InputError:
        return set()
    secrets = {props[key] for key in SECRET_KEYS if key in props and key != "sasl.jaas.config"}
    with contextlib.suppress(ValueError):  # the JAAS config's secret is its password, not the login module's name
        secrets |= {m.options.get("password", "") for m in parse_jaas_config(props.get("sasl.jaas.config", ""))}
    public = [*props, *(value for key, value in props.items() if key not in SECRET_KEYS)]
    return {s for s in secrets if len(s) >= 8 and not any(s in p for p in public)}


def config_file_check(directory: Path) -> Check:
    path = directory / "client.properties"

    def check(data: bytes) -> str:
        path.write_bytes(data)
        secrets = secret_values(data.decode("latin-1"))
        try:
            settings = load_client_settings(str(path), 2000)
        except InputError as error:
            one_line(error)
            assert not any(s in error.message + (error.hint or "") for s in secrets), "a secret is in the error"
            return "refused"
        shown = " ".join(settings.warnings) + repr(settings)
        assert not any(s in shown for s in secrets), "a secret is in a warning or the settings' repr"
        return "accepted"
    return check


def jaas_check(data: bytes) -> str:
    text = data.decode("latin-1")
    try:
        parse_jaas_config(text)
    except ValueError as error:
        assert SECRET not in str(error), "the password is in the error"
        return "refused"
    return "accepted"


def partition_spec_check(data: bytes) -> str:
    try:
        parse_partition_spec(data.decode("utf-8", "surrogateescape"))
    except InputError as error:
        one_line(error)
        return "refused"
    return "accepted"


def bootstrap_check(data: bytes) -> str:
    try:
        addresses = bootstrap_addresses(data.decode("utf-8", "surrogateescape"))
    except InputError as error:
        one_line(error)
        return "refused"
    except UnreachableError as error:  # no host name resolves: exit 3, as Kafka's "No resolvable bootstrap urls"
        one_line(error)
        return "unresolvable"
    collect_hosts(addresses)  # what kafka-python does with them first: it must not crash
    return "accepted"


_OUT, _ERR = io.StringIO(), io.StringIO()


def command_check(sb: Sandbox, program: object, toolkit_elect: bool) -> Check:
    """Arguments are NUL-separated in the input; a short --timeout is added last (the last one counts), so
    that an address mutated into one nobody answers costs a second, not thirty."""
    def check(data: bytes) -> str:
        args = [a.decode("utf-8", "surrogateescape") for a in data.split(b"\x00")] + ["--timeout", "1"]
        debug = "--debug" in args
        for stream in (_OUT, _ERR):
            stream.seek(0)
            stream.truncate()
        before = len(sb.request_log)
        with redirect_stdout(_OUT), redirect_stderr(_ERR):
            try:
                program.main(args, prog_name="fuzz")
                code = 0
            except SystemExit as done:
                code = done.code if isinstance(done.code, int) else 1
        sent = {r.api_key for r in sb.request_log[before:]}
        err = _ERR.getvalue()
        assert code in DOCUMENTED_EXIT_CODES, f"exit {code}"
        assert "Internal error" not in err, err
        assert debug or "Traceback" not in _OUT.getvalue() + err, err
        if code != 2:
            return f"exit {code}"
        assert not sent & WRITE_APIS, f"refused, but sent {sent}"
        lines = [line for line in err.splitlines() if not line.startswith(("Warning", "Option --admin.config"))]
        resolved = toolkit_elect and bool(lines) and lines[0].startswith(RESOLUTION_ERRORS)
        assert debug or resolved or not sent, f"refused before connecting, but sent {sent}"
        return "refused"
    return check


# -- seeds --------------------------------------------------------------------------------------------

def seeds(target: str, directory: Path, sb: Sandbox | None) -> list[bytes]:
    ca = directory / "ca.pem"
    if target == "election-file":
        return [json.dumps({"partitions": [{"topic": f"t{i}", "partition": p} for i in range(n) for p in range(2)]})
                .encode() for n in (0, 1, 3)] + [b'{"partitions": [{"topic": "a.b_c-1", "partition": 2147483647}]}']
    if target == "config-file":
        jaas = ('sasl.jaas.config=org.apache.kafka.common.security.{m} required username="admin" '
                f'password="{SECRET}";\n')
        return [b"security.protocol=PLAINTEXT\nrequest.timeout.ms=1000\nclient.id=fuzz\n",
                ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n" + jaas.format(m="plain.PlainLoginModule"))
                .encode(),
                ("security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n" + jaas.format(
                    m="scram.ScramLoginModule") + f"ssl.truststore.type=PEM\nssl.truststore.location={ca}\n").encode(),
                f"security.protocol=SSL\nssl.truststore.location={ca}\nssl.endpoint.identification.algorithm=\n"
                f"# comment\n! comment\nkey\\u0041=va\\\n  lue\nssl.key.password={SECRET}\n".encode("latin-1")]
    if target == "jaas":
        return [f'org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="{SECRET}";'
                .encode(), f"x required a=b c='{SECRET}'; y optional;".encode(),
                f'/* c */ m sufficient password="{SECRET}\\n\\101" // x\n;'.encode()]
    if target == "partition-spec":
        return [b"orders:0", b"orders:0,1,2", b"a.b_c-d:2147483647", b"t:1:2"]
    if target == "bootstrap":
        return [b"localhost:9092", b"a:1,b:2", b"[::1]:9092", b"PLAINTEXT://h:9092", b" h:1 , , h:2 "]
    assert sb is not None
    good = directory / "good.json"
    base = ["--bootstrap-server", sb.bootstrap_servers]
    if target == "drop-in":
        argvs = [[*base, "--election-type", "preferred", "--all-topic-partitions", "--output", "json"],
                 [*base, "--election-type", "unclean", "--topic", "t1", "--partition", "0", "--timeout", "2"],
                 [*base, "--election-type", "preferred", "--path-to-json-file", str(good), "--batch-size", "1"],
                 [*base, "--election-type", "PREFERRED", "--topic", "t1", "--partition", "1", "--dry-run"]]
    else:
        argvs = [["elect", *base, "--topic", "t1", "--dry-run"], ["elect", *base, "-p", "t1:0,1", "--output", "json"],
                 ["elect", *base, "--topic-regex", "t.*", "--exclude-topic-regex", "x", "--batch-size", "1"],
                 ["elect", *base, "--election-type", "unclean", "--all-topic-partitions", "--yes"]]
    return [b"\x00".join(a.encode() for a in argv) for argv in argvs]


# -- the campaign -------------------------------------------------------------------------------------

TARGETS = ("election-file", "config-file", "jaas", "partition-spec", "bootstrap", "drop-in", "elect")
SLOW = {"drop-in", "elect"}  # each case may be a real election: a tenth as many cases


def campaign(target: str, check: Check, corpus: list[bytes], cases: int, rng: random.Random,
             out: Path) -> dict[str, object]:
    outcomes: dict[str, int] = {}
    failures = 0
    started = time.monotonic()
    for number in range(cases):
        data = mutate(rng.choice(corpus), rng, corpus)
        try:
            ending = check(data)
        except Exception as failure:  # a broken promise, or any unexpected exception: both are findings
            failures += 1
            (out / f"{target}-{number}.bin").write_bytes(data)
            (out / f"{target}-{number}.txt").write_text("".join(traceback.format_exception(failure)))
            continue
        outcomes[ending] = outcomes.get(ending, 0) + 1
        if ending == "accepted" and len(corpus) < 200:
            corpus.append(data)  # valid inputs make good seeds for the next mutations
    seconds = time.monotonic() - started
    return {"target": target, "cases": cases, "failures": failures, "outcomes": outcomes, "seconds": seconds}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=20_000, help="cases per parser target (commands: a tenth)")
    parser.add_argument("--seed", type=int, default=9)
    parser.add_argument("--only", nargs="+", choices=TARGETS, default=list(TARGETS))
    parser.add_argument("--out", type=Path, help="where failing inputs go (default: a new temporary directory)")
    options = parser.parse_args()
    out = options.out or Path(tempfile.mkdtemp(prefix="fuzz-failures-"))
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(options.seed)
    results = []
    with tempfile.TemporaryDirectory(prefix="fuzz-") as tmp, Sandbox(brokers=3) as sb:
        directory = Path(tmp)
        sb.create_topic("t1", assignment={0: [1, 2, 3], 1: [2, 3, 1]})
        (directory / "good.json").write_text('{"partitions": [{"topic": "t1", "partition": 0}]}')
        make_certificates(directory)  # ca.pem, for the TLS seeds
        checks: dict[str, Check] = {
            "election-file": election_file_check(directory), "config-file": config_file_check(directory),
            "jaas": jaas_check, "partition-spec": partition_spec_check, "bootstrap": bootstrap_check,
            "drop-in": command_check(sb, drop_in, False), "elect": command_check(sb, toolkit, True),
        }
        for target in options.only:
            cases = options.cases // 10 if target in SLOW else options.cases
            result = campaign(target, checks[target], seeds(target, directory, sb), cases, rng, out)
            results.append(result)
            print(f"{target:15} {result['cases']:7} cases  {result['failures']:3} failures  "
                  f"{result['cases'] / result['seconds']:8.0f} cases/s  {result['outcomes']}", file=sys.stderr)
    total = sum(r["failures"] for r in results)
    print(f"{sum(r['cases'] for r in results)} cases tried, {total} failures found"
          + (f" (inputs in {out})" if total else ""))
    figures = [{"name": f"{r['target']}: cases tried", "value": r["cases"], "unit": "cases", "target": None}
               for r in results]
    figures += [{"name": f"{r['target']}: failures found", "value": r["failures"], "unit": "failures", "target": 0,
                 "goal": "max"} for r in results]
    print(json.dumps({"benchmark": "fuzz_campaign", "figures": figures}))


if __name__ == "__main__":
    main()
