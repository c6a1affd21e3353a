"""The database stores' shared half: the schema and its migrations, the
store (``SQLStore``: one session in a database), reads and the catalogue.
``sqlite.py`` and ``postgres.py`` supply the connections, the writer lock and
the dialect.

Tables (created and migrated by panto; ``panto_schema`` holds the version):

- ``panto_sessions``: one row per session: ``id``, ``cwd``, ``created``,
  ``updated`` (ISO 8601 UTC), ``leaf_id``, ``entry_count``,
  ``message_count``, ``first_prompt``, ``model``, ``header`` (JSON).
- ``panto_entries``: one row per entry: ``session_id``, ``seq`` (the order
  of writing), ``id``, ``parent_id``, ``type``, ``role``, ``timestamp`` and
  ``entry``: the very JSON object a JSONL session line holds (``jsonb`` in
  PostgreSQL, text in SQLite), so sessions export and import between backends.

A batch of entries is one transaction.  A new session's row is written with
its first message that is not a system message (as a JSONL file is).  A load
reads the ids and parents of every entry, walks from the current leaf to the
root, and fetches and parses only the entries on that path: memory follows
the path, not the tree.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from typing import Any

from ..conversation import Message
from ..errors import SessionError
from ..storable import clean_message, clean_text, clean_value
from .base import (
    Builder,
    Durability,
    LoadedSession,
    ModelRef,
    SystemMode,
    check_durability,
    compaction_payload,
    is_prompt,
    message_payloads,
    now,
    starts_conversation,
)
from .catalog import SessionInfo
from .context import MESSAGE, Entries, TreeOps, build_context, entries_of
from .fastload import FORMAT_VERSION, gc_paused, parse_lines

__all__ = ["SCHEMA_VERSION", "SQLStore"]

#: The newest database schema this panto creates and reads.
SCHEMA_VERSION = 1


def _migrations(d: Dialect) -> dict[int, list[str]]:
    j = d.json_type
    return {
        1: [
            f"""CREATE TABLE panto_sessions (
                id TEXT PRIMARY KEY,
                cwd TEXT NOT NULL,
                created TEXT NOT NULL,
                updated TEXT NOT NULL,
                leaf_id TEXT,
                entry_count INTEGER NOT NULL DEFAULT 0,
                message_count INTEGER NOT NULL DEFAULT 0,
                first_prompt TEXT,
                model TEXT,
                header {j} NOT NULL)""",
            f"""CREATE TABLE panto_entries (
                session_id TEXT NOT NULL REFERENCES panto_sessions (id) ON DELETE CASCADE,
                seq INTEGER NOT NULL,
                id TEXT NOT NULL,
                parent_id TEXT,
                type TEXT NOT NULL,
                role TEXT,
                timestamp TEXT,
                entry {j} NOT NULL,{d.line_column}
                PRIMARY KEY (session_id, seq),
                UNIQUE (session_id, id))""",
            "CREATE INDEX panto_entries_parent ON panto_entries (session_id, parent_id)",
            "CREATE INDEX panto_sessions_cwd ON panto_sessions (cwd, updated)",
            "CREATE INDEX panto_sessions_updated ON panto_sessions (updated)",
        ]
    }


class Dialect:
    """What differs between the databases (the SQL here is written with
    ``?`` parameters; ``sql()`` turns them into the driver's)."""

    name = "sql"
    json_type = "TEXT"
    json_in = "?"
    json_out = "entry"
    header_out = "header"
    #: where the entry's exact JSON text is kept when ``entry`` does not keep
    #: it (jsonb orders keys its own way; a resumed request must be the same bytes)
    line_column = ""
    entry_cols = "entry"
    entry_vals = "?"

    def entry_values(self, text: str) -> tuple[str, ...]:
        return (text,)

    def sql(self, text: str) -> str:
        return text

    def where(self) -> str:
        """The database, for messages (never with a password)."""
        raise NotImplementedError

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """A connection for reading (autocommit)."""
        raise NotImplementedError
        yield

    @contextlib.contextmanager
    def transaction(self, conn: Any) -> Iterator[None]:
        raise NotImplementedError
        yield

    def claim(self, session_id: str, durability: Durability) -> Writer:
        """The writer's connection and lock for ``session_id``; SessionError
        when another process (or store) writes it."""
        raise NotImplementedError

    def wrap(self, exc: BaseException) -> SessionError:
        """A driver error as a SessionError whose text names no secret."""
        return SessionError(f"{self.where()}: {exc}")

    def migrate(self, conn: Any) -> None:
        """Create or upgrade the schema (call inside a transaction that
        serializes migrations)."""
        cur = conn.cursor()
        cur.execute("CREATE TABLE IF NOT EXISTS panto_schema (version INTEGER NOT NULL)")
        cur.execute("SELECT version FROM panto_schema")
        row = cur.fetchone()
        version = int(row[0]) if row else 0
        if version > SCHEMA_VERSION:
            raise SessionError(
                f"{self.where()}: the session database has schema version {version}, newer "
                f"than this panto understands (version {SCHEMA_VERSION}); upgrade panto"
            )
        for v in range(version + 1, SCHEMA_VERSION + 1):
            for stmt in _migrations(self)[v]:
                cur.execute(stmt)
        if version == 0:
            cur.execute(
                self.sql("INSERT INTO panto_schema (version) VALUES (?)"), (SCHEMA_VERSION,)
            )
        elif version < SCHEMA_VERSION:
            cur.execute(self.sql("UPDATE panto_schema SET version = ?"), (SCHEMA_VERSION,))


class Writer:
    """A session's writer: the lock that makes it the only one, and the
    connection it writes and reads through (``connection()``)."""

    conn: Any

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """The connection for one write or read (default: its own)."""
        yield self.conn

    def release(self) -> None:
        raise NotImplementedError


def dump(entry: dict[str, Any]) -> str:
    try:
        text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"))
        text.encode()
        return text
    except UnicodeEncodeError:  # lone surrogates: \u-escape them
        return json.dumps(entry, separators=(",", ":"))


# --------------------------------------------------------------------------- reading


def _skeleton(d: Dialect, conn: Any, sid: str) -> Entries:
    cur = conn.cursor()
    cur.execute(
        d.sql("SELECT id, parent_id, type FROM panto_entries WHERE session_id = ? ORDER BY seq"),
        (sid,),
    )
    es = Entries()
    prev = None
    for eid, pid, kind in cur.fetchall():
        es.ids.append(eid)
        es.parents.append(pid)
        es.kinds.append(kind)
        if pid != prev:
            es.linear = False
        prev = eid
    es.payloads = [None] * len(es.ids)
    es.leaf = prev
    return es


def _entry_texts(d: Dialect, conn: Any, sid: str, seqs: Sequence[int] | None) -> list[str]:
    cur = conn.cursor()
    if seqs is None:
        cur.execute(
            d.sql(f"SELECT {d.json_out} FROM panto_entries WHERE session_id = ? ORDER BY seq"),
            (sid,),
        )
        return [r[0] for r in cur.fetchall()]
    out: list[str] = []
    for k in range(0, len(seqs), 500):
        part = seqs[k : k + 500]
        marks = ",".join("?" * len(part))
        cur.execute(
            d.sql(
                f"SELECT {d.json_out} FROM panto_entries "
                f"WHERE session_id = ? AND seq IN ({marks}) ORDER BY seq"
            ),
            (sid, *part),
        )
        out.extend(r[0] for r in cur.fetchall())
    return out


def _parse(texts: list[str], where: str) -> Entries:
    return parse_lines("\n".join(texts) + "\n" if texts else "", where)


def load_path(
    d: Dialect, conn: Any, sid: str, leaf: str | None = None
) -> tuple[LoadedSession, Entries]:
    """The conversation of session ``sid`` that ends at ``leaf`` (default:
    the current leaf), parsing only the path's entries; and the skeleton
    (ids, parents and kinds of every entry)."""
    where = f"{d.where()} session {sid}"
    skel = _skeleton(d, conn, sid)
    chain = skel.chain(where, leaf)
    with gc_paused():
        if len(chain) == len(skel.ids):  # no branches: everything, in order
            es = _parse(_entry_texts(d, conn, sid, None), where)
            return build_context(es, where, leaf), skel
        es = _parse(_entry_texts(d, conn, sid, list(chain)), where)
        # the path alone is a linear list: its last entry is the leaf
        return build_context(es, where), skel


def all_entries(d: Dialect, conn: Any, sid: str) -> Entries:
    where = f"{d.where()} session {sid}"
    with gc_paused():
        return _parse(_entry_texts(d, conn, sid, None), where)


def session_row(d: Dialect, conn: Any, sid: str) -> dict[str, Any] | None:
    cur = conn.cursor()
    cur.execute(
        d.sql(
            "SELECT id, cwd, created, updated, entry_count, message_count, first_prompt, model "
            "FROM panto_sessions WHERE id = ?"
        ),
        (sid,),
    )
    row = cur.fetchone()
    if row is None:
        return None
    keys = ("id", "cwd", "created", "updated", "entry_count", "message_count", "first_prompt")
    return {**dict(zip(keys, row[:7])), "model": row[7]}


# --------------------------------------------------------------------------- the store


class SQLStore(TreeOps):
    """One session in a database (made by ``SQLiteStore``/``PostgresStore``
    or a backend's ``create``/``open``).  Holds the session's writer lock from
    construction to ``close()``."""

    def __init__(
        self,
        dialect: Dialect,
        *,
        session_id: str | None = None,
        cwd: str | os.PathLike[str] | None = None,
        durability: Durability = "fsync",
        existing: bool = False,
        on_close: Callable[[], None] | None = None,
    ) -> None:
        check_durability(durability)
        self._d = dialect
        self._durability: Durability = durability
        self._mutex = threading.Lock()
        self._closed = False
        self._cache: LoadedSession | None = None
        self._pending: list[dict[str, Any]] = []
        self._count = 0
        self._on_close = on_close
        sid = session_id or uuid.uuid4().hex
        self._b = Builder(sid)
        self._writer = dialect.claim(sid, durability)
        try:
            if existing:
                self._adopt(sid)
            else:
                self._cwd = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
                self._created = now()
                self._exists = False
                with self._d.connection() as conn:
                    if session_row(self._d, conn, sid) is not None:
                        raise SessionError(f"{self._where}: a session with this id exists")
        except BaseException:
            self._writer.release()
            raise

    def _adopt(self, sid: str) -> None:
        try:
            with self._writer.connection() as conn:
                row = session_row(self._d, conn, sid)
                if row is None:
                    raise SessionError(f"{self._d.where()}: no session {sid}")
                loaded, skel = load_path(self._d, conn, sid)
        except SessionError:
            raise
        except Exception as exc:
            raise self._d.wrap(exc) from None
        self._cwd = row["cwd"]
        self._created = row["created"]
        self._exists = True
        self._count = len(skel.ids)
        self._b.adopt(skel.ids, skel.kinds)
        self._b.leaf = loaded.leaf_id
        self._b.model = loaded.active_model
        self._cache = loaded

    # -- properties

    @property
    def session_id(self) -> str:
        return self._b.session_id

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def durability(self) -> Durability:
        return self._durability

    @property
    def active_model(self) -> ModelRef | None:
        return self._b.model

    @property
    def _where(self) -> str:  # type: ignore[override]
        return f"{self._d.where()} session {self._b.session_id}"

    @property
    def _leaf(self) -> str | None:
        return self._b.leaf

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._d.where()!r}, {self._b.session_id!r})"

    # -- writing

    def _header(self) -> dict[str, Any]:
        return {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": self._b.session_id,
            "cwd": self._cwd,
            "created": self._created,
        }

    def _append_entries(self, payloads: list[dict[str, Any]]) -> list[str]:
        with self._mutex:
            if self._closed:
                raise SessionError(f"{self._where}: store is closed")
            entries = self._b.entries(payloads)
            ids = [e["id"] for e in entries]
            if not self._exists and not any(starts_conversation(e) for e in entries):
                self._pending += entries
                self._b.leaf = self._b.leaf_after(entries)
                self._cache = None
                return ids
            batch = self._pending + entries
            try:
                self._commit(batch)
            except BaseException:
                self._b.forget(entries)
                raise
            self._pending = []
            self._exists = True
            self._count += len(batch)
            self._cache = None
            self._b.leaf = self._b.leaf_after(entries)
            return ids

    def _commit(self, batch: list[dict[str, Any]]) -> None:
        d, sid = self._d, self._b.session_id
        leaf = self._b.leaf_after(batch)
        rows = []
        n_messages = 0
        prompt = None
        model = None
        for k, e in enumerate(batch):
            role = e["message"]["role"] if e["type"] == MESSAGE else None
            if role is not None:
                n_messages += 1
                if prompt is None and role == "user":
                    msg = Message.from_dict(e["message"])
                    if is_prompt(msg):
                        prompt = msg.text
                if e["message"].get("provider") and e["message"].get("model"):
                    model = f"{e['message']['provider']}/{e['message']['model']}"
            elif e["type"] == "model_change":
                model = f"{e.get('provider', '')}/{e.get('model', '')}"
            rows.append(
                (
                    sid,
                    self._count + k,
                    e["id"],
                    e["parent_id"],
                    e["type"],
                    role,
                    e["timestamp"],
                    *d.entry_values(dump(e)),
                )
            )
        stamp = now()
        try:
            with self._writer.connection() as conn, d.transaction(conn):
                cur = conn.cursor()
                if not self._exists:
                    cur.execute(
                        d.sql(
                            "INSERT INTO panto_sessions (id, cwd, created, updated, header) "
                            f"VALUES (?, ?, ?, ?, {d.json_in})"
                        ),
                        (sid, self._cwd, self._created, stamp, dump(self._header())),
                    )
                cur.executemany(
                    d.sql(
                        "INSERT INTO panto_entries "
                        f"(session_id, seq, id, parent_id, type, role, timestamp, {d.entry_cols}) "
                        f"VALUES (?, ?, ?, ?, ?, ?, ?, {d.entry_vals})"
                    ),
                    rows,
                )
                cur.execute(
                    d.sql(
                        "UPDATE panto_sessions SET updated = ?, leaf_id = ?, entry_count = ?, "
                        "message_count = message_count + ?, "
                        "first_prompt = COALESCE(first_prompt, ?), model = COALESCE(?, model) "
                        "WHERE id = ?"
                    ),
                    (stamp, leaf, self._count + len(rows), n_messages, prompt, model, sid),
                )
        except SessionError:
            raise
        except Exception as exc:
            raise d.wrap(exc) from None

    def append_messages(
        self, messages: Sequence[Message], *, system_mode: SystemMode = "append"
    ) -> list[str]:
        if not messages:
            return []
        # PostgreSQL's text and jsonb take neither NUL nor lone surrogates:
        # shown visibly instead (panto.storable), the same in SQLite
        msgs = [clean_message(m) for m in messages]
        return self._append_entries(message_payloads(msgs, system_mode))

    def append_model_change(self, provider: str, model: str) -> str:
        eid = self._append_entries([{"type": "model_change", "provider": provider, "model": model}])
        self._b.model = ModelRef(provider, model)
        return eid[0]

    def append_compaction(self, summary: str, first_kept_id: str | None, tokens_before: int) -> str:
        self._b.check_known(first_kept_id, "compaction: unknown first_kept_id")
        payload = compaction_payload(clean_text(summary), first_kept_id, tokens_before)
        return self._append_entries([payload])[0]

    # -- reading

    def load_conversation(self, leaf: str | None = None) -> LoadedSession:
        if leaf is None and self._cache is not None:
            return self._cache
        if not self._exists:
            return build_context(entries_of(self._pending, self._where), self._where, leaf)
        try:
            with self._writer.connection() as conn:
                loaded, _ = load_path(self._d, conn, self._b.session_id, leaf)
        except SessionError:
            raise
        except Exception as exc:
            raise self._d.wrap(exc) from None
        if leaf is None:
            self._cache = loaded
        return loaded

    def _all_entries(self) -> Entries:
        if not self._exists:
            return entries_of(self._pending, self._where)
        try:
            with self._writer.connection() as conn:
                return all_entries(self._d, conn, self._b.session_id)
        except SessionError:
            raise
        except Exception as exc:
            raise self._d.wrap(exc) from None

    # -- lifetime

    def close(self) -> None:
        if self._closed:
            return
        with self._mutex:
            self._closed = True
            self._writer.release()
        if self._on_close is not None:
            self._on_close()

    def __enter__(self) -> SQLStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not self._closed:
                self.close()
        except Exception:
            pass


