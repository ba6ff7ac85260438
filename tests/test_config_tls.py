"""TLS settings: PEM trust and key stores as Kafka reads them, proven by real handshakes on 127.0.0.1."""

from __future__ import annotations

import base64
import datetime
import os
import socket
import ssl
import stat
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest
import security_fixtures
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID

from leader_election_cli.config import tls
from leader_election_cli.config.settings import ClientSettings, load_client_settings
from leader_election_cli.errors import InputError

PASSPHRASE = "Key-Passphrase-42"


@dataclass
class Pki:
    directory: Path
    ca: Path  # CA certificate
    other_ca: Path  # a CA that signed nothing here
    server_cert: Path
    server_key: Path
    client_store: Path  # encrypted PKCS#8 key + client certificate + CA: a Kafka PEM key store
    client_key_pem: str  # the encrypted key alone
    client_chain_pem: str
    unrelated_key_pem: str
    client_p12: Path


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _certificate(subject: str, key: ec.EllipticCurvePrivateKey, issuer: str, issuer_key: ec.EllipticCurvePrivateKey,
                 ca: bool, dns: str | None = None) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(_name(subject)).issuer_name(_name(issuer))
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - datetime.timedelta(days=1)).not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if ca:
        builder = builder.add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                                      content_commitment=False, key_encipherment=False,
                                                      data_encipherment=False, key_agreement=False,
                                                      encipher_only=False, decipher_only=False), critical=True)
    if dns:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(dns)]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> str:
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def _key_pem(key: ec.EllipticCurvePrivateKey, passphrase: str | None = None) -> str:
    encryption = (serialization.BestAvailableEncryption(passphrase.encode()) if passphrase
                  else serialization.NoEncryption())
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, encryption).decode()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    directory = tmp_path_factory.mktemp("pki")
    ca_key, other_key, server_key, client_key, unrelated = (ec.generate_private_key(ec.SECP256R1()) for _ in range(5))
    ca = _certificate("test-ca", ca_key, "test-ca", ca_key, ca=True)
    other_ca = _certificate("other-ca", other_key, "other-ca", other_key, ca=True)
    server = _certificate("broker", server_key, "test-ca", ca_key, ca=False, dns="localhost")
    client = _certificate("ops-client", client_key, "test-ca", ca_key, ca=False)
    files = {"ca.pem": _pem(ca), "other-ca.pem": _pem(other_ca), "server.pem": _pem(server),
             "server.key": _key_pem(server_key),
             "client-store.pem": _key_pem(client_key, PASSPHRASE) + _pem(client) + _pem(ca)}
    for name, content in files.items():
        (directory / name).write_text(content)
    p12 = directory / "client.p12"
    p12.write_bytes(pkcs12.serialize_key_and_certificates(b"client", client_key, client, [ca],
                                                          serialization.BestAvailableEncryption(b"storepass")))
    return Pki(directory, directory / "ca.pem", directory / "other-ca.pem", directory / "server.pem",
               directory / "server.key", directory / "client-store.pem", _key_pem(client_key, PASSPHRASE),
               _pem(client) + _pem(ca), _key_pem(unrelated), p12)


