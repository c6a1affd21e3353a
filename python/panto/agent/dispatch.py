"""Tool dispatch: one daemon thread per group of a ``ToolRound``.

With hooks, each group's thread first runs ``before_tool_call`` for its
calls (blocked calls are not run; rewritten inputs are what the tool
receives), then the tools, then ``after_tool_call`` on every result.  Calls
answered at once (unknown tool, arguments that are not a JSON object) and
calls that time out or are cancelled skip the hooks.  A failing tool becomes
an ``is_error`` result, never a crashed turn.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import ToolError
from ..providers.transport import logger
from ..tools import Tool, ToolCall, ToolOutput, ToolSource

if TYPE_CHECKING:
    from .hooks import HookChain
    from .turn import ToolGroup, ToolRound

__all__ = ["cancel_owners", "invoke", "start"]


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
