"""panto's Lua runtime (lupa, Lua 5.4): one long-lived state on its own
event-loop thread, exposed to the agent as the ``panto-lua`` tool source.

``import panto.lua`` is cheap; lupa loads when the runtime starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .loader import LoadReport, discover_sources, load_extensions
from .runtime import LuaRuntime, LuaScriptError, get_runtime, shutdown_runtime
from .source import HookDecision, LuaHooks, LuaToolSource

if TYPE_CHECKING:
    from ..config import Config

__all__ = [
    "LuaRuntime",
    "LuaScriptError",
    "LuaToolSource",
    "LuaHooks",
    "HookDecision",
    "LoadReport",
    "get_runtime",
    "shutdown_runtime",
    "load_extensions",
    "discover_sources",
    "create_source",
]


def create_source(
    *,
    cwd: str | None = None,
    no_extensions: bool = False,
    deny: tuple[str, ...] | list[str] = (),
    config: Config | dict | None = None,  # type: ignore[type-arg]
    default_timeout: float | None = None,
    runtime: LuaRuntime | None = None,
    sync_rocks: bool = True,
) -> tuple[LuaToolSource, LoadReport]:
    """The usual start-up: the process runtime, extensions loaded, a source.

    ``config`` is the layered :class:`panto.config.Config` (None: loaded for
    ``cwd``): its ``[extensions]`` policy, paths and rocks decide what
    loads, ``panto.config`` in Lua is a read-only view of it (never an API
    key), ``[tools] timeout`` is the default per-call timeout and
    ``[tools.timeouts]`` per-tool ones.  A plain mapping (the older form) is
    used as the ``panto.config`` view and for per-entry settings and tool
    timeouts, on top of the layered config.
    """
    from .loader import resolve_config

    rt = runtime or get_runtime()
    cfg, legacy = resolve_config(config, cwd)
    rt.set_config(legacy if legacy is not None else cfg.lua_view())
    report = load_extensions(
        rt,
        cwd=cwd,
        no_extensions=no_extensions,
        deny=deny,
        config=config if legacy is not None else cfg,
        sync_rocks=sync_rocks,
    )
    timeouts: dict[str, float] = dict(cfg.tool_timeouts)
    timeout = cfg.tool_timeout
    tools_cfg = legacy.get("tools") if legacy is not None else None
    if isinstance(tools_cfg, dict):
        t = tools_cfg.get("timeout")
        timeout = float(t) if t is not None else timeout
        timeouts.update({k: float(v) for k, v in (tools_cfg.get("timeouts") or {}).items()})
    if default_timeout is None:
        default_timeout = timeout
    src = LuaToolSource(rt, default_timeout=default_timeout, timeouts=timeouts)
    return src, report
