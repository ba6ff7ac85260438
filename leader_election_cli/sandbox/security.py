"""SASL (PLAIN, SCRAM-SHA-256/512) server side and TLS certificates for the sandbox's listeners.

The SASL exchange follows Kafka's `SaslServerAuthenticator`: before authentication a connection may
send ApiVersions, then SaslHandshake naming a mechanism, then SaslAuthenticate rounds (handshake
v1) or raw tokens (handshake v0). Anything else first closes the connection, as does a failed
authentication once its error answer is sent. Certificates are made at start with `cryptography`:
a CA and one server certificate for `localhost` and `127.0.0.1`.
"""

from __future__ import annotations

import base64
import datetime
import hashlib
import hmac
import ipaddress
import os
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512")
SCRAM_ITERATIONS = 4096  # Kafka's minimum for both SCRAM mechanisms
_HASHES = {"SCRAM-SHA-256": hashlib.sha256, "SCRAM-SHA-512": hashlib.sha512}


class AuthenticationFailed(Exception):
    """Bad credentials: answered with SASL_AUTHENTICATION_FAILED and this message, then closed."""


class SaslExchange:
    """One connection's authentication with the mechanism chosen in its handshake."""

    def __init__(self, mechanism: str, users: dict[str, str], raw: bool):
        self.mechanism = mechanism
        self.users = users
        self.raw = raw  # handshake v0: tokens arrive as bare frames, not SaslAuthenticate requests
        self.user: str | None = None  # set once authenticated
        self._scram_state: tuple[str, str, bytes, bytes] | None = None  # user, messages, salted, nonce

    def step(self, token: bytes) -> bytes:
        """Consume one client token; returns the server's token. Sets `user` when done."""
        if self.mechanism == "PLAIN":
            return self._plain(token)
        return self._scram(token)

    def _plain(self, token: bytes) -> bytes:
        """`PlainSaslServer.evaluateResponse`, its checks and messages in its order."""
        parts = token.decode("utf-8", "replace").split("\x00", 3)  # extractTokens reads at most four
        if len(parts) != 3:
            raise AuthenticationFailed(f"Invalid SASL/PLAIN response: expected 3 tokens, got {len(parts)}")
        authzid, user, password = parts
        if not user:
            raise AuthenticationFailed("Authentication failed: username not specified")
        if not password:
            raise AuthenticationFailed("Authentication failed: password not specified")
        known = self.users.get(user)  # compared as UTF-8 bytes: compare_digest refuses non-ASCII str
        if known is None or not hmac.compare_digest(known.encode("utf-8", "surrogatepass"),
                                                    password.encode("utf-8", "surrogatepass")):
            raise AuthenticationFailed("Authentication failed: Invalid username or password")
        _check_authorization_id(authzid, user)
        self.user = user
        return b""

    def _scram_failure(self) -> AuthenticationFailed:
        return AuthenticationFailed("Authentication failed during authentication due to invalid credentials "
                                    f"with SASL mechanism {self.mechanism}")

    def _scram(self, token: bytes) -> bytes:
        digest = _HASHES[self.mechanism]
        text = token.decode("utf-8", "replace")
        if self._scram_state is None:  # client-first: gs2 header, then n=user,r=nonce
            try:
                gs2, authzid, bare = text.split(",", 2)
                attributes = dict(a.split("=", 1) for a in bare.split(","))
                user = attributes["n"].replace("=2C", ",").replace("=3D", "=")
                client_nonce = attributes["r"]
            except (IndexError, KeyError, ValueError):
                raise self._scram_failure() from None
            if gs2 != "n" or (authzid and not authzid.startswith("a=")) or user not in self.users:
                raise self._scram_failure()  # ClientFirstMessage takes no channel binding
            _check_authorization_id(authzid.removeprefix("a="), user)
            salt = os.urandom(16)
            nonce = client_nonce + base64.b64encode(os.urandom(18)).decode()
            server_first = f"r={nonce},s={base64.b64encode(salt).decode()},i={SCRAM_ITERATIONS}"
            salted = hashlib.pbkdf2_hmac(digest().name, self.users[user].encode(), salt, SCRAM_ITERATIONS)
            self._scram_state = (user, f"{bare},{server_first}", salted, nonce.encode())
            return server_first.encode()
        user, first_messages, salted, nonce = self._scram_state
        without_proof, _, proof_attr = text.rpartition(",p=")
        attributes = dict(a.split("=", 1) for a in without_proof.split(",") if "=" in a)
        if attributes.get("r", "").encode() != nonce or not proof_attr:
            raise self._scram_failure()
        auth_message = f"{first_messages},{without_proof}".encode()
        client_key_hash = digest(hmac.new(salted, b"Client Key", digest).digest()).digest()
        signature = hmac.new(client_key_hash, auth_message, digest).digest()
        try:
            proof = base64.b64decode(proof_attr)
        except ValueError:
            raise self._scram_failure() from None
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=False))  # the lengths are checked next
        if len(proof) != len(signature) or not hmac.compare_digest(digest(client_key).digest(), client_key_hash):
            raise self._scram_failure()
        server_key = hmac.new(salted, b"Server Key", digest).digest()
        self.user = user
        return b"v=" + base64.b64encode(hmac.new(server_key, auth_message, digest).digest())


