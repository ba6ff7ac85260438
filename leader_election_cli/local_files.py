"""The user's files, read and written safely: one place for every input file and every file a run writes.

Reading: regular files only (a FIFO, a device such as /dev/zero, a directory is refused at once: opened
without blocking and checked before a byte is read), and never more than a stated size.
Writing: never through a symbolic link we did not create (O_NOFOLLOW, O_EXCL); whole files are written
to a temporary file in the same directory and renamed into place, so a reader (or a crash) never sees
half a file and a failed write leaves nothing behind; an appended line is one write (O_APPEND).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path

from leader_election_cli.errors import InputError, shown

_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0)
_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def kind_of(mode: int) -> str:
    """What a file that is not a regular file is, in words."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def _size_text(limit: int) -> str:
    return f"{limit // 2**20} MiB" if limit >= 2**20 and limit % 2**20 == 0 else f"{limit} bytes"


def read_regular_file(path: str | os.PathLike[str], *, what: str, limit: int, hint: str,
                      shown_as: str | None = None,
                      too_large_hint: str | None = None,
                      kafka_io_line: Callable[[int], str] | None = None, _probe_only: bool = False) -> bytes:
    """The bytes of `path`, a regular file of at most `limit` bytes; anything else one clear InputError
    (exit 2): "Unable to read {what} {path}: {reason}" with the fix (`hint`, or `too_large_hint` for a
    file over the limit), always one line. `shown_as` is the path as the message shows it (default: `path`,
    made inert); `kafka_io_line` gives Kafka's first line for the errno the system refused the file with (not
    for our own refusals), which the drop-in prints above ours."""

    def unreadable(reason: str, fix: str = hint, err: int | None = None) -> InputError:
        line = f"Unable to read {what} {shown_as if shown_as is not None else shown(str(path))}"
        kafka_line = kafka_io_line(err) if kafka_io_line and err else None
        return InputError(f"{line}: {reason}", hint=fix, kafka_line=kafka_line)

    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise unreadable(exc.strerror or str(exc), err=exc.errno) from None
    except ValueError as exc:  # a NUL character in the path
        raise unreadable(str(exc)) from None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise unreadable(os.strerror(errno.EISDIR), err=errno.EISDIR)
        if not stat.S_ISREG(mode):
            raise unreadable(f"it is {kind_of(mode)}, not a regular file")
        if _probe_only:
            size = os.fstat(fd).st_size
            if size > limit:
                raise unreadable(f"larger than {_size_text(limit)}", too_large_hint or hint)
            return b""
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
    except OSError as exc:
        raise unreadable(exc.strerror or str(exc), err=exc.errno) from None
    finally:
        os.close(fd)
    if size > limit:
        raise unreadable(f"larger than {_size_text(limit)}", too_large_hint or hint)
    return b"".join(chunks)


def check_regular_file(path: str | os.PathLike[str], *, what: str, limit: int, hint: str) -> None:
    """Refuse (one InputError line naming `what` and `path`) anything but a regular file of at most `limit`
    bytes, without reading it or blocking on a FIFO: for files another library opens by name afterwards."""
    read_regular_file(path, what=what, limit=limit, hint=hint, _probe_only=True)


def write_atomically(path: Path, data: bytes, *, replace: bool = True) -> None:
    """Write `data` as the whole of `path`: a temporary file in the same directory (O_EXCL, O_NOFOLLOW),
    flushed to disk, then renamed over `path` (`replace`: a symlink at `path` is replaced, never followed)
    or linked to it only if nothing is there (not `replace`: FileExistsError). On failure nothing is left."""
    with contextlib.suppress(FileNotFoundError):
        mode = os.lstat(path).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISLNK(mode)):  # never rename over /dev/null or a directory
            raise OSError(errno.EINVAL, f"it is {kind_of(mode)}, not a regular file")
    directory = path.parent
    temporary = directory / f".{path.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp"
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0), 0o666)
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        if replace:
            os.replace(temporary, path)
        else:
            os.link(temporary, path, follow_symlinks=False)  # EEXIST for anything there, a dangling symlink too
    finally:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temporary)
    _sync_directory(directory)


