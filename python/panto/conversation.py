"""panto's own conversation model.

Provider wire formats are mapped to and from these types; nothing outside
``panto.providers`` sees a provider's JSON.  Blocks and messages are frozen:
a conversation grows by appending, it is never edited in place.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Union

__all__ = [
    "STOP_REASONS",
    "Block",
    "Conversation",
    "Image",
    "Message",
    "RedactedThinking",
    "Role",
    "ServerBlock",
    "Text",
    "Thinking",
    "ToolResultBlock",
    "ToolUse",
    "Usage",
    "compaction_summary_message",
    "fast_message_from_dict",
    "message_from_dict",
    "unanswered_tool_uses",
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
    """Text.  ``citations`` holds the provider's citation objects (Anthropic
    ``citations_delta`` / ``citations``; web search results, documents), kept
    so they can be shown and sent back."""

    text: str
    citations: tuple[dict[str, Any], ...] = ()


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
        """Parsed arguments; arguments that are not a JSON object, or are
        nested deeper than ``MAX_INPUT_DEPTH``, are kept as ``raw_input``
        (``input_problem`` says which)."""
        try:
            value = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return cls(id, name, {}, arguments)
        if not isinstance(value, dict) or _deeper_than(value, MAX_INPUT_DEPTH):
            return cls(id, name, {}, arguments)
        return cls(id, name, value)

    def input_problem(self) -> str | None:
        """Why ``raw_input`` could not be the call's input (None: no raw_input)."""
        if self.raw_input is None:
            return None
        try:
            value = json.loads(self.raw_input)
        except RecursionError:
            return f"nested more than {MAX_INPUT_DEPTH} levels deep"
        except ValueError:
            return "not a JSON object"
        if isinstance(value, dict) and _deeper_than(value, MAX_INPUT_DEPTH):
            return f"nested more than {MAX_INPUT_DEPTH} levels deep"
        return "not a JSON object"


#: Tool arguments nested deeper than this are refused (an error result):
#: every later walk of them (conversion to Lua, session files, requests)
#: would otherwise risk Python's recursion limit.
MAX_INPUT_DEPTH = 100


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether JSON ``value`` nests objects/arrays more than ``limit`` deep
    (iteratively: no recursion on hostile input)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        v, depth = stack.pop()
        if depth > limit:
            return True
        children = v.values() if isinstance(v, dict) else v
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


@dataclass(frozen=True, slots=True)
class ServerBlock:
    """A block panto does not model, kept opaque as the provider's complete
    JSON object: Anthropic ``server_tool_use``, ``web_search_tool_result``,
    ``web_fetch_tool_result``, code execution results, ``mcp_tool_use`` /
    ``mcp_tool_result``, ``container_upload``, ``compaction`` and any future
    type.  The API needs them back on the next request, so the Anthropic wire
    sends ``raw_json`` back unchanged; other wires drop them."""

    raw_json: str

    @property
    def type(self) -> str:
        """The block's ``type`` member ("" when absent)."""
        t = self.value().get("type")
        return t if isinstance(t, str) else ""

    def value(self) -> dict[str, Any]:
        """The parsed JSON object (a new dict each call)."""
        v = json.loads(self.raw_json)
        return v if isinstance(v, dict) else {}


@dataclass(frozen=True, slots=True)
class Image:
    """An image in a user message or a tool result: ``media_type``
    (``image/png``, ``image/jpeg``, ``image/gif``, ``image/webp``) and the
    bytes as base64 (``data_b64``), which is also how sessions store it (in
    the entry)."""

    media_type: str
    data_b64: str


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    """A tool call's result: its text and, for tools that return them (the
    ``read`` tool on an image file), ``images`` sent with it."""

    tool_use_id: str
    content: str
    is_error: bool = False
    images: tuple[Image, ...] = ()

    def __post_init__(self) -> None:
        if not isinstance(self.images, tuple):
            object.__setattr__(self, "images", tuple(self.images))


Block = Union[Text, Thinking, RedactedThinking, ToolUse, ToolResultBlock, Image, ServerBlock]  # noqa: UP007 - runtime alias


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
        if b.citations:
            return {"type": "text", "text": b.text, "citations": list(b.citations)}
        return {"type": "text", "text": b.text}
    if isinstance(b, ServerBlock):
        # the JSON text itself, so a stored conversation re-sends it exactly
        return {"type": "server", "raw_json": b.raw_json}
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
        d = {
            "type": "tool_result",
            "tool_use_id": b.tool_use_id,
            "content": b.content,
            "is_error": b.is_error,
        }
        if b.images:  # absent when there are none: older entries stay as they were
            d["images"] = [block_to_dict(i) for i in b.images]
        return d
    if isinstance(b, Image):
        return {"type": "image", "media_type": b.media_type, "data": b.data_b64}
    raise TypeError(f"not a content block: {b!r}")


