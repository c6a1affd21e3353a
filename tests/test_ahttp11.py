"""The asyncio HTTP/1.1 client (panto.providers.ahttp11) against real
sockets on 127.0.0.1: framing (content-length, chunked, the end of the
connection), keep-alive reuse, content encodings, the error classes
transport_error maps, timeouts, TLS verification with SNI, the bounded
per-origin pool, reads that return everything that arrived, and the choice
of client (httpx only with a proxy)."""

from __future__ import annotations

import asyncio
import socket
import ssl
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from support.oneshot import OneShotServer, encoded_answer, encoded_bodies, make_ca_and_server_cert

from panto.errors import ProviderError
from panto.providers import ahttp11, http11
from panto.providers import transport as tp

T = TypeVar("T")


def run(coro_fn: Callable[[], Awaitable[T]]) -> T:
    async def main() -> T:
        return await coro_fn()

    return asyncio.run(main())


async def send(client: ahttp11.AsyncClient, url: str, **kw: Any) -> ahttp11.Response:
    return await client.send(
        "POST",
        url,
        headers={"content-type": "application/json"},
        body=b'{"q": 1}',
        connect_timeout=2.0,
        head_timeout=kw.pop("head", 5.0),
        read_timeout=kw.pop("read", 5.0),
    )


async def body(r: ahttp11.Response) -> bytes:
    data = b"".join([c async for c in r.aiter_raw()])
    await r.aclose()
    return data


def test_content_length_chunked_and_close_delimited_bodies_and_keep_alive() -> None:
    replies = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Thing: a\r\nx-thing: b\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;ext=1\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: t\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end",
        b"HTTP/1.1 200 OK\r\n\r\nno length, no chunks: until the end",
    ]

    def answer(conn: socket.socket, n: int) -> bool:
        i = len(srv.requests) - 1  # across connections
        conn.sendall(replies[i])
        return i < 2

    srv = OneShotServer(answer)

    async def main() -> None:
        async with ahttp11.AsyncClient() as client:
            r = await send(client, srv.url)
            assert r.status_code == 200 and r.reason_phrase == "OK"
            assert r.headers["X-THING"] == "a, b" and r.headers.get("content-length") == "5"
            assert await body(r) == b"hello"
            assert await body(await send(client, srv.url)) == b"abc0123456789abcdef"
            assert await body(await send(client, srv.url)) == b"until the end"
            assert await body(await send(client, srv.url)) == b"no length, no chunks: until the end"

    try:
        run(main)
        # the first three shared one kept-alive connection
        assert srv.connections == 2
        first = srv.requests[0]
        assert first.startswith(b"POST /v1/x HTTP/1.1\r\n")
        assert b"\r\nhost: 127.0.0.1:%d\r\n" % srv.port in first
        assert b"content-length: 8\r\n" in first and first.endswith(b'{"q": 1}')
        assert b"connection: keep-alive\r\n" in first
    finally:
        srv.close()


def test_an_unfinished_body_closes_the_connection_a_finished_one_is_reused() -> None:
    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabc")
        time.sleep(0.05)
        conn.sendall(b"def")
        return True

    srv = OneShotServer(answer)

    async def main() -> None:
        async with ahttp11.AsyncClient() as client:
            r = await send(client, srv.url)
            await r.aclose()  # not read to the end: the connection is closed
            assert await body(await send(client, srv.url)) == b"abcdef"
            assert await body(await send(client, srv.url)) == b"abcdef"

    try:
        run(main)
        assert srv.connections == 2
    finally:
        srv.close()


def test_a_kept_connection_the_server_closed_is_replaced() -> None:
    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        return False  # closes after each response without saying so

    srv = OneShotServer(answer)

    async def main() -> None:
        async with ahttp11.AsyncClient() as client:
            for _ in range(3):
                assert await body(await send(client, srv.url)) == b"ok"
                await asyncio.sleep(0.05)  # the close arrives while idle
            pool = next(iter(client._pools.values()))  # noqa: SLF001
            assert pool.open == 0  # the closed ones gave their slots back

    try:
        run(main)
        assert srv.connections == 3
    finally:
        srv.close()


def test_a_close_racing_the_next_request_is_retried_once_on_a_new_connection() -> None:
    """The server reads the second request and closes without a word (as a
    server whose keep-alive timer ran out at that moment does)."""

    def answer(conn: socket.socket, n: int) -> bool:
        if srv.connections == 1:
            if n == 0:
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
                return True
            return False
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nagain")
        return True

    srv = OneShotServer(answer)

    async def main() -> None:
        async with ahttp11.AsyncClient() as client:
            assert await body(await send(client, srv.url)) == b"ok"
            assert await body(await send(client, srv.url)) == b"again"

    try:
        run(main)
        assert srv.connections == 2
    finally:
        srv.close()


