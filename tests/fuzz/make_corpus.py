#!/usr/bin/env python3
"""Write the committed seed corpus of the fuzz targets (tests/fuzz/corpus/).

    python3 tests/fuzz/make_corpus.py          # (re)write the corpus
    python3 tests/fuzz/make_corpus.py --check  # fail if the committed files differ

Seeds come from tests/fixtures/*.sse (the raw bodies; each provider wire
gets its own fixtures plus the wire-independent ones, the raw SSE wire gets
all of them) and from the small hand cases below.  Every stream seed starts
with the 3-byte header fuzz_stream.c reads (flags, then a 16-bit PRNG seed);
each fixture body is written with up to three header variants (hand cases
with five) so that the limit profiles
and drain modes all start from real streams.  JSON seeds are the distinct
data payloads of the fixtures plus hand cases, after a 1-byte depth prefix.
File names are content hashes, as libFuzzer names its own finds.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIXTURES = HERE.parent / "fixtures"
CORPUS = HERE / "corpus"

# flags byte (see fuzz_stream.c), seed low, seed high
HEADERS = [
    b"\x00\x01\x00",
    b"\x05\x2a\x00",
    b"\x16\x07\x01",
    b"\x1b\x63\x00",
    b"\x0e\x11\x00",
    b"\x60\x3b\x02",  # batches through panto_next_events, then a reset
    b"\x24\x00\x00",  # batches of one, drained lazily
]

SSE_HAND = [
    b"\xef\xbb\xbfdata: bom\n\n",
    b"data: a\r\ndata: b\r\n\r\n",
    b"data: cr\rdata: only\r\r",
    b": comment\nevent: e\ndata\ndata:\ndata: x\n\n",
    b"id: 1\nretry: 1500\ndata: y\n\nid\nretry: 15x\ndata: z\n\n",
    b"id: a\x00b\ndata: nul in id\n\n",
    b"field-without-colon\nunknown: value\ndata:  two spaces\n\n",
    b"event: only-type\n\ndata: last without blank line",
    b"data: \xff\xfe invalid utf-8\n\n",
]

OPENAI_HAND = [
    b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{"content":"hi"}}]}\n\n'
    b'data: {"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n'
    b"data: [DONE]\n\n",
    b'data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"t","type":"function",'
    b'"function":{"name":"f","arguments":"{\\"a\\""}}]}}]}\n\n'
    b'data: {"id":"c","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":":1}"}}]},'
    b'"finish_reason":"tool_calls"}],"usage":{"prompt_tokens":3,"completion_tokens":2}}\n\n'
    b"data: [DONE]\n\n",
    b'data: {"error":{"message":"boom","type":"server_error"}}\n\n',
    b' data: {"id":"c","choices":[]}\n\ndata: [DONE]\n\n',
]

ANTHROPIC_HAND = [
    b'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"c","content":[],'
    b'"usage":{"input_tokens":1,"output_tokens":1}}}\n\n'
    b'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n'
    b'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\u00e9\\ud83d\\ude00"}}\n\n'
    b'event: content_block_stop\ndata: {"type":"content_block_stop","index":0}\n\n'
    b'event: message_delta\ndata: {"type":"message_delta","delta":{"stop_reason":"end_turn"},"usage":{"output_tokens":5}}\n\n'
    b'event: message_stop\ndata: {"type":"message_stop"}\n\n',
    b'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}\n\n',
    b'event: ping\ndata: {"type":"ping"}\n\n: keep-alive\n\n',
]


def _responses_repeated_text() -> bytes:
    """A Responses stream whose `.done` events, output_item.done and
    response.completed repeat a text of over 1 KB (and a long
    encrypted_content): the core checks those strings against the block's
    text or the last long string instead of scanning them (csrc/json.h)."""
    pieces = [
        "caf\xc3\xa9 ",
        "\\u00e9t\\u00e9 ",
        "\xf0\x9f\x98\x80 ",
        'a \\"q\\" ',
        "n\\n",
        "x\\ud83d\\ude00 ",
    ]
    deltas = ["".join(pieces[(k + j) % len(pieces)] for j in range(10)) for k in range(21)]
    text = "".join(deltas)
    enc = "gAAAAABo+x/" * 94

    def ev(t: str, data: str) -> str:
        return f"event: {t}\ndata: {data}\n\n"

    out = [
        ev("response.created", '{"type":"response.created","response":{"id":"r","model":"m"}}'),
        ev(
            "response.output_item.added",
            '{"type":"response.output_item.added","output_index":0,'
            '"item":{"type":"message","content":[]}}',
        ),
        ev(
            "response.content_part.added",
            '{"type":"response.content_part.added","output_index":0,'
            '"content_index":0,"part":{"type":"output_text","text":""}}',
        ),
    ]
    for k, d in enumerate(deltas):
        out.append(
            ev(
                "response.output_text.delta",
                f'{{"type":"response.output_text.delta","sequence_number":{k + 3},'
                f'"output_index":0,"content_index":0,"delta":"{d}","logprobs":[],"obfuscation":"x"}}',
            )
        )
    part = f'{{"type":"output_text","annotations":[],"text":"{text}"}}'
    out += [
        ev(
            "response.output_text.done",
            f'{{"type":"response.output_text.done","output_index":0,'
            f'"content_index":0,"text":"{text}"}}',
        ),
        ev(
            "response.content_part.done",
            f'{{"type":"response.content_part.done","output_index":0,'
            f'"content_index":0,"part":{part}}}',
        ),
        ev(
            "response.output_item.done",
            f'{{"type":"response.output_item.done","output_index":0,'
            f'"item":{{"type":"message","content":[{part}]}}}}',
        ),
        ev(
            "response.output_item.added",
            '{"type":"response.output_item.added","output_index":1,'
            '"item":{"id":"rs","type":"reasoning","summary":[]}}',
        ),
        ev(
            "response.output_item.done",
            f'{{"type":"response.output_item.done","output_index":1,'
            f'"item":{{"id":"rs","type":"reasoning","summary":[],"encrypted_content":"{enc}"}}}}',
        ),
        ev(
            "response.completed",
            f'{{"type":"response.completed","response":{{"status":"completed",'
            f'"output":[{{"type":"message","content":[{part}]}},{{"type":"reasoning","encrypted_content":"{enc}"}}],'
            '"usage":{"input_tokens":5,"output_tokens":3}}}',
        ),
    ]
    return "".join(out).encode("latin-1")


RESPONSES_HAND = [_responses_repeated_text()]

JSON_HAND = [
    b"{}",
    b"[]",
    b'{"a":[1,-2.5e+3,true,false,null,"s\\n\\u0041\\ud83d\\ude00"]}',
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    b'"\\ud800"',
    b"01",
    b"1.",
    b"-0.0e-0",
    b'{"a":1,}',
    b'"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"',
    b'"\xed\xa0\x80"',
    b"  \t\r\n 123 ",
    b'{"k":"v","k":"w"}',
    b"[1e999999]",
]


def name(data: bytes) -> str:
    return hashlib.sha1(data).hexdigest()


def wire_of(fixture: Path) -> str:
    n = fixture.name
    if n.startswith("openai_responses_"):
        return "openai_responses"
    if n.startswith("openai_"):
        return "openai"
    if n.startswith("anthropic_"):
        return "anthropic"
    return "any"


def data_payloads(body: bytes) -> list[bytes]:
    out = []
    for line in body.replace(b"\r\n", b"\n").split(b"\n"):
        if line.startswith(b"data:"):
            p = line[5:]
            if p.startswith(b" "):
                p = p[1:]
            if p and p != b"[DONE]":
                out.append(p)
    return out


def build() -> dict[str, dict[str, bytes]]:
    targets: dict[str, dict[str, bytes]] = {
        "sse": {},
        "openai_chat": {},
        "anthropic": {},
        "openai_responses": {},
        "json": {},
    }

    def add(target: str, data: bytes) -> None:
        targets[target][name(data)] = data

    def add_stream(target: str, body: bytes, headers: list[bytes] = HEADERS) -> None:
        for h in headers:
            add(target, h + body)

    for f in sorted(FIXTURES.glob("*.sse")):
        body = f.read_bytes()
        w = wire_of(f)
        add_stream("sse", body, HEADERS[:1])
        if w in ("openai", "any"):
            add_stream("openai_chat", body, HEADERS[:3])
        if w in ("anthropic", "any"):
            add_stream("anthropic", body, HEADERS[:3])
        if w in ("openai_responses", "any"):
            add_stream("openai_responses", body, HEADERS[:3])
        for p in data_payloads(body):
            add("json", b"\x00" + p)
    for body in SSE_HAND:
        add_stream("sse", body)
    for body in OPENAI_HAND:
        add_stream("openai_chat", body)
    for body in ANTHROPIC_HAND:
        add_stream("anthropic", body)
    for body in RESPONSES_HAND:
        add_stream("openai_responses", body)
    for j in JSON_HAND:
        add("json", b"\x00" + j)
        add("json", b"\x03" + j)
    return targets


def main() -> int:
    check = "--check" in sys.argv[1:]
    targets = build()
    bad = 0
    for target, files in targets.items():
        d = CORPUS / target
        have = {p.name for p in d.glob("*")} if d.is_dir() else set()
        if check:
            if have != set(files):
                print(f"{d}: {len(set(files) - have)} missing, {len(have - set(files))} extra")
                bad = 1
            continue
        d.mkdir(parents=True, exist_ok=True)
        for stale in have - set(files):
            (d / stale).unlink()
        for n, data in files.items():
            (d / n).write_bytes(data)
        print(f"{d.relative_to(HERE.parent.parent)}: {len(files)} seeds")
    return bad


if __name__ == "__main__":
    sys.exit(main())
