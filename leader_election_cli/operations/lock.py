"""The rebalance lock: one run at a time per cluster, so overlapping cron runs never elect together.

An exclusive, non-blocking `flock` on a file. The kernel drops the lock when the holder exits, even
after a crash or `kill -9`, so a stale file never blocks a run; the file itself is left in place
(removing it would let two runs lock two different files). A held lock is exit 5 (refused).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from leader_election_cli.errors import InputError, RefusedError, shown


def default_lock_path(cluster_id: str | None, bootstrap_servers: str) -> Path:
    """One lock per cluster in the system temp directory, named after its cluster id, so that runs given
    different bootstrap servers of one cluster still exclude each other (after the bootstrap servers
    for a cluster without an id, Kafka before 0.10.1)."""
    if cluster_id:
        key = f"cluster-id:{cluster_id}"
    else:
        key = "bootstrap-servers:" + ",".join(sorted(s.strip() for s in bootstrap_servers.split(",") if s.strip()))
    digest = hashlib.sha256(key.encode()).hexdigest()[:12]
    return Path(tempfile.gettempdir()) / f"kafka-leaders-rebalance-{digest}.lock"


@contextmanager
def exclusive_lock(path: Path) -> Iterator[None]:
    """Hold the lock for the block, or raise RefusedError at once when another process holds it."""
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise InputError(f"Cannot open the lock file {shown(str(path))}: {exc.strerror or exc}",
                         hint="Give a writable --lock-file path.") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
            by = f" (held by process {holder})" if holder.isdigit() else ""
            raise RefusedError(f"Another rebalance is running: the lock file {shown(str(path))} is locked{by}",
                               hint="Wait for it to finish; runs that overlap would elect the same partitions.") \
                from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        try:
            yield
        finally:
            os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
