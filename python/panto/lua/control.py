"""Interrupting Lua code that never yields.

The runtime is cooperative: a coroutine runs until it yields.  Lua code that
never yields (a busy loop at load time, in ``activate``, a hook or a tool
handler) would hold the runtime's thread forever, and neither asyncio's
timeouts nor task cancellation could fire.  So every coroutine panto drives
runs under a Lua count hook (``debug.sethook`` with an instruction count,
set by the prelude) that asks :meth:`Control.check` of the work being driven
whether it must stop: cancelled (``cancel()``, from any thread), or past its
deadline.  When it must, the hook raises a Lua error that ``pcall`` cannot
swallow (the prelude's ``pcall``/``xpcall``/``coroutine.resume`` re-raise
it), the coroutine unwinds and the driver reports :class:`LuaInterrupted`.

Controls nest: a tool call's control (its timeout) is a child of its batch's
(cancel), which may be a child of a blocking ``LuaRuntime.run`` call's
(Ctrl-C in the waiting thread).  A cancelled or expired ancestor stops the
children.  Code running in C (one long ``string.find``, a blocking C module
call) cannot be interrupted until it returns to Lua.
"""

from __future__ import annotations

import asyncio
import contextvars
import time
from typing import Any

from ..errors import ExtensionError

__all__ = [
    "HOOK_COUNT",
    "Control",
    "LuaInterrupted",
    "LuaScriptError",
    "call_tasks",
    "current_control",
    "current_entry",
    "evaluating",
    "reset_control",
    "set_control",
]

#: Lua instructions between two checks (~0.1-1 ms of Lua).
HOOK_COUNT = 10000


class LuaScriptError(ExtensionError):
    """Lua code failed; ``str()`` is the message plus a Lua traceback."""


class LuaInterrupted(ExtensionError):
    """Lua code was stopped by its timeout or a cancel (``str()`` says which
    code, and why)."""

    def __init__(self, message: str, *, timed_out: bool = False) -> None:
        super().__init__(message)
        self.timed_out = timed_out


class Control:
    """The cancel flag and deadline of one piece of Lua work.  ``cancel`` is
    thread-safe (a plain attribute store); ``check`` is called by the count
    hook on the Lua thread."""

    __slots__ = ("parent", "what", "deadline", "timeout", "reason")

    def __init__(
        self,
        what: str,
        *,
        timeout: float | None = None,
        parent: Control | None = None,
    ) -> None:
        self.parent = parent
        self.what = what
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout if timeout is not None else None
        self.reason: str | None = None

    def cancel(self, reason: str = "cancelled") -> None:
        if self.reason is None:
            self.reason = reason

    def check(self) -> LuaInterrupted | None:
        """Why this work must stop now (None: it may go on)."""
        c: Control | None = self
        now: float | None = None
        while c is not None:
            if c.reason is not None:
                return LuaInterrupted(f"{c.what}: {c.reason}")
            if c.deadline is not None:
                if now is None:
                    now = time.monotonic()
                if now >= c.deadline:
                    return LuaInterrupted(
                        f"{c.what}: timed out after {c.timeout:g} s", timed_out=True
                    )
            c = c.parent
        return None


_control: contextvars.ContextVar[Control | None] = contextvars.ContextVar(
    "panto_lua_control", default=None
)


def current_control() -> Control | None:
    return _control.get()


def set_control(c: Control | None) -> contextvars.Token[Control | None]:
    return _control.set(c)


def reset_control(token: contextvars.Token[Control | None]) -> None:
    _control.reset(token)


# per-task context besides the control: which entry is running (activating,
# or whose tool, hook or command this is), which source is being evaluated
# (registering is then an error), and the tasks a tool call spawned (they
# are cancelled when it ends)
current_entry: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "panto_lua_entry", default=None
)
evaluating: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "panto_lua_evaluating", default=None
)
call_tasks: contextvars.ContextVar[set[asyncio.Task[Any]] | None] = contextvars.ContextVar(
    "panto_lua_call_tasks", default=None
)
#: the sandbox of the tool call running: processes it spawns run in it (None:
#: unconfined, as outside tool calls: activation, commands, hooks)
call_sandbox: contextvars.ContextVar[Any] = contextvars.ContextVar(
    "panto_lua_call_sandbox", default=None
)
