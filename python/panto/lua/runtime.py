"""The process-wide Lua runtime: one ``lupa.lua54`` state on a dedicated
thread that owns an asyncio event loop (uvloop when installed).

All Lua code runs on that thread.  Every tool call, command, event handler,
extension activation and script is a Lua coroutine wrapped in ``xpcall`` and
driven from Python: when Lua yields a tagged request (an ``Op``), the driver
awaits it on the loop and resumes the coroutine with the result.  Public
methods may be called from any thread; they are marshalled onto the loop with
``asyncio.run_coroutine_threadsafe``.

A handler that never yields (pure compute, a blocking C call) blocks every
other coroutine until it returns: the runtime is cooperative.
"""

from __future__ import annotations

import asyncio
import atexit
import concurrent.futures
import contextlib
import functools
import json
import os
import threading
import weakref
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from ..conversation import Image
from ..errors import ExtensionError, ToolError
from ..hooks import HOOK_EVENTS
from ..logs import get_logger
from ..paths import LUA_VERSION, panto_home, rocks_tree
from ..tools import TOOL_NAME_RE, CancelToken, ToolCall, ToolDecl, ToolOutput
from . import procs
from .batteries import Multi, Op
from .control import (
    Control,
    LuaInterrupted,
    LuaScriptError,
    call_sandbox,
    call_tasks,
    current_control,
    current_entry,
    evaluating,
    reset_control,
    set_control,
)
from .convert import Converter, describe, text
from .host import make_host

__all__ = [
    "LuaRuntime",
    "LuaScriptError",
    "LuaInterrupted",
    "LuaTool",
    "LuaCommand",
    "HOOK_EVENTS",
    "get_runtime",
    "shutdown_runtime",
    "panto_home",
    "rocks_tree",
    "LUA_VERSION",
]

log = get_logger("panto.lua")
T = TypeVar("T")

_PKG_DIR = Path(__file__).resolve().parent

_promoted = False


def _promote_lupa_symbols() -> None:
    """Make lupa's Lua C API visible to C modules loaded by ``require``."""
    global _promoted
    if _promoted:
        return
    import sys

    if "lupa.lua54" not in sys.modules and hasattr(sys, "setdlopenflags"):
        # loaded RTLD_GLOBAL in the first place (lupa's allow_lua_module_loading):
        # no ctypes (~3 ms of start-up)
        import lupa  # noqa: F401 - the package loads no Lua library itself

        flags = sys.getdlopenflags()
        sys.setdlopenflags(os.RTLD_NOW | os.RTLD_GLOBAL)
        try:
            import lupa.lua54  # noqa: F401
        finally:
            sys.setdlopenflags(flags)
        _promoted = True
        return
    import ctypes

    import lupa.lua54

    try:
        ctypes.CDLL(
            lupa.lua54.__file__,
            mode=os.RTLD_NOW | os.RTLD_GLOBAL | getattr(os, "RTLD_NOLOAD", 0),
        )
    except OSError as e:  # pragma: no cover - platform specific
        log.warning("could not promote lupa's Lua symbols (C modules will not load): %s", e)
    _promoted = True


@dataclass
class LuaTool:
    decl: ToolDecl
    handler: Any  # a Lua function
    entry: str | None


@dataclass
class LuaCommand:
    name: str
    description: str
    handler: Any
    entry: str | None


@dataclass
class _Hook:
    fn: Any
    entry: str | None


@dataclass(eq=False)
class _Batch:
    tasks: list[asyncio.Task[ToolOutput]] = field(default_factory=list)
    cancelled: bool = False
    control: Control = field(default_factory=lambda: Control("tool batch"))


