"""Hook points of the agent loop: the event names, the base class for hook
objects and the one decision type a ``before_tool_call`` hook returns.

This module sits in the model layer (it imports only ``tools``) so that both
the agent, which calls hooks, and the Lua runtime, which implements them,
can use the same types without importing each other.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any

from .tools import ToolCall, ToolOutput

__all__ = ["HOOK_EVENTS", "AgentHooks", "ToolCallDecision", "current_permission"]

#: The hook events, in the order a session meets them.
HOOK_EVENTS = (
    "session_start",
    "user_message",
    "before_tool_call",
    "after_tool_call",
    "turn_end",
    "before_compact",
    "before_request",
    "after_response",
)


class ToolCallDecision:
    """What a ``before_tool_call`` hook decided: run ``call`` (its input
    possibly rewritten), or block it with ``reason`` (the model then gets
    ``output()``, an ``is_error`` result, and the tool never runs).

    ``permission`` adds the hook's word to the permission check
    (``panto.policy.permissions``): ``"ask"`` makes panto ask the user
    (denied where nobody can answer), ``"deny"`` blocks, ``"allow"`` skips
    the prompt the mode would show -- never a deny rule."""

    __slots__ = ("blocked", "call", "permission", "reason")

    def __init__(
        self,
        call: ToolCall,
        blocked: bool = False,
        reason: str = "",
        permission: str | None = None,
    ) -> None:
        self.call = call
        self.blocked = blocked
        self.reason = reason
        self.permission = permission

    def output(self) -> ToolOutput:
        return ToolOutput(f"tool call blocked: {self.reason or 'blocked by a hook'}", True)

    def __repr__(self) -> str:
        state = f"blocked {self.reason!r}" if self.blocked else "run"
        return f"<ToolCallDecision {self.call.name} {state}>"


_current = threading.local()


def current_permission() -> dict[str, Any] | None:
    """Inside a ``before_tool_call`` hook: what the permission rules and
    mode say about the call being decided (``{"decision": "allow" | "ask" |
    "deny", "rule": ..., "origin": ..., "reason": ...}``), or None when the
    agent has no permission gate."""
    return getattr(_current, "permission", None)


def set_current_permission(value: dict[str, Any] | None) -> None:
    """Set by the agent's hook chain around the ``before_tool_call`` hooks
    (one value per dispatch thread)."""
    _current.permission = value


class AgentHooks:
    """Base class for agent hooks: every method is a no-op.  Subclass it and
    override what you need, then ``agent.add_hooks(obj)``.  Any object with
    some of these methods works too (missing ones are skipped).

    Methods are called from the agent's threads: ``user_message`` and
    ``session_start`` from the caller of ``submit_user_message`` /
    ``start_session``; ``before_tool_call`` / ``after_tool_call`` from the
    tool dispatch threads (one per native tool call, one per tool source and
    round), so they must be thread-safe; ``turn_end`` from the thread
    iterating the stream (a worker thread for ``run_async``).

    An exception in a hook is logged and ignored -- except in
    ``before_tool_call``, where it blocks the call (fail closed).
    """

    def session_start(self, info: Mapping[str, Any]) -> None:
        """Once per session: ``{session_id, cwd, model, resumed}``."""

    def user_message(self, text: str) -> str:
        """Before a user prompt enters the conversation; return the text to
        submit (possibly rewritten)."""
        return text

    def before_tool_call(self, call: ToolCall) -> ToolCallDecision:
        """Before every dispatched tool call (native tools and sources alike).
        Return ``ToolCallDecision(call)`` to run it (with a rewritten input:
        ``ToolCallDecision(ToolCall(call.id, call.name, new_input))``) or
        ``ToolCallDecision(call, blocked=True, reason=...)``; ``None`` means
        "run it unchanged"."""
        return ToolCallDecision(call)

    def after_tool_call(self, call: ToolCall, output: ToolOutput) -> ToolOutput:
        """After a call produced its result (blocked calls too); return the
        result the model should see."""
        return output

    def turn_end(self, info: Mapping[str, Any]) -> None:
        """Once per turn, after its final ``MessageComplete``, or when it
        fails or is cancelled: ``{stop_reason, usage, cancelled, error,
        rounds}``."""

    def before_compact(self, info: Mapping[str, Any]) -> str | None:
        """Before compaction: ``{prompt, extra, messages}``; may return the
        compaction prompt to use (``None`` keeps ``info["prompt"]``)."""
        return None

    def before_request(self, request: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Before each provider request (retries included): ``{provider,
        model, wire, url, headers, body}`` (``body`` the decoded JSON; API
        keys and secret header values replaced by placeholders, put back
        after).  Return the request with ``headers``/``body`` rewritten (the
        URL stays), or None to send it unchanged."""
        return None

    def after_response(self, info: Mapping[str, Any]) -> None:
        """After each provider response ended: ``{provider, model, wire,
        usage, stop_reason, error, status}`` (``error`` None on success)."""
