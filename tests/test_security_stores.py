"""Production TLS configs against the sandbox: JKS, PKCS12 and PEM stores, mutual TLS.

The JKS stores and those of keytool's default type are made by Java's keytool (tests/security_fixtures.py).

The sandbox presents a broker certificate from a CA this module makes and requires a client
certificate signed by it (Kafka's ssl.client.auth=required). Each store format elects t1-0 through
both commands; each broken store is exit 2 with nothing sent; no password is in any output.
"""

from __future__ import annotations

import socket
import ssl
import struct
from collections.abc import Iterator
from pathlib import Path

import pytest
import security_fixtures
from click.testing import CliRunner
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from kafka.admin import KafkaAdminClient
from kafka.errors import KafkaTimeoutError
from security_fixtures import KEY_PASSWORD, STORE_PASSWORD, continued
from services import require_command

from leader_election_cli.cli.drop_in_command import command as drop_in
from leader_election_cli.cli.toolkit import cli as toolkit
from leader_election_cli.sandbox import Sandbox

TOOLS = ("drop-in", "elect")


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> security_fixtures.Pki:
    return security_fixtures.make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def sb(pki: security_fixtures.Pki) -> Iterator[Sandbox]:
    with Sandbox(brokers=2, tls=True, tls_certificate=(str(pki.server_cert), str(pki.server_key)),
                 tls_client_ca=str(pki.ca_pem)) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2]})
        yield sandbox


def tls_line(sb: Sandbox, reason: str, output: str) -> bool:
    """The TLS line names the one server whose handshake failed, not the whole bootstrap list."""
    servers = sb.bootstrap_servers.split(",")
    return sum(f"TLS handshake with {server} failed: {reason}" in output for server in servers) == 1 and \
        (len(servers) == 1 or sb.bootstrap_servers not in output)


def elect(sb: Sandbox, tool: str, config: str, tmp_path: Path) -> tuple[int, str, int]:
    """Elect t1-0 (its leader moved off the preferred replica first); exit code, all output, requests seen."""
    path = tmp_path / "client.properties"
    path.write_text(config)
    sb.set_leader("t1", 0, 2)
    before = sb.request_count()
    if tool == "drop-in":
        args = ["--bootstrap-server", sb.bootstrap_servers, "--election-type", "preferred", "--topic", "t1",
                "--partition", "0", "--command-config", str(path)]
        result = CliRunner().invoke(drop_in, args, catch_exceptions=False)
    else:
        result = CliRunner().invoke(toolkit, ["elect", "--bootstrap-server", sb.bootstrap_servers, "-p", "t1:0",
                                              "--command-config", str(path)], catch_exceptions=False)
    output = result.stdout + result.stderr
    for secret in (STORE_PASSWORD, KEY_PASSWORD, "Wr0ng-Pa55-e1"):
        assert secret not in output
    assert "Traceback" not in output
    return result.exit_code, output, sb.request_count() - before


