"""The Python halves of the Lua batteries: ops, files (processes: ``procs``).

Everything here runs on the runtime's event-loop thread.  Async operations
are wrapped in ``Op`` objects that the Lua stubs yield to the driver; they are
only started when the driver awaits them, so an op that is never awaited
leaves nothing behind.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat as _stat
import tempfile
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["Multi", "Op", "fs_read", "fs_write_atomic", "fs_glob", "special_kind"]


class Op:
    """A deferred awaitable: ``run()`` starts it."""

    __slots__ = ("_factory", "future")

    def __init__(self, factory: Callable[[], Awaitable[Any]]) -> None:
        self._factory = factory
        self.future: Any = None

    def run(self) -> Awaitable[Any]:
        return self._factory()


class Multi(tuple):  # type: ignore[type-arg]
    """An op result that is passed to Lua as several values."""


# --------------------------------------------------------------------------
# files

# what a path that is neither a regular file nor a directory is (for errors)
_SPECIAL = (
    (_stat.S_ISFIFO, "a FIFO (named pipe)"),
    (_stat.S_ISCHR, "a character device"),
    (_stat.S_ISBLK, "a block device"),
    (_stat.S_ISSOCK, "a socket"),
)


def special_kind(mode: int) -> str | None:
    """What a file of ``mode`` is when it is not a regular file or a
    directory ("a FIFO (named pipe)", ...); None for those two."""
    if _stat.S_ISREG(mode) or _stat.S_ISDIR(mode):
        return None
    for test, name in _SPECIAL:
        if test(mode):
            return name
    return "not a regular file"


def _not_regular(path: str, kind: str, verb: str) -> OSError:
    return OSError(
        errno.EINVAL, f"{path} is {kind}, not a regular file; panto {verb} only regular files"
    )


def fs_read(path: str, offset: int = 0, limit: int | None = None) -> bytes:
    """Read a regular file (from ``offset``, at most ``limit`` bytes).

    FIFOs, devices and sockets are refused without blocking: the open is
    non-blocking (a FIFO with no writer would block the Lua thread, and with
    it every tool call) and the type is checked on the open descriptor (no
    race with a path swapped after a stat); ``/dev/zero`` would never end."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as f:
        st = os.fstat(fd)
        if _stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        kind = special_kind(st.st_mode)
        if kind is not None:
            raise _not_regular(path, kind, "reads")
        if offset:
            f.seek(offset)
        return f.read(limit) if limit is not None else f.read()


def fs_write_atomic(
    path: str, data: bytes, *, mkdir: bool = True, mode: int | None = None, atomic: bool = True
) -> int:
    """Write ``data`` to ``path``: parent dirs created, an existing file's mode
    kept, replaced atomically (temp file in the same dir + fsync + rename)."""
    path = os.path.abspath(path)
    parent = os.path.dirname(path)
    if mkdir:
        os.makedirs(parent, exist_ok=True)
    existing_mode = None
    target = path
    try:
        st = os.stat(path)
        if _stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        kind = special_kind(st.st_mode)
        if kind is not None:
            # replacing a FIFO or a device node with a regular file (or
            # blocking on one) is never what writing "a file" means
            raise _not_regular(path, kind, "writes")
        existing_mode = _stat.S_IMODE(st.st_mode)
        target = os.path.realpath(path)  # write through symlinks, keep the link
        parent = os.path.dirname(target)
    except FileNotFoundError:
        pass
    if not atomic:
        with open(target, "wb") as f:
            f.write(data)
        if mode is not None:
            os.chmod(target, mode)
        return len(data)
    if mode is None:
        if existing_mode is not None:
            mode = existing_mode
        else:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(prefix=".panto-", suffix=".tmp", dir=parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return len(data)


def fs_glob(pattern: str, cwd: str | None = None, hidden: bool = False) -> list[str]:
    root = cwd or os.getcwd()
    kwargs: dict[str, Any] = {"recursive": True, "root_dir": root}
    if hidden:
        kwargs["include_hidden"] = True
    import glob as _glob  # imported here: not needed before the first glob (start-up)

    return sorted(_glob.glob(pattern, **kwargs))
