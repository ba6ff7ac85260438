"""`kafka-leaders sandbox --oauth-* / --kerberos-*`: the command's OAUTHBEARER and GSSAPI listeners, end to end.

A user rehearses a client config against the command's sandbox: the token endpoint and the MIT Kerberos
KDC of tests/security_fixtures.py are real, the sandbox runs as its own process, and the drop-in elects
through `--run`. Bad option values are one line and exit 2 before anything listens: they need keytabs, never
a KDC (those that read one need the gssapi package)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import security_fixtures
from commands import run_command
from services import require_gssapi

from leader_election_cli.cli.sandbox_command import sandbox

RUN = [sys.executable, "-c", "from leader_election_cli.cli.toolkit import main; main()", "sandbox",
       "--scenario", "imbalanced", "--topics", "1", "--partitions", "6", "--no-auto-leader-rebalance"]
DROP_IN = (f"{sys.executable} -m leader_election_cli --bootstrap-server {{bootstrap}} --election-type preferred "
           "--all-topic-partitions --output json --command-config {config}")
CLIENT_SECRET = "Cl1ent-S3cret-0b5d"
OAUTH_MODULE = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule"
OAUTH_HANDLER = "org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginCallbackHandler"
KRB5 = "com.sun.security.auth.module.Krb5LoginModule"


@pytest.fixture(scope="module")
def idp() -> Iterator[security_fixtures.TokenEndpoint]:
    endpoint = security_fixtures.TokenEndpoint({"leader-tool": CLIENT_SECRET})
    yield endpoint
    endpoint.close()


def rehearse(tmp_path: Path, config: str, *options: str) -> tuple[int, str, str]:
    """`kafka-leaders sandbox OPTIONS --run 'kafka-leader-election ... --command-config FILE'`."""
    path = tmp_path / "client.properties"
    path.write_text(config)
    done = subprocess.run([*RUN, *options, "--run", DROP_IN.replace("{config}", str(path))], capture_output=True,
                          text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def elected(out: str) -> int:
    return json.loads(out[out.index("{\n"):])["summary"]["elected"]


def oauth_config(url: str, scope: str) -> str:
    return ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
            f"sasl.login.callback.handler.class={OAUTH_HANDLER}\nsasl.oauthbearer.token.endpoint.url={url}\n"
            f'sasl.jaas.config={OAUTH_MODULE} required clientId="leader-tool" clientSecret="{CLIENT_SECRET}" '
            f'scope="{scope}";\ndefault.api.timeout.ms=5000\nrequest.timeout.ms=4000\n')


def kerberos_config(kdc: security_fixtures.Kdc) -> str:
    return ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=GSSAPI\nsasl.kerberos.service.name=kafka\n"
            f'sasl.jaas.config={KRB5} required useKeyTab=true keyTab="{kdc.client_keytab}" '
            f'principal="{kdc.client_principal}";\ndefault.api.timeout.ms=5000\nrequest.timeout.ms=4000\n')


@pytest.mark.parametrize("scope, expected", [("kafka", 0), ("other", 4)])
def test_the_oauthbearer_listener(idp: security_fixtures.TokenEndpoint, tmp_path: Path, scope: str,
                                  expected: int) -> None:
    code, out, err = rehearse(tmp_path, oauth_config(idp.token_url, scope), "--oauth-jwks-url", idp.jwks_url,
                              "--oauth-required-scope", "kafka")
    assert code == expected, err[-2000:]
    assert f"OAUTHBEARER: tokens signed by a key of {idp.jwks_url}, scope kafka required" in out
    assert "security.protocol=SASL_PLAINTEXT" in out
    if expected == 0:
        assert elected(out) > 0
    else:
        assert "insufficient_scope" in err or "Authentication failed" in err
    assert CLIENT_SECRET not in out + err and "eyJ" not in out + err


def test_the_unsecured_oauthbearer_listener(tmp_path: Path) -> None:
    config = ("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=OAUTHBEARER\n"
              f'sasl.jaas.config={OAUTH_MODULE} required unsecuredLoginStringClaim_sub="alice";\n')
    code, out, err = rehearse(tmp_path, config, "--oauth-unsecured")
    assert code == 0, err[-2000:]
    assert "OAUTHBEARER: unsecured development tokens" in out and elected(out) > 0


@pytest.mark.parametrize("principal, expected", [
    (None, 0), (f"kafka/127.0.0.1@{security_fixtures.Kdc.REALM}", 0),
    # the client asks for kafka/127.0.0.1 (the host it connects to): brokers that are kafka/localhost refuse it
    (f"kafka/localhost@{security_fixtures.Kdc.REALM}", 4),
])
def test_the_gssapi_listener(kdc: security_fixtures.Kdc, tmp_path: Path, principal: str | None,
                             expected: int) -> None:
    options = ("--kerberos-keytab", str(kdc.broker_keytab), *(("--kerberos-principal", principal) if principal else ()))
    code, out, err = rehearse(tmp_path, kerberos_config(kdc), *options)
    assert code == expected, err[-2000:]
    assert f"GSSAPI: {principal or 'any principal'} of {kdc.broker_keytab}" in out
    if expected == 0:
        assert elected(out) > 0


@pytest.mark.parametrize("args, message", [
    (["--oauth-jwks-url", "idp.example.com/jwks"], "--oauth-jwks-url idp.example.com/jwks is not an http, https or "
                                                   "file URL"),
    (["--oauth-jwks-url", "http://idp/jwks", "--oauth-unsecured"], "exclude each other"),
    (["--oauth-required-scope", "kafka"], "need an OAUTHBEARER listener"),
    (["--oauth-unsecured", "--oauth-sub-claim-name", " "], "--oauth-sub-claim-name is empty"),
    (["--kerberos-principal", "kafka/h@R"], "--kerberos-principal needs --kerberos-keytab"),
    (["--kerberos-keytab", "{missing}"], "none.keytab: No such file or directory"),
    (["--kerberos-keytab", "{client_keytab}", "--kerberos-principal", "kafka/127.0.0.1@LEADER.TEST"],
     "cannot serve Kerberos: No key table entry found for kafka/127.0.0.1@LEADER.TEST"),
    (["--kerberos-keytab", "{keytab}", "--kerberos-principal", "kafka/other@LEADER.TEST"],
     "cannot serve Kerberos: No key table entry found for kafka/other@LEADER.TEST"),
    (["--kerberos-keytab", "{not_a_keytab}"], "cannot serve Kerberos"),
    (["--kerberos-keytab", "{keytab}", "--kerberos-principal", "kafka /h@R"], "is not a Kerberos principal"),
])
def test_bad_values_are_one_line_and_exit_2(tmp_path: Path, args: list[str], message: str) -> None:
    if "cannot serve Kerberos" in message:
        require_gssapi()  # the keytab is read by MIT Kerberos, through gssapi
    realm = security_fixtures.Kdc.REALM
    (tmp_path / "not.keytab").write_text("hello\n")
    brokers = security_fixtures.write_keytab(tmp_path / "kafka.keytab", [f"kafka/127.0.0.1@{realm}",
                                                                         f"kafka/localhost@{realm}"])
    client = security_fixtures.write_keytab(tmp_path / "client.keytab", [f"leader-tool@{realm}"])
    files = {"{missing}": str(tmp_path / "none.keytab"), "{keytab}": str(brokers),
             "{not_a_keytab}": str(tmp_path / "not.keytab"), "{client_keytab}": str(client)}
    args = [files.get(a, a) for a in args]
    done = run_command(sandbox, *args, "--run", "true")
    assert done.code == 2, done.err
    assert message in done.err and len(done.err.strip().splitlines()) == 2  # the line and its hint
    assert done.out == "" and "Traceback" not in done.err
