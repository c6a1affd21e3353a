"""The turn stream: one pull iterator over every provider round of a turn and
the tool dispatch between them.

``Agent.run()`` returns a ``Stream``; ``Agent.run_async()`` an
``AsyncStream``.  Events, in order::

    [ProviderRetry ...] MessageStart BlockStart ... MessageComplete(final=False)
    ToolCallStart x N   ToolResult x N (as calls finish)
    [ProviderRetry ...] MessageStart ... MessageComplete(final=True)

``MessageComplete(final=True)`` is the last event; after it the iteration
ends.  It never ends before it: a failure raises from ``next()`` instead
(``ProviderError``, ``TruncatedStream``, ``DecodeError``), after the partial
assistant message has been kept in the conversation with ``error`` set.
``MessageComplete.usage`` in a turn stream is the turn's total so far
(``message.usage`` is that message's own).

``close()`` (or leaving the ``with`` block, or ``KeyboardInterrupt`` inside
``next()``) cancels: the HTTP response is closed, running ``ToolSource``
batches get ``cancel()``, native tool threads are abandoned, and the
conversation is left valid for the next turn (every tool call gets a result;
the ones that did not finish get an ``is_error`` ``"cancelled"`` result).

Agent hooks (``Agent.add_hooks``): every dispatched call passes through
``before_tool_call`` (which may block it or rewrite its input) and its result
through ``after_tool_call``, both on the call's dispatch thread; ``turn_end``
runs once when the turn ends -- after the final ``MessageComplete`` (when the
consumer asks for the next event or closes the stream), on an error, or on
cancel.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import queue
import sys
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Generator, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .conversation import Message, Text, Thinking, ToolResultBlock, ToolUse, Usage
from .errors import PantoError, ProviderError, ToolError, TruncatedStream
from .events import (
    BlockComplete,
    BlockStart,
    ContentDelta,
    Event,
    MessageComplete,
    MessageStart,
    ProviderRetry,
    ToolCallStart,
    ToolResult,
)
from .providers.base import PreparedRequest, backoff_delay, logger, redact, redact_headers
from .tools import Tool, ToolCall, ToolDecl, ToolOutput, ToolSource

if TYPE_CHECKING:
    import asyncio

    from .agent import Agent, _HookChain
    from .providers import Provider

__all__ = ["AsyncStream", "Stream"]

CANCELLED = "cancelled"


def _aio() -> tuple[type[BaseException], ...]:
    """asyncio.CancelledError, if asyncio is loaded (it is imported lazily:
    without it, no task can have been cancelled)."""
    aio = sys.modules.get("asyncio")
    return (aio.CancelledError,) if aio is not None else ()


class _Cancelled(Exception):
    """Internal: the stream was closed from another thread or task."""


# -- the partial assistant message of a round --------------------------------


class _Partial:
    """What a round has streamed so far, to keep on failure or cancel."""

    __slots__ = ("blocks", "kinds", "parts", "start")

    def __init__(self) -> None:
        self.blocks: dict[int, Any] = {}
        self.parts: dict[int, list[str]] = {}
        self.kinds: dict[int, str] = {}
        self.start: MessageStart | None = None

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


# -- tool dispatch -------------------------------------------------------------


class _Group:
    __slots__ = ("deadline", "done", "indices", "owner")

    def __init__(self, owner: Tool | ToolSource, indices: list[int], deadline: float | None):
        self.owner = owner
        self.indices = indices
        self.deadline = deadline
        self.done = False


class _Dispatch:
    """One tool round: the calls grouped by owner, one thread per group
    (each native call is its own group; each ToolSource gets one
    ``invoke_batch``), results kept in call order.

    With ``hooks``, each group's thread first runs ``before_tool_call`` for
    its calls (blocked calls are not run; rewritten inputs are what the tool
    receives), then the tools, then ``after_tool_call`` on every result.
    Calls answered at once (unknown tool, arguments that are not a JSON
    object) and calls that time out or are cancelled skip the hooks."""

    def __init__(
        self,
        calls: Sequence[ToolUse],
        registry: dict[str, tuple[Tool | ToolSource, ToolDecl]],
        default_timeout: float | None,
        hooks: _HookChain | None = None,
    ) -> None:
        self.calls = list(calls)
        self.hooks = hooks if hooks else None
        self.results: list[ToolOutput | None] = [None] * len(self.calls)
        self.immediate: list[int] = []
        self.groups: list[_Group] = []
        self.cancelled = False
        by_source: dict[int, _Group] = {}
        now = time.monotonic()
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
                    f"the arguments for {call.name!r} are not a JSON object: "
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
                    g = by_source[id(owner)] = _Group(owner, [], deadline)
                    self.groups.append(g)
                elif g.deadline is not None:
                    g.deadline = None if deadline is None else max(g.deadline, deadline)
                g.indices.append(i)
            else:
                self.groups.append(_Group(owner, [i], deadline))

    def start(self, post: Any) -> None:
        """Start one daemon thread per group; each calls ``post((gid,
        outputs))`` when done."""
        for gid, g in enumerate(self.groups):
            t = threading.Thread(
                target=self._run_group, args=(gid, g, post), name=f"panto-tool-{gid}", daemon=True
            )
            t.start()

    def _run_group(self, gid: int, g: _Group, post: Any) -> None:
        calls = [ToolCall(c.id, c.name, c.input) for c in (self.calls[i] for i in g.indices)]
        outs: list[ToolOutput | None] = [None] * len(calls)
        hooks = self.hooks
        if hooks is not None:
            for k, call in enumerate(calls):
                calls[k], outs[k] = hooks.before_tool_call(call)
            if g.done:
                return  # timed out or cancelled while the hooks ran
        run = [k for k, o in enumerate(outs) if o is None]
        if run:
            for k, o in zip(run, self._invoke(g.owner, [calls[k] for k in run])):
                outs[k] = o
        if hooks is not None and not g.done:
            for k, call in enumerate(calls):
                outs[k] = hooks.after_tool_call(call, outs[k])  # type: ignore[arg-type]
        try:
            post((gid, outs))
        except RuntimeError:
            pass  # abandoned: the turn (and its event loop) is gone

    @staticmethod
    def _invoke(owner: Tool | ToolSource, calls: list[ToolCall]) -> list[ToolOutput]:
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

    def accept(self, gid: int, outs: list[ToolOutput]) -> list[int]:
        """Record a group's outputs; returns the call indices completed."""
        g = self.groups[gid]
        if g.done:
            return []  # late result of a group that timed out or was cancelled
        g.done = True
        for i, o in zip(g.indices, outs):
            self.results[i] = o
        return g.indices

    def next_deadline(self) -> float | None:
        ds = [g.deadline for g in self.groups if not g.done and g.deadline is not None]
        return min(ds) if ds else None

    def expire(self, now: float) -> list[int]:
        """Time out overdue groups (cancelling sources); returns indices."""
        done: list[int] = []
        for g in self.groups:
            if not g.done and g.deadline is not None and g.deadline <= now:
                g.done = True
                _cancel_owner(g.owner)
                for i in g.indices:
                    self.results[i] = ToolOutput("timed out", True)
                done.extend(g.indices)
        return done

    @property
    def pending(self) -> bool:
        return any(not g.done for g in self.groups)

    def cancel(self) -> None:
        """Cancel running groups: sources get ``cancel()``, native threads
        are abandoned; unfinished calls get a "cancelled" error result."""
        if self.cancelled:
            return
        self.cancelled = True
        for g in self.groups:
            if not g.done:
                g.done = True
                _cancel_owner(g.owner)
        for i, r in enumerate(self.results):
            if r is None:
                self.results[i] = ToolOutput(CANCELLED, True)

    def message(self) -> Message:
        return Message(
            "tool",
            tuple(
                ToolResultBlock(c.id, r.content if r else CANCELLED, r.is_error if r else True)
                for c, r in zip(self.calls, self.results)
            ),
        )


