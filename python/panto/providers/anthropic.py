"""Request serialization for the Anthropic messages wire
(``anthropic-messages``).

The base URL does not include ``/v1``: requests go to ``{base}/v1/messages``
with ``x-api-key`` and ``anthropic-version: 2023-06-01``.

Mapping from panto's model:

- system messages -> the top-level ``system`` string;
- user text -> ``{"role": "user", "content": [{"type": "text", ...}]}``;
- assistant -> content blocks in order: ``thinking`` (with its
  ``signature``; unsigned thinking and the Responses API's reasoning items
  from other providers are dropped),
  ``redacted_thinking`` (``data``), ``text`` (empty ones dropped; with
  their ``citations``), ``tool_use`` ``{id, name, input}``, and server
  blocks (``ServerBlock``: web search/fetch, code execution, MCP ...) as
  the JSON object they arrived as (not the Responses API's ``*_call`` items);
- tool results -> a user message of ``tool_result`` blocks
  ``{tool_use_id, content, is_error}``; images ``{"type": "image", "source":
  {"type": "base64", media_type, data}}``; a tool result with images has
  the list form of ``content``: a ``text`` block (unless the text is
  empty), then its images; an image over the API's limit (5 MiB of base64)
  becomes a text note instead, so it cannot make every later request of a
  session fail; consecutive user-side messages are merged so roles
  alternate;
- prompt caching (``[cache]``, on by default): ``cache_control`` breakpoints,
  see :func:`add_cache_breakpoints`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..conversation import (
    Image,
    Message,
    RedactedThinking,
    ServerBlock,
    Text,
    Thinking,
    ToolResultBlock,
    ToolUse,
)
from ..tools import ToolDecl
from .base import IMAGES_OFF_NOTE, Provider, system_text

__all__ = [
    "ANTHROPIC_VERSION",
    "AnthropicProvider",
    "add_cache_breakpoints",
    "serialize_messages",
    "serialize_tools",
]

ANTHROPIC_VERSION = "2023-06-01"


def serialize_tools(tools: Sequence[ToolDecl]) -> list[dict[str, Any]]:
    return [{"name": t.name, "description": t.description, "input_schema": t.schema} for t in tools]


def _assistant_blocks(m: Message) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for b in m.content:
        if isinstance(b, Text):
            if b.text and b.citations:
                blocks.append({"type": "text", "text": b.text, "citations": list(b.citations)})
            elif b.text:
                blocks.append({"type": "text", "text": b.text})
        elif isinstance(b, ServerBlock):  # server tool calls/results: back unchanged
            if not b.type.endswith("_call"):  # (not a Responses API item)
                blocks.append(b.value())
        elif isinstance(b, Thinking):
            if b.signature and not b.signature.startswith("{"):  # (not a Responses item)
                blocks.append({"type": "thinking", "thinking": b.text, "signature": b.signature})
        elif isinstance(b, RedactedThinking):
            blocks.append({"type": "redacted_thinking", "data": b.data})
        elif isinstance(b, ToolUse):
            blocks.append({"type": "tool_use", "id": b.id, "name": b.name, "input": b.input})
    return blocks


def _user_blocks(m: Message, images: bool = True) -> list[dict[str, Any]]:
    results: list[dict[str, Any]] = []
    texts: list[dict[str, Any]] = []
    for b in m.content:
        if isinstance(b, ToolResultBlock):
            content: str | list[dict[str, Any]] = b.content
            if b.images:  # the list form: the text (when there is any), then the images
                content = [{"type": "text", "text": b.content}] if b.content else []
                content += [_image(i, images) for i in b.images]
            results.append(
                {
                    "type": "tool_result",
                    "tool_use_id": b.tool_use_id,
                    "content": content,
                    "is_error": b.is_error,
                }
            )
        elif isinstance(b, Text):
            texts.append({"type": "text", "text": b.text})
        elif isinstance(b, Image):
            texts.append(_image(b, images))
    return results + texts


def _image(b: Image, send: bool = True) -> dict[str, Any]:
    from ..images import MAX_IMAGE_B64, image_marker  # (start-up: loaded only with images)

    if not send:
        return {"type": "text", "text": image_marker(b) + " " + IMAGES_OFF_NOTE}
    if len(b.data_b64) > MAX_IMAGE_B64:
        # the API would reject it, and with it every later request of the
        # session: the model is told instead
        note = f"{image_marker(b)} not sent: over the API's 5 MiB (base64) limit for an image"
        return {"type": "text", "text": note}
    source = {"type": "base64", "media_type": b.media_type, "data": b.data_b64}
    return {"type": "image", "source": source}


def serialize_messages(messages: Sequence[Message], images: bool = True) -> list[dict[str, Any]]:
    """The ``messages`` array; ``images=False`` sends each image as a text
    note naming it (a model that takes none)."""
    out: list[dict[str, Any]] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "assistant":
            role, blocks = "assistant", _assistant_blocks(m)
        else:
            role, blocks = "user", _user_blocks(m, images)
        if not blocks:
            continue
        if out and out[-1]["role"] == role:
            prev = out[-1]["content"]
            if role == "user":
                # tool_result blocks must open the user message
                merged = [b for b in prev + blocks if b["type"] == "tool_result"]
                merged += [b for b in prev + blocks if b["type"] != "tool_result"]
                out[-1]["content"] = merged
            else:
                prev.extend(blocks)
            continue
        out.append({"role": role, "content": blocks})
    return out


class AnthropicProvider(Provider):
    wire = "anthropic-messages"

    @property
    def url(self) -> str:
        return f"{self.base_url}/v1/messages"

    def headers(self) -> dict[str, str]:
        h = {
            "content-type": "application/json",
            "accept": "text/event-stream",
            "anthropic-version": ANTHROPIC_VERSION,
        }
        if self.api_key:
            h["x-api-key"] = self.api_key
        if self.spec.cache_enabled and self.spec.cache_ttl == "1h":
            h["anthropic-beta"] = "extended-cache-ttl-2025-04-11"
        h.update(self.extra_headers)
        return h

    def body(self, messages: Sequence[Message], tools: Sequence[ToolDecl]) -> dict[str, Any]:
        cfg = self.spec
        body: dict[str, Any] = {"model": cfg.model}
        system = system_text(messages)
        if system:
            body["system"] = system
        body["messages"] = serialize_messages(messages, self.images)
        if tools:
            body["tools"] = serialize_tools(tools)
        body["max_tokens"] = cfg.max_tokens
        body["stream"] = True
        if cfg.thinking_budget:
            body["thinking"] = {"type": "enabled", "budget_tokens": cfg.thinking_budget}
        if cfg.cache_enabled:
            add_cache_breakpoints(body, cfg.cache_ttl)
        return body


def add_cache_breakpoints(body: dict[str, Any], ttl: str = "5m") -> None:
    """Prompt caching: ``cache_control`` on the last tool declaration, the
    system prompt and the last block of each of the last two user-side
    messages (4 breakpoints, the API's limit).  The cache prefix is tools,
    system, messages: each request writes the cache up to its newest user
    message and reads what the previous request wrote up to the one before,
    so a growing conversation (tool rounds included) keeps hitting it."""
    cc: dict[str, Any] = {"type": "ephemeral"}
    if ttl == "1h":
        cc["ttl"] = "1h"
    tools = body.get("tools")
    if tools:
        tools[-1] = {**tools[-1], "cache_control": cc}
    if isinstance(body.get("system"), str):
        body["system"] = [{"type": "text", "text": body["system"], "cache_control": cc}]
    marked = 0
    for m in reversed(body["messages"]):
        if marked == 2:
            break
        if m["role"] == "user" and m["content"]:
            m["content"][-1] = {**m["content"][-1], "cache_control": cc}
            marked += 1
