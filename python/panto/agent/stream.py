"""The turn stream: one pull iterator over every provider round of a turn and
the tool dispatch between them.

``Agent.run()`` returns a ``Stream``; ``Agent.run_async()`` an
``AsyncStream``.  Both are thin I/O drivers over the same ``Turn`` state
machine (``agent/turn.py``): they send its requests (``providers.transport``),
feed it the decoded events, run its tool groups (``agent/dispatch.py``) and
yield what it answers.  Events, in order::

    [ProviderRetry ...] MessageStart BlockStart ... MessageComplete(final=False)
    ToolCallStart x N   ToolResult x N (as calls finish)
    [ProviderRetry ...] MessageStart ... MessageComplete(final=True)

``MessageComplete(final=True)`` is the last event; after it the iteration
ends.  It never ends before it: a failure raises from ``next()`` instead
(``ProviderError``, ``TruncatedStream``, ``DecodeError``), after the partial
assistant message has been kept in the conversation with ``error`` set.
``MessageComplete.usage`` in a turn stream is the turn's total so far
(``message.usage`` is that message's own).

A response is read up to its terminal event only: then it is closed (a
server that keeps the connection open, silent or sending pings, cannot hold
the turn).  Watchdogs (``[timeouts]``): ``first_byte`` bounds the wait for the
response headers, ``idle`` the time between decoded events (pings and
comments are not progress); either one firing is a retryable error, shown
as a ``ProviderRetry`` when the round had not streamed content yet.

``close()`` (or leaving the ``with`` block, or ``KeyboardInterrupt`` inside
``next()``) cancels: the HTTP response is closed, running ``ToolSource``
batches get ``cancel()``, native tool threads are abandoned, and the
conversation is left valid for the next turn (every tool call gets a result;
the ones that did not finish get an ``is_error`` ``"cancelled"`` result).

Auto-compaction, when a round starts with the context full: a
``CompactionStart`` event, the summary request (a child stream, cancelled
with this one), then ``CompactionEnd`` (also on a failure, with ``error``);
a cancel in between leaves the conversation and the session as they were.

Agent hooks: every dispatched call passes through ``before_tool_call`` and
its result through ``after_tool_call``, both on the call's dispatch thread;
``turn_end`` runs once when the turn ends -- after the final
``MessageComplete`` (when the consumer asks for the next event or closes the
stream), on an error, or on cancel.
"""

from __future__ import annotations

import contextlib
import itertools
import sys
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Generator, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import PantoError, TruncatedStream
from ..events import Event
from ..providers import transport as tp
from . import dispatch
from .turn import Phase, Turn, TurnContext, failed_before_start

if TYPE_CHECKING:
    import asyncio
    import queue

    from ..providers.base import PreparedRequest

__all__ = ["AsyncStream", "Stream"]

#: After the terminal event, how long (seconds) and how much (bytes) of the
#: rest of the body is read so the connection can be reused; a server that
#: sends more, or nothing, is cut off.
DRAIN_WAIT = 0.25
DRAIN_BYTES = 16 * 1024

#: The turn decodes with ``StreamDecoder(merge_deltas=True)``: the text
#: deltas of one block found in one network read come as one ContentDelta
#: (their texts joined), one Python object per run instead of one per delta
#: (docs/decoding.md, "Threads and performance").  Nothing else changes: the
#: text arrives at the same moment (it was all in that read), in order, and
#: the message, the session, hooks and what is shown are the same; only how
#: the text of one read is cut into events differs, and that already
#: depends on how the provider and the network cut the stream.
MERGE_DELTAS = True

_STREAMING = Phase.STREAMING
_DISPATCHING = Phase.DISPATCHING
_REQUESTING = Phase.REQUESTING


def _aio() -> tuple[type[BaseException], ...]:
    """asyncio.CancelledError, if asyncio is loaded (it is imported lazily:
    without it, no task can have been cancelled)."""
    aio = sys.modules.get("asyncio")
    return (aio.CancelledError,) if aio is not None else ()


class _Cancelled(Exception):
    """Internal: the stream was closed from another thread or task."""


