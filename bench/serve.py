"""``panto serve`` under load: N concurrent streams of M chunks through the
proxy against the same streams straight from the upstream, in one run, and
(optionally) through LiteLLM's proxy as the peer; in two modes:

- **burst** (closed loop at saturation): the upstream sends its ``--chunks``
  events ``--delay`` seconds apart (5 ms) and every client starts its next
  request as soon as the last one ends, so the proxy, the upstream and the
  load client (all on this machine) run flat out: the added time to first
  byte is mostly queueing behind the other streams' chunks;
- **paced** (sustained load below saturation): the upstream sends the events
  ``--paced-delay`` seconds apart (20 ms: 50 tokens a second, a model's
  rate), the clients' first requests are spread over one stream's length
  and each starts its next when the last ends: ``--concurrency`` streams
  always open, the proxy well below a full core.

The upstream is a small asyncio server in its own process (``--upstream
fast``, the default; one per mode) that writes pre-rendered SSE bytes from
``panto.providers.codec``'s encoders, chunked, keep-alive; ``--upstream
scripted`` uses panto.testing.ScriptedServer (threads, in this process)
instead, which is itself the bottleneck at 200 streams (burst mode only).
The load generator is a minimal asyncio HTTP/1.1 client: one kept-alive
connection per concurrent stream, time to first byte measured at the first
``data:`` of the body.  Runs per mode:

- direct: the client talks to the upstream (OpenAI wire);
- proxy same-wire: OpenAI client -> panto serve -> OpenAI upstream (bytes
  pass through, teed through the C decoder);
- proxy cross-wire: OpenAI client -> panto serve -> Anthropic upstream
  (decoded by the C core, encoded for the client);
- litellm (burst only): OpenAI client -> LiteLLM proxy -> the same OpenAI
  upstream (``litellm[proxy]`` installed into a venv under
  ``$XDG_CACHE_HOME/panto-bench/litellm``, reused between runs; skipped with
  one line when it cannot be installed or started).

Printed per mode and run: time to first byte p50/p99, throughput, errors,
the proxy process's CPU per request; the added time to first byte (proxy -
direct) at p50 and p99 with its ratio; panto's throughput as a ratio of
LiteLLM's; the serve process's RSS growth over the burst proxy runs.
Loopback only; bounded.

    python bench/serve.py                      # both modes, 200 streams x 50 chunks
    python bench/serve.py --modes paced --no-litellm
    python bench/serve.py --requests 400 --concurrency 50 --no-litellm
    python bench/serve.py --pin                # the proxy on a CPU of its own
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve()
#: The key every client sends (LiteLLM's master key: panto serve on loopback takes any).
KEY = "sk-panto-bench-" + "7f3a9c2e5b81d64f0a2c7e9b3d5f1a86"


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` and its reaped children."""
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(x) for x in f[11:15]) / os.sysconf("SC_CLK_TCK")


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


# -- the fast upstream (run as a subprocess: --serve-upstream) ------------------------


def rendered(chunks: int, per_write: int = 1) -> dict[str, list[bytes]]:
    """Each wire's SSE events of one reply of ``chunks`` text deltas ("tok "
    each), ``per_write`` events to an HTTP/1.1 chunk (one write); the events
    before the first text (Anthropic's message_start, ping,
    content_block_start) go in the first chunk with it, so that the first
    text leaves at once on both wires, and those after the last (the finish,
    the usage, [DONE]) in the last, so that paced they add no delay."""
    from panto.conversation import Text
    from panto.testing import Reply, render_sse

    reply = Reply([Text("tok " * chunks)], chunk=4)
    out = {}
    for wire in ("openai-chat", "anthropic-messages"):
        events = render_sse(reply, wire, "m")
        first = next(i for i, e in enumerate(events) if b'"tok' in e)
        last = max(i for i, e in enumerate(events) if b'"tok' in e)
        events = [b"".join(events[: first + 1]), *events[first + 1 : last], b"".join(events[last:])]
        events = [b"".join(events[i : i + per_write]) for i in range(0, len(events), per_write)]
        out[wire] = [b"%x\r\n%s\r\n" % (len(e), e) for e in events]
    return out