STORES = {
    "jks": lambda p: (f"ssl.truststore.location={p.trust_jks}", f"ssl.truststore.password={STORE_PASSWORD}",
                      f"ssl.keystore.location={p.key_jks}", f"ssl.keystore.password={STORE_PASSWORD}"),
    "jks-key-password": lambda p: ("ssl.truststore.type=JKS", f"ssl.truststore.location={p.trust_jks}",
                                   "ssl.keystore.type=JKS", f"ssl.keystore.location={p.key_jks_own_password}",
                                   f"ssl.keystore.password={STORE_PASSWORD}", f"ssl.key.password={KEY_PASSWORD}"),
    # keytool's default store type (PKCS12) under Kafka's default type (JKS): read as Java reads it
    "keytool-default-type": lambda p: (f"ssl.truststore.location={p.trust_keytool_default}",
                                       f"ssl.truststore.password={STORE_PASSWORD}",
                                       f"ssl.keystore.location={p.key_keytool_default}",
                                       f"ssl.keystore.password={STORE_PASSWORD}"),
    "pkcs12": lambda p: ("ssl.truststore.type=PKCS12", f"ssl.truststore.location={p.trust_p12}",
                         f"ssl.truststore.password={STORE_PASSWORD}", "ssl.keystore.type=PKCS12",
                         f"ssl.keystore.location={p.key_p12}", f"ssl.keystore.password={STORE_PASSWORD}"),
    "pem-inline": lambda p: ("ssl.truststore.type=PEM",
                             f"ssl.truststore.certificates={continued(p.ca_pem.read_text())}",
                             "ssl.keystore.type=PEM", f"ssl.keystore.key={continued(p.client_key_pem)}",
                             f"ssl.keystore.certificate.chain={continued(p.client_chain_pem)}",
                             f"ssl.key.password={KEY_PASSWORD}"),
}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("store", sorted(STORES))
def test_mutual_tls_election_with_each_store_format(sb: Sandbox, pki: security_fixtures.Pki, tmp_path: Path,
                                                    tool: str, store: str) -> None:
    code, output, _ = elect(sb, tool, pki.config(*STORES[store](pki)), tmp_path)
    assert code == 0, output
    assert sb.partition_state("t1", 0).leader == 1


def test_the_pem_key_store_file(sb: Sandbox, pki: security_fixtures.Pki, tmp_path: Path) -> None:
    store = tmp_path / "client-store.pem"
    store.write_text(pki.client_key_pem + pki.client_chain_pem)
    code, output, _ = elect(sb, "elect", pki.config(f"ssl.truststore.location={pki.trust_jks}", "ssl.keystore.type=PEM",
                                                    f"ssl.keystore.location={store}",
                                                    f"ssl.key.password={KEY_PASSWORD}"), tmp_path)
    assert code == 0, output


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case, setting", [
    ("wrong store password", "ssl.keystore.password"),
    ("wrong key password", "ssl.key.password"),
    ("wrong trust store password", "ssl.truststore.password"),
    ("corrupt store", "ssl.keystore.location"),
    ("type not matching", "ssl.keystore.type"),
])
def test_a_broken_store_is_an_input_error_and_nothing_is_sent(sb: Sandbox, pki: security_fixtures.Pki,
                                                              tmp_path: Path, tool: str, case: str,
                                                              setting: str) -> None:
    wrong = "Wr0ng-Pa55-e1"
    lines = list(STORES["jks-key-password"](pki))
    if case == "wrong store password":
        lines[4] = f"ssl.keystore.password={wrong}"
    elif case == "wrong key password":
        lines[5] = f"ssl.key.password={wrong}"
    elif case == "wrong trust store password":
        lines.append(f"ssl.truststore.password={wrong}")
    elif case == "corrupt store":
        corrupt = tmp_path / "corrupt.jks"
        corrupt.write_bytes(pki.key_jks.read_bytes()[:-30])
        lines[3] = f"ssl.keystore.location={corrupt}"
    else:
        lines[2] = "ssl.keystore.type=PEM"
    code, output, requests = elect(sb, tool, pki.config(*lines), tmp_path)
    assert code == 2 and requests == 0, output
    assert setting in output
    assert sb.partition_state("t1", 0).leader == 2


@pytest.mark.parametrize("tool", TOOLS)
def test_without_a_client_certificate_the_broker_refuses(sb: Sandbox, pki: security_fixtures.Pki, tmp_path: Path,
                                                         tool: str) -> None:
    """Under TLS 1.3 the broker refuses a missing client certificate after the client's side of the handshake,
    with the certificate_required alert, as Kafka's SslTransportLayer sends it: the run stops at once on the
    TLS line (it would be "Could not reach any broker" had the connection closed without the alert)."""
    code, output, requests = elect(sb, tool, pki.config(f"ssl.truststore.location={pki.trust_jks}"), tmp_path)
    assert code == 3 and requests == 0, output
    assert tls_line(sb, "[SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED]", output)
    assert "Hint: The broker refused this client: check ssl.keystore.*" in output
    assert "Could not reach any broker" not in output
    assert sb.partition_state("t1", 0).leader == 2


