"""Issue 12 D5 and D7: a background job does not hold a bash result back, and
every process a tool starts dies on the tool's timeout, on cancel, and when
panto exits for any reason (SIGKILL included) -- setsid, nohup and double
forks too.  (The black-box process-tree matrix lives in tests/faults.)"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from panto.lua import LuaToolSource
from panto.lua.procs import MARK, marked_pids
from panto.tools import ToolCall

# the asyncio subprocess transports std.bash used to leave behind warned at
# shutdown ("Event loop is closed"); processes no longer use transports
pytestmark = pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")


def _tag() -> str:
    # a unique sleep duration names this test's processes in /proc
    return f"{random.randint(1000, 9999)}.{random.randint(100000, 999999)}"


def _alive(tag: str) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if tag.encode() in cmd and state != b"Z":
            out.append(int(name))
    return out


def _gone(tag: str, within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not _alive(tag):
            return True
        time.sleep(0.05)
    return False


def _escapers(tag: str) -> str:
    """Processes that leave the bash's process group in every common way."""
    return (
        f"setsid sleep {tag} & "
        f"(setsid sh -c 'sleep {tag} & sleep {tag}' &) ; "
        f"nohup sleep {tag} >/dev/null 2>&1 & "
        f"( ( sleep {tag} & ) & ) ; "
    )


def test_background_job_does_not_hold_the_result(source: LuaToolSource) -> None:
    tag = _tag()
    t0 = time.monotonic()
    out = source.invoke_batch(
        [ToolCall("c", "bash", {"command": f"echo start; sleep {tag} &", "timeout": 60})]
    )[0]
    assert time.monotonic() - t0 < 10
    assert not out.is_error and out.content.strip() == "start", out.content
    # it held our pipe without being detached: stopped with the tool
    assert _gone(tag)


def test_detached_job_runs_on(source: LuaToolSource) -> None:
    tag = _tag()
    t0 = time.monotonic()
    out = source.invoke_batch(
        [ToolCall("c", "bash", {"command": f"sleep {tag} >/dev/null 2>&1 & echo ok"})]
    )[0]
    assert time.monotonic() - t0 < 10
    assert out.content.strip() == "ok"
    try:
        assert _alive(tag)  # detached from the output: it runs on (until panto exits)
    finally:
        for pid in _alive(tag):
            os.kill(pid, signal.SIGKILL)


def test_timeout_kills_every_process(source: LuaToolSource) -> None:
    tag = _tag()
    cmd = _escapers(tag) + f"sleep {tag}"
    out = source.invoke_batch([ToolCall("c", "bash", {"command": cmd, "timeout": 1})])[0]
    assert out.is_error and "timed out" in out.content
    assert _gone(tag), _alive(tag)


def test_cancel_kills_every_process(source: LuaToolSource) -> None:
    tag = _tag()
    cmd = _escapers(tag) + f"sleep {tag}"
    res: list[object] = []
    th = threading.Thread(
        target=lambda: res.extend(
            source.invoke_batch([ToolCall("c", "bash", {"command": cmd, "timeout": 60})])
        )
    )
    th.start()
    deadline = time.monotonic() + 10
    while len(_alive(tag)) < 6 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(_alive(tag)) >= 6
    source.cancel()
    th.join(15)
    assert not th.is_alive()
    assert _gone(tag), _alive(tag)


def test_processes_are_marked(source: LuaToolSource) -> None:
    out = source.invoke_batch([ToolCall("c", "bash", {"command": f"echo ${MARK}"})])[0]
    token = out.content.strip().split()[-1]
    assert token.startswith("p") and "." in token
    assert marked_pids(token) == []  # all gone after the call


HOLDER = """
import signal, sys, threading
signal.signal(signal.SIGHUP, signal.SIG_DFL)  # a test run under nohup would pass SIGHUP on ignored
from panto.lua import LuaRuntime, LuaToolSource, load_extensions
from panto.tools import ToolCall
rt = LuaRuntime()
load_extensions(rt, no_extensions=True)
src = LuaToolSource(rt)
cmd = sys.argv[1]
threading.Thread(
    target=lambda: src.invoke_batch([ToolCall("c", "bash", {"command": cmd, "timeout": 300})]),
    daemon=True,
).start()
print("started", flush=True)
threading.Event().wait()
"""


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM, signal.SIGHUP])
def test_panto_death_kills_every_process(tmp_path: Path, sig: int) -> None:
    tag = _tag()
    cmd = _escapers(tag) + f"sleep {tag} >/dev/null 2>&1 & sleep {tag}"
    p = subprocess.Popen(
        [sys.executable, "-c", HOLDER, cmd],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        cwd=tmp_path,
    )
    try:
        assert p.stdout is not None and p.stdout.readline() == "started\n"
        deadline = time.monotonic() + 15
        while len(_alive(tag)) < 8 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert len(_alive(tag)) >= 8, _alive(tag)
        os.kill(p.pid, sig)
        p.wait(15)
        assert _gone(tag, 10), _alive(tag)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
        for pid in _alive(tag):
            os.kill(pid, signal.SIGKILL)


DETACH_AND_EXIT = """
import sys
from panto.lua import LuaRuntime, LuaToolSource, load_extensions
from panto.tools import ToolCall
rt = LuaRuntime()
load_extensions(rt, no_extensions=True)
out = LuaToolSource(rt).invoke_batch([ToolCall("c", "bash", {"command": sys.argv[1]})])
print(out[0].content.strip(), flush=True)
"""


def test_normal_exit_kills_detached_jobs(tmp_path: Path) -> None:
    """A job the command detached on purpose outlives the tool call, but
    not panto: a normal exit ends it too."""
    tag = _tag()
    cmd = f"nohup sleep {tag} >/dev/null 2>&1 & setsid sleep {tag} >/dev/null 2>&1 & echo ok"
    r = subprocess.run(
        [sys.executable, "-c", DETACH_AND_EXIT, cmd],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    try:
        assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr
        assert _gone(tag, 10), _alive(tag)
    finally:
        for pid in _alive(tag):
            os.kill(pid, signal.SIGKILL)
