"""The exact request JSON panto sends, on both wires, against the loopback
server: plain answers, tool round trips, parallel calls, thinking echoed
back, usage summed per turn, headers and URLs."""

from __future__ import annotations

import json

from support.agent import TEST_KEY, run_turn

from panto.conversation import RedactedThinking, Text, Thinking, ToolUse, Usage
from panto.events import (
    BlockComplete,
    BlockStart,
    ContentDelta,
    MessageComplete,
    MessageStart,
    ToolCallStart,
    ToolDetails,
    ToolResult,
)
from panto.testing import Reply
from panto.tools import FunctionTool

ADD_SCHEMA = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}


def add_tool() -> FunctionTool:
    return FunctionTool("add", "Add two numbers", lambda i: i["a"] + i["b"], ADD_SCHEMA)


def user(wire: str, text: str) -> dict:
    if wire == "anthropic-messages":
        return {"role": "user", "content": [{"type": "text", "text": text}]}
    return {"role": "user", "content": text}


def tools_json(wire: str) -> list:
    if wire == "anthropic-messages":
        return [{"name": "add", "description": "Add two numbers", "input_schema": ADD_SCHEMA}]
    return [
        {
            "type": "function",
            "function": {"name": "add", "description": "Add two numbers", "parameters": ADD_SCHEMA},
        }
    ]


def base_body(wire: str, messages: list, **extra) -> dict:
    if wire == "anthropic-messages":
        body = {"model": "test-model", "messages": messages, "max_tokens": 1000, "stream": True}
    else:
        body = {
            "model": "test-model",
            "messages": messages,
            "stream": True,
            "stream_options": {"include_usage": True},
            "max_completion_tokens": 1000,
        }
    body.update(extra)
    return body


def test_plain_answer(server, wire, make_agent):
    server.push(Reply([Text("Hello there, friend.")], usage=Usage(12, output_tokens=4)))
    agent = make_agent()
    agent.submit_user_message("hi")
    events = run_turn(agent)

    assert len(server.requests) == 1
    req = server.requests[0]
    assert req.json == base_body(wire, [user(wire, "hi")])
    if wire == "anthropic-messages":
        assert req.path == "/v1/messages"
        assert req.headers["x-api-key"] == TEST_KEY
        assert req.headers["anthropic-version"] == "2023-06-01"
        assert "authorization" not in req.headers
    else:
        assert req.path == "/v1/chat/completions"
        assert req.headers["authorization"] == f"Bearer {TEST_KEY}"
        assert "x-api-key" not in req.headers
    assert req.headers["content-type"] == "application/json"

    kinds = [type(e) for e in events]
    assert kinds[0] is MessageStart
    assert kinds[-1] is MessageComplete and events[-1].final
    assert BlockStart in kinds and ContentDelta in kinds and BlockComplete in kinds
    text = "".join(e.text for e in events if type(e) is ContentDelta)
    assert text == "Hello there, friend."
    final = events[-1]
    assert final.message.text == "Hello there, friend."
    assert final.message.provider == ("anthropic" if wire == "anthropic-messages" else "openai")
    assert final.stop_reason == "stop"
    assert final.usage == Usage(12, output_tokens=4)
    assert [m.role for m in agent.conversation] == ["user", "assistant"]


def test_system_prompt_headers_and_options(server, wire, make_agent):
    server.push(Reply([Text("ok")]))
    agent = make_agent(
        system_prompt="You are terse.",
        headers={"x-extra": "1"},
        thinking_budget=2048,
        reasoning_effort="low",
    )
    agent.add_system_message("Use metric units.")
    agent.submit_user_message("hi")
    run_turn(agent)
    req = server.requests[0]
    system = "You are terse.\n\nUse metric units."
    if wire == "anthropic-messages":
        assert req.json == base_body(
            wire,
            [user(wire, "hi")],
            system=system,
            thinking={"type": "enabled", "budget_tokens": 2048},
        )
    else:
        assert req.json == base_body(
            wire,
            [{"role": "system", "content": system}, user(wire, "hi")],
            reasoning_effort="low",
        )
    assert req.headers["x-extra"] == "1"


