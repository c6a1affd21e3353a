"""The transport under faults (issue 12: D1, D2, D3, D6, D8, D12), against a
real socket on 127.0.0.1: the ScriptedServer's ``Raw`` items write the bytes
themselves.  Each test pins one fix, on both wires and both drivers where the
code paths differ.  (The black-box CLI fault suite is tests/faults.)"""

from __future__ import annotations

import asyncio
import gzip
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest
from support.agent import TEST_KEY, WIRES, make_config

from panto.agent import Agent
from panto.conversation import Text
from panto.errors import DecodeError, ProviderError
from panto.events import MessageComplete, ProviderRetry
from panto.testing import HTTPError, Raw, RawConnection, Reply, ScriptedServer, render_sse

ANSWER = "The answer is 42."
MODES = ("sync", "async")
SSE_HEAD = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\n"


def _events(wire: str, text: str = ANSWER) -> list[bytes]:
    return render_sse(Reply([Text(text)], chunk=6), wire)


def _ping(wire: str) -> bytes:
    return b'event: ping\ndata: {"type": "ping"}\n\n' if "anthropic" in wire else b": ping\n\n"


def _drive(
    agent: Agent, mode: str, deadline: float
) -> tuple[list[Any], BaseException | None, float]:
    """Run one turn in a thread; give up (cancel) after ``deadline`` s.
    Returns (events, the exception raised or None, seconds taken)."""
    events: list[Any] = []
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            if mode == "sync":
                with agent.run() as s:
                    box["s"] = s
                    for ev in s:
                        events.append(ev)
            else:

                async def main() -> None:
                    async with agent.run_async() as s:
                        box["s"] = s
                        async for ev in s:
                            events.append(ev)

                asyncio.run(main())
        except BaseException as exc:
            box["exc"] = exc

    t0 = time.monotonic()
    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(deadline)
    took = time.monotonic() - t0
    if t.is_alive():
        s = box.get("s")
        if s is not None:
            s.close()
        t.join(5)
        pytest.fail(f"the turn did not end within {deadline}s (hung)")
    return events, box.get("exc"), took


@pytest.fixture
def agent_for(server: ScriptedServer) -> Any:
    agents: list[Agent] = []

    def make(wire: str, **kw: Any) -> Agent:
        a = Agent(make_config(server, wire, **kw))
        a.submit_user_message("question")
        agents.append(a)
        return a

    yield make
    for a in agents:
        a.close()


def _no_key(*texts: Any) -> None:
    for t in texts:
        assert TEST_KEY not in str(t)
        assert TEST_KEY[:12] not in str(t)  # nor a long prefix of it


# -- D1: secrets in in-stream errors, bad_sse snippets and child loggers ----------------


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("mode", MODES)
def test_d1_key_echoed_in_stream_error_is_scrubbed(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str, mode: str
) -> None:
    echo = {"type": "invalid_request_error", "message": f"bad key {TEST_KEY} for this org"}
    # after content: the partial message keeps the (scrubbed) error
    server.push(Reply([Text("partial answer here")], chunk=4, error=echo, error_after=5))
    agent = agent_for(wire)
    events, exc, _ = _drive(agent, mode, 10)
    assert isinstance(exc, ProviderError), exc
    assert "***" in str(exc)
    _no_key(exc, exc.message, exc.args)
    kept = agent.conversation[-1]
    assert kept.role == "assistant" and kept.error and "***" in kept.error
    _no_key(kept.error, kept.to_dict())


