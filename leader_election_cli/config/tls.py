"""TLS for the admin client: an `ssl.SSLContext` from the config file's trust and key stores (PEM here,
JKS and PKCS12 through `stores`), as Kafka's DefaultSslEngineFactory builds one. Passwords and key
material never reach a message, and a key is never written to disk unencrypted.
"""

from __future__ import annotations

import os
import re
import secrets
import ssl
import tempfile
from collections.abc import Callable, Iterator, Mapping

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization

from leader_election_cli.config.properties import check_unicode, java_trim, named, read_text
from leader_election_cli.config.stores import KeyMaterial, Store, binary_format, key_material, trusted_certificates
from leader_election_cli.errors import InputError

_MAX_KEY_PASSWORD_BYTES = 1024  # Python's ssl module passes at most this much to OpenSSL
_STORE_CONVERSION = ("Convert the store to PKCS12 (keytool -importkeystore -srckeystore STORE -srcstoretype TYPE "
                     "-destkeystore store.p12 -deststoretype PKCS12) and set {prefix}.type=PKCS12.")

_PEM_MARKER = re.compile(r"(?=(-----(BEGIN|END) ([A-Z0-9 ]+)-----))")  # markers may share their dashes
_PRIVATE_KEY_LABELS = frozenset({"PRIVATE KEY", "ENCRYPTED PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY",
                                 "DSA PRIVATE KEY"})


def ssl_context(props: Mapping[str, str], source: str) -> ssl.SSLContext:
    """A verifying client context from the trust and key stores, as Kafka's DefaultSslEngineFactory."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)  # certificates and host names verified
    algorithm = java_trim(props.get("ssl.endpoint.identification.algorithm", "https"))
    if algorithm == "":
        context.check_hostname = False  # Kafka: only the host-name check is off, the chain is still verified
    elif algorithm.lower() != "https":
        raise InputError(f"The {named(props, 'ssl.endpoint.identification.algorithm')} is not supported",
                         hint=f"Use https (the default), or an empty value to skip the host-name check, in {source}.")
    trusted = _trusted_certificates(props, source)
    if trusted is None:
        context.load_default_certs()
    else:
        _load_trusted(context, *trusted)
    _load_client_certificate(context, props, source)
    return context


def _store_type(props: Mapping[str, str], key: str) -> tuple[str, bool]:
    """(type, given explicitly); Kafka's default type is JKS."""
    return java_trim(props.get(key, "JKS")).upper(), key in props


def _trusted_certificates(props: Mapping[str, str], source: str) -> tuple[str, str] | None:
    """(PEM text, where it came from) of the trust store, or None for the system's CAs."""
    store_type, explicit = _store_type(props, "ssl.truststore.type")
    certificates = props.get("ssl.truststore.certificates")
    location = props.get("ssl.truststore.location")
    password = _password(props, "ssl.truststore.password")
    if certificates is not None:
        if explicit and store_type != "PEM":
            raise _ssl_error(f"SSL trust store certs can be specified only for PEM, but "
                             f"{named(props, 'ssl.truststore.type')} is not PEM.", source)
        if location is not None:
            raise _ssl_error("Both SSL trust store location and separate trust certificates are specified.", source)
        if password is not None:
            raise _ssl_error("SSL trust store password cannot be specified for PEM format.", source)
        return certificates, "ssl.truststore.certificates"
    if location is not None:
        location = java_trim(location)
        where = named(props, "ssl.truststore.location")
        store = _read_store(props, location, "ssl.truststore", store_type, explicit)
        if isinstance(store, Store):
            pem = [c.public_bytes(serialization.Encoding.PEM).decode("ascii")
                   for c in trusted_certificates(store, password)]
            return "".join(pem), where
        if password is not None:
            raise _ssl_error("SSL trust store password cannot be specified for PEM format.", source)
        return store, where
    if password is not None:
        raise _ssl_error("SSL trust store is not specified, but trust store password is specified.", source)
    return None


def _password(props: Mapping[str, str], key: str) -> str | None:
    """A store password as Kafka reads it (trimmed), checked to be text; never shown."""
    if key not in props:
        return None
    password = java_trim(props[key])
    check_unicode(password, key)
    return password


def _load_trusted(context: ssl.SSLContext, text: str, where: str) -> None:
    certificates = _pem_blocks(text, {"CERTIFICATE"})
    if not certificates:
        raise InputError(f"{where} holds no certificate: At least one certificate expected, but none found",
                         hint="Give the CA certificates in PEM (-----BEGIN CERTIFICATE----- ...).")
    try:
        # str: PEM (bytes would be DER); a character outside ASCII becomes "?", which OpenSSL refuses as PEM
        context.load_verify_locations(cadata="".join(certificates).encode("ascii", "replace").decode("ascii"))
    except ssl.SSLError as exc:
        detail = f" ({exc.reason})" if exc.reason else ""
        raise InputError(f"{where} holds a certificate that cannot be read{detail}",
                         hint="Give the CA certificates in PEM (-----BEGIN CERTIFICATE----- ...).") from None


