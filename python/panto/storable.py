"""What enters a conversation must be storable on every session store and
sendable to every provider, and load again as it was stored.

Two kinds of text are not:

- **NUL** (``\\x00``): PostgreSQL's ``text`` and ``jsonb`` reject it, and the
  std tools produce it (``cat`` of a binary, ``find -print0``);
- **lone surrogates** (``\\ud800``-``\\udfff``): not Unicode at all.  They come
  from a model's JSON (``"\\ud800"`` escapes) and from bytes that were not
  UTF-8 (an argv or a pipe decoded with ``surrogateescape``); UTF-8 cannot
  encode them, so neither a request nor PostgreSQL's ``jsonb`` takes them.

:func:`clean_message` replaces them visibly -- NUL by ``␀`` (U+2400), a lone
surrogate by ``�`` (U+FFFD) -- before a message enters the conversation
(the agent also adds a note to a tool result that was changed:
:func:`clean_note`).  The session stores apply it too, so what an embedder
appends directly is stored the same way everywhere.

:func:`lenient_message_from_dict` reads a stored message that the strict
reader refuses (a block type or a role this panto does not know): each
unreadable part becomes a visible placeholder, so a session with such an
entry still loads (with a warning) instead of failing every resume.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from .conversation import (
    Block,
    Image,
    Message,
    RedactedThinking,
    ServerBlock,
    Text,
    Thinking,
    ToolResultBlock,
    ToolUse,
    Usage,
    block_from_dict,
)

__all__ = [
    "NUL_SHOWN_AS",
    "Cleaned",
    "clean_message",
    "clean_note",
    "clean_text",
    "clean_value",
    "lenient_message_from_dict",
]

#: what a NUL character becomes (U+2400 SYMBOL FOR NULL)
NUL_SHOWN_AS = "\u2400"
#: what a lone surrogate becomes (U+FFFD REPLACEMENT CHARACTER)
BAD_SHOWN_AS = "\ufffd"

KNOWN_ROLES = ("system", "user", "assistant", "tool")


@dataclasses.dataclass
class Cleaned:
    """How many characters a clean-up replaced."""

    nul: int = 0
    bad: int = 0

    def __bool__(self) -> bool:
        return bool(self.nul or self.bad)


def clean_text(s: str, counts: Cleaned | None = None) -> str:
    """``s`` with NUL shown as ``␀`` and lone surrogates as ``�`` (the same
    object when it has neither; ``counts`` adds up what was replaced)."""
    if s.isascii():
        if "\x00" not in s:
            return s
    else:
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:
            fixed = "".join(BAD_SHOWN_AS if "\ud800" <= ch <= "\udfff" else ch for ch in s)
            if counts is not None:
                counts.bad += sum(1 for a, b in zip(s, fixed) if a != b)
            s = fixed
        if "\x00" not in s:
            return s
    if counts is not None:
        counts.nul += s.count("\x00")
    return s.replace("\x00", NUL_SHOWN_AS)


def _needs_cleaning(value: Any) -> bool:
    try:
        raw = json.dumps(value, ensure_ascii=False)
    except (RecursionError, ValueError, TypeError):
        return False  # not ours to judge here (too deep, not JSON)
    if "\\u0000" in raw:
        return True
    try:
        raw.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def clean_value(value: Any, counts: Cleaned | None = None) -> Any:
    """A JSON value (tool arguments) with every string, keys included,
    cleaned by :func:`clean_text`; the same object when nothing changes."""
    if not _needs_cleaning(value):
        return value

    def walk(v: Any) -> Any:
        if isinstance(v, str):
            return clean_text(v, counts)
        if isinstance(v, dict):
            return {clean_text(str(k), counts): walk(x) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x) for x in v]
        return v

    try:
        return walk(value)
    except RecursionError:
        return value


def _clean_block(b: Block, counts: Cleaned) -> Block:
    if isinstance(b, Text):
        t = clean_text(b.text, counts)
        return b if t is b.text else dataclasses.replace(b, text=t)
    if isinstance(b, Thinking):
        t = clean_text(b.text, counts)
        return b if t is b.text else dataclasses.replace(b, text=t)
    if isinstance(b, ToolUse):
        inp = clean_value(b.input, counts)
        raw = clean_text(b.raw_input, counts) if b.raw_input is not None else None
        name = clean_text(b.name, counts)
        if inp is b.input and raw is b.raw_input and name is b.name:
            return b
        return dataclasses.replace(b, input=inp, raw_input=raw, name=name)
    if isinstance(b, ToolResultBlock):
        t = clean_text(b.content, counts)
        return b if t is b.content else dataclasses.replace(b, content=t)
    if isinstance(b, ServerBlock):
        t = clean_text(b.raw_json, counts)
        return b if t is b.raw_json else ServerBlock(t)
    return b  # images and redacted thinking are base64 (ASCII)


def clean_message(m: Message, counts: Cleaned | None = None) -> Message:
    """``m`` with every text field cleaned by :func:`clean_text` (``m``
    itself when it needs nothing)."""
    c = counts if counts is not None else Cleaned()
    content = tuple(_clean_block(b, c) for b in m.content)
    error = clean_text(m.error, c) if m.error is not None else None
    if error is m.error and all(a is b for a, b in zip(content, m.content)):
        return m
    return dataclasses.replace(m, content=content, error=error)


def clean_note(counts: Cleaned) -> str:
    """The note added to a tool result that :func:`clean_text` changed."""
    parts = []
    if counts.nul:
        parts.append(f"{counts.nul} NUL byte(s) are shown as {NUL_SHOWN_AS}")
    if counts.bad:
        parts.append(f"{counts.bad} character(s) that were not valid Unicode as {BAD_SHOWN_AS}")
    return "[panto: " + " and ".join(parts) + "]"


def _placeholder_block(d: Any, exc: BaseException) -> Block:
    kind = d.get("type") if isinstance(d, dict) else type(d).__name__
    note = f"[panto: a {kind!r} block this panto cannot read was left out ({exc})]"
    if isinstance(d, dict) and isinstance(d.get("tool_use_id"), str):
        return ToolResultBlock(d["tool_use_id"], note, True)
    if isinstance(d, dict) and isinstance(d.get("id"), str) and isinstance(d.get("name"), str):
        return ToolUse(d["id"], d["name"], {}, note)  # answered as bad arguments
    return Text(note)


def lenient_message_from_dict(d: Any) -> tuple[Message, str]:
    """A stored message that ``Message.from_dict`` refuses, read as far as
    it goes: an unknown role becomes a user message that names it, an
    unreadable block a placeholder (a tool result keeps its id, so its call
    stays answered).  Returns the message and what was wrong."""
    if not isinstance(d, dict):
        return Message(
            "user", (Text(f"[panto: an unreadable message ({d!r:.80}) was left out]"),)
        ), ("not a message object")
    problems: list[str] = []
    role = d.get("role")
    content = d.get("content")
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    elif not isinstance(content, list):
        problems.append(f"content is {type(content).__name__}")
        content = []
    blocks: list[Block] = []
    for raw in content:
        try:
            b = block_from_dict(raw)
            if isinstance(b, Text) and not isinstance(b.text, str):
                raise TypeError("text is not a string")
            if isinstance(b, ToolResultBlock) and not isinstance(b.content, str):
                raise TypeError("content is not a string")
            blocks.append(b)
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            problems.append(f"block {raw.get('type') if isinstance(raw, dict) else raw!r:.40}")
            blocks.append(_placeholder_block(raw, exc))
    if role not in KNOWN_ROLES:
        problems.append(f"role {role!r}")
        note = f"[panto: a message with role {str(role)[:40]!r} from the session, shown as a user message]"
        blocks = [Text(note), *(b for b in blocks if isinstance(b, (Text, Image)))]
        role = "user"
    elif role == "tool":
        # a tool message holds only results; anything else becomes an error result
        blocks = [b for b in blocks if isinstance(b, ToolResultBlock)]
    elif role != "assistant":
        blocks = [b for b in blocks if not isinstance(b, (ToolUse, Thinking, RedactedThinking))]
    if not blocks:
        why = ", ".join(problems) or "no content"
        blocks = [Text(f"[panto: a message this panto cannot read was left out ({why})]")]
        if role == "tool":
            role = "user"
    usage = d.get("usage")
    try:
        u = Usage.from_dict(usage) if isinstance(usage, dict) else None
    except (KeyError, TypeError, ValueError):
        u = None

    def opt(key: str) -> str | None:
        v = d.get(key)
        return v if isinstance(v, str) else None

    msg = Message(
        role, tuple(blocks), u, opt("stop_reason"), opt("provider"), opt("model"), opt("error")
    )
    return clean_message(msg), ", ".join(problems) or "unreadable fields"
