"""Session persistence: the ``SessionStore`` seam and its backends.

- ``base``: the protocol, ``LoadedSession``, ``ModelRef``, ``TreeNode``, ``NullStore``
- ``memory``: ``MemoryStore``
- ``context``: entries -> conversation (the tree walk, compaction replay), tree operations
- ``fastload``: chunked JSONL scanning
- ``jsonl``: ``FSJSONLStore`` (one file per session; the default)
- ``catalog``: listing, ``--continue`` and ``--resume`` over the session files
- ``sql``, ``sqlite``, ``postgres``: ``SQLiteStore`` and ``PostgresStore`` (imported on first use)
- ``backends``: ``open_backend(config or URL)``: create, open, list, export, import

See ``docs/sessions.md`` for the format and the backends.
"""

from __future__ import annotations

from ..conversation import compaction_summary_message, unanswered_tool_uses
from . import backends, base, catalog, jsonl, memory
from .backends import *  # noqa: F403
from .base import *  # noqa: F403
from .catalog import *  # noqa: F403
from .fastload import FORMAT_VERSION
from .jsonl import *  # noqa: F403
from .memory import *  # noqa: F403

__all__ = [
    *base.__all__,
    *memory.__all__,
    *jsonl.__all__,
    *catalog.__all__,
    *backends.__all__,
    "PostgresStore",  # noqa: F405 (lazy: __getattr__)
    "SQLiteStore",  # noqa: F405
    "FORMAT_VERSION",
    "compaction_summary_message",
    "unanswered_tool_uses",
]


def __getattr__(name: str) -> object:
    # the database stores load sqlite3 / psycopg: only when asked for
    if name == "SQLiteStore":
        from .sqlite import SQLiteStore

        return SQLiteStore
    if name == "PostgresStore":
        from .postgres import PostgresStore

        return PostgresStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
