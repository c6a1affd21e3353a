"""Issue 12 D4: Lua code that never yields is interrupted by timeouts, cancel
and Ctrl-C (a count hook), at load time too, with an error naming the
extension; the runtime stays usable afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from panto.lua import LuaRuntime, LuaToolSource, load_extensions
from panto.lua.loader import Source
from panto.tools import ToolCall

SPIN = """
return {
  name = "ext.spin",
  activate = function()
    panto.ext.register_tool{name = "spin", timeout = 0.3, handler = function()
      while true do end
    end}
    -- pcall cannot swallow the interrupt
    panto.ext.register_tool{name = "stubborn", timeout = 0.3, handler = function()
      while true do pcall(function() while true do end end) end
    end}
    -- nor can a user coroutine or a spawned task
    panto.ext.register_tool{name = "in_coroutine", timeout = 0.3, handler = function()
      local co = coroutine.wrap(function() while true do end end)
      co()
    end}
    panto.ext.register_tool{name = "in_task", timeout = 0.3, handler = function()
      local t = panto.spawn(function() while true do end end)
      t:wait()
    end}
    panto.ext.register_tool{name = "spin_forever", handler = function()
      while true do end
    end}
    -- no Lua runs while it sleeps: the asyncio deadline ends it, not the hook
    panto.ext.register_tool{name = "napper", timeout = 0.3, handler = function()
      panto.time.sleep(30000)  -- ms
    end}
    panto.ext.register_tool{name = "ok", handler = function() return "fine" end}
  end,
}
"""


def _source(path: Path, layer: str = "user") -> Source:
    return Source(path, layer, path.parent, "dir")


@pytest.fixture(scope="module")
def spin_rt(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LuaRuntime]:
    d = tmp_path_factory.mktemp("spin")
    (d / "spin.lua").write_text(SPIN)
    rt = LuaRuntime()
    report = load_extensions(rt, sources=[_source(d / "spin.lua")])
    assert not report.errors, report.errors
    yield rt
    rt.close()


def _call(src: LuaToolSource, name: str) -> tuple[float, str, bool]:
    t0 = time.monotonic()
    out = src.invoke_batch([ToolCall("c", name, {})])[0]
    return time.monotonic() - t0, out.content, out.is_error


@pytest.mark.parametrize("tool", ["spin", "stubborn", "in_coroutine", "in_task", "napper"])
def test_timeout_interrupts_a_busy_loop(spin_rt: LuaRuntime, tool: str) -> None:
    src = LuaToolSource(spin_rt)
    dt, content, is_error = _call(src, tool)
    assert is_error and "timed out after 0.3 s" in content, content
    assert "ext.spin" in content  # names the extension
    assert dt < 10, dt
    # the runtime is not wedged: the next call answers
    assert _call(src, "ok")[1:] == ("fine", False)


def test_cancel_interrupts_a_busy_loop(spin_rt: LuaRuntime) -> None:
    src = LuaToolSource(spin_rt)
    out: list[object] = []
    th = threading.Thread(
        target=lambda: out.extend(src.invoke_batch([ToolCall("c", "spin_forever", {})]))
    )
    th.start()
    time.sleep(0.3)
    assert th.is_alive()
    src.cancel()
    th.join(10)
    assert not th.is_alive()
    assert out and out[0].is_error and "cancelled" in out[0].content  # type: ignore[attr-defined]
    assert _call(src, "ok")[1:] == ("fine", False)


def test_hook_busy_loop_times_out_and_blocks(tmp_path: Path) -> None:
    (tmp_path / "h.lua").write_text(
        'return {name = "ext.hook", activate = function()\n'
        '  panto.ext.on("before_tool_call", function() while true do end end)\n'
        "end}\n"
    )
    with LuaRuntime() as rt:
        rt.hook_timeout = 0.3
        assert not load_extensions(rt, sources=[_source(tmp_path / "h.lua")]).errors
        d = LuaToolSource(rt).hooks.before_tool_call(ToolCall("c", "bash", {}))
        assert d.blocked
        assert "ext.hook" in d.reason and "timed out after 0.3 s" in d.reason, d.reason


@pytest.mark.parametrize(
    "code, needle",
    [
        ("while true do end", "extension source"),
        ('return {name = "ext.act", activate = function() while true do end end}', "ext.act"),
    ],
)
def test_load_time_busy_loop(tmp_path: Path, code: str, needle: str) -> None:
    (tmp_path / "bad.lua").write_text(code)
    (tmp_path / "good.lua").write_text(
        'return {name = "ext.good", activate = function()\n'
        '  panto.ext.register_tool{name = "good", handler = function() return "yes" end}\n'
        "end}\n"
    )
    with LuaRuntime() as rt:
        rt.load_timeout = 0.3
        t0 = time.monotonic()
        report = load_extensions(
            rt, sources=[_source(tmp_path / "bad.lua"), _source(tmp_path / "good.lua")]
        )
        assert time.monotonic() - t0 < 10
        assert len(report.errors) == 1, report.errors
        err = report.errors[0]
        assert needle in err and "timed out after 0.3 s" in err and "bad.lua" in err, err
        assert "good" in [d.name for d in rt.decls()]
        assert _call(LuaToolSource(rt), "good")[1:] == ("yes", False)


HANG_AT_LOAD = """
import sys
from pathlib import Path
from panto.lua import LuaRuntime, load_extensions
from panto.lua.loader import Source
p = Path(sys.argv[1])
rt = LuaRuntime()
rt.load_timeout = None
print("loading", flush=True)
try:
    load_extensions(rt, sources=[Source(p, "user", p.parent, "dir")])
except KeyboardInterrupt:
    print("interrupted", flush=True)
    # the runtime is usable again
    print(rt.execute("return 1 + 1")[0], flush=True)
    rt.close()
    sys.exit(130)
sys.exit(0)
"""


def test_ctrl_c_interrupts_load(tmp_path: Path) -> None:
    (tmp_path / "spin.lua").write_text("while true do end")
    p = subprocess.Popen(
        [sys.executable, "-c", HANG_AT_LOAD, str(tmp_path / "spin.lua")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert p.stdout is not None
        assert p.stdout.readline() == "loading\n"
        time.sleep(0.5)
        os.kill(p.pid, signal.SIGINT)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 130, (out, err)
    assert out == "interrupted\n2\n", (out, err)
