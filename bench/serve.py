"""``panto serve`` under load: N concurrent streams of M chunks through the
proxy against the same streams straight from the upstream, in one run.

The upstream is panto.testing.ScriptedServer (loopback, both wires), each
reply ``--chunks`` text events ``--delay`` seconds apart.  A ``panto serve``
subprocess stands in front of it.  Three runs of ``--requests`` requests at
``--concurrency`` streams each:

- direct: the client talks to the upstream (OpenAI wire);
- proxy, same wire: OpenAI client -> panto serve -> OpenAI upstream (bytes
  pass through, teed through the C decoder);
- proxy, cross wire: OpenAI client -> panto serve -> Anthropic upstream
  (decoded by the C core, encoded for the client).

Printed per run: time to first byte p50/p99, throughput (requests/s and
chunks/s), errors; for the proxy runs, the added time to first byte
(proxy - direct) at p50 and p99 and its ratio, and the serve process's RSS
before and after (growth).  Loopback only; bounded in count and time.

    python bench/serve.py                      # 200 streams x 50 chunks, 2,000 requests
    python bench/serve.py --requests 400 --concurrency 50
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx

from panto.conversation import Text
from panto.testing import Reply, ScriptedServer


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


async def load(url: str, model: str, n: int, conc: int, timeout: float) -> dict[str, float]:
    limits = httpx.Limits(max_connections=conc, max_keepalive_connections=conc)
    ttfb: list[float] = []
    errors = 0
    chunks = 0
    sem = asyncio.Semaphore(conc)
    body = {"model": model, "messages": [{"role": "user", "content": "go"}], "stream": True}
    async with httpx.AsyncClient(limits=limits, timeout=timeout) as client:

        async def one() -> None:
            nonlocal errors, chunks
            async with sem:
                t0 = time.perf_counter()
                try:
                    async with client.stream(
                        "POST", url, json=body, headers={"authorization": "Bearer x"}
                    ) as r:
                        first = True
                        async for data in r.aiter_raw():
                            if first:
                                ttfb.append(time.perf_counter() - t0)
                                first = False
                            chunks += data.count(b"data: ")
                        if r.status_code != 200:
                            errors += 1
                except httpx.HTTPError:
                    errors += 1

        t0 = time.perf_counter()
        await asyncio.gather(*(one() for _ in range(n)))
        wall = time.perf_counter() - t0
    return {
        "p50": pct(ttfb, 0.5) * 1000,
        "p99": pct(ttfb, 0.99) * 1000,
        "rps": n / wall,
        "chunks_s": chunks / wall,
        "errors": errors,
        "wall": wall,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2000)
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--chunks", type=int, default=50)
    ap.add_argument("--delay", type=float, default=0.005, help="seconds between upstream events")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()
    words = [Text("tok " * a.chunks)]
    with tempfile.TemporaryDirectory() as home, ScriptedServer() as up:
        for _ in range(a.requests * 3 + 10):
            up.push(Reply(words, chunk=4, delay=a.delay, cache=True))
        cfg = Path(home) / "config" / "panto" / "config.toml"
        cfg.parent.mkdir(parents=True)
        cfg.write_text(
            f'[providers.oa]\nwire = "openai-chat"\nbase_url = "{up.base_url("openai-chat")}"\n'
            f'api_key = "k"\ndefault_model = "m"\n'
            f'[providers.an]\nwire = "anthropic-messages"\nbase_url = "{up.base_url("anthropic-messages")}"\n'
            f'api_key = "k"\ndefault_model = "m"\n[retries]\nmax = 0\n'
        )
        env = {
            **os.environ,
            "HOME": home,
            "XDG_CONFIG_HOME": str(Path(home) / "config"),
            "XDG_DATA_HOME": str(Path(home) / "data"),
            "XDG_CACHE_HOME": str(Path(home) / "cache"),
        }
        proc = subprocess.Popen(
            [sys.executable, "-m", "panto", "serve", "--port", "0"],
            env=env,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert proc.stdout is not None
            line = proc.stdout.readline().strip()
            serve = line.rsplit(" ", 1)[1]
            print(f"# {a.requests} requests, {a.concurrency} concurrent, {a.chunks} chunks each")
            direct_url = up.base_url("openai-chat") + "/chat/completions"
            proxy_url = serve + "/v1/chat/completions"
            asyncio.run(load(proxy_url, "oa/m", 20, 10, a.timeout))  # warm up
            rss0 = rss_kb(proc.pid)
            direct = asyncio.run(load(direct_url, "m", a.requests, a.concurrency, a.timeout))
            same = asyncio.run(load(proxy_url, "oa/m", a.requests, a.concurrency, a.timeout))
            cross = asyncio.run(load(proxy_url, "an/m", a.requests, a.concurrency, a.timeout))
            rss1 = rss_kb(proc.pid)
        finally:
            proc.terminate()
            proc.wait(30)
    print(f"{'run':<18}{'ttfb p50 ms':>12}{'p99 ms':>10}{'req/s':>9}{'chunks/s':>11}{'errors':>8}")
    for name, r in (("direct", direct), ("proxy same-wire", same), ("proxy cross-wire", cross)):
        print(
            f"{name:<18}{r['p50']:>12.1f}{r['p99']:>10.1f}{r['rps']:>9.1f}{r['chunks_s']:>11.0f}{r['errors']:>8}"
        )
    for name, r in (("same-wire", same), ("cross-wire", cross)):
        print(
            f"added ttfb {name}: p50 {r['p50'] - direct['p50']:+.1f} ms ({r['p50'] / direct['p50']:.2f}x), "
            f"p99 {r['p99'] - direct['p99']:+.1f} ms ({r['p99'] / direct['p99']:.2f}x); "
            f"throughput {r['rps'] / direct['rps']:.2f}x direct"
        )
    print(
        f"serve RSS {rss0 / 1024:.1f} MB -> {rss1 / 1024:.1f} MB (+{(rss1 - rss0) / 1024:.1f} MB over {2 * a.requests} requests)"
    )
    return 0 if not (direct["errors"] or same["errors"] or cross["errors"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
