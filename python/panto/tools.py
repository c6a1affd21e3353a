"""Tools: what the agent can call.

Two shapes, both dispatched by the agent loop once per turn:

- ``Tool``: one native tool.  ``invoke`` runs in a worker thread and must be
  thread-safe (several calls of one tool may run at once).
- ``ToolSource``: a provider of many tools (the Lua runtime is one, named
  ``panto-lua``; the MCP servers another, ``mcp``).  All calls of one turn
  that belong to a source arrive in ONE batch; the source returns one
  ``ToolOutput`` per call, in the same order.  Two ways in:

  - ``invoke_batch(calls)``, blocking, on a thread of its own (the sync
    driver).  ``cancel`` is called from another thread when the turn is
    cancelled and must make it return promptly.
  - ``await ainvoke_batch(calls, tokens)`` (the async driver), with one
    :class:`CancelToken` per call: a turn's cancel or a call's deadline
    cancels exactly that call (``std.bash`` kills that call's process group;
    the other calls of the batch go on).  The default runs ``invoke_batch``
    in a bounded thread pool (:func:`default_tool_pool`, or the ``Host``'s)
    and falls back to ``cancel()`` once every call of the batch is
    cancelled; the Lua and MCP sources implement it natively (no pool
    thread: the calls are tasks on their own event loops).

A tool that raises becomes an ``is_error`` result; it never crashes a turn.
"""

from __future__ import annotations

import re
import threading
from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .conversation import Image
from .errors import ToolError

if TYPE_CHECKING:
    from concurrent.futures import Executor, ThreadPoolExecutor

T = TypeVar("T")

__all__ = [
    "DEFAULT_TOOL_THREADS",
    "TOOL_NAME_RE",
    "CancelToken",
    "FunctionTool",
    "Tool",
    "ToolCall",
    "ToolDecl",
    "ToolOutput",
    "ToolSource",
    "default_tool_pool",
    "new_tool_pool",
    "run_in_pool",
]

#: What providers accept as a tool name.
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True)
class ToolDecl:
    """A tool as the model sees it."""

    name: str
    description: str
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    timeout: float | None = None  # seconds; None = the configured default

    def __post_init__(self) -> None:
        if not TOOL_NAME_RE.match(self.name):
            raise ToolError(f"invalid tool name {self.name!r}: must match {TOOL_NAME_RE.pattern}")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call to run: the model's call id, the tool name and its input."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool returns: its text, whether it failed, and images (the
    ``read`` tool returns one for an image file).  The turn puts all three
    in the conversation's ``ToolResultBlock``; each wire sends the images
    with the result (docs/agent.md, "Images in tool results")."""

    content: str
    is_error: bool = False
    images: tuple[Image, ...] = ()


class CancelToken:
    """One tool call's cancel signal.  ``cancel()`` is thread-safe and runs
    the callbacks registered with ``on_cancel`` (in the cancelling thread;
    they must be quick and must not block); ``await wait()`` returns once
    cancelled.  ``reason`` says why (``"cancelled"``, ``"timed out"``)."""

    __slots__ = ("_callbacks", "_lock", "reason")

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._callbacks: list[Callable[[], Any]] = []
        self.reason: str | None = None

    @property
    def cancelled(self) -> bool:
        return self.reason is not None

    def cancel(self, reason: str = "cancelled") -> None:
        """Cancel the call (a no-op once cancelled)."""
        with self._lock:
            if self.reason is not None:
                return
            self.reason = reason
            callbacks, self._callbacks = self._callbacks, []
        for fn in callbacks:
            try:
                fn()
            except Exception:  # noqa: BLE001 - one broken callback must not stop the others
                from .logs import get_logger

                get_logger("panto.tools").warning("a cancel callback failed", exc_info=True)

    def on_cancel(self, fn: Callable[[], Any]) -> Callable[[], None]:
        """Call ``fn()`` when cancelled (at once when it already is).
        Returns a function that unregisters it."""
        with self._lock:
            if self.reason is None:
                self._callbacks.append(fn)

                def remove() -> None:
                    with self._lock:
                        if fn in self._callbacks:
                            self._callbacks.remove(fn)

                return remove
        fn()
        return _nothing

    async def wait(self) -> None:
        """Return once cancelled (on the running event loop)."""
        import asyncio

        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            try:
                loop.call_soon_threadsafe(_resolve, fut)
            except RuntimeError:  # the loop is closed: nobody waits any more
                pass

        remove = self.on_cancel(wake)
        try:
            await fut
        finally:
            remove()


def _nothing() -> None:
    pass


def _resolve(fut: Any) -> None:
    if not fut.done():
        fut.set_result(None)


#: Threads of the default tool pool (native tools, tool hooks, sources with
#: only the sync API); ``panto.app.Host(tool_threads=...)`` sets its own.
DEFAULT_TOOL_THREADS = 32

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def new_tool_pool(threads: int = DEFAULT_TOOL_THREADS) -> ThreadPoolExecutor:
    """A bounded pool for blocking tool work: at most ``threads`` threads,
    started as needed (named ``panto-tool_N``)."""
    from concurrent.futures import ThreadPoolExecutor

    if threads < 1:
        raise ValueError(f"tool_threads must be at least 1, not {threads}")
    return ThreadPoolExecutor(max_workers=threads, thread_name_prefix="panto-tool")


def default_tool_pool() -> ThreadPoolExecutor:
    """The process's tool pool, for agents made outside a ``Host``."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = new_tool_pool()
        return _pool


