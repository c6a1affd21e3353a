"""``PostgresStore``: sessions in PostgreSQL (psycopg 3 and its pool).

Install with ``pip install 'panto[postgres]'``.  panto creates its tables and
migrates them (``panto_schema`` holds the version; a migration runs under a
transaction-scoped advisory lock, so processes starting together do not race).
Each batch is one transaction.  One writer per session: a session-level
advisory lock on the writer's connection, which PostgreSQL releases when the
connection ends, so a killed panto never leaves a session locked; a second
writer gets an error naming the holder (its ``application_name``: panto's
pid and host).  Many machines can point at one database.

The password (in the URL, or ``PGPASSWORD``) never appears in a message: the
URL is shown with its password replaced, and driver errors are scrubbed.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from ..errors import SessionError
from .base import Durability
from .sql import Dialect, SQLStore, Writer, resolve_sql_session

__all__ = ["ADVISORY_LOCK_CLASS", "PostgresStore", "close_pools", "safe_url"]

_LOCK_CLASS = 0x70616E74  # "pant": the first key of panto's advisory locks
#: the first key of panto's advisory locks (the second: ``hashtext(session id)``
#: for a session's writer lock; small numbers for panto's own, e.g. migrations)
ADVISORY_LOCK_CLASS = _LOCK_CLASS
_MIGRATION_LOCK = 1
_LOCK_GRACE = 1.0  # seconds a second writer waits before "in use"


def safe_url(url: str) -> str:
    """``url`` with its password replaced by ``***``."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an unparsable database URL>"
    if parts.password is None:
        return url
    user = parts.username or ""
    host = parts.hostname or ""
    if parts.port is not None:
        host += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=f"{user}:***@{host}"))


def _password(url: str) -> str | None:
    try:
        pw = urlsplit(url).password
    except ValueError:
        return None
    return unquote(pw) if pw else None


def _import() -> tuple[Any, Any]:
    try:
        import psycopg
        import psycopg_pool
    except ImportError:
        raise SessionError(
            "the postgres session store needs psycopg 3: pip install 'panto[postgres]'"
        ) from None
    return psycopg, psycopg_pool


def _app_name() -> str:
    return f"panto pid {os.getpid()} on {socket.gethostname()}"[:63]


class _Locks:
    """The session writer locks of this process: session-level advisory
    locks held on one connection of their own, outside the pool (a lock per
    open session no longer pins one of the pool's connections), and the set
    of sessions this process holds (the same connection would take a lock it
    holds again)."""

    def __init__(self, d: PostgresDialect) -> None:
        self.d = d
        self.conn: Any = None
        self.held: set[str] = set()
        self.mutex = threading.Lock()

    def _conn(self) -> Any:
        if self.conn is None or self.conn.closed:
            psycopg, _ = _import()
            # a new connection holds none of the old one's locks: they went
            # with it (as they go with a process that dies)
            self.held.clear()
            self.conn = psycopg.connect(
                self.d.url, connect_timeout=10, autocommit=True, application_name=_app_name()
            )
        return self.conn

    def try_acquire(self, sid: str) -> bool:
        with self.mutex:
            if sid in self.held:
                return False
            row = (
                self._conn()
                .execute("SELECT pg_try_advisory_lock(%s, hashtext(%s))", (_LOCK_CLASS, sid))
                .fetchone()
            )
            if row and row[0]:
                self.held.add(sid)
                return True
            return False

    def release(self, sid: str) -> None:
        with self.mutex:
            if sid not in self.held:
                return
            self.held.discard(sid)
            try:
                self.conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (_LOCK_CLASS, sid))
            except Exception:
                pass  # the connection is gone, and the lock with it

    def close(self) -> None:
        with self.mutex:
            self.held.clear()
            if self.conn is not None:
                with contextlib.suppress(Exception):
                    self.conn.close()
                self.conn = None


class _PgWriter(Writer):
    """The writer lock of one session (on the process's lock connection);
    each write or read borrows a connection from the pool."""

    def __init__(self, d: PostgresDialect, sid: str) -> None:
        self.d = d
        self.sid = sid
        try:
            # A writer that was just killed holds the lock until its server
            # process sees the connection close (milliseconds): wait that long.
            deadline = time.monotonic() + _LOCK_GRACE
            while True:
                got = d.locks.try_acquire(sid)
                if got or time.monotonic() >= deadline:
                    break
                time.sleep(0.05)
            if not got:
                with d.connection() as conn:
                    holder = d.lock_holder(conn.cursor(), sid)
                raise SessionError(
                    f"session {sid} in {d.where()} is in use by another panto process"
                    f" ({holder or 'unknown'}); only one process may write a session at a time"
                )
        except SessionError:
            raise
        except Exception as exc:
            raise d.wrap(exc) from None

    def connection(self) -> Any:
        return self.d.connection()

    def release(self) -> None:
        self.d.locks.release(self.sid)