class _TimeoutAt:
    """``asyncio.timeout_at`` for Python 3.10, which lacks it: cancels the
    task at ``when`` (loop time) and turns that cancel into ``TimeoutError``.
    (3.10 has no ``Task.uncancel``: a cancel from elsewhere in the same
    instant as the deadline is taken for the timeout.)"""

    def __init__(self, when: float | None) -> None:
        self._when = when
        self._handle: Any = None
        self._fired = False

    async def __aenter__(self) -> _TimeoutAt:
        import asyncio

        if self._when is not None:
            task = asyncio.current_task()
            assert task is not None
            self._handle = asyncio.get_running_loop().call_at(self._when, self._fire, task)
        return self

    def _fire(self, task: Any) -> None:
        self._fired = True
        task.cancel()

    async def __aexit__(self, tp: Any, exc: Any, tb: Any) -> bool:
        import asyncio

        if self._handle is not None:
            self._handle.cancel()
        if self._fired and tp is asyncio.CancelledError:
            raise TimeoutError from None
        return False


def timeout_at(when: float | None) -> Any:
    """``async with timeout_at(loop_time):`` -- ``asyncio.timeout_at`` (3.11+)
    or :class:`_TimeoutAt` (3.10); None: no deadline."""
    import asyncio

    impl = getattr(asyncio, "timeout_at", None)
    return impl(when) if impl is not None else _TimeoutAt(when)


def timeout(seconds: float | None) -> Any:
    """``async with timeout(seconds):`` (see :func:`timeout_at`)."""
    import asyncio

    if seconds is None:
        return timeout_at(None)
    return timeout_at(asyncio.get_running_loop().time() + seconds)


def _timeouts(cfg: Any) -> tuple[float | None, float | None]:
    """(first_byte, idle) watchdog seconds, None when off."""
    fb, idle = cfg.first_byte_timeout, cfg.idle_timeout
    return (float(fb) if fb else None), (float(idle) if idle else None)


class _Driver:
    """What the sync and async drivers share: the turn, the cancel flag and
    the read-only views of the turn's progress."""

    def __init__(self, open_turn: Callable[[], TurnContext], hooks: Any = None) -> None:
        self._open = open_turn
        self._hooks = hooks
        self.turn: Turn | None = None
        self._closed = False
        self._cancel = threading.Event()
        self._resp: Any = None
        self._ended = False
        #: the summarizing stream of an auto-compaction in progress
        self._child: Any = None

    @property
    def done(self) -> bool:
        return self.turn is not None and self.turn.ended

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def usage(self) -> Any:
        from ..conversation import Usage

        return self.turn.usage if self.turn is not None else Usage()

    @property
    def messages(self) -> list[Any]:
        return self.turn.messages if self.turn is not None else []

    @property
    def rounds(self) -> int:
        return self.turn.rounds if self.turn is not None else 0

    def _begin(self) -> Turn:
        try:
            ctx = self._open()
        except BaseException as exc:
            self._end_info = failed_before_start(str(exc) or type(exc).__name__)
            raise
        if ctx.hooks is not None:
            self._hooks = ctx.hooks
        turn = self.turn = Turn(ctx)
        return turn

    def _stop(self, exc: BaseException | None) -> None:
        """The generator is ending (``exc``: why, None when it finished)."""
        turn = self.turn
        if turn is None or turn.ended:
            return
        if exc is None or isinstance(exc, (_Cancelled, GeneratorExit, KeyboardInterrupt, *_aio())):
            dispatch.cancel_owners(turn.cancel())
        else:
            dispatch.cancel_owners(turn.fail(str(exc) or type(exc).__name__))

    def _set_child(self, child: Any) -> None:
        """The auto-compaction's summarizing stream (None when it ended):
        closed when this stream is."""
        self._child = child
        if child is not None and self._cancel.is_set():
            child.close()

    def _close_child(self) -> None:
        child = self._child
        if child is not None:
            child.close()

    def _compaction_done(self, end: Any) -> Event | None:
        """After ``ctx.compact``: raise ``_Cancelled`` when this stream was
        cancelled meanwhile; else the ``CompactionEnd`` event to yield."""
        self._child = None
        if self._cancel.is_set():
            raise _Cancelled()
        return end  # type: ignore[no-any-return]

    def _turn_end_info(self) -> dict[str, Any] | None:
        if self._ended:
            return None
        self._ended = True
        if self.turn is not None:
            return self.turn.end()
        return getattr(self, "_end_info", None)

    def _end_turn(self) -> None:
        """Fire ``turn_end`` (once)."""
        info = self._turn_end_info()
        if info is not None and self._hooks:
            self._hooks.turn_end(info)


def _stall(watch: tp.Watch | None, req: PreparedRequest) -> PantoError | None:
    """The watchdog's error when it is what ended the attempt."""
    if watch is not None and watch.fired:
        return tp.stall_error(watch.fired, tp.host_of(req.url), watch.idle or 0.0)
    return None


