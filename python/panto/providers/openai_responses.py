"""Request serialization for the OpenAI Responses API (``openai-responses``).

The base URL includes ``/v1``; requests go to ``{base}/responses``.  The
built-in ``openai`` provider speaks this wire to OpenAI's own base URL (its
reasoning models keep their reasoning between tool calls only here);
``wire = "openai-responses"`` selects it for any provider.

Mapping from panto's model (the conversation is sent whole every turn,
``store: false``):

- system messages -> ``instructions``;
- user text -> ``{"role": "user", "content": "..."}``; with images the array
  form ``[{"type": "input_text", ...}, {"type": "input_image", "image_url":
  "data:MEDIA_TYPE;base64,..."}]``;
- assistant blocks, in order, each its own input item:

  - a thinking block whose signature is a Responses reasoning item (the
    decoder keeps the item's JSON there, with its ``encrypted_content``) ->
    that item, byte for byte as it was received.  Other thinking (another
    wire's) is not sent;
  - text -> ``{"type": "message", "role": "assistant", "content":
    [{"type": "output_text", "text": ...}]}``;
  - a tool call -> ``{"type": "function_call", "call_id", "name",
    "arguments"}`` (the JSON-encoded input);
  - a server block from this wire (a built-in tool call such as
    ``web_search_call``, or an item type panto does not know) -> its JSON,
    byte for byte.  Anthropic's server blocks (``*_tool_use``,
    ``*_tool_result``, ...) are not sent;

- tool results -> ``{"type": "function_call_output", "call_id", "output"}``
  (``Error: `` prefixed for an error result; with images ``output`` is the
  array of ``input_text`` and ``input_image`` parts);
- tools -> ``{"type": "function", "name", "description", "parameters",
  "strict": false}`` (strict mode would demand schemas panto's tools do not
  have);
- ``max_output_tokens``, ``stream: true``, ``store: false``, ``include:
  ["reasoning.encrypted_content"]`` (so the reasoning can be sent back);
  ``reasoning: {"effort", "summary": "auto"}`` from ``reasoning_effort``;
  ``prompt_cache_key`` for the ``openai`` provider as on the chat wire.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Sequence
from typing import Any

from ..conversation import Image, Message, ServerBlock, Text, Thinking, ToolResultBlock, ToolUse
from ..tools import ToolDecl
from .base import IMAGES_OFF_NOTE, PreparedRequest, Provider, system_text

__all__ = [
    "OpenAIResponsesProvider",
    "is_reasoning_item",
    "serialize_input",
    "serialize_tools",
]

#: Server block types of Anthropic's wire: no item of this one.
_ANTHROPIC_SERVER_SUFFIXES = ("_tool_use", "_tool_result")
_ANTHROPIC_SERVER_TYPES = frozenset({"container_upload", "compaction"})


def is_reasoning_item(signature: str) -> bool:
    """A thinking block's signature holds a Responses reasoning item (the
    item's JSON object) rather than another wire's signature."""
    if not signature.startswith("{"):
        return False
    try:
        v = json.loads(signature)
    except ValueError:
        return False
    return isinstance(v, dict) and v.get("type") == "reasoning"


def is_responses_item(block: ServerBlock) -> bool:
    """A server block this wire can send back: not one of Anthropic's."""
    t = block.type
    return bool(t) and not (t.endswith(_ANTHROPIC_SERVER_SUFFIXES) or t in _ANTHROPIC_SERVER_TYPES)


def serialize_tools(tools: Sequence[ToolDecl]) -> list[dict[str, Any]]:
    return [
        {
            "type": "function",
            "name": t.name,
            "description": t.description,
            "parameters": t.schema,
            "strict": False,
        }
        for t in tools
    ]


