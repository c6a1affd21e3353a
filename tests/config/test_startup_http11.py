"""The stdlib HTTP/1.1 transport of the sync agent (panto.providers.http11),
against real sockets on 127.0.0.1: framing (content-length, chunked, the
end of the connection), keep-alive reuse, content encodings, the error
classes transport_error maps, and the choice of client (httpx only with a
proxy)."""

from __future__ import annotations

import socket
import threading
from typing import Any

import pytest
from support.oneshot import OneShotServer, encoded_answer, encoded_bodies

from panto.agent import Agent
from panto.config import Config
from panto.conversation import Text
from panto.errors import ProviderError
from panto.providers import http11
from panto.providers import transport as tp
from panto.testing import Raw, RawConnection, Reply, ScriptedServer, render_sse


def _send(client: http11.Client, url: str, **kw: Any) -> http11.Response:
    return client.send(
        "POST",
        url,
        headers={"content-type": "application/json"},
        body=b'{"q": 1}',
        connect_timeout=2.0,
        head_timeout=kw.pop("head", 5.0),
        read_timeout=kw.pop("read", 5.0),
    )


def test_content_length_chunked_and_close_delimited_bodies() -> None:
    replies = [
        b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-Thing: a\r\nx-thing: b\r\n\r\nhello",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"3;ext=1\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer: t\r\n\r\n",
        b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil the end",
    ]

    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(replies[n])
        return n < 2

    srv = OneShotServer(answer)
    try:
        with http11.Client() as client:
            r = _send(client, srv.url)
            assert r.status_code == 200 and r.headers["X-THING"] == "a, b"
            assert r.headers.get("content-length") == "5" and "Content-Length" in r.headers
            assert b"".join(r.iter_raw()) == b"hello" and r.is_complete
            r.close()
            r = _send(client, srv.url)
            assert list(r.iter_raw()) == [b"abc", b"0123456789abcdef"] and r.is_complete
            r.close()
            r = _send(client, srv.url)
            assert r.read() == b"until the end"
            r.close()
        # the first two shared one kept-alive connection
        assert srv.connections == 1
        first = srv.requests[0]
        assert first.startswith(b"POST /v1/x HTTP/1.1\r\n")
        assert b"\r\nhost: 127.0.0.1:%d\r\n" % srv.port in first
        assert b"content-length: 8\r\n" in first and first.endswith(b'{"q": 1}')
    finally:
        srv.close()


def test_an_unread_body_closes_the_connection_a_read_one_is_reused() -> None:
    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\nabcdef")
        return True

    srv = OneShotServer(answer)
    try:
        with http11.Client() as client:
            r = _send(client, srv.url)
            next(r.iter_raw())  # all 6 bytes came in one read: complete
            r.close()
            r = _send(client, srv.url)
            r.close()  # not read: the connection is not reused
            r = _send(client, srv.url)
            assert r.read() == b"abcdef"
            r.close()
        assert srv.connections == 2
    finally:
        srv.close()


def test_a_kept_connection_the_server_closed_is_replaced() -> None:
    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        return False  # closes after each response without saying so

    srv = OneShotServer(answer)
    try:
        with http11.Client() as client:
            for _ in range(3):
                r = _send(client, srv.url)
                assert r.read() == b"ok"
                r.close()
        assert srv.connections == 3
    finally:
        srv.close()


def test_gzip_and_deflate_bodies_are_decoded_for_iter_bytes_only() -> None:
    text = b"data: hello\n\n" * 50
    bodies = encoded_bodies(text)
    srv = OneShotServer(encoded_answer(bodies))
    try:
        with http11.Client() as client:
            for enc, _body in bodies:
                r = _send(client, srv.url)
                assert b"".join(tp.body_chunks(r)) == text, enc
                r.close()
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
    try:
        with http11.Client() as client:
            r = _send(client, srv.url)
            assert r.status_code == 201 and r.read() == b""
            r.close()
    finally:
        srv.close()


