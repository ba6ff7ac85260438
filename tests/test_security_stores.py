"""Production TLS configs against the sandbox: JKS, PKCS12 and PEM stores, mutual TLS.

The sandbox presents a broker certificate from a CA this module makes and requires a client
certificate signed by it (Kafka's ssl.client.auth=required). Each store format elects t1-0 through
both commands; each broken store is exit 2 with nothing sent; no password is in any output.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import security_fixtures
from click.testing import CliRunner
from security_fixtures import KEY_PASSWORD, STORE_PASSWORD, continued

from leader_election_cli.cli.drop_in import command as drop_in
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
    """Under TLS 1.3 the broker's refusal arrives after the client's handshake is done, and the sandbox
    closes the connection without the certificate_required alert: the run ends as unreachable when the
    timeout passes (with the alert, as Kafka sends it, it fails at once: tests/test_socket_client.py)."""
    code, output, requests = elect(sb, tool, pki.config(f"ssl.truststore.location={pki.trust_jks}",
                                                        "default.api.timeout.ms=1500", "request.timeout.ms=1000"),
                                   tmp_path)
    assert code == 3 and requests == 0, output
    assert "Could not reach any broker" in output
    assert sb.partition_state("t1", 0).leader == 2
