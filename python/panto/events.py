"""Events of a decoded stream and of an agent turn.

The first six mirror the C core's ``panto_event`` kinds; ``ToolCallStart``,
``ToolResult``, ``ProviderRetry``, ``CompactionStart`` and ``CompactionEnd``
come from the agent loop; ``SSEEvent`` from the raw ``sse`` wire.  All are frozen slotted dataclasses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Union

from .conversation import Block, Image, Message, ToolUse, Usage

__all__ = [
    "BlockComplete",
    "BlockKind",
    "BlockStart",
    "CompactionEnd",
    "CompactionStart",
    "ContentDelta",
    "Event",
    "MessageComplete",
    "MessageStart",
    "ProviderRetry",
    "SSEEvent",
    "ToolCallStart",
    "ToolDetails",
    "ToolResult",
    "event_to_dict",
]

BlockKind = Literal["text", "thinking", "redacted_thinking", "tool_use", "server"]


@dataclass(frozen=True, slots=True)
class MessageStart:
    """A message begins: its id, model and the usage known so far."""

    id: str
    model: str
    usage: Usage


@dataclass(frozen=True, slots=True)
class BlockStart:
    """A content block begins at ``index`` (its kind)."""

    index: int
    kind: BlockKind


@dataclass(frozen=True, slots=True)
class ToolDetails:
    """The id and name of the tool_use block at ``index``."""

    index: int
    id: str
    name: str


@dataclass(frozen=True, slots=True)
class ContentDelta:
    """A piece of a block: text, thinking, or a raw JSON fragment of a tool
    call's arguments (not valid JSON on its own)."""

    index: int
    kind: BlockKind
    text: str


@dataclass(frozen=True, slots=True)
class BlockComplete:
    """A finished block, assembled by the core: ``Text``, ``Thinking`` (with
    its signature), ``RedactedThinking`` or ``ToolUse``."""

    index: int
    block: Block


@dataclass(frozen=True, slots=True)
class MessageComplete:
    """The assembled message.  ``final`` is True on the last event of a
    stream or turn; between tool rounds of a turn it is False."""

    message: Message
    stop_reason: str
    usage: Usage
    final: bool = True
    raw_stop_reason: str = ""


@dataclass(frozen=True, slots=True)
class ToolCallStart:
    """A tool call is dispatched."""

    call: ToolUse


@dataclass(frozen=True, slots=True)
class ToolResult:
    """A tool call's result; ``images`` are those the tool returned (sent
    to the model with the text)."""

    call: ToolUse
    content: str
    is_error: bool = False
    images: tuple[Image, ...] = ()


@dataclass(frozen=True, slots=True)
class ProviderRetry:
    """The request failed in a retryable way; panto waits ``delay`` seconds
    and sends it again (``attempt`` counts from 1)."""

    attempt: int
    delay: float
    reason: str
    status: int | None = None


@dataclass(frozen=True, slots=True)
class CompactionStart:
    """Auto-compaction begins (before a provider round of a turn): the
    context, ``tokens`` (estimated), reached the limit ``limit`` of the
    model's context ``window`` (``[compaction] threshold`` and
    ``reserve_tokens``).  The model is asked for a summary of the older
    messages; a ``CompactionEnd`` follows (unless the turn is cancelled,
    which leaves the conversation and the session as they were)."""

    tokens: int
    limit: int
    window: int


@dataclass(frozen=True, slots=True)
class CompactionEnd:
    """Auto-compaction ended: ``messages`` older messages became a summary,
    the context went from ``tokens_before`` to about ``tokens_after`` tokens,
    and the session recorded a ``compaction`` entry (``entry_id``; the full
    history stays in the session: branch before it to undo).  ``error`` is
    set when it failed: then nothing changed and the turn goes on with the
    full context."""

    tokens_before: int
    tokens_after: int
    messages: int
    entry_id: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class SSEEvent:
    """One raw server-sent event (the ``sse`` wire)."""

    event: str
    data: str
    id: str
    retry: int | None


Event = Union[  # noqa: UP007 - a runtime alias
    MessageStart,
    BlockStart,
    ToolDetails,
    ContentDelta,
    BlockComplete,
    MessageComplete,
    ToolCallStart,
    ToolResult,
    ProviderRetry,
    CompactionStart,
    CompactionEnd,
    SSEEvent,
]

_TYPE_NAMES = {
    MessageStart: "message_start",
    BlockStart: "block_start",
    ToolDetails: "tool_details",
    ContentDelta: "content_delta",
    BlockComplete: "block_complete",
    MessageComplete: "message_complete",
    ToolCallStart: "tool_call_start",
    ToolResult: "tool_result",
    ProviderRetry: "provider_retry",
    CompactionStart: "compaction_start",
    CompactionEnd: "compaction_end",
    SSEEvent: "sse",
}


def event_to_dict(ev: Event) -> dict[str, Any]:
    """A JSON-ready dict: ``{"type": "content_delta", ...fields}``.  Used by
    ``panto decode``, ``--output-format stream-json`` and the fixtures."""
    from .conversation import block_to_dict

    d: dict[str, Any] = {"type": _TYPE_NAMES[type(ev)]}
    for name in ev.__slots__:  # type: ignore[union-attr]
        value = getattr(ev, name)
        if isinstance(value, Usage) or isinstance(value, Message):
            value = value.to_dict()
        elif isinstance(value, (ToolUse,)) or name == "block":
            value = block_to_dict(value)
        elif name == "images":  # a tool result's: the session shape, base64 included
            value = [block_to_dict(i) for i in value]
        d[name] = value
    return d
