"""One HTTP POST to an OAuth token endpoint, bounded in every way a hostile server could stretch it.

urllib3's connection (one request, no pool, no retries, no redirects: the client secret goes only to the URL
the config names, never to a host a 3xx points at), a timeout on the connect and on every read, a total
deadline over the whole exchange (a watchdog shuts the socket down when it passes, so a server dripping a
byte at a time is cut too), and at most `limit` bytes of body. Anything that is not an HTTP answer is a
`TokenHttpError` with a reason in words, never the bytes received.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass

import urllib3
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.util import parse_url


class TokenHttpError(Exception):
    """The exchange failed; `reason` says how, in words."""

    def __init__(self, reason: str, *, timed_out: bool = False, tls: bool = False) -> None:
        super().__init__(reason)
        self.reason, self.timed_out, self.tls = reason, timed_out, tls


@dataclass(frozen=True)
class HttpAnswer:
    status: int
    body: bytes


@dataclass(frozen=True)
class Limits:
    connect_s: float  # sasl.login.connect.timeout.ms
    read_s: float  # sasl.login.read.timeout.ms: each read
    total_s: float  # the whole exchange: connect + read, and never past the run's --timeout
    body_bytes: int = 1 << 20


def post_form(url: str, body: bytes, headers: dict[str, str], limits: Limits,
              ssl_context: ssl.SSLContext | None = None) -> HttpAnswer:
    """POST `body` to `url` (http or https; `ssl_context` verifies an https server, default: the system's
    CAs) and return the status and body; a redirect is returned as it is, never followed."""
    try:
        parsed = parse_url(url)
    except urllib3.exceptions.LocationParseError:
        raise TokenHttpError("the URL cannot be parsed") from None
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise TokenHttpError("the URL is neither http: nor https: with a host")
    deadline = time.monotonic() + limits.total_s
    connection: HTTPConnection
    if parsed.scheme == "https":
        context = ssl_context or ssl.create_default_context()
        # urllib3 matches the host name itself unless told not to: Kafka's empty
        # ssl.endpoint.identification.algorithm (check_hostname off) turns the check off
        connection = HTTPSConnection(parsed.host, parsed.port, timeout=min(limits.connect_s, limits.total_s),
                                     ssl_context=context, assert_hostname=None if context.check_hostname else False)
    else:
        connection = HTTPConnection(parsed.host, parsed.port, timeout=min(limits.connect_s, limits.total_s))
    expired = threading.Event()

    def cut() -> None:  # the deadline passed: end whatever read or write is waiting
        expired.set()
        sock = connection.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    watchdog = threading.Timer(limits.total_s, cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        return _exchange(connection, parsed.request_uri, body, headers, limits, deadline, expired)
    finally:
        watchdog.cancel()
        connection.close()


def _exchange(connection: HTTPConnection, path: str, body: bytes, headers: dict[str, str], limits: Limits,
              deadline: float, expired: threading.Event) -> HttpAnswer:
    late = f"it did not answer within {limits.total_s:g} s"
    try:
        connection.connect()
    except ssl.SSLError as exc:
        raise TokenHttpError(f"TLS failed: {exc.reason or type(exc).__name__}", tls=True) from None
    except (OSError, urllib3.exceptions.HTTPError) as exc:
        if expired.is_set() or _connect_timed_out(exc):
            raise TokenHttpError(f"no connection within {min(limits.connect_s, limits.total_s):g} s",
                                 timed_out=True) from None
        raise TokenHttpError(f"no connection: {_reason(exc)}") from None
    try:
        connection.timeout = max(0.001, min(limits.read_s, deadline - time.monotonic()))
        connection.request("POST", path, body=body, headers=headers, preload_content=False, decode_content=False)
        response = connection.getresponse()
        data = bytearray()
        while len(data) <= limits.body_bytes:
            chunk = response.read(min(65536, limits.body_bytes + 1 - len(data)))
            if not chunk:
                break
            data += chunk
    except (TimeoutError, urllib3.exceptions.TimeoutError):
        raise TokenHttpError(late if expired.is_set() else
                             f"nothing read within {min(limits.read_s, limits.total_s):g} s", timed_out=True) from None
    except (http.client.HTTPException, urllib3.exceptions.HTTPError, OSError) as exc:
        if expired.is_set():
            raise TokenHttpError(late, timed_out=True) from None
        if isinstance(exc, http.client.RemoteDisconnected):
            raise TokenHttpError("it closed the connection without an answer") from None
        if isinstance(exc, (http.client.HTTPException, urllib3.exceptions.ProtocolError)):
            raise TokenHttpError("it did not answer with HTTP") from None
        raise TokenHttpError(f"the connection failed: {_reason(exc)}") from None
    if expired.is_set():
        raise TokenHttpError(late, timed_out=True)
    if len(data) > limits.body_bytes:
        raise TokenHttpError(f"its answer is larger than {limits.body_bytes // 1024} KiB")
    return HttpAnswer(response.status, bytes(data))


def _connect_timed_out(exc: BaseException) -> bool:
    """Whether a failed connect ran out of time. urllib3's NewConnectionError (a refusal, an unreachable
    network, a name not found) is a subclass of its ConnectTimeoutError: a refusal at once is no timeout."""
    if isinstance(exc, urllib3.exceptions.NewConnectionError):
        return False
    return isinstance(exc, (TimeoutError, urllib3.exceptions.ConnectTimeoutError))


def _reason(exc: BaseException) -> str:
    """An OS error in words (its strerror), else its class: never the bytes a server sent."""
    while isinstance(exc, urllib3.exceptions.HTTPError) and exc.__context__ is not None:
        exc = exc.__context__
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else type(exc).__name__
