"""SaslHandshake and SaslAuthenticate on a connection already authenticated or a listener without SASL.

The exchanges themselves are security.py's (PLAIN, SCRAM), sasl_oauth.py's and sasl_gssapi.py's.
"""

from __future__ import annotations

from typing import Any

from kafka.protocol.sasl import (
    SaslAuthenticateResponse,
    SaslHandshakeResponse,
)

from leader_election_cli.sandbox.apis.context import (
    Context,
)

ILLEGAL_SASL_STATE = 34


def sasl_handshake(ctx: Context, req: Any) -> Any:
    return sasl_handshake_error(ctx, req, ILLEGAL_SASL_STATE, None)


def sasl_handshake_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return SaslHandshakeResponse(version=ctx.version, error_code=code, mechanisms=[])


def sasl_authenticate(ctx: Context, req: Any) -> Any:
    return sasl_authenticate_error(ctx, req, ILLEGAL_SASL_STATE,  # KafkaApis.handleSaslAuthenticateRequest
                                   "SaslAuthenticate request received after successful authentication")


def sasl_authenticate_error(ctx: Context, req: Any, code: int, message: str | None) -> Any:
    return SaslAuthenticateResponse(version=ctx.version, error_code=code, error_message=message, auth_bytes=b"",
                                    session_lifetime_ms=0)
