"""Start-up without the Lua runtime: the built-in extensions' declarations
from a cache, the runtime started when a tool or command first runs.

Starting the runtime costs ~70 ms of CPU (asyncio, lupa, the runtime's
modules, evaluating and activating the sources), all of it before the first
request although a ``panto -p`` that calls no tool never needs it.  What the
first request does need of the extensions is static: the tool declarations,
the system-prompt parts (text ones), the slash commands.  So an eager load
records them (:func:`save`) in ``$XDG_CACHE_HOME/panto/extensions/KEY.json``
(``panto.startup_cache``)
and the next start-up with the same key uses them (:func:`cached_source`):
a :class:`LazyLuaToolSource` that offers the recorded declarations and
starts the real runtime (``panto.lua.create_source``: discovery, the
policy, evaluation, activation -- the same load as ever) on the first
``invoke_batch``, ``run_command`` or ``runtime``/``report`` access.

The key (:func:`startup_key`) is a hash of everything the load reads: the
content of every source, the code that runs them (the Lua package's files:
size and mtime), the ``[extensions]`` tables (the lists of every layer, the
per-entry settings ``activate`` gets) and the ``--deny`` globs.  Only the
built-in layer is ever deferred: with any user or project extension,
``paths`` or ``rocks`` configured there is no key and the runtime starts at
start-up as before (an extension of one's own may do more in ``activate``
than register, and must see it run when panto starts).  A load is
recorded only when it had no errors or warnings, registered no event
handlers (``session_start`` and ``user_message`` run before the first
request) and no system-prompt parts that are functions.
``PANTO_STARTUP_CACHE=0`` turns the cache off.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .. import startup_cache
from ..logs import get_logger
from ..tools import CancelToken, ToolCall, ToolDecl, ToolOutput, ToolSource, run_in_pool

if TYPE_CHECKING:
    from concurrent.futures import Executor

    from ..config import Config
    from .loader import LoadReport
    from .runtime import LuaRuntime
    from .source import LuaToolSource

__all__ = [
    "CACHE_VERSION",
    "KIND",
    "LazyLuaToolSource",
    "base_dirs",
    "cached_source",
    "save",
    "startup_key",
]

log = get_logger("panto.lua")

#: Bumped when the cache entry's shape changes.
CACHE_VERSION = 1
#: The ``panto.startup_cache`` kind of the entries.
KIND = "extensions"

_PKG_DIR = Path(__file__).resolve().parent
#: The code that evaluates and activates extensions: a change to any of it
#: (an editable install being worked on) changes the key.
_CODE = (
    "prelude.lua",
    "runtime.py",
    "host.py",
    "convert.py",
    "batteries.py",
    "loader.py",
    "source.py",
    "lazy.py",
)


def base_dirs() -> list[Path]:
    """The built-in layer's directories (``loader.base_dirs``, which this
    module does not import: the loader's import is part of what is saved)."""
    return [_PKG_DIR / "extensions", _PKG_DIR / "tools"]


def _lua_files(root: Path) -> list[Path]:
    """Every ``*.lua`` under ``root`` (modules a source requires included),
    sorted; dot entries skipped, like the loader's scan."""
    try:
        entries = sorted(os.scandir(root), key=lambda e: e.name)
    except OSError:
        return []
    out: list[Path] = []
    for e in entries:
        if e.name.startswith("."):
            continue
        if e.is_dir():
            out += _lua_files(Path(e.path))
        elif e.name.endswith(".lua") and e.is_file():
            out.append(Path(e.path))
    return out


def _code_stamp() -> list[Any]:
    # (not panto.__version__: from a source tree it costs an importlib.metadata
    # look-up; a reinstall changes these files' mtimes anyway)
    out: list[Any] = []
    for name in _CODE:
        try:
            st = os.stat(_PKG_DIR / name)
        except OSError:
            out.append(None)
        else:
            out.append((name, st.st_mtime_ns, st.st_size))
    return out


