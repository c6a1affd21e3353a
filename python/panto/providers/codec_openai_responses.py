"""The OpenAI Responses wire, the other way round: panto events -> the SSE
events the Responses API streams (``response.created`` ...
``response.completed``), the non-streamed response object of a finished
message, and a request body read back.  See ``providers/codec.py``; the
decoding side is the C core's ``csrc/wire_openai_responses.c``, the request
side ``providers/openai_responses.py``.

Each block is an output item at the next ``output_index``: text a
``message`` item with one ``output_text`` part (its citations as
``output_text.annotation.added``), thinking a ``reasoning`` item (its text
as summary deltas; the done item is the block's signature when that is a
reasoning item's JSON -- spliced in as its own bytes -- else one made with
the signature as ``encrypted_content``), a tool call a ``function_call``
item, a server block its JSON as the item.  ``MessageComplete`` is
``response.completed``, or ``response.incomplete`` for a stop that is not
one (length -> ``max_output_tokens``, refusal -> ``content_filter``)."""

from __future__ import annotations

import itertools
import json
import time
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
from .codec_base import ParsedRequest, RequestError, dumps, require

__all__ = ["OpenAIResponsesEncoder", "parse_request", "response_body"]

_ids = itertools.count(1)
#: incomplete_details.reason for panto's stop reasons that are no completion
_INCOMPLETE = {"length": "max_output_tokens", "refusal": "content_filter"}


def _usage(u: Usage) -> dict[str, Any]:
    inp = u.input_tokens + u.cache_read_tokens
    return {
        "input_tokens": inp,
        "input_tokens_details": {"cached_tokens": u.cache_read_tokens},
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
        "total_tokens": inp + u.output_tokens,
    }


