"""Prompt caching on the wire ([cache]): Anthropic cache_control breakpoints
on the tools, the system prompt and the last two user-side messages; OpenAI a
prompt_cache_key that stays the same for a session."""

from __future__ import annotations

import json
from typing import Any

import pytest

from panto.agent import Agent
from panto.config import Config
from panto.conversation import Text, ToolUse
from panto.testing import Reply, ScriptedServer
from panto.tools import ToolDecl


class Echo:
    decl = ToolDecl("echo", "Echo the input.", {"type": "object", "properties": {}})

    def invoke(self, input: dict[str, Any]) -> str:
        return "echoed"


def _agent(server: ScriptedServer, wire: str, **kw: Any) -> Agent:
    provider = "anthropic" if wire == "anthropic-messages" else "openai"
    config = Config(
        provider=provider,
        model="m",
        base_url=server.base_url(wire),
        api_key="sk-test",
        max_retries=0,
        system_prompt="SYSTEM",
        **kw,
    )
    agent = Agent(config)
    agent.register_tool(Echo())
    return agent


def _turn(agent: Agent, text: str) -> None:
    agent.submit_user_message(text)
    with agent.run() as stream:
        list(stream)


def _unmarked(messages: list[dict[str, Any]]) -> str:
    strip = [
        {
            **m,
            "content": [{k: v for k, v in b.items() if k != "cache_control"} for b in m["content"]],
        }
        for m in messages
    ]
    return json.dumps(strip, sort_keys=True)


def _breakpoints(body: dict[str, Any]) -> list[str]:
    """Where cache_control sits: 'tools[i]', 'system', 'messages[i]'."""
    out = [f"tools[{i}]" for i, t in enumerate(body.get("tools", [])) if "cache_control" in t]
    system = body.get("system")
    if isinstance(system, list) and any("cache_control" in b for b in system):
        out.append("system")
    for i, m in enumerate(body["messages"]):
        content = m["content"] if isinstance(m["content"], list) else []
        for j, b in enumerate(content):
            if "cache_control" in b:
                assert j == len(content) - 1, "a breakpoint sits on a message's last block"
                out.append(f"messages[{i}]")
    assert len(out) <= 4
    return out


def test_anthropic_breakpoints_follow_a_growing_conversation() -> None:
    with ScriptedServer() as server:
        server.push(
            Reply([Text("one")]),
            Reply([ToolUse("t1", "echo", {})]),
            Reply([Text("two")]),
        )
        agent = _agent(server, "anthropic-messages")
        _turn(agent, "first")
        _turn(agent, "second")  # a tool round: two requests
        bodies = [r.json for r in server.requests]
        agent.close()
    first, second, third = bodies
    assert first["system"] == [
        {"type": "text", "text": "SYSTEM", "cache_control": {"type": "ephemeral"}}
    ]
    assert first["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    assert _breakpoints(first) == ["tools[0]", "system", "messages[0]"]
    # second turn: user0, assistant, user2 -> the last two user messages
    assert _breakpoints(second) == ["tools[0]", "system", "messages[0]", "messages[2]"]
    # the tool round: the tool result is the newest user-side message; the
    # prompt before it (written by the previous request) is read
    assert [m["role"] for m in third["messages"]] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert _breakpoints(third) == ["tools[0]", "system", "messages[2]", "messages[4]"]
    assert third["messages"][4]["content"][-1]["type"] == "tool_result"
    # the prefix the previous request marked is the same content in the next
    # one (markers aside: they choose the prefix, they are not part of it)
    assert _unmarked(third["messages"][:3]) == _unmarked(second["messages"][:3])


def test_anthropic_one_hour_ttl_and_off_switch() -> None:
    with ScriptedServer() as server:
        server.push(Reply([Text("a")]), Reply([Text("b")]))
        agent = _agent(server, "anthropic-messages", cache_ttl="1h")
        _turn(agent, "x")
        agent.close()
        agent = _agent(server, "anthropic-messages", cache_enabled=False)
        _turn(agent, "y")
        agent.close()
        hour, off = server.requests
    cc = {"type": "ephemeral", "ttl": "1h"}
    assert hour.json["system"][0]["cache_control"] == cc
    assert hour.json["messages"][0]["content"][-1]["cache_control"] == cc
    assert hour.headers["anthropic-beta"] == "extended-cache-ttl-2025-04-11"
    assert off.json["system"] == "SYSTEM" and _breakpoints(off.json) == []
    assert "anthropic-beta" not in off.headers


def test_openai_prompt_cache_key_is_stable_per_session() -> None:
    with ScriptedServer() as server:
        server.push(Reply([Text("a")]), Reply([ToolUse("t1", "echo", {})]), Reply([Text("b")]))
        agent = _agent(server, "openai-chat")
        _turn(agent, "first")
        _turn(agent, "second")
        agent.close()
        server.push(Reply([Text("c")]), Reply([Text("d")]))
        other = _agent(server, "openai-chat")
        _turn(other, "another session")
        other.close()
        off = _agent(server, "openai-chat", cache_enabled=False)
        _turn(off, "first")
        off.close()
        keys = [r.json.get("prompt_cache_key") for r in server.requests]
    assert keys[0] and keys[0].startswith("panto-")
    assert keys[0] == keys[1] == keys[2]
    assert keys[3] and keys[3] != keys[0]
    assert keys[4] is None


@pytest.mark.parametrize("provider", ["ollama"])
def test_openai_compatible_servers_get_no_cache_key(provider: str) -> None:
    with ScriptedServer() as server:
        server.push(Reply([Text("a")]))
        config = Config(
            provider=provider, model="m", base_url=server.base_url("openai-chat"), max_retries=0
        )
        agent = Agent(config)
        _turn(agent, "hi")
        agent.close()
        assert "prompt_cache_key" not in server.requests[0].json
