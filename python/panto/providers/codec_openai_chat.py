"""The OpenAI chat-completions wire, the other way round: panto events ->
SSE chunks as the API streams them (``include_usage`` on), a finished
message -> the non-streamed ``chat.completion`` body, and a request body ->
:class:`~panto.providers.codec.ParsedRequest` (the inverse of
``providers/openai_chat.py``).  See ``providers/codec.py``."""

from __future__ import annotations

import itertools
import time
from typing import Any

from ..conversation import (
    Block,
    Conversation,
    Image,
    Message,
    Text,
    Thinking,
    ToolResultBlock,
    ToolUse,
    Usage,
)
from ..events import (
    BlockComplete,
    ContentDelta,
    Event,
    MessageComplete,
    MessageStart,
    ToolDetails,
)
from ..tools import ToolDecl
from .codec_base import ParsedRequest, RequestError, dumps, require, tool_list
from .codec_base import wire_stop as stop_reasons
from .openai_chat import TOOL_IMAGES_HEADER, TOOL_IMAGES_NOTE

__all__ = ["STOP_REASONS", "OpenAIChatEncoder", "parse_request", "response_body", "wire_stop"]

#: panto's stop reason -> the wire's ``finish_reason``
STOP_REASONS = {
    "stop": "stop",
    "tool_use": "tool_calls",
    "length": "length",
    "refusal": "content_filter",
}


_ids = itertools.count(1)


def wire_stop(stop_reason: str, raw: str = "") -> str:
    """The wire's stop reason (see ``codec_base.wire_stop``)."""
    return stop_reasons(STOP_REASONS, stop_reason, raw)


def _usage(u: Usage) -> dict[str, Any]:
    prompt = u.input_tokens + u.cache_read_tokens
    return {
        "prompt_tokens": prompt,
        "completion_tokens": u.output_tokens,
        "total_tokens": prompt + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cache_read_tokens, "audio_tokens": 0},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens, "audio_tokens": 0},
    }


class OpenAIChatEncoder:
    """panto stream events -> ``chat.completion.chunk`` SSE events, one
    response.

    The first chunk (the one with ``role``) goes out before the first
    content; a reply that opens with a tool call carries its header in it,
    as the API does.  Thinking is sent as ``reasoning_content`` (DeepSeek's field);
    redacted thinking, server blocks and citations have no place on this
    wire and are left out.  A block whose complete form arrives without
    deltas is sent as one delta."""

    wire = "openai-chat"

    def __init__(self, *, model: str = "", id: str = "", created: int | None = None) -> None:
        self.model = model
        self.id = id
        self.created = int(time.time()) if created is None else created
        self._started = False
        self._tools: dict[int, int] = {}  # panto block index -> tool_calls index
        self._streamed: set[int] = set()

    def _chunk(
        self,
        delta: dict[str, Any] | None,
        finish: str | None = None,
        usage: dict[str, Any] | None = None,
    ) -> bytes:
        choices = (
            []
            if delta is None
            else [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}]
        )
        obj = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "service_tier": "default",
            "system_fingerprint": "fp_panto",
            "choices": choices,
            "usage": usage,
        }
        return f"data: {dumps(obj)}\n\n".encode()

    def _send(self, delta: dict[str, Any], tool_first: bool = False) -> list[bytes]:
        """``delta``'s chunk, after the first chunk (``role``) when it has not
        gone yet: a tool call's header rides in it, content follows it."""
        if self._started:
            return [self._chunk(delta)]
        self._started = True
        role = {"role": "assistant", "content": None if tool_first else "", "refusal": None}
        if tool_first:
            return [self._chunk({**role, **delta})]
        return [self._chunk(role)] + ([self._chunk(delta)] if delta else [])

    def _args(self, i: int, text: str) -> list[bytes]:
        self._streamed.add(i)
        return self._send(
            {"tool_calls": [{"index": self._tools[i], "function": {"arguments": text}}]}
        )

    def _head(self, i: int, id: str, name: str) -> list[bytes]:
        self._tools[i] = len(self._tools)
        head = {
            "index": self._tools[i],
            "id": id,
            "type": "function",
            "function": {"name": name, "arguments": ""},
        }
        return self._send({"tool_calls": [head]}, tool_first=True)

    def encode(self, event: Event) -> list[bytes]:
        if isinstance(event, ContentDelta):
            if event.kind == "tool_use" and event.index in self._tools:
                return self._args(event.index, event.text)
            field = {"text": "content", "thinking": "reasoning_content"}.get(event.kind)
            if field is None:
                return []
            self._streamed.add(event.index)
            return self._send({field: event.text})
        if isinstance(event, ToolDetails):
            return self._head(event.index, event.id, event.name)
        if isinstance(event, BlockComplete):
            return self._complete(event.index, event.block)
        if isinstance(event, MessageStart):
            self.id = event.id or self.id or f"chatcmpl-panto{next(_ids):08d}"
            self.model = event.model or self.model
            return []
        if isinstance(event, MessageComplete):
            out = [] if self._started else self._send({})
            finish = wire_stop(event.stop_reason, event.raw_stop_reason)
            out.append(self._chunk({}, finish))
            out.append(self._chunk(None, usage=_usage(event.usage)))
            out.append(b"data: [DONE]\n\n")
            return out
        return []  # block starts open nothing on this wire; agent events are not on it

    def _complete(self, i: int, b: Block) -> list[bytes]:
        if i in self._streamed:
            return []
        if isinstance(b, ToolUse):
            out = [] if i in self._tools else self._head(i, b.id, b.name)
            if b.input or b.raw_input:
                out += self._args(i, b.raw_input if b.raw_input is not None else dumps(b.input))
            return out
        if isinstance(b, Text) and b.text:
            return self._send({"content": b.text})
        if isinstance(b, Thinking) and b.text:
            return self._send({"reasoning_content": b.text})
        return []

    def error(self, type: str, message: str) -> bytes:
        err = {"message": message, "type": type, "code": None, "param": None}
        return f"data: {dumps({'error': err})}\n\n".encode()


