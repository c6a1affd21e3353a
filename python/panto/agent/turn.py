"""The turn as an I/O-free state machine.

A ``Turn`` holds everything a turn knows -- its phase, the partial message
of the round being streamed, the tool round being dispatched, the usage so
far, how it ended -- and answers, for each input, what to yield and what to
do next.  It never touches a socket, a thread or a clock of its own: the
drivers in ``agent/stream.py`` (sync and async) do the I/O and feed it.

Phases (``turn.phase``)::

    REQUESTING --request()--> STREAMING --accept(MessageComplete)--> DISPATCHING or DONE
        ^                        |                                        |
        +--attempt_failed(err) --+ (a retry: yield the ProviderRetry,     |
        |    sleep its delay)       else FAILED)                          |
        +------------------ tool_results()/expire() finish the round -----+
    any phase --cancel()--> CANCELLED;  --fail(reason)--> FAILED

- ``request()`` gives the ``PreparedRequest`` to send (the same one for
  every attempt of a round).
- ``accept(event)`` takes one decoded event of the response and returns the
  events to yield (``MessageStart`` is held back until the first block so a
  retried attempt never shows two).  The terminal ``MessageComplete`` commits
  the round's message and moves on: to ``DISPATCHING`` when the model asked
  for tools, else to ``DONE``.
- ``attempt_failed(err)`` decides whether to retry (before any content, a
  retryable error, attempts left, a wait no longer than ``retry_wait_max``):
  it returns the ``ProviderRetry`` to yield, or None when the turn failed
  (the partial message is kept in the conversation with ``error`` set).
- ``start_tools()``, ``tool_results(gid, outputs)`` and ``expire(now)`` run
  the tool round: the calls grouped by owner (``ToolRound``); the driver
  runs each group (``agent/dispatch.py``) and reports back.  When the round
  ends, its results are committed, then the prompts submitted meanwhile
  (``ctx.steering``): the next request carries both.
- ``cancel()`` and ``fail(reason)`` keep what was produced and leave the
  conversation valid (every tool call answered).
- ``end()`` gives the ``turn_end`` hook payload, once.

The ``TurnContext`` is what the agent hands a turn: the conversation, a
snapshot of the tool registry, the hooks, the provider, the persist
callback and the HTTP client factories.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..conversation import Conversation, Message, Text, Thinking, ToolResultBlock, ToolUse, Usage
from ..errors import PantoError, ProviderError, TruncatedStream
from ..events import (
    BlockComplete,
    BlockStart,
    CompactionStart,
    ContentDelta,
    Event,
    MessageComplete,
    MessageStart,
    ProviderRetry,
    ToolCallStart,
    ToolResult,
)
from ..providers.transport import backoff_delay, logger, redact_headers, scrub_error
from ..tools import Tool, ToolDecl, ToolOutput, ToolSource

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from ..config import Config
    from ..providers.base import PreparedRequest, Provider
    from .compaction import CompactionJob
    from .hooks import HookChain

__all__ = [
    "CANCELLED",
    "Partial",
    "Phase",
    "ToolGroup",
    "ToolRound",
    "Turn",
    "TurnContext",
]

#: The result content of a tool call that was cancelled (and the partial
#: message's error when a turn is cancelled).
CANCELLED = "cancelled"

Registry = Mapping[str, tuple[Tool | ToolSource, ToolDecl]]


class Phase(enum.Enum):
    REQUESTING = "requesting"
    STREAMING = "streaming"
    DISPATCHING = "dispatching"
    DONE = "done"
    FAILED = "failed"
    CANCELLED = "cancelled"


_ENDED = frozenset({Phase.DONE, Phase.FAILED, Phase.CANCELLED})


@dataclass(slots=True)
class TurnContext:
    """What a turn needs, handed to it by the agent (no back-reference)."""

    config: Config
    conversation: Conversation
    registry: Registry
    provider: Provider
    #: called with the messages the turn adds to the conversation
    persist: Callable[[Sequence[Message]], None]
    #: () -> whether ``persist`` blocks now (it has a store to write); when
    #: it does not, the async driver commits on its event loop, without a
    #: hop to a worker thread (None: it blocks)
    persist_blocks: Callable[[], bool] | None = None
    #: what opening the turn added to the conversation and has not persisted
    #: (answers to calls a crashed turn left open, prompts queued since the
    #: last turn): the driver commits them first, before the first request
    opening: Sequence[tuple[Message, ...]] = ()
    hooks: HookChain | None = None
    #: () -> httpx.Client, and () -> httpx.AsyncClient for the running loop
    http_client: Callable[[], Any] | None = None
    async_http_client: Callable[[], Any] | None = None
    #: auto-compaction, when ``compaction_due()``: ``compaction()`` (it may
    #: block: the ``before_compact`` hooks) -> the ``CompactionJob`` the
    #: driver runs as a nested turn of its own, or None (nothing to compact)
    compaction: Callable[[], CompactionJob | None] | None = None
    #: the model's context window in tokens (None: unknown, no auto-compaction)
    context_window: int | None = None
    #: () -> the user messages submitted while the turn ran (steering), taken
    #: when a tool round ends: they are committed after its results, so the
    #: next request carries them and every call keeps exactly one result
    steering: Callable[[], Sequence[Message]] | None = None
    #: the bounded pool the async driver runs blocking tool work in (native
    #: tools, tool hooks); None: ``panto.tools.default_tool_pool()``
    tool_pool: Executor | None = None


# -- the partial assistant message of a round ---------------------------------------


#: a block's deltas are joined once this many came as they are (Partial.add)
_RAW_PARTS = 16


class Partial:
    """What a round has streamed so far, to keep on failure or cancel."""

    __slots__ = ("blocks", "kinds", "parts", "raw", "start")

    def __init__(self) -> None:
        self.blocks: dict[int, Any] = {}
        self.parts: dict[int, list[str]] = {}
        #: how many of a block's last parts are deltas as they came (add)
        self.raw: dict[int, int] = {}
        self.kinds: dict[int, str] = {}
        self.start: MessageStart | None = None

    def add(self, index: int, text: str) -> None:
        """A text delta of the open block ``index``.

        A streamed token is a str of its own (~50 bytes of object for 4 of
        text): a long answer would hold its text many times over, hundreds
        of streams at once in a server.  Every _RAW_PARTS deltas are joined
        into one piece, and the pieces merged so that each is more than
        twice the next (as a binary counter carries): a block is held in
        fewer than _RAW_PARTS + log2(n) strings, each byte copied O(log n)
        times (joining all every k deltas would copy a long answer n/k
        times)."""
        parts = self.parts.get(index)
        if parts is None:
            self.parts[index] = [text]
            self.raw[index] = 1
            return
        parts.append(text)
        raw = self.raw.get(index, 0) + 1
        if raw < _RAW_PARTS:
            self.raw[index] = raw
            return
        parts[-raw:] = ("".join(parts[-raw:]),)
        while len(parts) > 1 and len(parts[-2]) <= 2 * len(parts[-1]):
            last = parts.pop()
            parts[-1] += last
        self.raw[index] = 0

    def opened(self, index: int, kind: str) -> None:
        self.parts[index] = []
        self.raw[index] = 0
        self.kinds[index] = kind

    def completed(self, index: int, block: Any) -> None:
        self.blocks[index] = block
        self.parts.pop(index, None)  # (the block has it all)
        self.raw.pop(index, None)

    @property
    def has_content(self) -> bool:
        return bool(self.blocks or self.parts)

    def message(self, error: str, provider: str, model: str) -> Message | None:
        """Finished blocks plus the text / thinking streamed of unfinished
        ones.  Tool calls are dropped: they were never run, and a tool call
        without a result would make the next request invalid."""
        content: list[Any] = []
        for i in sorted(set(self.blocks) | set(self.parts)):
            b = self.blocks.get(i)
            if b is None:
                kind = self.kinds.get(i)
                text = "".join(self.parts.get(i, ()))
                if kind == "text" and text:
                    b = Text(text)
                elif kind == "thinking" and text:
                    b = Thinking(text, "")
            if b is not None and not isinstance(b, ToolUse):
                content.append(b)
        if not content:
            return None
        return Message(
            "assistant",
            tuple(content),
            self.start.usage if self.start else None,
            "error",
            provider,
            (self.start.model if self.start else None) or model,
            error,
        )


# -- the tool round ---------------------------------------------------------------------


class ToolGroup:
    """Calls run together: one native tool call, or all of a source's."""

    __slots__ = ("deadline", "done", "indices", "owner")

    def __init__(self, owner: Tool | ToolSource, indices: list[int], deadline: float | None):
        self.owner = owner
        self.indices = indices
        self.deadline = deadline
        self.done = False


