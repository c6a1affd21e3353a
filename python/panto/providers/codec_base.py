"""What the per-wire codec modules share (``codec_anthropic``,
``codec_openai_chat``): the parsed request, its error, the encoder protocol
and compact JSON.  The face is ``providers/codec.py``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..conversation import Conversation
from ..errors import ProviderError
from ..events import Event
from ..tools import ToolDecl

__all__ = [
    "ParsedRequest",
    "RequestError",
    "StreamEncoder",
    "dumps",
    "require",
    "tool_list",
    "wire_stop",
]


class RequestError(ProviderError):
    """A request body the parser cannot read: the message names the field."""

    def __init__(self, message: str) -> None:
        super().__init__(message, status=400, type="invalid_request_error", retryable=False)


def dumps(obj: Any) -> str:
    """Compact JSON, non-ASCII kept: how the providers write it."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":"))


@dataclass
class ParsedRequest:
    """A provider request body, read back into panto's model."""

    wire: str
    model: str
    conversation: Conversation
    tools: list[ToolDecl] = field(default_factory=list)
    #: the wire's output limit (``max_tokens`` / ``max_completion_tokens``)
    max_tokens: int | None = None
    #: the field it came in (OpenAI-compatible servers take either name)
    max_tokens_field: str = "max_tokens"
    stream: bool = False
    #: every other top-level field, as sent (``thinking``,
    #: ``reasoning_effort``, ``stream_options``, ``temperature``, ...)
    options: dict[str, Any] = field(default_factory=dict)
    #: tool entries that are not function declarations (server tools), as sent
    extra_tools: list[dict[str, Any]] = field(default_factory=list)
    #: Anthropic prompt caching: the ``cache_control`` ttl seen ("5m", "1h")
    cache_ttl: str | None = None


class StreamEncoder(Protocol):
    """Events in, SSE events out, for one response stream."""

    wire: str

    def encode(self, event: Event) -> list[bytes]:
        """The SSE events (one ``bytes`` each) that ``event`` adds; events
        the wire has no place for give ``[]``."""
        ...

    def error(self, type: str, message: str) -> bytes:
        """An in-stream provider error event."""
        ...


def require(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    """``obj[key]`` checked against ``kind``, or a clear RequestError."""
    value = obj.get(key)
    if not isinstance(value, kind):
        names = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        if key not in obj:  # a field left out is "missing", not "got NoneType"
            raise RequestError(f"{where}.{key}: missing (a {names} is required)")
        raise RequestError(f"{where}.{key}: expected {names}, got {type(value).__name__}")
    return value


def tool_list(body: dict[str, Any]) -> list[Any]:
    """``body["tools"]`` taken out of a request: a list, or a clear RequestError."""
    tools = body.pop("tools", None) or []
    if not isinstance(tools, list):
        raise RequestError(f"body.tools: expected an array of tools, got {type(tools).__name__}")
    return tools


def wire_stop(
    stop_reasons: dict[str, str], stop_reason: str, raw: str = "", aliases: tuple[str, ...] = ()
) -> str:
    """A wire's stop reason for panto's ``stop_reason``: ``raw`` (the one the
    stream came with) when it is one of this wire's (``stop_reasons``:
    panto's -> the wire's usual one; ``aliases``: the wire's others that mean
    panto's ``stop``) and means the same, so a stream re-encoded on its own
    wire keeps it; else the wire's usual one."""
    ours = {v: k for k, v in stop_reasons.items()}
    ours.update(dict.fromkeys(aliases, "stop"))
    if raw and ours.get(raw) == stop_reason:
        return raw
    return stop_reasons.get(stop_reason, stop_reason)