@pytest.mark.parametrize("wire", WIRES)
def test_d1_key_in_retried_stream_error_and_log_records(
    server: ScriptedServer,
    agent_for: Callable[..., Agent],
    wire: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    echo = {"type": "overloaded_error", "message": f"overloaded; key={TEST_KEY}"}
    server.push(*[Reply([Text("x")], error=echo, error_after=0)] * 3)
    agent = agent_for(wire, max_retries=2)
    with caplog.at_level(logging.DEBUG, logger="panto"):
        events, exc, _ = _drive(agent, "sync", 10)
        # a record logged on any panto.* child logger is scrubbed too
        logging.getLogger("panto.agent").warning("child %s", TEST_KEY)
        logging.getLogger("panto.lua.some.child").error("nested: " + TEST_KEY)
    retries = [e for e in events if isinstance(e, ProviderRetry)]
    assert len(retries) == 2 and isinstance(exc, ProviderError)
    _no_key(exc, *(r.reason for r in retries))
    assert "***" in retries[0].reason
    assert any("child ***" in r.getMessage() for r in caplog.records)
    _no_key(*(r.getMessage() for r in caplog.records), caplog.text)


@pytest.mark.parametrize("wire", WIRES)
def test_d1_key_in_a_non_sse_200_body_is_scrubbed(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str
) -> None:
    def html(conn: RawConnection) -> None:
        body = f"<html>gateway says: {TEST_KEY}</html>\n\n".encode()
        conn.send(SSE_HEAD + b"content-length: %d\r\n\r\n" % len(body) + body)

    server.push(Raw(html))
    agent = agent_for(wire, max_retries=0)
    _, exc, _ = _drive(agent, "sync", 10)
    assert isinstance(exc, DecodeError), exc
    _no_key(exc, exc.args)


# -- D2: the turn ends at the terminal event ----------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("after", ["silent", "pings"])
def test_d2_stop_reading_at_the_terminal_event(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str, mode: str, after: str
) -> None:
    def hold_open(conn: RawConnection) -> None:
        body = b"".join(_events(wire))
        conn.send(SSE_HEAD + b"content-length: 100000000\r\n\r\n" + body)
        while not conn.wait(0.05):
            if after == "pings" and not conn.send(_ping(wire)):
                return

    server.push(Raw(hold_open))
    # the read timeout is long: the answer must end at the terminal event
    agent = agent_for(wire, read_timeout=30.0, idle_timeout=30.0)
    events, exc, took = _drive(agent, mode, 8)
    assert exc is None, exc
    final = events[-1]
    assert isinstance(final, MessageComplete) and final.final
    assert final.message.text == ANSWER and final.message.error is None
    assert took < 3.0


@pytest.mark.parametrize("wire", WIRES)
def test_d2_a_well_behaved_server_keeps_the_connection(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str
) -> None:
    server.push(Reply([Text("one")]), Reply([Text("two")]))
    agent = agent_for(wire)
    _drive(agent, "sync", 10)
    agent.submit_user_message("again")
    events, exc, _ = _drive(agent, "sync", 10)
    assert exc is None and events[-1].message.text == "two"
    # the same TCP connection served both requests (the body was read to its end)
    assert len({r.client for r in server.requests}) == 1


# -- D3: error bodies are read up to a bound ------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
def test_d3_error_body_is_read_up_to_a_bound(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str
) -> None:
    written: list[int] = []

    def endless_401(conn: RawConnection) -> None:
        conn.send(
            b"HTTP/1.1 401 Unauthorized\r\ncontent-type: text/plain\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        block = b"x" * 65536
        chunk = b"%x\r\n%s\r\n" % (len(block), block)
        while conn.sent < 300_000_000 and conn.send(chunk):
            pass
        written.append(conn.sent)

    server.push(Raw(endless_401))
    agent = agent_for(wire, max_retries=0)
    _, exc, _ = _drive(agent, "sync", 20)
    assert isinstance(exc, ProviderError) and exc.status == 401
    assert len(str(exc)) < 1000
    deadline = time.monotonic() + 5
    while not written and time.monotonic() < deadline:
        time.sleep(0.01)
    # the client stopped reading: the server could write little more than
    # the 64 KiB panto reads plus the sockets' buffers
    assert written and written[0] < 50_000_000, written


# -- D6: content encoding ---------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("mode", MODES)
def test_d6_gzip_body_is_decoded(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str, mode: str
) -> None:
    def gzipped(conn: RawConnection) -> None:
        body = gzip.compress(b"".join(_events(wire)))
        conn.send(
            SSE_HEAD + b"content-encoding: gzip\r\ncontent-length: %d\r\n\r\n" % len(body) + body
        )

    server.push(Raw(gzipped))
    events, exc, _ = _drive(agent_for(wire), mode, 10)
    assert exc is None, exc
    assert events[-1].message.text == ANSWER


@pytest.mark.parametrize("wire", WIRES)
def test_d6_identity_is_requested(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str
) -> None:
    server.push(Reply([Text(ANSWER)]))
    events, exc, _ = _drive(agent_for(wire), "sync", 10)
    assert exc is None and events[-1].message.text == ANSWER
    assert server.requests[0].headers["accept-encoding"] == "identity"


# -- D8: watchdogs ------------------------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("mode", MODES)
def test_d8_first_byte_watchdog_retries_visibly(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str, mode: str
) -> None:
    def silent(conn: RawConnection) -> None:
        conn.wait(30)

    server.push(Raw(silent), Raw(silent))
    agent = agent_for(wire, first_byte_timeout=0.4, read_timeout=30.0, max_retries=1)
    events, exc, took = _drive(agent, mode, 10)
    assert isinstance(exc, ProviderError) and exc.type == "first_byte_timeout", exc
    (retry,) = [e for e in events if isinstance(e, ProviderRetry)]
    assert "first_byte" in retry.reason
    assert len(server.requests) == 2 and took < 4.0


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("mode", MODES)
def test_d8_idle_watchdog_ignores_pings(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str, mode: str
) -> None:
    events_ = _events(wire)

    def pings_only(conn: RawConnection) -> None:
        # the message start, then keep-alives only: no progress
        conn.send(SSE_HEAD + b"content-length: 100000000\r\n\r\n" + events_[0])
        while not conn.wait(0.05):
            if not conn.send(_ping(wire)):
                return

    server.push(Raw(pings_only), Raw(pings_only))
    agent = agent_for(wire, idle_timeout=0.5, read_timeout=30.0, max_retries=1)
    events, exc, took = _drive(agent, mode, 10)
    assert isinstance(exc, ProviderError) and exc.type == "idle_timeout", exc
    (retry,) = [e for e in events if isinstance(e, ProviderRetry)]
    assert "idle" in retry.reason
    assert took < 4.0


@pytest.mark.parametrize("mode", MODES)
def test_d8_idle_after_content_fails_and_keeps_it(
    server: ScriptedServer, agent_for: Callable[..., Agent], mode: str
) -> None:
    wire = "anthropic-messages"
    events_ = _events(wire)

    def stall_mid(conn: RawConnection) -> None:
        conn.send(SSE_HEAD + b"content-length: 100000000\r\n\r\n" + b"".join(events_[:5]))
        while not conn.wait(0.05):
            if not conn.send(_ping(wire)):
                return

    server.push(Raw(stall_mid))
    agent = agent_for(wire, idle_timeout=0.5, read_timeout=30.0)
    events, exc, took = _drive(agent, mode, 10)
    assert isinstance(exc, ProviderError) and exc.type == "idle_timeout"
    kept = agent.conversation[-1]
    assert kept.role == "assistant" and kept.text and kept.error
    assert not any(isinstance(e, ProviderRetry) for e in events)


@pytest.mark.parametrize("wire", WIRES)
def test_d8_retry_after_longer_than_retry_wait_max_is_not_waited_for(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str
) -> None:
    rate = {"error": {"type": "rate_limit_error", "message": "slow down"}}
    server.push(HTTPError(429, rate, headers={"retry-after": "3600"}), Reply([Text("x")]))
    agent = agent_for(wire, retry_wait_max=2.0)
    events, exc, took = _drive(agent, "sync", 10)
    assert isinstance(exc, ProviderError) and exc.status == 429
    assert "3600" in str(exc) and "retry_wait_max" in str(exc)
    assert len(server.requests) == 1 and took < 2.0


def test_d8_watchdog_defaults_never_hang() -> None:
    from panto.config import Config

    c = Config(provider="mock", model="anthropic")
    assert c.first_byte_timeout and c.first_byte_timeout <= 300
    assert c.idle_timeout and c.idle_timeout <= 300
    assert c.retry_wait_max is not None and c.retry_wait_max <= 60


# -- D12: a JSON error in a 200 ----------------------------------------------------------------


@pytest.mark.parametrize("wire", WIRES)
@pytest.mark.parametrize("mode", MODES)
def test_d12_json_error_in_a_200_is_the_providers_error(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str, mode: str
) -> None:
    err = {"error": {"type": "not_found_error", "message": "model not found: m"}}
    server.push(HTTPError(200, err), Reply([Text("never")]))
    events, exc, _ = _drive(agent_for(wire), mode, 10)
    assert isinstance(exc, ProviderError), exc
    assert exc.type == "not_found_error" and "model not found: m" in str(exc)
    assert not isinstance(exc, DecodeError)
    assert len(server.requests) == 1  # not retried


@pytest.mark.parametrize("wire", WIRES)
def test_d12_retryable_json_error_in_a_200_is_retried(
    server: ScriptedServer, agent_for: Callable[..., Agent], wire: str
) -> None:
    err = {"error": {"type": "overloaded_error", "message": "busy"}}
    server.push(HTTPError(200, err), Reply([Text(ANSWER)]))
    events, exc, _ = _drive(agent_for(wire), "sync", 10)
    assert exc is None, exc
    assert sum(isinstance(e, ProviderRetry) for e in events) == 1
    assert events[-1].message.text == ANSWER
