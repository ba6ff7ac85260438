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
from leader_election_cli.errors import LeaderElectionError, TimedOutError, UnreachableError

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
    """The TLS handshake with `where` failed (Kafka's AdminClient stops at once too). A TLS alert is the
    broker refusing this client (no client certificate, or one its CA did not sign: the key store is
    wrong); anything else is this client refusing the broker (its certificate or its name)."""
    if "ALERT" in reason.upper():
        hint = ("The broker refused this client: check ssl.keystore.* (the client certificate a broker with "
                "ssl.client.auth=required needs, signed by a CA it trusts) in the config file.")
    else:
        hint = ("Check ssl.truststore.* (the CA that signed the brokers' certificates) and "
                "ssl.endpoint.identification.algorithm in the config file.")
    return UnreachableError(f"TLS handshake with {where} failed: {reason}", hint=hint)


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


def unreachable(bootstrap_servers: str, api_timeout_ms: int) -> TimedOutError:
    """No bootstrap server answered within the API timeout."""
    return TimedOutError(f"Could not reach any broker of {bootstrap_servers} within {api_timeout_ms} ms",
                         hint="Check --bootstrap-server, the network, and security.protocol in the config file.")
