"""The config schema: a small validation DSL, the table of every key, and
the one table of keys that a ``Config`` attribute or an environment variable
sets (:data:`KEYS`; :data:`ENV_VARS` and :data:`FIELD_KEYS` are views of it).

Defaults are not here: they live in the base layer (``base_config.toml``),
the one place a default is written down.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import ConfigError
from ..patterns import LazyPattern

__all__ = [
    "ENV_VARS",
    "EXT_LISTS",
    "FIELD_KEYS",
    "KEYS",
    "MAX_DEPTH",
    "PERMISSION_MODES",
    "SCHEMA",
    "PROVIDER_WIRES",
    "TRUST_KEYS",
    "Key",
    "TrustKey",
    "describe",
    "dotted",
    "spec_at",
    "split_key",
]

#: The provider wires panto speaks (request serialization + stream decoding).
PROVIDER_WIRES = ("openai-chat", "anthropic-messages", "openai-responses")

#: How deeply tables may nest in a config file (free-form extension
#: settings included).  Deeper is an error, not a ``RecursionError``.
MAX_DEPTH = 32

_BARE_KEY = LazyPattern(r"[A-Za-z0-9_-]+")
_ENTRY_SEGMENT = LazyPattern(r"[A-Za-z0-9_-]+")


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


def describe(v: Any) -> str:
    """A value as an error message names it (``the string '30s'``)."""
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
    return ConfigError(f"{where}: {key}: expected {expected}, got {describe(value)}")


def _unknown(where: str, key: str, fields: Iterable[str]) -> ConfigError:
    known = ", ".join(sorted(fields))
    return ConfigError(f"{where}: unknown key {key} (expected one of: {known})")


def _depth(v: Any, limit: int) -> bool:
    """Is ``v`` nested no deeper than ``limit`` tables/arrays (iterative)?"""
    stack = [(v, 0)]
    while stack:
        x, d = stack.pop()
        if d > limit:
            return False
        if isinstance(x, dict):
            stack.extend((y, d + 1) for y in x.values())
        elif isinstance(x, list):
            stack.extend((y, d + 1) for y in x)
    return True


# --------------------------------------------------------------------------
# the DSL


class Spec:
    """Any value."""

    expected = "a value"

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        return v

    def from_text(self, raw: str, parts: tuple[str, ...], where: str) -> Any:
        """The value of an environment variable."""
        return self.check(raw, parts, where)


class Str(Spec):
    def __init__(self, expected: str = "a string", nonempty: bool = False) -> None:
        self.expected = expected
        self.nonempty = nonempty

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if not isinstance(v, str) or (self.nonempty and not v.strip()):
            raise _bad(where, parts, self.expected, v)
        return v


URL_EXPECTED = 'a URL starting with http:// or https:// (e.g. "https://api.example.com/v1")'


def url_problem(v: str) -> str | None:
    """Why ``v`` is not a usable base URL (None: it is): without a scheme it
    was retried for seconds as a connection error."""
    scheme, sep, rest = v.strip().partition("://")
    if not sep or scheme.lower() not in ("http", "https"):
        return "no http:// or https:// scheme" if not sep else f"unsupported scheme {scheme}://"
    if not rest or rest.startswith(("/", ":")):
        return "no host"
    return None


class Url(Str):
    def __init__(self) -> None:
        super().__init__(URL_EXPECTED, nonempty=True)

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        super().check(v, parts, where)
        problem = url_problem(v)
        if problem:
            raise ConfigError(
                f"{where}: {dotted(*parts)}: expected {self.expected}, got {v!r} ({problem})"
            )
        return v


class Num(Spec):
    def __init__(
        self,
        integer: bool,
        minimum: float | None = None,
        strict: bool = False,
        maximum: float | None = None,
    ) -> None:
        self.integer = integer
        self.minimum = minimum
        self.maximum = maximum
        self.strict = strict  # > minimum (and < maximum) instead of >= (<=)
        kind = "an integer" if integer else "a number"
        if minimum is None:
            self.expected = kind
        elif maximum is not None:
            op = "<" if strict else "<="
            self.expected = f"{kind} with {minimum:g} {op} x {op} {maximum:g}"
        else:
            self.expected = f"{kind} {'>' if strict else '>='} {minimum:g}"

    def _ok(self, v: Any) -> bool:
        if isinstance(v, bool) or not isinstance(v, (int, float) if not self.integer else int):
            return False
        if self.minimum is not None and not (
            v > self.minimum if self.strict else v >= self.minimum
        ):
            return False
        return self.maximum is None or (v < self.maximum if self.strict else v <= self.maximum)

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


class Bool(Spec):
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


class Enum(Spec):
    def __init__(self, *choices: str) -> None:
        self.choices = choices
        self.expected = "one of " + ", ".join(f'"{c}"' for c in choices)

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if not isinstance(v, str) or v not in self.choices:
            raise _bad(where, parts, self.expected, v)
        return v


class StrList(Spec):
    def __init__(
        self,
        expected: str = "an array of strings",
        item: Callable[[str], str | None] | None = None,
        item_expected: str = "",
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


class Table(Spec):
    def __init__(self, fields: Mapping[str, Spec], what: str = "a table") -> None:
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


class Map(Spec):
    """A table of NAME = value, names matching ``name_re``."""

    def __init__(self, value: Spec, name_re: re.Pattern[str] | LazyPattern, name_desc: str) -> None:
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


def _pattern_problem(p: str) -> str | None:
    from ..extensions.policy import check_pattern

    try:
        check_pattern(p)
    except ValueError as e:
        return str(e)
    return None


def _rock_problem(spec: str) -> str | None:
    from ..extensions.vers import parse_dep

    try:
        parse_dep(spec)
    except ValueError as e:
        return str(e)
    return None


def _rule_problem(text: str) -> str | None:
    from ..policy.rules import check_rule

    return check_rule(text)


_RULES = StrList(
    "an array of permission rules",
    _rule_problem,
    'a rule such as "Bash(npm run test:*)", "Read(./secrets/**)", "Edit(src/**)" or '
    '"mcp__server__tool"',
)

#: ``[permissions] mode`` values (panto.policy.permissions.MODES)
PERMISSION_MODES = ("default", "accept-edits", "plan", "dont-ask", "bypass")

_GLOB = "a dotted glob (`*` is one whole segment, `**` any number)"

#: The ``[extensions]`` lists every layer keeps (they are not replaced).
EXT_LISTS: dict[str, Spec] = {
    "allow": StrList("an array of dotted globs", _pattern_problem, _GLOB),
    "deny": StrList("an array of dotted globs", _pattern_problem, _GLOB),
    "rocks": StrList(
        "an array of luarocks dependency strings",
        _rock_problem,
        'a luarocks dependency string such as "name 1.0-1" or "name ~> 1.0"',
    ),
    "paths": StrList("an array of directories"),
    "rock_servers": StrList("an array of rock server URLs or directories"),
}


class Extensions(Spec):
    """``[extensions]``: the five lists, and per-entry tables ``[extensions."a.b"]``."""

    expected = "a table"

    def check(self, v: Any, parts: tuple[str, ...], where: str) -> Any:
        if not isinstance(v, dict):
            raise _bad(where, parts, self.expected, v)
        out: dict[str, Any] = {}
        for k, x in v.items():
            sub = dotted("extensions", k)
            spec = EXT_LISTS.get(k)
            if spec is not None:
                out[k] = spec.check(x, ("extensions", k), where)
                continue
            if not isinstance(x, dict):
                known = ", ".join(EXT_LISTS)
                raise ConfigError(
                    f"{where}: unknown key {sub} (expected one of: {known}, or a table "
                    f'[extensions."ENTRY.NAME"] of settings for one extension entry; '
                    f"got {describe(x)})"
                )
            if not all(_ENTRY_SEGMENT.fullmatch(s) for s in k.split(".")):
                raise ConfigError(
                    f"{where}: {sub}: bad extension name {k!r}: expected dotted segments of "
                    "letters, digits, '_' and '-' (quote it: [extensions.\"a.b\"])"
                )
            if not _depth(x, MAX_DEPTH - 2):
                raise ConfigError(f"{where}: {sub}: tables nested deeper than {MAX_DEPTH} levels")
            out[k] = x
        return out


# --------------------------------------------------------------------------
# the schema

_PROVIDER_NAME = LazyPattern(r"[A-Za-z0-9_-]+")

_PROVIDER = Table(
    {
        "wire": Enum(*PROVIDER_WIRES),
        "base_url": Url(),
        "api_key_env": Str("the name of an environment variable", nonempty=True),
        "api_key": Str("a string (better: api_key_env)"),
        "headers": Map(Str(), LazyPattern(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"), "an HTTP header name"),
        "default_model": Str(nonempty=True),
        "max_tokens_field": Enum("max_tokens", "max_completion_tokens"),
        "requires_key": Bool(),
    }
)

_POS_INT = Num(True, 1)
_NONNEG_INT = Num(True, 0)
_POS_FLOAT = Num(False, 0, strict=True)
_NONNEG_FLOAT = Num(False, 0)
#: Timeouts and delays: at most a day.  inf, 1e10 (a timer past what the
#: event loop and the OS accept: OverflowError, or a watchdog that never
#: fires) and nan are refused here, with the range in the message.
MAX_SECONDS = 86400.0


class Seconds(Num):
    """A timeout or delay: > 0 (or >= 0), at most ``MAX_SECONDS``."""

    def __init__(self, zero_ok: bool = False) -> None:
        super().__init__(False, 0, strict=not zero_ok)
        self.expected = f"a number {'>=' if zero_ok else '>'} 0 (seconds, at most 86400: a day)"

    def _ok(self, v: Any) -> bool:
        return super()._ok(v) and v <= MAX_SECONDS


_SECONDS = Seconds()
_NONNEG_SECONDS = Seconds(zero_ok=True)

#: ``[models."provider/model"]``: what panto knows about one model.
MODEL_FIELDS: dict[str, Spec] = {
    "context_window": _POS_INT,
    "max_output": _POS_INT,
    "input_price": _NONNEG_FLOAT,
    "output_price": _NONNEG_FLOAT,
    "cache_read_price": _NONNEG_FLOAT,
    "cache_write_price": _NONNEG_FLOAT,
    "images": Bool(),
}

SCHEMA = Table(
    {
        "model": Str('provider/model, e.g. "anthropic/claude-sonnet-4-5"', nonempty=True),
        "base_url": Url(),
        "system_prompt": Str(),
        "append_system_prompt": Str(),
        "max_tokens": _POS_INT,
        "max_tool_rounds": _NONNEG_INT,
        "thinking_budget": _POS_INT,
        "reasoning_effort": Enum("minimal", "low", "medium", "high"),
        "timeouts": Table(
            {
                "connect": _SECONDS,
                "read": _SECONDS,
                "first_byte": _SECONDS,
                "idle": _SECONDS,
                "retry_wait_max": _NONNEG_SECONDS,
            }
        ),
        "retries": Table(
            {"max": _NONNEG_INT, "base_delay": _NONNEG_SECONDS, "max_delay": _NONNEG_SECONDS}
        ),
        "providers": Map(_PROVIDER, _PROVIDER_NAME, "a provider name (letters, digits, _ and -)"),
        "models": Map(
            Table(MODEL_FIELDS),
            LazyPattern(r"[A-Za-z0-9_-]+/[^\s/][^\s]*"),
            'a model name "provider/model" (quote it: [models."anthropic/claude-x"])',
        ),
        "tools": Table(
            {
                "timeout": _SECONDS,
                "timeouts": Map(_SECONDS, LazyPattern(r"[A-Za-z0-9_-]{1,64}"), "a tool name"),
            }
        ),
        "extensions": Extensions(),
        "session": Table(
            {
                "durability": Enum("fsync", "flush", "none"),
                "dir": Str(nonempty=True),
                "store": Enum("jsonl", "sqlite", "postgres"),
                "url": Str("a URL: sqlite:///path or postgresql://...", nonempty=True),
                "path": Str(nonempty=True),
            }
        ),
        "cache": Table({"enabled": Bool(), "ttl": Enum("5m", "1h")}),
        "mcp": Table(
            {
                "servers": Map(
                    Table(
                        {
                            "command": StrList("an array: the program and its arguments"),
                            "url": Str("a URL (streamable HTTP)", nonempty=True),
                            "env": Map(
                                Str(), LazyPattern(r"[A-Za-z_][A-Za-z0-9_]*"), "a variable name"
                            ),
                            "cwd": Str(nonempty=True),
                            "headers": Map(
                                Str(),
                                LazyPattern(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+"),
                                "an HTTP header name",
                            ),
                            "bearer_token_env": Str(
                                "the name of an environment variable", nonempty=True
                            ),
                            "enabled": Bool(),
                            "startup_timeout": _SECONDS,
                            "tool_timeout": _SECONDS,
                            "enabled_tools": StrList("an array of tool names"),
                            "disabled_tools": StrList("an array of tool names"),
                            "max_output": _POS_INT,
                        }
                    ),
                    _PROVIDER_NAME,
                    "a server name (letters, digits, _ and -)",
                )
            }
        ),
        "serve": Table(
            {
                "host": Str(nonempty=True),
                "port": Num(True, 0, maximum=65535),
                "drain_timeout": _NONNEG_SECONDS,
                "upstream_connections": _POS_INT,
                "roots": StrList("an array of directories"),
                "keys": Map(
                    Table(
                        {
                            "sha256": Str("64 hex digits (panto serve --hash-key)"),
                            "models": StrList(),
                        }
                    ),
                    _PROVIDER_NAME,
                    "a key name (letters, digits, _ and -)",
                ),
                "models": Map(
                    Table({"target": Str("provider/model", nonempty=True), "fallbacks": StrList()}),
                    LazyPattern(r"[^\s]+"),
                    "a model alias",
                ),
            }
        ),
        "skills": Table({"enabled": Bool(), "paths": StrList("an array of directories")}),
        "permissions": Table(
            {
                "mode": Enum(*PERMISSION_MODES),
                "allow": _RULES,
                "ask": _RULES,
                "deny": _RULES,
                "additional_directories": StrList("an array of directories"),
            }
        ),
        "compaction": Table(
            {
                "auto": Bool(),
                "threshold": Num(False, 0, strict=True, maximum=1),
                "reserve_tokens": _NONNEG_INT,
            }
        ),
        "sandbox": Table(
            {
                "mode": Enum("workspace-write", "read-only", "off"),
                "writable_roots": StrList("an array of directories"),
                "network": Bool(),
                "allow_git_writes": Bool(),
                "backend": Enum("auto", "bwrap", "landlock"),
            }
        ),
    }
)


@dataclass(frozen=True)
class Key:
    """One key that a ``Config`` attribute holds and/or an environment
    variable sets."""

    parts: tuple[str, ...]
    attr: str | None = None  # the Config attribute (None: handled specially)
    env: str | None = None  # the PANTO_* variable of the env layer


#: Every key a ``Config`` attribute holds, in documentation order (the order
#: of ``panto config``), with its environment variable.  One table.
KEYS: tuple[Key, ...] = (
    Key(("model",), None, "PANTO_MODEL"),
    Key(("base_url",), "base_url", "PANTO_BASE_URL"),
    Key(("system_prompt",), "system_prompt", "PANTO_SYSTEM_PROMPT"),
    Key(("append_system_prompt",), "append_system_prompt", "PANTO_APPEND_SYSTEM_PROMPT"),
    Key(("max_tokens",), "max_tokens", "PANTO_MAX_TOKENS"),
    Key(("max_tool_rounds",), "max_tool_rounds", "PANTO_MAX_TOOL_ROUNDS"),
    Key(("thinking_budget",), "thinking_budget", "PANTO_THINKING_BUDGET"),
    Key(("reasoning_effort",), "reasoning_effort", "PANTO_REASONING_EFFORT"),
    Key(("timeouts", "connect"), "connect_timeout", "PANTO_CONNECT_TIMEOUT"),
    Key(("timeouts", "read"), "read_timeout", "PANTO_READ_TIMEOUT"),
    Key(("timeouts", "first_byte"), "first_byte_timeout", "PANTO_FIRST_BYTE_TIMEOUT"),
    Key(("timeouts", "idle"), "idle_timeout", "PANTO_IDLE_TIMEOUT"),
    Key(("timeouts", "retry_wait_max"), "retry_wait_max", "PANTO_RETRY_WAIT_MAX"),
    Key(("retries", "max"), "max_retries", "PANTO_MAX_RETRIES"),
    Key(("retries", "base_delay"), "retry_base_delay"),
    Key(("retries", "max_delay"), "retry_max_delay"),
    Key(("tools", "timeout"), "tool_timeout", "PANTO_TOOL_TIMEOUT"),
    Key(("tools", "timeouts"), "tool_timeouts"),
    Key(("session", "durability"), "session_durability", "PANTO_SESSION_DURABILITY"),
    Key(("session", "dir"), "session_dir", "PANTO_SESSION_DIR"),
    Key(("session", "store"), "session_store"),
    Key(("session", "url"), "session_url", "PANTO_SESSION_URL"),
    Key(("session", "path"), "session_path"),
    Key(("permissions", "mode"), "permission_mode", "PANTO_PERMISSION_MODE"),
    Key(("cache", "enabled"), "cache_enabled", "PANTO_CACHE"),
    Key(("cache", "ttl"), "cache_ttl"),
    Key(("compaction", "auto"), "compaction_auto"),
    Key(("compaction", "threshold"), "compaction_threshold"),
    Key(("compaction", "reserve_tokens"), "compaction_reserve_tokens"),
    Key(("mcp", "servers"), "mcp_servers"),
    Key(("skills", "enabled"), "skills_enabled", "PANTO_SKILLS"),
    Key(("skills", "paths"), "skill_paths"),
    Key(("sandbox", "mode"), "sandbox_mode", "PANTO_SANDBOX"),
    Key(("sandbox", "writable_roots"), "sandbox_writable_roots"),
    Key(("sandbox", "network"), "sandbox_network"),
    Key(("sandbox", "allow_git_writes"), "sandbox_allow_git_writes"),
    Key(("sandbox", "backend"), "sandbox_backend", "PANTO_SANDBOX_BACKEND"),
    Key(("models",), "models"),
)

#: Environment variables of the ``env`` layer: variable -> dotted key parts.
ENV_VARS: dict[str, tuple[str, ...]] = {k.env: k.parts for k in KEYS if k.env}

#: ``Config`` attribute -> dotted key parts (the fields the TOML sets).
FIELD_KEYS: dict[str, tuple[str, ...]] = {k.attr: k.parts for k in KEYS if k.attr}


def spec_at(parts: Sequence[str]) -> Spec | None:
    """The spec of a dotted key (None: not in the schema)."""
    spec: Spec = SCHEMA
    for p in parts:
        nxt: Spec | None
        if isinstance(spec, Table):
            nxt = spec.fields.get(p)
        elif isinstance(spec, Map):
            nxt = spec.value
        elif isinstance(spec, Extensions):
            nxt = EXT_LISTS.get(p) or Spec()
        else:
            return None
        if nxt is None:
            return None
        spec = nxt
    return spec


# --------------------------------------------------------------------------
# keys an untrusted project may not set


@dataclass(frozen=True)
class TrustKey:
    """Project keys that only apply once the user trusts the project
    (``panto trust``): ``pattern`` is dotted key parts, ``*`` one part; a
    match covers everything under it.  ``safe`` (when given) says whether a
    value is harmless (it only tightens), and such a value applies anyway."""

    pattern: tuple[str, ...]
    reason: str
    safe: Callable[[Any], bool] | None = None


def _one_of(*values: Any) -> Callable[[Any], bool]:
    return lambda v: any(v is x or (type(v) is type(x) and v == x) for x in values)


def _always(v: Any) -> bool:
    return True


_TRAFFIC = "could send your requests and API key to another server"
_CODE = "would run code from the repository"
_LOOSER = "loosens what tools may do"

#: Every key of ``.panto/config.toml`` that can redirect traffic or
#: credentials, run code, or loosen permissions or the sandbox.  An untrusted
#: project's layer drops them (the first matching pattern decides) (``panto config`` lists what was dropped and
#: why); the rest (``model``, ``max_tokens``, ...) applies.  Patterns may name
#: keys the schema does not have yet: such a key is refused as unknown
#: anyway until it is added, and it is covered from the day it is.  A new key
#: that can do any of the above MUST be listed here (docs/security.md).
TRUST_KEYS: tuple[TrustKey, ...] = (
    TrustKey(("providers",), _TRAFFIC),  # base_url, api_key_env, api_key, headers
    TrustKey(("base_url",), _TRAFFIC),
    TrustKey(("session", "url"), "could store your conversations on another server"),
    TrustKey(("session", "dir"), "could write your conversations somewhere else"),
    TrustKey(("session", "path"), "could write your conversations somewhere else"),
    # [extensions]: only ``deny`` (it only turns things off) applies untrusted
    TrustKey(("extensions", "deny"), "", _always),
    TrustKey(("extensions", "allow"), "could switch on extensions you turned off"),
    TrustKey(("extensions", "rocks"), _CODE + " (luarocks installs)"),
    TrustKey(("extensions", "paths"), _CODE + " (Lua extensions)"),
    TrustKey(("extensions", "rock_servers"), "chooses where code is downloaded from"),
    TrustKey(("extensions", "*"), "settings that extension code acts on"),
    TrustKey(("mcp",), _CODE + " (MCP servers) or reach other servers"),
    TrustKey(("serve",), "could let others use your providers (keys, aliases)"),
    TrustKey(("skills", "paths"), "could put instructions from elsewhere in the system prompt"),
    TrustKey(("hooks",), _CODE + " (hook commands)"),
    # [permissions]: a project may add deny and ask rules, never allow
    TrustKey(("permissions", "allow"), "would let tools run without asking"),
    TrustKey(("permissions", "mode"), _LOOSER, _one_of("plan")),
    TrustKey(("permissions", "additional_directories"), _LOOSER),
    # [sandbox]: anything but tightening
    TrustKey(("sandbox", "mode"), _LOOSER, _one_of("read-only")),
    TrustKey(("sandbox", "writable_roots"), _LOOSER),
    TrustKey(("sandbox", "network"), _LOOSER, _one_of(False)),
    TrustKey(("sandbox", "allow_git_writes"), _LOOSER, _one_of(False)),
)
