"""What the sync turn driver (``stream_sync.py``) does its own way: it waits
in the calling thread and runs blocking work (the store, hooks, compaction)
right there.  Its async twin is ``io_async.py``; the driver body that uses
them is written once (``stream_async.py``, see ``scripts/unasync.py``)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from . import dispatch
from .driver import TIMED_OUT, CancelFlag, Driver

if TYPE_CHECKING:
    import queue

    from ..events import Event
    from .turn import ToolRound, Turn, TurnContext

__all__ = ["Base", "Inbox", "admit_request", "run_blocking", "step_guard", "wait_cancelled"]

T = TypeVar("T")

#: the longest a wait for tool results blocks: a KeyboardInterrupt that did
#: not interrupt the wait itself is raised at least this promptly
POLL = 0.2


def run_blocking(fn: Callable[..., T], *args: Any) -> T:
    return fn(*args)


def admit_request() -> None:
    """(A sync turn has its thread to itself: nothing to share.)"""


def wait_cancelled(cancel: CancelFlag, seconds: float) -> bool:
    """Sleep ``seconds`` or until ``cancel`` is set; whether it is."""
    return cancel.wait(seconds)


def step_guard() -> threading.Lock:
    """Held while ``next()`` runs: ``close()`` from another thread then
    only signals the cancel, which the running step notices."""
    return threading.Lock()


class Inbox:
    """Where tool results arrive, from any thread."""

    def __init__(self) -> None:
        import queue  # here: a turn without tool calls never needs it

        self._q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self.post = self._q.put

    def get(self, deadline: float | None) -> Any:
        """The next item, or ``TIMED_OUT`` at ``deadline`` (monotonic) or
        after ``POLL`` seconds."""
        import queue

        wait = POLL
        if deadline is not None:
            wait = min(wait, max(0.0, deadline - time.monotonic()))
        try:
            return self._q.get(timeout=wait)
        except queue.Empty:
            return TIMED_OUT


class Base(Driver):
    """The sync stream's own public methods (beside the generated
    ``close()``), and how it runs a tool round: one daemon thread per group
    (``dispatch.start``); a cancel or a deadline reaches a source through
    its ``cancel()``."""

    def _start_tools(self, r: ToolRound, ctx: TurnContext, inbox: Inbox) -> None:
        dispatch.start(r, ctx.hooks, inbox.post)

    def _expire(self, turn: Turn) -> list[Event]:
        """Time out the groups past their deadline; their results."""
        out, owners = turn.expire(time.monotonic())
        dispatch.cancel_owners(owners)
        return out

    def cancel(self) -> None:
        """``close()``: safe from any thread."""
        self.close()  # type: ignore[attr-defined]