def block_from_dict(d: dict[str, Any]) -> Block:
    kind = d.get("type")
    if kind == "text":
        return Text(d["text"], tuple(d.get("citations") or ()))
    if kind == "server":
        return ServerBlock(d["raw_json"])
    if kind == "thinking":
        return Thinking(d["text"], d.get("signature", ""))
    if kind == "redacted_thinking":
        return RedactedThinking(d["data"])
    if kind == "tool_use":
        return ToolUse(d["id"], d["name"], d.get("input", {}), d.get("raw_input"))
    if kind == "tool_result":
        return ToolResultBlock(
            d["tool_use_id"],
            d["content"],
            bool(d.get("is_error", False)),
            tuple(_image_from_dict(i) for i in d.get("images") or ()),
        )
    if kind == "image":
        return _image_from_dict(d)
    raise ValueError(f"unknown content block type {kind!r}")


def _image_from_dict(d: dict[str, Any]) -> Image:
    if d.get("type") != "image":
        raise ValueError(f"not an image block: type {d.get('type')!r}")
    return Image(d["media_type"], d["data"])


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


# --------------------------------------------------------------------------- helpers

#: What a compaction entry turns into when the context is rebuilt.
COMPACTION_SUMMARY_PREFIX = (
    "The conversation before this point was compacted into the following summary "
    "of the earlier conversation:\n\n<summary>\n"
)
COMPACTION_SUMMARY_SUFFIX = "\n</summary>"


def compaction_summary_message(summary: str) -> Message:
    """The user message that stands for everything a compaction summarized
    (in the live conversation and when a session is loaded)."""
    return Message("user", (Text(COMPACTION_SUMMARY_PREFIX + summary + COMPACTION_SUMMARY_SUFFIX),))


def unanswered_tool_uses(messages: Iterable[Message]) -> list[ToolUse]:
    """Tool calls of the last assistant message that have no result after it
    (a crash or cancel during a tool call).  Providers reject such a
    conversation; the agent answers them (e.g. with ``is_error`` results)."""
    msgs = list(messages)
    for i in range(len(msgs) - 1, -1, -1):
        if msgs[i].role == "assistant":
            answered = {
                b.tool_use_id
                for m in msgs[i + 1 :]
                for b in m.content
                if isinstance(b, ToolResultBlock)
            }
            return [u for u in msgs[i].tool_uses if u.id not in answered]
    return []


# Fast construction.  A frozen dataclass's __init__ sets each field through
# object.__setattr__; loading a session builds hundreds of thousands of these.
# The converter below fills the slots through their descriptors instead.  It
# must stay next to the classes: when a class gains a slot, _SLOTS no longer
# matches and the fast path switches itself off (tests assert it is on).

_SLOTS: dict[type, tuple[str, ...]] = {
    Message: ("role", "content", "usage", "stop_reason", "provider", "model", "error"),
    Usage: (
        "input_tokens",
        "cache_read_tokens",
        "cache_write_tokens",
        "output_tokens",
        "reasoning_tokens",
    ),
    Text: ("text", "citations"),
    Thinking: ("text", "signature"),
    RedactedThinking: ("data",),
    ToolUse: ("id", "name", "input", "raw_input"),
    ToolResultBlock: ("tool_use_id", "content", "is_error", "images"),
    Image: ("media_type", "data_b64"),
    ServerBlock: ("raw_json",),
}

# One object for each of the few distinct roles, stop reasons, models and tool
# names: a loaded session keeps less memory.  Loaders clear it when it grows.
SHARED_STRINGS: dict[str, str] = {}


