"""The one turn driver, both flavours: the turn's commits are values the
driver performs (``Turn.deferred``/``take_pending``), never calls made from
inside the ``Turn``; and the sync and async streams give the same events
and the same store appends, in the same order, for the same turn."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from support.agent import make_config

from panto.agent import Agent, io_async
from panto.conversation import Conversation, Message, Text, ToolUse
from panto.sessions.memory import MemoryStore
from panto.testing import Reply, ScriptedServer
from panto.tools import FunctionTool

SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}}}


class WatchingStore(MemoryStore):
    """Records each append: the roles, whether a ``Turn`` method is on the
    stack (the turn performing the effect itself), and whether it ran on
    the thread that iterates the stream."""

    def __init__(self) -> None:
        super().__init__()
        self.appends: list[tuple[tuple[str, ...], bool, bool]] = []
        self.iterating: threading.Thread | None = None

    def append_messages(self, messages: Sequence[Message]) -> Any:
        in_turn = False
        f = sys._getframe(1)
        while f is not None:
            if f.f_code.co_filename.endswith("turn.py") and "self" in f.f_locals:
                in_turn = in_turn or type(f.f_locals["self"]).__name__ == "Turn"
            f = f.f_back
        here = threading.current_thread() is self.iterating
        self.appends.append((tuple(m.role for m in messages), in_turn, here))
        return super().append_messages(messages)


def _turn(agent: Agent, store: WatchingStore, mode: str) -> list[str]:
    names: list[str] = []
    store.iterating = threading.current_thread()
    if mode == "sync":
        with agent.run() as s:
            names.extend(type(ev).__name__ for ev in s)
        return names

    async def main() -> None:
        async with agent.run_async() as s:
            async for ev in s:
                names.append(type(ev).__name__)
        await agent.aclose()

    asyncio.run(main())
    return names


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_the_driver_performs_the_commits_in_order(
    server: ScriptedServer, wire: str, mode: str
) -> None:
    server.push(Reply([ToolUse("c1", "double", {"a": 21})]), Reply([Text("42")]))
    store = WatchingStore()
    agent = Agent(make_config(server, wire), store=store)
    agent.register_tool(FunctionTool("double", "double it", lambda a: a * 2, SCHEMA))
    agent.submit_user_message("double 21")
    store.appends.clear()

    names = _turn(agent, store, mode)

    assert names[-1] == "MessageComplete" and "ToolResult" in names
    assert [roles for roles, _, _ in store.appends] == [("assistant",), ("tool",), ("assistant",)]
    # no append is made from inside the Turn: it hands its commits over
    assert not any(in_turn for _, in_turn, _ in store.appends)
    # sync: where the stream is iterated; async: never on the loop's thread
    assert all(here is (mode == "sync") for _, _, here in store.appends)
    assert agent.conversation[-1].text == "42"


def test_sync_and_async_give_the_same_events(server: ScriptedServer, wire: str) -> None:
    got = {}
    for mode in ("sync", "async"):
        server.push(Reply([ToolUse("c1", "double", {"a": 1})]), Reply([Text("two")], chunk=2))
        store = WatchingStore()
        agent = Agent(make_config(server, wire), store=store)
        agent.register_tool(FunctionTool("double", "double it", lambda a: a * 2, SCHEMA))
        agent.submit_user_message("double 1")
        got[mode] = _turn(agent, store, mode)
    assert got["sync"] == got["async"]


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_what_opening_a_turn_adds_is_committed_first_by_the_driver(
    server: ScriptedServer, wire: str, mode: str
) -> None:
    """The answers to calls an earlier turn left open are committed by the
    driver before the turn's own, in order, and (async) off the loop."""
    server.push(Reply([Text("ok")]))
    store = WatchingStore()
    left_open = [
        Message("user", (Text("run it"),)),
        Message("assistant", (ToolUse("c1", "double", {"a": 1}),)),
    ]
    agent = Agent(make_config(server, wire), store=store, conversation=Conversation(left_open))

    _turn(agent, store, mode)

    assert [roles for roles, _, _ in store.appends] == [("tool",), ("assistant",)]
    assert not any(in_turn for _, in_turn, _ in store.appends)
    assert all(here is (mode == "sync") for _, _, here in store.appends)
    assert [m.role for m in agent.conversation] == ["user", "assistant", "tool", "assistant"]


class CountingExecutor(ThreadPoolExecutor):
    submitted = 0

    def submit(self, *args: Any, **kw: Any) -> Any:
        CountingExecutor.submitted += 1
        return super().submit(*args, **kw)


