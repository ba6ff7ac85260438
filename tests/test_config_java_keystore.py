"""The JKS reader (config/java_keystore.py) against stores Java's keytool made (tests/security_fixtures.py):
the key entry with its own password, the trusted certificates, the integrity digest; every damaged store is
one of the reader's own errors, never another exception."""

from __future__ import annotations

import pytest
import security_fixtures
from cryptography import x509
from security_fixtures import KEY_PASSWORD, STORE_PASSWORD

from leader_election_cli.config import java_keystore as jks


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
    with pytest.raises(jks.UnreadableStore, match="JKS key protector"):
        jks.recover_key(jks.PrivateKeyEntry(other_algorithm, entry.chain), STORE_PASSWORD)
