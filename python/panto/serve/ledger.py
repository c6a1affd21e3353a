"""The usage ledger: one row per proxied request (key, alias, upstream,
tokens, cost, status, time) in the session database -- the ``panto_usage``
table of PostgreSQL or SQLite -- or, with JSONL sessions, a JSONL file
beside them (``$PANTO_HOME/serve/usage.jsonl``, mode 0600).  Rows are
made and written by one worker thread, never on the event loop, in batches
(all that queued up while the last batch was written: one transaction or
one file append at 200 requests a second, not 200)."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from ..config import Config
from ..logs import get_logger

__all__ = ["Ledger"]

log = get_logger("panto.serve")

_COLUMNS = (
    "at, key_name, alias, upstream, input_tokens, output_tokens, cache_read_tokens, "
    "cache_write_tokens, cost_usd, status, duration_ms"
)
_CREATE = """CREATE TABLE IF NOT EXISTS panto_usage (
    id {id}, at DOUBLE PRECISION NOT NULL, key_name TEXT NOT NULL, alias TEXT NOT NULL,
    upstream TEXT NOT NULL, input_tokens BIGINT, output_tokens BIGINT,
    cache_read_tokens BIGINT, cache_write_tokens BIGINT, cost_usd DOUBLE PRECISION,
    status TEXT NOT NULL, duration_ms DOUBLE PRECISION)"""
# (the column list is kept beside the CREATE so they cannot drift)
assert all(c.strip() in _CREATE for c in _COLUMNS.split(","))


#: At most this many rows are written at once.
_BATCH = 500


class Ledger:
    """Finished requests go into a queue; one thread turns them into rows
    and writes them with ``write`` (a list of rows at a time)."""

    def __init__(
        self,
        write: Callable[[list[dict[str, Any]]], None],
        check: Callable[[], str | None],
        close: Callable[[], None],
    ) -> None:
        self._write = write
        self._check = check
        self._close = close
        self._q: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="panto-ledger", daemon=True)
        self._thread.start()
        self.config: Config | None = None

    @classmethod
    def open(cls, config: Config) -> Ledger:
        url = config.session_url or ""
        if url.startswith(("postgresql://", "postgres://")):
            led = cls(*_postgres(url))
        elif url.startswith("sqlite:///"):
            led = cls(*_sqlite(url[len("sqlite://") :]))
        else:
            led = cls(*_jsonl())
        led.config = config
        return led

    def record(self, outcome: Any) -> None:
        """Queue the row of a finished request (a ``proxy.Outcome``; the
        row is made in the writer thread)."""
        took = (time.monotonic() - outcome.started) * 1000 if outcome.started else None
        self._q.put((outcome, time.time(), took))

    def _row(self, outcome: Any, at: float, took: float | None) -> dict[str, Any]:
        u = outcome.usage
        cost = None
        if u is not None and self.config is not None and outcome.upstream:
            try:
                from ..models import model_info

                cost = model_info(self.config, outcome.upstream).cost(u)
            except Exception:  # noqa: BLE001 - no price known
                cost = None
        return {
            "at": at,
            "key_name": outcome.key,
            "alias": outcome.alias,
            "upstream": outcome.upstream,
            "input_tokens": getattr(u, "input_tokens", None),
            "output_tokens": getattr(u, "output_tokens", None),
            "cache_read_tokens": getattr(u, "cache_read_tokens", None),
            "cache_write_tokens": getattr(u, "cache_write_tokens", None),
            "cost_usd": cost,
            "status": outcome.status,
            "duration_ms": took,
        }

    def _run(self) -> None:
        q = self._q
        while True:
            items = [q.get()]
            while len(items) < _BATCH:
                try:
                    items.append(q.get_nowait())
                except queue.Empty:
                    break
            rows, flushed, stop = [], [], False
            for item in items:
                if item is None:
                    stop = True
                elif isinstance(item, threading.Event):
                    flushed.append(item)
                else:
                    try:
                        rows.append(self._row(*item))
                    except Exception as e:  # noqa: BLE001 - the ledger never fails a request
                        log.warning("usage ledger: a row was not made: %s", e)
            if rows:
                try:
                    self._write(rows)
                except Exception as e:  # noqa: BLE001 - the ledger never fails a request
                    log.warning("usage ledger: %d rows were not written: %s", len(rows), e)
            for done in flushed:
                done.set()
            if stop:
                return

    async def check(self) -> str | None:
        """None when the database answers, else why not (readiness)."""
        return await asyncio.to_thread(self._check)

    def flush(self, timeout: float = 5.0) -> None:
        """Wait until the queued rows are written (tests, shutdown)."""
        done = threading.Event()
        self._q.put(done)
        done.wait(timeout)

    def close(self) -> None:
        self._q.put(None)
        self._thread.join(5)
        self._close()


def _row_values(row: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(row[c.strip()] for c in _COLUMNS.split(","))


def _postgres(url: str) -> tuple[Any, Any, Any]:
    import psycopg

    lock = threading.Lock()
    conn: list[Any] = []

    def connection() -> Any:
        if conn and not conn[0].closed:
            return conn[0]
        c = psycopg.connect(url, autocommit=True, connect_timeout=5)
        c.execute(_CREATE.format(id="BIGSERIAL PRIMARY KEY"))
        conn[:] = [c]
        return c

    def write(rows: list[dict[str, Any]]) -> None:
        with lock, connection().cursor() as cur:
            cur.executemany(
                f"INSERT INTO panto_usage ({_COLUMNS}) VALUES ({', '.join(['%s'] * 11)})",
                [_row_values(r) for r in rows],
            )

    def check() -> str | None:
        try:
            with psycopg.connect(url, connect_timeout=2) as c:
                c.execute("SELECT 1")
            return None
        except Exception as e:  # noqa: BLE001
            from ..sessions.postgres import safe_url

            return f"PostgreSQL at {safe_url(url)} does not answer ({type(e).__name__})"

    def close() -> None:
        with lock:
            for c in conn:
                c.close()

    return write, check, close


def _sqlite(path: str) -> tuple[Any, Any, Any]:
    import sqlite3

    lock = threading.Lock()

    def write(rows: list[dict[str, Any]]) -> None:
        with lock:
            c = sqlite3.connect(path, timeout=10)
            try:
                c.execute(_CREATE.format(id="INTEGER PRIMARY KEY"))
                c.executemany(
                    f"INSERT INTO panto_usage ({_COLUMNS}) VALUES ({', '.join(['?'] * 11)})",
                    [_row_values(r) for r in rows],
                )
                c.commit()
            finally:
                c.close()

    return write, lambda: None, lambda: None


def _jsonl() -> tuple[Any, Any, Any]:
    from ..paths import panto_home

    path = panto_home() / "serve" / "usage.jsonl"

    def write(rows: list[dict[str, Any]]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8") as f:
            f.write("".join(json.dumps(r) + "\n" for r in rows))

    return write, lambda: None, lambda: None
