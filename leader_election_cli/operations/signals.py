"""The one signal policy of every command and phase: SIGINT, SIGTERM and SIGHUP.

Before a run may have changed anything, a signal stops it at once (`Stopped`, a KeyboardInterrupt:
nothing was sent, nothing is owed). From the first request that may change the cluster on
(`stop_on_signals`), a signal only sets a flag: the step in flight (a request, a read-back, the printing
of the report) completes, the operation checks the flag between steps and stops, and the report, the
audit line and the metrics are still written. Under the command line (`policy`) that window never
closes again until the process ends, so no later phase (the read-back, the balance read, the printing)
can be cut. A second signal exits at once, with 128 + its number.

What a second signal still says (issue 34). An operator who presses Ctrl-C twice wants out now, and a run
blocked on a request would otherwise hold them for up to --timeout: the second signal keeps exiting at once,
without the report (a report rendered from inside a signal handler could be half an operation's state).
But what was already done must not be lost with it: before it exits it prints, one line each, what the
operations noted while they ran (`note_for_a_hard_stop`): where the restore file is and the command that
puts the replica orders back, and how many partitions were sent for election (so `kafka-leaders status`
is the next step). An operation may also leave an action to run first (`before_a_hard_stop`): the roll
ends the --exec command it runs, so that nothing it started outlives it.

The command line exits 130 for SIGINT, 143 for SIGTERM and 129 for SIGHUP (`errors.interrupted_exit`).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stopped(KeyboardInterrupt):
    """A stop signal before anything was sent: the run ends at once."""

    def __init__(self, signum: int):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StopFlag:
    """Set by the first stop signal; operations check it between steps."""

    def __init__(self) -> None:
        self.signum: int | None = None

    @property
    def stopped(self) -> bool:
        return self.signum is not None

    def sleep(self, seconds: float) -> None:
        """Sleep `seconds`, or less when a stop signal comes meanwhile (seen within 50 ms)."""
        deadline = time.monotonic() + seconds
        while not self.stopped and (remaining := deadline - time.monotonic()) > 0:
            time.sleep(min(0.05, remaining))


class _Policy:
    """The process's state: the flag, whether signals are deferred (a window is open), who installed it."""

    def __init__(self) -> None:
        self.flag = StopFlag()
        self.deferring = False
        self.whole_process = False  # installed by `policy` (the command line): windows never close
        self.notes: dict[str, str] = {}  # what a second signal prints before it exits
        self.actions: dict[str, Callable[[], None]] = {}  # what it runs first


_policy: _Policy | None = None


def _handler(signum: int, frame: object) -> None:
    policy = _policy
    if policy is None:  # a stale handler (should not happen): behave as Python's default Ctrl-C
        raise KeyboardInterrupt
    if policy.flag.stopped:
        actions = list(policy.actions.values())
        policy.actions.clear()  # a third signal exits without them
        for action in actions:
            action()
        lines = [f"Stopped at once by a second signal ({signal.Signals(signum).name}): no report.",
                 *policy.notes.values()]
        os.write(2, "".join(line + "\n" for line in lines).encode("utf-8", "backslashreplace"))
        os._exit(128 + signum)
    policy.flag.signum = signum
    if not policy.deferring:
        raise Stopped(signum)


def _main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextmanager
def _installed(whole_process: bool) -> Iterator[_Policy]:
    global _policy
    installed = _Policy()
    installed.whole_process = whole_process
    previous_policy = _policy
    _policy = installed
    previous = {sig: signal.signal(sig, _handler) for sig in STOP_SIGNALS}
    try:
        yield installed
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
        _policy = previous_policy


@contextmanager
def policy() -> Iterator[StopFlag]:
    """The command line's policy for the whole run of one command (the main thread only)."""
    if not _main_thread():
        yield StopFlag()
        return
    with _installed(whole_process=True) as installed:
        yield installed.flag


@contextmanager
def stop_on_signals() -> Iterator[StopFlag]:
    """From here on the run may change the cluster: a signal sets the returned flag, checked between steps.

    Nested windows share one flag. Under `policy` the window stays open until the command ends; a Python
    caller without it gets the handlers for this block only. Off the main thread: a flag never set.
    """
    if not _main_thread():
        yield StopFlag()
        return
    if _policy is not None:
        was = _policy.deferring
        _policy.deferring = True
        try:
            yield _policy.flag
        finally:
            if not _policy.whole_process:
                _policy.deferring = was
        return
    with _installed(whole_process=False) as installed:
        installed.deferring = True
        yield installed.flag


def note_for_a_hard_stop(key: str, line: str) -> None:
    """What a second signal prints (one line per `key`, the latest kept) before it exits without the report."""
    if _policy is not None:
        _policy.notes[key] = line


def before_a_hard_stop(key: str, action: Callable[[], None] | None) -> None:
    """What a second signal runs (one per `key`; None removes it) before it prints the notes and exits."""
    if _policy is None:
        return
    if action is None:
        _policy.actions.pop(key, None)
    else:
        _policy.actions[key] = action


def received() -> int | None:
    """The stop signal this run received, if any."""
    return _policy.flag.signum if _policy is not None else None