def startup_key(
    config: Config,
    *,
    cwd: str | None = None,
    no_extensions: bool = False,
    deny: Sequence[str] = (),
) -> str | None:
    """The cache key of this start-up's extension load, or None when it
    cannot be deferred (a source outside the built-in layer, rocks or
    paths configured, the cache turned off)."""
    if not startup_cache.enabled():
        return None
    if not no_extensions:
        if config.extension_rocks() or config.extension_paths(cwd):
            return None
        from ..config import trusted_project_dir
        from ..paths import user_config_dir

        dirs = [user_config_dir() / "extensions", user_config_dir() / "tools"]
        proj = trusted_project_dir(cwd, config=config)
        if proj is not None:
            dirs += [proj / "extensions", proj / "tools"]
        if any(_lua_files(d) for d in dirs):
            return None  # an extension of one's own: loaded at start-up
    parts: list[bytes] = []
    for d in base_dirs():
        for f in _lua_files(d):
            try:
                data = f.read_bytes()
            except OSError:
                return None
            parts += (f"{f}\0{len(data)}\0".encode(), data)
    meta = {
        "v": CACHE_VERSION,
        "code": _code_stamp(),
        "no_extensions": no_extensions,
        "deny": list(deny),
        "layers": [(el.layer, el.allow, el.deny) for el in config.extension_layers()],
        # what the built-in entries' ``activate`` gets: their
        # ``[extensions."std.x"]`` tables (they read nothing else of
        # ``panto.config``: tests/config/test_startup.py pins that)
        "settings": config.lua_view().get("extensions"),
    }
    import json

    parts.append(json.dumps(meta, sort_keys=True, default=repr).encode())
    return startup_cache.checksum(b"".join(parts))


def _decl_dict(d: ToolDecl) -> dict[str, Any]:
    return {"name": d.name, "description": d.description, "schema": d.schema, "timeout": d.timeout}


def save(key: str, source: LuaToolSource, report: LoadReport) -> bool:
    """Record what an eager load gave for ``key`` (when it may be deferred
    next time; see the module docstring).  True when written."""
    rt = source.runtime
    if report.errors or report.warnings:
        return False
    if any(rt.hooks.values()) or any(not isinstance(p, str) for _, p in rt.prompts):
        return False
    if rt.providers:  # a provider must be registered before the model resolves
        return False
    doc = {
        "v": CACHE_VERSION,
        "decls": [_decl_dict(d) for d in source.decls()],
        "commands": source.commands(),
        "prompts": [list(p) for p in source.prompt_parts()],
        "entries": report.active,
    }
    return startup_cache.write(KIND, key, doc)


def cached_source(
    key: str, start: Callable[[], tuple[LuaToolSource, LoadReport]]
) -> LazyLuaToolSource | None:
    """A :class:`LazyLuaToolSource` from the cache entry of ``key`` (None
    when there is none, or it does not parse); ``start`` loads for real."""
    doc = startup_cache.read(KIND, key)
    if not isinstance(doc, dict) or doc.get("v") != CACHE_VERSION:
        return None
    try:
        decls = [
            ToolDecl(d["name"], d["description"], d["schema"], d["timeout"]) for d in doc["decls"]
        ]
        commands = {str(k): str(v) for k, v in doc["commands"].items()}
        prompts = [(str(o), str(t)) for o, t in doc["prompts"]]
    except (KeyError, TypeError, ValueError, AttributeError) as e:
        log.debug("extension cache %s unusable: %s", key, e)
        return None
    return LazyLuaToolSource(key, decls, commands, prompts, start)


class _LazyHooks:
    """``LuaToolSource.hooks`` of a source not started yet: the recorded load
    registered no handlers, so until it starts every event is a no-op."""

    def __init__(self, owner: LazyLuaToolSource) -> None:
        self._owner = owner

    def _real(self) -> Any:
        src = self._owner.started
        return src.hooks if src is not None else None

    def session_start(self, info: Mapping[str, Any] | None = None) -> None:
        h = self._real()
        if h is not None:
            h.session_start(info)

    def user_message(self, text: str) -> str:
        h = self._real()
        return h.user_message(text) if h is not None else text

    def before_tool_call(self, call: ToolCall) -> Any:
        h = self._real()
        if h is not None:
            return h.before_tool_call(call)
        from ..hooks import ToolCallDecision

        return ToolCallDecision(call)

    def after_tool_call(self, call: ToolCall, output: ToolOutput) -> ToolOutput:
        h = self._real()
        return h.after_tool_call(call, output) if h is not None else output

    def turn_end(self, info: Mapping[str, Any] | None = None) -> None:
        h = self._real()
        if h is not None:
            h.turn_end(info)

    def before_compact(self, info: Mapping[str, Any] | None = None) -> str | None:
        h = self._real()
        return h.before_compact(info) if h is not None else None

    def wants(self, event: str) -> bool:
        h = self._real()
        return h.wants(event) if h is not None else False

    def before_request(self, request: Mapping[str, Any]) -> Mapping[str, Any] | None:
        h = self._real()
        return h.before_request(request) if h is not None else None

    def after_response(self, info: Mapping[str, Any] | None = None) -> None:
        h = self._real()
        if h is not None:
            h.after_response(info)


