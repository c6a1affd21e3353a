"""Request starts take the event loop a slice at a time
(``panto.start_gate.admit``; the async driver calls it as
``io_async.admit_request``): many starting together no longer run every
start in one loop iteration, in which nothing else on the loop runs.

The gate alone: starts made of a busy wait stand for a turn's opening,
request body and connect (0.1-0.3 ms of CPU each, measured)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any

from support.loop import IterationClock

from panto import start_gate
from panto.agent import io_async

#: a start's CPU here: 100 of them in one iteration would hold the loop 50 ms
START = 0.0005


def busy(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def finishes_at_once(coro: Coroutine[Any, Any, Any]) -> bool:
    """Whether ``coro`` ran to its end without suspending."""
    try:
        coro.send(None)
    except StopIteration:
        return True
    coro.close()
    return False


def test_starts_made_at_once_take_slices_of_the_loop_first_come_first_served() -> None:
    """100 starts of 0.5 ms made in one iteration: without the gate one
    iteration of 50 ms; with it no iteration much past the 5 ms slice, and
    the starts run in the order they came."""
    order: list[int] = []

    async def one(i: int) -> None:
        await io_async.admit_request()
        order.append(i)
        busy(START)

    async def main() -> float:
        clock = IterationClock()
        clock.start()
        await asyncio.sleep(0)
        await asyncio.gather(*(one(i) for i in range(100)))
        clock.running = False
        return clock.longest()

    longest = asyncio.run(main())
    assert order == list(range(100))
    # (the gate's slice is 5 ms: 4 x leaves room for a slow machine)
    assert longest < 0.020, f"an iteration took {longest * 1000:.1f} ms of CPU"


def test_a_start_alone_goes_at_once_and_so_does_its_task_again_in_its_slice() -> None:
    """No wait (not even a yield to the loop) for the first start of an
    iteration, nor for the task already admitted in the open slice (its
    turn's opening, then its request), however long it took; another task
    in that iteration waits."""

    async def other() -> bool:
        return finishes_at_once(io_async.admit_request())

    async def main() -> tuple[bool, bool, bool]:
        late = asyncio.ensure_future(other())  # runs after main's step, in this iteration
        first = finishes_at_once(io_async.admit_request())
        busy(2 * start_gate.START_SLICE)  # past the slice
        again = finishes_at_once(io_async.admit_request())
        return first, again, await late

    assert asyncio.run(main()) == (True, True, False)


def test_a_cancelled_wait_is_passed_over_and_the_rest_start() -> None:
    started: list[int] = []

    async def one(i: int) -> None:
        await io_async.admit_request()
        started.append(i)
        busy(0.002)

    async def main() -> None:
        tasks = [asyncio.ensure_future(one(i)) for i in range(20)]
        await asyncio.sleep(0)  # all 20 came: the first few started, the rest wait
        assert 0 < len(started) < 10
        tasks[15].cancel()
        res = await asyncio.gather(*tasks, return_exceptions=True)
        assert isinstance(res[15], asyncio.CancelledError)

    asyncio.run(main())
    assert started == [i for i in range(20) if i != 15]


def test_each_event_loop_has_its_own_gate() -> None:
    """A loop whose slice is spent holds up no other loop's starts (one in
    another thread starts at once)."""
    import threading

    other: list[bool] = []

    def in_another_loop() -> None:
        async def main() -> bool:
            return finishes_at_once(io_async.admit_request())

        other.append(asyncio.run(main()))

    async def main() -> None:
        await io_async.admit_request()
        busy(2 * start_gate.START_SLICE)
        t = threading.Thread(target=in_another_loop)
        t.start()
        t.join()

    asyncio.run(main())
    assert other == [True]
