#!/usr/bin/env python3
"""Seeded generator of realistic provider response bodies (stdlib only).

One message per body, grown to a byte target with many small deltas (1-20
characters, as streamed by real models), following the wire details in
the captured provider wire formats (see docs/decoding.md):

- openai-chat: compact JSON chunks with the full key set (``id, object,
  created, model, service_tier, system_fingerprint, choices, usage,
  obfuscation``), ``usage: null`` on every chunk (include_usage), a first
  delta ``{"role":"assistant","content":"","refusal":null}``, text deltas,
  then tool calls (header with ``arguments: ""``, then argument fragments cut
  anywhere -- also inside ``\\"`` and ``\\uXXXX`` escapes), a finish chunk
  with ``delta: {}``, the usage chunk with ``choices: []`` and
  ``data: [DONE]``.
- anthropic-messages: ``event:`` + ``data:`` lines, ``ping`` after
  message_start and now and then, 0-15 padding spaces before the final
  ``}`` of data lines, a thinking block with one ``signature_delta``, a text
  block, tool_use blocks whose ``partial_json`` starts with ``""`` and is
  then sliced anywhere, message_delta (cumulative usage) and message_stop.
- openai-responses: the openai-chat body of the same seed re-told on the
  Responses wire (``event:`` + ``data:``, ``sequence_number``, ``item_id``,
  ``output_index``, ``obfuscation``): the same text and argument fragments,
  so the two wires can be compared on the same text; its body is larger
  (about 1.5x: the events say more about each delta).

Text mixes prose, code (quotes, backslashes, tabs, newlines), accents, CJK,
emoji (incl. ZWJ sequences) and the odd control character; a small share of
chunks is serialized with every non-ASCII character as ``\\uXXXX`` (as some
OpenAI-compatible servers do).

``generate()`` returns the body and the expected assembled message in the
form of ``panto.Message.to_dict()``, so tests can check the decoding.

    python bench/streamgen.py --wire openai-chat --bytes 5000000 --seed 1 > out.sse
    python bench/streamgen.py --wire anthropic-messages --bytes 20000 --expect out.json > out.sse
"""

from __future__ import annotations

import argparse
import base64
import json
import random
import sys
from dataclasses import dataclass
from typing import Any

__all__ = ["WIRES", "Generated", "generate"]

WIRES = ("openai-chat", "anthropic-messages", "openai-responses")

_ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"

_WORDS = [
    "the",
    "a",
    "of",
    "to",
    "and",
    "in",
    "is",
    "it",
    "that",
    "for",
    "on",
    "with",
    "as",
    "this",
    "we",
    "be",
    "are",
    "from",
    "by",
    "at",
    "or",
    "an",
    "function",
    "return",
    "value",
    "error",
    "stream",
    "parser",
    "buffer",
    "event",
    "token",
    "model",
    "tool",
    "call",
    "result",
    "message",
    "block",
    "index",
    "delta",
    "usage",
    "cache",
    "input",
    "output",
    "file",
    "path",
    "line",
    "byte",
    "decode",
    "encode",
    "request",
    "response",
    "server",
    "client",
    "retry",
    "timeout",
    "chunk",
    "payload",
    "json",
    "because",
    "however",
    "therefore",
    "first",
    "then",
    "finally",
    "note",
    "that",
    "which",
    "when",
    "while",
    "until",
    "café",
    "naïve",
    "résumé",
    "über",
    "Größe",
    "façade",
    "déjà-vu",
    "señor",
    "São",
    "Paulo",
    "Ærøskøbing",
    "Łódź",
    "中文",
    "日本語",
    "한국어",
    "привет",
    "мир",
    "ελληνικά",
    "العربية",
    "עברית",
    "हिन्दी",
    "ไทย",
    "😀",
    "🚀",
    "👍🏽",
    "🎉",
    "👩\u200d💻",
    "🇫🇷",
    "✅",
    "⚠️",
    "—",
    "–",
    "…",
    "“quoted”",
    "‘single’",
    "«",
    "guillemets",
    "»",
    "±½",
    "°C",
    "€",
    "£",
    "¥",
]

