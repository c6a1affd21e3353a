"""Configuration: layered TOML files, the environment and command-line flags.

Layers, low to high precedence:

1. ``base`` -- ``panto/base_config.toml``, shipped in the package (the defaults);
2. ``user`` -- ``$XDG_CONFIG_HOME/panto/config.toml`` (``~/.config/panto/config.toml``);
3. ``project`` -- ``.panto/config.toml`` in the nearest ``.panto`` directory
   walking up from the working directory, stopping at the repository root
   (the directory holding ``.git``), the home directory or ``/``;
4. ``env`` -- ``PANTO_MODEL``, ``PANTO_BASE_URL``, ... (see :data:`ENV_VARS`);
5. ``cli`` -- overrides the command line passes to :meth:`Config.load`.

Tables merge key by key; a scalar or list set by a higher layer replaces the
lower one -- except ``extensions.allow/deny/rocks/paths/rock_servers``, which
every layer keeps (seed 002: the policy is built from all layers' rules; rocks
and paths load at the precedence of the layer listing them).  Every key is
validated: an unknown key or a value of the wrong type is a
:class:`~panto.errors.ConfigError` naming the file, the dotted key and what
was expected.  Every effective value remembers the layer it came from
(:meth:`Config.origin`); ``panto config`` prints them.

Models are named ``provider/model`` (``anthropic/claude-sonnet-4-5``,
``openai/gpt-4.1``, ``ollama/qwen3``, ``mock/anthropic``).  A provider is an
entry of ``Config.providers``: a wire, a base URL, where its key comes from,
extra headers and a default model.  API keys are never part of ``repr()``
and never printed.

``Config(provider=..., model=...)`` still builds a config directly (no
files); ``Config.load()`` is the layered one.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import ConfigError
from .paths import user_config_dir

if TYPE_CHECKING:
    from .extensions.policy import Policy

__all__ = [
    "BASE_CONFIG",
    "BUILTIN_PROVIDERS",
    "ENV_VARS",
    "LAYERS",
    "WIRES",
    "Config",
    "ConfigLayer",
    "ExtensionLayer",
    "Origin",
    "ProviderConfig",
    "find_project_dir",
    "project_config_file",
    "split_model",
    "user_config_dir",
    "user_config_file",
]

#: Config layers, lowest precedence first.
LAYERS = ("base", "user", "project", "env", "cli")

#: The base layer shipped with panto.
BASE_CONFIG = Path(__file__).with_name("base_config.toml")

#: The provider wires panto speaks (request serialization + stream decoding).
WIRES = ("openai-chat", "anthropic-messages")


@dataclass(frozen=True)
class ProviderConfig:
    """One provider.  ``wire`` is ``openai-chat`` or ``anthropic-messages``;
    OpenAI-style base URLs include ``/v1``, Anthropic's do not.

    ``max_tokens_field`` is the request key that carries the output limit for
    ``openai-chat``: ``max_completion_tokens`` for api.openai.com (its newer
    models reject ``max_tokens``), ``max_tokens`` for compatible servers (vLLM,
    Ollama, llama.cpp, DeepSeek) which all accept it.
    """

    name: str
    wire: str
    base_url: str
    api_key_env: str | None = None
    api_key: str | None = field(default=None, repr=False)
    headers: Mapping[str, str] = field(default_factory=dict)
    default_model: str = ""
    requires_key: bool = True
    max_tokens_field: str = "max_tokens"
    mock: bool = False  # served by panto.testing in-process (offline)


BUILTIN_PROVIDERS: dict[str, ProviderConfig] = {
    "openai": ProviderConfig(
        "openai",
        "openai-chat",
        "https://api.openai.com/v1",
        api_key_env="OPENAI_API_KEY",
        default_model="gpt-4.1",
        max_tokens_field="max_completion_tokens",
    ),
    "anthropic": ProviderConfig(
        "anthropic",
        "anthropic-messages",
        "https://api.anthropic.com",
        api_key_env="ANTHROPIC_API_KEY",
        default_model="claude-sonnet-4-5",
    ),
    "ollama": ProviderConfig(
        "ollama",
        "openai-chat",
        "http://127.0.0.1:11434/v1",
        requires_key=False,
        default_model="qwen3",
    ),
    "mock": ProviderConfig(
        "mock",
        "anthropic-messages",
        "",
        requires_key=False,
        default_model="anthropic",
        mock=True,
    ),
}


def split_model(spec: str) -> tuple[str, str]:
    """``"anthropic/claude-x"`` -> ``("anthropic", "claude-x")``; a bare
    ``"openai"`` (a provider name) -> ``("openai", "")``."""
    spec = spec.strip()
    if not spec:
        raise ConfigError("empty model name: expected provider/model")
    provider, sep, model = spec.partition("/")
    if not sep:
        return provider, ""
    return provider, model


# --------------------------------------------------------------------------
# keys and origins

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_ENTRY_SEGMENT = re.compile(r"[A-Za-z0-9_-]+")


def dotted(*parts: str) -> str:
    """A TOML dotted key: ``providers.my-llm.base_url``, ``extensions."a.b".x``."""
    return ".".join(
        p if _BARE_KEY.fullmatch(p) else '"' + p.replace('"', '\\"') + '"' for p in parts
    )


def split_key(key: str) -> tuple[str, ...]:
    """The parts of a dotted key (``extensions."a.b".x`` -> three parts)."""
    parts: list[str] = []
    i, n = 0, len(key)
    while i < n:
        if key[i] == '"':
            j = key.find('"', i + 1)
            if j < 0:
                raise ConfigError(f"command line: bad key {key!r}: unterminated quote")
            parts.append(key[i + 1 : j])
            i = j + 1
        else:
            j = key.find(".", i)
            j = n if j < 0 else j
            parts.append(key[i:j].strip())
            i = j
        if i < n:
            if key[i] != ".":
                raise ConfigError(
                    f"command line: bad key {key!r}: expected '.' after a quoted part"
                )
            i += 1
    if not parts or any(p == "" for p in parts):
        raise ConfigError(
            f"command line: bad key {key!r}: expected a dotted key such as tools.timeout"
        )
    return tuple(parts)


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
class ExtensionLayer:
    """One layer's ``[extensions]`` lists, as written."""

    layer: str
    origin: Origin
    allow: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    rocks: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()
    rock_servers: tuple[str, ...] = ()


