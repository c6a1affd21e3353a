"""The codec's second half (panto.providers.codec*): encoders and request
parsers, checked as inverses of panto's own direction.

- Every provider fixture: decode -> encode -> decode gives the same events
  (and the same error, for provider errors); the encoding is the wire's
  shape (an event a line pair per SSE event, the terminal event last).
- Every request golden: parse -> serialize gives the golden body again, and
  the parsed conversation is the golden one where the wire carries it all.
- The non-streamed response bodies, against hand-written ones.
- Bad request bodies: one clear error naming the field.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from support.codec import decode_body

import panto
from panto.conversation import Message, Text, Thinking, ToolUse, Usage
from panto.events import Event, event_to_dict
from panto.providers import anthropic, openai_chat, openai_responses
from panto.providers.codec import (
    ParsedRequest,
    RequestError,
    encode_events,
    make_encoder,
    parse_request,
    response_body,
)

ROOT = Path(__file__).resolve().parent
FIXTURES = ROOT / "fixtures"
GOLDEN = ROOT / "golden" / "requests"
WIRES = ("anthropic-messages", "openai-chat")
#: the wires whose request bodies are read back (the Responses wire's
#: streams are tests/test_codec_responses.py's)
REQUEST_WIRES = (*WIRES, "openai-responses")


def _fixtures() -> list[str]:
    names = []
    for p in sorted(FIXTURES.glob("*.json")):
        if json.loads(p.read_text(encoding="utf-8"))["wire"] in WIRES:
            names.append(p.stem)
    return names


def decode(wire: str, body: bytes) -> tuple[list[Event], BaseException | None]:
    return decode_body(wire, body)


#: fixtures whose second decoding differs, and why (the wire cannot say it
#: from the events alone)
LOSSY = {
    # refusal text came as delta.refusal with finish_reason "stop": the
    # events say only "text, then refusal", which this wire encodes as
    # content + content_filter (same stop_reason, other raw reason)
    "openai_refusal": "raw_stop_reason",
    # the finish_reason chunk completed the block, then the stream broke
    # off before [DONE]: the events do not carry the finish_reason, so the
    # encoding breaks off after the last delta (the block never completes)
    "openai_truncated_no_done": "trailing block_complete",
}


@pytest.mark.parametrize("name", _fixtures())
def test_decode_encode_decode_is_identity(name: str) -> None:
    wire = json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))["wire"]
    first, error = decode(wire, (FIXTURES / f"{name}.sse").read_bytes())
    enc = make_encoder(wire)
    sse: list[bytes] = []
    for ev in first:
        sse += enc.encode(ev)
    if isinstance(error, panto.ProviderError):
        sse.append(enc.error(error.type or "api_error", error.message))
    for one in sse:  # one SSE event each, blank-line terminated
        assert one.endswith(b"\n\n") and b"\n\n" not in one[:-2], one
    second, error2 = decode(wire, b"".join(sse))
    a = [event_to_dict(e) for e in first]
    b = [event_to_dict(e) for e in second]
    if LOSSY.get(name) == "raw_stop_reason":
        for d in a + b:
            d.pop("raw_stop_reason", None)
    elif LOSSY.get(name) == "trailing block_complete":
        while a and a[-1]["type"] == "block_complete":
            a.pop()
    assert b == a
    if isinstance(error, panto.ProviderError):
        assert isinstance(error2, panto.ProviderError)
        assert (error2.type, error2.message, error2.retryable) == (
            error.type,
            error.message,
            error.retryable,
        )
    elif first and type(first[-1]).__name__ == "MessageComplete":
        assert error2 is None
    else:  # cut short: the encoding is cut short too
        assert isinstance(error2, panto.DecodeError) and error2.code == "truncated"


def test_whole_blocks_without_deltas_are_streamed_as_one_delta() -> None:
    """Events built from a finished message (no deltas) encode to a stream
    that decodes to that message, on both wires."""
    from panto.events import BlockComplete, BlockStart, MessageComplete, MessageStart

    msg = Message(
        "assistant",
        (Thinking("hmm", "sig"), Text("hello"), ToolUse("call_1", "read", {"path": "a"})),
        Usage(input_tokens=3, output_tokens=4),
        "tool_use",
        model="m",
    )
    events: list[Event] = [MessageStart("id-1", "m", Usage(input_tokens=3))]
    for i, b in enumerate(msg.content):
        kind = {"Thinking": "thinking", "Text": "text", "ToolUse": "tool_use"}[type(b).__name__]
        events += [BlockStart(i, kind), BlockComplete(i, b)]  # type: ignore[arg-type]
    events.append(MessageComplete(msg, "tool_use", msg.usage or Usage()))
    for wire in WIRES:
        got, err = decode(wire, b"".join(encode_events(wire, events)))
        assert err is None
        final = got[-1]
        assert isinstance(final, MessageComplete) and final.stop_reason == "tool_use"
        blocks = final.message.content
        if wire == "openai-chat":  # no signatures on this wire
            assert blocks == (
                Thinking("hmm"),
                Text("hello"),
                ToolUse("call_1", "read", {"path": "a"}),
            )
        else:
            assert blocks == msg.content
        assert final.usage == Usage(input_tokens=3, output_tokens=4)


# -- request bodies ---------------------------------------------------------------------------


def _cases() -> list[tuple[str, dict[str, Any]]]:
    return [
        (p.stem, json.loads(p.read_text(encoding="utf-8"))) for p in sorted(GOLDEN.glob("*.json"))
    ]


def serialize(req: ParsedRequest) -> dict[str, Any]:
    """The body panto's own serializers write for a parsed request."""
    messages = list(req.conversation)
    body: dict[str, Any] = {"model": req.model, **req.options}
    if req.wire == "openai-responses":
        instructions = openai_responses.system_text(messages)
        if instructions:
            body["instructions"] = instructions
        body["input"] = openai_responses.serialize_input(messages)
        tools = openai_responses.serialize_tools(req.tools) + req.extra_tools
        if tools:
            body["tools"] = tools
        body[req.max_tokens_field] = req.max_tokens
        body["stream"] = req.stream
        # received items go in as their own JSON text (_Raw): read back
        return json.loads(openai_responses._dumps(body))
    if req.wire == "anthropic-messages":
        system = anthropic.system_text(messages)
        if system:
            body["system"] = system
        body["messages"] = anthropic.serialize_messages(messages)
        tools = anthropic.serialize_tools(req.tools) + req.extra_tools
        if req.cache_ttl:
            anthropic.add_cache_breakpoints(body, req.cache_ttl)
    else:
        body["messages"] = openai_chat.serialize_messages(messages)
        tools = openai_chat.serialize_tools(req.tools) + req.extra_tools
    if tools:
        body["tools"] = tools
    if req.max_tokens is not None:
        body[req.max_tokens_field] = req.max_tokens
    if req.stream:
        body["stream"] = True
    return body


