"""stdout and stderr that cannot fail a run: a closed pipe (`| head -1`), a closed descriptor (`>&-`) or a
full disk (`>/dev/full`) ends the printing, never the run.

`process_main` puts a `GuardedStream` in place of each standard stream. A write that fails is recorded
and every later write to that stream is dropped; the run goes on to its own exit code (what it did to
the cluster is done either way). At the end, a failure other than a closed pipe is said on stderr, if
stderr still works: a reader that stops reading (`head`) is normal, a lost report is not.

Every byte goes out through one writer, `_write_all`: `os.write` until all of it is written. Python's
own buffered stdout lost data when a signal came while it waited on a full pipe (a 100,000-partition
JSON document read slowly, SIGTERM meanwhile: 82 KB missing mid-row, exit 0), so the text is collected
here (64 KiB at a time; a terminal and stderr at once) and never handed to it.
"""

from __future__ import annotations

import errno
import io
import os
import sys
import threading
from typing import Any


class GuardedStream(io.TextIOBase):
    """A text stream that records its first failing write or flush instead of raising it."""

    def __init__(self, stream: Any, name: str, fd: int):
        super().__init__()
        self._stream = stream
        self._fd = fd
        self.name = name
        self.failure: OSError | None = None
        self._pending: list[str] = []
        self._pending_size = 0
        self._at_once = name == "stderr" or (stream is not None and _isatty(stream))
        self._direct = stream is not None and _fileno(stream) == fd  # else (a test's capture): through it
        self.flush_first: GuardedStream | None = None  # stderr: stdout's text goes out before its own
        self._lock = threading.RLock()  # roll's pass-through and rich's refresh threads write to stderr too

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self._stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self._stream, "errors", None)

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.failure is None and self._stream is not None and self._stream.isatty()

    def fileno(self) -> int:
        if self.failure is not None or self._stream is None:
            raise io.UnsupportedOperation("the stream is closed or failed")
        return int(self._stream.fileno())

    @property
    def buffer(self) -> _GuardedBuffer:
        """The binary side (click writes bytes there), guarded by this stream."""
        return _GuardedBuffer(self)

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # as a text stream says it (click's echo probes for a binary writer so)
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self._stream is None and text:  # closed at start: said once something is to be written
            self.failure = self.failure or OSError(errno.EBADF, "it is closed")
        elif self.failure is None and text and not self._direct:
            try:
                self._stream.write(text)
            except OSError as exc:
                self._failed(exc)
        elif self.failure is None and text:
            with self._lock:
                self._pending.append(text)
                self._pending_size += len(text)
                if self._at_once or self._pending_size >= _CHUNK:
                    self.flush()
        return len(text)

    def flush(self) -> None:
        if self.flush_first is not None and self._pending:  # the order written is the order a reader sees
            self.flush_first.flush()
        if self.failure is None and self._stream is not None:
            try:
                self._stream.flush()  # anything written to it before it was guarded
                with self._lock:
                    text = "".join(self._pending)
                    self._pending, self._pending_size = [], 0
                    if text:
                        _write_all(self._fd, text.encode(self.encoding, self.errors or "strict"))
            except OSError as exc:
                self._failed(exc)

    def write_bytes(self, data: bytes) -> int:
        if self._stream is None and data:
            self.failure = self.failure or OSError(errno.EBADF, "it is closed")
        elif self.failure is None:
            if self.flush_first is not None:
                self.flush_first.flush()
            self.flush()
            try:
                if self._direct:
                    _write_all(self._fd, data)
                else:
                    self._stream.buffer.write(data)
            except OSError as exc:
                self._failed(exc)
        return len(data)

    def _failed(self, exc: OSError) -> None:
        """Record the failure, and put /dev/null behind the descriptor: what is still buffered, and the
        interpreter's own flush at exit, then go nowhere instead of failing again."""
        self.failure = exc
        try:
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, self._fd)
            os.close(null)
        except OSError:
            pass

    @property
    def broken_pipe(self) -> bool:
        return isinstance(self.failure, BrokenPipeError) or (
            self.failure is not None and self.failure.errno in (errno.EPIPE, errno.ECONNRESET))


_CHUNK = 1 << 16


def _fileno(stream: Any) -> int | None:
    try:
        return int(stream.fileno())
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (OSError, ValueError):
        return False


def _write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` to `fd`: a write a signal cut short is continued, never dropped."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class _GuardedBuffer(io.RawIOBase):
    """The bytes side of a `GuardedStream`."""

    def __init__(self, text: GuardedStream):
        super().__init__()
        self._text = text

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:
        return self._text.write_bytes(bytes(data))

    def flush(self) -> None:
        self._text.flush()


def guard_standard_streams() -> tuple[GuardedStream, GuardedStream]:
    """Guard stdout and stderr. A descriptor that was closed at start (`>&-`) gets /dev/null first, so
    that no file or socket this process opens can take its number and receive the output."""
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            null = os.open(os.devnull, os.O_RDWR)
            if null != fd:
                os.dup2(null, fd)
                os.close(null)
    out = GuardedStream(sys.stdout, "stdout", 1)
    err = GuardedStream(sys.stderr, "stderr", 2)
    err.flush_first = out
    sys.stdout, sys.stderr = out, err  # type: ignore[assignment]
    return out, err


def output_failure_line(out: GuardedStream) -> str | None:
    """What to say on stderr about a failed stdout: nothing for a closed pipe (the reader had enough)."""
    if out.failure is None or out.broken_pipe:
        return None
    reason = out.failure.strerror or str(out.failure)
    return f"Could not write to stdout: {reason} (the run itself went on; its exit code says how it ended)"