class OpenAIResponsesEncoder:
    """panto stream events -> Responses API SSE events, one response."""

    wire = "openai-responses"

    def __init__(self, *, model: str = "", id: str = "", created: int | None = None) -> None:
        self.model = model
        self.id = id
        self.created = int(time.time()) if created is None else created
        self._seq = itertools.count()
        self._out: dict[int, int] = {}  # panto block index -> output_index
        self._item: dict[int, str] = {}  # panto block index -> item id
        self._kind: dict[int, str] = {}
        self._streamed: set[int] = set()
        self._call: dict[int, tuple[str, str]] = {}  # call_id, name
        self._output: list[str] = []  # the done items' JSON, for response.completed

    def _ev(self, kind: str, raw: dict[str, str] | None = None, **data: Any) -> bytes:
        """One SSE event; ``raw`` members are JSON text spliced in as is."""
        obj = {"type": kind, "sequence_number": next(self._seq), **data}
        text = dumps(obj)
        for k, v in (raw or {}).items():
            text = text[:-1] + f',"{k}":{v}}}'
        return f"event: {kind}\ndata: {text}\n\n".encode()

    def _response(self, status: str, usage: Usage | None = None, **extra: Any) -> str:
        r = {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": self.model,
            "store": False,
            "usage": None if usage is None else _usage(usage),
            **extra,
        }
        text = dumps(r)
        return text[:-1] + ',"output":[' + ",".join(self._output) + "]}"

    def _delta(self, i: int, text: str) -> list[bytes]:
        o, iid = self._out[i], self._item[i]
        kind = self._kind[i]
        out: list[bytes] = []
        if kind == "text":
            return [
                self._ev(
                    "response.output_text.delta",
                    item_id=iid,
                    output_index=o,
                    content_index=0,
                    delta=text,
                    logprobs=[],
                )
            ]
        if kind == "thinking":
            if i not in self._streamed:
                out.append(
                    self._ev(
                        "response.reasoning_summary_part.added",
                        item_id=iid,
                        output_index=o,
                        summary_index=0,
                        part={"type": "summary_text", "text": ""},
                    )
                )
            out.append(
                self._ev(
                    "response.reasoning_summary_text.delta",
                    item_id=iid,
                    output_index=o,
                    summary_index=0,
                    delta=text,
                )
            )
            return out
        if kind == "tool_use":
            return [
                self._ev(
                    "response.function_call_arguments.delta",
                    item_id=iid,
                    output_index=o,
                    delta=text,
                )
            ]
        return []

    def _open(self, i: int, kind: str) -> list[bytes]:
        o = self._out[i] = len(self._out)
        self._kind[i] = kind
        if kind == "text":
            iid = self._item[i] = f"msg_panto{next(_ids):08d}"
            item = {"id": iid, "type": "message", "status": "in_progress", "content": []}
            part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
            return [
                self._ev(
                    "response.output_item.added", output_index=o, item={**item, "role": "assistant"}
                ),
                self._ev(
                    "response.content_part.added",
                    item_id=iid,
                    output_index=o,
                    content_index=0,
                    part=part,
                ),
            ]
        if kind == "thinking":
            iid = self._item[i] = f"rs_panto{next(_ids):08d}"
            item = {"id": iid, "type": "reasoning", "summary": []}
            return [self._ev("response.output_item.added", output_index=o, item=item)]
        if kind == "tool_use":
            self._item[i] = f"fc_panto{next(_ids):08d}"
        return []  # tool calls open with their details; server blocks when complete

    def _function_call(self, i: int, call_id: str, name: str, args: str, status: str) -> dict:
        return {
            "id": self._item[i],
            "type": "function_call",
            "status": status,
            "arguments": args,
            "call_id": call_id,
            "name": name,
        }

    def encode(self, event: Event) -> list[bytes]:
        if isinstance(event, ContentDelta):
            if event.index not in self._out:
                return []
            out = self._delta(event.index, event.text)
            self._streamed.add(event.index)
            return out
        if isinstance(event, BlockStart):
            return self._open(event.index, event.kind)
        if isinstance(event, ToolDetails):
            i = event.index
            if i not in self._out:
                self._out[i] = len(self._out)
                self._kind[i] = "tool_use"
                self._item[i] = f"fc_panto{next(_ids):08d}"
            self._call[i] = (event.id, event.name)
            item = self._function_call(i, event.id, event.name, "", "in_progress")
            return [self._ev("response.output_item.added", output_index=self._out[i], item=item)]
        if isinstance(event, BlockComplete):
            return self._complete(event.index, event.block)
        if isinstance(event, MessageStart):
            self.id = event.id or self.id or f"resp_panto{next(_ids):08d}"
            self.model = event.model or self.model
            r = self._response("in_progress")
            return [
                self._ev("response.created", raw={"response": r}),
                self._ev("response.in_progress", raw={"response": r}),
            ]
        if isinstance(event, MessageComplete):
            reason = event.raw_stop_reason if event.raw_stop_reason != "completed" else ""
            if event.stop_reason in ("stop", "tool_use"):
                r = self._response("completed", event.usage)
                return [self._ev("response.completed", raw={"response": r})]
            reason = reason or _INCOMPLETE.get(event.stop_reason, event.stop_reason)
            r = self._response("incomplete", event.usage, incomplete_details={"reason": reason})
            return [self._ev("response.incomplete", raw={"response": r})]
        return []  # agent events are not on this wire

    def _complete(self, i: int, b: Block) -> list[bytes]:
        out: list[bytes] = []
        if i not in self._out:  # a block that arrived whole
            kind = {Text: "text", Thinking: "thinking", ToolUse: "tool_use"}.get(type(b), "server")
            out += self._open(i, kind)
        o = self._out[i]
        if isinstance(b, ToolUse):
            args = b.raw_input if b.raw_input is not None else dumps(b.input)
            if i not in self._call:
                self._call[i] = (b.id, b.name)
                item = self._function_call(i, b.id, b.name, "", "in_progress")
                out.append(self._ev("response.output_item.added", output_index=o, item=item))
            if i not in self._streamed and (b.input or b.raw_input):
                out += self._delta(i, args)
            iid = self._item[i]
            out.append(
                self._ev(
                    "response.function_call_arguments.done",
                    item_id=iid,
                    output_index=o,
                    arguments=args,
                )
            )
            done = dumps(self._function_call(i, b.id, b.name, args, "completed"))
        elif isinstance(b, Text):
            iid = self._item[i]
            if i not in self._streamed and b.text:
                out += self._delta(i, b.text)
            for k, a in enumerate(b.citations):
                out.append(
                    self._ev(
                        "response.output_text.annotation.added",
                        item_id=iid,
                        output_index=o,
                        content_index=0,
                        annotation_index=k,
                        annotation=a,
                    )
                )
            part = {
                "type": "output_text",
                "annotations": list(b.citations),
                "logprobs": [],
                "text": b.text,
            }
            out.append(
                self._ev(
                    "response.output_text.done",
                    item_id=iid,
                    output_index=o,
                    content_index=0,
                    text=b.text,
                    logprobs=[],
                )
            )
            out.append(
                self._ev(
                    "response.content_part.done",
                    item_id=iid,
                    output_index=o,
                    content_index=0,
                    part=part,
                )
            )
            item = {"id": iid, "type": "message", "status": "completed", "content": [part]}
            done = dumps({**item, "role": "assistant"})
        elif isinstance(b, Thinking):
            iid = self._item[i]
            if i not in self._streamed and b.text:
                out += self._delta(i, b.text)
            if b.text:
                out.append(
                    self._ev(
                        "response.reasoning_summary_text.done",
                        item_id=iid,
                        output_index=o,
                        summary_index=0,
                        text=b.text,
                    )
                )
            if _is_reasoning_item(b.signature):
                done = b.signature
            else:
                summary = [{"type": "summary_text", "text": b.text}] if b.text else []
                item = {"id": iid, "type": "reasoning", "summary": summary}
                if b.signature:
                    item["encrypted_content"] = b.signature
                done = dumps(item)
        elif isinstance(b, ServerBlock):
            done = b.raw_json
            out.append(self._ev("response.output_item.added", raw={"item": done}, output_index=o))
        else:
            return out  # redacted thinking: no place on this wire
        self._streamed.add(i)
        self._output.append(done)
        out.append(self._ev("response.output_item.done", raw={"item": done}, output_index=o))
        return out

    def error(self, type: str, message: str) -> bytes:
        if type == "response.failed":
            err = {"code": "server_error", "message": message}
            r = self._response("failed", error=err)
            return self._ev("response.failed", raw={"response": r})
        return self._ev("error", code=type, message=message, param=None)


