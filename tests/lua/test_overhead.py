"""What it must show, item 6: long-lived dispatch is >= 10x cheaper than a
fresh runtime per call (bench/lua_dispatch.py prints the real numbers)."""

from __future__ import annotations

import importlib.util
from pathlib import Path


def test_long_lived_is_10x_cheaper() -> None:
    path = Path(__file__).resolve().parents[2] / "bench" / "lua_dispatch.py"
    spec = importlib.util.spec_from_file_location("lua_dispatch", path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    single, _ = mod.bench_long_lived(300)
    fresh = mod.bench_fresh(20)
    assert fresh / single >= 10, (fresh, single)