def _load_client_certificate(context: ssl.SSLContext, props: Mapping[str, str], source: str) -> None:
    """The key store, if any: Kafka's createKeystore rules."""
    store_type, explicit = _store_type(props, "ssl.keystore.type")
    key, chain = props.get("ssl.keystore.key"), props.get("ssl.keystore.certificate.chain")
    location = props.get("ssl.keystore.location")
    store_password = _password(props, "ssl.keystore.password")
    key_password = _password(props, "ssl.key.password")
    if key_password is not None and len(key_password.encode("utf-8")) > _MAX_KEY_PASSWORD_BYTES:
        raise InputError(f"ssl.key.password is longer than {_MAX_KEY_PASSWORD_BYTES} bytes, more than OpenSSL "
                         "takes for a key's passphrase", hint="Protect the key with a shorter passphrase.")
    if key is not None:
        if explicit and store_type != "PEM":
            raise _ssl_error(f"SSL private key can be specified only for PEM, but {named(props, 'ssl.keystore.type')} "
                             "is not PEM.", source)
        if chain is None:
            raise _ssl_error("SSL private key is specified, but certificate chain is not specified.", source)
        if location is not None:
            raise _ssl_error("Both SSL key store location and separate private key are specified.", source)
        if store_password is not None:
            raise _ssl_error("SSL key store password cannot be specified with PEM format, only key password may be "
                             "specified.", source)
        _load_pem_key(context, key, "ssl.keystore.key", chain, "ssl.keystore.certificate.chain", key_password)
    elif chain is not None:
        raise _ssl_error("SSL certificate chain is specified, but private key is not specified", source)
    elif location is not None:
        location = java_trim(location)
        where = named(props, "ssl.keystore.location")
        store = _read_store(props, location, "ssl.keystore", store_type, explicit)
        if isinstance(store, Store):
            _load_key_material(context, key_material(store, store_password, key_password), where)
            return
        if store_password is not None:
            raise _ssl_error("SSL key store password cannot be specified with PEM format, only key password may be "
                             "specified", source)
        _load_pem_key(context, store, where, store, where, key_password)
    elif store_password is not None:
        raise _ssl_error("SSL key store is not specified, but key store password is specified.", source)


def _ssl_error(kafka_message: str, source: str) -> InputError:
    return InputError(kafka_message, hint=f"Fix the ssl.* settings in {source}.")


def _read_store(props: Mapping[str, str], location: str, prefix: str, store_type: str,
                explicit: bool) -> str | Store:
    """A store file: its text when it is PEM, else the binary store (JKS or PKCS12). Messages name the
    setting and its line, never the path read from the file."""
    setting = named(props, f"{prefix}.location")
    shown_path = f"named by {setting}"
    text = read_text(location, "the store", f"{prefix}.location", shown_path)
    if store_type not in ("PEM", "JKS", "PKCS12"):
        raise InputError(f"The {named(props, f'{prefix}.type')} is not supported: this tool reads JKS, PKCS12 "
                         "and PEM stores", hint=_STORE_CONVERSION.format(prefix=prefix))
    if "-----BEGIN " in text:
        if explicit and store_type != "PEM":  # unset (JKS) with a PEM file is read as PEM
            raise InputError(f"The store named by {setting} is a PEM file but {prefix}.type is {store_type}",
                             hint=f"Set {prefix}.type=PEM.")
        return text
    data = text.encode("latin-1")
    found = binary_format(data)
    if found is None:
        raise InputError(f"The store named by {setting} is not a JKS, PKCS12 or PEM store (empty, corrupt or "
                         "another format)", hint=f"Check {prefix}.location and {prefix}.type.")
    if store_type == "PEM":
        raise InputError(f"The store named by {setting} is a {found} store but {prefix}.type is PEM",
                         hint=f"Set {prefix}.type={found}.")
    return Store(data, prefix, setting, store_type)


def _pem_spans(text: str) -> Iterator[tuple[str, int, int, int, int]]:
    """Each `-----BEGIN L-----...-----END L-----` block as (L, start, body start, body end, end), in one pass
    over the markers: a BEGIN pairs with the first END of its label after it (a BEGIN without one is
    skipped). Linear in the text however the markers are arranged (20,000 BEGIN lines and no END hung a
    backtracking regex)."""
    markers = [(m[2], m[3], m.start(), m.end(1)) for m in _PEM_MARKER.finditer(text)]  # (kind, label, start, end)
    ends: dict[str, list[tuple[int, int]]] = {}
    for kind, label, start, end in markers:
        if kind == "END":
            ends.setdefault(label, []).append((start, end))
    next_end = dict.fromkeys(ends, 0)  # per label, the first END not yet passed: only ever moves forward
    position = 0
    for kind, label, start, end in markers:
        if kind != "BEGIN" or start < position:
            continue
        candidates = ends.get(label, [])
        index = next_end.get(label, 0)
        while index < len(candidates) and candidates[index][0] < end:
            index += 1
        next_end[label] = index
        if index == len(candidates):
            continue
        end_start, end_end = candidates[index]
        yield label, start, end, end_start, end_end
        position = end_end


