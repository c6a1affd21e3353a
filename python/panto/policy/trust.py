"""Folder trust: which project directories the user has agreed to.

A project is the directory holding a ``.panto/`` (its *root*).  Until the
user trusts it, panto ignores what in ``.panto/config.toml`` could redirect
traffic or credentials, run code or loosen permissions (the table
:data:`panto.config.schema.TRUST_KEYS`), and loads no Lua from
``.panto/extensions/`` or ``.panto/tools/``.  ``AGENTS.md`` is text and is
always read.

The store is ``$XDG_CONFIG_HOME/panto/trusted.json`` (mode 0600), keyed by
the root's resolved path (symlinks followed)::

    {"version": 1, "projects": {"/home/me/src/app": {"trusted": true, "at": "2026-..."}}}

``"trusted": false`` records a "no" to the REPL's question, so it asks once.
Trust covers the project's subdirectories (they use the same ``.panto/``);
a nested ``.panto/`` is a project of its own.  ``PANTO_TRUST_ALL=1`` trusts
every project (CI, containers, embedders that vetted the checkout).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from ..paths import open_private, private_dirs, user_config_dir

__all__ = [
    "TRUST_ALL_ENV",
    "TrustEntry",
    "decide",
    "entries",
    "is_trusted",
    "lookup",
    "project_root",
    "set_trust",
    "trust_file",
]

#: Trust every project (``1``, ``true``, ``yes``).
TRUST_ALL_ENV = "PANTO_TRUST_ALL"

_VERSION = 1


@dataclass(frozen=True)
class TrustEntry:
    """One stored answer: a project root, trusted or declined, and when."""

    path: str
    trusted: bool
    at: str = ""


def trust_file(env: Mapping[str, str] | None = None) -> Path:
    return user_config_dir(env) / "trusted.json"


def project_root(path: str | os.PathLike[str]) -> Path:
    """The resolved project root: ``path`` itself, or the directory holding
    ``path`` when ``path`` is a ``.panto`` directory."""
    p = Path(path).resolve()
    return p.parent if p.name == ".panto" else p


def _trust_all(env: Mapping[str, str]) -> bool:
    return env.get(TRUST_ALL_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def _read(env: Mapping[str, str] | None) -> dict[str, dict[str, object]]:
    path = trust_file(env)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read the trust store: {e}") from None
    try:
        doc = json.loads(text)
        projects = doc["projects"]
        if not isinstance(projects, dict) or not all(
            isinstance(v, dict) for v in projects.values()
        ):
            raise TypeError("projects is not a table of tables")
    except (ValueError, KeyError, TypeError) as e:
        raise ConfigError(
            f"{path}: not a panto trust store ({e}); fix it, or delete it and run "
            "`panto trust DIR` again"
        ) from None
    return projects


def lookup(root: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> bool | None:
    """The stored answer for a project root: True, False (the user said no),
    or None (never asked)."""
    entry = _read(env).get(str(project_root(root)))
    if entry is None:
        return None
    return entry.get("trusted") is True


def decide(root: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> tuple[bool, str]:
    """``(trusted, why)`` for a project root."""
    env = os.environ if env is None else env
    if _trust_all(env):
        return True, f"{TRUST_ALL_ENV} is set"
    answer = lookup(root, env)
    if answer:
        return True, f"trusted in {trust_file(env)}"
    if answer is False:
        return False, "you declined to trust it"
    return False, "not trusted yet"


def is_trusted(root: str | os.PathLike[str], env: Mapping[str, str] | None = None) -> bool:
    return decide(root, env)[0]


def entries(env: Mapping[str, str] | None = None) -> list[TrustEntry]:
    """Every stored answer, sorted by path."""
    return [
        TrustEntry(p, v.get("trusted") is True, str(v.get("at", "")))
        for p, v in sorted(_read(env).items())
    ]


def set_trust(
    root: str | os.PathLike[str],
    trusted: bool | None,
    env: Mapping[str, str] | None = None,
) -> Path:
    """Record ``trusted`` for a project root (None forgets it); returns the
    resolved root.  The store is rewritten atomically, mode 0600, in a
    directory created 0700."""
    key = project_root(root)
    projects = _read(env)
    if trusted is None:
        projects.pop(str(key), None)
    else:
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        projects[str(key)] = {"trusted": trusted, "at": at}
    path = trust_file(env)
    private_dirs(path.parent)
    text = json.dumps({"version": _VERSION, "projects": projects}, indent=2, sort_keys=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = open_private(tmp, os.O_WRONLY | os.O_TRUNC)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text + "\n")
        os.chmod(tmp, 0o600)  # O_CREAT's mode is not applied to an existing file
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return key
