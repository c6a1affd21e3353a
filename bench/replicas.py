"""``panto serve`` replicas on one PostgreSQL: what a prompt to a busy
session costs on another replica, and how many turns one replica runs at
once.

Starts a throwaway database on the server of ``--url`` (default
``$PANTO_TEST_POSTGRES_URL``), two ``panto serve`` processes on it (the
offline ``mock/anthropic`` model, a private HOME) and measures, loopback
only:

- busy: a turn (``call bash sleep 60``) running on A; ``--samples``
  prompts with ``mode: reject`` sent to B (each a 409 naming the turn) and
  to A, and ``follow_up`` sent to B (queued): time per request, p50 and max;
- concurrency: K sessions on A prompted at once with ``call bash sleep S``;
  the wall time until every turn has completed, as a ratio of S (1.0: all
  ran at once; 2.0: in two waves).

    python bench/replicas.py                        # K = 8, 16, 32; S = 3
    python bench/replicas.py --turns 8 --sleep 2 --samples 10
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any


def start_serve(env: dict[str, str], cwd: Path) -> tuple[subprocess.Popen[str], str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "panto", "serve", "--port", "0"],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("panto serve: listening on "):
        proc.kill()
        raise SystemExit(f"panto serve did not start: {line!r}")
    return proc, line.strip().rsplit(" ", 1)[1]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", default=os.environ.get("PANTO_TEST_POSTGRES_URL"))
    ap.add_argument("--turns", type=int, nargs="*", default=[8, 16, 32])
    ap.add_argument("--sleep", type=float, default=3.0)
    ap.add_argument("--samples", type=int, default=20)
    args = ap.parse_args()
    if not args.url:
        print("bench/replicas.py: no PostgreSQL: pass --url postgresql://... (an admin URL)")
        return 2
    import httpx
    import psycopg

    name = f"panto_bench_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(args.url, autocommit=True) as c:
        c.execute(f"CREATE DATABASE {name}")
    procs: list[subprocess.Popen[str]] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            home = Path(tmp)
            env = {k: v for k, v in os.environ.items() if not k.startswith("PANTO_")}
            for var in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
                (home / var.lower()).mkdir()
                env[var] = str(home / var.lower())
            env.update(
                HOME=str(home),
                PANTO_STARTUP_CACHE="0",
                PANTO_SESSION_URL=f"{args.url.rpartition('/')[0]}/{name}",
            )
            a_p, a = start_serve(env, home)
            procs.append(a_p)
            b_p, b = start_serve(env, home)
            procs.append(b_p)
            client = httpx.Client(timeout=60)

            def create(url: str) -> str:
                r = client.post(
                    f"{url}/v1/agent/sessions", json={"model": "mock/anthropic", "cwd": tmp}
                )
                assert r.status_code == 201, r.text
                return str(r.json()["id"])

            def prompt(url: str, sid: str, text: str, mode: str) -> httpx.Response:
                return client.post(
                    f"{url}/v1/agent/sessions/{sid}/prompts", json={"text": text, "mode": mode}
                )

            def state(url: str, sid: str) -> dict[str, Any]:
                return dict(client.get(f"{url}/v1/agent/sessions/{sid}").json())

            # -- busy --------------------------------------------------------------------
            sid = create(a)
            assert prompt(a, sid, "call bash sleep 60", "reject").status_code == 202
            while state(b, sid)["state"] != "running":
                time.sleep(0.05)
            for label, url, mode, status in (
                ("reject on A (the running replica)", a, "reject", 409),
                ("reject on B (another replica)", b, "reject", 409),
                ("follow_up on B (queued)", b, "follow_up", 202),
            ):
                times = []
                for _ in range(args.samples):
                    t0 = time.perf_counter()
                    r = prompt(url, sid, "hello", mode)
                    times.append(time.perf_counter() - t0)
                    assert r.status_code == status, r.text
                print(
                    f"busy: {label:36} p50 {statistics.median(times) * 1000:7.1f} ms"
                    f"  max {max(times) * 1000:7.1f} ms  ({args.samples} requests)"
                )
            client.post(f"{a}/v1/agent/sessions/{sid}/abort")

            # -- concurrency -------------------------------------------------------------
            for k in args.turns:
                sids = [create(a) for _ in range(k)]
                codes: list[int] = []
                t0 = time.monotonic()
                ts = [
                    threading.Thread(
                        target=lambda s=s, codes=codes: codes.append(
                            prompt(a, s, f"call bash sleep {args.sleep:g}", "reject").status_code
                        )
                    )
                    for s in sids
                ]
                for t in ts:
                    t.start()
                for t in ts:
                    t.join()
                assert codes == [202] * k, codes
                accepted = time.monotonic() - t0
                left = set(sids)
                while left:
                    left = {
                        s
                        for s in left
                        if state(a, s)["turns"] < 1 or state(a, s)["state"] != "idle"
                    }
                    time.sleep(0.05)
                wall = time.monotonic() - t0
                print(
                    f"concurrency: {k:3} turns of `sleep {args.sleep:g}` on one replica: "
                    f"{wall:6.2f} s wall = {wall / args.sleep:.2f}x one turn"
                    f" (the last prompt's 202 after {accepted:.2f} s)"
                )
    finally:
        for p in procs:
            p.terminate()
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
        with psycopg.connect(args.url, autocommit=True) as c:
            c.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
