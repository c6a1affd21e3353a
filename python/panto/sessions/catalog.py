"""The session catalogue of the file-system backend: list, find the most
recent, resolve an id prefix (``panto sessions``, ``--continue``,
``--resume``).  The database stores answer the same questions with queries
(``panto.sessions.backends``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..conversation import Message
from ..errors import SessionError
from ..logs import get_logger
from .base import ModelRef, is_prompt
from .fastload import check_header
from .jsonl import cwd_slug, default_sessions_dir, id_from_name

__all__ = [
    "SessionInfo",
    "find_most_recent_session",
    "list_sessions",
    "resolve_session_id",
]

log = get_logger("panto.sessions")


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One line of ``panto sessions``."""

    id: str
    path: Path | None  # None in a database
    cwd: str
    created: str  # ISO 8601 UTC, from the header
    modified: float  # the file's mtime (seconds since the epoch)
    message_count: int
    first_prompt: str
    model: ModelRef | None


_MESSAGE_LINE = b'{"type":"message",'
_MODEL_CHANGE_LINE = b'{"type":"model_change",'
_OTHER_LINE = b'{"type":"'


def _info(path: Path) -> SessionInfo | None:
    """A session's summary for listings, cheaply: lines as panto writes them
    are told apart by their first bytes, and JSON is parsed only for the
    first prompt and the last line that names a model (a listing of a
    100,000-entry session reads it once, with no json.loads per line)."""
    try:
        st = path.stat()
        with open(path, "rb") as f:
            first = f.readline()
            header = json.loads(first)
            check_header(header, str(path))
            count = 0
            first_prompt = ""
            want_prompt = True
            model_lines: list[bytes] = []  # the last few lines that may name a model
            for raw in f:
                if not raw.endswith(b"\n"):
                    break  # a torn tail; load reports it
                if raw.startswith(_MESSAGE_LINE):
                    kind = "message"
                elif raw.startswith(_MODEL_CHANGE_LINE):
                    kind = "model_change"
                elif raw.startswith(_OTHER_LINE) or not raw.strip():
                    continue
                else:  # written by something else: parse it
                    try:
                        kind = json.loads(raw).get("type")
                    except (ValueError, AttributeError):
                        continue  # load reports it
                    if kind not in ("message", "model_change"):
                        continue
                if kind == "message":
                    count += 1
                    if want_prompt:  # (usually the first message or the one after)
                        try:
                            m = json.loads(raw).get("message") or {}
                        except ValueError:
                            continue  # a corrupt line; load reports it
                        if m.get("role") == "user":
                            msg = Message.from_dict(m)
                            if is_prompt(msg):
                                first_prompt, want_prompt = msg.text, False
                    if b'"provider"' not in raw:
                        continue
                model_lines.append(raw)
                if len(model_lines) > 8:
                    del model_lines[:-4]
            model = _model_of_lines(model_lines)
    except (OSError, ValueError, KeyError, TypeError, SessionError) as exc:
        log.warning("skipping session file %s: %s", path, exc)
        return None
    return SessionInfo(
        id=header["id"],
        path=path,
        cwd=str(header.get("cwd", "")),
        created=str(header.get("created", "")),
        modified=st.st_mtime,
        message_count=count,
        first_prompt=first_prompt,
        model=model,
    )


def _model_of_lines(lines: list[bytes]) -> ModelRef | None:
    """The model the last of ``lines`` names (a model_change, or a message
    with provider and model)."""
    for raw in reversed(lines):
        try:
            e = json.loads(raw)
        except ValueError:
            continue
        if e.get("type") == "model_change":
            return ModelRef(str(e.get("provider", "")), str(e.get("model", "")))
        m = e.get("message") or {}
        if m.get("provider") and m.get("model"):
            return ModelRef(m["provider"], m["model"])
    return None


def _session_files(root: Path, cwd: str | None) -> list[Path]:
    if cwd is not None:
        folders = [root / cwd_slug(cwd)]
    else:
        try:
            folders = [p for p in root.iterdir() if p.is_dir()]
        except FileNotFoundError:
            return []
    files: list[Path] = []
    for folder in folders:
        try:
            files.extend(p for p in folder.iterdir() if p.name.endswith(".jsonl"))
        except (FileNotFoundError, NotADirectoryError):
            pass
    return files


def list_sessions(
    dir: str | os.PathLike[str] | None = None, cwd: str | os.PathLike[str] | None = None
) -> list[SessionInfo]:
    """Sessions under ``dir`` (default ``default_sessions_dir()``), newest
    first; only those started in ``cwd`` when it is given."""
    root = Path(dir) if dir is not None else default_sessions_dir()
    want = os.path.abspath(os.fspath(cwd)) if cwd is not None else None
    infos = []
    for p in _session_files(root, want):
        info = _info(p)
        if info is not None and (want is None or info.cwd == want):
            infos.append(info)
    infos.sort(key=lambda i: (i.modified, i.created, i.id), reverse=True)
    return infos


def find_most_recent_session(
    cwd: str | os.PathLike[str], dir: str | os.PathLike[str] | None = None
) -> Path | None:
    """The most recently written session started in ``cwd`` (for ``--continue``)."""
    root = Path(dir) if dir is not None else default_sessions_dir()
    want = os.path.abspath(os.fspath(cwd))
    best: tuple[float, str] | None = None
    best_path: Path | None = None
    for p in _session_files(root, want):
        try:
            key = (p.stat().st_mtime, p.name)
            with open(p, "rb") as f:
                header = json.loads(f.readline())
        except (OSError, ValueError):
            continue
        if not isinstance(header, dict) or header.get("cwd") != want:
            continue
        if best is None or key > best:
            best, best_path = key, p
    return best_path


def resolve_session_id(prefix: str, dir: str | os.PathLike[str] | None = None) -> Path:
    """The session file whose id starts with ``prefix`` (any directory).  A
    path to a session file is accepted as is.  No match, or several, is a
    ``SessionError`` (listing the candidates)."""
    if prefix.endswith(".jsonl") and os.path.isfile(prefix):
        return Path(prefix)
    want = prefix.strip().lower()
    if not want:
        raise SessionError("empty session id")
    root = Path(dir) if dir is not None else default_sessions_dir()
    matches = [p for p in _session_files(root, None) if id_from_name(p.name).startswith(want)]
    exact = [p for p in matches if id_from_name(p.name) == want]
    if exact:
        matches = exact
    if not matches:
        raise SessionError(f"no session id starts with {prefix!r} (in {root})")
    if len(matches) > 1:
        matches.sort(key=lambda p: p.name, reverse=True)
        lines = []
        for p in matches[:20]:
            info = _info(p)
            where = info.cwd if info else "?"
            lines.append(f"  {id_from_name(p.name)}  {p.name[:19]}  {where}")
        more = f"\n  ... and {len(matches) - 20} more" if len(matches) > 20 else ""
        raise SessionError(
            f"session id prefix {prefix!r} is ambiguous; {len(matches)} sessions match:\n"
            + "\n".join(lines)
            + more
        )
    return matches[0]