#: (case, wire) pairs the wire carries whole: the parsed conversation is the
#: golden one (metadata such as stop_reason is not on a request)
LOSSLESS = {
    ("tool_round", "anthropic-messages"),
    ("tool_round", "openai-chat"),
    ("images", "anthropic-messages"),
    ("images", "openai-chat"),
    ("tool_round", "openai-responses"),
    ("images", "openai-responses"),
}


@pytest.mark.parametrize("wire", REQUEST_WIRES)
@pytest.mark.parametrize("stem,case", _cases(), ids=[s for s, _ in _cases()])
def test_parse_then_serialize_gives_the_golden_body(stem: str, case: dict, wire: str) -> None:
    if wire not in case["bodies"]:
        pytest.skip(f"{stem} is about another wire")
    body = case["bodies"][wire]
    req = parse_request(wire, json.dumps(body).encode())
    assert req.model == case["model"] and req.max_tokens == case["max_tokens"] and req.stream
    assert [t.name for t in req.tools] == [t["name"] for t in case["tools"]]
    assert serialize(req) == body
    # parsing what the parsed request serializes to changes nothing
    again = parse_request(wire, serialize(req))
    assert list(again.conversation) == list(req.conversation)
    if (stem, wire) in LOSSLESS:
        want = [Message.from_dict({**m, "stop_reason": None}) for m in case["messages"]]
        assert list(req.conversation) == want


