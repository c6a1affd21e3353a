"""Start-up: how long ``panto -p`` takes to put its first byte on the wire,
where that time goes, and what extensions add.

**1. ``panto -p`` to the first byte.**  A loopback server speaking the
Anthropic wire (plain HTTP) stands in for the provider.  Each run spawns
``panto -p hi`` (the std tools loaded and a session recorded, as a user gets it) and,
the moment the request's first byte arrives, reads the child's CPU time
(``/proc/PID/task/*/schedstat``: every live thread, nanoseconds) and the
wall time since the spawn.  The home is a fresh temporary one; a first
(discarded) run fills the start-up caches, as any earlier ``panto`` run does
(``panto.startup_cache``: the std tools' declarations, so the Lua runtime
starts when a tool first runs; dataclasses' compiled methods; the parsed
config).  The same is timed with those caches off (``PANTO_STARTUP_CACHE=0``:
what a first run after installing pays; the Lua runtime starts at start-up).
The baseline is ``python -c pass`` (its whole CPU time).  Prints the medians
and the ratio (target: < 100 ms of CPU).

**2. The split.**  The same path in one process, phase by phase, CPU
(``time.process_time``: all threads) and wall: imports (every module
``panto -p`` imports before its first byte but the transport's, with the
deferrals and the collector paused as the command does), config
(``Config.load``), extensions (the std tools from the cache, the session
store and the system prompt: ``panto.app.open_session``), the transport
(``panto.providers.http11``, the stdlib HTTP/1.1 client), TLS
(``transport.ssl_context``: what an ``https://`` provider adds; the
``http://`` request here must not pay it) and the first request (``submit``
+ ``run`` until the server has its first byte).

Then what the imports alone cost, cumulatively, each step in a fresh
interpreter: everything ``panto -p`` imports (with the compiled-dataclass
cache, inspect and urllib.parse deferred, as the command does), then what it no longer
imports before its first byte: asyncio and lupa (the Lua runtime, when a
tool runs), httpx with its client (``run_async``, a proxy).

**3. Extensions: 23 across the three layers**, nothing to install, against
``--no-extensions``.

The layout (in a temporary home, so nothing of yours is read):

- base: the 7 built-in ``std.*`` tools;
- user: 6 files in ``~/.config/panto/extensions/``, 1 in a directory listed
  in the user config's ``extensions.paths``, and 1 installed rock listed in
  ``extensions.rocks`` (its tree laid out as luarocks leaves it);
- project: 5 files in ``.panto/extensions/``, 1 in ``.panto/tools/``, 2 in a
  directory listed in the project config's ``extensions.paths``;
- a ``deny`` rule in the user config and an ``allow`` in the project config,
  so the policy has work to do;
- the project trusted (``panto trust``: its ``.panto/`` applies in full).

Each run is a fresh ``python`` subprocess timing (wall, and CPU of all its
threads: the Lua runtime's included; on a busy machine the wall time also
holds the waits for a core at each hand-over to the Lua thread), from
before ``import panto.config`` to after the first ``decls()``: ``Config.load`` +
``panto.lua.create_source`` (runtime start, discovery, rocks check,
evaluate, plan, activate) + ``source.decls()``.  The baseline is the same with
``no_extensions=True`` (the std tools only).  A ``luarocks`` shim on ``PATH``
records any spawn: there must be none.

Prints the medians, the difference in ms (target: < 30 ms) and the ratio.
``python bench/startup.py [--runs N] [--installed | --source]`` (default: the
panto ``import panto`` gives this interpreter: the installed one after ``pip
install .``, the source tree with an editable install or none;
``--installed``: the installed panto; ``--source``: the source tree's
``python/`` first on ``sys.path``, which needs its compiled core there).
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
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
t0, c0 = time.perf_counter(), time.process_time()
from panto.config import Config
import panto.lua as plua
cfg = Config.load(cwd=sys.argv[1])
src, rep = plua.create_source(cwd=sys.argv[1], no_extensions=sys.argv[2] == "1", config=cfg)
decls = src.decls()
ms = (time.perf_counter() - t0) * 1000
cpu = (time.process_time() - c0) * 1000
print(json.dumps({"ms": ms, "cpu": cpu, "entries": len(rep.entries), "active": len(rep.active),
                  "tools": len(decls), "errors": rep.errors, "warnings": rep.warnings}))
"""


