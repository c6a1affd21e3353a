"""Request serialization for the OpenAI chat-completions wire (``openai-chat``).

Works with api.openai.com and OpenAI-compatible servers (Ollama, vLLM,
llama.cpp, DeepSeek, OpenRouter): the base URL includes ``/v1`` and requests
go to ``{base}/chat/completions``.

Mapping from panto's model:

- system messages -> one ``{"role": "system"}`` message first;
- user text -> ``{"role": "user", "content": "..."}``; with images the
  array form ``[{"type": "text", ...}, {"type": "image_url", "image_url":
  {"url": "data:MEDIA_TYPE;base64,..."}}]``;
- assistant -> ``{"role": "assistant", "content": text or null,
  "tool_calls": [{id, type: "function", function: {name, arguments}}]}``
  where ``arguments`` is the JSON-encoded input.  Thinking blocks are not
  sent back (OpenAI-compatible servers neither need nor accept them), nor
  are Anthropic's server blocks (``ServerBlock``: web search calls and
  results, ...) or text citations: the wire has no place for them, so a
  conversation moved here keeps only their text;
- tool results -> one ``{"role": "tool", "tool_call_id", "content"}`` per
  result; an error result's content is prefixed with ``Error: `` (the wire
  has no error flag).  A tool message takes text only, so a result's images
  follow the tool messages in one user message (as pi and other agents do):
  the tool message's text ends with a note (:data:`TOOL_IMAGES_NOTE`), and
  the user message has, for each result with images, a text part naming
  the call (:data:`TOOL_IMAGES_HEADER`) and then its ``image_url`` parts;
- prompt caching (``[cache]``, on by default): for the ``openai`` provider
  a ``prompt_cache_key`` stable for the session (:func:`prompt_cache_key`);
  OpenAI-compatible servers get none (some reject unknown fields).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from ..conversation import Image, Message, Text, ToolResultBlock, ToolUse
from ..tools import ToolDecl
from .base import IMAGES_OFF_NOTE, Provider, system_text

__all__ = [
    "TOOL_IMAGES_HEADER",
    "TOOL_IMAGES_NOTE",
    "OpenAIChatProvider",
    "prompt_cache_key",
    "serialize_messages",
    "serialize_tools",
]

#: Appended to a tool message whose result has images (``{n}``: how many).
TOOL_IMAGES_NOTE = "[{n} image(s) attached in the next message]"
#: Opens each result's images in the user message after the tool messages.
TOOL_IMAGES_HEADER = "Image(s) from the result of tool call {id}:"


def serialize_tools(tools: Sequence[ToolDecl]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.schema},
        }
        for t in tools
    ]


def serialize_messages(messages: Sequence[Message], images: bool = True) -> list[dict[str, Any]]:
    """The ``messages`` array; ``images=False`` sends each image as a text
    note naming it (a model that takes none)."""
    out: list[dict[str, Any]] = []
    system = system_text(messages)
    if system:
        out.append({"role": "system", "content": system})
    # the images of tool results, sent in a user message after the last
    # tool message (they must follow the assistant's calls without a gap)
    result_images: list[dict[str, Any]] = []
    for m in messages:
        role = m.role
        if role == "system":
            continue
        if role == "assistant":
            if result_images:
                out.append({"role": "user", "content": result_images})
                result_images = []
            text = "".join(b.text for b in m.content if isinstance(b, Text))
            calls = [
                {
                    "id": b.id,
                    "type": "function",
                    "function": {
                        "name": b.name,
                        "arguments": json.dumps(b.input, ensure_ascii=False, separators=(",", ":")),
                    },
                }
                for b in m.content
                if isinstance(b, ToolUse)
            ]
            if not text and not calls:
                continue  # e.g. an empty message cut short by an error
            msg: dict[str, Any] = {"role": "assistant", "content": text or None}
            if calls:
                msg["tool_calls"] = calls
            out.append(msg)
            continue
        # user or tool: tool results first (they answer the previous
        # assistant message), then any text as a user message.
        texts = []
        user_images = []
        for b in m.content:
            if isinstance(b, ToolResultBlock):
                content = f"Error: {b.content}" if b.is_error else b.content
                if b.images and not images:
                    notes = "\n".join(_image_off(i) for i in b.images)
                    content = f"{content}\n{notes}" if content else notes
                elif b.images:
                    note = TOOL_IMAGES_NOTE.format(n=len(b.images))
                    content = f"{content}\n{note}" if content else note
                    result_images.append(
                        {"type": "text", "text": TOOL_IMAGES_HEADER.format(id=b.tool_use_id)}
                    )
                    result_images += [_image_url(i) for i in b.images]
                out.append({"role": "tool", "tool_call_id": b.tool_use_id, "content": content})
            elif isinstance(b, Text):
                texts.append(b.text)
            elif isinstance(b, Image) and not images:
                texts.append(_image_off(b))
            elif isinstance(b, Image):
                user_images.append(_image_url(b))
        if (texts or user_images) and result_images:
            out.append({"role": "user", "content": result_images})
            result_images = []
        if user_images:  # the array form: text parts, then the images
            parts = [{"type": "text", "text": "\n".join(texts)}] if texts else []
            out.append({"role": "user", "content": parts + user_images})
        elif texts:
            out.append({"role": "user", "content": "\n".join(texts)})
    if result_images:
        out.append({"role": "user", "content": result_images})
    return out


def _image_off(b: Image) -> str:
    from ..images import image_marker

    return f"{image_marker(b)} {IMAGES_OFF_NOTE}"


def _image_url(b: Image) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{b.media_type};base64,{b.data_b64}"}}


class OpenAIChatProvider(Provider):
    wire = "openai-chat"

    @property
    def url(self) -> str:
        return f"{self.base_url}/chat/completions"

    def headers(self) -> dict[str, str]:
        h = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.api_key:
            h["authorization"] = f"Bearer {self.api_key}"
        h.update(self.extra_headers)
        return h

    def body(self, messages: Sequence[Message], tools: Sequence[ToolDecl]) -> dict[str, Any]:
        cfg = self.spec
        body: dict[str, Any] = {
            "model": cfg.model,
            "messages": serialize_messages(messages, self.images),
        }
        if tools:
            body["tools"] = serialize_tools(tools)
        body["stream"] = True
        body["stream_options"] = {"include_usage": True}
        body[cfg.max_tokens_field] = cfg.max_tokens
        if cfg.reasoning_effort:
            body["reasoning_effort"] = cfg.reasoning_effort
        if cfg.cache_enabled and cfg.prompt_cache_key:
            body["prompt_cache_key"] = prompt_cache_key(body["messages"])
        return body


def prompt_cache_key(messages: Sequence[dict[str, Any]]) -> str:
    """A ``prompt_cache_key`` that stays the same for a session: a hash of
    its start (the system prompt and the first user message), so every turn
    of a conversation, and a resume of it, is routed to the same cache."""
    import hashlib

    head = [m for m in messages[:2] if m["role"] in ("system", "user")]
    data = json.dumps(head, ensure_ascii=False, sort_keys=True).encode()
    return "panto-" + hashlib.sha256(data).hexdigest()[:32]
