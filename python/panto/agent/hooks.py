"""The agent's hook chain: every hooks object added with ``Agent.add_hooks``,
called in registration order.  The types (``AgentHooks``,
``ToolCallDecision``, ``HOOK_EVENTS``) live in ``panto.hooks`` so the Lua
runtime implements them without importing the agent."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..hooks import HOOK_EVENTS, AgentHooks, ToolCallDecision
from ..logs import get_logger
from ..tools import ToolCall, ToolOutput

__all__ = ["HOOK_EVENTS", "AgentHooks", "HookChain", "ToolCallDecision"]

log = get_logger("panto.agent")


class HookChain:
    """The agent's hooks objects, called in registration order.  A failing
    hook is logged and skipped, except ``before_tool_call``, where it blocks
    the call (fail closed)."""

    __slots__ = ("items",)

    def __init__(self) -> None:
        self.items: list[Any] = []

    def __bool__(self) -> bool:
        return bool(self.items)

    def add(self, hooks: Any) -> None:
        if hooks not in self.items:
            self.items.append(hooks)

    def remove(self, hooks: Any) -> None:
        if hooks in self.items:
            self.items.remove(hooks)

    def _each(self, event: str) -> Iterable[tuple[Any, Any]]:
        for h in list(self.items):
            fn = getattr(h, event, None)
            if fn is not None:
                yield h, fn

    @staticmethod
    def _failed(event: str, h: Any, exc: BaseException) -> None:
        log.warning(
            "%s hook of %s failed: %s: %s", event, type(h).__name__, type(exc).__name__, exc
        )

    def session_start(self, info: Mapping[str, Any]) -> None:
        for h, fn in self._each("session_start"):
            try:
                fn(dict(info))
            except Exception as exc:
                self._failed("session_start", h, exc)

    def user_message(self, text: str) -> str:
        for h, fn in self._each("user_message"):
            try:
                res = fn(text)
            except Exception as exc:
                self._failed("user_message", h, exc)
                continue
            if isinstance(res, str):
                text = res
        return text

    def before_tool_call(self, call: ToolCall) -> tuple[ToolCall, ToolOutput | None]:
        """The call to run and, when a hook blocked it, the result to report
        instead.  Later hooks see earlier rewrites; the first block wins."""
        for h, fn in self._each("before_tool_call"):
            try:
                d = fn(call)
            except Exception as exc:
                self._failed("before_tool_call", h, exc)
                reason = f"before_tool_call hook failed: {type(exc).__name__}: {exc}"
                return call, ToolCallDecision(call, True, reason).output()
            if d is None:
                continue
            if getattr(d, "blocked", False):
                return call, d.output()
            new = getattr(d, "call", call)
            if new is not call:
                if not isinstance(new.input, dict):
                    reason = "before_tool_call hook rewrote the input to a non-object"
                    return call, ToolCallDecision(call, True, reason).output()
                # the id and name are the model's; only the input may change
                call = ToolCall(call.id, call.name, new.input)
        return call, None

    def after_tool_call(self, call: ToolCall, output: ToolOutput) -> ToolOutput:
        for h, fn in self._each("after_tool_call"):
            try:
                res = fn(call, output)
            except Exception as exc:
                self._failed("after_tool_call", h, exc)
                continue
            if isinstance(res, ToolOutput):
                output = res
            elif isinstance(res, str):  # new text; the images stay
                output = ToolOutput(res, output.is_error, output.images)
        return output

    def turn_end(self, info: Mapping[str, Any]) -> None:
        for h, fn in self._each("turn_end"):
            try:
                fn(dict(info))
            except Exception as exc:
                self._failed("turn_end", h, exc)

    def before_compact(self, info: Mapping[str, Any]) -> str | None:
        prompt: str | None = None
        for h, fn in self._each("before_compact"):
            payload = dict(info)
            if prompt is not None:
                payload["prompt"] = prompt
            try:
                res = fn(payload)
            except Exception as exc:
                self._failed("before_compact", h, exc)
                continue
            if isinstance(res, str):
                prompt = res
        return prompt
