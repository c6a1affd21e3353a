"""Issue 24, step 1: cancel tokens, and the default ``ToolSource.ainvoke_batch``
(a sync source's batch on a bounded pool thread)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Sequence

from panto.app import Host
from panto.tools import CancelToken, ToolCall, ToolDecl, ToolOutput, ToolSource, new_tool_pool


class Sleepy(ToolSource):
    """A sync-only source: each call sleeps ``input["s"]`` seconds (a
    ``cancel()`` ends every running batch)."""

    name = "sleepy"

    def __init__(self) -> None:
        self.stop = threading.Event()
        self.cancels = 0
        self.threads: set[str] = set()

    def decls(self) -> Sequence[ToolDecl]:
        return [ToolDecl("nap", "sleep")]

    def invoke_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput]:
        self.threads.add(threading.current_thread().name)
        for c in calls:
            if self.stop.wait(c.input["s"]):
                return [ToolOutput("stopped", True)] * len(calls)
        return [ToolOutput(f"napped {c.input['s']}") for c in calls]

    def cancel(self) -> None:
        self.cancels += 1
        self.stop.set()


def test_token_callbacks_and_wait() -> None:
    t = CancelToken()
    seen: list[str] = []
    remove = t.on_cancel(lambda: seen.append("a"))
    t.on_cancel(lambda: seen.append("b"))
    remove()
    assert not t.cancelled and t.reason is None

    async def main() -> float:
        loop = asyncio.get_running_loop()
        threading.Timer(0.1, t.cancel, args=("timed out",)).start()  # another thread
        t0 = loop.time()
        await asyncio.wait_for(t.wait(), 5)
        return loop.time() - t0

    waited = asyncio.run(main())
    assert 0.05 < waited < 2
    assert t.cancelled and t.reason == "timed out" and seen == ["b"]
    t.cancel("again")  # once only
    assert t.reason == "timed out" and seen == ["b"]
    t.on_cancel(lambda: seen.append("late"))  # already cancelled: at once
    assert seen == ["b", "late"]


def test_default_runs_the_sync_batch_on_the_bounded_pool() -> None:
    src = Sleepy()
    pool = new_tool_pool(3)

    async def main() -> list[list[ToolOutput | None]]:
        return await asyncio.gather(
            *(
                src.ainvoke_batch(
                    [ToolCall(f"c{i}", "nap", {"s": 0.2})], [CancelToken()], executor=pool
                )
                for i in range(9)
            )
        )

    t0 = time.monotonic()
    got = asyncio.run(main())
    took = time.monotonic() - t0
    pool.shutdown()
    assert [b[0].content for b in got] == ["napped 0.2"] * 9  # type: ignore[union-attr]
    assert len(src.threads) == 3 and all(n.startswith("panto-tool") for n in src.threads)
    assert 0.55 < took < 3  # 9 batches, 3 at a time


def test_default_cancel_returns_at_once_once_every_call_is_cancelled() -> None:
    src = Sleepy()
    tokens = [CancelToken(), CancelToken()]
    calls = [ToolCall("a", "nap", {"s": 30}), ToolCall("b", "nap", {"s": 30})]

    async def main() -> list[ToolOutput | None]:
        loop = asyncio.get_running_loop()
        loop.call_later(0.1, tokens[0].cancel)
        loop.call_later(0.3, tokens[1].cancel)
        return await src.ainvoke_batch(calls, tokens)

    t0 = time.monotonic()
    outs = asyncio.run(main())
    assert outs == [None, None]
    assert 0.25 < time.monotonic() - t0 < 3
    assert src.cancels == 1  # the sync source's own cancel, once every call was cancelled


def test_host_tool_pool_is_bounded_and_its_own() -> None:
    from panto.tools import default_tool_pool

    h = Host(tool_threads=2)
    assert h.tool_pool is h.tool_pool
    assert h.tool_pool is not default_tool_pool()
    assert h.tool_pool._max_workers == 2  # noqa: SLF001 - the bound is the point
    h.close()
    assert Host().tool_pool is default_tool_pool()