def _is_reasoning_item(signature: str) -> bool:
    if not signature.startswith("{"):
        return False
    try:
        v = json.loads(signature)
    except ValueError:
        return False
    return isinstance(v, dict) and v.get("type") == "reasoning"


# -- the non-streamed response ------------------------------------------------------------


def response_body(
    message: Message, *, id: str = "", model: str = "", created: int | None = None
) -> dict[str, Any]:
    """The non-streamed response object of ``message``: what
    ``response.completed`` (or ``response.incomplete``) carries when the
    message is streamed by :class:`OpenAIResponsesEncoder` -- the same items,
    reasoning and server items as their own JSON."""
    enc = OpenAIResponsesEncoder(model=model or message.model or "", id=id, created=created)
    usage = message.usage or Usage()
    events: list[Event] = [MessageStart(enc.id, enc.model, usage)]
    for i, b in enumerate(message.content):
        kind = {Text: "text", Thinking: "thinking", ToolUse: "tool_use"}.get(type(b), "server")
        if isinstance(b, RedactedThinking):
            continue  # no place on this wire
        events += [BlockStart(i, kind), BlockComplete(i, b)]  # type: ignore[arg-type]
    stop = message.stop_reason or "stop"
    events.append(MessageComplete(message, stop, usage))
    last = b""
    for ev in events:
        for one in enc.encode(ev):
            last = one
    data = last.split(b"\ndata: ", 1)[1]
    return json.loads(data)["response"]


# -- request bodies -----------------------------------------------------------------------


def _image(url: Any, where: str) -> Image:
    if not isinstance(url, str) or not url.startswith("data:") or ";base64," not in url:
        raise RequestError(f"{where}.image_url: only data:...;base64, URLs are supported")
    media_type, data = url[5:].split(";base64,", 1)
    return Image(media_type, data)


def _parts(content: Any, where: str) -> list[Block]:
    """A message's ``content``: a string or input/output parts."""
    if isinstance(content, str):
        return [Text(content)]
    if not isinstance(content, list):
        raise RequestError(f"{where}.content: expected a string or a list")
    out: list[Block] = []
    for j, p in enumerate(content):
        w = f"{where}.content[{j}]"
        if not isinstance(p, dict):
            raise RequestError(f"{w}: expected an object")
        t = p.get("type")
        if t in ("input_text", "output_text", "text"):
            out.append(Text(str(p.get("text", ""))))
        elif t == "refusal":
            out.append(Text(str(p.get("refusal", ""))))
        elif t == "input_image":
            out.append(_image(p.get("image_url"), w))
        else:
            raise RequestError(f"{w}.type: unsupported {t!r}")
    return out


def _result(item: dict[str, Any], where: str) -> ToolResultBlock:
    """A ``function_call_output``: ``Error: `` marks an error result, the
    images of an array ``output`` go back onto the result."""
    call_id = require(item, "call_id", str, where)
    output = item.get("output", "")
    images: list[Image] = []
    if isinstance(output, list):
        texts = []
        for j, p in enumerate(output):
            w = f"{where}.output[{j}]"
            if not isinstance(p, dict):
                raise RequestError(f"{w}: expected an object")
            if p.get("type") == "input_image":
                images.append(_image(p.get("image_url"), w))
            elif p.get("type") in ("input_text", "output_text"):
                texts.append(str(p.get("text", "")))
            else:
                raise RequestError(f"{w}.type: unsupported {p.get('type')!r}")
        output = "\n".join(texts)
    elif not isinstance(output, str):
        raise RequestError(f"{where}.output: expected a string or a list")
    error = output.startswith("Error: ")
    return ToolResultBlock(call_id, output[7:] if error else output, error, tuple(images))