@contextmanager
def tls_server(pki: Pki, require_client_cert: bool = False) -> Iterator[tuple[int, list[str]]]:
    """A TLS listener on 127.0.0.1 answering b"ok"; yields its port and the client CNs it saw."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.server_cert, pki.server_key)
    if require_client_cert:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(pki.ca)
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop, peers = threading.Event(), []

    def serve() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except TimeoutError:
                continue
            raw.settimeout(5)
            try:
                with context.wrap_socket(raw, server_side=True) as tls:
                    cert = tls.getpeercert()
                    if cert:
                        peers.append(dict(item[0] for item in cert["subject"])["commonName"])
                    tls.sendall(b"ok")
            except (ssl.SSLError, OSError):
                pass

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1], peers
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def handshake(settings: ClientSettings, port: int, server_hostname: str = "localhost") -> bytes:
    assert settings.ssl_context is not None
    with socket.create_connection(("127.0.0.1", port), timeout=5) as raw, \
            settings.ssl_context.wrap_socket(raw, server_hostname=server_hostname) as tls:
        return tls.recv(2)


def settings_of(tmp_path: Path, text: str) -> ClientSettings:
    path = tmp_path / "client.properties"
    path.write_text(text)
    return load_client_settings(str(path))


def error_of(tmp_path: Path, text: str) -> InputError:
    with pytest.raises(InputError) as caught:
        settings_of(tmp_path, text)
    assert PASSPHRASE not in caught.value.message and PASSPHRASE not in (caught.value.hint or "")
    return caught.value


def continued(pem: str) -> str:
    """PEM as people put it in a .properties file: one continuation line per PEM line."""
    return " \\\n    ".join(pem.strip().splitlines())


# -- trust ----------------------------------------------------------------------------------------------

def test_pem_truststore_verifies_the_broker_and_its_host_name(tmp_path: Path, pki: Pki) -> None:
    settings = settings_of(tmp_path, "security.protocol=SSL\nssl.truststore.type=PEM\n"
                                     f"ssl.truststore.location={pki.ca}")
    assert settings.ssl_context.verify_mode == ssl.CERT_REQUIRED and settings.ssl_context.check_hostname
    with tls_server(pki) as (port, _):
        assert handshake(settings, port, "localhost") == b"ok"
        with pytest.raises(ssl.SSLCertVerificationError, match="match|mismatch"):
            handshake(settings, port, "127.0.0.1")


def test_empty_endpoint_identification_skips_only_the_host_name(tmp_path: Path, pki: Pki) -> None:
    lenient = settings_of(tmp_path, f"security.protocol=SSL\nssl.truststore.location={pki.ca}\n"
                                    "ssl.endpoint.identification.algorithm=")
    wrong_ca = settings_of(tmp_path, f"security.protocol=SSL\nssl.truststore.location={pki.other_ca}\n"
                                     "ssl.endpoint.identification.algorithm=")
    assert lenient.ssl_context.verify_mode == ssl.CERT_REQUIRED and not lenient.ssl_context.check_hostname
    with tls_server(pki) as (port, _):
        assert handshake(lenient, port, "127.0.0.1") == b"ok"
        with pytest.raises(ssl.SSLCertVerificationError):
            handshake(wrong_ca, port, "127.0.0.1")


def test_inline_truststore_certificates_on_continuation_lines(tmp_path: Path, pki: Pki) -> None:
    settings = settings_of(tmp_path, "security.protocol=SSL\nssl.truststore.type=PEM\n"
                                     f"ssl.truststore.certificates={continued(pki.ca.read_text())}\n")
    with tls_server(pki) as (port, _):
        assert handshake(settings, port) == b"ok"


def test_no_truststore_means_the_system_cas_with_full_verification(tmp_path: Path) -> None:
    settings = settings_of(tmp_path, "security.protocol=SSL")
    assert settings.ssl_context.verify_mode == ssl.CERT_REQUIRED and settings.ssl_context.check_hostname


# -- client certificates --------------------------------------------------------------------------------

def test_pem_keystore_file_with_an_encrypted_key(tmp_path: Path, pki: Pki) -> None:
    settings = settings_of(tmp_path, f"security.protocol=SSL\nssl.truststore.location={pki.ca}\n"
                                     f"ssl.keystore.type=PEM\nssl.keystore.location={pki.client_store}\n"
                                     f"ssl.key.password={PASSPHRASE}\n")
    with tls_server(pki, require_client_cert=True) as (port, peers):
        assert handshake(settings, port) == b"ok"
    assert peers == ["ops-client"]


def test_inline_key_and_chain_go_through_a_private_file_that_is_removed(tmp_path: Path, pki: Pki,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str, int]] = []
    load = tls._load_key_and_chain

    def spy(context: ssl.SSLContext, certfile: str, key_password: str | None, where: str) -> None:
        seen.append((certfile, stat.S_IMODE(os.stat(certfile).st_mode)))
        load(context, certfile, key_password, where)

    monkeypatch.setattr(tls, "_load_key_and_chain", spy)
    settings = settings_of(tmp_path, f"security.protocol=SASL_SSL\nssl.truststore.location={pki.ca}\n"
                                     f"ssl.keystore.type=PEM\nssl.keystore.key={continued(pki.client_key_pem)}\n"
                                     f"ssl.keystore.certificate.chain={continued(pki.client_chain_pem)}\n"
                                     f"ssl.key.password={PASSPHRASE}\nsasl.mechanism=PLAIN\n"
                                     "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule "
                                     "required username=u password=p;\n")
    [(path, mode)] = seen
    assert mode == 0o600 and not os.path.exists(path)
    assert settings.sasl_mechanism == "PLAIN"
    with tls_server(pki, require_client_cert=True) as (port, peers):
        assert handshake(settings, port) == b"ok"
    assert peers == ["ops-client"]


def test_the_temporary_key_file_is_removed_when_loading_fails(tmp_path: Path, pki: Pki,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    error_of(tmp_path, f"security.protocol=SSL\nssl.keystore.key={continued(pki.client_key_pem)}\n"
                       f"ssl.keystore.certificate.chain={continued(pki.client_chain_pem)}\nssl.key.password=wrong\n")
    assert [p.name for p in tmp_path.iterdir()] == ["client.properties"]


def test_no_writable_temporary_directory_is_one_line(tmp_path: Path, pki: Pki, monkeypatch: pytest.MonkeyPatch) -> None:
    """It was an internal error (issue 34)."""
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path / "missing"))
    error = error_of(tmp_path, f"security.protocol=SSL\nssl.keystore.key={continued(pki.client_key_pem)}\n"
                               f"ssl.keystore.certificate.chain={continued(pki.client_chain_pem)}\n"
                               f"ssl.key.password={PASSPHRASE}\n")
    assert error.message == ("The key in ssl.keystore.key needs a private temporary file, which could not be made: "
                             "No such file or directory")


def test_an_encrypted_key_without_its_password(tmp_path: Path, pki: Pki) -> None:
    error = error_of(tmp_path, "security.protocol=SSL\nssl.keystore.type=PEM\n"
                               f"ssl.keystore.location={pki.client_store}")
    assert error.message == ("The private key in ssl.keystore.location (line 3) is encrypted, but "
                             "ssl.key.password is not set")


def test_a_wrong_key_password(tmp_path: Path, pki: Pki) -> None:
    error = error_of(tmp_path, f"security.protocol=SSL\nssl.keystore.location={pki.client_store}\n"
                               "ssl.key.password=not-the-passphrase")
    assert error.message.startswith("Could not load the private key in ssl.keystore.location (line 2)")
    assert "ssl.key.password" in error.hint and "not-the-passphrase" not in error.message


def test_a_key_that_does_not_match_the_certificate(tmp_path: Path, pki: Pki) -> None:
    error = error_of(tmp_path, f"security.protocol=SSL\nssl.keystore.key={continued(pki.unrelated_key_pem)}\n"
                               f"ssl.keystore.certificate.chain={continued(pki.client_chain_pem)}\n")
    assert error.message == "The private key in ssl.keystore.key does not match its certificate"


# -- JKS and PKCS12 -------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> security_fixtures.Pki:
    return security_fixtures.make_pki(tmp_path_factory.mktemp("stores"))


def listener_of(stores: security_fixtures.Pki) -> SimpleNamespace:
    return SimpleNamespace(server_cert=stores.server_cert, server_key=stores.server_key, ca=stores.ca_pem)


STORE_PASSWORD, STORE_KEY_PASSWORD = security_fixtures.STORE_PASSWORD, security_fixtures.KEY_PASSWORD


@pytest.mark.parametrize("trust, key, extra", [
    ("jks", "jks", ()),
    ("p12", "p12", ("ssl.truststore.type=PKCS12", "ssl.keystore.type=PKCS12")),
    ("jks", "jks_own_password", (f"ssl.key.password={STORE_KEY_PASSWORD}",)),
    ("p12", "jks", ("ssl.truststore.type=JKS",)),  # Java's keystore.type.compat reads either format
])
def test_binary_stores_give_mutual_tls(tmp_path: Path, stores: security_fixtures.Pki, trust: str, key: str,
                                       extra: tuple[str, ...]) -> None:
    settings = settings_of(tmp_path, stores.config(
        f"ssl.truststore.location={getattr(stores, 'trust_' + trust)}", f"ssl.truststore.password={STORE_PASSWORD}",
        f"ssl.keystore.location={getattr(stores, 'key_' + key)}", f"ssl.keystore.password={STORE_PASSWORD}", *extra))
    with tls_server(listener_of(stores), require_client_cert=True) as (port, peers):
        assert handshake(settings, port) == b"ok"
        with pytest.raises(ssl.SSLCertVerificationError):
            handshake(settings, port, "broker.example")  # the host name is checked (https, Kafka's default)
    assert peers == ["ops-client"]


def test_a_jks_truststore_without_its_password_is_read_unchecked(tmp_path: Path, stores: security_fixtures.Pki) -> None:
    settings = settings_of(tmp_path, stores.config(f"ssl.truststore.location={stores.trust_jks}"))
    with tls_server(listener_of(stores)) as (port, _):
        assert handshake(settings, port) == b"ok"


def settings_naming(config: str, paths: dict[str, Path]) -> dict[str, str]:
    """Each path as messages now name it: the setting that holds it and its line, never the path itself."""
    named = {}
    for number, line in enumerate(config.splitlines(), 1):
        key, _, value = line.partition("=")
        named.update({name: f"{key} (line {number})" for name, path in paths.items() if value == str(path)})
    return named


@pytest.mark.parametrize("lines, message, hint", [
    (("ssl.truststore.location={trust_jks}", "ssl.truststore.password=wrong-one"),
     "Failed to load SSL truststore {trust_jks} of type JKS: Keystore was tampered with, or password was incorrect",
     "ssl.truststore.password"),
    (("ssl.truststore.type=PKCS12", "ssl.truststore.location={trust_p12}", "ssl.truststore.password=wrong-one"),
     "Failed to load SSL truststore {trust_p12} of type PKCS12: Keystore was tampered with", "ssl.truststore.password"),
    (("ssl.keystore.location={key_jks}", "ssl.keystore.password=wrong-one"),
     "Failed to load SSL keystore {key_jks} of type JKS: Keystore was tampered with", "ssl.keystore.password"),
    (("ssl.keystore.location={key_jks_own_password}", f"ssl.keystore.password={STORE_PASSWORD}"),
     "Failed to load SSL keystore {key_jks_own_password} of type JKS: Cannot recover key", "ssl.key.password"),
    (("ssl.keystore.location={key_jks_own_password}", f"ssl.keystore.password={STORE_PASSWORD}",
      "ssl.key.password=wrong-one"),
     "Failed to load SSL keystore {key_jks_own_password} of type JKS: Cannot recover key", "ssl.key.password"),
    (("ssl.keystore.type=PKCS12", "ssl.keystore.location={key_p12}", "ssl.keystore.password=wrong-one"),
     "Failed to load SSL keystore {key_p12} of type PKCS12: Keystore was tampered with", "ssl.keystore.password"),
    (("ssl.keystore.location={key_p12}",), "Failed to load SSL keystore {key_p12} of type JKS: ssl.keystore.password "
                                           "is not set", "ssl.keystore.password"),
    (("ssl.truststore.location={truncated}", f"ssl.truststore.password={STORE_PASSWORD}"),
     "Failed to load SSL truststore {truncated} of type JKS: the file is not a readable JKS store", "location"),
    (("ssl.keystore.location={garbage}", f"ssl.keystore.password={STORE_PASSWORD}"),
     "The store named by {garbage} is not a JKS, PKCS12 or PEM store", "ssl.keystore.location"),
    (("ssl.truststore.type=PEM", "ssl.truststore.location={trust_jks}"),
     "The store named by {trust_jks} is a JKS store but ssl.truststore.type is PEM", "ssl.truststore.type=JKS"),
    (("ssl.keystore.type=PEM", "ssl.keystore.location={key_p12}"),
     "The store named by {key_p12} is a PKCS12 store but ssl.keystore.type is PEM", "ssl.keystore.type=PKCS12"),
    (("ssl.truststore.type=PKCS12", "ssl.truststore.location={ca_pem}"),
     "The store named by {ca_pem} is a PEM file but ssl.truststore.type is PKCS12", "ssl.truststore.type=PEM"),
    (("ssl.truststore.location={key_jks}", f"ssl.truststore.password={STORE_PASSWORD}"),
     "Failed to load SSL truststore {key_jks} of type JKS: the store holds no trusted certificate entry", "keytool"),
])
def test_store_failures_name_the_setting_never_the_password(tmp_path: Path, stores: security_fixtures.Pki,
                                                            lines: tuple[str, ...], message: str, hint: str) -> None:
    truncated, garbage = tmp_path / "truncated.jks", tmp_path / "garbage.p12"
    truncated.write_bytes(stores.trust_jks.read_bytes()[:40])
    garbage.write_bytes(b"\x00\x01not a store")
    paths = {name: getattr(stores, name) for name in ("trust_jks", "trust_p12", "key_jks", "key_jks_own_password",
                                                      "key_p12", "ca_pem")}
    paths.update(truncated=truncated, garbage=garbage)
    config = stores.config(*(line.format(**paths) for line in lines))
    error = error_of(tmp_path, config)
    assert error.message.startswith(message.format(**settings_naming(config, paths))) and hint in error.hint
    for secret in (STORE_PASSWORD, STORE_KEY_PASSWORD, "wrong-one"):
        assert secret not in error.message + error.hint


def test_keys_from_stores_reach_disk_only_encrypted(tmp_path: Path, stores: security_fixtures.Pki,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The ssl module loads keys from files only: the file it is given holds the key encrypted with a
    password that is not the user's, is private while it exists, and is gone afterwards."""
    seen: list[tuple[bytes, int, str | None]] = []
    load = tls._load_key_and_chain

    def spy(context: ssl.SSLContext, certfile: str, key_password: str | None, where: str) -> None:
        seen.append((Path(certfile).read_bytes(), stat.S_IMODE(os.stat(certfile).st_mode), key_password))
        load(context, certfile, key_password, where)

    monkeypatch.setattr(tls, "_load_key_and_chain", spy)
    settings_of(tmp_path, stores.config(f"ssl.keystore.location={stores.key_jks}",
                                        f"ssl.keystore.password={STORE_PASSWORD}"))
    settings_of(tmp_path, stores.config("ssl.keystore.type=PKCS12", f"ssl.keystore.location={stores.key_p12}",
                                        f"ssl.keystore.password={STORE_PASSWORD}"))
    settings_of(tmp_path, stores.config(f"ssl.keystore.key={continued(stores.client_key_pem)}",
                                        f"ssl.keystore.certificate.chain={continued(stores.client_chain_pem)}",
                                        f"ssl.key.password={STORE_KEY_PASSWORD}"))
    assert len(seen) == 3
    plain_body = base64.b64encode(stores.client_key_der)[:60]
    for content, mode, password in seen:
        assert mode == 0o600 and b"-----BEGIN ENCRYPTED PRIVATE KEY-----" in content
        assert b"-----BEGIN PRIVATE KEY-----" not in content and plain_body not in content
        assert stores.client_key_pem.encode()[40:100] not in content  # not the user's own encryption either
        assert password not in (STORE_PASSWORD, STORE_KEY_PASSWORD)
    assert not list(Path(tempfile.gettempdir()).glob("leader-election-key-*"))


