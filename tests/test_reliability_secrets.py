"""Secrets never leak: a SASL password and a private-key passphrase, through every path, with --debug.

Each case runs the real command in a subprocess (Python's and kafka-python's real logging handlers,
--debug on) against a SASL_SSL sandbox, in every output format, for success and for each failure: a
wrong password, no ALTER on CLUSTER, an unreachable cluster, an untrusted certificate, a wrong key
passphrase, a broken config file, a broken election file. The secrets must appear in no byte of
stdout or stderr, in no form kafka-python might log them in (as they are, as Python escapes them in
bytes, base64), and in no file left behind in the process's working, home or temporary directory.
"""

from __future__ import annotations

import base64
import datetime
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from leader_election_cli.sandbox import Sandbox
from leader_election_cli.sandbox.security import make_certificates

SASL_SECRET = 'S3cr3t-sasl-Pa55"w\\0rd'  # a quote and a backslash: escaped differently in JAAS, repr and JSON
KEY_SECRET = "K3y-Pa55phrase-7f3a9c"
WRONG_SECRET = "Wr0ng-Pa55-b81d"
BOB_SECRET = "B0b-Pa55-c4e2"
SECRETS = (SASL_SECRET, KEY_SECRET, WRONG_SECRET, BOB_SECRET)
OUTPUTS = ("text", "json", "table")


def forms(secret: str, user: str = "admin") -> set[str]:
    """Every way a secret could be written out: as it is, escaped as in a bytes repr or JSON, in base64,
    and inside SASL/PLAIN's auth bytes (authzid NUL user NUL password)."""
    raw = secret.encode()
    token = b"\x00" + user.encode() + b"\x00" + raw
    return {secret, repr(raw)[2:-1], secret.replace("\\", "\\\\").replace('"', '\\"'),
            base64.b64encode(raw).decode(), base64.b64encode(token).decode(), repr(token)[2:-1]}


def jaas_quoted(value: str) -> str:
    """A JAAS option value in quotes, escaped for JAAS and then for the properties file around it."""
    jaas = '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return jaas.replace("\\", "\\\\")


@dataclass(frozen=True)
class Client:
    """The client side's files: an encrypted key and its certificate (a PEM key store)."""

    key_pem: str
    chain_pem: str
    store: Path


@pytest.fixture(scope="module")
def client(tmp_path_factory: pytest.TempPathFactory) -> Client:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "ops-client")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=1)).sign(key, hashes.SHA256()))
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.BestAvailableEncryption(KEY_SECRET.encode())).decode()
    chain_pem = cert.public_bytes(serialization.Encoding.PEM).decode()
    store = tmp_path_factory.mktemp("client") / "client-store.pem"
    store.write_text(key_pem + chain_pem)
    return Client(key_pem, chain_pem, store)


@pytest.fixture(scope="module")
def sb() -> Iterator[Sandbox]:
    with Sandbox(brokers=2, mode="kraft", tls=True, sasl_users={"admin": SASL_SECRET, "bob": BOB_SECRET},
                 sasl_mechanisms=("PLAIN",), cluster_alter={"admin"}) as sandbox:
        sandbox.create_topic("t1", assignment={0: [1, 2], 1: [2, 1]})
        yield sandbox


def continued(pem: str) -> str:
    """PEM on properties continuation lines, as people paste it."""
    return " \\\n    ".join(pem.strip().splitlines())


def config(tmp_path: Path, sb: Sandbox, client: Client, *, user: str = "admin", password: str = SASL_SECRET,
           key_password: str = KEY_SECRET, ca: str | None = None, inline_key: bool = True, extra: str = "") -> str:
    """A SASL_SSL client config with the SASL password and the key passphrase in it."""
    keystore = (f"ssl.keystore.type=PEM\nssl.keystore.key={continued(client.key_pem)}\n"
                f"ssl.keystore.certificate.chain={continued(client.chain_pem)}\n" if inline_key else
                f"ssl.keystore.type=PEM\nssl.keystore.location={client.store}\n")
    path = tmp_path / "client.properties"
    path.write_text(
        "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f"username={jaas_quoted(user)} password={jaas_quoted(password)};\n"
        f"ssl.truststore.type=PEM\nssl.truststore.location={ca or sb.ca_file}\n{keystore}"
        f"ssl.key.password={key_password}\ndefault.api.timeout.ms=5000\nrequest.timeout.ms=3000\n{extra}")
    return str(path)


@dataclass(frozen=True)
class Done:
    code: int
    out: str
    err: str


