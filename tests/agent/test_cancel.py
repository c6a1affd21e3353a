"""close() cancels a turn promptly and leaves the conversation valid."""

from __future__ import annotations

import asyncio
import signal
import threading
import time

from support.agent import SleepySource, run_turn

from panto.conversation import Text, ToolResultBlock, ToolUse
from panto.events import ContentDelta, ToolCallStart, ToolResult
from panto.testing import Reply
from panto.tools import FunctionTool


def _assert_valid_next_turn(server, agent, wire):
    server.push(Reply([Text("next turn ok")]))
    agent.submit_user_message("again")
    events = run_turn(agent)
    assert events[-1].message.text == "next turn ok"
    msgs = server.requests[-1].json["messages"]
    # every tool call in the history has a result in the next request
    if wire == "anthropic-messages":
        uses = {b["id"] for m in msgs for b in m["content"] if b.get("type") == "tool_use"}
        results = {
            b["tool_use_id"]
            for m in msgs
            if isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        }
    else:
        uses = {c["id"] for m in msgs for c in m.get("tool_calls") or []}
        results = {m["tool_call_id"] for m in msgs if m["role"] == "tool"}
    assert uses == results


def test_close_during_slow_tool_from_another_thread(server, wire, make_agent):
    started = threading.Event()
    release = threading.Event()

    def slow(_):
        started.set()
        release.wait(20)
        return "too late"

    source = SleepySource("src", ["nap"])
    server.push(
        Reply(
            [ToolUse("c0", "slow", {}), ToolUse("c1", "nap", {"s": 20}), ToolUse("c2", "fast", {})]
        )
    )
    agent = make_agent()
    agent.register_tool(FunctionTool("slow", "slow", slow))
    agent.register_tool(FunctionTool("fast", "fast", lambda _: "quick"))
    agent.register_tool_source(source)
    agent.submit_user_message("go")

    stream = agent.run()
    seen = []

    def closer():
        started.wait(5)
        time.sleep(0.1)
        stream.close()

    threading.Thread(target=closer).start()
    t0 = time.perf_counter()
    for ev in stream:  # ends (no error) once closed
        seen.append(ev)
    elapsed = time.perf_counter() - t0
    release.set()
    assert elapsed < 2, elapsed
    assert source.cancelled.is_set()  # the ToolSource was told to cancel
    assert len([e for e in seen if type(e) is ToolCallStart]) == 3
    results = agent.conversation[-1]
    assert results.role == "tool"
    by_id = {b.tool_use_id: b for b in results.content}
    assert by_id["c0"] == ToolResultBlock("c0", "cancelled", True)
    assert by_id["c1"].is_error
    assert by_id["c2"] == ToolResultBlock("c2", "quick", False)
    _assert_valid_next_turn(server, agent, wire)


def test_close_in_consumer_thread_after_tool_start(server, wire, make_agent):
    release = threading.Event()
    server.push(Reply([ToolUse("c0", "wait", {})]))
    agent = make_agent()
    agent.register_tool(FunctionTool("wait", "waits", lambda _: release.wait(20)))
    agent.submit_user_message("go")
    t0 = time.perf_counter()
    with agent.run() as stream:
        for ev in stream:
            if type(ev) is ToolCallStart:
                break
    assert time.perf_counter() - t0 < 1
    release.set()
    assert agent.conversation[-1].content == (ToolResultBlock("c0", "cancelled", True),)
    _assert_valid_next_turn(server, agent, wire)


def test_close_while_streaming_keeps_partial(server, wire, make_agent):
    server.push(Reply([Text("word " * 200)], chunk=5, delay=0.01))
    agent = make_agent()
    agent.submit_user_message("talk")
    t0 = time.perf_counter()
    n = 0
    with agent.run() as stream:
        for ev in stream:
            if type(ev) is ContentDelta:
                n += 1
                if n == 5:
                    break
    assert time.perf_counter() - t0 < 1
    partial = agent.conversation[-1]
    assert partial.role == "assistant" and partial.error == "cancelled"
    assert partial.text == "word " * 5
    _assert_valid_next_turn(server, agent, wire)


def test_close_from_other_thread_while_reading(server, wire, make_agent):
    server.push(Reply([Text("x" * 50)], chunk=1, stall_after=8, stall=20))
    agent = make_agent(read_timeout=20)
    agent.submit_user_message("hi")
    stream = agent.run()
    timer = threading.Timer(0.3, stream.close)
    timer.start()
    t0 = time.perf_counter()
    events = list(stream)
    assert time.perf_counter() - t0 < 2
    assert events and agent.conversation[-1].error == "cancelled"


def test_new_run_cancels_abandoned_stream(server, wire, make_agent):
    server.push(Reply([ToolUse("c0", "t", {})]))
    agent = make_agent()
    agent.register_tool(FunctionTool("t", "t", lambda _: time.sleep(5)))
    agent.submit_user_message("go")
    stream = agent.run()
    for ev in stream:
        if type(ev) is ToolCallStart:
            break  # abandoned without close()
    _assert_valid_next_turn(server, agent, wire)


def test_async_cancel_during_tool(server, wire, make_agent):
    release = threading.Event()
    server.push(Reply([ToolUse("c0", "wait", {})]))
    agent = make_agent()
    agent.register_tool(FunctionTool("wait", "waits", lambda _: release.wait(20)))
    agent.submit_user_message("go")

    cancelled_at: list[float] = []

    async def main():
        stream = agent.run_async()
        calling = asyncio.Event()

        async def consume():
            async for ev in stream:
                if type(ev) is ToolCallStart:
                    calling.set()
                if type(ev) is ToolResult:
                    raise AssertionError("should not finish")

        task = asyncio.create_task(consume())
        # cancel while the tool runs (waiting for the call, not a fixed 0.3 s:
        # a loaded machine may take longer to stream the answer)
        await asyncio.wait_for(calling.wait(), 10)
        await asyncio.sleep(0.1)
        cancelled_at.append(time.perf_counter())
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        await agent.aclose()

    asyncio.run(main())
    release.set()
    assert time.perf_counter() - cancelled_at[0] < 2
    assert agent.conversation[-1].content == (ToolResultBlock("c0", "cancelled", True),)
    _assert_valid_next_turn(server, agent, wire)


def test_keyboard_interrupt_in_next_cancels(server, wire, make_agent):
    import _thread

    import pytest

    release = threading.Event()

    def interrupting(_):
        time.sleep(0.1)
        _thread.interrupt_main()  # Ctrl-C while the consumer waits in next()
        release.wait(20)
        return "late"

    server.push(Reply([ToolUse("c0", "slow", {})]))
    agent = make_agent()
    agent.register_tool(FunctionTool("slow", "slow", interrupting))
    agent.submit_user_message("go")
    # interrupt_main() does nothing while SIGINT is ignored, which it is for a
    # test run started in the background (e.g. `bash .ci/run &`): install
    # Python's own Ctrl-C handler, as an interactive panto has it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    t0 = time.perf_counter()
    try:
        with pytest.raises(KeyboardInterrupt), agent.run() as stream:
            for _ in stream:
                pass
    finally:
        signal.signal(signal.SIGINT, previous)
    release.set()
    assert time.perf_counter() - t0 < 2
    assert agent.conversation[-1].content == (ToolResultBlock("c0", "cancelled", True),)
    _assert_valid_next_turn(server, agent, wire)
