"""Running the real ``panto`` (CLI or library) as a black box for the fault suite.

Every run gets its own HOME with XDG dirs under it, no ``PANTO_*`` or key
variables from the caller, and the key given (a unique marker, so the
secrets tests can grep for it).  A run is a subprocess with stdout/stderr in
files, a hard deadline (then SIGKILL: the run *failed* to end by itself) and
optionally an RSS ceiling (then SIGKILL too, so a defect that would take
gigabytes never endangers the machine).  Peak RSS is ``VmHWM`` polled
every 50 ms while the child runs.  Not ``ru_maxrss``: on Linux an exec'd
child's ``ru_maxrss`` starts at its parent's RSS at fork time, so after a
long pytest run it reports the test process's own ~200 MiB for every child;
it is used only when no sample was taken.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from support.fault_server import ANTHROPIC, OPENAI

__all__ = [
    "RunResult",
    "Running",
    "make_home",
    "new_key",
    "panto_env",
    "start_panto",
    "run_panto",
    "run_library",
    "session_entries",
    "session_messages",
    "find_leaks",
    "marker_of",
    "message_text",
    "session_files",
    "STARTUP_MARGIN",
    "FIRST_BYTE",
    "IDLE",
    "RETRY_WAIT_MAX",
    "RSS_BOUND_MB",
    "RSS_KILL_MB",
    "WATCHDOGS",
    "xfail",
]

#: Slack on every deadline for interpreter start-up, Lua loading and a busy
#: 2-core machine: a case "ends within its watchdog" when it ends within
#: watchdog + STARTUP_MARGIN.
STARTUP_MARGIN = float(os.environ.get("FAULTS_MARGIN", "8"))

FIRST_BYTE = 2.0
IDLE = 2.0
RETRY_WAIT_MAX = 1.0

#: The stated bound on panto's peak RSS while it is sent a 1 GiB error
#: body or a 1 GiB SSE line.  Measured (2-vCPU dev machine, Python 3.11):
#: a plain `panto -p` answer peaks at 33 MiB, the 1 GiB 401/503 bodies at
#: 33 MiB (64 KiB prefix read), the 1 GiB line at 41 MiB (the decoder's
#: 8 MiB max_event_bytes); before the fix a 1 GiB 401 passed 600 MiB in
#: 9 s.  Above RSS_KILL_MB the harness kills the run.
RSS_BOUND_MB = 100
RSS_KILL_MB = 600

WATCHDOGS = {
    "PANTO_FIRST_BYTE_TIMEOUT": str(FIRST_BYTE),
    "PANTO_IDLE_TIMEOUT": str(IDLE),
    "PANTO_RETRY_WAIT_MAX": str(RETRY_WAIT_MAX),
    "PANTO_MAX_RETRIES": "0",
}


def xfail(defect: str, what: str) -> pytest.MarkDecorator:
    return pytest.mark.xfail(strict=True, reason=f"{defect} not fixed yet: {what}")


PROVIDER = {ANTHROPIC: "anthropic", OPENAI: "openai"}
KEY_ENV = {ANTHROPIC: "ANTHROPIC_API_KEY", OPENAI: "OPENAI_API_KEY"}

#: The user config of every run: quick retries (known keys only, so it
#: loads on every version of the schema).
USER_CONFIG = """\
[retries]
base_delay = 0.05
max_delay = 0.2
"""


def new_key(wire: str) -> str:
    """A unique API key; its hex core is the marker the secrets tests grep for."""
    prefix = "sk-ant-api03-" if wire == ANTHROPIC else "sk-proj-"
    return f"{prefix}FAULTMARK{uuid.uuid4().hex}{uuid.uuid4().hex[:8]}"


def marker_of(key: str) -> str:
    """The part of the key that must never appear anywhere: 12 random hex
    digits right after the fixed prefix, so any echo of the key, of a
    prefix providers quote, or of a snippet cut after ~35 characters
    contains it."""
    core = key.split("FAULTMARK", 1)[1]
    return core[:12]


def make_home(root: Path) -> Path:
    """An isolated HOME (as tests/conftest.py's ``isolated_home``) with a
    project directory ``work`` (holding ``.git`` so discovery stops there)."""
    home = root / "home"
    for name in ("xdg_data_home", "xdg_config_home", "xdg_state_home", "xdg_cache_home"):
        (home / name).mkdir(parents=True, exist_ok=True)
    cfg = home / "xdg_config_home" / "panto"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "config.toml").write_text(USER_CONFIG)
    (home / "work" / ".git").mkdir(parents=True, exist_ok=True)
    return home


def panto_env(
    home: Path,
    wire: str,
    base_url: str,
    key: str,
    extra: dict[str, str] | None = None,
) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PANTO_")
        and k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "LUAROCKS_CONFIG", "CC")
        and not k.startswith("XDG_")
        and not k.startswith("PYTEST_")
        and k not in ("COLUMNS", "LINES")
    }
    env.update(
        HOME=str(home),
        XDG_DATA_HOME=str(home / "xdg_data_home"),
        XDG_CONFIG_HOME=str(home / "xdg_config_home"),
        XDG_STATE_HOME=str(home / "xdg_state_home"),
        XDG_CACHE_HOME=str(home / "xdg_cache_home"),
        PANTO_MODEL=f"{PROVIDER[wire]}/fault-model",
        PANTO_BASE_URL=base_url,
        NO_COLOR="1",
        PYTHONUNBUFFERED="1",
        PYTHONDONTWRITEBYTECODE="1",
    )
    env[KEY_ENV[wire]] = key
    env.update(extra or {})
    return env


@dataclass
class RunResult:
    argv: list[str]
    returncode: int | None
    stdout: str
    stderr: str
    elapsed: float
    #: peak resident set size in KiB (ru_maxrss of the child)
    peak_rss_kb: int
    #: why the harness killed it ("deadline", "rss"), None when it ended by itself
    killed: str | None = None
    samples: list[int] = field(default_factory=list, repr=False)

    @property
    def ended_by_itself(self) -> bool:
        return self.killed is None

    def describe(self) -> str:
        argv = self.argv[2:] if self.argv[1] == "-m" else ["<library driver>", *self.argv[3:]]
        return (
            f"argv={argv!r} rc={self.returncode} elapsed={self.elapsed:.1f}s "
            f"killed={self.killed} peak_rss={self.peak_rss_kb // 1024} MiB\n"
            f"--- stdout ---\n{self.stdout[-3000:]}\n--- stderr ---\n{self.stderr[-3000:]}"
        )

    def json_lines(self) -> list[dict[str, Any]]:
        out = []
        for line in self.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass
        return out


def _vm_hwm_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


class Running:
    """A started panto subprocess (see :func:`start_panto`)."""

    def __init__(
        self,
        argv: list[str],
        env: dict[str, str],
        cwd: Path,
        out_dir: Path,
        *,
        stdin: int | None = subprocess.DEVNULL,
        new_session: bool = True,
    ) -> None:
        out_dir.mkdir(parents=True, exist_ok=True)
        self.argv = argv
        tag = uuid.uuid4().hex[:8]
        self.out_path = out_dir / f"stdout-{tag}.txt"
        self.err_path = out_dir / f"stderr-{tag}.txt"
        self._out = open(self.out_path, "wb")
        self._err = open(self.err_path, "wb")
        self.started = time.monotonic()
        self.proc = subprocess.Popen(
            argv,
            env=env,
            cwd=cwd,
            stdin=stdin,
            stdout=self._out,
            stderr=self._err,
            start_new_session=new_session,
        )
        self.pid = self.proc.pid
        self.hwm = 0
        self.samples: list[int] = []
        self.status: int | None = None
        self.rusage_kb = 0
        self.killed: str | None = None
        self.ended_at: float | None = None

    def signal(self, sig: int) -> None:
        if self.status is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def poll(self) -> bool:
        """Reap without blocking; True when it has ended."""
        if self.status is not None:
            return True
        pid, status, ru = os.wait4(self.pid, os.WNOHANG)
        if pid == 0:
            return False
        self.status = os.waitstatus_to_exitcode(status)
        self.proc.returncode = self.status
        self.rusage_kb = ru.ru_maxrss
        self.ended_at = time.monotonic()
        return True

    def wait(
        self,
        deadline: float,
        *,
        rss_limit_mb: float | None = None,
        interval: float = 0.05,
    ) -> RunResult:
        """Wait until it ends or ``deadline`` seconds after the start (then
        SIGKILL it and its process group)."""
        while not self.poll():
            h = _vm_hwm_kb(self.pid)
            if h:
                self.hwm = max(self.hwm, h)
                if len(self.samples) < 2000:
                    self.samples.append(h)
            if rss_limit_mb is not None and self.hwm > rss_limit_mb * 1024:
                self.kill("rss")
            elif time.monotonic() - self.started > deadline:
                self.kill("deadline")
            time.sleep(interval)
        return self.result()

    def kill(self, why: str) -> None:
        if self.killed is None:
            self.killed = why
        for target in (lambda: os.killpg(self.pid, signal.SIGKILL), lambda: os.kill(self.pid, 9)):
            try:
                target()
            except (ProcessLookupError, PermissionError):
                pass
        # block until reaped
        while not self.poll():
            time.sleep(0.01)

    def result(self) -> RunResult:
        self._out.close()
        self._err.close()
        end = self.ended_at if self.ended_at is not None else time.monotonic()
        return RunResult(
            self.argv,
            self.status,
            self.out_path.read_text(errors="replace"),
            self.err_path.read_text(errors="replace"),
            end - self.started,
            self.hwm or self.rusage_kb,
            self.killed,
            self.samples,
        )


def start_panto(
    args: Sequence[str],
    env: dict[str, str],
    home: Path,
    **kw: Any,
) -> Running:
    argv = [sys.executable, "-m", "panto", *args]
    return Running(argv, env, home / "work", home.parent / "out", **kw)


def run_panto(
    args: Sequence[str],
    env: dict[str, str],
    home: Path,
    *,
    deadline: float,
    rss_limit_mb: float | None = None,
) -> RunResult:
    return start_panto(args, env, home).wait(deadline, rss_limit_mb=rss_limit_mb)


#: The library driver: one turn through ``panto.Agent`` (configured only
#: through ``panto.Config.load()``, i.e. the same environment as the CLI),
#: sync or async; prints one JSON line describing the outcome.
LIBRARY_DRIVER = r"""
import asyncio, json, logging, os, sys, time
import panto

# every record of every logger to stderr, unfiltered by anything but
# panto's own scrubbing (the secrets tests grep stderr for the key)
logging.basicConfig(level=logging.DEBUG, stream=sys.stderr)

mode = sys.argv[1]
cfg = panto.Config.load()
agent = panto.Agent(cfg)
agent.submit_user_message("hello")
out = {"events": [], "error": None, "error_type": None, "text": ""}

def record(ev):
    out["events"].append(type(ev).__name__)
    if type(ev).__name__ == "ContentDelta" and getattr(ev, "kind", "") == "text":
        out["text"] += ev.text

def sync():
    with agent.run() as stream:
        for ev in stream:
            record(ev)

async def run_async():
    stream = agent.run_async()
    async with stream:
        async for ev in stream:
            record(ev)

try:
    if mode == "sync":
        sync()
    else:
        asyncio.run(run_async())
except Exception as e:
    out["error"] = str(e)
    out["error_type"] = type(e).__name__
    out["error_repr"] = repr(e)
out["messages"] = [m.to_dict() for m in agent.conversation]
print(json.dumps(out))
sys.stdout.flush()
"""


def run_library(
    mode: str,
    env: dict[str, str],
    home: Path,
    *,
    deadline: float,
    rss_limit_mb: float | None = None,
) -> tuple[RunResult, dict[str, Any] | None]:
    argv = [sys.executable, "-c", LIBRARY_DRIVER, mode]
    r = Running(argv, env, home / "work", home.parent / "out").wait(
        deadline, rss_limit_mb=rss_limit_mb
    )
    lines = r.json_lines()
    return r, (lines[-1] if lines else None)


def session_files(home: Path) -> list[Path]:
    return sorted(p for p in home.rglob("*.jsonl") if p.is_file())


def session_entries(home: Path) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for p in session_files(home):
        for line in p.read_text(errors="replace").splitlines():
            if line.strip():
                try:
                    out.append(json.loads(line))
                except ValueError:
                    out.append({"type": "<corrupt>", "raw": line})
    return out


def session_messages(home: Path) -> list[dict[str, Any]]:
    """The conversation messages of every session file under ``home``, in
    order (the system prompt the CLI now writes first is left out)."""
    msgs = [e["message"] for e in session_entries(home) if e.get("type") == "message"]
    return [m for m in msgs if m.get("role") != "system"]


def message_text(msg: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in msg.get("content") or [] if b.get("type") == "text")


def find_leaks(marker: str, result: RunResult | None, *roots: Path) -> list[str]:
    """Every place ``marker`` appears: the run's stdout/stderr and every
    file under ``roots`` (searched as bytes, so any encoding of a plain
    ASCII marker is found)."""
    hits = []
    if result is not None:
        if marker in result.stdout:
            hits.append("stdout: " + _context(result.stdout, marker))
        if marker in result.stderr:
            hits.append("stderr: " + _context(result.stderr, marker))
    m = marker.encode()
    for root in roots:
        for p in root.rglob("*"):
            try:
                if p.is_file() and not p.is_symlink() and m in p.read_bytes():
                    hits.append(f"file {p}: " + _context(p.read_text(errors="replace"), marker))
            except OSError:
                continue
    return hits


def _context(text: str, marker: str) -> str:
    i = text.find(marker)
    return repr(text[max(0, i - 80) : i + len(marker) + 40])
