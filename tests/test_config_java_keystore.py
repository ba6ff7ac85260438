"""The JKS reader (config/java_keystore.py) against stores Java's keytool made (tests/security_fixtures.py):
the key entry with its own password, the trusted certificates, the integrity digest; every damaged store is
one of the reader's own errors, never another exception."""

from __future__ import annotations

from pathlib import Path

import pytest
import security_fixtures
from cryptography import x509
from security_fixtures import KEY_PASSWORD, STORE_PASSWORD

from leader_election_cli.config import java_keystore as jks
from leader_election_cli.config.stores import Store, key_material, trusted_certificates
from leader_election_cli.errors import InputError


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> security_fixtures.Pki:
    return security_fixtures.make_pki(tmp_path_factory.mktemp("pki"))


def test_a_keytool_key_entry_with_its_own_password(pki: security_fixtures.Pki) -> None:
    store = jks.load(pki.key_jks_own_password.read_bytes(), STORE_PASSWORD)
    assert list(store.private_keys) == ["client"] and store.certificates == {}
    entry = store.private_keys["client"]
    assert jks.recover_key(entry, KEY_PASSWORD) == pki.client_key_der
    subjects = [x509.load_der_x509_certificate(der).subject.rfc4514_string() for der in entry.chain]
    assert subjects == ["CN=ops-client", "CN=test-ca"]
    with pytest.raises(jks.WrongKeyPassword, match="Cannot recover key"):
        jks.recover_key(entry, STORE_PASSWORD)


def test_a_keytool_key_entry_under_the_store_password(pki: security_fixtures.Pki) -> None:
    store = jks.load(pki.key_jks.read_bytes(), STORE_PASSWORD)
    assert jks.recover_key(store.private_keys["client"], STORE_PASSWORD) == pki.client_key_der


def test_a_keytool_trust_store(pki: security_fixtures.Pki) -> None:
    data = pki.trust_jks.read_bytes()
    for password in (STORE_PASSWORD, None):  # without a password the digest is not checked, as in Java
        store = jks.load(data, password)
        assert store.private_keys == {} and list(store.certificates) == ["ca"]
        assert x509.load_der_x509_certificate(store.certificates["ca"]).subject.rfc4514_string() == "CN=test-ca"
    with pytest.raises(jks.WrongPassword, match="tampered with, or password was incorrect"):
        jks.load(data, "Wr0ng-Pa55-e1")


def test_a_changed_byte_fails_the_digest(pki: security_fixtures.Pki) -> None:
    data = bytearray(pki.trust_jks.read_bytes())
    data[len(data) // 2] ^= 0x01  # inside the certificate
    with pytest.raises(jks.WrongPassword):
        jks.load(bytes(data), STORE_PASSWORD)


@pytest.mark.parametrize("password", [STORE_PASSWORD, None])
def test_every_truncation_is_an_unreadable_store(pki: security_fixtures.Pki, password: str | None) -> None:
    data = pki.key_jks_own_password.read_bytes()
    for size in range(len(data)):
        with pytest.raises(jks.UnreadableStore):
            jks.load(data[:size], password)
    with pytest.raises(jks.UnreadableStore, match="after its integrity digest"):
        jks.load(data + b"\0", password)


def test_a_damaged_protected_key_is_an_unreadable_store(pki: security_fixtures.Pki) -> None:
    entry = jks.load(pki.key_jks.read_bytes(), STORE_PASSWORD).private_keys["client"]
    for size in range(len(entry.protected_key)):
        with pytest.raises((jks.UnreadableStore, jks.WrongKeyPassword)):
            jks.recover_key(jks.PrivateKeyEntry(entry.protected_key[:size], entry.chain), STORE_PASSWORD)
    other_algorithm = entry.protected_key.replace(bytes.fromhex("2a02110101"), bytes.fromhex("2a02130100"), 1)
    with pytest.raises(jks.UnsupportedKey, match="as a JCEKS store protects keys"):
        jks.recover_key(jks.PrivateKeyEntry(other_algorithm, entry.chain), STORE_PASSWORD)


def test_a_keytool_jceks_store(pki: security_fixtures.Pki, tmp_path: Path) -> None:
    """JCEKS is not supported (README): its trusted certificates are JKS's and are read, its keys are refused
    with the conversion to PKCS12 as the hint, never a traceback."""
    path = tmp_path / "store.jceks"
    security_fixtures.keytool("-genkeypair", "-keyalg", "EC", "-alias", "k", "-dname", "CN=x", "-keystore", str(path),
                              "-storetype", "JCEKS", "-storepass", STORE_PASSWORD, "-keypass", STORE_PASSWORD)
    security_fixtures.keytool("-importcert", "-alias", "ca", "-file", str(pki.ca_pem), "-keystore", str(path),
                              "-storetype", "JCEKS", "-storepass", STORE_PASSWORD)
    store = Store(path.read_bytes(), "ssl.keystore", "named by ssl.keystore.location (line 2)", "JKS")
    assert [c.subject.rfc4514_string() for c in trusted_certificates(store, STORE_PASSWORD)] == ["CN=test-ca"]
    with pytest.raises(InputError) as refused:
        key_material(store, STORE_PASSWORD, None)
    assert "as a JCEKS store protects keys" in str(refused.value)
    assert "-deststoretype PKCS12" in (refused.value.hint or "") and STORE_PASSWORD not in str(refused.value)
