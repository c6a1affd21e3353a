"""panto.StreamDecoder / decode / accumulate: the Python face of the C core.

Covers the feed / iterate / close state machine, every event type, error
mapping and stickiness, limits, memory release, and split invariance (any
split of the input gives the same events) for all three wires.
"""

from __future__ import annotations

import dataclasses
import gc
import json
import threading
import weakref

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import panto
from panto.conversation import Message, RedactedThinking, Text, Thinking, ToolUse, Usage
from panto.events import (
    BlockComplete,
    BlockStart,
    ContentDelta,
    MessageComplete,
    MessageStart,
    SSEEvent,
    ToolDetails,
    event_to_dict,
)

# Every test here runs twice: on the C path (panto._fastevents builds the
# events) and on the cffi fallback (decoder_path, tests/conftest.py).
pytestmark = pytest.mark.usefixtures("decoder_path")


def sse(event: str | None, data: object) -> str:
    head = f"event: {event}\n" if event else ""
    return head + f"data: {json.dumps(data, ensure_ascii=False)}\n\n"


def anthropic_stream(*, stop: bool = True) -> bytes:
    parts = [
        sse(
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": "msg_1",
                    "type": "message",
                    "role": "assistant",
                    "model": "claude-test",
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": {
                        "input_tokens": 10,
                        "cache_creation_input_tokens": 2,
                        "cache_read_input_tokens": 3,
                        "output_tokens": 1,
                    },
                },
            },
        ),
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "thinking", "thinking": "", "signature": ""},
            },
        ),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "thinking_delta", "thinking": "Let me think"},
            },
        ),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "signature_delta", "signature": "sig=="},
            },
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": 0}),
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 1,
                "content_block": {"type": "redacted_thinking", "data": "REDACTED"},
            },
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": 1}),
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 2,
                "content_block": {"type": "text", "text": ""},
            },
        ),
        sse("ping", {"type": "ping"}),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "text_delta", "text": "Hi é😀"},
            },
        ),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 2,
                "delta": {"type": "text_delta", "text": " there"},
            },
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": 2}),
        sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 3,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}},
            },
        ),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 3,
                "delta": {"type": "input_json_delta", "partial_json": '{"path": '},
            },
        ),
        sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 3,
                "delta": {"type": "input_json_delta", "partial_json": '"a.txt"}'},
            },
        ),
        sse("content_block_stop", {"type": "content_block_stop", "index": 3}),
        sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                "usage": {"output_tokens": 42},
            },
        ),
    ]
    if stop:
        parts.append(sse("message_stop", {"type": "message_stop"}))
    return "".join(parts).encode()


def anthropic_events_prefix(n: int) -> bytes:
    """The first n SSE events of anthropic_stream()."""
    return b"".join(e + b"\n\n" for e in anthropic_stream().split(b"\n\n")[:n])


ANTHROPIC_USAGE = Usage(
    input_tokens=10, cache_read_tokens=3, cache_write_tokens=2, output_tokens=42
)
ANTHROPIC_BLOCKS = (
    Thinking("Let me think", "sig=="),
    RedactedThinking("REDACTED"),
    Text("Hi é😀 there"),
    ToolUse("toolu_1", "read", {"path": "a.txt"}),
)
ANTHROPIC_EVENTS = [
    MessageStart("msg_1", "claude-test", Usage(10, 3, 2, 1, 0)),
    BlockStart(0, "thinking"),
    ContentDelta(0, "thinking", "Let me think"),
    BlockComplete(0, ANTHROPIC_BLOCKS[0]),
    BlockStart(1, "redacted_thinking"),
    BlockComplete(1, ANTHROPIC_BLOCKS[1]),
    BlockStart(2, "text"),
    ContentDelta(2, "text", "Hi é😀"),
    ContentDelta(2, "text", " there"),
    BlockComplete(2, ANTHROPIC_BLOCKS[2]),
    BlockStart(3, "tool_use"),
    ToolDetails(3, "toolu_1", "read"),
    ContentDelta(3, "tool_use", '{"path": '),
    ContentDelta(3, "tool_use", '"a.txt"}'),
    BlockComplete(3, ANTHROPIC_BLOCKS[3]),
    MessageComplete(
        Message("assistant", ANTHROPIC_BLOCKS, ANTHROPIC_USAGE, "tool_use", None, "claude-test"),
        "tool_use",
        ANTHROPIC_USAGE,
        True,
        "tool_use",
    ),
]


def openai_stream(*, done: bool = True) -> bytes:
    base = {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "gpt-test",
    }

    def chunk(delta: dict, finish: str | None = None) -> str:
        return sse(
            None, dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": finish}])
        )

    def call(index: int, **fields: object) -> dict:
        return {"tool_calls": [{"index": index, **fields}]}

    parts = [
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Hello"}),
        chunk({"content": " world"}),
        chunk(call(0, id="call_a", type="function", function={"name": "read", "arguments": ""})),
        chunk(
            call(1, id="call_b", type="function", function={"name": "grep", "arguments": '{"q":'})
        ),
        chunk(call(0, function={"arguments": '{"path":"x"}'})),
        chunk(call(1, function={"arguments": '"y"}'})),
        chunk({}, "tool_calls"),
        sse(
            None,
            dict(
                base,
                choices=[],
                usage={
                    "prompt_tokens": 100,
                    "completion_tokens": 20,
                    "total_tokens": 120,
                    "prompt_tokens_details": {"cached_tokens": 30},
                    "completion_tokens_details": {"reasoning_tokens": 5},
                },
            ),
        ),
    ]
    if done:
        parts.append("data: [DONE]\n\n")
    return "".join(parts).encode()


