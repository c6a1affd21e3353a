"""What the async turn driver (``stream_async.py``) does its own way: it
waits on the event loop, runs blocking work (the store, hooks) in a worker
thread and tool rounds as tasks (see ``Base``), so the loop is never
blocked.  Its sync twin is ``io_sync.py``; the driver body that uses them
is written once."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from ..start_gate import admit as admit_request
from ..tools import CancelToken, ToolOutput, run_in_pool
from . import dispatch
from .driver import TIMED_OUT, CancelFlag, Driver

if TYPE_CHECKING:
    from ..events import Event
    from .turn import ToolGroup, ToolRound, Turn, TurnContext

__all__ = ["Base", "Inbox", "admit_request", "run_blocking", "step_guard", "wait_cancelled"]

T = TypeVar("T")


_pool: Any = None
_pool_lock = threading.Lock()


def _workers() -> Any:
    """The worker threads of ``run_blocking`` (the store, hooks; apart from
    the tools' pool, so that busy tools do not hold up a turn's writes): as
    many as asyncio's default executor has, min(32, CPUs + 4), made on
    first use."""
    global _pool
    if _pool is None:
        with _pool_lock:
            if _pool is None:
                import os
                from concurrent.futures import ThreadPoolExecutor

                n = min(32, (os.cpu_count() or 1) + 4)
                _pool = ThreadPoolExecutor(n, thread_name_prefix="panto-blocking")
    return _pool


async def run_blocking(fn: Callable[..., T], *args: Any) -> T:
    """``fn(*args)`` in a worker thread, in a copy of the caller's context
    (``tools.run_in_pool``: one loop callback a hop, where
    ``asyncio.to_thread`` takes three).  If the wait is cancelled before
    ``fn`` starts, it never runs; once started, the thread finishes it."""
    return await run_in_pool(_workers(), fn, *args)


async def wait_cancelled(cancel: CancelFlag, seconds: float) -> bool:
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
    """The async stream's own public methods, beside ``aclose()``, and how
    it runs a tool round: each group a task on the loop
    (``dispatch.arun_group``), its calls through
    ``ToolSource.ainvoke_batch`` with a cancel token each, blocking tool work
    on the bounded tool pool (``TurnContext.tool_pool``) -- no thread per
    group.  A cancel or a deadline cancels exactly the calls concerned
    (never a source's ``cancel()``: a source shared by sessions would stop
    the others' calls too)."""

    #: the cancel tokens of the tool round running, one per call
    _tokens: list[CancelToken] = []  # noqa: RUF012 - replaced, never mutated

    def _start_tools(self, r: ToolRound, ctx: TurnContext, inbox: Inbox) -> None:
        import asyncio

        tokens = self._tokens = [CancelToken() for _ in r.calls]
        if self._cancel.is_set():
            self._cancel_tools([])
        for gid, g in enumerate(r.groups):
            if not g.done:
                task = asyncio.ensure_future(
                    _run_group(inbox, r, gid, g, ctx.hooks, tokens, ctx.tool_pool)
                )
                # the loop keeps only weak references to tasks: a group that
                # timed out finishes in the background and must not vanish
                _groups.add(task)
                task.add_done_callback(_groups.discard)

    def _expire(self, turn: Turn) -> list[Event]:
        """Time out the groups past their deadline; their results.  Their
        calls' tokens are cancelled ("timed out"), no other call's."""
        r = turn.tools
        running = [g for g in r.groups if not g.done] if r is not None else []
        out, _ = turn.expire(time.monotonic())
        for g in running:
            if g.done:
                for i in g.indices:
                    self._tokens[i].cancel("timed out")
        return out

    def _cancel_tools(self, owners: list[Any]) -> None:
        for token in self._tokens:  # (thread-safe; a finished call's is a no-op)
            token.cancel()

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
            self._cancel_tools(turn.cancel())


_groups: set[Any] = set()


async def _run_group(
    inbox: Inbox,
    r: ToolRound,
    gid: int,
    g: ToolGroup,
    hooks: Any,
    tokens: list[CancelToken],
    pool: Any,
) -> None:
    """One tool group as a task; its outputs go to the driver's inbox."""
    try:
        outs = await dispatch.arun_group(r, g, hooks, tokens, pool)
    except Exception as exc:  # pragma: no cover - arun_group answers errors as results
        outs = [ToolOutput(f"{type(exc).__name__}: {exc}", True)] * len(g.indices)
    inbox.post((gid, outs))
