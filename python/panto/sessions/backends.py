"""Where sessions live: one ``SessionBackend`` per kind of store, chosen by
configuration, with what the CLI needs beyond one session: start one, open
one by id prefix, list, find the most recent, export and import.

    backend = open_backend(config)                   # [session] store/url/path/dir
    backend = open_backend("sqlite:///~/panto.db")   # or postgresql://..., or a directory
    store = backend.create(cwd)                      # a new session
    store = backend.open("3f2a")                     # continue one (id prefix)
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, Protocol

from ..errors import ConfigError, SessionError
from ..paths import open_private, panto_home, private_dirs
from ..patterns import LazyPattern
from .base import Durability, LoadedSession, SessionStore, TreeNode
from .catalog import SessionInfo, find_most_recent_session, list_sessions, resolve_session_id
from .context import build_context, entries_of, tree
from .fastload import FORMAT_VERSION, check_header, dump_line
from .jsonl import FSJSONLStore, cwd_slug, default_sessions_dir, read_session

#: A session file's time, as ``FSJSONLStore`` writes it (``2026-12-03T23-45-01-123Z``).
_FILE_TIME = LazyPattern(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z")

__all__ = [
    "SessionBackend",
    "SessionURLError",
    "fork_session",
    "open_backend",
    "parse_entries",
    "session_url",
]


class SessionURLError(SessionError, ConfigError):
    """A session store URL that does not parse (``postgresql:/db`` with a
    slash missing, an unknown scheme): a configuration mistake (the CLI
    exits with status 2), never a directory of that name."""


class SessionBackend(Protocol):
    kind: str  # jsonl, sqlite, postgres

    def describe(self) -> str: ...

    def create(self, cwd: str | os.PathLike[str] | None = None) -> SessionStore: ...

    def open(self, ref: str) -> SessionStore: ...

    def read(self, ref: str, leaf: str | None = None) -> LoadedSession: ...

    def tree(self, ref: str) -> list[TreeNode]: ...

    def list(self, cwd: str | os.PathLike[str] | None = None) -> list[SessionInfo]: ...

    def most_recent(self, cwd: str | os.PathLike[str]) -> str | None: ...

    def resolve(self, ref: str) -> str: ...

    def export(self, ref: str) -> Iterator[dict[str, Any]]: ...

    def import_session(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> str: ...


def parse_entries(
    lines: Iterable[str | bytes], where: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """A session's header and entries from JSONL lines (``panto sessions
    import``); every line is checked, and the entries must form a tree."""
    header: dict[str, Any] | None = None
    entries: list[dict[str, Any]] = []
    for n, raw in enumerate(lines, 1):
        line = raw.decode() if isinstance(raw, bytes) else raw
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            raise SessionError(f"{where}:{n}: not JSON") from None
        if header is None:
            header = check_header(obj, where)
            continue
        if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
            raise SessionError(f"{where}:{n}: not a session entry")
        obj.pop("more", None)
        entries.append(obj)
    if header is None:
        raise SessionError(f"{where}: empty (no session header)")
    entries_of(entries, where)  # validates messages, ids and parents
    return header, entries


def fork_session(
    backend: SessionBackend,
    ref: str,
    leaf: str | None = None,
    *,
    cwd: str | os.PathLike[str] | None = None,
    into: SessionBackend | None = None,
) -> str:
    """Copy the path of session ``ref`` that ends at ``leaf`` (default: its
    current leaf) into a new session (``/fork``, ``panto --fork ID[:ENTRY]``),
    in ``into`` (default: the same backend).  The entries keep their ids and
    their labels; returns the new session's id."""
    import uuid

    from .base import now

    header, *entries = list(backend.export(ref))
    where = f"{backend.describe()} session {header['id']}"
    es = entries_of(entries, where)
    chain = es.chain(where, leaf)
    kept = {entries[i]["id"] for i in chain}
    out = [entries[i] for i in chain]
    if out:  # the labels of the copied entries hang off its end
        tip = out[-1]["id"]
        out += [
            {**e, "parent_id": tip}
            for e in entries
            if e["type"] == "label" and e.get("target_id") in kept
        ]
    new = {
        **header,
        "id": uuid.uuid4().hex,
        "created": now(),
        "forked_from": {"session": header["id"], "leaf": es.ids[chain[-1]] if chain else None},
    }
    if cwd is not None:
        new["cwd"] = os.path.abspath(os.fspath(cwd))
    return (into or backend).import_session(new, out)


# --------------------------------------------------------------------------- JSONL