OPENAI_USAGE = Usage(input_tokens=70, cache_read_tokens=30, output_tokens=20, reasoning_tokens=5)
OPENAI_BLOCKS = (
    Text("Hello world"),
    ToolUse("call_a", "read", {"path": "x"}),
    ToolUse("call_b", "grep", {"q": "y"}),
)
OPENAI_EVENTS = [
    MessageStart("chatcmpl-1", "gpt-test", Usage()),
    BlockStart(0, "text"),
    ContentDelta(0, "text", "Hello"),
    ContentDelta(0, "text", " world"),
    BlockComplete(0, OPENAI_BLOCKS[0]),
    BlockStart(1, "tool_use"),
    ToolDetails(1, "call_a", "read"),
    BlockStart(2, "tool_use"),
    ToolDetails(2, "call_b", "grep"),
    ContentDelta(2, "tool_use", '{"q":'),
    ContentDelta(1, "tool_use", '{"path":"x"}'),
    ContentDelta(2, "tool_use", '"y"}'),
    BlockComplete(1, OPENAI_BLOCKS[1]),
    BlockComplete(2, OPENAI_BLOCKS[2]),
    MessageComplete(
        Message("assistant", OPENAI_BLOCKS, OPENAI_USAGE, "tool_use", None, "gpt-test"),
        "tool_use",
        OPENAI_USAGE,
        True,
        "tool_calls",
    ),
]

SSE_BODY = (
    b"event: update\nid: 7\ndata: one\ndata: two\n\n"
    b': a comment\nretry: 1500\ndata: {"a": 1}\n\n'
    b"event: done\ndata: bye\n\n"
)
SSE_EVENTS = [
    SSEEvent("update", "one\ntwo", "7", None),
    SSEEvent("message", '{"a": 1}', "7", 1500),
    SSEEvent("done", "bye", "7", 1500),
]

STREAMS = {
    "anthropic-messages": (anthropic_stream(), ANTHROPIC_EVENTS),
    "openai-chat": (openai_stream(), OPENAI_EVENTS),
    "sse": (SSE_BODY, SSE_EVENTS),
}


def collect(wire: str, chunks, **options) -> list:
    return list(panto.decode(wire, chunks, **options))


# -- every event type, whole input -----------------------------------------


@pytest.mark.parametrize("wire", sorted(STREAMS))
def test_whole_stream_events(wire):
    body, expected = STREAMS[wire]
    assert collect(wire, [body]) == expected


@pytest.mark.parametrize("wire", sorted(STREAMS))
def test_byte_by_byte(wire):
    body, expected = STREAMS[wire]
    assert collect(wire, [body[i : i + 1] for i in range(len(body))]) == expected


@pytest.mark.parametrize("wire", sorted(STREAMS))
def test_feed_accepts_bytes_like(wire):
    body, expected = STREAMS[wire]
    assert collect(wire, [bytearray(body)]) == expected
    assert collect(wire, [memoryview(body)]) == expected
    assert collect(wire, body) == expected  # one bytes object for `chunks`
    with pytest.raises(TypeError):
        panto.StreamDecoder(wire).feed("text, not bytes")  # type: ignore[arg-type]


@given(data=st.data())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_any_split_gives_the_same_events(data):
    wire = data.draw(st.sampled_from(sorted(STREAMS)))
    body, expected = STREAMS[wire]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=40)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])]
    assert collect(wire, chunks) == expected


@given(data=st.data())
@settings(max_examples=60, deadline=None)
def test_any_split_of_an_error_stream_gives_the_same_prefix_and_error(data):
    body = (
        anthropic_events_prefix(8)
        + b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    whole = []
    with pytest.raises(panto.ProviderError):
        for ev in panto.decode("anthropic-messages", [body]):
            whole.append(ev)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=20)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])]
    got = []
    with pytest.raises(panto.ProviderError) as info:
        for ev in panto.decode("anthropic-messages", chunks):
            got.append(ev)
    assert got == whole
    assert info.value.type == "overloaded_error"


def test_every_event_serializes():
    for _body, events in STREAMS.values():
        for ev in events:
            d = event_to_dict(ev)
            json.dumps(d)
            assert d["type"]


# -- the fast path builds real, frozen events ------------------------------


