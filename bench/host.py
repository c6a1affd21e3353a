#!/usr/bin/env python3
"""Many concurrent turns in one process: panto agents against the official
``openai`` ``AsyncOpenAI`` client, streaming from the same local server.

For N = 1, 16, 64, 256 concurrent streams in one event loop (OpenAI chat
wire) from one local server: bench/serve.py's upstream, an asyncio server in
a process of its own writing pre-rendered SSE (so that the figures measure
the clients, not the server; its CPU share of one core is printed per run):

- ``burst``: every stream sends its events as fast as it can;
- ``paced``: 50 events (tokens) per second per stream, as a model streams.

Printed per N and mode: events per second, the share of the ideal rate
(paced: N x 50/s; the wall clock runs from starting the N streams to the
last one's end), time to first event p50/p99, RSS per stream (the peak
during the run over the baseline taken once the N clients exist, per
stream), CPU per event (the client process's CPU time per event; the
server's is not counted), each also as a ratio to N = 1 and to
``AsyncOpenAI`` (one client, as it is used).  Every (client, N) runs in a
fresh process (after one warm-up stream), so that no run reuses memory
another freed.

    python bench/host.py                 # N = 1, 16, 64, 256; ~1-2 min
    python bench/host.py --n 1 16 --quick
    python bench/host.py --loop uvloop   # both clients on uvloop (panto[uvloop])
    python bench/host.py --warm          # on the N connections a first round left open
    python bench/host.py --modes paced --paced-events 250   # 5 s streams
    python bench/host.py --n 256 --modes paced --floor     # + a bare asyncio client

Targets (issue 24) at N = 256: >= 200k events/s per core in a burst, >= 95%
of the ideal rate and a time-to-first-event p99 <= 100 ms when paced,
<= 40 KB per active stream, CPU per event within 1.5x of N = 1.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass
from pathlib import Path

HERE = Path(__file__).resolve()
#: characters per event (the server's "tok "): panto's decoder joins the
#: deltas of one network read into one ContentDelta, so events are counted
#: by their text
TOKEN = 4


#: the event loop the runs use (``--loop``): "asyncio" or "uvloop"
LOOP = "asyncio"
#: ``--warm``: a measured run follows an unmeasured one of the same N on the
#: same loop and clients, so the N connections are kept alive already (a
#: long-running host's steady state: no connects)
WARM = False
#: ``--no-settle``: leave out ``panto.app.settle_after_startup()`` (the
#: collector and descriptor table set up for a long-running server) after
#: the warm-up stream
SETTLE = True


def run_loop(main: Awaitable[Result]) -> Result:
    """``asyncio.run(main)``, on uvloop with ``--loop uvloop``."""
    if LOOP != "uvloop":
        return asyncio.run(main)
    import uvloop

    loop = uvloop.new_event_loop()
    asyncio.set_event_loop(loop)
    try:
        return loop.run_until_complete(main)
    finally:
        loop.run_until_complete(loop.shutdown_asyncgens())
        asyncio.set_event_loop(None)
        loop.close()


@dataclass
class Result:
    events: int
    wall: float
    ttfe: list[float]
    rss: float  # bytes per stream
    cpu: float  # seconds
    server_cpu: float  # seconds (the server process's, over the same wall clock)

    @property
    def rate(self) -> float:
        return self.events / self.wall

    @property
    def cpu_per_event(self) -> float:
        return self.cpu / max(1, self.events)

    def p(self, q: float) -> float:
        xs = sorted(self.ttfe)
        return xs[min(len(xs) - 1, int(q * len(xs)))]


class Stream:
    """One stream to run: ``await stream()`` gives its event count and sets
    ``ttfe`` (seconds from its start to its first event)."""

    def __init__(self, run: Callable[[Stream], Awaitable[int]]) -> None:
        self._run = run
        self.ttfe = float("nan")

    def __call__(self) -> Awaitable[int]:
        return self._run(self)


def _rss() -> int:
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


async def _measure(n: int, start: Callable[[], Awaitable[list[Stream]]], server: int) -> Result:
    """``start()`` makes the N clients (baseline RSS after it) and returns
    their stream coroutines (each returns its event count and records its
    time to first event); ``server`` is the server's process id (0: none)."""
    streams = await start()
    base = _rss()
    peak = base
    done = False

    async def sample() -> None:
        nonlocal peak
        while not done:
            peak = max(peak, _rss())
            await asyncio.sleep(0.02)

    sampler = asyncio.ensure_future(sample())
    s0 = cpu_s(server)
    c0, t0 = time.process_time(), time.perf_counter()
    counts = await asyncio.gather(*(s() for s in streams))
    wall = time.perf_counter() - t0
    cpu = time.process_time() - c0
    server_cpu = cpu_s(server) - s0
    done = True
    await sampler
    ttfe = [s.ttfe for s in streams]
    return Result(sum(counts), wall, ttfe, (peak - base) / n, cpu, server_cpu)


