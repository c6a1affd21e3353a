"""Session stores: where an agent's conversation is persisted.

``SessionStore`` is the seam (seed 001, "pluggable session store"); panto
ships ``FSJSONLStore`` (one append-only JSONL file per session, the default)
and ``NullStore`` (persists nothing).  ``MemoryStore`` keeps entries in a list
for tests and embedders that persist elsewhere.

The file format is documented in ``docs/sessions.md``.  In short: a header
line ``{"type": "session", "version": 1, "id", "cwd", "created"}``, then one
entry per line ``{"type", "id", "parent_id", "timestamp", ...}`` of type
``message``, ``model_change`` or ``compaction``.  The conversation is the
``parent_id`` chain that ends at the last entry of the file.

Durability: a batch of entries is ONE ``os.write`` of whole lines followed by
``fdatasync`` (``durability="fsync"``, the default).  A torn tail left by a
crash is ignored on load with a warning and cut off before the next append; a
corrupt line anywhere else is a ``SessionError`` naming the file and line.
One writer per session: a ``flock`` on ``<file>.lock`` (which holds the
writer's pid).

Catalog helpers (``list_sessions``, ``find_most_recent_session``,
``resolve_session_id``) are functions of the file-system backend.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import gc
import json
import logging
import os
import re
import secrets
import threading
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

from ..compaction import compaction_summary_message
from ..conversation import (
    Conversation,
    Message,
    RedactedThinking,
    Text,
    Thinking,
    ToolResultBlock,
    ToolUse,
    Usage,
)
from ..errors import SessionError
from ..paths import sessions_dir

__all__ = [
    "FORMAT_VERSION",
    "Durability",
    "FSJSONLStore",
    "LoadedSession",
    "MemoryStore",
    "ModelRef",
    "NullStore",
    "SessionInfo",
    "SessionStore",
    "SessionWarning",
    "compaction_summary_message",
    "cwd_slug",
    "default_sessions_dir",
    "find_most_recent_session",
    "list_sessions",
    "read_session",
    "resolve_session_id",
    "unanswered_tool_uses",
]

log = logging.getLogger("panto.sessions")

#: The session file format this panto writes and the newest it reads.
FORMAT_VERSION = 1

Durability = Literal["fsync", "flush", "none"]
SystemMode = Literal["append", "replace"]
_DURABILITIES = ("fsync", "flush", "none")


class SessionWarning(UserWarning):
    """A recoverable problem in a session file (a torn tail after a crash)."""


class ModelRef(NamedTuple):
    provider: str
    model: str

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"


@dataclass(slots=True)
class LoadedSession:
    """What a store's read side returns.

    ``conversation`` is the linear context to hand to ``Agent``;
    ``dangling_user`` is the text of a trailing user prompt that never got
    an assistant reply (a crash or quit right after submitting).  It is NOT
    part of ``conversation``; the next append becomes its sibling.
    ``entry_ids[i]`` is the entry id of ``conversation[i]`` (``None`` for the
    synthetic compaction summary), e.g. for ``append_compaction``.
    """

    conversation: Conversation
    dangling_user: str | None = None
    entry_ids: list[str | None] = field(default_factory=list)
    dangling_message: Message | None = None


@runtime_checkable
class SessionStore(Protocol):
    """Persistence for one session.  Appends are batch-atomic: after a crash
    a batch is either wholly there or wholly absent."""

    @property
    def session_id(self) -> str: ...

    @property
    def active_model(self) -> ModelRef | None: ...

    def append_messages(
        self, messages: Sequence[Message], *, system_mode: SystemMode = "append"
    ) -> list[str]:
        """Persist ``messages`` as one atomic batch; returns their entry ids.
        ``system_mode="replace"``: the system messages of the batch replace
        the earlier ones (``Agent.add_system_message(text, "replace")``)."""
        ...

    def append_model_change(self, provider: str, model: str) -> str: ...

    def append_compaction(
        self, summary: str, first_kept_id: str | None, tokens_before: int
    ) -> str: ...

    def load_conversation(self) -> LoadedSession: ...

    def close(self) -> None: ...


def unanswered_tool_uses(conversation: Conversation) -> list[ToolUse]:
    """Tool calls of the conversation's last assistant message that have no
    result after it (a crash during a tool call).  Providers reject such a
    conversation; the agent answers them (e.g. with ``is_error`` results)."""
    msgs = conversation.messages
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].role == "assistant":
            answered = {
                b.tool_use_id
                for m in msgs[i + 1 :]
                for b in m.content
                if isinstance(b, ToolResultBlock)
            }
            return [u for u in msgs[i].tool_uses if u.id not in answered]
    return []


def _message_payloads(messages: Sequence[Message], system_mode: SystemMode) -> list[dict[str, Any]]:
    if system_mode not in ("append", "replace"):
        raise ValueError(f"system_mode must be 'append' or 'replace', not {system_mode!r}")
    out = []
    for m in messages:
        p: dict[str, Any] = {"type": "message", "message": m.to_dict()}
        if system_mode == "replace" and m.role == "system":
            p["system_mode"] = "replace"
        out.append(p)
    return out


def _starts_conversation(entry: dict[str, Any]) -> bool:
    """A message other than a system message."""
    return entry["type"] == "message" and entry["message"]["role"] != "system"


def _is_prompt(msg: Message) -> bool:
    return msg.role == "user" and not any(isinstance(b, ToolResultBlock) for b in msg.content)


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


# --------------------------------------------------------------------------- null / memory


class NullStore:
    """Persists nothing.  ``load_conversation`` returns an empty conversation."""

    def __init__(self) -> None:
        self._model: ModelRef | None = None
        self._n = 0

    @property
    def session_id(self) -> str:
        return ""

    @property
    def active_model(self) -> ModelRef | None:
        return self._model

    def _ids(self, n: int) -> list[str]:
        self._n += n
        return [f"null{i:x}" for i in range(self._n - n, self._n)]

    def append_messages(
        self, messages: Sequence[Message], *, system_mode: SystemMode = "append"
    ) -> list[str]:
        return self._ids(len(messages))

    def append_model_change(self, provider: str, model: str) -> str:
        self._model = ModelRef(provider, model)
        return self._ids(1)[0]

    def append_compaction(self, summary: str, first_kept_id: str | None, tokens_before: int) -> str:
        return self._ids(1)[0]

    def load_conversation(self) -> LoadedSession:
        return LoadedSession(Conversation())

    def close(self) -> None:
        pass

    def __enter__(self) -> NullStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Builder:
    """The entry bookkeeping shared by the JSONL and memory stores."""

    __slots__ = ("ids", "leaf", "model", "session_id")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.ids: set[str] = set()
        self.leaf: str | None = None
        self.model: ModelRef | None = None

    def new_id(self) -> str:
        while True:
            eid = secrets.token_hex(4)
            if eid not in self.ids:
                self.ids.add(eid)
                return eid

    def entries(self, payloads: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Entry dicts chained onto the current leaf (the leaf is not moved)."""
        out = []
        parent = self.leaf
        ts = _now()
        for p in payloads:
            eid = self.new_id()
            e = {"type": p.pop("type"), "id": eid, "parent_id": parent, "timestamp": ts}
            e.update(p)
            out.append(e)
            parent = eid
        return out

    def check_first_kept(self, first_kept_id: str | None) -> None:
        if first_kept_id is not None and first_kept_id not in self.ids:
            raise SessionError(f"compaction: unknown first_kept_id {first_kept_id!r}")


