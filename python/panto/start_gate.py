"""Many request starts on one event loop, a slice of the loop at a time.

A request's start (for a turn: opening it, its provider and body, the
connect; for ``panto serve``'s proxy: parsing the client's request, the
upstream's body, the connect) is 0.1-0.3 ms of CPU.  When many start at
once -- 200 sessions' turns started together, their tool results back from
the pool together, a burst of clients -- asyncio runs every one of them in
one loop iteration: 20-60 ms in which nothing else on the loop runs (no
timer, no reply, no other stream's event).  ``await admit()`` before a
start spreads them: the async turn driver (``agent/io_async.py``) and the
proxy (``serve/proxy.py``) call it.  (A sync turn has its thread to
itself: it does not.)
"""

from __future__ import annotations

import time
from typing import Any

__all__ = ["MAX_RELEASED", "START_SLICE", "StartGate", "admit"]


#: the loop time (seconds) that request starts take in one go: more starts
#: than fit wait for later loop iterations, so that what else is ready
#: (timers, replies, other sessions' events) runs in between.  (2 ms kept
#: the stalls of 200 sessions' loop a little shorter, 10-16 ms against
#: 14-19; but each step of a request's way out waits for the next
#: iteration, so a slice this short held 256 paced streams' first events
#: back longer: p99 90-108 ms against 86-97)
START_SLICE = 0.005
#: the most waiting starts released to one slice, whatever their measured cost
MAX_RELEASED = 32


class StartGate:
    """The request starts of one event loop, a slice of loop time at a
    time.  Starts are admitted while the slice that the iteration's first one
    opened lasts (``START_SLICE``); later ones wait, first come first
    served, and a task admitted in the open slice goes on without counting
    again (its turn's opening, then its request).  The slice ends in a
    callback of the next iteration, which releases as many waiters as fit
    in a slice at the cost the last starts measured; their tasks run one
    iteration later, together, between two of the gate's callbacks (which
    measure them)."""

    __slots__ = (
        "admitted",
        "cost",
        "last",
        "loop",
        "opened",
        "pending",
        "released",
        "started",
        "waiters",
    )

    def __init__(self, loop: Any) -> None:
        from collections import deque

        self.loop = loop
        self.waiters: deque[tuple[Any, Any]] = deque()  # (future, task)
        self.admitted: set[Any] = set()  # the tasks admitted in this slice
        self.opened: float | None = None  # when this slice's first start came
        self.last = 0.0  # when its last start came
        self.started = 0  # starts admitted in this slice
        self.released = 0  # waiters released to run in this slice
        self.pending = False  # an _end_slice is scheduled
        self.cost = 0.0001  # seconds a start, as last measured

    def admit(self, task: Any) -> Any:
        """None: start now; else a future to await first."""
        if task in self.admitted:
            return None
        now = time.perf_counter()
        if self.waiters:
            return self._wait(task)
        if self.opened is None:
            self.opened = now
            if not self.pending:
                self.pending = True
                self.loop.call_soon(self._end_slice)
        elif now - self.opened >= START_SLICE:
            return self._wait(task)
        self.started += 1
        self.last = now
        self.admitted.add(task)
        return None

    def _wait(self, task: Any) -> Any:
        fut = self.loop.create_future()
        self.waiters.append((fut, task))
        return fut

    def _end_slice(self) -> None:
        now = time.perf_counter()
        opened = self.opened
        if opened is not None:
            if self.released:  # the batch ran right before this callback
                self.cost = (now - opened) / (self.released + self.started)
            elif self.started > 1:
                self.cost = (self.last - opened) / (self.started - 1)
        self.opened, self.started, self.released = None, 0, 0
        self.admitted.clear()
        if not self.waiters:
            self.pending = False
            return
        self.loop.call_soon(self._open_released)
        fit = min(MAX_RELEASED, max(1, int(START_SLICE / max(self.cost, 1e-6))))
        while self.waiters and self.released < fit:
            fut, task = self.waiters.popleft()
            if not fut.done():  # (else a wait that was cancelled)
                fut.set_result(None)
                self.admitted.add(task)
                self.released += 1
        self.loop.call_soon(self._end_slice)

    def _open_released(self) -> None:
        if self.opened is None:
            self.opened = time.perf_counter()


_gates: Any = None


async def admit() -> None:
    """Wait, when this loop's request starts have taken their slice of it
    (``StartGate``), for a later iteration."""
    global _gates
    import asyncio

    loop = asyncio.get_running_loop()
    if _gates is None:
        import weakref

        _gates = weakref.WeakKeyDictionary()
    gate = _gates.get(loop)
    if gate is None:
        gate = _gates[loop] = StartGate(loop)
    fut = gate.admit(asyncio.current_task())
    if fut is not None:
        await fut