# --------------------------------------------------------------------------
# the schema


def _describe(v: Any) -> str:
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, int):
        return f"the integer {v}"
    if isinstance(v, float):
        return f"the float {v}"
    if isinstance(v, str):
        return f"the string {v[:60]!r}"
    if isinstance(v, list):
        return "an array"
    if isinstance(v, dict):
        return "a table"
    return f"a {type(v).__name__}"


def _bad(where: str, parts: tuple[str, ...], expected: str, value: Any) -> ConfigError:
    key = dotted(*parts) if parts else "(top level)"
    return ConfigError(f"{where}: {key}: expected {expected}, got {_describe(value)}")


class _Spec:
    expected = "a value"

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        return v

    def from_text(self, raw: str, parts: tuple[str, ...], where: str) -> Any:
        return self.check(raw, parts, where)


class _Str(_Spec):
    def __init__(self, expected: str = "a string", nonempty: bool = False) -> None:
        self.expected = expected
        self.nonempty = nonempty

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if not isinstance(v, str) or (self.nonempty and not v.strip()):
            raise _bad(where, parts, self.expected, v)
        return v


class _Num(_Spec):
    def __init__(self, integer: bool, minimum: float | None = None, strict: bool = False) -> None:
        self.integer = integer
        self.minimum = minimum
        self.strict = strict  # > minimum instead of >=
        kind = "an integer" if integer else "a number"
        if minimum is None:
            self.expected = kind
        else:
            self.expected = f"{kind} {'>' if strict else '>='} {minimum:g}"

    def _ok(self, v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, (int, float) if not self.integer else int):
            return False
        if self.minimum is not None:
            return v > self.minimum if self.strict else v >= self.minimum
        return True

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if not self._ok(v):
            raise _bad(where, parts, self.expected, v)
        return v if self.integer else float(v)

    def from_text(self, raw: str, parts: tuple[str, ...], where: str) -> Any:
        try:
            v: Any = int(raw) if self.integer else float(raw)
        except ValueError:
            raise _bad(where, parts, self.expected, raw) from None
        return self.check(v, parts, where)


class _Bool(_Spec):
    expected = "true or false"

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if not isinstance(v, bool):
            raise _bad(where, parts, self.expected, v)
        return v

    def from_text(self, raw: str, parts: tuple[str, ...], where: str) -> Any:
        low = raw.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise _bad(where, parts, self.expected, raw)


class _Enum(_Spec):
    def __init__(self, *choices: str) -> None:
        self.choices = choices
        self.expected = "one of " + ", ".join(f'"{c}"' for c in choices)

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if v not in self.choices or not isinstance(v, str):
            raise _bad(where, parts, self.expected, v)
        return v


class _StrList(_Spec):
    def __init__(
        self, expected: str = "an array of strings", item: Any = None, item_expected: str = ""
    ) -> None:
        self.expected = expected
        self.item = item  # (str) -> error message | None
        self.item_expected = item_expected

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
            raise _bad(where, parts, self.expected, v)
        if self.item is not None:
            for i, x in enumerate(v):
                problem = self.item(x)
                if problem:
                    raise ConfigError(
                        f"{where}: {dotted(*parts)}[{i}]: expected {self.item_expected}, "
                        f"got {x!r} ({problem})"
                    )
        return list(v)


class _Table(_Spec):
    def __init__(self, fields: Mapping[str, _Spec], what: str = "a table") -> None:
        self.fields = dict(fields)
        self.expected = what

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if not isinstance(v, dict):
            raise _bad(where, parts, self.expected, v)
        out: dict[str, Any] = {}
        for k, x in v.items():
            sub = (*parts, k)
            spec = self.fields.get(k)
            if spec is None:
                raise _unknown(where, dotted(*sub), self.fields)
            out[k] = spec.check(x, sub, where)
        return out


