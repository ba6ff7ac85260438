"""No store password, OAuth client secret, token or Kerberos login detail in the output of a real --debug run.

Each case runs `kafka-leader-election ... --debug` or `kafka-leaders status --debug` in a subprocess (Python's
and kafka-python's real logging, which at DEBUG logs its configuration and every request, the SASL frames
included) against sandboxes speaking SASL_SSL with mutual TLS and OAUTHBEARER (JKS and PKCS12 stores,
tokens from the test token endpoint), and SASL/GSSAPI against a real MIT KDC. Successful and failing runs
(a wrong store or key password, a refused client secret, a token the brokers refuse, a stale keytab) are
scanned: no secret in any form may appear in stdout or stderr, and no JWT at all. The SASL exchange is logged
by its shape only (mechanism, step, sizes): no SASL frame's bytes (a SCRAM client-final message with its
proof, a Kerberos AP-REQ, a token) and no raw frame. A SCRAM login's user name is hidden where it stands as
a value, and a topic whose name contains it is logged as it is.
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import security_fixtures
from security_fixtures import KEY_PASSWORD, STORE_PASSWORD

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.sasl_gssapi import KerberosAcceptor
from leader_election_cli.sandbox.sasl_oauth import OAuthValidation

CLIENT_SECRET = "Cl1ent-S3cret-d3bu9"
WRONG = "Wr0ng-Pa55-77c1"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
OAUTH_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
KRB5 = "com.sun.security.auth.module.Krb5LoginModule"
TOOLS = ("drop-in", "status")


def forms(secret: str) -> set[str]:
    """The secret as it is, escaped as in a bytes repr or JSON, and in base64."""
    raw = secret.encode()
    return {secret, repr(raw)[2:-1], secret.replace("\\", "\\\\").replace('"', '\\"'), base64.b64encode(raw).decode()}


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> security_fixtures.Pki:
    return security_fixtures.make_pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture(scope="module")
def idp() -> Iterator[security_fixtures.TokenEndpoint]:
    endpoint = security_fixtures.TokenEndpoint({"leader-tool": CLIENT_SECRET})
    yield endpoint
    endpoint.close()


@pytest.fixture(scope="module")
def oauth_sb(pki: security_fixtures.Pki, idp: security_fixtures.TokenEndpoint) -> Iterator[Sandbox]:
    """SASL_SSL: a client certificate required, and OAUTHBEARER tokens with the scope kafka."""
    with Sandbox(brokers=2, tls=True, tls_certificate=(str(pki.server_cert), str(pki.server_key)),
                 tls_client_ca=str(pki.ca_pem),
                 oauth=OAuthValidation(jwks_url=idp.jwks_url, required_scope="kafka")) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2]})
        yield sandbox


@pytest.fixture(scope="module")
def kerberos_sb(kdc: security_fixtures.Kdc) -> Iterator[Sandbox]:
    with Sandbox(brokers=2, kerberos=KerberosAcceptor(str(kdc.broker_keytab))) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2]})
        yield sandbox


def stores(pki: security_fixtures.Pki, kind: str, store_password: str, key_password: str) -> str:
    if kind == "jks":  # the key entry has its own password (ssl.key.password), as keytool -keypass makes it
        return (f"ssl.truststore.location={pki.trust_jks}\nssl.truststore.password={store_password}\n"
                f"ssl.keystore.location={pki.key_jks_own_password}\nssl.keystore.password={STORE_PASSWORD}\n"
                f"ssl.key.password={key_password}\n")
    return (f"ssl.truststore.type=PKCS12\nssl.truststore.location={pki.trust_p12}\n"
            f"ssl.truststore.password={store_password}\nssl.keystore.type=PKCS12\n"
            f"ssl.keystore.location={pki.key_p12}\nssl.keystore.password={key_password}\n")


def oauth_config(pki: security_fixtures.Pki, idp: security_fixtures.TokenEndpoint, *, kind: str = "jks",
                 store_password: str = STORE_PASSWORD, key_password: str | None = None, secret: str = CLIENT_SECRET,
                 scope: str = "kafka") -> str:
    key_password = key_password or (KEY_PASSWORD if kind == "jks" else STORE_PASSWORD)
    return ("security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"
            f"sasl.login.callback.handler.class={OAUTH_HANDLER}\nsasl.oauthbearer.token.endpoint.url={idp.token_url}\n"
            f'sasl.jaas.config={OAUTH_MODULE} required clientId="leader-tool" clientSecret="{secret}" '
            f'scope="{scope}";\n{stores(pki, kind, store_password, key_password)}'
            "default.api.timeout.ms=5000\nrequest.timeout.ms=4000\n")


def kerberos_config(keytab: Path, principal: str) -> str:
    return ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
            f'sasl.jaas.config={KRB5} required useKeyTab=true keyTab="{keytab}" principal="{principal}";\n'
            "default.api.timeout.ms=5000\nrequest.timeout.ms=4000\n")


def run(tmp_path: Path, tool: str, sb: Sandbox, config: str, secrets: tuple[str, ...]) -> tuple[int, str]:
    """The real command with --debug; asserts that no secret and no JWT is in its stdout or stderr."""
    path = tmp_path / "client.properties"
    path.write_text(config)
    if tool == "drop-in":
        args = ["-m", "leader_election_cli", "--bootstrap-server", sb.bootstrap_servers, "--election-type",
                "preferred", "--topic", "t1", "--partition", "0"]
    else:
        args = ["-c", "from leader_election_cli.cli.toolkit import main; main()", "status", "--bootstrap-server",
                sb.bootstrap_servers]
    done = subprocess.run([sys.executable, *args, "--command-config", str(path), "--debug"], capture_output=True,
                          timeout=60, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    out, err = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    leaked = {(where, form) for secret in secrets for form in forms(secret)
              for where, text in (("stdout", out), ("stderr", err)) if form in text}
    assert not leaked, f"secrets in {leaked}"
    assert "eyJ" not in out + err, "a JWT (its base64 JSON header) is in the output"
    for frame in ("auth_bytes=b", "Send: b", "Recv: b", "Send: bytearray", "Recv: bytearray"):
        assert frame not in err, f"a frame's bytes are in the log ({frame})"
    return done.returncode, err


SHAPE = "SaslAuthenticateRequest(SASL step 1, auth_bytes: "  # the exchange's shape, logged instead


OAUTH_SECRETS = (STORE_PASSWORD, KEY_PASSWORD, WRONG, CLIENT_SECRET)


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("kind", ["jks", "pkcs12"])
def test_mutual_tls_and_oauthbearer(oauth_sb: Sandbox, pki: security_fixtures.Pki,
                                    idp: security_fixtures.TokenEndpoint, tmp_path: Path, tool: str,
                                    kind: str) -> None:
    oauth_sb.set_leader("t1", 0, 2)
    code, err = run(tmp_path, tool, oauth_sb, oauth_config(pki, idp, kind=kind), OAUTH_SECRETS)
    assert code == 0, err[-2000:]
    assert SHAPE in err and "mechanism='OAUTHBEARER'" in err  # the token it sent: by its size only
    if tool == "drop-in":
        assert oauth_sb.partition_state("t1", 0).leader == 1


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case, expected", [
    ("wrong trust store password", 2), ("wrong key password", 2), ("wrong PKCS12 key store password", 2),
    ("client secret refused", 4), ("token refused by the brokers", 4),
])
def test_failing_runs(oauth_sb: Sandbox, pki: security_fixtures.Pki, idp: security_fixtures.TokenEndpoint,
                      tmp_path: Path, tool: str, case: str, expected: int) -> None:
    config = {
        "wrong trust store password": lambda: oauth_config(pki, idp, store_password=WRONG),
        "wrong key password": lambda: oauth_config(pki, idp, key_password=WRONG),
        "wrong PKCS12 key store password": lambda: oauth_config(pki, idp, kind="pkcs12", key_password=WRONG),
        "client secret refused": lambda: oauth_config(pki, idp, secret=WRONG),
        "token refused by the brokers": lambda: oauth_config(pki, idp, scope="other"),  # sent, then refused
    }[case]()
    code, err = run(tmp_path, tool, oauth_sb, config, OAUTH_SECRETS)
    assert code == expected, err[-2000:]
    if case == "token refused by the brokers":
        assert SHAPE in err


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case, expected", [("keytab", 0), ("stale keytab", 4), ("principal not in keytab", 2)])
def test_kerberos(kerberos_sb: Sandbox, kdc: security_fixtures.Kdc, tmp_path: Path, tool: str, case: str,
                  expected: int) -> None:
    keytab, principal = {"keytab": (kdc.client_keytab, kdc.client_principal),
                         "stale keytab": (kdc.stale_keytab, f"stale@{kdc.REALM}"),
                         "principal not in keytab": (kdc.client_keytab, f"someone-else@{kdc.REALM}")}[case]
    code, err = run(tmp_path, tool, kerberos_sb, kerberos_config(keytab, principal), (principal, str(keytab)))
    assert code == expected, err[-2000:]
    if expected == 0:
        assert "[hidden]" in err  # kafka-python logged who it authenticated as; the redaction took it out
        assert SHAPE in err and "mechanism='GSSAPI'" in err  # the AP-REQ and the wrapped tokens: sizes only


SCRAM_SECRET = "Scr4m-Pa55-0d9e"


@pytest.fixture(scope="module")
def scram_sb() -> Iterator[Sandbox]:
    with Sandbox(brokers=2, sasl_users={"admin": SCRAM_SECRET}, sasl_mechanisms=("SCRAM-SHA-256",)) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2]})
        sandbox.create_topic("c2-admincfg-d", assignment={0: [1, 2]})
        yield sandbox


@pytest.mark.parametrize("tool", TOOLS)
def test_scram_logs_the_exchange_by_its_shape_and_names_as_they_are(scram_sb: Sandbox, tmp_path: Path,
                                                                    tool: str) -> None:
    """The SCRAM client-final message (c=biws,r=<nonce>,p=<proof>) and the server's signature (v=...) were
    logged whole, and the user name's redaction made the topic c2-admincfg-d 'c2-[hidden]cfg-d'."""
    scram_sb.set_leader("t1", 0, 2)
    config = ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=SCRAM-SHA-256\n"
              "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
              f'username="admin" password="{SCRAM_SECRET}";\ndefault.api.timeout.ms=5000\nrequest.timeout.ms=4000\n')
    code, err = run(tmp_path, tool, scram_sb, config, (SCRAM_SECRET,))
    assert code == 0, err[-2000:]
    assert "c=biws" not in err and ",p=" not in err and "v=" not in err.replace("version=", "")
    assert "mechanism='SCRAM-SHA-256'" in err
    assert SHAPE in err and "SaslAuthenticateRequest(SASL step 2, auth_bytes: " in err
    assert "c2-[hidden]" not in err
    if tool == "status":  # its topic configs read (kafka-python's DescribeConfigs) names every topic in the log
        assert "c2-admincfg-d" in err
    assert "[hidden]" in err  # the user name, where it stands as a value (kafka-python's configuration)
