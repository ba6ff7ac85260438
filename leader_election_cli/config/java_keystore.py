"""Java's JKS key store format, read as sun.security.provider.JavaKeyStore reads it (no compiler, no pyjks).

A store is: the magic 0xFEEDFEED (JCEKS: 0xCECECECE), a version (1 or 2), the entry count, the entries
(a private key entry: its alias, its key as an EncryptedPrivateKeyInfo and its certificate chain; a
trusted certificate entry: its alias and certificate), then a SHA-1 digest of the password (UTF-16BE),
the words "Mighty Aphrodite" and everything before it. A private key is protected with Sun's JKS key
protector (OID 1.3.6.1.4.1.42.2.17.1.1): a 20-byte salt, the PKCS#8 key XOR a keystream of chained SHA-1
digests of the password, and a SHA-1 check of the password and the plain key. JCEKS's own key protection
and secret-key entries are not read (the stores Kafka users are told to make are JKS or PKCS12).
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from dataclasses import dataclass, field

JKS_MAGIC, JCEKS_MAGIC = 0xFEEDFEED, 0xCECECECE
_PRIVATE_KEY, _TRUSTED_CERTIFICATE, _SECRET_KEY = 1, 2, 3
_SUN_JKS_KEY_PROTECTOR = bytes.fromhex("2b060104012a02110101")  # 1.3.6.1.4.1.42.2.17.1.1, DER content
_DIGEST_SIZE = 20  # SHA-1


class UnreadableStore(ValueError):
    """The file is not a JKS store this reader can read; the message says why."""


class UnsupportedKey(UnreadableStore):
    """A key entry protected otherwise than by the JKS key protector (JCEKS's own protection)."""


class WrongPassword(ValueError):
    """The store's integrity digest does not match: "Keystore was tampered with, or password was incorrect"."""


class WrongKeyPassword(ValueError):
    """The key entry's check does not match its password: Java's "Cannot recover key"."""


@dataclass(frozen=True)
class PrivateKeyEntry:
    """A protected private key (an EncryptedPrivateKeyInfo, DER) and its certificate chain (DER, its own first)."""

    protected_key: bytes = field(repr=False)
    chain: tuple[bytes, ...]


@dataclass(frozen=True)
class KeyStore:
    """The entries of a store, by alias, in the file's order."""

    private_keys: dict[str, PrivateKeyEntry]
    certificates: dict[str, bytes]


class _Reader:
    """Java's DataInputStream over the store's bytes: a short read is an UnreadableStore."""

    def __init__(self, data: bytes) -> None:
        self.data, self.position = data, 0

    def take(self, size: int) -> bytes:
        if size < 0 or self.position + size > len(self.data):
            raise UnreadableStore("the file is truncated")
        chunk = self.data[self.position:self.position + size]
        self.position += size
        return chunk

    def u2(self) -> int:
        return int(struct.unpack(">H", self.take(2))[0])

    def u4(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def utf(self) -> str:
        return self.take(self.u2()).decode("utf-8", errors="replace")  # Java's modified UTF-8, for aliases

    def certificate(self, version: int) -> bytes:
        if version == 2:
            self.utf()  # the certificate type, "X.509"
        return self.take(self.u4())


def password_bytes(password: str) -> bytes:
    """A Java char[] password as the JKS digests take it: two bytes per UTF-16 unit, big-endian."""
    return password.encode("utf-16-be", errors="surrogatepass")


def load(data: bytes, password: str | None) -> KeyStore:
    """The store's entries; its integrity digest is checked when a password is given (as Java does)."""
    reader = _Reader(data)
    magic, version = reader.u4(), reader.u4()
    if magic not in (JKS_MAGIC, JCEKS_MAGIC) or version not in (1, 2):
        raise UnreadableStore("the file is not a JKS store")
    private_keys: dict[str, PrivateKeyEntry] = {}
    certificates: dict[str, bytes] = {}
    for _ in range(reader.u4()):
        tag, alias = reader.u4(), reader.utf()
        reader.take(8)  # the entry's creation time
        if tag == _PRIVATE_KEY:
            protected = reader.take(reader.u4())
            private_keys[alias] = PrivateKeyEntry(protected, tuple(reader.certificate(version)
                                                                   for _ in range(reader.u4())))
        elif tag == _TRUSTED_CERTIFICATE:
            certificates[alias] = reader.certificate(version)
        elif tag == _SECRET_KEY and magic == JCEKS_MAGIC:
            raise UnreadableStore("it holds a JCEKS secret-key entry")
        else:
            raise UnreadableStore(f"it holds an entry of unknown kind {tag}")
    digest = reader.take(_DIGEST_SIZE)
    if reader.position != len(data):
        raise UnreadableStore("there are bytes after its integrity digest")
    if password is not None:
        expected = hashlib.sha1(password_bytes(password) + b"Mighty Aphrodite" + data[:-_DIGEST_SIZE]).digest()
        if not hmac.compare_digest(digest, expected):
            raise WrongPassword("Keystore was tampered with, or password was incorrect")
    return KeyStore(private_keys, certificates)


def recover_key(entry: PrivateKeyEntry, password: str) -> bytes:
    """The entry's private key, PKCS#8 DER, unprotected with the key's password (sun.security.provider.KeyProtector)."""
    algorithm, protected = _encrypted_private_key_info(entry.protected_key)
    if algorithm != _SUN_JKS_KEY_PROTECTOR:
        raise UnsupportedKey("its key is protected as a JCEKS store protects keys, which this tool does not read")
    if len(protected) < 2 * _DIGEST_SIZE:
        raise UnreadableStore("its protected key is too short")
    salt, encrypted, check = (protected[:_DIGEST_SIZE], protected[_DIGEST_SIZE:-_DIGEST_SIZE],
                              protected[-_DIGEST_SIZE:])
    secret = password_bytes(password)
    stream, digest = bytearray(), salt
    while len(stream) < len(encrypted):
        digest = hashlib.sha1(secret + digest).digest()
        stream += digest
    size = len(encrypted)
    plain = (int.from_bytes(encrypted, "big") ^ int.from_bytes(stream[:size], "big")).to_bytes(size, "big")
    if not hmac.compare_digest(hashlib.sha1(secret + plain).digest(), check):
        raise WrongKeyPassword("Cannot recover key")
    return plain


def _encrypted_private_key_info(der: bytes) -> tuple[bytes, bytes]:
    """(the algorithm's OID content, the encrypted data) of SEQUENCE { SEQUENCE { OID, ... }, OCTET STRING }."""
    start, end = _element(der, 0, 0x30)
    if end != len(der):
        raise UnreadableStore("its protected key is not one DER element")
    algorithm_start, algorithm_end = _element(der, start, 0x30)
    oid_start, oid_end = _element(der, algorithm_start, 0x06)
    data_start, data_end = _element(der, algorithm_end, 0x04)
    if data_end != end:
        raise UnreadableStore("its protected key has more than an algorithm and the key")
    return der[oid_start:oid_end], der[data_start:data_end]


def _element(der: bytes, position: int, tag: int) -> tuple[int, int]:
    """(content start, content end) of the DER element at `position`, which must have that tag."""
    if position + 2 > len(der) or der[position] != tag:
        raise UnreadableStore("its protected key is not the DER Java writes")
    length, position = der[position + 1], position + 2
    if length & 0x80:
        count = length & 0x7F
        if not 0 < count <= 4 or position + count > len(der):
            raise UnreadableStore("its protected key is not the DER Java writes")
        length, position = int.from_bytes(der[position:position + count], "big"), position + count
    if position + length > len(der):
        raise UnreadableStore("its protected key is truncated")
    return position, position + length
