"""Extension discovery and the two-pass load (seed 002, decision 2-3).

Pass 1 evaluates every source (side-effect free: registration during
evaluation is an error) and collects entries ``{name, activate}`` by name;
a later source shadows an earlier one, the same name twice in one source is
an error.  Pass 2 calls ``activate`` for each permitted entry.

Sources, low to high precedence: base (``panto/lua/extensions`` and
``panto/lua/tools`` in the package), user (``$XDG_CONFIG_HOME/panto``),
project (the nearest ``.panto`` walking up from the working directory, not
above the repository root).  In each layer ``extensions/`` then ``tools/``.

For now the policy is two simple switches: ``no_extensions`` (skip the user
and project layers; the base ``std.*`` tools stay) and ``deny`` (dotted
globs: ``*`` one segment, ``**`` any number).  The layered allow/deny policy
and rocks come later.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ExtensionError
from .runtime import LuaRuntime, LuaScriptError

__all__ = [
    "Source",
    "EntryInfo",
    "LoadReport",
    "discover_sources",
    "load_extensions",
    "glob_match",
    "base_dirs",
    "user_dir",
    "project_dir",
]

_PKG_DIR = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Source:
    path: Path
    layer: str  # "base" | "user" | "project" | "path"
    root: Path  # the extensions/ or tools/ dir it came from


@dataclass
class EntryInfo:
    name: str
    source: Source
    active: bool = False
    shadowed: list[Path] = field(default_factory=list)
    error: str | None = None


@dataclass
class LoadReport:
    entries: dict[str, EntryInfo] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)

    @property
    def active(self) -> list[str]:
        return [n for n, e in self.entries.items() if e.active]

    def raise_for_errors(self) -> None:
        if self.errors:
            raise ExtensionError("; ".join(self.errors))


def glob_match(pattern: str, name: str) -> bool:
    """Dotted glob: ``*`` matches one segment, ``**`` any number (even zero);
    ``*`` inside a segment matches any characters of that segment."""
    import fnmatch

    pat = pattern.split(".")
    segs = name.split(".")

    def m(i: int, j: int) -> bool:
        if i == len(pat):
            return j == len(segs)
        if pat[i] == "**":
            return any(m(i + 1, k) for k in range(j, len(segs) + 1))
        if j == len(segs):
            return False
        return fnmatch.fnmatchcase(segs[j], pat[i]) and m(i + 1, j + 1)

    return m(0, 0)


def base_dirs() -> list[Path]:
    return [_PKG_DIR / "extensions", _PKG_DIR / "tools"]


def user_dir() -> Path:
    cfg = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(cfg) / "panto"


def project_dir(cwd: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest ``.panto`` dir from ``cwd`` upwards, stopping at the repo root
    (a dir holding ``.git``) or the home dir."""
    d = Path(cwd or os.getcwd()).resolve()
    home = Path(os.path.expanduser("~")).resolve()
    while True:
        cand = d / ".panto"
        if cand.is_dir() and cand != user_dir():
            return cand
        if (d / ".git").exists() or d == home or d.parent == d:
            return None
        d = d.parent


def _scan(root: Path, layer: str) -> list[Source]:
    """``*.lua`` files under ``root``; a dir holding ``init.lua`` is one source
    (its other files are modules for ``require``)."""
    if not root.is_dir():
        return []
    out: list[Source] = []

    def walk(d: Path) -> None:
        for p in sorted(d.iterdir()):
            if p.name.startswith("."):
                continue
            if p.is_dir():
                init = p / "init.lua"
                if init.is_file():
                    out.append(Source(init, layer, root))
                else:
                    walk(p)
            elif p.suffix == ".lua" and p.is_file():
                out.append(Source(p, layer, root))

    walk(root)
    return out


def discover_sources(
    *,
    cwd: str | os.PathLike[str] | None = None,
    no_extensions: bool = False,
    include_base: bool = True,
    paths: Sequence[str | os.PathLike[str]] = (),
) -> list[Source]:
    """All candidate sources, lowest precedence first."""
    sources: list[Source] = []
    if include_base:
        for d in base_dirs():
            sources += _scan(d, "base")
    if no_extensions:
        return sources
    for p in paths:
        sources += _scan(Path(p), "path")
    u = user_dir()
    for sub in ("extensions", "tools"):
        sources += _scan(u / sub, "user")
    proj = project_dir(cwd)
    if proj is not None:
        for sub in ("extensions", "tools"):
            sources += _scan(proj / sub, "project")
    return sources


def load_extensions(
    runtime: LuaRuntime,
    *,
    cwd: str | os.PathLike[str] | None = None,
    no_extensions: bool = False,
    deny: Sequence[str] = (),
    config: Mapping[str, Any] | None = None,
    sources: Sequence[Source] | None = None,
    include_base: bool = True,
) -> LoadReport:
    """Discover, evaluate and activate extensions into ``runtime``.

    Errors in one source are collected in the report (``report.errors``);
    the others still load.  ``config`` is the full config mapping: an entry
    named ``a.b`` receives ``config["extensions"]["a.b"]`` (if a table) as
    the argument of ``activate``.
    """
    if sources is None:
        sources = discover_sources(cwd=cwd, no_extensions=no_extensions, include_base=include_base)
    ext_cfg = (config or {}).get("extensions", {}) if config else {}
    return runtime.run(_load(runtime, list(sources), list(deny), ext_cfg))


async def _load(
    runtime: LuaRuntime, sources: list[Source], deny: list[str], ext_cfg: Mapping[str, Any]
) -> LoadReport:
    report = LoadReport()
    activators: dict[str, Any] = {}
    roots: list[Path] = []
    for src in sources:
        if src.root not in roots:
            roots.append(src.root)
    for r in roots:
        runtime.add_lua_path(r)
    # pass 1: evaluate everything
    for src in sources:
        try:
            entries = await runtime.eval_source_async(src.path)
        except (LuaScriptError, ExtensionError) as e:
            report.errors.append(f"{src.path}: {e}" if str(src.path) not in str(e) else str(e))
            continue
        for name, activate in entries:
            prev = report.entries.get(name)
            info = EntryInfo(name, src)
            if prev is not None:
                info.shadowed = [*prev.shadowed, prev.source.path]
            report.entries[name] = info
            activators[name] = activate
    # pass 2: activate the permitted
    for name, info in report.entries.items():
        if any(glob_match(p, name) for p in deny):
            report.denied.append(name)
            continue
        cfg = ext_cfg.get(name) if isinstance(ext_cfg, Mapping) else None
        try:
            await runtime.activate_async(
                name, activators[name], cfg if isinstance(cfg, Mapping) else None
            )
            info.active = True
        except LuaScriptError as e:
            info.error = str(e)
            report.errors.append(f"activating {name} ({info.source.path}): {e}")
    return report
