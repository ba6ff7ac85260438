"""Exit codes and the exceptions that carry them to the command line.

Every failure a user can cause or meet is one of these: a one-line message, an optional hint, and a
documented exit code. Only `--debug` ever shows a traceback.
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import IntEnum
from typing import Any


class ExitCode(IntEnum):
    """The documented exit codes of both commands."""

    OK = 0  # every selected partition has the leader asked for / dry run done
    PARTITION_FAILED = 1  # at least one partition failed to elect
    USAGE = 2  # usage or input error: nothing was sent to the cluster
    UNREACHABLE = 3  # cluster unreachable or timed out, or an outcome the read-back did not confirm
    AUTH = 4  # authentication or authorization failed
    REFUSED = 5  # refused for safety (unconfirmed unclean election, lock held)
    HANGUP = 129  # stopped by SIGHUP: what was done is reported
    INTERRUPTED = 130  # interrupted (SIGINT, Ctrl-C): what was done is reported
    TERMINATED = 143  # stopped by SIGTERM: what was done is reported


EXIT_CODE_MEANINGS = {
    0: "every selected partition has the leader asked for (or a dry run finished)",
    1: "at least one partition failed to elect (each one is listed), or an internal error",
    2: "usage or input error: nothing was sent to the cluster",
    3: "cluster unreachable or timed out, or an outcome not confirmed by the leaders read back (unconfirmed)",
    4: "authentication or authorization failed",
    5: "refused for safety (unconfirmed unclean election, lock held by another run)",
    129: "stopped by SIGHUP (the terminal closed): what was done is reported",
    130: "interrupted (Ctrl-C, SIGINT): what was done is reported",
    143: "stopped by SIGTERM (timeout, systemd, Kubernetes): what was done is reported",
}

_SIGNAL_EXITS = {1: ExitCode.HANGUP, 2: ExitCode.INTERRUPTED, 15: ExitCode.TERMINATED}  # SIGHUP, SIGINT, SIGTERM


def interrupted_exit(signum: int | None) -> ExitCode:
    """The exit code of a run stopped by signal `signum` (128 + its number); 130 when no signal is known."""
    return _SIGNAL_EXITS.get(signum or 2, ExitCode.INTERRUPTED)


def exit_code_help(own: dict[int, str | None] | None = None) -> str:
    """A command's `Exit codes:` paragraph: the shared meanings, with this command's `own` where they
    differ (None: a code it never uses). `scripts/generate_docs.py` makes man pages' EXIT STATUS of it."""
    table = {**EXIT_CODE_MEANINGS, **(own or {})}
    table = {code: meaning for code, meaning in table.items() if meaning is not None}
    return "Exit codes:\n" + "\n".join(f"  {code:<4} {meaning}" for code, meaning in sorted(table.items()))


EXIT_CODE_HELP = exit_code_help()

# Kafka's tool prints these on stdout before failing; scripts grep for them.
TIMEOUT_LINE = "Timeout waiting for election results"
NOT_AUTHORIZED_LINE = "Not authorized to perform leader election"

# Why a request for the controller is answered REQUEST_TIMED_OUT as a whole: a KRaft broker forwards it and
# answers this after 60 s without an active controller (ForwardingManagerImpl.onTimeout); a controller whose
# queue did not reach it before its deadline answers the same.
NO_CONTROLLER_IN_TIME = ("no controller answered in time (REQUEST_TIMED_OUT: no active controller to forward it "
                         "to, as when the KRaft controller quorum has no leader, or the controller did not reach it "
                         "in time)")
# Why a request for the controller may get no answer at all in KRaft mode (the tool gives up first: its
# timeout is shorter than the broker's 60 s), and that it may still take effect.
FORWARDED_NO_ANSWER = ("a KRaft broker passes this request to the active controller; without one, as when the "
                       "controller quorum has no leader, it holds the request up to 60 s, and a controller elected "
                       "meanwhile still carries it out")


def _escaped(text: str) -> list[str]:
    return [c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text]


