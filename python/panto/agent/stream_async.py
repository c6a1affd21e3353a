"""The turn driver, written once: ``AsyncStream`` here, and ``Stream`` in
``stream_sync.py``, generated from this file by ``scripts/unasync.py``
(``async``/``await`` dropped, async names mapped to their sync twins;
``python scripts/unasync.py --check`` fails when the two differ).  Edit
this file, then run ``python scripts/unasync.py``.

The driver sends the ``Turn``'s requests through the transport seam
(``providers/exchange.py``: ``aopen_stream`` / ``open_stream``), feeds it
the decoded chunks, runs its tool rounds, performs its commits (the store's
appends) and yields what it answers.  Where the two flavours differ -- how
they wait, where blocking work runs, their cancel methods -- they call
``io_async`` / ``io_sync``.  See ``stream.py`` for the events and the
cancel rules.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncGenerator, AsyncIterator
from typing import TYPE_CHECKING, Any

from ..errors import PantoError, TruncatedStream
from ..events import Event
from ..providers.exchange import Timeouts, aopen_stream
from . import io_async as io
from .driver import (
    DISPATCHING,
    DONE,
    MERGE_DELTAS,
    REQUESTING,
    STREAMING,
    TIMED_OUT,
    Cancelled,
    persist_all,
)
from .turn import Turn

if TYPE_CHECKING:
    from collections.abc import Callable

    from ..providers.base import PreparedRequest
    from .turn import TurnContext

__all__ = ["AsyncStream"]


class AsyncStream(io.Base):
    """A turn, as an (async) iterator over its events (see ``stream.py``).
    Use ``async with``, or ``await stream.aclose()`` when abandoning it
    early."""

    def __init__(
        self, open_turn: Callable[[], TurnContext], hooks: Any = None, *, open_blocks: bool = True
    ) -> None:
        super().__init__(open_turn, hooks, open_blocks=open_blocks)
        self._step = io.step_guard()  # held while a step of the generator runs
        self._agen = self._run()

    def __aiter__(self) -> AsyncIterator[Event]:
        return self

    async def __anext__(self) -> Event:
        with self._step:
            return await self._agen.__anext__()

    async def __aenter__(self) -> AsyncStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Cancel the turn (a no-op once it has ended).  While a step runs
        elsewhere (another thread or task) this only signals the cancel,
        which that step notices (its read is woken, its tool wait too)."""
        if self._closed:
            return
        self._closed = True
        self._request_cancel()
        if self._step.acquire(blocking=False):
            try:
                await self._agen.aclose()
            finally:
                self._step.release()

    # the generator ---------------------------------------------------------

    async def _run(self) -> AsyncGenerator[Event, None]:
        try:
            # opening the turn writes nothing (its commits are pending, made
            # below); it blocks only when it may start a server of its own
            if self._open_blocks:
                turn = await io.run_blocking(self._begin)
            else:
                await io.admit_request()  # (see below; its request goes on in this slice)
                turn = self._begin()
            while True:
                await self._persist()  # before a request or a compaction: in order
                phase = turn.phase
                if phase is REQUESTING:
                    # many sessions' requests starting at once (their turns
                    # began together, or their tool results came back
                    # together) take turns with the rest of the loop
                    await io.admit_request()
                    if turn.compaction_due():
                        yield turn.compaction_start()
                        end = await self._compact(turn)
                        if end is not None:
                            yield end
                    if turn.request_blocks():  # an extension's prepare or hook
                        req = await io.run_blocking(turn.request)
                    else:
                        req = turn.request()
                    try:
                        async for ev in self._attempt(turn, req):
                            yield ev
                            del ev  # (not held while the attempt waits for its next read)
                    except PantoError as err:
                        if self._cancel.is_set():
                            raise Cancelled() from None
                        retry = turn.attempt_failed(err)
                        if retry is None:
                            raise
                        yield retry
                        if await io.wait_cancelled(self._cancel, retry.delay):
                            raise Cancelled() from None
                elif phase is DISPATCHING:
                    async for ev in self._run_tools(turn):
                        yield ev
                else:
                    return
        except Cancelled as exc:
            self._stop(exc)
        except BaseException as exc:
            self._stop(exc)
            raise
        finally:
            await self._close_response()
            self._closed = True
            await self._persist()
            if self._hooks and not self._ended:
                # hooks block (a Lua handler may sleep): async, off the event loop
                with contextlib.suppress(Exception):
                    await io.run_blocking(self._end_turn)
            self._ended = True

    async def _attempt(self, turn: Turn, req: PreparedRequest) -> AsyncIterator[Event]:
        """One HTTP attempt, up to the terminal event.  Raises PantoError."""
        ctx = turn.ctx
        assert ctx.async_http_client is not None
        try:
            resp = self._resp = await aopen_stream(
                ctx.async_http_client(),
                req,
                Timeouts.of(ctx.config),
                ctx.provider.error_from_response,
            )
            if self._cancel.is_set():
                raise Cancelled()
            # (imported once the request is out: the core's load is not on
            # the way to the first byte)
            from ..decoder import StreamDecoder

            dec = StreamDecoder(ctx.provider.wire, merge_deltas=MERGE_DELTAS)
            accept = turn.accept_many
            out: list[Event] = []
            async for chunk in resp.aiter_chunks():
                dec.feed(chunk)
                del chunk  # (copied: not held while the next read waits)
                out = accept(dec)
                if turn.phase is not STREAMING:
                    # the terminal event: the turn moves on without reading
                    # further (a short bounded drain only)
                    await resp.adrain()
                    break
                if turn.progressed:
                    resp.progress()
                # (popped: the read's events are not held while the next
                # read waits; a merged delta's text is the read's whole text)
                out.reverse()
                while out:
                    yield out.pop()
                turn.raise_read_error()
            else:
                dec.close()
                out = accept(dec)
                if turn.phase is STREAMING and turn.read_error is None:
                    raise TruncatedStream("the response ended without a terminal event")
            await self._close_response()
            await self._persist()
            for ev in out:  # noqa: UP028 - (no "yield from" in async; the sync twin is generated)
                yield ev
            turn.raise_read_error()
        except PantoError:
            if self._cancel.is_set():
                raise Cancelled() from None
            raise
        finally:
            await self._close_response()

    async def _compact(self, turn: Turn) -> Event | None:
        """Auto-compaction: the summarizing turn runs as a nested turn of
        this same driver (a child ``AsyncStream``, closed when this stream
        is).  The ``CompactionEnd`` event to yield, or None (nothing to
        compact, or the summary was cancelled: nothing changed).  Raises
        ``Cancelled`` when this stream was cancelled meanwhile."""
        assert turn.ctx.compaction is not None
        job = await io.run_blocking(turn.ctx.compaction)  # the before_compact hooks
        end = None
        if job is not None:
            child = AsyncStream(job.open_turn)
            self._set_child(child)
            try:
                async for _ in child:
                    pass
            except PantoError as exc:
                end = job.failed(exc)
            else:
                if child.turn is not None and child.turn.phase is DONE:
                    end = await io.run_blocking(job.finish)  # the store's compaction entry
            finally:
                await child.aclose()
        return self._compaction_done(end)

    async def _close_response(self) -> None:
        resp, self._resp = self._resp, None
        if resp is not None:
            await resp.aclose()

    async def _persist(self) -> None:
        """Perform the turn's pending commits (the store's appends), in
        order, before the events that report them are yielded."""
        turn = self.turn
        if turn is None or not turn.pending:
            return
        blocks = turn.ctx.persist_blocks
        if blocks is not None and not blocks():
            # nothing to write (no store): no hop to a worker thread
            persist_all(turn.ctx.persist, turn.take_pending())
        else:
            await io.run_blocking(persist_all, turn.ctx.persist, turn.take_pending())

    async def _run_tools(self, turn: Turn) -> AsyncIterator[Event]:
        """The tool round: its groups started (``io.Base._start_tools``:
        async, a task per group with a cancel token per call; sync, a thread
        per group), the results reported to the turn as they arrive, and the
        groups whose deadline passed expired (their calls cancelled)."""
        r = turn.tools
        assert r is not None
        for ev in turn.start_tools(time.monotonic()):
            yield ev
        if turn.phase is not DISPATCHING:
            return
        inbox = self._inbox = io.Inbox()
        if self._cancel.is_set():
            raise Cancelled()
        self._start_tools(r, turn.ctx, inbox)
        while turn.phase is DISPATCHING:
            item = await inbox.get(turn.next_deadline())
            if item is TIMED_OUT:
                out = self._expire(turn)
            else:
                if item is None or self._cancel.is_set():
                    raise Cancelled()
                out = turn.tool_results(*item)
            await self._persist()
            for ev in out:
                yield ev
        self._inbox = None
