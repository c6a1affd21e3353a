"""Helpers shared by the extension tests (imported by conftest and tests;
named uniquely so it never collides with another directory's conftest)."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import tarfile
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from panto.extensions.rocks.toolchain import LUAROCKS_LAUNCHER

#: the luarocks shipped with panto, as ``panto rocks`` runs it
PANTO_ROCKS = [sys.executable, "-m", "panto", "rocks"]

needs_luarocks = pytest.mark.skipif(
    not LUAROCKS_LAUNCHER.is_file(),
    reason=f"panto's own luarocks ({LUAROCKS_LAUNCHER}) is missing from this checkout",
)


def luarocks_recorder(dir: Path, log: Path) -> Path:
    """An executable for ``$PANTO_LUAROCKS`` that records every invocation
    and runs the luarocks shipped with panto."""
    from panto.extensions.rocks.toolchain import embedded_luarocks_command

    dir.mkdir(parents=True, exist_ok=True)
    shim = dir / "luarocks"
    cmd = " ".join(shlex.quote(a) for a in embedded_luarocks_command())
    shim.write_text(f'#!/bin/sh\necho "$*" >> {shlex.quote(str(log))}\nexec {cmd} "$@"\n')
    shim.chmod(0o755)
    return shim


def path_without(names: tuple[str, ...], dir: Path) -> str:
    """A PATH directory holding links to every executable on this PATH except
    those whose name starts with one of ``names`` (luarocks, lua, gcc, ...)."""
    dir.mkdir(parents=True, exist_ok=True)
    for d in os.environ.get("PATH", "").split(os.pathsep):
        try:
            entries = sorted(os.scandir(d), key=lambda e: e.name)
        except OSError:
            continue
        for e in entries:
            if e.name.startswith(names) or (dir / e.name).exists():
                continue
            if os.access(e.path, os.X_OK) and not e.is_dir():
                (dir / e.name).symlink_to(e.path)
    return str(dir)


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
    """Pack every test rock into ``base/server`` and index it, with the
    luarocks shipped with panto (``panto rocks pack``, ``panto rocks admin
    make-manifest``; their own home, so nothing lands in the tests' tree)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LUAROCKS")}
    env["PANTO_HOME"] = str(base / "packer-home")
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
            [*PANTO_ROCKS, "pack", str(s)],
            cwd=server,
            env=env,
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
        [*PANTO_ROCKS, "admin", "make-manifest", str(server)],
        capture_output=True,
        text=True,
        env=env,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert (server / "manifest-5.4").is_file()
    return RockServer(server, GREET_VERSIONS)