_SNIPPETS = (
    'printf("%s\\n", path);',
    "if (n < 0) { return -1; }",
    "const re = /\\\\d+\\.\\d*/g;",
    'let s = "tab\there";',
    "C:\\\\Users\\\\dev\\\\project",
    '{"key": "value", "list": [1, 2, 3]}',
    "x = {'a': 1, \"b\": 2}",
    "fmt.Println(`raw \\n string`)",
    "echo \"$HOME\" | sed 's/\\//_/g'",
    "\x1b[1mbold\x1b[0m",
    '<div class="note">&amp;</div>',
)


class _Text:
    """An endless, seeded source of realistic text."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def sentence(self) -> str:
        rng = self.rng
        r = rng.random()
        if r < 0.12:
            return (
                "\n```\n"
                + "\n".join(rng.choice(_SNIPPETS) for _ in range(rng.randint(1, 4)))
                + "\n```\n"
            )
        if r < 0.2:
            return "\n\n- " + " ".join(rng.choice(_WORDS) for _ in range(rng.randint(3, 9)))
        words = [rng.choice(_WORDS) for _ in range(rng.randint(4, 18))]
        if rng.random() < 0.3:
            words.insert(rng.randrange(len(words)), "`" + rng.choice(_SNIPPETS) + "`")
        s = " ".join(words)
        return s[:1].upper() + s[1:] + rng.choice((". ", ". ", "! ", "? ", ".\n\n", ": "))


class _Slicer:
    """Cuts an endless text into pieces of 1-20 characters (code points)."""

    def __init__(self, rng: random.Random, text: _Text) -> None:
        self.rng = rng
        self.text = text
        self.buf = ""

    def size(self) -> int:
        r = self.rng.random()
        if r < 0.1:
            return 1
        if r < 0.85:
            return self.rng.randint(2, 8)
        return self.rng.randint(9, 20)

    def piece(self) -> str:
        n = self.size()
        while len(self.buf) < n:
            self.buf += self.text.sentence()
        p, self.buf = self.buf[:n], self.buf[n:]
        return p


def _rand_id(rng: random.Random, prefix: str, n: int) -> str:
    return prefix + "".join(rng.choice(_ALNUM) for _ in range(n))


def _dumps(obj: Any, ascii_: bool = False) -> str:
    return json.dumps(obj, ensure_ascii=ascii_, separators=(",", ":"))


def _esc(s: str, ascii_: bool) -> str:
    """The JSON string escape of s, without the quotes."""
    return json.dumps(s, ensure_ascii=ascii_)[1:-1]


@dataclass
class Generated:
    wire: str
    body: bytes
    message: dict  # panto Message.to_dict() of the assembled message
    n_events: int  # SSE events in the body


_TOOLS = (
    ("write_file", "path", "content"),
    ("edit", "file_path", "new_string"),
    ("bash", "description", "command"),
)


def _tool_args(rng: random.Random, ascii_args: bool) -> tuple[str, str, str, str, str]:
    """A tool name, its two argument keys, the first (short) value and the
    arguments JSON text up to the opening quote of the second (long) value,
    which the caller streams in escaped pieces and closes with '"}'."""
    name, k1, k2 = rng.choice(_TOOLS)
    v1 = rng.choice(("src/main.c", "README.md", "tests/test_ü.py", "docs/指南.md", "list files"))
    prefix = (
        "{"
        + json.dumps(k1)
        + ": "
        + json.dumps(v1, ensure_ascii=ascii_args)
        + ", "
        + json.dumps(k2)
        + ': "'
    )
    return name, k1, v1, k2, prefix


def _gen_openai(target: int, seed: int, ascii_rate: float) -> Generated:
    rng = random.Random(seed)
    text_src = _Text(rng)
    slicer = _Slicer(rng, text_src)
    cid = _rand_id(rng, "chatcmpl-", 29)
    model = rng.choice(("gpt-4.1-2025-04-14", "gpt-4o-2024-08-06", "gpt-4.1-mini-2025-04-14"))
    created = 1764700000 + rng.randrange(100000)
    fp = "fp_" + "".join(rng.choice("0123456789abcdef") for _ in range(10))
    parts: list[bytes] = []
    size = 0
    n_events = 0

    def emit(obj: dict) -> None:
        nonlocal size, n_events
        b = b"data: " + _dumps(obj, rng.random() < ascii_rate).encode() + b"\n\n"
        parts.append(b)
        size += len(b)
        n_events += 1

    def chunk(delta: dict, finish: str | None = None) -> None:
        emit(
            {
                "id": cid,
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "service_tier": "default",
                "system_fingerprint": fp,
                "choices": [
                    {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
                ],
                "usage": None,
                "obfuscation": "".join(rng.choice(_ALNUM) for _ in range(rng.randint(1, 16))),
            }
        )

    chunk({"role": "assistant", "content": "", "refusal": None})
    text_budget = int(target * 0.8)
    text: list[str] = []
    while size < text_budget or not text:
        p = slicer.piece()
        text.append(p)
        chunk({"content": p})
    content: list[dict] = [{"type": "text", "text": "".join(text)}]

    n_tools = 1 if target < 50_000 else rng.randint(2, 3)
    tool_share = (target - size) // n_tools
    for k in range(n_tools):
        tool_end = size + tool_share if k < n_tools - 1 else target
        tail = 900 if k == n_tools - 1 else 0  # finish + usage chunks + [DONE]
        call_id = _rand_id(rng, "call_", 24)
        ascii_args = rng.random() < 0.3
        name, k1, v1, k2, prefix = _tool_args(rng, ascii_args)
        chunk(
            {
                "tool_calls": [
                    {
                        "index": k,
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": ""},
                    }
                ]
            }
        )
        pending = prefix
        value: list[str] = []
        finished = False
        while True:
            if (
                not finished
                and value
                and size + (len(pending) // 5 + 2) * size / n_events + tail >= tool_end
            ):
                pending += '"}'
                finished = True
            while not finished and len(pending) < 20:
                p = slicer.piece()
                value.append(p)
                pending += _esc(p, ascii_args)
            if finished and not pending:
                break
            n = min(slicer.size(), len(pending))
            frag, pending = pending[:n], pending[n:]
            chunk({"tool_calls": [{"index": k, "function": {"arguments": frag}}]})
        content.append(
            {"type": "tool_use", "id": call_id, "name": name, "input": {k1: v1, k2: "".join(value)}}
        )

    chunk({}, "tool_calls")
    prompt = rng.randint(1000, 60000)
    cached = rng.choice((0, prompt // 2 // 128 * 128))
    completion = max(1, size // 40)
    reasoning = 0
    emit(
        {
            "id": cid,
            "object": "chat.completion.chunk",
            "created": created,
            "model": model,
            "service_tier": "default",
            "system_fingerprint": fp,
            "choices": [],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": completion,
                "total_tokens": prompt + completion,
                "prompt_tokens_details": {"cached_tokens": cached, "audio_tokens": 0},
                "completion_tokens_details": {
                    "reasoning_tokens": reasoning,
                    "audio_tokens": 0,
                    "accepted_prediction_tokens": 0,
                    "rejected_prediction_tokens": 0,
                },
            },
            "obfuscation": "".join(rng.choice(_ALNUM) for _ in range(rng.randint(1, 16))),
        }
    )
    parts.append(b"data: [DONE]\n\n")
    n_events += 1
    usage = {
        "input_tokens": prompt - cached,
        "cache_read_tokens": cached,
        "cache_write_tokens": 0,
        "output_tokens": completion,
        "reasoning_tokens": reasoning,
    }
    message = {
        "role": "assistant",
        "content": content,
        "usage": usage,
        "stop_reason": "tool_use",
        "model": model,
    }
    return Generated("openai-chat", b"".join(parts), message, n_events)


def _gen_anthropic(target: int, seed: int, ascii_rate: float) -> Generated:
    rng = random.Random(seed)
    text_src = _Text(rng)
    slicer = _Slicer(rng, text_src)
    mid = _rand_id(rng, "msg_01", 22)
    model = rng.choice(
        ("claude-sonnet-4-5-20250929", "claude-opus-4-1-20250805", "claude-haiku-4-5-20251001")
    )
    parts: list[bytes] = []
    size = 0
    n_events = 0

    def ev(name: str, obj: dict, pad: bool = True) -> None:
        nonlocal size, n_events
        s = _dumps(obj, rng.random() < ascii_rate)
        if pad:
            s = s[:-1] + " " * rng.randint(0, 15) + "}"
        b = b"event: " + name.encode() + b"\ndata: " + s.encode() + b"\n\n"
        parts.append(b)
        size += len(b)
        n_events += 1

    def ping() -> None:
        nonlocal size, n_events
        b = b'event: ping\ndata: {"type": "ping"}\n\n'
        parts.append(b)
        size += len(b)
        n_events += 1

    def delta(i: int, d: dict) -> None:
        ev("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d})
        if rng.random() < 0.002:
            ping()

    input_tokens = rng.randint(5, 5000)
    cache_write = rng.choice((0, 0, 2048, 4096))
    cache_read = rng.choice((0, 10240, 30720))
    start_usage = {
        "input_tokens": input_tokens,
        "cache_creation_input_tokens": cache_write,
        "cache_read_input_tokens": cache_read,
        "cache_creation": {
            "ephemeral_5m_input_tokens": cache_write,
            "ephemeral_1h_input_tokens": 0,
        },
        "output_tokens": 1,
        "service_tier": "standard",
    }
    ev(
        "message_start",
        {
            "type": "message_start",
            "message": {
                "id": mid,
                "type": "message",
                "role": "assistant",
                "model": model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": start_usage,
            },
        },
    )
    ping()
    content: list[dict] = []
    idx = 0

    # thinking (~10%)
    ev(
        "content_block_start",
        {
            "type": "content_block_start",
            "index": idx,
            "content_block": {"type": "thinking", "thinking": "", "signature": ""},
        },
    )
    think: list[str] = []
    while size < target * 0.1 or not think:
        p = slicer.piece()
        think.append(p)
        delta(idx, {"type": "thinking_delta", "thinking": p})
    sig = base64.b64encode(rng.randbytes(rng.randint(150, 300))).decode()
    delta(idx, {"type": "signature_delta", "signature": sig})
    ev("content_block_stop", {"type": "content_block_stop", "index": idx})
    content.append({"type": "thinking", "text": "".join(think), "signature": sig})
    idx += 1

    # text (~70%)
    ev(
        "content_block_start",
        {
            "type": "content_block_start",
            "index": idx,
            "content_block": {"type": "text", "text": ""},
        },
    )
    text: list[str] = []
    while size < target * 0.8 or not text:
        p = slicer.piece()
        text.append(p)
        delta(idx, {"type": "text_delta", "text": p})
    ev("content_block_stop", {"type": "content_block_stop", "index": idx})
    content.append({"type": "text", "text": "".join(text)})
    idx += 1

    # tool_use (~20%)
    n_tools = 1 if target < 50_000 else rng.randint(2, 3)
    tool_share = (target - size) // n_tools
    for k in range(n_tools):
        tool_end = size + tool_share if k < n_tools - 1 else target
        tail = 250 if k == n_tools - 1 else 60  # block stop (+ message_delta, message_stop)
        tid = _rand_id(rng, "toolu_01", 22)
        ascii_args = rng.random() < 0.2
        name, k1, v1, k2, prefix = _tool_args(rng, ascii_args)
        ev(
            "content_block_start",
            {
                "type": "content_block_start",
                "index": idx,
                "content_block": {"type": "tool_use", "id": tid, "name": name, "input": {}},
            },
        )
        delta(idx, {"type": "input_json_delta", "partial_json": ""})
        pending = prefix
        value: list[str] = []
        finished = False
        while True:
            if (
                not finished
                and value
                and size + (len(pending) // 5 + 2) * size / n_events + tail >= tool_end
            ):
                pending += '"}'
                finished = True
            while not finished and len(pending) < 20:
                p = slicer.piece()
                value.append(p)
                pending += _esc(p, ascii_args)
            if finished and not pending:
                break
            n = min(slicer.size(), len(pending))
            frag, pending = pending[:n], pending[n:]
            delta(idx, {"type": "input_json_delta", "partial_json": frag})
        ev("content_block_stop", {"type": "content_block_stop", "index": idx})
        content.append(
            {"type": "tool_use", "id": tid, "name": name, "input": {k1: v1, k2: "".join(value)}}
        )
        idx += 1

    output_tokens = max(1, size // 30)
    ev(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {
                "input_tokens": input_tokens,
                "cache_creation_input_tokens": cache_write,
                "cache_read_input_tokens": cache_read,
                "output_tokens": output_tokens,
            },
        },
    )
    ev("message_stop", {"type": "message_stop"})
    usage = {
        "input_tokens": input_tokens,
        "cache_read_tokens": cache_read,
        "cache_write_tokens": cache_write,
        "output_tokens": output_tokens,
        "reasoning_tokens": 0,
    }
    message = {
        "role": "assistant",
        "content": content,
        "usage": usage,
        "stop_reason": "tool_use",
        "model": model,
    }
    return Generated("anthropic-messages", b"".join(parts), message, n_events)


def _gen_responses(target: int, seed: int, ascii_rate: float) -> Generated:
    """The openai-chat body of the same seed, on the Responses wire: the
    same text and argument fragments, one event per chat chunk that carried
    one (so the two wires can be compared on the same text)."""
    chat = _gen_openai(target, seed, ascii_rate)
    rng = random.Random(seed + 7)
    rid = _rand_id(rng, "resp_", 48)
    model = chat.message["model"]
    parts: list[bytes] = []
    n_events = 0
    seq = 0

    def ev(obj: dict) -> None:
        nonlocal n_events, seq
        obj = {"type": obj["type"], "sequence_number": seq, **obj}
        seq += 1
        s = _dumps(obj, rng.random() < ascii_rate)
        parts.append(b"event: " + obj["type"].encode() + b"\ndata: " + s.encode() + b"\n\n")
        n_events += 1

    def obf() -> str:
        return "".join(rng.choice(_ALNUM) for _ in range(rng.randint(1, 16)))

    def response(status: str, usage: dict | None) -> dict:
        return {
            "id": rid,
            "object": "response",
            "created_at": 1764700000,
            "status": status,
            "error": None,
            "incomplete_details": None,
            "model": model,
            "output": [],
            "store": False,
            "usage": usage,
        }

    ev({"type": "response.created", "response": response("in_progress", None)})
    ev({"type": "response.in_progress", "response": response("in_progress", None)})
    msg_id = _rand_id(rng, "msg_", 48)
    out_index = 0
    text_open = False
    calls: dict[int, tuple[int, str]] = {}  # chat tool index -> (output_index, item id)
    usage: dict = {}
    for line in chat.body.split(b"\n\n"):
        if not line.startswith(b"data: {"):
            continue
        chunk = json.loads(line[6:])
        if chunk.get("usage"):
            usage = chunk["usage"]
        for ch in chunk["choices"]:
            d = ch["delta"]
            if d.get("content"):
                if not text_open:
                    item = {"id": msg_id, "type": "message", "status": "in_progress"}
                    ev(
                        {
                            "type": "response.output_item.added",
                            "output_index": 0,
                            "item": {**item, "content": [], "role": "assistant"},
                        }
                    )
                    part = {"type": "output_text", "annotations": [], "logprobs": [], "text": ""}
                    ev(
                        {
                            "type": "response.content_part.added",
                            "item_id": msg_id,
                            "output_index": 0,
                            "content_index": 0,
                            "part": part,
                        }
                    )
                    text_open = True
                    out_index = 1
                ev(
                    {
                        "type": "response.output_text.delta",
                        "item_id": msg_id,
                        "output_index": 0,
                        "content_index": 0,
                        "delta": d["content"],
                        "logprobs": [],
                        "obfuscation": obf(),
                    }
                )
            for tc in d.get("tool_calls") or ():
                k = tc["index"]
                if tc.get("id"):
                    if text_open and not calls:
                        text = chat.message["content"][0]["text"]
                        part = {
                            "type": "output_text",
                            "annotations": [],
                            "logprobs": [],
                            "text": text,
                        }
                        ev(
                            {
                                "type": "response.output_text.done",
                                "item_id": msg_id,
                                "output_index": 0,
                                "content_index": 0,
                                "text": text,
                                "logprobs": [],
                            }
                        )
                        ev(
                            {
                                "type": "response.content_part.done",
                                "item_id": msg_id,
                                "output_index": 0,
                                "content_index": 0,
                                "part": part,
                            }
                        )
                        done = {
                            "id": msg_id,
                            "type": "message",
                            "status": "completed",
                            "content": [part],
                            "role": "assistant",
                        }
                        ev({"type": "response.output_item.done", "output_index": 0, "item": done})
                    fc = _rand_id(rng, "fc_", 48)
                    calls[k] = (out_index, fc)
                    f = tc["function"]
                    head = {
                        "id": fc,
                        "type": "function_call",
                        "status": "in_progress",
                        "arguments": "",
                        "call_id": tc["id"],
                        "name": f["name"],
                    }
                    ev(
                        {
                            "type": "response.output_item.added",
                            "output_index": out_index,
                            "item": head,
                        }
                    )
                    out_index += 1
                    continue
                o, fc = calls[k]
                ev(
                    {
                        "type": "response.function_call_arguments.delta",
                        "item_id": fc,
                        "output_index": o,
                        "delta": tc["function"]["arguments"],
                        "obfuscation": obf(),
                    }
                )
    for block, (o, fc) in zip(chat.message["content"][1:], calls.values()):
        args = json.dumps(block["input"], ensure_ascii=False)
        ev(
            {
                "type": "response.function_call_arguments.done",
                "item_id": fc,
                "output_index": o,
                "arguments": args,
            }
        )
        item = {
            "id": fc,
            "type": "function_call",
            "status": "completed",
            "arguments": args,
            "call_id": block["id"],
            "name": block["name"],
        }
        ev({"type": "response.output_item.done", "output_index": o, "item": item})
    final = {
        "input_tokens": usage["prompt_tokens"],
        "input_tokens_details": {"cached_tokens": usage["prompt_tokens_details"]["cached_tokens"]},
        "output_tokens": usage["completion_tokens"],
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": usage["total_tokens"],
    }
    ev({"type": "response.completed", "response": response("completed", final)})
    return Generated("openai-responses", b"".join(parts), chat.message, n_events)


def generate(wire: str, target_bytes: int, seed: int = 1, *, ascii_rate: float = 0.03) -> Generated:
    """One response body of about ``target_bytes`` bytes (within ~1%, or a
    couple of KB for tiny targets) for ``wire``, and its expected assembled
    message."""
    if wire == "openai-chat":
        return _gen_openai(target_bytes, seed, ascii_rate)
    if wire == "anthropic-messages":
        return _gen_anthropic(target_bytes, seed, ascii_rate)
    if wire == "openai-responses":
        return _gen_responses(target_bytes, seed, ascii_rate)
    raise ValueError(f"unknown wire {wire!r}; expected one of {WIRES}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--wire", choices=WIRES, required=True)
    ap.add_argument(
        "--bytes", type=int, default=5_000_000, help="target body size (default 5000000)"
    )
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--ascii-rate",
        type=float,
        default=0.03,
        help="share of chunks serialized with \\uXXXX for all non-ASCII (default 0.03)",
    )
    ap.add_argument(
        "--expect", metavar="FILE", help="also write the expected message (JSON) to FILE"
    )
    ap.add_argument(
        "-o", "--output", metavar="FILE", help="write the body to FILE instead of stdout"
    )
    args = ap.parse_args(argv)
    g = generate(args.wire, args.bytes, args.seed, ascii_rate=args.ascii_rate)
    if args.output:
        with open(args.output, "wb") as f:
            f.write(g.body)
    else:
        sys.stdout.buffer.write(g.body)
        sys.stdout.buffer.flush()
    if args.expect:
        with open(args.expect, "w", encoding="utf-8") as f:
            json.dump(g.message, f, ensure_ascii=False)
    print(f"{args.wire}: {len(g.body)} bytes, {g.n_events} events", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
