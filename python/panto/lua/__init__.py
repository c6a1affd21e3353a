"""panto's Lua runtime (lupa, Lua 5.4): one long-lived state on its own
event-loop thread, exposed to the agent as the ``panto-lua`` tool source.

``import panto.lua`` is cheap: its names are imported on first use (PEP 562)
and lupa (with asyncio) loads when the runtime starts.  ``create_source``
starts it; ``panto.lua.lazy`` starts without it when the extensions'
declarations are known from the start-up cache.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..config import Config
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

# public name -> submodule that defines it
_LAZY = {
    "LuaRuntime": "runtime",
    "LuaScriptError": "runtime",
    "get_runtime": "runtime",
    "shutdown_runtime": "runtime",
    "LoadReport": "loader",
    "discover_sources": "loader",
    "load_extensions": "loader",
    "LuaToolSource": "source",
    "LuaHooks": "source",
    "HookDecision": "source",
}


def __getattr__(name: str) -> Any:
    mod = _LAZY.get(name)
    if mod is None:
        raise AttributeError(f"module 'panto.lua' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f".{mod}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def create_source(
    config: Config,
    *,
    cwd: str | None = None,
    no_extensions: bool = False,
    deny: tuple[str, ...] | list[str] = (),
    default_timeout: float | None = None,
    runtime: LuaRuntime | None = None,
    sync_rocks: bool = True,
) -> tuple[LuaToolSource, LoadReport]:
    """The usual start-up: the process runtime, extensions loaded, a source.

    ``config`` is the layered :class:`panto.config.Config`, used as is (it is
    never re-read): its ``[extensions]`` policy, paths and rocks decide what
    loads, ``[extensions."NAME"]`` tables are passed to ``activate``,
    ``panto.config`` in Lua is its read-only :meth:`~panto.config.Config.lua_view`
    (never an API key), ``[tools] timeout`` is the default per-call timeout
    and ``[tools.timeouts]`` per-tool ones (``default_timeout`` overrides the
    former); ``[sandbox]`` confines the processes tool calls start, with
    ``cwd`` as the workspace.
    """
    from ..policy.sandbox import Sandbox
    from .loader import load_extensions
    from .runtime import get_runtime
    from .source import LuaToolSource

    rt = runtime or get_runtime()
    rt.set_config(config.lua_view())
    sandbox = Sandbox.from_config(config, cwd)
    report = load_extensions(
        rt,
        cwd=cwd,
        no_extensions=no_extensions,
        deny=deny,
        config=config,
        sync_rocks=sync_rocks,
    )
    if default_timeout is None:
        default_timeout = config.tool_timeout
    src = LuaToolSource(
        rt,
        default_timeout=default_timeout,
        timeouts=dict(config.tool_timeouts),
        cwd=cwd,
        sandbox=sandbox,
    )
    return src, report