class PostgresDialect(Dialect):
    name = "postgres"
    json_type = "JSONB"
    json_in = "?::jsonb"
    json_out = "line"
    header_out = "header::text"
    line_column = "\n                line TEXT NOT NULL,"
    entry_cols = "entry, line"
    entry_vals = "?::jsonb, ?"

    def entry_values(self, text: str) -> tuple[str, ...]:
        return (text, text)

    def __init__(self, url: str) -> None:
        psycopg, psycopg_pool = _import()
        self.url = url
        self._secret = _password(url) or os.environ.get("PGPASSWORD") or None
        self._safe = safe_url(url)
        kwargs = {"autocommit": True, "application_name": _app_name()}
        try:
            with psycopg.connect(url, connect_timeout=10, **kwargs) as conn:
                with self.transaction(conn):
                    conn.execute(
                        "SELECT pg_advisory_xact_lock(%s, %s)", (_LOCK_CLASS, _MIGRATION_LOCK)
                    )
                    self.migrate(conn)
        except SessionError:
            raise
        except Exception as exc:
            raise self.wrap(exc) from None
        self.pool = psycopg_pool.ConnectionPool(
            url, min_size=1, max_size=8, kwargs=kwargs, open=True, name="panto-sessions"
        )
        self.locks = _Locks(self)

    def sql(self, text: str) -> str:
        return text.replace("%", "%%").replace("?", "%s")

    def where(self) -> str:
        return self._safe

    def wrap(self, exc: BaseException) -> SessionError:
        text = " ".join(str(exc).split()) or type(exc).__name__
        if self._secret:
            text = text.replace(self._secret, "***")
        text = text.replace(self.url, self._safe)
        return SessionError(f"{self._safe}: {text}")

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        try:
            cm = self.pool.connection(timeout=30)
            conn = cm.__enter__()
        except Exception as exc:
            raise self.wrap(exc) from None
        try:
            yield conn
        except BaseException as exc:
            cm.__exit__(type(exc), exc, exc.__traceback__)
            raise
        cm.__exit__(None, None, None)

    @contextlib.contextmanager
    def transaction(self, conn: Any) -> Iterator[None]:
        with conn.transaction():
            yield

    def claim(self, session_id: str, durability: Durability) -> Writer:
        return _PgWriter(self, session_id)

    def lock_holder(self, cur: Any, sid: str) -> str | None:
        try:
            cur.execute(
                "SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a "
                "ON a.pid = l.pid WHERE l.locktype = 'advisory' AND l.granted "
                "AND l.classid = %s::bigint::oid "
                "AND l.objid = (hashtext(%s)::bigint & 4294967295)::oid LIMIT 1",
                (_LOCK_CLASS, sid),
            )
            row = cur.fetchone()
        except Exception:
            return None
        return str(row[0]) if row and row[0] else None

    def close(self) -> None:
        self.locks.close()
        self.pool.close()


_DIALECTS: dict[str, PostgresDialect] = {}
_DIALECTS_LOCK = threading.Lock()


def dialect_for(url: str) -> PostgresDialect:
    """One dialect (and one connection pool) per URL per process."""
    with _DIALECTS_LOCK:
        d = _DIALECTS.get(url)
        if d is None:
            d = _DIALECTS[url] = PostgresDialect(url)
            if len(_DIALECTS) == 1:
                atexit.register(close_pools)
        return d


def close_pools() -> None:
    """Close the connection pools of this process (their threads stop);
    called at exit, and by embedders and tests that are done with PostgreSQL."""
    with _DIALECTS_LOCK:
        for d in _DIALECTS.values():
            with contextlib.suppress(Exception):
                d.close()
        _DIALECTS.clear()


class PostgresStore(SQLStore):
    """One session in PostgreSQL.

    ``PostgresStore(url, cwd)`` starts a new session;
    ``PostgresStore.open(url, session_id)`` continues one (an id prefix is
    resolved).  ``url``: ``postgresql://user[:password]@host[:port]/db``
    (libpq's environment variables and ``~/.pgpass`` work as usual).
    ``durability`` is accepted for symmetry: a commit is durable as the
    server is configured."""

    def __init__(
        self,
        url: str,
        cwd: str | os.PathLike[str] | None = None,
        *,
        durability: Durability = "fsync",
        session_id: str | None = None,
        _existing: bool = False,
    ) -> None:
        super().__init__(
            dialect_for(url),
            session_id=session_id,
            cwd=cwd,
            durability=durability,
            existing=_existing,
        )

    @classmethod
    def open(cls, url: str, session_id: str, *, durability: Durability = "fsync") -> PostgresStore:
        sid = resolve_sql_session(dialect_for(url), session_id)
        return cls(url, durability=durability, session_id=sid, _existing=True)
