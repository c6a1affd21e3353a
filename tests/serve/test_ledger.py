"""The usage ledger's writer thread: every queued request becomes one row,
written in batches (whatever queued up while the last batch was written),
in each backend: JSONL, SQLite and PostgreSQL."""

from __future__ import annotations

import json
import os
import sqlite3
import threading
from pathlib import Path

import pytest

from panto.config import Config
from panto.conversation import Usage
from panto.serve.ledger import Ledger
from panto.serve.proxy import Outcome

N = 300


def record_many(ledger: Ledger) -> None:
    """N outcomes from 3 threads at once (the batches interleave)."""

    def part(k: int) -> None:
        for i in range(k, N, 3):
            ledger.record(
                Outcome(f"key{i}", "smart", "up-a/claude-up", usage=Usage(i, output_tokens=1))
            )

    threads = [threading.Thread(target=part, args=(k,)) for k in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    ledger.flush(10)


def test_jsonl_rows_batched(isolated_home: Path) -> None:
    ledger = Ledger.open(Config())
    record_many(ledger)
    ledger.close()
    path = Path(os.environ["XDG_DATA_HOME"]) / "panto" / "serve" / "usage.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    assert sorted(r["input_tokens"] for r in rows) == list(range(N))
    assert {r["key_name"] for r in rows} == {f"key{i}" for i in range(N)}
    assert all(r["status"] == "ok" and r["upstream"] == "up-a/claude-up" for r in rows)


def test_sqlite_rows_batched(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    ledger = Ledger.open(Config(session_url=f"sqlite:///{db}"))
    record_many(ledger)
    ledger.close()
    with sqlite3.connect(db) as c:
        got = sorted(r[0] for r in c.execute("SELECT input_tokens FROM panto_usage"))
    assert got == list(range(N))


def test_postgres_rows_batched(database: str) -> None:
    import psycopg

    ledger = Ledger.open(Config(session_url=database))
    record_many(ledger)
    ledger.close()
    with psycopg.connect(database) as c:
        got = sorted(r[0] for r in c.execute("SELECT input_tokens FROM panto_usage"))
    assert got == list(range(N))


def test_a_failing_write_is_logged_and_the_next_batch_still_written(
    caplog: pytest.LogCaptureFixture,
) -> None:
    written: list[int] = []
    calls = {"n": 0}

    def write(rows: list[dict[str, object]]) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise OSError("disk full")
        written.extend(int(r["input_tokens"]) for r in rows)  # type: ignore[call-overload]

    ledger = Ledger(write, lambda: None, lambda: None)
    ledger.record(Outcome("k", "a", "u", usage=Usage(1)))
    ledger.flush(5)
    ledger.record(Outcome("k", "a", "u", usage=Usage(2)))
    ledger.flush(5)
    ledger.close()
    assert written == [2]
    assert "were not written: disk full" in caplog.text
