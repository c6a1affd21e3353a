"""Auto-compaction (issue 13): a scripted long session against the loopback
server compacts when the context reaches the threshold, keeps the recent
messages verbatim -- never separating a tool call from its result -- and
records it like a manual compaction (a reload rebuilds the same context)."""

from __future__ import annotations

import random
from typing import Any

from support.agent import make_config

from panto.agent import Agent
from panto.agent.compaction import compaction_due, cut_point, is_compaction_summary
from panto.conversation import Message, Text, ToolResultBlock, ToolUse, Usage
from panto.events import MessageComplete
from panto.sessions.memory import MemoryStore
from panto.testing import Reply, ScriptedServer
from panto.tools import FunctionTool

WIRE = "anthropic-messages"
WINDOW = 10_000


def _agent(server: ScriptedServer, store: Any, **kw: Any) -> Agent:
    config = make_config(
        server,
        WIRE,
        models={"anthropic/test-model": {"context_window": WINDOW}},
        compaction_threshold=0.8,
        compaction_reserve_tokens=1000,
        **kw,
    )
    agent = Agent(config, store=store)
    agent.register_tool(
        FunctionTool(
            "read",
            "read a file",
            lambda i: str(i.get("fill", "x")) * 6000,
            {"type": "object", "properties": {"fill": {"type": "string"}}},
        )
    )
    return agent


def _turn(agent: Agent, prompt: str) -> list[Any]:
    agent.submit_user_message(prompt)
    with agent.run() as s:
        return list(s)


def test_long_session_compacts_at_the_threshold_and_keeps_tool_pairs() -> None:
    store = MemoryStore()
    with ScriptedServer() as server:
        server.push(
            Reply([ToolUse("t1", "read", {"fill": "A"})], usage=Usage(3000, output_tokens=5)),
            Reply([Text("done one")], usage=Usage(5000, output_tokens=5)),
            Reply([ToolUse("t2", "read", {"fill": "B"})], usage=Usage(8500, output_tokens=5)),
            Reply([Text("SUMMARY of the early work")]),  # the compaction request
            Reply([Text("done two")], usage=Usage(4000, output_tokens=5)),
        )
        agent = _agent(server, store)
        _turn(agent, "first task")
        assert len(server.requests) == 2  # 5000 tokens: below 0.8 x 10000
        events = _turn(agent, "second task")
        assert isinstance(events[-1], MessageComplete) and events[-1].final
        assert events[-1].message.text == "done two"
        summary_req, after = server.requests[3].json, server.requests[4].json
        agent.close()

    # the compaction request summarizes the old part: the first tool round
    transcript = summary_req["messages"][-1]["content"]
    transcript = transcript if isinstance(transcript, str) else transcript[0]["text"]
    assert "first task" in transcript and "AAAA" in transcript
    assert "BBBB" not in transcript and "second task" not in transcript
    # the next request: the summary, then the recent messages verbatim
    msgs = after["messages"]
    assert "SUMMARY of the early work" in str(msgs[0]["content"])
    uses = [
        b["id"]
        for m in msgs
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_use"
    ]
    results = [
        b["tool_use_id"]
        for m in msgs
        for b in m["content"]
        if isinstance(b, dict) and b.get("type") == "tool_result"
    ]
    assert uses == results == ["t2"]  # t1 and its result went together into the summary
    assert any("second task" in str(m["content"]) for m in msgs)

    live = [m for m in agent.conversation if m.role != "system"]
    assert is_compaction_summary(live[0]) and live[-1].text == "done two"
    # recorded like a manual compaction: a reload rebuilds the same context
    loaded = store.load_conversation()
    assert list(loaded.conversation) == list(agent.conversation)


def test_no_compaction_when_off_or_below_the_threshold() -> None:
    store = MemoryStore()
    with ScriptedServer() as server:
        server.push(
            Reply([ToolUse("t1", "read", {})], usage=Usage(9000, output_tokens=5)),
            Reply([Text("fine")], usage=Usage(9100, output_tokens=5)),
        )
        agent = _agent(server, store, compaction_auto=False)
        _turn(agent, "go")
        assert len(server.requests) == 2
        assert not any(is_compaction_summary(m) for m in agent.conversation)
        agent.close()


def test_compaction_due_uses_threshold_and_reserve() -> None:
    def conv(tokens: int) -> list[Message]:
        return [
            Message.user("q"),
            Message("assistant", (Text("a"),), Usage(tokens - 1, output_tokens=1)),
        ]

    assert not compaction_due(conv(7999), WINDOW, 0.8, 1000)
    assert compaction_due(conv(8000), WINDOW, 0.8, 1000)
    assert compaction_due(conv(9000), WINDOW, 0.95, 1500)  # the reserve wins
    assert not compaction_due(conv(10**6), None, 0.8, 1000)  # unknown window


def test_cut_point_never_starts_at_a_tool_result() -> None:
    rng = random.Random(7)
    for _ in range(300):
        body: list[Message] = []
        for r in range(rng.randint(1, 12)):
            body.append(Message.user("u" * rng.randint(1, 400)))
            for k in range(rng.randint(0, 3)):
                cid = f"c{r}_{k}"
                body.append(Message("assistant", (ToolUse(cid, "read", {}),)))
                body.append(Message("tool", (ToolResultBlock(cid, "r" * rng.randint(1, 3000)),)))
            body.append(Message("assistant", (Text("a" * rng.randint(1, 400)),)))
        cut = cut_point(body, rng.randint(10, 2000))
        assert 0 < cut <= len(body)
        if cut < len(body):
            assert body[cut].role in ("user", "assistant")
            kept_results = {
                b.tool_use_id
                for m in body[cut:]
                for b in m.content
                if isinstance(b, ToolResultBlock)
            }
            kept_calls = {u.id for m in body[cut:] for u in m.tool_uses}
            assert kept_results == kept_calls
