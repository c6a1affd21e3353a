"""``SQLiteStore``: sessions in one SQLite database file (stdlib ``sqlite3``).

WAL mode, so readers never wait for the writer and several panto processes
share the file: different sessions at once, each batch one transaction
(``BEGIN IMMEDIATE`` waits up to 30 s for another process's transaction).  One
writer per session: a ``flock`` on ``<db>.locks/<session id>.lock``, released
by the kernel when the process dies.  ``durability``: ``fsync`` is
``synchronous=FULL``, ``flush`` is ``NORMAL`` (survives a crash of panto,
not of the machine), ``none`` is ``OFF``.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..errors import SessionError
from ..paths import open_private, private_dirs
from .base import Durability
from .jsonl import Lock
from .sql import Dialect, SQLStore, Writer, resolve_sql_session

__all__ = ["SQLiteStore"]

_SYNC = {"fsync": "FULL", "flush": "NORMAL", "none": "OFF"}


class _SQLiteWriter(Writer):
    def __init__(self, d: SQLiteDialect, sid: str, durability: Durability) -> None:
        locks = Path(str(d.path) + ".locks")
        try:
            locks.mkdir(mode=0o700, exist_ok=True)
        except OSError as exc:
            raise SessionError(f"cannot create {locks}: {exc.strerror}") from None
        self.lock = Lock(locks / f"{sid}.lock", f"session {sid} in {d.path}")
        try:
            self.conn = d.connect()
            self.conn.execute(f"PRAGMA synchronous = {_SYNC[durability]}")
        except BaseException:
            self.lock.release()
            raise

    def release(self) -> None:
        try:
            self.conn.close()
        finally:
            self.lock.release()


class SQLiteDialect(Dialect):
    name = "sqlite"

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser().absolute()
        try:
            private_dirs(self.path.parent)
            # created 0600 before SQLite opens it: SQLite gives the -wal and
            # -shm files the database's mode
            os.close(open_private(self.path, os.O_RDWR))
            conn = self.connect()
        except OSError as exc:
            raise SessionError(f"{self.path}: cannot open the session database: {exc}") from None
        try:
            conn.execute("PRAGMA journal_mode = WAL")
            with self.transaction(conn):
                self.migrate(conn)
        except sqlite3.Error as exc:
            raise self.wrap(exc) from None
        finally:
            conn.close()

    def where(self) -> str:
        return str(self.path)

    def connect(self) -> sqlite3.Connection:
        try:
            conn = sqlite3.connect(
                self.path, timeout=30, isolation_level=None, check_same_thread=False
            )
            conn.execute("PRAGMA foreign_keys = ON")
            conn.execute("PRAGMA busy_timeout = 30000")
        except sqlite3.Error as exc:
            raise self.wrap(exc) from None
        return conn

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        conn = self.connect()
        try:
            yield conn
        finally:
            conn.close()

    @contextlib.contextmanager
    def transaction(self, conn: Any) -> Iterator[None]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def claim(self, session_id: str, durability: Durability) -> Writer:
        return _SQLiteWriter(self, session_id, durability)


class SQLiteStore(SQLStore):
    """One session in an SQLite database.

    ``SQLiteStore(path, cwd)`` starts a new session; ``SQLiteStore.open(path,
    session_id)`` continues one (an id prefix is resolved).  The database and
    its schema are created when missing."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        cwd: str | os.PathLike[str] | None = None,
        *,
        durability: Durability = "fsync",
        session_id: str | None = None,
        _dialect: SQLiteDialect | None = None,
        _existing: bool = False,
    ) -> None:
        super().__init__(
            _dialect or SQLiteDialect(path),
            session_id=session_id,
            cwd=cwd,
            durability=durability,
            existing=_existing,
        )

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], session_id: str, *, durability: Durability = "fsync"
    ) -> SQLiteStore:
        d = SQLiteDialect(path)
        sid = resolve_sql_session(d, session_id)
        return cls(path, durability=durability, session_id=sid, _dialect=d, _existing=True)

    @property
    def path(self) -> Path:
        return self._d.path  # type: ignore[attr-defined, no-any-return]