async def serve_upstream(chunks: int, delay: float, per_write: int = 1) -> None:
    """Serve until killed; prints the port.  Paced (``delay`` > 0): write i
    leaves at ``i * delay`` after the first, on the clock, so that late
    wake-ups do not add up and the rate is the one asked for."""
    events = rendered(chunks, per_write)
    loop = asyncio.get_running_loop()
    head = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream; charset=utf-8\r\n"
        b"cache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n"
    )

    async def conn(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        try:
            while True:
                try:
                    req = await r.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    return
                length = 0
                for line in req.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                if length:
                    await r.readexactly(length)
                path = req.split(b" ", 2)[1].split(b"?")[0]
                wire = "anthropic-messages" if path.endswith(b"/messages") else "openai-chat"
                w.write(head)
                t0 = loop.time()
                for i, e in enumerate(events[wire]):
                    if delay and i:
                        await asyncio.sleep(t0 + i * delay - loop.time())
                    w.write(e)
                    await w.drain()
                w.write(b"0\r\n\r\n")
                await w.drain()
        except ConnectionError:
            pass
        finally:
            w.close()

    server = await asyncio.start_server(conn, "127.0.0.1", 0, backlog=1024)
    print(server.sockets[0].getsockname()[1], flush=True)
    async with server:
        await server.serve_forever()


# -- the load generator -------------------------------------------------------------


async def load(
    url: str,
    model: str,
    n: int,
    conc: int,
    timeout: float,
    pid: int | None = None,
    spread: float = 0.0,
) -> dict[str, float]:
    """``n`` streamed chat requests over ``conc`` kept-alive connections;
    the connections' first requests start ``spread`` seconds apart in all
    (0: at once)."""
    host, _, rest = url.removeprefix("http://").partition("/")
    hostname, port = host.split(":")
    body = (
        b'{"model":"%s","messages":[{"role":"user","content":"go"}],"stream":true}' % model.encode()
    )
    request = (
        b"POST /%s HTTP/1.1\r\nhost: %s\r\ncontent-type: application/json\r\n"
        b"authorization: Bearer %s\r\ncontent-length: %d\r\n\r\n%s"
        % (rest.encode(), host.encode(), KEY.encode(), len(body), body)
    )
    ttfb: list[float] = []
    counts = {"errors": 0, "chunks": 0, "left": n}

    async def one(r: asyncio.StreamReader, w: asyncio.StreamWriter) -> bool:
        """One request; False when the connection cannot be reused."""
        t0 = time.perf_counter()
        w.write(request)
        head = await r.readuntil(b"\r\n\r\n")
        if not head.startswith(b"HTTP/1.1 200"):
            counts["errors"] += 1
            return False
        first = True
        tail = b""
        while True:
            data = await r.read(65536)
            if not data:
                counts["errors"] += 1
                return False
            if first and b"data:" in data:
                ttfb.append(time.perf_counter() - t0)
                first = False
            counts["chunks"] += data.count(b"data: ")
            tail = (tail + data)[-7:]
            if tail.endswith(b"\r\n0\r\n\r\n") or tail == b"0\r\n\r\n":
                if first:
                    counts["errors"] += 1
                return True

    async def worker(i: int) -> None:
        if spread:
            await asyncio.sleep(spread * i / conc)
        conn: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        while counts["left"] > 0:
            counts["left"] -= 1
            try:
                if conn is None:
                    conn = await asyncio.open_connection(hostname, int(port))
                if not await asyncio.wait_for(one(*conn), timeout):
                    conn[1].close()
                    conn = None
            except (OSError, asyncio.TimeoutError, asyncio.IncompleteReadError):
                counts["errors"] += 1
                if conn is not None:
                    conn[1].close()
                conn = None
        if conn is not None:
            conn[1].close()

    cpu0 = cpu_s(pid) if pid else 0.0
    t0 = time.perf_counter()
    await asyncio.gather(*(worker(i) for i in range(conc)))
    wall = time.perf_counter() - t0
    cpu = (cpu_s(pid) - cpu0) if pid else float("nan")
    return {
        "p50": pct(ttfb, 0.5) * 1000,
        "p99": pct(ttfb, 0.99) * 1000,
        "rps": n / wall,
        "chunks_s": counts["chunks"] / wall,
        "errors": counts["errors"],
        "cpu_ms": cpu * 1000 / n,
    }


# -- the processes ------------------------------------------------------------------


def wait_ready(url: str, proc: subprocess.Popen[Any], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            time.sleep(0.3)
    return False


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def litellm_venv() -> Path | None:
    """LiteLLM's proxy in a throwaway venv (made once, reused), or None."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    venv = cache / "panto-bench" / "litellm"
    exe = venv / "bin" / "litellm"
    if exe.exists():
        return venv
    print("# installing litellm[proxy] into", venv, "(once)", flush=True)
    try:
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run(
            [str(venv / "bin" / "pip"), "install", "-q", "litellm[proxy]"],
            check=True,
            timeout=900,
        )
    except (OSError, subprocess.SubprocessError) as e:
        print(f"litellm: skipped (cannot install litellm[proxy]: {e})")
        shutil.rmtree(venv, ignore_errors=True)
        return None
    return venv


def start_litellm(venv: Path, upstream: str, home: str) -> tuple[subprocess.Popen[Any], str] | None:
    cfg = Path(home) / "litellm.yaml"
    cfg.write_text(
        "model_list:\n  - model_name: m\n    litellm_params:\n"
        f"      model: openai/m\n      api_base: {upstream}\n      api_key: k\n"
        "litellm_settings:\n  drop_params: true\n  telemetry: false\n"
        f"general_settings:\n  master_key: {KEY}\n"
    )
    port = free_port()
    log = Path(home) / "litellm.log"
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "LITELLM_LOG": "ERROR",
        "LITELLM_TELEMETRY": "False",
        "NO_PROXY": "*",
    }
    proc = subprocess.Popen(
        [str(venv / "bin" / "litellm"), "--config", str(cfg), "--port", str(port)],
        env=env,
        cwd=home,
        stdout=subprocess.DEVNULL,
        stderr=open(log, "w"),  # noqa: SIM115 - the child owns it (a pipe could fill and block it)
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    if not wait_ready(url + "/health/liveliness", proc, 120):
        proc.terminate()
        proc.wait(10)
        err = log.read_text(errors="replace").strip().splitlines()
        print(f"litellm: skipped (its proxy did not start: {err[-1] if err else 'no output'})")
        return None
    return proc, url


def start_upstream(a: argparse.Namespace, delay: float, stack: list[Any]) -> tuple[str, str]:
    """The OpenAI and Anthropic base URLs of an upstream sending its events
    ``delay`` seconds apart."""
    if a.upstream == "scripted":
        from panto.conversation import Text
        from panto.testing import Reply, ScriptedServer

        up = ScriptedServer()
        up.__enter__()
        stack.append(lambda: up.__exit__(None, None, None))
        for _ in range(a.requests * 4 + 100):
            up.push(Reply([Text("tok " * a.chunks)], chunk=4, delay=delay, cache=True))
        return up.base_url("openai-chat"), up.base_url("anthropic-messages")
    cmd = [sys.executable, str(HERE), "--serve-upstream", "--chunks", str(a.chunks)]
    proc = subprocess.Popen(cmd + ["--delay", str(delay)], stdout=subprocess.PIPE, text=True)
    stack.append(lambda: (proc.terminate(), proc.wait(10)))
    assert proc.stdout is not None
    url = f"http://127.0.0.1:{int(proc.stdout.readline())}"
    return url + "/v1", url


def provider_config(urls: dict[str, tuple[str, str]]) -> str:
    """Two providers per mode: ``oa-MODE`` (OpenAI wire), ``an-MODE``
    (Anthropic wire), on that mode's upstream."""
    out = ""
    for mode, (oa, an) in urls.items():
        for name, wire, url in (("oa", "openai-chat", oa), ("an", "anthropic-messages", an)):
            out += (
                f'[providers.{name}-{mode}]\nwire = "{wire}"\nbase_url = "{url}"\n'
                f'api_key = "k"\ndefault_model = "m"\n'
            )
    return out + "[retries]\nmax = 0\n"


def print_mode(mode: str, results: dict[str, dict[str, float]], note: str) -> None:
    print(f"\n== {mode}: {note}")
    print(
        f"{'run':<18}{'ttfb p50 ms':>12}{'p99 ms':>10}{'req/s':>9}{'chunks/s':>11}"
        f"{'errors':>8}{'CPU ms/req':>12}"
    )
    for name, r in results.items():
        print(
            f"{name:<18}{r['p50']:>12.1f}{r['p99']:>10.1f}{r['rps']:>9.1f}{r['chunks_s']:>11.0f}"
            f"{r['errors']:>8}{r['cpu_ms']:>12.2f}"
        )
    d = results["direct"]
    for name in ("proxy same-wire", "proxy cross-wire"):
        if name not in results:
            continue
        r = results[name]
        print(
            f"[{mode}] added ttfb {name[6:]}: p50 {r['p50'] - d['p50']:+.1f} ms "
            f"({r['p50'] / d['p50']:.2f}x), p99 {r['p99'] - d['p99']:+.1f} ms "
            f"({r['p99'] / d['p99']:.2f}x); throughput {r['rps'] / d['rps']:.2f}x direct"
            + (
                f", {r['rps'] / results['litellm']['rps']:.2f}x litellm"
                if "litellm" in results
                else ""
            )
        )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--requests", type=int, default=2000, help="requests a run")
    ap.add_argument("--concurrency", type=int, default=200)
    ap.add_argument("--chunks", type=int, default=50)
    ap.add_argument("--delay", type=float, default=0.005, help="burst: seconds between events")
    ap.add_argument("--paced-delay", type=float, default=0.02, help="paced: seconds between events")
    ap.add_argument("--modes", nargs="+", choices=("burst", "paced"), default=["burst", "paced"])
    ap.add_argument("--timeout", type=float, default=60.0)
    ap.add_argument("--upstream", choices=("fast", "scripted"), default="fast")
    ap.add_argument("--no-litellm", action="store_true", help="skip the LiteLLM peer")
    ap.add_argument("--no-cross", action="store_true", help="skip the cross-wire runs")
    ap.add_argument(
        "--pin",
        action="store_true",
        help="the load client and upstream on CPU 0, the proxy (panto or LiteLLM) on CPU 1: "
        "what the proxy adds when the load generator does not take its CPU",
    )
    ap.add_argument("--serve-upstream", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--per-write", type=int, default=1, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.serve_upstream:  # (also bench/host.py's server)
        asyncio.run(serve_upstream(a.chunks, a.delay, a.per_write))
        return 0
    pin = a.pin and len(os.sched_getaffinity(0)) >= 2
    if a.pin and not pin:
        print("--pin needs two CPUs: not pinned")
    if pin:  # (the upstreams started below inherit CPU 0)
        os.sched_setaffinity(0, {0})
    stack: list[Any] = []
    results: dict[str, dict[str, dict[str, float]]] = {m: {} for m in a.modes}
    delays = {"burst": a.delay, "paced": a.paced_delay}
    rss = (0, 0)
    rss_same = 0
    try:
        home = tempfile.mkdtemp(prefix="panto-bench-serve-")
        stack.append(lambda: shutil.rmtree(home, ignore_errors=True))
        urls = {m: start_upstream(a, delays[m], stack) for m in a.modes}
        cfg = Path(home) / "config" / "panto" / "config.toml"
        cfg.parent.mkdir(parents=True)
        cfg.write_text(provider_config(urls))
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
        stack.append(lambda: (proc.terminate(), proc.wait(30)))
        if pin:
            os.sched_setaffinity(proc.pid, {1})
        assert proc.stdout is not None
        serve = proc.stdout.readline().strip().rsplit(" ", 1)[1]
        print(
            f"# {a.requests} requests a run, {a.concurrency} concurrent, {a.chunks} chunks each, "
            f"{a.upstream} upstream; load average {os.getloadavg()[0]:.2f} "
            f"on {os.cpu_count()} CPUs"
            + ("; load client and upstream pinned to CPU 0, the proxy to CPU 1" if pin else ""),
            flush=True,
        )
        proxy_url = serve + "/v1/chat/completions"
        run = asyncio.run
        warm = a.modes[0]
        run(load(proxy_url, f"oa-{warm}/m", min(20, a.requests), min(10, a.concurrency), a.timeout))
        rss0 = rss_kb(proc.pid)
        proxied = 0
        for mode in a.modes:
            oa = urls[mode][0]
            # paced: the first requests spread over one stream's length (steady state)
            spread = a.chunks * delays[mode] if mode == "paced" else 0.0
            res = results[mode]

            def go(
                url: str, model: str, pid: int | None = None, spread: float = spread
            ) -> dict[str, float]:
                return run(load(url, model, a.requests, a.concurrency, a.timeout, pid, spread))

            res["direct"] = go(oa + "/chat/completions", "m")
            res["proxy same-wire"] = go(proxy_url, f"oa-{mode}/m", proc.pid)
            proxied += a.requests
            if mode == "burst":
                rss_same = rss_kb(proc.pid)
            if not a.no_cross:
                res["proxy cross-wire"] = go(proxy_url, f"an-{mode}/m", proc.pid)
                proxied += a.requests
        rss = (rss0, rss_kb(proc.pid))
        venv = None if a.no_litellm or "burst" not in a.modes else litellm_venv()
        lite = start_litellm(venv, urls["burst"][0], home) if venv else None
        if lite:
            lproc, lurl = lite
            stack.append(lambda: (lproc.terminate(), lproc.wait(30)))
            if pin:  # (its workers are threads or children started before this: all of them)
                for t in Path(f"/proc/{lproc.pid}/task").iterdir():
                    os.sched_setaffinity(int(t.name), {1})
            run(load(lurl + "/v1/chat/completions", "m", 20, 10, a.timeout))
            results["burst"]["litellm"] = run(
                load(
                    lurl + "/v1/chat/completions",
                    "m",
                    a.requests,
                    a.concurrency,
                    a.timeout,
                    lproc.pid,
                )
            )
    finally:
        for undo in reversed(stack):
            undo()
    notes = {
        "burst": f"closed loop at saturation, upstream events {a.delay * 1000:g} ms apart",
        "paced": f"sustained load below saturation, upstream events "
        f"{a.paced_delay * 1000:g} ms apart, first requests spread over "
        f"{a.chunks * a.paced_delay:g} s",
    }
    for mode in a.modes:
        print_mode(mode, results[mode], notes[mode])
    print()
    if "burst" in a.modes:
        print(
            f"serve RSS {rss[0] / 1024:.1f} MB -> {rss_same / 1024:.1f} MB "
            f"(+{(rss_same - rss[0]) / 1024:.1f} MB over {a.requests} burst same-wire requests) "
            f"-> {rss[1] / 1024:.1f} MB (+{(rss[1] - rss[0]) / 1024:.1f} MB over {proxied} requests)"
        )
    else:
        print(
            f"serve RSS {rss[0] / 1024:.1f} MB -> {rss[1] / 1024:.1f} MB "
            f"(+{(rss[1] - rss[0]) / 1024:.1f} MB over {proxied} requests)"
        )
    ok = not any(r["errors"] for res in results.values() for r in res.values())
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