class Stream(_Driver):
    """A turn, as a pull iterator (see the module docstring).  Use it in a
    ``with`` block, or call ``close()`` when abandoning it early."""

    def __init__(self, open_turn: Callable[[], TurnContext], hooks: Any = None) -> None:
        super().__init__(open_turn, hooks)
        self._q: queue.SimpleQueue[Any] | None = None
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

    cancel = close

    def _interrupt(self) -> None:
        self._close_child()
        resp = self._resp
        if resp is not None:
            tp.shutdown_socket(resp)
        q = self._q
        if q is not None:
            q.put(None)
        turn = self.turn
        r = turn.tools if turn is not None else None
        if r is not None:
            dispatch.cancel_owners([g.owner for g in r.groups if not g.done])

    # the generator ---------------------------------------------------------

    def _run(self) -> Generator[Event, None, None]:
        try:
            turn = self._begin()
            while True:
                phase = turn.phase
                if phase is _REQUESTING:
                    if turn.compaction_due():
                        yield turn.compaction_start()
                        try:
                            end = turn.ctx.compact(self._set_child)  # type: ignore[misc]
                        finally:
                            self._child = None
                        end = self._compaction_done(end)
                        if end is not None:
                            yield end
                    req = turn.request()
                    try:
                        yield from self._attempt(turn, req)
                    except PantoError as err:
                        if self._cancel.is_set():
                            raise _Cancelled() from None
                        retry = turn.attempt_failed(err)
                        if retry is None:
                            raise
                        yield retry
                        if self._cancel.wait(retry.delay):
                            raise _Cancelled() from None
                elif phase is _DISPATCHING:
                    yield from self._tools(turn)
                else:
                    return
        except _Cancelled as exc:
            self._stop(exc)
        except BaseException as exc:
            self._stop(exc)
            raise
        finally:
            self._close_response()
            self._closed = True
            self._end_turn()

    def _attempt(self, turn: Turn, req: PreparedRequest) -> Iterator[Event]:
        """One HTTP attempt, up to the terminal event.  Raises PantoError."""
        ctx = turn.ctx
        cfg = ctx.config
        first_byte, idle = _timeouts(cfg)
        assert ctx.http_client is not None
        client = ctx.http_client()
        watch: tp.Watch | None = None
        try:
            resp = self._resp = tp.send(
                client,
                req.url,
                req.body,
                req.headers,
                connect=cfg.connect_timeout,
                read=cfg.read_timeout,
                first_byte=first_byte,
            )
            if self._cancel.is_set():
                raise _Cancelled()
            if resp.status_code != 200 or tp.is_json(resp):
                body = tp.read_error_body(resp)
                self._close_response()
                err = ctx.provider.error_from_response(resp.status_code, resp.headers, body)
                err.retry_after = tp.retry_after_seconds(resp.headers)
                tp.logger.debug("HTTP %d from %s: %s", resp.status_code, req.url, err)
                raise err
            watch = tp.Watch(resp, idle)
            # (imported once the request is out: the core's load is not on
            # the way to the first byte)
            from ..decoder import StreamDecoder

            dec = StreamDecoder(ctx.provider.wire, merge_deltas=MERGE_DELTAS)
            accept = turn.accept_many
            chunks = itertools.chain(tp.body_chunks(resp), (None,))
            for chunk in chunks:
                if chunk is None:
                    dec.close()
                else:
                    dec.feed(chunk)
                out = accept(dec)
                if turn.phase is not _STREAMING:
                    # the terminal event: the turn moves on without reading
                    # further (a short bounded drain only)
                    if chunk is not None:
                        self._drain(chunks, watch)
                    watch.stop()
                    self._close_response()
                    yield from out
                    return
                if turn.progressed:
                    watch.progress()
                yield from out
            raise TruncatedStream("the response ended without a terminal event")
        except (PantoError, *tp.errors()) as exc:
            if self._cancel.is_set():
                raise _Cancelled() from None
            stalled = _stall(watch, req)
            if stalled is not None:
                raise stalled from None
            if isinstance(exc, PantoError):
                raise
            raise tp.transport_error(
                exc, req.url, cfg.connect_timeout, cfg.read_timeout, req.secrets
            ) from None
        finally:
            if watch is not None:
                watch.stop()
            self._close_response()

    @staticmethod
    def _drain(chunks: Iterator[bytes | None], watch: tp.Watch) -> None:
        watch.arm(DRAIN_WAIT, "drain")
        n = 0
        try:
            for chunk in chunks:
                if chunk is None:
                    break
                n += len(chunk)
                if n > DRAIN_BYTES or watch.fired:
                    break
        except Exception:
            pass
        watch.fired = None

    def _close_response(self) -> None:
        resp, self._resp = self._resp, None
        if resp is not None:
            try:
                resp.close()
            except Exception:
                pass

    def _tools(self, turn: Turn) -> Iterator[Event]:
        r = turn.tools
        assert r is not None
        yield from turn.start_tools(time.monotonic())
        if turn.phase is not _DISPATCHING:
            return
        import queue  # here: a turn without tool calls never needs it

        q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._q = q
        if self._cancel.is_set():
            raise _Cancelled()
        dispatch.start(r, turn.ctx.hooks, q.put)
        while turn.phase is _DISPATCHING:
            # wake up at least every 0.2 s so a KeyboardInterrupt that
            # did not interrupt the wait itself is raised promptly
            wait = 0.2
            deadline = turn.next_deadline()
            if deadline is not None:
                wait = min(wait, max(0.0, deadline - time.monotonic()))
            try:
                item = q.get(timeout=wait)
            except queue.Empty:
                out, owners = turn.expire(time.monotonic())
                dispatch.cancel_owners(owners)
            else:
                if item is None or self._cancel.is_set():
                    raise _Cancelled()
                out = turn.tool_results(*item)
            yield from out
        self._q = None


