"""The agent loop: ``Agent`` (``agent.py``) owns a conversation, its tools
and its session store and runs turns; a turn is an I/O-free state machine
(``turn.py``) driven by the sync and async streams (``stream.py``), with the
tool dispatch (``dispatch.py``), the hook chain (``hooks.py``) and
compaction (``compaction.py``) beside it.  ``Session`` (``session.py``) is
the one writer: prompts queue through it and turns run one after another."""

from __future__ import annotations

from ..hooks import HOOK_EVENTS, AgentHooks, ToolCallDecision
from .agent import Agent, MessageStore
from .session import Session
from .stream import AsyncStream, Stream

__all__ = [
    "HOOK_EVENTS",
    "Agent",
    "AgentHooks",
    "AsyncStream",
    "MessageStore",
    "Session",
    "Stream",
    "ToolCallDecision",
]