def test_fast_path_events_are_ordinary_frozen_dataclasses():
    ev = [e for e in collect("openai-chat", openai_stream()) if type(e) is ContentDelta][0]
    assert type(ev) is ContentDelta
    assert ev == ContentDelta(0, "text", "Hello")
    assert hash(ev) == hash(ContentDelta(0, "text", "Hello"))
    assert repr(ev) == "ContentDelta(index=0, kind='text', text='Hello')"
    assert dataclasses.asdict(ev) == {"index": 0, "kind": "text", "text": "Hello"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        ev.text = "changed"  # type: ignore[misc]
    sse_ev = collect("sse", SSE_BODY)[0]
    assert type(sse_ev) is SSEEvent
    with pytest.raises(dataclasses.FrozenInstanceError):
        sse_ev.data = "changed"  # type: ignore[misc]


@pytest.mark.parametrize("size", [16383, 16384, 16385, 100_000])
def test_large_deltas_take_the_slow_path_with_the_same_result(size):
    text = ("x" * (size - 1)) + "é"  # multi-byte char at the scratch-buffer boundary
    body = (
        sse(
            "message_start",
            {"type": "message_start", "message": {"id": "m", "model": "c", "usage": {}}},
        )
        + sse(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "text", "text": ""},
            },
        )
        + sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
        )
        + sse("content_block_stop", {"type": "content_block_stop", "index": 0})
        + sse(
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": "end_turn"},
                "usage": {"output_tokens": 1},
            },
        )
        + sse("message_stop", {"type": "message_stop"})
    ).encode()
    events = collect("anthropic-messages", body)
    assert ContentDelta(0, "text", text) in events
    assert panto.accumulate(events).text == text


# -- feed / iterate / close --------------------------------------------------


def test_iteration_yields_what_is_decodable_so_far():
    body = openai_stream()
    first_event_end = body.index(b"\n\n") + 2
    dec = panto.StreamDecoder("openai-chat")
    dec.feed(body[: first_event_end - 1])
    assert list(dec) == []  # the blank line is not there yet
    dec.feed(body[first_event_end - 1 : first_event_end])
    assert list(dec) == OPENAI_EVENTS[:1]  # an empty first content opens no block
    assert list(dec) == []  # nothing new
    dec.feed(body[first_event_end:])
    assert list(dec) == OPENAI_EVENTS[1:]
    assert dec.done
    dec.feed(b"")  # harmless
    assert list(dec) == []
    dec.close()
    assert dec.closed
    assert list(dec) == []
    dec.close()  # idempotent


def test_breaking_out_of_an_iteration_loses_nothing():
    dec = panto.StreamDecoder("anthropic-messages")
    dec.feed(anthropic_stream())
    got = []
    for ev in dec:
        got.append(ev)
        if len(got) == 3:
            break
    got.extend(dec)
    assert got == ANTHROPIC_EVENTS


@pytest.mark.parametrize("wire", sorted(STREAMS))
def test_taking_one_event_at_a_time_loses_nothing(wire):
    # Each next(iter(dec)) abandons the iteration after one event, often in
    # the middle of a batch of deltas decoded by one foreign call.
    body, expected = STREAMS[wire]
    for k in range(len(expected) + 1):
        dec = panto.StreamDecoder(wire)
        dec.feed(body)
        got = []
        for ev in dec:
            got.append(ev)
            if len(got) == k:
                break
        while True:
            ev = next(iter(dec), None)
            if ev is None:
                break
            got.append(ev)
        assert got == expected, k


def test_close_after_an_abandoned_iteration_keeps_its_events():
    body, expected = STREAMS["openai-chat"]
    dec = panto.StreamDecoder("openai-chat")
    dec.feed(body)
    got = []
    for ev in dec:
        got.append(ev)
        if type(ev) is ContentDelta:
            break  # inside a batch of deltas
    dec.close()
    got.extend(dec)
    assert got == expected


def test_close_keeps_the_remaining_events_for_iteration():
    dec = panto.StreamDecoder("anthropic-messages")
    dec.feed(anthropic_stream())
    dec.close()  # nothing iterated yet: everything is kept
    assert dec.memory == 0  # the C stream is already freed
    assert list(dec) == ANTHROPIC_EVENTS
    assert list(dec) == []


@pytest.mark.parametrize(
    "wire,body",
    [
        ("anthropic-messages", anthropic_stream(stop=False)),
        ("openai-chat", openai_stream(done=False)),
        ("anthropic-messages", b""),
    ],
)
def test_truncated_stream(wire, body):
    dec = panto.StreamDecoder(wire)
    dec.feed(body)
    seen = list(dec)
    with pytest.raises(panto.TruncatedStream) as info:
        dec.close()
    assert isinstance(info.value, panto.DecodeError)
    assert info.value.code == "truncated"
    # iterating after close: the events left (none here), then the error again
    with pytest.raises(panto.TruncatedStream):
        list(dec)
    # decode() yields every event first, then raises
    got = []
    with pytest.raises(panto.TruncatedStream):
        for ev in panto.decode(wire, [body]):
            got.append(ev)
    assert got == seen
    with pytest.raises(panto.TruncatedStream):
        panto.accumulate(panto.decode(wire, [body]))


def test_close_after_the_error_was_raised_does_not_raise_again():
    dec = panto.StreamDecoder("openai-chat")
    dec.feed(b"data: {not json}\n\n")
    with pytest.raises(panto.DecodeError) as info:
        list(dec)
    assert info.value.code == "bad_json"
    # sticky: iteration and feed raise the same error again
    with pytest.raises(panto.DecodeError) as again:
        list(dec)
    assert again.value is info.value
    with pytest.raises(panto.DecodeError):
        dec.feed(b"data: [DONE]\n\n")
    assert dec.error is info.value
    dec.close()  # already delivered: no raise
    with pytest.raises(panto.DecodeError):
        list(dec)


