"""Secrets kept out of the `--debug` log: kafka-python logs its whole configuration, every request and
response (the SASL frames among them) and raw frames at DEBUG, and any log line may quote a value read
from a config file.

Two rules, one filter:
- A SASL exchange is logged by its shape only: each SaslAuthenticate (or v0 SaslBytes) request and
  response becomes its class, the step of the exchange on that connection and the size of its bytes
  (the mechanism is in the SaslHandshake request before it), and a raw frame becomes its size. The SCRAM
  client-final message (`c=...,r=...,p=<proof>`), the server's signature, a Kerberos AP-REQ and an OAuth
  token are never written, nor any byte derived from a credential.
- A secret read from the config file (or a token) is replaced by "[hidden]" where it stands as a whole
  value: not inside a longer name (the user `admin` leaves the topic `c2-admincfg-d` alone), but wherever
  it is delimited, an escape sequence of a bytes repr (`\\x00admin\\x00`) included.
"""

from __future__ import annotations

import contextlib
import re
import sys
from typing import TYPE_CHECKING

from leader_election_cli.config.settings import ClientSettings

if TYPE_CHECKING:
    import logging

SASL_FRAMES = frozenset({"SaslAuthenticateRequest", "SaslAuthenticateResponse", "SaslBytesRequest",
                         "SaslBytesResponse"})
_NAME_CHAR = re.compile(r"[\w.\-]")
# what may stand right before a whole value: no name character, or the end of an escape (\x00, \n, \t, \r)
_BEFORE = r"(?:(?<![\w.\-])|(?<=\\x[0-9a-fA-F]{2})|(?<=\\[nrt]))"
_AFTER = r"(?![\w.\-])"


class _Shown(str):
    """A replacement that a `%r` prints as it is."""

    def __repr__(self) -> str:
        return str(self)


def _size(data: object) -> int:
    return len(data) if isinstance(data, (bytes, bytearray, memoryview)) else 0


class RedactSecrets:
    """A log filter (logging takes any object with a `filter` method): SASL frames by their shape, and each
    secret, in every spelling a log line may hold it, by "[hidden]"."""

    def __init__(self) -> None:
        self.secrets: set[str] = set()
        self._pattern: re.Pattern[str] | None = None
        self._steps: dict[str, int] = {}  # SASL requests seen per logger and connection, this exchange

    def hide(self, secret: str) -> None:
        """The secret as it is, and inside the repr of a str or of bytes (a frame, a config dict): Python
        escapes a quote only when the whole text holds both kinds, so both spellings are hidden."""
        raw = secret.encode("utf-8", "backslashreplace")
        forms = {secret, repr(secret)[1:-1], repr(secret + "'\"")[1:-4], repr(raw)[2:-1], repr(raw + b"'\"")[2:-4]}
        if not forms <= self.secrets:
            self.secrets.update(form for form in forms if form)
            self._pattern = re.compile("|".join(_whole(form) for form in sorted(self.secrets, key=len, reverse=True)))

    def filter(self, record: logging.LogRecord) -> bool:
        if record.args and record.name.startswith("kafka"):
            args = record.args if isinstance(record.args, tuple) else (record.args,)
            shaped = tuple(self._shape(record, args, arg) for arg in args)
            if any(new is not old for new, old in zip(shaped, args, strict=True)):
                with contextlib.suppress(TypeError, ValueError):  # not %-style: only the secrets are taken out
                    record.msg, record.args = str(record.msg) % shaped, None
        message = record.getMessage()
        if self._pattern is not None and self._pattern.search(message):
            record.msg, record.args = self._pattern.sub("[hidden]", message), None
        return True

    def _shape(self, record: logging.LogRecord, args: tuple[object, ...], arg: object) -> object:
        """A SASL frame as its shape, a raw frame as its size; anything else as it is."""
        if isinstance(arg, (bytes, bytearray, memoryview)):
            return _Shown(f"<{len(arg)} bytes>")
        kind = type(arg).__name__
        key = f"{record.name} {args[0]}"
        if kind == "SaslHandshakeRequest":
            self._steps[key] = 0
            return arg
        if kind not in SASL_FRAMES:
            return arg
        if kind.endswith("Request"):
            self._steps[key] = self._steps.get(key, 0) + 1
        error = getattr(arg, "error_code", None)
        size = _size(getattr(arg, "auth_bytes", None))
        code = f", error_code={error}" if error is not None else ""
        return _Shown(f"{kind}(SASL step {self._steps.get(key, 0)}, auth_bytes: {size} bytes{code})")


def _whole(form: str) -> str:
    """A regular expression for `form` standing as a whole value (see the module's docstring)."""
    before = _BEFORE if _NAME_CHAR.match(form[0]) else ""
    after = _AFTER if _NAME_CHAR.match(form[-1]) else ""
    return before + re.escape(form) + after


REDACT = RedactSecrets()  # one filter, however many connections a process makes (addFilter keeps one copy)


def hide_in_logs(settings: ClientSettings) -> None:
    """Install the redaction on every handler of the root logger (where --debug output goes; without
    `logging` loaded, there is none)."""
    secrets = {settings.sasl_password, *settings.secrets} - {None, ""}
    for secret in secrets:
        REDACT.hide(secret)
    logging = sys.modules.get("logging")
    if logging is not None and (secrets or settings.oauth is not None or settings.sasl_mechanism):
        for handler in logging.getLogger().handlers:
            handler.addFilter(REDACT)
