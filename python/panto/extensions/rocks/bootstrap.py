"""The batteries manifest and ``panto bootstrap``."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...paths import LUA_VERSION, panto_home
from .luarocks import RockResult, Rocks, SyncReport, write_if_changed
from .sync import parse_all, sync
from .toolchain import Toolchain, check_toolchain
from .tree import Progress, RockTree

# --------------------------------------------------------------------------
# the batteries manifest and `panto bootstrap`

MANIFEST_PATH = Path(__file__).resolve().parent.parent / "batteries.toml"
_EXACT = re.compile(r"[A-Za-z0-9][A-Za-z0-9._]*-[0-9]+|scm-[0-9]+|dev-[0-9]+")


@dataclass(unsafe_hash=True)
class BatteriesManifest:
    """The rocks one panto release pins (seed 000 Q5): name -> version-revision."""

    lua_version: str
    rocks: Mapping[str, str]
    path: str = ""

    def specs(self) -> list[str]:
        return [f"{n} == {v}" for n, v in self.rocks.items()]


def load_manifest(path: Path | str | None = None) -> BatteriesManifest:
    """Read and validate a batteries manifest (default: the one shipped)."""
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef, import-not-found, unused-ignore]
    from ...errors import ConfigError

    p = Path(path) if path is not None else MANIFEST_PATH
    try:
        data = tomllib.loads(p.read_text())
    except (OSError, ValueError) as e:
        raise ConfigError(f"{p}: cannot read the batteries manifest: {e}") from None
    unknown = set(data) - {"lua_version", "rocks"}
    if unknown:
        raise ConfigError(f"{p}: unknown key(s) {sorted(unknown)}: expected lua_version, rocks")
    lua_version = data.get("lua_version", LUA_VERSION)
    if not isinstance(lua_version, str):
        raise ConfigError(f"{p}: lua_version: expected a string such as '{LUA_VERSION}'")
    rocks = data.get("rocks", {})
    if not isinstance(rocks, dict):
        raise ConfigError(f"{p}: rocks: expected a table of name = 'version-revision'")
    for name, version in rocks.items():
        if not isinstance(version, str) or not _EXACT.fullmatch(version):
            raise ConfigError(
                f"{p}: rocks.{name}: expected an exact 'version-revision' such as '1.51.0-1', "
                f"got {version!r}"
            )
    return BatteriesManifest(lua_version, dict(rocks), str(p))


@dataclass(unsafe_hash=True)
class BootstrapReport:
    """The toolchain found, the batteries and rocks synced, what was removed."""

    toolchain: Toolchain
    batteries: SyncReport
    rocks: SyncReport
    removed: list[RockResult] | None = None
    lua_mismatch: str | None = None
    removal_spawned: int = 0

    def __post_init__(self) -> None:
        self.removed = self.removed if self.removed is not None else []

    @property
    def ok(self) -> bool:
        return (
            self.batteries.ok
            and self.rocks.ok
            and all(r.ok for r in self.removed)
            and self.lua_mismatch is None
        )

    @property
    def spawned(self) -> int:
        return self.batteries.spawned + self.rocks.spawned + self.removal_spawned


def _read_state(tree: RockTree) -> dict[str, str]:
    import json

    try:
        data = json.loads(tree.state_file.read_text())
        rocks = data.get("installed", {})
        return {str(k): str(v) for k, v in rocks.items()} if isinstance(rocks, dict) else {}
    except (OSError, ValueError, AttributeError):
        return {}


def _write_state(tree: RockTree, installed: Mapping[str, str]) -> None:
    import json

    tree.root.mkdir(parents=True, exist_ok=True)
    write_if_changed(
        tree.state_file,
        json.dumps({"installed": dict(sorted(installed.items()))}, indent=2) + "\n",
    )


def bootstrap(
    specs: Iterable[str] = (),
    *,
    manifest: BatteriesManifest | None = None,
    servers: Sequence[str] = (),
    home: Path | None = None,
    luarocks: str | None = None,
    lua_command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    toolchain: Toolchain | None = None,
) -> BootstrapReport:
    """``panto bootstrap``: check the toolchain, reconcile the batteries
    manifest (install missing pins, remove versions a previous bootstrap
    installed that the manifest no longer pins), then install missing
    ``extensions.rocks``.  ``toolchain``: an earlier :func:`check_toolchain`."""
    specs = list(specs)
    env = dict(os.environ if env is None else env)
    say = progress or (lambda _m: None)
    manifest = manifest or load_manifest()
    tree = RockTree.default(home or panto_home(env))
    tc = toolchain or check_toolchain(env)
    if luarocks is not None:
        tc.luarocks = luarocks
    kw: dict[str, object] = {
        "servers": servers,
        "home": home,
        "luarocks": luarocks,
        "lua_command": lua_command,
        "env": env,
        "progress": progress,
    }
    mismatch = None
    if manifest.lua_version != LUA_VERSION:
        mismatch = (
            f"{manifest.path}: the manifest pins Lua {manifest.lua_version} but panto "
            f"runs Lua {LUA_VERSION}; batteries were not installed"
        )
        batteries = SyncReport()
    else:
        say(f"batteries: {len(manifest.rocks)} pinned in {manifest.path}")
        batteries = sync(manifest.specs(), **kw)  # type: ignore[arg-type]

    # record what bootstrap owns, then drop what the manifest no longer pins
    state = _read_state(tree)
    for r in batteries.results:
        if r.ok and r.version:
            state[r.name] = r.version
    user_deps, _ = parse_all(specs)
    removed: list[RockResult] = []
    spawned = 0
    if mismatch is None:
        remover: Rocks | None = None
        for name, version in sorted(state.items()):
            if manifest.rocks.get(name) == version:
                continue
            if version not in tree.installed_versions(name):
                del state[name]  # already gone (luarocks replaced it)
                continue
            if any(d.name == name and d.matches(version) for d in user_deps):
                del state[name]  # extensions.rocks wants it: no longer bootstrap's
                continue
            if remover is None:
                remover = Rocks(
                    tree,
                    servers=servers,
                    luarocks=luarocks,
                    lua_command=lua_command,
                    env=env,
                    progress=progress,
                )
            res = remover.remove(name, version)
            removed.append(res)
            if res.ok:
                del state[name]
        spawned = remover.spawned if remover is not None else 0
    if state or tree.state_file.exists():
        _write_state(tree, state)

    say(f"rocks: {len(user_deps)} in extensions.rocks")
    user = sync(specs, **kw)  # type: ignore[arg-type]
    return BootstrapReport(tc, batteries, user, removed, mismatch, spawned)