def test_truncation_events_before_close_are_kept_in_order():
    body = anthropic_stream(stop=False)
    dec = panto.StreamDecoder("anthropic-messages")
    dec.feed(body)
    with pytest.raises(panto.TruncatedStream):
        dec.close()
    got = []
    with pytest.raises(panto.TruncatedStream):
        for ev in dec:
            got.append(ev)
    assert got == ANTHROPIC_EVENTS[:-1]


def test_feed_after_close_or_release_is_a_value_error():
    dec = panto.StreamDecoder("sse")
    dec.close()
    with pytest.raises(ValueError):
        dec.feed(b"data: x\n\n")
    dec = panto.StreamDecoder("sse")
    dec.release()
    with pytest.raises(ValueError):
        dec.feed(b"data: x\n\n")
    with pytest.raises(ValueError):
        list(dec)
    dec.release()  # idempotent


def test_context_manager_releases_without_declaring_eof():
    with panto.StreamDecoder("anthropic-messages") as dec:
        dec.feed(anthropic_stream(stop=False))
        assert dec.memory > 0
    assert dec.memory == 0  # no TruncatedStream raised by leaving the block


def test_raw_sse_wire_has_no_terminal_requirement():
    dec = panto.StreamDecoder("sse")
    dec.feed(SSE_BODY)
    assert list(dec) == SSE_EVENTS
    dec.close()
    assert list(dec) == []
    with pytest.raises(panto.TruncatedStream):
        panto.accumulate(SSE_EVENTS)


# -- constructor and options ---------------------------------------------------


def test_unknown_wire_and_bad_options():
    with pytest.raises(ValueError, match="unknown wire"):
        panto.StreamDecoder("openai")
    with pytest.raises(ValueError, match="max_event_bytes"):
        panto.StreamDecoder("sse", max_event_bytes=0)
    with pytest.raises(ValueError):
        panto.StreamDecoder("sse", max_json_depth=-1)
    with pytest.raises(ValueError):
        panto.StreamDecoder("sse", max_block_bytes=True)  # type: ignore[arg-type]
    assert panto.StreamDecoder("sse").wire == "sse"
    assert "StreamDecoder sse" in repr(panto.StreamDecoder("sse"))


def test_limit_max_event_bytes():
    big = sse(None, {"choices": [{"index": 0, "delta": {"content": "x" * 5000}}]}).encode()
    with pytest.raises(panto.DecodeError) as info:
        collect("openai-chat", big, max_event_bytes=1024)
    assert info.value.code == "limit"
    # the default is far larger
    with pytest.raises(panto.TruncatedStream):
        collect("openai-chat", big)


def test_limit_max_block_bytes():
    body = anthropic_stream()
    with pytest.raises(panto.DecodeError) as info:
        collect("anthropic-messages", body, max_block_bytes=8)
    assert info.value.code == "limit"
    assert collect("anthropic-messages", body, max_block_bytes=1 << 20) == ANTHROPIC_EVENTS


def test_limit_max_json_depth():
    deep = (
        b'data: {"choices":[{"index":0,"delta":{"content":"x"}}],"x":'
        + b"[" * 40
        + b"]" * 40
        + b"}\n\n"
    )
    with pytest.raises(panto.DecodeError) as info:
        collect("openai-chat", deep, max_json_depth=16)
    assert info.value.code in ("limit", "bad_json")
    events = []
    with pytest.raises(panto.TruncatedStream):
        for ev in panto.decode("openai-chat", deep, max_json_depth=64):
            events.append(ev)
    assert ContentDelta(0, "text", "x") in events


def test_limit_max_buffer_bytes_raises_from_feed():
    dec = panto.StreamDecoder("sse", max_buffer_bytes=4096)
    with pytest.raises(panto.DecodeError) as info:
        dec.feed(b"data: " + b"x" * 10000)
    assert info.value.code == "limit"
    assert dec.error is info.value
    dec.close()  # already delivered


# -- error mapping -------------------------------------------------------------


def test_anthropic_error_event_is_a_provider_error():
    body = anthropic_events_prefix(6) + (
        b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n'
    )
    with pytest.raises(panto.ProviderError) as info:
        collect("anthropic-messages", body)
    e = info.value
    assert e.status == 200 and e.type == "overloaded_error" and e.retryable is True
    assert "Overloaded" in e.message and "overloaded_error" in str(e)
    assert isinstance(e, panto.PantoError) and not isinstance(e, panto.DecodeError)


def test_openai_error_chunk_is_a_provider_error():
    body = b'data: {"error":{"message":"The server had an error","type":"server_error","code":null}}\n\n'
    with pytest.raises(panto.ProviderError) as info:
        collect("openai-chat", body)
    assert info.value.status == 200
    assert info.value.type == "server_error"


@pytest.mark.parametrize(
    "wire,body,code",
    [
        ("openai-chat", b"<html>502 Bad Gateway</html>\n\n", "bad_sse"),
        ("openai-chat", b'data: {"choices": [}\n\n', "bad_json"),
        (
            "anthropic-messages",
            b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}\n\n',
            "protocol",
        ),
        ("openai-chat", b"data: \xff\xfe\n\n", "bad_json"),
    ],
)
def test_decode_error_codes(wire, body, code):
    with pytest.raises(panto.DecodeError) as info:
        collect(wire, body)
    assert info.value.code == code
    assert str(info.value)  # a message that says what was wrong