@pytest.mark.parametrize(
    ("reply", "kind"),
    [
        (b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort", "connection_closed"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nab", "connection_closed"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", "connection_closed"),
        (b"garbage\r\n\r\n", "connection_closed"),
        (b"", "connection_closed"),
    ],
)
def test_broken_responses_are_retryable_connection_errors(reply: bytes, kind: str) -> None:
    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(reply)
        return False

    srv = OneShotServer(answer)
    try:
        with http11.Client() as client, pytest.raises(http11.HTTPError) as info:
            r = _send(client, srv.url)
            b"".join(r.iter_raw())
        err = tp.transport_error(info.value, srv.url, 2.0, 5.0)
        assert isinstance(err, ProviderError) and err.type == kind and err.retryable
        assert "127.0.0.1" in str(err)
    finally:
        srv.close()


def test_connect_refused_and_read_timeout_map_like_httpx() -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # nothing listens there now
    url = f"http://127.0.0.1:{port}/v1/messages"
    with http11.Client() as client, pytest.raises(http11.ConnectError) as info:
        _send(client, url)
    assert tp.transport_error(info.value, url, 2.0, 5.0).type == "connection_error"

    def silent(conn: socket.socket, n: int) -> bool:
        threading.Event().wait(3)
        return False

    srv = OneShotServer(silent)
    try:
        with http11.Client() as client, pytest.raises(http11.ReadTimeout) as info2:
            _send(client, srv.url, head=0.2)
        assert tp.transport_error(info2.value, srv.url, 2.0, 0.2).type == "read_timeout"
        # through transport.send, a head timeout shorter than read is the first-byte watchdog
        with http11.Client() as client, pytest.raises(ProviderError) as info3:
            tp.send(client, srv.url, b"{}", {}, connect=2.0, read=5.0, first_byte=0.2)
        assert info3.value.type == "first_byte_timeout" and info3.value.retryable
    finally:
        srv.close()


def test_shutdown_socket_wakes_a_blocked_reader() -> None:
    def trickle(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\nab")
        threading.Event().wait(5)
        return False

    srv = OneShotServer(trickle)
    try:
        with http11.Client() as client:
            r = _send(client, srv.url)
            threading.Timer(0.2, tp.shutdown_socket, (r,)).start()
            with pytest.raises(http11.HTTPError):
                for _ in r.iter_raw():
                    pass
            r.close()
    finally:
        srv.close()


def test_the_agent_uses_http11_and_keeps_its_connection() -> None:
    with ScriptedServer() as server:
        server.push(Reply([Text("one")]), Reply([Text("two")]))
        config = Config(
            provider="anthropic", model="m", base_url=server.url, api_key="k", max_retries=0
        )
        with Agent(config) as agent:
            for prompt in ("a", "b"):
                agent.submit_user_message(prompt)
                with agent.run() as stream:
                    list(stream)
            assert agent.conversation[-1].text == "two"
            assert isinstance(agent._http_client(), http11.Client)  # noqa: SLF001
        assert len({r.client for r in server.requests}) == 1


def test_a_chunked_error_body_is_read_to_a_bound_and_its_key_redacted() -> None:
    key = "sk-redact-me-0123456789"

    def endless(conn: RawConnection) -> None:
        conn.send(
            b"HTTP/1.1 401 Unauthorized\r\ncontent-type: application/json\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        msg = b'{"error": {"type": "authentication_error", "message": "bad key %s"}}' % key.encode()
        conn.send(b"%x\r\n%s\r\n" % (len(msg), msg))
        conn.send(b"0\r\n\r\n")

    with ScriptedServer() as server:
        server.push(Raw(endless))
        config = Config(
            provider="anthropic", model="m", base_url=server.url, api_key=key, max_retries=0
        )
        with Agent(config) as agent:
            agent.submit_user_message("hi")
            with pytest.raises(ProviderError) as info, agent.run() as stream:
                list(stream)
        assert info.value.status == 401 and info.value.type == "authentication_error"
        assert key not in str(info.value) and "***" in str(info.value)


def test_a_proxy_in_the_environment_falls_back_to_httpx(monkeypatch: pytest.MonkeyPatch) -> None:
    for v in tp.PROXY_VARS:
        monkeypatch.delenv(v, raising=False)
        monkeypatch.delenv(v.upper(), raising=False)
    client = tp.sync_client(False)
    assert isinstance(client, http11.Client)
    client.close()
    monkeypatch.setenv("HTTPS_PROXY", "http://127.0.0.1:9")
    assert tp.proxy_configured()
    import httpx

    client = tp.sync_client(False)
    assert isinstance(client, httpx.Client)
    client.close()


def test_rendered_sse_reaches_the_decoder_intact_over_chunks() -> None:
    """Many small chunks (one per event) end up as the same events."""
    events = render_sse(Reply([Text("x" * 500)], chunk=3), "anthropic-messages")

    def answer(conn: socket.socket, n: int) -> bool:
        conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n")
        for e in events:
            conn.sendall(b"%x\r\n%s\r\n" % (len(e), e))
        conn.sendall(b"0\r\n\r\n")
        return True

    srv = OneShotServer(answer)
    try:
        with http11.Client() as client:
            r = _send(client, srv.url)
            assert b"".join(r.iter_raw()) == b"".join(events)
            r.close()
    finally:
        srv.close()
