"""The Lua runtime's hooks in the agent loop, against the loopback server:
order and payloads, blocking, input and result rewriting, native tools,
turn_end on cancel, both the sync and the async stream."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from support.integration import LuaSetup

from panto.agent import Agent, AgentHooks, ToolCallDecision
from panto.conversation import Text, ToolUse
from panto.events import MessageComplete, ToolCallStart, ToolResult
from panto.testing import Reply, ScriptedServer
from panto.tools import FunctionTool, ToolCall, ToolOutput


def run_turn(agent: Agent, prompt: str) -> list[Any]:
    agent.submit_user_message(prompt)
    with agent.run() as stream:
        return list(stream)


def results(events: list[Any]) -> list[ToolResult]:
    return [e for e in events if isinstance(e, ToolResult)]


def tool_results_sent(server: ScriptedServer, n: int) -> list[dict[str, Any]]:
    """The tool_result blocks of request ``n`` (Anthropic wire)."""
    msgs = server.requests[n].json["messages"]
    return [
        b
        for m in msgs
        if m["role"] == "user" and isinstance(m["content"], list)
        for b in m["content"]
        if b.get("type") == "tool_result"
    ]


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
def test_hook_order_and_payloads(
    make_agent: Any, server: ScriptedServer, lua: LuaSetup, project: Path, wire: str
) -> None:
    f = project / "notes.txt"
    f.write_text("alpha\nbeta\n")
    server.push(
        Reply([Text("Reading."), ToolUse("call_1", "read", {"path": str(f)})]),
        Reply([Text("Done.")]),
    )
    agent = make_agent(wire=wire)
    events = run_turn(agent, "read my notes")
    assert isinstance(events[-1], MessageComplete) and events[-1].final

    log = lua.hooklog()
    assert [e["event"] for e in log] == [
        "session_start",
        "user_message",
        "before_tool_call",
        "after_tool_call",
        "turn_end",
    ]
    p = [e["payload"] for e in log]
    assert (
        p[0]["model"] == f"{'anthropic' if wire.startswith('anthropic') else 'openai'}/test-model"
    )
    assert p[0]["cwd"] == os.getcwd() and p[0]["resumed"] is False
    assert p[1] == {"text": "read my notes"}
    assert p[2] == {"id": "call_1", "name": "read", "input": {"path": str(f)}}
    assert p[3]["id"] == "call_1" and p[3]["name"] == "read"
    assert "alpha" in p[3]["content"] and p[3]["is_error"] is False
    assert p[4]["stop_reason"] == "stop"
    assert p[4]["cancelled"] is False and "error" not in p[4]  # nil in Lua
    assert p[4]["usage"]["input_tokens"] == 20 and p[4]["usage"]["output_tokens"] == 10
    assert p[4]["rounds"] == 1

    # a second turn: no second session_start
    server.push(Reply([Text("hi")]))
    run_turn(agent, "again")
    assert lua.events()[5:] == ["user_message", "turn_end"]


def test_user_message_rewrite(make_agent: Any, server: ScriptedServer) -> None:
    server.push(Reply([Text("ok")]))
    agent = make_agent()
    msg = agent.submit_user_message("shout:make it loud")
    assert msg.text == "MAKE IT LOUD"
    with agent.run() as stream:
        list(stream)
    assert (
        server.requests[0].json["messages"][0]["content"]
        == [{"type": "text", "text": "MAKE IT LOUD"}]
        or server.requests[0].json["messages"][0]["content"] == "MAKE IT LOUD"
    )


def test_before_tool_call_blocks(
    make_agent: Any, server: ScriptedServer, lua: LuaSetup, project: Path
) -> None:
    marker = project / "marker"
    server.push(
        Reply([ToolUse("call_1", "bash", {"command": f"touch {marker}; rm -f nothing"})]),
        Reply([Text("ok")]),
    )
    agent = make_agent()
    events = run_turn(agent, "clean up")
    (r,) = results(events)
    assert r.is_error and r.content == "tool call blocked: no rm, please"
    assert not marker.exists()  # the command never ran
    # the model got the reason as an error result
    (sent,) = tool_results_sent(server, 1)
    assert sent["is_error"] is True and "no rm, please" in str(sent["content"])
    # after_tool_call saw the blocked result too
    after = [e["payload"] for e in lua.hooklog() if e["event"] == "after_tool_call"]
    assert after[0]["is_error"] is True and "no rm" in after[0]["content"]


def test_before_tool_call_rewrites_input(make_agent: Any, server: ScriptedServer) -> None:
    server.push(
        Reply([ToolUse("call_1", "read", {"path": "REWRITE-ME"})]),
        Reply([Text("ok")]),
    )
    agent = make_agent()
    events = run_turn(agent, "read it")
    (r,) = results(events)
    assert not r.is_error and "the real file" in r.content
    # the conversation keeps the model's own call
    assert r.call.input == {"path": "REWRITE-ME"}
    assert agent.conversation.messages[1].tool_uses[0].input == {"path": "REWRITE-ME"}


def test_handler_error_fails_closed(make_agent: Any, server: ScriptedServer) -> None:
    ran = []
    server.push(Reply([ToolUse("call_1", "explode", {})]), Reply([Text("ok")]))
    agent = make_agent()
    agent.register_tool(FunctionTool("explode", "x", lambda i: ran.append(1) or "ran"))
    (r,) = results(run_turn(agent, "go"))
    assert r.is_error and "handler bug" in r.content and "blocked" in r.content
    assert ran == []


def test_native_tool_passes_through_hooks(
    make_agent: Any, server: ScriptedServer, lua: LuaSetup
) -> None:
    danger_ran = []
    server.push(
        Reply(
            [
                ToolUse("call_1", "echo", {"text": "hi"}),
                ToolUse("call_2", "danger", {}),
                ToolUse("call_3", "shout", {"text": "lua"}),
            ]
        ),
        Reply([Text("ok")]),
    )
    agent = make_agent()
    agent.register_tool(FunctionTool("echo", "Echo", lambda i: i["text"]))
    agent.register_tool(FunctionTool("danger", "Danger", lambda i: danger_ran.append(1) or "x"))
    events = run_turn(agent, "go")
    by_id = {r.call.id: r for r in results(events)}
    assert by_id["call_1"].content == "hi [seen by lua]" and not by_id["call_1"].is_error
    assert by_id["call_2"].is_error and "native blocked" in by_id["call_2"].content
    assert danger_ran == []
    assert by_id["call_3"].content == "LUA!!!"
    # the conversation's tool-result message carries the rewritten results, in order
    tool_msg = agent.conversation.messages[-2]
    assert [b.content for b in tool_msg.content][0] == "hi [seen by lua]"
    before = sorted(e["payload"]["name"] for e in lua.hooklog() if e["event"] == "before_tool_call")
    assert before == ["danger", "echo", "shout"]


def test_turn_end_on_cancel(make_agent: Any, server: ScriptedServer, lua: LuaSetup) -> None:
    server.push(Reply([ToolUse("call_1", "bash", {"command": "sleep 30"})]), Reply([Text("x")]))
    agent = make_agent()
    agent.submit_user_message("wait")
    t0 = time.monotonic()
    with agent.run() as stream:
        for ev in stream:
            if isinstance(ev, ToolCallStart):
                # close from another thread while next() waits for the tool
                threading.Timer(0.3, stream.close).start()
    assert time.monotonic() - t0 < 5
    ends = [e["payload"] for e in lua.hooklog() if e["event"] == "turn_end"]
    assert len(ends) == 1
    assert ends[0]["cancelled"] is True and "stop_reason" not in ends[0]
    # the conversation is still valid for the next turn
    server.push(Reply([Text("fine")]))
    run_turn(agent, "next")
    assert lua.events()[-1] == "turn_end"


def test_turn_end_on_close_after_final_and_on_error(
    make_agent: Any, server: ScriptedServer, lua: LuaSetup
) -> None:
    server.push(Reply([Text("hi")]))
    agent = make_agent()
    agent.submit_user_message("x")
    with agent.run() as stream:
        for ev in stream:
            if isinstance(ev, MessageComplete) and ev.final:
                break  # leave without asking for the end
    ends = [e["payload"] for e in lua.hooklog() if e["event"] == "turn_end"]
    assert ends[-1]["cancelled"] is False and ends[-1]["stop_reason"] == "stop"

    server.push(
        Reply([Text("partial answer")], error={"type": "invalid_request_error"}, error_after=4)
    )
    agent.submit_user_message("y")
    with pytest.raises(Exception), agent.run() as stream:
        list(stream)
    ends = [e["payload"] for e in lua.hooklog() if e["event"] == "turn_end"]
    assert len(ends) == 2
    assert ends[-1]["cancelled"] is False and "invalid_request_error" in ends[-1]["error"]


def test_async_stream_hooks_and_cancel(
    make_agent: Any, server: ScriptedServer, lua: LuaSetup, project: Path
) -> None:
    f = project / "a.txt"
    f.write_text("async content\n")
    server.push(
        Reply([ToolUse("call_1", "read", {"path": str(f)})]),
        Reply([Text("done")]),
        Reply([ToolUse("call_2", "bash", {"command": "sleep 30"})]),
    )
    agent = make_agent()

    async def main() -> None:
        agent.submit_user_message("read")
        async with agent.run_async() as stream:
            evs = [ev async for ev in stream]
        assert "async content" in results(evs)[0].content
        agent.submit_user_message("sleep")
        t0 = time.monotonic()
        async with agent.run_async() as stream:
            async for ev in stream:
                if isinstance(ev, ToolCallStart):
                    asyncio.get_running_loop().call_later(0.3, stream.close)
        assert time.monotonic() - t0 < 5
        await agent.aclose()

    asyncio.run(asyncio.wait_for(main(), 20))
    assert lua.events() == [
        "session_start",
        "user_message",
        "before_tool_call",
        "after_tool_call",
        "turn_end",
        "user_message",
        "before_tool_call",
        "turn_end",
    ]
    assert lua.hooklog()[-1]["payload"]["cancelled"] is True


def test_before_compact(make_agent: Any, lua: LuaSetup) -> None:
    agent = make_agent()
    assert agent.compaction_prompt("the default") == "summarize for the default"
    (p,) = [e["payload"] for e in lua.hooklog() if e["event"] == "before_compact"]
    assert p["prompt"] == "the default" and p["messages"] == 0


def test_python_hooks_without_lua(server: ScriptedServer) -> None:
    """The hooks protocol is generic: a plain AgentHooks subclass."""
    seen: list[str] = []

    class Hooks(AgentHooks):
        def session_start(self, info: Any) -> None:
            seen.append("session_start")

        def user_message(self, text: str) -> str:
            seen.append("user_message")
            return text + "!"

        def before_tool_call(self, call: ToolCall) -> ToolCallDecision:
            seen.append(f"before:{call.name}")
            if call.name == "boom":
                raise RuntimeError("hook crashed")
            return ToolCallDecision(ToolCall(call.id, call.name, {"n": call.input["n"] * 10}))

        def after_tool_call(self, call: ToolCall, output: ToolOutput) -> ToolOutput:
            seen.append(f"after:{call.name}")
            return ToolOutput(output.content + "?", output.is_error)

        def turn_end(self, info: Any) -> None:
            seen.append(f"turn_end:{info['stop_reason']}")

    server.push(
        Reply([ToolUse("c1", "double", {"n": 2})]),
        Reply([ToolUse("c2", "boom", {"n": 1})]),
        Reply([Text("ok")]),
    )
    from panto.config import Config

    cfg = Config(provider="anthropic", model="m", base_url=server.url, api_key="k", max_retries=0)
    with Agent(cfg) as agent:
        agent.register_tool(FunctionTool("double", "x", lambda i: i["n"] * 2))
        agent.register_tool(FunctionTool("boom", "x", lambda i: "should not run"))
        agent.add_hooks(Hooks())
        events = run_turn(agent, "go")
        rs = results(events)
        assert rs[0].content == "40?"
        assert rs[1].is_error and "hook crashed" in rs[1].content
        assert agent.conversation.messages[0].text == "go!"
    assert seen == [
        "session_start",
        "user_message",
        "before:double",
        "after:double",
        "before:boom",
        "after:boom",
        "turn_end:stop",
    ]
