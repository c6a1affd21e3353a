"""bench/startup.py runs and prints its ratio (no thresholds here)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_startup_bench_smoke() -> None:
    args = [sys.executable, str(ROOT / "bench" / "startup.py"), "--runs", "1"]
    try:
        import panto

        if not str(Path(panto.__file__).resolve()).startswith(str(ROOT / "python")):
            args.append("--installed")
    except ImportError:  # pragma: no cover
        pass
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "23 entries, 23 active" in r.stdout
    assert "luarocks spawned: 0" in r.stdout
    assert "ratio:" in r.stdout and "added:" in r.stdout
    out = r.stdout
    assert "to the first byte of its request" in out and "x python -c pass" in out
    for phase in ("imports:", "config:", "extensions:", "TLS (https only):", "first request:"):
        assert phase in out, phase
    assert "imports alone" in out and "+ all panto -p imports:" in out


def test_host_bench_smoke() -> None:
    """bench/host.py: N concurrent turns in one loop, burst and paced."""
    args = [sys.executable, str(ROOT / "bench" / "host.py"), "--n", "1", "4", "--quick", "--floor"]
    r = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    for line in ("burst: 200 events per stream", "paced: 25 events per stream, 50/s"):
        assert line in r.stdout
    rows = [
        ln.split()
        for ln in r.stdout.splitlines()
        if ln.split()[:2] in (["1", "panto"], ["4", "panto"])
    ]
    assert len(rows) == 4, r.stdout
    # --floor: a bare asyncio client's rows, its events counted as panto's are
    # (host.py asserts the counts agree), its paced share a real figure
    floor = [ln.split() for ln in r.stdout.splitlines() if ln.split()[1:2] == ["floor"]]
    assert len(floor) == 4, r.stdout
    assert 50 < float(floor[-1][3]) <= 101, floor
    # the columns say what they measure (the server's CPU share shows it is not the limit)
    assert "srv%" in r.stdout and "ideal%: (M - 1) / 50 s" in r.stdout
    assert "every (client, N) runs in a fresh process" in r.stdout
