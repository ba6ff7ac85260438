"""TLS end to end: certificates are verified by default, and a wrong CA or host name fails in one line.

The sandbox's TLS listener has a certificate for `localhost` and `127.0.0.1`, signed by a CA made at
start. `127.1` reaches the same listener (it is 127.0.0.1 to the resolver) under a name the
certificate does not list. As in Kafka, `ssl.endpoint.identification.algorithm=` (empty) turns off the
host-name check only: the chain is still verified. A failed handshake happens before any request, so
the sandbox must receive none.
"""

from __future__ import annotations

import datetime
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import cli as toolkit
from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.security import make_certificates

TOOLS = ("drop-in", "elect")


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(brokers=2, tls=True) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2], 1: [2, 1]})
        yield sandbox


@pytest.fixture(scope="module")
def cas(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """CA files: a look-alike (another CA with the sandbox CA's name) and an unrelated one."""
    look_alike = make_certificates(tmp_path_factory.mktemp("look-alike"))[0]
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "Unrelated Corp CA")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True).sign(key, hashes.SHA256()))
    unrelated = tmp_path_factory.mktemp("unrelated") / "ca.pem"
    unrelated.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    return {"look-alike": str(look_alike), "unrelated": str(unrelated)}


def tls_config(tmp_path: Path, ca: str | None, algorithm: str | None = None) -> str:
    lines = ["security.protocol=SSL", "default.api.timeout.ms=5000", "request.timeout.ms=3000"]
    if ca is not None:
        lines += ["ssl.truststore.type=PEM", f"ssl.truststore.location={ca}"]
    if algorithm is not None:
        lines.append(f"ssl.endpoint.identification.algorithm={algorithm}")
    path = tmp_path / "tls.properties"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def elect(sb: Sandbox, tool: str, host: str, config: str) -> tuple[int, str, str, int]:
    """Elect t1-0 through `host`; returns the exit code, stdout, stderr and how many requests the sandbox got."""
    bootstrap = f"{host}:{sb.brokers[1][1]}"
    before = sb.request_count()
    if tool == "drop-in":
        result = CliRunner().invoke(drop_in, ["--bootstrap-server", bootstrap, "--election-type", "preferred",
                                              "--topic", "t1", "--partition", "0", "--command-config", config,
                                              "--output", "json"], catch_exceptions=False)
    else:
        result = CliRunner().invoke(toolkit, ["elect", "--bootstrap-server", bootstrap, "-p", "t1:0",
                                              "--command-config", config, "--output", "json"],
                                    catch_exceptions=False)
    assert "Traceback" not in result.stdout + result.stderr
    return result.exit_code, result.stdout, result.stderr, sb.request_count() - before


def assert_handshake_refused(sb: Sandbox, tool: str, host: str, config: str, reason: str) -> None:
    sb.set_leader("t1", 0, 2)
    code, out, err, requests = elect(sb, tool, host, config)
    lines = err.splitlines()
    assert code == 3 and requests == 0
    document = json.loads(out)  # --output json: a document even so, nothing attempted, with the reason
    assert document["summary"]["exit_code"] == 3 and document["summary"]["stopped"] == lines[0]
    assert {p["outcome"] for p in document["partitions"]} <= {"not_attempted"}
    assert len(lines) == 2 and lines[1].startswith("Hint: ")
    assert lines[0].startswith(f"TLS handshake with {host}:{sb.brokers[1][1]} failed: [SSL: CERTIFICATE_VERIFY_FAILED]")
    assert reason in lines[0]
    assert sb.partition_state("t1", 0).leader == 2


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_the_sandbox_ca_is_trusted_under_the_certificates_names(sb: Sandbox, tmp_path: Path, tool: str,
                                                                 host: str) -> None:
    sb.set_leader("t1", 0, 2)
    code, _, err, _ = elect(sb, tool, host, tls_config(tmp_path, sb.ca_file))
    assert code == 0, err
    assert sb.partition_state("t1", 0).leader == 1


@pytest.mark.parametrize("tool", TOOLS)
def test_verification_is_on_by_default(sb: Sandbox, tmp_path: Path, tool: str) -> None:
    """No trust store: the system's CAs, which did not sign the sandbox's certificate."""
    assert_handshake_refused(sb, tool, "127.0.0.1", tls_config(tmp_path, None), "unable to get local issuer")


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("algorithm", [None, "https", "HTTPS", ""])
@pytest.mark.parametrize("ca, reason", [("look-alike", "certificate signature failure"),
                                        ("unrelated", "unable to get local issuer certificate")])
def test_a_wrong_ca_fails_even_without_the_host_name_check(sb: Sandbox, cas: dict[str, str], tmp_path: Path,
                                                           tool: str, algorithm: str | None, ca: str,
                                                           reason: str) -> None:
    assert_handshake_refused(sb, tool, "127.0.0.1", tls_config(tmp_path, cas[ca], algorithm), reason)


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("algorithm", [None, "https", " HTTPS "])
def test_a_host_name_the_certificate_does_not_list_fails(sb: Sandbox, tmp_path: Path, tool: str,
                                                         algorithm: str | None) -> None:
    assert_handshake_refused(sb, tool, "127.1", tls_config(tmp_path, sb.ca_file, algorithm),
                             "Hostname mismatch, certificate is not valid for '127.1'")


@pytest.mark.parametrize("tool", TOOLS)
def test_an_empty_algorithm_skips_only_the_host_name_check(sb: Sandbox, tmp_path: Path, tool: str) -> None:
    sb.set_leader("t1", 0, 2)
    code, _, err, _ = elect(sb, tool, "127.1", tls_config(tmp_path, sb.ca_file, ""))
    assert code == 0, err
    assert sb.partition_state("t1", 0).leader == 1


@pytest.mark.parametrize("tool", TOOLS)
def test_an_unknown_algorithm_is_a_config_error(sb: Sandbox, tmp_path: Path, tool: str) -> None:
    code, _, err, requests = elect(sb, tool, "127.0.0.1", tls_config(tmp_path, sb.ca_file, "none"))
    assert (code, requests) == (2, 0)
    assert err.splitlines()[0].startswith("The ssl.endpoint.identification.algorithm (line ")
    assert err.splitlines()[0].endswith(") is not supported") and "none" not in err


def test_a_refused_handshake_is_no_timeout_for_kafkas_lines(sb: Sandbox, tmp_path: Path) -> None:
    """Kafka's tool prints nothing on stdout when the handshake fails (its timeout line is for a timeout)."""
    result = CliRunner().invoke(drop_in, ["--bootstrap-server", f"127.0.0.1:{sb.brokers[1][1]}", "--election-type",
                                          "preferred", "--topic", "t1", "--partition", "0", "--command-config",
                                          tls_config(tmp_path, None), "--output", "text"], catch_exceptions=False)
    assert (result.exit_code, result.stdout) == (3, "")
    assert result.stderr.startswith("TLS handshake with ")
