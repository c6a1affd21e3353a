"""Entries -> conversation: walk the tree from a leaf to the root, replay
the latest compaction, put the system messages first, split off a dangling
prompt.  Also the tree operations every store shares (``TreeOps``): moving
the current leaf, branching, labels, the list of leaves and the tree itself.

A loaded session is kept as parallel lists, one slot per entry (cheaper than
an object per entry: loading is a hot path, and much of its cost is memory).
``payloads[i]`` is the Message of a message entry and the entry dict of any
other type.  Only the conversation (the path) outlives a load: the lists are
dropped when the store has built it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..conversation import (
    Conversation,
    Message,
    compaction_summary_message,
    message_from_dict,
)
from ..errors import SessionError
from .base import MARK_TYPES, LoadedSession, ModelRef, TreeNode, is_prompt

__all__ = ["TreeOps", "build_context", "entries_of"]

MESSAGE = "message"


@dataclass(slots=True, eq=False)
class Entries:
    """A session's entries, column-wise."""

    kinds: list[str] = field(default_factory=list)
    ids: list[str] = field(default_factory=list)
    parents: list[str | None] = field(default_factory=list)
    payloads: list[Any] = field(default_factory=list)
    modes: dict[int, str] = field(default_factory=dict)  # system_mode, by entry index
    n_messages: int = 0
    linear: bool = True  # each entry's parent is the entry before it: no branches
    plain: bool = True  # no system message, compaction or mark
    leaf: str | None = None  # the id of the last entry

    def add(self, kind: str, eid: str, pid: str | None, payload: Any, mode: str | None) -> None:
        # fastload.scan_entries inlines this; keep the two in step
        if kind == "message":
            self.kinds.append(MESSAGE)
            self.n_messages += 1
            if payload.role == "system":
                self.plain = False
                if mode is not None:
                    self.modes[len(self.ids)] = mode
        else:
            self.kinds.append(kind)
            if kind != "model_change":
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
        self.n_messages = self.kinds.count(MESSAGE)
        self.leaf = self.ids[-1] if self.ids else None
        self.plain = all(
            k == "model_change" or (k == MESSAGE and p.role != "system")
            for k, p in zip(self.kinds, self.payloads)
        )
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

    def index(self) -> dict[str, int]:
        return {eid: i for i, eid in enumerate(self.ids)}

    def find(self, eid: str, where: str) -> int:
        try:
            return self.ids.index(eid)
        except ValueError:
            raise SessionError(f"{where}: no entry {eid!r}") from None

    def chain(self, where: str, leaf: str | None = None) -> Sequence[int]:
        """The indices of the entries from the root to ``leaf`` (default: the
        current leaf, that of the last entry), following parent ids (which
        check_ids has validated).  A mark stands for its parent."""
        n = len(self.ids)
        if leaf is None and self.linear:
            return range(n)
        index = self.index()
        if leaf is None:
            i: int | None = n - 1 if n else None
        elif leaf not in index:
            raise SessionError(f"{where}: no entry {leaf!r}")
        else:
            i = index[leaf]
        walk: list[int] = []
        while i is not None and self.kinds[i] in MARK_TYPES:
            pid = self.parents[i]
            i = index[pid] if pid is not None else None
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


def entries_of(dicts: Iterable[dict[str, Any]], where: str) -> Entries:
    """The entries of entry dicts (MemoryStore's read side)."""
    out = Entries()
    for e in dicts:
        if e["type"] == "message":
            try:
                m = message_from_dict(e["message"])
                if m.role not in ("system", "user", "assistant", "tool"):
                    raise ValueError(m.role)
            except (KeyError, TypeError, ValueError, AttributeError):
                from .repair import read_message, warn_session

                m, problem = read_message(e.get("message"))
                warn_session(f"session {where}: entry {e['id']}: {problem}")
            out.add("message", e["id"], e.get("parent_id"), m, e.get("system_mode"))
        else:
            out.add(e["type"], e["id"], e.get("parent_id"), e, None)
    k = out.check_ids()
    if k is not None:
        raise SessionError(f"{where}: {out.error_for(k)}")
    return out


