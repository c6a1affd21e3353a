"""Threads for tools at N concurrent sessions in one event loop.

    python bench/tool_threads.py                 # N = 1, 16, 64, 200; pool of 32
    python bench/tool_threads.py --n 1 64 --pool 8

Each session runs one async turn against the mock model (a child process,
so its threads are not counted) whose model calls one tool: ``lua`` (a Lua
tool that sleeps 0.2 s: a coroutine on the Lua loop) or ``native`` (a Python
``FunctionTool`` that blocks 0.2 s on the tool pool).  Printed per row: the
most threads the process had at once, how many of them were tool-pool
threads (``panto-tool*``), that as a ratio to N, and the wall time (two
model requests and the tool per turn; native tools wait for the pool in
``ceil(N / pool)`` waves of 0.2 s).  Before issue 24's step 1 the async driver started one thread per tool group:
about N tool threads at N sessions, whatever the tool.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import threading
import time
from typing import Any

from panto.agent import Agent
from panto.config import Config
from panto.lua import LuaRuntime, LuaToolSource, load_extensions
from panto.tools import FunctionTool, new_tool_pool

NAP = 0.2

SERVE = """
import sys
from panto.testing import ScriptedServer, echo_responder
s = ScriptedServer(responder=echo_responder).start()
print(s.port, flush=True)
sys.stdin.read()
"""


def config(port: int) -> Config:
    return Config(
        provider="anthropic",
        model="m",
        base_url=f"http://127.0.0.1:{port}",
        api_key="sk-bench",
        max_retries=0,
    )


def run(n: int, kind: str, port: int, lua: LuaToolSource, pool: Any) -> tuple[int, int, float]:
    agents = []
    for _ in range(n):
        a = Agent(config(port))
        a.tool_pool = pool
        if kind == "native":
            a.register_tool(FunctionTool("nap", "sleep", lambda _: time.sleep(NAP) or "ok"))
        else:
            a.register_tool_source(lua)
        agents.append(a)

    async def turn(a: Agent) -> None:
        a.submit_user_message("call nap {}")
        async with a.run_async() as s:
            async for _ in s:
                pass

    async def main() -> tuple[int, int, float]:
        peak = [0, 0]
        done = False

        async def watch() -> None:
            while not done:
                ts = threading.enumerate()
                peak[0] = max(peak[0], len(ts))
                peak[1] = max(peak[1], sum(t.name.startswith("panto-tool") for t in ts))
                await asyncio.sleep(0.005)

        w = asyncio.ensure_future(watch())
        t0 = time.perf_counter()
        await asyncio.gather(*(turn(a) for a in agents))
        wall = time.perf_counter() - t0
        done = True
        await w
        for a in agents:
            await a.aclose()
        return peak[0], peak[1], wall

    return asyncio.run(main())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1, 16, 64, 200])
    ap.add_argument("--pool", type=int, default=32, help="tool pool threads (Host(tool_threads))")
    args = ap.parse_args()
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    rt = LuaRuntime()
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline())
        load_extensions(rt, no_extensions=True)
        rt.execute(
            'panto.ext.register_tool{name = "nap", handler = function() '
            f"panto.time.sleep({NAP * 1000:g}) return 'ok' end}}"
        )
        lua = LuaToolSource(rt)
        print(f"tool pool of {args.pool}; each turn calls one tool that takes {NAP:g} s")
        print(f"{'tool':7}{'N':>5}{'threads':>9}{'of them tool':>14}{'tool / N':>10}{'wall':>9}")
        for kind in ("lua", "native"):  # Lua first: the pool has no idle threads yet
            pool = new_tool_pool(args.pool)
            run(1, kind, port, lua, pool)  # warm-up: imports, the first connection
            for n in args.n:
                threads, tool, wall = run(n, kind, port, lua, pool)
                print(f"{kind:7}{n:>5}{threads:>9}{tool:>14}{tool / n:>10.2f}{wall:>8.2f}s")
            pool.shutdown()
    finally:
        rt.close()
        proc.kill()
        proc.wait()


if __name__ == "__main__":
    main()
