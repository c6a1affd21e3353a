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

__all__ = ["FileWriter", "Multi", "Op", "fs_read", "fs_write_atomic", "fs_glob", "special_kind"]


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


class FileWriter:
    """A file written in pieces (``write`` each, then ``commit`` or
    ``abort``): parent dirs created, an existing file's mode kept, and --
    ``atomic`` -- replaced atomically (a temp file in the same dir, fsync,
    rename), so readers never see half a file.  Writing in pieces keeps a
    large content from being copied whole once more (``panto.fs.write``
    hands a big Lua string over in slices)."""

    def __init__(
        self, path: str, *, mkdir: bool = True, mode: int | None = None, atomic: bool = True
    ) -> None:
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
        if mode is None and atomic:
            if existing_mode is not None:
                mode = existing_mode
            else:
                umask = os.umask(0)
                os.umask(umask)
                mode = 0o666 & ~umask
        self.target = target
        self.mode = mode
        self.tmp: str | None = None
        self.written = 0
        if atomic:
            fd, self.tmp = tempfile.mkstemp(prefix=".panto-", suffix=".tmp", dir=parent)
            self.file = os.fdopen(fd, "wb")
        else:
            self.file = open(target, "wb")  # noqa: SIM115 - closed by commit/abort

    def write(self, data: bytes) -> None:
        try:
            self.file.write(data)
        except BaseException:
            self.abort()
            raise
        self.written += len(data)

    def commit(self) -> int:
        """Finish the file; returns the bytes written."""
        try:
            if self.tmp is not None:
                self.file.flush()
                os.fsync(self.file.fileno())
            self.file.close()
            if self.mode is not None:
                os.chmod(self.tmp or self.target, self.mode)
            if self.tmp is not None:
                os.replace(self.tmp, self.target)
                self.tmp = None
        except BaseException:
            self.abort()
            raise
        return self.written

    def abort(self) -> None:
        """Drop the temp file (a non-atomic write keeps what was written)."""
        with contextlib.suppress(OSError):
            self.file.close()
        if self.tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(self.tmp)
            self.tmp = None


def fs_write_atomic(
    path: str, data: bytes, *, mkdir: bool = True, mode: int | None = None, atomic: bool = True
) -> int:
    """Write ``data`` to ``path`` at once (see :class:`FileWriter`)."""
    w = FileWriter(path, mkdir=mkdir, mode=mode, atomic=atomic)
    w.write(data)
    return w.commit()


def fs_glob(pattern: str, cwd: str | None = None, hidden: bool = False) -> list[str]:
    root = cwd or os.getcwd()
    kwargs: dict[str, Any] = {"recursive": True, "root_dir": root}
    if hidden:
        kwargs["include_hidden"] = True
    import glob as _glob  # imported here: not needed before the first glob (start-up)

    return sorted(_glob.glob(pattern, **kwargs))
