"""Session persistence: the ``SessionStore`` seam and its backends.

See ``panto.sessions.store`` for the details and ``docs/sessions.md`` for the
file format.
"""

from __future__ import annotations

from .store import (
    FORMAT_VERSION,
    Durability,
    FSJSONLStore,
    LoadedSession,
    MemoryStore,
    ModelRef,
    NullStore,
    SessionInfo,
    SessionStore,
    SessionWarning,
    compaction_summary_message,
    cwd_slug,
    default_sessions_dir,
    find_most_recent_session,
    list_sessions,
    read_session,
    resolve_session_id,
    unanswered_tool_uses,
)

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
