"""Rocks: ``extensions.rocks`` and the batteries manifest, installed by luarocks.

Layout (seed 000 Q3, ARCHITECTURE §8)::

    $PANTO_HOME/                      $PANTO_HOME or $XDG_DATA_HOME/panto
      rocks/lua-5.4.8/                the luarocks tree (--tree) and Lua prefix (--lua-dir)
        bin/lua5.4                    shell wrapper: exec <python> -m panto lua "$@"
        include/                      Lua 5.4.8 headers (copied from vendor/lua-include)
        share/lua/5.4/  lib/lua/5.4/  installed modules
        lib/luarocks/rocks-5.4/NAME/VERSION/rock_manifest   what is installed
        luarocks-config.lua           servers + isolation (LUAROCKS_CONFIG)
        panto-batteries.json          what `panto bootstrap` installed

Startup calls :func:`sync`: it reads the tree's directories and returns at
once, without spawning anything, when every rock is present.  Otherwise it
runs luarocks for the missing ones only: the copy shipped in ``vendor/``
(LuaRocks 3.8.0, run by ``panto lua``), or ``$PANTO_LUAROCKS``.  Nothing
here raises for an environment problem: every outcome -- luarocks missing,
no compiler, no headers, no network, a failing build -- is a
:class:`RockResult` with a clear ``message``, and the caller keeps going.

Modules: ``tree`` (the layout), ``toolchain`` (luarocks, compiler, headers),
``luarocks`` (results and the :class:`Rocks` runner), ``sync`` (start-up sync
and update), ``bootstrap`` (the batteries manifest), ``fetch`` (a ``curl``
stand-in for machines with neither curl nor wget).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...paths import LUA_VERSION, panto_home

if TYPE_CHECKING:
    from .bootstrap import BatteriesManifest, BootstrapReport, bootstrap, load_manifest
    from .luarocks import RockError, RockResult, Rocks, SyncReport
    from .sync import missing, sync, update
    from .toolchain import (
        Toolchain,
        check_toolchain,
        default_lua_command,
        find_cc,
        find_lua_headers,
        find_luarocks,
    )
    from .tree import LUA_SHORT, NESTED_ENV, RockTree

#: public name -> submodule (imported on first use, PEP 562: a start-up whose
#: rocks are all installed needs ``tree`` only, not the luarocks runner)
_LAZY = {
    "BatteriesManifest": "bootstrap",
    "BootstrapReport": "bootstrap",
    "bootstrap": "bootstrap",
    "load_manifest": "bootstrap",
    "RockError": "luarocks",
    "RockResult": "luarocks",
    "Rocks": "luarocks",
    "SyncReport": "luarocks",
    "missing": "sync",
    "sync": "sync",
    "update": "sync",
    "Toolchain": "toolchain",
    "check_toolchain": "toolchain",
    "default_lua_command": "toolchain",
    "find_cc": "toolchain",
    "find_lua_headers": "toolchain",
    "find_luarocks": "toolchain",
    "LUA_SHORT": "tree",
    "NESTED_ENV": "tree",
    "RockTree": "tree",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib
    import sys

    importlib.import_module(f".{mod}", __name__)
    # bind the names of every submodule loaded by now: importing ``.sync``
    # (also from ``.bootstrap``) binds the submodule as this package's
    # ``sync``, which must stay the function, as the eager imports had it
    # (a name already bound to something else -- a test's monkeypatch -- stays)
    g = globals()
    for n, m in _LAZY.items():
        sub = sys.modules.get(f"{__name__}.{m}")
        if sub is not None and (n not in g or isinstance(g[n], type(sys))):
            g[n] = getattr(sub, n)
    return g[name]


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


__all__ = [
    "LUA_SHORT",
    "LUA_VERSION",
    "NESTED_ENV",
    "BatteriesManifest",
    "BootstrapReport",
    "RockError",
    "RockResult",
    "RockTree",
    "Rocks",
    "SyncReport",
    "Toolchain",
    "bootstrap",
    "check_toolchain",
    "default_lua_command",
    "find_cc",
    "find_lua_headers",
    "find_luarocks",
    "load_manifest",
    "missing",
    "panto_home",
    "sync",
    "update",
]
