"""The package's loggers, without loading `logging` for a run that nobody logs.

`logging` (with the traceback, threading and string modules it loads) is a tenth of a one-partition
election's start-up, and a run without `--debug` logs nothing. A record goes to `logging` when
something has loaded it: the CLI's `--debug` (`cli.common.configure_logging`), a library the run loaded
(kafka-python for SASL), or the application using this package, whose own configuration then applies.
Else it is dropped, as a library's record is when the application configured no handler: the
package's logger has a `NullHandler`, as the logging HOWTO advises libraries, so no record reaches
Python's last-resort handler.
"""

from __future__ import annotations

import sys

DEBUG, INFO, WARNING = 10, 20, 30  # logging's levels


class Logger:
    """`logging.getLogger(name)`'s debug, info and warning, handed on only when `logging` is loaded."""

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def debug(self, message: str, *args: object) -> None:
        self._log(DEBUG, message, args)

    def info(self, message: str, *args: object) -> None:
        self._log(INFO, message, args)

    def warning(self, message: str, *args: object) -> None:
        self._log(WARNING, message, args)

    def _log(self, level: int, message: str, args: tuple[object, ...]) -> None:
        logging = sys.modules.get("logging")
        if logging is None:
            return
        package = logging.getLogger(__name__.partition(".")[0])
        if not package.handlers:
            package.addHandler(logging.NullHandler())
        logging.getLogger(self.name).log(level, message, *args, stacklevel=3)  # the caller, as logging says it
