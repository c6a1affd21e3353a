"""``panto-lua``: the Lua runtime as one ``ToolSource``, plus the extension
event hooks the agent calls (``LuaToolSource.hooks``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from ..hooks import ToolCallDecision, current_permission
from ..logs import get_logger
from ..tools import CancelToken, ToolCall, ToolDecl, ToolOutput, ToolSource, run_in_pool
from .runtime import LuaRuntime, get_runtime

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["LuaToolSource", "LuaHooks", "HookDecision"]

log = get_logger("panto.lua")


#: The first line of a result run again outside the sandbox.
_RERUN_NOTE = "[rerun outside the sandbox, approved by the user]\n"

#: Lua hooks return the agent's own decision type (one type, one meaning).
HookDecision = ToolCallDecision


class LuaHooks:
    """Extension events, for the agent to call at the matching moments.

    All methods are blocking, thread-safe, cheap when no handler is
    registered (no hop to the Lua thread), and never raise for a handler's
    error (logged; except ``before_tool_call``, which fails closed: a handler
    error blocks the call with the error as the reason).
    """

    def __init__(self, runtime: LuaRuntime) -> None:
        self.runtime = runtime

    def _emit(self, event: str, payload: Mapping[str, Any]) -> list[tuple[Any, Any, Any]]:
        if not self.runtime.has_handlers(event):
            return []
        return self.runtime.emit(event, payload)

    def wants(self, event: str) -> bool:
        """Whether an extension handles ``event`` (the agent skips the work
        of building a payload nobody reads)."""
        return self.runtime.has_handlers(event)

    def session_start(self, info: Mapping[str, Any] | None = None) -> None:
        """Once per session (new or resumed): ``{session_id, cwd, model, resumed}``."""
        self._emit("session_start", dict(info or {}))

    def user_message(self, text: str) -> str:
        """Before a user prompt is submitted.  A handler may return a string
        (or ``{text=...}``) to replace the prompt; returns the final text."""
        for _, res, _ in self._emit("user_message", {"text": text}):
            if isinstance(res, str):
                text = res
            elif isinstance(res, dict) and isinstance(res.get("text"), str):
                text = res["text"]
        return text

    def before_tool_call(self, call: ToolCall) -> HookDecision:
        """Before ANY tool call runs (Lua or native).  Handlers get
        ``{id, name, input, permission}`` (``permission``: what the rules
        and mode say, ``{decision, rule, origin, reason}``, or nil) and may
        return ``{block=true, reason=...}``, ``{input={...}}`` (rewritten
        input; later handlers see it) or ``{permission="ask"|"deny"|"allow",
        reason=...}`` (added to the permission check)."""
        decision = HookDecision(call)
        if not self.runtime.has_handlers("before_tool_call"):
            return decision
        permission = current_permission()
        said: str | None = None
        said_reason = ""
        rank = {"allow": 1, "ask": 2, "deny": 3}
        for h in list(self.runtime.hooks["before_tool_call"]):
            c = decision.call
            payload = {"id": c.id, "name": c.name, "input": c.input, "permission": permission}
            entry, value, err = self.runtime.run(
                self.runtime.run_hook(h, "before_tool_call", payload),
                what="before_tool_call handlers",
            )
            if err:
                return HookDecision(
                    decision.call, True, f"before_tool_call handler of {entry} failed: {err}"
                )
            if isinstance(value, dict):
                if value.get("block"):
                    return HookDecision(decision.call, True, str(value.get("reason") or ""))
                word = value.get("permission")
                if word in rank and (said is None or rank[word] > rank[said]):
                    said, said_reason = word, str(value.get("reason") or f"{entry} says {word}")
                new_input = value.get("input")
                if isinstance(new_input, dict):
                    decision = HookDecision(replace(decision.call, input=new_input))
        if said is not None:
            return HookDecision(decision.call, False, said_reason, said)
        return decision

    def after_tool_call(self, call: ToolCall, output: ToolOutput) -> ToolOutput:
        """After a tool call finished (also errors).  Handlers get
        ``{id, name, input, content, is_error, images}`` (``images``: the
        result's images as ``{media_type, data_b64}``) and may return a
        string (new content) or ``{content=..., is_error=...}``; the images
        stay with the result."""
        if not self.runtime.has_handlers("after_tool_call"):
            return output
        for h in list(self.runtime.hooks["after_tool_call"]):
            payload = {
                "id": call.id,
                "name": call.name,
                "input": call.input,
                "content": output.content,
                "is_error": output.is_error,
                "images": [
                    {"media_type": i.media_type, "data_b64": i.data_b64} for i in output.images
                ],
            }
            entry, value, err = self.runtime.run(
                self.runtime.run_hook(h, "after_tool_call", payload),
                what="after_tool_call handlers",
            )
            if err:
                log.warning("after_tool_call handler of %s failed: %s", entry, err)
            if isinstance(value, str):
                output = ToolOutput(value, output.is_error, output.images)
            elif isinstance(value, dict):
                output = ToolOutput(
                    str(value.get("content", output.content)),
                    bool(value.get("is_error", output.is_error)),
                    output.images,
                )
        return output

    def turn_end(self, info: Mapping[str, Any] | None = None) -> None:
        """After the final ``MessageComplete`` of a turn (or its error/cancel):
        ``{stop_reason, usage, cancelled, error}``."""
        self._emit("turn_end", dict(info or {}))

    def before_compact(self, info: Mapping[str, Any] | None = None) -> str | None:
        """Before compaction: ``{prompt, messages}``.  A handler may return a
        string (or ``{prompt=...}``): the compaction prompt to use.  Returns
        the last one given, or None."""
        prompt: str | None = None
        for _, res, _ in self._emit("before_compact", dict(info or {})):
            if isinstance(res, str):
                prompt = res
            elif isinstance(res, dict) and isinstance(res.get("prompt"), str):
                prompt = res["prompt"]
        return prompt

    def before_request(self, request: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """Before each provider request: handlers get ``{provider, model,
        wire, url, headers, body}`` (secrets already replaced by
        placeholders: ``HookChain.before_request``) and may return it
        rewritten (``headers``, ``body``); later handlers see the rewrite."""
        if not self.runtime.has_handlers("before_request"):
            return None
        req: dict[str, Any] = dict(request)
        for h in list(self.runtime.hooks["before_request"]):
            what = f"before_request handler of {h.entry or '?'}"
            try:
                res = self.runtime.run(
                    self.runtime.call_as(h.entry, what, self.runtime.hook_timeout, h.fn, req),
                    what="before_request handlers",
                )
            except Exception as e:  # noqa: BLE001 - logged; the request goes on
                log.warning("%s failed: %s", what, e)
                continue
            value = res[0] if res else None
            if isinstance(value, dict):
                if isinstance(value.get("headers"), dict):
                    req["headers"] = value["headers"]
                if isinstance(value.get("body"), dict):
                    req["body"] = value["body"]
        return req

    def after_response(self, info: Mapping[str, Any] | None = None) -> None:
        """After each provider response: ``{provider, model, wire, usage,
        stop_reason, error, status}``."""
        self._emit("after_response", dict(info or {}))


class LuaToolSource(ToolSource):
    """All Lua-registered tools, run as coroutines on the runtime's loop.

    ``default_timeout`` (seconds) applies to tools whose declaration has no
    ``timeout``; ``timeouts`` maps tool names to timeouts and wins over both.
    ``cwd`` is the working directory tools see (``ctx.cwd``; relative paths
    resolve against it); None: the process's at each call.  ``sandbox``
    (:class:`panto.policy.sandbox.Sandbox`) confines the processes the
    tools start; None: they run unconfined.

    ``escalate``: when set, a call whose result says the sandbox blocked
    it (:func:`panto.policy.sandbox.was_blocked`) is offered to it as
    ``escalate(call, output)``; when that returns True the call runs again
    outside the sandbox and its result (with a note saying so) replaces the
    first.  The REPL sets it in ``default`` mode to ask the user; it is
    called on the tool's dispatch thread, one call at a time.
    """

    name = "panto-lua"

    def __init__(
        self,
        runtime: LuaRuntime | None = None,
        *,
        default_timeout: float | None = None,
        timeouts: Mapping[str, float] | None = None,
        cwd: str | None = None,
        sandbox: Any = None,
    ) -> None:
        self.runtime = runtime or get_runtime()
        self.cwd = cwd
        self.sandbox = sandbox
        self.escalate: Callable[[ToolCall, ToolOutput], bool] | None = None
        #: when set and it returns a mode (``"read-only"``), the calls of a
        #: batch run in that sandbox mode instead (plan mode); it only tightens
        self.sandbox_mode: Callable[[], str | None] | None = None
        self.default_timeout = default_timeout
        self.timeouts = dict(timeouts or {})
        self.hooks = LuaHooks(self.runtime)
        self._lock = threading.Lock()
        self._running: list[Any] = []

    def decls(self) -> Sequence[ToolDecl]:
        return self.runtime.decls()

    def _timeout(self, name: str) -> float | None:
        if name in self.timeouts:
            return self.timeouts[name]
        tool = self.runtime.tools.get(name)
        if tool is not None and tool.decl.timeout is not None:
            return tool.decl.timeout
        return self.default_timeout

    def _batch_sandbox(self) -> Any:
        sandbox = self.sandbox
        mode = self.sandbox_mode() if self.sandbox_mode is not None else None
        if mode == "read-only" and sandbox is not None and sandbox.enabled:
            sandbox = sandbox.with_mode(mode)
        return sandbox

    def invoke_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput]:
        sandbox = self._batch_sandbox()
        outs = self._invoke(calls, sandbox)
        if self.escalate is not None and sandbox is not None and sandbox.enabled:
            from ..policy.sandbox import was_blocked

            for i, (c, o) in enumerate(zip(calls, outs)):
                if o.is_error and was_blocked(o.content) and self.escalate(c, o):
                    outs[i] = self.rerun_unsandboxed(c)
        return outs

    async def ainvoke_batch(
        self,
        calls: Sequence[ToolCall],
        tokens: Sequence[CancelToken],
        *,
        executor: Executor | None = None,
    ) -> list[ToolOutput | None]:
        """The calls as tasks on the Lua loop, each cancelled by its token
        alone (no thread waits; ``LuaRuntime.ainvoke_batch``).  ``escalate``
        blocks (it asks the user): it runs on a thread of ``executor``."""
        sandbox = self._batch_sandbox()
        outs: list[ToolOutput | None] = list(await self._ainvoke(calls, tokens, sandbox))
        if self.escalate is not None and sandbox is not None and sandbox.enabled:
            from ..policy.sandbox import was_blocked

            for i, (c, o) in enumerate(zip(calls, outs)):
                if (
                    o is not None
                    and o.is_error
                    and was_blocked(o.content)
                    and not tokens[i].cancelled
                    and await run_in_pool(executor, self.escalate, c, o)
                ):
                    out = (await self._ainvoke([c], [tokens[i]], sandbox.unsandboxed()))[0]
                    outs[i] = ToolOutput(_RERUN_NOTE + out.content, out.is_error, out.images)
        return outs

    async def _ainvoke(
        self, calls: Sequence[ToolCall], tokens: Sequence[CancelToken], sandbox: Any
    ) -> list[ToolOutput]:
        return await self.runtime.ainvoke_batch(
            calls,
            tokens,
            [self._timeout(c.name) for c in calls],
            cwd=self.cwd,
            sandbox=sandbox,
        )

    def rerun_unsandboxed(self, call: ToolCall) -> ToolOutput:
        """Run ``call`` again outside the sandbox (the user approved it);
        the result starts with a line saying so."""
        sandbox = self.sandbox.unsandboxed() if self.sandbox is not None else None
        out = self._invoke([call], sandbox)[0]
        return ToolOutput(_RERUN_NOTE + out.content, out.is_error, out.images)

    def _invoke(self, calls: Sequence[ToolCall], sandbox: Any) -> list[ToolOutput]:
        batch = self.runtime.new_batch()
        with self._lock:
            self._running.append(batch)
        try:
            return self.runtime.invoke_batch(
                calls,
                [self._timeout(c.name) for c in calls],
                batch=batch,
                cwd=self.cwd,
                sandbox=sandbox,
            )
        finally:
            with self._lock:
                self._running.remove(batch)

    def cancel(self) -> None:
        with self._lock:
            running = list(self._running)
        for b in running:
            self.runtime.cancel_batch(b)

    def prompt_parts(self, info: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
        """System-prompt parts from extensions (``panto.ext.system_prompt``):
        ``(origin, text)`` pairs such as ``("ext:std.git", "...")``, in
        registration order.  ``info`` (``{cwd, model, tools}``) is passed to
        function parts."""
        return self.runtime.prompt_parts(info)

    def commands(self) -> dict[str, str]:
        """Lua-registered slash commands: name -> description."""
        return {n: c.description for n, c in self.runtime.commands.items()}

    def run_command(self, name: str, args: str = "") -> str:
        return self.runtime.run_command(name, args)