def test_event_after_terminal_is_a_protocol_error_at_close():
    body = openai_stream() + b'data: {"choices":[]}\n\n'
    dec = panto.StreamDecoder("openai-chat")
    dec.feed(body)
    events = []
    with pytest.raises(panto.DecodeError) as info:
        for ev in dec:
            events.append(ev)
        dec.close()
    assert info.value.code == "protocol"
    assert events == OPENAI_EVENTS


def test_event_after_terminal_is_reported_when_close_comes_first():
    # D10: close() before the events are drained still reports it, and the
    # events (terminal included) stay available
    body = openai_stream() + b'data: {"choices":[]}\n\n'
    dec = panto.StreamDecoder("openai-chat")
    dec.feed(body)
    with pytest.raises(panto.DecodeError) as info:
        dec.close()
    assert info.value.code == "protocol" and "event after [DONE]" in str(info.value)
    events = []
    with pytest.raises(panto.DecodeError):
        for ev in dec:
            events.append(ev)
    assert events == OPENAI_EVENTS
    # decode() (feeds everything, then closes) reports it too
    with pytest.raises(panto.DecodeError):
        list(panto.decode("openai-chat", [body]))


# -- accumulate ------------------------------------------------------------------


def test_accumulate():
    msg = panto.accumulate(panto.decode("anthropic-messages", anthropic_stream()))
    assert msg == ANTHROPIC_EVENTS[-1].message
    assert msg.model == "claude-test" and msg.stop_reason == "tool_use"
    assert msg.tool_uses == [ToolUse("toolu_1", "read", {"path": "a.txt"})]
    assert msg.text == "Hi é😀 there"
    msg = panto.accumulate(iter(OPENAI_EVENTS))
    assert [type(b) for b in msg.content] == [Text, ToolUse, ToolUse]  # index order
    not_final = dataclasses.replace(OPENAI_EVENTS[-1], final=False)
    with pytest.raises(panto.TruncatedStream):
        panto.accumulate([not_final])
    assert panto.accumulate([not_final, OPENAI_EVENTS[-1]]) is OPENAI_EVENTS[-1].message


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
def test_accumulate_of_decode_skips_deltas_with_the_same_result(wire):
    body, expected = STREAMS[wire]
    chunks = [body[i : i + 100] for i in range(0, len(body), 100)]
    assert panto.accumulate(panto.decode(wire, chunks)) == expected[-1].message
    started = panto.decode(wire, chunks)
    first = next(started)  # already iterated: the generic path
    assert first == expected[0]
    assert panto.accumulate(started) == expected[-1].message
    with pytest.raises(ValueError):
        panto.decode("nope", chunks)  # arguments are checked at once


def test_tool_input_that_is_not_an_object_is_kept_raw():
    base = {"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": "m"}
    body = (
        sse(
            None,
            dict(
                base,
                choices=[
                    {
                        "index": 0,
                        "delta": {
                            "tool_calls": [
                                {
                                    "index": 0,
                                    "id": "c",
                                    "type": "function",
                                    "function": {"name": "f", "arguments": "[1, 2]"},
                                }
                            ]
                        },
                    }
                ],
            ),
        )
        + sse(None, dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]))
        + "data: [DONE]\n\n"
    ).encode()
    msg = panto.accumulate(panto.decode("openai-chat", body))
    assert msg.content == (ToolUse("c", "f", {}, "[1, 2]"),)


# -- memory and threads ----------------------------------------------------------


def test_memory_is_freed_by_release_close_and_gc():
    dec = panto.StreamDecoder("anthropic-messages")
    dec.feed(anthropic_stream(stop=False) * 1)
    assert dec.memory > 0
    ref = weakref.ref(dec)
    del dec
    gc.collect()
    assert ref() is None


@pytest.mark.parametrize("wire", ["openai-chat", "anthropic-messages", "openai-responses"])
def test_a_decoder_waiting_for_input_keeps_no_large_input_buffer(wire: str) -> None:
    """Hundreds of streams open at once each hold their decoder between two
    reads: once a large read is decoded, its input buffer goes back (what
    the decoder keeps is about its text, not the size of its largest read)."""
    from panto.testing import Reply, render_sse

    events = render_sse(Reply([Text("tok " * 2000)], chunk=4), wire)
    head, body = b"".join(events[:200]), events[200:]
    dec = panto.StreamDecoder(wire, merge_deltas=True)
    dec.feed(head)  # ~30 KB in one read
    assert len(head) > 16_000 and list(dec)
    assert dec.memory < len(head) // 2, (dec.memory, len(head))
    for e in body:  # and it decodes on as before
        dec.feed(e)
    dec.close()
    got = [ev for ev in dec if isinstance(ev, MessageComplete)]
    assert got and got[-1].message.text == "tok " * 2000


