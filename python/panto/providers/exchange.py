"""One streaming HTTP exchange of a provider round: the transport seam.

``open_stream(client, req, timeouts, error_from_response)`` (sync: the
``http11`` client, or httpx's with a proxy) and ``aopen_stream(...)``
(async: ``httpx.AsyncClient``, or ``ahttp11``'s) send a ``PreparedRequest`` and return the
response once its head is in and it is an event stream.  Everything about
the exchange but the decoding is theirs, so the turn drivers
(``agent/stream_async.py`` and the ``stream_sync.py`` generated from it)
only iterate chunks:

- the status check: a status other than 200, or a 200 whose body is JSON,
  is an error: at most ``ERROR_BODY_LIMIT`` bytes of its body are read, the
  provider turns them into a ``ProviderError`` (``error_from_response``)
  with the ``Retry-After`` delay attached;
- the watchdogs (``Timeouts``): ``first_byte`` bounds the wait for the
  response head, ``idle`` the time between two ``progress()`` calls (the
  driver calls it when the chunks decoded to events: pings and comments are
  not progress); either one firing raises a retryable ``ProviderError``;
- error mapping: a transport error (``http11``'s or httpx's) while sending
  or reading is a retryable ``ProviderError`` with the secrets scrubbed;
- ``drain()`` after the terminal event: at most ``DRAIN_BYTES`` of the rest,
  for ``DRAIN_WAIT`` seconds, so the connection can be reused (a server that
  keeps it open, silent or pinging, cannot hold the turn);
- ``close()`` (idempotent, never raises) and ``interrupt()`` (from any
  thread: wakes a reader blocked on the socket, to cancel).

The sync watchdog is the shared thread of ``transport.Watch``; the async
one is asyncio deadlines: ``timeout_at`` (with a fallback for Python 3.10)
for the head, one lazily re-armed timer per stream for the idle watchdog.
A transport of one's own plugs in here: the drivers see only this module.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import PantoError, ProviderError
from .deadline import timeout, timeout_at
from .transport import (
    Watch,
    abody_chunks,
    aread_error_body,
    asend,
    body_chunks,
    errors,
    host_of,
    is_json,
    logger,
    read_error_body,
    retry_after_seconds,
    send,
    shutdown_socket,
    stall_error,
    transport_error,
)

if TYPE_CHECKING:
    from ..config import Config
    from .base import PreparedRequest

__all__ = [
    "DRAIN_BYTES",
    "DRAIN_WAIT",
    "AsyncStreamResponse",
    "StreamResponse",
    "Timeouts",
    "aopen_stream",
    "open_stream",
    "timeout",
    "timeout_at",
]

#: After the terminal event, how long (seconds) and how much (bytes) of the
#: rest of the body is read so the connection can be reused; a server that
#: sends more, or nothing, is cut off.
DRAIN_WAIT = 0.25
DRAIN_BYTES = 16 * 1024

#: (status, headers, body prefix) -> the provider's error for that response
ErrorFromResponse = Callable[[int, Mapping[str, str], bytes], ProviderError]


class Timeouts:
    """The timeouts of one exchange, in seconds (``[timeouts]``):
    ``connect``, ``read`` (one socket read), and the watchdogs
    ``first_byte`` and ``idle`` (None: off)."""

    __slots__ = ("connect", "first_byte", "idle", "read")

    def __init__(
        self, connect: float, read: float, first_byte: float | None, idle: float | None
    ) -> None:
        self.connect = connect
        self.read = read
        self.first_byte = first_byte
        self.idle = idle

    def send_args(self, first_byte: float | None) -> dict[str, Any]:
        """``transport.send``'s (and ``asend``'s) timeout arguments."""
        return {"connect": self.connect, "read": self.read, "first_byte": first_byte}

    @classmethod
    def of(cls, cfg: Config) -> Timeouts:
        fb, idle = cfg.first_byte_timeout, cfg.idle_timeout
        return cls(
            cfg.connect_timeout,
            cfg.read_timeout,
            float(fb) if fb else None,
            float(idle) if idle else None,
        )


def _status_error(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    url: str,
    error_from_response: ErrorFromResponse,
) -> ProviderError:
    err = error_from_response(status, headers, body)
    err.retry_after = retry_after_seconds(headers)
    logger.debug("HTTP %d from %s: %s", status, url, err)
    return err


# -- sync -------------------------------------------------------------------------------


def open_stream(
    client: Any, req: PreparedRequest, t: Timeouts, error_from_response: ErrorFromResponse
) -> StreamResponse:
    """Send ``req``; the event-stream response, or raise ``PantoError``."""
    try:
        resp = send(client, req.url, req.body, req.headers, **t.send_args(t.first_byte))
        if resp.status_code == 200 and not is_json(resp):
            return StreamResponse(resp, req, t)
        try:
            body = read_error_body(resp)
        finally:
            _close(resp)
    except errors() as exc:
        raise transport_error(exc, req.url, t.connect, t.read, req.secrets) from None  # type: ignore[arg-type]
    raise _status_error(resp.status_code, resp.headers, body, req.url, error_from_response)


def _close(resp: Any) -> None:
    try:
        resp.close()
    except Exception:
        pass


class StreamResponse:
    """An event-stream response (sync): ``iter_chunks()`` its body, under
    the idle watchdog (``progress()`` moves its deadline)."""

    __slots__ = ("_it", "_req", "_resp", "_t", "_watch")

    def __init__(self, resp: Any, req: PreparedRequest, t: Timeouts) -> None:
        self._resp = resp
        self._req = req
        self._t = t
        self._it = body_chunks(resp)
        self._watch = Watch(resp, t.idle)

    def iter_chunks(self) -> Iterator[bytes]:
        """The body's bytes; raises ``ProviderError`` on a transport error
        or a stall."""
        try:
            yield from self._it
        except (PantoError, *errors()) as exc:
            raise self._error(exc) from None
        if self._watch.fired:  # the watchdog cut the connection: not a clean end
            raise self._error(None)

    def _error(self, exc: BaseException | None) -> PantoError:
        w = self._watch
        if w.fired:
            return stall_error(w.fired, host_of(self._req.url), w.idle or 0.0)
        if isinstance(exc, PantoError):
            return exc
        t = self._t
        return transport_error(exc, self._req.url, t.connect, t.read, self._req.secrets)  # type: ignore[arg-type]

    def progress(self) -> None:
        self._watch.progress()

    def drain(self) -> None:
        """Read a bounded rest of the body (see ``DRAIN_WAIT``); never raises."""
        watch = self._watch
        watch.arm(DRAIN_WAIT, "drain")
        n = 0
        try:
            for chunk in self._it:
                n += len(chunk)
                if n > DRAIN_BYTES or watch.fired:
                    break
        except Exception:
            pass
        watch.stop()

    def close(self) -> None:
        self._watch.stop()
        _close(self._resp)

    def interrupt(self) -> None:
        """Wake a reader blocked on the socket (from any thread)."""
        shutdown_socket(self._resp)


# -- async ------------------------------------------------------------------------------


async def aopen_stream(
    client: Any, req: PreparedRequest, t: Timeouts, error_from_response: ErrorFromResponse
) -> AsyncStreamResponse:
    """Send ``req`` on ``client`` (an ``httpx.AsyncClient``, or
    ``transport.async_client``'s); the event-stream response, or raise
    ``PantoError``."""
    try:
        # (the first-byte watchdog is the head's read timeout, as in
        # ``open_stream``: an asyncio deadline around the send cost a
        # timer, its context and its cancel per request, ~3% of a turn's
        # start)
        resp = await asend(client, req.url, req.body, req.headers, **t.send_args(t.first_byte))
        if resp.status_code == 200 and not is_json(resp):
            return AsyncStreamResponse(resp, req, t)
        try:
            body = await aread_error_body(resp)
        finally:
            await _aclose(resp)
    except errors() as exc:
        raise transport_error(exc, req.url, t.connect, t.read, req.secrets) from None  # type: ignore[arg-type]
    raise _status_error(resp.status_code, resp.headers, body, req.url, error_from_response)


async def _aclose(resp: Any) -> None:
    try:
        await resp.aclose()
    except BaseException:
        pass


class AsyncStreamResponse:
    """An event-stream response (async): ``aiter_chunks()`` its body, each
    read under the idle deadline (``progress()`` moves it)."""

    __slots__ = ("_deadline", "_it", "_loop", "_req", "_resp", "_t")

    def __init__(self, resp: Any, req: PreparedRequest, t: Timeouts) -> None:
        import asyncio

        self._resp = resp
        self._req = req
        self._t = t
        self._it = abody_chunks(resp)
        self._loop = asyncio.get_running_loop()
        self._deadline: float | None = None
        self.progress()

    async def aiter_chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes; raises ``ProviderError`` on a transport error
        or a stall.

        The idle watchdog is one timer per stream, re-armed only when it
        fires before the deadline (``progress()`` moved it) and only while
        a read waits: a timeout context per read cost a timer, a heap push
        and a cancel per chunk, a tenth of the loop's CPU at 200 streams."""
        import asyncio

        it = self._it
        loop = self._loop
        task = asyncio.current_task()
        state = {"reading": False, "fired": False}
        handle: asyncio.TimerHandle | None = None

        def check() -> None:
            nonlocal handle
            handle = None
            deadline = self._deadline
            if not state["reading"] or deadline is None or task is None:
                return  # re-armed by the next read
            if loop.time() >= deadline:
                state["fired"] = True
                task.cancel()
            else:
                handle = loop.call_at(deadline, check)

        def stalled() -> ProviderError:
            return stall_error("idle", host_of(self._req.url), self._t.idle or 0.0)

        try:
            while True:
                deadline = self._deadline
                if deadline is not None:
                    if loop.time() >= deadline:
                        raise stalled()
                    if handle is None:
                        handle = loop.call_at(deadline, check)
                state["reading"] = True
                try:
                    chunk = await it.__anext__()
                except StopAsyncIteration:
                    return
                except asyncio.CancelledError:
                    if not state["fired"]:
                        raise
                    uncancel = getattr(task, "uncancel", None)
                    if uncancel is not None:  # (3.11+) the cancel was the watchdog's
                        uncancel()
                    raise stalled() from None
                finally:
                    state["reading"] = False
                yield chunk
                del chunk  # (not held while the next read waits)
        except errors() as exc:
            t = self._t
            raise transport_error(
                exc, self._req.url, t.connect, t.read, self._req.secrets
            ) from None
        finally:
            if handle is not None:
                handle.cancel()

    def progress(self) -> None:
        idle = self._t.idle
        if idle is not None:
            self._deadline = self._loop.time() + idle

    async def adrain(self) -> None:
        """Read a bounded rest of the body (see ``DRAIN_WAIT``); never raises."""
        n = 0
        try:
            async with timeout(DRAIN_WAIT):
                async for chunk in self._it:
                    n += len(chunk)
                    if n > DRAIN_BYTES:
                        break
        except (TimeoutError, Exception):
            pass

    async def aclose(self) -> None:
        await _aclose(self._resp)

    def interrupt(self) -> None:
        """Wake a reader blocked on the socket (from any thread)."""
        shutdown_socket(self._resp)