class ToolRound:
    """The calls of one assistant message, grouped by owner (each native
    call its own group; each ``ToolSource`` one group), results kept in call
    order.  Calls answered at once -- an unknown tool, arguments that are not
    a JSON object -- are in ``immediate``.  Deadlines are absolute times on
    the clock the driver passes to ``expire``."""

    def __init__(
        self,
        calls: Sequence[ToolUse],
        registry: Registry,
        default_timeout: float | None,
        now: float = 0.0,
    ) -> None:
        self.calls = list(calls)
        self.results: list[ToolOutput | None] = [None] * len(self.calls)
        self.immediate: list[int] = []
        self.groups: list[ToolGroup] = []
        self.cancelled = False
        by_source: dict[int, ToolGroup] = {}
        for i, call in enumerate(self.calls):
            entry = registry.get(call.name)
            if entry is None:
                known = ", ".join(sorted(registry)) or "none"
                self.results[i] = ToolOutput(
                    f"unknown tool {call.name!r} (available tools: {known})", True
                )
                self.immediate.append(i)
                continue
            if call.raw_input is not None:
                self.results[i] = ToolOutput(
                    f"the arguments for {call.name!r} are {call.input_problem()}: "
                    f"{call.raw_input[:2000]!r}",
                    True,
                )
                self.immediate.append(i)
                continue
            owner, decl = entry
            timeout = decl.timeout if decl.timeout is not None else default_timeout
            deadline = now + timeout if timeout is not None else None
            if isinstance(owner, ToolSource):
                g = by_source.get(id(owner))
                if g is None:
                    g = by_source[id(owner)] = ToolGroup(owner, [], deadline)
                    self.groups.append(g)
                elif g.deadline is not None:
                    g.deadline = None if deadline is None else max(g.deadline, deadline)
                g.indices.append(i)
            else:
                self.groups.append(ToolGroup(owner, [i], deadline))

    def accept(self, gid: int, outs: Sequence[ToolOutput | None]) -> list[int]:
        """Record a group's outputs; returns the call indices completed."""
        g = self.groups[gid]
        if g.done:
            return []  # late result of a group that timed out or was cancelled
        g.done = True
        for i, o in zip(g.indices, outs):
            if o is not None:
                o = _storable(o)
            if o is not None and o.images:
                o = _checked_images(o)
            self.results[i] = o if o is not None else ToolOutput("no result", True)
        return g.indices

    def next_deadline(self) -> float | None:
        ds = [g.deadline for g in self.groups if not g.done and g.deadline is not None]
        return min(ds) if ds else None

    def expire(self, now: float) -> tuple[list[int], list[ToolGroup]]:
        """Time out overdue groups: the call indices completed, and the
        groups whose owner should be cancelled."""
        done: list[int] = []
        expired: list[ToolGroup] = []
        for g in self.groups:
            if not g.done and g.deadline is not None and g.deadline <= now:
                g.done = True
                expired.append(g)
                for i in g.indices:
                    self.results[i] = ToolOutput("timed out", True)
                done.extend(g.indices)
        return done, expired

    @property
    def pending(self) -> bool:
        return any(not g.done for g in self.groups)

    def cancel(self) -> list[ToolGroup]:
        """Mark running groups done; unfinished calls get a "cancelled"
        error result.  Returns the groups that were still running."""
        if self.cancelled:
            return []
        self.cancelled = True
        running = [g for g in self.groups if not g.done]
        for g in running:
            g.done = True
        for i, r in enumerate(self.results):
            if r is None:
                self.results[i] = ToolOutput(CANCELLED, True)
        return running

    def message(self) -> Message:
        return Message(
            "tool",
            tuple(
                ToolResultBlock(c.id, r.content, r.is_error, r.images)
                if r is not None
                else ToolResultBlock(c.id, CANCELLED, True)
                for c, r in zip(self.calls, self.results)
            ),
        )