def _reasoning(item: dict[str, Any]) -> Thinking:
    """A reasoning item: its summary as the text, the item itself (its JSON,
    ``encrypted_content`` included) as the signature, as the decoder keeps it."""
    summary = item.get("summary") or []
    text = "\n\n".join(
        str(p.get("text", "")) for p in summary if isinstance(p, dict) and p.get("text")
    )
    return Thinking(text, dumps(item))


def parse_request(body: dict[str, Any]) -> ParsedRequest:
    """A ``/responses`` request body read back into panto's model:
    ``instructions`` (and system or developer items) are the system message;
    consecutive output items (``message``, ``reasoning``, ``function_call``,
    built-in tool calls and item types panto does not know, kept as server
    blocks) one assistant message; consecutive ``function_call_output``
    items one ``tool`` message; ``input`` as a string one user message."""
    body = dict(body)
    model = require(body, "model", str, "body")
    items = body.pop("input", None)
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, list):
        raise RequestError(f"body.input: expected a list or a string, got {type(items).__name__}")
    system: list[str] = []
    instructions = body.pop("instructions", None)
    if isinstance(instructions, str) and instructions:
        system.append(instructions)
    elif instructions is not None and not isinstance(instructions, str):
        raise RequestError("body.instructions: expected a string")
    msgs: list[Message] = []
    turn: list[Block] = []  # the assistant items so far
    results: list[ToolResultBlock] = []

    def flush() -> None:
        if turn:
            msgs.append(Message("assistant", tuple(turn)))
            turn.clear()
        if results:
            msgs.append(Message("tool", tuple(results)))
            results.clear()

    for i, item in enumerate(items):
        w = f"body.input[{i}]"
        if not isinstance(item, dict):
            raise RequestError(f"{w}: expected an object")
        t = item.get("type", "message")
        role = item.get("role")
        if t == "message" and role in ("system", "developer"):
            system.append(
                "".join(b.text for b in _parts(item.get("content"), w) if isinstance(b, Text))
            )
        elif t == "message" and role == "user":
            flush()
            msgs.append(Message("user", tuple(_parts(item.get("content"), w))))
        elif t == "message" and role == "assistant":
            if results:
                flush()
            turn += [b for b in _parts(item.get("content"), w) if isinstance(b, Text)]
        elif t == "message":
            raise RequestError(f"{w}.role: unsupported role {role!r}")
        elif t == "function_call_output":
            if turn:
                msgs.append(Message("assistant", tuple(turn)))
                turn.clear()
            results.append(_result(item, w))
        else:
            if results:
                flush()
            if t == "reasoning":
                turn.append(_reasoning(item))
            elif t == "function_call":
                turn.append(
                    ToolUse.from_json(
                        require(item, "call_id", str, w),
                        require(item, "name", str, w),
                        str(item.get("arguments") or ""),
                    )
                )
            elif isinstance(t, str) and t:
                turn.append(ServerBlock(dumps(item)))  # a built-in tool call, a new item type
            else:
                raise RequestError(f"{w}.type: expected a string")
    flush()
    if system:
        msgs.insert(0, Message("system", (Text("\n\n".join(system)),)))
    tools: list[ToolDecl] = []
    extra: list[dict[str, Any]] = []
    for j, tool in enumerate(body.pop("tools", None) or []):
        if not isinstance(tool, dict):
            raise RequestError(f"body.tools[{j}]: expected an object")
        if tool.get("type") == "function":
            tools.append(
                ToolDecl(
                    require(tool, "name", str, f"body.tools[{j}]"),
                    str(tool.get("description") or ""),
                    tool.get("parameters") or {"type": "object", "properties": {}},
                )
            )
        else:
            extra.append(tool)  # web_search, file_search, ...: as sent
    body.pop("model", None)
    max_tokens = body.pop("max_output_tokens", None)
    stream = bool(body.pop("stream", False))
    return ParsedRequest(
        "openai-responses",
        model,
        Conversation(msgs),
        tools,
        max_tokens if isinstance(max_tokens, int) else None,
        "max_output_tokens",
        stream,
        body,
        extra,
    )
