"""What the sync and async turn drivers share: the turn, the cancel flag,
the read-only views of the turn's progress, and how a turn ends.

The drivers themselves are one source: ``stream_async.py`` (``AsyncStream``)
is written by hand, ``stream_sync.py`` (``Stream``) is generated from it by
``scripts/unasync.py``.  What the two do their own way -- waiting, running
blocking work, the public cancel methods -- is in ``io_async.py`` and
``io_sync.py``; everything else is here.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ..events import Event
from . import dispatch
from .turn import Phase, Turn, TurnContext, failed_before_start

if TYPE_CHECKING:
    from ..conversation import Message

__all__ = [
    "DISPATCHING",
    "DONE",
    "MERGE_DELTAS",
    "REQUESTING",
    "STREAMING",
    "TIMED_OUT",
    "CancelFlag",
    "Cancelled",
    "Driver",
    "persist_all",
]

#: The turn decodes with ``StreamDecoder(merge_deltas=True)``: the text
#: deltas of one block found in one network read come as one ContentDelta
#: (their texts joined), one Python object per run instead of one per delta
#: (docs/decoding.md, "Threads and performance").  Nothing else changes: the
#: text arrives at the same moment (it was all in that read), in order, and
#: the message, the session, hooks and what is shown are the same; only how
#: the text of one read is cut into events differs, and that already
#: depends on how the provider and the network cut the stream.
MERGE_DELTAS = True

STREAMING = Phase.STREAMING
DISPATCHING = Phase.DISPATCHING
REQUESTING = Phase.REQUESTING
DONE = Phase.DONE

#: what ``Inbox.get`` answers when its deadline passed with nothing posted
TIMED_OUT = object()


def _aio() -> tuple[type[BaseException], ...]:
    """asyncio.CancelledError, if asyncio is loaded (it is imported lazily:
    without it, no task can have been cancelled)."""
    aio = sys.modules.get("asyncio")
    return (aio.CancelledError,) if aio is not None else ()


class Cancelled(Exception):
    """The stream was closed from another thread or task."""


_EVENT_MADE = threading.Lock()


class CancelFlag:
    """A turn's cancel flag: ``threading.Event``'s ``set`` / ``is_set`` /
    ``wait``, with the Event made only by the first ``wait`` (a sync turn's
    retry delay).  Every open stream holds one, and an Event is about a
    kilobyte (a Condition, its lock and a deque of waiters): at 256 streams
    in one process, 256 KB nobody waited on.

    Thread-safe without a lock of its own: ``set`` raises the flag before it
    looks for the Event, ``wait`` publishes the Event before it looks at the
    flag, so one of the two sees the other."""

    __slots__ = ("_event", "_flag")

    def __init__(self) -> None:
        self._flag = False
        self._event: threading.Event | None = None

    def is_set(self) -> bool:
        return self._flag

    def set(self) -> None:
        self._flag = True
        event = self._event
        if event is not None:
            event.set()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until set or ``timeout`` seconds passed; whether it is set."""
        event = self._event
        if event is None:
            with _EVENT_MADE:  # (two waiters make one Event)
                event = self._event
                if event is None:
                    event = self._event = threading.Event()
        if self._flag:
            return True
        return event.wait(timeout)


def persist_all(persist: Callable[[Sequence[Message]], None], pending: Sequence[Any]) -> None:
    """Perform a turn's pending commits, in order."""
    for msgs in pending:
        persist(msgs)


class Driver:
    """The state both drivers keep (see the module docstring)."""

    def __init__(
        self, open_turn: Callable[[], TurnContext], hooks: Any = None, *, open_blocks: bool = True
    ) -> None:
        self._open = open_turn
        #: whether ``open_turn`` may block (e.g. start the mock's server):
        #: the async driver then calls it in a worker thread, else on the loop
        self._open_blocks = open_blocks
        self._hooks = hooks
        self.turn: Turn | None = None
        self._closed = False
        self._cancel = CancelFlag()
        self._resp: Any = None  # the exchange's StreamResponse / AsyncStreamResponse
        self._inbox: Any = None  # where tool results arrive (io_*.Inbox)
        self._ended = False
        #: the summarizing stream of an auto-compaction in progress
        self._child: Any = None

    @property
    def done(self) -> bool:
        return self.turn is not None and self.turn.ended

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def usage(self) -> Any:
        from ..conversation import Usage

        return self.turn.usage if self.turn is not None else Usage()

    @property
    def messages(self) -> list[Any]:
        return self.turn.messages if self.turn is not None else []

    @property
    def rounds(self) -> int:
        return self.turn.rounds if self.turn is not None else 0

    def _begin(self) -> Turn:
        try:
            ctx = self._open()
        except BaseException as exc:
            self._end_info = failed_before_start(str(exc) or type(exc).__name__)
            raise
        if ctx.hooks is not None:
            self._hooks = ctx.hooks
        turn = self.turn = Turn(ctx)
        # the turn's commits wait in ``pending``; the driver performs them,
        # the opening's first
        turn.deferred = True
        turn.pending.extend(ctx.opening)
        return turn

    def _stop(self, exc: BaseException | None) -> None:
        """The generator is ending (``exc``: why, None when it finished)."""
        turn = self.turn
        if turn is None or turn.ended:
            return
        if exc is None or isinstance(exc, (Cancelled, GeneratorExit, KeyboardInterrupt, *_aio())):
            self._cancel_tools(turn.cancel())
        else:
            self._cancel_tools(turn.fail(str(exc) or type(exc).__name__))

    def _cancel_tools(self, owners: list[Any]) -> None:
        """Stop the tool calls still running (``owners``: their owners).
        Here ``ToolSource.cancel()`` of each (the sync driver's threads);
        the async driver cancels exactly its calls' tokens instead."""
        dispatch.cancel_owners(owners)

    def _request_cancel(self) -> None:
        """Mark the turn cancelled and wake whatever it waits on: the HTTP
        read, the tool results, a compaction; running tool calls are
        cancelled (``_cancel_tools``; native tool threads are abandoned).
        Thread-safe."""
        self._cancel.set()
        self._close_child()
        resp = self._resp
        if resp is not None:
            resp.interrupt()
        inbox = self._inbox
        if inbox is not None:
            inbox.post(None)
        turn = self.turn
        r = turn.tools if turn is not None else None
        if r is not None:
            self._cancel_tools([g.owner for g in r.groups if not g.done])

    def _set_child(self, child: Any) -> None:
        """The auto-compaction's summarizing stream (None when it ended):
        closed when this stream is."""
        self._child = child
        if child is not None and self._cancel.is_set():
            child.close()

    def _close_child(self) -> None:
        child = self._child
        if child is not None:
            child.close()

    def _compaction_done(self, end: Any) -> Event | None:
        """After an auto-compaction: raise ``Cancelled`` when this stream was
        cancelled meanwhile; else the ``CompactionEnd`` event to yield."""
        self._child = None
        if self._cancel.is_set():
            raise Cancelled()
        return end  # type: ignore[no-any-return]

    def _end_turn(self) -> None:
        """Fire ``turn_end`` (once)."""
        if self._ended:
            return
        self._ended = True
        info = self.turn.end() if self.turn is not None else getattr(self, "_end_info", None)
        if info is not None and self._hooks:
            self._hooks.turn_end(info)