# --------------------------------------------------------------------------- catalogue


def _epoch(iso: str) -> float:
    try:
        return datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def list_sql_sessions(d: Dialect, cwd: str | None = None) -> list[SessionInfo]:
    sql = "SELECT id, cwd, created, updated, message_count, first_prompt, model FROM panto_sessions"
    args: tuple[Any, ...] = ()
    if cwd is not None:
        sql += " WHERE cwd = ?"
        args = (os.path.abspath(cwd),)
    sql += " ORDER BY updated DESC, created DESC, id DESC"
    try:
        with d.connection() as conn:
            cur = conn.cursor()
            cur.execute(d.sql(sql), args)
            rows = cur.fetchall()
    except SessionError:
        raise
    except Exception as exc:
        raise d.wrap(exc) from None
    out = []
    for sid, scwd, created, updated, count, prompt, model in rows:
        ref = None
        if model and "/" in model:
            ref = ModelRef(*model.split("/", 1))
        out.append(
            SessionInfo(
                id=sid,
                path=None,
                cwd=scwd,
                created=created,
                modified=_epoch(updated),
                message_count=int(count),
                first_prompt=prompt or "",
                model=ref,
            )
        )
    return out


def resolve_sql_session(d: Dialect, prefix: str) -> str:
    want = prefix.strip().lower()
    if not want:
        raise SessionError("empty session id")
    escaped = want.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    try:
        with d.connection() as conn:
            cur = conn.cursor()
            cur.execute(
                d.sql(
                    "SELECT id, cwd FROM panto_sessions WHERE id LIKE ? ESCAPE '\\' "
                    "ORDER BY id LIMIT 21"
                ),
                (escaped + "%",),
            )
            rows = cur.fetchall()
    except SessionError:
        raise
    except Exception as exc:
        raise d.wrap(exc) from None
    exact = [r for r in rows if r[0] == want]
    if exact:
        rows = exact
    if not rows:
        raise SessionError(f"no session id starts with {prefix!r} (in {d.where()})")
    if len(rows) > 1:
        lines = [f"  {sid}  {cwd}" for sid, cwd in rows[:20]]
        raise SessionError(
            f"session id prefix {prefix!r} is ambiguous; these sessions match:\n" + "\n".join(lines)
        )
    return str(rows[0][0])


