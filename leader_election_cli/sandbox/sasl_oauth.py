"""SASL/OAUTHBEARER server side, as Kafka's OAuthBearerSaslServer with its validators.

Secured (KIP-768, `OAuthBearerValidatorCallbackHandler`): the JWT's signature is checked against the
keys of a JWKS document (PyJWT), then its expiry, its subject claim and, when asked, a scope in its
scope claim, its audience (sasl.oauthbearer.expected.audience: one of them) and its issuer
(sasl.oauthbearer.expected.issuer). Unsecured (`OAuthBearerUnsecuredValidatorCallbackHandler`, development only): an
`alg: none` token is accepted with the same claim checks. A refused token is answered with Kafka's
JSON error challenge; the client's `%x01` reply then ends in SASL_AUTHENTICATION_FAILED.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass

import jwt

from leader_election_cli.sandbox.security import AuthenticationFailed

_FAILED = "Authentication failed during authentication due to invalid credentials with SASL mechanism OAUTHBEARER"


@dataclass(frozen=True)
class OAuthValidation:
    """The broker's validator settings (Kafka's sasl.oauthbearer.* on the broker)."""

    jwks_url: str | None = None  # None: the unsecured validator
    required_scope: str | None = None
    scope_claim: str = "scope"
    sub_claim: str = "sub"
    clock_skew_s: int = 30  # sasl.oauthbearer.clock.skew.seconds
    expected_audience: tuple[str, ...] = ()  # secured only: the token's aud must name one of them
    expected_issuer: str | None = None  # secured only: the token's iss must be this

    def subject(self, token: str) -> str:
        """The token's principal, or a ValueError naming what is wrong with it."""
        if self.jwks_url is None:
            header = jwt.get_unverified_header(token)
            if header.get("alg") != "none":
                raise ValueError("the unsecured validator takes only alg none tokens")
            claims = jwt.decode(token, options={"verify_signature": False, "verify_exp": False})
        else:
            key = _jwks_client(self.jwks_url).get_signing_key_from_jwt(token)
            claims = jwt.decode(token, key.key, algorithms=["RS256", "RS384", "RS512", "ES256", "ES384"],
                                options={"verify_exp": False, "verify_aud": False})
            self._check_audience_and_issuer(claims)
        if not isinstance(claims.get("exp"), (int, float)) or claims["exp"] + self.clock_skew_s < time.time():
            raise ValueError("the token has expired")
        subject = claims.get(self.sub_claim)
        if not isinstance(subject, str) or not subject:
            raise ValueError(f"the token has no {self.sub_claim} claim")
        if self.required_scope is not None:
            scope = claims.get(self.scope_claim, "")
            scopes = scope.split() if isinstance(scope, str) else list(scope)
            if self.required_scope not in scopes:
                raise PermissionError(f"the token lacks the scope {self.required_scope}")
        return subject

    def _check_audience_and_issuer(self, claims: dict[str, object]) -> None:
        """As Kafka's BrokerJwtValidator (jose4j) checks them when the broker sets them."""
        if self.expected_audience:
            audience = claims.get("aud")
            named = [audience] if isinstance(audience, str) else audience if isinstance(audience, list) else []
            if not set(self.expected_audience) & set(named):
                raise ValueError("the token's audience (aud) names none of the expected audiences")
        if self.expected_issuer is not None and claims.get("iss") != self.expected_issuer:
            raise ValueError("the token's issuer (iss) is not the expected issuer")


_JWKS_CLIENTS: dict[str, jwt.PyJWKClient] = {}


def _jwks_client(url: str) -> jwt.PyJWKClient:
    if url not in _JWKS_CLIENTS:
        _JWKS_CLIENTS[url] = jwt.PyJWKClient(url, cache_keys=True, timeout=5)
    return _JWKS_CLIENTS[url]


class OAuthBearerExchange:
    """One connection's OAUTHBEARER authentication (RFC 7628 as Kafka speaks it)."""

    mechanism = "OAUTHBEARER"

    def __init__(self, validation: OAuthValidation, raw: bool):
        self.validation = validation
        self.raw = raw
        self.user: str | None = None
        self._failed = False

    def step(self, token: bytes) -> bytes:
        if self._failed:  # the client's %x01 after the error challenge
            raise AuthenticationFailed(_FAILED)
        text = token.decode("utf-8", "replace")
        gs2, _, rest = text.partition("\x01")
        fields = dict(part.split("=", 1) for part in rest.split("\x01") if "=" in part)
        auth = fields.get("auth", "")
        if not gs2.startswith("n,") or not auth.startswith("Bearer "):
            raise AuthenticationFailed("Invalid OAUTHBEARER client first message")
        try:
            self.user = self.validation.subject(auth.removeprefix("Bearer ").strip())
        except PermissionError:
            return self._challenge("insufficient_scope")
        except (ValueError, jwt.PyJWTError):
            return self._challenge("invalid_token")
        return b""

    def _challenge(self, status: str) -> bytes:
        self._failed = True
        document = {"status": status}
        if status == "insufficient_scope" and self.validation.required_scope:
            document["scope"] = self.validation.required_scope
        return json.dumps(document).encode()
