"""A small asyncio HTTP/1.1 client: the async twin of ``http11``.

httpx/httpcore spend most of a streamed round's client CPU in layers a
provider round does not need (anyio, the h11 state machine, the pool's
bookkeeping, which grows with the open connections on every request start
and finish: one shared ``httpx.AsyncClient`` collapsed at 256 streams).
This client does what a round needs: one request at a time per connection,
a body given as bytes, the response head, its body framed by
``content-length``, ``transfer-encoding: chunked`` or the end of the
connection (parsed by ``httptools``, llhttp in C, already a dependency for
uvicorn), ``gzip``/``deflate`` undone on demand, keep-alive, TLS with SNI
and verification (one context per client), and the same error classes as
``http11`` (``transport.transport_error`` maps them).

Connections to one origin (scheme, host, port) form a ``Pool`` of bounded
size whose acquire and release are O(1): a stack of idle connections
(checked before reuse: the protocol sees the server's close at once) and a
queue of waiters.  ``Response.aiter_reads`` gives everything that arrived
since the last read in one piece (a proxy writes it on so); reading is
paused while more
than ``_HIGH_WATER`` bytes wait unread.  Timeouts cost no timer per read:
one timer per connection is re-armed only when it fires early.

``transport.async_client`` chooses: this client, or httpx's when a proxy is
configured in the environment (httpx speaks to proxies, this client does
not); ``transport.asend`` sends on either.
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import AsyncIterator, Mapping
from functools import lru_cache
from typing import Any

from . import deadline
from .http11 import (
    MAX_HEAD,
    ConnectError,
    ConnectTimeout,
    ContentDecoder,
    Headers,
    HTTPError,
    ReadError,
    ReadTimeout,
    RemoteProtocolError,
    TimeoutException,
    WriteError,
    WriteTimeout,
    split_url,
)

__all__ = ["AsyncClient", "PoolTimeout", "Response"]

#: Unread body bytes above which the connection stops reading (flow control).
_HIGH_WATER = 16 * 1024
#: The most one socket read takes (into the client's one read buffer; http11
#: and httpx read as much: one read's deltas make one event on each).
_READ_SIZE = 64 * 1024
#: Connections per origin unless the client is told otherwise.
DEFAULT_MAX_CONNECTIONS = 512
#: What a client reads from its sockets in one iteration of the event loop
#: at full size (``_READ_SIZE`` a read); past it, a read takes at most
#: ``_MIN_READ``.  What is read in one iteration is consumed in the next
#: (the readers woken run first), so this bounds the bytes held between the
#: two when many connections are ready at once: freed afterwards, they stay
#: in the allocator's heap, so they are the process's RSS.  (256 streams in
#: a burst read up to 256 x 64 KiB in one iteration: ~110 KB of RSS a
#: stream; with the budget, about ``_ITER_BUDGET`` + 256 x ``_MIN_READ``.)
#: One connection alone still reads 64 KiB at a time (one event per block
#: per read: ``StreamDecoder(merge_deltas=True)``).
_ITER_BUDGET = 1024 * 1024
_MIN_READ = 4 * 1024
#: Seconds a host name's addresses are reused for new connections (aiohttp's
#: default too).  asyncio looks a name up for every connection, each in a
#: thread of the default executor: a burst of new sessions to one provider
#: made hundreds of lookups where one answers them all.
DNS_TTL = 10.0


#: an address to connect to: (socket family, IP)
_Addr = tuple[int, str]


@lru_cache(maxsize=256)
def _ip_literal(host: str) -> int | None:
    """The socket family of an IP literal (``None``: a name to look up)."""
    import ipaddress
    import socket

    try:
        ip = ipaddress.ip_address(host.partition("%")[0])
    except ValueError:
        return None
    return socket.AF_INET6 if ip.version == 6 else socket.AF_INET


def _is_tls_error(e: OSError) -> bool:
    import ssl

    return isinstance(e, (ssl.SSLError, ssl.CertificateError))


class PoolTimeout(TimeoutException):
    """Every connection of the origin's pool stayed busy for the whole
    connect timeout."""


_Key = tuple[str, str, int]


@lru_cache(maxsize=256)
def _target(url: str) -> tuple[_Key, str, str]:
    """(origin key, request target, host header) of ``url``."""
    scheme, host, port, target = split_url(url)
    host_h = f"[{host}]" if ":" in host else host
    if port != (443 if scheme == "https" else 80):
        host_h = f"{host_h}:{port}"
    return (scheme, host, port), target, host_h


class _ReadBuffer:
    """A client's one read buffer, shared by its connections (each read is
    parsed at once, the body copied out as bytes), and what they read in
    the current loop iteration (see ``_ITER_BUDGET``)."""

    __slots__ = ("armed", "buf", "small", "used")

    def __init__(self) -> None:
        self.buf = memoryview(bytearray(_READ_SIZE))
        self.small = self.buf[:_MIN_READ]
        self.used = 0
        self.armed = False

    def get(self) -> memoryview:
        return self.buf if self.used < _ITER_BUDGET else self.small

    def count(self, n: int, loop: asyncio.AbstractEventLoop) -> None:
        self.used += n
        if not self.armed:
            self.armed = True
            loop.call_soon(self._next_iteration)

    def _next_iteration(self) -> None:
        self.used = 0
        self.armed = False


class _Conn(asyncio.BufferedProtocol):
    """One connection: its transport, the response parser, and the state of
    the response being read (body bytes not yet consumed, end, error).

    A buffered protocol: the socket is read into the client's one read
    buffer (``_ReadBuffer``), at most ``_READ_SIZE`` at a time (less once
    the client read ``_ITER_BUDGET`` in this loop iteration), so an idle or
    paused connection holds no read buffer of its own."""

    def __init__(self, loop: asyncio.AbstractEventLoop, reads: _ReadBuffer) -> None:
        import httptools

        self.loop = loop
        self.reads = reads
        self.transport: asyncio.Transport | None = None
        self.parser: Any = httptools.HttpResponseParser(self)
        self.pool: Pool | None = None
        self.busy = False  # a request is in flight
        self.dead = False  # closed, or in a state it cannot be reused from
        self.requests = 0
        # the response being read
        self.status = 0
        self.reason = b""
        self.headers = Headers()
        self.head_size = 0
        self.head_done = False
        self.keep_alive = False
        self.complete = False
        self.body: list[bytes] = []
        self.buffered = 0
        self.error: BaseException | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.paused = False
        self.write_paused = False
        self.drained: asyncio.Future[None] | None = None
        # the read watchdog
        self.timeout: float | None = None
        self.timeout_kind = "read"
        self.last = 0.0
        self.timer: asyncio.TimerHandle | None = None
        self.timer_due = 0.0

    # -- asyncio.Protocol ---------------------------------------------------------

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def get_buffer(self, sizehint: int) -> memoryview:
        return self.reads.get()

    def buffer_updated(self, nbytes: int) -> None:
        reads = self.reads
        reads.count(nbytes, self.loop)
        self.data_received(reads.buf[:nbytes])

    def data_received(self, data: Any) -> None:
        if not self.busy:  # bytes nobody asked for: the connection is unusable
            self.dead = True
            self._close_transport()
            return
        self.last = self.loop.time()
        try:
            self.parser.feed_data(data)
        except Exception as e:  # httptools.HttpParserError and friends
            if self.error is None:
                cause = e.__context__
                self.error = (
                    cause
                    if isinstance(cause, HTTPError)
                    else RemoteProtocolError(f"a malformed response: {e}")
                )
            self.dead = True
            self._close_transport()
        if self.buffered > _HIGH_WATER and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool | None:
        self._ended(None)
        return False  # close the transport

    def connection_lost(self, exc: Exception | None) -> None:
        self._ended(exc)
        self.transport = None
        self.parser = None  # (it refers back to this object)
        fut, self.drained = self.drained, None
        if fut is not None and not fut.done():
            fut.set_result(None)

    def pause_writing(self) -> None:
        self.write_paused = True

    def resume_writing(self) -> None:
        self.write_paused = False
        fut, self.drained = self.drained, None
        if fut is not None and not fut.done():
            fut.set_result(None)

    def _ended(self, exc: BaseException | None) -> None:
        self.dead = True
        if self.pool is not None and not self.busy:
            self.pool.forget(self)  # an idle connection the server closed
        if not self.busy or self.complete or self.error is not None:
            self._wake()
            return
        if self.head_done and self.framing_close():
            self.complete = True  # the body ran to the end of the connection
        elif exc is not None:
            self.error = ReadError(str(exc) or type(exc).__name__)
        elif self.head_done:
            self.error = RemoteProtocolError(
                "the server closed the connection before the response was complete"
            )
        else:
            self.error = RemoteProtocolError("the server closed the connection without a response")
        self._wake()

    # -- httptools callbacks -------------------------------------------------------

    def on_message_begin(self) -> None:
        if self.complete:  # a second response to one request
            self.dead = True

    def on_status(self, reason: bytes) -> None:
        self.reason += reason

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_size += len(name) + len(value)
        if self.head_size > MAX_HEAD:
            raise RemoteProtocolError("the response head is too long")
        k = name.decode("latin-1").lower()
        v = value.decode("latin-1").strip()
        prev = dict.get(self.headers, k)
        dict.__setitem__(self.headers, k, v if prev is None else f"{prev}, {v}")

    def on_headers_complete(self) -> None:
        status = self.parser.get_status_code()
        if 100 <= status < 200 and status != 101:  # 100 Continue: the real head follows
            self.reason = b""
            self.headers = Headers()
            self.head_size = 0
            return
        self.status = status
        self.keep_alive = self.parser.should_keep_alive()
        self.head_done = True

    def on_body(self, data: bytes) -> None:
        self.body.append(data)
        self.buffered += len(data)

    def on_message_complete(self) -> None:
        if self.head_done:
            self.complete = True

    # -- reading -------------------------------------------------------------------

    def framing_close(self) -> bool:
        h = self.headers
        return "content-length" not in h and "chunked" not in (
            dict.get(h, "transfer-encoding") or ""
        )

    def _wake(self) -> None:
        w = self.waiter
        if w is not None and not w.done():
            w.set_result(None)

    def _watch(self) -> None:
        """The read watchdog: fires the waiter with a timeout once nothing
        has arrived for ``timeout`` seconds while someone waits."""
        self.timer = None
        w, t = self.waiter, self.timeout
        if w is None or w.done() or t is None:
            return
        due = self.last + t
        if self.loop.time() >= due:
            if self.error is None:
                if self.timeout_kind == "head":
                    self.error = ReadTimeout("timed out waiting for the response")
                else:
                    self.error = ReadTimeout("timed out reading the response")
            self.dead = True
            self._close_transport()
            w.set_result(None)
        else:
            self.timer_due = due
            self.timer = self.loop.call_at(due, self._watch)

    async def _wait(self, timeout: float | None, kind: str) -> None:
        fut = self.waiter = self.loop.create_future()
        if timeout is not None:
            self.timeout, self.timeout_kind = timeout, kind
            due = self.last = self.loop.time()
            due += timeout
            timer = self.timer
            if timer is None or self.timer_due > due:  # none yet, or too late
                if timer is not None:
                    timer.cancel()
                self.timer_due = due
                self.timer = self.loop.call_at(due, self._watch)
        try:
            await fut
        finally:
            self.waiter = None

    async def read_head(self, timeout: float | None) -> None:
        while not self.head_done:
            if self.error is not None:
                raise self.error
            if self.dead:
                raise RemoteProtocolError("the server closed the connection without a response")
            await self._wait(timeout, "head")

    async def read(self, timeout: float | None) -> list[bytes]:
        """The body's pieces (as framed) received since the last read; []
        at its end."""
        while True:
            body = self.body
            if body:
                self.body = []
                self.buffered = 0
                if self.paused and self.transport is not None:
                    self.paused = False
                    self.transport.resume_reading()
                return body
            if self.complete:
                return body
            if self.error is not None:
                raise self.error
            await self._wait(timeout, "read")

    async def write(self, data: bytes, timeout: float | None) -> None:
        t = self.transport
        if t is None or t.is_closing():
            err = WriteError("the connection is closed")
            err.before_response = True  # type: ignore[attr-defined]
            raise err
        t.write(data)
        if self.write_paused and self.transport is not None:
            fut = self.drained = self.loop.create_future()
            try:
                await asyncio.wait_for(fut, timeout)
            except asyncio.TimeoutError:
                raise WriteTimeout("timed out sending the request") from None

    # -- life cycle ----------------------------------------------------------------

    def start(self) -> None:
        """Ready for a new request's response."""
        self.busy = True
        self.requests += 1
        self.status = 0
        self.reason = b""
        self.headers = Headers()
        self.head_size = 0
        self.head_done = False
        self.complete = False
        self.body.clear()
        self.buffered = 0
        self.error = None
        if self.paused and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()

    def usable(self) -> bool:
        t = self.transport
        return not self.dead and t is not None and not t.is_closing()

    def _close_transport(self) -> None:
        t = self.transport
        if t is not None:
            t.close()

    def abort(self) -> None:
        self.dead = True
        t = self.transport
        if t is not None:
            try:
                t.abort()
            except RuntimeError:  # its loop is closed: the socket goes with it
                pass