class MemoryStore:
    """Keeps entries in ``self.entries`` (the same dicts a JSONL file holds).
    For tests and for embedders that persist by other means."""

    def __init__(self, session_id: str | None = None) -> None:
        self._b = _Builder(session_id or uuid.uuid4().hex)
        self.entries: list[dict[str, Any]] = []

    @property
    def session_id(self) -> str:
        return self._b.session_id

    @property
    def active_model(self) -> ModelRef | None:
        return self._b.model

    def _commit(self, entries: list[dict[str, Any]]) -> list[str]:
        self.entries.extend(entries)
        if entries:
            self._b.leaf = entries[-1]["id"]
        return [e["id"] for e in entries]

    def append_messages(
        self, messages: Sequence[Message], *, system_mode: SystemMode = "append"
    ) -> list[str]:
        return self._commit(self._b.entries(_message_payloads(messages, system_mode)))

    def append_model_change(self, provider: str, model: str) -> str:
        ids = self._commit(
            self._b.entries([{"type": "model_change", "provider": provider, "model": model}])
        )
        self._b.model = ModelRef(provider, model)
        return ids[0]

    def append_compaction(self, summary: str, first_kept_id: str | None, tokens_before: int) -> str:
        self._b.check_first_kept(first_kept_id)
        payload = {
            "type": "compaction",
            "summary": summary,
            "first_kept_id": first_kept_id,
            "tokens_before": int(tokens_before),
        }
        return self._commit(self._b.entries([payload]))[0]

    def load_conversation(self) -> LoadedSession:
        return _build_context(_entries_of(self.entries, "<memory>"), "<memory>")

    def close(self) -> None:
        pass


# --------------------------------------------------------------------------- context building
#
# A loaded session is kept as parallel lists, one slot per entry (cheaper
# than an object per entry: loading is a hot path, and much of its cost is
# memory).  ``payloads[i]`` is the Message of a message entry and the entry
# dict of any other type.


