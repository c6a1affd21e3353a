"""Issue 24, step 1: ``ToolSource.ainvoke_batch`` with one cancel token per
call.  The Lua source runs the calls as tasks on its loop (no thread waits):
cancelling one call of a parallel batch kills that call's process group and
stops its Lua code; the other calls finish."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path

import pytest
from support.procs import group_members

from panto.lua import LuaRuntime, LuaToolSource
from panto.tools import CancelToken, ToolCall

SPIN = """
    panto.ext.register_tool{name = "spin_forever", handler = function()
        while true do end
    end}
    panto.ext.register_tool{name = "nap", handler = function(input)
        panto.time.sleep(input.seconds * 1000)
        return "rested"
    end}
"""


def _wait_for(pred, within: float = 10.0) -> bool:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_cancel_one_bash_call_of_a_parallel_batch(runtime: LuaRuntime, tmp_path: Path) -> None:
    pidfile = tmp_path / "pgid"
    # a process tree: the shell (the group leader), a background subshell
    # with two sleeps, and a foreground sleep
    tree = f"echo $$ > {pidfile}; (sleep 300 & sleep 301 & wait) & sleep 302; echo never"
    calls = [
        ToolCall("a", "bash", {"command": tree}),
        ToolCall("b", "bash", {"command": "sleep 1; echo b finished"}),
    ]
    tokens = [CancelToken(), CancelToken()]
    src = LuaToolSource(runtime)
    seen: dict[str, object] = {}

    def cancel_a_when_its_tree_runs() -> None:
        assert _wait_for(lambda: pidfile.exists() and pidfile.read_text().strip() != "")
        pgid = int(pidfile.read_text())
        assert _wait_for(lambda: len(group_members(pgid)) >= 4), group_members(pgid)
        seen["pgid"] = pgid
        seen["at"] = time.monotonic()
        tokens[0].cancel()  # from another thread than the loops

    async def main() -> list[object]:
        th = threading.Thread(target=cancel_a_when_its_tree_runs)
        th.start()
        try:
            return list(await src.ainvoke_batch(calls, tokens))
        finally:
            await asyncio.to_thread(th.join, 15)

    t0 = time.monotonic()
    outs = asyncio.run(main())
    a, b = outs
    assert "pgid" in seen, "the bash tree never started"
    assert a is not None and a.is_error and "cancelled" in a.content  # type: ignore[attr-defined]
    assert b is not None and not b.is_error, b  # type: ignore[attr-defined]
    assert b.content.strip() == "b finished"  # type: ignore[attr-defined]
    assert not tokens[1].cancelled
    # the cancelled call's whole process group is gone (SIGTERM, then SIGKILL)
    pgid = int(seen["pgid"])  # type: ignore[call-overload]
    assert _wait_for(lambda: group_members(pgid) == [], 5.0), group_members(pgid)
    assert time.monotonic() - t0 < 10


def test_a_token_interrupts_lua_code_that_never_yields(fresh_runtime: LuaRuntime) -> None:
    fresh_runtime.execute(SPIN)
    src = LuaToolSource(fresh_runtime)
    calls = [ToolCall("s", "spin_forever", {}), ToolCall("n", "nap", {"seconds": 0.3})]
    tokens = [CancelToken(), CancelToken()]

    async def main() -> list[object]:
        asyncio.get_running_loop().call_later(0.5, tokens[0].cancel)
        return list(await src.ainvoke_batch(calls, tokens))

    t0 = time.monotonic()
    spun, napped = asyncio.run(main())
    assert time.monotonic() - t0 < 5
    assert spun.is_error and "cancelled" in spun.content  # type: ignore[attr-defined]
    assert napped.content == "rested" and not napped.is_error  # type: ignore[attr-defined]
    # the runtime is free again
    assert fresh_runtime.execute("return 1 + 1")[0] == 2


def test_a_cancel_stays_in_its_batch(fresh_runtime: LuaRuntime) -> None:
    """Two sessions share one source: the old ``cancel()`` stopped every
    batch of it; a token stops its own call only."""
    fresh_runtime.execute(SPIN)
    src = LuaToolSource(fresh_runtime)
    mine, theirs = [CancelToken()], [CancelToken()]

    async def main() -> tuple[list[object], list[object]]:
        asyncio.get_running_loop().call_later(0.2, mine[0].cancel)
        got = await asyncio.gather(
            src.ainvoke_batch([ToolCall("m", "nap", {"seconds": 30})], mine),
            src.ainvoke_batch([ToolCall("t", "nap", {"seconds": 0.6})], theirs),
        )
        return list(got[0]), list(got[1])

    t0 = time.monotonic()
    (m,), (t,) = asyncio.run(main())
    assert m.is_error and "cancelled" in m.content  # type: ignore[attr-defined]
    assert t.content == "rested"  # type: ignore[attr-defined]
    assert time.monotonic() - t0 < 5


def test_cancelling_the_awaiting_task_cancels_every_call(
    runtime: LuaRuntime, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pgid"
    src = LuaToolSource(runtime)
    call = ToolCall("a", "bash", {"command": f"echo $$ > {pidfile}; sleep 303"})

    async def main() -> None:
        task = asyncio.ensure_future(src.ainvoke_batch([call], [CancelToken()]))
        await asyncio.to_thread(_wait_for, lambda: pidfile.exists() and pidfile.read_text())
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    pgid = int(pidfile.read_text())
    assert _wait_for(lambda: group_members(pgid) == [], 5.0), group_members(pgid)


def test_no_thread_waits_for_a_lua_batch(fresh_runtime: LuaRuntime) -> None:
    """50 batches at once (a call each, 0.5 s): no thread is started for them."""
    fresh_runtime.execute(SPIN)
    src = LuaToolSource(fresh_runtime)
    peak = [0]

    async def main() -> list[object]:
        before = threading.active_count()

        async def watch() -> None:
            while True:
                peak[0] = max(peak[0], threading.active_count() - before)
                await asyncio.sleep(0.02)

        w = asyncio.ensure_future(watch())
        got = await asyncio.gather(
            *(
                src.ainvoke_batch([ToolCall(f"n{i}", "nap", {"seconds": 0.5})], [CancelToken()])
                for i in range(50)
            )
        )
        w.cancel()
        return [o for batch in got for o in batch]

    t0 = time.monotonic()
    outs = asyncio.run(main())
    assert [o.content for o in outs] == ["rested"] * 50  # type: ignore[attr-defined]
    assert time.monotonic() - t0 < 5  # they ran at once
    assert peak[0] == 0, peak[0]