def run(tmp_path: Path, tool: str, bootstrap: str, config_path: str, output: str, *selection: str) -> Done:
    """The real command in a subprocess with --debug; its cwd, HOME and TMPDIR are fresh directories
    that are searched for the secrets afterwards."""
    home = tmp_path / "process"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(home), "PYTHONUNBUFFERED": "1"}
    if tool == "drop-in":
        args = ["-m", "leader_election_cli", "--bootstrap-server", bootstrap, "--election-type", "preferred",
                *(selection or ("--all-topic-partitions",))]
    else:
        args = ["-c", "from leader_election_cli.cli.toolkit import main; main()", "elect", "--bootstrap-server",
                bootstrap, *(selection or ("--all-topic-partitions",))]
    done = subprocess.run([sys.executable, *args, "--command-config", config_path, "--output", output, "--debug"],
                          capture_output=True, cwd=home, env=env, timeout=60)
    out, err = done.stdout.decode("utf-8", "replace"), done.stderr.decode("utf-8", "replace")
    leaked = {(where, form) for secret in SECRETS for form in forms(secret) for where, text in
              (("stdout", out), ("stderr", err)) if form in text}
    leftovers = {str(f) for f in home.rglob("*") if f.is_file() and any(
        form.encode() in f.read_bytes() for secret in SECRETS for form in forms(secret))}
    assert not leaked, f"secrets in {leaked}"
    assert not leftovers, f"secrets in files left behind: {leftovers}"
    assert not list(home.rglob("leader-election-key-*")), "the temporary key file was left behind"
    return Done(done.returncode, out, err)


TOOLS = ("drop-in", "elect")


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("tool", TOOLS)
def test_success(sb: Sandbox, client: Client, tmp_path: Path, tool: str, output: str) -> None:
    sb.set_leader("t1", 0, 2)
    typos = f"ssl.key.pasword={KEY_SECRET}\nsasl.jaas.confg=x password={jaas_quoted(SASL_SECRET)};\n"  # misspelt
    done = run(tmp_path, tool, sb.bootstrap_servers, config(tmp_path, sb, client, extra=typos), output)
    assert done.code == 0, done.err[-2000:]
    assert "[hidden]" in done.err  # kafka-python did log its configuration and the PLAIN auth bytes
    assert "Unknown config key 'ssl.key.pasword'" in done.err
    assert sb.partition_state("t1", 0).leader == 1


@pytest.mark.parametrize("output", OUTPUTS)
@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case", ["wrong password", "not authorized", "unreachable", "untrusted certificate",
                                  "wrong key passphrase", "key store file"])
def test_failures(sb: Sandbox, client: Client, tmp_path: Path, tool: str, output: str, case: str,
                  refused_address: Callable[[], str]) -> None:
    bootstrap, selection = sb.bootstrap_servers, ("--all-topic-partitions",)
    if case == "wrong password":
        path, expected = config(tmp_path, sb, client, password=WRONG_SECRET), 4
    elif case == "not authorized":
        path, expected = config(tmp_path, sb, client, user="bob", password=BOB_SECRET), 4
    elif case == "unreachable":
        path, expected, bootstrap = config(tmp_path, sb, client), 3, refused_address()
        selection = ("--all-topic-partitions", "--timeout", "1")
    elif case == "untrusted certificate":
        other_ca = make_certificates(tmp_path)[0]
        path, expected = config(tmp_path, sb, client, ca=str(other_ca)), 3
    elif case == "wrong key passphrase":
        path, expected = config(tmp_path, sb, client, key_password=WRONG_SECRET), 2
    else:  # a PEM key store file instead of inline PEM, and the wrong passphrase
        path, expected = config(tmp_path, sb, client, key_password=WRONG_SECRET, inline_key=False), 2
    sb.set_leader("t1", 0, 2)
    done = run(tmp_path, tool, bootstrap, path, output, *selection)
    assert done.code == expected, done.err[-2000:]
    assert sb.partition_state("t1", 0).leader == 2


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("broken", [
    "sasl.mechanism=SCRAM-SHA-256",  # the JAAS entry (with the password) names PLAIN's module
    f"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required password={BOB_SECRET}",
    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"a\" "
    f"password=\"{BOB_SECRET};",  # an unterminated quote swallows the rest
    f"sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule {BOB_SECRET} required;",
    "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
    f"username={jaas_quoted(BOB_SECRET)};",  # no password, and the user name is the secret
    f"ssl.truststore.password={KEY_SECRET}",  # Kafka refuses a password for a PEM trust store
    f"ssl.keystore.password={KEY_SECRET}",
])
def test_broken_config_files(sb: Sandbox, client: Client, tmp_path: Path, tool: str, broken: str) -> None:
    path = Path(config(tmp_path, sb, client))
    path.write_text(path.read_text() + broken + "\n")
    done = run(tmp_path, tool, sb.bootstrap_servers, str(path), "text")
    assert done.code == 2, done.err[-2000:]


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("output", OUTPUTS)
def test_broken_election_file(sb: Sandbox, client: Client, tmp_path: Path, tool: str, output: str) -> None:
    election = tmp_path / "election.json"
    election.write_text('{"partitions": [{"topic": "t1", "partition": "0"}]}')
    done = run(tmp_path, tool, sb.bootstrap_servers, config(tmp_path, sb, client), output,
               "--path-to-json-file", str(election))
    assert done.code == 2
    assert "Invalid replica election data" in done.err