def response_body(
    message: Message, *, id: str = "", model: str = "", created: int | None = None
) -> dict[str, Any]:
    """The non-streamed ``chat.completion`` response of ``message``."""
    text = "".join(b.text for b in message.content if isinstance(b, Text))
    thinking = "".join(b.text for b in message.content if isinstance(b, Thinking))
    calls = [
        {
            "id": b.id,
            "type": "function",
            "function": {
                "name": b.name,
                "arguments": b.raw_input if b.raw_input is not None else dumps(b.input),
            },
        }
        for b in message.content
        if isinstance(b, ToolUse)
    ]
    msg: dict[str, Any] = {"role": "assistant", "content": text or None, "refusal": None}
    if thinking:
        msg["reasoning_content"] = thinking
    if calls:
        msg["tool_calls"] = calls
    return {
        "id": id or f"chatcmpl-panto{next(_ids):08d}",
        "object": "chat.completion",
        "created": int(time.time()) if created is None else created,
        "model": model or message.model or "",
        "choices": [
            {
                "index": 0,
                "message": msg,
                "logprobs": None,
                "finish_reason": wire_stop(message.stop_reason or "stop"),
            }
        ],
        "usage": _usage(message.usage or Usage()),
    }


# -- request bodies -------------------------------------------------------------------------


def _image_url(part: dict[str, Any], where: str) -> Image:
    url = require(part, "image_url", dict, where).get("url")
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        raise RequestError(f"{where}.image_url.url: only data:...;base64, URLs are supported")
    media_type, data = url[5:].split(";base64,", 1)
    return Image(media_type, data)


def _text(content: Any, where: str) -> str:
    if content is None or isinstance(content, str):
        return content or ""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    raise RequestError(f"{where}.content: expected a string, a list or null")


def _is_tool_images(parts: list[Any]) -> bool:
    """The user message ``serialize_messages`` writes after tool messages
    for the results' images."""
    head = TOOL_IMAGES_HEADER.split("{", 1)[0]
    return bool(parts) and all(
        isinstance(p, dict)
        and (
            p.get("type") == "image_url"
            or (p.get("type") == "text" and str(p.get("text", "")).startswith(head))
        )
        for p in parts
    )


