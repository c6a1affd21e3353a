"""The agent as an endpoint: sessions a client creates, prompts, watches
and aborts over HTTP (``/v1/agent/sessions...``), each a ``panto.Session``
(the one writer of its conversation) on this process's ``Host``.

Every event a session produces gets a sequence number and is kept, so an
event stream can be resumed with ``Last-Event-ID`` or ``?after=`` without
gaps or duplicates.  Event names are ``panto.events``' type names
(``message_start``, ``content_delta``, ``tool_call_start``, ...) plus
``turn.started``, ``turn.completed``, ``turn.failed`` and ``turn.aborted``.

Served sessions behave like ``panto -p``: nothing waits for a person;
tools run under the permission rules and in the sandbox.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from ..config import Config
from ..errors import PantoError
from ..logs import get_logger

__all__ = ["AgentHub", "HubError", "ServedSession"]

log = get_logger("panto.serve")

#: Events kept per session for replay (the oldest go first past this).
MAX_EVENTS = 100_000
#: Seconds a permission request waits for its answer; then it is denied.
APPROVAL_TIMEOUT = 300.0
#: why an abort denied a permission request
ABORTED = "the turn was aborted"
#: Threads for the tool work of sessions with approvals, apart from the
#: process's tool pool: a permission request holds one of its threads while
#: it waits for a person, and those must not hold up other sessions' tools.
APPROVAL_THREADS = 256


class ApprovalPool:
    """The tool pool of the sessions with approvals (made on first use,
    threads started as needed)."""

    def __init__(self) -> None:
        self._pool: Any = None

    def get(self) -> Any:
        if self._pool is None:
            from ..tools import new_tool_pool

            self._pool = new_tool_pool(APPROVAL_THREADS)
        return self._pool

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False)
            self._pool = None


class HubError(Exception):
    def __init__(self, status: int, message: str, type: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.type = type


@dataclass
class ServedSession:
    id: str
    owner: str
    model: str
    cwd: str
    created: float
    session: Any  # panto.agent.Session
    opened: Any  # panto.app.AgentSession (closed with it)
    events: list[tuple[int, str, dict[str, Any]]] = field(default_factory=list)
    seq: int = 0
    turns: int = 0
    task: asyncio.Task[None] | None = None
    changed: asyncio.Condition = field(default_factory=asyncio.Condition)
    #: permission requests waiting for an answer: id -> (event, [answer])
    pending: dict[str, tuple[Any, list[str]]] = field(default_factory=dict)
    #: permission requests settled: id -> why ("answered", the timeout, an abort)
    settled: dict[str, str] = field(default_factory=dict)
    #: held while a request is answered or settled (a tool thread and the loop)
    asking: threading.Lock = field(default_factory=threading.Lock)
    #: seconds a permission request waits; None: no approvals (like ``-p``)
    approval_timeout: float | None = None

    @property
    def approvals(self) -> bool:
        return self.approval_timeout is not None

    @property
    def state(self) -> str:
        return "running" if self.task is not None and not self.task.done() else "idle"

    def describe(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "model": self.model,
            "cwd": self.cwd,
            "state": self.state,
            "created": self.created,
            "turns": self.turns,
            "last_event_id": self.seq,
            "approvals": self.approvals,
            "pending_permissions": sorted(self.pending),
        }

    async def emit(self, name: str, data: dict[str, Any]) -> None:
        self.seq += 1
        self.events.append((self.seq, name, data))
        if len(self.events) > MAX_EVENTS:
            del self.events[: len(self.events) - MAX_EVENTS]
        async with self.changed:
            self.changed.notify_all()

    def since(self, after: int) -> list[tuple[int, str, dict[str, Any]]]:
        if not self.events or after >= self.seq:
            return []
        first = self.events[0][0]
        return self.events[max(0, after + 1 - first) :]


class AgentHub:
    """The served sessions of this process."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.sessions: dict[str, ServedSession] = {}
        self._ids = itertools.count(1)
        self.approval_pool = ApprovalPool()
        #: shutdown began: event streams end once their session is idle
        self.stopping = False

    async def create(
        self,
        owner: str,
        model: str | None,
        cwd: str | None,
        approvals: bool = False,
        approval_timeout: float = APPROVAL_TIMEOUT,
    ) -> ServedSession:
        from ..agent import Session
        from ..app import default_host

        cwd = os.path.abspath(cwd) if cwd else os.getcwd()
        if not os.path.isdir(cwd):
            raise HubError(400, f"cwd {cwd!r} is not a directory")

        def open_() -> Any:
            return default_host().open_session(
                Config.load(cwd=cwd) if self.config.cwd != cwd else self.config,
                cwd=cwd,
                model=model or None,
                session="new",
            )

        try:
            opened = await asyncio.to_thread(open_)
        except PantoError as e:
            raise HubError(400, str(e)) from None
        store = opened.store
        sid = getattr(store, "session_id", None) or f"s{next(self._ids):06d}"
        s = ServedSession(
            sid,
            owner,
            opened.agent.config.model_spec,
            cwd,
            time.time(),
            Session(opened.agent, cwd=cwd),
            opened,
        )
        self.sessions[sid] = s
        if approvals:
            self._ask_over_http(s, approval_timeout)
        return s

    def _ask_over_http(self, s: ServedSession, timeout: float) -> None:
        """Each permission prompt becomes a ``permission.requested`` event,
        answered by ``POST .../permissions/{request}``; no answer within
        ``timeout`` seconds denies.  (Without this, a served session is
        like ``panto -p``: nothing waits.)"""
        gate = getattr(s.session.agent, "permissions", None)
        if gate is None:
            return
        s.approval_timeout = timeout
        s.session.agent.tool_pool = self.approval_pool.get()
        loop = asyncio.get_running_loop()
        counter = itertools.count(1)

        def approver(req: Any) -> str:  # on a tool thread
            rid = f"perm_{next(counter)}"
            done = threading.Event()
            answer: list[str] = []
            s.pending[rid] = (done, answer)
            data = permission_request_json(rid, req, timeout)
            asyncio.run_coroutine_threadsafe(s.emit("permission.requested", data), loop)
            woken = done.wait(timeout)
            with s.asking:  # from here on an answer finds it settled
                s.pending.pop(rid, None)
                if answer:
                    decision, why = answer[0], "answered"
                else:  # (an abort wakes it without an answer)
                    decision = "deny"
                    why = ABORTED if woken else f"no answer within {timeout:g} s"
                s.settled[rid] = why
                if len(s.settled) > MAX_EVENTS:
                    del s.settled[next(iter(s.settled))]
            if why != ABORTED:  # (an abort says so itself, before its turn.aborted)
                resolved = {"request": rid, "decision": decision, "why": why}
                asyncio.run_coroutine_threadsafe(s.emit("permission.resolved", resolved), loop)
            return decision

        gate.approver = approver

    async def answer(self, s: ServedSession, rid: str, decision: str) -> None:
        """Settle request ``rid``: 409 when it was answered already, 404
        when there is no such request or it expired (timeout, abort)."""
        from ..policy.permissions import ALWAYS, ONCE, REFUSE

        choices = {"once": ONCE, "allow": ONCE, "always": ALWAYS, "deny": REFUSE}
        if decision not in choices:
            raise HubError(400, "decision must be once, always or deny")
        with s.asking:
            entry = s.pending.get(rid)
            if entry is not None and not entry[0].is_set():
                done, answer = entry
                answer.append(choices[decision])
                done.set()
                return
            why = s.settled.get(rid)
            if entry is not None:  # woken, not yet settled
                why = "answered" if entry[1] else "the turn was aborted"
        if why is None:
            raise HubError(
                404, f"no permission request {rid!r} in session {s.id}", "not_found_error"
            )
        if why == "answered":
            raise HubError(409, f"permission request {rid!r} was answered already", "conflict")
        raise HubError(404, f"permission request {rid!r} has expired ({why})", "not_found_error")

    async def start(self) -> None:
        """Nothing to start (the replica hub starts its LISTEN here)."""

    async def get(self, sid: str, owner: str) -> ServedSession:
        s = self.sessions.get(sid)
        if s is None or s.owner != owner:  # another key's session does not exist for this one
            raise HubError(404, f"no session {sid!r}", "not_found_error")
        return s

    async def list(self, owner: str) -> list[ServedSession]:
        return [s for s in self.sessions.values() if s.owner == owner]

    async def describe(self, s: ServedSession) -> dict[str, Any]:
        return s.describe()

    async def messages(self, s: ServedSession) -> list[dict[str, Any]]:
        return messages_json(s)

    async def events(self, s: ServedSession, after: int, heartbeat: float) -> Any:
        """The session's events after ``after``, then each new one as it
        comes; a comment line every ``heartbeat`` seconds of quiet keeps
        proxies from closing an idle stream."""
        while True:
            for batch in _batches(s.since(after)):
                # one write a batch: a client gone mid-replay costs one failed
                # write, not one (and a "socket.send() raised exception." line
                # each) per event, since the loop never ran between them
                yield b"".join(
                    f"id: {seq}\nevent: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n".encode()
                    for seq, name, data in batch
                )
                after = batch[-1][0]
            async with s.changed:
                if s.seq > after:
                    continue
                if self.stopping and s.state != "running":
                    return  # everything sent; the client reconnects with Last-Event-ID
                # stopping with a turn running: look again soon (its end
                # notifies before its task is done)
                wait = 0.25 if self.stopping else heartbeat
                try:
                    await asyncio.wait_for(s.changed.wait(), wait)
                    continue
                except asyncio.TimeoutError:
                    pass
            # the ping outside the lock: a client gone while it is written
            # leaves this generator suspended until collected, and suspended
            # inside the lock it would block every emit of the session
            if not self.stopping:
                yield b": ping\n\n"

    async def end_event_streams(self) -> None:
        """Shutdown began (SIGTERM): each event stream ends once its session
        has no turn running.  An open stream never ends by itself, so
        without this one idle watcher held the process for the whole
        ``drain_timeout`` and was then cancelled with a traceback."""
        self.stopping = True
        for s in list(self.sessions.values()):
            async with s.changed:
                s.changed.notify_all()

    async def prompt(self, s: ServedSession, text: str, mode: str) -> dict[str, Any]:
        if mode not in ("reject", "steer", "follow_up"):
            raise HubError(400, f"mode must be reject, steer or follow_up, not {mode!r}")
        if not text.strip():
            raise HubError(400, "text is empty")
        running = s.state == "running"
        if running and mode == "reject":
            raise HubError(
                409,
                f"session {s.id} is running turn {s.turns}; send mode steer or follow_up to queue",
                "conflict",
            )
        s.session.submit(text, mode="steer" if mode == "steer" else "follow_up")
        if not running:
            s.task = asyncio.create_task(self._run(s))
        return {"queued": running, "turn": s.turns + (1 if running else 0)}

    async def _run(self, s: ServedSession) -> None:
        """Turns until nothing is queued, every event recorded."""
        from ..events import MessageComplete, event_to_dict

        s.turns += 1
        await s.emit("turn.started", {"turn": s.turns})
        open_turn = True
        try:
            async for ev in s.session.run_async():
                if not open_turn:
                    s.turns += 1
                    await s.emit("turn.started", {"turn": s.turns})
                    open_turn = True
                d = event_to_dict(ev)
                await s.emit(d["type"], d)
                if isinstance(ev, MessageComplete) and ev.final:
                    await s.emit("turn.completed", {"turn": s.turns, "stop_reason": ev.stop_reason})
                    open_turn = False
        except asyncio.CancelledError:
            await s.emit("turn.aborted", {"turn": s.turns})
            raise
        except PantoError as e:
            await s.emit(
                "turn.failed", {"turn": s.turns, "error": str(e), "type": type(e).__name__}
            )
        except Exception as e:  # noqa: BLE001 - a served session never takes the server down
            log.warning("session %s: turn failed: %r", s.id, e)
            await s.emit("turn.failed", {"turn": s.turns, "error": f"{type(e).__name__}: {e}"})
        else:
            if open_turn:  # cancelled: the stream ended without a final message
                await s.emit("turn.aborted", {"turn": s.turns})

    async def abort(self, s: ServedSession) -> None:
        denied = []
        with s.asking:
            for rid, (done, answer) in list(s.pending.items()):
                if not done.is_set() and not answer:
                    done.set()  # a waiting permission request is denied
                    denied.append(rid)
        for rid in denied:
            await s.emit(
                "permission.resolved", {"request": rid, "decision": "deny", "why": ABORTED}
            )
        task = s.task
        s.session.cancel()
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 5)
            except asyncio.TimeoutError:
                task.cancel()

    async def fork(self, s: ServedSession, owner: str) -> ServedSession:
        """A new served session holding a copy of ``s`` up to its current
        entry (``s`` goes on unchanged)."""
        from ..agent import Session
        from ..app import default_host
        from ..sessions import fork_session, open_backend

        store = s.opened.store
        if not hasattr(store, "tree"):
            raise HubError(400, "this session is not saved: it cannot be forked")

        def fork_() -> Any:
            backend = open_backend(s.session.agent.config)
            new_id = fork_session(backend, store.session_id, store.leaf_id, cwd=s.cwd)
            return default_host().open_session(
                s.session.agent.config, cwd=s.cwd, session=("resume", new_id)
            )

        opened = await asyncio.to_thread(fork_)
        sid = opened.store.session_id
        f = ServedSession(
            sid, owner, s.model, s.cwd, time.time(), Session(opened.agent, cwd=s.cwd), opened
        )
        self.sessions[sid] = f
        if s.approval_timeout is not None:  # a fork asks as its parent does
            self._ask_over_http(f, s.approval_timeout)
        return f

    async def aclose(self) -> None:
        for s in list(self.sessions.values()):
            if s.task is not None and not s.task.done():
                s.session.cancel()
                s.task.cancel()
            try:
                await asyncio.to_thread(s.opened.close)
            except Exception as e:  # noqa: BLE001
                log.debug("closing session %s: %s", s.id, e)
        self.sessions.clear()
        self.approval_pool.close()


def _batches(events: list[Any], size: int = 256) -> list[list[Any]]:
    """``events`` in runs of at most ``size``: one SSE write each."""
    return [events[i : i + size] for i in range(0, len(events), size)]


def messages_json(s: ServedSession) -> list[dict[str, Any]]:
    """The conversation as JSON (the session files' message shape: tool
    results carry their ``tool_use_id``)."""
    return [m.to_dict() for m in s.session.agent.conversation]


def permission_request_json(rid: str, req: Any, timeout: float) -> dict[str, Any]:
    """A ``permission.requested`` event's data (one process and replicas)."""
    return {
        "request": rid,
        "tool": req.call.name,
        "tool_use_id": req.call.id,
        "input": req.call.input,
        "detail": req.detail,
        "reason": req.decision.reason,
        "suggest": list(req.decision.suggest),
        "mode": req.mode,
        "timeout": timeout,
    }
