"""Retries, HTTP errors, in-stream provider errors, disconnects and stalls."""

from __future__ import annotations

import time

import pytest
from support.agent import make_config, run_turn

from panto.agent import Agent
from panto.conversation import Text, Thinking, Usage
from panto.errors import ProviderError
from panto.events import ContentDelta, MessageComplete, MessageStart, ProviderRetry
from panto.testing import HTTPError, Reply

OVERLOADED = {"type": "overloaded_error", "message": "Overloaded"}


def test_429_retry_after(server, wire, make_agent):
    server.push(
        HTTPError(
            429,
            {"error": {"type": "rate_limit_error", "message": "slow down"}},
            headers={"retry-after": "1"},
        ),
        Reply([Text("finally")]),
    )
    agent = make_agent()
    agent.submit_user_message("hi")
    t0 = time.perf_counter()
    events = run_turn(agent)
    assert time.perf_counter() - t0 >= 1.0
    retries = [e for e in events if type(e) is ProviderRetry]
    assert len(retries) == 1
    r = retries[0]
    assert (r.attempt, r.delay, r.status) == (1, 1.0, 429)
    assert "slow down" in r.reason
    assert events[0] is r  # before anything of the answer
    assert events[-1].message.text == "finally"
    assert len(server.requests) == 2
    assert server.requests[0].body == server.requests[1].body


@pytest.mark.parametrize("status", [408, 409, 500, 502, 503, 529])
def test_retryable_status(server, status):
    server.push(HTTPError(status), Reply([Text("ok")]))
    with Agent(make_config(server, "anthropic-messages")) as agent:
        agent.submit_user_message("hi")
        events = run_turn(agent)
    assert [e.status for e in events if type(e) is ProviderRetry] == [status]
    assert events[-1].message.text == "ok"


def test_529_then_overloaded_in_200_before_content(server, wire, make_agent):
    server.push(
        HTTPError(529, {"type": "error", "error": OVERLOADED}),
        # after message_start (+ ping) / after the first (role) chunk
        Reply(
            [Text("never seen")],
            error=OVERLOADED,
            error_after=2 if wire == "anthropic-messages" else 1,
        ),
        Reply([Text("third time lucky")]),
    )
    agent = make_agent()
    agent.submit_user_message("hi")
    events = run_turn(agent)
    retries = [e for e in events if type(e) is ProviderRetry]
    assert [r.status for r in retries] == [529, 200]
    assert "overloaded" in retries[1].reason.lower()
    assert [type(e) for e in events[:3]] == [ProviderRetry, ProviderRetry, MessageStart]
    assert sum(type(e) is MessageStart for e in events) == 1
    assert events[-1].message.text == "third time lucky"
    assert len(server.requests) == 3


def test_error_after_content_raises_and_keeps_partial(server, wire, make_agent):
    # the error arrives after some text has streamed: no retry
    text = "The answer is forty-two, because"
    server.push(
        Reply(
            [Thinking("pondering", "sig"), Text(text)], error=OVERLOADED, error_after=11, chunk=4
        ),
        Reply([Text("unused")]),
    )
    agent = make_agent()
    agent.submit_user_message("hi")
    seen = []
    with pytest.raises(ProviderError) as info, agent.run() as stream:
        for ev in stream:
            seen.append(ev)
    err = info.value
    assert err.status == 200 and err.type == "overloaded_error" and err.retryable
    assert not [e for e in seen if type(e) is ProviderRetry]
    assert not [e for e in seen if type(e) is MessageComplete]
    streamed = "".join(e.text for e in seen if type(e) is ContentDelta and e.kind == "text")
    assert streamed and text.startswith(streamed)
    assert len(server.requests) == 1
    partial = agent.conversation[-1]
    assert partial.role == "assistant"
    assert partial.stop_reason == "error"
    assert partial.error and "Overloaded" in partial.error
    assert partial.text == streamed
    # iteration is over after the error
    with pytest.raises(StopIteration):
        next(stream)
    # and the next turn works, sending the partial text back
    server.reset()
    server.push(Reply([Text("again")]))
    agent.submit_user_message("continue")
    assert run_turn(agent)[-1].message.text == "again"
    msgs = server.requests[0].json["messages"]
    assert msgs[1]["role"] == "assistant"


