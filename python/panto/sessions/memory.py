"""``MemoryStore``: entries in a list (tests, embedders that persist elsewhere).

It lives apart from ``base`` because it reads through ``context``, which
builds on ``base``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..conversation import Message
from .base import (
    Builder,
    LoadedSession,
    ModelRef,
    SystemMode,
    compaction_payload,
    message_payloads,
    new_session_id,
)
from .context import Entries, TreeOps, build_context, entries_of

__all__ = ["MemoryStore"]


class MemoryStore(TreeOps):
    """Keeps entries in ``self.entries`` (the same dicts a JSONL file holds).
    For tests and for embedders that persist by other means."""

    _where = "<memory>"

    def __init__(self, session_id: str | None = None) -> None:
        self._b = Builder(session_id or new_session_id())
        self.entries: list[dict[str, Any]] = []

    @property
    def session_id(self) -> str:
        return self._b.session_id

    @property
    def active_model(self) -> ModelRef | None:
        return self._b.model

    @property
    def _leaf(self) -> str | None:
        return self._b.leaf

    def _append_entries(self, payloads: list[dict[str, Any]]) -> list[str]:
        entries = self._b.entries(payloads)
        self.entries.extend(entries)
        self._b.leaf = self._b.leaf_after(entries)
        return [e["id"] for e in entries]

    def _all_entries(self) -> Entries:
        return entries_of(self.entries, self._where)

    def append_messages(
        self, messages: Sequence[Message], *, system_mode: SystemMode = "append"
    ) -> list[str]:
        return self._append_entries(message_payloads(messages, system_mode))

    def append_model_change(self, provider: str, model: str) -> str:
        eid = self._append_entries([{"type": "model_change", "provider": provider, "model": model}])
        self._b.model = ModelRef(provider, model)
        return eid[0]

    def append_compaction(self, summary: str, first_kept_id: str | None, tokens_before: int) -> str:
        self._b.check_known(first_kept_id, "compaction: unknown first_kept_id")
        return self._append_entries([compaction_payload(summary, first_kept_id, tokens_before)])[0]

    def load_conversation(self, leaf: str | None = None) -> LoadedSession:
        return build_context(self._all_entries(), self._where, leaf)

    def close(self) -> None:
        pass
