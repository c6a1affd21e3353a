"""What it must show, item 4: cancelling a turn kills the whole process group."""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

from panto.lua import LuaRuntime, LuaToolSource
from panto.tools import ToolCall


def _pids_with_marker(marker: str) -> list[int]:
    """Processes whose command line contains ``marker`` (from /proc)."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            cmd = (
                Path(f"/proc/{d}/cmdline")
                .read_bytes()
                .replace(b"\0", b" ")
                .decode(errors="replace")
            )
            state = Path(f"/proc/{d}/stat").read_text().split(") ", 1)[1].split()[0]
        except OSError:
            continue
        if marker in cmd and state != "Z":
            out.append(int(d))
    return out


def _pgid_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


def test_cancel_bash_kills_group(runtime: LuaRuntime, tmp_path: Path) -> None:
    marker = f"panto-cancel-{os.getpid()}-{time.monotonic_ns()}"
    pidfile = tmp_path / "pids"
    # a foreground sleep, a background job that spawns children, and a
    # subshell: everything in the command's process group
    cmd = (
        f"(sleep 100 & sleep 101 & wait) & echo $$ > {pidfile}; "
        f"bash -c 'sleep 102; echo {marker}' & "
        f"sleep 100; echo {marker} never"
    )
    # the marker must be on the command lines of the children: use exec -a
    cmd = cmd.replace("sleep 10", f"exec -a {marker} sleep 10")
    cmd = (
        cmd.replace("(exec -a", "(bash -c 'exec -a")
        .replace("100 & exec", "100' & bash -c 'exec")
        .replace("101 & wait)", "101' & wait)")
    )
    src = LuaToolSource(runtime)
    result: list[object] = []
    th = threading.Thread(
        target=lambda: result.extend(src.invoke_batch([ToolCall("b", "bash", {"command": cmd})]))
    )
    th.start()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and len(_pids_with_marker(marker)) < 3:
        time.sleep(0.05)
    before = _pids_with_marker(marker)
    assert len(before) >= 3, before
    pgid = int(pidfile.read_text())
    assert all(os.getpgid(p) == pgid for p in before)
    t0 = time.monotonic()
    src.cancel()
    th.join(10)
    assert not th.is_alive()
    assert time.monotonic() - t0 < 3.0
    assert len(result) == 1 and result[0].is_error  # type: ignore[attr-defined]
    assert "cancelled" in result[0].content  # type: ignore[attr-defined]
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and (_pids_with_marker(marker) or _pgid_alive(pgid)):
        time.sleep(0.05)
    assert _pids_with_marker(marker) == []
    assert not _pgid_alive(pgid)


def test_cancel_runs_close_handlers(runtime: LuaRuntime) -> None:
    runtime.execute(r"""
      panto.ext.register_tool{name = "guarded", handler = function()
        local g <close> = setmetatable({}, {__close = function() GUARD_CLOSED = (GUARD_CLOSED or 0) + 1 end})
        panto.time.sleep(60000)
      end}
    """)
    src = LuaToolSource(runtime)
    out: list[object] = []
    th = threading.Thread(
        target=lambda: out.extend(
            src.invoke_batch([ToolCall("a", "guarded", {}), ToolCall("b", "guarded", {})])
        )
    )
    th.start()
    time.sleep(0.3)
    src.cancel()
    th.join(5)
    assert not th.is_alive()
    assert [o.content for o in out] == ["cancelled", "cancelled"]  # type: ignore[attr-defined]
    assert runtime.eval("GUARD_CLOSED") == 2


def test_spawn_timeout_kills_group(runtime: LuaRuntime) -> None:
    t0 = time.monotonic()
    res = runtime.execute(r"""
      return panto.process.spawn{shell = "sleep 30 & sleep 31; echo done", timeout = 0.3}
    """)[0]
    assert res["timed_out"] is True
    assert res["signal"] in (signal.SIGTERM, signal.SIGKILL)
    assert time.monotonic() - t0 < 3