def _cancel_owner(owner: Any) -> None:
    if isinstance(owner, ToolSource):
        try:
            owner.cancel()
        except Exception as exc:  # pragma: no cover - a broken cancel hook
            logger.warning("tool source %r: cancel() failed: %s", owner.name, exc)


# -- transport errors ------------------------------------------------------------


def _transport_error(
    exc: Exception, req: PreparedRequest, connect: float, read: float
) -> PantoError:
    import httpx

    host = httpx.URL(req.url).host
    if isinstance(exc, httpx.ConnectTimeout):
        msg, kind = f"connecting to {host} timed out after {connect:g}s", "connect_timeout"
    elif isinstance(exc, httpx.ConnectError):
        msg, kind = f"could not connect to {req.url}: {exc}", "connection_error"
    elif isinstance(exc, httpx.ReadTimeout):
        msg, kind = f"no data from {host} for {read:g}s (read timeout)", "read_timeout"
    elif isinstance(exc, httpx.TimeoutException):
        msg, kind = f"timed out talking to {host}: {exc}", "timeout"
    elif isinstance(exc, (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)):
        msg, kind = (
            f"the connection to {host} broke before the response was complete ({exc})",
            "connection_closed",
        )
    else:
        msg, kind = f"HTTP error talking to {host}: {exc}", "transport_error"
    return ProviderError(redact(msg, req.secrets), type=kind, retryable=True)


