"""The transport seam (``providers/exchange.py``) under the one turn driver:
the sync stack (http11), the async one on httpx and the async one on
panto's own asyncio client (``transport.async_client``) give the same
events, the same errors and the same log lines for the same server
behaviour -- the two hand-written drivers used to differ here (only the
sync one logged the HTTP status; stalls were mapped two ways)."""

from __future__ import annotations

import asyncio
import logging
import sys
from dataclasses import replace
from typing import Any

import pytest

from panto.agent import Agent
from panto.conversation import Text
from panto.errors import ProviderError
from panto.events import Event, MessageComplete
from panto.providers import transport
from panto.testing import HTTPError, Raw, RawConnection, Reply, ScriptedServer

STACKS = ("sync-http11", "async-httpx", "async-ahttp11")


def _turn(agent: Agent, stack: str) -> tuple[list[Event], BaseException | None]:
    events: list[Event] = []
    if stack == "sync-http11":
        try:
            with agent.run() as s:
                events.extend(s)
        except ProviderError as exc:
            return events, exc
        return events, None

    async def main() -> BaseException | None:
        if stack == "async-ahttp11":
            client = transport.async_client(False)
            agent._async_http_client = lambda: client  # type: ignore[method-assign]
        try:
            async with agent.run_async() as s:
                async for ev in s:
                    events.append(ev)
        except ProviderError as exc:
            return exc
        finally:
            await agent.aclose()
        return None

    return events, asyncio.run(main())


def _agent(make_agent: Any, **kw: Any) -> Agent:
    a: Agent = make_agent(**kw)
    a.submit_user_message("question")
    return a


@pytest.mark.parametrize("stack", STACKS)
def test_a_turn_streams_the_same_on_every_stack(
    server: ScriptedServer, make_agent: Any, stack: str
) -> None:
    server.push(Reply([Text("The answer is 42.")], chunk=5))
    agent = _agent(make_agent)
    events, exc = _turn(agent, stack)
    assert exc is None
    assert isinstance(events[-1], MessageComplete) and events[-1].final
    assert agent.conversation[-1].text == "The answer is 42."


@pytest.mark.parametrize("stack", STACKS)
def test_an_idle_stall_is_the_same_error_on_every_stack(
    server: ScriptedServer, make_agent: Any, stack: str
) -> None:
    server.push(Reply([Text("partial answer, then nothing")], chunk=4, stall_after=3, stall=10))
    agent = _agent(make_agent, idle_timeout=0.3, max_retries=0)
    events, exc = _turn(agent, stack)
    assert isinstance(exc, ProviderError) and exc.type == "idle_timeout", exc
    assert exc.message == "no progress from 127.0.0.1 for 0.3s (idle timeout; pings do not count)"


@pytest.mark.parametrize("stack", STACKS)
def test_an_error_status_is_mapped_and_logged_the_same_on_every_stack(
    server: ScriptedServer, make_agent: Any, stack: str, caplog: pytest.LogCaptureFixture
) -> None:
    server.push(HTTPError(400, {"error": {"type": "invalid_request_error", "message": "no"}}))
    agent = _agent(make_agent, max_retries=0)
    with caplog.at_level(logging.DEBUG, logger="panto"):
        events, exc = _turn(agent, stack)
    assert isinstance(exc, ProviderError) and exc.status == 400, exc
    assert "no" in str(exc)
    assert any(r.getMessage().startswith("HTTP 400 from http://127.0.0.1") for r in caplog.records)