@pytest.mark.parametrize("with_store", [False, True])
def test_a_turn_hops_to_a_worker_thread_only_to_write_the_store(
    server: ScriptedServer, wire: str, with_store: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With no store, opening a turn on an HTTP provider and committing
    are in-memory work: the async driver does both on the loop (a hop to a
    worker thread per turn start and end cost 256 concurrent turns about a
    tenth of their wall time); a store is still written off the loop."""
    server.push(Reply([Text("ok")]))
    store = WatchingStore() if with_store else None
    agent = Agent(make_config(server, wire), store=store)
    agent.submit_user_message("hi")

    async def main() -> None:
        CountingExecutor.submitted = 0
        async with agent.run_async() as s:
            async for _ in s:
                pass
        await agent.aclose()

    # (the driver's worker threads: io_async.run_blocking's pool)
    monkeypatch.setattr(io_async, "_pool", CountingExecutor(2))
    asyncio.run(main())
    assert agent.conversation[-1].text == "ok"
    assert (CountingExecutor.submitted > 0) is with_store


def test_run_blocking_keeps_the_context_raises_and_survives_a_cancelled_wait(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``io_async.run_blocking`` (the driver's hop to a worker thread, one
    loop callback a hop): the work runs in a copy of the caller's context
    off the loop's thread, its exception reaches the waiter, a cancelled
    wait leaves started work to finish, and work still queued when its wait
    is cancelled never runs (as with ``asyncio.to_thread``)."""
    import contextvars

    monkeypatch.setattr(io_async, "_pool", ThreadPoolExecutor(1))  # one thread: a queue
    var: contextvars.ContextVar[str] = contextvars.ContextVar("var", default="unset")
    finished = threading.Event()
    queued_ran = threading.Event()

    def where() -> tuple[str, bool]:
        return var.get(), threading.current_thread() is threading.main_thread()

    def fail() -> None:
        raise KeyError("from the worker")

    def slow() -> None:
        time.sleep(0.2)
        finished.set()

    async def main() -> None:
        var.set("caller's")
        assert await io_async.run_blocking(where) == ("caller's", False)
        with pytest.raises(KeyError, match="from the worker"):
            await io_async.run_blocking(fail)
        task = asyncio.ensure_future(io_async.run_blocking(slow))
        queued = asyncio.ensure_future(io_async.run_blocking(queued_ran.set))
        await asyncio.sleep(0.05)
        task.cancel()
        queued.cancel()
        for t in (task, queued):
            with pytest.raises(asyncio.CancelledError):
                await t

    asyncio.run(main())
    assert finished.wait(2.0)  # the thread still finished its work
    io_async._pool.shutdown(wait=True)  # noqa: SLF001 -- (the test's own pool)
    assert not queued_ran.is_set()  # cancelled before it started: never ran


def test_the_cancel_flag_wakes_a_waiting_thread_and_times_out() -> None:
    from panto.agent.driver import CancelFlag

    flag = CancelFlag()
    assert not flag.is_set()
    t0 = time.perf_counter()
    assert flag.wait(0.05) is False and time.perf_counter() - t0 >= 0.04
    woke: list[bool] = []
    waiter = threading.Thread(target=lambda: woke.append(flag.wait(10)))
    waiter.start()
    time.sleep(0.05)
    t0 = time.perf_counter()
    flag.set()  # from another thread than the waiter's
    waiter.join(5)
    assert woke == [True] and time.perf_counter() - t0 < 2
    assert flag.is_set() and flag.wait(0) is True
    early = CancelFlag()
    early.set()  # set before anyone waited: no wait at all
    t0 = time.perf_counter()
    assert early.wait(10) is True and time.perf_counter() - t0 < 1


def test_an_open_stream_holds_no_threading_event() -> None:
    # Every open stream keeps its cancel flag; a threading.Event (a
    # Condition, its lock, a deque of waiters) was ~1.2 KB of the ~1.8 KB a
    # driver took, at 256 streams a process (issue 24: <= 40 KB a stream).
    import tracemalloc

    from panto.agent.stream_async import AsyncStream

    def open_turn() -> Any:
        raise AssertionError("not opened here")

    def bytes_each(make: Any) -> float:
        make()
        tracemalloc.start()
        try:
            before = tracemalloc.take_snapshot()
            made = [make() for _ in range(100)]
            after = tracemalloc.take_snapshot()
        finally:
            tracemalloc.stop()
        return sum(d.size_diff for d in after.compare_to(before, "filename")) / len(made)

    stream = bytes_each(lambda: AsyncStream(open_turn))
    event = bytes_each(threading.Event)
    # (3.11: 594 bytes a stream, 1,804 with its Event; an Event 1,250)
    assert stream < event, f"{stream:.0f} bytes a driver, {event:.0f} an Event"