def test_responses_items_are_read_back_as_received() -> None:
    """Reasoning items (their summary as text, the item as signature, as the
    decoder keeps them), built-in tool calls as server blocks, a string
    input, system items and non-function tools."""
    case = json.loads((GOLDEN / "responses_items.json").read_text(encoding="utf-8"))
    body = case["bodies"]["openai-responses"]
    req = parse_request("openai-responses", body)
    assistant = req.conversation[1]
    assert assistant.role == "assistant"
    thinking, server = assistant.content[0], assistant.content[1]
    assert thinking == Thinking(
        "Search first.", json.dumps(body["input"][1], separators=(",", ":"))
    )
    assert openai_responses.is_reasoning_item(thinking.signature)  # type: ignore[union-attr]
    assert server.value() == body["input"][2]  # type: ignore[union-attr]
    assert req.options == {"store": False, "include": ["reasoning.encrypted_content"]}

    req = parse_request(
        "openai-responses",
        {
            "model": "m",
            "instructions": "be brief",
            "input": [
                {"type": "message", "role": "developer", "content": "no emoji"},
                {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
            ],
            "tools": [{"type": "web_search"}],
            "max_output_tokens": 10,
            "reasoning": {"effort": "low", "summary": "auto"},
        },
    )
    assert [m.role for m in req.conversation] == ["system", "user"]
    assert req.conversation[0].content == (Text("be brief\n\nno emoji"),)
    assert req.extra_tools == [{"type": "web_search"}]
    assert req.options == {"reasoning": {"effort": "low", "summary": "auto"}}
    assert req.max_tokens == 10 and not req.stream
    plain = parse_request("openai-responses", {"model": "m", "input": "hello"})
    assert list(plain.conversation) == [Message("user", (Text("hello"),))]


def test_anthropic_cache_marks_and_server_blocks_are_read_back() -> None:
    body = {
        "model": "m",
        "system": [
            {"type": "text", "text": "sys", "cache_control": {"type": "ephemeral", "ttl": "1h"}}
        ],
        "messages": [
            {
                "role": "user",
                "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {}}
                ],
            },
        ],
        "tools": [{"type": "web_search_20250305", "name": "web_search"}],
        "max_tokens": 10,
        "thinking": {"type": "enabled", "budget_tokens": 1000},
    }
    req = parse_request("anthropic-messages", body)
    assert req.cache_ttl == "1h"
    assert [m.role for m in req.conversation] == ["system", "user", "assistant"]
    assert req.conversation[1].content == (Text("hi"),)
    assert req.conversation[2].content[0].value()["name"] == "web_search"  # type: ignore[union-attr]
    assert req.extra_tools == [{"type": "web_search_20250305", "name": "web_search"}]
    assert req.options == {"thinking": {"type": "enabled", "budget_tokens": 1000}}
    assert not req.stream


@pytest.mark.parametrize(
    "wire,body,names",
    [
        ("anthropic-messages", b"{not json", "not JSON"),
        ("anthropic-messages", {"messages": []}, "body.model"),
        (
            "anthropic-messages",
            {"model": "m", "messages": [{"role": "robot", "content": "x"}]},
            "body.messages[0].role",
        ),
        ("openai-chat", {"model": "m"}, "body.messages"),
        ("openai-responses", {"model": "m"}, "body.input"),
        ("openai-responses", {"input": "hi"}, "body.model"),
        ("openai-responses", {"model": "m", "input": [3]}, "body.input[0]"),
        (
            "openai-responses",
            {"model": "m", "input": [{"type": "function_call_output", "output": "x"}]},
            "body.input[0].call_id",
        ),
        (
            "openai-responses",
            {"model": "m", "input": [{"role": "robot", "content": "x"}]},
            "body.input[0].role",
        ),
        (
            "openai-responses",
            {
                "model": "m",
                "input": [
                    {"role": "user", "content": [{"type": "input_image", "image_url": "http://x"}]}
                ],
            },
            "base64",
        ),
        (
            "openai-chat",
            {"model": "m", "messages": [{"role": "tool", "content": "x"}]},
            "tool_call_id",
        ),
        (
            "openai-chat",
            {
                "model": "m",
                "messages": [
                    {
                        "role": "user",
                        "content": [{"type": "image_url", "image_url": {"url": "http://x"}}],
                    }
                ],
            },
            "base64",
        ),
    ],
)
def test_a_bad_request_body_is_one_clear_error(wire: str, body: Any, names: str) -> None:
    with pytest.raises(RequestError) as e:
        parse_request(wire, body)
    assert names in str(e.value)
    assert e.value.status == 400