class AsyncStream(_Driver):
    """A turn as an async iterator, on ``httpx.AsyncClient``.  Use ``async
    with``, or ``await stream.aclose()`` when abandoning it early.  Tools
    still run in threads (one per group); the event loop is never blocked."""

    def __init__(self, open_turn: Callable[[], TurnContext], hooks: Any = None) -> None:
        super().__init__(open_turn, hooks)
        self._aq: asyncio.Queue[Any] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
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
        self._close_child()
        if self._resp is not None:
            tp.shutdown_socket(self._resp)
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
        self._close_child()
        if self._resp is not None:
            tp.shutdown_socket(self._resp)
        loop, q = self._loop, self._aq
        if loop is not None and q is not None:
            loop.call_soon_threadsafe(q.put_nowait, None)

    def cancel(self) -> None:
        """``close()``, and when the turn is not running (never iterated,
        or suspended) cancel its bookkeeping now."""
        self.close()
        turn = self.turn
        if turn is not None and not turn.ended:
            dispatch.cancel_owners(turn.cancel())

    async def _run(self) -> AsyncGenerator[Event, None]:
        import asyncio

        try:
            # the agent's bookkeeping at the start (open calls answered, queued
            # prompts) writes to the store: not on the event loop
            self._loop = asyncio.get_running_loop()
            turn = await asyncio.to_thread(self._begin)
            turn.deferred = True
            while True:
                await self._persist()  # before a request or a compaction: in order
                phase = turn.phase
                if phase is _REQUESTING:
                    if turn.compaction_due():
                        yield turn.compaction_start()
                        try:
                            end = await asyncio.to_thread(turn.ctx.compact, self._set_child)  # type: ignore[arg-type]
                        finally:
                            self._close_child()  # a cancelled task leaves the thread running
                            self._child = None
                        end = self._compaction_done(end)
                        if end is not None:
                            yield end
                    req = turn.request()
                    try:
                        async for ev in self._attempt(turn, req):
                            yield ev
                    except PantoError as err:
                        if self._cancel.is_set():
                            raise _Cancelled() from None
                        retry = turn.attempt_failed(err)
                        if retry is None:
                            raise
                        yield retry
                        await asyncio.sleep(retry.delay)
                        if self._cancel.is_set():
                            raise _Cancelled() from None
                elif phase is _DISPATCHING:
                    async for ev in self._tools(turn):
                        yield ev
                else:
                    return
        except _Cancelled as exc:
            self._stop(exc)
        except BaseException as exc:
            self._stop(exc)
            raise
        finally:
            await self._close_response()
            self._closed = True
            await self._persist()
            if self._hooks and not self._ended:
                # hooks block (a Lua handler may sleep): keep the loop free
                with contextlib.suppress(Exception):
                    await asyncio.to_thread(self._end_turn)
            self._ended = True

    async def _attempt(self, turn: Turn, req: PreparedRequest) -> AsyncIterator[Event]:
        import asyncio

        import httpx

        from ..decoder import StreamDecoder

        ctx = turn.ctx
        cfg = ctx.config
        first_byte, idle = _timeouts(cfg)
        assert ctx.async_http_client is not None
        client = ctx.async_http_client()
        host = httpx.URL(req.url).host
        loop = asyncio.get_running_loop()
        try:
            request = client.build_request(
                "POST",
                req.url,
                content=req.body,
                headers=tp.prepare_headers(req.headers),
                timeout=tp.timeouts(cfg.connect_timeout, cfg.read_timeout, None),
            )
            try:
                async with timeout(first_byte):
                    resp = self._resp = await client.send(request, stream=True)
            except TimeoutError:
                raise tp.stall_error("first_byte", host, first_byte or 0.0) from None
            if self._cancel.is_set():
                raise _Cancelled()
            if resp.status_code != 200 or tp.is_json(resp):
                body = await tp.aread_error_body(resp)
                await self._close_response()
                err = ctx.provider.error_from_response(resp.status_code, resp.headers, body)
                err.retry_after = tp.retry_after_seconds(resp.headers)
                raise err
            dec = StreamDecoder(ctx.provider.wire, merge_deltas=MERGE_DELTAS)
            accept = turn.accept_many
            it = tp.abody_chunks(resp)
            eof = False
            deadline = loop.time() + idle if idle is not None else None
            while not eof:
                try:
                    async with timeout_at(deadline):
                        chunk = await it.__anext__()
                except StopAsyncIteration:
                    eof = True
                    dec.close()
                except TimeoutError:
                    raise tp.stall_error("idle", host, idle or 0.0) from None
                else:
                    dec.feed(chunk)
                out = accept(dec)
                if turn.phase is not _STREAMING:
                    if not eof:
                        await self._drain(it)
                    await self._close_response()
                    await self._persist()
                    for ev in out:
                        yield ev
                    return
                if turn.progressed and idle is not None:
                    deadline = loop.time() + idle
                for ev in out:
                    yield ev
            raise TruncatedStream("the response ended without a terminal event")
        except httpx.HTTPError as exc:
            if self._cancel.is_set():
                raise _Cancelled() from None
            raise tp.transport_error(
                exc, req.url, cfg.connect_timeout, cfg.read_timeout, req.secrets
            ) from None
        finally:
            await self._close_response()

    async def _persist(self) -> None:
        """Perform the turn's pending commits (``Turn.deferred``) in a worker
        thread, in order: a store's write (and fsync, or SQL) never runs on
        the event loop.  If the wait is interrupted, the thread still
        finishes them."""
        turn = self.turn
        if turn is None or not turn.pending:
            return
        import asyncio

        persist, pending = turn.ctx.persist, turn.take_pending()

        def run() -> None:
            for msgs in pending:
                persist(msgs)

        await asyncio.to_thread(run)

    @staticmethod
    async def _drain(it: Any) -> None:

        n = 0
        try:
            async with timeout(DRAIN_WAIT):
                async for chunk in it:
                    n += len(chunk)
                    if n > DRAIN_BYTES:
                        break
        except (TimeoutError, Exception):
            pass

    async def _close_response(self) -> None:
        resp, self._resp = self._resp, None
        if resp is not None:
            try:
                await resp.aclose()
            except BaseException:
                pass

    async def _tools(self, turn: Turn) -> AsyncIterator[Event]:
        import asyncio

        r = turn.tools
        assert r is not None
        for ev in turn.start_tools(time.monotonic()):
            yield ev
        if turn.phase is not _DISPATCHING:
            return
        loop = asyncio.get_running_loop()
        q: asyncio.Queue[Any] = asyncio.Queue()
        self._aq = q
        if self._cancel.is_set():
            raise _Cancelled()
        dispatch.start(
            r, turn.ctx.hooks, lambda item: loop.call_soon_threadsafe(q.put_nowait, item)
        )
        while turn.phase is _DISPATCHING:
            deadline = turn.next_deadline()
            try:
                if deadline is None:
                    item = await q.get()
                else:
                    item = await asyncio.wait_for(q.get(), max(0.0, deadline - time.monotonic()))
            except asyncio.TimeoutError:
                out, owners = turn.expire(time.monotonic())
                dispatch.cancel_owners(owners)
            else:
                if item is None or self._cancel.is_set():
                    raise _Cancelled()
                out = turn.tool_results(*item)
            await self._persist()
            for ev in out:
                yield ev
        self._aq = None
