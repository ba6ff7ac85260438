"""What `ClusterConnection` asks of a transport, and the failures both transports report alike.

Two transports carry the requests (docs/ARCHITECTURE.md, "The request plan"): `socket_client.py`, our
own blocking sockets, for PLAINTEXT and SSL; `kafka_python_client.py`, kafka-python's client, for SASL.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

from leader_election_cli import __version__
from leader_election_cli.cluster.metadata_wire import MetadataRead
from leader_election_cli.cluster.wire_codec import ApiVersionsCall, Call
from leader_election_cli.errors import LeaderElectionError, TimedOutError, UnreachableError, listed, shown

CLIENT_ID = f"leader-election-cli-{__version__}"  # the request headers' client id unless client.id is set
SOFTWARE = ApiVersionsCall("leader-election-cli", __version__)  # who we are in ApiVersions v3+ (KIP-511)
# Kafka's Utils.HOST_PORT_PATTERN (an optional scheme, a host, IPv6 in brackets, a port), brackets paired.
_HOST_PORT = re.compile(r"(?:[a-zA-Z][a-zA-Z\d+._-]*://)?(?:\[(?P<ipv6>[0-9a-zA-Z._%:-]+)]|(?P<host>[0-9a-zA-Z._%:-]+))"
                        r":(?P<port>[0-9]+)")


def host_and_port(address: str) -> tuple[str, int] | None:
    """HOST:PORT ([IPv6]:PORT, an optional scheme) as Kafka's ClientUtils reads it; None: not that form."""
    match = _HOST_PORT.fullmatch(address)
    return None if match is None else (match["ipv6"] or match["host"], int(match["port"]))


class Transport(Protocol):
    """One bootstrap connection, kept open, and more only for a broker asked by its id."""

    def api_versions(self) -> dict[int, tuple[int, int]]:
        """The bootstrap broker's ApiVersions: api key -> (min, max)."""

    def finalized_features(self, timeout_ms: int) -> dict[str, int]:
        """The bootstrap broker's finalized feature levels (ApiVersions v3+): name -> level."""

    def learn_brokers(self, read: MetadataRead) -> None:
        """The brokers a Metadata answer names: where a broker asked by its id is reached."""

    def send(self, call: Call, node_id: int | None, what: str, timeout_ms: int) -> Any:
        """`call`'s answer from broker `node_id` (None: any), within `timeout_ms`; a failure is a
        `LeaderElectionError` saying it happened while `what`."""

    def close(self) -> None: ...


def lookup_name(host: str) -> str | bytes:
    """`host` as `socket.getaddrinfo` takes it most cheaply: an ASCII name as bytes (a str is always put
    through the IDNA codec, a module of its own to load), any other as str, for IDNA."""
    return host.encode("ascii") if host.isascii() else host


def tls_failure(where: str, reason: str) -> UnreachableError:
    """The TLS handshake with `where` (the one HOST:PORT that failed) failed (Kafka's AdminClient stops at
    once too). A TLS alert is the broker refusing this client (no client certificate, or one its CA did not
    sign: the key store is wrong); anything else is this client refusing the broker (its certificate or its
    name)."""
    if "ALERT" in reason.upper():
        hint = ("The broker refused this client: check ssl.keystore.* (the client certificate a broker with "
                "ssl.client.auth=required needs, signed by a CA it trusts) in the config file.")
    else:
        hint = ("Check ssl.truststore.* (the CA that signed the brokers' certificates) and "
                "ssl.endpoint.identification.algorithm in the config file.")
    return UnreachableError(f"TLS handshake with {where} failed: {reason}", hint=hint)


# -- a bootstrap server that cannot serve this client, and why ----------------------------------------------

REFUSED_ATTEMPTS = 3  # a port that refused this many connections (with backoff between) is not about to open
_NOT_KAFKA_HINT = ("That port is not a Kafka listener: give a broker's listener (HOST:PORT, as in its listeners "
                   "setting) in --bootstrap-server.")
_HINTS = {
    "refused": "Nothing listens there: check the host and port in --bootstrap-server, and that the broker runs.",
    "not kafka": _NOT_KAFKA_HINT,
    "tls": "That listener speaks TLS: set security.protocol=SSL (SASL_SSL with SASL) in the config file.",
}


class NotKafka(Exception):
    """A server that answered, but not in Kafka's protocol: `kind` "tls" when its answer is TLS (a TLS
    listener), "not kafka" otherwise; the text says what came."""

    def __init__(self, text: str, kind: str = "not kafka"):
        super().__init__(text)
        self.kind = kind


