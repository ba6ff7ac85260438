"""The smaller ones of issue 18 (class 8): values that were internal errors or hangs, the sandbox's --run and
non-ASCII SASL passwords, and what the cluster sends printed inert."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from commands import BIN
from hostile_server import hostile_server

from leader_election_cli import kafka_errors
from leader_election_cli.cli.toolkit import cli
from leader_election_cli.model import ElectionType, Outcome, PartitionResult, TopicPartition
from leader_election_cli.reports.election import ElectionReport
from leader_election_cli.sandbox import Sandbox

HUGE_REPEAT = "a{4294967296}"


@pytest.mark.parametrize("args", [
    ["elect", "--topic-regex", HUGE_REPEAT], ["elect", "--topic", "t", "--exclude-topic-regex", HUGE_REPEAT],
    ["demote", "--broker", "1", "--topic-regex", HUGE_REPEAT],
    ["rebalance", "--threshold", "nan"], ["status", "--fail-above", "nan"], ["rebalance", "--threshold", "inf"],
    ["balance", "--exclude-topic-regex", HUGE_REPEAT],
])
def test_values_that_were_internal_errors_are_refused_before_anything_is_sent(args: list[str]) -> None:
    with Sandbox(brokers=1) as sb:
        result = CliRunner().invoke(cli, [*args, "--bootstrap-server", sb.bootstrap_servers])
        sent = sb.request_count()
    assert result.exit_code == 2, result.output
    assert "Internal error" not in result.stderr
    assert sent == 0


@pytest.mark.timeout(30)
@pytest.mark.parametrize(("run", "message"), [("", "--run needs a command"), ("   ", "--run needs a command"),
                                              ("echo 'unbalanced", "cannot be split into words: No closing quotation")])
def test_sandbox_run_is_checked_before_the_sandbox_starts(run: str, message: str) -> None:
    """An empty --run served forever; an unbalanced quote was an internal error."""
    result = CliRunner().invoke(cli, ["sandbox", "--brokers", "1", "--run", run])
    assert result.exit_code == 2, result.output
    assert message in result.stderr


@pytest.mark.timeout(30)
@pytest.mark.parametrize("options", [["--tls-cert", "{bad}", "--tls-key", "{bad}"], ["--tls-client-ca", "{bad}"]])
def test_sandbox_tls_files_that_are_not_pem_are_input_errors(options: list[str], tmp_path: Path) -> None:
    """They were internal errors (ssl.SSLError from the TLS context)."""
    bad = tmp_path / "not.pem"
    bad.write_text("not PEM\n")
    result = CliRunner().invoke(cli, ["sandbox", "--brokers", "1", "--tls",
                                      *[str(bad) if o == "{bad}" else o for o in options], "--run", "true"])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Cannot start the sandbox: ") and "Internal error" not in result.stderr


OAUTH = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"


@pytest.mark.parametrize("config", [
    f'security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.jaas.config={OAUTH} required '
    'unsecuredLoginStringClaim_sub="a" unsecuredLoginLifetimeSeconds="\\u00b2";\n',
    "security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\nsasl.login.connect.timeout.ms=\\u00b2\n"
    f'sasl.jaas.config={OAUTH} required unsecuredLoginStringClaim_sub="a";\n',
    "security.protocol=SSL\nssl.truststore.type=PEM\n"
    "ssl.truststore.certificates=-----BEGIN CERTIFICATE-----\\u00e9AAAA-----END CERTIFICATE-----\n",
])
def test_config_values_that_were_internal_errors_are_input_errors(config: str, tmp_path: Path) -> None:
    """A superscript digit passed str.isdigit and failed int(), echoing the value; a non-ASCII PEM body was
    a TypeError from the ssl module."""
    path = tmp_path / "client.properties"
    path.write_text(config)
    result = CliRunner().invoke(cli, ["status", "--bootstrap-server", "127.0.0.1:1", "--command-config", str(path)])
    assert result.exit_code == 2, result.output
    assert "Internal error" not in result.stderr and "\u00b2" not in result.stderr and "²" not in result.stderr


PLAIN = "org.apache.kafka.common.security.plain.PlainLoginModule"


@pytest.mark.parametrize(("server_password", "expected"), [("päss€", 0), ("other", 4)])
def test_a_non_ascii_sasl_plain_password(server_password: str, expected: int, tmp_path: Path,
                                         caplog: pytest.LogCaptureFixture) -> None:
    """The sandbox compared passwords with compare_digest on str, which refuses non-ASCII: a traceback per login."""
    config = tmp_path / "client.properties"
    config.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                      f'sasl.jaas.config={PLAIN} required username="admin" password="p\\u00e4ss\\u20ac";\n')
    with Sandbox(brokers=1, sasl_users={"admin": server_password}) as sb:
        result = subprocess.run([sys.executable, "-c", "from leader_election_cli.cli.toolkit import main; main()",
                                 "status", "--bootstrap-server", sb.bootstrap_servers, "--command-config",
                                 str(config), "--timeout", "5", "--output", "json"],
                                capture_output=True, text=True, timeout=60)
    assert result.returncode == expected, result.stderr
    assert "Traceback" not in caplog.text


EVIL_TOPIC = "t\x1b[2J\x1b]0;owned\x07[link=http://evil.example]click[/link][bold]x"
EVIL_ERROR = "broker says \x1b[31mred\x1b[0m [blink]now[/blink]"


def _report() -> ElectionReport:
    return ElectionReport(ElectionType.PREFERRED, [
        PartitionResult(TopicPartition(EVIL_TOPIC, 0), Outcome.FAILED, kafka_errors.PREFERRED_LEADER_NOT_AVAILABLE,
                        EVIL_ERROR, 1, 1),
        PartitionResult(TopicPartition(EVIL_TOPIC, 1), Outcome.ELECTED, 0, None, 2, 1)])


@pytest.mark.parametrize("mode", ["table", "text"])
def test_what_the_cluster_sends_is_printed_inert(mode: str) -> None:
    """Kafka never allows such names, but a broker that is not Kafka may send them: no escape sequence
    reaches the terminal, and rich markup is printed as written, not applied."""
    from leader_election_cli.render.output import render

    out, err = io.StringIO(), io.StringIO()
    render(_report(), mode, out, err)
    text = out.getvalue() + err.getvalue()
    assert "\x1b" not in text and "\x07" not in text
    assert "\\x1b[2J" in text and "\\x1b[31mred" in text
    assert "[link=http://evil.example]click[/link][bold]x" in text and "[blink]now[/blink]" in text


def test_moves_tables_print_topic_names_inert() -> None:
    from leader_election_cli.render.moves import render_moves_table
    from leader_election_cli.reports.moves import MoveReport, MoveResult

    report = MoveReport("prefer", [MoveResult(TopicPartition(EVIL_TOPIC, 0), Outcome.FAILED, (1, 2), (1, 2), 1, 1, 2,
                                              kafka_errors.PREFERRED_LEADER_NOT_AVAILABLE, EVIL_ERROR)])
    out, err = io.StringIO(), io.StringIO()
    render_moves_table(report, out, err)
    assert "\x1b" not in out.getvalue() + err.getvalue()


MANY_IDS = ",".join(map(str, range(2000, 12_000)))  # 10,000 node ids the cluster does not have (its KRaft
#                                                     controllers are 1000-1002)


@pytest.mark.parametrize("args", [["can-stop", MANY_IDS], ["roll", "--brokers", MANY_IDS, "--exec", "true"],
                                  ["balance", "--exclude-broker", MANY_IDS]])
def test_a_long_list_of_unknown_brokers_is_quoted_cut(args: list[str]) -> None:
    """The error lines were 23,962 (can-stop) and 48,963 characters (roll --brokers): ten ids, then a count."""
    with Sandbox(brokers=3) as sb:
        sb.create_topic("t", assignment={0: [1, 2, 3]})
        result = CliRunner().invoke(cli, [*args, "--bootstrap-server", sb.bootstrap_servers, "--output", "json"])
    assert result.exit_code == 2, result.output
    line, hint = result.stderr.splitlines()
    assert "2000,2001,2002,2003,2004,2005,2006,2007,2008,2009 ... (9990 more)" in line and len(line) < 200, line


def test_a_quoted_list_is_ten_items_each_cut_then_a_count() -> None:
    from leader_election_cli.errors import listed

    assert listed([1, 2, 3], ",") == "1,2,3"
    assert listed(range(12)) == "0, 1, 2, 3, 4, 5, 6, 7, 8, 9 ... (2 more)"
    quoted = listed(["x" * 10_000, "a\nb"] * 5_000)
    assert quoted.endswith(" ... (9990 more)") and len(quoted) < 2000 and "\n" not in quoted


@pytest.mark.parametrize("program", ["drop-in", "elect"])
def test_an_election_file_of_white_space_and_a_bom_is_one_error_line(program: str, tmp_path: Path) -> None:
    """`elect`: one line (it was three: "is empty", the file's name on a line of its own, and the hint). The
    drop-in keeps Kafka's own first line byte for byte, then ours, then the hint, as for every failure Kafka's
    tool has a line for (tests/test_unix_messages.py)."""
    path = tmp_path / "election.json"
    path.write_bytes(b"\xef\xbb\xbf \n\t\r\n ")
    argv = ([str(BIN / "kafka-leader-election"), "--election-type", "preferred"] if program == "drop-in"
            else [str(BIN / "kafka-leaders"), "elect"])
    result = subprocess.run([*argv, "--bootstrap-server", "127.0.0.1:1", "--path-to-json-file", str(path)],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    if program == "drop-in":
        kafka, error, hint = result.stderr.splitlines()
        assert (kafka, error) == ("Replica election data is empty", f"{path} holds no JSON document")
    else:
        error, hint = result.stderr.splitlines()
        assert error == f"Replica election data is empty: {path} holds no JSON document"
    assert hint.startswith("Hint: ")


def test_a_silent_server_is_one_error_line_beside_the_json_document() -> None:
    """balance --execute --output json against a server that accepts and never answers: the JSON document on
    stdout, and on stderr one line (it was three: the error, what the server did, the hint)."""
    with hostile_server("stall") as address:
        result = CliRunner().invoke(cli, ["balance", "--execute", "--output", "json", "--bootstrap-server", address,
                                          "--timeout", "2"])
    assert result.exit_code == 3, result.output
    error, hint = result.stderr.splitlines()
    assert error == f"Could not reach any broker of {address} within 2000 ms: {address} did not answer in time"
    assert hint.startswith("Hint: ") and json.loads(result.stdout)["error"] == error