def test_a_stream_waiting_for_its_next_read_holds_none_of_its_last_one(
    server: ScriptedServer, make_agent: Any, wire: str
) -> None:
    """Hundreds of streams wait for their next read at once: the bytes of
    the last one are in the decoder (a copy), so no layer above it (the
    connection's reads, the exchange, the driver) may keep them meanwhile --
    they did, once each, about a whole read per waiting stream."""
    import gc
    import tracemalloc

    from panto.events import ContentDelta
    from panto.testing import render_sse

    big = "x" * 50_000  # one delta: with the events around it, one read's worth
    reply = Reply([Text(big)], chunk=len(big))
    agent = _agent(make_agent)
    delta = next(i for i, e in enumerate(render_sse(reply, wire)) if len(e) > len(big))
    # a stall after the delta (then the server drops the connection); a
    # turn before it loads what a first turn imports
    server.push(Reply([Text("warm")]), replace(reply, stall_after=delta + 1, stall=1.0))
    held: list[int] = []

    async def main() -> int:
        client = transport.async_client(False)
        agent._async_http_client = lambda: client  # type: ignore[method-assign]
        async for _ in agent.run_async():
            pass
        await agent.asubmit_user_message("again")
        tracemalloc.start()
        try:
            # what the client holds: the server in this process renders the
            # events with the codec (and the test keeps its text)
            server_side = [
                tracemalloc.Filter(False, "*/panto/testing.py"),
                tracemalloc.Filter(False, "*/panto/providers/codec_*.py"),
            ]

            def client_bytes() -> int:
                snap = tracemalloc.take_snapshot().filter_traces(server_side)
                return sum(t.size for t in snap.traces)

            base = client_bytes()

            async def sample() -> None:
                await asyncio.sleep(0.5)  # the driver waits for the next read
                gc.collect()
                held.append(client_bytes() - base)

            sampler: asyncio.Future[None] | None = None
            n = 0
            with pytest.raises(ProviderError, match="broke"):  # the stall ends so
                async for ev in agent.run_async():
                    if n == 0 and sampler is None:
                        # busy at the first event: the rest arrives meanwhile
                        # and the driver's next read takes it all at once
                        await asyncio.sleep(0.3)
                    if type(ev) is ContentDelta:
                        n += len(ev.text)
                        if sampler is None:
                            sampler = asyncio.ensure_future(sample())
                    del ev  # (the test keeps no event either)
            assert sampler is not None
            await sampler
            return n
        finally:
            tracemalloc.stop()
            await agent.aclose()

    assert asyncio.run(main()) == len(big)
    # what is held: the turn's partial answer (one str of the text), not
    # the read's bytes besides
    assert len(big) * 0.9 < held[0] < len(big) * 1.5, held


def test_the_driver_keeps_no_event_of_a_read_while_the_next_read_waits(
    server: ScriptedServer, make_agent: Any, wire: str
) -> None:
    """Once a read's events are yielded, nothing under the caller holds
    them while the driver waits for the next read: a merged delta's text is
    the read's whole text, besides the turn's partial answer (which joins
    every 16 deltas into a copy).  Three places kept the last read's events
    alive until the next read came: the attempt's list of them and its loop
    variable, the turn loop's variable (``async for ev in attempt``), and
    the decoder's exhausted event iterator (pyext/fastevents.c), which the
    decoder keeps until its next feed."""
    import gc
    import types

    from panto.events import ContentDelta
    from panto.testing import render_sse

    agent = _agent(make_agent)
    reply = Reply([Text("first second third")], chunk=6)
    first = next(i for i, e in enumerate(render_sse(reply, wire)) if b"first" in e)
    # the first text delta, then a stall (then the server drops the connection)
    server.push(replace(reply, stall_after=first + 1, stall=1.0))

    async def main() -> list[str]:
        stream = agent.run_async()
        try:
            it = stream.__aiter__()
            ev = await it.__anext__()
            while type(ev) is not ContentDelta:
                ev = await it.__anext__()
            nxt = asyncio.ensure_future(it.__anext__())
            await asyncio.sleep(0.3)  # the driver waits for the next read
            assert not nxt.done(), nxt.result()
            gc.collect()
            here = sys._getframe()
            holders = [
                _holder(r)
                for r in gc.get_referrers(ev)
                if r is not here
                and not (isinstance(r, types.FrameType) and r.f_code is here.f_code)
            ]
            with pytest.raises(ProviderError):  # (the stall ends with a cut)
                await nxt
            return holders
        finally:
            await stream.aclose()
            await agent.aclose()

    assert asyncio.run(main()) == []


