"""The offline ``mock`` model (``panto.testing.echo_responder``): what it
answers to the request bodies both wires send."""

from __future__ import annotations

import json
from typing import Any

import pytest

from panto.conversation import Text, ToolUse
from panto.testing import RecordedRequest, echo_responder

SCHEMA = {
    "type": "object",
    "properties": {"timeout": {"type": "integer"}, "command": {"type": "string"}},
    "required": ["command"],
}


def request(wire: str, messages: list[dict[str, Any]]) -> RecordedRequest:
    if wire == "openai-chat":
        tools = [{"type": "function", "function": {"name": "bash", "parameters": SCHEMA}}]
    else:
        tools = [{"name": "bash", "input_schema": SCHEMA}]
    body = json.dumps({"messages": messages, "tools": tools}).encode()
    return RecordedRequest("POST", "/", {}, body, wire)


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
def test_plain_text_after_the_tool_name_is_its_first_required_parameter(wire: str) -> None:
    reply = echo_responder(request(wire, [{"role": "user", "content": "call bash ls -la  /"}]))
    [call] = [b for b in reply.blocks if isinstance(b, ToolUse)]
    assert (call.name, call.input) == ("bash", {"command": "ls -la  /"})
    reply = echo_responder(
        request(wire, [{"role": "user", "content": 'call bash {"command": "x"}'}])
    )
    [call] = [b for b in reply.blocks if isinstance(b, ToolUse)]
    assert call.input == {"command": "x"}


def test_a_prompt_sent_with_a_cancelled_calls_result_is_answered() -> None:
    """After Ctrl-C during a tool, the next prompt travels in the same user
    message as the call's result: the mock answers the prompt."""
    msgs = [
        {"role": "user", "content": "call bash sleep 9"},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "t1", "name": "bash"}]},
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "t1", "content": "cancelled"},
                {"type": "text", "text": "hello again"},
            ],
        },
    ]
    reply = echo_responder(request("anthropic-messages", msgs))
    assert [b.text for b in reply.blocks if isinstance(b, Text)] == ["You said: hello again"]
    msgs[-1]["content"].pop()  # the result alone is summarised
    reply = echo_responder(request("anthropic-messages", msgs))
    assert [b.text for b in reply.blocks if isinstance(b, Text)] == ["The tool returned: cancelled"]