# -- the turn state shared by the sync and async streams --------------------------


class _TurnBase:
    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.config = agent.config
        self._provider: Provider | None = None
        self.usage = Usage()
        self.messages: list[Message] = []
        self.rounds = 0
        self.done = False
        self._closed = False
        self._cancel = threading.Event()
        self._partial: _Partial | None = None
        self._dispatch: _Dispatch | None = None
        self._registry: dict[str, tuple[Tool | ToolSource, ToolDecl]] = {}
        self._decls: list[ToolDecl] = []
        # how the turn ended, for the turn_end hook
        self._final: MessageComplete | None = None
        self._end_error: str | None = None
        self._end_cancelled = False
        self._ended = False

    # state helpers (no I/O) ----------------------------------------------------

    def _setup(self) -> None:
        from .providers import make_provider

        self.agent._repair()
        self._registry = self.agent._registry()
        self._decls = [d for _, d in self._registry.values()]
        self._provider = make_provider(self.config)

    def _request(self) -> PreparedRequest:
        assert self._provider is not None
        req = self._provider.build_request(self.agent.conversation.messages, self._decls)
        if logger.isEnabledFor(10):
            logger.debug(
                "POST %s headers=%s body=%d bytes",
                req.url,
                redact_headers(req.headers),
                len(req.body),
            )
        return req

    def _commit(self, *messages: Message) -> None:
        conv = self.agent.conversation
        for m in messages:
            conv.append(m)
            self.messages.append(m)
        self.agent._persist(messages)

    def _retry_decision(self, err: PantoError, attempt: int, started: bool) -> ProviderRetry | None:
        cfg = self.config
        retryable = isinstance(err, TruncatedStream) or (
            isinstance(err, ProviderError) and err.retryable
        )
        if started or not retryable or attempt >= cfg.max_retries or self._cancel.is_set():
            return None
        retry_after = err.retry_after if isinstance(err, ProviderError) else None
        delay = backoff_delay(attempt + 1, cfg.retry_base_delay, cfg.retry_max_delay, retry_after)
        status = err.status if isinstance(err, ProviderError) else None
        logger.info("retrying in %.2fs (attempt %d): %s", delay, attempt + 1, err)
        return ProviderRetry(attempt + 1, delay, str(err), status)

    def _finish_round(self, ev: MessageComplete) -> tuple[MessageComplete, _Dispatch | None]:
        """Commit the round's message; returns the event to yield and the
        tool dispatch to run (None when the turn ends)."""
        cfg = self.config
        self._partial = None
        self.usage = self.usage + ev.usage
        msg = ev.message
        msg = dataclasses.replace(
            msg,
            usage=ev.usage,
            stop_reason=ev.stop_reason,
            provider=cfg.provider,
            model=msg.model or cfg.model,
        )
        calls = msg.tool_uses
        dispatch = None
        extra: list[Message] = []
        if calls:
            if self.rounds >= cfg.max_tool_rounds:
                note = (
                    f"stopped: the turn reached max_tool_rounds={cfg.max_tool_rounds}; "
                    "the last tool calls were not run"
                )
                msg = dataclasses.replace(msg, error=note)
                extra.append(
                    Message("tool", tuple(ToolResultBlock(c.id, note, True) for c in calls))
                )
            else:
                dispatch = _Dispatch(calls, self._registry, cfg.tool_timeout, self.agent._hooks)
        self._commit(msg, *extra)
        final = dispatch is None
        if final:
            self.done = True
        out = MessageComplete(msg, ev.stop_reason, self.usage, final, ev.raw_stop_reason)
        if final:
            self._final = out
        return out, dispatch

    def _finish_tools(self, d: _Dispatch) -> None:
        self._dispatch = None
        self.rounds += 1
        self._commit(d.message())

    def _abort(self, reason: str) -> None:
        """Keep what the turn produced so far; leave the conversation valid."""
        self.done = True
        p, self._partial = self._partial, None
        if p is not None:
            m = p.message(reason, self.config.provider, self.config.model)
            if m is not None:
                self._commit(m)
        d, self._dispatch = self._dispatch, None
        if d is not None:
            d.cancel()
            self.rounds += 1
            self._commit(d.message())

    def _ended_by(self, exc: BaseException | None) -> None:
        """Record why the turn stopped (before the final event)."""
        if self._final is not None:
            return
        if exc is None or isinstance(exc, (_Cancelled, GeneratorExit, KeyboardInterrupt, *_aio())):
            self._end_cancelled = True
        elif self._end_error is None:
            self._end_error = str(exc) or type(exc).__name__

    def _turn_end_info(self) -> dict[str, Any]:
        f = self._final
        return {
            "stop_reason": f.stop_reason if f is not None else None,
            "usage": self.usage.to_dict(),
            "cancelled": f is None and (self._end_cancelled or self._end_error is None),
            "error": f.message.error if f is not None else self._end_error,
            "rounds": self.rounds,
        }

    def _end_turn(self) -> None:
        """Fire ``turn_end`` (once)."""
        if self._ended:
            return
        self._ended = True
        hooks = self.agent._hooks
        if hooks:
            hooks.turn_end(self._turn_end_info())

    @property
    def closed(self) -> bool:
        return self._closed