def build_context(es: Entries, where: str, leaf: str | None = None) -> LoadedSession:
    """The conversation that ends at ``leaf`` (default: the current leaf):
    walk its parent chain, apply the latest compaction, put the system
    messages first, and split off a dangling user prompt."""
    if not es.ids:
        if leaf is not None:
            raise SessionError(f"{where}: no entry {leaf!r}")
        return LoadedSession(Conversation())
    kinds, ids, payloads = es.kinds, es.ids, es.payloads
    system: list[Message] = []
    system_ids: list[str | None] = []
    messages: list[Message]
    mids: list[str | None]
    summary: str | None = None
    chain = es.chain(where, leaf)
    if leaf is None and es.linear and es.plain:  # the common case, and the hot path
        if es.n_messages == len(ids):
            messages, mids = payloads[:], ids[:]  # type: ignore[assignment]
        else:
            sel = [i for i, k in enumerate(kinds) if k == "message"]
            messages, mids = [payloads[i] for i in sel], [ids[i] for i in sel]
    else:
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

    leaf_id = ids[chain[-1]] if chain else None
    dangling: str | None = None
    dangling_msg: Message | None = None
    if messages and mids[-1] is not None and is_prompt(messages[-1]):
        dangling_msg = messages.pop()
        mids.pop()
        dangling = dangling_msg.text
        # the next entry is a sibling of the unanswered prompt
        for i in reversed(chain):
            if kinds[i] == "message":
                leaf_id = es.parents[i]
                break
    if system:
        messages[:0] = system
        mids[:0] = system_ids
    return LoadedSession(
        Conversation(messages), dangling, mids, dangling_msg, leaf_id, es.active_model(chain)
    )


# --------------------------------------------------------------------------- the tree


def _node_text(kind: str, payload: Any) -> tuple[str | None, str]:
    if kind == MESSAGE:
        return payload.role, payload.text
    if kind == "compaction":
        return None, str(payload.get("summary") or "")
    if kind == "model_change":
        return None, f"{payload.get('provider', '')}/{payload.get('model', '')}"
    return None, ""


def labels(es: Entries) -> dict[str, str]:
    """The label of each labelled entry (the latest ``label`` mark wins; an
    empty one removes it)."""
    out: dict[str, str] = {}
    for k, p in zip(es.kinds, es.payloads):
        if k == "label":
            target, name = p.get("target_id"), p.get("label")
            if isinstance(target, str):
                if name:
                    out[target] = str(name)
                else:
                    out.pop(target, None)
    return out


def leaves(es: Entries) -> list[str]:
    """The entries (not marks) that no entry continues, oldest first."""
    parents = {p for k, p in zip(es.kinds, es.parents) if k not in MARK_TYPES}
    return [eid for k, eid in zip(es.kinds, es.ids) if k not in MARK_TYPES and eid not in parents]


def tree(es: Entries, where: str, current: str | None = None) -> list[TreeNode]:
    """Every entry but the marks, depth first (children oldest first).
    ``depth`` counts the branch points above a node, not its ancestors, so a
    long conversation does not drift right.  ``current`` defaults to the
    leaf of the last entry."""
    names = labels(es)
    children: dict[str | None, list[int]] = {}
    for i, (k, pid) in enumerate(zip(es.kinds, es.parents)):
        if k not in MARK_TYPES:
            children.setdefault(pid, []).append(i)
    path = set(es.chain(where, current))
    if current is None:
        chain = es.chain(where)
        current = es.ids[chain[-1]] if chain else None
    out: list[TreeNode] = []
    stack: list[tuple[int, int]] = [(i, 0) for i in reversed(children.get(None, []))]
    while stack:
        i, depth = stack.pop()
        eid = es.ids[i]
        kids = children.get(eid, [])
        role, text = _node_text(es.kinds[i], es.payloads[i])
        out.append(
            TreeNode(
                eid,
                es.parents[i],
                depth,
                es.kinds[i],
                role,
                text,
                names.get(eid),
                len(kids),
                i in path,
                eid == current,
            )
        )
        d = depth + 1 if len(kids) > 1 else depth
        stack.extend((c, d) for c in reversed(kids))
    return out


