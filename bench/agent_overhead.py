"""Per-turn overhead of panto's agent loop over raw HTTP streaming.

Against the loopback ``panto.testing.ScriptedServer`` (run in a child
process, so it does not compete with the client for the GIL), for answers of
several sizes, this times (medians, interleaved):

- raw: ``httpx.Client`` POSTs the same request body panto would send and
  reads the streamed response with ``iter_raw()`` (no decoding);
- agent: a full ``agent.run()`` turn (request serialization, HTTP, C decoding,
  event objects, partial-message bookkeeping, committing the message).

The overhead ``agent - raw`` is fitted as ``fixed + per_event * events`` and
compared with the targets: < 1 ms per turn + 2 µs per event.

    python bench/agent_overhead.py [--turns 200] [--sizes 10,300,1500]
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import statistics
import sys
import time

import httpx

from panto.agent import Agent
from panto.config import Config
from panto.conversation import Text, Usage
from panto.testing import Reply, ScriptedServer, render_sse

TARGET_FIXED_MS = 1.0
TARGET_PER_EVENT_US = 2.0


def _serve(reply: Reply, port_q: mp.Queue, stop: mp.Event) -> None:  # type: ignore[type-arg]
    with ScriptedServer(responder=lambda req: reply) as server:
        port_q.put(server.port)
        stop.wait()


def bench(wire: str, n_deltas: int, turns: int) -> tuple[int, float, float]:
    text = "".join(f"w{i % 10} " for i in range(n_deltas))
    reply = Reply(
        [Text(text)],
        chunk=3,
        usage=Usage(10, output_tokens=n_deltas),
        events_per_write=16,
        cache=True,
    )
    n_events = len(render_sse(reply, wire))
    ctx = mp.get_context("fork")
    port_q, stop = ctx.Queue(), ctx.Event()
    proc = ctx.Process(target=_serve, args=(reply, port_q, stop), daemon=True)
    proc.start()
    try:
        port = port_q.get(timeout=10)
        base = f"http://127.0.0.1:{port}" + ("/v1" if wire == "openai-chat" else "")
        provider = "anthropic" if wire == "anthropic-messages" else "openai"
        cfg = Config(provider=provider, model="bench", base_url=base, api_key="sk-bench")
        agent = Agent(cfg)
        agent.submit_user_message("hello")
        from panto.providers import make_provider

        req = make_provider(cfg).build_request(agent.conversation.messages, [])
        client = httpx.Client()

        def raw() -> float:
            t = time.perf_counter()
            with client.stream("POST", req.url, content=req.body, headers=req.headers) as r:
                for _ in r.iter_raw():
                    pass
            return time.perf_counter() - t

        def turn() -> float:
            agent.conversation.clear()
            agent.submit_user_message("hello")
            t = time.perf_counter()
            with agent.run() as stream:
                for _ in stream:
                    pass
            return time.perf_counter() - t

        for _ in range(10):  # warm up both paths and the connections
            raw()
            turn()
        raws, agents = [], []
        for _ in range(turns):
            raws.append(raw())
            agents.append(turn())
        client.close()
        agent.close()
    finally:
        stop.set()
        proc.join(5)
    return n_events, statistics.median(raws), statistics.median(agents)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--turns", type=int, default=200)
    ap.add_argument("--sizes", default="10,300,1500", help="text deltas per answer")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    ok = True
    for wire in ("anthropic-messages", "openai-chat"):
        print(f"\n{wire}: median of {args.turns} turns")
        print(f"{'events':>8} {'raw ms':>9} {'agent ms':>9} {'overhead ms':>12} {'µs/event':>9}")
        points = []
        for n in sizes:
            events, raw, agent = bench(wire, n, args.turns)
            over = agent - raw
            points.append((events, over))
            print(
                f"{events:>8} {raw * 1e3:>9.3f} {agent * 1e3:>9.3f} {over * 1e3:>12.3f} "
                f"{over / events * 1e6:>9.2f}"
            )
        # least-squares fit: overhead = fixed + per_event * events
        xs, ys = [p[0] for p in points], [p[1] for p in points]
        mx, my = statistics.fmean(xs), statistics.fmean(ys)
        sxx = sum((x - mx) ** 2 for x in xs)
        slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx else 0.0
        fixed = my - slope * mx
        good = fixed * 1e3 < TARGET_FIXED_MS and slope * 1e6 < TARGET_PER_EVENT_US
        ok = ok and good
        print(
            f"fit: {fixed * 1e3:.3f} ms/turn + {slope * 1e6:.2f} µs/event "
            f"(target < {TARGET_FIXED_MS} ms + {TARGET_PER_EVENT_US} µs): "
            f"{'OK' if good else 'OVER'}"
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
