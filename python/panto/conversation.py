"""panto's own conversation model.

Provider wire formats are mapped to and from these types; nothing outside
``panto.providers`` sees a provider's JSON.  Blocks and messages are frozen:
a conversation grows by appending, it is never edited in place.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union

__all__ = [
    "STOP_REASONS",
    "Block",
    "Conversation",
    "Message",
    "RedactedThinking",
    "Role",
    "Text",
    "Thinking",
    "ToolResultBlock",
    "ToolUse",
    "Usage",
]

Role = Literal["system", "user", "assistant", "tool"]

#: Normalized stop reasons (the C core's ``panto_stop_reason``).
STOP_REASONS = ("stop", "tool_use", "length", "refusal", "pause", "error", "other")


@dataclass(frozen=True, slots=True)
class Usage:
    """Token counts.  ``input_tokens`` excludes cached tokens;
    ``reasoning_tokens`` is part of ``output_tokens``."""

    input_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            self.output_tokens + other.output_tokens,
            self.reasoning_tokens + other.reasoning_tokens,
        )

    @property
    def total_tokens(self) -> int:
        return (
            self.input_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + self.output_tokens
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "reasoning_tokens": self.reasoning_tokens,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Usage:
        return cls(**{k: int(d.get(k, 0)) for k in cls.__slots__})  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Text:
    text: str


@dataclass(frozen=True, slots=True)
class Thinking:
    """Model reasoning.  ``signature`` must be sent back unchanged."""

    text: str
    signature: str = ""


@dataclass(frozen=True, slots=True)
class RedactedThinking:
    """Encrypted reasoning (Anthropic); sent back unchanged."""

    data: str


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A tool call.  When the model's arguments were not a JSON object,
    ``input`` is empty and ``raw_input`` keeps what was sent, so the agent
    can answer with an error instead of failing the turn."""

    id: str
    name: str
    input: dict[str, Any] = field(default_factory=dict)
    raw_input: str | None = None

    @classmethod
    def from_json(cls, id: str, name: str, arguments: str) -> ToolUse:
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            return cls(id, name, {}, arguments)
        if not isinstance(value, dict):
            return cls(id, name, {}, arguments)
        return cls(id, name, value)


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    tool_use_id: str
    content: str
    is_error: bool = False


Block = Union[Text, Thinking, RedactedThinking, ToolUse, ToolResultBlock]  # noqa: UP007 - runtime alias


@dataclass(frozen=True, slots=True)
class Message:
    """One message.  ``content`` is a tuple of blocks (any iterable is
    accepted and converted).  Assistant messages carry ``usage``,
    ``stop_reason``, ``provider`` and ``model``; ``error`` is set on a
    message cut short by a failure."""

    role: Role
    content: tuple[Block, ...] = ()
    usage: Usage | None = None
    stop_reason: str | None = None
    provider: str | None = None
    model: str | None = None
    error: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.content, tuple):
            object.__setattr__(self, "content", tuple(self.content))

    @classmethod
    def user(cls, text: str) -> Message:
        return cls("user", (Text(text),))

    @property
    def text(self) -> str:
        """The concatenated text blocks."""
        return "".join(b.text for b in self.content if isinstance(b, Text))

    @property
    def tool_uses(self) -> list[ToolUse]:
        return [b for b in self.content if isinstance(b, ToolUse)]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "role": self.role,
            "content": [block_to_dict(b) for b in self.content],
        }
        if self.usage is not None:
            d["usage"] = self.usage.to_dict()
        for key in ("stop_reason", "provider", "model", "error"):
            value = getattr(self, key)
            if value is not None:
                d[key] = value
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Message:
        usage = d.get("usage")
        return cls(
            d["role"],
            tuple(block_from_dict(b) for b in d.get("content", ())),
            Usage.from_dict(usage) if usage is not None else None,
            d.get("stop_reason"),
            d.get("provider"),
            d.get("model"),
            d.get("error"),
        )


def block_to_dict(b: Block) -> dict[str, Any]:
    if isinstance(b, Text):
        return {"type": "text", "text": b.text}
    if isinstance(b, Thinking):
        return {"type": "thinking", "text": b.text, "signature": b.signature}
    if isinstance(b, RedactedThinking):
        return {"type": "redacted_thinking", "data": b.data}
    if isinstance(b, ToolUse):
        d: dict[str, Any] = {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
        if b.raw_input is not None:
            d["raw_input"] = b.raw_input
        return d
    if isinstance(b, ToolResultBlock):
        return {
            "type": "tool_result",
            "tool_use_id": b.tool_use_id,
            "content": b.content,
            "is_error": b.is_error,
        }
    raise TypeError(f"not a content block: {b!r}")


def block_from_dict(d: dict[str, Any]) -> Block:
    kind = d.get("type")
    if kind == "text":
        return Text(d["text"])
    if kind == "thinking":
        return Thinking(d["text"], d.get("signature", ""))
    if kind == "redacted_thinking":
        return RedactedThinking(d["data"])
    if kind == "tool_use":
        return ToolUse(d["id"], d["name"], d.get("input", {}), d.get("raw_input"))
    if kind == "tool_result":
        return ToolResultBlock(d["tool_use_id"], d["content"], bool(d.get("is_error", False)))
    raise ValueError(f"unknown content block type {kind!r}")


class Conversation:
    """An ordered list of messages.  Append-only from the agent's side."""

    __slots__ = ("_messages",)

    def __init__(self, messages: Iterable[Message] = ()) -> None:
        self._messages: list[Message] = list(messages)

    def append(self, message: Message) -> None:
        self._messages.append(message)

    def extend(self, messages: Iterable[Message]) -> None:
        self._messages.extend(messages)

    def clear(self) -> None:
        self._messages.clear()

    @property
    def messages(self) -> Sequence[Message]:
        return tuple(self._messages)

    def __iter__(self) -> Iterator[Message]:
        return iter(tuple(self._messages))

    def __len__(self) -> int:
        return len(self._messages)

    def __getitem__(self, i: int) -> Message:
        return self._messages[i]

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Conversation) and self._messages == other._messages

    def __repr__(self) -> str:
        return f"Conversation({len(self._messages)} messages)"

    def copy(self) -> Conversation:
        return Conversation(self._messages)
