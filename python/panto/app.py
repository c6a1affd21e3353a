"""The composition root: :func:`open_agent` builds an agent with its session
store, its system prompt and its extensions (pi's ``createAgentSession``).
The ``panto`` CLI and embedders call it; nothing else composes these parts.

A :class:`Host` holds what the sessions of one process share (codex's
``ConversationManager``): the Lua states, one per extension set (the same
config, working directory and policy), all on the one Lua loop thread, so
two sessions for two projects see their own tools, hooks and
``panto.config``.  :func:`open_agent` and :func:`open_session` are thin calls
on :func:`default_host`.

    from panto.app import open_agent
    agent = open_agent()                      # layered config for the cwd, a new session
    agent.submit_user_message("fix the failing test")
    with agent.run() as stream:
        for ev in stream: ...

The ``Config`` object is passed down as is (the Lua loader gets the object,
never a dict), so one call loads the configuration at most once.
:func:`open_session` is the same with everything it built
(:class:`AgentSession`: the store, what a resume loaded, the extensions and
the system prompt's parts) for callers that show them, like the CLI.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from .errors import ConfigError, PantoError
from .logs import get_logger

if TYPE_CHECKING:
    from concurrent.futures import ThreadPoolExecutor

    from .agent import Agent
    from .config import Config
    from .lua import LoadReport, LuaRuntime, LuaToolSource
    from .lua.lazy import LazyLuaToolSource
    from .sessions import LoadedSession, SessionStore
    from .skills import Skills
    from .system_prompt import SystemPrompt
    from .tools import Tool

log = get_logger("panto.app")

__all__ = [
    "AgentSession",
    "Extensions",
    "Host",
    "default_host",
    "SessionSpec",
    "mcp_servers",
    "open_agent",
    "open_session",
    "project_trusted",
    "settle_after_startup",
]

if TYPE_CHECKING:
    #: Which session an agent records into: ``"new"``, ``"continue"`` (the most
    #: recent of the working directory, else new), ``("resume", ID)`` (an id, a
    #: unique id prefix or a session file path), ``None`` (not recorded), or a
    #: store object to use as is.
    SessionSpec = str | tuple[str, str] | SessionStore | None


def __getattr__(name: str) -> Any:
    # SessionSpec at run time, made when first read: as a module-level Union
    # with "SessionStore" it cost the first compile() of the process (typing's
    # ForwardRef), ~4% of panto -p's start-up.
    if name == "SessionSpec":
        from .sessions import SessionStore

        value = globals()[name] = str | tuple[str, str] | SessionStore | None
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Extensions:
    """What start-up loaded: the ``panto-lua`` source and its load report
    (both None when Lua is off or unavailable), and why not (``error``)."""

    def __init__(
        self,
        source: LuaToolSource | LazyLuaToolSource | None = None,
        report: LoadReport | None = None,
        error: str | None = None,
    ) -> None:
        self.source = source
        self._report = report
        self.error = error

    @property
    def report(self) -> LoadReport | None:
        """The load report; a source started lazily (``panto.lua.lazy``)
        starts its runtime to give it."""
        if self._report is None and self.source is not None:
            self._report = getattr(self.source, "report", None)
        return self._report

    def commands(self) -> dict[str, str]:
        """Lua-registered slash commands: name (without ``/``) -> description."""
        return self.source.commands() if self.source is not None else {}

    def run_command(self, name: str, args: str) -> str:
        assert self.source is not None
        return self.source.run_command(name, args)

    def prompt_parts(self, info: Mapping[str, Any] | None = None) -> list[tuple[str, str]]:
        """``(origin, text)`` system-prompt parts the extensions contribute
        (``panto.ext.system_prompt``); ``info`` (``{cwd, model, tools}``)
        goes to function parts."""
        return self.source.prompt_parts(info) if self.source is not None else []


@dataclass
class AgentSession:
    """An agent and what was built for it."""

    agent: Agent
    store: SessionStore
    #: What a resumed session loaded (None for a new one); ``dangling_user``
    #: is a last prompt that got no reply (not resent).
    loaded: LoadedSession | None
    extensions: Extensions
    system_prompt: SystemPrompt
    #: The Agent Skills found for this session (panto.skills); ``/skill:NAME``
    #: runs one.
    skills: Skills = field(default_factory=lambda: _no_skills())
    #: The MCP servers' tool source (panto.mcp), None without servers.
    mcp: Any = None
    #: Things worth telling the user (no earlier session to continue, the
    #: session's model is unavailable, extension errors...), one line each.
    notices: list[str] = field(default_factory=list)
    #: The session's hold on its Lua state (given back by ``close``).
    _lua_lease: _LuaLease | None = field(default=None, repr=False)

    @property
    def resumed(self) -> bool:
        return self.loaded is not None

    def close(self) -> None:
        """Close the agent (cancel a running turn), the MCP servers, then the
        store, and give back the Lua state (closed when no other session
        uses it)."""
        try:
            self.agent.close()
            if self.mcp is not None:
                self.mcp.close()
        finally:
            try:
                self.store.close()
            finally:
                if self._lua_lease is not None:
                    self._lua_lease.close()

    def __enter__(self) -> AgentSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Host:
    """What the sessions of one process share (see the module docstring).

    ``open_agent`` / ``open_session`` build sessions on it;
    ``lua_runtime(config, cwd, ...)`` is the Lua state of an extension set.

    ``tool_threads``: the bound of the host's tool pool (``tool_pool``), where
    the async driver runs blocking tool work of every session -- native
    tools, tool hooks (the permission gate), sources with only the sync API
    -- however many sessions run; Lua and MCP calls need no thread of it.
    None: the process's pool (``panto.tools.default_tool_pool()``,
    ``DEFAULT_TOOL_THREADS`` threads).

    ``http_clients``: the async HTTP clients of every session's
    ``run_async`` turns (``providers.clients.AsyncClients``): one per event
    loop, origin and TLS settings, each a pool of at most
    ``http_connections`` kept-alive connections per origin
    (``providers.ahttp11``; httpx's when a proxy is configured), closed with
    the host.
    """

    def __init__(
        self, *, tool_threads: int | None = None, http_connections: int | None = None
    ) -> None:
        self._tool_threads = tool_threads
        self._tool_pool: ThreadPoolExecutor | None = None
        self._pool_lock = threading.Lock()
        from .providers.clients import AsyncClients  # (no asyncio until a client is made)

        self.http_clients = AsyncClients(http_connections)

    @property
    def tool_pool(self) -> ThreadPoolExecutor:
        """The bounded pool for blocking tool work (made on first use)."""
        from .tools import default_tool_pool, new_tool_pool

        with self._pool_lock:
            if self._tool_pool is None:
                t = self._tool_threads
                self._tool_pool = default_tool_pool() if t is None else new_tool_pool(t)
            return self._tool_pool

    @property
    def closed(self) -> bool:
        return self.http_clients.closed

    def close(self) -> None:
        """Close the host's HTTP clients and stop its own tool pool (not
        the process's); running work finishes in the background.

        The Lua states are not the host's: each belongs to the sessions
        using it and closes with the last of them (``AgentSession.close``),
        so closing a host never stops a running tool.  Turns of its agents
        that still need its HTTP clients (``run_async``) then fail with a
        ``ProviderError`` of type ``host_closed``; ``open_session`` on it
        raises."""
        self.http_clients.close()
        with self._pool_lock:
            pool, self._tool_pool = self._tool_pool, None
        if pool is not None and self._tool_threads is not None:
            pool.shutdown(wait=False)

    def lua_runtime(
        self, config: Config, cwd: str, no_extensions: bool, deny: Sequence[str]
    ) -> LuaRuntime | None:
        """The Lua state (and registry) the open sessions of an extension
        set share, None when none has one: the process runtime
        (``get_runtime()``) for the first set, a state of its own on the
        same loop thread for each other one, closed with its last session."""
        return _lua_states.get(extension_set_key(config, cwd, no_extensions, deny))

    def open_agent(self, config: Config | None = None, **options: Any) -> Agent:
        """An agent ready for ``submit_user_message``/``run``:
        ``open_session(config, **options).agent`` (the options are documented
        there).  The agent owns its store: ``agent.store``; close it after
        the agent."""
        return self.open_session(config, **options).agent

    def open_session(
        self,
        config: Config | None = None,
        *,
        cwd: str | os.PathLike[str] | None = None,
        session: SessionSpec = "new",
        model: str | None = None,
        extensions: bool | Literal["builtin"] = True,
        deny: Sequence[str] = (),
        system_prompt: str | None = None,
        append_system_prompt: str | None = None,
        tools: Sequence[Tool] = (),
        env: Mapping[str, str] | None = None,
        notify: Callable[[str], None] | None = None,
        trust: bool | None = None,
        permission_mode: str | None = None,
    ) -> AgentSession:
        """An agent ready for ``submit_user_message``/``run``, with everything
        built for it (:class:`AgentSession`).

        - ``config``: the layered config (None: ``Config.load`` for ``cwd``).
        - ``session``: see :data:`SessionSpec`; ``"new"`` by default.
        - ``model``: ``provider/model`` for this agent; without it a resumed
          session continues with its own model.
        - ``extensions``: ``True`` loads the Lua runtime with the built-in
          ``std`` tools and the user's and project's extensions; ``"builtin"``
          only the built-in ones; ``False`` no Lua at all.  ``deny``: entry
          globs to switch off (``["std.bash"]``).
        - ``system_prompt`` replaces the built-in base of the system prompt,
          ``append_system_prompt`` is appended (panto.system_prompt).
        - ``tools``: native tools to register (they are listed in the prompt).
        - ``notify``: called with each notice (default: dropped; see
          ``AgentSession.notices``).
        - ``trust``: whether the project (the nearest ``.panto/``) is trusted;
          None asks the trust store (``panto trust``, ``PANTO_TRUST_ALL``).  An
          untrusted project's keys that could redirect traffic or run code are
          ignored and its Lua is not loaded (docs/security.md); a notice says
          what was ignored.  Only used when ``config`` is None (a loaded config
          carries its own answer: ``Config.load(trust=...)``).
        - ``permission_mode``: ``default``, ``accept-edits``, ``plan``,
          ``dont-ask`` or ``bypass`` instead of ``[permissions] mode``
          (docs/security.md#permissions).

        Every tool call passes the permission gate built from
        ``[permissions]`` (``permission_mode`` overrides its mode;
        ``agent.permissions``): with nobody to ask (no ``approver`` set on
        it) nothing waits.

        Raises ``ConfigError`` (bad config, unknown model) and
        ``SessionError`` (no such session, locked by another process).
        """
        from . import system_prompt as sp
        from .agent import Agent
        from .config import Config

        if self.closed:
            raise PantoError(
                "this Host is closed (Host.close() was called): "
                "open sessions on an open one (Host(), or panto.app.default_host())"
            )
        cwd_s = os.path.abspath(os.fspath(cwd)) if cwd is not None else os.getcwd()
        notices: list[str] = []

        def note(msg: str) -> None:
            notices.append(msg)
            if notify is not None:
                notify(msg)

        if config is None:
            config = Config.load(env, cwd=cwd_s, trust=trust)
        elif trust is not None:
            raise ValueError(
                "trust= applies when open_session loads the config; pass it to Config.load"
            )
        untrusted = config.project.notice() if config.project is not None else None
        if untrusted:
            note(untrusted)
        pending = None  # a provider an extension may register: resolved after they load
        if model:
            try:
                config = config.with_model(model)
            except ConfigError:
                if extensions is False:
                    raise
                pending = model
        store, loaded = _open_store(config, session, cwd_s, note)
        lease = _LuaLease()
        mcp_source = None
        try:
            active = store.active_model
            if loaded is not None and not model and active is not None:
                try:
                    config = config.with_model(str(active))
                except ConfigError as e:
                    note(f"session model {active} unavailable ({e}); using {config.model_spec}")
            ext = _load_extensions(config, cwd_s, extensions, deny, note, lease)
            if pending is not None:
                config = config.with_model(pending)
            decls = [t.decl for t in tools]
            if ext.source is not None:
                decls += list(ext.source.decls())
            skills, skills_part = _skills(config, cwd_s, env, note)
            prompt = sp.build(
                config,
                cwd=cwd_s,
                tools=decls,
                skills=skills_part,
                extension_parts=ext.prompt_parts(
                    {"cwd": cwd_s, "model": config.model_spec, "tools": [d.name for d in decls]}
                ),
                system_prompt=system_prompt,
                append_system_prompt=append_system_prompt,
                env=env,
            )
            agent = Agent(
                config,
                store=store,
                conversation=loaded.conversation if loaded is not None else None,
                system_prompt=prompt.text,
                entry_ids=loaded.entry_ids if loaded is not None else None,
            )
            agent.set_model(config.model_spec)  # records a model_change when the store's differs
            if loaded is not None:
                old = "\n\n".join(m.text for m in agent.conversation if m.role == "system")
                if old and prompt.text and not sp.same_prompt(old, prompt.text):
                    agent.add_system_message(prompt.text, "replace")
            # a host on the process's pool leaves it None (the same pool, made
            # on first use: `panto -p` without tool calls imports no
            # concurrent.futures)
            agent.tool_pool = self.tool_pool if self._tool_threads is not None else None
            agent.http_clients = self.http_clients
            agent.permissions = _permissions(config, cwd_s, store, loaded, permission_mode, env)
            for t in tools:
                agent.register_tool(t)
            if ext.source is not None:
                try:
                    agent.register_tool_source(ext.source)
                except PantoError as e:
                    note(f"Lua tools not registered: {e}")
                    ext = Extensions(None, ext.report, str(e))
                    lease.close()
                else:
                    agent.add_hooks(ext.source.hooks)
                    gate = agent.permissions
                    if gate is not None:
                        # plan mode is read-only, also for the bash commands an
                        # allow rule lets through: the OS sandbox enforces it
                        ext.source.sandbox_mode = lambda: (
                            "read-only" if gate.mode == "plan" else None
                        )
            mcp_source = _open_mcp(config, cwd_s, env, note)
            if mcp_source is not None:
                try:
                    agent.register_tool_source(mcp_source)
                except PantoError as e:
                    note(f"MCP tools not registered: {e}")
                    mcp_source.close()
                    mcp_source = None
            agent.start_session(session_id=store.session_id, resumed=loaded is not None, cwd=cwd_s)
        except BaseException:
            try:
                if mcp_source is not None:
                    mcp_source.close()
                store.close()
            finally:
                lease.close()
            raise
        return AgentSession(
            agent, store, loaded, ext, prompt, skills, mcp_source, notices, _lua_lease=lease
        )


_default: Host | None = None
_default_lock = threading.Lock()


def default_host() -> Host:
    """The process's :class:`Host` (made on first use, and again after it
    was closed)."""
    global _default
    with _default_lock:
        if _default is None or _default.closed:
            _default = Host()
        return _default


def settle_after_startup() -> None:
    """For a long-running process that hosts many sessions, once its start-up
    is done (``panto serve`` calls it when it listens): what start-up made
    lives as long as the process, so it leaves the garbage collector's care
    (``gc.freeze``; a full collection walked all of it, 12-25 ms of the event
    loop with 200 sessions open, a stall of every session at once), and the
    young generation is collected less often (each pass walked every live
    stream).  And the descriptor table is grown now, for the connections to
    come (:func:`_grow_fd_table`).  Process-wide, so for a program's entry
    point, not a library."""
    import gc

    gc.collect()
    gc.freeze()
    gc.set_threshold(20_000, 10, 10)
    _grow_fd_table(FD_TABLE)


#: descriptors :func:`settle_after_startup` makes room for (a table of 4096
#: is 32 KB of kernel memory)
FD_TABLE = 4096


def _grow_fd_table(size: int) -> None:
    """Make the kernel's descriptor table of this process hold ``size``
    descriptors (or the open-files limit) now.  It grows by doubling when a
    descriptor beyond it opens, and in a process with threads each growth
    waits for an RCU grace period: measured here, the ``socket()`` of the
    256th connection took 9-16 ms with the event loop held, every session
    stalled.  A descriptor duplicated at the top (``F_DUPFD``: the lowest
    free one at or above it, so nothing open is touched) and closed again
    leaves the table that large."""
    try:
        import fcntl
        import resource
    except ImportError:  # not a POSIX system: no such table to grow
        return
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    top = min(size, soft if soft != resource.RLIM_INFINITY else size) - 1
    if top < 64:  # the table a process starts with
        return
    try:
        fd = os.open(os.devnull, os.O_RDONLY | os.O_CLOEXEC)
        try:
            high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, top)
        finally:
            os.close(fd)
        os.close(high)
    except OSError:  # no room up there (the limit moved): leave it as it is
        pass


def open_agent(config: Config | None = None, **options: Any) -> Agent:
    """:meth:`Host.open_agent` on :func:`default_host` (the options are
    documented there)."""
    return default_host().open_agent(config, **options)


def open_session(config: Config | None = None, **options: Any) -> AgentSession:
    """:meth:`Host.open_session` on :func:`default_host`."""
    return default_host().open_session(config, **options)


# -- Lua states, one per extension set ------------------------------------------------


def extension_set_key(
    config: Config, cwd: str, no_extensions: bool = False, deny: Sequence[str] = ()
) -> str:
    """What decides an extension load: ``panto.config`` as extensions see
    it, the allow/deny layers, the working directory (its project's
    extensions) and the options; two sessions with the same key share a Lua
    state."""
    meta = {
        "config": config.lua_view(),
        "layers": [(el.layer, el.allow, el.deny) for el in config.extension_layers()],
        "cwd": os.path.realpath(cwd),
        "no_extensions": no_extensions,
        "deny": sorted(deny),
    }
    data = json.dumps(meta, sort_keys=True, default=repr).encode()
    return hashlib.sha256(data).hexdigest()


class _LuaStates:
    """The process's Lua states by extension set (:func:`extension_set_key`),
    each with the number of sessions using it.

    The first set gets the process runtime (``get_runtime()``: the ``panto``
    command's one session needs no second state); it is never closed here.
    Every other set gets a state of its own on the process runtime's loop
    thread, closed when its last session releases it, so a process opening
    sessions in ever new directories (``panto serve``) keeps only the states
    of open sessions.  Closing one cancels only its own tasks and processes
    (``LuaRuntime.close`` of a guest): the other states on the loop thread
    and their running tools go on.

    No idle state is kept warm (measured on the 2-core dev machine, a
    project with one extension, no session store): a new state costs ~0.9
    ms to make and ~0.3 ms to close, while a kept one is loaded again all
    the same (``create_source`` evaluates and activates every source each
    time), so an open+close of the same directory takes 4.9 ms with a
    fresh state against 3.6 ms with a kept one -- ~1.3 ms, less than a
    real session store costs -- for ~0.25 MB per state nobody uses, and a
    cache to size.  Without it 600 directories opened and closed in turn
    leave one state (RSS +5.8 MB, allocator slack); before, 200 kept 200
    (+51.5 MB).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        #: key -> [state, sessions using it, whether it is the process runtime]
        self._by_key: dict[str, list[Any]] = {}

    def acquire(self, key: str) -> LuaRuntime:
        """The state of ``key`` (made if needed), with one more user."""
        from .lua.runtime import LuaRuntime, get_runtime

        base = get_runtime()
        with self._lock:
            self._drop_dead(base)
            entry = self._by_key.get(key)
            if entry is None:
                if any(e[2] for e in self._by_key.values()):
                    entry = [LuaRuntime(loop_of=base), 0, False]
                else:
                    entry = [base, 0, True]
                self._by_key[key] = entry
            entry[1] += 1
            return entry[0]  # type: ignore[no-any-return]

    def release(self, key: str, rt: LuaRuntime) -> None:
        """One user fewer; the last one closes the state (not the process
        runtime)."""
        with self._lock:
            entry = self._by_key.get(key)
            if entry is None or entry[0] is not rt:
                return  # dropped meanwhile (the process runtime was replaced)
            entry[1] -= 1
            if entry[1] > 0 or entry[2]:
                return
            del self._by_key[key]
        if rt.on_loop_thread():  # (close waits for the loop: not from it)
            threading.Thread(target=rt.close, name="panto-lua-close", daemon=True).start()
        else:
            rt.close()

    def get(self, key: str) -> LuaRuntime | None:
        with self._lock:
            entry = self._by_key.get(key)
            return None if entry is None or entry[0].closed else entry[0]  # type: ignore[no-any-return]

    def count(self) -> int:
        """How many states are open (the process runtime's included)."""
        with self._lock:
            return sum(1 for e in self._by_key.values() if not e[0].closed)

    def _drop_dead(self, base: LuaRuntime) -> None:
        # a closed state, or one on the loop of a process runtime that was
        # replaced (shutdown_runtime): its loop is gone with it
        for k, (rt, _, _) in list(self._by_key.items()):
            if rt.closed or rt.loop is not base.loop:
                del self._by_key[k]


_lua_states = _LuaStates()


class _LuaLease:
    """One session's use of its extension set's Lua state: taken when the
    session's source gets its runtime (at open, or at the first tool call
    when ``panto.lua.lazy`` defers the start), given back once
    (``AgentSession.close``, or when the load failed)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: tuple[str, LuaRuntime] | None = None
        self._closed = False

    def runtime(
        self, config: Config, cwd: str, no_extensions: bool, deny: Sequence[str]
    ) -> LuaRuntime:
        with self._lock:
            if self._closed:
                from .errors import ExtensionError

                raise ExtensionError("the session is closed")
            if self._held is None:
                key = extension_set_key(config, cwd, no_extensions, deny)
                self._held = (key, _lua_states.acquire(key))
            return self._held[1]

    def drop(self) -> None:
        """Give the state back (a load that failed; a lazy source may take
        it again)."""
        with self._lock:
            held, self._held = self._held, None
        if held is not None:
            _lua_states.release(*held)

    def close(self) -> None:
        """Give the state back for good (idempotent)."""
        with self._lock:
            self._closed = True
        self.drop()


# -- MCP servers -------------------------------------------------------------------


def mcp_servers(
    config: Config, cwd: str, env: Mapping[str, str] | None, note: Callable[[str], None]
) -> list[Any]:
    """The MCP servers for ``cwd``: ``[mcp.servers]``, then (in a trusted
    project) the repository's ``.mcp.json``; a config name wins over the
    same name there.  A bad ``.mcp.json`` is a notice, not an error."""
    from pathlib import Path

    from .system_prompt import find_repo_root

    mcp_json = None
    if project_trusted(config, cwd, env):
        mcp_json = (find_repo_root(cwd) or Path(cwd)) / ".mcp.json"
        if not mcp_json.is_file():
            mcp_json = None
    if not config.mcp_servers and mcp_json is None:
        return []  # (panto.mcp is not imported: start-up without servers pays nothing)
    from .mcp import read_mcp_json, specs_from_config

    specs = specs_from_config(config.mcp_servers, "config")
    if mcp_json is not None:
        names = {s.name for s in specs}
        try:
            specs += [s for s in read_mcp_json(mcp_json) if s.name not in names]
        except ConfigError as e:
            note(f"MCP servers of .mcp.json not started: {e}")
    return specs


def untrusted_mcp_note(config: Config) -> str | None:
    """When the project's own MCP servers (``.mcp.json``, its
    ``[mcp.servers]``) were left out because it is not trusted: one line
    saying so and how to trust it (None otherwise).  For "no MCP servers"
    answers, which would otherwise hide them."""
    p = config.project
    if p is None or p.trusted:
        return None
    if not any(k == ".mcp.json" or k.startswith("mcp.") for k, _ in p.ignored):
        return None
    return (
        f"this project's MCP servers are not started: {p.root} is not trusted "
        f"(to start them: panto trust {p.root})"
    )


def _open_mcp(
    config: Config, cwd: str, env: Mapping[str, str] | None, note: Callable[[str], None]
) -> Any:
    """The MCP tool source, or None when no server is configured (the SDK
    is then never imported)."""
    try:
        specs = mcp_servers(config, cwd, env, note)
    except ConfigError as e:
        note(f"MCP servers not started: {e}")
        return None
    if not specs:
        return None
    from .mcp import open_source

    return open_source(specs, env=env, notify=note)


# -- skills ------------------------------------------------------------------------


def _no_skills() -> Skills:
    from .skills import Skills

    return Skills()


def _skills(
    config: Config, cwd: str, env: Mapping[str, str] | None, note: Callable[[str], None]
) -> tuple[Skills, tuple[str, str] | None]:
    """The skills for ``cwd`` and their system-prompt part (origin, text);
    project skills only in a trusted project."""
    from . import skills as sk
    from .models import model_info

    found = sk.discover(
        cwd, project=project_trusted(config, cwd, env), paths=config.skill_paths, env=env
    )
    for w in found.warnings:
        note(w)
    if not found.skills or not config.skills_enabled:  # /skill:NAME works all the same
        return found, None
    part = sk.listing(found, context_window=model_info(config).context_window)
    for w in part.warnings:
        note(w)
    if not part.text:
        return found, None
    origin = f"{len(part.listed)} skill(s) from " + ", ".join(
        sorted({str(s.location.parent.parent) for s in found.skills if s.name in part.listed})
    )
    return found, (origin, part.text)


def project_trusted(config: Config, cwd: str, env: Mapping[str, str] | None = None) -> bool:
    """Is the project holding ``cwd`` trusted (its skills, ``.mcp.json``,
    extensions and code-running keys apply)?  The config's answer when it
    found a ``.panto/``; else the trust store's for the working directory or
    any directory above it up to the repository root."""
    if config.project is not None:
        return config.project.trusted
    from pathlib import Path

    from .policy.trust import is_trusted
    from .system_prompt import find_repo_root

    try:
        here = Path(cwd).resolve()
        root = find_repo_root(here)
        chain = [here] if root is None else [here, *here.parents]
        if root is not None:
            chain = chain[: chain.index(root) + 1]
        return any(is_trusted(d, env) for d in chain)
    except ConfigError:  # an unreadable trust store trusts nothing
        return False


# -- permissions ---------------------------------------------------------------------


def _permissions(
    config: Config,
    cwd: str,
    store: SessionStore,
    loaded: LoadedSession | None,
    mode: str | None,
    env: Mapping[str, str] | None,
) -> Any:
    """The permission gate (panto.policy.permissions) for ``config``; its
    decisions are recorded in ``store``, and a resumed session's "allow
    always" answers apply again."""
    from .paths import home_dir, user_config_dir
    from .policy.permissions import MODES, Permissions, RuleSet

    mode = mode or config.permission_mode
    if mode not in MODES:
        raise ConfigError(f"unknown permission mode {mode!r} (expected one of: {', '.join(MODES)})")
    project = config.layer("project")
    root = str(project.origin.path.parent.parent) if project and project.origin.path else cwd
    rules = RuleSet.from_layers(
        config.permission_layers(), cwd=cwd, root=root, home=str(home_dir(env))
    )
    gate = Permissions(
        rules,
        mode,
        cwd=cwd,
        workspace=config.permission_directories(),
        config_file=str(user_config_dir(env) / "config.toml"),
    )
    gate.record = getattr(store, "append_permission", None)
    if loaded is not None and hasattr(store, "permission_records"):
        for rec in store.permission_records():
            always = rec.get("always")
            if isinstance(always, list):
                try:
                    gate.allow_for_session(str(a) for a in always)
                except ValueError:
                    pass  # a rule this version does not read: asked again
    return gate


# -- the session store -------------------------------------------------------------


def _open_store(
    config: Config, session: SessionSpec, cwd: str, note: Callable[[str], None]
) -> tuple[SessionStore, LoadedSession | None]:
    from .sessions import NullStore, open_backend

    if session is None:
        return NullStore(), None
    if not isinstance(session, (str, tuple)):
        store = session
        loaded = store.load_conversation()
        return store, (loaded if len(loaded.conversation) or loaded.dangling_user else None)
    backend = open_backend(config)  # [session] store/url/path/dir, PANTO_SESSION_URL
    ref = None
    if session == "continue":
        ref = backend.most_recent(cwd)
        if ref is None:
            note("no earlier session in this directory; starting a new one")
    elif isinstance(session, tuple) and len(session) == 2 and session[0] == "resume":
        ref = session[1]  # an id prefix (or, for JSONL, a session file)
    elif session != "new":
        raise ValueError(
            f"session must be 'new', 'continue', ('resume', ID), None or a store, not {session!r}"
        )
    if ref is None:
        return backend.create(cwd), None
    store = backend.open(ref)
    try:
        loaded = store.load_conversation()
    except BaseException:
        store.close()
        raise
    return store, loaded


# -- extensions (the Lua runtime) ----------------------------------------------------


def _load_extensions(
    config: Config,
    cwd: str,
    extensions: bool | Literal["builtin"],
    deny: Sequence[str],
    note: Callable[[str], None],
    lease: _LuaLease | None = None,
) -> Extensions:
    """Start the Lua runtime and load extensions; never fatal: problems are
    notices and panto carries on with what loaded (or without Lua).
    ``lease`` takes the Lua state of the extension set when the runtime
    starts (default: the process runtime)."""
    if extensions is False:
        return Extensions()
    import panto.lua as plua  # cheap: lupa loads when the runtime starts
    from panto.lua import lazy

    def start() -> tuple[Any, Any]:
        # (with the start-up cache this runs at the first tool call, if ever)
        no_ext = extensions == "builtin"
        rt = lease.runtime(config, cwd, no_ext, deny) if lease is not None else None
        try:
            return plua.create_source(
                config=config, cwd=cwd, no_extensions=no_ext, deny=list(deny), runtime=rt
            )
        except BaseException:
            if lease is not None:
                lease.drop()
            raise

    try:
        key = lazy.startup_key(config, cwd=cwd, no_extensions=extensions == "builtin", deny=deny)
    except Exception as e:  # noqa: BLE001 - no cache then: the eager load reports problems
        log.debug("no extension start-up cache: %s", e)
        key = None
    if key is not None:
        cached = lazy.cached_source(key, start)
        if cached is not None:  # the runtime starts when a tool first runs
            return Extensions(cached)
    try:
        src, report = start()
    except ImportError as e:
        return _no_lua(f"Lua extensions are unavailable ({e})", note)
    except Exception as e:  # noqa: BLE001 - lupa missing or broken, a bad runtime
        cause = e.__cause__ if isinstance(e.__cause__, ImportError) else None
        if cause is not None:
            return _no_lua(f"Lua extensions are unavailable ({cause})", note)
        return _no_lua(f"Lua extensions are unavailable: {e}", note)
    for err in report.errors:
        note(f"extension: {err}")
    if key is not None:
        lazy.save(key, src, report)
    return Extensions(src, report)


def _no_lua(msg: str, note: Callable[[str], None]) -> Extensions:
    note(msg + "; continuing without Lua tools")
    return Extensions(None, None, msg)
