"""The turn state machine alone: no HTTP, no threads, no clock.  The test
plays the driver: it asks for requests, feeds decoded events (the C core
decodes scripted SSE bytes), reports tool results and failures, and checks
what the turn answers and what it commits."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from panto.agent.turn import CANCELLED, Phase, Turn, TurnContext
from panto.config import Config
from panto.conversation import Conversation, Message, Text, Thinking, ToolUse, Usage
from panto.decoder import decode
from panto.errors import PantoError, ProviderError, TruncatedStream
from panto.events import (
    ContentDelta,
    MessageComplete,
    MessageStart,
    ProviderRetry,
    ToolCallStart,
    ToolResult,
)
from panto.providers import make_provider
from panto.testing import Reply, render_sse
from panto.tools import FunctionTool, ToolOutput

WIRE = "anthropic-messages"
KEY = "sk-state-machine-0123456789-KEY"


def _ctx(**cfg: Any) -> tuple[TurnContext, list[Message], Conversation]:
    config = Config(
        provider="anthropic",
        model="m",
        base_url="http://127.0.0.1:9",
        api_key=KEY,
        max_retries=2,
        retry_base_delay=0.01,
        retry_max_delay=0.02,
        **cfg,
    )
    tool = FunctionTool("add", "add", lambda a, b: a + b, {"type": "object", "properties": {}})
    conv = Conversation([Message.user("add 1 and 2")])
    persisted: list[Message] = []
    ctx = TurnContext(
        config=config,
        conversation=conv,
        registry={"add": (tool, tool.decl)},
        provider=make_provider(config),
        persist=persisted.extend,
    )
    return ctx, persisted, conv


def _events(reply: Reply) -> list[Any]:
    return list(decode(WIRE, render_sse(reply, WIRE)))


def _feed(turn: Turn, events: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for ev in events:
        out += turn.accept(ev)
        if turn.phase is not Phase.STREAMING:
            break
    return out


def test_two_round_tool_turn() -> None:
    ctx, persisted, conv = _ctx()
    turn = Turn(ctx)
    assert turn.phase is Phase.REQUESTING
    req = turn.request()
    assert req.url.endswith("/v1/messages") and turn.phase is Phase.STREAMING
    out = _feed(
        turn,
        _events(Reply([Thinking("hm", "sig"), ToolUse("t1", "add", {"a": 1, "b": 2})])),
    )
    assert type(out[0]) is MessageStart  # released with the first block
    assert sum(type(e) is MessageStart for e in out) == 1
    assert type(out[-1]) is MessageComplete and not out[-1].final
    assert turn.phase is Phase.DISPATCHING
    assert [m.role for m in persisted] == ["assistant"]

    started = turn.start_tools(100.0)
    assert [type(e) for e in started] == [ToolCallStart]
    assert turn.tools is not None and len(turn.tools.groups) == 1
    # the driver ran group 0 (here: by hand) and reports its outputs
    results = turn.tool_results(0, [ToolOutput("3")])
    assert [(type(e), e.content) for e in results] == [(ToolResult, "3")]
    assert turn.phase is Phase.REQUESTING and turn.rounds == 1
    assert [m.role for m in persisted] == ["assistant", "tool"]

    turn.request()
    out = _feed(turn, _events(Reply([Text("It is 3.")])))
    final = out[-1]
    assert type(final) is MessageComplete and final.final
    assert final.message.text == "It is 3."
    assert final.usage == Usage(input_tokens=20, output_tokens=10)  # the turn's total
    assert turn.phase is Phase.DONE
    assert [m.role for m in conv] == ["user", "assistant", "tool", "assistant"]
    info = turn.end()
    assert info is not None and info["stop_reason"] == "stop" and info["rounds"] == 1
    assert not info["cancelled"] and info["error"] is None
    assert turn.end() is None  # once


def test_retry_before_content_then_success() -> None:
    ctx, persisted, _ = _ctx()
    turn = Turn(ctx)
    req = turn.request()
    events = _events(Reply([Text("hello")]))
    # the attempt streamed only the message start, then the provider failed
    assert turn.accept(events[0]) == ()
    retry = turn.attempt_failed(
        ProviderError("overloaded", status=529, type="overloaded_error", retryable=True)
    )
    assert isinstance(retry, ProviderRetry) and retry.attempt == 1 and retry.status == 529
    assert 0 < retry.delay <= 0.02
    assert turn.phase is Phase.REQUESTING and persisted == []
    assert turn.request() is req  # the same request is sent again
    out = _feed(turn, events)
    assert sum(type(e) is MessageStart for e in out) == 1
    assert turn.phase is Phase.DONE
    # retries are bounded by max_retries
    turn2 = Turn(_ctx()[0])
    for _ in range(2):
        turn2.request()
        assert turn2.attempt_failed(TruncatedStream("cut")) is not None
    turn2.request()
    assert turn2.attempt_failed(TruncatedStream("cut")) is None
    assert turn2.phase is Phase.FAILED


def test_retry_after_longer_than_retry_wait_max_fails_at_once() -> None:
    ctx, _, _ = _ctx(retry_wait_max=5.0)
    turn = Turn(ctx)
    turn.request()
    err = ProviderError("slow down", status=429, retryable=True, retry_after=3600.0)
    assert turn.attempt_failed(err) is None
    assert turn.phase is Phase.FAILED
    assert "3600s" in str(err) and "retry_wait_max" in str(err)


def test_failure_after_content_keeps_the_partial_message_scrubbed() -> None:
    ctx, persisted, conv = _ctx()
    turn = Turn(ctx)
    turn.request()
    events = _events(Reply([Text("partial answer")], chunk=4))
    # MessageStart, BlockStart and two deltas, then the provider fails
    out = _feed(turn, events[:4])
    assert [type(e) for e in out[-2:]] == [ContentDelta, ContentDelta]
    err = ProviderError(f"bad key {KEY} echoed", status=200, type="api_error", retryable=True)
    assert turn.attempt_failed(err) is None  # content was shown: no retry
    assert KEY not in str(err) and "***" in str(err)
    assert turn.phase is Phase.FAILED
    kept = conv[-1]
    assert kept.role == "assistant" and kept.stop_reason == "error"
    assert kept.text == "partial "
    assert kept.error is not None and KEY not in kept.error
    assert persisted == [kept]
    info = turn.end()
    assert info is not None and not info["cancelled"] and KEY not in (info["error"] or "")


def test_a_long_stream_holds_its_partial_text_in_few_strings() -> None:
    """A streamed token is a str of its own (~50 bytes of object for a few
    bytes of text): a turn keeps what it needs to save a partial answer
    joined as it goes (fewer than 16 + log2(deltas) strings a block), and
    none of a block the decoder completed."""
    ctx, _, conv = _ctx()
    turn = Turn(ctx)
    turn.request()
    words = [f"w{i} " for i in range(1000)]
    events = _events(Reply([Text("".join(words)), Text("second")], chunk=3))
    first_done = next(i for i, e in enumerate(events) if type(e).__name__ == "BlockComplete")
    _feed(turn, events[: first_done - 5])  # most of the first block's deltas
    parts = turn.partial.parts  # type: ignore[union-attr]
    assert len(parts[0]) < 32 and sum(map(len, parts[0])) > 2000
    via_many = Turn(_ctx()[0])
    via_many.request()
    via_many.accept_many(events[: first_done - 5])  # the driver's path joins too
    assert via_many.partial.parts[0] == parts[0]  # type: ignore[union-attr]
    _feed(turn, events[first_done : first_done + 3])  # block 0 complete; block 1 opens
    assert 0 not in parts and 0 in turn.partial.blocks  # type: ignore[union-attr]
    turn.attempt_failed(ProviderError("gone", status=500, retryable=False))
    assert conv[-1].text.startswith("".join(words))  # the partial answer, whole


def test_cancel_during_tools_answers_every_call() -> None:
    ctx, persisted, conv = _ctx()
    source_calls = [ToolUse("t1", "add", {"a": 1, "b": 2}), ToolUse("t2", "add", {"a": 2})]
    turn = Turn(ctx)
    turn.request()
    _feed(turn, _events(Reply(source_calls)))
    turn.start_tools(0.0)
    assert len(turn.tools.groups) == 2  # type: ignore[union-attr]
    turn.tool_results(1, [ToolOutput("2")])
    owners = turn.cancel()
    assert len(owners) == 1  # group 0 was still running: its owner is cancelled
    assert turn.phase is Phase.CANCELLED
    tool_msg = conv[-1]
    assert tool_msg.role == "tool"
    got = {b.tool_use_id: (b.content, b.is_error) for b in tool_msg.content}
    assert got == {"t1": (CANCELLED, True), "t2": ("2", False)}
    assert turn.tool_results(0, [ToolOutput("late")]) == []  # a late result is dropped
    info = turn.end()
    assert info is not None and info["cancelled"] and info["error"] is None
    assert turn.cancel() == [] and turn.fail("x") == []  # ended: no-ops
    assert persisted[-1] is tool_msg


def test_tool_timeouts_expire_on_the_drivers_clock() -> None:
    ctx, _, _ = _ctx(tool_timeout=5.0)
    turn = Turn(ctx)
    turn.request()
    _feed(turn, _events(Reply([ToolUse("t1", "add", {"a": 1, "b": 2})])))
    turn.start_tools(1000.0)
    assert turn.next_deadline() == 1005.0
    assert turn.expire(1004.0) == ([], [])
    out, owners = turn.expire(1005.0)
    assert [(e.content, e.is_error) for e in out] == [("timed out", True)]
    assert len(owners) == 1 and turn.phase is Phase.REQUESTING


def test_events_out_of_phase_are_errors() -> None:
    turn = Turn(_ctx()[0])
    with pytest.raises(PantoError, match="phase"):
        turn.start_tools()
    turn.request()
    with pytest.raises(PantoError, match="phase"):
        turn.request()


def test_partial_text_pieces_stay_few_and_exact_over_a_long_block() -> None:
    """Merging as a binary counter carries: 25,000 deltas of mixed sizes are
    held in fewer than 16 + log2(25,000) strings, and they join back to
    exactly what was streamed."""
    import random

    from panto.agent.turn import Partial

    rnd = random.Random(7)
    deltas = [f"{i}:" + "y" * rnd.randint(0, 30) for i in range(25_000)]
    p = Partial()
    p.opened(2, "text")
    for d in deltas:
        p.add(2, d)
        assert len(p.parts[2]) < 16 + 15
    assert "".join(p.parts[2]) == "".join(deltas)
