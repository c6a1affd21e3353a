"""The Python halves of the Lua batteries: processes, HTTP, files.

Everything here runs on the runtime's event-loop thread.  Async operations
are wrapped in ``Op`` objects that the Lua stubs yield to the driver; they are
only started when the driver awaits them, so an op that is never awaited
leaves nothing behind.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import glob as _glob
import os
import signal
import stat as _stat
import tempfile
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

__all__ = ["CappedBuffer", "Multi", "Op", "fs_write_atomic", "kill_group", "spawn_process"]

#: Seconds between SIGTERM and SIGKILL when a process group is stopped.
KILL_GRACE = 1.0
#: After the main process exits, how long to wait for its pipes to close
#: (background children still holding them are then killed).
PIPE_LINGER = 0.5


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


class CappedBuffer:
    """Keeps the first and last ``cap // 2`` bytes of a stream and counts the rest."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        if self.cap is None:
            self.head += data
            return
        half = self.cap - self.cap // 2
        if len(self.head) < half:
            take = half - len(self.head)
            self.head += data[:take]
            data = data[take:]
        if data:
            self.tail += data
            keep = self.cap // 2
            if len(self.tail) > 2 * keep + 65536:
                del self.tail[: len(self.tail) - keep]

    @property
    def omitted(self) -> int:
        if self.cap is None:
            return 0
        return max(0, self.total - len(self.head) - min(len(self.tail), self.cap // 2))

    def value(self) -> bytes:
        if self.cap is None:
            return bytes(self.head)
        keep = self.cap // 2
        tail = bytes(self.tail[-keep:]) if keep else b""
        if self.omitted == 0:
            return bytes(self.head) + bytes(self.tail)
        return bytes(self.head) + tail


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


async def kill_group(proc: asyncio.subprocess.Process, grace: float = KILL_GRACE) -> None:
    """SIGTERM the process group, wait ``grace`` seconds, then SIGKILL it."""
    pgid = proc.pid
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGTERM)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + grace
    while loop.time() < deadline:
        if proc.returncode is None:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(asyncio.shield(proc.wait()), 0.05)
        elif not _group_alive(pgid):
            break
        else:
            await asyncio.sleep(0.02)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(asyncio.shield(proc.wait()), 2.0)


async def _pump(stream: asyncio.StreamReader | None, buf: CappedBuffer) -> None:
    if stream is None:
        return
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        buf.add(chunk)


async def spawn_process(
    argv: Sequence[str],
    *,
    cwd: str | None = None,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    timeout: float | None = None,
    merge_stderr: bool = False,
    output_limit: int | None = None,
    grace: float = KILL_GRACE,
    registry: set[asyncio.subprocess.Process] | None = None,
) -> dict[str, Any]:
    """Run ``argv`` in its own process group; kill the group on timeout or cancel.

    Returns ``code`` (None if killed by a signal), ``signal``, ``stdout``,
    ``stderr``, ``timed_out``, ``stdout_omitted``/``stderr_omitted`` (bytes
    dropped from the middle when ``output_limit`` is set) and ``duration``.
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    full_env = None
    if env is not None:
        full_env = dict(os.environ)
        full_env.update(env)
    proc = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT if merge_stderr else asyncio.subprocess.PIPE,
        cwd=cwd,
        env=full_env,
        start_new_session=True,
    )
    if registry is not None:
        registry.add(proc)
    out = CappedBuffer(output_limit)
    err = CappedBuffer(output_limit)
    pumps = [
        asyncio.ensure_future(_pump(proc.stdout, out)),
        asyncio.ensure_future(_pump(proc.stderr, err)),
    ]
    timed_out = False
    try:
        if stdin is not None and proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                proc.stdin.write(stdin)
                await proc.stdin.drain()
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), timeout)
        except asyncio.TimeoutError:
            timed_out = True
            await kill_group(proc, grace)
        # the main process is gone; give its pipes a moment to reach EOF
        done, pending = await asyncio.wait(pumps, timeout=PIPE_LINGER)
        if pending:
            # background children still hold the output: stop them
            await kill_group(proc, grace)
            done, pending = await asyncio.wait(pumps, timeout=PIPE_LINGER)
            for p in pending:
                p.cancel()
    except asyncio.CancelledError:
        await kill_group(proc, grace)
        for p in pumps:
            p.cancel()
        raise
    finally:
        if registry is not None:
            registry.discard(proc)
    rc = proc.returncode
    return {
        "code": rc if rc is not None and rc >= 0 else None,
        "signal": -rc if rc is not None and rc < 0 else None,
        "stdout": out.value(),
        "stderr": err.value(),
        "stdout_omitted": out.omitted,
        "stderr_omitted": err.omitted,
        "stdout_bytes": out.total,
        "stderr_bytes": err.total,
        "timed_out": timed_out,
        "duration": loop.time() - started,
    }


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
    return sorted(_glob.glob(pattern, **kwargs))