class LuaRuntime:
    """One Lua state (with its registry of tools, commands, hooks and prompt
    parts) on an event loop thread.  Use ``get_runtime()`` for the
    process-wide instance.  ``loop_of=other`` makes a state of its own on
    ``other``'s loop thread instead of starting one (``panto.app.Host``: one
    state per extension set, one thread for all); separate instances with
    threads of their own exist for tests and benches."""

    #: seconds an extension source may take to evaluate, and an entry to activate
    load_timeout: float | None = 60.0
    #: seconds an event handler may take
    hook_timeout: float | None = 30.0
    #: the control of the coroutine being resumed right now (the count hook polls it)
    _active: Control | None = None

    def __init__(
        self,
        *,
        use_uvloop: bool = True,
        interpreter: bool = False,
        config: Mapping[str, Any] | None = None,
        thread_name: str = "panto-lua",
        loop_of: LuaRuntime | None = None,
    ) -> None:
        self.interpreter = interpreter
        self.tools: dict[str, LuaTool] = {}
        self.commands: dict[str, LuaCommand] = {}
        self.hooks: dict[str, list[_Hook]] = {e: [] for e in HOOK_EVENTS}
        #: ``panto.ext.system_prompt`` parts: (entry, text) or (entry, Lua function)
        self.prompts: list[tuple[str | None, Any]] = []
        #: ``panto.provider.register``: provider name -> entry
        self.providers: dict[str, str | None] = {}
        self.processes: set[procs.Process] = set()
        self._batches: set[_Batch] = set()
        self._http: Any = None
        self._closed = False
        self._lua_paths: list[str] = []
        self._lua_cpaths: list[str] = []
        #: entry name -> where it came from (a file, a rock), for messages
        self.entry_origins: dict[str, str] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._init_error: BaseException | None = None
        #: the runtime whose loop thread this one runs on (None: its own)
        self._host = loop_of
        #: the tasks ``submit`` started (a guest cancels only its own)
        self._tasks: set[asyncio.Task[Any]] = set()
        if loop_of is not None:
            if loop_of.closed:
                raise ExtensionError("the Lua runtime to share a loop with is closed")
            self._loop, self._thread = loop_of.loop, loop_of._thread  # noqa: SLF001 - same class
            try:
                asyncio.run_coroutine_threadsafe(self._init_async(), self._loop).result()
            except BaseException as e:  # noqa: BLE001 - reported below
                self._init_error = e
        else:
            ready = threading.Event()
            self._thread = threading.Thread(
                target=self._thread_main, args=(ready, use_uvloop), name=thread_name, daemon=True
            )
            self._thread.start()
            ready.wait()
        if self._init_error is not None:
            e = self._init_error
            if isinstance(e, ImportError):
                msg = (
                    f"the Lua runtime needs lupa, which is not loadable ({e}); "
                    "reinstall panto (`pip install panto` brings lupa)"
                )
            else:
                msg = f"could not start the Lua runtime: {e}"
            raise ExtensionError(msg) from e
        if config is not None:
            self.set_config(config)

    # ------------------------------------------------------------------
    # thread plumbing

    def _thread_main(self, ready: threading.Event, use_uvloop: bool) -> None:
        loop: asyncio.AbstractEventLoop | None = None
        if use_uvloop:
            try:
                import uvloop

                loop = uvloop.new_event_loop()
            except ImportError:
                loop = None
        if loop is None:
            loop = asyncio.new_event_loop()
        asyncio.set_event_loop(loop)
        self._loop = loop
        try:
            self._init_lua()
        except BaseException as e:  # noqa: BLE001 - reported to the creator
            self._init_error = e
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    async def _init_async(self) -> None:
        self._init_lua()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        assert self._loop is not None
        return self._loop

    @property
    def closed(self) -> bool:
        return self._closed

    def on_loop_thread(self) -> bool:
        return threading.current_thread() is self._thread

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Schedule ``coro`` on the runtime's loop; returns a thread-safe future."""
        if self._closed:
            coro.close()
            raise ExtensionError("the Lua runtime is closed")
        return asyncio.run_coroutine_threadsafe(self._tracked(coro), self.loop)

    async def _tracked(self, coro: Coroutine[Any, Any, T]) -> T:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            return await coro
        finally:
            self._tasks.discard(task)

    def run(
        self, coro: Coroutine[Any, Any, T], timeout: float | None = None, *, what: str = "Lua code"
    ) -> T:
        """Run ``coro`` on the loop and wait for it (not from the loop thread).

        If the wait is interrupted (Ctrl-C's KeyboardInterrupt, ``timeout``),
        the Lua code it ran is interrupted too -- even code that never
        yields -- and the exception propagates."""
        if self.on_loop_thread():
            coro.close()
            raise RuntimeError("LuaRuntime.run called from the Lua thread: await instead")
        ctl = Control(what)
        fut = self.submit(_under(ctl, coro))
        try:
            return fut.result(timeout)
        except concurrent.futures.TimeoutError:
            ctl.cancel(f"timed out after {timeout:g} s")
            fut.cancel()
            raise
        except BaseException as e:
            if not fut.done():
                ctl.cancel("interrupted" if isinstance(e, KeyboardInterrupt) else "cancelled")
                fut.cancel()
            raise

    def call(self, fn: Callable[..., T], *args: Any) -> T:
        """Call a plain function on the loop thread and wait for its result."""
        if self.on_loop_thread():
            return fn(*args)

        async def _c() -> T:
            return fn(*args)

        return self.run(_c())

    def close(self, timeout: float = 5.0) -> None:
        """Cancel running work, kill spawned process groups, stop the loop."""
        if self._closed or self._loop is None or self._loop.is_closed():
            self._closed = True
            return
        if self.on_loop_thread():
            raise RuntimeError("LuaRuntime.close called from the Lua thread")
        with contextlib.suppress(Exception):
            self.run(self._shutdown(), timeout)
        self._closed = True
        self._drop_providers()  # a closed state serves no provider
        if self._host is not None:  # a guest: the loop thread is its host's
            self._clear_registry()
            return
        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout)
        if not self._thread.is_alive():
            self._clear_registry()

    def _clear_registry(self) -> None:
        # drop every Lua reference before the state itself
        self.tools.clear()
        self.commands.clear()
        self.prompts.clear()
        for hs in self.hooks.values():
            hs.clear()
        self._drop_providers()

    def _drop_providers(self) -> None:
        if self.providers:
            from ..config.ext_providers import unregister

            unregister(id(self))
            self.providers.clear()

    async def _shutdown(self) -> None:
        for b in list(self._batches):
            b.cancelled = True
            for t in b.tasks:
                t.cancel()
        me = asyncio.current_task()
        # a guest cancels its own work only: the loop runs other states' too
        tasks = self._tasks if self._host is not None else asyncio.all_tasks()
        others = [t for t in tasks if t is not me and not t.done()]
        for t in others:
            t.cancel()
        if others:
            await asyncio.wait(others, timeout=3.0)
        running = list(self.processes)
        if running:
            await asyncio.gather(*(p.kill(0.2) for p in running), return_exceptions=True)
        if self._http is not None:
            with contextlib.suppress(Exception):
                await self._http.aclose()
            self._http = None

    def __enter__(self) -> LuaRuntime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------
    # Lua state

    def _init_lua(self) -> None:
        _promote_lupa_symbols()
        import lupa.lua54 as lupa54

        self._lupa = lupa54
        lua = lupa54.LuaRuntime(
            encoding=None,
            unpack_returned_tuples=True,
            register_eval=False,
            register_builtins=False,
        )
        self.lua = lua
        g = lua.globals()
        g.python = None
        lua.execute(b"package.loaded.python = nil")
        host = make_host(self)
        prelude = (_PKG_DIR / "prelude.lua").read_bytes()
        loader = lua.eval(b"function(src, name) return assert(load(src, name, 't')) end")
        self.rt = loader(prelude, b"@" + str(_PKG_DIR / "prelude.lua").encode())(host)
        self._null = self.rt.null
        self._objects = self.rt.objects
        self.converter = Converter(self.rt, lua.table_from, lupa54.lua_type)
        tree = rocks_tree()
        self._lua_paths = [
            f"{tree}/share/lua/5.4/?.lua",
            f"{tree}/share/lua/5.4/?/init.lua",
        ]
        self._lua_cpaths = [f"{tree}/lib/lua/5.4/?.so"]
        if self.interpreter:
            self._lua_paths += ["./?.lua", "./?/init.lua"]
            self._lua_cpaths += ["./?.so"]
            # a real interpreter: os.exit works (the CLI exits through it)
            lua.execute(b"local rt = ... ; os.exit = rt.real_exit", self.rt)
        self._apply_paths()

    def _apply_paths(self) -> None:
        pkg = self.lua.globals().package
        pkg.path = ";".join(self._lua_paths).encode()
        pkg.cpath = ";".join(self._lua_cpaths).encode()

    def add_lua_path(self, directory: str | os.PathLike[str]) -> None:
        """Let ``require`` find modules in ``directory`` (``?.lua``, ``?/init.lua``)."""
        d = str(directory)

        def _add() -> None:
            for pat in (f"{d}/?.lua", f"{d}/?/init.lua"):
                if pat not in self._lua_paths:
                    self._lua_paths.insert(0, pat)
            self._apply_paths()

        self.call(_add)

    @property
    def package_path(self) -> str:
        return self.call(lambda: text(self.lua.globals().package.path))

    @property
    def package_cpath(self) -> str:
        return self.call(lambda: text(self.lua.globals().package.cpath))

    def set_config(self, config: Mapping[str, Any]) -> None:
        """Replace the read-only ``panto.config`` view."""
        self._config = dict(config)
        self.call(lambda: self.rt.set_config(self.to_lua(self._config, drop_null=True)))

    # ------------------------------------------------------------------
    # conversion (loop thread only)

    def to_lua(self, v: Any, *, drop_null: bool = False) -> Any:
        return self.converter.to_lua(v, drop_null=drop_null)

    def from_lua(self, v: Any) -> Any:
        return self.converter.from_lua(v)

    # ------------------------------------------------------------------
    # the driver

    async def drive(self, fn: Any, *args: Any, convert: Callable[[Any], Any] | None = None) -> Any:
        """Run Lua ``fn(*args)`` as a coroutine until it finishes; return its
        result (a tuple when it returns several values), passed through
        ``convert`` while the coroutine is still alive (Lua values must not
        outlive it: convert them to Python here).  Cancelling the awaiting
        task closes the coroutine (its ``<close>`` handlers run)."""
        ctl = current_control()
        co = fn.coroutine(*args)
        try:
            res = self._resume(co, ctl, None)
            while co:
                if type(res) is tuple and len(res) == 2 and isinstance(res[1], Op):
                    try:
                        value = await res[1].run()
                    except asyncio.CancelledError:
                        raise
                    except Exception as e:  # noqa: BLE001 - becomes a Lua error
                        res = self._resume(co, ctl, (False, describe(e).encode()))
                        continue
                    if isinstance(value, Multi):
                        res = self._resume(co, ctl, (True, *value))
                    else:
                        res = self._resume(co, ctl, (True, value))
                else:
                    # a bare coroutine.yield(): let others run, then resume
                    await asyncio.sleep(0)
                    res = self._resume(co, ctl, None)
            return convert(res) if convert is not None else res
        except BaseException:
            if co:
                try:
                    self.rt.close(co)
                except Exception as e:  # noqa: BLE001
                    log.warning("closing a cancelled Lua coroutine failed: %s", e)
            raise

    def _resume(self, co: Any, ctl: Control | None, value: Any) -> Any:
        """One ``co.send(value)`` under ``ctl`` (what the count hook polls);
        raises LuaInterrupted when ``ctl`` was cancelled or expired meanwhile."""
        prev, self._active = self._active, ctl
        try:
            res = co.send(value)
        except StopIteration:
            res = None
        finally:
            self._active = prev
        if ctl is not None:
            stop = ctl.check()
            if stop is not None:
                raise stop
        return res

    def poll(self) -> bytes | None:
        """The count hook's question (Lua thread): must the running coroutine stop?"""
        ctl = self._active
        if ctl is None:
            return None
        stop = ctl.check()
        return None if stop is None else str(stop).encode()

    def _tool_output(self, res: Any, name: str = "?") -> ToolOutput:
        """``rt.run_tool``'s (content, is_error[, images[, traceback]]) as a
        ToolOutput.  An unexpected error (a traceback) reaches the model as
        one line, ``tool NAME failed: MESSAGE``; the traceback, which names
        panto's install path, goes to the log (``--debug``)."""
        if not isinstance(res, tuple):
            res = (res,)
        content = res[0] if res else None
        is_error = bool(res[1]) if len(res) > 1 else False
        images = self.from_lua(res[2]) if len(res) > 2 and res[2] is not None else []
        if len(res) > 3 and res[3] is not None:
            log.debug("tool %s failed: %s", name, text(res[3]))
            return ToolOutput(f"tool {name} failed: {text(content)}", True)
        return ToolOutput(
            text(content),
            is_error,
            tuple(Image(str(i["media_type"]), str(i["data_b64"])) for i in images or []),
        )

    def convert_results(self, res: Any) -> tuple[bool, Any]:
        if not isinstance(res, tuple):
            res = (res,)
        if not res[0]:
            return False, text(res[1] if len(res) > 1 else b"error")
        return True, [self.from_lua(r) for r in res[1:]]

    async def run_lua(self, fn: Any, *args: Any) -> list[Any]:
        """``drive(rt.run, fn, *args)``: raises LuaScriptError on a Lua error,
        returns the Lua results converted to Python values."""
        ok, val = await self.drive(self.rt.run, fn, *args, convert=self.convert_results)
        if not ok:
            raise LuaScriptError(val)
        return val  # type: ignore[no-any-return]

    def load(self, source: str | bytes, chunkname: str) -> Any:
        """Compile a chunk (loop thread): the Lua function, or LuaScriptError."""
        src = source.encode() if isinstance(source, str) else source
        res = self.rt.load(src, chunkname.encode())
        if isinstance(res, tuple):
            fn, err = res[0], res[1] if len(res) > 1 else None
        else:
            fn, err = res, None
        if fn is None:
            raise LuaScriptError(text(err))
        return fn

    async def execute_async(
        self, source: str | bytes, *args: Any, chunkname: str = "=(panto)"
    ) -> list[Any]:
        fn = self.load(source, chunkname)
        return await self.run_lua(fn, *(self.to_lua(a) for a in args))

    def execute(self, source: str | bytes, *args: Any, chunkname: str = "=(panto)") -> list[Any]:
        """Run a chunk as a coroutine (so it may sleep, spawn, …); return its
        results converted to Python.  Raises LuaScriptError."""
        return self.run(self.execute_async(source, *args, chunkname=chunkname))

    def eval(self, expr: str) -> Any:
        res = self.execute("return " + expr)
        return res[0] if res else None

    async def http_client(self) -> Any:
        if self._http is None:
            import httpx  # heavy: imported on first use

            self._http = httpx.AsyncClient()
        return self._http

    # ------------------------------------------------------------------
    # registration (the host table calls these while an entry activates)

    @property
    def objects(self) -> Any:
        """The prelude's anchor table: Lua values Python refers to by id."""
        return self._objects

    def register_command(self, name: str, description: str, handler: Any) -> None:
        self.commands[name] = LuaCommand(name, description, handler, current_entry.get())

    def register_hook(self, event: str, fn: Any) -> None:
        self.hooks[event].append(_Hook(fn, current_entry.get()))

    def register_prompt(self, part: Any) -> None:
        self.prompts.append((current_entry.get(), part))

    def register_provider(
        self,
        name: str,
        wire: str,
        base_url: str,
        default_model: str,
        prepare: Any,
        respond: Any,
        timeout: float | None,
    ) -> None:
        """Register a provider for the entry activating now
        (``panto.provider.register``; panto.config.ext_providers).
        ``prepare``/``respond`` are Lua functions; the callables registered
        run them on this runtime's loop (called from any other thread)."""
        from ..config.ext_providers import ExtensionProvider, register

        entry = current_entry.get()
        who = self.describe_entry(entry)
        rt = weakref.proxy(self)

        def call(fn: Any, what: str, payload: Mapping[str, Any], *extra: Any) -> Any:
            res = rt.run(
                rt.call_as(
                    entry, f"provider {name}: {what} of {who}", timeout, fn, payload, *extra
                ),
                what=f"provider {name}: {what}",
            )
            return res[0] if res else None

        def stream(req: Mapping[str, Any], emit: Callable[[Any], None]) -> None:
            # ``emit`` runs on the Lua thread: the event table is converted there
            call(respond, "stream", req, lambda ev: emit(rt.from_lua(ev)))

        register(
            ExtensionProvider(
                name,
                wire,
                base_url,
                default_model,
                prepare=(lambda info: call(prepare, "prepare", info)) if prepare else None,
                respond=stream if respond else None,
                origin=who,
                owner=id(self),
            )
        )
        self.providers[name] = entry

    async def call_as(
        self,
        entry: str | None,
        what: str,
        timeout: float | None,
        fn: Any,
        payload: Any,
        *extra: Any,
    ) -> list[Any]:
        """Call a Lua function on behalf of extension entry ``entry`` with
        ``payload`` converted to Lua (JSON nulls kept: a request body must
        come back as it went) and ``extra`` as they are (Python callables);
        the results converted to Python."""
        return await self._run_as(entry, what, timeout, fn, self.to_lua(payload), *extra)

    def register_tool(
        self, name: str, description: str, schema: Any, handler: Any, timeout: Any
    ) -> None:
        """Register a Lua tool for the entry activating now; a name another
        entry already registered is an error (ToolError) naming both."""
        if not isinstance(name, str) or not TOOL_NAME_RE.match(name):
            raise ToolError(f"invalid tool name {name!r}: must match {TOOL_NAME_RE.pattern}")
        if not isinstance(schema, dict):
            raise ToolError(f"tool {name}: schema must be a JSON object")
        entry = current_entry.get()
        prev = self.tools.get(name)
        if prev is not None and prev.entry != entry:
            # never a silent replacement: replacing a tool is done by
            # shadowing its entry (same entry name, higher layer) or denying it
            raise ToolError(
                f"tool {name!r} of {self.describe_entry(entry)} clashes with the tool "
                f"{name!r} already registered by {self.describe_entry(prev.entry)}; rename "
                f"it, or replace the whole entry (an entry named {prev.entry or '?'} in a "
                "higher layer shadows it), or deny that entry"
            )
        t = _tool_timeout(name, timeout)
        self.tools[name] = LuaTool(ToolDecl(name, description, schema, t), handler, entry)

    # ------------------------------------------------------------------
    # tools

    def decls(self) -> list[ToolDecl]:
        return [t.decl for t in list(self.tools.values())]

    async def call_tool(
        self,
        call: ToolCall,
        timeout: float | None = None,
        *,
        cwd: str | None = None,
        sandbox: Any = None,
    ) -> ToolOutput:
        """Run one tool call (on the loop).  Never raises except on cancel.
        ``ctx.cwd`` is ``cwd`` (the agent's working directory), else the
        process's: tools resolve relative paths against it.  Processes the
        call spawns run in ``sandbox`` (None: unconfined)."""
        tool = self.tools.get(call.name)
        if tool is None:
            return ToolOutput(f"unknown tool: {call.name}", True)
        if timeout is None:
            timeout = tool.decl.timeout
        tasks: set[asyncio.Task[Any]] = set()
        token = call_tasks.set(tasks)
        sb_token = call_sandbox.set(sandbox)
        what = f"tool {call.name} ({tool.entry or '?'})"
        ctl_token = set_control(Control(what, timeout=timeout, parent=current_control()))
        try:
            inp = self.to_lua(call.input, drop_null=True)
            ctx = self.to_lua({"id": call.id, "tool": call.name, "cwd": cwd or os.getcwd()})
            coro = self.drive(
                self.rt.run_tool,
                tool.handler,
                inp,
                ctx,
                convert=lambda res: self._tool_output(res, call.name),
            )
            try:
                if timeout is not None:
                    res = await asyncio.wait_for(coro, timeout)
                else:
                    res = await coro
            except asyncio.TimeoutError:
                # (the Control's own deadline, at the same time, usually ends
                # it first with the same words: which one does depends on
                # the loop -- on uvloop this one)
                return ToolOutput(f"{what}: timed out after {timeout:g} s (cancelled)", True)
            except LuaInterrupted as e:
                if not e.timed_out:
                    raise asyncio.CancelledError(str(e)) from None
                log.warning("%s", e)
                return ToolOutput(f"{e} (its Lua code was interrupted; cancelled)", True)
            except Exception as e:  # noqa: BLE001 - a failing tool is an is_error result
                return ToolOutput(f"tool {call.name} failed: {describe(e)}", True)
            return res  # type: ignore[no-any-return]
        finally:
            reset_control(ctl_token)
            call_sandbox.reset(sb_token)
            call_tasks.reset(token)
            for t in tasks:
                if not t.done():
                    t.cancel()

    async def _run_batch(
        self,
        batch: _Batch,
        calls: Sequence[ToolCall],
        timeouts: Sequence[float | None],
        cwd: str | None = None,
        sandbox: Any = None,
        tokens: Sequence[CancelToken] | None = None,
    ) -> list[ToolOutput]:
        # each call runs under a control of its own (a child of the batch's),
        # so that its token stops its Lua code alone, even code that never yields
        controls = [Control(f"tool call {c.name}", parent=batch.control) for c in calls]
        batch.tasks = []
        for c, t, ctl in zip(calls, timeouts, controls):
            token = set_control(ctl)
            try:
                batch.tasks.append(
                    self.loop.create_task(self.call_tool(c, t, cwd=cwd, sandbox=sandbox))
                )
            finally:
                reset_control(token)
        self._batches.add(batch)
        if batch.cancelled:
            for t in batch.tasks:
                t.cancel()
        removers = [
            tok.on_cancel(functools.partial(self._cancel_call, ctl, task))
            for tok, ctl, task in zip(tokens or (), controls, batch.tasks)
        ]
        try:
            results = await asyncio.gather(*batch.tasks, return_exceptions=True)
        except asyncio.CancelledError:
            batch.control.cancel("cancelled")  # Lua code that never yields stops too
            raise
        finally:
            self._batches.discard(batch)
            for remove in removers:
                remove()
        out: list[ToolOutput] = []
        for r in results:
            if isinstance(r, asyncio.CancelledError):
                out.append(ToolOutput("cancelled", True))
            elif isinstance(r, BaseException):
                out.append(ToolOutput(f"internal error: {describe(r)}", True))
            else:
                out.append(r)
        return out

    def invoke_batch(
        self,
        calls: Sequence[ToolCall],
        timeouts: Sequence[float | None] | None = None,
        *,
        batch: _Batch | None = None,
        cwd: str | None = None,
        sandbox: Any = None,
    ) -> list[ToolOutput]:
        """Run the calls concurrently as coroutines; results in order
        (``cwd``, ``sandbox``: see :meth:`call_tool`).  Blocking; call from
        any thread but the Lua thread."""
        if not calls:
            return []
        ts = list(timeouts) if timeouts is not None else [None] * len(calls)
        b = batch or _Batch()
        return self.run(self._run_batch(b, calls, ts, cwd, sandbox))

    async def ainvoke_batch(
        self,
        calls: Sequence[ToolCall],
        tokens: Sequence[CancelToken],
        timeouts: Sequence[float | None] | None = None,
        *,
        cwd: str | None = None,
        sandbox: Any = None,
    ) -> list[ToolOutput]:
        """:meth:`invoke_batch` awaited from another event loop: the calls
        run as tasks on the Lua loop and ``tokens[i]`` cancels ``calls[i]``
        alone (its task is cancelled: the processes it started are killed,
        and its Lua code is interrupted even when it never yields).  No
        thread waits.  Cancelling the awaiting task cancels every call."""
        if not calls:
            return []
        ts = list(timeouts) if timeouts is not None else [None] * len(calls)
        fut = self.submit(self._run_batch(_Batch(), calls, ts, cwd, sandbox, tokens))
        return await asyncio.wrap_future(fut)

    def _cancel_call(self, ctl: Control, task: asyncio.Task[Any]) -> None:
        """A call's token fired (any thread): stop its Lua code and its task."""
        ctl.cancel("cancelled")
        with contextlib.suppress(RuntimeError):  # the loop is closed: nothing runs
            self.loop.call_soon_threadsafe(task.cancel)

    def new_batch(self) -> _Batch:
        return _Batch()

    def cancel_batch(self, batch: _Batch) -> None:
        """Cancel a batch from any thread (its calls end as 'cancelled').
        Lua code of the batch that never yields is interrupted too."""
        batch.control.cancel("cancelled")

        def _cancel() -> None:
            batch.cancelled = True
            for t in batch.tasks:
                t.cancel()

        with contextlib.suppress(RuntimeError):
            self.loop.call_soon_threadsafe(_cancel)

    # ------------------------------------------------------------------
    # commands and events

    def run_command(self, name: str, args: str = "") -> str:
        cmd = self.commands.get(name.lstrip("/"))
        if cmd is None:
            raise ExtensionError(f"unknown command /{name.lstrip('/')}")

        async def _run() -> str:
            res = await self._run_as(
                cmd.entry,
                f"command /{cmd.name} ({cmd.entry or '?'})",
                None,
                cmd.handler,
                args.encode(),
                self.to_lua({"name": name}),
            )
            if not res or res[0] is None:
                return ""
            v = res[0]
            if isinstance(v, (dict, list)):
                return json.dumps(v)
            return str(v)

        return self.run(_run(), what=f"command /{cmd.name}")

    async def _run_as(
        self, entry: str | None, what: str, timeout: float | None, fn: Any, *args: Any
    ) -> list[Any]:
        """``run_lua(fn, *args)`` on behalf of extension entry ``entry``,
        under a control named ``what`` with ``timeout`` (Lua code that never
        yields included)."""
        token = current_entry.set(entry)
        ctl_token = set_control(Control(what, timeout=timeout, parent=current_control()))
        try:
            return await self.run_lua(fn, *args)
        finally:
            reset_control(ctl_token)
            current_entry.reset(token)

    async def run_hook(
        self, hook: Any, event: str, payload: Mapping[str, Any], *, timeout: float | None = None
    ) -> tuple[str | None, Any, str | None]:
        """Call one ``event`` handler with ``payload``: ``(entry, result,
        error)``; a handler's failure, timeout or interruption is an error
        string, never raised (a cancel is)."""
        t = self.hook_timeout if timeout is None else timeout
        what = f"{event} handler of {hook.entry or '?'}"
        try:
            res = await self._run_as(
                hook.entry, what, t, hook.fn, self.to_lua(dict(payload), drop_null=True)
            )
            return (hook.entry, res[0] if res else None, None)
        except LuaScriptError as e:
            return (hook.entry, None, str(e))
        except LuaInterrupted as e:
            if not e.timed_out:
                raise
            return (hook.entry, None, str(e))

    async def emit_async(
        self, event: str, payload: Mapping[str, Any], *, timeout: float | None = None
    ) -> list[tuple[str | None, Any, str | None]]:
        """Call every handler of ``event`` in registration order with the
        payload; return ``(entry, result, error)`` per handler (results
        converted to Python).  Handler errors are reported, not raised.
        ``timeout`` (default ``hook_timeout``) bounds each handler."""
        if event not in self.hooks:
            raise ExtensionError(f"unknown event {event!r}")
        out = [await self.run_hook(h, event, payload, timeout=timeout) for h in self.hooks[event]]
        for entry, _, err in out:
            if err:
                log.warning("%s handler of %s failed: %s", event, entry or "?", err)
        return out

    def emit(
        self, event: str, payload: Mapping[str, Any], *, timeout: float | None = None
    ) -> list[tuple[str | None, Any, str | None]]:
        """Blocking ``emit_async`` (any thread but the Lua thread)."""
        if not self.hooks.get(event):
            if event not in self.hooks:
                raise ExtensionError(f"unknown event {event!r}")
            return []
        return self.run(self.emit_async(event, payload, timeout=timeout), what=f"{event} handlers")

    async def prompt_parts_async(
        self, info: Mapping[str, Any] | None = None, *, timeout: float | None = None
    ) -> list[tuple[str, str]]:
        """The system-prompt parts extensions contributed, in registration
        order: ``(origin, text)`` with origin ``ext:<entry>``.  Function
        parts are called with ``info`` (``{cwd, model, tools}``); a failing
        one is logged and left out, an empty one is left out."""
        out: list[tuple[str, str]] = []
        t = self.hook_timeout if timeout is None else timeout
        for entry, part in list(self.prompts):
            origin = f"ext:{entry or '?'}"
            if isinstance(part, str):
                text = part
            else:
                try:
                    res = await self._run_as(
                        entry,
                        f"system_prompt part of {entry or '?'}",
                        t,
                        part,
                        self.to_lua(dict(info or {}), drop_null=True),
                    )
                except (LuaScriptError, LuaInterrupted) as e:
                    log.warning("system_prompt part of %s failed: %s", entry or "?", e)
                    continue
                v = res[0] if res else None
                text = v if isinstance(v, str) else ""
            if text.strip():
                out.append((origin, text))
        return out

    def prompt_parts(self, info: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
        """Blocking :meth:`prompt_parts_async` (any thread but the Lua thread)."""
        if not self.prompts:
            return []
        return self.run(self.prompt_parts_async(info), what="system_prompt parts")

    def has_handlers(self, event: str) -> bool:
        return bool(self.hooks.get(event))

    # ------------------------------------------------------------------
    # extensions

    async def eval_source_async(self, path: str | os.PathLike[str]) -> list[tuple[str, Any]]:
        """Evaluate a source file (nothing may register); return its entries
        as ``(name, activate)`` pairs."""
        p = str(path)
        try:
            src = Path(p).read_bytes()
        except OSError as e:
            raise ExtensionError(f"{p}: {describe(e)}") from e
        return await self._eval(self.load(src, "@" + p), p)

    async def eval_module_async(self, module: str, origin: str) -> list[tuple[str, Any]]:
        """Like ``eval_source_async`` for a module found by ``require``
        (a rock): its entries as ``(name, activate)`` pairs."""
        fn = self.load(f"return require({json.dumps(module)})", "=" + origin)
        return await self._eval(fn, origin)

    async def _eval(self, fn: Any, origin: str) -> list[tuple[str, Any]]:
        token = evaluating.set(origin)
        ctl_token = set_control(
            Control(
                f"extension source {origin}", timeout=self.load_timeout, parent=current_control()
            )
        )
        try:
            # evaluate and normalize in one coroutine: the returned table
            # never leaves it
            res = await self.run_lua(self.rt.eval_entries, fn, origin.encode())
        finally:
            reset_control(ctl_token)
            evaluating.reset(token)
        return [(e["name"], e["id"]) for e in res[0]]

    async def activate_async(
        self,
        name: str,
        activate: int,
        config: Mapping[str, Any] | None = None,
        *,
        origin: str | None = None,
    ) -> None:
        """Call an entry's ``activate`` (by the id ``eval_source_async`` gave).
        ``origin`` (its file or rock) names it in messages."""
        fn = self._objects[activate]
        if origin is not None:
            self.entry_origins[name] = origin
        try:
            await self._run_as(
                name,
                f"extension {name}: activate",
                self.load_timeout,
                fn,
                self.to_lua(dict(config or {}), drop_null=True),
            )
        except BaseException:
            self._unregister(name)  # a failed activation leaves nothing half-registered
            raise

    def _unregister(self, entry: str) -> None:
        for n in [n for n, t in self.tools.items() if t.entry == entry]:
            del self.tools[n]
        for n in [n for n, c in self.commands.items() if c.entry == entry]:
            del self.commands[n]
        for event, hs in self.hooks.items():
            self.hooks[event] = [h for h in hs if h.entry != entry]
        self.prompts = [p for p in self.prompts if p[0] != entry]
        if any(e == entry for e in self.providers.values()):
            from ..config.ext_providers import unregister

            unregister(id(self), self.describe_entry(entry))
            self.providers = {n: e for n, e in self.providers.items() if e != entry}

    def describe_entry(self, entry: str | None) -> str:
        """``name (origin)`` of an extension entry, for messages."""
        if entry is None:
            return "?"
        origin = self.entry_origins.get(entry)
        return f"{entry} ({origin})" if origin else entry


def _tool_timeout(name: str, timeout: Any) -> float | None:
    """A declared tool timeout: seconds, > 0 and at most a day (inf or 1e10
    would overflow the loop's timers or never fire); ToolError otherwise."""
    if timeout is None:
        return None
    try:
        t = float(timeout)
    except (TypeError, ValueError):
        t = float("nan")
    if not 0 < t <= 86400:
        raise ToolError(
            f"tool {name}: timeout must be a number of seconds, > 0 and at most 86400 "
            f"(a day); got {text(timeout) if isinstance(timeout, bytes) else timeout!r}"
        )
    return t


async def _under(ctl: Control, coro: Coroutine[Any, Any, T]) -> T:
    token = set_control(ctl)
    try:
        return await coro
    finally:
        reset_control(token)


# ----------------------------------------------------------------------
# the process-wide runtime

_global: LuaRuntime | None = None
_global_lock = threading.Lock()
_all: weakref.WeakSet[LuaRuntime] = weakref.WeakSet()


def get_runtime(**kwargs: Any) -> LuaRuntime:
    """The one runtime of this process (created on first use)."""
    global _global
    with _global_lock:
        if _global is None or _global.closed:
            _global = LuaRuntime(**kwargs)
            _all.add(_global)
        return _global


def shutdown_runtime() -> None:
    global _global
    with _global_lock:
        rt, _global = _global, None
    if rt is not None:
        rt.close()


@atexit.register
def _atexit() -> None:  # pragma: no cover - process exit
    shutdown_runtime()


def _iter_runtimes() -> Iterable[LuaRuntime]:  # for tests
    return list(_all)
