"""The ``SessionStore`` seam (seed 001, "pluggable session store") and the
stores that need no backend: ``NullStore`` (persists nothing) and
``MemoryStore`` (``memory.py``: entries in a list, for tests and embedders).

Every store keeps the same entries: dicts ``{"type", "id", "parent_id",
"timestamp", ...}`` of type ``message``, ``model_change``, ``compaction``,
``label``, ``leaf`` or ``permission`` (the JSON shape of a JSONL session
line).  Entries form a tree through ``parent_id``; the conversation is the
path from the current leaf to the root.  ``label``, ``leaf`` and
``permission`` entries are *marks*: they hang off
the entry that was current when they were written and are never anyone's
parent.  The current leaf is the last entry written, a mark standing for its
parent; a ``leaf`` mark is written to move it (branching, ``/tree``).
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, runtime_checkable

from ..conversation import Conversation, Message, ToolResultBlock
from ..errors import SessionError

__all__ = [
    "MARK_TYPES",
    "Durability",
    "LoadedSession",
    "ModelRef",
    "NullStore",
    "SessionStore",
    "SessionWarning",
    "SystemMode",
    "TreeNode",
]

Durability = Literal["fsync", "flush", "none"]
SystemMode = Literal["append", "replace"]
DURABILITIES = ("fsync", "flush", "none")

#: Entry types that mark a node instead of extending the tree
#: (``permission``: one decision of the permission gate, panto.policy).
MARK_TYPES = frozenset({"label", "leaf", "permission"})


class SessionWarning(UserWarning):
    """A recoverable problem in a session file (a torn tail after a crash)."""


# (the fields given as types, not the class syntax: this module's annotations
# are strings, which NamedTuple would compile() at import -- the process's
# first compile, ~4% of panto -p's start-up)
class ModelRef(NamedTuple("ModelRef", [("provider", str), ("model", str)])):
    __slots__ = ()

    def __str__(self) -> str:
        return f"{self.provider}/{self.model}"


@dataclass(slots=True)
class LoadedSession:
    """What a store's read side returns.

    ``conversation`` is the linear context to hand to ``Agent``;
    ``dangling_user`` is the text of a trailing user prompt that never got
    an assistant reply (a crash or quit right after submitting, or the prompt
    ``branch_from`` was asked to re-edit).  It is NOT part of
    ``conversation``; the next append becomes its sibling.
    ``entry_ids[i]`` is the entry id of ``conversation[i]`` (``None`` for the
    synthetic compaction summary), e.g. for ``append_compaction``.
    ``leaf_id`` is the entry the next append chains onto.
    """

    conversation: Conversation
    dangling_user: str | None = None
    entry_ids: list[str | None] = field(default_factory=list)
    dangling_message: Message | None = None
    leaf_id: str | None = None
    active_model: ModelRef | None = None


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One entry of a session's tree (``store.tree()``), in depth-first
    order, children oldest first.  Marks (labels, leaf moves) are folded into
    ``label`` and ``current``."""

    id: str
    parent_id: str | None
    depth: int
    type: str  # message, model_change, compaction
    role: str | None  # the message's role
    text: str  # the message's text (a compaction: its summary), whole
    label: str | None
    children: int
    on_path: bool  # on the path from the root to the current leaf
    current: bool  # the current leaf

    @property
    def is_prompt(self) -> bool:
        return self.role == "user"


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

    def load_conversation(self, leaf: str | None = None) -> LoadedSession: ...

    def close(self) -> None: ...


# --------------------------------------------------------------------------- helpers


def message_payloads(messages: Sequence[Message], system_mode: SystemMode) -> list[dict[str, Any]]:
    if system_mode not in ("append", "replace"):
        raise ValueError(f"system_mode must be 'append' or 'replace', not {system_mode!r}")
    out = []
    for m in messages:
        p: dict[str, Any] = {"type": "message", "message": m.to_dict()}
        if system_mode == "replace" and m.role == "system":
            p["system_mode"] = "replace"
        out.append(p)
    return out


def starts_conversation(entry: dict[str, Any]) -> bool:
    """A message other than a system message."""
    return entry["type"] == "message" and entry["message"]["role"] != "system"


