"""Extension discovery and the two-pass load (seed 002, ARCHITECTURE §8).

Pass 1 evaluates every candidate -- denied ones included -- side-effect
free (registration during evaluation is an error) and collects the entries
``{name, activate}`` each declares.  :func:`panto.extensions.policy.plan_load`
shadows them by name (project > user > base; within a layer rocks < paths <
dir; the same name twice in one source is an error naming both places) and
decides each winner with the layered ``[extensions]`` allow/deny policy.
Pass 2 calls ``activate`` for the permitted entries, lowest source first.

Sources per layer: the ``rocks`` the layer's config lists (``require``d by
module name from panto's rocks tree), the directories in its ``paths``
(relative ones resolve against the working directory), and its
``extensions/`` and ``tools/`` dirs: base in the package, user in
``$XDG_CONFIG_HOME/panto``, project in the nearest ``.panto`` walking up
from the working directory (not above the repository root) -- only when the
user trusts that project (:mod:`panto.policy.trust`).

Rocks are installed at start-up only when one is missing
(:func:`panto.extensions.rocks.sync`); when everything is present no
luarocks process is spawned.  ``no_extensions`` skips the user and project
layers, ``paths`` and ``rocks`` (the base ``std.*`` tools stay; the policy
still applies).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ExtensionError
from ..logs import get_logger

if TYPE_CHECKING:
    from ..config import Config
    from ..extensions.policy import LoadPlan
    from ..extensions.rocks import SyncReport
    from .runtime import LuaRuntime

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
_log = get_logger("panto.extensions")

#: Layers of the load plan, low to high: the config layers that can list
#: extension sources, and ``cli`` (``--deny``, overrides) on top.
PLAN_LAYERS = ("base", "user", "project", "cli")


@dataclass(frozen=True)
class Source:
    """One candidate: a file (or, for a rock, its module file) and the
    precedence slot it loads at -- ``layer`` (base, user, project, cli) and
    ``kind`` (``rocks`` < ``paths`` < ``dir``)."""

    path: Path
    layer: str  # "base" | "user" | "project" | "cli"
    root: Path  # the extensions/, tools/ or paths dir it came from (a rock: the tree)
    kind: str = "dir"  # "dir" | "paths" | "rocks"
    module: str | None = None  # rocks: the module to require

    @property
    def location(self) -> str:
        if self.kind == "rocks":
            return f"rock:{self.module} ({self.path})"
        return str(self.path)


@dataclass
class EntryInfo:
    """The winning candidate of one name.  ``status`` is the plan's
    (``active``, ``denied``, ``duplicate``, ``failed``...) and ``reason``
    which rule (or shadowing, or error) decided it."""

    name: str
    source: Source
    active: bool = False
    shadowed: list[Path] = field(default_factory=list)
    error: str | None = None
    status: str = ""
    reason: str = ""


@dataclass
class LoadReport:
    entries: dict[str, EntryInfo] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    denied: list[str] = field(default_factory=list)
    #: rocks that could not be installed or loaded (panto carries on)
    warnings: list[str] = field(default_factory=list)
    plan: LoadPlan | None = None
    #: what the start-up rock sync did (None: nothing was missing)
    rocks: SyncReport | None = None

    @property
    def active(self) -> list[str]:
        return [n for n, e in self.entries.items() if e.active]

    def raise_for_errors(self) -> None:
        if self.errors:
            raise ExtensionError("; ".join(self.errors))

    def format(self) -> str:
        """The table ``panto extensions`` and ``/extensions`` print: every
        entry with its source, state and deciding rule, then problems."""
        from ..extensions.policy import format_plan

        out = format_plan(self.plan) if self.plan is not None else "no extension entries\n"
        shown = set(self.plan.errors) if self.plan is not None else set()
        extra = [f"error: {e}" for e in self.errors if e not in shown]
        extra += [f"warning: {w}" for w in self.warnings]
        return out + "".join(line + "\n" for line in extra)


def glob_match(pattern: str, name: str) -> bool:
    """``panto.extensions.policy.match`` (imported when first needed: the
    lazy start-up discovers sources without the policy module)."""
    from ..extensions.policy import match

    return match(pattern, name)


def base_dirs() -> list[Path]:
    return [_PKG_DIR / "extensions", _PKG_DIR / "tools"]


def user_dir() -> Path:
    from ..config import user_config_dir

    return user_config_dir()


def project_dir(
    cwd: str | os.PathLike[str] | None = None, config: Config | None = None
) -> Path | None:
    """The nearest ``.panto`` dir from ``cwd`` upwards, stopping at the repo root
    (a dir holding ``.git``), the home dir or ``/`` -- when the user trusts
    that project (``panto trust``; ``config`` carries the answer), else None:
    an untrusted project's Lua never loads."""
    from ..config import trusted_project_dir

    return trusted_project_dir(cwd, config=config)


