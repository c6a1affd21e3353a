"""What the async turn driver (``stream_async.py``) does its own way: it
waits on the event loop and runs blocking work (the store, hooks,
compaction) in a worker thread, so the loop is never blocked.  Its sync
twin is ``io_sync.py``; the driver body that uses them is written once."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

from . import dispatch
from .driver import TIMED_OUT, Driver

__all__ = ["Base", "Inbox", "run_blocking", "step_guard", "wait_cancelled"]

T = TypeVar("T")


async def run_blocking(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread.  If the wait is interrupted, the
    thread still finishes."""
    import asyncio

    return await asyncio.to_thread(fn, *args)


async def wait_cancelled(cancel: threading.Event, seconds: float) -> bool:
    """Sleep ``seconds``; whether ``cancel`` is set then."""
    import asyncio

    await asyncio.sleep(seconds)
    return cancel.is_set()


class _Busy:
    """``step_guard()`` on one event loop: set while ``__anext__`` awaits,
    so ``aclose()`` from another task only signals the cancel."""

    __slots__ = ("busy",)

    def __init__(self) -> None:
        self.busy = False

    def acquire(self, blocking: bool = True) -> bool:
        if self.busy:
            return False
        self.busy = True
        return True

    def release(self) -> None:
        self.busy = False

    def __enter__(self) -> _Busy:
        self.busy = True
        return self

    def __exit__(self, *exc: object) -> None:
        self.busy = False


def step_guard() -> _Busy:
    return _Busy()


class Inbox:
    """Where tool results arrive: ``post`` from any thread, ``get`` on the
    event loop that made it."""

    def __init__(self) -> None:
        import asyncio

        self._loop = asyncio.get_running_loop()
        self._q: asyncio.Queue[Any] = asyncio.Queue()

    def post(self, item: Any) -> None:
        try:
            self._loop.call_soon_threadsafe(self._q.put_nowait, item)
        except RuntimeError:
            pass  # the loop is closed: nobody waits any more

    async def get(self, deadline: float | None) -> Any:
        """The next item, or ``TIMED_OUT`` at ``deadline`` (monotonic)."""
        import asyncio
        import time

        if deadline is None:
            return await self._q.get()
        try:
            return await asyncio.wait_for(self._q.get(), max(0.0, deadline - time.monotonic()))
        except asyncio.TimeoutError:
            return TIMED_OUT


class Base(Driver):
    """The async stream's own public methods, beside ``aclose()``."""

    def close(self) -> None:
        """Synchronous cancel request (e.g. from a signal handler or another
        thread): the running ``__anext__`` notices it and ends."""
        self._request_cancel()

    def cancel(self) -> None:
        """``close()``, and when the turn is not running (never iterated,
        or suspended) cancel its bookkeeping now."""
        self.close()
        turn = self.turn
        if turn is not None and not turn.ended:
            dispatch.cancel_owners(turn.cancel())