class TreeOps:
    """The tree operations of a store, over two primitives the store has:
    ``_all_entries()`` (every entry, for a tree operation) and
    ``_append_entries(payloads) -> ids`` (one atomic batch chained onto the
    current leaf), plus ``_leaf`` (the current leaf's id) and ``_where``."""

    _where: str

    def _all_entries(self) -> Entries:
        raise NotImplementedError

    def _append_entries(self, payloads: list[dict[str, Any]]) -> list[str]:
        raise NotImplementedError

    @property
    def _leaf(self) -> str | None:
        raise NotImplementedError

    @property
    def leaf_id(self) -> str | None:
        """The entry the next append chains onto (``None``: the root)."""
        return self._leaf

    def _has_node(self, eid: str) -> bool | None:
        """Whether ``eid`` is an entry that is not a mark, if the store knows
        without reading (None: read the entries)."""
        b = getattr(self, "_b", None)
        return b.is_node(eid) if b is not None else None

    def _check_id(self, eid: str) -> None:
        known = self._has_node(eid)
        if known is None:
            self._check_node(self._all_entries(), eid)
        elif not known:
            raise SessionError(f"{self._where}: no entry {eid!r} (or it is a mark, not a node)")

    def _check_node(self, es: Entries, eid: str) -> int:
        i = es.find(eid, self._where)
        if es.kinds[i] in MARK_TYPES:
            raise SessionError(f"{self._where}: entry {eid!r} is a {es.kinds[i]} mark, not a node")
        return i

    def set_leaf(self, entry_id: str | None) -> None:
        """Continue from ``entry_id`` (``None``: from the start): the next
        append chains onto it.  Recorded in the store (a ``leaf`` mark), so a
        resume continues there.  Nothing is deleted."""
        if entry_id is not None:
            self._check_id(entry_id)
        if entry_id != self._leaf:
            self._append_entries([{"type": "leaf", "parent_id": entry_id}])

    def branch_from(self, entry_id: str) -> LoadedSession:
        """Branch at ``entry_id``.  A user prompt: the conversation before it
        is loaded and its text returned as ``dangling_user``, to edit; the
        next prompt becomes its sibling.  Any other entry: continue from it.
        Returns what ``load_conversation()`` returns afterwards."""
        es = self._all_entries()
        i = self._check_node(es, entry_id)
        payload = es.payloads[i]
        prompt = es.kinds[i] == MESSAGE and is_prompt(payload)
        target = es.parents[i] if prompt else entry_id
        if target != self._leaf:
            self._append_entries([{"type": "leaf", "parent_id": target}])
        loaded = self.load_conversation()
        if prompt:
            loaded.dangling_user, loaded.dangling_message = payload.text, payload
        return loaded

    def label(self, entry_id: str | None, name: str | None) -> str:
        """Name ``entry_id`` (default: the current leaf); ``name`` None or
        empty removes its label."""
        target = entry_id if entry_id is not None else self._leaf
        if target is None:
            raise SessionError(f"{self._where}: nothing to label (the session is empty)")
        self._check_id(target)
        return self._append_entries(
            [{"type": "label", "target_id": target, "label": name or None}]
        )[0]

    def append_permission(self, record: Mapping[str, Any]) -> str:
        """Record one permission decision (``{tool, tool_use_id, decision,
        by, mode, rule, reason, subject[, always]}``, panto.policy) as a
        ``permission`` mark on the current entry."""
        payload = {k: v for k, v in record.items() if k not in ("type", "id", "parent_id")}
        return self._append_entries([{"type": "permission", **payload}])[0]

    def permission_records(self) -> list[dict[str, Any]]:
        """Every recorded permission decision, oldest first."""
        es = self._all_entries()
        return [
            {k: v for k, v in p.items() if k not in ("type", "parent_id")}
            for k, p in zip(es.kinds, es.payloads)
            if k == "permission" and isinstance(p, Mapping)
        ]

    def leaves(self) -> list[str]:
        """The ends of every branch, oldest first."""
        return leaves(self._all_entries())

    def labels(self) -> dict[str, str]:
        return labels(self._all_entries())

    def tree(self) -> list[TreeNode]:
        """The session's tree (see ``TreeNode``), the current leaf marked."""
        return tree(self._all_entries(), self._where, self._leaf)

    def load_conversation(self, leaf: str | None = None) -> LoadedSession:
        raise NotImplementedError
