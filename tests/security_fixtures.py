"""Shared security fixtures: a CA with broker and client certificates, and the client's stores in every
format Kafka reads (JKS, PKCS12, PEM): the JKS stores and the store of keytool's default type (PKCS12) made
by Java's own keytool, as a Java shop makes them, the other PKCS12 and PEM files by cryptography."""

from __future__ import annotations

import base64
import datetime
import ipaddress
import os
import shutil
import socket
import struct
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import NameOID
from services import missing_service

STORE_PASSWORD = "St0re-Pa55-6d1e"  # the stores' passwords: must never be printed
KEY_PASSWORD = "K3y-Only-Pa55-92ab"  # a JKS key entry's own password (ssl.key.password)


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def certificate(subject: str, key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey, issuer: x509.Certificate | None,
                issuer_key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey, *, ca: bool = False,
                server: bool = False) -> x509.Certificate:
    now = datetime.datetime.now(datetime.timezone.utc)
    builder = (x509.CertificateBuilder().subject_name(_name(subject))
               .issuer_name(issuer.subject if issuer else _name(subject)).public_key(key.public_key())
               .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
               .not_valid_after(now + datetime.timedelta(days=2))
               .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server:
        builder = builder.add_extension(x509.SubjectAlternativeName(
            [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def der(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.DER)


@dataclass(frozen=True)
class Pki:
    """A CA, a broker certificate for localhost/127.0.0.1, and a client's key in every store format."""

    directory: Path
    ca_pem: Path
    server_cert: Path  # broker certificate + key, PEM, for a listener
    server_key: Path
    trust_jks: Path
    trust_p12: Path
    key_jks: Path  # key entry encrypted with the store password
    key_jks_own_password: Path  # key entry encrypted with KEY_PASSWORD
    key_p12: Path
    trust_keytool_default: Path  # keytool's default store type (PKCS12 since Java 9), made by keytool
    key_keytool_default: Path
    client_key_pem: str  # PKCS#8, encrypted with KEY_PASSWORD
    client_chain_pem: str
    client_key_der: bytes  # unencrypted PKCS#8 DER: what must never reach a file

    def config(self, *lines: str) -> str:
        return "\n".join(("security.protocol=SSL", "default.api.timeout.ms=8000", "request.timeout.ms=5000",
                          *lines)) + "\n"


def keytool(*args: str) -> None:
    """Run Java's keytool (a JDK: scripts/test installs one; skips, with the reason, without)."""
    if shutil.which("keytool") is None:
        missing_service("JDK", "keytool is missing: apt-get install default-jdk-headless")
    done = subprocess.run(["keytool", *args, "-noprompt"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr


def make_pki(directory: Path, client_name: str = "ops-client") -> Pki:
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = certificate("test-ca", ca_key, None, ca_key, ca=True)
    server_key = ec.generate_private_key(ec.SECP256R1())
    server = certificate("localhost", server_key, ca, ca_key, server=True)
    client_key = rsa.generate_private_key(public_exponent=65537, key_size=2048)  # keytool's default kind
    client = certificate(client_name, client_key, ca, ca_key)
    files = {"ca.pem": pem(ca), "server.pem": pem(server),
             "server-key.pem": server_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption())}
    for name, content in files.items():
        (directory / name).write_bytes(content)
    key_der = client_key.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption())
    encryption = serialization.BestAvailableEncryption(STORE_PASSWORD.encode())
    (directory / "trust.p12").write_bytes(pkcs12.serialize_key_and_certificates(None, None, None, [ca], encryption))
    (directory / "key.p12").write_bytes(pkcs12.serialize_key_and_certificates(b"client", client_key, client, [ca],
                                                                              encryption))
    for store_type, trust, key in (("JKS", "trust.jks", "key.jks"), (None, "trust-default.keystore",
                                                                      "key-default.keystore")):
        of_type = ("-storetype", store_type) if store_type else ()  # none: keytool's default type
        keytool("-importcert", "-alias", "ca", "-file", str(directory / "ca.pem"), "-keystore",
                str(directory / trust), *of_type, "-storepass", STORE_PASSWORD)
        keytool("-importkeystore", "-srckeystore", str(directory / "key.p12"), "-srcstoretype", "PKCS12",
                "-srcstorepass", STORE_PASSWORD, "-destkeystore", str(directory / key),
                *(("-deststoretype", store_type) if store_type else ()), "-deststorepass", STORE_PASSWORD)
    keytool("-importkeystore", "-srckeystore", str(directory / "key.p12"), "-srcstoretype", "PKCS12",
            "-srcstorepass", STORE_PASSWORD, "-srcalias", "client", "-destkeystore",
            str(directory / "key-own-password.jks"), "-deststoretype", "JKS", "-deststorepass", STORE_PASSWORD,
            "-destkeypass", KEY_PASSWORD)
    key_pem = client_key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.BestAvailableEncryption(KEY_PASSWORD.encode())).decode()
    return Pki(directory, directory / "ca.pem", directory / "server.pem", directory / "server-key.pem",
               directory / "trust.jks", directory / "trust.p12", directory / "key.jks",
               directory / "key-own-password.jks", directory / "key.p12", directory / "trust-default.keystore",
               directory / "key-default.keystore", key_pem,
               (pem(client) + pem(ca)).decode(), key_der)


def continued(text: str) -> str:
    """PEM as people put it in a .properties file: one continuation line per PEM line."""
    return " \\\n    ".join(text.strip().splitlines())


# -- an OIDC token endpoint (client-credentials grant, RS256 JWTs, a JWKS document) ----------------------

class TokenEndpoint:
    """A small OIDC provider on 127.0.0.1: POST /token (client_credentials, HTTP Basic), GET /jwks. Its
    tokens' issuer is "test-idp", their audience "kafka-brokers". `received`: each token request's
    headers and body, as they came."""

    def __init__(self, clients: dict[str, str], lifetime_s: int = 3600, tls: tuple[Path, Path] | None = None,
                 decode: Callable[[str], str] | None = None) -> None:
        """`tls`: (certificate chain, key) PEM files: POST /token is served over https too (`https_token_url`).
        `decode`: how the id and secret in the Basic credentials are read (default: percent-decoded; an
        RFC 6749 provider form-decodes them, urllib.parse.unquote_plus; some take them as they are)."""
        import http.server
        import json
        import threading
        import urllib.parse

        import jwt

        self.clients, self.lifetime_s, self.token_requests = clients, lifetime_s, 0
        self.received: list[tuple[dict[str, str], str]] = []
        decode = decode or urllib.parse.unquote
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        jwk = jwt.algorithms.RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
        jwks = json.dumps({"keys": [{**jwk, "kid": "k1", "use": "sig", "alg": "RS256"}]}).encode()
        endpoint = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def _send(self, status: int, body: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802
                self._send(200, jwks) if self.path == "/jwks" else self._send(404, b"{}")

            def do_POST(self) -> None:  # noqa: N802
                body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
                form = urllib.parse.parse_qs(body)
                endpoint.token_requests += 1
                endpoint.received.append((dict(self.headers.items()), body))
                try:
                    basic = base64.b64decode(self.headers.get("Authorization", "").removeprefix("Basic ")).decode()
                    client_id, secret = (decode(p) for p in basic.split(":", 1))
                except ValueError:
                    client_id, secret = "", None
                if self.path != "/token" or form.get("grant_type") != ["client_credentials"] or \
                        endpoint.clients.get(client_id) != secret:
                    self._send(401, b'{"error":"invalid_client"}')
                    return
                now = int(time.time())
                claims = {"sub": client_id, "iat": now, "exp": now + endpoint.lifetime_s, "iss": "test-idp",
                          "aud": ["kafka-brokers"], "scope": form.get("scope", [""])[0]}
                token = jwt.encode(claims, key, algorithm="RS256", headers={"kid": "k1"})
                self._send(200, json.dumps({"access_token": token, "token_type": "Bearer",
                                            "expires_in": endpoint.lifetime_s}).encode())

        self._servers = [http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)]
        if tls is not None:
            import ssl

            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            secure = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
            secure.socket = context.wrap_socket(secure.socket, server_side=True)
            self._servers.append(secure)
            self.https_token_url = f"https://127.0.0.1:{secure.server_address[1]}/token"
        self._threads = [threading.Thread(target=server.serve_forever, daemon=True) for server in self._servers]
        for thread in self._threads:
            thread.start()
        base = f"http://127.0.0.1:{self._servers[0].server_address[1]}"
        self.token_url, self.jwks_url = f"{base}/token", f"{base}/jwks"

    def close(self) -> None:
        for server, thread in zip(self._servers, self._threads, strict=True):
            server.shutdown()
            server.server_close()
            thread.join(timeout=5)


def write_keytab(path: Path, principals: list[str]) -> Path:
    """A keytab as MIT's ktadd writes one (format 0x0502), one random AES-256 key per principal: enough for
    an acceptor to read, with no KDC (the bad-option tests need a keytab, never a KDC)."""

    def counted(text: str) -> bytes:
        return struct.pack(">H", len(text.encode())) + text.encode()

    entries = []
    for principal in principals:
        name, realm = principal.rsplit("@", 1)
        components = name.split("/")
        key = os.urandom(32)
        entry = (struct.pack(">H", len(components)) + counted(realm) + b"".join(map(counted, components)) +
                 struct.pack(">IIBHH", 1, int(time.time()), 1, 18, len(key)) + key + struct.pack(">I", 1))
        entries.append(struct.pack(">i", len(entry)) + entry)  # name type 1, kvno 1, enctype 18 (aes256-cts)
    path.write_bytes(b"\x05\x02" + b"".join(entries))
    return path


# -- a real MIT Kerberos KDC (Debian's krb5-kdc) ------------------------------------------------------------

class Kdc:
    """A realm of its own on 127.0.0.1 (TCP, a port picked here): kdb5_util makes the database,
    kadmin.local the brokers' service principals and the client's, with their keytabs; krb5kdc serves it.
    Sets KRB5_CONFIG for this process (the client and the sandbox's acceptor read it)."""

    REALM = "LEADER.TEST"

    @staticmethod
    def require() -> None:
        """Skip (fail under CI=true) where MIT Kerberos's KDC programs are missing."""
        for tool, package in (("kdb5_util", "krb5-kdc"), ("krb5kdc", "krb5-kdc"),
                              ("kadmin.local", "krb5-admin-server"), ("kinit", "krb5-user")):
            if shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin") is None:
                missing_service("Kerberos KDC", f"{tool} is missing: apt-get install krb5-kdc krb5-admin-server "
                                                f"krb5-user (Debian's {package} has it)")

    def __init__(self, directory: Path) -> None:
        self.require()
        self.directory, realm = directory, self.REALM
        (directory / "kadm5.acl").write_text("")
        self.env = {**os.environ, "KRB5_CONFIG": str(directory / "krb5.conf"),
                    "KRB5_KDC_PROFILE": str(directory / "kdc.conf"),
                    "PATH": os.environ.get("PATH", "") + ":/usr/sbin:/sbin"}
        self._configure(0)  # the database and keytabs need no port; the KDC's is picked when it starts

        def run(*args: str) -> None:
            subprocess.run(args, env=self.env, check=True, capture_output=True, timeout=60)

        run("kdb5_util", "create", "-s", "-r", realm, "-P", "master-Pa55-kdc")
        self.broker_keytab, self.client_keytab = directory / "kafka.keytab", directory / "client.keytab"
        for principal, keytab in ((f"kafka/127.0.0.1@{realm}", self.broker_keytab),
                                  (f"kafka/localhost@{realm}", self.broker_keytab),
                                  (f"leader-tool@{realm}", self.client_keytab)):
            run("kadmin.local", "-r", realm, "-q", f"addprinc -randkey {principal}")
            run("kadmin.local", "-r", realm, "-q", f"ktadd -k {keytab} {principal}")
        self.client_principal = f"leader-tool@{realm}"
        self.stale_keytab = directory / "stale.keytab"  # its key changed on the KDC since: refused
        run("kadmin.local", "-r", realm, "-q", f"addprinc -randkey stale@{realm}")
        run("kadmin.local", "-r", realm, "-q", f"ktadd -k {self.stale_keytab} stale@{realm}")
        run("kadmin.local", "-r", realm, "-q", f"cpw -randkey stale@{realm}")
        failures = []
        for _ in range(3):  # a free port can be taken between choosing it and krb5kdc binding it
            with socket.socket() as probe:
                probe.bind(("127.0.0.1", 0))
                self.port = probe.getsockname()[1]
            self._configure(self.port)
            self._process = subprocess.Popen(["krb5kdc", "-n", "-r", realm], env=self.env,
                                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            if self._listening():
                os.environ["KRB5_CONFIG"] = self.env["KRB5_CONFIG"]
                return
            self.close()
            failures.append(f"port {self.port}: exit {self._process.returncode}")
        raise RuntimeError(f"krb5kdc did not start listening ({'; '.join(failures)}): {self._log()}")

    def _configure(self, port: int) -> None:
        """krb5.conf (the clients') and kdc.conf (the KDC's), with the KDC on `port`."""
        realm, directory = self.REALM, self.directory
        (directory / "krb5.conf").write_text(
            f"[libdefaults]\n default_realm = {realm}\n dns_lookup_kdc = false\n dns_lookup_realm = false\n"
            " rdns = false\n dns_canonicalize_hostname = false\n udp_preference_limit = 1\n"
            f"[realms]\n {realm} = {{\n  kdc = 127.0.0.1:{port}\n }}\n")
        (directory / "kdc.conf").write_text(
            f"[kdcdefaults]\n kdc_listen = 127.0.0.1:{port}\n kdc_tcp_listen = 127.0.0.1:{port}\n"
            f"[realms]\n {realm} = {{\n  database_name = {directory}/principal\n"
            f"  key_stash_file = {directory}/stash\n  acl_file = {directory}/kadm5.acl\n"
            f"  kdc_listen = 127.0.0.1:{port}\n  kdc_tcp_listen = 127.0.0.1:{port}\n }}\n"
            f"[logging]\n kdc = FILE:{directory}/kdc.log\n")

    def _log(self) -> str:
        log = self.directory / "kdc.log"
        return log.read_text(errors="replace") if log.exists() else ""

    def _listening(self) -> bool:
        """Wait until this krb5kdc serves (its log says so after it set up its sockets; a port taken by
        another program answers a connection too) or exits (bounded: 60 s)."""
        deadline = time.monotonic() + 60
        while self._process.poll() is None and time.monotonic() < deadline:
            if f"[{self._process.pid}](info): commencing operation" in self._log():
                return True
            time.sleep(0.05)
        return False

    def kinit(self, cache: Path) -> None:
        """A ticket cache as `kinit -kt` leaves it (what an operator's kinit would)."""
        subprocess.run(["kinit", "-kt", str(self.client_keytab), "-c", f"FILE:{cache}", self.client_principal],
                       env=self.env, check=True, capture_output=True, timeout=30)

    def close(self) -> None:
        self._process.terminate()
        self._process.wait(timeout=10)