def test_system_replace(server, wire, make_agent):
    server.push(Reply([Text("ok")]))
    agent = make_agent(system_prompt="old")
    agent.add_system_message("new", mode="replace")
    agent.submit_user_message("hi")
    run_turn(agent)
    body = server.requests[0].json
    if wire == "anthropic-messages":
        assert body["system"] == "new"
    else:
        assert body["messages"][0] == {"role": "system", "content": "new"}


def test_openai_compatible_server_uses_max_tokens(server):
    from support.agent import make_config

    from panto.agent import Agent

    server.push(Reply([Text("ok")]))
    cfg = make_config(server, "openai-chat", provider="ollama", api_key=None)
    with Agent(cfg) as agent:
        agent.submit_user_message("hi")
        run_turn(agent)
    body = server.requests[0].json
    assert body["max_tokens"] == 1000 and "max_completion_tokens" not in body
    assert "authorization" not in server.requests[0].headers


def test_tool_round_trip(server, wire, make_agent):
    call_id = "toolu_01" if wire == "anthropic-messages" else "call_01"
    server.push(
        Reply(
            [Text("Let me add."), ToolUse(call_id, "add", {"a": 2, "b": 3})],
            usage=Usage(10, output_tokens=5),
        ),
        Reply([Text("It is 5.")], usage=Usage(20, output_tokens=7)),
    )
    agent = make_agent()
    agent.register_tool(add_tool())
    agent.submit_user_message("what is 2+3?")
    events = run_turn(agent)

    assert len(server.requests) == 2
    first, second = (r.json for r in server.requests)
    assert first == base_body(wire, [user(wire, "what is 2+3?")], tools=tools_json(wire))
    if wire == "anthropic-messages":
        expected_msgs = [
            user(wire, "what is 2+3?"),
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "Let me add."},
                    {"type": "tool_use", "id": call_id, "name": "add", "input": {"a": 2, "b": 3}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": call_id,
                        "content": "5",
                        "is_error": False,
                    }
                ],
            },
        ]
    else:
        expected_msgs = [
            user(wire, "what is 2+3?"),
            {
                "role": "assistant",
                "content": "Let me add.",
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {
                            "name": "add",
                            "arguments": json.dumps({"a": 2, "b": 3}, separators=(",", ":")),
                        },
                    }
                ],
            },
            {"role": "tool", "tool_call_id": call_id, "content": "5"},
        ]
    assert second == base_body(wire, expected_msgs, tools=tools_json(wire))

    # the event sequence across both rounds
    completes = [e for e in events if type(e) is MessageComplete]
    assert [c.final for c in completes] == [False, True]
    assert completes[0].stop_reason == "tool_use"
    i_complete0 = events.index(completes[0])
    starts = [i for i, e in enumerate(events) if type(e) is ToolCallStart]
    results = [i for i, e in enumerate(events) if type(e) is ToolResult]
    assert len(starts) == 1 and len(results) == 1
    assert i_complete0 < starts[0] < results[0]
    assert type(events[results[0] + 1]) is MessageStart  # the next round
    assert events[results[0]].content == "5" and not events[results[0]].is_error
    details = [e for e in events if type(e) is ToolDetails]
    assert [(d.id, d.name) for d in details] == [(call_id, "add")]
    # usage summed over the turn
    assert completes[0].usage == Usage(10, output_tokens=5)
    assert completes[1].usage == Usage(30, output_tokens=12)
    assert completes[1].message.usage == Usage(20, output_tokens=7)
    assert [m.role for m in agent.conversation] == ["user", "assistant", "tool", "assistant"]


def test_three_parallel_calls(server, wire, make_agent):
    calls = [ToolUse(f"call_{i}", "add", {"a": i, "b": 10}) for i in range(3)]
    server.push(Reply(calls, chunk=3), Reply([Text("11, 12 and 13.")]))
    agent = make_agent()
    agent.register_tool(add_tool())
    agent.submit_user_message("three sums")
    events = run_turn(agent)

    starts = [e.call.id for e in events if type(e) is ToolCallStart]
    assert starts == ["call_0", "call_1", "call_2"]
    results = sorted((e.call.id, e.content) for e in events if type(e) is ToolResult)
    assert results == [("call_0", "10"), ("call_1", "11"), ("call_2", "12")]
    second = server.requests[1].json
    if wire == "anthropic-messages":
        assert second["messages"][-1] == {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": f"call_{i}",
                    "content": str(10 + i),
                    "is_error": False,
                }
                for i in range(3)
            ],
        }
        assert [b["id"] for b in second["messages"][1]["content"]] == starts
    else:
        assert second["messages"][-3:] == [
            {"role": "tool", "tool_call_id": f"call_{i}", "content": str(10 + i)} for i in range(3)
        ]
        assert second["messages"][1] == {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_{i}",
                    "type": "function",
                    "function": {
                        "name": "add",
                        "arguments": json.dumps({"a": i, "b": 10}, separators=(",", ":")),
                    },
                }
                for i in range(3)
            ],
        }