class LazyLuaToolSource(ToolSource):
    """The ``panto-lua`` source before its runtime starts: the recorded
    declarations, commands and prompt parts; the first tool call (or
    command, or a look at ``runtime``/``report``) starts the runtime and
    from then on everything is the real :class:`LuaToolSource`'s."""

    name = "panto-lua"

    def __init__(
        self,
        key: str,
        decls: Sequence[ToolDecl],
        commands: Mapping[str, str],
        prompts: Sequence[tuple[str, str]],
        start: Callable[[], tuple[LuaToolSource, LoadReport]],
    ) -> None:
        self.key = key
        self._decls = list(decls)
        self._commands = dict(commands)
        self._prompts = list(prompts)
        self._start = start
        self._lock = threading.Lock()
        self._real: LuaToolSource | None = None
        self._report: LoadReport | None = None
        self.hooks = _LazyHooks(self)
        #: passed on to the real source (``LuaToolSource.escalate``)
        self.escalate: Callable[[ToolCall, ToolOutput], bool] | None = None
        self.sandbox_mode: Callable[[], str | None] | None = None

    @property
    def started(self) -> LuaToolSource | None:
        """The real source once the runtime has started, else None."""
        return self._real

    def start(self) -> LuaToolSource:
        """Start the runtime and load the extensions (once; thread-safe).
        Raises what ``panto.lua.create_source`` raises."""
        real = self._real
        if real is not None:
            return real
        with self._lock:
            if self._real is None:
                src, report = self._start()
                got = [_decl_dict(d) for d in src.decls()]
                if got != [_decl_dict(d) for d in self._decls] or report.errors:
                    # the recorded load is out of date: the next start-up loads eagerly
                    log.warning(
                        "the Lua extensions' tools differ from the start-up cache "
                        "(%s); it is dropped",
                        "; ".join(report.errors) or "declarations changed",
                    )
                    startup_cache.remove(KIND, self.key)
                self._report = report
                self._real = src
            return self._real

    @property
    def runtime(self) -> LuaRuntime:
        return self.start().runtime

    @property
    def report(self) -> LoadReport:
        self.start()
        assert self._report is not None
        return self._report

    def decls(self) -> Sequence[ToolDecl]:
        real = self._real
        return real.decls() if real is not None else list(self._decls)

    def invoke_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput]:
        try:
            real = self.start()
        except Exception as e:  # noqa: BLE001 - lupa broken: every call fails, panto goes on
            msg = f"the Lua runtime could not start: {e}"
            return [ToolOutput(msg, True) for _ in calls]
        real.escalate = self.escalate
        real.sandbox_mode = self.sandbox_mode
        return real.invoke_batch(calls)

    async def ainvoke_batch(
        self,
        calls: Sequence[ToolCall],
        tokens: Sequence[CancelToken],
        *,
        executor: Executor | None = None,
    ) -> list[ToolOutput | None]:
        real = self._real
        if real is None:
            try:  # starting loads the extensions: not on the caller's loop
                real = await run_in_pool(executor, self.start)
            except Exception as e:  # noqa: BLE001 - lupa broken: every call fails, panto goes on
                msg = f"the Lua runtime could not start: {e}"
                return [ToolOutput(msg, True) for _ in calls]
        real.escalate = self.escalate
        real.sandbox_mode = self.sandbox_mode
        return await real.ainvoke_batch(calls, tokens, executor=executor)

    def cancel(self) -> None:
        real = self._real
        if real is not None:
            real.cancel()

    def prompt_parts(self, info: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
        real = self._real
        return real.prompt_parts(info) if real is not None else list(self._prompts)

    def commands(self) -> dict[str, str]:
        real = self._real
        return real.commands() if real is not None else dict(self._commands)

    def run_command(self, name: str, args: str = "") -> str:
        return self.start().run_command(name, args)
