"""What configured MCP servers add to ``panto -p``'s start-up: CPU time to
the first byte of the request with one stdio MCP server configured (its
tool list cached by an earlier run, as after any first run) against the
same command without it, interleaved, in one run.  Target: within 10 ms.

The server is tests/support/mcp_demo_server.py (the official SDK); the
provider a loopback server (bench/startup.py's FirstByteServer), the home a
fresh temporary one.

    python bench/mcp_startup.py [--runs 9]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from startup import FirstByteServer, first_byte_env, panto_first_byte  # noqa: E402

DEMO = ROOT / "tests" / "support" / "mcp_demo_server.py"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="panto-mcp-bench-") as tmp:
        base = Path(tmp)
        home = base / "home"
        proj = base / "proj"
        (proj / ".git").mkdir(parents=True)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PANTO_", "XDG_", "ANTHROPIC_", "OPENAI_")) and k != "HOME"
        }
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
        env["XDG_DATA_HOME"] = str(home / ".local" / "share")
        env["XDG_CACHE_HOME"] = str(home / ".cache")
        cfg = home / ".config" / "panto" / "config.toml"
        cfg.parent.mkdir(parents=True)
        server = FirstByteServer()
        try:
            fenv = first_byte_env(server.port, env)
            panto_first_byte(server, proj, fenv)  # warm: .pyc, start-up caches
            with_mcp = f'[mcp.servers.demo]\ncommand = ["{sys.executable}", "{DEMO}"]\n'
            cfg.write_text(with_mcp)
            panto_first_byte(server, proj, fenv)  # fills the MCP tool-list cache
            off, on = [], []
            for _ in range(max(1, a.runs)):
                cfg.write_text("")
                off.append(panto_first_byte(server, proj, fenv)[0])
                cfg.write_text(with_mcp)
                on.append(panto_first_byte(server, proj, fenv)[0])
        finally:
            server.close()
    m_off, m_on = statistics.median(off), statistics.median(on)
    print(f"panto -p hi, CPU to the first byte (median of {len(off)}, interleaved):")
    print(f"  without MCP servers:      {m_off:6.1f} ms")
    print(
        f"  one stdio server (cached): {m_on:6.1f} ms  (+{m_on - m_off:.1f} ms, {m_on / m_off:.2f}x; target +10 ms)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