@dataclass(slots=True, eq=False)
class _Entries:
    kinds: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    parents: list[str | None] = field(default_factory=list)
    payloads: list[Any] = field(default_factory=list)
    modes: dict[int, str] = field(default_factory=dict)  # system_mode, by entry index
    n_messages: int = 0
    linear: bool = True  # each entry's parent is the entry before it: no branches
    plain: bool = True  # no system message, no compaction
    leaf: str | None = None  # the id of the last entry

    def add(self, kind: str, eid: str, pid: str | None, payload: Any, mode: str | None) -> None:
        # _scan_entries inlines this; keep the two in step
        if kind == "message":
            self.kinds.append(_MESSAGE)
            self.n_messages += 1
            if payload.role == "system":
                self.plain = False
                if mode is not None:
                    self.modes[len(self.ids)] = mode
        else:
            self.kinds.append(kind)
            if kind == "compaction":
                self.plain = False
        if pid != self.leaf:
            self.linear = False
        self.ids.append(eid)
        self.parents.append(pid)
        self.payloads.append(payload)
        self.leaf = eid

    def truncate(self, n: int) -> None:
        """Keep the first ``n`` entries."""
        for name in ("kinds", "ids", "parents", "payloads"):
            del getattr(self, name)[n:]
        self.modes = {i: m for i, m in self.modes.items() if i < n}
        self.n_messages = self.kinds.count(_MESSAGE)
        self.leaf = self.ids[-1] if self.ids else None
        prev = None
        self.linear = True
        for eid, pid in zip(self.ids, self.parents):
            if pid != prev:
                self.linear = False
                break
            prev = eid

    def check_ids(self) -> int | None:
        """The index of the first entry with a duplicate id or an unknown
        parent, or None."""
        if self.linear and len(set(self.ids)) == len(self.ids):
            return None  # each parent is the entry before it; ids are unique
        seen: set[str] = set()
        for k, (eid, pid) in enumerate(zip(self.ids, self.parents)):
            if eid in seen or (pid is not None and pid not in seen):
                return k
            seen.add(eid)
        return None

    def error_for(self, k: int) -> str:
        eid, pid = self.ids[k], self.parents[k]
        if eid in self.ids[:k]:
            return f"duplicate entry id {eid!r}"
        return f"entry {eid} has unknown parent_id {pid!r}"

    def chain(self, where: str) -> Sequence[int]:
        """The indices of the entries from the root to the last one,
        following parent ids (which check_ids has validated)."""
        n = len(self.ids)
        if self.linear:
            return range(n)
        index = {eid: i for i, eid in enumerate(self.ids)}
        walk: list[int] = []
        i: int | None = n - 1 if n else None
        while i is not None:
            walk.append(i)
            if len(walk) > n:
                raise SessionError(f"{where}: the parent_id chain has a cycle")
            pid = self.parents[i]
            i = index[pid] if pid is not None else None
        walk.reverse()
        return walk

    def active_model(self, chain: Sequence[int]) -> ModelRef | None:
        """The last model_change on the chain, or the model of the last
        message that names one, whichever comes later."""
        for i in reversed(chain):
            p = self.payloads[i]
            if self.kinds[i] == "model_change":
                return ModelRef(str(p.get("provider", "")), str(p.get("model", "")))
            if self.kinds[i] == "message" and p.provider and p.model:
                return ModelRef(p.provider, p.model)
        return None


_MESSAGE = "message"


def _entries_of(dicts: Iterable[dict[str, Any]], where: str) -> _Entries:
    """The entries of entry dicts (MemoryStore's read side)."""
    out = _Entries()
    for e in dicts:
        if e["type"] == "message":
            try:
                m = _message_from_dict(e["message"])
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                raise SessionError(f"{where}: entry {e['id']}: bad message: {exc!r}") from None
            out.add("message", e["id"], e.get("parent_id"), m, e.get("system_mode"))
        else:
            out.add(e["type"], e["id"], e.get("parent_id"), e, None)
    k = out.check_ids()
    if k is not None:
        raise SessionError(f"{where}: {out.error_for(k)}")
    return out


def _build_context(es: _Entries, where: str) -> LoadedSession:
    """The conversation that ends at the last entry: walk its parent chain,
    apply the latest compaction, put the system messages first, and split
    off a dangling user prompt."""
    if not es.ids:
        return LoadedSession(Conversation())
    kinds, ids, payloads = es.kinds, es.ids, es.payloads
    system: list[Message] = []
    system_ids: list[str | None] = []
    messages: list[Message]
    mids: list[str | None]
    summary: str | None = None
    if es.linear and es.plain:  # the common case, and the hot path
        if es.n_messages == len(ids):
            messages, mids = payloads[:], ids[:]  # type: ignore[assignment]
        else:
            sel = [i for i, k in enumerate(kinds) if k == "message"]
            messages, mids = [payloads[i] for i in sel], [ids[i] for i in sel]
    else:
        chain = es.chain(where)
        start = 0
        for c in range(len(chain) - 1, -1, -1):
            if kinds[chain[c]] == "compaction":
                comp = payloads[chain[c]]
                summary = str(comp.get("summary") or "")
                first = comp.get("first_kept_id")
                start = c + 1
                if first is not None:
                    for j in range(c):
                        if ids[chain[j]] == first:
                            start = j
                            break
                    else:
                        raise SessionError(
                            f"{where}: compaction {comp['id']} keeps from entry {first!r}, "
                            "which is not on the conversation's chain"
                        )
                break
        # System messages are the system prompt: all of them on the chain (a
        # compaction does not summarize them away), first, in order; one
        # persisted with system_mode "replace" drops the earlier ones.
        messages, mids = [], []
        for c, i in enumerate(chain):
            if kinds[i] != "message":
                continue
            m = payloads[i]
            if m.role == "system":
                if es.modes.get(i) == "replace":
                    system.clear()
                    system_ids.clear()
                system.append(m)
                system_ids.append(ids[i])
            elif c >= start:
                messages.append(m)
                mids.append(ids[i])
    if summary is not None:
        messages.insert(0, compaction_summary_message(summary))
        mids.insert(0, None)

    dangling: str | None = None
    dangling_msg: Message | None = None
    if messages and mids[-1] is not None and _is_prompt(messages[-1]):
        dangling_msg = messages.pop()
        mids.pop()
        dangling = dangling_msg.text
    if system:
        messages[:0] = system
        mids[:0] = system_ids
    return LoadedSession(Conversation(messages), dangling, mids, dangling_msg)