# -- Kafka's PEM rules and other refusals ----------------------------------------------------------------

@pytest.mark.parametrize("lines, message", [
    ("ssl.truststore.type=JKS\nssl.truststore.certificates=x",
     "SSL trust store certs can be specified only for PEM, but ssl.truststore.type (line 2) is not PEM."),
    ("ssl.truststore.certificates=x\nssl.truststore.location=/ca.pem",
     "Both SSL trust store location and separate trust certificates are specified."),
    ("ssl.truststore.certificates=x\nssl.truststore.password=p",
     "SSL trust store password cannot be specified for PEM format."),
    ("ssl.truststore.location={ca}\nssl.truststore.password=p",
     "SSL trust store password cannot be specified for PEM format."),
    ("ssl.truststore.password=p", "SSL trust store is not specified, but trust store password is specified."),
    ("ssl.keystore.type=JKS\nssl.keystore.key=k", "SSL private key can be specified only for PEM, but "
                                                  "ssl.keystore.type (line 2) is not PEM."),
    ("ssl.keystore.key=k", "SSL private key is specified, but certificate chain is not specified."),
    ("ssl.keystore.key=k\nssl.keystore.certificate.chain=c\nssl.keystore.location=/k.pem",
     "Both SSL key store location and separate private key are specified."),
    ("ssl.keystore.key=k\nssl.keystore.certificate.chain=c\nssl.keystore.password=p",
     "SSL key store password cannot be specified with PEM format, only key password may be specified."),
    ("ssl.keystore.certificate.chain=c", "SSL certificate chain is specified, but private key is not specified"),
    ("ssl.keystore.location={store}\nssl.keystore.password=p",
     "SSL key store password cannot be specified with PEM format, only key password may be specified"),
    ("ssl.keystore.password=p", "SSL key store is not specified, but key store password is specified."),
    ("ssl.truststore.certificates=no certificate here",
     "ssl.truststore.certificates holds no certificate: At least one certificate expected, but none found"),
    ("ssl.truststore.certificates=-----BEGIN CERTIFICATE-----AAAA-----END CERTIFICATE-----",
     "ssl.truststore.certificates holds a certificate that cannot be read"),
    ("ssl.keystore.key={key}\nssl.keystore.certificate.chain=none",
     "ssl.keystore.certificate.chain holds no certificate: At least one certificate expected, but none found"),
    ("ssl.keystore.key=nothing\nssl.keystore.certificate.chain={chain}", "ssl.keystore.key holds no PEM private key"),
    ("ssl.keystore.location={ca}", "ssl.keystore.location (line 2) holds no PEM private key"),
    ("ssl.truststore.type=BKS\nssl.truststore.location={ca}",
     "The ssl.truststore.type (line 2) is not supported: this tool reads JKS, PKCS12 and PEM stores"),
    ("ssl.truststore.location=/nonexistent/ca.pem",
     "Unable to read the store named by ssl.truststore.location (line 2): No such file or directory"),
    ("ssl.endpoint.identification.algorithm=ldap",
     "The ssl.endpoint.identification.algorithm (line 2) is not supported"),
])
def test_kafka_rules_and_refusals(tmp_path: Path, pki: Pki, lines: str, message: str) -> None:
    text = "security.protocol=SSL\n" + lines.format(ca=pki.ca, store=pki.client_store,
                                                    chain=continued(pki.client_chain_pem),
                                                    key=continued(pki.client_key_pem))
    assert error_of(tmp_path, text).message.startswith(message.format(ca=pki.ca))
