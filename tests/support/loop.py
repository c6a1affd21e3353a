"""Watching an event loop from inside it, and a model server outside it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

SERVE = """
import os, sys
os.nice(19)  # a stand-in for a provider elsewhere: the loop under test comes first
from panto.testing import ScriptedServer, echo_responder
s = ScriptedServer(responder=echo_responder).start()
print(s.port, flush=True)
sys.stdin.read()
"""


class ChildServer:
    """The mock model's server (``echo_responder``) in a child process at
    the lowest CPU priority: its threads, one per connection, must not
    compete with the loop under test for this process's GIL."""

    def __init__(self, port: int) -> None:
        self.port = port

    def base_url(self, wire: str) -> str:
        return f"http://127.0.0.1:{self.port}" + ("/v1" if wire == "openai-chat" else "")


@contextmanager
def child_server() -> Iterator[ChildServer]:
    proc = subprocess.Popen(
        [sys.executable, "-c", SERVE], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        yield ChildServer(int(proc.stdout.readline()))
    finally:
        proc.kill()
        proc.wait()


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