# -- non-streamed responses -------------------------------------------------------------------

MESSAGE = Message(
    "assistant",
    (Thinking("hmm", "sig-1"), Text("Let me look."), ToolUse("call_1", "read", {"path": "a.txt"})),
    Usage(input_tokens=10, cache_read_tokens=5, output_tokens=7),
    "tool_use",
    model="m-1",
)


def test_anthropic_response_body() -> None:
    assert response_body("anthropic-messages", MESSAGE, id="msg_1") == {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "model": "m-1",
        "content": [
            {"type": "thinking", "thinking": "hmm", "signature": "sig-1"},
            {"type": "text", "text": "Let me look."},
            {"type": "tool_use", "id": "call_1", "name": "read", "input": {"path": "a.txt"}},
        ],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 10,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 5,
            "output_tokens": 7,
        },
    }


def test_openai_response_body() -> None:
    body = response_body("openai-chat", MESSAGE, id="chatcmpl-1", created=1)
    assert body == {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1,
        "model": "m-1",
        "choices": [
            {
                "index": 0,
                "message": {
                    "role": "assistant",
                    "content": "Let me look.",
                    "refusal": None,
                    "reasoning_content": "hmm",
                    "tool_calls": [
                        {
                            "id": "call_1",
                            "type": "function",
                            "function": {"name": "read", "arguments": '{"path":"a.txt"}'},
                        }
                    ],
                },
                "logprobs": None,
                "finish_reason": "tool_calls",
            }
        ],
        "usage": {
            "prompt_tokens": 15,
            "completion_tokens": 7,
            "total_tokens": 22,
            "prompt_tokens_details": {"cached_tokens": 5, "audio_tokens": 0},
            "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0},
        },
    }


def test_responses_response_body() -> None:
    body = response_body("openai-responses", MESSAGE, id="resp_1", created=1)
    ids = [item.pop("id") for item in body["output"]]
    assert [i.split("_")[0] for i in ids] == ["rs", "msg", "fc"]
    assert body == {
        "object": "response",
        "id": "resp_1",
        "created_at": 1,
        "status": "completed",
        "error": None,
        "incomplete_details": None,
        "model": "m-1",
        "store": False,
        "usage": {
            "input_tokens": 15,
            "input_tokens_details": {"cached_tokens": 5},
            "output_tokens": 7,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 22,
        },
        "output": [
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "hmm"}],
                "encrypted_content": "sig-1",  # another wire's signature: carried opaque
            },
            {
                "type": "message",
                "status": "completed",
                "content": [
                    {
                        "type": "output_text",
                        "annotations": [],
                        "logprobs": [],
                        "text": "Let me look.",
                    }
                ],
                "role": "assistant",
            },
            {
                "type": "function_call",
                "status": "completed",
                "arguments": '{"path":"a.txt"}',
                "call_id": "call_1",
                "name": "read",
            },
        ],
    }
    # the output items, sent back as the next request's input, are the blocks
    req = parse_request("openai-responses", {"model": "m-1", "input": body["output"]})
    (assistant,) = req.conversation
    assert assistant.content[1:] == MESSAGE.content[1:]
    assert assistant.content[0].text == "hmm"  # type: ignore[union-attr]
    # a reply cut at the limit: response.incomplete's object
    cut = Message("assistant", (Text("Once upon"),), Usage(output_tokens=2), "length", model="m")
    body = response_body("openai-responses", cut, id="resp_2", created=1)
    assert (body["status"], body["incomplete_details"]) == (
        "incomplete",
        {"reason": "max_output_tokens"},
    )
    assert body["output"][0]["content"][0]["text"] == "Once upon"