# --------------------------------------------------------------------------- fast loading
#
# Loading is dominated by two costs: json.loads and building the frozen
# dataclasses (whose __init__ sets each field through object.__setattr__).
# The parser calls the json module's C scanner directly, the converter fills
# the slots directly, and the cyclic GC is paused while a file is loaded (it
# would otherwise rescan the growing heap over and over).  Anything the fast
# converter does not recognise falls back to Message.from_dict, which owns the
# format; tests check that both agree.


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC; afterwards move what it tracks straight to the
    oldest generation.  A loaded session is long-lived data (about four
    tracked objects per entry): the young collections would walk all of it
    twice, about 0.1 s per 100,000 entries, only to promote it.  Full
    collections still see it.  Skipped when the host has frozen objects
    (gc.freeze), which the move would unfreeze."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if gc.get_freeze_count() == 0:
            gc.freeze()
            gc.unfreeze()
        if was:
            gc.enable()


_scan_once = json.decoder.JSONDecoder().scan_once
_BAD = object()


def _loads(line: str) -> Any:
    """json.loads(line), faster for the common case."""
    try:
        value, end = _scan_once(line, 0)
    except (StopIteration, ValueError):
        return json.loads(line)  # raises a proper ValueError (or skips whitespace)
    if end != len(line):
        return json.loads(line)
    return value


_SLOTS: dict[type, tuple[str, ...]] = {
    Message: ("role", "content", "usage", "stop_reason", "provider", "model", "error"),
    Usage: (
        "input_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "output_tokens",
        "reasoning_tokens",
    ),
    Text: ("text",),
    Thinking: ("text", "signature"),
    RedactedThinking: ("data",),
    ToolUse: ("id", "name", "input", "raw_input"),
    ToolResultBlock: ("tool_use_id", "content", "is_error"),
}


_SHARED: dict[Any, Any] = {}


def _make_fast_converter() -> Callable[[dict[str, Any]], Message] | None:
    """A converter equal to Message.from_dict on well-formed input that
    raises (KeyError, TypeError, ValueError, AttributeError) on anything
    else, or None when the model's classes do not have the expected slots."""
    if any(getattr(cls, "__slots__", None) != slots for cls, slots in _SLOTS.items()):
        return None  # the model changed shape: use from_dict only
    new = object.__new__

    def setters(cls: type) -> list[Callable[[Any, Any], None]]:
        return [cls.__dict__[name].__set__ for name in _SLOTS[cls]]

    # One object for each of the few distinct roles, stop reasons, models
    # and tool names: a loaded session keeps less memory.
    shared = _SHARED.setdefault

    m_role, m_content, m_usage, m_stop, m_prov, m_model, m_err = setters(Message)
    u_in, u_cr, u_cw, u_out, u_reas = setters(Usage)
    (t_text,) = setters(Text)
    th_text, th_sig = setters(Thinking)
    (r_data,) = setters(RedactedThinking)
    tu_id, tu_name, tu_input, tu_raw = setters(ToolUse)
    tr_id, tr_content, tr_err = setters(ToolResultBlock)

    def text(b: dict[str, Any]) -> Text:
        t = b["text"]
        if type(t) is not str:
            raise TypeError
        o = new(Text)
        t_text(o, t)
        return o

    def thinking(b: dict[str, Any]) -> Thinking:
        t = b["text"]
        sig = b.get("signature", "")
        if type(t) is not str or type(sig) is not str:
            raise TypeError
        o = new(Thinking)
        th_text(o, t)
        th_sig(o, sig)
        return o

    def redacted(b: dict[str, Any]) -> RedactedThinking:
        t = b["data"]
        if type(t) is not str:
            raise TypeError
        o = new(RedactedThinking)
        r_data(o, t)
        return o

    def tool_use(b: dict[str, Any]) -> ToolUse:
        i, n, inp, raw = b["id"], b["name"], b.get("input", {}), b.get("raw_input")
        if type(i) is not str or type(n) is not str or type(inp) is not dict:
            raise TypeError
        if raw is not None and type(raw) is not str:
            raise TypeError
        o = new(ToolUse)
        tu_id(o, i)
        tu_name(o, shared(n, n))
        tu_input(o, inp)
        tu_raw(o, raw)
        return o

    def tool_result(b: dict[str, Any]) -> ToolResultBlock:
        i, c, err = b["tool_use_id"], b["content"], b.get("is_error", False)
        if type(i) is not str or type(c) is not str or type(err) is not bool:
            raise TypeError
        o = new(ToolResultBlock)
        tr_id(o, i)
        tr_content(o, c)
        tr_err(o, err)
        return o

    blocks: dict[Any, Callable[[dict[str, Any]], Any]] = {
        "text": text,
        "thinking": thinking,
        "redacted_thinking": redacted,
        "tool_use": tool_use,
        "tool_result": tool_result,
    }

    def convert(d: dict[str, Any]) -> Message:
        o = new(Message)
        r = d["role"]
        if type(r) is not str:  # (only strings go into the shared pool: 1 == True)
            raise TypeError
        m_role(o, shared(r, r))
        c = d["content"]
        if len(c) == 1:  # most messages: skip the comprehension's frame
            b = c[0]
            m_content(o, (blocks[b["type"]](b),))
        else:
            m_content(o, tuple([blocks[b["type"]](b) for b in c]))
        u = d.get("usage")
        if u is None:
            m_usage(o, None)
        else:
            g = u.get
            a, cr, cw, out, reas = (
                g("input_tokens", 0),
                g("cache_read_tokens", 0),
                g("cache_write_tokens", 0),
                g("output_tokens", 0),
                g("reasoning_tokens", 0),
            )
            if not (
                type(a) is int
                and type(cr) is int
                and type(cw) is int
                and type(out) is int
                and type(reas) is int
            ):
                raise TypeError
            uo = new(Usage)
            u_in(uo, a)
            u_cr(uo, cr)
            u_cw(uo, cw)
            u_out(uo, out)
            u_reas(uo, reas)
            m_usage(o, uo)
        g = d.get
        stop, prov, model = g("stop_reason"), g("provider"), g("model")
        if stop is not None:
            if type(stop) is not str:
                raise TypeError
            stop = shared(stop, stop)
        if prov is not None:
            if type(prov) is not str:
                raise TypeError
            prov = shared(prov, prov)
        if model is not None:
            if type(model) is not str:
                raise TypeError
            model = shared(model, model)
        m_stop(o, stop)
        m_prov(o, prov)
        m_model(o, model)
        m_err(o, d.get("error"))
        return o

    return convert