def one_line(text: str) -> str:
    """`text` with its control characters (newlines included) escaped, so it prints as one line."""
    return text if text.isprintable() else "".join(_escaped(text))


def shown(text: str, limit: int = 256) -> str:
    """User text made safe for a one-line message: control characters escaped, very long text cut.

    The limit counts the escaped characters (an escape is up to ten of them), so the result stays short.
    """
    escaped = _escaped(text)
    if sum(map(len, escaped)) <= limit:
        return "".join(escaped)
    kept, size = [], 0
    for part in escaped:
        size += len(part)
        if size > limit // 2:
            break
        kept.append(part)
    return f"{''.join(kept)}...({len(text)} characters)"


LISTED = 10  # items of a list quoted in one message; the rest are counted


def listed(items: Iterable[object], separator: str = ", ", limit: int = LISTED) -> str:
    """A list quoted in a one-line message: its first `limit` items, each `shown`, then "... (N more)"
    (a command line of 10,000 broker ids made an error line of 48,963 characters)."""
    items = list(items)
    more = len(items) - limit
    return separator.join(shown(str(item)) for item in items[:limit]) + (f" ... ({more} more)" if more > 0 else "")


def extra_hint(extra: str) -> str:
    """How to add an optional extra to the installed tool without dropping another one already installed:
    `pipx install --force '.[x]'` would reinstall with [x] alone, `pipx inject` adds the extra's packages."""
    packages = " ".join(f"'{p}'" for p in extra_requirements(extra)) or f"'{DISTRIBUTION}[{extra}]'"
    return (f"Add the [{extra}] extra to the installed tool: pipx inject {DISTRIBUTION} {packages} (keeps the "
            f"extras installed, which pipx install --force '.[{extra}]' drops); in a virtualenv: pip install "
            f"'.[{extra}]' in the project's directory.")


DISTRIBUTION = "leader-election-cli"


def extra_requirements(extra: str) -> list[str]:
    """The requirements of an extra, as the installed package's metadata lists them (empty when unknown)."""
    import re
    from importlib.metadata import PackageNotFoundError, requires

    try:
        listed = requires(DISTRIBUTION) or []
    except PackageNotFoundError:
        return []
    marker = re.compile(rf"""\bextra\s*==\s*["']{re.escape(extra)}["']""")
    return [r.split(";")[0].strip() for r in listed if ";" in r and marker.search(r.split(";", 1)[1])]


class LeaderElectionError(Exception):
    """A failure with a one-line message, an optional detail line (where, exactly: the message itself may
    be Kafka's own line, which scripts compare byte for byte), an optional hint and an exit code.

    `kafka_line`: the first line Kafka's tool prints for the same failure, when it is not `message` (a
    Java exception's text, often less telling): the drop-in prints it first, `message` below it.
    """

    exit_code: ExitCode = ExitCode.USAGE
    # A run refused before anything was sent may say what it would have done, partition by partition (the
    # at-risk partitions of an unclean election): `model.PartitionResult`s for the refused run's document.
    results: list[Any] | None = None

    def __init__(self, message: str, hint: str | None = None, exit_code: ExitCode | None = None,
                 detail: str | None = None, kafka_line: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.detail = detail
        self.kafka_line = kafka_line
        if exit_code is not None:
            self.exit_code = exit_code


class InputError(LeaderElectionError):
    """Bad flags, files or values: nothing was sent (exit 2)."""

    exit_code = ExitCode.USAGE


class UnreachableError(LeaderElectionError):
    """The cluster could not be reached or did not answer in time (exit 3)."""

    exit_code = ExitCode.UNREACHABLE


class TimedOutError(UnreachableError):
    """No answer in time (exit 3): where Kafka's tool prints `TIMEOUT_LINE`. A cluster that could not be
    reached for another reason (a TLS handshake refused, no host name resolving) is an `UnreachableError`."""


class AuthError(LeaderElectionError):
    """Authentication or authorization failed (exit 4)."""

    exit_code = ExitCode.AUTH


class RefusedError(LeaderElectionError):
    """Refused for safety (exit 5)."""

    exit_code = ExitCode.REFUSED
