"""A command the roll runs, and every process it starts: its own session (so its own process group, without
the roll's terminal), ended as a whole when it must be (`end`).

Ending a group: SIGTERM to every process in it, then, after `KILL_GRACE_S`, SIGKILL to whatever is left,
then a wait until no process of the group is left (a zombie, which can do nothing more, is not counted: an
orphan's is reaped by whoever adopts it). A process that left the group itself (`setsid`, a daemon) is not
the group's any more and is not reached.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from contextlib import suppress
from datetime import datetime, timezone
from pathlib import Path

from leader_election_cli.reports.maintenance import Ended

KILL_GRACE_S = 5.0  # between SIGTERM and SIGKILL (named in docs/ROLLING.md and roll --help)
GONE_WAIT_S = 30.0  # after SIGKILL: a process in uninterruptible sleep dies when it wakes
_POLL_S = 0.02


def start(argv: list[str]) -> subprocess.Popen[bytes]:
    """Run `argv` in a new session: its process group is its pid; output (stdout and stderr) on a pipe."""
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)


def members(group: int) -> list[tuple[int, str]]:
    """The live (not zombie) processes of the process group, (pid, name), as /proc lists them; where there
    is no /proc, [(group, "")] while the group has any process (`kill(-group, 0)`)."""
    proc = Path("/proc")
    if not (proc / "self" / "stat").exists():
        try:
            os.killpg(group, 0)
        except ProcessLookupError:
            return []
        except PermissionError:
            pass
        return [(group, "")]
    found = []
    for entry in proc.iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:  # gone meanwhile
            continue
        name, _, rest = stat.partition("(")[2].rpartition(")")
        fields = rest.split()
        if len(fields) > 2 and fields[0] != "Z" and fields[2] == str(group):
            found.append((int(entry.name), name))
    return sorted(found)


def end(process: subprocess.Popen[bytes], grace_s: float = KILL_GRACE_S) -> Ended:
    """SIGTERM to the group of `process` (its pid), SIGKILL after `grace_s` to what is left, then wait until
    no process of it is left (bounded: GONE_WAIT_S), `process` reaped."""
    group = process.pid
    processes = tuple(members(group))
    sigterm_at = _now()
    _signal(group, signal.SIGTERM)
    sigkill_at = None
    if not _gone(process, group, grace_s):
        sigkill_at = _now()
        _signal(group, signal.SIGKILL)
        if not _gone(process, group, GONE_WAIT_S):
            return Ended(group, processes, sigterm_at, sigkill_at, None)
    return Ended(group, processes, sigterm_at, sigkill_at, _now())


def _gone(process: subprocess.Popen[bytes], group: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while True:
        process.poll()  # reap our own child as soon as it ends
        if not members(group):
            # bounded: run from a signal handler, an unbounded wait() could block on the lock the
            # interrupted poll() holds
            with suppress(subprocess.TimeoutExpired):
                process.wait(timeout=GONE_WAIT_S)
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(_POLL_S)


def _signal(group: int, signum: signal.Signals) -> None:
    # every process already gone, or none left that we may signal (another user's: waited for, then reported)
    with suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