def test_non_retryable_http_error_is_clear(server, wire, make_agent):
    body = (
        {
            "type": "error",
            "error": {"type": "invalid_request_error", "message": "max_tokens: must be positive"},
        }
        if wire == "anthropic-messages"
        else {
            "error": {
                "message": "max_tokens: must be positive",
                "type": "invalid_request_error",
                "param": None,
                "code": None,
            }
        }
    )
    server.push(HTTPError(400, body))
    agent = make_agent()
    agent.submit_user_message("hi")
    with pytest.raises(ProviderError) as info:
        run_turn(agent)
    e = info.value
    assert (e.status, e.type, e.retryable) == (400, "invalid_request_error", False)
    assert str(e) == "HTTP 400 invalid_request_error: max_tokens: must be positive"
    assert len(server.requests) == 1
    assert [m.role for m in agent.conversation] == ["user"]


def test_non_json_error_body(server, wire, make_agent):
    server.push(HTTPError(404, "<html>no such thing</html>"))
    agent = make_agent()
    agent.submit_user_message("hi")
    with pytest.raises(ProviderError, match="HTTP 404.*no such thing"):
        run_turn(agent)


def test_retries_exhausted(server, wire, make_agent):
    server.push(*[HTTPError(503) for _ in range(3)])
    agent = make_agent(max_retries=2)
    agent.submit_user_message("hi")
    seen = []
    with pytest.raises(ProviderError) as info, agent.run() as stream:
        for ev in stream:
            seen.append(ev)
    assert info.value.status == 503
    assert [e.attempt for e in seen] == [1, 2]
    assert len(server.requests) == 3


def test_disconnect_mid_stream(server, wire, make_agent):
    server.push(Reply([Text("a long answer that gets cut off")], chunk=3, disconnect_after=6))
    agent = make_agent()
    agent.submit_user_message("hi")
    t0 = time.perf_counter()
    with pytest.raises(ProviderError) as info:
        run_turn(agent)
    assert time.perf_counter() - t0 < 2
    assert info.value.type == "connection_closed"
    assert "before the response was complete" in str(info.value)
    assert agent.conversation[-1].error and agent.conversation[-1].text
    assert len(server.requests) == 1


def test_disconnect_before_content_retries(server, wire, make_agent):
    server.push(Reply([Text("x")], disconnect_after=1), Reply([Text("ok")]))
    agent = make_agent()
    agent.submit_user_message("hi")
    events = run_turn(agent)
    assert [type(e) for e in events].count(ProviderRetry) == 1
    assert events[-1].message.text == "ok"


def test_stall_hits_read_timeout(server, wire, make_agent):
    server.push(Reply([Text("slow and then nothing")], chunk=4, stall_after=5, stall=10))
    agent = make_agent(read_timeout=0.3)
    agent.submit_user_message("hi")
    t0 = time.perf_counter()
    with pytest.raises(ProviderError) as info:
        run_turn(agent)
    assert time.perf_counter() - t0 < 3
    assert info.value.type == "read_timeout"
    assert "read timeout" in str(info.value)


def test_connection_refused_retries_then_fails(server):
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    cfg = make_config(server, "openai-chat", base_url=f"http://127.0.0.1:{port}/v1", max_retries=1)
    with Agent(cfg) as agent:
        agent.submit_user_message("hi")
        seen = []
        with pytest.raises(ProviderError) as info, agent.run() as stream:
            for ev in stream:
                seen.append(ev)
    assert info.value.type == "connection_error"
    assert [type(e) for e in seen] == [ProviderRetry]


def test_async_retry_and_error(server, wire, make_agent):
    import asyncio

    server.push(
        HTTPError(529),
        Reply([Text("ok")], usage=Usage(3, output_tokens=1)),
        Reply([Text("partial text here")], chunk=2, disconnect_after=6),
    )
    agent = make_agent()

    async def turn():
        out = []
        async for ev in agent.run_async():
            out.append(ev)
        return out

    async def main():
        agent.submit_user_message("one")
        first = await turn()
        agent.submit_user_message("two")
        with pytest.raises(ProviderError):
            await turn()
        await agent.aclose()
        return first

    first = asyncio.run(main())
    assert [type(e) for e in first].count(ProviderRetry) == 1
    assert first[-1].message.text == "ok"
    assert agent.conversation[-1].error
