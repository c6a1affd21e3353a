"""Start-up cost of extensions: 20 extensions across the three layers, nothing
to install, against ``--no-extensions``.

The layout (in a temporary home, so nothing of yours is read):

- base: the 4 built-in ``std.*`` tools;
- user: 6 files in ``~/.config/panto/extensions/``, 1 in a directory listed
  in the user config's ``extensions.paths``, and 1 installed rock listed in
  ``extensions.rocks`` (its tree laid out as luarocks leaves it);
- project: 5 files in ``.panto/extensions/``, 1 in ``.panto/tools/``, 2 in a
  directory listed in the project config's ``extensions.paths``;
- a ``deny`` rule in the user config and an ``allow`` in the project config,
  so the policy has work to do.

Each run is a fresh ``python`` subprocess timing, from before ``import
panto.config`` to after the first ``decls()``: ``Config.load`` +
``panto.lua.create_source`` (runtime start, discovery, rocks check,
evaluate, plan, activate) + ``source.decls()``.  The baseline is the same with
``no_extensions=True`` (the std tools only).  A ``luarocks`` shim on ``PATH``
records any spawn: there must be none.

Prints the medians, the difference in ms (target: < 30 ms) and the ratio.
``python bench/startup.py [--runs N] [--installed]`` (default: the source
tree's ``python/`` first on ``sys.path``; ``--installed``: the installed
panto).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

EXT = """\
return {{
  name = "{name}",
  activate = function(cfg)
    panto.ext.register_tool {{
      name = "{tool}",
      description = "bench tool {name}",
      schema = {{ type = "object", properties = {{ path = {{ type = "string" }} }},
                 required = {{ "path" }} }},
      handler = function(input) return "{name} " .. tostring(input.path) end,
    }}
  end,
}}
"""

CHILD = """\
import json, sys, time
t0 = time.perf_counter()
from panto.config import Config
import panto.lua as plua
cfg = Config.load(cwd=sys.argv[1])
src, rep = plua.create_source(cwd=sys.argv[1], no_extensions=sys.argv[2] == "1", config=cfg)
decls = src.decls()
ms = (time.perf_counter() - t0) * 1000
print(json.dumps({"ms": ms, "entries": len(rep.entries), "active": len(rep.active),
                  "tools": len(decls), "errors": rep.errors, "warnings": rep.warnings}))
"""


def _ext(d: Path, name: str) -> None:
    d.mkdir(parents=True, exist_ok=True)
    tool = name.replace(".", "_")
    (d / f"{tool}.lua").write_text(EXT.format(name=name, tool=tool))


def build_layout(base: Path) -> tuple[Path, dict[str, str]]:
    """The home, user and project dirs; returns (project cwd, env)."""
    home = base / "home"
    cfg = home / ".config" / "panto"
    data = home / ".local" / "share"
    proj = base / "proj"
    (proj / ".git").mkdir(parents=True)
    for i in range(6):
        _ext(cfg / "extensions", f"user.ext{i}")
    _ext(base / "user-path", "user.path0")
    (cfg / "config.toml").write_text(
        textwrap.dedent(
            f"""\
            [extensions]
            deny = ["user.ext5"]
            paths = ["{base / "user-path"}"]
            rocks = ["benchrock 1.0-1"]
            """
        )
    )
    # an installed rock, as luarocks lays it out
    tree = data / "panto" / "rocks" / "lua-5.4.8"
    meta = tree / "lib" / "luarocks" / "rocks-5.4" / "benchrock" / "1.0-1"
    meta.mkdir(parents=True)
    (meta / "rock_manifest").write_text("rock_manifest = {}\n")
    share = tree / "share" / "lua" / "5.4"
    share.mkdir(parents=True)
    (share / "benchrock.lua").write_text(EXT.format(name="rock.bench", tool="rock_bench"))
    for i in range(5):
        _ext(proj / ".panto" / "extensions", f"proj.ext{i}")
    _ext(proj / ".panto" / "tools", "proj.tool0")
    for i in range(2):
        _ext(proj / "exts", f"proj.path{i}")
    (proj / ".panto" / "config.toml").write_text(
        '[extensions]\nallow = ["user.ext5"]\npaths = ["exts"]\n'
    )
    shim = base / "shim"
    shim.mkdir()
    (shim / "luarocks").write_text(f'#!/bin/sh\necho "$*" >> "{base / "luarocks.log"}"\nexit 1\n')
    (shim / "luarocks").chmod(0o755)
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PANTO_", "XDG_", "LUA")) and k not in ("HOME",)
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(data),
        PATH=f"{shim}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    return proj, env


def run_once(proj: Path, env: dict[str, str], no_ext: bool, installed: bool) -> dict:
    env = dict(env)
    if not installed:
        env["PYTHONPATH"] = str(ROOT / "python")
    r = subprocess.run(
        [sys.executable, "-c", CHILD, str(proj), "1" if no_ext else "0"],
        env=env,
        cwd=proj,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if r.returncode != 0:
        raise SystemExit(f"child failed:\n{r.stdout}\n{r.stderr}")
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9, help="runs of each (median; default 9)")
    ap.add_argument("--installed", action="store_true", help="bench the installed panto")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="panto-startup-") as tmp:
        base = Path(tmp)
        proj, env = build_layout(base)
        run_once(proj, env, False, args.installed)  # warm the OS caches / .pyc
        run_once(proj, env, True, args.installed)
        with_ext: list[float] = []
        without: list[float] = []
        info: dict = {}
        for _ in range(max(1, args.runs)):  # interleaved: drift hits both alike
            info = run_once(proj, env, False, args.installed)
            with_ext.append(info["ms"])
            without.append(run_once(proj, env, True, args.installed)["ms"])
        log = base / "luarocks.log"
        spawned = len(log.read_text().splitlines()) if log.exists() else 0
    w, b = statistics.median(with_ext), statistics.median(without)
    print(
        f"extensions: {info['entries']} entries, {info['active']} active, "
        f"{info['tools']} tools; errors: {len(info['errors'])}, warnings: {len(info['warnings'])}"
    )
    for e in info["errors"] + info["warnings"]:
        print(f"  ! {e}")
    print(f"luarocks spawned: {spawned}")
    print(f"--no-extensions:     {b:7.2f} ms (median of {len(without)})")
    print(f"20 extensions:       {w:7.2f} ms (median of {len(with_ext)})")
    print(f"added:               {w - b:7.2f} ms (target < 30 ms)")
    print(f"ratio:               {w / b:7.2f}x")
    return 0 if spawned == 0 and not info["errors"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