@pytest.mark.parametrize("tool", TOOLS)
def test_a_client_certificate_from_another_ca_is_refused(sb: Sandbox, pki: security_fixtures.Pki, tmp_path: Path,
                                                         tool: str) -> None:
    """A client certificate the broker's CA did not sign: OpenSSL's unknown_ca alert reaches the client,
    which stops at once on the TLS line, nothing sent."""
    other_key = ec.generate_private_key(ec.SECP256R1())
    other_ca = security_fixtures.certificate("another-ca", other_key, None, other_key, ca=True)
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = security_fixtures.certificate("ops-client", client_key, other_ca, other_key)
    key_pem = client_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.BestAvailableEncryption(KEY_PASSWORD.encode())).decode()
    chain_pem = (security_fixtures.pem(client) + security_fixtures.pem(other_ca)).decode()
    code, output, requests = elect(sb, tool, pki.config(
        f"ssl.truststore.location={pki.trust_jks}", "ssl.keystore.type=PEM",
        f"ssl.keystore.key={continued(key_pem)}", f"ssl.keystore.certificate.chain={continued(chain_pem)}",
        f"ssl.key.password={KEY_PASSWORD}"), tmp_path)
    assert code == 3 and requests == 0, output
    assert tls_line(sb, "[SSL: TLSV1_ALERT_UNKNOWN_CA]", output)
    assert sb.partition_state("t1", 0).leader == 2


@pytest.mark.parametrize("version, alert", [(ssl.TLSVersion.TLSv1_2, "SSLV3_ALERT_HANDSHAKE_FAILURE"),
                                            (ssl.TLSVersion.TLSv1_3, "TLSV13_ALERT_CERTIFICATE_REQUIRED")])
def test_the_refusal_is_openssls_alert_in_either_tls_version(sb: Sandbox, pki: security_fixtures.Pki,
                                                              version: ssl.TLSVersion, alert: str) -> None:
    """TLS 1.2 refuses in the client's handshake, TLS 1.3 on its first read after it: an alert either way."""
    context = ssl.create_default_context(cafile=str(pki.ca_pem))
    context.maximum_version = version
    host, port = sb.bootstrap_servers.split(",")[0].split(":")
    before = sb.request_count()
    with socket.create_connection((host, int(port)), timeout=10) as raw, pytest.raises(ssl.SSLError, match=alert), \
            context.wrap_socket(raw, server_hostname="localhost") as tls:
        tls.sendall(struct.pack(">i", 1) + b"x")
        tls.recv(4)
    assert sb.request_count() == before


def test_kafka_python_without_a_client_certificate_is_refused(sb: Sandbox, pki: security_fixtures.Pki) -> None:
    """kafka-python (the SASL transport, and the sandbox's other client) reads the same alert as a failed
    connection: no broker available, nothing received by the sandbox; with its certificate it is served."""
    before = sb.request_count()
    with pytest.raises(KafkaTimeoutError):
        KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, security_protocol="SSL", ssl_cafile=str(pki.ca_pem),
                         bootstrap_timeout_ms=500, request_timeout_ms=1000)
    assert sb.request_count() == before
    chain = pki.directory / "kafka-python-client.pem"
    chain.write_text(pki.client_chain_pem)
    key = pki.directory / "kafka-python-client-key.pem"
    key.write_text(pki.client_key_pem)
    with KafkaAdminClient(bootstrap_servers=sb.bootstrap_servers, security_protocol="SSL", ssl_cafile=str(pki.ca_pem),
                          ssl_certfile=str(chain), ssl_keyfile=str(key), ssl_password=KEY_PASSWORD,
                          request_timeout_ms=5000) as admin:
        assert admin.describe_topics(["t1"])[0]["partitions"][0]["replica_nodes"] == [1, 2]


