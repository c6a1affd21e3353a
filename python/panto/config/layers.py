"""Reading and merging the config layers: the files (base, user, project),
the environment and the command line; where each value came from; and
project discovery."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..errors import ConfigError
from ..paths import home_dir, user_config_dir
from .schema import (
    ENV_VARS,
    EXT_LISTS,
    MAX_DEPTH,
    SCHEMA,
    TRUST_KEYS,
    TrustKey,
    dotted,
    spec_at,
    split_key,
)

__all__ = [
    "BASE_CONFIG",
    "DEFAULT_ORIGIN",
    "LAYERS",
    "ConfigLayer",
    "ExtensionLayer",
    "Origin",
    "ProjectTrust",
    "base_layer",
    "cli_layer",
    "env_layer",
    "find_project_dir",
    "find_repo_root",
    "flatten",
    "get_key",
    "merge",
    "project_config_file",
    "read_layer",
    "resolve_dir",
    "project_trust",
    "set_key",
    "split_untrusted",
    "user_config_file",
]

#: Config layers, lowest precedence first.
LAYERS = ("base", "user", "project", "env", "cli")

#: The base layer shipped with panto: the one place defaults are written.
BASE_CONFIG = Path(__file__).parent.parent / "base_config.toml"


@dataclass(frozen=True)
class Origin:
    """Where a value came from: a layer and its file (or environment
    variable, or ``command line``)."""

    layer: str
    source: str | None = None
    path: Path | None = None  # the config file, for file layers

    def __str__(self) -> str:
        return f"{self.layer} ({self.source})" if self.source else self.layer


DEFAULT_ORIGIN = Origin("default")


@dataclass(frozen=True)
class ConfigLayer:
    """One layer as read and validated (``data`` is the layer's own table)."""

    name: str
    origin: Origin
    data: Mapping[str, Any]
    #: dotted key -> a finer source (the environment variable that set it)
    sources: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProjectTrust:
    """The project a config was loaded for and whether the user trusts it
    (:mod:`panto.policy.trust`).  ``ignored``: what an untrusted project
    set that was not applied, ``(dotted key or directory, why)``."""

    dir: Path  # the .panto directory
    trusted: bool
    why: str
    ignored: tuple[tuple[str, str], ...] = ()

    @property
    def root(self) -> Path:
        return self.dir.parent

    def notice(self) -> str | None:
        """The one line panto prints when something was ignored (None:
        nothing was)."""
        if self.trusted or not self.ignored:
            return None
        names = [k for k, _ in self.ignored]
        shown = ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "")
        return (
            f"project {self.root} is not trusted: ignored {shown} from its .panto/ "
            f"(they could send your key or conversations elsewhere, or run code); to apply them: "
            f"panto trust {self.root}"
        )


@dataclass(frozen=True)
class ExtensionLayer:
    """One layer's ``[extensions]`` lists, as written."""

    layer: str
    origin: Origin
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    rocks: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    rock_servers: tuple[str, ...] = ()


def _toml_loads(text: str, path: Path) -> dict[str, Any]:
    """The parsed file.  Parsed once per text: the result is kept in the
    start-up cache (``panto.startup_cache``, kind ``toml``, keyed by the
    text) when JSON holds it exactly (no dates, no inf/nan), since
    importing the TOML parser costs more than ``json``."""
    from .. import startup_cache

    raw = text.encode("utf-8", "surrogatepass")
    key = startup_cache.checksum(raw) if startup_cache.enabled() else None
    if key is not None:
        hit = startup_cache.read("toml", key)
        if isinstance(hit, dict) and hit.get("text_len") == len(raw):
            data = hit.get("data")
            if isinstance(data, dict):
                return data
    data = _toml_parse(text, path)
    if key is not None:
        import json

        try:
            exact = json.loads(json.dumps(data)) == data
        except (TypeError, ValueError, RecursionError):
            exact = False
        if exact:
            startup_cache.write("toml", key, {"text_len": len(raw), "data": data})
    return data


def _toml_parse(text: str, path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef, import-not-found, unused-ignore]
    try:
        return tomllib.loads(text)
    except ValueError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    except RecursionError:
        raise ConfigError(
            f"{path}: invalid TOML: arrays or tables nested deeper than {MAX_DEPTH} levels"
        ) from None