def _holder(r: object) -> str:
    """What ``r`` is, for a message: a frame or generator by its function."""
    import types

    if isinstance(r, types.FrameType):
        return f"frame {r.f_code.co_name}"
    if isinstance(r, types.AsyncGeneratorType):
        return f"async generator {r.ag_code.co_name}"
    if isinstance(r, list):
        import gc

        owners = [_holder(o) if not isinstance(o, list) else "list" for o in gc.get_referrers(r)]
        return f"list of {len(r)} in {owners}"
    return type(r).__name__


@pytest.mark.parametrize("stack", STACKS)
def test_a_first_byte_stall_is_the_same_error_on_every_stack(
    server: ScriptedServer, make_agent: Any, stack: str
) -> None:
    """The first-byte watchdog is the head's read timeout on every stack (as
    the sync one always had it), not a deadline of its own around the async
    send."""

    def silent(conn: RawConnection) -> None:
        conn.wait(30)

    server.push(Raw(silent))
    agent = _agent(make_agent, first_byte_timeout=0.3, read_timeout=30.0, max_retries=0)
    events, exc = _turn(agent, stack)
    assert isinstance(exc, ProviderError) and exc.type == "first_byte_timeout", exc
    assert exc.message == "no response from 127.0.0.1 within 0.3s (first_byte timeout)"


def test_an_async_request_start_arms_two_timers(server: ScriptedServer, make_agent: Any) -> None:
    """Starting an async request arms the connect's deadline and the head's
    watchdog, nothing else: a deadline around the send (the first-byte
    watchdog, now the head's own) was a third timer, its context and its
    cancel per request, ~3% of a turn's start with 256 starting at once."""
    from panto.providers.exchange import Timeouts, aopen_stream

    server.push(Reply([Text("The answer is 42.")]))
    agent = _agent(make_agent, first_byte_timeout=5.0)
    ctx = agent._open_turn()  # noqa: SLF001 - the turn's own request and provider
    from panto.agent.turn import Turn

    req = Turn(ctx).request()
    armed: list[float] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        call_at = loop.call_at

        def counting(when: float, *args: Any, **kw: Any) -> Any:
            armed.append(when)
            return call_at(when, *args, **kw)

        loop.call_at = counting  # type: ignore[method-assign]
        client = transport.async_client(False)
        try:
            resp = await aopen_stream(
                client, req, Timeouts.of(ctx.config), ctx.provider.error_from_response
            )
            loop.call_at = call_at  # type: ignore[method-assign]
            await resp.aclose()
        finally:
            loop.call_at = call_at  # type: ignore[method-assign]
            await client.aclose()

    asyncio.run(main())
    assert len(armed) == 2, armed


@pytest.mark.parametrize("stack", STACKS)
def test_text_before_an_error_event_in_the_same_read_reaches_the_caller(
    server: ScriptedServer, make_agent: Any, wire: str, stack: str
) -> None:
    """An error event in the same chunk (or read) as the text before it: the
    caller gets that text, then the error.  The decoder yields the events
    before it raises, but the turn collected them in a list that the raise
    threw away: the caller saw the error and none of the text."""
    from panto.events import ContentDelta
    from panto.testing import render_sse

    reply = Reply([Text("The answer is")], chunk=3, events_per_write=100)
    n = len(render_sse(reply, wire))
    err = {"type": "overloaded_error", "message": "try later"}
    server.push(replace(reply, error=err, error_after=n - 2))
    agent = _agent(make_agent, max_retries=0)
    events, exc = _turn(agent, stack)
    assert isinstance(exc, ProviderError) and "try later" in str(exc), exc
    text = "".join(e.text for e in events if type(e) is ContentDelta)
    assert text and "The answer is".startswith(text), text
