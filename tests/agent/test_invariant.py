"""The terminal invariant of a turn, as a property over scripted turns:
``MessageComplete(final=True)`` is the last event and nothing follows it;
the iteration never ends before it unless ``next()`` raised; every
``ToolCallStart`` gets its ``ToolResult``; the conversation stays valid."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.agent import make_config

from panto.agent import Agent
from panto.conversation import Text, Thinking, ToolResultBlock, ToolUse
from panto.errors import PantoError
from panto.events import MessageComplete, MessageStart, ToolCallStart, ToolResult
from panto.testing import HTTPError, Reply, ScriptedServer
from panto.tools import FunctionTool

OVERLOADED = {"type": "overloaded_error", "message": "Overloaded"}


@pytest.fixture(scope="module")
def shared_server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s


words = st.text(alphabet="abc xyz", min_size=1, max_size=12)
block = st.one_of(
    words.map(Text),
    st.builds(Thinking, words, st.sampled_from(["sig1", "sig2"])),
)
tool_call = st.builds(
    lambda n, name, bad: ToolUse(f"call_{n}", name, {"n": n}, '{"n": ' if bad else None),
    st.integers(0, 10**6),
    st.sampled_from(["ok", "ok", "fails", "missing"]),
    st.sampled_from([False, False, False, True]),
)


@st.composite
def reply(draw):
    blocks = draw(st.lists(block, max_size=2))
    calls = draw(st.lists(tool_call, max_size=3, unique_by=lambda c: c.id))
    fault = draw(st.sampled_from([None, None, None, "error", "disconnect"]))
    r = Reply([*blocks, *calls], chunk=draw(st.integers(1, 6)))
    if fault == "error":
        r.error, r.error_after = OVERLOADED, draw(st.integers(0, 12))
    elif fault == "disconnect":
        r.disconnect_after = draw(st.integers(0, 12))
    return r


script_item = st.one_of(
    reply(),
    reply(),
    reply(),
    st.sampled_from([HTTPError(429, headers={"retry-after": "0"}), HTTPError(529), HTTPError(400)]),
)


def _fails(_):
    raise RuntimeError("nope")


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    wire=st.sampled_from(["anthropic-messages", "openai-chat"]),
    script=st.lists(script_item, min_size=1, max_size=5),
    max_rounds=st.integers(0, 3),
)
def test_terminal_invariant(shared_server, wire, script, max_rounds):
    server = shared_server
    server.reset()
    server.push(*script)
    cfg = make_config(
        server,
        wire,
        max_retries=1,
        retry_base_delay=0.001,
        retry_max_delay=0.002,
        max_tool_rounds=max_rounds,
    )
    with Agent(cfg) as agent:
        agent.register_tool(FunctionTool("ok", "ok", lambda i: i["n"]))
        agent.register_tool(FunctionTool("fails", "fails", _fails))
        agent.submit_user_message("go")
        events = []
        error = None
        stream = agent.run()
        try:
            for ev in stream:
                events.append(ev)
        except PantoError as e:
            error = e
        # exhausted: every later next() ends the iteration
        for _ in range(2):
            with pytest.raises(StopIteration):
                next(stream)
        stream.close()

        finals = [i for i, e in enumerate(events) if type(e) is MessageComplete and e.final]
        if error is None:
            assert finals == [len(events) - 1], "final MessageComplete must be last"
        else:
            assert finals == [], "no final MessageComplete before an error"
        # each message: MessageStart ... MessageComplete
        open_msg = False
        for e in events:
            if type(e) is MessageStart:
                assert not open_msg
                open_msg = True
            elif type(e) is MessageComplete:
                assert open_msg
                open_msg = False
        # every tool call started gets exactly one result
        started = [e.call.id for e in events if type(e) is ToolCallStart]
        results = [e.call.id for e in events if type(e) is ToolResult]
        assert sorted(started) == sorted(results)
        nonfinal = [e for e in events if type(e) is MessageComplete and not e.final]
        assert len(nonfinal) <= max_rounds
        # the conversation is valid for a next request
        answered = {
            b.tool_use_id
            for m in agent.conversation
            for b in m.content
            if isinstance(b, ToolResultBlock)
        }
        for m in agent.conversation:
            for c in m.tool_uses:
                assert c.id in answered
