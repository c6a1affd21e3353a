"""The Anthropic messages wire, the other way round: panto events -> SSE as
the API streams it, a finished message -> the non-streamed response body,
and a request body -> :class:`~panto.providers.codec.ParsedRequest` (the
inverse of ``providers/anthropic.py``).  See ``providers/codec.py``."""

from __future__ import annotations

import itertools
from typing import Any

from ..conversation import (
    Block,
    Conversation,
    Image,
    Message,
    RedactedThinking,
    ServerBlock,
    Text,
    Thinking,
    ToolResultBlock,
    ToolUse,
    Usage,
)
from ..events import (
    BlockComplete,
    BlockStart,
    ContentDelta,
    Event,
    MessageComplete,
    MessageStart,
    ToolDetails,
)
from ..tools import ToolDecl
from .codec_base import ParsedRequest, RequestError, dumps, require, tool_list
from .codec_base import wire_stop as stop_reasons

__all__ = ["STOP_REASONS", "AnthropicEncoder", "parse_request", "response_body", "wire_stop"]

#: panto's stop reason -> the wire's
STOP_REASONS = {
    "stop": "end_turn",
    "tool_use": "tool_use",
    "length": "max_tokens",
    "refusal": "refusal",
    "pause": "pause_turn",
}

_ids = itertools.count(1)


def wire_stop(stop_reason: str, raw: str = "") -> str:
    """The wire's stop reason (see ``codec_base.wire_stop``)."""
    return stop_reasons(STOP_REASONS, stop_reason, raw, ("stop_sequence",))


def _usage(u: Usage) -> dict[str, int]:
    return {
        "input_tokens": u.input_tokens,
        "cache_creation_input_tokens": u.cache_write_tokens,
        "cache_read_input_tokens": u.cache_read_tokens,
        "output_tokens": u.output_tokens,
    }


def _event(kind: str, data: str) -> bytes:
    # a JSON text with line breaks (a server block kept as sent) takes one
    # data line each: the SSE parser joins them with "\n" again
    lines = "".join(f"data: {line}\n" for line in data.split("\n"))
    return f"event: {kind}\n{lines}\n".encode()