def read_sql_entries(d: Dialect, sid: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The header and every entry of a session (for export)."""
    try:
        with d.connection() as conn:
            cur = conn.cursor()
            cur.execute(d.sql(f"SELECT {d.header_out} FROM panto_sessions WHERE id = ?"), (sid,))
            row = cur.fetchone()
            if row is None:
                raise SessionError(f"{d.where()}: no session {sid}")
            header = json.loads(row[0])
            texts = _entry_texts(d, conn, sid, None)
    except SessionError:
        raise
    except Exception as exc:
        raise d.wrap(exc) from None
    return header, [json.loads(t) for t in texts]


def import_sql_session(d: Dialect, header: dict[str, Any], entries: list[dict[str, Any]]) -> str:
    """Write a whole session (header and entries as a JSONL file holds them)
    in one transaction; its id must be new to the database."""
    sid = str(header["id"])
    where = f"{d.where()} session {sid}"
    entries = [clean_value(e) for e in entries]  # NUL, lone surrogates: panto.storable
    header = clean_value(header)
    es = entries_of(entries, where)
    loaded = build_context(es, where)
    chain = es.chain(where)
    first_prompt = next(
        (p.text for k, p in zip(es.kinds, es.payloads) if k == MESSAGE and is_prompt(p)), None
    )
    model = es.active_model(chain)
    rows = [
        (
            sid,
            k,
            e["id"],
            e.get("parent_id"),
            e["type"],
            e["message"].get("role") if e["type"] == MESSAGE else None,
            e.get("timestamp"),
            *d.entry_values(dump(e)),
        )
        for k, e in enumerate(entries)
    ]
    created = str(header.get("created") or now())
    updated = str(entries[-1].get("timestamp") or created) if entries else created
    head = {**header, "version": FORMAT_VERSION}
    try:
        with d.connection() as conn:
            if session_row(d, conn, sid) is not None:
                raise SessionError(f"session {sid} exists already in {d.where()}")
            with d.transaction(conn):
                cur = conn.cursor()
                cur.execute(
                    d.sql(
                        "INSERT INTO panto_sessions (id, cwd, created, updated, leaf_id, "
                        "entry_count, message_count, first_prompt, model, header) "
                        f"VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, {d.json_in})"
                    ),
                    (
                        sid,
                        str(header.get("cwd") or ""),
                        created,
                        updated,
                        loaded.leaf_id,
                        len(rows),
                        es.n_messages,
                        first_prompt,
                        str(model) if model else None,
                        dump(head),
                    ),
                )
                cur.executemany(
                    d.sql(
                        "INSERT INTO panto_entries "
                        f"(session_id, seq, id, parent_id, type, role, timestamp, {d.entry_cols}) "
                        f"VALUES (?, ?, ?, ?, ?, ?, ?, {d.entry_vals})"
                    ),
                    rows,
                )
    except SessionError:
        raise
    except Exception as exc:
        raise d.wrap(exc) from None
    return sid
