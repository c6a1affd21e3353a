"""The agent's hook chain: every hooks object added with ``Agent.add_hooks``,
called in registration order.  The types (``AgentHooks``,
``ToolCallDecision``, ``HOOK_EVENTS``) live in ``panto.hooks`` so the Lua
runtime implements them without importing the agent."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..hooks import HOOK_EVENTS, AgentHooks, ToolCallDecision, set_current_permission
from ..logs import get_logger
from ..tools import ToolCall, ToolOutput

if TYPE_CHECKING:
    from ..providers.base import PreparedRequest

__all__ = ["HOOK_EVENTS", "AgentHooks", "HookChain", "ToolCallDecision"]

log = get_logger("panto.agent")


class HookChain:
    """The agent's hooks objects, called in registration order.  A failing
    hook is logged and skipped, except ``before_tool_call``, where it blocks
    the call (fail closed).

    ``gate``: the permission gate (``panto.policy.permissions.Permissions``,
    or anything with its ``check(call)`` and ``decide(call, hook)``), asked
    after the ``before_tool_call`` hooks about the call they let through."""

    __slots__ = ("gate", "items")

    def __init__(self) -> None:
        self.items: list[Any] = []
        self.gate: Any = None

    def __bool__(self) -> bool:
        return bool(self.items) or self.gate is not None

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

    def wants(self, event: str) -> bool:
        """Whether any hooks object handles ``event`` (one with a ``wants``
        method is asked: the Lua hooks answer for their handlers)."""
        for h in self.items:
            if getattr(h, event, None) is None:
                continue
            w = getattr(h, "wants", None)
            if w is None or w(event):
                return True
        return False

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
        """The call to run and, when a hook or the permission gate blocked
        it, the result to report instead.  Later hooks see earlier rewrites;
        the first block wins; the gate decides on the rewritten call, with
        the hooks' ``permission`` words (the strictest wins)."""
        gate = self.gate
        if gate is None:
            return self._hooks_before(call)[:2]
        try:
            set_current_permission(gate.check(call).to_dict() if self.items else None)
            call, out, said = self._hooks_before(call)
        finally:
            set_current_permission(None)
        if out is not None:
            return call, out
        try:
            return call, gate.decide(call, said)
        except Exception as exc:  # fail closed
            log.warning("permission check failed: %s: %s", type(exc).__name__, exc)
            reason = f"permission check failed: {type(exc).__name__}: {exc}"
            return call, ToolCallDecision(call, True, reason).output()

    def _hooks_before(
        self, call: ToolCall
    ) -> tuple[ToolCall, ToolOutput | None, ToolCallDecision | None]:
        said: ToolCallDecision | None = None  # the strictest permission word of a hook
        rank = {"allow": 1, "ask": 2, "deny": 3}
        for h, fn in self._each("before_tool_call"):
            try:
                d = fn(call)
            except Exception as exc:
                self._failed("before_tool_call", h, exc)
                reason = f"before_tool_call hook failed: {type(exc).__name__}: {exc}"
                return call, ToolCallDecision(call, True, reason).output(), None
            if d is None:
                continue
            if getattr(d, "blocked", False):
                return call, d.output(), None
            word = getattr(d, "permission", None)
            if word in rank and (said is None or rank[word] > rank[said.permission or ""]):
                said = d
            new = getattr(d, "call", call)
            if new is not call:
                if not isinstance(new.input, dict):
                    reason = "before_tool_call hook rewrote the input to a non-object"
                    return call, ToolCallDecision(call, True, reason).output(), None
                # the id and name are the model's; only the input may change
                call = ToolCall(call.id, call.name, new.input)
        return call, None, said

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

    def before_request(self, req: PreparedRequest, info: Mapping[str, Any]) -> PreparedRequest:
        """The request to send after every ``before_request`` hook saw it.
        Hooks never see a secret: each is a placeholder in what they get,
        put back in what they return.  A failing hook is logged and skipped."""
        hs = [(h, fn) for h, fn in self._each("before_request") if _wants(h, "before_request")]
        if not hs:
            return req
        from ..providers.base import PreparedRequest

        marks = {s: f"[panto-redacted-secret-{i}]" for i, s in enumerate(req.secrets, 1) if s}

        def hide(text: str) -> str:
            for secret, mark in marks.items():
                text = text.replace(secret, mark)
            return text

        def show(text: str) -> str:
            for secret, mark in marks.items():
                text = text.replace(mark, secret)
            return text

        body_text = hide(req.body.decode("utf-8", "surrogateescape"))
        original = json.loads(body_text)
        body: Any = original
        headers = {k: hide(v) for k, v in req.headers.items()}
        for h, fn in hs:
            view = {**info, "url": hide(req.url), "headers": dict(headers), "body": body}
            try:
                res = fn(view)
            except Exception as exc:
                self._failed("before_request", h, exc)
                continue
            if not isinstance(res, Mapping):
                continue
            if isinstance(res.get("headers"), Mapping):
                headers = {str(k): str(v) for k, v in res["headers"].items()}
            if isinstance(res.get("body"), dict):
                body = res["body"]
        new_headers = {k: show(v) for k, v in headers.items()}
        if body == original:
            raw = req.body  # byte-stable for the prompt cache
        else:
            raw = show(json.dumps(body, ensure_ascii=False, separators=(",", ":"))).encode()
        if new_headers == req.headers and raw is req.body:
            return req
        return PreparedRequest(req.url, new_headers, raw, req.secrets)

    def after_response(self, info: Mapping[str, Any]) -> None:
        for h, fn in self._each("after_response"):
            if not _wants(h, "after_response"):
                continue
            try:
                fn(dict(info))
            except Exception as exc:
                self._failed("after_response", h, exc)


def _wants(h: Any, event: str) -> bool:
    w = getattr(h, "wants", None)
    return w is None or bool(w(event))
