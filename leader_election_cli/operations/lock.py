"""The rebalance and roll locks: one run at a time per cluster, so overlapping cron runs never elect
together and two rolling restarts never stop two brokers together.

An exclusive, non-blocking `flock` on a file. The kernel drops the lock when the holder exits, even
after a crash or `kill -9`, so a stale file never blocks a run; the file itself is left in place
(removing it would let two runs lock two different files). A held lock is exit 5 (refused).

The default lock lives in a directory of the user's own (mode 0700: $XDG_RUNTIME_DIR/kafka-leaders, else
~/.cache/kafka-leaders), never under a shared /tmp name another user could plant a symlink at; a lock
file is never opened through a symlink, and only a regular file will do (not /dev/null, not a FIFO).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from leader_election_cli.errors import InputError, RefusedError, shown
from leader_election_cli.local_files import open_regular, private_directory


def lock_directory() -> Path:
    """The user's private directory for locks: $XDG_RUNTIME_DIR/kafka-leaders (a tmpfs of the user's
    own, cleared at logout), else $XDG_CACHE_HOME (or ~/.cache)/kafka-leaders; created with mode 0700."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime) and os.path.isdir(runtime):
        return Path(runtime) / "kafka-leaders"
    cache = os.environ.get("XDG_CACHE_HOME")
    return (Path(cache) if cache and os.path.isabs(cache) else Path.home() / ".cache") / "kafka-leaders"


def default_lock_path(cluster_id: str | None, bootstrap_servers: str, directory: Path | None = None,
                      kind: str = "rebalance") -> Path:
    """One lock per cluster in the user's private lock directory, named after its cluster id, so that runs
    given different bootstrap servers of one cluster still exclude each other (after the bootstrap servers
    for a cluster without an id, Kafka before 0.10.1). Runs of one user exclude each other; a cron job
    of another user has its own lock (--lock-file names a shared one). `directory` (--lock-file DIR/): the
    lock under the same name there, a directory the user chose (shared, maybe), instead of the private one.
    `kind` (rebalance, roll) names the command: each has its own lock."""
    if cluster_id:
        key = f"cluster-id:{cluster_id}"
    else:
        key = "bootstrap-servers:" + ",".join(sorted(s.strip() for s in bootstrap_servers.split(",") if s.strip()))
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    if directory is not None:
        return directory / f"{kind}-{digest}.lock"
    directory = lock_directory()
    try:
        private_directory(directory)
    except (OSError, RuntimeError) as exc:  # RuntimeError: no home directory to be found
        reason = getattr(exc, "strerror", None) or exc
        raise InputError(f"Cannot use the lock directory {shown(str(directory))}: {reason}",
                         hint="Give --lock-file a path in a directory of your own.") from None
    return directory / f"{kind}-{digest}.lock"


@contextmanager
def exclusive_lock(path: Path, kind: str = "rebalance",
                   why: str = "runs that overlap would elect the same partitions") -> Iterator[None]:
    """Hold the lock for the block, or raise RefusedError at once when another process holds it (another
    `kind` run: `why` says what two at once would do)."""
    if not str(path).strip():
        raise InputError("--lock-file is empty", hint="Give --lock-file a file path, or leave it out for the default.")
    try:
        fd = open_regular(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise InputError(f"Cannot use the lock file {shown(str(path))}: {exc.strerror or exc}",
                         hint="Give --lock-file the path of a regular file in a directory you can write.") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            by = f" (held by process {holder})" if holder.isdigit() else ""
            raise RefusedError(f"Another {kind} is running: the lock file {shown(str(path))} is locked{by}",
                               hint=f"Wait for it to finish; {why}.") from None
        with contextlib.suppress(OSError):  # the pid only names the holder: a full disk (EFBIG, ENOSPC)
            os.ftruncate(fd, 0)             # still leaves the lock held, and the run goes on
            os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