def read_layer(name: str, path: Path) -> ConfigLayer | None:
    """Read and validate one config file; None if it does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from None
    data = SCHEMA.check(_toml_loads(text, path), (), str(path))
    return ConfigLayer(name, Origin(name, str(path), path), data)


@lru_cache(maxsize=1)
def base_layer() -> ConfigLayer:
    """The shipped base layer, read once per process (it never changes)."""
    layer = read_layer("base", BASE_CONFIG)
    if layer is None:  # pragma: no cover - a broken install
        raise ConfigError(f"{BASE_CONFIG}: missing (a broken panto install)")
    return layer


def user_config_file(env: Mapping[str, str] | None = None) -> Path:
    return user_config_dir(env) / "config.toml"


def find_project_dir(
    cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path | None:
    """The nearest ``.panto`` directory from ``cwd`` upwards.

    The walk stops after the repository root (a directory holding ``.git``),
    the home directory, or ``/``: a ``.panto`` above the repository is never
    picked up.  The user's config dir is never a project dir.
    """
    d = Path(cwd or os.getcwd()).resolve()
    home = home_dir(env).resolve()
    user = user_config_dir(env)
    while True:
        cand = d / ".panto"
        if cand.is_dir() and cand != user:
            return cand
        if (d / ".git").exists() or d == home or d.parent == d:
            return None
        d = d.parent


def find_repo_root(
    cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path | None:
    """The nearest directory holding ``.git`` from ``cwd`` upwards, not above
    the home directory."""
    d = Path(cwd or os.getcwd()).resolve()
    home = home_dir(env).resolve()
    while True:
        if (d / ".git").exists():
            return d
        if d == home or d.parent == d:
            return None
        d = d.parent


def project_config_file(
    cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path | None:
    d = find_project_dir(cwd, env)
    return None if d is None else d / "config.toml"


def env_layer(env: Mapping[str, str]) -> ConfigLayer | None:
    """The ``PANTO_*`` variables of :data:`~panto.config.schema.ENV_VARS`."""
    data: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for var, parts in ENV_VARS.items():
        raw = env.get(var)
        if raw is None or raw == "":
            continue
        spec = spec_at(parts)
        assert spec is not None
        value = spec.from_text(raw, tuple(parts), f"environment variable {var}")
        set_key(data, parts, value)
        sources[dotted(*parts)] = var
    if not data:
        return None
    return ConfigLayer("env", Origin("env", "environment"), data, sources)


def set_key(d: dict[str, Any], parts: Sequence[str], value: Any) -> None:
    for p in parts[:-1]:
        nxt = d.get(p)
        if not isinstance(nxt, dict):
            nxt = d[p] = {}
        d = nxt
    d[parts[-1]] = value


def get_key(d: Mapping[str, Any], parts: Sequence[str]) -> Any:
    for p in parts:
        if not isinstance(d, Mapping) or p not in d:
            return None
        d = d[p]
    return d


def cli_layer(overrides: Mapping[str, Any]) -> ConfigLayer | None:
    """``overrides``: dotted keys (``"tools.timeout"``) or nested tables."""
    data: dict[str, Any] = {}
    for k, v in overrides.items():
        parts = split_key(k)
        if isinstance(v, Mapping):
            for kk, vv in flatten(v, parts):
                set_key(data, kk, vv)
        else:
            set_key(data, parts, v)
    if not data:
        return None
    data = SCHEMA.check(data, (), "command line")
    return ConfigLayer("cli", Origin("cli", "command line"), data)


def flatten(v: Mapping[str, Any], prefix: tuple[str, ...]) -> Iterable[tuple[tuple[str, ...], Any]]:
    """``(key parts, leaf value)`` for every leaf of a nested table."""
    if not v:
        yield prefix, {}
    for k, x in v.items():
        if isinstance(x, Mapping) and x:
            yield from flatten(x, (*prefix, k))
        else:
            yield (*prefix, k), (dict(x) if isinstance(x, Mapping) else x)


def merge(
    dst: dict[str, Any],
    src: Mapping[str, Any],
    origins: dict[str, Origin],
    origin: Origin,
    prefix: tuple[str, ...] = (),
    sources: Mapping[str, str] | None = None,
) -> None:
    """Merge one layer's table into ``dst``, recording each key's origin.
    Tables merge key by key; ``extensions`` lists of every layer are kept."""
    for k, v in src.items():
        parts = (*prefix, k)
        if prefix == ("extensions",) and k in EXT_LISTS:
            dst[k] = [*dst.get(k, []), *v]  # every layer's list is kept
            continue
        if isinstance(v, dict):
            cur = dst.get(k)
            if not isinstance(cur, dict):
                cur = dst[k] = {}
            merge(cur, v, origins, origin, parts, sources)
            if not v:
                origins.setdefault(dotted(*parts), origin)
            continue
        dst[k] = v
        key = dotted(*parts)
        if sources and key in sources:
            origins[key] = Origin(origin.layer, sources[key])
        else:
            origins[key] = origin


def resolve_dir(value: str, origin: Origin | None, cwd: str) -> str:
    """``~`` expanded; a relative directory against the config file's
    directory (or ``cwd`` for the environment and the command line)."""
    p = Path(os.path.expanduser(value))
    if p.is_absolute():
        return str(p)
    base = origin.path.parent if origin is not None and origin.path is not None else Path(cwd)
    return str((base / p).resolve())


def _trust_key(parts: tuple[str, ...], keys: Sequence[TrustKey]) -> TrustKey | None:
    for k in keys:
        if len(k.pattern) == len(parts) and all(
            p == "*" or p == q for p, q in zip(k.pattern, parts)
        ):
            return k
    return None


def split_untrusted(
    data: Mapping[str, Any], keys: Sequence[TrustKey] = TRUST_KEYS
) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """An untrusted project layer's table without the keys of
    :data:`~panto.config.schema.TRUST_KEYS`: ``(kept, ignored)``, ignored
    being ``(dotted key, why it needs trust)`` for every leaf dropped."""
    ignored: list[tuple[str, str]] = []
    deeper = {k.pattern[:n] for k in keys for n in range(1, len(k.pattern))}

    def walk(table: Mapping[str, Any], prefix: tuple[str, ...]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name, v in table.items():
            parts = (*prefix, name)
            k = _trust_key(parts, keys)
            if k is not None:
                if k.safe is not None and k.safe(v):
                    out[name] = v
                elif isinstance(v, Mapping) and v:
                    ignored.extend((dotted(*kk), k.reason) for kk, _ in flatten(v, parts))
                else:
                    ignored.append((dotted(*parts), k.reason))
                continue
            wild = any(
                len(d) == len(parts) and all(p == "*" or p == q for p, q in zip(d, parts))
                for d in deeper
            )
            out[name] = walk(v, parts) if wild and isinstance(v, Mapping) else v
        return out

    return walk(data, ()), ignored


def project_trust(
    pdir: Path,
    layer: ConfigLayer | None,
    env: Mapping[str, str],
    trust: bool | None = None,
) -> tuple[ProjectTrust, ConfigLayer | None]:
    """Decide trust for the project ``pdir`` (its ``.panto`` directory) and
    strip ``layer`` (its config) to what applies.  ``trust`` overrides the
    store's answer (embedders, the REPL's question)."""
    if trust is None:
        from ..policy.trust import decide

        trusted, why = decide(pdir.parent, env)
    else:
        trusted, why = trust, "trust=True was passed" if trust else "trust=False was passed"
    if trusted:
        return ProjectTrust(pdir, True, why), layer
    ignored: list[tuple[str, str]] = []
    if layer is not None:
        kept, ignored = split_untrusted(layer.data)
        layer = ConfigLayer(layer.name, layer.origin, kept, layer.sources)
    for sub in ("extensions", "tools"):
        try:
            has_files = any(True for _ in os.scandir(pdir / sub))
        except OSError:
            has_files = False
        if has_files:
            ignored.append((f".panto/{sub}/", "Lua code there would run"))
    if (pdir.parent / ".mcp.json").is_file():
        ignored.append((".mcp.json", "would start its MCP servers (run code)"))
    return ProjectTrust(pdir, False, why, tuple(ignored)), layer