def _settle(fut: Any, ok: bool, value: Any) -> None:
    if not fut.done():  # (cancelled: the waiter went away, the work finished)
        if ok:
            fut.set_result(value)
        else:
            fut.set_exception(value)


async def run_in_pool(executor: Executor | None, fn: Callable[..., T], *args: Any) -> T:
    """``await fn(*args)`` on a thread of ``executor`` (None: the default
    tool pool), with the caller's context variables (as
    ``asyncio.to_thread``).  If the wait is cancelled before ``fn`` starts,
    it never runs; once started, the thread still finishes it.

    Not ``loop.run_in_executor``: its result crosses two futures chained by
    callbacks (three loop callbacks a call); here the worker settles the
    awaited future with one -- about a third less of the loop's CPU a call
    (2,000 concurrent calls: 44-66 -> 27-48 us on 3.10 and 3.11), paid by
    every tool call, store write, hook and turn opening of hundreds of
    sessions."""
    import asyncio
    import contextvars

    loop = asyncio.get_running_loop()
    fut = loop.create_future()
    ctx = contextvars.copy_context()

    def work() -> None:
        try:
            value: Any = ctx.run(fn, *args)
            ok = True
        except BaseException as e:  # noqa: BLE001 -- handed to the waiter
            value, ok = e, False
        try:
            loop.call_soon_threadsafe(_settle, fut, ok, value)
        except RuntimeError:  # the loop closed: nobody waits any more
            pass

    started = (executor or default_tool_pool()).submit(work)
    try:
        return await fut  # type: ignore[no-any-return]
    except asyncio.CancelledError:
        started.cancel()  # (still queued: it never runs)
        raise


class Tool(ABC):
    """A native tool.  Subclass it, or wrap a function with ``FunctionTool``."""

    decl: ToolDecl

    @abstractmethod
    def invoke(self, input: dict[str, Any]) -> str:
        """Run the tool; return its result text, or raise to report an error."""


class ToolSource(ABC):
    """A named provider of several tools, invoked one batch per turn."""

    name: str

    @abstractmethod
    def decls(self) -> Sequence[ToolDecl]:
        """The tools this source offers right now."""

    @abstractmethod
    def invoke_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput]:
        """Run the calls (concurrently if the source can); one output per
        call, in order."""

    def cancel(self) -> None:  # noqa: B027 - optional hook
        """Cancel a running ``invoke_batch`` (called from another thread)."""

    async def ainvoke_batch(
        self,
        calls: Sequence[ToolCall],
        tokens: Sequence[CancelToken],
        *,
        executor: Executor | None = None,
    ) -> list[ToolOutput | None]:
        """Run the calls on the running event loop; one output per call, in
        order (None: the call was cancelled before it gave one).
        ``tokens[i]`` cancels ``calls[i]`` alone.

        The default runs ``invoke_batch`` on a thread of ``executor`` (None:
        :func:`default_tool_pool`).  A sync batch cannot drop one call:
        once every token is cancelled it calls ``cancel()`` and returns
        without waiting for the thread (all None)."""
        import asyncio

        if not calls:
            return []
        work = asyncio.ensure_future(run_in_pool(executor, self.invoke_batch, list(calls)))
        all_cancelled = asyncio.ensure_future(asyncio.gather(*(t.wait() for t in tokens)))
        try:
            await asyncio.wait({work, all_cancelled}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            all_cancelled.cancel()
        if work.done():
            return list(work.result())
        work.add_done_callback(_ignore_result)
        self.cancel()
        return [None] * len(calls)


def _ignore_result(fut: Any) -> None:
    if not fut.cancelled():
        fut.exception()  # retrieved: an abandoned batch's error is not "never retrieved"


class FunctionTool(Tool):
    """A ``Tool`` from a plain function ``fn(input) -> str``."""

    def __init__(
        self,
        name: str,
        description: str,
        fn: Any,
        schema: dict[str, Any] | None = None,
    ) -> None:
        self.decl = ToolDecl(name, description, schema or {"type": "object", "properties": {}})
        self._fn = fn

    def invoke(self, input: dict[str, Any]) -> str:
        return str(self._fn(input))