def test_thinking_echoed_back(server, wire, make_agent):
    blocks = [
        Thinking("First, 2+3.", "sig-abc=="),
        RedactedThinking("ENCRYPTED"),
        Text("Adding."),
        ToolUse("toolu_9", "add", {"a": 2, "b": 3}),
    ]
    server.push(Reply(blocks), Reply([Thinking("Done.", "sig-def"), Text("5")]))
    agent = make_agent()
    agent.register_tool(add_tool())
    agent.submit_user_message("2+3")
    events = run_turn(agent)
    second = server.requests[1].json
    assistant = second["messages"][1]
    if wire == "anthropic-messages":
        assert assistant["content"] == [
            {"type": "thinking", "thinking": "First, 2+3.", "signature": "sig-abc=="},
            {"type": "redacted_thinking", "data": "ENCRYPTED"},
            {"type": "text", "text": "Adding."},
            {"type": "tool_use", "id": "toolu_9", "name": "add", "input": {"a": 2, "b": 3}},
        ]
        final = events[-1].message
        assert final.content[0] == Thinking("Done.", "sig-def")
    else:
        # OpenAI-compatible reasoning is kept locally but never sent back
        assert set(assistant) == {"role", "content", "tool_calls"}
        assert assistant["content"] == "Adding."
        assert agent.conversation[1].content[0] == Thinking("First, 2+3.", "")
        assert "reasoning" not in json.dumps(second)


def test_usage_summed_with_cache(server, wire, make_agent):
    server.push(
        Reply(
            [ToolUse("c1", "add", {"a": 1, "b": 1})],
            usage=Usage(100, cache_read_tokens=50, output_tokens=10),
        ),
        Reply(
            [ToolUse("c2", "add", {"a": 2, "b": 2})],
            usage=Usage(5, cache_read_tokens=150, output_tokens=20),
        ),
        Reply([Text("2 and 4")], usage=Usage(7, cache_read_tokens=160, output_tokens=3)),
    )
    agent = make_agent()
    agent.register_tool(add_tool())
    agent.submit_user_message("go")
    with agent.run() as stream:
        events = list(stream)
    total = Usage(112, cache_read_tokens=360, output_tokens=33)
    assert events[-1].usage == total
    assert stream.usage == total
    assert sum((m.usage for m in stream.messages if m.usage), Usage()) == total
    assert stream.rounds == 2


def test_second_turn_sends_history(server, wire, make_agent):
    server.push(Reply([Text("one")]), Reply([Text("two")]))
    agent = make_agent()
    agent.submit_user_message("first")
    run_turn(agent)
    agent.submit_user_message("second")
    run_turn(agent)
    msgs = server.requests[1].json["messages"]
    assert msgs[0] == user(wire, "first")
    assert msgs[2] == user(wire, "second")
    assert msgs[1]["role"] == "assistant"


def test_async_tool_round_trip(server, wire, make_agent):
    import asyncio

    server.push(
        Reply([Text("Let me add."), ToolUse("c1", "add", {"a": 2, "b": 3})]),
        Reply([Text("It is 5.")]),
    )
    agent = make_agent()
    agent.register_tool(add_tool())
    agent.submit_user_message("2+3?")

    async def main():
        out = []
        async with agent.run_async() as stream:
            async for ev in stream:
                out.append(ev)
        await agent.aclose()
        return out

    events = asyncio.run(main())
    completes = [e for e in events if type(e) is MessageComplete]
    assert [c.final for c in completes] == [False, True]
    assert [e.content for e in events if type(e) is ToolResult] == ["5"]
    assert events[-1].message.text == "It is 5."
    assert len(server.requests) == 2
