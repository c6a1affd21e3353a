"""Issue 24, step 1: the MCP source's ``ainvoke_batch`` runs each call as a
task on the servers' loop (no thread waits), and a call's cancel token
cancels that call alone -- not the rest of its batch, not another session's
batch on the same source.  Against a server built with the official SDK
(tests/support/mcp_demo_server.py) over stdio."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from panto.mcp import open_source, specs_from_config
from panto.tools import CancelToken, ToolCall, ToolOutput

DEMO = str(Path(__file__).resolve().parents[1] / "support" / "mcp_demo_server.py")


@pytest.fixture
def source(isolated_home: Path) -> Iterator[object]:
    src = open_source(specs_from_config({"demo": {"command": [sys.executable, DEMO]}}, "config"))
    src.wait_ready(30)
    assert src.status()[0].state == "ready", src.status()
    yield src
    src.close()


def test_one_cancelled_call_leaves_the_others(source) -> None:  # type: ignore[no-untyped-def]
    calls = [
        ToolCall("s", "mcp__demo__slow", {"seconds": 30}),
        ToolCall("a", "mcp__demo__add", {"a": 2, "b": 3}),
        ToolCall("t", "mcp__demo__slow", {"seconds": 1}),
    ]
    tokens = [CancelToken(), CancelToken(), CancelToken()]

    async def main() -> list[ToolOutput | None]:
        asyncio.get_running_loop().call_later(0.3, tokens[0].cancel)
        return await source.ainvoke_batch(calls, tokens)

    t0 = time.monotonic()
    slow, add, short = asyncio.run(main())
    assert time.monotonic() - t0 < 10
    assert slow is not None and slow.is_error and "cancelled" in slow.content
    assert add is not None and add.content == "5" and not add.is_error
    assert short is not None and short.content == "slept" and not short.is_error
    # the server is fine: the next batch works
    again = asyncio.run(source.ainvoke_batch([calls[1]], [CancelToken()]))
    assert again[0] is not None and again[0].content == "5"


def test_a_cancel_stays_in_its_session(source) -> None:  # type: ignore[no-untyped-def]
    """Two sessions' batches on one source: the old ``cancel()`` stopped
    both; a token stops its own call."""
    mine, theirs = [CancelToken()], [CancelToken()]

    async def main() -> tuple[list[ToolOutput | None], list[ToolOutput | None]]:
        asyncio.get_running_loop().call_later(0.3, mine[0].cancel)
        a, b = await asyncio.gather(
            source.ainvoke_batch([ToolCall("m", "mcp__demo__slow", {"seconds": 30})], mine),
            source.ainvoke_batch([ToolCall("t", "mcp__demo__slow", {"seconds": 1})], theirs),
        )
        return a, b

    (m,), (t,) = asyncio.run(main())
    assert m is not None and m.is_error and "cancelled" in m.content
    assert t is not None and t.content == "slept"


def test_no_thread_waits_for_mcp_calls(source) -> None:  # type: ignore[no-untyped-def]
    peak = [0]

    async def main() -> list[ToolOutput | None]:
        before = threading.active_count()

        async def watch() -> None:
            while True:
                peak[0] = max(peak[0], threading.active_count() - before)
                await asyncio.sleep(0.02)

        w = asyncio.ensure_future(watch())
        got = await asyncio.gather(
            *(
                source.ainvoke_batch(
                    [ToolCall(f"s{i}", "mcp__demo__slow", {"seconds": 0.5})], [CancelToken()]
                )
                for i in range(20)
            )
        )
        w.cancel()
        return [o for batch in got for o in batch]

    outs = asyncio.run(main())
    assert [o.content if o else None for o in outs] == ["slept"] * 20
    assert peak[0] == 0, peak[0]
