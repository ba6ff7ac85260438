"""OAUTHBEARER tokens for kafka-python (its `sasl_oauth_token_provider`), as Kafka's login callback
handlers make them.

Secured (KIP-768): the client-credentials grant at the token endpoint, byte for byte Kafka's request
(`basic_authorization`, `token_request_body`; an https endpoint's TLS from the
JAAS ssl.* options, `OAuthSettings.ssl_context`), the token's expiry and subject
read as Kafka's LoginAccessTokenValidator does (no signature check: that is the broker's), and a new
token fetched once `sasl.login.refresh.window.factor` of its lifetime has passed. Unsecured: Kafka's
`alg: none` development token from the JAAS claims. Every token and the client secret are handed to
`on_secret` (the log redaction) before anything could log them.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import urllib.parse
import urllib.request
from collections.abc import Callable

import jwt
from kafka.net.sasl.oauth import AbstractTokenProvider

from leader_election_cli.cluster.token_http import Limits, TokenHttpError, post_form
from leader_election_cli.config.login import OAuthSettings
from leader_election_cli.config.properties import java_trim
from leader_election_cli.errors import AuthError, InputError, UnreachableError
from leader_election_cli.local_files import read_regular_file
from leader_election_cli.log import Logger

log = Logger(__name__)


class OAuthTokenProvider(AbstractTokenProvider):
    """A valid token for every SASL handshake, fetched again before it expires."""

    def __init__(self, settings: OAuthSettings, on_secret: Callable[[str], None],
                 clock: Callable[[], float] = time.time, total_s: float = 30.0):
        """`total_s` bounds each token fetch as a whole (the run's API timeout, which --timeout sets); an
        https token endpoint is verified with `settings.ssl_context` (None: the system's CAs)."""
        super().__init__()
        self._total_s = total_s
        self._settings = settings
        self._on_secret = on_secret
        self._clock = clock
        self._lock = threading.Lock()
        self._token: str | None = None
        self._refresh_at = 0.0
        self._expires_at = 0.0
        self.fetches = 0

    def token(self) -> str:
        with self._lock:
            if self._token is None or self._clock() >= self._refresh_at:
                try:
                    self._renew()
                except (UnreachableError, AuthError, InputError) as exc:
                    if self._token is None or self._clock() >= self._expires_at:
                        raise
                    log.warning("Could not refresh the OAuth token (the current one is still valid): %s", exc)
            assert self._token is not None
            return self._token

    def extensions(self) -> dict[str, str]:
        return dict(self._settings.extensions)

    def _renew(self) -> None:
        settings = self._settings
        now = self._clock()
        token = self._fetch() if settings.token_endpoint else self._unsecured(now)
        self._on_secret(token)
        claims = self._claims(token)
        issued = claims.get("iat") if isinstance(claims.get("iat"), (int, float)) else now
        self._token, self._expires_at = token, float(claims["exp"])
        self._refresh_at = issued + (self._expires_at - issued) * settings.refresh_window_factor
        self.fetches += 1

    def _unsecured(self, now: float) -> str:
        """OAuthBearerUnsecuredLoginCallbackHandler's token: header {"alg":"none"}, an empty signature."""
        claims = {"iat": int(now), "exp": int(now) + self._settings.unsecured_lifetime_s,
                  **self._settings.unsecured_claims}
        header, body = (base64.urlsafe_b64encode(json.dumps(part, separators=(",", ":")).encode()).rstrip(b"=")
                        for part in ({"alg": "none"}, claims))
        return f"{header.decode()}.{body.decode()}."

    def _fetch(self) -> str:
        settings = self._settings
        url = settings.token_endpoint
        assert url is not None
        if url.startswith("file:"):
            return _token_file(url)
        headers = {"Authorization": basic_authorization(settings.client_id or "", settings.client_secret or "",
                                                        urlencode=settings.urlencode_header),
                   "Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json",
                   "Cache-Control": "no-cache"}  # the headers Kafka's client sends
        connect_s, read_s = settings.connect_timeout_ms / 1000, settings.read_timeout_ms / 1000
        limits = Limits(connect_s, read_s, min(connect_s + read_s, self._total_s))
        where = "the token endpoint (sasl.oauthbearer.token.endpoint.url)"
        try:
            answer = post_form(url, token_request_body(settings.scope).encode(), headers, limits,
                               settings.ssl_context)
        except TokenHttpError as exc:
            hint = ("Give the token endpoint's CA as ssl.truststore.* options in sasl.jaas.config (KIP-768), or "
                    "check sasl.oauthbearer.token.endpoint.url." if exc.tls else
                    "Check sasl.oauthbearer.token.endpoint.url, the network and the sasl.login.*.timeout.ms settings.")
            raise UnreachableError(f"Could not get a token from {where}: {exc.reason}", hint=hint) from None
        if answer.status in (400, 401, 403):
            raise AuthError(f"{where} refused the client credentials: HTTP {answer.status}",
                            hint="Check clientId, clientSecret and scope in sasl.jaas.config.")
        if 300 <= answer.status < 400:
            raise UnreachableError(f"{where} answered HTTP {answer.status}, a redirect: not followed (the client "
                                   f"secret goes only to the URL configured)",
                                   hint="Set sasl.oauthbearer.token.endpoint.url to the token endpoint itself.")
        if answer.status != 200:
            raise UnreachableError(f"{where} answered HTTP {answer.status}", hint="Try again later.")
        try:
            document = json.loads(answer.body)
        except ValueError:
            raise UnreachableError(f"{where} did not answer with JSON", hint="Check the URL.") from None
        token = document.get("access_token") if isinstance(document, dict) else None
        if not isinstance(token, str) or not token:
            raise AuthError(f"{where} answered without an access_token", hint="Check the identity provider.")
        return token

    def _claims(self, token: str) -> dict[str, object]:
        """The payload as Kafka's LoginAccessTokenValidator reads it: exp and the subject claim required."""
        try:
            claims = jwt.decode(token, options={"verify_signature": False, "verify_exp": False})
        except jwt.PyJWTError:
            raise AuthError("The OAuth token is not a JWT", hint="Check the identity provider.") from None
        if not isinstance(claims.get("exp"), (int, float)):
            raise AuthError("The OAuth token has no exp claim", hint="Check the identity provider.")
        sub = self._settings.sub_claim
        if not isinstance(claims.get(sub), str) or not claims[sub]:
            raise AuthError(f"The OAuth token has no {sub} claim",
                            hint="Check sasl.oauthbearer.sub.claim.name (default sub).")
        return claims


def java_url_encode(text: str) -> str:
    """java.net.URLEncoder.encode(text, UTF_8): a-z A-Z 0-9 . - * _ kept, a space as "+", every other
    character as the %XX (upper case) of its UTF-8 bytes. Python's quote_plus also keeps "~"."""
    return urllib.parse.quote_plus(text, safe="*").replace("~", "%7E")


def basic_authorization(client_id: str, client_secret: str, *, urlencode: bool) -> str:
    """The Authorization header of Kafka's client-credentials request (ClientCredentialsRequestFormatter,
    HttpAccessTokenRetriever.formatAuthorizationHeader): "id:secret", each URL-encoded only with
    sasl.oauthbearer.header.urlencode=true (default false, KIP-1025), in standard Base64 (RFC 7617,
    KAFKA-14496). Both come trimmed and non-blank from the config (`config.login`)."""
    if urlencode:
        client_id, client_secret = java_url_encode(client_id), java_url_encode(client_secret)
    return "Basic " + base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()


def token_request_body(scope: str | None) -> str:
    """Kafka's formatRequestBody: the grant type, and the scope trimmed and URL-encoded unless it is blank."""
    body = "grant_type=client_credentials"
    scope = java_trim(scope or "")
    return f"{body}&scope={java_url_encode(scope)}" if scope else body


MAX_TOKEN_FILE_BYTES = 1 << 20


def _token_file(url: str) -> str:
    """The token in a file: URL's file: a regular file of at most 1 MiB (a FIFO or /dev/zero refused)."""
    path = urllib.request.url2pathname(urllib.parse.urlsplit(url).path)
    data = read_regular_file(path, what="the token file", limit=MAX_TOKEN_FILE_BYTES, hint="Check the file: URL.",
                             shown_as="named by sasl.oauthbearer.token.endpoint.url")
    try:
        return data.decode("utf-8").strip()
    except UnicodeError:
        raise InputError("The token file of sasl.oauthbearer.token.endpoint.url is not UTF-8 text",
                         hint="Check the file: URL.") from None