class AnthropicEncoder:
    """panto stream events -> Anthropic SSE events, one response.

    Blocks open at ``BlockStart`` (a tool_use block at its ``ToolDetails``; a
    redacted thinking or server block, whose start carries all of it, at its
    ``BlockComplete``).  A block whose complete form arrives without deltas
    is streamed as one delta, so events built from whole messages encode
    too.  ``ping`` adds the ``ping`` the API sends after ``message_start``.
    """

    wire = "anthropic-messages"

    def __init__(self, *, model: str = "", ping: bool = True) -> None:
        self.model = model
        self.ping = ping
        self._streamed: set[int] = set()  # blocks that had a delta
        self._open: set[int] = set()

    def _ev(self, kind: str, obj: dict[str, Any]) -> bytes:
        return _event(kind, dumps(obj))

    def _start(self, index: int, block: dict[str, Any] | str) -> bytes:
        self._open.add(index)
        if isinstance(block, str):  # a server block's JSON, sent as it came
            data = f'{{"type":"content_block_start","index":{index},"content_block":{block}}}'
            return _event("content_block_start", data)
        return self._ev(
            "content_block_start",
            {"type": "content_block_start", "index": index, "content_block": block},
        )

    def _delta(self, index: int, delta: dict[str, Any]) -> bytes:
        self._streamed.add(index)
        return self._ev(
            "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        )

    def encode(self, event: Event) -> list[bytes]:
        if isinstance(event, ContentDelta):
            i = event.index
            if event.kind == "text":
                return [self._delta(i, {"type": "text_delta", "text": event.text})]
            if event.kind == "thinking":
                return [self._delta(i, {"type": "thinking_delta", "thinking": event.text})]
            if event.kind == "tool_use":
                return [self._delta(i, {"type": "input_json_delta", "partial_json": event.text})]
            return []
        if isinstance(event, BlockStart):
            if event.kind == "text":
                return [self._start(event.index, {"type": "text", "text": ""})]
            if event.kind == "thinking":
                block = {"type": "thinking", "thinking": "", "signature": ""}
                return [self._start(event.index, block)]
            return []  # tool_use: at ToolDetails; the others at BlockComplete
        if isinstance(event, ToolDetails):
            block = {"type": "tool_use", "id": event.id, "name": event.name, "input": {}}
            # the API's first partial_json is always ""
            return [
                self._start(event.index, block),
                self._delta(event.index, {"type": "input_json_delta", "partial_json": ""}),
            ]
        if isinstance(event, BlockComplete):
            return self._complete(event.index, event.block)
        if isinstance(event, MessageStart):
            self.model = event.model or self.model
            out = [
                self._ev(
                    "message_start",
                    {
                        "type": "message_start",
                        "message": {
                            "id": event.id or f"msg_panto{next(_ids):08d}",
                            "type": "message",
                            "role": "assistant",
                            "model": self.model,
                            "content": [],
                            "stop_reason": None,
                            "stop_sequence": None,
                            "usage": _usage(event.usage),
                        },
                    },
                )
            ]
            if self.ping:
                out.append(self._ev("ping", {"type": "ping"}))
            return out
        if isinstance(event, MessageComplete):
            stop = wire_stop(event.stop_reason, event.raw_stop_reason)
            return [
                self._ev(
                    "message_delta",
                    {
                        "type": "message_delta",
                        "delta": {"stop_reason": stop, "stop_sequence": None},
                        "usage": _usage(event.usage),
                    },
                ),
                self._ev("message_stop", {"type": "message_stop"}),
            ]
        return []  # agent events (tool calls, retries) are not on the wire

    def _complete(self, i: int, b: Block) -> list[bytes]:
        out: list[bytes] = []
        streamed = i in self._streamed
        if isinstance(b, Text):
            if i not in self._open:
                out.append(self._start(i, {"type": "text", "text": ""}))
            if not streamed and b.text:
                out.append(self._delta(i, {"type": "text_delta", "text": b.text}))
            for c in b.citations:
                out.append(self._delta(i, {"type": "citations_delta", "citation": c}))
        elif isinstance(b, Thinking):
            if i not in self._open:
                out.append(self._start(i, {"type": "thinking", "thinking": "", "signature": ""}))
            if not streamed and b.text:
                out.append(self._delta(i, {"type": "thinking_delta", "thinking": b.text}))
            if b.signature:
                out.append(self._delta(i, {"type": "signature_delta", "signature": b.signature}))
        elif isinstance(b, ToolUse):
            if i not in self._open:
                block = {"type": "tool_use", "id": b.id, "name": b.name, "input": {}}
                out.append(self._start(i, block))
            if not streamed and (b.input or b.raw_input):
                args = b.raw_input if b.raw_input is not None else dumps(b.input)
                out.append(self._delta(i, {"type": "input_json_delta", "partial_json": args}))
        elif isinstance(b, RedactedThinking):
            out.append(self._start(i, {"type": "redacted_thinking", "data": b.data}))
        elif isinstance(b, ServerBlock):
            out.append(self._start(i, b.raw_json))
        else:
            return []
        self._open.discard(i)
        out.append(self._ev("content_block_stop", {"type": "content_block_stop", "index": i}))
        return out

    def error(self, type: str, message: str) -> bytes:
        return self._ev("error", {"type": "error", "error": {"type": type, "message": message}})


def _block(b: Block) -> dict[str, Any] | None:
    if isinstance(b, Text):
        d: dict[str, Any] = {"type": "text", "text": b.text}
        if b.citations:
            d["citations"] = list(b.citations)
        return d
    if isinstance(b, Thinking):
        return {"type": "thinking", "thinking": b.text, "signature": b.signature}
    if isinstance(b, RedactedThinking):
        return {"type": "redacted_thinking", "data": b.data}
    if isinstance(b, ToolUse):
        return {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
    if isinstance(b, ServerBlock):
        return b.value()
    return None


def response_body(message: Message, *, id: str = "", model: str = "") -> dict[str, Any]:
    """The non-streamed ``/v1/messages`` response of ``message``."""
    content = [d for d in map(_block, message.content) if d is not None]
    return {
        "id": id or f"msg_panto{next(_ids):08d}",
        "type": "message",
        "role": "assistant",
        "model": model or message.model or "",
        "content": content,
        "stop_reason": wire_stop(message.stop_reason or "stop"),
        "stop_sequence": None,
        "usage": _usage(message.usage or Usage()),
    }


# -- request bodies -------------------------------------------------------------------------


def _image(d: dict[str, Any], where: str) -> Image:
    src = require(d, "source", dict, where)
    if src.get("type") != "base64":
        raise RequestError(f"{where}.source.type: only base64 images are supported")
    return Image(
        require(src, "media_type", str, where + ".source"),
        require(src, "data", str, where + ".source"),
    )


def _strip_cache(d: dict[str, Any], seen: list[str]) -> dict[str, Any]:
    cc = d.get("cache_control")
    if cc is None:
        return d
    seen.append(str(cc.get("ttl", "5m")) if isinstance(cc, dict) else "5m")
    return {k: v for k, v in d.items() if k != "cache_control"}


def _result(d: dict[str, Any], where: str) -> ToolResultBlock:
    content = d.get("content", "")
    text = ""
    images: list[Image] = []
    if isinstance(content, str):
        text = content
    elif isinstance(content, list):
        texts = []
        for j, part in enumerate(content):
            if not isinstance(part, dict):
                raise RequestError(f"{where}.content[{j}]: expected an object")
            if part.get("type") == "text":
                texts.append(str(part.get("text", "")))
            elif part.get("type") == "image":
                images.append(_image(part, f"{where}.content[{j}]"))
        text = "\n".join(texts)
    else:
        raise RequestError(f"{where}.content: expected a string or a list")
    return ToolResultBlock(
        require(d, "tool_use_id", str, where), text, bool(d.get("is_error")), tuple(images)
    )


def _assistant(content: list[Any], where: str) -> Message:
    blocks: list[Block] = []
    for j, d in enumerate(content):
        w = f"{where}.content[{j}]"
        if not isinstance(d, dict):
            raise RequestError(f"{w}: expected an object")
        t = d.get("type")
        if t == "text":
            blocks.append(Text(str(d.get("text", "")), tuple(d.get("citations") or ())))
        elif t == "thinking":
            blocks.append(Thinking(str(d.get("thinking", "")), str(d.get("signature", ""))))
        elif t == "redacted_thinking":
            blocks.append(RedactedThinking(require(d, "data", str, w)))
        elif t == "tool_use":
            inp = d.get("input", {})
            if not isinstance(inp, dict):
                raise RequestError(f"{w}.input: expected an object")
            blocks.append(ToolUse(require(d, "id", str, w), require(d, "name", str, w), inp))
        else:
            blocks.append(ServerBlock(dumps(d)))
    return Message("assistant", tuple(blocks))


def _user(content: list[Any], where: str) -> list[Message]:
    results: list[Block] = []
    rest: list[Block] = []
    for j, d in enumerate(content):
        w = f"{where}.content[{j}]"
        if not isinstance(d, dict):
            raise RequestError(f"{w}: expected an object")
        t = d.get("type")
        if t == "tool_result":
            results.append(_result(d, w))
        elif t == "text":
            rest.append(Text(str(d.get("text", ""))))
        elif t == "image":
            rest.append(_image(d, w))
        else:
            raise RequestError(f"{w}.type: unsupported user block {t!r}")
    out = []
    if results:  # the tool results answer the previous assistant message
        out.append(Message("tool", tuple(results)))
    if rest:
        out.append(Message("user", tuple(rest)))
    return out


def parse_request(body: dict[str, Any]) -> ParsedRequest:
    """A ``/v1/messages`` request body read back into panto's model:
    ``system`` becomes one system message, a user message's
    ``tool_result`` blocks a ``tool`` message before its text, blocks panto
    does not model ``ServerBlock``s; ``cache_control`` marks are taken off
    (their ttl is ``cache_ttl``)."""
    body = dict(body)
    model = require(body, "model", str, "body")
    messages = require(body, "messages", list, "body")
    cached: list[str] = []
    msgs: list[Message] = []
    system = body.pop("system", None)
    if isinstance(system, list):
        parts = [_strip_cache(p, cached) for p in system if isinstance(p, dict)]
        system = "\n\n".join(str(p.get("text", "")) for p in parts)
    if isinstance(system, str) and system:
        msgs.append(Message("system", (Text(system),)))
    for i, m in enumerate(messages):
        w = f"body.messages[{i}]"
        if not isinstance(m, dict):
            raise RequestError(f"{w}: expected an object")
        role = m.get("role")
        content = m.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        if not isinstance(content, list):
            raise RequestError(f"{w}.content: expected a string or a list")
        content = [_strip_cache(b, cached) if isinstance(b, dict) else b for b in content]
        if role == "assistant":
            msgs.append(_assistant(content, w))
        elif role == "user":
            msgs.extend(_user(content, w))
        else:
            raise RequestError(f"{w}.role: expected 'user' or 'assistant', got {role!r}")
    tools: list[ToolDecl] = []
    extra: list[dict[str, Any]] = []
    for j, t in enumerate(tool_list(body)):
        if not isinstance(t, dict):
            raise RequestError(f"body.tools[{j}]: expected an object")
        t = _strip_cache(t, cached)
        if "input_schema" in t:
            tools.append(
                ToolDecl(
                    require(t, "name", str, f"body.tools[{j}]"),
                    str(t.get("description", "")),
                    t["input_schema"],
                )
            )
        else:  # a server tool (web search, ...): kept as sent
            extra.append(t)
    for key in ("model", "messages"):
        body.pop(key, None)
    max_tokens = body.pop("max_tokens", None)
    stream = bool(body.pop("stream", False))
    return ParsedRequest(
        "anthropic-messages",
        model,
        Conversation(msgs),
        tools,
        max_tokens if isinstance(max_tokens, int) else None,
        "max_tokens",
        stream,
        body,
        extra,
        cached[0] if cached else None,
    )