def panto_run(base_url: str, n: int, server: int = 0) -> Result:
    from panto.agent import Agent
    from panto.config import Config
    from panto.events import ContentDelta

    async def start() -> list[Stream]:
        cfg = Config(provider="openai", model="bench", base_url=base_url, api_key="sk-bench")
        out = []
        for _ in range(n):
            agent = Agent(cfg)
            await agent.asubmit_user_message("hello")

            async def one(rec: Stream, agent: Agent = agent) -> int:
                t0 = time.perf_counter()
                k = 0
                async for ev in agent.run_async():
                    if type(ev) is ContentDelta:
                        if k == 0:
                            rec.ttfe = time.perf_counter() - t0
                        k += len(ev.text)
                await agent.aclose()
                return k // TOKEN

            out.append(Stream(one))
        return out

    async def run() -> Result:
        if WARM:  # (agents without a host share the process's clients per loop)
            await _measure(n, start, 0)
        return await _measure(n, start, server)

    return run_loop(run())


def openai_run(base_url: str, n: int, server: int = 0) -> Result:
    import openai

    clients: list[openai.AsyncOpenAI] = []

    async def start() -> list[Stream]:
        if not clients:  # one client, as it is used (both rounds with --warm)
            clients.append(openai.AsyncOpenAI(base_url=base_url, api_key="sk-bench", max_retries=0))
        client = clients[0]
        out = []
        for _ in range(n):

            async def one(rec: Stream) -> int:
                t0 = time.perf_counter()
                k = 0
                stream = await client.chat.completions.create(
                    model="bench", messages=[{"role": "user", "content": "hello"}], stream=True
                )
                async for chunk in stream:
                    if chunk.choices and chunk.choices[0].delta.content:
                        if k == 0:
                            rec.ttfe = time.perf_counter() - t0
                        k += len(chunk.choices[0].delta.content)
                return k // TOKEN

            out.append(Stream(one))
        return out

    async def run() -> Result:
        try:
            if WARM:
                await _measure(n, start, 0)
            return await _measure(n, start, server)
        finally:
            for c in clients:
                await c.close()

    return run_loop(run())


def floor_run(base_url: str, n: int, server: int = 0) -> Result:
    """``--floor``: the least any asyncio client does -- a bare Protocol per
    stream on a new connection, the request written as it connects, the
    body only scanned for the event text and the end of the chunked body
    (no HTTP parsing, no JSON, no decoding).  What the machine and the
    event loop allow; panto's rows are read against it."""
    scheme, _, rest = base_url.partition("://")
    hostport, _, path = rest.partition("/")
    host, _, port = hostport.rpartition(":")
    body = json.dumps(
        {"model": "bench", "stream": True, "messages": [{"role": "user", "content": "hello"}]}
    ).encode()
    request = (
        f"POST /{path}/chat/completions HTTP/1.1\r\nhost: {hostport}\r\n"
        "content-type: application/json\r\naccept: text/event-stream\r\n"
        f"authorization: Bearer sk-bench\r\ncontent-length: {len(body)}\r\n\r\n"
    ).encode() + body
    text = b'"content":"tok "'

    class Reader(asyncio.Protocol):
        def __init__(self, done: asyncio.Future[int], rec: Stream, t0: float) -> None:
            self.done, self.rec, self.t0 = done, rec, t0
            self.tail = b""
            self.k = 0
            self.transport: asyncio.Transport | None = None

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self.transport = transport  # type: ignore[assignment]
            transport.write(request)  # type: ignore[attr-defined]

        def data_received(self, data: bytes) -> None:
            seen = self.tail + data
            k = seen.count(text)
            if k and not self.k:
                self.rec.ttfe = time.perf_counter() - self.t0
            self.k += k
            self.tail = seen[-(len(text) - 1) :]
            if seen.endswith(b"\r\n0\r\n\r\n") and not self.done.done():
                assert self.transport is not None
                self.transport.close()
                self.done.set_result(self.k)

        def connection_lost(self, exc: Exception | None) -> None:
            if not self.done.done():
                self.done.set_exception(exc or ConnectionError("closed before the end"))

    assert scheme == "http", base_url

    async def start() -> list[Stream]:
        loop = asyncio.get_running_loop()

        async def one(rec: Stream) -> int:
            t0 = time.perf_counter()
            done: asyncio.Future[int] = loop.create_future()
            await loop.create_connection(lambda: Reader(done, rec, t0), host, int(port))
            return await done

        return [Stream(one) for _ in range(n)]

    async def run() -> Result:
        if WARM:
            raise SystemExit("--floor has no kept-alive connections: leave out --warm")
        return await _measure(n, start, server)

    return run_loop(run())