class _Map(_Spec):
    """A table of NAME = value, names matching ``name_re``."""

    def __init__(self, value: _Spec, name_re: re.Pattern[str], name_desc: str) -> None:
        self.value = value
        self.name_re = name_re
        self.name_desc = name_desc
        self.expected = f"a table of {name_desc} = {value.expected}"

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if not isinstance(v, dict):
            raise _bad(where, parts, self.expected, v)
        out: dict[str, Any] = {}
        for k, x in v.items():
            sub = (*parts, k)
            if not self.name_re.fullmatch(k):
                raise ConfigError(
                    f"{where}: {dotted(*sub)}: bad name {k!r}: expected {self.name_desc}"
                )
            out[k] = self.value.check(x, sub, where)
        return out


def _unknown(where: str, key: str, fields: Iterable[str]) -> ConfigError:
    known = ", ".join(sorted(fields))
    return ConfigError(f"{where}: unknown key {key} (expected one of: {known})")


def _pattern_problem(p: str) -> str | None:
    from .extensions.policy import _check_pattern

    try:
        _check_pattern(p)
    except ValueError as e:
        return str(e)
    return None


def _rock_problem(spec: str) -> str | None:
    from .extensions.vers import parse_dep

    try:
        parse_dep(spec)
    except ValueError as e:
        return str(e)
    return None


_GLOB = "a dotted glob (`*` is one whole segment, `**` any number)"

_EXT_LISTS: dict[str, _Spec] = {
    "allow": _StrList("an array of dotted globs", _pattern_problem, _GLOB),
    "deny": _StrList("an array of dotted globs", _pattern_problem, _GLOB),
    "rocks": _StrList(
        "an array of luarocks dependency strings",
        _rock_problem,
        'a luarocks dependency string such as "name 1.0-1" or "name ~> 1.0"',
    ),
    "paths": _StrList("an array of directories"),
    "rock_servers": _StrList("an array of rock server URLs or directories"),
}


class _Extensions(_Spec):
    """``[extensions]``: the five lists, and per-entry tables ``[extensions."a.b"]``."""

    expected = "a table"

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if not isinstance(v, dict):
            raise _bad(where, parts, self.expected, v)
        out: dict[str, Any] = {}
        for k, x in v.items():
            sub = dotted("extensions", k)
            spec = _EXT_LISTS.get(k)
            if spec is not None:
                out[k] = spec.check(x, ("extensions", k), where)
                continue
            if not isinstance(x, dict):
                known = ", ".join(_EXT_LISTS)
                raise ConfigError(
                    f"{where}: unknown key {sub} (expected one of: {known}, or a table "
                    f'[extensions."ENTRY.NAME"] of settings for one extension entry; '
                    f"got {_describe(x)})"
                )
            if not all(_ENTRY_SEGMENT.fullmatch(s) for s in k.split(".")):
                raise ConfigError(
                    f"{where}: {sub}: bad extension name {k!r}: expected dotted segments of "
                    "letters, digits, '_' and '-' (quote it: [extensions.\"a.b\"])"
                )
            out[k] = x
        return out


_PROVIDER_NAME = re.compile(r"[A-Za-z0-9_-]+")

