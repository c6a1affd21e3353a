"""Rocks end to end with the luarocks shipped with panto against a local rock
server (built by conftest with `panto rocks pack` + `panto rocks admin
make-manifest`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.extensions import RockServer, needs_luarocks, path_without

from panto.extensions import rocks
from panto.extensions.rocks import Rocks, RockTree, find_cc, panto_home, sync, update
from panto.extensions.vers import latest, parse_dep

pytestmark = needs_luarocks


def tree() -> RockTree:
    return RockTree.default()


def sync_(specs: list[str], server: RockServer | str, lua_command: list[str] | None, **kw: object):
    srv = str(server.path) if isinstance(server, RockServer) else server
    return sync(specs, servers=[srv], lua_command=lua_command, **kw)  # type: ignore[arg-type]


def test_panto_home_and_tree_layout(isolated_home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = isolated_home / "xdg_data_home"
    assert panto_home() == data / "panto"
    assert tree().root == data / "panto" / "rocks" / "lua-5.4.8"
    monkeypatch.setenv("PANTO_HOME", "/opt/ph")
    assert tree().root == Path("/opt/ph/rocks/lua-5.4.8")
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.delenv("PANTO_HOME")
    assert panto_home() == isolated_home / ".local" / "share" / "panto"


def test_prefix_wrapper_and_headers(lua_command: list[str] | None) -> None:
    r = Rocks(servers=["/x"], lua_command=lua_command)
    r.prepare()
    w = tree().lua_wrapper
    assert w.is_file() and os.access(w, os.X_OK)
    text = w.read_text()
    # luarocks skips interpreters whose first 1000 bytes mention this (FACTS.md)
    assert "LUAROCKS_SYSCONFDIR" not in text
    if lua_command is None:
        assert f"{sys.executable}" in text and "-m panto lua" in text
    out = subprocess.run(
        [str(w), "-e", "io.write(_VERSION:sub(5))"], capture_output=True, text=True
    )
    assert out.stdout == "5.4", out.stderr
    assert (tree().include_dir / "lua.h").is_file()
    lua_h = (tree().include_dir / "lua.h").read_text()
    assert re.search(r"#define\s+LUA_VERSION_NUM\s+504", lua_h)
    # the headers shipped with panto (lupa's Lua 5.4.8), not a system copy
    assert re.search(r'#define\s+LUA_VERSION_RELEASE\s+"8"', lua_h)
    assert "vendor/lua-include" in (tree().include_dir / "SOURCE").read_text()
    cfg = tree().config_file.read_text()
    assert "rocks_servers = { [[/x]] }" in cfg and 'deps_mode = "one"' in cfg


def test_pure_lua_rock_installs_and_second_start_spawns_no_luarocks(
    rock_server: RockServer,
    lua_command: list[str] | None,
    luarocks_log: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    shim_dir, log = luarocks_log
    monkeypatch.setenv("PANTO_LUAROCKS", str(shim_dir / "luarocks"))
    specs = ["greet 1.0-1", "cmod"]
    rep = sync_(specs, rock_server, lua_command)
    assert rep.ok, rep.messages()
    assert [(r.name, r.action, r.version) for r in rep.results] == [
        ("greet", "installed", "1.0-1"),
        ("cmod", "installed", "0.1-1"),
    ]
    assert rep.spawned >= 2 and log.read_text().count("\n") == rep.spawned
    share = tree().root / "share" / "lua" / "5.4"
    assert "greet.hello" in (share / "greet.lua").read_text()
    assert (tree().root / "lib" / "lua" / "5.4" / "cmod.so").is_file()
    assert tree().installed() == {"cmod": ["0.1-1"], "greet": ["1.0-1"]}

    # a second start: everything present -> no luarocks process at all
    before = log.read_text()
    rep2 = sync_(specs, rock_server, lua_command)
    assert rep2.ok and rep2.spawned == 0
    assert [r.action for r in rep2.results] == ["present", "present"]
    assert log.read_text() == before

    # a range already satisfied by what is installed: still nothing spawned
    rep3 = sync_(["greet >= 1.0, < 2", "cmod ~> 0.1"], rock_server, lua_command)
    assert rep3.spawned == 0 and log.read_text() == before


def test_exact_pin_without_revision_takes_the_highest_revision(
    rock_server: RockServer, lua_command: list[str] | None
) -> None:
    rep = sync_(["greet 1.0"], rock_server, lua_command)
    assert rep.ok, rep.messages()
    assert rep.results[0].version == "1.0-2"
    # an installed 1.0-2 satisfies `greet 1.0` and `greet 1.0-2`, not `greet 1.0-1`
    assert rocks.missing(["greet 1.0", "greet 1.0-2"]) == []
    assert [d.spec for d in rocks.missing(["greet 1.0-1", "greet 1.1"])] == [
        "greet 1.0-1",
        "greet 1.1",
    ]


def test_update_reinstalls_and_upgrades_ranges(
    rock_server: RockServer, lua_command: list[str] | None
) -> None:
    rep = sync_(["greet 1.0-1"], rock_server, lua_command)
    assert rep.ok
    mod = tree().root / "share" / "lua" / "5.4" / "greet.lua"
    mod.write_text("-- clobbered\n")
    up = update(["greet 1.0-1"], servers=[str(rock_server.path)], lua_command=lua_command)
    assert up.ok, up.messages()
    assert up.results[0].action == "reinstalled" and up.spawned >= 1
    assert "greet.hello" in mod.read_text()  # really reinstalled
    # a range: startup keeps the installed 1.0-1 (it satisfies ~> 1) ...
    assert sync_(["greet ~> 1"], rock_server, lua_command).spawned == 0
    # ... update re-resolves it to the newest match
    up = update(["greet ~> 1"], servers=[str(rock_server.path)], lua_command=lua_command)
    assert up.ok and up.results[0].version == "1.2-1"
    assert tree().installed_versions("greet") == ["1.2-1"]


def _luarocks_pick(server: Path, spec: str, work: Path, lua_command: list[str] | None) -> str:
    """What luarocks itself installs for `spec` as a dependency of a probe rock."""
    probe = work / "probe-1.0-1.rockspec"
    probe.write_text(
        'package = "probe"\nversion = "1.0-1"\nsource = { url = "file:///nonexistent.tar.gz" }\n'
        f'dependencies = {{ [[{spec}]] }}\nbuild = {{ type = "none" }}\n'
    )
    r = Rocks(RockTree(work / "tree"), servers=[str(server)], lua_command=lua_command)
    run = r.run("install", "--only-deps", str(probe))
    assert run.rc == 0, run.output
    (version,) = r.tree.installed_versions("greet")
    return version


@pytest.mark.parametrize(
    "spec",
    ["greet", "greet ~> 1.0", "greet ~> 1", "greet >= 1.0, < 1.2", "greet > 1.0-1, <= 1.1",
     "greet ~= 2.1rc1", "greet < 2.1", "greet 1.0", "greet == 1.1.5"],
)  # fmt: skip
def test_constraint_resolution_picks_what_luarocks_picks(
    spec: str, rock_server: RockServer, lua_command: list[str] | None, tmp_path: Path
) -> None:
    dep = parse_dep(spec)
    ours = latest(rock_server.greet_versions, dep.constraints)
    assert ours is not None
    assert _luarocks_pick(rock_server.path, spec, tmp_path, lua_command) == ours


def test_a_rock_listed_twice_is_installed_once(
    rock_server: RockServer, lua_command: list[str] | None
) -> None:
    rep = sync_(["greet 1.1-1", "greet ~> 1", "greet 1.1-1"], rock_server, lua_command)
    assert rep.ok, rep.messages()
    assert [(r.action, r.version) for r in rep.results] == [
        ("installed", "1.1-1"),
        ("present", "1.1-1"),
        ("present", "1.1-1"),
    ]


def test_resolve_searches_the_server_and_installs_the_pick(
    rock_server: RockServer, lua_command: list[str] | None
) -> None:
    r = Rocks(servers=[str(rock_server.path)], lua_command=lua_command)
    versions, err = r.search(parse_dep("greet"))
    assert err is None and sorted(set(versions)) == sorted(rock_server.greet_versions)
    rep = sync_(["greet >= 1.0, < 1.2"], rock_server, lua_command)
    assert rep.ok and rep.results[0].version == "1.1.5-1"
    rep = sync_(["greet > 9"], rock_server, lua_command)
    assert not rep.ok and rep.results[0].error is not None
    assert rep.results[0].error.kind == "not-found"
    assert "satisfies 'greet > 9'" in rep.results[0].message


# -- failure modes: a clear message, the other rocks still install ------------


def test_no_system_luarocks_nor_compiler_pure_lua_still_installs(
    rock_server: RockServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A machine without luarocks, lua or a C compiler on PATH: the pure-Lua
    rock installs with the luarocks shipped with panto; the C rock says what
    is missing."""
    bare = path_without(("luarocks", "lua", "gcc", "cc", "clang", "tcc", "make"), tmp_path / "bin")
    monkeypatch.setenv("PATH", bare)
    for k in [k for k in os.environ if k.startswith("LUAROCKS")]:
        monkeypatch.delenv(k)
    assert shutil.which("luarocks") is None and shutil.which("gcc") is None
    rep = sync_(["greet 1.0-1", "cmod"], rock_server, None)
    gr, cm = rep.results
    assert gr.ok and gr.action == "installed" and gr.version == "1.0-1", gr.message
    assert cm.error is not None and cm.error.kind == "no-compiler", cm.message
    assert "no C compiler (cc/gcc not found)" in cm.message
    assert tree().installed() == {"greet": ["1.0-1"]}


