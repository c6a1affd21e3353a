"""``panto.agent.Session``, the one writer: a prompt submitted while a tool
runs is steered into the turn (after the round's results) or queued as a
follow-up turn; every tool call keeps exactly one result; the store records
the conversation's order.  Real loopback HTTP (the mock model)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from support.agent import make_config

from panto.agent import Agent, Session
from panto.conversation import Message, ToolResultBlock, ToolUse
from panto.events import ToolCallStart
from panto.sessions import MemoryStore
from panto.testing import ScriptedServer, echo_responder
from panto.tools import FunctionTool


@pytest.fixture
def echo() -> Iterator[ScriptedServer]:
    with ScriptedServer(responder=echo_responder) as s:
        yield s


def gated_agent(server: ScriptedServer, wire: str) -> tuple[Agent, threading.Event]:
    """An agent whose ``slow`` tool runs until the gate opens."""
    gate = threading.Event()

    def slow(_: dict[str, Any]) -> str:
        assert gate.wait(10), "the test never opened the gate"
        return "slept"

    agent = Agent(make_config(server, wire), store=MemoryStore())
    agent.register_tool(FunctionTool("slow", "Sleep a while", slow))
    return agent, gate


def shape(conv: Any) -> list[str]:
    """role:summary of each message (system left out)."""
    out = []
    for m in conv:
        if m.role == "system":
            continue
        if m.role == "tool":
            out.append("tool:" + ",".join(b.content for b in m.content))
        elif m.tool_uses:
            out.append("assistant:call")
        else:
            out.append(f"{m.role}:{m.text}")
    return out


def assert_one_result_per_call(messages: list[Message]) -> None:
    """Every call is answered exactly once, in the tool message right after it."""
    results: dict[str, int] = {}
    for i, m in enumerate(messages):
        for b in m.content:
            if isinstance(b, ToolResultBlock):
                results[b.tool_use_id] = results.get(b.tool_use_id, 0) + 1
        calls = [b.id for b in m.content if isinstance(b, ToolUse)]
        if calls:
            nxt = messages[i + 1]
            assert nxt.role == "tool", [x.role for x in messages]
            assert [b.tool_use_id for b in nxt.content] == calls  # type: ignore[union-attr]
    assert results and set(results.values()) == {1}, results


def check(agent: Agent, want: list[str]) -> None:
    msgs = list(agent.conversation)
    assert shape(msgs) == want
    assert_one_result_per_call(msgs)
    stored = agent.store.load_conversation().conversation  # type: ignore[union-attr]
    assert list(stored) == msgs  # the store has the conversation's order


STEERED = [
    "user:call slow {}",
    "assistant:call",
    "tool:slept",
    "user:by the way",
    "assistant:You said: by the way",
]
FOLLOWED = [
    "user:call slow {}",
    "assistant:call",
    "tool:slept",
    "assistant:The tool returned: slept",
    "user:and then",
    "assistant:You said: and then",
]


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
@pytest.mark.parametrize("mode", ["steer", "follow_up"])
def test_submit_during_a_running_tool(echo: ScriptedServer, wire: str, mode: str) -> None:
    agent, gate = gated_agent(echo, wire)
    session = Session(agent)
    session.submit("call slow {}")
    text = "by the way" if mode == "steer" else "and then"
    seen = []
    with agent:
        for ev in session.run():
            seen.append(type(ev).__name__)
            if isinstance(ev, ToolCallStart):
                session.submit(text, mode=mode)  # type: ignore[arg-type]
                assert session.queued == 1
                gate.set()
    check(agent, STEERED if mode == "steer" else FOLLOWED)
    assert session.queued == 0 and not session.running
    # the steered prompt went out with the tool result, in one request
    assert len(echo.requests) == (2 if mode == "steer" else 3)


@pytest.mark.parametrize("mode", ["steer", "follow_up"])
def test_submit_during_a_running_tool_async(echo: ScriptedServer, mode: str) -> None:
    agent, gate = gated_agent(echo, "anthropic-messages")
    session = Session(agent)
    text = "by the way" if mode == "steer" else "and then"

    async def main() -> None:
        session.submit("call slow {}")
        async for ev in session.run_async():
            if isinstance(ev, ToolCallStart):
                session.submit(text, mode=mode)  # type: ignore[arg-type]
                gate.set()
        await agent.aclose()

    asyncio.run(main())
    check(agent, STEERED if mode == "steer" else FOLLOWED)


def test_the_agent_alone_steers_a_prompt_submitted_during_a_tool(echo: ScriptedServer) -> None:
    """The review's reproduction: ``submit_user_message`` while a tool runs
    used to give the call two results, one after the user message."""
    agent, gate = gated_agent(echo, "anthropic-messages")
    agent.submit_user_message("call slow {}")
    with agent, agent.run() as stream:
        for ev in stream:
            if isinstance(ev, ToolCallStart):
                agent.submit_user_message("by the way")
                assert agent.queued == 1 and len(agent.conversation) == 2
                gate.set()
    check(agent, STEERED)


def test_a_prompt_steered_after_the_last_round_starts_the_next_turn(echo: ScriptedServer) -> None:
    """Submitted when the model asks for no more tools: the turn ends, the
    prompt is taken by the next one (Session.run runs it)."""
    agent = Agent(make_config(echo, "anthropic-messages"), store=MemoryStore())
    session = Session(agent)
    session.submit("hello")
    with agent:
        for ev in session.run():
            if type(ev).__name__ == "MessageStart" and len(agent.conversation) == 1:
                session.submit("again", mode="steer")
                assert agent.queued == 1
    assert shape(agent.conversation) == [
        "user:hello",
        "assistant:You said: hello",
        "user:again",
        "assistant:You said: again",
    ]


def test_one_run_at_a_time_and_cancel_drops_the_queue(echo: ScriptedServer) -> None:
    agent, gate = gated_agent(echo, "anthropic-messages")
    session = Session(agent)
    session.submit("call slow {}")
    it = session.run()
    with agent:
        for ev in it:
            if isinstance(ev, ToolCallStart):
                with pytest.raises(Exception, match="already running"):
                    next(session.run())
                session.submit("later")
                session.cancel()
                assert session.queued == 0
                gate.set()
    assert not session.running
    assert "user:later" not in shape(agent.conversation)
    assert_one_result_per_call(list(agent.conversation))


def test_new_fork_reopen_and_list(tmp_path: Any, echo: ScriptedServer) -> None:
    from panto.sessions import open_backend

    backend = open_backend(str(tmp_path / "sessions"))
    store = backend.create(str(tmp_path))
    agent = Agent(make_config(echo, "anthropic-messages"), store=store, system_prompt="sys")
    session = Session(agent, backend=backend, cwd=str(tmp_path))
    session.submit("hello")
    with agent:
        list(session.run())
        first = store.session_id
        assert [i.id for i in session.list()] == [first]
        forked = session.fork()
        assert agent.store is not store and agent.store.session_id == forked  # type: ignore[union-attr]
        session.submit("in the fork")
        list(session.run())
        loaded = session.reopen()
        assert [m.text for m in loaded.conversation][-2:] == [
            "in the fork",
            "You said: in the fork",
        ]
        fresh = session.new()
        assert fresh is not None and agent.store is fresh
        assert shape(agent.conversation) == [] and agent.conversation[0].role == "system"
        assert backend.read(first).conversation[-1].text == "You said: hello"  # unchanged
        session.close()
