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
still open cancels the earlier one.  A user message submitted while a turn
runs is queued and steered into it: it enters the conversation after the
current tool round's results (or, when the model asks for no more tools,
at the start of the next turn), so every tool call keeps exactly one result
right after its call.  ``panto.agent.Session`` adds follow-up prompts (one
turn each, after the running one) and is the one writer a server or a
second thread should go through.

Hooks (``Agent.add_hooks``) observe and steer the loop at six points --
``session_start``, ``user_message``, ``before_tool_call``,
``after_tool_call``, ``turn_end`` and ``before_compact`` -- see
``AgentHooks``.  The Lua runtime's ``LuaToolSource.hooks`` is one such
object; the agent itself knows nothing about Lua.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..config import Config
from ..conversation import (
    Conversation,
    Image,
    Message,
    Text,
    ToolResultBlock,
    unanswered_tool_uses,
)
from ..errors import PantoError, ProviderError, SessionError, ToolError
from ..hooks import AgentHooks, ToolCallDecision
from ..logs import get_logger
from ..models import model_info
from ..storable import clean_message
from ..tools import Tool, ToolDecl, ToolSource
from .hooks import HookChain
from .io_async import run_blocking
from .stream import AsyncStream, Stream
from .turn import CANCELLED, TurnContext

log = get_logger("panto.agent")

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from ..providers.clients import AsyncClients
    from .compaction import Compaction, CompactionJob

__all__ = ["Agent", "AgentHooks", "MessageStore", "ToolCallDecision"]


@dataclass(frozen=True)
class _CompactionPlan:
    """What a compaction summarizes (``body[:cut]``) and keeps (the system
    messages, ``body[cut:]``), and the summary request."""

    system: list[Message]
    body: list[Message]
    cut: int
    first_kept: str | None
    request: Conversation


