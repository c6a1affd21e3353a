"""MCP servers as a tool source (the official ``mcp`` SDK, imported only
when a server is configured).  See docs/mcp.md."""

from __future__ import annotations

from .names import normalize_schema, tool_name
from .spec import ServerSpec, read_mcp_json, specs_from_config

__all__ = [
    "ServerSpec",
    "normalize_schema",
    "open_source",
    "read_mcp_json",
    "specs_from_config",
    "tool_name",
]


def open_source(specs, *, env=None, notify=None):  # type: ignore[no-untyped-def]
    """An ``MCPToolSource`` for ``specs`` (its connections start in the
    background), with the tool-list cache and server logs in panto's dirs."""
    from ..paths import xdg_cache_home
    from .source import MCPToolSource

    root = xdg_cache_home(env) / "panto" / "mcp"
    return MCPToolSource(specs, cache_dir=root, log_dir=root / "logs", env=env, notify=notify)