def test_luarocks_missing(
    rock_server: RockServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PANTO_LUAROCKS", str(tmp_path / "no-such-luarocks"))
    rep = sync_(["greet 1.0-1", "cmod"], rock_server, None)
    assert not rep.ok and rep.spawned == 0
    assert {r.error.kind for r in rep.errors} == {"luarocks-missing"}  # type: ignore[union-attr]
    assert rep.results[0].message.startswith(
        "luarocks not found: $PANTO_LUAROCKS names no executable (unset it to use the "
        "luarocks shipped with panto)"
    )
    # still fine when nothing is missing: startup never needs luarocks then
    assert sync([], servers=[]).ok
    # the shipped copy gone (a broken install): the message says so
    monkeypatch.delenv("PANTO_LUAROCKS")
    monkeypatch.setattr(rocks.toolchain, "LUAROCKS_LAUNCHER", tmp_path / "gone" / "launch.lua")
    (r,) = sync_(["greet 1.0-1"], rock_server, None).results
    assert r.error is not None and r.error.kind == "luarocks-missing"
    assert "panto's own copy" in r.message and "reinstall panto" in r.message


def test_no_c_compiler(
    rock_server: RockServer, lua_command: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CC", "/nonexistent/cc")
    rep = sync_(["cmod 0.1-1", "greet 1.1-1"], rock_server, lua_command)
    cm, gr = rep.results
    assert cm.error is not None and cm.error.kind == "no-compiler", cm.message
    assert "no C compiler" in cm.message and "CC=/nonexistent/cc" in cm.message
    assert gr.ok and gr.action == "installed"  # the pure-Lua rock does not care


def test_find_cc_without_any_compiler(tmp_path: Path) -> None:
    assert find_cc({"PATH": str(tmp_path)}) == (None, None)
    cc, path = find_cc({"PATH": "/usr/bin:/bin"})
    assert cc in ("gcc", "cc", "clang") and path


def test_no_lua_headers(
    rock_server: RockServer, lua_command: list[str] | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(rocks.toolchain, "HEADER_DIRS", ())
    rep = sync_(["cmod 0.1-1"], rock_server, lua_command)
    (cm,) = rep.results
    assert cm.error is not None and cm.error.kind == "no-headers", cm.message
    assert "no Lua 5.4 headers: panto's own copy" in cm.message
    assert "set PANTO_LUA_INCDIR, or apt-get install liblua5.4-dev" in cm.message


@pytest.mark.parametrize("server", ["absent-dir", "http://127.0.0.1:9/"])
def test_no_network_on_first_install(
    server: str, tmp_path: Path, lua_command: list[str] | None
) -> None:
    srv = str(tmp_path / "no-such-server") if server == "absent-dir" else server
    rep = sync_(["greet 1.0-1", "greet ~> 1"], srv, lua_command)
    assert len(rep.errors) == 2
    for r in rep.errors:
        assert r.error is not None and r.error.kind == "network", r.message
        assert "could not reach" in r.message and "no network?" in r.message


def test_rock_that_fails_to_build_shows_luarocks_output(
    rock_server: RockServer, lua_command: list[str] | None
) -> None:
    rep = sync_(["broken", "greet 1.0-1"], rock_server, lua_command)
    br, gr = rep.results
    assert br.error is not None and br.error.kind == "build-failed", br.message
    assert "rock 'broken 1.0-1' failed to build" in br.message
    assert "Failed compiling" in br.message  # luarocks' own last lines
    assert "broken.c" in br.error.output
    assert gr.ok
    assert tree().installed_versions("broken") == []


def test_no_nested_install_from_a_panto_that_luarocks_started(
    monkeypatch: pytest.MonkeyPatch, lua_command: list[str] | None
) -> None:
    monkeypatch.setenv(rocks.NESTED_ENV, "1")
    rep = sync(["greet 1.0-1"], servers=["/nowhere"], lua_command=lua_command)
    assert rep.spawned == 0 and not rep.ok
    assert "not installing from inside luarocks" in rep.results[0].message
    assert rocks.NESTED_ENV in Rocks()._env()


def test_bad_spec_is_reported_without_spawning(lua_command: list[str] | None) -> None:
    rep = sync(["greet >> 1", "x => 2"], lua_command=lua_command)
    assert rep.spawned == 0
    assert [r.error.kind for r in rep.errors] == ["bad-spec", "bad-spec"]  # type: ignore[union-attr]
    assert "bad rock 'greet >> 1'" in rep.results[0].message


# -- the installed rock, used by panto's Lua runtime (when it exists) ---------


def test_installed_rocks_load_in_the_lua_runtime(
    rock_server: RockServer, lua_command: list[str] | None
) -> None:
    rep = sync_(["greet 1.1-1", "cmod 0.1-1"], rock_server, lua_command)
    assert rep.ok, rep.messages()
    from panto.lua.runtime import LuaRuntime

    with LuaRuntime() as rt:
        res = rt.execute(
            'local e = require("greet"); local c = require("cmod")\n'
            "e[1].activate()\n"
            "return e[1].name, e[1].version, c.add(40, 2), GREET_ACTIVATED"
        )
    assert list(res) == ["greet.hello", "1.1-1", 42, 1]


def test_lua_paths_for_the_runtime() -> None:
    t = tree()
    assert t.lua_path.endswith("share/lua/5.4/?.lua;" + str(t.root) + "/share/lua/5.4/?/init.lua")
    assert t.lua_cpath == f"{t.root}/lib/lua/5.4/?.so"


def test_shim_records(luarocks_log: tuple[Path, Path]) -> None:
    shim_dir, log = luarocks_log
    r = subprocess.run([str(shim_dir / "luarocks"), "--version"], capture_output=True, text=True)
    assert r.returncode == 0 and "3.8.0" in r.stdout, r.stderr
    assert log.read_text() == "--version\n"