def test_over_sasl_ssl_a_missing_client_certificate_stops_the_run_at_once(pki: security_fixtures.Pki,
                                                                          tmp_path: Path) -> None:
    """SASL_SSL goes through kafka-python's client, which reads the broker's certificate_required alert as a
    lost connection: the run stops at once on the TLS line all the same (it waited out the timeout before)."""
    with Sandbox(brokers=1, tls=True, tls_certificate=(str(pki.server_cert), str(pki.server_key)),
                 tls_client_ca=str(pki.ca_pem), sasl_users={"admin": "admin-secret"}) as sb:
        sb.create_topic("t1", assignment={0: [1]})
        config = pki.config(f"ssl.truststore.location={pki.trust_jks}", "default.api.timeout.ms=10000",
                            "sasl.mechanism=PLAIN", "sasl.jaas.config=org.apache.kafka.common.security.plain."
                            'PlainLoginModule required username="admin" password="admin-secret";')
        config = config.replace("security.protocol=SSL", "security.protocol=SASL_SSL")
        code, output, requests = elect(sb, "drop-in", config, tmp_path)
    assert code == 3 and requests == 0, output
    assert tls_line(sb, "[SSL: TLSV13_ALERT_CERTIFICATE_REQUIRED]", output)
    assert "Hint: The broker refused this client: check ssl.keystore.*" in output


@pytest.fixture(scope="module")
def key_p12_own_password(pki: security_fixtures.Pki) -> Path:
    """The client's key in a PKCS12 store whose key entry has its own password (KEY_PASSWORD) and the rest the
    store password, written by Java's KeyStore API (tests/java/TwoPasswordPkcs12.java): keytool refuses to."""
    import subprocess

    require_command("java", "default-jdk-headless")  # to write the store as Java does
    key, chain, store = (pki.directory / name for name in ("client-key.der", "client-chain.pem", "key-own.p12"))
    key.write_bytes(pki.client_key_der)
    chain.write_text(pki.client_chain_pem)
    source = Path(__file__).parent / "java" / "TwoPasswordPkcs12.java"
    subprocess.run(["java", str(source), str(key), str(chain), str(store)], input=f"{STORE_PASSWORD}\n{KEY_PASSWORD}\n",
                   text=True, check=True, timeout=120, capture_output=True)
    key.unlink()
    return store


def pkcs12_own_password(pki: security_fixtures.Pki, store: Path, key_password: str = KEY_PASSWORD) -> str:
    return pki.config("ssl.truststore.type=PKCS12", f"ssl.truststore.location={pki.trust_p12}",
                      f"ssl.truststore.password={STORE_PASSWORD}", "ssl.keystore.type=PKCS12",
                      f"ssl.keystore.location={store}", f"ssl.keystore.password={STORE_PASSWORD}",
                      f"ssl.key.password={key_password}")


@pytest.mark.parametrize("tool", TOOLS)
def test_a_pkcs12_key_entry_with_its_own_password(sb: Sandbox, pki: security_fixtures.Pki, key_p12_own_password: Path,
                                                  tmp_path: Path, tool: str) -> None:
    """Kafka reads the key with ssl.key.password (KeyManagerFactory.init); it was 'Keystore was tampered with'."""
    code, output, _ = elect(sb, tool, pkcs12_own_password(pki, key_p12_own_password), tmp_path)
    assert code == 0, output
    assert sb.partition_state("t1", 0).leader == 1


@pytest.mark.parametrize(("key_password", "expected"), [
    ("Wr0ng-Pa55-e1", "Cannot recover key"), (STORE_PASSWORD, "Keystore was tampered with")])
def test_a_pkcs12_key_entry_with_its_own_password_refuses_a_wrong_one(
        sb: Sandbox, pki: security_fixtures.Pki, key_p12_own_password: Path, tmp_path: Path, key_password: str,
        expected: str) -> None:
    code, output, requests = elect(sb, "elect", pkcs12_own_password(pki, key_p12_own_password, key_password),
                                   tmp_path)
    assert (code, requests) == (2, 0) and expected in output, output