def _pem_blocks(text: str, labels: set[str] | frozenset[str]) -> list[str]:
    """The PEM blocks with these labels, re-wrapped: Kafka accepts PEM joined onto one line by continuation
    lines, OpenSSL does not. Blocks with headers (legacy encrypted keys) are kept as they are."""
    blocks = []
    for label, start, body_start, body_end, end in _pem_spans(text):
        if label not in labels:
            continue
        body = text[body_start:body_end]
        if ":" in body:
            blocks.append(text[start:end].strip() + "\n")
            continue
        data = "".join(body.split())
        lines = "\n".join(data[i:i + 64] for i in range(0, len(data), 64))
        blocks.append(f"-----BEGIN {label}-----\n{lines}\n-----END {label}-----\n")
    return blocks


def _load_pem_key(context: ssl.SSLContext, key_text: str, key_where: str, chain_text: str, chain_where: str,
                  key_password: str | None) -> None:
    """A PEM private key and its certificate chain (ssl.keystore.key and ssl.keystore.certificate.chain, or
    one PEM key store file, read once), decrypted in memory."""
    keys = _pem_blocks(key_text, _PRIVATE_KEY_LABELS)
    chain = _pem_blocks(chain_text, {"CERTIFICATE"})
    if not keys:
        raise InputError(f"{key_where} holds no PEM private key", hint="Give the key in PEM "
                         "(-----BEGIN PRIVATE KEY----- or -----BEGIN ENCRYPTED PRIVATE KEY-----).")
    if not chain:
        raise InputError(f"{chain_where} holds no certificate: At least one certificate expected, but none found",
                         hint="Give the certificate chain in PEM, the key's own certificate first.")
    key_pem = keys[0].encode("ascii", "replace")
    try:
        private_key = serialization.load_pem_private_key(
            key_pem, password=key_password.encode("utf-8") if key_password is not None else None)
    except TypeError:
        if key_password is None:
            raise InputError(f"The private key in {key_where} is encrypted, but ssl.key.password is not set",
                             hint="Set ssl.key.password to the key's passphrase.") from None
        private_key = serialization.load_pem_private_key(key_pem, password=None)  # Kafka ignores it then
    except (ValueError, UnsupportedAlgorithm):
        raise InputError(f"Could not load the private key in {key_where}",
                         hint="Check ssl.key.password (the key's passphrase) and that the key is PEM.") from None
    try:
        certificates = x509.load_pem_x509_certificates("".join(chain).encode("ascii", "replace"))
    except ValueError:
        raise InputError(f"{chain_where} holds a certificate that cannot be read",
                         hint="Give the certificate chain in PEM, the key's own certificate first.") from None
    _load_key_material(context, KeyMaterial(private_key, certificates), key_where)


def _load_key_material(context: ssl.SSLContext, material: KeyMaterial, where: str) -> None:
    """A key from memory into the context. The ssl module loads keys only from files, so the chain and
    the key go to a private (0600) temporary file that is removed at once, the key in it encrypted
    (PKCS#8, AES-256) with a random password that only this process ever holds."""
    password = secrets.token_bytes(32).hex()
    pem = b"".join(c.public_bytes(serialization.Encoding.PEM) for c in material.chain) + material.key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(password.encode("ascii")))
    try:
        descriptor, name = tempfile.mkstemp(prefix="leader-election-key-", suffix=".pem")
    except OSError as exc:  # no writable temporary directory: it was an internal error
        raise InputError(f"The key in {where} needs a private temporary file, which could not be made: "
                         f"{exc.strerror or type(exc).__name__}", hint="Set TMPDIR to a directory you can write.") \
            from None
    try:
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(pem)
        except OSError as exc:  # a full disk
            raise InputError(f"The key in {where} needs a private temporary file, which could not be written: "
                             f"{exc.strerror or type(exc).__name__}", hint="Set TMPDIR to a directory with room.") \
                from None
        _load_key_and_chain(context, name, password, where)
    finally:
        os.unlink(name)


def _load_key_and_chain(context: ssl.SSLContext, certfile: str, key_password: str | None, where: str) -> None:
    try:
        context.load_cert_chain(certfile, password=key_password if key_password is not None else
                                _missing_key_password(where))
    except ssl.SSLError as exc:
        if exc.reason == "KEY_VALUES_MISMATCH":
            raise InputError(f"The private key in {where} does not match its certificate",
                             hint="Give the certificate issued for this key first in the chain.") from None
        detail = f" ({exc.reason})" if exc.reason else ""
        raise InputError(f"Could not load the private key in {where}{detail}",
                         hint="Check ssl.key.password (the key's passphrase) and that the key is PEM.") from None


def _missing_key_password(where: str) -> Callable[[], str]:
    """The password callback without ssl.key.password: OpenSSL would otherwise prompt on the terminal."""
    def no_password() -> str:
        raise InputError(f"The private key in {where} is encrypted, but ssl.key.password is not set",
                         hint="Set ssl.key.password to the key's passphrase.")
    return no_password