@pytest.mark.parametrize("secret", ["Pa'ss-word-012345678Q", 'Gr\u00fc\'n"Secret', "Gr\u00fc\tnSecret", SASL_SECRET])
def test_debug_lines_hide_the_password_in_every_repr(secret: str) -> None:
    """kafka-python's DEBUG lines hold the password inside reprs whose quote escaping depends on the
    whole line: a PLAIN frame whose length byte is '"', a config dict, a str with both quotes."""
    import logging

    from leader_election_cli.cluster.redaction import RedactSecrets

    redact = RedactSecrets()
    redact.hide(secret)
    longest_word = max(re.findall(r"[A-Za-z0-9-]+", secret), key=len)  # what any spelling of it still shows
    raw = secret.encode()
    for shown in (repr(secret), repr({"sasl_plain_password": secret, "x": "'\""}), repr(bytearray(b'"' + raw)),
                  repr(b"\x00\x00\x00\x22\x00admin\x00" + raw), repr(b"'\"" + raw), repr(secret + "'")):
        record = logging.LogRecord("kafka.protocol.parser", logging.DEBUG, __file__, 1, "Send: %s", (shown,), None)
        assert redact.filter(record)
        message = record.getMessage()
        assert "[hidden]" in message and longest_word not in message, message


def test_a_secret_is_hidden_as_a_whole_value_never_inside_a_name() -> None:
    """The SCRAM user admin hid part of the topic c2-admincfg-d ('c2-[hidden]cfg-d'); it still goes wherever it
    stands as a value: quoted, between separators, between the NULs of a PLAIN frame's repr."""
    import logging

    from leader_election_cli.cluster.redaction import RedactSecrets

    redact = RedactSecrets()
    redact.hide("admin")
    cases = {"topic c2-admincfg-d, admin.x, xadmin, admin_2": "topic c2-admincfg-d, admin.x, xadmin, admin_2",
             "user='admin' n,,n=admin,r=abc": "user='[hidden]' n,,n=[hidden],r=abc",
             repr(b"\x00admin\x00pw"): "b'\\x00[hidden]\\x00pw'", "as admin\n": "as [hidden]\n"}
    for text, expected in cases.items():
        record = logging.LogRecord("kafka.conn", logging.DEBUG, __file__, 1, "%s", (text,), None)
        assert redact.filter(record)
        assert record.getMessage() == expected


def test_sasl_frames_are_logged_by_their_shape() -> None:
    import logging

    from kafka.protocol.sasl import SaslAuthenticateRequest, SaslAuthenticateResponse, SaslHandshakeRequest

    from leader_election_cli.cluster.redaction import RedactSecrets

    redact = RedactSecrets()
    lines = []
    for message, value in (("%s Sending request %s", SaslHandshakeRequest(version=1, mechanism="SCRAM-SHA-256")),
                           ("%s Sending request %s", SaslAuthenticateRequest(version=1, auth_bytes=b"n,,n=u,r=abc")),
                           ("%s Received response %s", SaslAuthenticateResponse(
                               version=1, error_code=0, error_message=None, auth_bytes=b"r=abcdef,s=c2FsdA==,i=4096",
                               session_lifetime_ms=0)),
                           ("%s Sending request %s",
                            SaslAuthenticateRequest(version=1, auth_bytes=b"c=biws,r=x,p=PROOF")),
                           ("%s Send: %r", b"\x00\x00\x00\x10c=biws,r=x,p=PROOF")):
        record = logging.LogRecord("kafka.protocol.parser", logging.DEBUG, __file__, 1, message, ("conn-1", value),
                                   None)
        assert redact.filter(record)
        lines.append(record.getMessage())
    assert lines == ["conn-1 Sending request SaslHandshakeRequest(version=1, mechanism='SCRAM-SHA-256')",
                     "conn-1 Sending request SaslAuthenticateRequest(SASL step 1, auth_bytes: 12 bytes)",
                     "conn-1 Received response SaslAuthenticateResponse(SASL step 1, auth_bytes: 26 bytes, "
                     "error_code=0)",
                     "conn-1 Sending request SaslAuthenticateRequest(SASL step 2, auth_bytes: 18 bytes)",
                     "conn-1 Send: <22 bytes>"]
