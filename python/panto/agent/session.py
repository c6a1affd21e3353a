"""``Session``: the one writer of a conversation (pi's ``AgentSession``,
codex's submission loop).

It owns an ``Agent`` and its store.  Prompts arrive through ``submit``; turns
run one after another through ``run`` / ``run_async``, which keep going
until nothing is queued::

    session = Session(agent)
    session.submit("fix the failing test")
    for ev in session.run():               # or: async for ev in session.run_async()
        if isinstance(ev, ToolCallStart):
            session.submit("and add a test", mode="follow_up")   # from any thread or task

- ``mode="steer"``: into the running turn; the prompt enters the
  conversation when the current tool round ends, after its results (the
  model reads it with them), or at the start of the next turn when the
  model asks for no more tools.
- ``mode="follow_up"`` (the default): after the running turn, as a turn of
  its own (one turn per follow-up, in order).
- With no turn running, both append the prompt now; ``run`` sends it.

Either way each tool call keeps exactly one result, right after its call,
and the store records the messages in the conversation's order.

It also switches the store the conversation is recorded in: ``new`` (a
fresh session, ``/clear``), ``reopen`` (reload it from the store, e.g. a
failed turn's prompt taken back out), ``fork`` (a copy to continue in) and
``list`` (the sessions of the working directory).
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import AsyncIterator, Iterator, Sequence
from typing import TYPE_CHECKING, Any, Literal

from ..conversation import Image, Text
from ..errors import PantoError, SessionError
from ..events import Event
from .io_async import run_blocking

if TYPE_CHECKING:
    from ..sessions import LoadedSession, SessionBackend, SessionInfo, SessionStore
    from .agent import Agent

__all__ = ["Mode", "Session"]

Mode = Literal["steer", "follow_up"]


class _Prompt:
    """A follow-up waiting for its turn.  (Not a dataclass: building one
    costs ``panto -p`` start-up, which imports this module.)"""

    __slots__ = ("files", "images", "text")

    def __init__(self, text: str, images: Sequence[Image], files: Sequence[Text]) -> None:
        self.text = text
        self.images = images
        self.files = files


class Session:
    """See the module docstring.  ``backend`` (``panto.sessions``) is where
    ``new`` creates a fresh session (None: ``new`` only clears the
    conversation, which stays unsaved); ``list`` and ``fork`` fall back to
    the configured backend.  ``cwd`` defaults to the process's at each
    call."""

    def __init__(
        self,
        agent: Agent,
        *,
        backend: SessionBackend | None = None,
        cwd: str | os.PathLike[str] | None = None,
    ) -> None:
        self.agent = agent
        self.backend = backend
        self.cwd = os.fspath(cwd) if cwd is not None else None
        self._lock = threading.Lock()
        self._follow_ups: deque[_Prompt] = deque()
        self._running = False
        #: the stream of the turn running now or last (usage, messages)
        self.stream: Any = None

    @property
    def store(self) -> SessionStore | None:
        return self.agent.store  # type: ignore[return-value]

    @property
    def running(self) -> bool:
        """Whether ``run``/``run_async`` is running turns."""
        return self._running

    @property
    def queued(self) -> int:
        """Prompts waiting: steered ones not yet taken, follow-ups."""
        return self.agent.queued + len(self._follow_ups)

    # -- prompts ----------------------------------------------------------------------

    def submit(
        self,
        text: str,
        images: Sequence[Image] = (),
        *,
        files: Sequence[Text] = (),
        mode: Mode = "follow_up",
    ) -> None:
        """A prompt (see the module docstring for ``mode``).  The
        ``user_message`` hooks run now, on the caller's thread, except for a
        follow-up, whose hooks run when its turn starts."""
        if mode not in ("steer", "follow_up"):
            raise ValueError(f"mode must be 'steer' or 'follow_up', not {mode!r}")
        with self._lock:
            if self._running and mode == "follow_up":
                self._follow_ups.append(_Prompt(text, tuple(images), tuple(files)))
                return
        # idle: appended now; steering a running turn: the agent queues it
        self.agent.submit_user_message(text, images, files=files)

    async def asubmit(
        self,
        text: str,
        images: Sequence[Image] = (),
        *,
        files: Sequence[Text] = (),
        mode: Mode = "follow_up",
    ) -> None:
        """``submit`` for async code: hooks and the store's write run in a
        worker thread, never on the event loop."""
        await run_blocking(lambda: self.submit(text, images, files=files, mode=mode))

    def _next(self) -> bool:
        """After a turn: whether another one should run (prompts steered
        after the last round, or the next follow-up, which enters now)."""
        with self._lock:
            if self.agent.queued:
                return True
            if not self._follow_ups:
                self._running = False
                return False
            p = self._follow_ups.popleft()
        self.agent.submit_user_message(p.text, p.images, files=p.files)
        return True

    def _start(self) -> None:
        with self._lock:
            if self._running:
                raise PantoError("a turn is already running in this session: submit() queues")
            self._running = True

    def _stop(self) -> None:
        with self._lock:
            self._running = False

    def run(self) -> Iterator[Event]:
        """Run turns until nothing is queued, yielding every event.  A failed
        turn raises (follow-ups stay queued); closing the iterator cancels
        the running turn."""
        self._start()
        try:
            while True:
                self.stream = stream = self.agent.run()
                with stream:
                    yield from stream
                if not self._next():
                    return
        finally:
            self._stop()

    async def run_async(self) -> AsyncIterator[Event]:
        """``run`` on the event loop (``Agent.run_async``)."""
        self._start()
        try:
            while True:
                self.stream = stream = self.agent.run_async()
                async with stream:
                    async for ev in stream:
                        yield ev
                if not await run_blocking(self._next):  # a follow-up is written
                    return
        finally:
            self._stop()

    def cancel(self) -> None:
        """Cancel the running turn and drop the queued prompts."""
        with self._lock:
            self._follow_ups.clear()
        self.agent.clear_queue()
        s = self.stream
        if s is not None:
            s.cancel()

    # -- the store --------------------------------------------------------------------

    def _cwd(self) -> str:
        return self.cwd if self.cwd is not None else os.getcwd()

    def _backend(self) -> SessionBackend:
        if self.backend is not None:
            return self.backend
        from ..sessions import open_backend

        return open_backend(self.agent.config)

    def new(self) -> SessionStore | None:
        """Start over (the system prompt kept) in a fresh session of
        ``backend``; the old store is closed.  None without a backend: the
        conversation is cleared and the old session is not told."""
        fresh = self.backend.create(self._cwd()) if self.backend is not None else None
        old = self.agent.store
        self.agent.clear(store=fresh)
        if fresh is not None and old is not None:
            old.close()  # type: ignore[attr-defined]
        return fresh

    def reopen(self) -> LoadedSession:
        """Close the store, open the session again and make what it loads
        the conversation (e.g. after a failed turn: its prompt, an
        unanswered one, is left out).  ``SessionError`` for a session that
        is not saved."""
        from ..sessions import FSJSONLStore

        old = self.agent.store
        if old is None or not hasattr(old, "tree"):
            raise SessionError("this session is not saved: there is nothing to reopen")
        old.close()  # type: ignore[attr-defined]
        if isinstance(old, FSJSONLStore):
            fresh: Any = FSJSONLStore.open(old.path, durability=old.durability)
        else:
            fresh = self._backend().open(old.session_id)  # type: ignore[attr-defined]
        loaded = fresh.load_conversation()
        self.agent.store = fresh
        self.agent.adopt(loaded)  # with its entry ids: auto-compaction names what it keeps
        return loaded

    def fork(self) -> str:
        """Copy the session up to its current entry into a new session and
        continue there (the old one is unchanged and closed); its id."""
        from ..sessions import fork_session

        old = self.agent.store
        if old is None or not hasattr(old, "tree"):
            raise SessionError("this session is not saved (--no-session): it has no tree")
        backend = self._backend()
        new = fork_session(backend, old.session_id, old.leaf_id, cwd=self._cwd())  # type: ignore[attr-defined]
        self.agent.store = backend.open(new)
        old.close()  # type: ignore[attr-defined]
        return new

    def list(self) -> list[SessionInfo]:
        """The saved sessions of the working directory, newest first."""
        return self._backend().list(self._cwd())

    def close(self) -> None:
        """Cancel a running turn, close the agent, then the store."""
        try:
            self.agent.close()
        finally:
            store = self.agent.store
            if store is not None:
                store.close()  # type: ignore[attr-defined]
