"""The runtime: paths, C modules, json, blocked calls, entries, discovery,
config, hooks, commands, threads."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from support.trust import trust_project

from panto.config import Config
from panto.lua import LuaRuntime, LuaScriptError, LuaToolSource, load_extensions
from panto.lua.loader import Source, discover_sources, glob_match
from panto.tools import ToolCall

PY = str(Path(__file__).resolve().parents[2] / "python")


def test_paths_set_outright(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LUA_PATH", "/leak/?.lua;;")
    monkeypatch.setenv("LUA_PATH_5_4", "/leak54/?.lua;;")
    monkeypatch.setenv("LUA_CPATH", "/leakc/?.so;;")
    rt = LuaRuntime()
    try:
        assert "leak" not in rt.package_path and "leak" not in rt.package_cpath
        assert "/usr/local" not in rt.package_path
        assert "rocks/lua-5.4.8/share/lua/5.4/?.lua" in rt.package_path
    finally:
        rt.close()


@pytest.mark.skipif(
    not Path("/usr/include/lua5.4/lua.h").exists() or not shutil.which("cc"),
    reason="needs cc and the Lua 5.4 headers",
)
def test_c_module_loads(fresh_runtime: LuaRuntime, tmp_path: Path) -> None:
    c = tmp_path / "cmod.c"
    c.write_text(r"""
      #include <lua.h>
      #include <lauxlib.h>
      static int twice(lua_State *L) { lua_pushinteger(L, 2 * luaL_checkinteger(L, 1)); return 1; }
      int luaopen_cmod(lua_State *L) {
        lua_newtable(L); lua_pushcfunction(L, twice); lua_setfield(L, -2, "twice"); return 1;
      }
    """)
    so = tmp_path / "cmod.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-I/usr/include/lua5.4", "-o", str(so), str(c)], check=True
    )
    res = fresh_runtime.execute(
        f"package.cpath = {str(tmp_path)!r} .. '/?.so;' .. package.cpath "
        "return require('cmod').twice(21)"
    )
    assert res == [42]


@pytest.mark.skipif(
    not Path("/usr/include/lua5.4/lua.h").exists() or not shutil.which("cc"),
    reason="needs cc and the Lua 5.4 headers",
)
def test_c_module_loads_in_a_fresh_process(tmp_path: Path) -> None:
    """The runtime loads lupa's Lua library RTLD_GLOBAL when it is the first
    to import it (no ctypes at start-up): C modules still link against it."""
    c = tmp_path / "cmod.c"
    c.write_text(r"""
      #include <lua.h>
      #include <lauxlib.h>
      static int twice(lua_State *L) { lua_pushinteger(L, 2 * luaL_checkinteger(L, 1)); return 1; }
      int luaopen_cmod(lua_State *L) {
        lua_newtable(L); lua_pushcfunction(L, twice); lua_setfield(L, -2, "twice"); return 1;
      }
    """)
    so = tmp_path / "cmod.so"
    subprocess.run(
        ["cc", "-shared", "-fPIC", "-I/usr/include/lua5.4", "-o", str(so), str(c)], check=True
    )
    code = (
        "import sys\n"
        "from panto.lua import LuaRuntime\n"
        "rt = LuaRuntime()\n"
        f"print(rt.execute(\"package.cpath = {str(tmp_path)!r} .. '/?.so;' .. package.cpath "
        "return require('cmod').twice(21)\"))\n"
        "print('ctypes' in sys.modules)\n"
        "rt.close()\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONPATH": PY},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["[42]", "False"]


def test_json_roundtrip(fresh_runtime: LuaRuntime) -> None:
    rt = fresh_runtime
    assert rt.eval("panto.json.encode({})") == "{}"
    assert rt.eval("panto.json.encode(panto.json.array())") == "[]"
    assert rt.eval("panto.json.encode({1, 2, 'x'})") == '[1,2,"x"]'
    assert rt.eval("panto.json.encode({a = {b = true}, n = 1.5})") == '{"a":{"b":true},"n":1.5}'
    assert rt.eval(r"panto.json.encode('q\"\n\1')") == r'"q\"\n\u0001"'
    # decoded empties keep their kind
    assert rt.eval('panto.json.encode(panto.json.decode(\'{"a":[],"b":{},"c":null}\'))') == (
        '{"a":[],"b":{},"c":null}'
    )
    assert rt.eval("panto.json.decode('[1, null, 3]')[2] == panto.json.null") is True
    with pytest.raises(LuaScriptError, match="JSONDecodeError"):
        rt.execute("panto.json.decode('{bad')")


def test_blocking_calls_replaced(fresh_runtime: LuaRuntime) -> None:
    for code in ("os.execute('true')", "io.popen('ls')", "os.exit(1)"):
        with pytest.raises(LuaScriptError, match="not available"):
            fresh_runtime.execute(code)
    with pytest.raises(LuaScriptError, match="panto.process.spawn"):
        fresh_runtime.execute("os.execute('true')")


def test_no_python_global(fresh_runtime: LuaRuntime) -> None:
    assert fresh_runtime.eval("python") is None


def test_yield_outside_coroutine_is_clear(fresh_runtime: LuaRuntime) -> None:
    with pytest.raises(LuaScriptError, match="must run inside a coroutine"):
        fresh_runtime.execute(
            "table.sort({3, 2, 1}, function(a, b) panto.time.sleep(1) return a < b end)"
        )


def _write(p: Path, text: str) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


def test_eval_must_not_register(fresh_runtime: LuaRuntime, tmp_path: Path) -> None:
    bad = _write(
        tmp_path / "ext" / "bad.lua",
        """
      panto.ext.register_tool{name = "sneaky", handler = function() end}
      return {name = "bad.one", activate = function() end}
    """,
    )
    report = load_extensions(fresh_runtime, sources=[Source(bad, "user", bad.parent)])
    assert "sneaky" not in fresh_runtime.tools
    assert len(report.errors) == 1
    assert "called while evaluating" in report.errors[0]
    assert "register inside activate()" in report.errors[0]


def test_entries_sugar_list_and_shadowing(fresh_runtime: LuaRuntime, tmp_path: Path) -> None:
    base = tmp_path / "base"
    user = tmp_path / "user"
    a = _write(
        base / "multi.lua",
        """
      return {
        {name = "demo.one", activate = function() panto.ext.register_tool{name = "one", handler = function() return "base one" end} end},
        {name = "demo.two", activate = function(cfg) panto.ext.register_tool{name = "two", handler = function() return "two " .. tostring(cfg.greeting) end} end},
      }
    """,
    )
    sugar = _write(
        base / "sugar.lua",
        """
      return {name = "shout", description = "upper", handler = function(input) return input.text:upper() end}
    """,
    )
    override = _write(
        user / "one.lua",
        """
      return {name = "demo.one", activate = function() panto.ext.register_tool{name = "one", handler = function() return "user one" end} end}
    """,
    )
    dup = _write(
        user / "dup.lua",
        """
      return {{name = "x.y", activate = function() end}, {name = "x.y", activate = function() end}}
    """,
    )
    report = load_extensions(
        fresh_runtime,
        sources=[
            Source(a, "base", base),
            Source(sugar, "base", base),
            Source(override, "user", user),
            Source(dup, "user", user),
        ],
        config=Config(data={"extensions": {"demo.two": {"greeting": "hi"}}}),
    )
    assert sorted(report.active) == ["demo.one", "demo.two", "shout"]
    assert report.entries["demo.one"].shadowed == [a]
    assert any("appears twice" in e for e in report.errors)
    src = LuaToolSource(fresh_runtime)
    out = src.invoke_batch(
        [
            ToolCall("1", "one", {}),
            ToolCall("2", "two", {}),
            ToolCall("3", "shout", {"text": "hey"}),
        ]
    )
    assert [o.content for o in out] == ["user one", "two hi", "HEY"]


def test_deny_and_discovery(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = tmp_path / "cfg"
    proj = tmp_path / "proj"
    (proj / ".git").mkdir(parents=True)
    _write(
        cfg / "panto" / "extensions" / "u.lua",
        'return {name = "user.ext", activate = function() '
        'panto.ext.register_tool{name = "u", handler = function() return "u" end} end}',
    )
    _write(
        proj / ".panto" / "tools" / "p.lua",
        'return {name = "p", handler = function() return "p" end}',
    )
    sub = proj / "src" / "deep"
    sub.mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(cfg))
    trust_project(proj)  # a project's Lua loads once trusted
    layers = [s.layer for s in discover_sources(cwd=sub)]
    assert layers.count("base") == 7 and "user" in layers and "project" in layers
    assert [s.layer for s in discover_sources(cwd=sub, no_extensions=True)] == ["base"] * 7
    rt = LuaRuntime()
    try:
        report = load_extensions(rt, cwd=sub, deny=["std.bash", "user.*"])
        assert sorted(report.active) == [
            "p",
            "std.edit",
            "std.find",
            "std.grep",
            "std.ls",
            "std.read",
            "std.write",
        ]
        assert sorted(report.denied) == ["std.bash", "user.ext"]
        assert sorted(rt.tools) == ["edit", "find", "grep", "ls", "p", "read", "write"]
    finally:
        rt.close()


def test_glob_match() -> None:
    assert glob_match("std.*", "std.read") and not glob_match("std.*", "std.a.b")
    assert glob_match("**", "a.b.c") and glob_match("a.**", "a") and glob_match("**.c", "a.b.c")
    assert not glob_match("b.*", "a.b")


def test_config_read_only(fresh_runtime: LuaRuntime) -> None:
    fresh_runtime.set_config({"model": "m", "tools": {"timeout": 5}, "list": [1, 2]})
    assert fresh_runtime.eval("panto.config.tools.timeout") == 5
    assert fresh_runtime.eval("#panto.config.list") == 2
    with pytest.raises(LuaScriptError, match="read-only"):
        fresh_runtime.execute("panto.config.model = 'x'")
    with pytest.raises(LuaScriptError, match="read-only"):
        fresh_runtime.execute("panto.config.tools.timeout = 1")
    keys = fresh_runtime.execute(
        "local k = {} for key in pairs(panto.config) do k[#k+1] = key end table.sort(k) return k"
    )
    assert keys == [["list", "model", "tools"]]


def test_hooks(fresh_runtime: LuaRuntime) -> None:
    rt = fresh_runtime
    rt.execute(r"""
      panto.ext.register_tool{name = "echo", handler = function(input) return input.text end}
      panto.ext.on("before_tool_call", function(call)
        if call.input.text == "forbidden" then return {block = true, reason = "not allowed"} end
        if call.input.text == "rewrite" then return {input = {text = "rewritten"}} end
      end)
      panto.ext.on("after_tool_call", function(r)
        if r.content == "rewritten" then return {content = r.content .. "!", is_error = false} end
      end)
      panto.ext.on("user_message", function(m) SEEN = m.text; return m.text .. " (hooked)" end)
      panto.ext.on("before_compact", function() panto.time.sleep(1) return "custom compaction prompt" end)
      panto.ext.on("turn_end", function(info) TURNS = (TURNS or 0) + 1; LAST_STOP = info.stop_reason end)
      panto.ext.on("session_start", function(info) SESSION = info.session_id end)
    """)
    src = LuaToolSource(rt)
    h = src.hooks
    d = h.before_tool_call(ToolCall("1", "echo", {"text": "forbidden"}))
    assert d.blocked and d.reason == "not allowed"
    assert d.output().is_error and "not allowed" in d.output().content
    d = h.before_tool_call(ToolCall("2", "echo", {"text": "rewrite"}))
    assert not d.blocked and d.call.input == {"text": "rewritten"}
    out = src.invoke_batch([d.call])[0]
    assert h.after_tool_call(d.call, out).content == "rewritten!"
    assert h.user_message("hello") == "hello (hooked)"
    assert rt.eval("SEEN") == "hello"
    assert h.before_compact({"prompt": "default"}) == "custom compaction prompt"
    h.turn_end({"stop_reason": "stop"})
    h.session_start({"session_id": "s1"})
    assert rt.execute("return TURNS, LAST_STOP, SESSION") == [1, "stop", "s1"]
    with pytest.raises(LuaScriptError, match="unknown event"):
        rt.execute("panto.ext.on('nope', function() end)")


def test_before_tool_call_fails_closed(fresh_runtime: LuaRuntime) -> None:
    fresh_runtime.execute("panto.ext.on('before_tool_call', function() error('hook broke') end)")
    d = LuaToolSource(fresh_runtime).hooks.before_tool_call(ToolCall("1", "x", {}))
    assert d.blocked and "hook broke" in d.reason


def test_commands(fresh_runtime: LuaRuntime) -> None:
    fresh_runtime.execute(r"""
      panto.ext.register_command{name = "greet", description = "say hi", handler = function(args)
        panto.time.sleep(1)
        return "hi " .. args
      end}
    """)
    src = LuaToolSource(fresh_runtime)
    assert src.commands() == {"greet": "say hi"}
    assert src.run_command("/greet", "bob") == "hi bob"


def test_invalid_tool_name(fresh_runtime: LuaRuntime) -> None:
    with pytest.raises(LuaScriptError, match="invalid tool name"):
        fresh_runtime.execute(
            "panto.ext.register_tool{name = 'std.read', handler = function() end}"
        )


def test_thread_safety(fresh_runtime: LuaRuntime) -> None:
    fresh_runtime.execute(r"""
      N = 0
      panto.ext.register_tool{name = "inc", handler = function(input)
        panto.time.sleep(1)
        N = N + 1
        return tostring(input.i)
      end}
    """)
    src = LuaToolSource(fresh_runtime)
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        try:
            for j in range(20):
                calls = [ToolCall(f"{k}-{j}-{i}", "inc", {"i": i}) for i in range(5)]
                out = src.invoke_batch(calls)
                assert [o.content for o in out] == [str(i) for i in range(5)]
        except BaseException as e:  # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert fresh_runtime.eval("N") == 8 * 20 * 5


def test_process_exits_without_close() -> None:
    """The runtime thread is a daemon: a script that never closes it exits."""
    code = (
        f"import sys; sys.path.insert(0, {PY!r})\n"
        "from panto.lua import get_runtime, LuaToolSource\n"
        "rt = get_runtime()\n"
        "print(rt.eval('1 + 1'))\n"
    )
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=20)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "2"
    assert time.monotonic() - t0 < 10


def test_close_kills_running_processes(tmp_path: Path) -> None:
    rt = LuaRuntime()
    pidfile = tmp_path / "pid"
    fut = rt.submit(
        rt.execute_async(
            f"return panto.process.spawn{{shell = 'echo $$ > {pidfile}; exec sleep 60'}}"
        )
    )
    deadline = time.monotonic() + 5
    while not pidfile.exists() or not pidfile.read_text().strip():
        assert time.monotonic() < deadline
        time.sleep(0.02)
    pid = int(pidfile.read_text())
    rt.close()
    assert fut.done()
    time.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