def _reference_from_dict(d: dict[str, Any]) -> Message:
    return Message.from_dict(d)


_fast_convert: Callable[[dict[str, Any]], Message] = _make_fast_converter() or _reference_from_dict


def _message_from_dict(d: dict[str, Any]) -> Message:
    """Message.from_dict, fast for well-formed input."""
    try:
        return _fast_convert(d)
    except (KeyError, TypeError, ValueError, AttributeError):
        return Message.from_dict(d)  # the reference; raises on bad data


# --------------------------------------------------------------------------- file parsing
#
# The file is read in chunks that end at a line end, and each chunk's entries
# are scanned straight out of its text (no string per line).  A whole-file
# read would cost fresh memory of twice the file's size; page faults are a
# large part of load time.

_CHUNK = 1 << 20  # bytes per read (tests shrink it to put chunk ends everywhere)


@dataclass(slots=True, eq=False)
class _Parsed(_Entries):
    header: dict[str, Any] | None = None
    size: int = 0  # bytes in the file
    good_size: int = -1  # bytes up to the end of the last complete batch (-1: all complete lines)
    dropped: list[str] = field(default_factory=list)  # what was ignored, for the warning
    # the first entry of a batch whose last entry has not been seen yet:
    # (entry index, chunk text, position in it, file offset of the chunk)
    batch: tuple[int, str, int, int] | None = None


