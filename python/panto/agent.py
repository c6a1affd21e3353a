"""The agent: owns a conversation, its tools and (later) its session store,
and runs turns as pull streams.

::

    agent = panto.Agent(panto.Config.load())
    agent.register_tool(panto.FunctionTool("add", "Add two numbers", add, schema))
    agent.submit_user_message("what is 2 + 3?")
    with agent.run() as stream:
        for ev in stream:
            ...

One turn runs at a time.  Starting a new turn while an earlier stream is
still open cancels the earlier one.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from .config import Config
from .conversation import Conversation, Message, Text, ToolResultBlock
from .errors import ToolError
from .stream import CANCELLED, AsyncStream, Stream
from .tools import Tool, ToolDecl, ToolSource

if TYPE_CHECKING:
    import httpx

__all__ = ["Agent", "MessageStore"]


class MessageStore(Protocol):
    """What the agent needs of a session store (``panto.sessions``)."""

    def append_messages(self, messages: Sequence[Message]) -> Any: ...


class Agent:
    """A conversation with a model, plus tools.  See the module docstring.

    ``store`` receives every message as it enters the conversation
    (``append_messages``); ``conversation`` is adopted as the live one.
    """

    def __init__(
        self,
        config: Config | None = None,
        *,
        store: MessageStore | None = None,
        conversation: Conversation | None = None,
    ) -> None:
        self.config = config if config is not None else Config.load()
        self.store = store
        self.conversation = conversation if conversation is not None else Conversation()
        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = []
        self._http: httpx.Client | None = None
        self._ahttp: dict[int, httpx.AsyncClient] = {}
        self._lock = threading.Lock()
        self._active: Stream | AsyncStream | None = None
        if self.config.system_prompt and not any(m.role == "system" for m in self.conversation):
            self.add_system_message(self.config.system_prompt)

    # -- conversation ---------------------------------------------------------

    def submit_user_message(self, text: str) -> Message:
        """Append (and persist) a user message; ``run()`` sends it."""
        msg = Message.user(text)
        self.conversation.append(msg)
        self._persist([msg])
        return msg

    def add_system_message(
        self, text: str, mode: Literal["append", "replace"] = "append"
    ) -> Message:
        """Add system prompt text.  ``append`` adds to the existing system
        prompt; ``replace`` removes earlier system messages first."""
        if mode not in ("append", "replace"):
            raise ValueError(f"mode must be 'append' or 'replace', not {mode!r}")
        msg = Message("system", (Text(text),))
        if mode == "replace":
            kept = [m for m in self.conversation if m.role != "system"]
            self.conversation.clear()
            self.conversation.append(msg)
            self.conversation.extend(kept)
        else:
            # keep system messages together at the front
            msgs = list(self.conversation)
            n = 0
            while n < len(msgs) and msgs[n].role == "system":
                n += 1
            if n == len(msgs):
                self.conversation.append(msg)
            else:
                self.conversation.clear()
                self.conversation.extend([*msgs[:n], msg, *msgs[n:]])
        self._persist([msg])
        return msg

    def clear(self) -> None:
        """Start over: drop every message except the system prompt."""
        self._cancel_active()
        system = [m for m in self.conversation if m.role == "system"]
        self.conversation.clear()
        self.conversation.extend(system)

    def compact(self, prompt: str | None = None, extra: str | None = None) -> Any:
        raise NotImplementedError("compaction comes with the sessions issue")

    def _persist(self, messages: Iterable[Message]) -> None:
        if self.store is not None:
            self.store.append_messages(list(messages))

    def _repair(self) -> None:
        """Answer tool calls of the last assistant message that have no
        result (a crashed earlier turn, a loaded session) so the next request
        is valid: "cancelled" error results go right after that message."""
        msgs = list(self.conversation)
        for i in range(len(msgs) - 1, -1, -1):
            if msgs[i].role == "assistant":
                break
        else:
            return
        answered = {
            b.tool_use_id
            for m in msgs[i + 1 :]
            for b in m.content
            if isinstance(b, ToolResultBlock)
        }
        missing = [c for c in msgs[i].tool_uses if c.id not in answered]
        if not missing:
            return
        fix = Message("tool", tuple(ToolResultBlock(c.id, CANCELLED, True) for c in missing))
        if i == len(msgs) - 1:
            self.conversation.append(fix)
        else:
            self.conversation.clear()
            self.conversation.extend([*msgs[: i + 1], fix, *msgs[i + 1 :]])
        self._persist([fix])

    # -- tools ------------------------------------------------------------------

    def register_tool(self, tool: Tool) -> None:
        """Add a native tool.  Its name must be unique among all tools."""
        name = tool.decl.name
        if name in self._names():
            raise ToolError(f"a tool named {name!r} is already registered")
        self._tools[name] = tool

    def register_tool_source(self, source: ToolSource) -> None:
        """Add a tool source (all its calls of a turn arrive in one batch)."""
        names = [d.name for d in source.decls()]
        dup = {n for n in names if names.count(n) > 1} | (set(names) & self._names())
        if dup:
            raise ToolError(
                f"tool source {source.name!r}: tool name(s) already registered: "
                + ", ".join(sorted(dup))
            )
        self._sources.append(source)

    def unregister_tool(self, name: str) -> None:
        self._tools.pop(name, None)

    def _names(self) -> set[str]:
        names = set(self._tools)
        for s in self._sources:
            names.update(d.name for d in s.decls())
        return names

    @property
    def tools(self) -> list[ToolDecl]:
        """Every tool the model is offered, in registration order."""
        return [d for _, d in self._registry().values()]

    def _registry(self) -> dict[str, tuple[Tool | ToolSource, ToolDecl]]:
        reg: dict[str, tuple[Tool | ToolSource, ToolDecl]] = {
            name: (t, t.decl) for name, t in self._tools.items()
        }
        for s in self._sources:
            for d in s.decls():
                if d.name in reg:
                    raise ToolError(f"tool {d.name!r} is offered twice (by {s.name!r})")
                reg[d.name] = (s, d)
        return reg

    # -- turns --------------------------------------------------------------------

    def run(self) -> Stream:
        """Start a turn: a ``Stream`` over every event until the model stops
        asking for tools.  Nothing is sent until the first ``next()``."""
        self._cancel_active()
        stream = Stream(self)
        self._active = stream
        return stream

    def run_async(self) -> AsyncStream:
        """Start a turn as an async iterator (``async for ev in
        agent.run_async()``), on httpx's async client."""
        self._cancel_active()
        stream = AsyncStream(self)
        self._active = stream
        return stream

    def _cancel_active(self) -> None:
        s, self._active = self._active, None
        if s is not None and not s.done and not s.closed:
            if isinstance(s, Stream):
                s.close()
            else:
                s.close()
                if not s.done:
                    # never iterated, or suspended: cancel its bookkeeping now
                    s._abort(CANCELLED)

    # -- HTTP clients ---------------------------------------------------------------

    def _http_client(self) -> httpx.Client:
        client = self._http
        if client is None:
            with self._lock:
                if self._http is None:
                    import httpx

                    self._http = httpx.Client(http2=False, follow_redirects=False)
                client = self._http
        return client

    def _async_http_client(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        client = self._ahttp.get(id(loop))
        if client is None or client.is_closed:
            import httpx

            client = self._ahttp[id(loop)] = httpx.AsyncClient(follow_redirects=False)
        return client

    def close(self) -> None:
        """Cancel a running turn and close the HTTP connections."""
        self._cancel_active()
        if self._http is not None:
            self._http.close()
            self._http = None
        self._ahttp.clear()  # async clients close with their loop

    async def aclose(self) -> None:
        self._cancel_active()
        for c in list(self._ahttp.values()):
            await c.aclose()
        self._ahttp.clear()
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Agent {self.config.model_spec} {len(self.conversation)} messages>"
