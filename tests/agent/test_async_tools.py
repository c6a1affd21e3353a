"""Issue 24, step 1: the async driver runs tools through
``ToolSource.ainvoke_batch`` with a cancel token per call, and blocking tool
work on the bounded tool pool -- no thread per tool group.

Real parts: the mock model over loopback HTTP, the Lua runtime with
``std.bash`` starting real process trees."""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.agent import make_config
from support.procs import group_members

from panto.agent import Agent
from panto.conversation import Text, ToolUse
from panto.events import MessageComplete, ToolResult
from panto.lua import LuaRuntime, LuaToolSource, load_extensions
from panto.testing import Reply, ScriptedServer, echo_responder
from panto.tools import FunctionTool, new_tool_pool

# (``std.bash`` declares a timeout of its own; ``tree`` takes the agent's
# ``tool_timeout``)
NAP = """
    panto.ext.register_tool{name = "nap", handler = function(input)
        panto.time.sleep(input.seconds * 1000)
        return "rested"
    end}
    panto.ext.register_tool{name = "tree", handler = function(input)
        local r = panto.process.spawn{shell = input.command}
        return r.stdout
    end}
"""


@pytest.fixture(scope="module")
def lua() -> Iterator[LuaToolSource]:
    rt = LuaRuntime()
    report = load_extensions(rt, no_extensions=True)
    assert not report.errors, report.errors
    rt.execute(NAP)
    yield LuaToolSource(rt)
    rt.close()


async def _turn(agent: Agent, prompt: str) -> list[Any]:
    agent.submit_user_message(prompt)
    async with agent.run_async() as stream:
        return [ev async for ev in stream]


def _tool_threads() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith("panto-tool"))


def test_many_sessions_share_the_bounded_pool() -> None:
    """40 sessions in one loop, each turn calling a native tool that blocks
    for 0.3 s, on a pool of 4: at most 4 tool threads ever (one per tool
    group before), and every turn completes."""
    n, bound = 40, 4
    pool = new_tool_pool(bound)
    peak = [0]
    idle = _tool_threads()  # other pools' idle threads (earlier tests)

    def nap(_: Any) -> str:
        peak[0] = max(peak[0], _tool_threads() - idle)
        time.sleep(0.3)
        return "pong"

    with ScriptedServer(responder=echo_responder) as server:
        agents = []
        for _ in range(n):
            a = Agent(make_config(server, "anthropic-messages"))
            a.register_tool(FunctionTool("ping", "Answer pong", nap))
            a.tool_pool = pool
            agents.append(a)

        async def main() -> list[list[Any]]:
            got = await asyncio.gather(*(_turn(a, "call ping {}") for a in agents))
            for a in agents:
                await a.aclose()
            return got

        t0 = time.monotonic()
        runs = asyncio.run(main())
        took = time.monotonic() - t0
    pool.shutdown()
    for events in runs:
        results = [e for e in events if isinstance(e, ToolResult)]
        assert [r.content for r in results] == ["pong"]
        assert isinstance(events[-1], MessageComplete) and events[-1].final
    assert 1 <= peak[0] <= bound, peak[0]
    assert took >= n / bound * 0.3 * 0.9  # they really queued for the 4 threads


def test_a_deadline_cancels_its_call_not_another_sessions(lua: LuaToolSource) -> None:
    """Two sessions share one Lua source.  Session A's call passes its
    deadline (``tool_timeout`` 0.5 s): its token cancels it -- its bash
    process group dies -- while session B's call to the same source runs
    on (the source's own ``cancel()``, used before, stopped both)."""
    with ScriptedServer() as sa, ScriptedServer() as sb:
        tree = "echo $$ > {f}; (sleep 304 & sleep 305 & wait) & sleep 306"
        pidfile = Path(f"/tmp/panto-test-pgid-{os.getpid()}-{time.monotonic_ns()}")
        sa.push(
            Reply([ToolUse("a1", "tree", {"command": tree.format(f=pidfile)})]),
            Reply([Text("a done")]),
        )
        sb.push(Reply([ToolUse("b1", "nap", {"seconds": 1.5})]), Reply([Text("b done")]))
        a = Agent(make_config(sa, "anthropic-messages", tool_timeout=0.5))
        b = Agent(make_config(sb, "anthropic-messages", tool_timeout=30))
        a.register_tool_source(lua)
        b.register_tool_source(lua)

        async def main() -> tuple[list[Any], list[Any]]:
            return await asyncio.gather(_turn(a, "go"), _turn(b, "go"))

        try:
            ea, eb = asyncio.run(main())
        finally:
            a.close()
            b.close()
        ra = [e for e in ea if isinstance(e, ToolResult)]
        rb = [e for e in eb if isinstance(e, ToolResult)]
        assert [(r.content, r.is_error) for r in ra] == [("timed out", True)]
        assert [(r.content, r.is_error) for r in rb] == [("rested", False)]
        pgid = int(pidfile.read_text())
        pidfile.unlink()
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and group_members(pgid):
            time.sleep(0.05)
        assert group_members(pgid) == []