def _dump_line(entry: dict[str, Any]) -> bytes:
    try:
        return (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode()
    except UnicodeEncodeError:  # lone surrogates: \u-escape them so the line stays UTF-8
        return (json.dumps(entry, separators=(",", ":")) + "\n").encode()


def _check_header(h: Any, where: str) -> dict[str, Any]:
    if not isinstance(h, dict) or h.get("type") != "session":
        raise SessionError(f"{where}:1: not a panto session file (no session header)")
    v = h.get("version")
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise SessionError(f"{where}:1: invalid session format version {v!r}")
    if v > FORMAT_VERSION:
        raise SessionError(
            f"{where}: session format version {v} is newer than this panto understands "
            f"(version {FORMAT_VERSION}); upgrade panto to open it"
        )
    if not isinstance(h.get("id"), str) or not h["id"]:
        raise SessionError(f"{where}:1: session header has no id")
    return h


def _parse_file(path: Path) -> _Parsed:
    where = str(path)
    try:
        f = open(path, "rb", buffering=0)  # noqa: SIM115 (closed below)
    except FileNotFoundError:
        raise SessionError(f"{where}: no such session file") from None
    except OSError as exc:
        raise SessionError(f"{where}: cannot read session file: {exc.strerror}") from None
    p = _Parsed()
    with f:
        try:
            read = f.read
            block = read(_CHUNK)
            p.size = len(block)
            carry = b""  # a line not complete yet
            offset = 0  # where carry starts in the file
            lines = 0  # lines before carry
            while block:
                nxt = read(_CHUNK)  # read ahead: the last complete line may be torn
                p.size += len(nxt)
                data = carry + block if carry else block
                cut = data.rfind(b"\n") + 1
                if cut == 0:
                    carry, block = data, nxt
                    continue
                carry = data[cut:]
                chunk = data[:cut] if carry else data
                if not _parse_chunk(p, chunk, offset, lines, not nxt, where):
                    break  # stopped at an unparsable last line
                offset += cut
                lines += chunk.count(b"\n")
                block = nxt
        except OSError as exc:
            raise SessionError(f"{where}: cannot read session file: {exc.strerror}") from None
    if len(_SHARED) > 4096:  # a pathological file: do not keep its strings forever
        _SHARED.clear()
    if carry:
        p.dropped.insert(0, "a torn last line (no newline)")
    if p.good_size < 0:
        p.good_size = p.size - len(carry)
    if p.batch is not None:  # its other entries carry "more": it never committed
        k, text, pos, chunk_offset = p.batch
        p.dropped.append(f"an incomplete batch of {len(p.ids) - k} entries")
        p.good_size = chunk_offset + len(text[:pos].encode("utf-8", "surrogatepass"))
        p.truncate(k)
        p.batch = None
    k = p.check_ids()
    if k is not None:
        raise SessionError(f"{where}:{_entry_lineno(path, k)}: {p.error_for(k)}")
    return p


def _entry_lineno(path: Path, k: int) -> int:
    """The line of entry ``k`` (for an error message: reads the file again)."""
    n = -1
    with open(path, "rb") as f:
        f.readline()  # the header
        for lineno, raw in enumerate(f, 2):
            if raw.decode("utf-8", "replace").strip():
                n += 1
                if n == k:
                    return lineno
    return 0


def _parse_chunk(
    p: _Parsed, chunk: bytes, offset: int, lines: int, final: bool, where: str
) -> bool:
    """Parse one chunk of whole lines; False if it ended at an unparsable
    last line of the file (a torn write), which is then dropped."""
    try:
        text = chunk.decode("utf-8")
    except UnicodeDecodeError as exc:
        lineno = lines + chunk.count(b"\n", 0, exc.start) + 1
        if not final or chunk.find(b"\n", exc.start) + 1 != len(chunk):
            raise SessionError(f"{where}:{lineno}: corrupt line (not UTF-8)") from None
        line_start = chunk.rfind(b"\n", 0, exc.start) + 1
        p.dropped.append(f"an unparsable last line (line {lineno})")
        p.good_size = offset + line_start
        if line_start:
            _parse_text(p, chunk[:line_start].decode("utf-8"), offset, lines, False, where)
        return False
    return _parse_text(p, text, offset, lines, final, where)


def _parse_text(p: _Parsed, text: str, offset: int, lines: int, final: bool, where: str) -> bool:
    pos = 0
    if p.header is None:  # the first chunk (a torn header ends the parse)
        pos = text.index("\n") + 1
        try:
            header = _loads(text[: pos - 1])
        except ValueError:
            if final and pos == len(text):
                p.dropped.append("a torn header line")
                p.good_size = 0
                return False
            raise SessionError(f"{where}:1: corrupt session header") from None
        p.header = _check_header(header, where)
    return _scan_entries(p, text, pos, offset, lines, final, where)


def _scan_entries(
    p: _Parsed, text: str, pos: int, offset: int, lines: int, final: bool, where: str
) -> bool:
    """The hot loop.  The common entry takes the fast path; anything unusual
    (whitespace, a torn or corrupt line, odd types, a value spanning lines)
    goes to _slow_entry, which applies every check and names the line."""
    scan = _scan_once
    convert = _fast_convert
    find = text.find
    kinds, ids, parents, payloads = (
        p.kinds.append,
        p.ids.append,
        p.parents.append,
        p.payloads.append,
    )
    modes = p.modes
    n = len(p.ids)
    n_messages, linear, plain, prev, batch = p.n_messages, p.linear, p.plain, p.leaf, p.batch
    n_chars = len(text)  # text ends with "\n"
    ok = True
    while pos < n_chars:
        try:
            e, stop = scan(text, pos)
            if text[stop] != "\n" or find("\n", pos, stop) != -1:
                raise ValueError
            kind = e["type"]
            eid = e["id"]
            pid = e.get("parent_id")
            if type(eid) is not str or (pid is not None and type(pid) is not str):
                raise TypeError
            payload = convert(e["message"]) if kind == "message" else e
            mode = e.get("system_mode")
            more = e.get("more")
        except (StopIteration, ValueError, KeyError, TypeError, AttributeError, IndexError):
            stop = find("\n", pos)
            lineno = lines + text.count("\n", 0, pos) + 1
            rec = _slow_entry(text[pos:stop], lineno, where, final and stop + 1 == n_chars)
            if rec is None:  # a blank line
                pos = stop + 1
                continue
            if rec is _BAD:  # an unparsable last line: torn
                p.dropped.append(f"an unparsable last line (line {lineno})")
                p.good_size = offset + len(text[:pos].encode("utf-8", "surrogatepass"))
                ok = False
                break
            kind, eid, pid, payload, mode, more = rec
        # _Entries.add, inlined
        if kind == "message":
            kinds(_MESSAGE)
            n_messages += 1
            if payload.role == "system":
                plain = False
                if mode is not None:
                    modes[n] = mode
        else:
            kinds(kind)
            if kind == "compaction":
                plain = False
        if pid != prev:
            linear = False
        elif pid is not None:
            pid = prev  # keep one string, not two equal ones
        ids(eid)
        parents(pid)
        payloads(payload)
        prev = eid
        if not more:
            batch = None
        elif batch is None:
            batch = (n, text, pos, offset)
        n += 1
        pos = stop + 1
    p.n_messages, p.linear, p.plain, p.leaf, p.batch = n_messages, linear, plain, prev, batch
    return ok


def _slow_entry(line: str, lineno: int, where: str, may_be_torn: bool) -> Any:
    """One entry line with every check: (kind, id, parent_id, payload,
    system_mode, more), None for a blank line, _BAD for an unparsable line
    that may be a torn tail; else SessionError."""
    try:
        e = json.loads(line)
    except ValueError:
        if not line.strip():
            return None  # a blank line carries nothing
        if may_be_torn:
            return _BAD
        raise SessionError(f"{where}:{lineno}: corrupt session entry (invalid JSON)") from None
    if type(e) is not dict:
        raise SessionError(f"{where}:{lineno}: corrupt session entry (not an object)")
    eid, kind, pid = e.get("id"), e.get("type"), e.get("parent_id")
    if type(eid) is not str or type(kind) is not str:
        raise SessionError(f"{where}:{lineno}: corrupt session entry (no type or id)")
    if pid is not None and type(pid) is not str:
        raise SessionError(f"{where}:{lineno}: corrupt session entry (bad parent_id)")
    if kind != "message":
        return (kind, eid, pid, e, None, e.get("more"))
    try:
        m = Message.from_dict(e["message"])
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise SessionError(f"{where}:{lineno}: bad message entry: {exc!r}") from None
    return (kind, eid, pid, m, e.get("system_mode"), e.get("more"))


def _warn_dropped(path: Path, parsed: _Parsed) -> None:
    if parsed.dropped:
        msg = (
            f"session file {path}: ignoring {'; '.join(parsed.dropped)} "
            f"({parsed.size - parsed.good_size} bytes, left by a crash); "
            "it is cut off before the next append"
        )
        log.warning("%s", msg)
        warnings.warn(msg, SessionWarning, stacklevel=3)


def read_session(path: str | os.PathLike[str]) -> LoadedSession:
    """Load a session file without locking it (read-only: listing, export)."""
    p = Path(path)
    with _gc_paused():
        return _load(p)


def _load(path: Path) -> LoadedSession:
    """Parse and build (call with the GC paused: the parse's temporaries are
    freed when this returns, before the collector ever sees them)."""
    parsed = _parse_file(path)
    _warn_dropped(path, parsed)
    return _build_context(parsed, str(path))


# --------------------------------------------------------------------------- paths


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


def _file_time(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H-%M-%S-") + f"{dt.microsecond // 1000:03d}Z"


def _id_from_name(name: str) -> str:
    stem = name[:-6] if name.endswith(".jsonl") else name
    return stem.rpartition("_")[2]


# --------------------------------------------------------------------------- the lock


class _Lock:
    """An exclusive ``flock`` on ``<session file>.lock`` holding our pid."""

    def __init__(self, path: Path) -> None:
        self.path = path
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
                    f"session {path.with_suffix('')} is in use by another panto process "
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


class FSJSONLStore:
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
        if durability not in _DURABILITIES:
            raise SessionError(f"durability must be one of {_DURABILITIES}, not {durability!r}")
        root = Path(dir) if dir is not None else default_sessions_dir()
        self._cwd = os.path.abspath(os.fspath(cwd) if cwd is not None else os.getcwd())
        sid = session_id or uuid.uuid4().hex
        created = datetime.now(timezone.utc)
        folder = root / cwd_slug(self._cwd)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionError(f"cannot create session directory {folder}: {exc}") from None
        self._init(folder / f"{_file_time(created)}_{sid}.jsonl", sid, durability)
        self._header: dict[str, Any] | None = {
            "type": "session",
            "version": FORMAT_VERSION,
            "id": sid,
            "cwd": self._cwd,
            "created": created.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }
        self._new_dir = folder
        self._lock = _Lock(self._lock_path())

    def _init(self, path: Path, sid: str, durability: Durability) -> None:
        self._path = path
        self._durability: Durability = durability
        self._b = _Builder(sid)
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
        if durability not in _DURABILITIES:
            raise SessionError(f"durability must be one of {_DURABILITIES}, not {durability!r}")
        p = Path(path)
        if not p.is_file():
            raise SessionError(f"{p}: no such session file")
        self = cls.__new__(cls)
        self._init(p, "", durability)
        self._lock = _Lock(self._lock_path())
        try:
            with _gc_paused():
                self._adopt(p)
        except BaseException:
            self._lock.release()
            raise
        return self

    def _adopt(self, p: Path) -> None:
        """Load the file being opened and take over its state (called with
        the GC paused; the parse's temporaries die on return)."""
        parsed = _parse_file(p)
        _warn_dropped(p, parsed)
        loaded = _build_context(parsed, str(p))
        self._header = None
        if parsed.header is None:  # only a torn header: nothing was ever committed
            sid = _id_from_name(p.name)
            self._header = {
                "type": "session",
                "version": FORMAT_VERSION,
                "id": sid,
                "cwd": os.getcwd(),
                "created": _now(),
            }
            self._b.session_id = sid
            self._cwd = os.getcwd()
        else:
            self._b.session_id = parsed.header["id"]
            self._cwd = str(parsed.header.get("cwd", ""))
        self._b.ids = set(parsed.ids)
        self._good_size = parsed.good_size
        self._size = parsed.size
        chain = parsed.chain(str(p))
        self._b.model = parsed.active_model(chain)
        leaf = parsed.ids[chain[-1]] if chain else None
        if loaded.dangling_message is not None:
            # the next entry is a sibling of the unanswered prompt
            for i in reversed(chain):
                if parsed.kinds[i] == "message":
                    leaf = parsed.parents[i]
                    break
        self._b.leaf = leaf
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
            log.warning(
                "session file %s: cut off %d bytes of torn tail", self._path, size - self._good_size
            )
            self._size = self._good_size
        self._fd = fd
        return fd

    def _write(self, payloads: list[dict[str, Any]]) -> list[str]:
        """Append ``payloads`` as one batch: one write of whole lines, then
        (durability "fsync") fdatasync.  Entries of a multi-entry batch but
        the last carry ``"more": true`` so a torn batch is recognisable."""
        with self._mutex:
            if self._closed:
                raise SessionError(f"session {self._path}: store is closed")
            entries = self._b.entries(payloads)
            ids = [e["id"] for e in entries]
            new_file = self._header is not None
            if new_file and not any(_starts_conversation(e) for e in entries):
                # A new session's file starts with its conversation: model
                # changes and system messages before that wait, and go in the
                # same write (a start nobody typed into leaves no file).
                self._pending += entries
                self._b.leaf = ids[-1]
                self._cache = None
                return ids
            batch = self._pending + entries
            last = len(batch) - 1
            lines = [
                _dump_line({**e, "more": True} if i < last else e) for i, e in enumerate(batch)
            ]
            try:
                fd = self._open_fd()
                if self._size != 0:
                    new_file = False
                if new_file:
                    lines.insert(0, _dump_line(self._header))  # type: ignore[arg-type]
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
                    try:  # leave no partial batch behind
                        os.ftruncate(fd, start)
                    except OSError:
                        pass
                    raise SessionError(f"{self._path}: cannot append: {exc.strerror}") from None
            except BaseException:
                self._b.ids.difference_update(e["id"] for e in entries)
                raise
            self._size = self._good_size = start + len(buf)
            self._pending = []
            self._cache = None
            if new_file:
                self._header = None
                if self._durability == "fsync" and self._new_dir is not None:
                    _fsync_dir(self._new_dir)
            self._b.leaf = ids[-1]
            return ids

    def append_messages(
        self, messages: Sequence[Message], *, system_mode: SystemMode = "append"
    ) -> list[str]:
        if not messages:
            return []
        return self._write(_message_payloads(messages, system_mode))

    def append_model_change(self, provider: str, model: str) -> str:
        eid = self._write([{"type": "model_change", "provider": provider, "model": model}])[0]
        self._b.model = ModelRef(provider, model)
        return eid

    def append_compaction(self, summary: str, first_kept_id: str | None, tokens_before: int) -> str:
        self._b.check_first_kept(first_kept_id)
        payload = {
            "type": "compaction",
            "summary": summary,
            "first_kept_id": first_kept_id,
            "tokens_before": int(tokens_before),
        }
        return self._write([payload])[0]

    # -- reading

    def load_conversation(self) -> LoadedSession:
        if self._cache is not None:
            return self._cache
        if self._size == 0 and not self._path.exists():
            where = str(self._path)
            return _build_context(_entries_of(self._pending, where), where)
        with _gc_paused():
            return _load(self._path)

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


# --------------------------------------------------------------------------- catalog


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """One line of ``panto sessions``."""

    id: str
    path: Path
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
            _check_header(header, str(path))
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
                            if _is_prompt(msg):
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
    matches = [p for p in _session_files(root, None) if _id_from_name(p.name).startswith(want)]
    exact = [p for p in matches if _id_from_name(p.name) == want]
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
            lines.append(f"  {_id_from_name(p.name)}  {p.name[:19]}  {where}")
        more = f"\n  ... and {len(matches) - 20} more" if len(matches) > 20 else ""
        raise SessionError(
            f"session id prefix {prefix!r} is ambiguous; {len(matches)} sessions match:\n"
            + "\n".join(lines)
            + more
        )
    return matches[0]
