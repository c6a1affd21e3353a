"""What an MCP server is, as panto's config and ``.mcp.json`` describe it."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import ConfigError

__all__ = [
    "DEFAULT_MAX_OUTPUT",
    "DEFAULT_STARTUP_TIMEOUT",
    "DEFAULT_TOOL_TIMEOUT",
    "ServerSpec",
    "read_mcp_json",
    "specs_from_config",
]

DEFAULT_STARTUP_TIMEOUT = 30.0
DEFAULT_TOOL_TIMEOUT = 60.0
#: Characters of a tool's output the model gets (about 25k tokens).
DEFAULT_MAX_OUTPUT = 100_000


@dataclass(frozen=True)
class ServerSpec:
    """One server: ``command`` (stdio: the program and its arguments) or
    ``url`` (streamable HTTP)."""

    name: str
    command: tuple[str, ...] = ()
    url: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict, repr=False)
    bearer_token_env: str | None = None
    enabled: bool = True
    startup_timeout: float = DEFAULT_STARTUP_TIMEOUT
    tool_timeout: float = DEFAULT_TOOL_TIMEOUT
    enabled_tools: tuple[str, ...] | None = None
    disabled_tools: tuple[str, ...] = ()
    max_output: int = DEFAULT_MAX_OUTPUT
    #: where it was configured (a config file, ``.mcp.json``)
    origin: str = ""

    def digest(self) -> str:
        """A key of everything that decides which tools the server offers
        (the tool-list cache is kept per key)."""
        d = {
            "command": list(self.command),
            "url": self.url,
            "env": dict(sorted(self.env.items())),
            "cwd": self.cwd,
        }
        return hashlib.sha256(json.dumps(d, sort_keys=True).encode()).hexdigest()[:16]

    def wants(self, tool: str) -> bool:
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools

    def describe(self) -> str:
        return self.url if self.url else " ".join(self.command)


def _spec(name: str, t: Mapping[str, Any], origin: str) -> ServerSpec:
    command = t.get("command")
    if isinstance(command, str):  # .mcp.json: "command": "npx", "args": [...]
        command = [command, *[str(a) for a in t.get("args") or []]]
    url = t.get("url")
    if not command and not url:
        raise ConfigError(f"{origin}: mcp server {name!r}: needs `command` (stdio) or `url` (HTTP)")
    if command and url:
        raise ConfigError(f"{origin}: mcp server {name!r}: give `command` or `url`, not both")
    enabled_tools = t.get("enabled_tools")
    return ServerSpec(
        name=name,
        command=tuple(str(c) for c in command or ()),
        url=str(url) if url else None,
        env={str(k): str(v) for k, v in (t.get("env") or {}).items()},
        cwd=t.get("cwd"),
        headers={str(k): str(v) for k, v in (t.get("headers") or {}).items()},
        bearer_token_env=t.get("bearer_token_env"),
        enabled=bool(t.get("enabled", True)),
        startup_timeout=float(t.get("startup_timeout", DEFAULT_STARTUP_TIMEOUT)),
        tool_timeout=float(t.get("tool_timeout", DEFAULT_TOOL_TIMEOUT)),
        enabled_tools=tuple(enabled_tools) if enabled_tools is not None else None,
        disabled_tools=tuple(t.get("disabled_tools") or ()),
        max_output=int(t.get("max_output", DEFAULT_MAX_OUTPUT)),
        origin=origin,
    )


def specs_from_config(
    servers: Mapping[str, Mapping[str, Any]], origin: str = "config"
) -> list[ServerSpec]:
    """``[mcp.servers.NAME]`` tables (validated by the config schema)."""
    return [_spec(name, t, origin) for name, t in servers.items()]


def read_mcp_json(path: Path) -> list[ServerSpec]:
    """The ``mcpServers`` of a project's ``.mcp.json`` (Claude Code's
    format); ``[]`` when there is none.  Raises ``ConfigError`` naming the
    file when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    except OSError as e:
        raise ConfigError(f"{path}: cannot read it ({e.strerror or e})") from e
    try:
        data = json.loads(text)
    except ValueError as e:
        raise ConfigError(f"{path}: not valid JSON ({e})") from e
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if servers is None:
        return []
    if not isinstance(servers, dict) or not all(isinstance(v, dict) for v in servers.values()):
        raise ConfigError(f"{path}: mcpServers: expected an object of server objects")
    out = []
    for name, t in servers.items():
        t = dict(t)
        if t.get("type") in ("sse",):
            raise ConfigError(
                f"{path}: mcp server {name!r}: the legacy SSE transport is not supported; use streamable HTTP (`url`)"
            )
        if "disabled" in t:
            t["enabled"] = not t.pop("disabled")
        problem = _json_server_problem(t)
        if problem is None:
            try:
                out.append(_spec(name, t, str(path)))
            except (TypeError, ValueError) as e:  # a number that is not one, ...
                problem = f"a value of the wrong type ({e})"
        if problem is not None:
            raise ConfigError(f"{path}: mcp server {name!r}: {problem}")
    return out


#: the keys of a ``.mcp.json`` server and what each must be (the file is
#: not read through the config schema)
_JSON_KEYS: dict[str, tuple[type, ...]] = {
    "command": (str, list),
    "args": (list,),
    "url": (str,),
    "cwd": (str,),
    "env": (dict,),
    "headers": (dict,),
}


def _json_server_problem(t: Mapping[str, Any]) -> str | None:
    """What is wrong with one ``.mcp.json`` server's keys, or None."""
    names = {str: "a string", list: "an array of strings", dict: "an object"}
    for key, kinds in _JSON_KEYS.items():
        v = t.get(key)
        if v is None:
            continue
        if not isinstance(v, kinds) or (
            isinstance(v, list) and not all(isinstance(a, str) for a in v)
        ):
            expected = " or ".join(names[k] for k in kinds)
            return f"`{key}`: expected {expected}, got {json.dumps(v)}"
    return None


def expand_env(value: str, env: Mapping[str, str] | None = None) -> str:
    """``${VAR}`` in a header or argument, from the environment."""
    env = os.environ if env is None else env
    return os.path.expandvars(value) if env is os.environ else _expand(value, env)


def _expand(value: str, env: Mapping[str, str]) -> str:
    import re

    return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}", lambda m: env.get(m.group(1), ""), value)
