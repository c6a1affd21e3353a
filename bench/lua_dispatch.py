"""Per-call overhead of a trivial Lua tool through ``panto-lua``.

Long-lived: one runtime (std extensions + a trivial ``echo`` tool loaded
once), each call a coroutine driven on the runtime's loop thread, called from
this (another) thread exactly as the agent does: ``invoke_batch([call])``.

Fresh (the old design): per call, a new Lua state with panto's prelude and
the std extensions evaluated and activated, then the call; no thread.

Prints µs per call for both and their ratio (target: long-lived >= 10x
cheaper).  ``python bench/lua_dispatch.py [N]``.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "python"))

from panto.lua.loader import discover_sources  # noqa: E402
from panto.lua.runtime import LuaRuntime  # noqa: E402
from panto.tools import ToolCall  # noqa: E402

ECHO = """
panto.ext.register_tool{name = "echo", description = "echo",
  handler = function(input) return input.text end}
panto.ext.register_tool{name = "spin", description = "pure Lua compute",
  handler = function(input)
    local s = 0
    for i = 1, input.n do s = s + i % 7 end
    return tostring(s)
  end}
"""


def _std_sources() -> list[Path]:
    return [s.path for s in discover_sources(no_extensions=True)]


def bench_long_lived(n: int) -> tuple[float, float, float]:
    """-> (µs per call for 1-call batches, µs per call inside 100-call batches,
    ms for one call that runs 10^6 iterations of a pure Lua loop)."""
    from panto.lua import load_extensions
    from panto.lua.source import LuaToolSource

    rt = LuaRuntime()
    try:
        load_extensions(rt, no_extensions=True)
        rt.execute(ECHO)
        src = LuaToolSource(rt)
        call = ToolCall("c1", "echo", {"text": "hi"})
        for _ in range(200):
            src.invoke_batch([call])
        samples = []
        for _ in range(5):
            t0 = time.perf_counter()
            for _ in range(n):
                out = src.invoke_batch([call])
            samples.append((time.perf_counter() - t0) / n * 1e6)
        assert out[0].content == "hi", out
        single = statistics.median(samples)
        batch = [call] * 100
        t0 = time.perf_counter()
        reps = max(1, n // 100)
        for _ in range(reps):
            src.invoke_batch(batch)
        per_in_batch = (time.perf_counter() - t0) / (reps * 100) * 1e6
        spin = ToolCall("c2", "spin", {"n": 1_000_000})
        compute = []
        for _ in range(5):
            t0 = time.perf_counter()
            src.invoke_batch([spin])
            compute.append((time.perf_counter() - t0) * 1e3)
        return single, per_in_batch, statistics.median(compute)
    finally:
        rt.close()


def bench_fresh(n: int) -> float:
    """A fresh Lua state per call, std extensions loaded, the call run."""
    # reuse one loop and drive the core directly: no thread start-up counted
    from panto.lua import runtime as rmod

    class _Core(rmod.LuaRuntime):
        def __init__(self) -> None:  # no thread: just the Lua state
            self.interpreter = False
            self.tools = {}
            self.commands = {}
            self.hooks = {e: [] for e in rmod.HOOK_EVENTS}
            self.processes = set()
            self.prompts = []
            self._batches = set()
            self._http = None
            self._closed = False
            self.entry_origins = {}
            self._init_lua()

    loop = asyncio.new_event_loop()
    sources = _std_sources()
    call = ToolCall("c1", "echo", {"text": "hi"})

    async def one() -> str:
        core = _Core()
        for p in sources:
            for name, activate in await core.eval_source_async(p):
                await core.activate_async(name, activate)
        await core.execute_async(ECHO)
        out = await core.call_tool(call)
        return out.content

    for _ in range(5):
        loop.run_until_complete(one())
    samples = []
    for _ in range(3):
        t0 = time.perf_counter()
        for _ in range(n):
            res = loop.run_until_complete(one())
        samples.append((time.perf_counter() - t0) / n * 1e6)
    assert res == "hi"
    loop.close()
    return statistics.median(samples)


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 2000
    single, in_batch, compute = bench_long_lived(n)
    fresh = bench_fresh(max(20, n // 20))
    print(f"long-lived panto-lua, 1-call batches : {single:8.1f} µs/call")
    print(f"long-lived panto-lua, 100-call batch : {in_batch:8.1f} µs/call")
    print(f"pure Lua loop, 10^6 iterations       : {compute:8.1f} ms/call")
    print(f"fresh runtime per call (std loaded)  : {fresh:8.1f} µs/call")
    print(f"ratio fresh / long-lived             : {fresh / single:8.1f}x (target >= 10x)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
