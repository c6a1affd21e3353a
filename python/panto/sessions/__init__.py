"""Session persistence: the ``SessionStore`` seam and its backends.

- ``base``: the protocol, ``LoadedSession``, ``ModelRef``, ``TreeNode``, ``NullStore``
- ``memory``: ``MemoryStore``
- ``context``: entries -> conversation (the tree walk, compaction replay), tree operations
- ``fastload``: chunked JSONL scanning
- ``jsonl``: ``FSJSONLStore`` (one file per session; the default)
- ``catalog``: listing, ``--continue`` and ``--resume`` over the session files

See ``docs/sessions.md`` for the format and the backends.
"""

from __future__ import annotations

from ..conversation import compaction_summary_message, unanswered_tool_uses
from . import base, catalog, jsonl, memory
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
    "FORMAT_VERSION",
    "compaction_summary_message",
    "unanswered_tool_uses",
]