def serve(n_events: int, delay: float) -> tuple[subprocess.Popen[str], str]:
    """bench/serve.py's upstream in a process of its own: ``n_events``
    events a stream, ``delay`` seconds apart (paced, one event a write) or
    as fast as it writes them (burst, 16 events a write)."""
    cmd = [sys.executable, str(HERE.parent / "serve.py"), "--serve-upstream"]
    cmd += ["--chunks", str(n_events), "--delay", str(delay)]
    cmd += ["--per-write", "1" if delay else "16"]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    return proc, f"http://127.0.0.1:{int(proc.stdout.readline())}/v1"


def cpu_s(pid: int) -> float:
    """User + system CPU seconds of ``pid`` (0: none)."""
    if not pid:
        return 0.0
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(client: str, n: int, url: str, server: int, loop: str, warm: bool) -> None:
    """One measured run in this (fresh) process, after one warm-up stream
    (imports, caches); prints its Result as JSON."""
    global LOOP, WARM
    LOOP = loop
    run = {"panto": panto_run, "openai": openai_run, "floor": floor_run}[client]
    run(url, 1)
    if SETTLE:  # as a server does once it has started (panto serve), for both clients
        from panto.app import settle_after_startup

        settle_after_startup()
    WARM = warm
    print(json.dumps(asdict(run(url, n, server))), flush=True)