def is_prompt(msg: Message) -> bool:
    return msg.role == "user" and not any(isinstance(b, ToolResultBlock) for b in msg.content)


def new_session_id() -> str:
    """A random session id: ``uuid.uuid4().hex`` (same layout: version 4,
    RFC 4122 variant), without importing uuid (which imports platform and
    ctypes: ~4 ms of ``panto -p`` start-up)."""
    b = bytearray(os.urandom(16))
    b[6] = (b[6] & 0x0F) | 0x40
    b[8] = (b[8] & 0x3F) | 0x80
    return b.hex()


def now(t_ns: int | None = None) -> str:
    """The UTC time ``t_ns`` (``time.time_ns()``; default now) in ISO 8601 to
    the millisecond, ``2026-12-03T23:45:01.123Z``: what
    ``datetime.now(timezone.utc).isoformat(timespec="milliseconds")`` writes
    (with ``Z``), without importing ``datetime`` at start-up."""
    s, ns = divmod(time.time_ns() if t_ns is None else t_ns, 1_000_000_000)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s)) + f".{ns // 1_000_000:03d}Z"


def check_durability(durability: str) -> None:
    if durability not in DURABILITIES:
        raise SessionError(f"durability must be one of {DURABILITIES}, not {durability!r}")


# --------------------------------------------------------------------------- null


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

    def load_conversation(self, leaf: str | None = None) -> LoadedSession:
        return LoadedSession(Conversation())

    def close(self) -> None:
        pass

    def __enter__(self) -> NullStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------- entries


class Builder:
    """The entry bookkeeping every store shares: fresh ids, the current leaf
    (what the next entry chains onto), the active model."""

    __slots__ = ("ids", "leaf", "marks", "model", "session_id")

    def __init__(self, session_id: str) -> None:
        self.session_id = session_id
        self.ids: set[str] = set()
        self.marks: set[str] = set()  # the ids of label and leaf marks
        self.leaf: str | None = None
        self.model: ModelRef | None = None

    def new_id(self) -> str:
        while True:
            eid = os.urandom(4).hex()  # secrets.token_hex(4), without importing secrets
            if eid not in self.ids:
                self.ids.add(eid)
                return eid

    def entries(self, payloads: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        """Entry dicts chained onto the current leaf (the leaf is not moved).
        A mark hangs off the entry before it and is nobody's parent; a
        ``leaf`` mark's parent is given (``{"type": "leaf", "parent_id": X}``)."""
        out = []
        parent = self.leaf
        ts = now()
        for p in payloads:
            eid = self.new_id()
            kind = p.pop("type")
            pid = p.pop("parent_id", parent)
            e = {"type": kind, "id": eid, "parent_id": pid, "timestamp": ts}
            e.update(p)
            out.append(e)
            if kind in MARK_TYPES:
                self.marks.add(eid)
            else:
                parent = eid
        return out

    def leaf_after(self, entries: Sequence[dict[str, Any]]) -> str | None:
        """The leaf once ``entries`` are committed."""
        leaf = self.leaf
        for e in entries:
            leaf = e["parent_id"] if e["type"] in MARK_TYPES else e["id"]
        return leaf

    def forget(self, entries: Iterable[dict[str, Any]]) -> None:
        """Give back the ids of entries that were not committed."""
        self.ids.difference_update(e["id"] for e in entries)
        self.marks.difference_update(e["id"] for e in entries)

    def adopt(self, ids: Sequence[str], kinds: Sequence[str]) -> None:
        """Know the entries of a loaded session."""
        self.ids = set(ids)
        self.marks = {i for i, k in zip(ids, kinds) if k in MARK_TYPES}

    def is_node(self, eid: str) -> bool:
        return eid in self.ids and eid not in self.marks

    def check_known(self, eid: str | None, what: str) -> None:
        if eid is not None and eid not in self.ids:
            raise SessionError(f"{what} {eid!r}")


def compaction_payload(
    summary: str, first_kept_id: str | None, tokens_before: int
) -> dict[str, Any]:
    return {
        "type": "compaction",
        "summary": summary,
        "first_kept_id": first_kept_id,
        "tokens_before": int(tokens_before),
    }
