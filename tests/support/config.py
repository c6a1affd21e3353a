"""Helpers shared by the config tests (named uniquely: no conftest clash)."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def ext(name: str, probe: str | None = None, tool: str | None = None) -> str:
    """A Lua source declaring entry ``name``.  Evaluating it counts in
    ``_G.EVALS[probe]``; activating it sets ``_G.ACTIVATED[probe]`` (and
    registers ``tool`` if given)."""
    probe = probe or name
    reg = ""
    if tool:
        reg = (
            f'panto.ext.register_tool{{name = "{tool}", handler = function() return "{probe}" end}}'
        )
    return f"""\
_G.EVALS = _G.EVALS or {{}}
_G.EVALS["{probe}"] = (_G.EVALS["{probe}"] or 0) + 1
return {{
  name = "{name}",
  activate = function(cfg)
    _G.ACTIVATED = _G.ACTIVATED or {{}}
    _G.ACTIVATED["{probe}"] = cfg.greeting or true
    {reg}
  end,
}}
"""


def fake_rock(data_home: Path, name: str, version: str, lua: str) -> Path:
    """Lay out an installed rock in ``$XDG_DATA_HOME/panto/rocks/lua-5.4.8``
    the way luarocks leaves it (rock_manifest + module file)."""
    tree = data_home / "panto" / "rocks" / "lua-5.4.8"
    meta = tree / "lib" / "luarocks" / "rocks-5.4" / name / version
    meta.mkdir(parents=True)
    (meta / "rock_manifest").write_text("rock_manifest = {}\n")
    share = tree / "share" / "lua" / "5.4"
    share.mkdir(parents=True, exist_ok=True)
    (share / f"{name}.lua").write_text(lua)
    return tree


def luarocks_shim(dir: Path, log: Path, *, exit_code: int = 1) -> Path:
    """A ``luarocks`` on PATH that records every invocation and fails."""
    dir.mkdir(parents=True, exist_ok=True)
    shim = dir / "luarocks"
    shim.write_text(
        f'#!/bin/sh\necho "$*" >> "{log}"\necho "shim: no network" >&2\nexit {exit_code}\n'
    )
    shim.chmod(0o755)
    return shim