# -- the turn -------------------------------------------------------------------------------


class Turn:
    """One turn's state (see the module docstring)."""

    def __init__(self, ctx: TurnContext) -> None:
        self.ctx = ctx
        self.config = ctx.config
        self.phase = Phase.REQUESTING
        self.usage = Usage()
        self.messages: list[Message] = []
        self.rounds = 0
        self.attempt = 0
        self.partial: Partial | None = None
        self.tools: ToolRound | None = None
        self.final: MessageComplete | None = None
        self.error: str | None = None
        self._decls = [d for _, d in ctx.registry.values()]
        self._request: PreparedRequest | None = None
        self._started = False
        self._ended = False
        self._compaction_round = -1
        #: whether the last ``accept_many`` saw any event
        self.progressed = False
        #: the error a read ended with after events the driver has yet to
        #: yield (``accept_many``); raised by ``raise_read_error``
        self.read_error: PantoError | None = None
        #: set by a driver that persists itself (the async one, off its event
        #: loop): commits then wait in ``pending`` instead of calling
        #: ``ctx.persist``, and the driver performs them, in order
        self.deferred = False
        self.pending: list[tuple[Message, ...]] = []

    @property
    def ended(self) -> bool:
        return self.phase in _ENDED

    # -- requesting ---------------------------------------------------------------

    def compaction_due(self) -> bool:
        """At the start of a round: should the driver run ``ctx.compaction()``
        before ``request()``?  (The context fills ``[compaction] threshold``
        of the window or leaves less than ``reserve_tokens``.)  Asked once
        per round, so a compaction that frees too little cannot loop."""
        ctx = self.ctx
        cfg = self.config
        if (
            ctx.compaction is None
            or not cfg.compaction_auto
            or self.phase is not Phase.REQUESTING
            or self._request is not None
            or self._compaction_round == self.rounds
        ):
            return False
        self._compaction_round = self.rounds
        from .compaction import compaction_due

        return compaction_due(
            ctx.conversation.messages,
            ctx.context_window,
            cfg.compaction_threshold,
            cfg.compaction_reserve_tokens,
        )

    def compaction_start(self) -> CompactionStart:
        """The event that announces the auto-compaction ``compaction_due()``
        asked for: the context's size, the limit it reached, the window."""
        from .compaction import context_tokens

        cfg = self.config
        window = self.ctx.context_window or 0
        used = context_tokens(m for m in self.ctx.conversation.messages if m.role != "system")
        limit = int(min(cfg.compaction_threshold * window, window - cfg.compaction_reserve_tokens))
        return CompactionStart(used, limit, window)

    def request_blocks(self) -> bool:
        """Whether ``request()`` may block: it builds the request now and
        an extension takes part (its provider's ``prepare``, a
        ``before_request`` hook -- Lua handlers may sleep or call out), so
        the async driver builds it in a worker thread, not on the loop."""
        if self._request is not None:
            return False
        hooks = self.ctx.hooks
        if hooks and hooks.wants("before_request"):
            return True
        return self.ctx.provider.build_blocks

    def request(self) -> PreparedRequest:
        """The request of this round's next attempt; the phase becomes
        STREAMING with an empty partial message."""
        self._expect(Phase.REQUESTING)
        req = self._request
        if req is None:
            req = self._request = self.ctx.provider.build_request(
                self.ctx.conversation.messages, self._decls
            )
            hooks = self.ctx.hooks
            if hooks and hooks.wants("before_request"):  # extensions' request hooks
                req = self._request = hooks.before_request(req, self._hook_info())
            if logger.isEnabledFor(10):
                logger.debug(
                    "POST %s headers=%s body=%d bytes",
                    req.url,
                    redact_headers(req.headers),
                    len(req.body),
                )
        self.partial = Partial()
        self._started = False
        self.phase = Phase.STREAMING
        return req

    # -- streaming -------------------------------------------------------------------

    def accept(self, ev: Event) -> tuple[Event, ...]:
        """One decoded event of the response: the events to yield."""
        p = self.partial
        tp = type(ev)
        if tp is ContentDelta:
            p.add(ev.index, ev.text)  # type: ignore[union-attr]
            return (ev,)
        if p is None or self.phase is not Phase.STREAMING:
            raise PantoError(f"turn: an event arrived in phase {self.phase.value}")
        if tp is MessageStart:
            p.start = ev  # type: ignore[assignment]
            return ()
        if tp is MessageComplete:
            out = self._finish_round(ev)  # type: ignore[arg-type]
            if not self._started and p.start is not None:
                return (p.start, out)
            return (out,)
        pre: tuple[Event, ...] = ()
        if not self._started:
            self._started = True
            if p.start is not None:
                pre = (p.start,)
        if tp is BlockStart:
            p.opened(ev.index, ev.kind)  # type: ignore[union-attr]
        elif tp is BlockComplete:
            p.completed(ev.index, ev.block)  # type: ignore[union-attr]
        return (*pre, ev)

    def accept_many(self, events: Iterable[Event]) -> list[Event]:
        """``accept`` for each event, up to and including the terminal one:
        all the events to yield (one call per piece of the body read; text
        deltas take a fast path).  ``progressed`` tells whether any event
        arrived.  When the events fail (the decoder raises: an error event,
        a malformed stream) after some arrived, those are returned and the
        error waits in ``read_error`` for the driver to raise once it has
        yielded them (they were lost: the text before an error event in the
        same read never reached the caller)."""
        out: list[Event] = []
        append = out.append
        p = self.partial
        add = p.add if p is not None else Partial().add
        seen = False
        try:
            for ev in events:
                if type(ev) is ContentDelta:
                    add(ev.index, ev.text)
                    append(ev)
                    continue
                seen = True
                out += self.accept(ev)
                if self.phase is not Phase.STREAMING:
                    break
        except PantoError as err:
            if not out:
                raise
            self.read_error = err
        self.progressed = seen or bool(out)
        return out

    def raise_read_error(self) -> None:
        """Raise the error the last read ended with (``accept_many``), if
        any, once its events are out."""
        err, self.read_error = self.read_error, None
        if err is not None:
            raise err

    def attempt_failed(self, err: PantoError) -> ProviderRetry | None:
        """The attempt ended with ``err`` (scrubbed of secrets here, in
        place, before anyone shows it).  Returns the ``ProviderRetry`` to
        yield -- then wait ``retry.delay`` and ``request()`` again -- or None:
        the turn FAILED (raise ``err``)."""
        scrub_error(err, self.ctx.provider.secrets)
        self._after_response(None, None, str(err), getattr(err, "status", None))
        cfg = self.config
        started = self.partial is not None and self.partial.has_content
        retryable = isinstance(err, TruncatedStream) or (
            isinstance(err, ProviderError) and err.retryable
        )
        retry_after = err.retry_after if isinstance(err, ProviderError) else None
        wait_max = _retry_wait_max(cfg)
        if (
            self.phase is not Phase.STREAMING
            or started
            or not retryable
            or self.attempt >= cfg.max_retries
        ):
            self.fail(str(err))
            return None
        if retry_after is not None and retry_after > wait_max:
            note = f" (the server asked to wait {retry_after:g}s; retry_wait_max is {wait_max:g}s)"
            if isinstance(err, ProviderError):
                err.message += note
                err.args = (err.message,)
            self.fail(str(err))
            return None
        delay = backoff_delay(
            self.attempt + 1, cfg.retry_base_delay, cfg.retry_max_delay, retry_after, wait_max
        )
        status = err.status if isinstance(err, ProviderError) else None
        self.attempt += 1
        self.partial = None
        self.phase = Phase.REQUESTING
        logger.info("retrying in %.2fs (attempt %d): %s", delay, self.attempt, err)
        return ProviderRetry(self.attempt, delay, str(err), status)

    def _hook_info(self) -> dict[str, Any]:
        cfg = self.config
        return {"provider": cfg.provider, "model": cfg.model, "wire": self.ctx.provider.wire}

    def _after_response(
        self, usage: Usage | None, stop: str | None, error: str | None, status: int | None
    ) -> None:
        """The ``after_response`` hooks: one call per provider response."""
        hooks = self.ctx.hooks
        if hooks and hooks.wants("after_response"):
            u = dataclasses.asdict(usage) if usage is not None else None
            info = {"usage": u, "stop_reason": stop, "error": error, "status": status}
            hooks.after_response({**self._hook_info(), **info})

    def _finish_round(self, ev: MessageComplete) -> MessageComplete:
        """Commit the round's message; the event to yield."""
        self._after_response(ev.usage, ev.stop_reason, None, 200)
        cfg = self.config
        self.partial = None
        self._request = None
        self.attempt = 0
        self.usage = self.usage + ev.usage
        msg = dataclasses.replace(
            ev.message,
            usage=ev.usage,
            stop_reason=ev.stop_reason,
            provider=cfg.provider,
            model=ev.message.model or cfg.model,
        )
        calls = msg.tool_uses
        if calls:
            msg = _unique_call_ids(msg, self.ctx.conversation.messages)
            calls = msg.tool_uses
        extra: list[Message] = []
        if calls:
            if self.rounds >= cfg.max_tool_rounds:
                origin = cfg.origins.get("max_tool_rounds")
                if origin is not None and origin.source == "--max-turns":  # panto --max-turns N
                    limit = f"--max-turns {cfg.max_tool_rounds + 1} (model responses per prompt)"
                else:
                    limit = f"max_tool_rounds={cfg.max_tool_rounds}"
                note = f"stopped: the turn reached {limit}; the last tool calls were not run"
                msg = dataclasses.replace(msg, error=note)
                extra.append(
                    Message("tool", tuple(ToolResultBlock(c.id, note, True) for c in calls))
                )
            else:
                self.tools = ToolRound(calls, self.ctx.registry, cfg.tool_timeout)
        self._commit(msg, *extra)
        final = self.tools is None
        out = MessageComplete(msg, ev.stop_reason, self.usage, final, ev.raw_stop_reason)
        if final:
            self.final = out
            self.phase = Phase.DONE
        else:
            self.phase = Phase.DISPATCHING
        return out

    # -- dispatching -------------------------------------------------------------------

    def start_tools(self, now: float = 0.0) -> list[Event]:
        """The tool round begins: ``ToolCallStart`` for every call, then the
        results known at once.  ``now`` sets the groups' deadlines (the
        driver's monotonic clock).  The driver then runs ``tools.groups``."""
        self._expect(Phase.DISPATCHING)
        r = self.tools
        assert r is not None
        if now:
            for g in r.groups:
                if g.deadline is not None:
                    g.deadline += now
        out: list[Event] = [ToolCallStart(c) for c in r.calls]
        out += self._results(r, r.immediate)
        self._maybe_finish_tools()
        return out

    def tool_results(self, gid: int, outs: Sequence[ToolOutput | None]) -> list[Event]:
        """A group finished: its ``ToolResult`` events."""
        r = self.tools
        if r is None or self.phase is not Phase.DISPATCHING:
            return []  # a late result after the round ended
        out = self._results(r, r.accept(gid, outs))
        self._maybe_finish_tools()
        return out

    def next_deadline(self) -> float | None:
        r = self.tools
        return r.next_deadline() if r is not None else None

    def expire(self, now: float) -> tuple[list[Event], list[Any]]:
        """Time out overdue groups: the events to yield and the owners the
        driver should cancel (``ToolSource.cancel()``)."""
        r = self.tools
        if r is None or self.phase is not Phase.DISPATCHING:
            return [], []
        done, expired = r.expire(now)
        out = self._results(r, done)
        self._maybe_finish_tools()
        return out, [g.owner for g in expired]

    @staticmethod
    def _results(r: ToolRound, indices: Sequence[int]) -> list[Event]:
        out: list[Event] = []
        for i in indices:
            res = r.results[i]
            assert res is not None
            out.append(ToolResult(r.calls[i], res.content, res.is_error, tuple(res.images)))
        return out

    def _maybe_finish_tools(self) -> None:
        r = self.tools
        if r is not None and not r.pending:
            self.tools = None
            self.rounds += 1
            steered = self.ctx.steering() if self.ctx.steering is not None else ()
            self._commit(r.message(), *steered)
            self.phase = Phase.REQUESTING

    # -- ending ------------------------------------------------------------------------

    def fail(self, reason: str) -> list[Any]:
        """End the turn with an error (kept on the partial message)."""
        if self.ended:
            return []
        owners = self._abort(reason)
        self.error = reason
        self.phase = Phase.FAILED
        return owners

    def cancel(self) -> list[Any]:
        """End the turn as cancelled.  Returns the tool owners still
        running, for the driver to cancel."""
        if self.ended:
            return []
        owners = self._abort(CANCELLED)
        self.phase = Phase.CANCELLED
        return owners

    def _abort(self, reason: str) -> list[Any]:
        """Keep what the turn produced so far; leave the conversation valid."""
        owners: list[Any] = []
        p, self.partial = self.partial, None
        if p is not None:
            m = p.message(reason, self.config.provider, self.config.model)
            if m is not None:
                self._commit(m)
        r, self.tools = self.tools, None
        if r is not None:
            owners = [g.owner for g in r.cancel()]
            self.rounds += 1
            self._commit(r.message())
        return owners

    def end(self) -> dict[str, Any] | None:
        """The ``turn_end`` payload -- ``{stop_reason, usage, cancelled,
        error, rounds}`` -- the first time it is asked for, else None."""
        if self._ended:
            return None
        self._ended = True
        f = self.final
        return {
            "stop_reason": f.stop_reason if f is not None else None,
            "usage": self.usage.to_dict(),
            "cancelled": f is None and self.phase is not Phase.FAILED,
            "error": f.message.error if f is not None else self.error,
            "rounds": self.rounds,
        }

    # -- helpers -------------------------------------------------------------------------

    def _commit(self, *messages: Message) -> None:
        from ..storable import clean_message

        conv = self.ctx.conversation
        # what a session cannot store or a provider cannot take (NUL, lone
        # surrogates) is shown visibly instead: panto.storable
        messages = tuple(clean_message(m) for m in messages)
        for m in messages:
            conv.append(m)
            self.messages.append(m)
        if self.deferred:
            self.pending.append(messages)
        else:
            self.ctx.persist(messages)

    def take_pending(self) -> list[tuple[Message, ...]]:
        """The commits not persisted yet (``deferred``), oldest first."""
        out, self.pending = self.pending, []
        return out

    def _expect(self, phase: Phase) -> None:
        if self.phase is not phase:
            raise PantoError(f"turn: expected phase {phase.value}, not {self.phase.value}")