@pytest.mark.parametrize("wire", ["openai-chat", "anthropic-messages", "openai-responses"])
def test_a_decoder_waiting_inside_a_cut_event_keeps_only_its_bytes(wire: str) -> None:
    """A read nearly always ends inside an event.  What a decoder keeps
    while it waits for the next one is its own state and the cut event's
    bytes, not the buffer of its last read (twice the read: 8 KiB after
    4 KiB reads, 16 of ~100 bytes of text in the decoder's ~15 KB)."""
    from panto.testing import Reply, render_sse

    text = "tok " * 2000
    body = b"".join(render_sse(Reply([Text(text)], chunk=4), wire))
    dec = panto.StreamDecoder(wire, merge_deltas=True)
    over: list[tuple[int, int]] = []  # (memory, text so far) past the bound
    got = ""
    ended: list[MessageComplete] = []
    for i in range(0, len(body), 4096):  # 4 KiB reads, cut wherever they fall
        dec.feed(body[i : i + 4096])
        for ev in dec:
            if isinstance(ev, ContentDelta):
                got += ev.text
            elif isinstance(ev, MessageComplete):
                ended.append(ev)
        # while the text streams: its fixed state (~4 KB), the text so far
        # (in a buffer up to twice its size) and the cut event's bytes
        if len(got) < len(text) and dec.memory > 5 * 1024 + 2 * len(got) + 1024:
            over.append((dec.memory, len(got)))
    dec.close()
    assert got == text and len(ended) == 1 and ended[0].message.text == text
    assert not over, over[:5]


def test_no_growth_over_many_decoders():
    import resource

    body = anthropic_stream()
    big = b"data: " + b"x" * (1 << 20)  # 1 MiB fed, then dropped unfinished

    def churn(n: int) -> None:
        for _ in range(n):
            d = panto.StreamDecoder("sse")
            d.feed(big)
            assert collect("anthropic-messages", body) == ANTHROPIC_EVENTS

    churn(20)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    churn(200)  # ~200 MiB in total would be visible if it leaked
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert after - before < 64 * 1024  # KiB


def test_distinct_decoders_in_threads():
    body, expected = STREAMS["anthropic-messages"]
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(50):
                assert (
                    collect(
                        "anthropic-messages", [body[i : i + 37] for i in range(0, len(body), 37)]
                    )
                    == expected
                )
        except BaseException as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors


# -- split invariance, errors included (issue 12, D13) ---------------------------


def _outcome(wire: str, chunks, **options) -> tuple[list, tuple[str, str] | None]:
    """Events and (error code, error message) of decoding `chunks`, with
    every event drained after every feed (as a streaming host does)."""
    dec = panto.StreamDecoder(wire, **options)
    events: list = []
    try:
        for c in chunks:
            dec.feed(c)
            events.extend(dec)
        dec.close()
        events.extend(dec)
    except panto.PantoError as e:
        return events, (getattr(e, "code", "provider"), str(e))
    return events, None


_PIECES = [
    openai_stream(),
    anthropic_stream(),
    b"data: " + b"x" * 300 + b"\n\n",  # longer than the small max_event_bytes below
    b': comment\n\ndata: {"choices":[]}\r\n\r\n',
    b"data: {bad\n\n",
    b" data: {}\n\n",
    b"\r",
    b"\n",
    b"data: [DONE]\n\n",
    b"\xef\xbb\xbf",
]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    wire=st.sampled_from(["openai-chat", "anthropic-messages", "sse"]),
    parts=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=12),
    small=st.booleans(),
)
def test_whole_and_split_decoding_agree_on_events_and_errors(wire, parts, cuts, small):
    """Whole-buffer and split decoding give identical events and identical
    errors, messages included (the "line too long" message used to quote a
    length that depended on the split)."""
    body = b"".join(parts)
    options = {"max_event_bytes": 256} if small else {}
    points = sorted({c % (len(body) + 1) for c in cuts})
    chunks = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    whole = _outcome(wire, [body], **options)
    split = _outcome(wire, chunks, **options)
    bytewise = _outcome(wire, [body[i : i + 1] for i in range(len(body))], **options)
    assert split == whole
    assert bytewise == whole


def test_partial_blocks_of_a_truncated_stream():
    # the core keeps the open blocks' text: no need to join deltas
    body = anthropic_stream(stop=False)
    cut = body.index(b"content_block_stop")  # inside the first (thinking) block
    dec = panto.StreamDecoder("anthropic-messages")
    dec.feed(body[:cut])
    events = list(dec)
    joined = "".join(e.text for e in events if isinstance(e, ContentDelta))
    assert joined and dec.partial_blocks() == [Thinking(joined, "sig==")]
    with pytest.raises(panto.TruncatedStream):
        dec.close()
    assert dec.partial_blocks() == [Thinking(joined, "sig==")]  # kept after close
    done = panto.StreamDecoder("openai-chat")
    done.feed(openai_stream())
    list(done)
    assert done.partial_blocks() == []
    done.close()
    assert done.partial_blocks() == []


# -- merge_deltas: one ContentDelta per run of a block's deltas ----------------