def _check_authorization_id(authzid: str, user: str) -> None:
    if authzid and authzid != user:  # PlainSaslServer and ScramSaslServer
        raise AuthenticationFailed(
            "Authentication failed: Client requested an authorization id that is different from username")


def make_certificates(directory: Path) -> tuple[Path, Path, Path]:
    """A CA and a server certificate (SANs localhost, 127.0.0.1); returns (ca, cert, key) PEM paths."""
    now = datetime.datetime.now(datetime.timezone.utc)
    valid = (now - datetime.timedelta(minutes=5), now + datetime.timedelta(days=2))

    def build(subject: str, issuer: x509.Name | None, issuer_key: ec.EllipticCurvePrivateKey | None,
              ca: bool) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
        key = ec.generate_private_key(ec.SECP256R1())
        name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)])
        builder = (x509.CertificateBuilder().subject_name(name).issuer_name(issuer or name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(valid[0]).not_valid_after(valid[1])
                   .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if not ca:
            builder = builder.add_extension(x509.SubjectAlternativeName(
                [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
        return builder.sign(issuer_key or key, hashes.SHA256()), key

    ca_cert, ca_key = build("kafka-sandbox CA", None, None, ca=True)
    cert, key = build("localhost", ca_cert.subject, ca_key, ca=False)
    paths = directory / "ca.pem", directory / "server.pem", directory / "server-key.pem"
    paths[0].write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return paths


def server_context(cert: Path, key: Path) -> ssl.SSLContext:
    """A TLS server context presenting `cert` (a PEM chain) with `key`; ValueError when they are not that."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    try:
        context.load_cert_chain(cert, key)
    except (ssl.SSLError, OSError) as exc:
        raise ValueError(f"{cert} and {key} are not a PEM certificate chain and its unencrypted key "
                         f"({exc.reason if isinstance(exc, ssl.SSLError) else exc.strerror})") from None
    return context


def require_client_certificates(context: ssl.SSLContext, ca_file: str) -> None:
    """Kafka's ssl.client.auth=required: a client without a certificate signed by this CA is refused;
    ValueError when `ca_file` holds no PEM certificate."""
    context.verify_mode = ssl.CERT_REQUIRED
    try:
        context.load_verify_locations(ca_file)
    except (ssl.SSLError, OSError) as exc:
        raise ValueError(f"{ca_file} holds no PEM CA certificate "
                         f"({exc.reason if isinstance(exc, ssl.SSLError) else exc.strerror})") from None
