"""JKS and PKCS12 trust and key stores, read as Java's KeyStore reads them (java_keystore, cryptography).

Java reads a JKS file given as PKCS12 and a PKCS12 file given as JKS (`keystore.type.compat`, on by
default), so either binary format is accepted under either type; a PEM file under one of them, or
a binary store under PEM, is refused. Passwords and keys never reach a message.

A PKCS12 key entry may have its own password, as Java's `KeyStore.setKeyEntry` writes it (keytool refuses
to make one): the store password protects the MAC and the certificates, `ssl.key.password` the key, and
Kafka's `KeyManagerFactory.init(store, keyPassword)` reads it so. OpenSSL (through cryptography) takes one
password, so such a store is read by decrypting the key with the key password and handing OpenSSL the
same store with the key under the store password and without its MAC (`_with_own_key_password`): the
store password is still checked, by the certificates' decryption, but the MAC is not, on that path only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.types import PrivateKeyTypes
from cryptography.hazmat.primitives.serialization import pkcs12

from leader_election_cli.config import java_keystore as jks
from leader_election_cli.errors import InputError

_JKS_MAGIC = (jks.JKS_MAGIC.to_bytes(4, "big"), jks.JCEKS_MAGIC.to_bytes(4, "big"))


@dataclass(frozen=True)
class KeyMaterial:
    """A private key and its certificate chain (its own certificate first)."""

    key: PrivateKeyTypes = field(repr=False)
    chain: Sequence[x509.Certificate]


@dataclass(frozen=True)
class Store:
    """A store file named for messages: `prefix` is ssl.truststore or ssl.keystore."""

    data: bytes
    prefix: str
    where: str  # the setting that names the file, with its line (never the path read from the file)
    store_type: str

    def fail(self, reason: str, hint: str) -> InputError:
        return InputError(f"Failed to load SSL {self.prefix.removeprefix('ssl.')} {self.where} of type "
                          f"{self.store_type}: {reason}", hint=hint)

    def wrong_password(self, setting: str) -> InputError:
        return self.fail("Keystore was tampered with, or password was incorrect",
                         f"Check {setting} (it is not shown).")


def binary_format(data: bytes) -> str | None:
    """'JKS' or 'PKCS12' by the file's first bytes, or None."""
    if data[:4] in _JKS_MAGIC:
        return "JKS"
    if data[:1] == b"\x30":  # a DER SEQUENCE: PKCS#12's PFX
        return "PKCS12"
    return None


def trusted_certificates(store: Store, password: str | None) -> list[x509.Certificate]:
    """The store's trusted-certificate entries; without a password a JKS store's integrity is not checked
    (as Java does for a trust store)."""
    if binary_format(store.data) == "JKS":
        keystore = _load_jks(store, password, f"{store.prefix}.password")
        certificates = [_der_certificate(store, der) for der in keystore.certificates.values()]
    else:
        loaded = _load_pkcs12(store, password, f"{store.prefix}.password")
        certificates = [c.certificate for c in loaded.additional_certs]
        if loaded.key is None and loaded.cert is not None:
            certificates.insert(0, loaded.cert.certificate)
    if not certificates:
        raise store.fail("the store holds no trusted certificate entry",
                         "Import the CA certificates: keytool -importcert -trustcacerts -alias ca -file ca.pem "
                         "-keystore STORE.")
    return certificates


def key_material(store: Store, store_password: str | None, key_password: str | None) -> KeyMaterial:
    """The store's private key entry (the first one, by alias, when there are several) and its chain.
    ssl.key.password defaults to the store password, as in Kafka."""
    if store_password is None:
        raise store.fail("ssl.keystore.password is not set", "Set ssl.keystore.password to the store's password.")
    if binary_format(store.data) == "JKS":
        keystore = _load_jks(store, store_password, "ssl.keystore.password")
        if not keystore.private_keys:
            raise store.fail("the store holds no private key entry", "Give a key store with the client's key.")
        entry = keystore.private_keys[sorted(keystore.private_keys)[0]]
        try:
            pkcs8 = jks.recover_key(entry, key_password if key_password is not None else store_password)
        except jks.WrongKeyPassword:
            hint = ("Check ssl.key.password (it is not shown)." if key_password is not None else
                    "Set ssl.key.password: the key entry's password is not ssl.keystore.password.")
            raise store.fail("Cannot recover key", hint) from None
        except jks.UnsupportedKey as exc:
            raise store.fail(str(exc), "Convert the store to PKCS12 (keytool -importkeystore -srckeystore STORE "
                                       "-destkeystore store.p12 -deststoretype PKCS12) and set "
                                       "ssl.keystore.type=PKCS12.") from None
        except jks.UnreadableStore as exc:
            raise store.fail(f"its private key cannot be read: {exc}", "Re-create the key entry with keytool.") \
                from None
        try:
            key = serialization.load_der_private_key(pkcs8, password=None)
        except (ValueError, TypeError):
            raise store.fail("its private key cannot be read", "Re-create the key entry with keytool.") from None
        chain = [_der_certificate(store, der) for der in entry.chain]
        return KeyMaterial(key, chain)
    loaded = _load_pkcs12(store, store_password, "ssl.keystore.password", key_password)
    if loaded.key is None or loaded.cert is None:
        raise store.fail("the store holds no private key entry", "Give a key store with the client's key.")
    return KeyMaterial(loaded.key, [loaded.cert.certificate, *(c.certificate for c in loaded.additional_certs)])


