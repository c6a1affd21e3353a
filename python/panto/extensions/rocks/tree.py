"""The rock tree: ``$PANTO_HOME/rocks/lua-5.4.8`` (a luarocks tree, also
the ``--lua-dir`` prefix), and the names the other rock modules share."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from ...paths import LUA_VERSION, panto_home
from ..vers import Dependency

LUA_SHORT = "5.4"

ErrorKind = Literal[
    "bad-spec",
    "luarocks-missing",
    "network",
    "not-found",
    "no-compiler",
    "no-headers",
    "build-failed",
    "timeout",
    "failed",
]
Action = Literal["present", "installed", "reinstalled", "removed", "kept", "failed"]

Progress = Callable[[str], None]

#: Set in luarocks' environment: a panto started by it (``bin/lua5.4`` ->
#: ``panto lua``) skips installing, so a sync never recurses.
NESTED_ENV = "PANTO_ROCKS_NESTED"


# --------------------------------------------------------------------------
# the tree


@dataclass(unsafe_hash=True)
class RockTree:
    """``$PANTO_HOME/rocks/lua-5.4.8``: a luarocks tree, also the ``--lua-dir``."""

    root: Path

    def __post_init__(self) -> None:
        self.root = Path(self.root)

    @classmethod
    def default(cls, home: Path | None = None) -> RockTree:
        return cls((home or panto_home()) / "rocks" / f"lua-{LUA_VERSION}")

    @property
    def rocks_dir(self) -> Path:
        return self.root / "lib" / "luarocks" / f"rocks-{LUA_SHORT}"

    @property
    def lua_wrapper(self) -> Path:
        return self.root / "bin" / f"lua{LUA_SHORT}"

    @property
    def include_dir(self) -> Path:
        return self.root / "include"

    @property
    def config_file(self) -> Path:
        return self.root / "luarocks-config.lua"

    @property
    def state_file(self) -> Path:
        return self.root / "panto-batteries.json"

    @property
    def lua_path(self) -> str:
        """What ``package.path`` needs to find the tree's Lua modules."""
        share = self.root / "share" / "lua" / LUA_SHORT
        return f"{share}/?.lua;{share}/?/init.lua"

    @property
    def lua_cpath(self) -> str:
        """What ``package.cpath`` needs to find the tree's C modules."""
        return f"{self.root / 'lib' / 'lua' / LUA_SHORT}/?.so"

    def installed_versions(self, name: str) -> list[str]:
        """Versions of ``name`` fully installed (their ``rock_manifest`` exists)."""
        try:
            it = os.scandir(self.rocks_dir / name)
        except OSError:
            return []
        with it:
            return sorted(
                e.name
                for e in it
                if e.is_dir() and os.path.exists(os.path.join(e.path, "rock_manifest"))
            )

    def installed(self) -> dict[str, list[str]]:
        try:
            names = [e.name for e in os.scandir(self.rocks_dir) if e.is_dir()]
        except OSError:
            return {}
        out = {n: self.installed_versions(n) for n in sorted(names)}
        return {n: v for n, v in out.items() if v}

    def satisfied(self, dep: Dependency) -> str | None:
        """An installed version that satisfies ``dep`` (None: the rock is missing)."""
        for v in reversed(self.installed_versions(dep.name)):
            if dep.matches(v):
                return v
        return None
