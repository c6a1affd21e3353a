"""The transport seam (``providers/exchange.py``) under the one turn driver:
the sync stack (http11), the async one on httpx and the async one on
panto's own asyncio client (``transport.async_client``) give the same
events, the same errors and the same log lines for the same server
behaviour -- the two hand-written drivers used to differ here (only the
sync one logged the HTTP status; stalls were mapped two ways)."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from panto.agent import Agent
from panto.conversation import Text
from panto.errors import ProviderError
from panto.events import Event, MessageComplete
from panto.providers import transport
from panto.testing import HTTPError, Reply, ScriptedServer

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