def _unique_call_ids(msg: Message, history: Sequence[Message]) -> Message:
    """``msg`` with a fresh id for each tool call whose id an earlier call
    (of ``msg`` or of ``history``) already has: two calls with one id would
    both run, and providers reject a history where ids repeat.  The fresh id
    is the old one with a ``_dupN`` suffix."""
    ids = [c.id for c in msg.tool_uses]
    if len(set(ids)) == len(ids) and not any(
        isinstance(b, ToolUse) and b.id in ids for m in history for b in m.content
    ):
        return msg
    seen = {b.id for m in history for b in m.content if isinstance(b, ToolUse)}
    content: list[Any] = []
    for b in msg.content:
        if isinstance(b, ToolUse):
            if b.id in seen:
                n = 2
                while f"{b.id}_dup{n}" in seen or f"{b.id}_dup{n}" in ids:
                    n += 1
                logger.info("tool call id %r repeats; renamed %r", b.id, f"{b.id}_dup{n}")
                b = dataclasses.replace(b, id=f"{b.id}_dup{n}")
            seen.add(b.id)
        content.append(b)
    return dataclasses.replace(msg, content=tuple(content))


def _storable(o: ToolOutput) -> ToolOutput:
    """``o`` with NUL bytes and text that is not valid Unicode shown
    visibly (``panto.storable``), and a note saying so for the model."""
    from ..storable import Cleaned, clean_note, clean_text

    counts = Cleaned()
    text = clean_text(o.content, counts)
    if not counts:
        return o
    return ToolOutput(f"{text}\n{clean_note(counts)}", o.is_error, o.images)


def _checked_images(o: ToolOutput) -> ToolOutput:
    """``o`` without images the API would reject (``panto.images.check_images``:
    each dropped one leaves a note in the text)."""
    from ..images import check_images

    images, notes = check_images(tuple(o.images))
    if not notes and images == o.images:
        return o
    content = "\n".join([o.content, *notes]) if o.content else "\n".join(notes)
    return ToolOutput(content, o.is_error, images)


def failed_before_start(error: str) -> dict[str, Any]:
    """The ``turn_end`` payload of a turn that could not start."""
    return {
        "stop_reason": None,
        "usage": Usage().to_dict(),
        "cancelled": False,
        "error": error,
        "rounds": 0,
    }


def _retry_wait_max(cfg: Config) -> float:
    v = cfg.retry_wait_max
    return float(v) if v is not None else 600.0