class Response:
    """A response whose body is read as it is iterated (``aiter_raw``:
    each piece as framed; ``aiter_reads``: everything that arrived since
    the previous item, framing removed; ``aiter_bytes``: content-encoding
    undone too).  ``aclose()``
    gives a completely read connection back to its pool for reuse and
    closes any other."""

    def __init__(
        self,
        conn: _Conn,
        keep_alive: bool,
        read_timeout: float | None,
        head_only: bool,
    ) -> None:
        self._conn: _Conn | None = conn
        self.status_code = conn.status
        self.reason_phrase = conn.reason.decode("latin-1")
        self.headers = conn.headers
        self._keep_alive = keep_alive
        self._read_timeout = read_timeout
        self._head_only = head_only
        self._started = False
        self.extensions: dict[str, Any] = {}

    @property
    def is_complete(self) -> bool:
        c = self._conn
        return c is None or self._head_only or c.complete

    @property
    def is_closed(self) -> bool:
        return self._conn is None

    def shutdown_socket(self) -> None:
        """Break the connection from any thread (wakes a reader)."""
        conn = self._conn
        if conn is None:
            return
        loop = conn.loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if running is loop:
            conn.abort()
        else:
            try:
                loop.call_soon_threadsafe(conn.abort)
            except RuntimeError:  # the loop is closed
                pass

    def _reader(self) -> _Conn | None:
        if self._started:
            raise RuntimeError("the response body is already being read")
        self._started = True
        return None if self._head_only else self._conn

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body as framed: each piece of each chunk as it was parsed
        (httpx's and ``http11``'s granularity)."""
        conn = self._reader()
        if conn is None:
            return
        timeout = self._read_timeout
        while True:
            pieces = await conn.read(timeout)
            if not pieces:
                return
            for p in pieces:
                yield p
            # a stream waiting for its next read holds none of its last one
            # (hundreds of streams wait at once)
            del pieces, p

    async def aiter_reads(self) -> AsyncIterator[bytes]:
        """The body as it arrives: each item is everything received since
        the previous one (a proxy writes it on in one piece)."""
        conn = self._reader()
        if conn is None:
            return
        timeout = self._read_timeout
        while True:
            pieces = await conn.read(timeout)
            if not pieces:
                return
            yield pieces[0] if len(pieces) == 1 else b"".join(pieces)
            del pieces  # (not held while the next read waits)

    async def aiter_bytes(self) -> AsyncIterator[bytes]:
        """The body with its ``content-encoding`` (gzip, deflate) undone."""
        decoders = []
        enc = self.headers.get("content-encoding") or ""
        for name in reversed([e.strip().lower() for e in enc.split(",") if e.strip()]):
            if name in ("gzip", "x-gzip", "deflate"):
                decoders.append(ContentDecoder(name))
        async for chunk in self.aiter_raw():
            for d in decoders:
                chunk = d.decode(chunk)
            if chunk:
                yield chunk
        if decoders:
            tail = b""
            for d in decoders:
                tail = d.decode(tail) + d.flush()
            if tail:
                yield tail

    async def aread(self) -> bytes:
        return b"".join([c async for c in self.aiter_bytes()])

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is None:
            return
        reuse = (
            self._keep_alive
            and not self._head_only
            and conn.complete
            and conn.error is None
            and conn.usable()
        )
        conn.busy = False
        pool = conn.pool
        if not reuse:
            conn.abort()
        if pool is not None:
            pool.release(conn, reuse)

    async def __aenter__(self) -> Response:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


class Pool:
    """The connections to one origin: at most ``size`` open; idle ones on a
    stack (the most recently used first: its socket is warm), tasks waiting
    for one in a queue.  Acquire and release are O(1)."""

    def __init__(self, client: AsyncClient, key: _Key, size: int) -> None:
        self.client = client
        self.key = key
        self.size = size
        self.open = 0  # connections open or being opened
        self.idle: collections.deque[_Conn] = collections.deque()
        self.waiters: collections.deque[asyncio.Future[_Conn | None]] = collections.deque()

    async def acquire(self, connect_timeout: float | None) -> _Conn:
        idle = self.idle
        while idle:
            conn = idle.pop()
            if conn.usable():
                return conn
            self._discard(conn)
        if self.open < self.size:
            self.open += 1
            return await self._connect(connect_timeout)
        fut: asyncio.Future[_Conn | None] = asyncio.get_running_loop().create_future()
        self.waiters.append(fut)
        try:
            got = await asyncio.wait_for(fut, connect_timeout)
        except asyncio.TimeoutError:
            raise PoolTimeout(
                f"all {self.size} connections to {self.key[1]}:{self.key[2]} stayed busy"
            ) from None
        except asyncio.CancelledError:
            if fut.done() and not fut.cancelled():  # handed over as we were cancelled
                left = fut.result()
                if left is None:
                    self.open -= 1
                    self._wake()
                else:
                    self.release(left, True)
            raise
        if got is None:  # a slot came free: open a connection in it
            return await self._connect(connect_timeout)
        return got

    async def _connect(self, timeout: float | None) -> _Conn:
        try:
            conn = await self.client.connect(self.key, timeout)
        except BaseException:
            self.open -= 1
            self._wake()
            raise
        conn.pool = self
        return conn

    def release(self, conn: _Conn, reuse: bool) -> None:
        if not reuse or self.client.is_closed:
            if not reuse:
                self._discard(conn)
            else:
                conn.abort()
                self._discard(conn)
            return
        waiters = self.waiters
        while waiters:
            w = waiters.popleft()
            if not w.done():
                w.set_result(conn)
                return
        self.idle.append(conn)

    def forget(self, conn: _Conn) -> None:
        """An idle connection closed by the server: its slot comes free now
        (it is dropped from ``idle`` when next met)."""
        if conn.pool is self:
            conn.pool = None
            self.open -= 1
            self._wake()

    def _discard(self, conn: _Conn) -> None:
        if conn.pool is self:
            conn.pool = None
            self.open -= 1
            self._wake()

    def _wake(self) -> None:
        """Slots came free: each goes to the first live waiter, who opens a
        connection in it."""
        waiters = self.waiters
        while waiters and self.open < self.size:
            w = waiters.popleft()
            if not w.done():
                self.open += 1
                w.set_result(None)

    def close(self) -> None:
        idle, self.idle = self.idle, collections.deque()
        for c in idle:
            c.abort()
            self._discard(c)


class AsyncClient:
    """Sends one request at a time per connection; a ``Pool`` of at most
    ``max_connections`` per origin.  The TLS context is ``ssl_context``,
    else made on the first https request by ``make_ssl_context`` (else
    ``ssl.create_default_context``) and kept.  For one event loop."""

    def __init__(
        self,
        make_ssl_context: Any = None,
        *,
        ssl_context: Any = None,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
    ) -> None:
        self._make_ssl = make_ssl_context
        self._ssl: Any = ssl_context
        self.max_connections = max(1, max_connections)
        self._pools: dict[_Key, Pool] = {}
        self._reads = _ReadBuffer()
        #: (host, port) -> (expiry on the loop's clock, addresses), and the
        #: lookups under way (connects to the same name wait for the one)
        self._dns: dict[tuple[str, int], tuple[float, list[_Addr]]] = {}
        self._looking_up: dict[tuple[str, int], asyncio.Future[list[_Addr]]] = {}
        self.is_closed = False

    def _ssl_context(self) -> Any:
        if self._ssl is None:
            if self._make_ssl is not None:
                self._ssl = self._make_ssl()
            else:
                import ssl

                self._ssl = ssl.create_default_context()
        return self._ssl

    def pool(self, key: _Key) -> Pool:
        p = self._pools.get(key)
        if p is None:
            p = self._pools[key] = Pool(self, key, self.max_connections)
        return p

    async def connect(self, key: _Key, timeout: float | None) -> _Conn:
        """A new connection to ``key``'s origin (its pool calls this): to
        each of the host's addresses in turn (``_addresses``) until one
        answers, as asyncio does with a name."""
        scheme, host, port = key
        loop = asyncio.get_running_loop()
        ssl_ctx = self._ssl_context() if scheme == "https" else None
        server_hostname = host if ssl_ctx is not None else None
        try:
            # (a deadline, not wait_for: no task and loop iteration of its own
            # for each of hundreds of connects on 3.10 and 3.11)
            async with deadline.timeout(timeout):
                addrs = await self._addresses(loop, host, port)
                failed: list[OSError] = []
                for family, ip in addrs:
                    try:
                        _, conn = await loop.create_connection(
                            lambda: _Conn(loop, self._reads),
                            ip,
                            port,
                            family=family,
                            ssl=ssl_ctx,
                            server_hostname=server_hostname,
                        )
                        return conn
                    except OSError as e:
                        if ssl_ctx is not None and _is_tls_error(e):
                            raise  # the server answered: not an address to skip
                        failed.append(e)
                if _ip_literal(host) is None:  # a name: its addresses may have moved
                    self._dns.pop((host, port), None)
                if len(failed) == 1:
                    raise failed[0]
                raise OSError(f"Multiple exceptions: {', '.join(map(str, failed))}")
        except (asyncio.TimeoutError, TimeoutError):  # (two classes on 3.10)
            raise ConnectTimeout(f"timed out connecting to {host}:{port}") from None
        except OSError as e:  # ssl.SSLError (certificate verify failed...) included
            raise ConnectError(str(e) or type(e).__name__) from e

    async def _addresses(
        self, loop: asyncio.AbstractEventLoop, host: str, port: int
    ) -> list[_Addr]:
        """``host``'s addresses, in the resolver's order: an IP literal as
        it is, a name looked up once per ``DNS_TTL`` (connects to it
        meanwhile wait for that one lookup; a failed lookup is not kept)."""
        literal = _ip_literal(host)
        if literal is not None:
            return [(literal, host)]
        key = (host, port)
        hit = self._dns.get(key)
        if hit is not None and hit[0] > loop.time():
            return hit[1]
        fut = self._looking_up.get(key)
        if fut is None:
            fut = self._looking_up[key] = asyncio.ensure_future(self._look_up(loop, host, port))
            # (its failure is each waiter's; seen, even when all gave up)
            fut.add_done_callback(lambda f: f.cancelled() or f.exception())
        # (shielded: a connect given up on does not cancel the others' lookup)
        return await asyncio.shield(fut)

    async def _look_up(self, loop: asyncio.AbstractEventLoop, host: str, port: int) -> list[_Addr]:
        import socket

        try:
            infos = await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        finally:
            self._looking_up.pop((host, port), None)
        addrs: list[_Addr] = []
        for family, *_, sockaddr in infos:
            a = (int(family), str(sockaddr[0]))
            if a not in addrs:
                addrs.append(a)
        if not addrs:
            raise OSError(f"getaddrinfo() returned no address for {host}")
        self._dns[(host, port)] = (loop.time() + DNS_TTL, addrs)
        return addrs

    async def send(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str],
        body: bytes = b"",
        connect_timeout: float | None = None,
        head_timeout: float | None = None,
        read_timeout: float | None = None,
    ) -> Response:
        """Send the request; return once the response head is in (its body
        is read by iterating the response).  ``head_timeout`` bounds the
        wait for the head, ``read_timeout`` each wait for the body."""
        if self.is_closed:
            raise ConnectError("the client is closed")
        key, target, host_h = _target(url)
        lines = [f"{method} {target} HTTP/1.1\r\nhost: {host_h}"]
        accept = connection = False
        for k, v in headers.items():
            if "\r" in k or "\n" in k or "\r" in v or "\n" in v:
                raise ValueError(f"header {k!r} holds a line break")
            lk = k.lower()
            accept = accept or lk == "accept"
            connection = connection or lk == "connection"
            lines.append(f"{k}: {v}")
        if not accept:
            lines.append("accept: */*")
        if not connection:
            lines.append("connection: keep-alive")
        if body or method not in ("GET", "HEAD"):
            lines.append(f"content-length: {len(body)}")
        lines.append("\r\n")
        head = "\r\n".join(lines).encode("latin-1")
        data = head + body if len(body) < 65536 else None
        pool = self.pool(key)
        for _ in range(2):
            conn = await pool.acquire(connect_timeout)
            reused = conn.requests > 0
            try:
                return await self._exchange(
                    conn, method, head, body, data, head_timeout, read_timeout
                )
            except (ReadError, WriteError, RemoteProtocolError) as e:
                if not (reused and getattr(e, "before_response", False)):
                    raise
                # a kept connection the server closed meanwhile: once more
        raise AssertionError("unreachable")  # pragma: no cover

    async def _exchange(
        self,
        conn: _Conn,
        method: str,
        head: bytes,
        body: bytes,
        data: bytes | None,
        head_timeout: float | None,
        read_timeout: float | None,
    ) -> Response:
        conn.start()
        try:
            if data is not None:
                await conn.write(data, head_timeout)
            else:
                await conn.write(head, head_timeout)
                await conn.write(body, head_timeout)
            try:
                await conn.read_head(head_timeout)
            except (ReadError, RemoteProtocolError) as e:
                if not conn.head_done and not conn.status:
                    e.before_response = True  # type: ignore[attr-defined]
                raise
        except BaseException:
            conn.busy = False
            conn.abort()
            if conn.pool is not None:
                conn.pool.release(conn, False)
            raise
        keep = conn.keep_alive
        conn_h = (conn.headers.get("connection") or "").lower()
        if "close" in conn_h:
            keep = False
        head_only = method == "HEAD"
        if conn.framing_close() and conn.status not in (204, 304):
            keep = False
        return Response(conn, keep, read_timeout, head_only)

    async def aclose(self) -> None:
        self.close()

    def close(self) -> None:
        self.is_closed = True
        for p in self._pools.values():
            p.close()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()


__all__ += [
    "ConnectError",
    "ConnectTimeout",
    "HTTPError",
    "ReadError",
    "ReadTimeout",
    "RemoteProtocolError",
    "TimeoutException",
    "WriteError",
    "WriteTimeout",
]