def measure(client: str, n: int, url: str, server: int) -> Result:
    """A run of ``client`` at ``n`` in a process of its own."""
    out = subprocess.run(
        [sys.executable, str(HERE), "--child", client, str(n), url, str(server), LOOP]
        + (["warm"] if WARM else ["cold"])
        + (["settle"] if SETTLE else ["unsettled"]),
        capture_output=True,
        text=True,
        check=False,
    )
    if out.returncode:
        raise SystemExit(f"{client} at N = {n} failed:\n{out.stderr[-2000:]}")
    return Result(**json.loads(out.stdout.splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, nargs="+", default=[1, 16, 64, 256])
    ap.add_argument("--quick", action="store_true", help="fewer events per stream")
    ap.add_argument(
        "--paced-events",
        type=int,
        default=50,
        metavar="M",
        help="events per paced stream (50: a 1 s stream, where the start of the N "
        "streams weighs on the ideal rate as much as the pace does)",
    )
    ap.add_argument("--modes", nargs="+", default=["burst", "paced"])
    ap.add_argument(
        "--loop",
        choices=["asyncio", "uvloop"],
        default="asyncio",
        help="the event loop of both clients' runs (uvloop: pip install 'panto[uvloop]')",
    )
    ap.add_argument(
        "--warm",
        action="store_true",
        help="measure a second round of N streams on kept-alive connections (both clients)",
    )
    ap.add_argument(
        "--no-settle",
        action="store_true",
        help="skip panto.app.settle_after_startup() after the warm-up (both clients)",
    )
    ap.add_argument(
        "--floor",
        action="store_true",
        help="add a bare asyncio client's rows (no HTTP parsing, no decoding): "
        "the most the machine and the loop allow",
    )
    ap.add_argument("--child", nargs=7, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    global LOOP, WARM, SETTLE
    if args.child:
        c = args.child
        SETTLE = c[6] == "settle"
        child(c[0], int(c[1]), c[2], int(c[3]), c[4], c[5] == "warm")
        return 0
    LOOP, WARM, SETTLE = args.loop, args.warm, not args.no_settle
    if LOOP == "uvloop":
        try:
            import uvloop  # noqa: F401
        except ImportError:
            raise SystemExit(
                "--loop uvloop: uvloop is not installed (pip install 'panto[uvloop]')"
            ) from None
    rate = 50.0  # paced: events per second per stream
    print(
        f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
        f"load {os.getloadavg()[0]:.1f}, loop: {LOOP}"
        + (", warm: kept-alive connections from an unmeasured round of N" if WARM else "")
        + (", settled (panto.app.settle_after_startup)" if SETTLE else ", not settled")
    )
    try:
        import openai  # noqa: F401 - the bench extra
    except ImportError:
        have_openai = False
        print("openai is not installed (pip install '.[bench]'): its rows and ratios are left out")
    else:
        have_openai = True
    for mode in args.modes:
        paced = 25 if args.quick else args.paced_events
        n_events = (200 if args.quick else 1000) if mode == "burst" else paced
        delay = 1 / rate if mode == "paced" else 0.0
        proc, url = serve(n_events, delay)
        try:
            rows = []
            for n in args.n:
                p = measure("panto", n, url, proc.pid)
                o = measure("openai", n, url, proc.pid) if have_openai else None
                f = measure("floor", n, url, proc.pid) if args.floor else None
                assert p.events == n * n_events, (p.events, n * n_events)
                assert o is None or o.events == p.events, (o.events, p.events)
                assert f is None or f.events == p.events, (f.events, p.events)
                rows.append((n, p, o, f))
        finally:
            proc.kill()
            proc.wait()
        base = rows[0][1]
        print(f"\n{mode}: {n_events} events per stream" + (f", {rate:g}/s" if delay else ""))
        print(
            f"{'N':>4} {'client':<7} {'events/s':>10} {'ideal%':>7} {'ttfe p50':>9} "
            f"{'p99':>8} {'KB/stream':>9} {'us/event':>9} {'srv%':>5} | {'rate/N1':>7} "
            f"{'cpu/N1':>6} {'rate/oai':>8} {'cpu/oai':>7} {'KB/oai':>6}"
        )
        for n, p, o, f in rows:
            pairs = [("panto", p)] + ([("openai", o)] if o is not None else [])
            pairs += [("floor", f)] if f is not None else []
            for name, r in pairs:
                # a stream's M events span M - 1 intervals of 1/rate at best
                ideal = (n_events - 1) / rate / r.wall * 100 if delay else float("nan")
                line = (
                    f"{n:>4} {name:<7} {r.rate:>10.0f} {ideal:>7.1f} {r.p(0.5) * 1e3:>7.1f}ms "
                    f"{r.p(0.99) * 1e3:>6.1f}ms {r.rss / 1024:>9.1f} {r.cpu_per_event * 1e6:>9.2f}"
                    f" {r.server_cpu / r.wall * 100:>5.0f}"
                )
                if name == "panto":
                    line += f" | {r.rate / base.rate:>7.2f} {r.cpu_per_event / base.cpu_per_event:>6.2f}"
                if name == "panto" and o is not None:
                    line += (
                        f" {r.rate / o.rate:>8.2f} {r.cpu_per_event / o.cpu_per_event:>7.2f}"
                        f" {r.rss / o.rss if o.rss > 0 else float('nan'):>6.2f}"
                    )
                print(line)
    print(
        "\nideal%: (M - 1) / 50 s over the wall clock from starting the N streams to the"
        " last one's end (M events a stream)\nsrv%: the server process's CPU over that"
        " wall clock (% of one core, in 10 ms ticks)\nKB/stream: peak RSS over the"
        " baseline, sampled every 20 ms; every (client, N) runs in a fresh process"
        + (
            "\nfloor: a bare asyncio Protocol per stream (no HTTP parsing, no decoding)"
            if args.floor
            else ""
        )
        + (
            " (--warm: the first round's memory is reused, so KB/stream says little;"
            " take it from a run without --warm)"
            if WARM
            else ""
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
