"""Special files and pathological sizes as input (issue 18, class 6): regular files only, refused at once
(exit 2) otherwise; sizes and counts bounded with a clear message; parsing linear in the input, shown by
counting the Python lines executed at n and at 10 n (a quadratic parser runs some 100 times as many)."""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import cli
from leader_election_cli.config import properties, tls
from leader_election_cli.errors import InputError
from leader_election_cli.operations import restore_file
from leader_election_cli.selection.files import load_prefer_file

UNUSED = "127.0.0.1:1"  # nothing listens: every case below must stop before connecting


def special(kind: str, tmp_path: Path) -> str:
    if kind == "fifo":
        path = tmp_path / "fifo"
        os.mkfifo(path)
        return str(path)
    return {"dev-zero": "/dev/zero", "dev-full": "/dev/full", "directory": str(tmp_path)}[kind]


KINDS = ["fifo", "dev-zero", "dev-full", "directory"]


def properties_file(tmp_path: Path, text: str) -> str:
    path = tmp_path / "client.properties"
    path.write_text(text)
    return str(path)


INPUTS: dict[str, Callable[[str, Path], list[str]]] = {
    "election file": lambda f, _: ["--bootstrap-server", UNUSED, "--election-type", "preferred",
                                   "--path-to-json-file", f],
    "prefer file": lambda f, _: ["prefer", "--bootstrap-server", UNUSED, "--path-to-json-file", f],
    "restore file": lambda f, _: ["restore", "--bootstrap-server", UNUSED, f],
    "properties file": lambda f, _: ["status", "--bootstrap-server", UNUSED, "--command-config", f],
    "truststore": lambda f, tmp: ["status", "--bootstrap-server", UNUSED, "--command-config", properties_file(
        tmp, f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={f}\n")],
    # issue 34
    "plan file": lambda f, _: ["balance", "--bootstrap-server", UNUSED, "--execute", "--plan-file", f],
    "weights file": lambda f, _: ["balance", "--bootstrap-server", UNUSED, "--weights", f],
    "token file": lambda f, tmp: ["status", "--bootstrap-server", UNUSED, "--command-config", properties_file(
        tmp, "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.login.callback.handler.class="
             "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler\n"
             f"sasl.oauthbearer.token.endpoint.url=file://{f}\nsasl.jaas.config=org.apache.kafka.common.security."
             'oauthbearer.OAuthBearerLoginModule required clientId="c" clientSecret="s";\n')],
}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("what", list(INPUTS))
def test_a_special_file_as_input_is_refused_at_once(what: str, kind: str, tmp_path: Path) -> None:
    """A FIFO blocked for the whole timeout or forever; /dev/zero was read until the size limit."""
    args = INPUTS[what](special(kind, tmp_path), tmp_path)
    result = CliRunner().invoke(drop_in if what == "election file" else cli, args)
    assert result.exit_code == 2, result.output
    lines = result.stderr.splitlines()
    expected = "Is a directory" if kind == "directory" else "not a regular file"
    # the election file: Kafka's line alone, the reason on its own line; the others: one line
    kafkas = "java.io.IOException: " if what == "election file" and kind == "directory" else ""  # Java's
    assert lines[0].startswith(f"{kafkas}Unable to read ") and expected in "\n".join(lines[:2]), lines
    assert [line.startswith("Hint:") for line in lines] == [False] * (1 + bool(kafkas)) + [True], lines  # issue 34


@pytest.mark.timeout(30)
def test_completion_never_blocks_on_a_fifo_as_command_config(tmp_path: Path) -> None:
    from leader_election_cli.cli import completion

    with pytest.raises(InputError, match="FIFO"):
        completion.topic_names(UNUSED, special("fifo", tmp_path))


def test_a_file_over_its_size_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(restore_file, "MAX_RESTORE_FILE_BYTES", 64)
    big = tmp_path / "restore.json"
    big.write_text(json.dumps({"partitions": [{"topic": "t", "partition": p} for p in range(10)]}))
    with pytest.raises(InputError, match="larger than 64 bytes"):
        restore_file.load_restore_file(str(big))


def test_a_client_id_longer_than_a_request_header_allows_is_an_input_error(tmp_path: Path) -> None:
    """40,000 characters (or a million continuation lines) gave exit 3, 'Could not reach any broker'."""
    for text in ("client.id=" + "x" * 40_000 + "\n", "client.id=a\\\n" + "b\\\n" * 1_000_000 + "c\n"):
        result = CliRunner().invoke(cli, ["status", "--bootstrap-server", UNUSED, "--command-config",
                                          properties_file(tmp_path, text)])
        assert result.exit_code == 2, result.output
        assert "client.id in" in result.stderr and "longer than 32767 bytes" in result.stderr
        assert "xxxx" not in result.stderr and "bbbb" not in result.stderr


def test_a_hundred_thousand_bootstrap_servers_are_refused_at_once() -> None:
    result = CliRunner().invoke(cli, ["status", "--bootstrap-server", ",".join(["localhost:9092"] * 100_000)])
    assert result.exit_code == 2, result.output
    assert "Too many bootstrap servers: 100000 given, at most 1000" in result.stderr


# -- linear time, by counting ---------------------------------------------------------------------------

def lines_run(call: Callable[[], object]) -> int:
    """How many Python lines `call()` executes (its own and every library's it calls)."""
    count = 0

    def tracer(frame: object, event: str, arg: object) -> Callable[..., object]:
        nonlocal count
        if event == "line":
            count += 1
        return tracer

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        call()
    except InputError:
        pass
    finally:
        sys.settrace(previous)
    return count


def linear(make: Callable[[int], Callable[[], object]], n: int) -> None:
    small, large = lines_run(make(n)), lines_run(make(10 * n))
    assert large <= 15 * small, f"{small} lines at n={n}, {large} at 10n: not linear"


def test_a_restore_file_with_thousands_of_replicas_is_read_in_linear_time(tmp_path: Path) -> None:
    """Objects as replicas: jsonschema's uniqueItems compared them pair by pair (5,000: 46 s)."""
    def make(n: int) -> Callable[[], object]:
        path = tmp_path / f"restore-{n}.json"
        path.write_text(json.dumps({"schema_version": 1, "command": "prefer", "created_at": "2024-01-01T00:00:00Z",
                                    "cluster_id": None, "partitions": [
                                        {"topic": "t", "partition": 0, "replicas": [{"id": i} for i in range(n)],
                                         "leader": 0}]}))
        return lambda: restore_file.load_restore_file(str(path))

    linear(make, 40)


def test_a_prefer_file_is_read_in_linear_time(tmp_path: Path) -> None:
    def make(n: int) -> Callable[[], object]:
        path = tmp_path / f"prefer-{n}.json"
        path.write_text(json.dumps({"partitions": [{"topic": "t", "partition": p, "leader": 1} for p in range(n)]}))
        return lambda: load_prefer_file(str(path))

    linear(make, 50)


def test_continuation_lines_are_read_in_linear_time() -> None:
    linear(lambda n: lambda: properties.read_properties("client.id=a\\\n" + "b\\\n" * n + "c\n"), 200)


@pytest.mark.timeout(60)
def test_pem_blocks_are_found_in_one_pass_even_without_an_end() -> None:
    """200,000 BEGIN lines and no END: the backtracking regex rescanned the rest of the text from each one
    (20,000 hung it); one pass over the markers finishes at once."""
    assert tls._pem_blocks("-----BEGIN CERTIFICATE-----\nAAAA\n" * 200_000, {"CERTIFICATE"}) == []


_OLD_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END \1-----", re.S)  # the oracle, on small texts
_PIECES = ["-----BEGIN A-----", "-----END A-----", "-----BEGIN B-----", "-----END B-----", "x", "\n", "-----",
           "BEGIN A", "END ", "A", "-", "-----END A-----BEGIN A-----"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=16))
def test_pem_blocks_are_the_blocks_the_regex_found(pieces: list[str]) -> None:
    text = "".join(pieces)
    expected = [(m[1], m.start(), m.start(2), m.end(2), m.end()) for m in _OLD_PEM_BLOCK.finditer(text)]
    assert list(tls._pem_spans(text)) == expected


PLAN = {"schema_version": 1, "command": "balance", "created_at": "2026-11-27T22:45:51Z", "cluster_id": None,
        "dry_run": True, "options": {"exclude_brokers": [], "exclude_topic_regex": None, "rack_aware": False,
                                     "weight": None, "max_moves": None},
        "summary": {"max_leaders_before": 6, "max_leaders_after": 2, "lower_bound": 2, "optimal": True,
                    "spread_before": 6, "spread_after": 0, "partitions_changed": 4, "elect_only": 0,
                    "changes_for_optimum": 4, "movable": 6, "excluded": 0, "rack_lower_bound": None, "load": None,
                    "max_leaders_now": None, "exit_code": 0, "interrupted": False, "stopped": None},
        "brokers": [{"broker": b, "rack": None, "may_lead": True, "leaders_before": 0, "leaders_after": 0,
                     "load_before": None, "load_after": None, "leaders_now": None} for b in (1, 2, 3)],
        "racks": None, "partitions": [], "skipped": [], "restore_file": None, "plan_file": "plan.json"}


def _plan_file(tmp_path: Path, n: int) -> Path:
    path = tmp_path / f"plan-{n}.json"
    plan = dict(PLAN)
    plan["partitions"] = [{"topic": f"t{p % 50}", "partition": p // 50, "replicas_before": [1, 2, 3],
                           "replicas_after": [2, 1, 3], "leader_before": 1, "leader_after": 2} for p in range(n)]
    path.write_text(json.dumps(plan))
    return path


def test_a_plan_file_is_checked_in_a_few_lines_per_entry(tmp_path: Path) -> None:
    """jsonschema ran some 2,000 lines per entry: 200,000 entries (26 MiB) took 84 s of CPU (issue 34)."""
    from leader_election_cli.operations.plan_file import load_plan_file

    def make(n: int) -> Callable[[], object]:
        path = _plan_file(tmp_path, n)
        return lambda: load_plan_file(str(path))

    linear(make, 100)
    per_entry = (lines_run(make(2000)) - lines_run(make(1000))) / 1000
    assert per_entry < 100, per_entry


def test_a_bad_plan_entry_is_still_named_by_the_schema(tmp_path: Path) -> None:
    from leader_election_cli.operations.plan_file import load_plan_file

    path = _plan_file(tmp_path, 1000)
    plan = json.loads(path.read_text())
    plan["partitions"][777]["replicas_after"] = [2, 2, 3]
    path.write_text(json.dumps(plan))
    with pytest.raises(InputError, match=r"at \$\.partitions\[777\]\.replicas_after: .* non-unique"):
        load_plan_file(str(path))