def _make_fast_from_dict() -> Callable[[dict[str, Any]], Message] | None:
    """A converter equal to Message.from_dict on well-formed input that
    raises (KeyError, TypeError, ValueError, AttributeError) on anything
    else, or None when the classes do not have the expected slots."""
    if any(getattr(cls, "__slots__", None) != slots for cls, slots in _SLOTS.items()):
        return None
    new = object.__new__
    shared = SHARED_STRINGS.setdefault

    def setters(cls: type) -> list[Callable[[Any, Any], None]]:
        return [cls.__dict__[name].__set__ for name in _SLOTS[cls]]

    m_role, m_content, m_usage, m_stop, m_prov, m_model, m_err = setters(Message)
    u_in, u_cr, u_cw, u_out, u_reas = setters(Usage)
    t_text, t_cites = setters(Text)
    (sb_raw,) = setters(ServerBlock)
    th_text, th_sig = setters(Thinking)
    (r_data,) = setters(RedactedThinking)
    tu_id, tu_name, tu_input, tu_raw = setters(ToolUse)
    tr_id, tr_content, tr_err, tr_images = setters(ToolResultBlock)
    im_type, im_data = setters(Image)

    def text(b: dict[str, Any]) -> Text:
        t = b["text"]
        if type(t) is not str:
            raise TypeError
        o = new(Text)
        t_text(o, t)
        c = b.get("citations")
        t_cites(o, tuple(c) if c else ())
        return o

    def server(b: dict[str, Any]) -> ServerBlock:
        raw = b["raw_json"]
        if type(raw) is not str:
            raise TypeError
        o = new(ServerBlock)
        sb_raw(o, raw)
        return o

    def thinking(b: dict[str, Any]) -> Thinking:
        t = b["text"]
        sig = b.get("signature", "")
        if type(t) is not str or type(sig) is not str:
            raise TypeError
        o = new(Thinking)
        th_text(o, t)
        th_sig(o, sig)
        return o

    def redacted(b: dict[str, Any]) -> RedactedThinking:
        t = b["data"]
        if type(t) is not str:
            raise TypeError
        o = new(RedactedThinking)
        r_data(o, t)
        return o

    def tool_use(b: dict[str, Any]) -> ToolUse:
        i, n, inp, raw = b["id"], b["name"], b.get("input", {}), b.get("raw_input")
        if type(i) is not str or type(n) is not str or type(inp) is not dict:
            raise TypeError
        if raw is not None and type(raw) is not str:
            raise TypeError
        o = new(ToolUse)
        tu_id(o, i)
        tu_name(o, shared(n, n))
        tu_input(o, inp)
        tu_raw(o, raw)
        return o

    def image(b: dict[str, Any]) -> Image:
        mt, data = b["media_type"], b["data"]
        if b["type"] != "image" or type(mt) is not str or type(data) is not str:
            raise TypeError
        o = new(Image)
        im_type(o, shared(mt, mt))
        im_data(o, data)
        return o

    def tool_result(b: dict[str, Any]) -> ToolResultBlock:
        i, c, err = b["tool_use_id"], b["content"], b.get("is_error", False)
        if type(i) is not str or type(c) is not str or type(err) is not bool:
            raise TypeError
        o = new(ToolResultBlock)
        tr_id(o, i)
        tr_content(o, c)
        tr_err(o, err)
        ims = b.get("images")
        tr_images(o, tuple([image(x) for x in ims]) if ims else ())
        return o

    blocks: dict[Any, Callable[[dict[str, Any]], Any]] = {
        "text": text,
        "thinking": thinking,
        "redacted_thinking": redacted,
        "tool_use": tool_use,
        "tool_result": tool_result,
        "image": image,
        "server": server,
    }

    roles = frozenset(("system", "user", "assistant", "tool"))

    def convert(d: dict[str, Any]) -> Message:
        o = new(Message)
        r = d["role"]
        if r not in roles:  # an unknown role (or not a string): the careful path
            raise TypeError
        m_role(o, shared(r, r))
        c = d["content"]
        if len(c) == 1:  # most messages: skip the comprehension's frame
            b = c[0]
            m_content(o, (blocks[b["type"]](b),))
        else:
            m_content(o, tuple([blocks[b["type"]](b) for b in c]))
        u = d.get("usage")
        if u is None:
            m_usage(o, None)
        else:
            g = u.get
            a, cr, cw, out, reas = (
                g("input_tokens", 0),
                g("cache_read_tokens", 0),
                g("cache_write_tokens", 0),
                g("output_tokens", 0),
                g("reasoning_tokens", 0),
            )
            if not (
                type(a) is int
                and type(cr) is int
                and type(cw) is int
                and type(out) is int
                and type(reas) is int
            ):
                raise TypeError
            uo = new(Usage)
            u_in(uo, a)
            u_cr(uo, cr)
            u_cw(uo, cw)
            u_out(uo, out)
            u_reas(uo, reas)
            m_usage(o, uo)
        g = d.get
        stop, prov, model = g("stop_reason"), g("provider"), g("model")
        if stop is not None:
            if type(stop) is not str:
                raise TypeError
            stop = shared(stop, stop)
        if prov is not None:
            if type(prov) is not str:
                raise TypeError
            prov = shared(prov, prov)
        if model is not None:
            if type(model) is not str:
                raise TypeError
            model = shared(model, model)
        m_stop(o, stop)
        m_prov(o, prov)
        m_model(o, model)
        m_err(o, d.get("error"))
        return o

    return convert


#: ``Message.from_dict`` for well-formed input, about 3x faster; raises
#: (KeyError, TypeError, ValueError, AttributeError) on anything unusual,
#: where the caller falls back to ``Message.from_dict`` (which owns the format).
fast_message_from_dict: Callable[[dict[str, Any]], Message] = (
    _make_fast_from_dict() or Message.from_dict
)


def message_from_dict(d: dict[str, Any]) -> Message:
    """``Message.from_dict``, fast for well-formed input."""
    try:
        return fast_message_from_dict(d)
    except (KeyError, TypeError, ValueError, AttributeError):
        return Message.from_dict(d)  # the reference; raises on bad data
