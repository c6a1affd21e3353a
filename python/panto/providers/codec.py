"""The codec's second half, per wire: what a proxy or a test
server needs besides panto's own direction (``Conversation`` -> request body,
response stream -> events).

Per wire (``codec_anthropic``, ``codec_openai_chat``, ``codec_openai_responses``):

- an **encoder**: panto stream events -> the wire's SSE events (``bytes``
  each), written as the provider writes them, plus the non-streamed JSON
  response body of a finished message and an in-stream error event;
- a **request parser**: a request body -> :class:`ParsedRequest`
  (``Conversation``, tool declarations, options).

Both are exact inverses where the wire can carry the value: decoding a
stream, encoding its events and decoding again gives the same events
(``tests/test_codec.py`` runs every fixture), and serializing a
parsed request body gives the body again (the request goldens).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ..events import Event
from .codec_base import ParsedRequest, RequestError, StreamEncoder, dumps

__all__ = [
    "WIRES",
    "ParsedRequest",
    "RequestError",
    "StreamEncoder",
    "dumps",
    "encode_events",
    "make_encoder",
    "parse_request",
    "response_body",
]

WIRES = ("anthropic-messages", "openai-chat", "openai-responses")


def make_encoder(wire: str, **options: Any) -> StreamEncoder:
    """A fresh stream encoder for ``wire``."""
    if wire == "anthropic-messages":
        from .codec_anthropic import AnthropicEncoder

        return AnthropicEncoder(**options)
    if wire == "openai-chat":
        from .codec_openai_chat import OpenAIChatEncoder

        return OpenAIChatEncoder(**options)
    if wire == "openai-responses":
        from .codec_openai_responses import OpenAIResponsesEncoder

        return OpenAIResponsesEncoder(**options)
    raise ValueError(f"unknown wire {wire!r} (expected one of {', '.join(WIRES)})")


def encode_events(wire: str, events: Iterable[Event], **options: Any) -> list[bytes]:
    """All SSE events of a complete stream."""
    enc = make_encoder(wire, **options)
    out: list[bytes] = []
    for ev in events:
        out += enc.encode(ev)
    return out


def response_body(wire: str, message: Any, **options: Any) -> dict[str, Any]:
    """The non-streamed JSON response body of a finished assistant
    ``message`` (a ``panto.Message``) on ``wire``."""
    if wire == "anthropic-messages":
        from .codec_anthropic import response_body as body
    elif wire == "openai-chat":
        from .codec_openai_chat import response_body as body
    elif wire == "openai-responses":
        from .codec_openai_responses import response_body as body
    else:
        raise ValueError(f"unknown wire {wire!r} (expected one of {', '.join(WIRES)})")
    return body(message, **options)


def parse_request(wire: str, body: bytes | str | dict[str, Any]) -> ParsedRequest:
    """A request body of ``wire`` read back (raises :class:`RequestError`)."""
    if isinstance(body, (bytes, str)):
        try:
            body = json.loads(body)
        except ValueError as e:
            raise RequestError(f"request body is not JSON: {e}") from None
    if not isinstance(body, dict):
        raise RequestError("request body must be a JSON object")
    if wire == "anthropic-messages":
        from .codec_anthropic import parse_request as parse
    elif wire == "openai-chat":
        from .codec_openai_chat import parse_request as parse
    elif wire == "openai-responses":
        from .codec_openai_responses import parse_request as parse
    else:
        raise ValueError(f"unknown wire {wire!r} (expected one of {', '.join(WIRES)})")
    return parse(body)
