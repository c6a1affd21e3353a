"""Processes that tools start, and making sure they all die.

Every process ``panto.process.spawn`` starts (``std.bash`` included) runs in
its own process group, and carries a mark in its environment,
``PANTO_PROC``: a space-separated list of tokens, one per panto it runs
under (nested pantos add theirs).  The mark is inherited across ``fork``,
``setsid``, ``nohup`` and double forks, which a process group is not: it is
how panto finds *every* process a tool started (Linux: by scanning
``/proc/*/environ`` of this user's processes).

- On a tool's timeout or cancel the tool's process group and every process
  carrying the tool's token get SIGTERM, then SIGKILL after a grace period.
- When panto exits for any reason -- SIGKILL included -- a tiny watcher
  process (started once, on the first spawn) sees the pipe it shares with
  panto close, and SIGKILLs every process carrying panto's token.

Only a process that clears its own environment (``env -i``) escapes the
mark.  When a command's shell exits, the tool returns at once: output
still arriving is drained for a moment, then background jobs that still
hold the output pipes are killed (their pipes do not hold the result back).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..policy.sandbox import Sandbox

__all__ = [
    "MARK",
    "KILL_GRACE",
    "PIPE_LINGER",
    "CappedBuffer",
    "Process",
    "spawn_process",
    "marked_pids",
    "kill_marked",
]

#: The environment variable that marks processes started by panto's tools.
MARK = "PANTO_PROC"
#: Seconds between SIGTERM and SIGKILL when a tool's processes are stopped.
KILL_GRACE = 1.0
#: After the main process exits, how long its output may keep arriving
#: before background jobs still holding the pipes are killed.
PIPE_LINGER = 0.3

_MARK_B = MARK.encode() + b"="


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


# ----------------------------------------------------------------------------
# finding and killing marked processes


def marked_pids(token: str, *, prefix: bool = False) -> list[int]:
    """Pids of this user's processes whose ``PANTO_PROC`` holds ``token``
    (``prefix``: a token starting with it)."""
    tok = token.encode()
    me = os.getpid()
    out: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:  # pragma: no cover - not Linux
        return out
    for name in names:
        if not name.isdigit():
            continue
        pid = int(name)
        if pid == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        i = env.find(_MARK_B)
        while i > 0 and env[i - 1] != 0:
            i = env.find(_MARK_B, i + 1)
        if i < 0:
            continue
        end = env.find(b"\0", i)
        value = env[i + len(_MARK_B) : end if end >= 0 else len(env)]
        for t in value.split():
            if t == tok or (prefix and t.startswith(tok)):
                out.append(pid)
                break
    return out


def kill_marked(token: str, sig: int = signal.SIGKILL, *, prefix: bool = False) -> int:
    """Send ``sig`` to every process marked with ``token``; with SIGKILL,
    repeat until none is left (a process may fork meanwhile).  Returns how
    many were signalled."""
    n = 0
    for _ in range(100 if sig == signal.SIGKILL else 1):
        pids = marked_pids(token, prefix=prefix)
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, sig)
                n += 1
        if sig != signal.SIGKILL:
            break
    return n


# ----------------------------------------------------------------------------
# the watcher: kills everything marked with panto's token when panto is gone

_WATCHER = r"""
import os, signal, sys, time
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM, signal.SIGQUIT, signal.SIGTSTP):
    signal.signal(s, signal.SIG_IGN)
token, fd = sys.argv[1].encode(), int(sys.argv[2])
while True:
    try:
        if not os.read(fd, 4096):
            break
    except InterruptedError:
        continue
    except OSError:
        break
def marked():
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/" + name + "/environ", "rb") as f:
                env = f.read().split(b"\0")
        except OSError:
            continue
        for kv in env:
            if kv.startswith(b"PANTO_PROC="):
                if any(t.startswith(token) for t in kv[11:].split()):
                    yield int(name)
                break