def strange_frame(head: bytes, size: int) -> NotKafka:
    """An answer whose first four bytes (`head`, read as the frame's `size`) cannot begin a Kafka answer."""
    if head[:4] == b"HTTP":
        return NotKafka("answered in HTTP, not in Kafka's protocol")
    if head[:1] in (b"\x15", b"\x16") and head[1:2] == b"\x03":  # a TLS alert or handshake record
        return NotKafka("answered in TLS: the listener expects security.protocol=SSL or SASL_SSL", "tls")
    return NotKafka(f"answered, but not in Kafka's protocol (a frame of {size} bytes)")


class BootstrapAttempts:
    """What each bootstrap server did so far, for both transports: whether trying again can help, and what
    to say when the run stops.

    A server that answered in another protocol is not tried again; one that refused the connection is
    tried REFUSED_ATTEMPTS times (with the transport's backoff between), as a broker restarting may open
    its port meanwhile. Once every server has failed so (`settled`), the run stops at once with that cause,
    well within the API timeout that Kafka's AdminClient would wait out retrying them.
    """

    def __init__(self, addresses: list[str]):
        self._addresses = list(dict.fromkeys(addresses))
        self._last: dict[str, tuple[str, str]] = {}  # address -> (kind, what it did)
        self._refused: dict[str, int] = {}

    def failed(self, address: str, kind: str, text: str) -> None:
        """`address` failed: `kind` "refused", "not kafka", "tls" or "other" (worth trying again)."""
        self._last[address] = (kind, text)
        if kind == "refused":
            self._refused[address] = self._refused.get(address, 0) + 1

    def given_up(self, address: str) -> bool:
        """Trying `address` again cannot help."""
        kind = self._last.get(address, ("", ""))[0]
        return kind in ("not kafka", "tls") or (kind == "refused" and self._refused[address] >= REFUSED_ATTEMPTS)

    def settled(self) -> bool:
        return all(self.given_up(address) for address in self._addresses)

    def error(self, bootstrap_servers: str, api_timeout_ms: int) -> TimedOutError:
        """Why the bootstrap failed: each server's cause where every one failed for a cause that can be
        named (refused, not Kafka), else no server answering in time, with what each did meanwhile.
        Either way Kafka's tool would have printed its timeout line: a `TimedOutError`, one line (with its hint)."""
        kinds = {address: self._last.get(address, ("", ""))[0] for address in self._addresses}
        said = [f"{address} {self._said(address)}" for address in self._addresses if address in self._last]
        if all(kind in _HINTS for kind in kinds.values()):
            hints = dict.fromkeys(_HINTS[kind] for kind in kinds.values())
            return TimedOutError(listed(said, "; "), hint=" ".join(hints))
        meanwhile = f": {listed(said, '; ')}" if said else ""
        return TimedOutError(f"Could not reach any broker of {shown(bootstrap_servers)} within {api_timeout_ms} "
                             f"ms{meanwhile}",
                             hint="Check --bootstrap-server, the network, and security.protocol in the config file.")

    def _said(self, address: str) -> str:
        kind, text = self._last[address]
        if kind == "refused":
            attempts = self._refused[address]
            return f"refused the connection{f' ({attempts} attempts)' if attempts > 1 else ''}"
        return text


def not_tls(address: str) -> TimedOutError:
    """`address` closed the TLS handshake, and answers Kafka's protocol without TLS: a PLAINTEXT (or
    SASL_PLAINTEXT) listener. Kafka's AdminClient retries it until it times out."""
    return TimedOutError(f"{address} does not speak TLS: it closed the TLS handshake, and answers Kafka's "
                         "protocol without TLS",
                         hint="Set security.protocol=PLAINTEXT (SASL_PLAINTEXT with SASL) in the config file, or "
                              "give the broker's TLS listener in --bootstrap-server.")


_FAILURES: dict[str, tuple[type[LeaderElectionError], str]] = {
    "timed out": (TimedOutError, "Timed out while {what}"),
    # `detail` names the error as kafka-python's client named it: scripts may match it
    "lost": (UnreachableError, "Lost the connection while {what}: {detail}"),
    "incompatible": (UnreachableError, "Incompatible broker while {what}: {detail}"),
    "unexpected": (UnreachableError, "Unexpected failure while {what}: {detail}"),  # `detail`: the exception
}


def failure(kind: str, what: str, detail: str = "") -> LeaderElectionError:
    """A request that failed while `what`, as both transports say it (`kind`: a key of `_FAILURES`)."""
    error, line = _FAILURES[kind]
    return error(line.format(what=what, detail=detail))
