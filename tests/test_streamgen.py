"""bench/streamgen.py generates realistic bodies whose decoding is known:
panto.StreamDecoder and the SDK-free reference decoder in bench/decode.py
must both assemble exactly the generator's expected message.  Also a smoke
run of `bench/decode.py --quick` (no speed thresholds here)."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

import panto

BENCH = Path(__file__).resolve().parent.parent / "bench"
sys.path.insert(0, str(BENCH))
import decode as bench_decode  # noqa: E402
import streamgen  # noqa: E402

SEEDS = (1, 2, 3, 11)
SIZES = (2_000, 30_000, 150_000)


def random_chunks(body: bytes, seed: int) -> list[bytes]:
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(body):
        n = rng.choice((1, 2, 5, 64, 700, 1024, 4096))
        out.append(body[i : i + n])
        i += n
    return out


@pytest.mark.parametrize("wire", streamgen.WIRES)
@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("size", SIZES)
def test_generated_stream_decodes(wire, seed, size):
    g = streamgen.generate(wire, size, seed)
    chunks = random_chunks(g.body, seed)
    msg = panto.accumulate(panto.decode(wire, chunks)).to_dict()
    assert msg == g.message
    # the events agree with the message: deltas join to the completed blocks
    texts: dict[int, list[str]] = {}
    completed: dict[int, object] = {}
    for ev in panto.decode(wire, chunks):
        if isinstance(ev, panto.ContentDelta):
            assert ev.text, "empty content deltas are not emitted"
            texts.setdefault(ev.index, []).append(ev.text)
        elif isinstance(ev, panto.BlockComplete):
            completed[ev.index] = ev.block
    for i, block in completed.items():
        joined = "".join(texts.get(i, ()))
        if isinstance(block, panto.ToolUse):
            assert json.loads(joined) == block.input
        else:
            assert joined == block.text
    # the SDK-free reference decoder agrees
    ref = bench_decode.reference_accumulate(wire, bench_decode.payloads(chunks, json.loads))
    assert ref == g.message


@pytest.mark.parametrize("wire", streamgen.WIRES)
def test_reference_with_orjson(wire):
    orjson = pytest.importorskip("orjson")
    g = streamgen.generate(wire, 40_000, 5)
    chunks = bench_decode.split_chunks(g.body, 5)
    assert (
        bench_decode.reference_accumulate(wire, bench_decode.payloads(chunks, orjson.loads))
        == g.message
    )


@pytest.mark.parametrize("wire", streamgen.WIRES)
def test_deterministic_and_sized(wire):
    a = streamgen.generate(wire, 100_000, 7)
    b = streamgen.generate(wire, 100_000, 7)
    c = streamgen.generate(wire, 100_000, 8)
    assert a.body == b.body and a.message == b.message
    assert a.body != c.body
    # openai-responses re-tells the openai-chat body of the same target and
    # seed (the same text, for the same-text throughput comparison): its
    # size follows from that body's, within a fifth of the target
    share = 0.2 if wire == "openai-responses" else 0.02
    assert abs(len(a.body) - 100_000) <= 100_000 * share
    big = streamgen.generate(wire, 1_000_000, 2)
    assert abs(len(big.body) - 1_000_000) <= 1_000_000 * max(share, 0.01)


def test_openai_wire_details():
    g = streamgen.generate("openai-chat", 300_000, 3, ascii_rate=0.2)
    events = g.body.split(b"\n\n")
    assert events[-1] == b"" and events[-2] == b"data: [DONE]"
    chunks = [json.loads(e[len(b"data: ") :]) for e in events[:-2]]
    keys = [
        "id",
        "object",
        "created",
        "model",
        "service_tier",
        "system_fingerprint",
        "choices",
        "usage",
        "obfuscation",
    ]
    for c in chunks:
        assert list(c) == keys
        assert c["object"] == "chat.completion.chunk"
    assert all(c["usage"] is None for c in chunks[:-1])
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["prompt_tokens"] > 0
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": "", "refusal": None}
    assert chunks[-2]["choices"][0] == {
        "index": 0,
        "delta": {},
        "logprobs": None,
        "finish_reason": "tool_calls",
    }
    headers = [
        tc
        for c in chunks
        for ch in c["choices"]
        for tc in ch["delta"].get("tool_calls", ())
        if "id" in tc
    ]
    assert headers and all(
        h["function"]["arguments"] == "" and h["id"].startswith("call_") for h in headers
    )
    # escapes and raw UTF-8 on the wire
    for needle in (b'\\"', b"\\\\", b"\\n", b"\\u", "é".encode(), "😀".encode()):
        assert needle in g.body, needle
    assert any(c.encode() in g.body for c in "中日한"), "CJK text"
    # some argument fragment is cut inside an escape (ends with a lone backslash)
    frags = [
        tc["function"]["arguments"]
        for c in chunks
        for ch in c["choices"]
        for tc in ch["delta"].get("tool_calls", ())
    ]
    assert any(f.endswith("\\") and not f.endswith("\\\\") for f in frags)
    sizes = [
        len(ch["delta"]["content"])
        for c in chunks
        for ch in c["choices"]
        if ch["delta"].get("content")
    ]
    assert min(sizes) >= 1 and max(sizes) <= 20


def test_anthropic_wire_details():
    g = streamgen.generate("anthropic-messages", 60_000, 3)
    events = g.body.split(b"\n\n")
    assert events[-1] == b""
    names, datas = [], []
    for e in events[:-1]:
        ev_line, data_line = e.split(b"\n")
        assert ev_line.startswith(b"event: ") and data_line.startswith(b"data: ")
        names.append(ev_line[7:].decode())
        datas.append(data_line[6:])
    assert names[0] == "message_start" and names[1] == "ping" and names[-1] == "message_stop"
    assert names[-2] == "message_delta"
    assert datas[1] == b'{"type": "ping"}'
    assert any(d.endswith(b" }") for d in datas), "padding spaces before the final }"
    objs = [json.loads(d) for d in datas]
    assert all(o["type"] == n for o, n in zip(objs, names))
    deltas = [o["delta"] for o in objs if o["type"] == "content_block_delta"]
    assert sum(d["type"] == "signature_delta" for d in deltas) == 1
    pj = [d["partial_json"] for d in deltas if d["type"] == "input_json_delta"]
    assert pj[0] == ""
    assert any(f.endswith("\\") and not f.endswith("\\\\") for f in pj)


def test_cli_writes_body(tmp_path):
    exp = tmp_path / "exp.json"
    proc = subprocess.run(
        [
            sys.executable,
            str(BENCH / "streamgen.py"),
            "--wire",
            "anthropic-messages",
            "--bytes",
            "5000",
            "--seed",
            "4",
            "--expect",
            str(exp),
        ],
        capture_output=True,
        check=True,
        timeout=60,
    )
    g = streamgen.generate("anthropic-messages", 5000, 4)
    assert proc.stdout == g.body
    assert json.loads(exp.read_text(encoding="utf-8")) == g.message


def test_bench_decode_quick_smoke():
    proc = subprocess.run(
        [sys.executable, str(BENCH / "decode.py"), "--quick"],
        capture_output=True,
        timeout=300,
    )
    out = proc.stdout.decode()
    assert proc.returncode == 0, proc.stderr.decode()
    assert "openai-chat" in out and "anthropic-messages" in out and "openai-responses" in out
    assert out.count("ratios:") == len(streamgen.WIRES)
    assert "panto events     / split+json.loads" in out
    assert out.count("panto events / core") == len(streamgen.WIRES)
    assert out.count("panto events merged / core") == len(streamgen.WIRES)