def test_gzip_and_deflate_bodies_are_decoded_for_aiter_bytes_only() -> None:
    text = b"data: hello\n\n" * 50
    bodies = encoded_bodies(text)
    srv = OneShotServer(encoded_answer(bodies))

    async def main() -> None:
        async with ahttp11.AsyncClient() as client:
            for enc, _data in bodies:
                r = await send(client, srv.url)
                assert b"".join([c async for c in tp.abody_chunks(r)]) == text, enc
                await r.aclose()
            assert await body(await send(client, srv.url)) == bodies[0][1]

    try:
        run(main)
        assert srv.connections == 1
    finally:
        srv.close()


def test_100_continue_is_skipped() -> None:
    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(
            b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n"
        )
        return True

    srv = OneShotServer(answer)

    async def main() -> None:
        async with ahttp11.AsyncClient() as client:
            r = await send(client, srv.url)
            assert r.status_code == 201 and await r.aread() == b""
            await r.aclose()

    try:
        run(main)
    finally:
        srv.close()


@pytest.mark.parametrize(
    "reply",
    [
        b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab",
        b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
        b"garbage\r\n\r\n",
        b"",
    ],
)
def test_broken_responses_are_retryable_connection_errors(reply: bytes) -> None:
    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(reply)
        return False

    srv = OneShotServer(answer)

    async def main() -> BaseException:
        async with ahttp11.AsyncClient() as client:
            with pytest.raises(http11.HTTPError) as info:
                await body(await send(client, srv.url))
            return info.value

    try:
        exc = run(main)
        assert isinstance(exc, (http11.RemoteProtocolError, http11.ReadError)), exc
        err = tp.transport_error(exc, srv.url, 2.0, 5.0)  # type: ignore[arg-type]
        assert isinstance(err, ProviderError) and err.type == "connection_closed"
        assert err.retryable and "127.0.0.1" in str(err)
    finally:
        srv.close()


def test_connect_refused_and_timeouts_map_like_httpx() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    url = f"http://127.0.0.1:{port}/v1/messages"

    async def refused() -> BaseException:
        async with ahttp11.AsyncClient() as client:
            with pytest.raises(http11.ConnectError) as info:
                await send(client, url)
            return info.value

    exc = run(refused)
    assert tp.transport_error(exc, url, 2.0, 5.0).type == "connection_error"  # type: ignore[arg-type]

    def trickle(conn: socket.socket, n: int) -> bool:
        if len(srv.requests) == 1:
            threading.Event().wait(1)  # no head for a second
            return False
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nab")
        threading.Event().wait(1)  # then nothing for a second
        return False

    srv = OneShotServer(trickle)

    async def main() -> tuple[BaseException, BaseException, float]:
        async with ahttp11.AsyncClient() as client:
            t0 = time.monotonic()
            with pytest.raises(http11.ReadTimeout) as head:
                await send(client, srv.url, head=0.2)
            waited = time.monotonic() - t0
            r = await send(client, srv.url, read=0.2)
            with pytest.raises(http11.ReadTimeout) as read:
                await body(r)
            return head.value, read.value, waited

    try:
        head, read, waited = run(main)
        assert 0.15 < waited < 0.9
        assert tp.transport_error(head, srv.url, 2.0, 0.2).type == "read_timeout"  # type: ignore[arg-type]
        assert tp.transport_error(read, srv.url, 2.0, 0.2).type == "read_timeout"  # type: ignore[arg-type]
    finally:
        srv.close()

    silent = OneShotServer(lambda conn, n: threading.Event().wait(2))

    async def first_byte() -> ProviderError:
        client = tp.async_client(False)
        try:
            with pytest.raises(ProviderError) as info:
                await tp.asend(client, silent.url, b"{}", {}, connect=2, read=5, first_byte=0.2)
            return info.value
        finally:
            await client.aclose()

    try:
        err = run(first_byte)
        # through transport.asend, a head timeout shorter than read is the first-byte watchdog
        assert err.type == "first_byte_timeout" and err.retryable
    finally:
        silent.close()


