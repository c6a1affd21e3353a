#!/usr/bin/env python3
"""Decoding throughput of panto against the usual Python baselines.

One process: builds a ~5 MB body per wire with bench/streamgen.py (fixed
seed), cuts it into 1-4 KiB chunks (seeded, like reads from a socket) and
times, as the median of N runs:

  core                the C core alone, in process: each chunk fed through the
                      C API from Python, every event pulled in C
                      (panto_next_event), no Python object built
  core (C loop)       the same with the feeding loop in C too (info)
  panto events        panto.StreamDecoder, every event materialized in Python
  panto events merged StreamDecoder(merge_deltas=True): one ContentDelta per
                      run of a block's deltas decoded in one go
  panto accumulate    panto.accumulate(panto.decode(...)) -> panto.Message
  split+json.loads    a minimal pure-Python SSE splitter + json.loads per payload
  split+orjson        the same splitter + orjson.loads
  split+json+accum    the splitter + json.loads + a minimal dict accumulator
  SDK accumulator     openai: ChatCompletionStreamState fed ChatCompletionChunk
                      objects built from the payloads (as openai.Stream does);
                      anthropic: accumulate_event + build_events over
                      RawMessageStreamEvent objects (what MessageStream does)

and prints MB/s and the ratios against the targets (>= 3x split+json.loads,
>= 1.5x split+orjson for panto events; >= 50x the SDK accumulators for panto
accumulate).  Figures on a shared machine vary: quote ratios from one run.

Then the cost of Python's event iteration over the core: "panto events /
core" and "panto events merged / core" as time ratios (target <= 1.5x), each
the median over --rounds rounds that run core, events and merged back to
back (so a change of machine load hits all three alike), timed in thread
CPU time; the same two with StreamDecoder's C path (panto._fastevents)
switched off -- the cffi path, as without the extension -- as info rows in
the same rounds.

    python bench/decode.py            # 5 MB bodies, N=5 (about a minute)
    python bench/decode.py --quick    # 200 KB bodies, N=2: a smoke run
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import streamgen

TARGETS = {"split+json.loads": 3.0, "split+orjson": 1.5, "SDK accumulator": 50.0}


# --------------------------------------------------------------------------
# the SDK-free reference: a minimal SSE splitter and a dict accumulator


def sse_split(chunks: Iterable[bytes]) -> Iterator[tuple[bytes | None, bytes]]:
    """Yields (event name or None, data) per SSE event: a bytes buffer split
    into lines (LF, CRLF), `event:` and `data:` fields, one optional space
    after the colon, comments and other fields skipped, data lines joined
    with LF.  What a careful hand-written client does; not all of WHATWG."""
    pending = b""
    event: bytes | None = None
    data: list[bytes] = []
    for chunk in chunks:
        buf = pending + chunk if pending else chunk
        lines = buf.split(b"\n")
        pending = lines.pop()
        for line in lines:
            if line.endswith(b"\r"):
                line = line[:-1]
            if not line:
                if data:
                    yield event, b"\n".join(data)
                event, data = None, []
            elif line.startswith(b"data:"):
                v = line[5:]
                data.append(v[1:] if v.startswith(b" ") else v)
            elif line.startswith(b"event:"):
                v = line[6:]
                event = v[1:] if v.startswith(b" ") else v
    # an unterminated last event is discarded (as WHATWG says)


def payloads(chunks: Iterable[bytes], loads: Callable[[bytes], Any]) -> Iterator[Any]:
    """The JSON payloads of a provider stream (ping and [DONE] skipped)."""
    for event, data in sse_split(chunks):
        if data == b"[DONE]" or event == b"ping":
            continue
        yield loads(data)


def reference_accumulate(wire: str, objs: Iterable[dict]) -> dict:
    """Assemble the message (panto's Message.to_dict() shape) from the JSON
    payloads with plain dicts.  Covers what streamgen produces (text,
    thinking, tool calls, usage, stop reasons); not an error-checking
    decoder."""
    usage = dict.fromkeys(
        (
            "input_tokens",
            "cache_read_tokens",
            "cache_write_tokens",
            "output_tokens",
            "reasoning_tokens",
        ),
        0,
    )
    model = None
    if wire == "openai-chat":
        text: list[str] = []
        tools: dict[int, dict] = {}
        finish = None
        for o in objs:
            if "error" in o:
                raise RuntimeError(o["error"])
            model = o.get("model", model)
            for ch in o.get("choices") or ():
                d = ch.get("delta") or {}
                if d.get("content"):
                    text.append(d["content"])
                for tc in d.get("tool_calls") or ():
                    t = tools.setdefault(tc["index"], {"id": "", "name": "", "args": []})
                    if tc.get("id"):
                        t["id"] = tc["id"]
                    f = tc.get("function") or {}
                    if f.get("name"):
                        t["name"] = f["name"]
                    if f.get("arguments"):
                        t["args"].append(f["arguments"])
                if ch.get("finish_reason"):
                    finish = ch["finish_reason"]
            u = o.get("usage")
            if u:
                cached = (u.get("prompt_tokens_details") or {}).get("cached_tokens", 0)
                usage["input_tokens"] = u["prompt_tokens"] - cached
                usage["cache_read_tokens"] = cached
                usage["output_tokens"] = u["completion_tokens"]
                usage["reasoning_tokens"] = (u.get("completion_tokens_details") or {}).get(
                    "reasoning_tokens", 0
                )
        content: list[dict] = [{"type": "text", "text": "".join(text)}] if text else []
        for _, t in sorted(tools.items()):
            raw = "".join(t["args"])
            content.append(
                {
                    "type": "tool_use",
                    "id": t["id"],
                    "name": t["name"],
                    "input": json.loads(raw) if raw.strip() else {},
                }
            )
        stop = {
            "stop": "stop",
            "tool_calls": "tool_use",
            "length": "length",
            "content_filter": "refusal",
        }.get(finish or "", "other")
        return {
            "role": "assistant",
            "content": content,
            "usage": usage,
            "stop_reason": stop,
            "model": model,
        }

    if wire == "openai-responses":
        return _reference_responses(objs, usage)

    blocks: dict[int, dict] = {}
    parts: dict[int, list[str]] = {}
    stop_raw = None
    keys = {
        "input_tokens": "input_tokens",
        "cache_read_input_tokens": "cache_read_tokens",
        "cache_creation_input_tokens": "cache_write_tokens",
        "output_tokens": "output_tokens",
    }
    for o in objs:
        t = o["type"]
        if t == "content_block_delta":
            d = o["delta"]
            dt = d["type"]
            if dt == "text_delta":
                parts[o["index"]].append(d["text"])
            elif dt == "thinking_delta":
                parts[o["index"]].append(d["thinking"])
            elif dt == "input_json_delta":
                parts[o["index"]].append(d["partial_json"])
            elif dt == "signature_delta":
                blocks[o["index"]]["signature"] = d["signature"]
        elif t == "content_block_start":
            b = o["content_block"]
            i = o["index"]
            parts[i] = []
            if b["type"] == "text":
                blocks[i] = {"type": "text"}
            elif b["type"] == "thinking":
                blocks[i] = {"type": "thinking", "signature": b.get("signature", "")}
            elif b["type"] == "redacted_thinking":
                blocks[i] = {"type": "redacted_thinking", "data": b["data"]}
            elif b["type"] == "tool_use":
                blocks[i] = {"type": "tool_use", "id": b["id"], "name": b["name"]}
        elif t == "message_start":
            m = o["message"]
            model = m["model"]
            for k, v in keys.items():
                if m["usage"].get(k) is not None:
                    usage[v] = m["usage"][k]
        elif t == "message_delta":
            stop_raw = o["delta"].get("stop_reason")
            for k, v in keys.items():
                if (o.get("usage") or {}).get(k) is not None:
                    usage[v] = o["usage"][k]
        elif t == "error":
            raise RuntimeError(o["error"])
    content = []
    for i, b in sorted(blocks.items()):
        s = "".join(parts[i])
        if b["type"] == "text":
            content.append({"type": "text", "text": s})
        elif b["type"] == "thinking":
            content.append({"type": "thinking", "text": s, "signature": b["signature"]})
        elif b["type"] == "tool_use":
            content.append(
                {
                    "type": "tool_use",
                    "id": b["id"],
                    "name": b["name"],
                    "input": json.loads(s) if s.strip() else {},
                }
            )
        else:
            content.append(b)
    stop = {
        "end_turn": "stop",
        "stop_sequence": "stop",
        "tool_use": "tool_use",
        "max_tokens": "length",
        "refusal": "refusal",
        "pause_turn": "pause",
    }.get(stop_raw or "", "other")
    return {
        "role": "assistant",
        "content": content,
        "usage": usage,
        "stop_reason": stop,
        "model": model,
    }


def _reference_responses(objs: Iterable[dict], usage: dict) -> dict:
    """reference_accumulate for the Responses wire: text and function call
    items by output_index, usage from response.completed."""
    items: dict[int, dict] = {}
    parts: dict[int, list[str]] = {}
    model = None
    for o in objs:
        t = o["type"]
        if t == "response.output_text.delta" or t == "response.function_call_arguments.delta":
            parts[o["output_index"]].append(o["delta"])
        elif t == "response.output_item.added":
            items[o["output_index"]] = o["item"]
            parts[o["output_index"]] = []
        elif t == "response.created":
            model = o["response"]["model"]
        elif t == "response.completed":
            u = o["response"]["usage"]
            cached = u["input_tokens_details"]["cached_tokens"]
            usage["input_tokens"] = u["input_tokens"] - cached
            usage["cache_read_tokens"] = cached
            usage["output_tokens"] = u["output_tokens"]
            usage["reasoning_tokens"] = u["output_tokens_details"]["reasoning_tokens"]
        elif t in ("error", "response.failed"):
            raise RuntimeError(o)
    content: list[dict] = []
    for i, item in sorted(items.items()):
        s = "".join(parts[i])
        if item["type"] == "message":
            content.append({"type": "text", "text": s})
        elif item["type"] == "function_call":
            content.append(
                {
                    "type": "tool_use",
                    "id": item["call_id"],
                    "name": item["name"],
                    "input": json.loads(s) if s.strip() else {},
                }
            )
    stop = "tool_use" if any(c["type"] == "tool_use" for c in content) else "stop"
    return {
        "role": "assistant",
        "content": content,
        "usage": usage,
        "stop_reason": stop,
        "model": model,
    }


# --------------------------------------------------------------------------
# the decoders under test: each takes (wire, chunks) and returns a count


def run_panto_events(wire: str, chunks: list[bytes]) -> int:
    import panto

    dec = panto.StreamDecoder(wire)
    n = 0
    for c in chunks:
        dec.feed(c)
        for _ev in dec:
            n += 1
    dec.close()
    return n


def run_panto_events_merged(wire: str, chunks: list[bytes]) -> int:
    import panto

    dec = panto.StreamDecoder(wire, merge_deltas=True)
    n = 0
    for c in chunks:
        dec.feed(c)
        for _ev in dec:
            n += 1
    dec.close()
    return n


def cffi_path(fn: Callable[[str, list[bytes]], int]) -> Callable[[str, list[bytes]], int]:
    """fn with StreamDecoder's C path (panto._fastevents) switched off: the
    cffi fallback, for comparing the two in the same minutes."""

    def run(wire: str, chunks: list[bytes]) -> int:
        import panto.decoder

        panto.decoder._set_fast(False)  # decoders made now take the cffi path
        try:
            return fn(wire, chunks)
        finally:
            panto.decoder._set_fast(True)

    return run


def run_core(wire: str, chunks: list[bytes]) -> int:
    """The core alone: the chunks fed through the C API from a Python loop
    (as panto events feeds them), every event pulled by a C loop
    (pantopy_drain: panto_next_event until it needs more), nothing built."""
    from panto import WIRES
    from panto._ffi import ffi, lib

    out = ffi.new("panto_stream **")
    if lib.panto_stream_new(WIRES[wire], ffi.NULL, out) != lib.PANTO_OK:
        raise MemoryError
    s = out[0]
    feed, drain, null = lib.panto_stream_feed, lib.pantopy_drain, ffi.NULL
    n = 0
    try:
        for c in chunks:
            if feed(s, c, len(c)) != 0 or (k := drain(s, null, null, 0)) < 0:
                raise RuntimeError("core: the stream failed")
            n += k
        if lib.panto_stream_finish(s) != 0 or (k := drain(s, null, null, 0)) < 0:
            raise RuntimeError("core: the stream failed")
        return n + k
    finally:
        lib.panto_stream_free(s)


def run_core_c_loop(wire: str, chunks: list[bytes]) -> int:
    """The core alone with the feeding loop in C as well (pantopy_drain
    over the chunk boundaries): what bench/c_decode.c measures."""
    from panto import WIRES
    from panto._ffi import ffi, lib

    body = b"".join(chunks)
    ends, end = [], 0
    for c in chunks:
        end += len(c)
        ends.append(end)
    cends = ffi.new("size_t[]", ends)
    out = ffi.new("panto_stream **")
    if lib.panto_stream_new(WIRES[wire], ffi.NULL, out) != lib.PANTO_OK:
        raise MemoryError
    try:
        n = lib.pantopy_drain(out[0], body, cends, len(chunks))
        if n < 0:
            raise RuntimeError("core: the stream failed")
        return n
    finally:
        lib.panto_stream_free(out[0])


def run_panto_accumulate(wire: str, chunks: list[bytes]) -> int:
    import panto

    return len(panto.accumulate(panto.decode(wire, chunks)).content)


def run_split_json(wire: str, chunks: list[bytes]) -> int:
    n = 0
    for _ in payloads(chunks, json.loads):
        n += 1
    return n


def run_split_orjson(wire: str, chunks: list[bytes]) -> int:
    import orjson

    n = 0
    for _ in payloads(chunks, orjson.loads):
        n += 1
    return n


def run_split_json_accumulate(wire: str, chunks: list[bytes]) -> int:
    return len(reference_accumulate(wire, payloads(chunks, json.loads))["content"])


def _sdk_openai(wire: str, chunks: list[bytes]) -> int:
    from openai._models import construct_type
    from openai.lib.streaming.chat import ChatCompletionStreamState
    from openai.types.chat import ChatCompletionChunk

    state = ChatCompletionStreamState()
    for obj in payloads(chunks, json.loads):
        chunk = construct_type(type_=ChatCompletionChunk, value=obj)  # as openai.Stream does
        for _ev in state.handle_chunk(chunk):
            pass
    return len(state.get_final_completion().choices)


def _sdk_anthropic(wire: str, chunks: list[bytes]) -> int:
    from anthropic._models import construct_type
    from anthropic.lib.streaming._messages import accumulate_event, build_events
    from anthropic.types import RawMessageStreamEvent

    snapshot = None
    json_bufs: dict[int, bytes] = {}
    for obj in payloads(chunks, json.loads):  # ping skipped, as anthropic.Stream does
        event = construct_type(type_=RawMessageStreamEvent, value=obj)
        snapshot = accumulate_event(event=event, current_snapshot=snapshot, json_bufs=json_bufs)
        for _ev in build_events(event=event, message_snapshot=snapshot):
            pass
    assert snapshot is not None
    return len(snapshot.content)


def run_sdk(wire: str, chunks: list[bytes]) -> int:
    return (_sdk_openai if wire == "openai-chat" else _sdk_anthropic)(wire, chunks)


def sdk_available(wire: str) -> bool:
    if wire == "openai-responses":
        return False  # (no SDK row for this wire yet)
    try:
        if wire == "openai-chat":
            import openai.lib.streaming.chat  # noqa: F401
        else:
            import anthropic.lib.streaming._messages  # noqa: F401
    except ImportError:
        return False
    return True


def orjson_available() -> bool:
    try:
        import orjson  # noqa: F401
    except ImportError:
        return False
    return True


# --------------------------------------------------------------------------


def split_chunks(body: bytes, seed: int, lo: int = 1024, hi: int = 4096) -> list[bytes]:
    rng = random.Random(seed)
    out, i = [], 0
    while i < len(body):
        n = rng.randint(lo, hi)
        out.append(body[i : i + n])
        i += n
    return out


def median_time(
    fn: Callable[[str, list[bytes]], int], wire: str, chunks: list[bytes], n: int
) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn(wire, chunks)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def paired_ratios(
    fns: dict[str, Callable[[str, list[bytes]], int]],
    base: str,
    wire: str,
    chunks: list[bytes],
    rounds: int,
) -> dict[str, float]:
    """{name: median over `rounds` of time(name) / time(base)}, every round
    running all of `fns` back to back.  Times are this thread's CPU time, so
    being descheduled on a shared machine does not count."""
    per: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        t: dict[str, float] = {}
        for name, fn in fns.items():
            t0 = time.thread_time()
            fn(wire, chunks)
            t[name] = time.thread_time() - t0
        for name in fns:
            per[name].append(t[name] / t[base])
    return {name: statistics.median(v) for name, v in per.items()}


def bench(
    size: int, runs: int, sdk_runs: int, seed: int = 1, out=sys.stdout, rounds: int = 15
) -> dict:
    """Runs every decoder on each wire; prints a table; returns
    {wire: {name: MB/s or None}} (plus "panto events / core" and
    "panto events merged / core": time ratios)."""
    results: dict[str, dict[str, float | None]] = {}
    for wire in streamgen.WIRES:
        g = streamgen.generate(wire, size, seed)
        chunks = split_chunks(g.body, seed)
        mb = len(g.body) / 1e6
        # correctness first: panto and the reference agree with the generator
        import panto

        got = panto.accumulate(panto.decode(wire, chunks)).to_dict()
        assert got == g.message, f"{wire}: panto's message differs from the generator's"
        assert reference_accumulate(wire, payloads(chunks, json.loads)) == g.message, (
            f"{wire}: reference differs"
        )

        print(
            f"\n{wire}: {len(g.body):,} bytes, {g.n_events:,} SSE events, {len(chunks):,} chunks of 1-4 KiB",
            file=out,
        )
        row: dict[str, float | None] = {}
        assert (
            run_core(wire, chunks)
            == run_core_c_loop(wire, chunks)
            == run_panto_events(wire, chunks)
        ), f"{wire}: the core rows see other events than panto events"
        cases: list[tuple[str, Callable, int, bool]] = [
            ("core", run_core, runs, True),
            ("core (C loop)", run_core_c_loop, runs, True),
            ("panto events", run_panto_events, runs, True),
            ("panto events merged", run_panto_events_merged, runs, True),
            ("panto accumulate", run_panto_accumulate, runs, True),
            ("split+json.loads", run_split_json, runs, True),
            ("split+orjson", run_split_orjson, runs, orjson_available()),
            ("split+json+accum", run_split_json_accumulate, runs, True),
            ("SDK accumulator", run_sdk, sdk_runs, sdk_available(wire)),
        ]
        for name, fn, n, ok in cases:
            if not ok:
                row[name] = None
                hint = "pip install orjson" if "orjson" in name else "pip install openai anthropic"
                print(f"  {name:<19} skipped ({hint})", file=out)
                continue
            t = median_time(fn, wire, chunks, n)
            row[name] = mb / t
            print(
                f"  {name:<19} {mb / t:10.1f} MB/s   (median of {n}: {t * 1e3:8.1f} ms)", file=out
            )
        results[wire] = row

        print("  ratios:", file=out)
        for base, target in TARGETS.items():
            ours_name = "panto accumulate" if base == "SDK accumulator" else "panto events"
            ours, ref = row[ours_name], row[base]
            if ref is None or ours is None:
                print(f"    {ours_name} / {base}: skipped", file=out)
                continue
            ratio = ours / ref
            verdict = "ok" if ratio >= target else "BELOW TARGET"
            print(
                f"    {ours_name:<16} / {base:<16} = {ratio:7.2f}x  (target >= {target:g}x: {verdict})",
                file=out,
            )
        if row.get("split+json+accum"):
            print(
                f"    {'panto accumulate':<16} / {'split+json+accum':<16} = "
                f"{row['panto accumulate'] / row['split+json+accum']:7.2f}x  (info)",
                file=out,
            )
        fns = {
            "core": run_core,
            "core (C loop)": run_core_c_loop,
            "panto events": run_panto_events,
            "panto events merged": run_panto_events_merged,
            "panto events (cffi path)": cffi_path(run_panto_events),
            "panto events merged (cffi path)": cffi_path(run_panto_events_merged),
        }
        ratios = paired_ratios(fns, "core", wire, chunks, rounds)
        print(
            f"  time ratios over the core (median of {rounds} paired rounds; target <= 1.5x):",
            file=out,
        )
        for name in ("panto events", "panto events merged"):
            r = ratios[name]
            verdict = "ok" if r <= 1.5 else "ABOVE TARGET"
            print(f"    {name + ' / core':<38} = {r:5.2f}x  ({verdict})", file=out)
            row[f"{name} / core"] = r
        for name in ("panto events (cffi path)", "panto events merged (cffi path)"):
            r = ratios[name]
            print(
                f"    {name + ' / core':<38} = {r:5.2f}x  (info: without panto._fastevents)",
                file=out,
            )
            row[f"{name} / core"] = r
        print(
            f"    {'core (C loop) / core':<38} = {ratios['core (C loop)']:5.2f}x  (info: "
            "the Python feeding loop's share)",
            file=out,
        )
    same_text(results, size, seed, out)
    return results


def same_text(results: dict, size: int, seed: int, out) -> None:
    """openai-responses against openai-chat on the same text (streamgen
    re-tells the chat body of a seed on the Responses wire): time ratios,
    > 1 when the Responses wire is faster."""
    if "openai-responses" not in results or "openai-chat" not in results:
        return
    mb = {
        w: len(streamgen.generate(w, size, seed).body) / 1e6
        for w in ("openai-chat", "openai-responses")
    }
    print(
        "\nopenai-responses vs openai-chat, the same text (chat time / responses time):", file=out
    )
    for name in ("core", "panto events", "panto events merged"):
        chat, resp = results["openai-chat"][name], results["openai-responses"][name]
        if chat and resp:
            ratio = (mb["openai-chat"] / chat) / (mb["openai-responses"] / resp)
            verdict = "ok" if ratio >= 1.0 else "SLOWER"
            print(f"    {name:<20} = {ratio:5.2f}x  (target >= 1x: {verdict})", file=out)
            results["openai-responses"][f"{name} same text vs chat"] = ratio


ONCE = {
    "core": run_core,
    "events": run_panto_events,
    "merged": run_panto_events_merged,
    "events-cffi": cffi_path(run_panto_events),
    "merged-cffi": cffi_path(run_panto_events_merged),
}


def once(mode: str, wire: str, size: int, seed: int) -> int:
    """--once: the same work in every mode but MODE's decode, so that the
    difference of two instruction counts is one decode of the body:

        for m in none core events merged; do
          PYTHONHASHSEED=0 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
            python bench/decode.py --bytes 1000000 --once $m openai-chat 2>&1 | grep Collected
        done

    then (events - none) / (core - none) is "panto events / core" in
    instructions, independent of the machine's load (PYTHONHASHSEED fixed:
    string hashing changes the counts of the set-up from run to run)."""
    if mode != "none" and mode not in ONCE or wire not in streamgen.WIRES:
        raise SystemExit(
            f"--once: MODE is none or one of {', '.join(ONCE)}; WIRE one of "
            f"{', '.join(streamgen.WIRES)}"
        )
    chunks = split_chunks(streamgen.generate(wire, size, seed).body, seed)
    small = split_chunks(streamgen.generate(wire, 3000, seed + 1).body, seed)
    for fn in ONCE.values():
        fn(wire, small)
    import gc

    gc.collect()  # the generator's garbage, not the decode's
    if mode != "none":
        ONCE[mode](wire, chunks)
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="panto decoding throughput vs Python baselines")
    ap.add_argument("--quick", action="store_true", help="200 KB bodies, 2 runs: a smoke run")
    ap.add_argument("--bytes", type=int, help="body size per wire (default 5000000)")
    ap.add_argument("--runs", type=int, help="runs per decoder, median reported (default 5)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument(
        "--rounds",
        type=int,
        help="paired rounds for the ratios over the core (default 15; --quick 3)",
    )
    ap.add_argument(
        "--once",
        nargs=2,
        metavar=("MODE", "WIRE"),
        help="for counting instructions (valgrind --tool=callgrind): build the body, run "
        "core, events and merged once on a small body (warm-up), then MODE (none, core, "
        "events or merged) once on the whole body; print nothing else",
    )
    args = ap.parse_args(argv)
    size = args.bytes or (200_000 if args.quick else 5_000_000)
    if args.once:
        return once(args.once[0], args.once[1], size, args.seed)
    runs = args.runs or (2 if args.quick else 5)
    sdk_runs = min(runs, 3)
    import panto

    print(
        f"panto {panto.__version__}, Python {sys.version.split()[0]}, body {size:,} bytes, "
        f"median of {runs} ({sdk_runs} for the SDKs)"
    )
    t0 = time.perf_counter()
    bench(size, runs, sdk_runs, args.seed, rounds=args.rounds or (3 if args.quick else 15))
    print(f"\ntotal {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
