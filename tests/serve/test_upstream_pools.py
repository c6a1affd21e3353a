"""The proxy's upstream connections: several small httpx pools per upstream,
used round-robin (httpcore's pool does work growing with the square of its
open connections on every request start and finish: one pool of 200 streams
spent most of the proxy's CPU there), and bench/serve.py's smoke run."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from panto.config import Config
from panto.serve.proxy import SHARD, Proxy
from panto.serve.settings import ServeSettings

ROOT = Path(__file__).resolve().parents[2]


def pool_size(client: object) -> int:
    return int(client._transport._pool._max_connections)  # type: ignore[attr-defined]


def test_connections_to_one_upstream_spread_over_small_pools_round_robin() -> None:
    proxy = Proxy(Config(), ServeSettings(upstream_connections=200))
    url = "http://127.0.0.1:9/v1"
    clients = [proxy.client(url) for _ in range(200)]
    distinct = {id(c): c for c in clients}.values()
    assert len(distinct) == -(-200 // SHARD)
    assert all(pool_size(c) <= SHARD for c in distinct)
    assert sum(pool_size(c) for c in distinct) >= 200
    # round-robin: every pool takes the same share of the requests
    counts = {id(c): 0 for c in distinct}
    for c in clients:
        counts[id(c)] += 1
    assert max(counts.values()) - min(counts.values()) <= 1
    # another upstream gets its own pools; one connection asked for is one pool of one
    other = Proxy(Config(), ServeSettings(upstream_connections=1))
    assert pool_size(other.client(url)) == 1
    assert other.client(url) is other.client(url)
    assert proxy.client("http://127.0.0.1:10") not in distinct
    asyncio.run(proxy.aclose())
    asyncio.run(other.aclose())


@pytest.mark.bench
def test_serve_bench_smoke() -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "serve.py"), "--requests", "20"]
        + ["--concurrency", "5", "--chunks", "10", "--no-litellm"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    lines = {line.split("  ")[0].strip(): line.split() for line in r.stdout.splitlines()}
    for run in ("direct", "proxy same-wire", "proxy cross-wire"):
        row = lines[run]
        assert row[-2] == "0", r.stdout  # errors
        assert float(row[-3]) > 0, r.stdout  # chunks/s: the streams arrived
    assert "added ttfb same-wire: p50" in r.stdout and "serve RSS" in r.stdout