def test_shutdown_socket_from_another_thread_wakes_a_reader() -> None:
    def trickle(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\nab")
        threading.Event().wait(5)
        return False

    srv = OneShotServer(trickle)

    async def main() -> float:
        async with ahttp11.AsyncClient() as client:
            r = await send(client, srv.url)
            threading.Timer(0.2, tp.shutdown_socket, (r,)).start()
            t0 = time.monotonic()
            with pytest.raises(http11.HTTPError):
                await body(r)
            return time.monotonic() - t0

    try:
        assert run(main) < 2
    finally:
        srv.close()


def test_aiter_reads_gives_everything_that_arrived_since_the_last_read() -> None:
    """Ten chunks sent while the reader was busy come back as one read (a
    proxy writes them on in one piece); ``aiter_raw`` gives them one by one."""
    parts = [b"data: %d\n\n" % i for i in range(10)]

    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        for p in parts:
            conn.sendall(b"%x\r\n%s\r\n" % (len(p), p))
        time.sleep(0.3)
        conn.sendall(b"0\r\n\r\n")
        return True

    srv = OneShotServer(answer)

    async def main() -> tuple[list[bytes], list[bytes]]:
        async with ahttp11.AsyncClient() as client:
            r = await send(client, srv.url)
            await asyncio.sleep(0.15)  # busy while the chunks arrive
            reads = [c async for c in r.aiter_reads()]
            await r.aclose()
            r = await send(client, srv.url)
            await asyncio.sleep(0.15)
            raw = [c async for c in r.aiter_raw()]
            await r.aclose()
            return reads, raw

    try:
        reads, raw = run(main)
        assert reads == [b"".join(parts)]
        assert raw == parts  # aiter_raw: chunk by chunk, as httpx and http11 give them
    finally:
        srv.close()


def test_the_pool_is_bounded_per_origin_and_hands_connections_over() -> None:
    """Ten concurrent requests on a pool of three: never more than three
    connections; the others wait and take the freed ones over (no new
    connection); a waiter that gives up (cancelled) loses no slot; one that
    waits longer than the connect timeout gets ``PoolTimeout``."""
    live = 0
    peak = 0
    lock = threading.Lock()

    def answer(conn: socket.socket, n: int) -> bool:
        nonlocal live, peak
        with lock:
            live += 1
            peak = max(peak, live)
        time.sleep(0.1)
        with lock:
            live -= 1
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")
        return True

    srv = OneShotServer(answer)

    async def main() -> None:
        async with ahttp11.AsyncClient(max_connections=3) as client:

            async def one() -> bytes:
                return await body(await send(client, srv.url))

            got = await asyncio.gather(*(one() for _ in range(10)))
            assert got == [b"ok"] * 10
            pool = client.pool(("http", "127.0.0.1", srv.port))
            assert pool.open == 3 and len(pool.idle) == 3 and not pool.waiters
            # waiters cancelled while the pool is full leave no slot taken
            busy = [asyncio.ensure_future(send(client, srv.url)) for _ in range(3)]
            await asyncio.sleep(0.02)
            doomed = [asyncio.ensure_future(send(client, srv.url)) for _ in range(4)]
            await asyncio.sleep(0.02)
            for t in doomed:
                t.cancel()
            for r in await asyncio.gather(*busy):
                assert await body(r) == b"ok"
            assert pool.open == 3 and len(pool.idle) == 3
            # all busy for longer than the connect timeout: PoolTimeout
            held = [await send(client, srv.url) for _ in range(3)]
            with pytest.raises(ahttp11.PoolTimeout):
                await client.send("GET", srv.url, headers={}, connect_timeout=0.1)
            for r in held:
                # bodies unread but complete (they came with the heads): kept
                await r.aclose()
            assert pool.open == 3 and len(pool.idle) == 3
            assert await body(await send(client, srv.url)) == b"ok"

    try:
        run(main)
        assert peak <= 3
        assert srv.connections == 3
    finally:
        srv.close()


def test_tls_verifies_the_certificate_and_sends_sni(tmp_path: Path) -> None:
    capath, cert, key = make_ca_and_server_cert(tmp_path)
    server_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_ctx.load_cert_chain(str(cert), str(key))
    names: list[str | None] = []
    server_ctx.sni_callback = lambda sock, name, ctx: names.append(name)  # type: ignore[assignment,misc,func-returns-value]

    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 6\r\n\r\nsecure")
        return True

    srv = OneShotServer(answer, tls=server_ctx)
    url = f"https://localhost:{srv.port}/v1/x"

    async def main() -> None:
        trusting = ssl.create_default_context(capath=str(capath))
        async with ahttp11.AsyncClient(ssl_context=trusting) as client:
            assert await body(await send(client, url)) == b"secure"
            assert await body(await send(client, url)) == b"secure"  # kept alive
        async with ahttp11.AsyncClient(ssl_context=ssl.create_default_context()) as client:
            with pytest.raises(http11.ConnectError, match="(?i)certificate"):
                await send(client, url)

    try:
        run(main)
        assert names[0] == "localhost"
        assert srv.connections == 2
    finally:
        srv.close()


def test_a_proxy_in_the_environment_falls_back_to_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    for v in tp.PROXY_VARS:
        monkeypatch.delenv(v, raising=False)
        monkeypatch.delenv(v.upper(), raising=False)

    async def clients() -> tuple[Any, Any]:
        a = tp.async_client(False, 7)
        monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
        b = tp.async_client(False, 7)
        await a.aclose()
        await b.aclose()
        return a, b

    import httpx

    a, b = run(clients)
    assert isinstance(a, ahttp11.AsyncClient) and a.max_connections == 7
    assert isinstance(b, httpx.AsyncClient)


def test_many_ready_connections_read_a_bounded_amount_per_loop_iteration() -> None:
    """32 connections with 256 KiB each waiting in the kernel, read at once:
    what the client reads in one loop iteration (held until the readers run
    in the next; freed then, but kept by the allocator as RSS) stays within
    ``_ITER_BUDGET`` plus ``_MIN_READ`` a connection, where a full read each
    would be 32 x 64 KiB.  Every byte still arrives."""
    n, size = 32, 256 * 1024
    data = bytes(range(256)) * (size // 256)

    def answer(conn: socket.socket, k: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % size + data)
        return True

    srv = OneShotServer(answer)

    async def main() -> tuple[int, list[bytes]]:
        async with ahttp11.AsyncClient() as client:
            rs = await asyncio.gather(*(send(client, srv.url) for _ in range(n)))
            await asyncio.sleep(0.3)  # the server has written what the kernel holds
            conns = [r._conn for r in rs]  # noqa: SLF001
            held: list[int] = []
            done = False

            def probe() -> None:  # each iteration, before the readers it woke
                held.append(sum(c.buffered for c in conns if c is not None))
                if not done:
                    asyncio.get_running_loop().call_soon(probe)

            probe()
            try:
                got = await asyncio.gather(*(body(r) for r in rs))
            finally:
                done = True
            # (the first two: what each connection read, up to its high-water
            # mark, while nobody read; the readers take it in the second)
            return max(held[2:]), got

    try:
        most, got = run(main)
        assert got == [data] * n
        bound = ahttp11._ITER_BUDGET + n * ahttp11._MIN_READ  # noqa: SLF001
        assert most <= bound < n * ahttp11._READ_SIZE, most  # noqa: SLF001
    finally:
        srv.close()


def test_a_slow_reader_pauses_the_socket_and_loses_nothing() -> None:
    """A 1 MB body read late: the connection stops reading once its unread
    bytes pass the high-water mark (the rest waits in the kernel, not in
    this process) and resumes as the reader catches up."""
    data = bytes(range(256)) * 4096

    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n" % len(data) + data)
        return True

    srv = OneShotServer(answer)

    async def main() -> tuple[bool, int, bytes]:
        async with ahttp11.AsyncClient() as client:
            r = await send(client, srv.url)
            await asyncio.sleep(0.3)  # the server has sent it all by now
            conn = r._conn  # noqa: SLF001
            assert conn is not None
            paused, held = conn.paused, conn.buffered
            return paused, held, await body(r)

    try:
        paused, held, got = run(main)
        assert paused and held <= ahttp11._HIGH_WATER + ahttp11._READ_SIZE  # noqa: SLF001
        assert got == data
    finally:
        srv.close()


def test_a_connect_nobody_answers_is_a_connect_timeout() -> None:
    """A listener whose backlog is full drops further SYNs, so a connect
    hangs: it ends at ``connect_timeout`` as ``ConnectTimeout`` (the
    deadline is ``asyncio.timeout`` on 3.11+, panto's fallback on 3.10,
    where its TimeoutError is not asyncio's)."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    fill = []
    for _ in range(4):  # (one may wait in the backlog; the rest are dropped)
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        fill.append(s)

    async def main() -> tuple[BaseException, float]:
        async with ahttp11.AsyncClient() as client:
            t0 = time.perf_counter()
            with pytest.raises(http11.ConnectTimeout) as e:
                await client.send(
                    "POST",
                    f"http://127.0.0.1:{port}/v1",
                    headers={},
                    body=b"{}",
                    connect_timeout=0.3,
                    head_timeout=5.0,
                    read_timeout=5.0,
                )
            return e.value, time.perf_counter() - t0

    try:
        err, took = run(main)
        assert "timed out connecting to 127.0.0.1" in str(err)
        assert 0.25 < took < 3.0, took
        assert (
            tp.transport_error(err, f"http://127.0.0.1:{port}", 0.3, 5.0).type == "connect_timeout"
        )
    finally:
        for s in fill:
            s.close()
        srv.close()


def test_a_name_is_looked_up_once_for_a_burst_of_connects_and_again_after_its_ttl(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """asyncio looks a host name up for every connection, each in a thread
    of the default executor: 20 sessions connecting at once to one provider
    made 20 lookups.  The client looks a name up once and keeps the
    addresses for ``DNS_TTL``; connects meanwhile wait for that lookup."""
    monkeypatch.setattr(ahttp11, "DNS_TTL", 0.5)

    def answer(conn: socket.socket, n: int) -> bool:
        time.sleep(0.05)  # the connections overlap
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok")
        return False

    srv = OneShotServer(answer)
    url = f"http://localhost:{srv.port}/v1/x"

    async def main() -> tuple[int, int]:
        loop = asyncio.get_running_loop()
        lookups = 0
        real = loop.getaddrinfo

        async def counted(*a: Any, **kw: Any) -> Any:
            nonlocal lookups
            lookups += 1
            return await real(*a, **kw)

        loop.getaddrinfo = counted  # type: ignore[method-assign]
        async with ahttp11.AsyncClient() as client:

            async def one() -> bytes:
                return await body(await send(client, url))

            got = await asyncio.gather(*(one() for _ in range(20)))
            assert got == [b"ok"] * 20
            first = lookups
            await asyncio.sleep(0.6)  # past the TTL: the next connect looks up again
            assert await body(await send(client, url)) == b"ok"
            return first, lookups

    try:
        first, total = run(main)
        assert srv.connections == 21  # each answer closed its connection
        assert (first, total) == (1, 2)
    finally:
        srv.close()


def test_a_failed_lookup_is_not_kept_and_every_address_is_tried() -> None:
    """A lookup that fails fails its connects (a ``ConnectError`` naming
    why) and is not kept: the next connect looks up again; of a name's
    addresses, one that refuses is skipped for the next."""
    srv = OneShotServer(
        lambda conn, n: conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok") or True
    )
    url = f"http://panto-test.invalid:{srv.port}/v1/x"

    async def main() -> tuple[str, bytes, int]:
        loop = asyncio.get_running_loop()
        calls = 0

        async def fake(host: str, port: int, **kw: Any) -> Any:
            nonlocal calls
            calls += 1
            if calls == 1:
                raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
            tcp = (socket.AF_INET, socket.SOCK_STREAM, 6, "")
            # nothing listens on 127.0.0.2 (the server is bound to 127.0.0.1)
            return [(*tcp, ("127.0.0.2", port)), (*tcp, ("127.0.0.1", port))]

        loop.getaddrinfo = fake  # type: ignore[method-assign,assignment]
        async with ahttp11.AsyncClient() as client:
            with pytest.raises(http11.ConnectError) as info:
                await send(client, url)
            got = await body(await send(client, url))
            return str(info.value), got, calls

    try:
        msg, got, calls = run(main)
        assert "Temporary failure in name resolution" in msg
        assert got == b"ok" and calls == 2
        assert b"host: panto-test.invalid:" in srv.requests[0]
    finally:
        srv.close()


def test_a_name_whose_addresses_all_refuse_is_looked_up_again() -> None:
    """Every address of a kept lookup refusing: the addresses may have moved,
    so the next connect looks the name up again instead of waiting out
    ``DNS_TTL``."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there

    async def main() -> int:
        loop = asyncio.get_running_loop()
        calls = 0

        async def fake(host: str, port: int, **kw: Any) -> Any:
            nonlocal calls
            calls += 1
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port))]

        loop.getaddrinfo = fake  # type: ignore[method-assign,assignment]
        async with ahttp11.AsyncClient() as client:
            for _ in range(2):
                with pytest.raises(http11.ConnectError):
                    await send(client, f"http://panto-test.invalid:{port}/v1/x")
        return calls

    assert run(main) == 2