_PROVIDER = _Table(
    {
        "wire": _Enum(*WIRES),
        "base_url": _Str("a URL (a string)", nonempty=True),
        "api_key_env": _Str("the name of an environment variable", nonempty=True),
        "api_key": _Str("a string (better: api_key_env)"),
        "headers": _Map(_Str(), re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"), "an HTTP header name"),
        "default_model": _Str(nonempty=True),
        "max_tokens_field": _Enum("max_tokens", "max_completion_tokens"),
        "requires_key": _Bool(),
    }
)

_POS_INT = _Num(True, 1)
_POS_FLOAT = _Num(False, 0, strict=True)
_NONNEG_FLOAT = _Num(False, 0)

SCHEMA = _Table(
    {
        "model": _Str('provider/model, e.g. "anthropic/claude-sonnet-4-5"', nonempty=True),
        "base_url": _Str("a URL (a string)", nonempty=True),
        "system_prompt": _Str(),
        "max_tokens": _POS_INT,
        "max_tool_rounds": _Num(True, 0),
        "thinking_budget": _POS_INT,
        "reasoning_effort": _Enum("minimal", "low", "medium", "high"),
        "timeouts": _Table({"connect": _POS_FLOAT, "read": _POS_FLOAT}),
        "retries": _Table(
            {"max": _Num(True, 0), "base_delay": _NONNEG_FLOAT, "max_delay": _NONNEG_FLOAT}
        ),
        "providers": _Map(_PROVIDER, _PROVIDER_NAME, "a provider name (letters, digits, _ and -)"),
        "tools": _Table(
            {
                "timeout": _POS_FLOAT,
                "timeouts": _Map(_POS_FLOAT, re.compile(r"[A-Za-z0-9_-]{1,64}"), "a tool name"),
            }
        ),
        "extensions": _Extensions(),
        "session": _Table(
            {"durability": _Enum("fsync", "flush", "none"), "dir": _Str(nonempty=True)}
        ),
    }
)

#: Environment variables of the ``env`` layer: variable -> dotted key.
ENV_VARS: dict[str, tuple[str, ...]] = {
    "PANTO_MODEL": ("model",),
    "PANTO_BASE_URL": ("base_url",),
    "PANTO_SYSTEM_PROMPT": ("system_prompt",),
    "PANTO_MAX_TOKENS": ("max_tokens",),
    "PANTO_MAX_TOOL_ROUNDS": ("max_tool_rounds",),
    "PANTO_THINKING_BUDGET": ("thinking_budget",),
    "PANTO_REASONING_EFFORT": ("reasoning_effort",),
    "PANTO_CONNECT_TIMEOUT": ("timeouts", "connect"),
    "PANTO_READ_TIMEOUT": ("timeouts", "read"),
    "PANTO_MAX_RETRIES": ("retries", "max"),
    "PANTO_TOOL_TIMEOUT": ("tools", "timeout"),
    "PANTO_SESSION_DURABILITY": ("session", "durability"),
    "PANTO_SESSION_DIR": ("session", "dir"),
}

#: ``Config`` attribute -> dotted key (for the fields the TOML sets).
FIELD_KEYS: dict[str, tuple[str, ...]] = {
    "base_url": ("base_url",),
    "system_prompt": ("system_prompt",),
    "max_tokens": ("max_tokens",),
    "max_tool_rounds": ("max_tool_rounds",),
    "thinking_budget": ("thinking_budget",),
    "reasoning_effort": ("reasoning_effort",),
    "connect_timeout": ("timeouts", "connect"),
    "read_timeout": ("timeouts", "read"),
    "max_retries": ("retries", "max"),
    "retry_base_delay": ("retries", "base_delay"),
    "retry_max_delay": ("retries", "max_delay"),
    "tool_timeout": ("tools", "timeout"),
    "tool_timeouts": ("tools", "timeouts"),
    "session_durability": ("session", "durability"),
    "session_dir": ("session", "dir"),
}


def _spec_at(parts: Sequence[str]) -> _Spec | None:
    spec: _Spec = SCHEMA
    for p in parts:
        if isinstance(spec, _Table):
            nxt = spec.fields.get(p)
        elif isinstance(spec, _Map):
            nxt = spec.value
        elif isinstance(spec, _Extensions):
            nxt = _EXT_LISTS.get(p) or _Spec()
        else:
            return None
        if nxt is None:
            return None
        spec = nxt
    return spec


# --------------------------------------------------------------------------
# reading the layers


def _toml_loads(text: str) -> dict[str, Any]:
    try:
        import tomllib
    except ImportError:  # pragma: no cover - Python 3.10
        import tomli as tomllib  # type: ignore[no-redef, import-not-found, unused-ignore]
    return tomllib.loads(text)


def read_layer(name: str, path: Path) -> ConfigLayer | None:
    """Read and validate one config file; None if it does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"{path}: cannot read: {e}") from None
    try:
        raw = _toml_loads(text)
    except ValueError as e:
        raise ConfigError(f"{path}: invalid TOML: {e}") from None
    data = SCHEMA.check(raw, (), str(path))
    return ConfigLayer(name, Origin(name, str(path), path), data)


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


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
    env = os.environ if env is None else env
    d = Path(cwd or os.getcwd()).resolve()
    home = _home(env).resolve()
    user = user_config_dir(env)
    while True:
        cand = d / ".panto"
        if cand.is_dir() and cand != user:
            return cand
        if (d / ".git").exists() or d == home or d.parent == d:
            return None
        d = d.parent


def project_config_file(
    cwd: str | os.PathLike[str] | None = None, env: Mapping[str, str] | None = None
) -> Path | None:
    d = find_project_dir(cwd, env)
    return None if d is None else d / "config.toml"


def _env_layer(env: Mapping[str, str]) -> ConfigLayer | None:
    data: dict[str, Any] = {}
    sources: dict[str, str] = {}
    for var, parts in ENV_VARS.items():
        raw = env.get(var)
        if raw is None or raw == "":
            continue
        spec = _spec_at(parts)
        assert spec is not None
        value = spec.from_text(raw, tuple(parts), f"environment variable {var}")
        _set(data, parts, value)
        sources[dotted(*parts)] = var
    if not data:
        return None
    return ConfigLayer("env", Origin("env", "environment"), data, sources)


def _set(d: dict[str, Any], parts: Sequence[str], value: Any) -> None:
    for p in parts[:-1]:
        nxt = d.get(p)
        if not isinstance(nxt, dict):
            nxt = d[p] = {}
        d = nxt
    d[parts[-1]] = value


def _cli_layer(overrides: Mapping[str, Any]) -> ConfigLayer | None:
    """``overrides``: dotted keys (``"tools.timeout"``) or nested tables."""
    data: dict[str, Any] = {}
    for k, v in overrides.items():
        parts = split_key(k)
        if isinstance(v, Mapping):
            for kk, vv in _flatten(v, parts):
                _set(data, kk, vv)
        else:
            _set(data, parts, v)
    if not data:
        return None
    data = SCHEMA.check(data, (), "command line")
    return ConfigLayer("cli", Origin("cli", "command line"), data)


def _flatten(
    v: Mapping[str, Any], prefix: tuple[str, ...]
) -> Iterable[tuple[tuple[str, ...], Any]]:
    if not v:
        yield prefix, {}
    for k, x in v.items():
        if isinstance(x, Mapping) and x:
            yield from _flatten(x, (*prefix, k))
        else:
            yield (*prefix, k), (dict(x) if isinstance(x, Mapping) else x)


def _merge(
    dst: dict[str, Any],
    src: Mapping[str, Any],
    origins: dict[str, Origin],
    origin: Origin,
    prefix: tuple[str, ...] = (),
    sources: Mapping[str, str] | None = None,
) -> None:
    for k, v in src.items():
        parts = (*prefix, k)
        if prefix == ("extensions",) and k in _EXT_LISTS:
            dst[k] = [*dst.get(k, []), *v]  # every layer's list is kept
            continue
        if isinstance(v, dict):
            cur = dst.get(k)
            if not isinstance(cur, dict):
                cur = dst[k] = {}
            _merge(cur, v, origins, origin, parts, sources)
            if not v:
                origins.setdefault(dotted(*parts), origin)
            continue
        dst[k] = v
        key = dotted(*parts)
        if sources and key in sources:
            origins[key] = Origin(origin.layer, sources[key])
        else:
            origins[key] = origin


def _get(d: Mapping[str, Any], parts: Sequence[str]) -> Any:
    for p in parts:
        if not isinstance(d, Mapping) or p not in d:
            return None
        d = d[p]
    return d


_SECRET_HEADER = re.compile(r"auth|key|token|secret|cookie|password", re.I)


# --------------------------------------------------------------------------
# the config


@dataclass
class Config:
    """Everything an ``Agent`` needs.  Construct directly, e.g.
    ``Config(provider="anthropic", model="claude-sonnet-4-5")`` or
    ``Config(model="openai/gpt-4.1")``, or use ``Config.load()``."""

    provider: str = "mock"
    model: str = ""
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)
    headers: dict[str, str] = field(default_factory=dict)
    max_tokens: int = 8192
    #: Anthropic extended thinking: ``thinking: {type: enabled, budget_tokens}``.
    thinking_budget: int | None = None
    #: OpenAI-chat ``reasoning_effort`` (``minimal``/``low``/``medium``/``high``).
    reasoning_effort: str | None = None
    connect_timeout: float = 10.0
    read_timeout: float = 120.0
    max_retries: int = 4
    retry_base_delay: float = 0.5
    retry_max_delay: float = 30.0
    #: Tool rounds (tool dispatches) per turn before the turn stops.
    max_tool_rounds: int = 50
    #: Seconds a tool may run when its decl does not say; None = no limit.
    tool_timeout: float | None = None
    #: Per-tool timeouts (``[tools.timeouts]``), tool name -> seconds.
    tool_timeouts: dict[str, float] = field(default_factory=dict)
    system_prompt: str | None = None
    #: Session files: ``fsync`` (default), ``flush`` or ``none``.
    session_durability: str = "fsync"
    #: Where sessions are stored (None: ``$PANTO_HOME/sessions``).
    session_dir: str | None = None
    providers: dict[str, ProviderConfig] = field(
        default_factory=lambda: dict(BUILTIN_PROVIDERS), repr=False
    )
    #: The layers this config was loaded from, low to high (empty when built
    #: directly), the directory it was loaded for, and where each effective
    #: value came from (dotted key -> origin).
    layers: tuple[ConfigLayer, ...] = field(default=(), repr=False, compare=False)
    cwd: str | None = field(default=None, repr=False, compare=False)
    origins: dict[str, Origin] = field(default_factory=dict, repr=False, compare=False)
    #: The merged TOML tables (what ``panto.config`` shows Lua, minus secrets).
    data: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Accept ``model="provider/model"`` with the default provider.
        if "/" in self.model:
            provider, model = split_model(self.model)
            if provider in self.providers:
                self.provider, self.model = provider, model
        if self.provider not in self.providers:
            known = ", ".join(sorted(self.providers))
            raise ConfigError(f"unknown provider {self.provider!r} (known: {known})")
        if not self.model:
            self.model = self.providers[self.provider].default_model

    # -- construction -----------------------------------------------------

    @classmethod
    def load(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        overrides: Mapping[str, Any] | None = None,
        base_file: Path | None = None,
        user_file: Path | None = None,
        project_file: Path | None = None,
        **kwargs: Any,
    ) -> Config:
        """The layered config for ``cwd`` (default: the working directory).

        Layers, low to high: base (shipped), user
        (``$XDG_CONFIG_HOME/panto/config.toml``), project
        (``.panto/config.toml``, see :func:`find_project_dir`), the
        environment (:data:`ENV_VARS`; ``env`` defaults to ``os.environ``
        and also supplies ``XDG_CONFIG_HOME``/``HOME`` for the user layer),
        then ``overrides`` -- dotted keys such as ``{"model": "openai/gpt-4.1",
        "tools.timeout": 30, "extensions.deny": ["std.bash"]}``, validated
        like the files.  ``kwargs`` are overrides by ``Config`` attribute name
        (``max_tokens=``, ``connect_timeout=``, ``provider=``, ``api_key=``...).

        Without ``model`` in any layer the default is Anthropic when
        ``ANTHROPIC_API_KEY`` is set, else OpenAI when ``OPENAI_API_KEY`` is
        set, else the offline ``mock`` provider.  Raises ``ConfigError``
        naming the file (or variable), the key and what was expected.
        """
        env = os.environ if env is None else env
        cwd_s = os.fspath(cwd) if cwd is not None else os.getcwd()
        layers: list[ConfigLayer] = []
        base = read_layer("base", base_file or BASE_CONFIG)
        if base is not None:
            layers.append(base)
        user = read_layer("user", user_file or user_config_file(env))
        if user is not None:
            layers.append(user)
        pfile = project_file or project_config_file(cwd_s, env)
        if pfile is not None:
            proj = read_layer("project", pfile)
            if proj is not None:
                layers.append(proj)
        env_layer = _env_layer(env)
        if env_layer is not None:
            layers.append(env_layer)
        ov: dict[str, Any] = dict(overrides or {})
        extra: dict[str, Any] = {}
        provider_kw = kwargs.pop("provider", None)
        for name, value in kwargs.items():
            if name in FIELD_KEYS:
                if value is not None:
                    ov[dotted(*FIELD_KEYS[name])] = value
            elif name == "model":
                if value:
                    ov["model"] = value
            elif name in _FIELD_NAMES:
                extra[name] = value
            else:
                raise ConfigError(f"Config.load: unknown setting {name!r}")
        if provider_kw:
            model = ov.get("model") or ""
            if not model:
                ov["model"] = provider_kw
            elif "/" not in model or split_model(model)[0] != provider_kw:
                ov["model"] = f"{provider_kw}/{model}"
        cli = _cli_layer(ov)
        if cli is not None:
            layers.append(cli)
        return cls._from_layers(layers, env, cwd_s, extra)

    @classmethod
    def _from_layers(
        cls,
        layers: Sequence[ConfigLayer],
        env: Mapping[str, str],
        cwd: str,
        extra: Mapping[str, Any] | None = None,
    ) -> Config:
        merged: dict[str, Any] = {}
        origins: dict[str, Origin] = {}
        for layer in layers:
            _merge(merged, layer.data, origins, layer.origin, (), layer.sources)
        kw: dict[str, Any] = {}
        for attr, parts in FIELD_KEYS.items():
            v = _get(merged, parts)
            if v is None:
                continue
            if attr == "session_dir":
                v = _resolve_dir(v, origins.get(dotted(*parts)), cwd)
            kw[attr] = dict(v) if isinstance(v, dict) else v
        providers = _build_providers(merged.get("providers") or {}, origins)
        kw["providers"] = providers
        spec = merged.get("model")
        if spec:
            provider, model = split_model(spec)
            if provider not in providers:
                o = origins.get("model", DEFAULT_ORIGIN)
                where = o.source or o.layer
                known = ", ".join(sorted(providers))
                raise ConfigError(
                    f"{where}: model: unknown provider {provider!r} in {spec!r} "
                    f"(expected provider/model with a provider of: {known})"
                )
            kw["provider"], kw["model"] = provider, model
        else:
            if env.get("ANTHROPIC_API_KEY"):
                kw["provider"], why = "anthropic", "ANTHROPIC_API_KEY is set"
            elif env.get("OPENAI_API_KEY"):
                kw["provider"], why = "openai", "OPENAI_API_KEY is set"
            else:
                kw["provider"], why = "mock", "no model configured and no API key set"
            origins["model"] = Origin("default", why)
        kw.update(extra or {})
        return cls(layers=tuple(layers), cwd=cwd, origins=origins, data=merged, **kw)

    def with_model(self, spec: str) -> Config:
        """A copy using ``provider/model`` (or a bare provider name, with its
        default model).  A base URL / key override set for another provider
        is dropped when the provider changes."""
        provider, model = split_model(spec)
        if provider not in self.providers:
            known = ", ".join(sorted(self.providers))
            raise ConfigError(f"unknown provider {provider!r} in {spec!r} (known: {known})")
        changes: dict[str, Any] = {"provider": provider, "model": model}
        if provider != self.provider:
            changes.update(base_url=None, api_key=None)
        return dataclasses.replace(self, **changes)

    # -- resolution ---------------------------------------------------------

    @property
    def model_spec(self) -> str:
        return f"{self.provider}/{self.model}"

    @property
    def provider_config(self) -> ProviderConfig:
        return self.providers[self.provider]

    @property
    def wire(self) -> str:
        p = self.provider_config
        if p.mock:
            return mock_wire(self.model)
        return p.wire

    def resolve_base_url(self) -> str:
        return (self.base_url or self.provider_config.base_url).rstrip("/")

    def resolve_api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """The key from the config, else the provider's env variable.  Raises
        ``ConfigError`` (naming the variable, never a value) when required and
        missing."""
        p = self.provider_config
        key = self.api_key or p.api_key
        if not key and p.api_key_env:
            key = (os.environ if env is None else env).get(p.api_key_env) or None
        if not key and p.requires_key:
            where = f" (set {p.api_key_env})" if p.api_key_env else ""
            raise ConfigError(f"no API key for provider {p.name!r}{where}")
        return key

    def resolve_headers(self) -> dict[str, str]:
        return {**self.provider_config.headers, **self.headers}

    # -- where values came from -------------------------------------------

    def origin(self, key: str) -> Origin:
        """The layer a dotted key's effective value came from (``default``
        when no layer set it)."""
        return self.origins.get(key, DEFAULT_ORIGIN)

    def layer(self, name: str) -> ConfigLayer | None:
        for layer in self.layers:
            if layer.name == name:
                return layer
        return None

    # -- extensions ---------------------------------------------------------

    def extension_layers(self) -> list[ExtensionLayer]:
        """Each layer's ``[extensions]`` lists, low to high."""
        out: list[ExtensionLayer] = []
        for layer in self.layers:
            ext = layer.data.get("extensions")
            if not isinstance(ext, Mapping):
                continue
            out.append(
                ExtensionLayer(
                    layer.name,
                    layer.origin,
                    **{k: tuple(ext.get(k, ())) for k in _EXT_LISTS},
                )
            )
        return out

    def extension_policy(self, deny: Sequence[str] = (), allow: Sequence[str] = ()) -> Policy:
        """The layered allow/deny policy; ``deny``/``allow`` (e.g. ``--deny``
        flags) form one more layer on top, ``cli``."""
        from .extensions.policy import LayerPolicy, Policy

        lps = [
            LayerPolicy(el.layer, list(el.allow), list(el.deny), origin=str(el.origin.source))
            for el in self.extension_layers()
            if el.allow or el.deny
        ]
        if deny or allow:
            lps.append(LayerPolicy("cli", list(allow), list(deny), origin="command line"))
        return Policy(lps)

    def extension_rocks(self) -> list[tuple[str, str]]:
        """``(layer, dependency string)`` for every ``extensions.rocks`` entry."""
        return [(el.layer, spec) for el in self.extension_layers() for spec in el.rocks]

    def extension_paths(self, cwd: str | os.PathLike[str] | None = None) -> list[tuple[str, Path]]:
        """``(layer, directory)`` for every ``extensions.paths`` entry; a
        relative path resolves against ``cwd`` (default: the directory the
        config was loaded for)."""
        base = Path(cwd if cwd is not None else (self.cwd or os.getcwd()))
        out: list[tuple[str, Path]] = []
        for el in self.extension_layers():
            for p in el.paths:
                q = Path(os.path.expanduser(p))
                out.append((el.layer, q if q.is_absolute() else base / q))
        return out

    @property
    def rock_servers(self) -> list[str]:
        """``extensions.rock_servers`` of all layers (low to high, duplicates
        dropped); a relative directory resolves against the file listing it."""
        out: list[str] = []
        for el in self.extension_layers():
            for s in el.rock_servers:
                if "://" not in s:
                    s = _resolve_dir(s, el.origin, self.cwd or os.getcwd())
                if s not in out:
                    out.append(s)
        return out

    def extension_settings(self, name: str) -> dict[str, Any]:
        """``[extensions."NAME"]``, merged over the layers (what ``activate``
        receives)."""
        ext = self.data.get("extensions")
        v = ext.get(name) if isinstance(ext, Mapping) else None
        return dict(v) if isinstance(v, Mapping) else {}

    def lua_view(self) -> dict[str, Any]:
        """What extensions see as ``panto.config``: the merged tables with the
        effective model, without API keys or provider headers."""
        out: dict[str, Any] = {k: v for k, v in self.data.items() if k != "providers"}
        out["model"] = self.model_spec
        out["provider"] = self.provider
        tools = dict(out.get("tools") or {})
        if self.tool_timeout is not None:
            tools["timeout"] = self.tool_timeout
        if self.tool_timeouts:
            tools["timeouts"] = dict(self.tool_timeouts)
        out["tools"] = tools
        return out

    # -- `panto config` ------------------------------------------------------

    def explain(self, env: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
        """``(dotted key, TOML value, origin)`` for every effective value,
        in documentation order.  API keys appear as ``<set>``/``<unset>``,
        secret-looking headers as ``<set>``; no secret is ever included."""
        env = os.environ if env is None else env
        rows: list[tuple[str, str, str]] = []

        def row(key: str, value: Any, origin: Origin | str | None = None) -> None:
            o = origin if origin is not None else self.origin(key)
            rows.append((key, value if isinstance(value, _Raw) else _toml(value), str(o)))

        row("model", self.model_spec)
        for attr in ("base_url", "system_prompt", "max_tokens", "max_tool_rounds"):
            v = getattr(self, attr)
            if v is not None:
                row(dotted(*FIELD_KEYS[attr]), v)
        for attr in ("thinking_budget", "reasoning_effort"):
            v = getattr(self, attr)
            if v is not None:
                row(dotted(*FIELD_KEYS[attr]), v)
        for attr in (
            "connect_timeout",
            "read_timeout",
            "max_retries",
            "retry_base_delay",
            "retry_max_delay",
        ):
            row(dotted(*FIELD_KEYS[attr]), getattr(self, attr))
        if self.tool_timeout is not None:
            row("tools.timeout", self.tool_timeout)
        for name, t in sorted(self.tool_timeouts.items()):
            row(dotted("tools", "timeouts", name), t)
        row("session.durability", self.session_durability)
        if self.session_dir is not None:
            row("session.dir", self.session_dir)
        for name in sorted(self.providers, key=lambda n: (n != self.provider, n)):
            p = self.providers[name]
            if p.mock:
                continue
            for attr in ("wire", "base_url", "api_key_env", "default_model"):
                v = getattr(p, attr)
                if v:
                    k = dotted("providers", name, attr)
                    row(k, v, self.origins.get(k, "built in"))
            key_k = dotted("providers", name, "api_key")
            if p.api_key:
                row(key_k, _Raw("<set>"), self.origins.get(key_k))
            elif p.api_key_env and env.get(p.api_key_env):
                row(key_k, _Raw("<set>"), f"env ({p.api_key_env})")
            elif p.requires_key:
                hint = f"set {p.api_key_env}" if p.api_key_env else "needs api_key_env"
                row(key_k, _Raw("<unset>"), hint)
            for h, v in sorted(p.headers.items()):
                k = dotted("providers", name, "headers", h)
                shown: Any = _Raw("<set>") if _SECRET_HEADER.search(h) else v
                row(k, shown, self.origins.get(k, "built in"))
        for el in self.extension_layers():
            for kind in _EXT_LISTS:
                items = getattr(el, kind)
                if items:
                    rows.append((dotted("extensions", kind), _toml(list(items)), str(el.origin)))
        ext = self.data.get("extensions")
        if isinstance(ext, Mapping):
            for name, table in sorted(ext.items()):
                if name in _EXT_LISTS or not isinstance(table, Mapping):
                    continue
                for k, v in _flatten(table, ("extensions", name)):
                    key = dotted(*k)
                    row(key, v)
        return rows


class _Raw(str):
    """A value printed as is (``<set>``)."""


_FIELD_NAMES = frozenset(f.name for f in dataclasses.fields(Config))


def _toml(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        import json

        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml(x) for x in v) + "]"
    if isinstance(v, Mapping):
        return "{ " + ", ".join(f"{dotted(k)} = {_toml(x)}" for k, x in v.items()) + " }"
    return _toml(str(v))


def _resolve_dir(value: str, origin: Origin | None, cwd: str) -> str:
    """``~`` expanded; a relative directory against the config file's
    directory (or ``cwd`` for the environment and the command line)."""
    p = Path(os.path.expanduser(value))
    if p.is_absolute():
        return str(p)
    base = origin.path.parent if origin is not None and origin.path is not None else Path(cwd)
    return str((base / p).resolve())


def _build_providers(
    tables: Mapping[str, Mapping[str, Any]], origins: Mapping[str, Origin]
) -> dict[str, ProviderConfig]:
    providers = dict(BUILTIN_PROVIDERS)
    for name, t in tables.items():
        base = providers.get(name)
        if base is None:
            missing = [k for k in ("wire", "base_url") if k not in t]
            if missing:
                o = next(
                    (
                        o
                        for k, o in origins.items()
                        if k.startswith(dotted("providers", name) + ".")
                    ),
                    DEFAULT_ORIGIN,
                )
                need = " and ".join(missing)
                raise ConfigError(
                    f"{o.source or o.layer}: {dotted('providers', name)}: a new provider needs "
                    f'{need} (expected wire = "openai-chat" or "anthropic-messages" and '
                    f"base_url = a URL)"
                )
            base = ProviderConfig(name, t["wire"], t["base_url"], requires_key=False)
            if "api_key_env" in t or "api_key" in t:
                base = dataclasses.replace(base, requires_key=True)
        changes = {k: v for k, v in t.items() if k != "headers"}
        if "headers" in t:
            changes["headers"] = {**base.headers, **t["headers"]}
        providers[name] = dataclasses.replace(base, **changes)
    return providers


def mock_wire(model: str) -> str:
    """The wire of a ``mock/...`` model: names containing ``openai`` use the
    OpenAI chat wire, everything else the Anthropic messages wire."""
    return "openai-chat" if "openai" in model.lower() else "anthropic-messages"
