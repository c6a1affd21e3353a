"""Start-up sync and ``panto update``: install what is missing (spawning
nothing when everything is present) or reinstall everything."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ...paths import panto_home
from ..vers import Dependency, parse_dep
from .luarocks import RockError, RockResult, Rocks, SyncReport
from .tree import NESTED_ENV, Progress, RockTree

# --------------------------------------------------------------------------
# sync / update


def parse_all(specs: Iterable[str]) -> tuple[list[Dependency], list[RockResult]]:
    deps: list[Dependency] = []
    bad: list[RockResult] = []
    for spec in specs:
        try:
            deps.append(parse_dep(spec))
        except ValueError as e:
            s = spec if isinstance(spec, str) else repr(spec)
            bad.append(
                RockResult(s, s, "failed", error=RockError("bad-spec", f"bad rock '{s}': {e}"))
            )
    return deps, bad


def missing(specs: Iterable[str | Dependency], tree: RockTree | None = None) -> list[Dependency]:
    """The rocks with no installed version satisfying them (reads directories only).

    An exact pin is missing when that version is absent; a range or a bare
    name when no installed version matches it.
    """
    tree = tree or RockTree.default()
    deps = [s if isinstance(s, Dependency) else parse_dep(s) for s in specs]
    return [d for d in deps if tree.satisfied(d) is None]


def sync(
    specs: Iterable[str],
    *,
    servers: Sequence[str] = (),
    home: Path | None = None,
    force: bool = False,
    luarocks: str | None = None,
    lua_command: Sequence[str] | None = None,
    env: Mapping[str, str] | None = None,
    progress: Progress | None = None,
    timeout: float = 900.0,
) -> SyncReport:
    """Install the rocks in ``specs`` (luarocks dependency strings) that are missing.

    With ``force`` (``panto update``) every rock is re-resolved and
    reinstalled.  Without it, when everything is present this only reads
    directories -- luarocks is never spawned.  Never raises for a failing
    rock: see :attr:`SyncReport.results`.
    """
    env = dict(os.environ if env is None else env)
    tree = RockTree.default(home or panto_home(env))
    deps, results = parse_all(specs)
    todo: list[Dependency] = []
    for d in deps:
        have = None if force else tree.satisfied(d)
        if have is None:
            todo.append(d)
        else:
            results.append(RockResult(d.spec, d.name, "present", have))
    report = SyncReport(results)
    if not todo:
        return report
    if env.get(NESTED_ENV):
        for d in todo:
            msg = f"'{d.spec}' is not installed (not installing from inside luarocks)"
            report.results.append(
                RockResult(d.spec, d.name, "failed", error=RockError("failed", msg))
            )
        return report
    rocks = Rocks(
        tree,
        servers=servers,
        luarocks=luarocks,
        lua_command=lua_command,
        env=env,
        progress=progress,
        timeout=timeout,
    )
    done: set[str] = set()
    for d in todo:
        have = None if force else tree.satisfied(d)  # an earlier install may satisfy it
        if have is not None or d.spec in done:
            report.results.append(RockResult(d.spec, d.name, "present", have or tree.satisfied(d)))
            continue
        done.add(d.spec)
        report.results.append(rocks.install(d, force=force))
    report.spawned = rocks.spawned
    return report


def update(specs: Iterable[str], **kwargs: object) -> SyncReport:
    """``panto update``: re-resolve and reinstall every rock."""
    return sync(specs, force=True, **kwargs)  # type: ignore[arg-type]
