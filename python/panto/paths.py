"""Where panto keeps things on disk: one home for every directory rule.

XDG Base Directory rules: a relative ``$XDG_*`` value is ignored (the spec
says such values are invalid), as is an empty one.  ``PANTO_HOME`` overrides
the data directory outright.  Every function takes an optional environment
mapping so callers (config layers, tests) can resolve paths for an
environment other than the process's own.

Files that hold a conversation or a secret are only the user's: created
0600 (:func:`open_private`) in directories created 0700
(:func:`private_dirs`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

__all__ = [
    "LUA_VERSION",
    "home_dir",
    "xdg_config_home",
    "xdg_data_home",
    "xdg_cache_home",
    "panto_home",
    "user_config_dir",
    "sessions_dir",
    "rocks_tree",
    "private_dirs",
    "open_private",
]

#: The Lua inside ``lupa.lua54``: the ABI that rocks are built for.
LUA_VERSION = "5.4.8"


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$HOME``, else the password database's home."""
    return Path(_env(env).get("HOME") or os.path.expanduser("~"))


def _xdg(name: str, fallback: str, env: Mapping[str, str] | None) -> Path:
    value = _env(env).get(name)
    if value and os.path.isabs(value):
        return Path(value)
    return home_dir(env) / fallback


def xdg_config_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME`` when absolute, else ``~/.config``."""
    return _xdg("XDG_CONFIG_HOME", ".config", env)


def xdg_data_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_DATA_HOME`` when absolute, else ``~/.local/share``."""
    return _xdg("XDG_DATA_HOME", os.path.join(".local", "share"), env)


def xdg_cache_home(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CACHE_HOME`` when absolute, else ``~/.cache``."""
    return _xdg("XDG_CACHE_HOME", ".cache", env)


def panto_home(env: Mapping[str, str] | None = None) -> Path:
    """``$PANTO_HOME``, else ``$XDG_DATA_HOME/panto``: sessions and rocks live here."""
    explicit = _env(env).get("PANTO_HOME")
    if explicit:
        return Path(explicit)
    return xdg_data_home(env) / "panto"


def user_config_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$XDG_CONFIG_HOME/panto``: the user layer's ``config.toml``,
    ``extensions/``, ``tools/`` and ``AGENTS.md``."""
    return xdg_config_home(env) / "panto"


def sessions_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$PANTO_HOME/sessions``: the default root of the JSONL session store."""
    return panto_home(env) / "sessions"


def rocks_tree(env: Mapping[str, str] | None = None) -> Path:
    """``$PANTO_HOME/rocks/lua-5.4.8``: the luarocks tree for this Lua version."""
    return panto_home(env) / "rocks" / f"lua-{LUA_VERSION}"


def private_dirs(path: str | os.PathLike[str]) -> Path:
    """``mkdir -p path``, every directory it creates mode 0700 (only the
    user can list or enter it); existing ones are left as they are."""
    p = Path(path)
    missing: list[Path] = []
    while not p.is_dir():
        missing.append(p)
        if p.parent == p:
            break
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass
    return Path(path)


def open_private(path: str | os.PathLike[str], flags: int) -> int:
    """``os.open`` creating the file mode 0600 (``flags`` gain ``O_CREAT``
    and ``O_CLOEXEC``); an existing file keeps its mode."""
    return os.open(path, flags | os.O_CREAT | os.O_CLOEXEC, 0o600)
