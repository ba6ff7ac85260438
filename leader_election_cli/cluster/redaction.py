"""Secrets kept out of the `--debug` log: kafka-python logs its whole configuration and PLAIN's auth
bytes at DEBUG, and any log line may quote a value read from a config file."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from leader_election_cli.config.settings import ClientSettings

if TYPE_CHECKING:
    import logging


class RedactSecrets:
    """A log filter (logging takes any object with a `filter` method) that replaces each secret, in every
    spelling a log line may hold it, by "[hidden]"."""

    def __init__(self) -> None:
        self.secrets: set[str] = set()

    def hide(self, secret: str) -> None:
        """The secret as it is, and inside the repr of a str or of bytes (a frame, a config dict): Python
        escapes a quote only when the whole text holds both kinds, so both spellings are hidden."""
        raw = secret.encode("utf-8", "backslashreplace")
        self.secrets.update((secret, repr(secret)[1:-1], repr(secret + "'\"")[1:-4],
                             repr(raw)[2:-1], repr(raw + b"'\"")[2:-4]))

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        if any(secret in message for secret in self.secrets):
            for secret in sorted(self.secrets, key=len, reverse=True):  # a longer form first: it may hold a shorter
                message = message.replace(secret, "[hidden]")
            record.msg, record.args = message, None
        return True


REDACT = RedactSecrets()  # one filter, however many connections a process makes (addFilter keeps one copy)


def hide_in_logs(settings: ClientSettings) -> None:
    """Install the redaction on every handler of the root logger (where --debug output goes; without
    `logging` loaded, there is none)."""
    secrets = {settings.sasl_password, *settings.secrets} - {None, ""}
    for secret in secrets:
        REDACT.hide(secret)
    logging = sys.modules.get("logging")
    if logging is not None and (secrets or settings.oauth is not None):
        for handler in logging.getLogger().handlers:
            handler.addFilter(REDACT)
