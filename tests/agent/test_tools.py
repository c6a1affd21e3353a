"""Tool dispatch: Tool and ToolSource grouping, threads, ordering, errors,
unknown tools, invalid arguments, round limits and timeouts."""

from __future__ import annotations

import threading
import time

import pytest
from support.agent import SleepySource, run_turn

from panto.conversation import Text, ToolResultBlock, ToolUse
from panto.errors import ToolError
from panto.events import MessageComplete, ToolCallStart, ToolResult
from panto.testing import Reply
from panto.tools import FunctionTool, ToolDecl, ToolSource


def test_two_sources_run_in_parallel(server, wire, make_agent):
    a = SleepySource("src-a", ["a1", "a2"])
    b = SleepySource("src-b", ["b1", "b2"])
    calls = [
        ToolUse("c0", "a1", {"s": 1}),
        ToolUse("c1", "b1", {"s": 1}),
        ToolUse("c2", "a2", {"s": 1}),
        ToolUse("c3", "b2", {"s": 1}),
        ToolUse("c4", "a1", {"s": 0}),
    ]
    server.push(Reply(calls), Reply([Text("done")]))
    agent = make_agent()
    agent.register_tool_source(a)
    agent.register_tool_source(b)
    agent.submit_user_message("go")
    t0 = time.perf_counter()
    events = run_turn(agent)
    elapsed = time.perf_counter() - t0
    assert elapsed < 1.5, elapsed

    # one invoke_batch per source, on one (non-main) thread, calls in order
    assert a.batches == [(["c0", "c2", "c4"], a.batches[0][1])]
    assert b.batches == [(["c1", "c3"], b.batches[0][1])]
    assert a.batches[0][1] != b.batches[0][1]
    assert threading.main_thread().name not in (a.batches[0][1], b.batches[0][1])

    results = agent.conversation[2]
    assert results.role == "tool"
    assert [(r.tool_use_id, r.content) for r in results.content] == [
        ("c0", "src-a:a1:c0"),
        ("c1", "src-b:b1:c1"),
        ("c2", "src-a:a2:c2"),
        ("c3", "src-b:b2:c3"),
        ("c4", "src-a:a1:c4"),
    ]
    assert sorted(e.call.id for e in events if type(e) is ToolResult) == [
        "c0",
        "c1",
        "c2",
        "c3",
        "c4",
    ]


def test_native_tools_each_get_a_thread(server, wire, make_agent):
    seen: list[str] = []

    def slow(i):
        seen.append(threading.current_thread().name)
        time.sleep(0.3)
        return i["n"]

    server.push(
        Reply([ToolUse(f"c{i}", "slow", {"n": i}) for i in range(4)]),
        Reply([Text("ok")]),
    )
    agent = make_agent()
    agent.register_tool(FunctionTool("slow", "sleeps", slow))
    agent.submit_user_message("go")
    t0 = time.perf_counter()
    run_turn(agent)
    assert time.perf_counter() - t0 < 1.0
    assert len(set(seen)) == 4
    assert [b.content for b in agent.conversation[2].content] == ["0", "1", "2", "3"]


def test_failures_become_error_results(server, wire, make_agent):
    class Broken(ToolSource):
        name = "broken"

        def decls(self):
            return [ToolDecl("b1", "x"), ToolDecl("b2", "y")]

        def invoke_batch(self, calls):
            raise RuntimeError("the source fell over")

    def boom(_):
        raise ValueError("bad input")

    server.push(
        Reply(
            [
                ToolUse("c0", "boom", {}),
                ToolUse("c1", "nope", {}),
                ToolUse("c2", "boom", {}, raw_input='{"a": 1'),
                ToolUse("c3", "b1", {}),
                ToolUse("c4", "b2", {}),
            ]
        ),
        Reply([Text("sorry")]),
    )
    agent = make_agent()
    agent.register_tool(FunctionTool("boom", "raises", boom))
    agent.register_tool_source(Broken())
    agent.submit_user_message("go")
    events = run_turn(agent)
    assert type(events[-1]) is MessageComplete and events[-1].final
    results = {b.tool_use_id: b for b in agent.conversation[2].content}
    assert all(r.is_error for r in results.values())
    assert results["c0"].content == "ValueError: bad input"
    assert "unknown tool 'nope'" in results["c1"].content
    assert "boom" in results["c1"].content  # lists what is available
    assert "not a JSON object" in results["c2"].content and '{"a": 1' in results["c2"].content
    assert results["c3"].content == "RuntimeError: the source fell over"
    assert results["c4"].content == "RuntimeError: the source fell over"
    # and they went back to the model
    second = server.requests[1].json["messages"]
    if wire == "anthropic-messages":
        sent = second[-1]["content"]
        assert [b["is_error"] for b in sent] == [True] * 5
    else:
        sent = [m for m in second if m["role"] == "tool"]
        assert len(sent) == 5 and all(m["content"].startswith("Error: ") for m in sent)