def _scan(root: Path, layer: str, kind: str = "dir") -> list[Source]:
    """``*.lua`` files under ``root``; a dir holding ``init.lua`` is one source
    (its other files are modules for ``require``)."""
    try:
        top = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    out: list[Source] = []

    def walk(entries: list[os.DirEntry[str]]) -> None:
        for e in entries:
            if e.name.startswith("."):
                continue
            if e.is_dir():
                init = os.path.join(e.path, "init.lua")
                if os.path.isfile(init):
                    out.append(Source(Path(init), layer, root, kind))
                else:
                    try:
                        walk(sorted(os.scandir(e.path), key=lambda x: x.name))
                    except OSError:
                        continue
            elif e.name.endswith(".lua") and e.is_file():
                out.append(Source(Path(e.path), layer, root, kind))

    walk(top)
    return out


def discover_sources(
    *,
    cwd: str | os.PathLike[str] | None = None,
    no_extensions: bool = False,
    include_base: bool = True,
    paths: Sequence[str | os.PathLike[str]] = (),
    config: Config | None = None,
) -> list[Source]:
    """All file candidates (rocks aside), lowest precedence first: per layer
    its ``paths`` dirs then its ``extensions/`` and ``tools/`` dirs.

    ``paths`` are extra directories at the user layer's ``paths`` slot;
    ``config`` adds every layer's ``extensions.paths`` (relative to ``cwd``).
    """
    by_layer: dict[str, list[tuple[Path, str]]] = {layer: [] for layer in PLAN_LAYERS}
    if include_base:
        by_layer["base"] += [(d, "dir") for d in base_dirs()]
    if not no_extensions:
        if config is not None:
            for layer, d in config.extension_paths(cwd):
                by_layer[layer if layer in by_layer else "cli"].append((d, "paths"))
        for p in paths:
            by_layer["user"].append((Path(p), "paths"))
        u = user_dir()
        by_layer["user"] += [(u / sub, "dir") for sub in ("extensions", "tools")]
        proj = project_dir(cwd, config)
        if proj is not None:
            by_layer["project"] += [(proj / sub, "dir") for sub in ("extensions", "tools")]
    sources: list[Source] = []
    order = {"rocks": 0, "paths": 1, "dir": 2}
    for layer in PLAN_LAYERS:
        for d, kind in sorted(by_layer[layer], key=lambda t: order[t[1]]):
            sources += _scan(d, layer, kind)
    return sources


def load_extensions(
    runtime: LuaRuntime,
    *,
    cwd: str | os.PathLike[str] | None = None,
    no_extensions: bool = False,
    deny: Sequence[str] = (),
    allow: Sequence[str] = (),
    config: Config | None = None,
    sources: Sequence[Source] | None = None,
    include_base: bool = True,
    sync_rocks: bool = True,
) -> LoadReport:
    """Discover, evaluate and activate extensions into ``runtime``.

    ``config`` is the layered :class:`panto.config.Config` (its policy,
    ``paths``, ``rocks``, ``rock_servers`` and per-entry tables
    ``[extensions."a.b"]``, passed to ``activate``); None loads it for
    ``cwd``, unless explicit ``sources`` are given: then nothing is read from
    disk and only ``deny``/``allow`` decide.  ``deny``/``allow`` (e.g.
    ``--deny`` flags) are one more policy layer on top.

    Errors in one source are collected in the report (``report.errors``);
    the others still load.  Rock problems (luarocks missing, no network, a
    failing build) are ``report.warnings``; with ``sync_rocks=False`` a
    missing rock is only reported, never installed.
    """
    from ..extensions.policy import LayerPolicy, Policy

    cfg: Config | None = config
    if cfg is None and sources is None:
        from ..config import Config

        cfg = Config.load(cwd=cwd)
    if cfg is not None:
        policy = cfg.extension_policy(deny=deny, allow=allow)
    else:
        policy = Policy([LayerPolicy("cli", list(allow), list(deny), origin="command line")])
    report = LoadReport()
    rocks: list[Source] = []
    if sources is None:
        assert cfg is not None
        sources = discover_sources(
            cwd=cwd, no_extensions=no_extensions, include_base=include_base, config=cfg
        )
        if not no_extensions and cfg.extension_rocks():
            rocks = _rock_sources(cfg, report, sync_rocks)

    def entry_settings(name: str) -> Mapping[str, Any] | None:
        return cfg.extension_settings(name) if cfg is not None else None

    return runtime.run(
        _load(runtime, rocks + list(sources), policy, report, entry_settings),
        what="loading extensions",
    )


_MODULE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]*")