def _sync_directory(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def append_line(path: Path, line: str) -> None:
    """Append `line` (with its newline) in one write to the regular file `path` (created if missing) or a
    character device (/dev/null, a terminal); never through a symlink, never to a FIFO (OSError, with why)."""
    fd = open_regular(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, char_device_ok=True)
    try:
        data = line.encode("utf-8")
        if os.write(fd, data) != len(data):
            raise OSError(errno.EIO, "the line was written only in part")
    finally:
        os.close(fd)


def open_regular(path: Path, flags: int, mode: int = 0o666, *, char_device_ok: bool = False) -> int:
    """A descriptor on the regular file `path` opened with `flags`, never through a symlink and without
    blocking on a FIFO; OSError (with a reason in words) for a symlink or anything but a regular file (or a
    character device, when `char_device_ok`)."""
    try:
        fd = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | getattr(os, "O_CLOEXEC", 0), mode)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise OSError(errno.ELOOP, "it is a symbolic link, which is never followed") from None
        if exc.errno == errno.ENXIO:  # a FIFO without a reader
            raise OSError(errno.ENXIO, "it is a FIFO (named pipe), not a regular file") from None
        raise
    file_mode = os.fstat(fd).st_mode
    if not (stat.S_ISREG(file_mode) or (char_device_ok and stat.S_ISCHR(file_mode))):
        os.close(fd)
        raise OSError(errno.EINVAL, f"it is {kind_of(file_mode)}, not a regular file")
    os.set_blocking(fd, True)
    return fd


def cache_directory() -> Path:
    """This tool's directory in the user's cache: under $XDG_CACHE_HOME (an absolute path), else ~/.cache."""
    cache = os.environ.get("XDG_CACHE_HOME")
    return (Path(cache) if cache and os.path.isabs(cache) else Path.home() / ".cache") / "leader-election-cli"


def private_directory(path: Path) -> Path:
    """`path`, a directory of this user's only (mode 0700), created if missing; OSError if it is anything else
    (a symlink, another user's, open to others): a shared name would let another user plant a file there."""
    with contextlib.suppress(FileExistsError):  # a symlink or a file there: told apart below
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = os.lstat(path)
    if not stat.S_ISDIR(info.st_mode):
        what = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "not a directory"
        raise OSError(errno.ENOTDIR, f"{path} is {what}")
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise OSError(errno.EPERM, f"{path} is not private to this user (owner {info.st_uid}, mode "
                                   f"{stat.S_IMODE(info.st_mode):o}; 700 and this user's expected)")
    return path


def names_a_directory(path: str) -> bool:
    """Whether a path, as the user wrote it, names a directory: one ending in "/" does (created when missing:
    `make_directories`), whether it exists or not, as does an existing directory. (`Path` drops the "/".)"""
    return path.endswith("/") or os.path.isdir(path)


def make_directories(directory: Path, option: str, named: str | None = None) -> Path:
    """`mkdir -p directory`, each new level 0755 (less the umask); an InputError naming the level that
    cannot be created, and why. `named` is the path as the option gave it (default: `directory`)."""
    given = shown(named if named is not None else str(directory))
    missing = [p for p in (directory, *directory.parents) if not p.is_dir()]
    for level in reversed(missing):
        try:
            level.mkdir(mode=0o755)
        except FileExistsError:
            if not level.is_dir():
                raise InputError(f"{option} {given}: {shown(str(level))} is not a directory",
                                 hint=f"Give {option} a path whose directories exist or can be created.") from None
        except OSError as exc:
            raise InputError(f"{option} {given}: cannot create the directory {shown(str(level))}: "
                             f"{exc.strerror or exc}",
                             hint="Create it with the rights this user needs, or give another path.") from None
    return directory


def named_path(written: str, option: str, *, create: bool) -> Path:
    """The path an option names, as `Path`: one that names a directory (`names_a_directory`) is made when
    missing if `create` (the run writes in it: a dry run creates nothing), so the operation finds a directory."""
    path = Path(written)
    if create and names_a_directory(written):
        make_directories(path, option, written)
    return path


def file_name_part(cluster_id: str | None) -> str:
    """A cluster id as part of a file name: every character but letters, digits, '_', '.' and '-' made '_'
    (a cluster id is any string the cluster reports: "/" would name a directory)."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", cluster_id or "unknown-cluster")


def run_file_name(cluster_id: str | None, what: str, now: datetime | None = None) -> str:
    """<cluster id>-<what>-<UTC time>.json, a file a run names itself (a restore file, a plan file): the time
    to the millisecond, so that runs in the same second never collide."""
    now = now or datetime.now(timezone.utc)
    return f"{file_name_part(cluster_id)}-{what}-{now.strftime('%Y%m%dT%H%M%S')}{now.microsecond // 1000:03d}Z.json"