for _ in range(100):
    pids = list(marked())
    if not pids:
        break
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    time.sleep(0.01)
"""

_lock = threading.Lock()
_session: str | None = None
_session_pid = 0
_counter = itertools.count(1)
_watch_fd: int | None = None


def _start_watcher(token: str) -> int | None:
    """Start the watcher; returns the write end of its pipe (kept open, and
    never inherited, until this process is gone)."""
    r, w = os.pipe()  # both ends non-inheritable; the watcher gets r explicitly
    try:
        subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHER, token + ".", str(r)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(r,),
            start_new_session=True,
            env={k: v for k, v in os.environ.items() if k != MARK},
        )
    except OSError:  # pragma: no cover - no way to start it: best effort only
        os.close(w)
        return None
    finally:
        os.close(r)
    return w


def _session_token() -> str:
    """This process's token; the watcher is started with it on first use
    (again in a forked child)."""
    global _session, _session_pid, _watch_fd
    with _lock:
        if _session is None or _session_pid != os.getpid():
            _session_pid = os.getpid()
            _session = f"p{os.getpid()}x{os.urandom(4).hex()}"
            _watch_fd = _start_watcher(_session)
        return _session


def new_token() -> str:
    """A token for one spawned process (tree): ``<session>.<n>``."""
    return f"{_session_token()}.{next(_counter)}"


def marked_env(token: str, env: Mapping[str, str] | None) -> dict[str, str]:
    full = dict(os.environ)
    if env:
        full.update(env)
    outer = os.environ.get(MARK, "")
    full[MARK] = f"{outer} {token}".strip()
    return full


# ----------------------------------------------------------------------------
# one process


class Process:
    """A spawned process tree: its group leader and its token."""

    def __init__(self, popen: subprocess.Popen[bytes], token: str) -> None:
        self.popen = popen
        self.pid = popen.pid
        self.token = token

    def signal_all(self, sig: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, sig)
        kill_marked(self.token, sig)

    async def wait_exit(self, timeout: float | None = None) -> bool:
        """Wait until the leader exits (not its pipes); True if it did."""
        return await _wait_pid(self.popen, timeout)

    async def kill(self, grace: float = KILL_GRACE) -> None:
        """SIGTERM the group and every marked process, wait ``grace`` s for
        the leader, then SIGKILL them all."""
        self.signal_all(signal.SIGTERM)
        await self.wait_exit(grace)
        self.signal_all(signal.SIGKILL)
        await self.wait_exit(2.0)


async def _wait_pid(popen: subprocess.Popen[bytes], timeout: float | None) -> bool:
    if popen.poll() is not None:
        return True
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    fd = -1
    with contextlib.suppress(OSError, AttributeError):
        fd = os.pidfd_open(popen.pid)  # type: ignore[attr-defined, unused-ignore]
    try:
        while popen.poll() is None:
            left = None if deadline is None else deadline - loop.time()
            if left is not None and left <= 0:
                return False
            if fd >= 0:
                ready = loop.create_future()
                loop.add_reader(fd, lambda f=ready: f.done() or f.set_result(None))
                try:
                    await asyncio.wait_for(ready, left)
                except asyncio.TimeoutError:
                    return popen.poll() is not None
                finally:
                    loop.remove_reader(fd)
            else:  # pragma: no cover - no pidfd: poll
                await asyncio.sleep(0.02 if left is None else min(0.02, left))
        return True
    finally:
        if fd >= 0:
            os.close(fd)


class _Reader:
    """Reads a pipe into a CappedBuffer on the loop, without a transport."""

    def __init__(self, fd: int, buf: CappedBuffer) -> None:
        self.fd = fd
        self.buf = buf
        self.loop = asyncio.get_running_loop()
        self.eof = self.loop.create_future()
        os.set_blocking(fd, False)
        self.loop.add_reader(fd, self._ready)

    def _ready(self) -> None:
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self.buf.add(data)
        else:
            self.close()

    def close(self) -> None:
        if self.fd >= 0:
            self.loop.remove_reader(self.fd)
            os.close(self.fd)
            self.fd = -1
        if not self.eof.done():
            self.eof.set_result(None)


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
    registry: set[Process] | None = None,
    sandbox: Sandbox | None = None,
) -> dict[str, Any]:
    """Run ``argv`` in its own process group, marked (see the module doc);
    kill all it started on timeout or cancel.  Returns when the process
    exits (background jobs holding its pipes do not delay it).  With
    ``sandbox`` (:class:`panto.policy.sandbox.Sandbox`) it runs confined;
    ``SandboxUnavailable`` when it cannot be.

    Returns ``code`` (None if killed by a signal), ``signal``, ``stdout``,
    ``stderr``, ``timed_out``, ``stdout_omitted``/``stderr_omitted`` (bytes
    dropped from the middle when ``output_limit`` is set) and ``duration``.

    The result also has ``sandbox`` (the backend, or ``"off"``) and, when the
    command failed in a way that looks like the sandbox's doing,
    ``sandbox_note`` (a line for the tool result).
    """
    loop = asyncio.get_running_loop()
    started = loop.time()
    token = new_token()
    full_env = marked_env(token, env)
    launch = None
    if sandbox is not None and sandbox.enabled:
        launch = sandbox.launch(argv, full_env, cwd)
        argv, full_env = launch.argv, launch.env
    out_r, out_w = os.pipe()
    err_r, err_w = (-1, -1) if merge_stderr else os.pipe()
    try:
        popen = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=out_w,
            stderr=out_w if merge_stderr else err_w,
            cwd=cwd,
            env=full_env,
            start_new_session=True,
            preexec_fn=launch.preexec_fn if launch is not None else None,  # noqa: PLW1509
        )
    except BaseException:
        for fd in (out_r, out_w, err_r, err_w):
            if fd >= 0:
                os.close(fd)
        raise
    finally:
        if launch is not None:
            launch.started()
    os.close(out_w)
    if err_w >= 0:
        os.close(err_w)
    proc = Process(popen, token)
    if registry is not None:
        registry.add(proc)
    out = CappedBuffer(output_limit)
    err = CappedBuffer(output_limit)
    readers = [_Reader(out_r, out)]
    if err_r >= 0:
        readers.append(_Reader(err_r, err))
    timed_out = False
    try:
        if popen.stdin is not None:
            await _feed(popen.stdin, stdin or b"")
        if not await proc.wait_exit(timeout):
            timed_out = True
            await proc.kill(grace)
        # the main process is gone; let its last output arrive
        pending = [r.eof for r in readers if not r.eof.done()]
        if pending:
            await asyncio.wait(pending, timeout=PIPE_LINGER)
        if any(not r.eof.done() for r in readers):
            # background jobs still hold the output: stop them
            proc.signal_all(signal.SIGKILL)
    except BaseException:
        await asyncio.shield(proc.kill(grace))
        raise
    finally:
        for r in readers:
            r.close()
        if popen.stdin is not None:
            with contextlib.suppress(OSError):
                popen.stdin.close()
        if popen.poll() is None:  # pragma: no cover - killed above
            with contextlib.suppress(ProcessLookupError):
                os.killpg(popen.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                popen.wait(2)
        if registry is not None:
            registry.discard(proc)
    rc = popen.returncode
    note = None
    if launch is not None and not timed_out:
        from ..policy.sandbox import blocked_note

        note = blocked_note(sandbox, out.value() + err.value(), rc)
    return {
        "sandbox": launch.backend if launch is not None else "off",
        "sandbox_note": note,
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


async def _feed(pipe: Any, data: bytes) -> None:
    """Write ``data`` to the child's stdin without blocking the loop, then close it."""
    fd = pipe.fileno()
    os.set_blocking(fd, False)
    loop = asyncio.get_running_loop()
    view = memoryview(data)
    try:
        while view:
            try:
                n = os.write(fd, view)
                view = view[n:]
            except BlockingIOError:
                ready = loop.create_future()
                loop.add_writer(fd, lambda f=ready: f.done() or f.set_result(None))
                try:
                    await ready
                finally:
                    loop.remove_writer(fd)
    except (BrokenPipeError, ConnectionResetError):
        pass
    finally:
        with contextlib.suppress(OSError):
            pipe.close()