def _attach_images(results: list[ToolResultBlock], parts: list[Any], where: str) -> None:
    """Give each result the images that follow its header."""
    head = TOOL_IMAGES_HEADER.split("{", 1)[0]
    by_id = {r.tool_use_id: k for k, r in enumerate(results)}
    current: int | None = None
    images: dict[int, list[Image]] = {}
    for j, p in enumerate(parts):
        if p.get("type") == "text":
            current = by_id.get(str(p["text"])[len(head) :].rstrip(":"))
        elif current is not None:
            images.setdefault(current, []).append(_image_url(p, f"{where}.content[{j}]"))
    for k, imgs in images.items():
        r = results[k]
        note = TOOL_IMAGES_NOTE.format(n=len(imgs))
        content = r.content
        if content == note:
            content = ""
        elif content.endswith("\n" + note):
            content = content[: -len(note) - 1]
        results[k] = ToolResultBlock(r.tool_use_id, content, r.is_error, tuple(imgs))


def parse_request(body: dict[str, Any]) -> ParsedRequest:
    """A ``/chat/completions`` request body read back into panto's model:
    consecutive ``tool`` messages become one ``tool`` message (an
    ``Error: `` prefix is the error flag), the images ``serialize_messages``
    sends after them go back onto their results, ``reasoning_content`` on an
    assistant message is thinking."""
    body = dict(body)
    model = require(body, "model", str, "body")
    messages = require(body, "messages", list, "body")
    msgs: list[Message] = []
    system: list[str] = []
    results: list[ToolResultBlock] = []

    def flush() -> None:
        if results:
            msgs.append(Message("tool", tuple(results)))
            results.clear()

    for i, m in enumerate(messages):
        w = f"body.messages[{i}]"
        if not isinstance(m, dict):
            raise RequestError(f"{w}: expected an object")
        role = m.get("role")
        content = m.get("content")
        if role in ("system", "developer"):
            system.append(_text(content, w))
        elif role == "tool":
            text = _text(content, w)
            error = text.startswith("Error: ")
            results.append(
                ToolResultBlock(
                    require(m, "tool_call_id", str, w), text[7:] if error else text, error
                )
            )
        elif role == "user":
            if isinstance(content, list) and results and _is_tool_images(content):
                _attach_images(results, content, w)
                continue
            flush()
            blocks: list[Block] = []
            if isinstance(content, list):
                for j, p in enumerate(content):
                    if not isinstance(p, dict):
                        raise RequestError(f"{w}.content[{j}]: expected an object")
                    if p.get("type") == "text":
                        blocks.append(Text(str(p.get("text", ""))))
                    elif p.get("type") == "image_url":
                        blocks.append(_image_url(p, f"{w}.content[{j}]"))
                    else:
                        raise RequestError(f"{w}.content[{j}].type: unsupported {p.get('type')!r}")
            else:
                blocks.append(Text(_text(content, w)))
            msgs.append(Message("user", tuple(blocks)))
        elif role == "assistant":
            flush()
            blocks = []
            reasoning = m.get("reasoning_content") or m.get("reasoning")
            if isinstance(reasoning, str) and reasoning:
                blocks.append(Thinking(reasoning))
            text = _text(content, w)
            if text:
                blocks.append(Text(text))
            for j, c in enumerate(m.get("tool_calls") or []):
                fn = require(c, "function", dict, f"{w}.tool_calls[{j}]")
                blocks.append(
                    ToolUse.from_json(
                        str(c.get("id", "")),
                        require(fn, "name", str, f"{w}.tool_calls[{j}].function"),
                        str(fn.get("arguments") or ""),
                    )
                )
            msgs.append(Message("assistant", tuple(blocks)))
        else:
            raise RequestError(f"{w}.role: unsupported role {role!r}")
    flush()
    if system:
        msgs.insert(0, Message("system", (Text("\n\n".join(system)),)))
    tools: list[ToolDecl] = []
    extra: list[dict[str, Any]] = []
    for j, t in enumerate(tool_list(body)):
        fn = t.get("function") if isinstance(t, dict) else None
        if isinstance(fn, dict):
            tools.append(
                ToolDecl(
                    require(fn, "name", str, f"body.tools[{j}].function"),
                    str(fn.get("description", "")),
                    fn.get("parameters") or {"type": "object", "properties": {}},
                )
            )
        elif isinstance(t, dict):
            extra.append(t)
        else:
            raise RequestError(f"body.tools[{j}]: expected an object")
    for key in ("model", "messages"):
        body.pop(key, None)
    field = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
    max_tokens = body.pop(field, None)
    stream = bool(body.pop("stream", False))
    return ParsedRequest(
        "openai-chat",
        model,
        Conversation(msgs),
        tools,
        max_tokens if isinstance(max_tokens, int) else None,
        field,
        stream,
        body,
        extra,
    )
