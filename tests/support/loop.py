"""Watching an event loop from inside it."""

from __future__ import annotations

import asyncio
import time


class IterationClock:
    """A callback that reschedules itself: it runs once a loop iteration,
    so the gaps between its runs are the iterations' lengths."""

    def __init__(self) -> None:
        self.stamps: list[float] = []
        self.running = True

    def start(self) -> None:
        self.loop = asyncio.get_running_loop()
        self.loop.call_soon(self._tick)

    def _tick(self) -> None:
        self.stamps.append(time.thread_time())
        if self.running:
            self.loop.call_soon(self._tick)

    def longest(self) -> float:
        return max(b - a for a, b in zip(self.stamps, self.stamps[1:]))