def test_closing_the_stream_cancels_its_calls(lua: LuaToolSource, tmp_path: Path) -> None:
    """Closing an async stream while two bash calls run (one source group):
    both get "cancelled", both process groups are gone, and the next turn
    works."""
    files = [tmp_path / "p1", tmp_path / "p2"]
    with ScriptedServer() as server:
        server.push(
            Reply(
                [
                    ToolUse("c1", "bash", {"command": f"echo $$ > {files[0]}; sleep 307"}),
                    ToolUse("c2", "bash", {"command": f"echo $$ > {files[1]}; sleep 308"}),
                ]
            ),
            Reply([Text("after")]),
        )
        agent = Agent(make_config(server, "openai-chat"))
        agent.register_tool_source(lua)

        async def main() -> list[Any]:
            agent.submit_user_message("go")
            got: list[Any] = []
            stream = agent.run_async()

            async def consume() -> None:
                async for ev in stream:
                    got.append(ev)

            consumer = asyncio.ensure_future(consume())
            for _ in range(500):
                if all(f.exists() and f.read_text() for f in files):
                    break
                await asyncio.sleep(0.02)
            await stream.aclose()  # from another task than the consumer
            await asyncio.wait_for(consumer, 10)
            got.append(await _turn(agent, "again"))
            return got

        try:
            t0 = time.monotonic()
            got = asyncio.run(main())
            took = time.monotonic() - t0
        finally:
            agent.close()
    assert took < 10
    results = [
        b for m in agent.conversation for b in m.content if type(b).__name__ == "ToolResultBlock"
    ]
    assert [(r.content, r.is_error) for r in results] == [("cancelled", True)] * 2
    final = got[-1][-1]
    assert isinstance(final, MessageComplete) and final.message.text == "after"
    for f in files:
        pgid = int(f.read_text())
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and group_members(pgid):
            time.sleep(0.05)
        assert group_members(pgid) == [], f


@pytest.mark.usefixtures("isolated_home")
def test_host_sessions_run_lua_tools_without_a_thread(tmp_path: Path) -> None:
    """Sessions opened on a ``Host`` get its tool pool; their async turns
    run ``std.bash`` through the (start-up cached, lazily started) Lua
    source's ``ainvoke_batch``: both sessions' calls answered, and no tool
    thread started for them."""
    from panto.app import Host
    from panto.lua.lazy import LazyLuaToolSource

    host = Host(tool_threads=2)
    (tmp_path / "w").mkdir()
    with ScriptedServer() as server:
        opened = []
        try:
            for i in range(2):
                server.push(
                    Reply([ToolUse(f"c{i}", "bash", {"command": f"echo hello {i}"})]),
                    Reply([Text("ok")]),
                )
                cfg = make_config(server, "openai-chat")
                s = host.open_session(
                    cfg, cwd=tmp_path / "w", session=None, permission_mode="bypass"
                )
                assert s.agent.tool_pool is host.tool_pool
                opened.append(s)
            # the second open found the start-up cache: a lazy source
            assert isinstance(opened[1].extensions.source, LazyLuaToolSource)

            async def main() -> list[list[Any]]:
                out = []
                for s in opened:  # one after another: the script is in order
                    out.append(await _turn(s.agent, "go"))
                return out

            before = _tool_threads()
            runs = asyncio.run(main())
            assert _tool_threads() - before <= 2  # the hooks' pool threads, at most
        finally:
            for s in opened:
                s.close()
            host.close()
    results = [[e.content for e in ev if isinstance(e, ToolResult)] for ev in runs]
    assert [r[0].splitlines()[0] for r in results] == ["hello 0", "hello 1"]
