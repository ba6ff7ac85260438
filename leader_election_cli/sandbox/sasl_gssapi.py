"""SASL/GSSAPI (Kerberos) server side, as Kafka's broker runs Java's GssKrb5Server.

The brokers accept with the service keys of a keytab (python-gssapi, MIT Kerberos): the client's
AP-REQ tokens until the context is established, then the security-layer negotiation of RFC 4752
(the broker offers QOP `auth` only, as Kafka does, and reads the client's wrapped choice). The
principal is mapped as Kafka's DEFAULT `sasl.kerberos.principal.to.local.rules` do: `user/host@REALM`
and `user@REALM` become `user`. Kafka authorizes any authorization id the client sends.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

from leader_election_cli.sandbox.security import AuthenticationFailed

_QOP_AUTH = 1
_MAX_BUFFER = 0xFFFFFF


@dataclass(frozen=True)
class KerberosAcceptor:
    """The brokers' Kerberos identity: a keytab with their `service/host@REALM` keys; with `principal`
    (the JAAS `principal` of Kafka's broker), only that one is accepted, else any in the keytab."""

    keytab: str
    principal: str | None = None

    def check(self) -> None:
        """Read the keytab as the brokers will (a ValueError saying why when it cannot serve)."""
        import gssapi

        try:
            _credentials(gssapi, self.keytab, self.principal)
        except gssapi.exceptions.GSSError as exc:
            raise ValueError(exc.gen_message().rpartition("): ")[2]) from None  # MIT's own reason

    def exchange(self, raw: bool) -> GssapiExchange:
        return GssapiExchange(self.keytab, raw, self.principal)


def _credentials(gssapi: Any, keytab: str, principal: str | None) -> Any:
    name = None if principal is None else gssapi.Name(principal, gssapi.NameType.kerberos_principal)
    return gssapi.Credentials(name=name, usage="accept", store={"keytab": keytab})


class GssapiExchange:
    """One connection's GSSAPI authentication."""

    mechanism = "GSSAPI"

    def __init__(self, keytab: str, raw: bool, principal: str | None = None):
        import gssapi

        self.raw = raw
        self.user: str | None = None
        self._gssapi = gssapi
        try:
            credentials = _credentials(gssapi, keytab, principal)
        except gssapi.exceptions.GSSError as exc:
            raise AuthenticationFailed(f"The broker cannot read its keytab: {exc.gen_message()}") from None
        self._context: Any = gssapi.SecurityContext(creds=credentials, usage="accept")
        self._stage = 0  # 0: establishing, 1: offer the security layer, 2: read the client's choice

    def step(self, token: bytes) -> bytes:
        gssapi = self._gssapi
        try:
            if self._stage == 0:
                reply = self._context.step(token)
                if self._context.complete:
                    self._stage = 1
                return reply or b""
            if self._stage == 1:
                self._stage = 2
                offer = struct.pack(">B", _QOP_AUTH) + _MAX_BUFFER.to_bytes(3, "big")
                return self._context.wrap(offer, False).message
            message = self._context.unwrap(token).message
        except gssapi.exceptions.GSSError as exc:
            raise AuthenticationFailed(f"Authentication failed: GSSAPI {exc.gen_message()}") from None
        if len(message) < 4 or not message[0] & _QOP_AUTH:
            raise AuthenticationFailed("Authentication failed: the client chose no QOP the broker offers")
        self.user = to_local(str(self._context.initiator_name))
        return b""


def to_local(principal: str) -> str:
    """Kafka's DEFAULT principal-to-local rule."""
    return principal.split("@", 1)[0].split("/", 1)[0]
