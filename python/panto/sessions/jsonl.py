"""``FSJSONLStore``: one session as an append-only JSONL file (the default).

The file format is documented in ``docs/sessions.md``.  In short: a header
line ``{"type": "session", "version": 1, "id", "cwd", "created"}``, then one
entry per line ``{"type", "id", "parent_id", "timestamp", ...}`` (see
``panto.sessions.base``).  The whole tree lives in the one file.

Durability: a batch of entries is ONE ``os.write`` of whole lines followed by
``fdatasync`` (``durability="fsync"``, the default).  A torn tail left by a
crash is ignored on load with a warning and cut off before the next append; a
corrupt line anywhere else is a ``SessionError`` naming the file and line.
One writer per session: a ``flock`` on ``<file>.lock`` (which holds the
writer's pid).
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import threading
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..conversation import Message
from ..errors import SessionError
from ..logs import get_logger
from ..paths import private_dirs, sessions_dir
from .base import (
    Builder,
    Durability,
    LoadedSession,
    ModelRef,
    SessionWarning,
    SystemMode,
    check_durability,
    compaction_payload,
    message_payloads,
    new_session_id,
    now,
    starts_conversation,
)
from .context import Entries, TreeOps, build_context, entries_of
from .fastload import FORMAT_VERSION, Parsed, dump_line, gc_paused, parse_file, warn_repaired

__all__ = ["FSJSONLStore", "cwd_slug", "default_sessions_dir", "read_session"]

log = get_logger("panto.sessions")


def default_sessions_dir() -> Path:
    """``$PANTO_HOME/sessions`` (see ``panto.paths``)."""
    return sessions_dir()


_SLUG_RE = re.compile(r"[^A-Za-z0-9._-]+")


def cwd_slug(cwd: str | os.PathLike[str]) -> str:
    """The directory name for a working directory: ``/home/me/proj`` ->
    ``--home-me-proj--``.  Different paths may share a slug; the header's
    ``cwd`` is what listing filters on."""
    s = _SLUG_RE.sub("-", os.path.abspath(os.fspath(cwd)).strip("/\\")).strip("-")
    return f"--{s[:180]}--"


def _file_time(t_ns: int) -> str:
    """``2026-12-03T23-45-01-123Z``: ``now(t_ns)`` fit for a file name."""
    return now(t_ns).replace(":", "-").replace(".", "-")


def id_from_name(name: str) -> str:
    stem = name[:-6] if name.endswith(".jsonl") else name
    return stem.rpartition("_")[2]


# --------------------------------------------------------------------------- the lock


class Lock:
    """An exclusive ``flock`` on ``<session file>.lock`` holding our pid."""

    def __init__(self, path: Path, name: str | None = None) -> None:
        self.path = path
        name = name or f"session {path.with_suffix('')}"
        self.fd: int | None = None
        for _ in range(20):
            try:
                fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            except OSError as exc:
                raise SessionError(f"{path}: cannot create lock file: {exc.strerror}") from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError as exc:
                holder = _read_pid(fd)
                os.close(fd)
                if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                    raise SessionError(f"{path}: cannot lock session: {exc.strerror}") from None
                who = f"pid {holder}" if holder else "an unknown pid"
                raise SessionError(
                    f"{name} is in use by another panto process "
                    f"({who}); only one process may write a session at a time"
                ) from None
            # the holder before us may have unlinked the file after we opened it
            try:
                same = os.stat(path).st_ino == os.fstat(fd).st_ino
            except FileNotFoundError:
                same = False
            if same:
                os.ftruncate(fd, 0)
                os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
                self.fd = fd
                return
            os.close(fd)
        raise SessionError(f"{path}: cannot lock session (lock file keeps changing)")

    def release(self) -> None:
        if self.fd is not None:
            try:
                os.unlink(self.path)
            except OSError:
                pass
            os.close(self.fd)  # closing releases the flock
            self.fd = None


def _read_pid(fd: int) -> int | None:
    try:
        raw = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        return int(raw) if raw.isdigit() else None
    except OSError:
        return None


# --------------------------------------------------------------------------- FSJSONLStore


class FSJSONLStore(TreeOps):
    """One session as an append-only JSONL file.

    ``FSJSONLStore(dir, cwd)`` starts a new session under
    ``dir/<cwd-slug>/<utc-time>_<id>.jsonl`` (``dir`` defaults to
    ``default_sessions_dir()``); the file is written with the first message
    that is not a system message (model changes and system messages before
    it wait in memory and go in the same write), so a session nobody typed
    into leaves no file.  ``FSJSONLStore.open(path)``
    reopens one to continue it.  Both take the session's lock; ``close()``
    (or leaving a ``with`` block) releases it.

    ``durability``: ``"fsync"`` (default) — each batch is on disk when the
    append returns; ``"flush"`` — each batch is handed to the OS (survives a
    crash of panto, not of the machine) and synced on close; ``"none"`` —
    never synced.
    """

    def __init__(
        self,
        dir: str | os.PathLike[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        *,
        durability: Durability = "fsync",
        session_id: str | None = None,
    ) -> None:
        check_durability(durability)
        root = Path(dir) if dir is not None else default_sessions_dir()
        self._cwd = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        sid = session_id or new_session_id()
        created = time.time_ns()
        folder = root / cwd_slug(self._cwd)
        try:
            private_dirs(folder)  # 0700: the folder names say which projects you work on
        except OSError as exc:
            raise SessionError(f"cannot create session directory {folder}: {exc}") from None
        self._init(folder / f"{_file_time(created)}_{sid}.jsonl", sid, durability)
        self._header: dict[str, Any] | None = {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": sid,
            "cwd": self._cwd,
            "created": now(created),
        }
        self._new_dir = folder
        self._lock = Lock(self._lock_path())

    def _init(self, path: Path, sid: str, durability: Durability) -> None:
        self._path = path
        self._durability: Durability = durability
        self._b = Builder(sid)
        self._fd: int | None = None
        self._mutex = threading.Lock()
        self._closed = False
        self._good_size = 0  # where the next append goes (after repairing a torn tail)
        self._size = 0  # bytes in the file as we last saw it
        self._cache: LoadedSession | None = None
        self._new_dir: Path | None = None
        self._pending: list[dict[str, Any]] = []  # entries not written yet (see _write)

    def _lock_path(self) -> Path:
        return self._path.with_name(self._path.name + ".lock")

    @classmethod
    def open(
        cls, path: str | os.PathLike[str], *, durability: Durability = "fsync"
    ) -> FSJSONLStore:
        """Open an existing session to continue it (takes its lock)."""
        check_durability(durability)
        p = Path(path)
        if not p.is_file():
            raise SessionError(f"{p}: no such session file")
        self = cls.__new__(cls)
        self._init(p, "", durability)
        self._lock = Lock(self._lock_path())
        try:
            with gc_paused():
                self._adopt(p)
        except BaseException:
            self._lock.release()
            raise
        return self

    def _adopt(self, p: Path) -> None:
        """Load the file being opened and take over its state (called with
        the GC paused; the parse's temporaries die on return)."""
        parsed = parse_file(p)
        _warn_dropped(p, parsed)
        loaded = build_context(parsed, str(p))
        self._header: dict[str, Any] | None = None
        if parsed.header is None:  # only a torn header: nothing was ever committed
            sid = id_from_name(p.name)
            self._header = {
                "type": "session",
                "version": FORMAT_VERSION,
                "id": sid,
                "cwd": os.getcwd(),
                "created": now(),
            }
            self._b.session_id = sid
            self._cwd = os.getcwd()
        else:
            self._b.session_id = parsed.header["id"]
            self._cwd = str(parsed.header.get("cwd", ""))
        self._b.adopt(parsed.ids, parsed.kinds)
        self._good_size = parsed.good_size
        self._size = parsed.size
        self._b.model = loaded.active_model
        self._b.leaf = loaded.leaf_id
        self._cache = loaded

    # -- properties

    @property
    def session_id(self) -> str:
        return self._b.session_id

    @property
    def path(self) -> Path:
        return self._path

    @property
    def cwd(self) -> str:
        return self._cwd

    @property
    def durability(self) -> Durability:
        return self._durability

    @property
    def active_model(self) -> ModelRef | None:
        return self._b.model

    # -- writing

    def _open_fd(self) -> int:
        if self._fd is not None:
            return self._fd
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC
        try:
            fd = os.open(self._path, flags, 0o600)
        except OSError as exc:
            raise SessionError(f"{self._path}: cannot open for writing: {exc.strerror}") from None
        size = os.fstat(fd).st_size
        if size != self._size:
            os.close(fd)
            raise SessionError(
                f"{self._path}: the file changed behind this session's back "
                f"({self._size} bytes expected, {size} found)"
            )
        if self._good_size < size:
            os.ftruncate(fd, self._good_size)
            if self._durability == "fsync":
                os.fsync(fd)
            # (info: the load's warning said it would be cut off)
            log.info(
                "session file %s: cut off %d bytes of torn tail", self._path, size - self._good_size
            )
            self._size = self._good_size
        self._fd = fd
        return fd

    def _undo_write(self, fd: int, start: int, *, created: bool) -> None:
        """Leave no partial batch behind; a file this write created goes
        (an empty file would list as a broken session)."""
        try:
            os.ftruncate(fd, start)
            if created and start == 0:
                os.close(fd)
                self._fd = None
                os.unlink(self._path)
        except OSError:
            pass

    def _write(self, payloads: list[dict[str, Any]]) -> list[str]:  # noqa: C901
        """Append ``payloads`` as one batch: one write of whole lines, then
        (durability "fsync") fdatasync.  Entries of a multi-entry batch but
        the last carry ``"more": true`` so a torn batch is recognisable."""
        with self._mutex:
            if self._closed:
                raise SessionError(f"session {self._path}: store is closed")
            entries = self._b.entries(payloads)
            ids = [e["id"] for e in entries]
            new_file = self._header is not None
            if new_file and not any(starts_conversation(e) for e in entries):
                # A new session's file starts with its conversation: model
                # changes and system messages before that wait, and go in the
                # same write (a start nobody typed into leaves no file).
                self._pending += entries
                self._b.leaf = self._b.leaf_after(entries)
                self._cache = None
                return ids
            batch = self._pending + entries
            last = len(batch) - 1
            lines = [dump_line({**e, "more": True} if i < last else e) for i, e in enumerate(batch)]
            try:
                fd = self._open_fd()
                if self._size != 0:
                    new_file = False
                if new_file:
                    lines.insert(0, dump_line(self._header))  # type: ignore[arg-type]
                buf = b"".join(lines)
                start = self._size
                try:
                    view = memoryview(buf)
                    while view:
                        n = os.write(fd, view)
                        view = view[n:]
                    if self._durability == "fsync":
                        _fdatasync(fd)
                except OSError as exc:
                    self._undo_write(fd, start, created=new_file)
                    raise SessionError(f"{self._path}: cannot append: {exc.strerror}") from None
            except BaseException:
                self._b.forget(entries)
                raise
            self._size = self._good_size = start + len(buf)
            self._pending = []
            self._cache = None
            if new_file:
                self._header = None
                if self._durability == "fsync" and self._new_dir is not None:
                    _fsync_dir(self._new_dir)
            self._b.leaf = self._b.leaf_after(entries)
            return ids

    def append_messages(
        self, messages: Sequence[Message], *, system_mode: SystemMode = "append"
    ) -> list[str]:
        if not messages:
            return []
        return self._write(message_payloads(messages, system_mode))

    def append_model_change(self, provider: str, model: str) -> str:
        eid = self._write([{"type": "model_change", "provider": provider, "model": model}])[0]
        self._b.model = ModelRef(provider, model)
        return eid

    def append_compaction(self, summary: str, first_kept_id: str | None, tokens_before: int) -> str:
        self._b.check_known(first_kept_id, "compaction: unknown first_kept_id")
        return self._write([compaction_payload(summary, first_kept_id, tokens_before)])[0]

    # -- reading

    def load_conversation(self, leaf: str | None = None) -> LoadedSession:
        """The conversation that ends at the current leaf, or at ``leaf``."""
        if leaf is None and self._cache is not None:
            return self._cache
        if self._size == 0 and not self._path.exists():
            return build_context(self._all_entries(), self._where, leaf)
        with gc_paused():
            parsed = parse_file(self._path)
            _warn_dropped(self._path, parsed)
            return build_context(parsed, self._where, leaf)

    # -- the tree (TreeOps)

    @property
    def _where(self) -> str:  # type: ignore[override]
        return str(self._path)

    @property
    def _leaf(self) -> str | None:
        return self._b.leaf

    def _all_entries(self) -> Entries:
        if self._size == 0 and not self._path.exists():
            return entries_of(self._pending, self._where)
        with gc_paused(), warnings.catch_warnings():
            warnings.simplefilter("ignore", SessionWarning)  # load warned already
            return parse_file(self._path)

    def _append_entries(self, payloads: list[dict[str, Any]]) -> list[str]:
        return self._write(payloads)

    # -- lifetime

    def close(self) -> None:
        if self._closed:
            return
        with self._mutex:
            self._closed = True
            if self._fd is not None:
                try:
                    if self._durability == "flush":
                        os.fsync(self._fd)
                finally:
                    os.close(self._fd)
                    self._fd = None
            self._lock.release()

    def __enter__(self) -> FSJSONLStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not self._closed:
                self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return f"FSJSONLStore({str(self._path)!r})"


def _fdatasync(fd: int) -> None:
    sync = getattr(os, "fdatasync", None)
    (sync or os.fsync)(fd)


def _fsync_dir(path: Path) -> None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _warn_dropped(path: Path, parsed: Parsed) -> None:
    warn_repaired(str(path), parsed)
    if parsed.dropped:
        msg = (
            f"session file {path}: ignoring {'; '.join(parsed.dropped)} "
            f"({parsed.size - parsed.good_size} bytes, left by a crash); "
            "it is cut off before the next append"
        )
        log.warning("%s", msg)
        warnings.warn(msg, SessionWarning, stacklevel=3)


def read_session(path: str | os.PathLike[str], *, leaf: str | None = None) -> LoadedSession:
    """Load a session file without locking it (read-only: listing, export);
    ``leaf``: the path that ends there instead of at the current leaf."""
    p = Path(path)
    with gc_paused():
        parsed = parse_file(p)
        _warn_dropped(p, parsed)
        return build_context(parsed, str(p), leaf)
