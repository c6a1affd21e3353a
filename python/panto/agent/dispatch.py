"""Tool dispatch: running the groups of a ``ToolRound``.

- Sync driver (``start``): one daemon thread per group; a cancel reaches a
  source through ``ToolSource.cancel()``.
- Async driver (``arun_group``): each group is a task on the driver's event
  loop; the calls go through ``ToolSource.ainvoke_batch`` with one
  ``CancelToken`` per call (a turn's cancel or a group's deadline cancels
  exactly its calls).  Blocking work -- native tools, the tool hooks -- runs
  on the bounded tool pool (``TurnContext.tool_pool``), never a thread of
  its own; Lua and MCP calls need no thread at all.

With hooks, each group first runs ``before_tool_call`` for its calls
(blocked calls are not run; rewritten inputs are what the tool receives),
then the tools, then ``after_tool_call`` on every result.  Calls answered at
once (unknown tool, arguments that are not a JSON object) and calls that
time out or are cancelled skip the hooks.  A failing tool becomes an
``is_error`` result, never a crashed turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import ToolError
from ..providers.transport import logger
from ..tools import CancelToken, Tool, ToolCall, ToolOutput, ToolSource, run_in_pool

if TYPE_CHECKING:
    from collections.abc import Sequence
    from concurrent.futures import Executor

    from .hooks import HookChain
    from .turn import ToolGroup, ToolRound

__all__ = ["ainvoke", "arun_group", "cancel_owners", "invoke", "start"]


def start(
    round_: ToolRound,
    hooks: HookChain | None,
    post: Callable[[tuple[int, list[ToolOutput | None]]], Any],
) -> None:
    """Start one daemon thread per group; each calls ``post((gid,
    outputs))`` when done (a ``RuntimeError`` from ``post`` -- the turn and
    its event loop are gone -- is ignored)."""
    hooks = hooks if hooks else None
    for gid, g in enumerate(round_.groups):
        t = threading.Thread(
            target=_run_group,
            args=(round_, gid, g, hooks, post),
            name=f"panto-tool-{gid}",
            daemon=True,
        )
        t.start()


def _run_group(
    round_: ToolRound,
    gid: int,
    g: ToolGroup,
    hooks: HookChain | None,
    post: Callable[[tuple[int, list[ToolOutput | None]]], Any],
) -> None:
    calls = [ToolCall(c.id, c.name, c.input) for c in (round_.calls[i] for i in g.indices)]
    outs: list[ToolOutput | None] = [None] * len(calls)
    if hooks is not None:
        for k, call in enumerate(calls):
            calls[k], outs[k] = hooks.before_tool_call(call)
        if g.done:
            return  # timed out or cancelled while the hooks ran
    run = [k for k, o in enumerate(outs) if o is None]
    if run:
        for k, o in zip(run, invoke(g.owner, [calls[k] for k in run])):
            outs[k] = o
    if hooks is not None and not g.done:
        for k, call in enumerate(calls):
            outs[k] = hooks.after_tool_call(call, outs[k])  # type: ignore[arg-type]
    try:
        post((gid, outs))
    except RuntimeError:
        pass  # abandoned: the turn (and its event loop) is gone


def invoke(owner: Tool | ToolSource, calls: list[ToolCall]) -> list[ToolOutput]:
    """Run ``calls`` on their owner; an exception becomes error results."""
    try:
        if isinstance(owner, ToolSource):
            outs = list(owner.invoke_batch(calls))
            if len(outs) != len(calls):
                raise ToolError(
                    f"tool source {owner.name!r} returned {len(outs)} results "
                    f"for {len(calls)} calls"
                )
            return [o if isinstance(o, ToolOutput) else ToolOutput(str(o)) for o in outs]
        return [ToolOutput(str(owner.invoke(calls[0].input)))]
    except BaseException as exc:  # a tool never crashes the turn
        msg = str(exc) or type(exc).__name__
        return [ToolOutput(f"{type(exc).__name__}: {msg}", True)] * len(calls)


def cancel_owners(owners: Iterable[Any]) -> None:
    """``cancel()`` every tool source among ``owners`` (native tool threads
    cannot be stopped: they are abandoned)."""
    for owner in owners:
        if isinstance(owner, ToolSource):
            try:
                owner.cancel()
            except Exception as exc:  # pragma: no cover - a broken cancel hook
                logger.warning("tool source %r: cancel() failed: %s", owner.name, exc)


# -- the async driver ---------------------------------------------------------------


async def arun_group(
    round_: ToolRound,
    g: ToolGroup,
    hooks: HookChain | None,
    tokens: Sequence[CancelToken],
    executor: Executor | None,
) -> list[ToolOutput | None]:
    """Run one group on the running loop; ``tokens`` has one token per call
    of the round (``round_.calls``).  The hooks run on a thread of
    ``executor`` (they block: Lua handlers, the permission prompt)."""
    calls = [ToolCall(c.id, c.name, c.input) for c in (round_.calls[i] for i in g.indices)]
    mine = [tokens[i] for i in g.indices]
    outs: list[ToolOutput | None] = [None] * len(calls)
    hooks = hooks if hooks else None
    if hooks is not None:
        decided = await run_in_pool(executor, _before_all, hooks, calls)
        calls = [c for c, _ in decided]
        outs = [o for _, o in decided]
        if g.done:
            return outs  # timed out or cancelled while the hooks ran
    run = [k for k, o in enumerate(outs) if o is None]
    if run:
        got = await ainvoke(g.owner, [calls[k] for k in run], [mine[k] for k in run], executor)
        for k, o in zip(run, got):
            outs[k] = o
    if hooks is not None and not g.done:
        outs = await run_in_pool(executor, _after_all, hooks, calls, outs)
    return outs


def _before_all(
    hooks: HookChain, calls: list[ToolCall]
) -> list[tuple[ToolCall, ToolOutput | None]]:
    return [hooks.before_tool_call(c) for c in calls]


def _after_all(
    hooks: HookChain, calls: list[ToolCall], outs: list[ToolOutput | None]
) -> list[ToolOutput | None]:
    return [o if o is None else hooks.after_tool_call(c, o) for c, o in zip(calls, outs)]


async def ainvoke(
    owner: Tool | ToolSource,
    calls: list[ToolCall],
    tokens: list[CancelToken],
    executor: Executor | None,
) -> list[ToolOutput | None]:
    """Run ``calls`` on their owner (``ainvoke_batch``, or a native tool on a
    thread of ``executor``); an exception becomes error results, a call
    cancelled before it answered None."""
    import asyncio

    try:
        if isinstance(owner, ToolSource):
            outs = list(await owner.ainvoke_batch(calls, tokens, executor=executor))
            if len(outs) != len(calls):
                raise ToolError(
                    f"tool source {owner.name!r} returned {len(outs)} results "
                    f"for {len(calls)} calls"
                )
            return [
                o if o is None or isinstance(o, ToolOutput) else ToolOutput(str(o)) for o in outs
            ]
        return [await _native(owner, calls[0], tokens[0], executor)]
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # a tool never crashes the turn
        msg = str(exc) or type(exc).__name__
        return [ToolOutput(f"{type(exc).__name__}: {msg}", True)] * len(calls)


async def _native(
    tool: Tool, call: ToolCall, token: CancelToken, executor: Executor | None
) -> ToolOutput | None:
    """A native tool on a pool thread; its token ends the wait (the thread
    cannot be stopped: it finishes in the background)."""
    import asyncio

    work = asyncio.ensure_future(run_in_pool(executor, tool.invoke, call.input))
    cancelled = asyncio.ensure_future(token.wait())
    try:
        await asyncio.wait({work, cancelled}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        cancelled.cancel()
    if work.done():
        return ToolOutput(str(work.result()))
    work.add_done_callback(_retrieve)
    return None


def _retrieve(fut: Any) -> None:
    if not fut.cancelled():
        fut.exception()  # an abandoned call's error is not "never retrieved"