def test_duplicate_names_are_rejected(make_agent):
    agent = make_agent()
    agent.register_tool(FunctionTool("x", "x", str))
    with pytest.raises(ToolError, match="already registered"):
        agent.register_tool(FunctionTool("x", "again", str))
    src = SleepySource("s", ["y", "x"])
    with pytest.raises(ToolError, match="x"):
        agent.register_tool_source(src)
    agent.register_tool_source(SleepySource("s2", ["y"]))
    with pytest.raises(ToolError):
        agent.register_tool_source(SleepySource("s3", ["y"]))
    assert [t.name for t in agent.tools] == ["x", "y"]


def test_max_tool_rounds(server, wire, make_agent):
    for i in range(3):
        server.push(Reply([ToolUse(f"c{i}", "echo", {"i": i})]))
    agent = make_agent(max_tool_rounds=2)
    agent.register_tool(FunctionTool("echo", "echo", lambda i: i["i"]))
    agent.submit_user_message("loop forever")
    events = run_turn(agent)
    finals = [e for e in events if type(e) is MessageComplete]
    assert [f.final for f in finals] == [False, False, True]
    last = finals[-1]
    assert last.stop_reason == "tool_use"
    assert "max_tool_rounds=2" in (last.message.error or "")
    assert len([e for e in events if type(e) is ToolCallStart]) == 2
    assert len(server.requests) == 3
    # the conversation stays valid: the unrun calls are answered
    tail = agent.conversation[-1]
    assert tail.role == "tool" and tail.content[0] == ToolResultBlock(
        "c2", last.message.error, True
    )
    server.push(Reply([Text("fine")]))
    agent.submit_user_message("stop")
    assert run_turn(agent)[-1].message.text == "fine"


def test_tool_timeout(server, wire, make_agent):
    release = threading.Event()

    def hang(_):
        release.wait(10)
        return "late"

    server.push(Reply([ToolUse("c0", "hang", {}), ToolUse("c1", "quick", {})]), Reply([Text("ok")]))
    agent = make_agent(tool_timeout=0.3)
    agent.register_tool(FunctionTool("hang", "hangs", hang))
    agent.register_tool(FunctionTool("quick", "quick", lambda _: "q"))
    agent.submit_user_message("go")
    t0 = time.perf_counter()
    run_turn(agent)
    release.set()
    assert time.perf_counter() - t0 < 2
    results = agent.conversation[2].content
    assert results[0] == ToolResultBlock("c0", "timed out", True)
    assert results[1] == ToolResultBlock("c1", "q", False)


@pytest.mark.parametrize("depth", [150, 5000])
def test_arguments_nested_thousands_deep_are_an_error_result(server, wire, make_agent, depth):
    """Issue 23 item 7: no RecursionError (json.loads fails past ~1000 levels;
    later walks of the input past ~100): one clear error result, the turn
    goes on, the session saves and the history is valid."""
    calls: list[dict] = []

    def echo(inp):
        calls.append(inp)
        return "ran"

    raw = '{"a":' * depth + "1" + "}" * depth
    server.push(
        Reply([ToolUse("c0", "echo", {}, raw_input=raw), ToolUse("c1", "echo", {"x": 1})]),
        Reply([Text("ok")]),
    )
    agent = make_agent()
    agent.register_tool(FunctionTool("echo", "echoes", echo))
    agent.submit_user_message("go")
    events = run_turn(agent)
    assert type(events[-1]) is MessageComplete and events[-1].final
    results = {b.tool_use_id: b for b in agent.conversation[2].content}
    assert results["c0"].is_error
    assert results["c0"].content.startswith(
        'the arguments for \'echo\' are nested more than 100 levels deep: \'{"a":{"a":'
    )
    assert (results["c1"].is_error, results["c1"].content) == (False, "ran")
    assert calls == [{"x": 1}]
    # the next request carried the history (the raw arguments as sent)
    assert len(server.requests) == 2