class _Raw:
    """JSON text to go into the request as it is (see ``_dumps``)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def serialize_input(messages: Sequence[Message], images: bool = True) -> list[Any]:
    """The ``input`` array.  Items received from the API (reasoning, built-in
    tool calls) are ``_Raw``: their JSON text, to be sent unchanged."""
    out: list[Any] = []
    for m in messages:
        if m.role == "system":
            continue
        if m.role == "assistant":
            for b in m.content:
                if isinstance(b, Thinking):
                    if is_reasoning_item(b.signature):
                        out.append(_Raw(b.signature))
                elif isinstance(b, Text):
                    if b.text:
                        out.append(
                            {
                                "type": "message",
                                "role": "assistant",
                                "content": [{"type": "output_text", "text": b.text}],
                            }
                        )
                elif isinstance(b, ToolUse):
                    args = json.dumps(b.input, ensure_ascii=False, separators=(",", ":"))
                    out.append(
                        {
                            "type": "function_call",
                            "call_id": b.id,
                            "name": b.name,
                            "arguments": args,
                        }
                    )
                elif isinstance(b, ServerBlock) and is_responses_item(b):
                    out.append(_Raw(b.raw_json))
            continue
        # user or tool: the results first (they answer the calls before
        # them), then the user's text and images
        parts: list[dict[str, Any]] = []
        for b in m.content:
            if isinstance(b, ToolResultBlock):
                content = f"Error: {b.content}" if b.is_error else b.content
                output: Any = content
                if b.images:
                    output = [{"type": "input_text", "text": content}] if content else []
                    output += [_image(i, images) for i in b.images]
                out.append(
                    {"type": "function_call_output", "call_id": b.tool_use_id, "output": output}
                )
            elif isinstance(b, Text):
                parts.append({"type": "input_text", "text": b.text})
            elif isinstance(b, Image):
                parts.append(_image(b, images))
        if not parts:
            continue
        if all(p["type"] == "input_text" for p in parts):
            out.append({"role": "user", "content": "\n".join(p["text"] for p in parts)})
        else:
            out.append({"role": "user", "content": parts})
    return out


def _image(b: Image, send: bool = True) -> dict[str, Any]:
    if not send:
        from ..images import image_marker

        return {"type": "input_text", "text": f"{image_marker(b)} {IMAGES_OFF_NOTE}"}
    return {"type": "input_image", "image_url": f"data:{b.media_type};base64,{b.data_b64}"}


def _dumps(body: dict[str, Any]) -> bytes:
    """The body as compact JSON, each ``_Raw`` item spliced in as its own
    text: the API gets reasoning items exactly as it sent them."""
    raws: list[str] = []
    nonce = secrets.token_hex(8)

    def mark(v: Any) -> Any:
        if isinstance(v, _Raw):
            raws.append(v.text)
            return f"\x00{nonce}-{len(raws) - 1}\x00"
        raise TypeError(f"not JSON serializable: {type(v).__name__}")

    text = json.dumps(body, ensure_ascii=False, separators=(",", ":"), default=mark)
    for i, raw in enumerate(raws):
        text = text.replace(f'"\\u0000{nonce}-{i}\\u0000"', raw, 1)
    return text.encode()


def prompt_cache_key(instructions: str, items: Sequence[Any]) -> str:
    """A key that stays the same for a session: a hash of the instructions
    and the first user item."""
    import hashlib

    first = next((i for i in items if isinstance(i, dict) and i.get("role") == "user"), None)
    data = json.dumps([instructions, first], ensure_ascii=False, sort_keys=True).encode()
    return "panto-" + hashlib.sha256(data).hexdigest()[:32]


class OpenAIResponsesProvider(Provider):
    wire = "openai-responses"

    @property
    def url(self) -> str:
        return f"{self.base_url}/responses"

    def headers(self) -> dict[str, str]:
        h = {"content-type": "application/json", "accept": "text/event-stream"}
        if self.api_key:
            h["authorization"] = f"Bearer {self.api_key}"
        h.update(self.extra_headers)
        return h

    def body(self, messages: Sequence[Message], tools: Sequence[ToolDecl]) -> dict[str, Any]:
        """The request; received items in ``input`` are ``_Raw`` (their
        JSON text): ``build_request`` splices them in unchanged."""
        cfg = self.spec
        body: dict[str, Any] = {"model": cfg.model}
        instructions = system_text(messages)
        if instructions:
            body["instructions"] = instructions
        body["input"] = serialize_input(messages, self.images)
        if tools:
            body["tools"] = serialize_tools(tools)
        body["max_output_tokens"] = cfg.max_tokens
        body["stream"] = True
        body["store"] = False
        body["include"] = ["reasoning.encrypted_content"]
        if cfg.reasoning_effort:
            body["reasoning"] = {"effort": cfg.reasoning_effort, "summary": "auto"}
        if cfg.cache_enabled and cfg.prompt_cache_key:
            body["prompt_cache_key"] = prompt_cache_key(instructions, body["input"])
        return body

    def build_request(
        self, messages: Sequence[Message], tools: Sequence[ToolDecl]
    ) -> PreparedRequest:
        body = _dumps(self.body(messages, tools))
        return PreparedRequest(self.url, self.headers(), body, self.secrets)