def _rock_sources(cfg: Config, report: LoadReport, sync_rocks: bool) -> list[Source]:
    """Sync the configured rocks if one is missing, and one source per
    installed rock (its module, required by the rock's name)."""
    from ..extensions import rocks as rk  # (lazy: the tree only, unless one is missing)
    from ..extensions.vers import parse_dep

    listed = cfg.extension_rocks()
    tree = rk.RockTree.default()
    deps = []
    for layer, spec in listed:
        try:
            deps.append((layer if layer in PLAN_LAYERS else "cli", parse_dep(spec)))
        except ValueError as e:
            report.warnings.append(f"bad rock '{spec}': {e}")
    missing = [d for _, d in deps if tree.satisfied(d) is None]
    if missing:
        if sync_rocks:
            specs = list(dict.fromkeys(d.spec for _, d in deps))
            rep = rk.sync(specs, servers=cfg.rock_servers)
            report.rocks = rep
            for msg in rep.messages():
                report.warnings.append(msg)
                _log.warning("%s", msg)
        else:
            for d in missing:
                report.warnings.append(
                    f"rock '{d.spec}' is not installed (`panto bootstrap` installs it)"
                )
    out: list[Source] = []
    share = tree.root / "share" / "lua" / "5.4"
    for layer, d in deps:
        v = tree.satisfied(d)
        if v is None:
            continue
        mod = d.module
        if not _MODULE.fullmatch(mod):
            report.warnings.append(f"rock '{d.spec}': {mod!r} is not a Lua module name")
            continue
        rel = mod.replace(".", "/")
        path = share / f"{rel}.lua"
        if not path.exists() and (share / rel / "init.lua").exists():
            path = share / rel / "init.lua"
        out.append(Source(path, layer, tree.root, "rocks", f"{mod} {v}"))
    return out


async def _eval_rock(runtime: LuaRuntime, src: Source) -> list[tuple[str, Any]]:
    """``require`` a rock's module (side-effect free, like a file) and
    normalize what it returns into entries."""
    assert src.module is not None
    mod = src.module.split(" ", 1)[0]
    return await runtime.eval_module_async(mod, f"rock:{src.module}")


async def _load(
    runtime: LuaRuntime,
    sources: list[Source],
    policy: Any,
    report: LoadReport,
    settings: Any,
) -> LoadReport:
    from ..extensions.policy import Candidate, plan_load
    from ..extensions.policy import Source as Slot
    from .control import LuaInterrupted
    from .runtime import LuaScriptError

    roots: list[Path] = []
    for src in sources:
        if src.kind != "rocks" and src.root not in roots:
            roots.append(src.root)
    for r in roots:
        runtime.add_lua_path(r)
    # pass 1: evaluate everything, denied ones included
    cands: list[Candidate] = []
    for src in sources:
        try:
            if src.kind == "rocks":
                entries = await _eval_rock(runtime, src)
            else:
                entries = await runtime.eval_source_async(src.path)
        except (LuaScriptError, ExtensionError) as e:
            where = src.location
            report.errors.append(str(e) if str(src.path) in str(e) else f"{where}: {e}")
            continue
        layer = src.layer if src.layer in PLAN_LAYERS else "user"  # legacy "path"
        kind = "paths" if src.layer == "path" else src.kind
        slot = Slot(layer, kind)
        for name, activate in entries:
            loc = f"rock:{src.module}" if src.kind == "rocks" else str(src.path)
            cands.append(Candidate(name, slot, loc, (activate, src)))
    # shadow by name, decide with the policy
    plan = plan_load(cands, policy, layers=PLAN_LAYERS)
    report.plan = plan
    report.errors.extend(plan.errors)
    shadowed: dict[str, list[Path]] = {}
    for pe in plan.entries:
        if pe.status == "shadowed":
            shadowed.setdefault(pe.name, []).append(pe.candidate.entry[1].path)
    for pe in plan.entries:
        if pe.status == "shadowed" or pe.name in report.entries:
            continue
        src = pe.candidate.entry[1]
        report.entries[pe.name] = EntryInfo(
            pe.name, src, False, shadowed.get(pe.name, []), None, pe.status, pe.reason()
        )
        if pe.status == "denied":
            report.denied.append(pe.name)
    # pass 2: activate the permitted, lowest source first
    for c in plan.to_activate:
        activate, src = c.entry
        info = report.entries[c.name]
        try:
            await runtime.activate_async(c.name, activate, settings(c.name), origin=src.location)
            info.active = True
        except (LuaScriptError, LuaInterrupted) as e:
            info.error = str(e)
            info.status = "failed"
            info.reason = f"activate failed: {e}"
            for pe in plan.entries:
                if pe.candidate is c:
                    pe.status = "failed"
                    pe.message = info.reason
            report.errors.append(f"activating {c.name} ({src.location}): {e}")
    return report