def _runs(events: list) -> list:
    """`events` with each run of consecutive ContentDelta of one block joined
    into one: what merge_deltas=True may do, and all it may do."""
    out: list = []
    for ev in events:
        prev = out[-1] if out else None
        if (
            type(ev) is ContentDelta
            and type(prev) is ContentDelta
            and (prev.index, prev.kind) == (ev.index, ev.kind)
        ):
            out[-1] = ContentDelta(ev.index, ev.kind, prev.text + ev.text)
        else:
            out.append(ev)
    return out


def _deltas(events: list) -> int:
    return sum(type(e) is ContentDelta for e in events)


@pytest.mark.parametrize("wire", sorted(STREAMS))
def test_merge_deltas_joins_each_run_of_a_block(wire):
    body, expected = STREAMS[wire]
    merged = collect(wire, [body], merge_deltas=True)
    # fed at once, every run is decoded in one go: exactly one event per run
    assert merged == _runs(expected)
    if wire != "sse":
        assert _deltas(merged) < _deltas(expected)
        assert merged[-1] == expected[-1]  # the same MessageComplete (message, usage ...)
    for ev in merged:
        assert type(ev) is ContentDelta or ev in expected


@given(data=st.data())
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_merge_deltas_under_any_split(data):
    wire = data.draw(st.sampled_from(sorted(STREAMS)))
    body, expected = STREAMS[wire]
    cuts = sorted(data.draw(st.lists(st.integers(0, len(body)), max_size=40)))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])]
    merged = _outcome(wire, chunks, merge_deltas=True)
    # a run may arrive in several pieces (one per feed), never joined across
    # another event or another block, never reordered
    assert (_runs(merged[0]), merged[1]) == (_runs(expected), None)
    assert all(type(e) is not ContentDelta or e.text for e in merged[0])


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    wire=st.sampled_from(["openai-chat", "anthropic-messages", "sse"]),
    parts=st.lists(st.sampled_from(_PIECES), min_size=1, max_size=6),
    cuts=st.lists(st.integers(min_value=0, max_value=4000), max_size=12),
)
def test_merge_deltas_keeps_errors_and_the_events_before_them(wire, parts, cuts):
    body = b"".join(parts)
    points = sorted({c % (len(body) + 1) for c in cuts})
    chunks = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    plain_events, plain_error = _outcome(wire, chunks)
    merged_events, merged_error = _outcome(wire, chunks, merge_deltas=True)
    assert merged_error == plain_error
    assert _runs(merged_events) == _runs(plain_events)


def test_merge_deltas_with_streamgen_bodies_and_random_chunkings():
    import random
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "bench"))
    import streamgen

    for wire in streamgen.WIRES:
        for seed in (1, 2, 3):
            g = streamgen.generate(wire, 60_000, seed)
            rng = random.Random(seed)
            chunks, i = [], 0
            while i < len(g.body):
                n = rng.choice((1, 7, 64, 700, 4096, 20_000))
                chunks.append(g.body[i : i + n])
                i += n
            plain = collect(wire, chunks)
            merged = collect(wire, chunks, merge_deltas=True)
            assert _runs(merged) == _runs(plain)
            assert panto.accumulate(merged).to_dict() == g.message
            assert panto.accumulate(panto.decode(wire, chunks, merge_deltas=True)) == (
                panto.accumulate(plain)
            )
            assert _deltas(merged) < _deltas(plain) / 2, (wire, seed)
            # one body fed at once: runs are cut only by the 16 KiB scratch buffer
            whole = collect(wire, [g.body], merge_deltas=True)
            assert _runs(whole) == _runs(plain)
            assert _deltas(whole) <= _deltas(_runs(plain)) + len(g.body) // 16384 + 1


