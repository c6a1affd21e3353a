"""Helpers shared by the extension tests (imported by conftest and tests;
named uniquely so it never collides with another directory's conftest)."""

from __future__ import annotations

import shutil
import subprocess
import tarfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

LUAROCKS = shutil.which("luarocks")
LUAROCKS_ADMIN = shutil.which("luarocks-admin")

needs_luarocks = pytest.mark.skipif(
    LUAROCKS is None or LUAROCKS_ADMIN is None,
    reason="luarocks is not installed (apt-get install luarocks liblua5.4-dev): "
    "the rocks end-to-end tests need it; CI installs it",
)


# --------------------------------------------------------------------------
# the local rock server

GREET_VERSIONS = ("0.9-1", "1.0-1", "1.0-2", "1.1-1", "1.1.5-1", "1.2-1", "2.0-1", "2.1rc1-1")

GREET_LUA = """\
-- a rock whose module returns extension entries (seed 002)
return {
  { name = "greet.hello", version = "%(version)s",
    activate = function() _G.GREET_ACTIVATED = (_G.GREET_ACTIVATED or 0) + 1 end },
  { name = "greet.bye", version = "%(version)s", activate = function() end },
}
"""

CMOD_C = """\
#include "lua.h"
#include "lauxlib.h"

static int add(lua_State *L) {
  lua_pushinteger(L, luaL_checkinteger(L, 1) + luaL_checkinteger(L, 2));
  return 1;
}

int luaopen_cmod(lua_State *L) {
  lua_newtable(L);
  lua_pushcfunction(L, add);
  lua_setfield(L, -2, "add");
  return 1;
}
"""

BROKEN_C = """\
#include "lua.h"
int luaopen_broken(lua_State *L) { this is not C; }
"""


@dataclass
class RockServer:
    path: Path
    greet_versions: tuple[str, ...]


def _rock(
    work: Path, name: str, version: str, files: dict[str, str], modules: dict[str, str]
) -> Path:
    upstream = version.rsplit("-", 1)[0]
    src = work / f"{name}-{upstream}"
    src.mkdir(parents=True, exist_ok=True)
    for fname, text in files.items():
        (src / fname).write_text(text)
    tgz = work / f"{name}-{version}.tar.gz"
    with tarfile.open(tgz, "w:gz") as tf:
        tf.add(src, arcname=src.name)
    mods = ", ".join(f'["{m}"] = "{f}"' for m, f in modules.items())
    spec = work / f"{name}-{version}.rockspec"
    spec.write_text(
        textwrap.dedent(
            f"""\
            package = "{name}"
            version = "{version}"
            source = {{ url = "file://{tgz}", dir = "{src.name}" }}
            description = {{ summary = "a test rock for panto" }}
            dependencies = {{ "lua >= 5.1" }}
            build = {{ type = "builtin", modules = {{ {mods} }} }}
            """
        )
    )
    return spec


def build_rock_server(base: Path) -> RockServer:
    """Pack every test rock into ``base/server`` and index it."""
    assert LUAROCKS is not None and LUAROCKS_ADMIN is not None
    server = base / "server"
    server.mkdir()
    specs: list[Path] = []
    for v in GREET_VERSIONS:
        w = base / f"greet-{v}"
        specs.append(
            _rock(w, "greet", v, {"greet.lua": GREET_LUA % {"version": v}}, {"greet": "greet.lua"})
        )
    specs.append(_rock(base / "cmod", "cmod", "0.1-1", {"cmod.c": CMOD_C}, {"cmod": "cmod.c"}))
    specs.append(
        _rock(base / "broken", "broken", "1.0-1", {"broken.c": BROKEN_C}, {"broken": "broken.c"})
    )
    procs = [
        subprocess.Popen(
            [LUAROCKS, "--lua-version", "5.4", "pack", str(s)],
            cwd=server,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for s in specs
    ]
    for p, s in zip(procs, specs):
        out, _ = p.communicate(timeout=120)
        assert p.returncode == 0, f"luarocks pack {s.name} failed:\n{out}"
    r = subprocess.run(
        [LUAROCKS_ADMIN, "make-manifest", str(server)], capture_output=True, text=True
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert (server / "manifest-5.4").is_file()
    return RockServer(server, GREET_VERSIONS)
