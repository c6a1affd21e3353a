"""Two tool calls with the same id (in one answer, or repeating an earlier
call's id): the duplicate gets a fresh id, so both run with their own
result and the history stays valid for providers (ids unique, each result
after its call)."""

from __future__ import annotations

from typing import Any

from support.agent import make_config, run_turn

from panto.agent import Agent
from panto.conversation import Text, ToolResultBlock, ToolUse
from panto.events import ToolResult
from panto.sessions.memory import MemoryStore
from panto.testing import Reply, ScriptedServer
from panto.tools import FunctionTool


def _agent(server: ScriptedServer, wire: str, store: Any) -> tuple[Agent, list[str]]:
    ran: list[str] = []
    agent = Agent(make_config(server, wire), store=store)
    agent.register_tool(
        FunctionTool(
            "echo",
            "echo",
            lambda i: ran.append(str(i["s"])) or f"echo {i['s']}",
            {"type": "object", "properties": {"s": {"type": "string"}}},
        )
    )
    return agent, ran


def _ids(body: dict[str, Any], wire: str) -> tuple[list[str], list[str]]:
    """(tool call ids, tool result ids) of a request body, in order."""
    calls: list[str] = []
    results: list[str] = []
    for m in body["messages"]:
        if wire == "openai-chat":
            calls += [c["id"] for c in m.get("tool_calls") or ()]
            if m["role"] == "tool":
                results.append(m["tool_call_id"])
        elif isinstance(m["content"], list):
            for b in m["content"]:
                if b.get("type") == "tool_use":
                    calls.append(b["id"])
                elif b.get("type") == "tool_result":
                    results.append(b["tool_use_id"])
    return calls, results


def test_duplicate_ids_get_fresh_ids(wire: str) -> None:
    store = MemoryStore()
    with ScriptedServer() as server:
        server.push(
            Reply([ToolUse("call_1", "echo", {"s": "a"}), ToolUse("call_1", "echo", {"s": "b"})]),
            Reply([ToolUse("call_1", "echo", {"s": "c"})]),  # repeats an earlier turn's id
            Reply([Text("done")]),
            Reply([Text("and again")]),
        )
        agent, ran = _agent(server, wire, store)
        agent.submit_user_message("go")
        events = run_turn(agent)
        agent.submit_user_message("more")
        run_turn(agent)
        last = server.requests[-1].json
        agent.close()
    assert sorted(ran) == ["a", "b", "c"]
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.content for r in results] == ["echo a", "echo b", "echo c"]
    calls, answered = _ids(last, wire)
    assert len(calls) == 3 and len(set(calls)) == 3, calls
    assert calls == answered
    assert calls[0] == "call_1"  # the first keeps its id
    # the store holds the same valid history: a reload has unique ids too
    loaded = store.load_conversation().conversation
    uses = [b.id for m in loaded for b in m.content if isinstance(b, ToolUse)]
    res = [b.tool_use_id for m in loaded for b in m.content if isinstance(b, ToolResultBlock)]
    assert uses == res == calls