_GID = itertools.count()


class Stream(_TurnBase):
    """A turn, as a pull iterator (see the module docstring).  Use it in a
    ``with`` block, or call ``close()`` when abandoning it early."""

    def __init__(self, agent: Agent) -> None:
        super().__init__(agent)
        self._resp: Any = None
        self._q: queue.SimpleQueue[Any] | None = None
        self._complete: Any = None
        self._step = threading.Lock()  # held while the generator runs
        self._gen = self._run()

    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        with self._step:
            return next(self._gen)

    def __enter__(self) -> Stream:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Cancel the turn (a no-op once it has ended); safe from any thread."""
        if self._closed:
            return
        self._closed = True
        self._cancel.set()
        self._interrupt()
        if self._step.acquire(blocking=False):
            try:
                self._gen.close()
            finally:
                self._step.release()
        # else: next() is running in another thread; it notices the cancel
        # (its socket is shut down, its tool wait is woken) and ends

    def _interrupt(self) -> None:
        resp = self._resp
        if resp is not None:
            _shutdown_socket(resp)
        q = self._q
        if q is not None:
            q.put(None)
        d = self._dispatch
        if d is not None:
            for g in d.groups:
                if not g.done:
                    _cancel_owner(g.owner)

    # the generator ---------------------------------------------------------

    def _run(self) -> Generator[Event, None, None]:
        try:
            self._setup()
            while True:
                # one provider round (with retries)
                req = self._request()
                attempt = 0
                while True:
                    part = self._partial = _Partial()
                    try:
                        for ev in self._attempt(req, part):
                            yield ev
                        break
                    except PantoError as err:
                        if self._cancel.is_set():
                            raise _Cancelled() from None
                        retry = self._retry_decision(err, attempt, bool(part.blocks or part.parts))
                        if retry is None:
                            self._abort(str(err))
                            raise
                        self._partial = None
                        attempt += 1
                        yield retry
                        if self._cancel.wait(retry.delay):
                            raise _Cancelled() from None
                ev = self._complete
                out, d = self._finish_round(ev)
                yield out
                if d is None:
                    return
                yield from self._tools(d)
        except _Cancelled as exc:
            self._abort(CANCELLED)
            self._ended_by(exc)
        except GeneratorExit as exc:
            self._abort(CANCELLED)
            self._ended_by(exc)
            raise
        except BaseException as exc:
            if not self.done:
                self._abort(CANCELLED if isinstance(exc, KeyboardInterrupt) else str(exc))
            self._ended_by(exc)
            raise
        finally:
            self._close_response()
            self._closed = True
            self._end_turn()

    def _attempt(self, req: PreparedRequest, part: _Partial) -> Iterator[Event]:
        """One HTTP attempt; sets ``self._complete``.  Raises PantoError."""
        import httpx

        from .decoder import StreamDecoder

        cfg = self.config
        client = self.agent._http_client()
        try:
            request = client.build_request(
                "POST",
                req.url,
                content=req.body,
                headers=req.headers,
                timeout=httpx.Timeout(
                    cfg.read_timeout, connect=cfg.connect_timeout, pool=cfg.connect_timeout
                ),
            )
            resp = self._resp = client.send(request, stream=True)
            if self._cancel.is_set():
                raise _Cancelled()
            if resp.status_code != 200:
                body = resp.read()
                self._close_response()
                assert self._provider is not None
                err = self._provider.error_from_response(resp.status_code, resp.headers, body)
                from .providers.base import retry_after_seconds

                err.retry_after = retry_after_seconds(resp.headers)
                logger.debug("HTTP %d from %s: %s", resp.status_code, req.url, err)
                raise err
            dec = StreamDecoder(self._provider.wire)  # type: ignore[union-attr]
            parts = part.parts
            blocks = part.blocks
            started = False
            ev: Any
            chunks = itertools.chain(resp.iter_raw(), (None,))
            for chunk in chunks:
                if chunk is None:
                    dec.close()
                else:
                    dec.feed(chunk)
                for ev in dec:
                    tp = type(ev)
                    if tp is ContentDelta:
                        try:
                            parts[ev.index].append(ev.text)
                        except KeyError:
                            parts[ev.index] = [ev.text]
                        yield ev
                    elif tp is MessageComplete:
                        if not started and part.start is not None:
                            yield part.start
                        self._complete = ev
                        for _ in chunks:  # drain so the connection is reused
                            pass
                        return
                    elif tp is MessageStart:
                        part.start = ev
                    else:
                        if not started:
                            started = True
                            if part.start is not None:
                                yield part.start
                        if tp is BlockStart:
                            parts[ev.index] = []
                            part.kinds[ev.index] = ev.kind
                        elif tp is BlockComplete:
                            blocks[ev.index] = ev.block
                        yield ev
            raise TruncatedStream("the response ended without a terminal event")
        except httpx.HTTPError as exc:
            if self._cancel.is_set():
                raise _Cancelled() from None
            raise _transport_error(exc, req, cfg.connect_timeout, cfg.read_timeout) from None
        finally:
            self._close_response()

    def _close_response(self) -> None:
        resp, self._resp = self._resp, None
        if resp is not None:
            try:
                resp.close()
            except Exception:
                pass

    def _tools(self, d: _Dispatch) -> Iterator[Event]:
        self._dispatch = d
        for c in d.calls:
            yield ToolCallStart(c)
        for i in d.immediate:
            r = d.results[i]
            assert r is not None
            yield ToolResult(d.calls[i], r.content, r.is_error)
        if d.groups:
            q: queue.SimpleQueue[Any] = queue.SimpleQueue()
            self._q = q
            if self._cancel.is_set():
                raise _Cancelled()
            d.start(q.put)
            while d.pending:
                # wake up at least every 0.2 s so a KeyboardInterrupt that
                # did not interrupt the wait itself is raised promptly
                wait = 0.2
                deadline = d.next_deadline()
                if deadline is not None:
                    wait = min(wait, max(0.0, deadline - time.monotonic()))
                try:
                    item = q.get(timeout=wait)
                except queue.Empty:
                    done = d.expire(time.monotonic())
                else:
                    if item is None or self._cancel.is_set():
                        raise _Cancelled()
                    done = d.accept(*item)
                for i in done:
                    r = d.results[i]
                    assert r is not None
                    yield ToolResult(d.calls[i], r.content, r.is_error)
            self._q = None
        self._finish_tools(d)


def _shutdown_socket(resp: Any) -> None:
    """Wake a thread blocked reading ``resp`` (closing alone may not)."""
    import socket

    try:
        ns = resp.extensions.get("network_stream")
        sock = ns.get_extra_info("socket") if ns is not None else None
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)
    except Exception:
        pass


class AsyncStream(_TurnBase):
    """A turn as an async iterator, on ``httpx.AsyncClient``.  Use ``async
    with``, or ``await stream.aclose()`` when abandoning it early.  Tools
    still run in threads (one per group); the event loop is never blocked."""

    def __init__(self, agent: Agent) -> None:
        super().__init__(agent)
        self._resp: Any = None
        self._aq: asyncio.Queue[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._complete: Any = None
        self._agen = self._run()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        return await self._agen.__anext__()

    async def __aenter__(self) -> AsyncStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel the turn (a no-op once it has ended)."""
        if self._closed:
            return
        self._closed = True
        self._cancel.set()
        if self._resp is not None:
            _shutdown_socket(self._resp)
        if self._aq is not None:
            self._aq.put_nowait(None)
        try:
            await self._agen.aclose()
        except RuntimeError:
            pass  # running in another task: it notices the cancel and ends

    def close(self) -> None:
        """Synchronous cancel request (e.g. from a signal handler or another
        thread): the running ``__anext__`` notices it and ends."""
        self._cancel.set()
        if self._resp is not None:
            _shutdown_socket(self._resp)
        loop, q = self._loop, self._aq
        if loop is not None and q is not None:
            loop.call_soon_threadsafe(q.put_nowait, None)

    async def _run(self) -> AsyncGenerator[Event, None]:
        import asyncio

        try:
            self._setup()
            self._loop = asyncio.get_running_loop()
            while True:
                req = self._request()
                attempt = 0
                while True:
                    part = self._partial = _Partial()
                    try:
                        async for ev in self._attempt(req, part):
                            yield ev
                        break
                    except PantoError as err:
                        if self._cancel.is_set():
                            raise _Cancelled() from None
                        retry = self._retry_decision(err, attempt, bool(part.blocks or part.parts))
                        if retry is None:
                            self._abort(str(err))
                            raise
                        self._partial = None
                        attempt += 1
                        yield retry
                        await asyncio.sleep(retry.delay)
                        if self._cancel.is_set():
                            raise _Cancelled() from None
                out, d = self._finish_round(self._complete)
                yield out
                if d is None:
                    return
                async for ev in self._tools(d):
                    yield ev
        except _Cancelled as exc:
            self._abort(CANCELLED)
            self._ended_by(exc)
        except (GeneratorExit, asyncio.CancelledError, KeyboardInterrupt) as exc:
            self._abort(CANCELLED)
            self._ended_by(exc)
            raise
        except BaseException as exc:
            if not self.done:
                self._abort(str(exc))
            self._ended_by(exc)
            raise
        finally:
            await self._close_response()
            self._closed = True
            if self.agent._hooks and not self._ended:
                # hooks block (a Lua handler may sleep): keep the loop free
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(self._end_turn)
            self._ended = True

    async def _attempt(self, req: PreparedRequest, part: _Partial) -> AsyncIterator[Event]:
        import httpx

        from .decoder import StreamDecoder
        from .providers.base import retry_after_seconds

        cfg = self.config
        client = self.agent._async_http_client()
        try:
            request = client.build_request(
                "POST",
                req.url,
                content=req.body,
                headers=req.headers,
                timeout=httpx.Timeout(
                    cfg.read_timeout, connect=cfg.connect_timeout, pool=cfg.connect_timeout
                ),
            )
            resp = self._resp = await client.send(request, stream=True)
            if self._cancel.is_set():
                raise _Cancelled()
            if resp.status_code != 200:
                body = await resp.aread()
                await self._close_response()
                assert self._provider is not None
                err = self._provider.error_from_response(resp.status_code, resp.headers, body)
                err.retry_after = retry_after_seconds(resp.headers)
                raise err
            dec = StreamDecoder(self._provider.wire)  # type: ignore[union-attr]
            parts = part.parts
            blocks = part.blocks
            started = False
            ev: Any
            it = resp.aiter_raw()
            eof = False
            while not eof:
                try:
                    chunk = await it.__anext__()
                except StopAsyncIteration:
                    eof = True
                    dec.close()
                else:
                    dec.feed(chunk)
                for ev in dec:
                    tp = type(ev)
                    if tp is ContentDelta:
                        try:
                            parts[ev.index].append(ev.text)
                        except KeyError:
                            parts[ev.index] = [ev.text]
                        yield ev
                    elif tp is MessageComplete:
                        if not started and part.start is not None:
                            yield part.start
                        self._complete = ev
                        if not eof:
                            async for _ in it:
                                pass
                        return
                    elif tp is MessageStart:
                        part.start = ev
                    else:
                        if not started:
                            started = True
                            if part.start is not None:
                                yield part.start
                        if tp is BlockStart:
                            parts[ev.index] = []
                            part.kinds[ev.index] = ev.kind
                        elif tp is BlockComplete:
                            blocks[ev.index] = ev.block
                        yield ev
            raise TruncatedStream("the response ended without a terminal event")
        except httpx.HTTPError as exc:
            if self._cancel.is_set():
                raise _Cancelled() from None
            raise _transport_error(exc, req, cfg.connect_timeout, cfg.read_timeout) from None
        finally:
            await self._close_response()

    async def _close_response(self) -> None:
        resp, self._resp = self._resp, None
        if resp is not None:
            try:
                await resp.aclose()
            except BaseException:
                pass

    async def _tools(self, d: _Dispatch) -> AsyncIterator[Event]:
        import asyncio

        self._dispatch = d
        for c in d.calls:
            yield ToolCallStart(c)
        for i in d.immediate:
            r = d.results[i]
            assert r is not None
            yield ToolResult(d.calls[i], r.content, r.is_error)
        if d.groups:
            loop = asyncio.get_running_loop()
            q: asyncio.Queue[Any] = asyncio.Queue()
            self._aq = q
            if self._cancel.is_set():
                raise _Cancelled()
            d.start(lambda item: loop.call_soon_threadsafe(q.put_nowait, item))
            while d.pending:
                deadline = d.next_deadline()
                try:
                    if deadline is None:
                        item = await q.get()
                    else:
                        item = await asyncio.wait_for(
                            q.get(), max(0.0, deadline - time.monotonic())
                        )
                except asyncio.TimeoutError:
                    done = d.expire(time.monotonic())
                else:
                    if item is None or self._cancel.is_set():
                        raise _Cancelled()
                    done = d.accept(*item)
                for i in done:
                    r = d.results[i]
                    assert r is not None
                    yield ToolResult(d.calls[i], r.content, r.is_error)
            self._aq = None
        self._finish_tools(d)
