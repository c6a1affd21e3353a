"""The proxy's upstream connections: the process host's shared clients,
one pool per upstream origin (panto.providers.ahttp11: bounded by
``[serve] upstream_connections``, O(1) acquire and release, connections
kept alive and reused), and bench/serve.py's smoke run."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from support.serve import Served, start_serve, stop, write_config

from panto.config import Config
from panto.conversation import Text
from panto.providers import ahttp11
from panto.serve.proxy import Proxy
from panto.serve.settings import ServeSettings
from panto.testing import Reply, ScriptedServer

ROOT = Path(__file__).resolve().parents[2]


def test_the_proxy_uses_the_hosts_shared_clients_bounded_by_upstream_connections() -> None:
    from panto.app import default_host

    proxy = Proxy(Config(), ServeSettings(upstream_connections=200))
    assert proxy.clients is default_host().http_clients

    async def main() -> None:
        client = proxy.client("http://127.0.0.1:9/v1")
        assert isinstance(client, ahttp11.AsyncClient) and client.max_connections == 200
        assert proxy.client("http://127.0.0.1:9/other") is client  # one origin, one client
        assert proxy.client("http://127.0.0.1:10/v1") is not client

    asyncio.run(main())


def test_streams_beyond_the_bound_wait_for_a_connection_and_reuse_it(
    isolated_home: Path, tmp_path: Path
) -> None:
    """Six overlapping streams through a proxy allowed two upstream
    connections: all six complete, on at most two connections, which the
    next requests reuse."""
    with ScriptedServer() as a, ScriptedServer() as o:
        write_config(
            isolated_home,
            a.base_url("anthropic-messages"),
            o.base_url("openai-chat"),
            "[serve]\nupstream_connections = 2\n",
        )
        for _ in range(9):
            o.push(Reply([Text("x" * 40)], chunk=4, delay=0.05))
        proc, url, err = start_serve({**os.environ, "PANTO_STARTUP_CACHE": "0"}, tmp_path)
        try:

            async def one(client: httpx.AsyncClient) -> str:
                body = {
                    "model": "fast",
                    "stream": True,
                    "messages": [{"role": "user", "content": "hi"}],
                }
                async with client.stream("POST", url + "/v1/chat/completions", json=body) as r:
                    assert r.status_code == 200
                    return "".join([line async for line in r.aiter_lines()])

            async def main() -> list[str]:
                async with httpx.AsyncClient(timeout=30) as client:
                    out = await asyncio.gather(*(one(client) for _ in range(6)))
                    for _ in range(3):
                        out.append(await one(client))
                    return list(out)

            texts = asyncio.run(main())
        finally:
            stop(proc)
        assert all(
            t.count('"content":"xxxx"') == 10 and t.endswith("data: [DONE]") for t in texts
        ), texts
        assert len(o.requests) == 9
        assert len({r.client for r in o.requests}) <= 2, err.read_text()


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


def test_the_proxy_routes_answer_other_methods_405_and_bad_json_400(served: Served) -> None:
    """The proxy routes bypass Starlette for POST only: other methods still
    get its 405; a POST whose body is not JSON the wire's 400."""
    assert httpx.get(served.url + "/v1/chat/completions").status_code == 405
    assert httpx.get(served.url + "/v1/messages").status_code == 405
    r = httpx.post(served.url + "/v1/messages", content=b"{not json")
    assert r.status_code == 400 and r.json()["type"] == "error"
    assert "not JSON" in r.json()["error"]["message"]