class JSONLBackend:
    kind = "jsonl"

    def __init__(self, dir: str | os.PathLike[str] | None = None, durability: Durability = "fsync"):
        self.dir = Path(dir) if dir is not None else default_sessions_dir()
        self.durability = durability

    def describe(self) -> str:
        return str(self.dir)

    def create(self, cwd: str | os.PathLike[str] | None = None) -> FSJSONLStore:
        return FSJSONLStore(self.dir, cwd, durability=self.durability)

    def _path(self, ref: str) -> Path:
        if os.sep in ref and os.path.isfile(ref):  # a session file named by its path
            return Path(ref)
        return resolve_session_id(ref, self.dir)

    def open(self, ref: str) -> FSJSONLStore:
        return FSJSONLStore.open(self._path(ref), durability=self.durability)

    def read(self, ref: str, leaf: str | None = None) -> LoadedSession:
        return read_session(self._path(ref), leaf=leaf)

    def tree(self, ref: str) -> list[TreeNode]:
        from .fastload import parse_file

        p = self._path(ref)
        parsed = parse_file(p)
        return tree(parsed, str(p), build_context(parsed, str(p)).leaf_id)

    def list(self, cwd: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        return list_sessions(self.dir, cwd)

    def most_recent(self, cwd: str | os.PathLike[str]) -> str | None:
        p = find_most_recent_session(cwd, self.dir)
        return str(p) if p is not None else None

    def resolve(self, ref: str) -> str:
        return str(self._path(ref))

    def export(self, ref: str) -> Iterator[dict[str, Any]]:
        p = self._path(ref)
        read_session(p)  # checks the file (and warns about a torn tail)
        with open(p, "rb") as f:
            header, entries = parse_entries((ln for ln in f if ln.endswith(b"\n")), str(p))
        yield header
        yield from entries

    def import_session(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> str:
        sid = str(header["id"])
        try:
            resolve_session_id(sid, self.dir)
        except SessionError:
            pass
        else:
            raise SessionError(f"session {sid} exists already in {self.dir}")
        cwd = str(header.get("cwd") or os.getcwd())
        folder = self.dir / cwd_slug(cwd)
        private_dirs(folder)
        created = str(header.get("created") or "")
        stamp = created.replace(":", "-").replace(".", "-")  # as FSJSONLStore names files
        if not _FILE_TIME.fullmatch(stamp):
            stamp = "imported"
        path = folder / f"{stamp}_{sid}.jsonl"
        head = {**header, "version": FORMAT_VERSION}
        data = dump_line(head) + b"".join(dump_line(e) for e in entries)
        fd = open_private(path, os.O_WRONLY | os.O_EXCL)  # 0600: a conversation
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        return sid


# --------------------------------------------------------------------------- databases


class SQLBackend:
    def __init__(self, dialect: Any, kind: str, durability: Durability = "fsync") -> None:
        self.d = dialect
        self.kind = kind
        self.durability = durability

    def describe(self) -> str:
        return str(self.d.where())

    def _store_class(self) -> Any:
        if self.kind == "sqlite":
            from .sqlite import SQLiteStore

            return lambda **kw: SQLiteStore(self.d.path, _dialect=self.d, **kw)
        from .postgres import PostgresStore

        return lambda **kw: PostgresStore(self.d.url, **kw)

    def create(self, cwd: str | os.PathLike[str] | None = None) -> SessionStore:
        return self._store_class()(cwd=cwd, durability=self.durability)  # type: ignore[no-any-return]

    def open(self, ref: str) -> SessionStore:
        sid = self.resolve(ref)
        return self._store_class()(session_id=sid, durability=self.durability, _existing=True)  # type: ignore[no-any-return]

    def read(self, ref: str, leaf: str | None = None) -> LoadedSession:
        from .sql import load_path

        sid = self.resolve(ref)
        try:
            with self.d.connection() as conn:
                return load_path(self.d, conn, sid, leaf)[0]
        except SessionError:
            raise
        except Exception as exc:
            raise self.d.wrap(exc) from None

    def tree(self, ref: str) -> list[TreeNode]:
        from .sql import all_entries

        sid = self.resolve(ref)
        with self.d.connection() as conn:
            es = all_entries(self.d, conn, sid)
        return tree(es, f"{self.describe()} session {sid}", self.read(sid).leaf_id)

    def list(self, cwd: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
        from .sql import list_sql_sessions

        return list_sql_sessions(self.d, os.fspath(cwd) if cwd is not None else None)

    def most_recent(self, cwd: str | os.PathLike[str]) -> str | None:
        infos = self.list(cwd)
        return infos[0].id if infos else None

    def resolve(self, ref: str) -> str:
        from .sql import resolve_sql_session

        return resolve_sql_session(self.d, ref)

    def export(self, ref: str) -> Iterator[dict[str, Any]]:
        from .sql import read_sql_entries

        header, entries = read_sql_entries(self.d, self.resolve(ref))
        yield header
        yield from entries

    def import_session(self, header: dict[str, Any], entries: list[dict[str, Any]]) -> str:
        from .sql import import_sql_session

        return import_sql_session(self.d, header, entries)


# --------------------------------------------------------------------------- choosing


def session_url(config: Any = None) -> str | None:
    """The backend URL the configuration names (``[session] url``, env
    ``PANTO_SESSION_URL``; or ``store = "sqlite"`` with ``path``), or None
    for the JSONL default."""
    if config is None:
        return os.environ.get("PANTO_SESSION_URL") or None
    url = getattr(config, "session_url", None)
    if url:
        return str(url)
    kind = getattr(config, "session_store", "jsonl") or "jsonl"
    if kind == "sqlite":
        path = getattr(config, "session_path", None) or str(panto_home() / "sessions.db")
        return "sqlite:///" + os.path.abspath(os.path.expanduser(path))
    if kind == "postgres":
        raise SessionError('[session] store = "postgres" needs [session] url = "postgresql://..."')
    return None


def open_backend(spec: Any = None, *, durability: Durability | None = None) -> SessionBackend:
    """The backend for ``spec``: a ``Config`` (``[session]`` keys), a URL
    (``sqlite:///path``, ``postgresql://...``), a directory of JSONL
    sessions, or None (``PANTO_SESSION_URL``, else the default directory).
    A string that starts like a URL (``scheme:``) but is not one that panto
    knows, or a configured URL that is not one, is a ``SessionURLError``."""
    sdir: str | None = None
    # a URL from the configuration ([session] url, PANTO_SESSION_URL) must be
    # one; a string argument may also name a directory of JSONL sessions
    from_config = spec is None or not isinstance(spec, (str, os.PathLike))
    if spec is None or isinstance(spec, (str, os.PathLike)):
        url = os.fspath(spec) if spec is not None else session_url(None)
    else:
        url = session_url(spec)
        sdir = getattr(spec, "session_dir", None)
        if durability is None:
            durability = getattr(spec, "session_durability", None)
    dur: Durability = durability or "fsync"  # type: ignore[assignment]
    if url is None:
        return JSONLBackend(sdir, dur)
    if from_config or _has_scheme(url):
        return _url_backend(url, dur)
    return JSONLBackend(url, dur)


def _has_scheme(s: str) -> bool:
    """Does ``s`` start with ``scheme:`` (a URL, not a directory)?  (No
    ``re``: this is on the start-up path.)"""
    scheme, colon, _ = s.partition(":")
    return (
        bool(colon)
        and len(scheme) > 1
        and scheme[0].isascii()
        and scheme[0].isalpha()
        and all(c.isascii() and (c.isalnum() or c in "+.-") for c in scheme)
    )


def _url_backend(url: str, dur: Durability) -> SessionBackend:
    """The database backend of ``url``; ``SessionURLError`` when it does not
    parse (the message never shows a password)."""
    from .postgres import safe_url

    if url.startswith("sqlite:"):
        from .sqlite import SQLiteDialect

        rest = url[len("sqlite:") :]
        if rest.startswith("///"):
            path = rest[3:]  # sqlite:////abs and sqlite:///rel, as SQLAlchemy spells them
        elif rest.startswith("//"):
            raise SessionURLError(f"{url}: a sqlite URL is sqlite:///path (three slashes)")
        else:
            path = rest
        if not path:
            raise SessionURLError(f"{url}: no database path")
        return SQLBackend(SQLiteDialect(os.path.expanduser(path)), "sqlite", dur)  # type: ignore[return-value]
    if url.startswith(("postgresql://", "postgres://")):
        from .postgres import dialect_for

        return SQLBackend(dialect_for(url), "postgres", dur)  # type: ignore[return-value]
    if url.startswith(("postgresql:", "postgres:")):
        raise SessionURLError(
            f"session store URL {safe_url(url)!r} does not parse: a PostgreSQL URL is "
            "postgresql://[user@]host[:port]/db (two slashes after the colon)"
        )
    raise SessionURLError(
        f"unknown session store URL {safe_url(url)!r}: sqlite:///path or postgresql://..."
        + ("" if _has_scheme(url) else " (a directory of JSONL files is [session] dir)")
    )
