"""Agent sessions shared by every ``panto serve`` on one PostgreSQL
(``PANTO_SESSION_URL=postgresql://...``): the replica hub.

- A session's metadata (owner key, model, cwd, created, turns) is a row of
  ``panto_agent_sessions``, so any replica answers for any session.
- A turn runs on the replica that holds the session's writer lock (the
  PostgresStore's advisory lock): a prompt opens (locks) the session, the
  turns run, the session is closed (unlocked).  A replica that is killed
  releases the lock with its connection.
- Every event the turn emits is a row of ``panto_agent_events`` with a
  sequence number given by the lock holder (so one writer numbers them, in
  order, with no gaps); ``NOTIFY panto_agent`` carries only
  ``"<session id> <seq>"``.  Each replica ``LISTEN``s and wakes its event
  streams, which read the rows, so ``Last-Event-ID`` replay and live events
  come from one place.
- A prompt for a session another replica is running: ``reject`` is a 409;
  ``steer`` and ``follow_up`` become a row of ``panto_agent_prompts`` and a
  ``NOTIFY``, and the running replica takes it into its turn.  Every lock
  holder looks at that queue again after unlocking, so no prompt is left
  behind.
- Approvals (sessions created with ``"approvals": true``): a permission
  request waits on a tool thread of the replica running the turn.  It is a
  row of ``panto_agent_permissions`` (written before its
  ``permission.requested`` event, so an answer always finds it); an answer
  posted at any replica settles the row (``UPDATE ... WHERE decision IS
  NULL``: the first of answer, timeout and abort wins) and ``NOTIFY``s the
  running replica, which reads the decision and resolves the request.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..config import Config
from ..errors import PantoError, SessionError
from ..logs import get_logger
from .agents import (
    ABORTED,
    APPROVAL_TIMEOUT,
    ApprovalPool,
    HubError,
    permission_request_json,
)

__all__ = ["ReplicaHub"]

log = get_logger("panto.serve")

CHANNEL = "panto_agent"
TERMINAL = ("turn.completed", "turn.failed", "turn.aborted")
#: seconds an idle event stream waits for a NOTIFY before reading anyway
#: (a notification lost while the LISTEN connection reconnects costs this)
POLL = 2.0
#: seconds a waiting permission request reads its row anyway (see POLL)
ASK_POLL = 10.0
#: seconds a killed replica's lock may outlive it (its server sees the connection go)
LOCK_GRACE = 1.0
#: seconds a batch of events that failed is tried again before it is given up
FLUSH_RETRY = 15.0

_SCHEMA = """
CREATE TABLE IF NOT EXISTS panto_agent_sessions (
    id TEXT PRIMARY KEY, owner TEXT NOT NULL, model TEXT NOT NULL, cwd TEXT NOT NULL,
    created DOUBLE PRECISION NOT NULL, turns INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS panto_agent_events (
    session_id TEXT NOT NULL, seq BIGINT NOT NULL, name TEXT NOT NULL, data TEXT NOT NULL,
    PRIMARY KEY (session_id, seq));
CREATE TABLE IF NOT EXISTS panto_agent_prompts (
    id BIGSERIAL PRIMARY KEY, session_id TEXT NOT NULL, text TEXT NOT NULL, mode TEXT NOT NULL);
ALTER TABLE panto_agent_sessions ADD COLUMN IF NOT EXISTS approval_timeout DOUBLE PRECISION;
CREATE TABLE IF NOT EXISTS panto_agent_permissions (
    session_id TEXT NOT NULL, request TEXT NOT NULL, deadline TIMESTAMPTZ NOT NULL,
    decision TEXT, why TEXT, PRIMARY KEY (session_id, request));
"""


def _locked(session_id: str) -> str:
    """SQL: is the writer lock (postgres.py's advisory lock) of the session
    whose id is the column ``session_id`` held by anyone?  (One %s: the
    lock class.)"""
    return (
        "EXISTS (SELECT 1 FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted "
        "AND l.classid = %s::bigint::oid "
        f"AND l.objid = (hashtext({session_id})::bigint & 4294967295)::oid)"
    )


_LOCKED = _locked("s.id")
_META = "id, owner, model, cwd, created, approval_timeout"
#: an answer's decision -> the permission gate's (policy/permissions.py)
_CHOICES = {"once": "once", "allow": "once", "always": "always", "deny": "deny"}


@dataclass
class Meta:
    id: str
    owner: str
    model: str
    cwd: str
    created: float
    #: seconds a permission request waits; None: no approvals (like ``-p``)
    approval_timeout: float | None = None


@dataclass
class Run:
    """A session whose writer lock this replica holds (its turns run here)."""

    meta: Meta
    opened: Any  # panto.app.AgentSession
    session: Any  # panto.agent.Session
    seq: int
    turns: int
    pending: list[tuple[int, str, str]] = field(default_factory=list)
    flushing: asyncio.Task[None] | None = None
    task: asyncio.Task[None] | None = None
    #: permission requests waiting here: id -> woken by an answer's NOTIFY
    asks: dict[str, threading.Event] = field(default_factory=dict)


class ReplicaHub:
    """``AgentHub``'s interface on PostgreSQL (see the module docstring)."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.url = config.session_url or ""
        self.runs: dict[str, Run] = {}
        self._pool: Any = None
        self._ready = asyncio.Lock()
        self._bells: dict[str, asyncio.Event] = {}
        self._listener: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        #: sessions whose lock this replica is letting go of
        self._closing: dict[str, asyncio.Event] = {}
        self.approval_pool = ApprovalPool()
        #: shutdown began: event streams end once this replica runs no turn of theirs
        self.stopping = False

    # -- the database ----------------------------------------------------------------

    async def start(self) -> None:
        self._listener = asyncio.create_task(self._listen())

    async def db(self) -> Any:
        """The connection pool, the tables made on first use; 503 while
        PostgreSQL does not answer."""
        from .. import sessions  # noqa: F401 - the store's tables (panto_sessions) too

        async with self._ready:
            if self._pool is None:
                from psycopg_pool import AsyncConnectionPool

                from ..sessions.postgres import ADVISORY_LOCK_CLASS, dialect_for

                try:
                    await asyncio.to_thread(dialect_for, self.url)  # the store's migrations
                    pool = AsyncConnectionPool(
                        self.url,
                        min_size=1,
                        max_size=8,
                        open=False,
                        kwargs={"autocommit": True},
                        name="panto-agent-events",
                    )
                    await pool.open(wait=True, timeout=10)
                    async with pool.connection() as c, c.transaction():
                        await c.execute(
                            "SELECT pg_advisory_xact_lock(%s, 2)", (ADVISORY_LOCK_CLASS,)
                        )
                        await c.execute(_SCHEMA)
                except Exception as e:
                    raise self._down(e) from None
                self._pool = pool
        return self._pool

    def _down(self, e: BaseException) -> HubError:
        from ..sessions.postgres import safe_url

        return HubError(
            503, f"the session database {safe_url(self.url)} does not answer ({type(e).__name__})"
        )

    async def _q(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        pool = await self.db()
        try:
            async with pool.connection() as c:
                cur = await c.execute(sql, args)
                return await cur.fetchall() if cur.description else []
        except HubError:
            raise
        except Exception as e:
            raise self._down(e) from None

    async def _listen(self) -> None:
        """LISTEN for the whole life of the server (reconnecting), ringing
        the bells of local event streams and feeding queued prompts and
        aborts to the turns running here."""
        import psycopg

        while True:
            try:
                await self.db()
                conn = await psycopg.AsyncConnection.connect(self.url, autocommit=True)
                async with conn:
                    await conn.execute(f"LISTEN {CHANNEL}")
                    for sid, run in list(self.runs.items()):  # missed while reconnecting
                        await self._take_queued(sid)
                        for wake in list(run.asks.values()):  # (an answer's NOTIFY)
                            wake.set()
                    async for n in conn.notifies():
                        sid, _, what = n.payload.partition(" ")
                        if what == "abort":
                            run = self.runs.get(sid)
                            if run is not None:
                                self._background(self._cancel(run))
                        elif what.startswith("answer "):
                            self._wake(sid, what[7:])
                        elif what == "prompt":
                            await self._take_queued(sid)
                        else:
                            self._ring(sid)
            except asyncio.CancelledError:
                raise
            except Exception as e:  # noqa: BLE001 - PostgreSQL away: try again
                log.debug("LISTEN %s: %s", CHANNEL, e)
                await asyncio.sleep(1.0)

    async def end_event_streams(self) -> None:
        """Shutdown began (SIGTERM): each event stream ends once this
        replica runs no turn of its session (``AgentHub.end_event_streams``)."""
        self.stopping = True
        for sid in list(self._bells):
            self._ring(sid)

    def _ring(self, sid: str) -> None:
        bell = self._bells.pop(sid, None)
        if bell is not None:
            bell.set()

    def _bell(self, sid: str) -> asyncio.Event:
        bell = self._bells.get(sid)
        if bell is None:
            bell = self._bells[sid] = asyncio.Event()
        return bell

    # -- sessions ----------------------------------------------------------------------

    async def create(
        self,
        owner: str,
        model: str | None,
        cwd: str | None,
        approvals: bool = False,
        approval_timeout: float = APPROVAL_TIMEOUT,
    ) -> Meta:
        cwd = os.path.abspath(cwd) if cwd else os.getcwd()
        if not os.path.isdir(cwd):
            raise HubError(400, f"cwd {cwd!r} is not a directory")
        config = self._config(cwd)
        try:
            spec = (config.with_model(model) if model else config).model_spec
        except PantoError as e:
            raise HubError(400, str(e)) from None
        m = Meta(
            uuid.uuid4().hex, owner, spec, cwd, time.time(), approval_timeout if approvals else None
        )
        await self._insert(m)
        return m

    async def _insert(self, m: Meta) -> None:
        await self._q(
            f"INSERT INTO panto_agent_sessions ({_META}) VALUES (%s, %s, %s, %s, %s, %s)",
            (m.id, m.owner, m.model, m.cwd, m.created, m.approval_timeout),
        )

    def _config(self, cwd: str) -> Config:
        return Config.load(cwd=cwd) if self.config.cwd != cwd else self.config

    async def get(self, sid: str, owner: str) -> Meta:
        rows = await self._q(f"SELECT {_META} FROM panto_agent_sessions WHERE id = %s", (sid,))
        if not rows or rows[0][1] != owner:  # another key's session does not exist for this one
            raise HubError(404, f"no session {sid!r}", "not_found_error")
        return Meta(*rows[0])

    async def list(self, owner: str) -> list[Meta]:
        rows = await self._q(
            f"SELECT {_META} FROM panto_agent_sessions WHERE owner = %s ORDER BY created",
            (owner,),
        )
        return [Meta(*r) for r in rows]

    async def describe(self, m: Meta) -> dict[str, Any]:
        from ..sessions.postgres import ADVISORY_LOCK_CLASS

        rows = await self._q(
            f"SELECT s.turns, {_LOCKED}, "
            "(SELECT e.seq FROM panto_agent_events e WHERE e.session_id = s.id "
            " ORDER BY e.seq DESC LIMIT 1), "
            "(SELECT e.name FROM panto_agent_events e WHERE e.session_id = s.id "
            " ORDER BY e.seq DESC LIMIT 1), "
            "(SELECT array_agg(p.request ORDER BY p.request) FROM panto_agent_permissions p "
            " WHERE p.session_id = s.id AND p.decision IS NULL AND p.deadline > now()) "
            "FROM panto_agent_sessions s WHERE s.id = %s",
            (ADVISORY_LOCK_CLASS, m.id),
        )
        turns, locked, last, last_name, asks = rows[0] if rows else (0, False, None, None, None)
        run = self.runs.get(m.id)
        if run is not None:
            state = "running"
            turns, last = run.turns, run.seq
        elif locked:
            state = "running"
        elif last_name is not None and last_name not in TERMINAL:
            state = "interrupted"  # its replica died mid-turn: the next prompt goes on
        else:
            state = "idle"
        return {
            "id": m.id,
            "model": m.model,
            "cwd": m.cwd,
            "state": state,
            "created": m.created,
            "turns": turns,
            "last_event_id": last or 0,
            "approvals": m.approval_timeout is not None,
            # (a dead replica's requests wait for no one: none while it is not running)
            "pending_permissions": list(asks or []) if state == "running" else [],
        }

    async def messages(self, m: Meta) -> list[dict[str, Any]]:
        run = self.runs.get(m.id)
        if run is not None:
            return [x.to_dict() for x in run.session.agent.conversation]

        def load() -> list[dict[str, Any]]:
            from ..sessions.postgres import dialect_for
            from ..sessions.sql import load_path, session_row

            d = dialect_for(self.url)
            with d.connection() as conn:
                if session_row(d, conn, m.id) is None:
                    return []
                loaded, _ = load_path(d, conn, m.id)
            return [x.to_dict() for x in loaded.conversation]

        try:
            return await asyncio.to_thread(load)
        except PantoError as e:
            raise HubError(503, str(e)) from None

    # -- turns -------------------------------------------------------------------------

    async def prompt(self, m: Meta, text: str, mode: str) -> dict[str, Any]:
        if mode not in ("reject", "steer", "follow_up"):
            raise HubError(400, f"mode must be reject, steer or follow_up, not {mode!r}")
        if not text.strip():
            raise HubError(400, "text is empty")
        run = self.runs.get(m.id)
        if run is not None:  # running here
            if mode == "reject":
                raise self._busy(m, run.turns, "")
            run.session.submit(text, mode="steer" if mode == "steer" else "follow_up")
            return {"queued": True, "turn": run.turns}
        closing = self._closing.get(m.id)
        if closing is not None:  # our last turn is being closed: then open it anew
            await closing.wait()
        # Another replica's turn: one query says so.  (Opening the session
        # would say it too, but only after the store's wait for a writer
        # that was just killed, a second.)
        locked, turns = await self._lock_held(m.id)
        if not locked:
            try:
                run = await self._open(m)
            except SessionError as e:
                if "in use" not in str(e):
                    raise HubError(503, str(e)) from None
                locked, turns = await self._lock_held(m.id)  # taken meanwhile
            else:
                run.session.submit(text, mode="follow_up")
                self._start(run)
                return {"queued": False, "turn": run.turns + 1}
        if mode == "reject":
            raise self._busy(m, turns, " on another replica")
        await self._q(  # (the NOTIFY is sent when the row is committed)
            "WITH queued AS (INSERT INTO panto_agent_prompts (session_id, text, mode) "
            "VALUES (%s, %s, %s)) SELECT pg_notify(%s, %s)",
            (m.id, text, mode, CHANNEL, f"{m.id} prompt"),
        )
        # the holder may have unlocked before the row was there
        self._background(self._drain(m))
        return {"queued": True, "turn": turns}

    async def _lock_held(self, sid: str) -> tuple[bool, int]:
        """Is the session's writer lock held (by any replica)?  And its turns."""
        from ..sessions.postgres import ADVISORY_LOCK_CLASS

        rows = await self._q(
            f"SELECT {_LOCKED}, s.turns FROM panto_agent_sessions s WHERE s.id = %s",
            (ADVISORY_LOCK_CLASS, sid),
        )
        return (bool(rows[0][0]), int(rows[0][1])) if rows else (False, 0)

    def _background(self, coro: Any) -> None:
        task = asyncio.create_task(coro)
        self._tasks.add(task)  # (a task nobody references may be collected)
        task.add_done_callback(self._tasks.discard)

    def _busy(self, m: Meta, turns: int, where: str) -> HubError:
        return HubError(
            409,
            f"session {m.id} is running turn {turns}{where}; send mode steer or follow_up to queue",
            "conflict",
        )

    async def _open(self, m: Meta) -> Run:
        """Take the session's writer lock (SessionError "in use" when
        another replica has it) and load it."""
        from ..agent import Session
        from ..app import default_host
        from ..sessions.postgres import PostgresStore, dialect_for
        from ..sessions.sql import session_row

        config = self._config(m.cwd)

        def open_() -> Any:
            d = dialect_for(self.url)
            with d.connection() as conn:
                exists = session_row(d, conn, m.id) is not None
            if exists:
                store = PostgresStore.open(self.url, m.id)
            else:
                try:
                    store = PostgresStore(self.url, m.cwd, session_id=m.id)
                except SessionError as e:
                    if "exists" not in str(e):
                        raise
                    store = PostgresStore.open(self.url, m.id)  # written meanwhile
            try:
                return default_host().open_session(config, cwd=m.cwd, model=m.model, session=store)
            except BaseException:
                store.close()
                raise

        try:
            opened = await asyncio.to_thread(open_)
        except SessionError:
            raise
        except PantoError as e:
            raise HubError(400, str(e)) from None
        try:
            rows = await self._q(
                "SELECT s.turns, e.seq, e.name FROM panto_agent_sessions s "
                "LEFT JOIN LATERAL (SELECT seq, name FROM panto_agent_events "
                "  WHERE session_id = s.id ORDER BY seq DESC LIMIT 1) e ON true "
                "WHERE s.id = %s",
                (m.id,),
            )
        except BaseException:
            await asyncio.to_thread(opened.close)
            raise
        turns, seq, last = rows[0] if rows else (0, None, None)
        run = Run(m, opened, Session(opened.agent, cwd=m.cwd), seq or 0, turns)
        self.runs[m.id] = run
        await self._expire_asks(run)  # (any still waiting were a dead replica's)
        if last is not None and last not in TERMINAL:
            # the replica running the last turn died: say so before going on
            self._emit(run, "turn.aborted", {"turn": turns, "reason": "its replica stopped"})
        if m.approval_timeout is not None:
            self._ask_over_http(run, m.approval_timeout)
        return run

    def _start(self, run: Run) -> None:
        run.task = asyncio.create_task(self._run(run))

    async def _run(self, run: Run) -> None:
        """Turns until nothing is queued (here or in PostgreSQL), then
        unlock, then look at the queue once more."""
        sid = run.meta.id
        try:
            while True:
                await self._turns(run)
                # (a prompt the listener took meanwhile is in run.session)
                if not await self._take_queued(sid) and not run.session.queued:
                    break
        finally:
            await self._close(run)
        try:
            queued = await self._q(
                "SELECT 1 FROM panto_agent_prompts WHERE session_id = %s LIMIT 1", (sid,)
            )
        except HubError:
            return
        if queued:
            await self._drain(run.meta)

    async def _drain(self, m: Meta) -> None:
        """Run the queued prompts of ``m`` if nobody holds its lock."""
        closing = self._closing.get(m.id)
        if closing is not None:
            await closing.wait()
        if m.id in self.runs:
            return
        if (await self._lock_held(m.id))[0]:
            # a holder looks at the queue after unlocking; but one killed a
            # moment ago holds the lock until its server sees the connection go
            await asyncio.sleep(LOCK_GRACE)
            if m.id in self.runs or (await self._lock_held(m.id))[0]:
                return
        try:
            run = await self._open(m)
        except (SessionError, HubError):
            return  # a holder: it looks at the queue after its turn
        if await self._take_queued(m.id):
            self._start(run)
        else:
            await self._close(run)

    async def _close(self, run: Run) -> None:
        """Write the last events and unlock.  A prompt meanwhile waits for
        it, then opens the session anew."""
        sid = run.meta.id
        closed = self._closing[sid] = asyncio.Event()
        self.runs.pop(sid, None)
        try:
            await self._flush_all(run)
            await asyncio.to_thread(run.opened.close)
        except Exception as e:  # noqa: BLE001
            log.warning("session %s: closing: %s", sid, e)
        finally:
            self._closing.pop(sid, None)
            closed.set()

    async def _take_queued(self, sid: str) -> int:
        """Move the session's queued prompts into the turn running here."""
        run = self.runs.get(sid)
        if run is None:
            return 0
        try:
            rows = await self._q(
                "DELETE FROM panto_agent_prompts WHERE session_id = %s RETURNING id, text, mode",
                (sid,),
            )
        except HubError as e:
            log.warning("session %s: queued prompts: %s", sid, e.message)
            return 0
        for _, text, mode in sorted(rows):
            run.session.submit(text, mode="steer" if mode == "steer" else "follow_up")
        return len(rows)

    async def _turns(self, run: Run) -> None:
        from ..events import MessageComplete, event_to_dict

        s = run.session

        async def started() -> None:
            run.turns += 1
            self._emit(run, "turn.started", {"turn": run.turns})
            await self._q(
                "UPDATE panto_agent_sessions SET turns = %s WHERE id = %s",
                (run.turns, run.meta.id),
            )

        await started()
        open_turn = True
        try:
            async for ev in s.run_async():
                if not open_turn:
                    await started()
                    open_turn = True
                d = event_to_dict(ev)
                self._emit(run, d["type"], d)
                if isinstance(ev, MessageComplete) and ev.final:
                    self._emit(
                        run, "turn.completed", {"turn": run.turns, "stop_reason": ev.stop_reason}
                    )
                    open_turn = False
        except asyncio.CancelledError:
            self._emit(run, "turn.aborted", {"turn": run.turns})
            raise
        except PantoError as e:
            self._emit(
                run, "turn.failed", {"turn": run.turns, "error": str(e), "type": type(e).__name__}
            )
        except Exception as e:  # noqa: BLE001 - a served session never takes the server down
            log.warning("session %s: turn failed: %r", run.meta.id, e)
            self._emit(run, "turn.failed", {"turn": run.turns, "error": f"{type(e).__name__}: {e}"})
        else:
            if open_turn:  # cancelled: the stream ended without a final message
                self._emit(run, "turn.aborted", {"turn": run.turns})

    # -- events ------------------------------------------------------------------------

    def _emit(self, run: Run, name: str, data: dict[str, Any]) -> None:
        """Number the event (this replica holds the lock: it alone numbers
        the session's events) and have it written, in order, in batches."""
        run.seq += 1
        run.pending.append((run.seq, name, json.dumps(data, ensure_ascii=False)))
        if run.flushing is None or run.flushing.done():
            run.flushing = asyncio.create_task(self._flush(run))

    async def _flush(self, run: Run) -> None:
        """Write the pending events, in batches, in order.  A batch that
        fails (a connection cut, PostgreSQL restarting) is written again,
        with the events emitted meanwhile, for ``FLUSH_RETRY`` seconds; a
        batch that did commit before its connection went is not written
        twice (``ON CONFLICT DO NOTHING``: this replica alone numbers the
        session's events)."""
        sid = run.meta.id
        failing: float | None = None
        delay = 0.05
        while run.pending:
            batch, run.pending = run.pending, []
            try:
                pool = await self.db()
                async with pool.connection() as c, c.transaction():
                    async with c.cursor() as cur:
                        await cur.executemany(
                            "INSERT INTO panto_agent_events (session_id, seq, name, data) "
                            "VALUES (%s, %s, %s, %s) ON CONFLICT (session_id, seq) DO NOTHING",
                            [(sid, *row) for row in batch],
                        )
                    await c.execute("SELECT pg_notify(%s, %s)", (CHANNEL, f"{sid} {batch[-1][0]}"))
            except Exception as e:  # noqa: BLE001 - the turn goes on
                now = time.monotonic()
                failing = now if failing is None else failing
                if now - failing < FLUSH_RETRY:
                    log.info("session %s: writing %d events again: %s", sid, len(batch), e)
                    run.pending[:0] = batch
                    await asyncio.sleep(delay)
                    delay = min(delay * 2, 1.0)
                    continue
                log.warning("session %s: %d events not written: %s", sid, len(batch), e)
            else:
                failing, delay = None, 0.05
            self._ring(sid)

    async def _flush_all(self, run: Run) -> None:
        while run.pending or (run.flushing is not None and not run.flushing.done()):
            if run.flushing is None or run.flushing.done():
                run.flushing = asyncio.create_task(self._flush(run))
            await asyncio.shield(run.flushing)

    async def events(self, m: Meta, after: int, heartbeat: float) -> Any:
        """The session's events after ``after`` from PostgreSQL, then each
        new one as its NOTIFY arrives; a comment line every ``heartbeat``
        seconds of quiet."""
        quiet = 0.0
        while True:
            bell = self._bell(m.id)
            rows = await self._q(
                "SELECT seq, name, data FROM panto_agent_events "
                "WHERE session_id = %s AND seq > %s ORDER BY seq LIMIT 1000",
                (m.id, after),
            )
            if rows:  # one write for the rows (see AgentHub.events)
                yield b"".join(
                    f"id: {seq}\nevent: {name}\ndata: {data}\n\n".encode()
                    for seq, name, data in rows
                )
                after = rows[-1][0]
            if rows:
                quiet = 0.0
                continue
            if self.stopping and m.id not in self.runs:
                return  # everything sent; the client reconnects (to another replica)
            try:
                await asyncio.wait_for(bell.wait(), POLL)
            except asyncio.TimeoutError:
                quiet += POLL
                if quiet >= heartbeat:
                    quiet = 0.0
                    yield b": ping\n\n"

    # -- approvals ---------------------------------------------------------------------

    def _ask_over_http(self, run: Run, timeout: float) -> None:
        """Each permission prompt of ``run``'s agent becomes a row of
        ``panto_agent_permissions`` and a ``permission.requested`` event;
        the tool thread waits for the row's decision (an answer on any
        replica), ``timeout`` seconds at most, then denies."""
        gate = getattr(run.session.agent, "permissions", None)
        if gate is None:
            return
        run.session.agent.tool_pool = self.approval_pool.get()
        loop = asyncio.get_running_loop()
        sid = run.meta.id

        def db(sql: str, args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
            return asyncio.run_coroutine_threadsafe(self._q(sql, args), loop).result(30)

        def settle(rid: str, decision: str, why: str) -> tuple[str, str]:
            """The row's decision: ours, unless an answer came first."""
            rows = db(
                "UPDATE panto_agent_permissions SET decision = %s, why = %s "
                "WHERE session_id = %s AND request = %s AND decision IS NULL "
                "RETURNING decision, why",
                (decision, why, sid, rid),
            )
            return rows[0] if rows else decided(rid) or (decision, why)

        def decided(rid: str) -> tuple[str, str] | None:
            rows = db(
                "SELECT decision, why FROM panto_agent_permissions "
                "WHERE session_id = %s AND request = %s AND decision IS NOT NULL",
                (sid, rid),
            )
            return rows[0] if rows else None

        def approver(req: Any) -> str:  # on a tool thread
            rid = f"perm_{uuid.uuid4().hex[:12]}"
            wake = run.asks[rid] = threading.Event()
            try:
                db(
                    "INSERT INTO panto_agent_permissions (session_id, request, deadline) "
                    "VALUES (%s, %s, now() + make_interval(secs => %s))",
                    (sid, rid, timeout),
                )
                data = permission_request_json(rid, req, timeout)
                loop.call_soon_threadsafe(self._emit, run, "permission.requested", data)
                deadline = time.monotonic() + timeout
                while True:
                    # an answer's NOTIFY wakes us (or LISTEN reconnecting: one may
                    # have been lost); the slow poll covers a LISTEN connection
                    # that died unnoticed
                    wake.wait(max(0.0, min(deadline - time.monotonic(), ASK_POLL)))
                    wake.clear()
                    got = decided(rid)
                    if got is not None:
                        decision, why = got
                        break
                    if time.monotonic() >= deadline:
                        decision, why = settle(rid, "deny", f"no answer within {timeout:g} s")
                        break
            except Exception as e:  # noqa: BLE001 - the database away: deny, never run unasked
                log.warning("session %s: permission request %s: %s", sid, rid, e)
                decision, why = "deny", f"the session database failed ({type(e).__name__})"
            finally:
                run.asks.pop(rid, None)
            if why != ABORTED:  # (an abort says so itself, before its turn.aborted)
                loop.call_soon_threadsafe(
                    self._emit,
                    run,
                    "permission.resolved",
                    {"request": rid, "decision": decision, "why": why},
                )
            return decision

        gate.approver = approver

    def _wake(self, sid: str, rid: str) -> None:
        run = self.runs.get(sid)
        wake = run.asks.get(rid) if run is not None else None
        if wake is not None:
            wake.set()

    async def _cancel(self, run: Run) -> None:
        """An abort: the requests waiting now are denied (each with its
        ``permission.resolved``, before the turn's end), then the turn is
        cancelled."""
        for rid, wake in list(run.asks.items()):
            try:
                rows = await self._q(
                    "UPDATE panto_agent_permissions SET decision = 'deny', why = %s "
                    "WHERE session_id = %s AND request = %s AND decision IS NULL RETURNING 1",
                    (ABORTED, run.meta.id, rid),
                )
            except HubError as e:
                log.warning("session %s: aborting %s: %s", run.meta.id, rid, e.message)
                rows = []
            if rows:  # (else an answer came first: the waiting thread says which)
                resolved = {"request": rid, "decision": "deny", "why": ABORTED}
                self._emit(run, "permission.resolved", resolved)
            wake.set()
        run.session.cancel()

    async def _expire_asks(self, run: Run) -> None:
        """The requests a dead replica left waiting are denied (their tool
        calls got "cancelled" results), each with its ``permission.resolved``."""
        why = "its replica stopped"
        rows = await self._q(
            "UPDATE panto_agent_permissions SET decision = 'deny', why = %s "
            "WHERE session_id = %s AND decision IS NULL RETURNING request",
            (why, run.meta.id),
        )
        for (rid,) in sorted(rows):
            self._emit(run, "permission.resolved", {"request": rid, "decision": "deny", "why": why})

    async def answer(self, m: Meta, rid: str, decision: str) -> None:
        """Settle request ``rid`` (first come: a second answer is a 409) and
        tell the replica waiting for it."""
        from ..sessions.postgres import ADVISORY_LOCK_CLASS

        if decision not in _CHOICES:
            raise HubError(400, "decision must be once, always or deny")
        rows = await self._q(
            "UPDATE panto_agent_permissions p SET decision = %s, why = 'answered' "
            "WHERE p.session_id = %s AND p.request = %s AND p.decision IS NULL "
            f"AND p.deadline > now() AND {_locked('p.session_id')} RETURNING 1",
            (_CHOICES[decision], m.id, rid, ADVISORY_LOCK_CLASS),
        )
        if rows:
            self._wake(m.id, rid)  # waiting here: no need to wait for the NOTIFY
            await self._q("SELECT pg_notify(%s, %s)", (CHANNEL, f"{m.id} answer {rid}"))
            return
        rows = await self._q(
            "SELECT decision, why FROM panto_agent_permissions "
            "WHERE session_id = %s AND request = %s",
            (m.id, rid),
        )
        if not rows:
            raise HubError(
                404, f"no permission request {rid!r} in session {m.id}", "not_found_error"
            )
        was, why = rows[0]
        if why == "answered":
            raise HubError(
                409, f"permission request {rid!r} was answered already ({was})", "conflict"
            )
        raise HubError(
            404,
            f"permission request {rid!r} has expired ({why or 'its replica stopped'})",
            "not_found_error",
        )

    # -- the rest ----------------------------------------------------------------------

    async def abort(self, m: Meta) -> None:
        run = self.runs.get(m.id)
        if run is None:  # running on another replica (or not at all)
            await self._q("SELECT pg_notify(%s, %s)", (CHANNEL, f"{m.id} abort"))
            return
        task = run.task
        await self._cancel(run)
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), 5)
            except asyncio.TimeoutError:
                task.cancel()

    async def fork(self, m: Meta, owner: str) -> Meta:
        """A new session holding a copy of ``m``'s conversation."""
        from ..sessions import fork_session, open_backend
        from ..sessions.postgres import dialect_for
        from ..sessions.sql import session_row

        f = Meta(uuid.uuid4().hex, owner, m.model, m.cwd, time.time(), m.approval_timeout)

        def fork_() -> None:
            d = dialect_for(self.url)
            with d.connection() as conn:
                row = session_row(d, conn, m.id)
                leaf = None
                if row is not None:
                    cur = conn.cursor()
                    cur.execute("SELECT leaf_id FROM panto_sessions WHERE id = %s", (m.id,))
                    leaf = cur.fetchone()[0]
            if row is None:
                return  # nothing said yet: the fork starts empty too
            new = fork_session(open_backend(self.url), m.id, leaf, cwd=m.cwd)
            f.id = new

        try:
            await asyncio.to_thread(fork_)
        except PantoError as e:
            raise HubError(400, str(e)) from None
        await self._insert(f)
        return f

    async def aclose(self) -> None:
        if self._listener is not None:
            self._listener.cancel()
        for run in list(self.runs.values()):
            run.session.cancel()
            if run.task is not None:
                run.task.cancel()
        for run in list(self.runs.values()):
            if run.task is not None:
                try:
                    await asyncio.wait_for(asyncio.gather(run.task, return_exceptions=True), 5)
                except asyncio.TimeoutError:
                    pass
        if self._pool is not None:
            await self._pool.close()
        self.approval_pool.close()
