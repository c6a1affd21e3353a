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

__all__ = ["Multi", "Op", "fs_write_atomic", "fs_glob"]


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
