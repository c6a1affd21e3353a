"""panto's Lua runtime (lupa, Lua 5.4): one long-lived state on its own
event-loop thread, exposed to the agent as the ``panto-lua`` tool source.

``import panto.lua`` is cheap; lupa loads when the runtime starts.
"""

from __future__ import annotations

from .loader import LoadReport, discover_sources, load_extensions
from .runtime import LuaRuntime, LuaScriptError, get_runtime, shutdown_runtime
from .source import HookDecision, LuaHooks, LuaToolSource

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
    config: dict | None = None,  # type: ignore[type-arg]
    default_timeout: float | None = None,
    runtime: LuaRuntime | None = None,
) -> tuple[LuaToolSource, LoadReport]:
    """The usual start-up: the process runtime, extensions loaded, a source.

    ``config`` is the merged config mapping; ``panto.config`` in Lua is a
    read-only view of it, ``[tools] timeout`` is the default per-call timeout
    and ``[tools.timeouts]`` per-tool ones.
    """
    rt = runtime or get_runtime()
    if config is not None:
        rt.set_config(config)
    report = load_extensions(rt, cwd=cwd, no_extensions=no_extensions, deny=deny, config=config)
    tools_cfg = (config or {}).get("tools", {}) if config else {}
    if default_timeout is None and isinstance(tools_cfg, dict):
        t = tools_cfg.get("timeout")
        default_timeout = float(t) if t is not None else None
    timeouts = tools_cfg.get("timeouts") if isinstance(tools_cfg, dict) else None
    src = LuaToolSource(
        rt,
        default_timeout=default_timeout,
        timeouts={k: float(v) for k, v in (timeouts or {}).items()},
    )
    return src, report
