"""A versioned JSON schema for every document a command prints or writes, each checked against real output."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from commands import run_command
from referencing import Registry, Resource

from leader_election_cli import kafka_errors
from leader_election_cli.cli.sandbox_command import write_ready_file
from leader_election_cli.cli.toolkit import cli
from leader_election_cli.model import Outcome
from leader_election_cli.reports.outcomes import OUTCOME_WORDS, PREDICTIONS, outcome_word
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.scenarios import build

SCHEMAS = resources.files("leader_election_cli").joinpath("schemas")
LOADED = {p.name: json.loads(p.read_text()) for p in SCHEMAS.iterdir() if p.name.endswith(".schema.json")}
REGISTRY = Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in LOADED.values())
NOWHERE = ["--bootstrap-server", "127.0.0.1:1", "--timeout", "0.5"]


def check(document: Any, schema: str) -> None:
    jsonschema.Draft202012Validator(LOADED[schema], registry=REGISTRY).validate(document)


def kl(*args: str) -> tuple[int, Any]:
    """The command's exit code and the JSON document it printed."""
    code, out, _ = run_command(cli, *args)
    return code, json.loads(out)


@pytest.fixture(scope="module")
def sb(module_sandbox_factory: Callable[..., Sandbox]) -> Sandbox:
    sandbox = module_sandbox_factory(3)
    build(sandbox, "imbalanced", topics=2, partitions=6, replication_factor=3)
    sandbox.create_topic("u", assignment={0: [1, 2]})
    return sandbox


def test_every_schema_is_valid_and_versioned() -> None:
    assert {"report.schema.json", "status.schema.json", "rebalance.schema.json", "moves.schema.json",
            "audit-line.schema.json", "restore-file.schema.json", "prefer-file.schema.json",
            "election-file.schema.json", "sandbox-ready.schema.json"} <= set(LOADED)
    for name, schema in LOADED.items():
        jsonschema.Draft202012Validator.check_schema(schema)
        if name not in ("election-file.schema.json", "prefer-file.schema.json", "weights-file.schema.json"):  # inputs
            assert "schema_version" in json.dumps(schema), name


def _outcome_words(node: Any, where: str) -> Iterator[tuple[str, list[str]]]:
    """Every list of outcome words in a schema: each `outcome` enum and the words of each object of counts
    per outcome (those with a prediction's count), with where it is."""
    if isinstance(node, list):
        for i, item in enumerate(node):
            yield from _outcome_words(item, f"{where}/{i}")
    if not isinstance(node, dict):
        return
    properties = node.get("properties", {})
    if "enum" in properties.get("outcome", {}):
        yield f"{where}/properties/outcome", properties["outcome"]["enum"]
    if {*PREDICTIONS, Outcome.PREDICTED.value} & set(properties):
        words = {o.value for o in Outcome} | set(OUTCOME_WORDS)
        yield f"{where}/properties", [p for p in properties if p in words]
    for key, value in node.items():
        yield from _outcome_words(value, f"{where}/{key}")


def test_outcome_word_gives_the_outcome_words() -> None:
    codes = (kafka_errors.NONE, kafka_errors.ELECTION_NOT_NEEDED, kafka_errors.PREFERRED_LEADER_NOT_AVAILABLE)
    assert {outcome_word(o, code) for o in Outcome for code in codes} == set(OUTCOME_WORDS)


def test_every_schema_lists_the_outcome_words_the_code_writes() -> None:
    """Each outcome enum and each object of counts per outcome is reports.outcomes.OUTCOME_WORDS (what
    outcome_word and outcome_counts give): no word missing, none the code no longer writes ("predicted")."""
    found = {f"{name}#{where}": words for name, schema in LOADED.items() for where, words in _outcome_words(schema, "")}
    assert {where.split("#")[0] for where in found} == {"report.schema.json", "balance.schema.json",
                                                        "rebalance.schema.json", "audit-line.schema.json"}, found
    for where, words in found.items():
        assert sorted(words) == sorted(OUTCOME_WORDS), where


def test_status(sb: Sandbox) -> None:
    code, document = kl("status", "--bootstrap-server", sb.bootstrap_servers, "--output", "json")
    check(document, "status.schema.json")
    assert document["not_preferred_leader_partitions"]
    code, document = kl("status", *NOWHERE, "--output", "json")
    assert code == 3
    check(document, "status.schema.json")


def test_rebalance_and_its_audit_line(sb: Sandbox, tmp_path: Path) -> None:
    audit = tmp_path / "audit.jsonl"
    for args in (["--dry-run", "-v"], ["-v"], ["-v"]):  # a plan, a run, nothing left to do
        code, document = kl("rebalance", "--bootstrap-server", sb.bootstrap_servers, "--output", "json",
                            "--lock-file", str(tmp_path / "lock"), "--audit-log", str(audit), *args)
        assert code == 0
        check(document, "rebalance.schema.json")
    code, document = kl("rebalance", *NOWHERE, "--output", "json", "--lock-file", str(tmp_path / "lock"),
                        "--audit-log", str(audit))
    assert code == 3
    check(document, "rebalance.schema.json")
    lines = [json.loads(line) for line in audit.read_text().splitlines()]
    assert len(lines) == 4 and lines[1]["done"]["elected"] > 0
    for line in lines:
        check(line, "audit-line.schema.json")
        assert set(OUTCOME_WORDS) <= set(line["done"])  # every word counted (unconfirmed and skipped were not)


def test_moves_and_the_restore_file(sb: Sandbox, tmp_path: Path) -> None:
    restore = tmp_path / "restore.json"
    b = ["--bootstrap-server", sb.bootstrap_servers, "--output", "json"]
    for args in (["prefer", "--topic", "topic-1", "--partition", "0", "--leader", "3", "--dry-run"],
                 ["demote", "--broker", "2", "--restore-file", str(restore)],
                 ["restore", str(restore), "--dry-run"], ["restore", str(restore)]):
        code, document = kl(*args, *b)
        assert code == 0, document
        check(document, "moves.schema.json")
    check(json.loads(restore.read_text()), "restore-file.schema.json")
    code, document = kl("demote", "--broker", "2", *NOWHERE, "--output", "json")
    assert code == 3
    check(document, "moves.schema.json")


def test_elections_and_refusals(sb: Sandbox) -> None:
    b = ["--bootstrap-server", sb.bootstrap_servers, "--output", "json"]
    for args in (["plan", "--all-topic-partitions"], ["elect", "--topic", "topic-1"]):
        code, document = kl(*args, *b)
        check(document, "report.schema.json")
    code, document = kl("elect", "--all-topic-partitions", *NOWHERE, "--output", "json")
    assert code == 3
    check(document, "report.schema.json")


def test_the_sandbox_ready_file(tmp_path: Path) -> None:
    for tls in (False, True):
        with Sandbox(brokers=2, tls=tls) as sandbox:
            write_ready_file(tmp_path / f"ready-{tls}.json", sandbox)  # never over an existing file
        document = json.loads((tmp_path / f"ready-{tls}.json").read_text())
        check(document, "sandbox-ready.schema.json")
        assert (document["ca_file"] is not None) is tls