class MessageStore(Protocol):
    """What the agent needs of a session store (``panto.sessions``)."""

    def append_messages(self, messages: Sequence[Message]) -> Any: ...

    # optional: ``append_compaction(summary, first_kept_id, tokens_before)``
    # records what ``Agent.compact`` did (a store without it does not)


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
        system_prompt: str | None = None,
        entry_ids: Sequence[str | None] | None = None,
    ) -> None:
        self.config = config if config is not None else Config.load()
        self.store = store
        self.conversation = conversation if conversation is not None else Conversation()
        self._tools: dict[str, Tool] = {}
        self._sources: list[ToolSource] = []
        self._http: Any = None  # providers.transport.sync_client()
        self._http_tls = False
        #: the async HTTP clients of ``run_async`` turns, shared with other
        #: sessions (``panto.app.Host`` sets its own); None: the process's
        #: (``providers.clients.default_async_clients()``)
        self.http_clients: AsyncClients | None = None
        self._base_url = ""  # the last turn's provider's
        self._lock = threading.Lock()
        self._active: Stream | AsyncStream | None = None
        self._hooks = HookChain()
        #: where the async driver runs blocking tool work (native tools, tool
        #: hooks, sync-only sources): a bounded pool (``panto.app.Host`` sets
        #: its own); None: ``panto.tools.default_tool_pool()``
        self.tool_pool: Executor | None = None
        self._session_started = False
        self._resumed = any(m.role != "system" for m in self.conversation)
        #: id(message) -> (message, store entry id), for compaction's first_kept_id
        self._entry_ids: dict[int, tuple[Message, str]] = {}
        self._window: tuple[Any, int | None] = (None, None)
        self._last_compaction_id: str | None = None
        #: user messages submitted while a turn ran (see the module docstring)
        self._queued: deque[Message] = deque()
        self._adopt_entry_ids(self.conversation, entry_ids)
        # the system prompt of a new conversation: ``system_prompt`` (the one
        # panto.app assembles from parts), else the configured text as is
        prompt = system_prompt if system_prompt is not None else self.config.system_prompt
        if prompt and not any(m.role == "system" for m in self.conversation):
            self.add_system_message(prompt)

    # -- conversation ---------------------------------------------------------

    def submit_user_message(
        self, text: str, images: Sequence[Image] = (), *, files: Sequence[Text] = ()
    ) -> Message:
        """Append (and persist) a user message; ``run()`` sends it.  The
        ``user_message`` hooks run first and may rewrite the text.
        ``files`` (attached files' text blocks) and then ``images`` follow
        the text (panto.images reads both from files)."""
        if self._hooks:
            self._ensure_session()
            text = self._hooks.user_message(text)
        head = (Text(text),) if text or not (images or files) else ()
        msg = Message("user", (*head, *files, *images))
        msg = clean_message(msg)  # NUL, bytes that were not UTF-8: shown visibly
        with self._lock:
            if self.running:  # the turn commits it (``TurnContext.steering``)
                self._queued.append(msg)
                return msg
        # Answer calls left open by a crashed or cancelled turn first, so the
        # file keeps the same order as memory (a resume rebuilds it exactly).
        fix = self._repair()
        if fix is not None:
            self._persist([fix])
        self.conversation.append(msg)
        self._persist([msg])
        return msg

    async def asubmit_user_message(
        self, text: str, images: Sequence[Image] = (), *, files: Sequence[Text] = ()
    ) -> Message:
        """``submit_user_message`` for async code: the hooks and the store's
        write run in a worker thread, never on the event loop."""
        return await run_blocking(lambda: self.submit_user_message(text, images, files=files))

    @property
    def running(self) -> bool:
        """Whether a turn is under way: its stream has started (the first
        ``next()``) and has not finished, failed, been cancelled or closed."""
        s = self._active
        return s is not None and not s.closed and s.turn is not None and not s.turn.ended

    @property
    def queued(self) -> int:
        """How many submitted user messages wait for a turn to take them."""
        return len(self._queued)

    def clear_queue(self) -> list[Message]:
        """Drop the queued user messages (returned)."""
        return self._take_queued()

    def _take_queued(self) -> list[Message]:
        with self._lock:
            out = list(self._queued)
            self._queued.clear()
        return out

    def add_system_message(
        self, text: str, mode: Literal["append", "replace"] = "append"
    ) -> Message:
        """Add system prompt text.  ``append`` adds to the existing system
        prompt; ``replace`` removes earlier system messages first."""
        if mode not in ("append", "replace"):
            raise ValueError(f"mode must be 'append' or 'replace', not {mode!r}")
        msg = clean_message(Message("system", (Text(text),)))
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
        if mode == "replace" and self.store is not None:
            # the file is append-only: record that this one replaces the rest
            self.store.append_messages([msg], system_mode="replace")
        else:
            self._persist([msg])
        return msg

    def clear(self, *, store: Any = None) -> None:
        """Start over: drop every message except the system prompt.  With
        ``store`` (a fresh session), persistence moves there and the system
        prompt is written to it; without, the old session is not told, so a
        resume of it still shows what was cleared."""
        self._cancel_active()
        self.clear_queue()  # prompts of the conversation being dropped
        system = [m for m in self.conversation if m.role == "system"]
        self.conversation.clear()
        self.conversation.extend(system)
        if store is not None:
            self.store = store
            if system:
                self._persist(system)

    def branch_from(self, entry_id: str) -> Any:
        """Continue from an earlier entry of the session's tree (nothing is
        deleted): at a user prompt, the conversation becomes what came
        before it and the prompt's text is returned as ``dangling_user`` to
        edit (the next prompt becomes its sibling); at any other entry, the
        conversation up to it.  Returns the store's ``LoadedSession``;
        ``SessionError`` when the store keeps no tree or has no such entry."""
        branch = getattr(self.store, "branch_from", None)
        if branch is None:
            raise SessionError("this session is not saved: there is no tree to branch in")
        self._cancel_active()
        loaded = branch(entry_id)
        self.adopt(loaded)
        return loaded

    def adopt(self, loaded: Any) -> None:
        """Make a store's ``LoadedSession`` the live conversation (after the
        store was reopened, e.g. a failed turn's prompt taken back out), with
        its entry ids: auto-compaction names the first kept message by them."""
        self.conversation.clear()
        self.conversation.extend(loaded.conversation)
        self._entry_ids = {}
        self._adopt_entry_ids(loaded.conversation, getattr(loaded, "entry_ids", None))

    def compact(self, prompt: str | None = None, extra: str | None = None) -> Compaction | None:
        """Replace the conversation (all but the system prompt) with a
        summary the model writes of it; None when there is nothing to
        compact.  ``prompt`` overrides the default compaction prompt (a
        ``before_compact`` hook may still replace it); ``extra`` is added to
        it as the user's instructions (``/compact keep the API design``).

        Blocks until the summary is in.  The store records a ``compaction``
        entry (the full history stays in the session file, omitted from the
        context); a provider error or Ctrl-C leaves everything as it was."""
        self._cancel_active()
        return self._compact(prompt, extra, keep_recent=False)

    def _compact(
        self,
        prompt: str | None,
        extra: str | None,
        *,
        keep_recent: bool,
        on_child: Callable[[Stream | None], None] | None = None,
        **info: Any,
    ) -> Compaction | None:
        plan = self._compaction_plan(prompt, extra, keep_recent=keep_recent, **info)
        if plan is None:
            return None
        return self._compaction_apply(plan, self._summarize(plan.request, on_child))

    def _compaction_plan(
        self, prompt: str | None, extra: str | None, *, keep_recent: bool, **info: Any
    ) -> _CompactionPlan | None:
        """What a compaction summarizes and keeps, and the summary request
        (the ``before_compact`` hooks run here); None: nothing to compact."""
        from . import compaction as c

        msgs = list(self.conversation)
        system = [m for m in msgs if m.role == "system"]
        body = [m for m in msgs if m.role != "system"]
        cut = len(body)
        first_kept: str | None = None
        if keep_recent:
            cut = self._kept_from(body, c.cut_point(body, c.keep_budget(self._context_window())))
            if cut is None:
                return None  # the store could not replay a kept tail: no compaction
            first_kept = self._entry_id(body[cut]) if cut < len(body) else None
        old = body[:cut]
        if not old:
            return None
        prompt = self.compaction_prompt(prompt or c.DEFAULT_COMPACTION_PROMPT, extra, **info)
        request = c.summary_conversation(old, prompt, extra)
        return _CompactionPlan(system, body, cut, first_kept, request)

    def _compaction_apply(self, plan: _CompactionPlan, summary: str) -> Compaction:
        """Keep ``summary``: the store's ``compaction`` entry, then the
        conversation becomes the system prompt, the summary and the kept tail."""
        from . import compaction as c

        body, cut = plan.body, plan.cut
        result = c.Compaction(summary, c.context_tokens(body), cut)
        append_compaction = getattr(self.store, "append_compaction", None)
        if append_compaction is not None:
            entry = append_compaction(summary, plan.first_kept, result.tokens_before)
            self._last_compaction_id = str(entry) if entry is not None else None
        self.conversation.clear()
        self.conversation.extend(plan.system)
        self.conversation.append(c.compaction_summary_message(summary))
        self.conversation.extend(body[cut:])
        self._prune_entry_ids()
        return result

    def _kept_from(self, body: Sequence[Message], cut: int) -> int | None:
        """Where auto-compaction's kept tail starts: at ``cut`` (from
        ``compaction.cut_point``), but never after the prompt the turn is
        about to answer (it is kept verbatim, never summarized), and at a
        message whose store entry id is known (the ``compaction`` entry names
        it as ``first_kept_id``; a resume replays the tail from there).  None
        when no such message exists: better no compaction than one that
        summarizes the prompt or keeps nothing."""
        from .compaction import is_compaction_summary

        if body and body[-1].role == "user" and not is_compaction_summary(body[-1]):
            cut = min(cut, len(body) - 1)
        if self.store is None or cut >= len(body):
            return cut
        while cut < len(body) and (body[cut].role == "tool" or self._entry_id(body[cut]) is None):
            cut += 1
        return cut if cut < len(body) else None

    def _summarize(
        self, request: Conversation, on_child: Callable[[Stream | None], None] | None = None
    ) -> str:
        """Run the summarizing turn on ``request`` (no tools, no hooks,
        nothing persisted; this agent's connection pool) and return the
        summary.  ``on_child`` gets the summarizing stream while it runs
        (then None), so the turn that asked for it can cancel it; a
        cancelled summary raises ``CompactionCancelled``."""
        from . import compaction as c
        from .turn import Phase

        stream = Stream(self._summary_turn(request))
        if on_child is not None:
            on_child(stream)
        try:
            with stream:
                for _ in stream:
                    pass
        finally:
            if on_child is not None:
                on_child(None)
        if stream.turn is None or stream.turn.phase is Phase.CANCELLED:
            raise c.CompactionCancelled("compaction cancelled; the conversation was not changed")
        return c.summary_of(request, self.config.model_spec)

    def _summary_turn(self, request: Conversation) -> Callable[[], TurnContext]:
        """The summarizing turn's context: ``request`` as its conversation,
        no tools, no hooks, nothing persisted, this agent's HTTP clients."""
        from ..providers import make_provider

        config = self.config

        def open_turn() -> TurnContext:
            return TurnContext(
                config=config,
                conversation=request,
                registry={},
                provider=make_provider(config),
                persist=lambda msgs: None,
                http_client=self._http_client,
                async_http_client=self._async_http_client,
            )

        return open_turn

    def _context_window(self) -> int | None:
        """The model's context window (``panto.models``), cached per config."""
        cfg = self.config
        if self._window[0] is not cfg:
            window = model_info(cfg).context_window if cfg.compaction_auto else None
            self._window = (cfg, window)
        return self._window[1]

    def _auto_compaction(self) -> CompactionJob | None:
        """Auto-compaction (run by a turn between provider rounds when the
        context is full): the older part of the conversation becomes a
        summary, the recent part stays verbatim.  The turn's driver runs the
        summarizing turn as a nested turn of its own (``CompactionJob``);
        None when there is nothing to compact.  A failure is the
        ``CompactionEnd`` event's ``error``; the turn goes on with the full
        context.  A cancel leaves the conversation and the session as they
        were."""
        from ..events import CompactionEnd
        from . import compaction as c

        before = c.context_tokens(m for m in self.conversation if m.role != "system")
        self._last_compaction_id = None
        plan = self._compaction_plan(None, None, keep_recent=True, auto=True)
        if plan is None:
            return None
        model_spec = self.config.model_spec

        def finish() -> CompactionEnd:
            res = self._compaction_apply(plan, c.summary_of(plan.request, model_spec))
            log.info(
                "auto-compacted %d messages (~%d tokens)", res.messages_before, res.tokens_before
            )
            after = sum(c.estimate_tokens(m) for m in self.conversation)
            return CompactionEnd(
                res.tokens_before, after, res.messages_before, self._last_compaction_id
            )

        def failed(exc: PantoError) -> CompactionEnd:
            log.warning("auto-compaction failed (the conversation is unchanged): %s", exc)
            return CompactionEnd(before, before, 0, None, str(exc))

        return c.CompactionJob(self._summary_turn(plan.request), finish, failed)

    # -- the model ----------------------------------------------------------------

    def set_model(self, provider_model: str) -> Config:
        """Switch to ``provider/model`` (``ConfigError`` when it cannot be
        resolved; nothing changes then).  The store records a
        ``model_change`` unless it already names this model."""
        config = self.config.with_model(provider_model)
        self.config = config
        append = getattr(self.store, "append_model_change", None)
        if append is not None:
            active = getattr(self.store, "active_model", None)
            if active is None or tuple(active) != (config.provider, config.model):
                append(config.provider, config.model)
        return config

    def compaction_prompt(self, default: str, extra: str | None = None, **info: Any) -> str:
        """The prompt compaction should use: ``default`` unless a
        ``before_compact`` hook supplies one.  Hooks get ``{prompt, extra,
        messages, **info}`` (``messages``: the conversation's length)."""
        if not self._hooks:
            return default
        payload = {"prompt": default, "extra": extra, "messages": len(self.conversation), **info}
        return self._hooks.before_compact(payload) or default

    def _persist_blocks(self) -> bool:
        """Whether ``_persist`` does blocking work (there is a store to
        write): without one the async driver commits on its event loop."""
        return self.store is not None

    def _persist(self, messages: Iterable[Message]) -> None:
        if self.store is not None:
            msgs = list(messages)
            ids = self.store.append_messages(msgs)
            if isinstance(ids, (list, tuple)) and len(ids) == len(msgs):
                for m, eid in zip(msgs, ids):
                    self._entry_ids[id(m)] = (m, str(eid))

    def _adopt_entry_ids(
        self, messages: Iterable[Message], entry_ids: Sequence[str | None] | None
    ) -> None:
        for m, eid in zip(messages, entry_ids or ()):
            if eid is not None:
                self._entry_ids[id(m)] = (m, eid)

    def _entry_id(self, m: Message) -> str | None:
        """The store's entry id of a message of the conversation, if known."""
        got = self._entry_ids.get(id(m))
        return got[1] if got is not None and got[0] is m else None

    def _prune_entry_ids(self) -> None:
        live = {id(m) for m in self.conversation}
        self._entry_ids = {k: v for k, v in self._entry_ids.items() if k in live}

    def _repair(self) -> Message | None:
        """Answer tool calls of the last assistant message that have no
        result (a crashed earlier turn, a loaded session) so the next request
        is valid: "cancelled" error results go right after that message.
        The answer (to persist), or None when nothing was open."""
        missing = unanswered_tool_uses(self.conversation)
        if not missing:
            return None
        msgs = list(self.conversation)
        i = max(k for k, m in enumerate(msgs) if m.role == "assistant")
        fix = Message("tool", tuple(ToolResultBlock(c.id, CANCELLED, True) for c in missing))
        if i == len(msgs) - 1:
            self.conversation.append(fix)
        else:
            self.conversation.clear()
            self.conversation.extend([*msgs[: i + 1], fix, *msgs[i + 1 :]])
        return fix

    # -- hooks ------------------------------------------------------------------

    def add_hooks(self, hooks: Any) -> None:
        """Add a hooks object (an ``AgentHooks`` subclass, or anything with
        some of its methods, such as ``LuaToolSource.hooks``).  Hooks run in
        the order they were added."""
        self._hooks.add(hooks)

    def remove_hooks(self, hooks: Any) -> None:
        self._hooks.remove(hooks)

    @property
    def hooks(self) -> list[Any]:
        """The hooks objects, in the order they run."""
        return list(self._hooks.items)

    @property
    def permissions(self) -> Any:
        """The permission gate every tool call passes after the
        ``before_tool_call`` hooks (``panto.policy.permissions.Permissions``;
        None: every call runs).  ``panto.app.open_session`` sets it from
        ``[permissions]``."""
        return self._hooks.gate

    @permissions.setter
    def permissions(self, gate: Any) -> None:
        self._hooks.gate = gate

    def start_session(
        self,
        *,
        session_id: str | None = None,
        resumed: bool | None = None,
        cwd: str | None = None,
    ) -> None:
        """Fire ``session_start``: ``{session_id, cwd, model, resumed}``.
        Called implicitly before the first user message or turn when it was
        not called; call it explicitly (e.g. after loading a session) to pass
        the details.  ``session_id`` defaults to the store's, ``resumed`` to
        whether the conversation had messages when the agent was made."""
        if not self._hooks:
            return
        self._session_started = True
        if session_id is None:
            session_id = getattr(self.store, "session_id", None)
        info = {
            "session_id": session_id,
            "cwd": cwd if cwd is not None else os.getcwd(),
            "model": self.config.model_spec,
            "resumed": self._resumed if resumed is None else resumed,
        }
        self._hooks.session_start(info)

    def _ensure_session(self) -> None:
        if not self._session_started:
            self.start_session()

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

    def tool_owners(self) -> list[tuple[ToolDecl, str]]:
        """Every tool with its owner: ``"native"`` for a ``Tool``, else the
        name of its ``ToolSource``."""
        return [
            (d, owner.name if isinstance(owner, ToolSource) else "native")
            for owner, d in self._registry().values()
        ]

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

    def _open_turn(self) -> TurnContext:
        """What a turn needs (called by the stream on its first ``next()``):
        open tool calls answered first, then a snapshot of the tools.  It
        writes nothing: what it adds to the conversation (those answers,
        prompts queued since the last turn) is the context's ``opening``,
        which the driver commits before the first request.  What can fail
        comes first: a turn that cannot open leaves the conversation as it
        was."""
        from ..providers import make_provider

        provider = make_provider(self.config)
        self._base_url = provider.base_url  # (the mock's server is known only now)
        registry = self._registry()
        window = self._context_window()
        opening: list[tuple[Message, ...]] = []
        fix = self._repair()
        if fix is not None:
            opening.append((fix,))
        queued = self._take_queued()  # submitted after the last turn's last round
        if queued:
            self.conversation.extend(queued)
            opening.append(tuple(queued))
        return TurnContext(
            config=self.config,
            conversation=self.conversation,
            registry=registry,
            provider=provider,
            persist=self._persist,
            persist_blocks=self._persist_blocks,
            opening=opening,
            hooks=self._hooks,
            http_client=self._http_client,
            async_http_client=self._async_http_client,
            compaction=self._auto_compaction,
            context_window=window,
            steering=self._take_queued,
            tool_pool=self.tool_pool,
        )

    def run(self) -> Stream:
        """Start a turn: a ``Stream`` over every event until the model stops
        asking for tools.  Nothing is sent until the first ``next()``."""
        self._cancel_active()
        if self._hooks:
            self._ensure_session()
        stream = Stream(self._open_turn, self._hooks)
        self._active = stream
        return stream

    def run_async(self) -> AsyncStream:
        """Start a turn as an async iterator (``async for ev in
        agent.run_async()``), on the shared async clients
        (``http_clients``)."""
        self._cancel_active()
        if self._hooks:
            self._ensure_session()
        stream = AsyncStream(self._open_turn, self._hooks, open_blocks=self._open_blocks())
        self._active = stream
        return stream

    def _open_blocks(self) -> bool:
        """Whether the async driver opens the turn in a worker thread: a
        mock or extension provider may start its loopback server (on first
        use); with a store, the turn's commits hop to worker threads and so
        does its opening, as before: the pool spreads a burst of turn starts
        over loop iterations (200 sessions with a store starting at once:
        the loop's longest run between two 5 ms ticks 31-41 ms of CPU when
        opened on the loop, 17-24 ms in a worker thread).  Else opening is
        in-memory work only, done on the loop without a hop."""
        p = self.config.provider_config
        if (p.mock and not self.config.base_url) or p.extension:
            return True
        return self.store is not None

    def _cancel_active(self) -> None:
        s, self._active = self._active, None
        if s is not None and not s.done and not s.closed:
            # an async turn never iterated, or suspended, is also cancelled
            # in its bookkeeping now
            s.cancel()

    # -- HTTP clients ---------------------------------------------------------------

    def _http_client(self) -> Any:
        # The stdlib client (providers.http11; httpx's with a proxy).  TLS
        # only for https: loading the CA certificates costs ~40-60 ms of
        # CPU at start-up, which an http:// provider (a local server, the
        # mock) never needs.  A later switch to an https provider replaces
        # the client with a verifying one.
        https = self.config.resolve_base_url().startswith("https:")
        client = self._http
        if client is None or (https and not self._http_tls):
            with self._lock:
                if self._http is None or (https and not self._http_tls):
                    from ..providers.transport import sync_client

                    old, self._http_tls = self._http, https
                    self._http = sync_client(https)
                    if old is not None:
                        old.close()
                client = self._http
        return client

    def _async_http_client(self) -> Any:
        # shared per event loop, origin and TLS settings with every other
        # session of the host: a pool per upstream, kept alive across turns
        clients = self.http_clients
        if clients is None:
            from ..providers.clients import default_async_clients

            clients = default_async_clients()
        from ..providers.http11 import ConnectError

        try:
            return clients.get(self._base_url or self.config.resolve_base_url())
        except ConnectError:
            if not clients.closed:
                raise
        raise ProviderError(
            "the Host of this agent is closed (Host.close() was called), and with it the "
            "HTTP clients of its async turns: open the session on an open Host "
            "(panto.app.Host(), or panto.app.default_host())",
            type="host_closed",
        )

    def close(self) -> None:
        """Cancel a running turn and close the agent's own (sync) HTTP
        connections; the shared async clients stay with their host."""
        self._cancel_active()
        if self._http is not None:
            self._http.close()
            self._http = None

    async def aclose(self) -> None:
        """``close()`` for async code; a turn the caller left suspended (it
        broke out of ``async for`` without closing the stream) is closed
        too, so its connection goes now, not when the garbage collector
        finds the stream (it is in a reference cycle)."""
        s = self._active
        self._cancel_active()
        if isinstance(s, AsyncStream):
            await s.aclose()
        if self._http is not None:
            self._http.close()
            self._http = None

    def __enter__(self) -> Agent:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Agent {self.config.model_spec} {len(self.conversation)} messages>"