def _load_jks(store: Store, password: str | None, setting: str) -> jks.KeyStore:
    try:
        return jks.load(store.data, password)
    except jks.WrongPassword:
        raise store.wrong_password(setting) from None
    except jks.UnreadableStore as exc:
        raise store.fail(f"the file is not a readable JKS store ({exc})",
                         f"Check {store.prefix}.location.") from None


def _load_pkcs12(store: Store, password: str | None, setting: str,
                 key_password: str | None = None) -> pkcs12.PKCS12KeyAndCertificates:
    secret = password.encode("utf-8") if password is not None else None
    try:
        return pkcs12.load_pkcs12(store.data, secret)
    except (ValueError, TypeError):
        pass
    if password is not None and key_password is not None and key_password != password:
        own = _with_own_key_password(store, password.encode("utf-8"), key_password.encode("utf-8"))
        if own is not None:
            return own
    if password is None:
        raise store.fail(f"{setting} is not set and the store cannot be read without it",
                         f"Set {setting}.")
    own_key = " (and ssl.key.password, if the key entry has its own)" if setting == "ssl.keystore.password" else ""
    raise store.fail("Keystore was tampered with, or password was incorrect (or the file is not a PKCS12 store)",
                     f"Check {setting}{own_key} (it is not shown) and {store.prefix}.location.")


def _der_certificate(store: Store, der: bytes) -> x509.Certificate:
    try:
        return x509.load_der_x509_certificate(der)
    except ValueError:
        raise store.fail("it holds a certificate that cannot be read", f"Check {store.prefix}.location.") from None


def _with_own_key_password(store: Store, password: bytes,
                           key_password: bytes) -> pkcs12.PKCS12KeyAndCertificates | None:
    """A PKCS12 store whose key is encrypted with `key_password` and the rest with `password`, read as Java
    reads it; None when it is not one (the caller reports the store password as wrong)."""
    from pyasn1.codec.der import decoder, encoder
    from pyasn1.error import PyAsn1Error
    from pyasn1.type import univ
    from pyasn1_modules import rfc5652, rfc7292

    def octets(any_value: univ.Any) -> bytes:
        return bytes(decoder.decode(any_value, asn1Spec=univ.OctetString())[0])

    try:
        pfx = decoder.decode(store.data, asn1Spec=rfc7292.PFX())[0]
        safe = decoder.decode(octets(pfx["authSafe"]["content"]), asn1Spec=rfc7292.AuthenticatedSafe())[0]
        keys = 0
        for info in safe:
            if info["contentType"] != rfc5652.id_data:  # encrypted under the store password: left to OpenSSL
                continue
            bags = decoder.decode(octets(info["content"]), asn1Spec=rfc7292.SafeContents())[0]
            for bag in bags:
                if bag["bagId"] == rfc7292.id_pkcs8ShroudedKeyBag:
                    try:
                        key = serialization.load_der_private_key(bytes(bag["bagValue"]), key_password)
                    except (ValueError, TypeError):
                        raise store.fail("Cannot recover key", "Check ssl.key.password (it is not shown).") from None
                    bag["bagValue"] = bag["bagValue"].clone(key.private_bytes(
                        serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                        serialization.BestAvailableEncryption(password)))
                    keys += 1
            info["content"] = univ.Any(encoder.encode(univ.OctetString(encoder.encode(bags))))
        if not keys:
            return None
        pfx["authSafe"]["content"] = univ.Any(encoder.encode(univ.OctetString(encoder.encode(safe))))
        return pkcs12.load_pkcs12(encoder.encode(rfc7292.PFX().setComponents(pfx["version"], pfx["authSafe"])),
                                  password)
    except (PyAsn1Error, ValueError, TypeError):
        return None