# -- 1 and 2: the first byte on the wire ---------------------------------------------


def _sse_reply() -> bytes:
    """A complete streamed Anthropic answer ("ok") as one HTTP response."""
    sys.path.insert(0, str(ROOT / "python"))
    from panto.conversation import Text
    from panto.testing import Reply, render_sse

    body = b"".join(render_sse(Reply([Text("ok")]), "anthropic-messages"))
    head = (
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


def _task_cpu_ns(pid: int) -> int:
    """CPU time of every live thread of ``pid`` (ns)."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return -1
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


class FirstByteServer:
    """Accepts connections; at the first byte of each request records
    ``(monotonic time, CPU ns of the watched pid)``, then answers."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.reply = _sse_reply()
        self.pid = 0
        self.hits: list[tuple[float, int]] = []
        self._t = threading.Thread(target=self._serve, daemon=True)
        self._t.start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                first = conn.recv(1)
                if not first:
                    continue
                self.hits.append((time.monotonic(), _task_cpu_ns(self.pid)))
                data = first
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, rest = data.partition(b"\r\n\r\n")
                n = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        n = int(line.split(b":")[1])
                while len(rest) < n:
                    rest += conn.recv(65536)
                conn.sendall(self.reply)

    def close(self) -> None:
        self.sock.close()


def first_byte_env(port: int, env: dict[str, str]) -> dict[str, str]:
    env = dict(env)
    env.update(
        PANTO_MODEL="anthropic/claude-sonnet-4-5",
        PANTO_BASE_URL=f"http://127.0.0.1:{port}",
        ANTHROPIC_API_KEY="sk-bench",
        PANTO_MAX_RETRIES="0",
    )
    return env


def panto_first_byte(
    server: FirstByteServer, cwd: Path, env: dict[str, str]
) -> tuple[float, float]:
    """(CPU ms, wall ms) of ``panto -p hi`` when its request's first byte arrives."""
    server.hits.clear()
    cmd = [sys.executable, "-m", "panto", "-p", "hi"]  # a session is recorded, as by default
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    server.pid = p.pid
    out, err = p.communicate(timeout=120)
    if p.returncode != 0 or not server.hits or b"ok" not in out:
        raise SystemExit(f"panto -p failed ({p.returncode}):\n{out.decode()}\n{err.decode()}")
    at, cpu_ns = server.hits[0]
    return cpu_ns / 1e6, (at - t0) * 1000


def python_pass_cpu(env: dict[str, str]) -> float:
    """CPU ms of a whole ``python -c pass``."""
    p = subprocess.Popen([sys.executable, "-c", "pass"], env=env)
    _, _, ru = os.wait4(p.pid, 0)
    p.returncode = 0
    return (ru.ru_utime + ru.ru_stime) * 1000


SPLIT = """\
import json, os, sys, time
def now():
    return time.process_time(), time.perf_counter()
marks = [("start", *now())]
from panto.startup_cache import (defer_inspect_import, defer_urllib_parse_import,
                                 install_dataclass_code_cache, pause_gc, resume_gc)
pause_gc(); defer_urllib_parse_import(); defer_inspect_import()  # as `panto` does first
install_dataclass_code_cache()
# what `panto -p` imports before its first byte, the transport's client aside
import panto.cli.chat, panto.app, panto.agent, panto.lua.lazy, panto.sessions
import panto.system_prompt, panto.decoder, panto.providers.anthropic
marks.append(("imports", *now()))
from panto.config import Config
config = Config.load(cwd=sys.argv[1])
marks.append(("config", *now()))
session = panto.app.open_session(config, cwd=sys.argv[1])
resume_gc()  # as panto.cli.chat does once the agent is built
marks.append(("extensions", *now()))
import panto.providers.http11
marks.append(("transport import", *now()))
from panto.providers.transport import ssl_context
ssl_context()  # what an https:// provider's client gets
marks.append(("TLS (https only)", *now()))
agent = session.agent
agent.submit_user_message("hi")
stream = agent.run()
next(iter(stream))  # the server has answered: the request went out
marks.append(("first request", *now()))
stream.close()
print(json.dumps(marks))
os._exit(0)
"""


def split_once(cwd: Path, env: dict[str, str]) -> list[tuple[str, float, float]]:
    r = subprocess.run(
        [sys.executable, "-c", SPLIT, str(cwd)],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )
    if r.returncode != 0:
        raise SystemExit(f"split child failed:\n{r.stdout}\n{r.stderr}")
    marks = json.loads(r.stdout.strip().splitlines()[-1])
    out = []
    for (_, c0, w0), (name, c1, w1) in zip(marks, marks[1:]):
        out.append((name, (c1 - c0) * 1000, (w1 - w0) * 1000))
    return out


#: What the first byte costs before panto's own work, cumulatively, each step
#: in a fresh interpreter (the process's CPU ms once imported; ``--runs`` medians).
DEPS = [
    ("python -c pass (no exit)", "pass"),
    (
        "+ all panto -p imports",
        "from panto.startup_cache import defer_inspect_import as d, "
        "defer_urllib_parse_import as u, install_dataclass_code_cache as i; u(); d(); i(); "
        "import panto.cli.chat, panto.app, panto.agent, panto.lua, panto.sessions, "
        "panto.system_prompt, panto.decoder, panto.providers.http11",
    ),
    ("+ asyncio, lupa (a tool runs)", "import asyncio, lupa.lua54, panto.lua.runtime"),
    (
        "+ httpx, httpx.Client() (async/proxy)",
        "import httpx, ssl; httpx.Client(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT))",
    ),
]


def deps_report(runs: int, env: dict[str, str]) -> None:
    codes, acc = [], []
    for _, code in DEPS:
        acc.append(code)
        codes.append("; ".join(acc))
    res: list[list[float]] = [[] for _ in codes]
    for _ in range(max(1, runs)):
        for i, code in enumerate(codes):
            # the process's CPU time when the imports are done (its exit not counted)
            tail = "; import time as _t; print(_t.process_time() * 1000)"
            r = subprocess.run(
                [sys.executable, "-c", code + tail], env=env, capture_output=True, text=True
            )
            if r.returncode != 0:
                raise SystemExit(f"dependency child failed: {code}\n{r.stderr}")
            res[i].append(float(r.stdout.split()[-1]))
    print("imports alone (fresh interpreters, cumulative; CPU ms, medians; + what each step adds):")
    prev = 0.0
    for (name, _), vals in zip(DEPS, res):
        m = statistics.median(vals)
        print(f"  {name + ':':<38}{m:7.1f}  (+{m - prev:5.1f})")
        prev = m


def first_byte_report(runs: int, installed: bool) -> bool:
    with tempfile.TemporaryDirectory(prefix="panto-firstbyte-") as tmp:
        base = Path(tmp)
        home = base / "home"
        proj = base / "proj"
        (proj / ".git").mkdir(parents=True)
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("PANTO_", "XDG_", "LUA", "ANTHROPIC_", "OPENAI_"))
            and k not in ("HOME", "PYTHONDONTWRITEBYTECODE")  # bytecode cached, as installed
        }
        env.update(HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
        env["XDG_DATA_HOME"] = str(home / ".local" / "share")
        if not installed:
            env["PYTHONPATH"] = str(ROOT / "python")
        server = FirstByteServer()
        try:
            fenv = first_byte_env(server.port, env)
            panto_first_byte(server, proj, fenv)  # warm the OS caches / .pyc, fill the cache
            eager_env = dict(fenv, PANTO_STARTUP_CACHE="0")
            cpu, wall, base_cpu, eager = [], [], [], []
            phases: dict[str, list[tuple[float, float]]] = {}
            for _ in range(max(1, runs)):
                c, w = panto_first_byte(server, proj, fenv)
                cpu.append(c)
                wall.append(w)
                base_cpu.append(python_pass_cpu(env))
                eager.append(panto_first_byte(server, proj, eager_env)[0])
                for name, pc, pw in split_once(proj, fenv):
                    phases.setdefault(name, []).append((pc, pw))
        finally:
            server.close()
    c, w, b = statistics.median(cpu), statistics.median(wall), statistics.median(base_cpu)
    print("panto -p hi (std tools loaded) to the first byte of its request:")
    print(f"  CPU:                {c:7.1f} ms (median of {len(cpu)}; target < 100 ms)")
    print(f"  wall:               {w:7.1f} ms")
    print(f"  python -c pass CPU: {b:7.1f} ms")
    print(f"  ratio:              {c / b:7.2f}x python -c pass")
    e = statistics.median(eager)
    print(
        f"  caches off:         {e:7.1f} ms CPU ({e / b:.2f}x; PANTO_STARTUP_CACHE=0, a first run)"
    )
    print("split (one process; CPU ms / wall ms, medians):")
    for name, vals in phases.items():
        pc = statistics.median(v[0] for v in vals)
        pw = statistics.median(v[1] for v in vals)
        print(f"  {name + ':':<20}{pc:7.1f} / {pw:7.1f}")
    deps_report(runs, env)
    return True


# -- 3: extensions ------------------------------------------------------------------


def _ext(d: Path, name: str) -> None:
    d.mkdir(parents=True, exist_ok=True)
    tool = name.replace(".", "_")
    (d / f"{tool}.lua").write_text(EXT.format(name=name, tool=tool))


def uses_installed() -> bool:
    """Whether ``import panto`` here gives an installed panto (``pip install
    .``: the source tree's ``python/`` has no compiled core then) rather
    than the source tree (an editable install, or none)."""
    import importlib.util

    spec = importlib.util.find_spec("panto")
    if spec is None or spec.origin is None:
        return False
    return not Path(spec.origin).resolve().is_relative_to((ROOT / "python").resolve())


def build_layout(base: Path, installed: bool) -> tuple[Path, dict[str, str]]:
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
        if not k.startswith(("PANTO_", "XDG_", "LUA"))
        and k not in ("HOME", "PYTHONDONTWRITEBYTECODE")  # bytecode cached, as installed
    }
    env.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(data),
        PATH=f"{shim}{os.pathsep}{os.environ.get('PATH', '')}",
    )
    # the user trusts their project (`panto trust`): its .panto/ applies in full
    if not installed:
        sys.path.insert(0, str(ROOT / "python"))
    from panto.policy.trust import set_trust

    set_trust(proj, True, env)
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
    which = ap.add_mutually_exclusive_group()
    which.add_argument(
        "--installed", action="store_true", default=None, help="bench the installed panto"
    )
    which.add_argument(
        "--source",
        dest="installed",
        action="store_false",
        help="bench the source tree's python/ (default: what `import panto` gives)",
    )
    ap.add_argument("--skip-first-byte", action="store_true", help="only the extensions part")
    args = ap.parse_args(argv)
    if args.installed is None:
        args.installed = uses_installed()
    print(f"benchmarking {'the installed panto' if args.installed else 'the source tree'}")
    if not args.skip_first_byte:
        first_byte_report(args.runs, args.installed)
        print()
    with tempfile.TemporaryDirectory(prefix="panto-startup-") as tmp:
        base = Path(tmp)
        proj, env = build_layout(base, args.installed)
        run_once(proj, env, False, args.installed)  # warm the OS caches / .pyc
        run_once(proj, env, True, args.installed)
        with_ext: list[float] = []
        without: list[float] = []
        with_cpu: list[float] = []
        without_cpu: list[float] = []
        info: dict = {}
        for _ in range(max(1, args.runs)):  # interleaved: drift hits both alike
            info = run_once(proj, env, False, args.installed)
            with_ext.append(info["ms"])
            with_cpu.append(info["cpu"])
            base_info = run_once(proj, env, True, args.installed)
            without.append(base_info["ms"])
            without_cpu.append(base_info["cpu"])
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
    wc, bc = statistics.median(with_cpu), statistics.median(without_cpu)
    print(f"                     wall ms / CPU ms (medians of {len(without)})")
    print(f"--no-extensions:     {b:7.2f} / {bc:7.2f}")
    print(f"20 extensions:       {w:7.2f} / {wc:7.2f}")
    print(f"added:               {w - b:7.2f} / {wc - bc:7.2f} (target < 30 ms)")
    print(f"ratio:               {w / b:7.2f}x / {wc / bc:5.2f}x")
    return 0 if spawned == 0 and not info["errors"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