@pytest.mark.parametrize("size", [16383, 16385, 100_000])
def test_merge_deltas_around_a_large_delta(size):
    head = sse(
        "message_start", {"type": "message_start", "message": {"id": "m", "model": "c"}}
    ) + sse(
        "content_block_start",
        {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
    )

    def delta(text: str) -> str:
        return sse(
            "content_block_delta",
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": text},
            },
        )

    tail = sse("content_block_stop", {"type": "content_block_stop", "index": 0}) + sse(
        "message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}}
    )
    big = "é" * (size // 2)
    body = (head + delta("a") + delta(big) + delta("b") + tail).encode()
    body += sse("message_stop", {"type": "message_stop"}).encode()
    plain = collect("anthropic-messages", [body])
    merged = collect("anthropic-messages", [body], merge_deltas=True)
    assert _runs(merged) == _runs(plain)
    assert panto.accumulate(merged).text == "a" + big + "b"


def test_merge_deltas_abandoned_iteration_loses_nothing():
    body, expected = STREAMS["anthropic-messages"]
    want = _runs(expected)
    for k in range(len(want) + 1):
        dec = panto.StreamDecoder("anthropic-messages", merge_deltas=True)
        dec.feed(body)
        got = []
        for ev in dec:
            got.append(ev)
            if len(got) == k:
                break
        got.extend(dec)
        assert got == want, k


# -- DecodeError.offset: where in the body the fault is ------------------------


def test_decode_error_offset_points_at_the_event_at_fault():
    good = b'data: {"choices":[]}\n\n'
    body = good + b"data: {bad\n\n"
    for chunks in ([body], [body[i : i + 1] for i in range(len(body))]):
        with pytest.raises(panto.DecodeError) as info:
            list(panto.decode("openai-chat", chunks))
        assert info.value.code == "bad_json"
        assert info.value.offset == len(good)
        assert body[info.value.offset :].startswith(b"data: {bad")
        assert f"input byte {len(good)}" in str(info.value)


def test_truncated_stream_offset_is_every_byte_fed():
    body = openai_stream(done=False)
    dec = panto.StreamDecoder("openai-chat")
    dec.feed(body)
    list(dec)
    with pytest.raises(panto.TruncatedStream) as info:
        dec.close()
    assert info.value.offset == len(body)
    assert f"{len(body)} bytes of input" in str(info.value)


def test_decode_error_offset_of_a_protocol_error_and_default():
    start = sse("message_start", {"type": "message_start", "message": {"id": "m", "model": "c"}})
    bad = sse(
        "content_block_delta",
        {"type": "content_block_delta", "index": 5, "delta": {"type": "text_delta", "text": "x"}},
    )
    with pytest.raises(panto.DecodeError) as info:
        list(panto.decode("anthropic-messages", (start + bad).encode()))
    assert (info.value.code, info.value.offset) == ("protocol", len(start.encode()))
    assert panto.DecodeError("made by hand").offset is None
    assert panto.TruncatedStream("cut").offset is None


# -- the iteration without a generator (events ending where the input does) -----


def _openai_text_deltas(n: int) -> tuple[bytes, bytes]:
    """(head: MessageStart + the first text delta, n more text deltas)."""
    base = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}

    def chunk(delta: dict) -> bytes:
        return sse(
            None, dict(base, choices=[{"index": 0, "delta": delta, "finish_reason": None}])
        ).encode()

    head = chunk({"role": "assistant", "content": "a"})
    return head, b"".join(chunk({"content": f"<{i}>"}) for i in range(n))


@pytest.mark.parametrize("merge", [False, True])
@pytest.mark.parametrize("then", ["iterate", "close"])
def test_abandoned_iteration_over_deltas_only_loses_nothing(merge, then):
    head, more = _openai_text_deltas(5)
    tail = b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\ndata: [DONE]\n\n'
    dec = panto.StreamDecoder("openai-chat", merge_deltas=merge)
    dec.feed(head)
    got = list(dec)  # MessageStart, BlockStart, the first delta
    dec.feed(more)  # deltas only: the iteration needs no generator
    it = iter(dec)
    got.append(next(it))
    del it  # abandoned
    unused = iter(dec)  # taken and never used: its events come next time
    del unused
    dec.feed(tail)
    if then == "close":
        dec.close()
    got.extend(dec)
    if then == "iterate":
        dec.close()
    want = collect("openai-chat", [head + more + tail])
    assert _runs(got) == _runs(want)
    assert [e.text for e in got if type(e) is ContentDelta] == (
        ["a", "<0><1><2><3><4>"] if merge else ["a"] + [f"<{i}>" for i in range(5)]
    )


def test_taking_one_event_at_a_time_from_a_long_body():
    # full batches (128 deltas), list and generator iterations, abandoned anywhere
    head, more = _openai_text_deltas(300)
    body = head + more + b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    body += b"data: [DONE]\n\n"
    want = collect("openai-chat", [body])
    for chunks in (
        [body],
        [body[:5000], body[5000:]],
        [body[i : i + 700] for i in range(0, len(body), 700)],
    ):
        dec = panto.StreamDecoder("openai-chat")
        got = []
        for c in chunks:
            dec.feed(c)
            while (ev := next(iter(dec), None)) is not None:
                got.append(ev)
        dec.close()
        got.extend(dec)
        assert got == want


def test_leading_space_first_line_is_an_ignored_field():
    """A recorded OpenRouter body starts with " data: {...}" (leading space):
    an unknown field named " data" (WHATWG), so the rest decodes; whether a
    body is an event stream is decided on the body as a whole."""
    body = b' data: {"choices":[{"index":0,"delta":{"content":"IGNORED"}}]}\n\n' + openai_stream()
    msg = panto.accumulate(
        panto.decode("openai-chat", [body[i : i + 7] for i in range(0, len(body), 7)])
    )
    assert "IGNORED" not in json.dumps(dataclasses.asdict(msg))
    assert msg == panto.accumulate(panto.decode("openai-chat", [openai_stream()]))


@pytest.mark.parametrize(
    "body,line",
    [
        (b"<html>\r\n<body>502 Bad Gateway</body>\r\n</html>\r\n", '"<html>"'),
        (
            b'\n{"error": {"message": "Overloaded"}}\n',
            '"{\\"error\\": {\\"message\\": \\"Overloaded\\"}}"',
        ),
        (b' data: {"x": 1}\n\n', '" data: {\\"x\\": 1}"'),
    ],
)
def test_a_body_that_never_is_an_event_stream_is_bad_sse(body, line):
    dec = panto.StreamDecoder("openai-chat")
    dec.feed(body)
    assert list(dec) == []  # judged at the end, on the whole body
    with pytest.raises(panto.DecodeError) as info:
        dec.close()
    assert info.value.code == "bad_sse"
    n = 2 if body.startswith(b"\n") else 1
    assert str(info.value).startswith(f"line {n}: not an SSE field: {line}"), str(info.value)
