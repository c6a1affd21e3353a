"""MCP servers as one ``ToolSource`` (named ``mcp``), on the official SDK.

One background thread runs an asyncio loop holding every server's
connection.  Nothing waits for a server at start-up: connections start in
the background (a second after start-up when every tool list is cached, so
the first request is not slowed), and the tools offered are the list cached from the last run
(``$XDG_CACHE_HOME/panto/mcp/<server>-<config digest>.json``) until the
server answers.  Only a server never seen before (no cache) is waited for,
up to its ``startup_timeout``, the first time its tools are asked for.

- A tool call waits for its server (up to ``startup_timeout``), then runs
  with ``tool_timeout`` reset by each progress notification; a timeout, an
  error or ``isError`` is an ``is_error`` result, never a crashed turn.
- ``tools/list_changed`` (the 2025-11-25 notification and the 2026-07-28
  subscription) refetches the list; the agent reads the list at the start
  of each turn, so a change applies between turns, never mid-request.
- stdio servers inherit only the SDK's short list of safe variables plus
  their ``env`` (no API keys), run in their own process group (the SDK's
  ``start_new_session``) and carry panto's process mark, so panto's watcher
  kills them when panto dies, SIGKILL included (panto.lua.procs).  A server
  that crashed restarts once, on the next call.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..conversation import Image
from ..logs import get_logger
from ..paths import private_dirs
from ..tools import CancelToken, ToolCall, ToolDecl, ToolOutput, ToolSource
from .names import normalize_schema, tool_name
from .spec import ServerSpec

if TYPE_CHECKING:  # (asyncio is imported by the loop thread: not on panto -p's start-up path)
    import asyncio
    from concurrent.futures import Executor, Future

__all__ = ["MCPToolSource", "ServerStatus"]

log = get_logger("panto.mcp")

#: Restarts of a crashed server before its calls just fail.
_MAX_RESTARTS = 1
#: Seconds after start-up that servers whose tool lists are all cached are
#: connected (a tool call connects at once).
START_DELAY = 1.0


@dataclass
class ServerStatus:
    """What ``/mcp`` and ``panto mcp list`` show for one server."""

    name: str
    state: str  # "starting", "ready", "failed", "disabled"
    tools: int
    cached: bool
    error: str | None
    target: str


class _Server:
    def __init__(self, spec: ServerSpec, source: MCPToolSource) -> None:

        self.spec = spec
        self.source = source
        self.state = "starting" if spec.enabled else "disabled"
        self.error: str | None = None
        #: exposed name -> (the server's tool name, decl)
        self.tools: dict[str, tuple[str, ToolDecl]] = {}
        self.cached = False
        #: the first turn has looked at this server (waited for it once,
        #: said so when it is not there)
        self.looked_at = False
        self.client: Any = None
        self.ready: asyncio.Event | None = None
        self.done: asyncio.Event | None = None
        self.task: asyncio.Task[None] | None = None
        self.restarts = 0
        self.connected_once = threading.Event()
        self._load_cache()

    # -- the tool list -----------------------------------------------------------

    @property
    def cache_file(self) -> Path:
        return self.source.cache_dir / f"{self.spec.name}-{self.spec.digest()}.json"

    def _load_cache(self) -> None:
        try:
            data = json.loads(self.cache_file.read_text(encoding="utf-8"))
            self._set_tools(data["tools"])
            self.cached = True
        except (OSError, ValueError, KeyError, TypeError):
            pass

    def _set_tools(self, tools: list[dict[str, Any]]) -> None:
        out: dict[str, tuple[str, ToolDecl]] = {}
        for t in tools:
            name = t["name"]
            if not self.spec.wants(name):
                continue
            exposed = tool_name(self.spec.name, name)
            desc = t.get("description") or f"{name} (MCP server {self.spec.name})"
            out[exposed] = (name, ToolDecl(exposed, desc, normalize_schema(t.get("inputSchema"))))
        self.tools = out

    def _save_cache(self, tools: list[dict[str, Any]]) -> None:
        try:
            private_dirs(self.source.cache_dir)  # its parents too (~/.cache/panto)
            tmp = self.cache_file.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump({"tools": tools}, f)
            os.replace(tmp, self.cache_file)
        except OSError as e:
            log.debug("mcp %s: tool list not cached: %s", self.spec.name, e)

    async def refresh(self) -> None:
        tools: list[dict[str, Any]] = []
        cursor = None
        while True:
            res = await self.client.list_tools(cursor=cursor, cache_mode="refresh")
            tools += [
                {"name": t.name, "description": t.description, "inputSchema": t.input_schema}
                for t in res.tools
            ]
            cursor = getattr(res, "next_cursor", None)
            if not cursor:
                break
        self._set_tools(tools)
        self._save_cache(tools)
        self.source.changed = True

    # -- the connection ----------------------------------------------------------

    def _transport(self) -> Any:
        spec = self.spec
        if spec.url:
            from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client

            headers = dict(spec.headers)
            if spec.bearer_token_env:
                token = self.source.env.get(spec.bearer_token_env)
                if not token:
                    raise RuntimeError(
                        f"{spec.bearer_token_env} is not set (bearer_token_env of this server)"
                    )
                headers["Authorization"] = f"Bearer {token}"
            return streamable_http_client(
                spec.url, http_client=create_mcp_http_client(headers=headers)
            )
        from mcp import StdioServerParameters
        from mcp.client.stdio import stdio_client

        from ..lua.procs import MARK, new_token

        env = dict(spec.env)
        env[MARK] = (self.source.env.get(MARK, "") + " " + new_token()).strip()
        params = StdioServerParameters(
            command=spec.command[0], args=list(spec.command[1:]), env=env, cwd=spec.cwd
        )
        return stdio_client(params, errlog=self.source.errlog(spec.name))

    async def run(self) -> None:
        """Connect, list the tools, follow list changes until closed."""
        import asyncio

        from mcp import Client

        assert self.ready is not None and self.done is not None
        self.state, self.error = "starting", None
        try:
            async with Client(self._transport(), message_handler=self._on_message) as client:
                self.client = client
                await self.refresh()
                self.state = "ready"
                self.ready.set()
                self.connected_once.set()
                await self._follow(client)
        except asyncio.CancelledError:
            raise
        except BaseException as e:  # noqa: BLE001 - a server's failure is its status
            self.error = _one_line(e)
            log.debug("mcp %s failed: %r", self.spec.name, e)
        finally:
            self.client = None
            if self.state != "disabled":
                self.state = "failed" if self.error else "closed"
            self.ready.set()  # waiters see the failure at once
            self.connected_once.set()
            self.done.set()

    async def _follow(self, client: Any) -> None:
        """Refetch the tool list on every change event (2026-07-28); older
        servers notify through ``_on_message``.  Returns when the
        connection ends."""
        import asyncio

        try:
            async with client.listen(tools_list_changed=True) as sub:
                async for _event in sub:
                    await self.refresh()
        except Exception as e:  # noqa: BLE001 - legacy server, or the stream ended
            log.debug("mcp %s: no change subscription (%s)", self.spec.name, e)
        # legacy servers: keep the connection open; notifications arrive in _on_message
        await asyncio.Event().wait()

    async def _on_message(self, message: Any) -> None:
        import mcp.types as mt

        root = getattr(message, "root", message)
        if isinstance(root, mt.ToolListChangedNotification) and self.client is not None:
            try:
                await self.refresh()
            except Exception as e:  # noqa: BLE001
                log.debug("mcp %s: refetch failed: %s", self.spec.name, e)
        elif isinstance(message, Exception):
            log.debug("mcp %s: transport: %s", self.spec.name, message)

    def start(self, loop: asyncio.AbstractEventLoop) -> None:
        import asyncio

        self.ready, self.done = asyncio.Event(), asyncio.Event()
        self.task = loop.create_task(self.run())

    async def client_for_call(self) -> Any:
        """The connected client, waiting up to ``startup_timeout``; a
        crashed server restarts once."""
        import asyncio

        if self.client is None and self.done is not None and self.done.is_set():
            if self.restarts >= _MAX_RESTARTS:
                raise RuntimeError(f"server {self.spec.name} is down: {self.error or 'closed'}")
            self.restarts += 1
            self.start(asyncio.get_running_loop())
        assert self.ready is not None
        try:
            await asyncio.wait_for(self.ready.wait(), self.spec.startup_timeout)
        except asyncio.TimeoutError:
            raise RuntimeError(
                f"server {self.spec.name} did not start within {self.spec.startup_timeout:g} s "
                "(startup_timeout)"
            ) from None
        if self.client is None:
            raise RuntimeError(f"server {self.spec.name} is down: {self.error or 'closed'}")
        return self.client

    async def call(self, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        import asyncio

        client = await self.client_for_call()
        last = [time.monotonic()]

        async def progress(*_: Any) -> None:

            last[0] = time.monotonic()

        task = asyncio.ensure_future(client.call_tool(tool, arguments, progress_callback=progress))
        limit = self.spec.tool_timeout
        try:
            while True:
                left = last[0] + limit - time.monotonic()
                if left <= 0:
                    task.cancel()
                    return ToolOutput(
                        f"MCP tool {tool} (server {self.spec.name}) timed out after {limit:g} s "
                        "without progress (tool_timeout)",
                        True,
                    )
                done, _ = await asyncio.wait({task}, timeout=left)
                if done:
                    break
        except asyncio.CancelledError:
            task.cancel()
            raise
        return _output(task.result(), self.spec.max_output)

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(BaseException):
                await self.task


def _output(result: Any, max_output: int) -> ToolOutput:
    texts: list[str] = []
    images: list[Image] = []
    for block in getattr(result, "content", None) or []:
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind == "image":
            images.append(Image(block.mime_type, block.data))
        else:
            texts.append(json.dumps(block.model_dump(mode="json", exclude_none=True)))
    if not texts and getattr(result, "structured_content", None) is not None:
        texts.append(json.dumps(result.structured_content))
    text = "\n".join(texts)
    if len(text) > max_output:
        text = (
            text[:max_output]
            + f"\n[output cut: {len(text):,} characters, the first {max_output:,} shown (max_output)]"
        )
    if not text and not images:
        text = "(no output)"
    return ToolOutput(text, bool(getattr(result, "is_error", False)), tuple(images))


def _one_line(e: BaseException) -> str:
    inner = getattr(e, "exceptions", None)  # anyio task groups wrap the cause
    if inner:
        return _one_line(inner[0])
    msg = str(e).strip().splitlines()
    return f"{type(e).__name__}: {msg[0]}" if msg else type(e).__name__


class MCPToolSource(ToolSource):
    """Every configured MCP server's tools (see the module docstring)."""

    name = "mcp"

    def __init__(
        self,
        specs: Sequence[ServerSpec],
        *,
        cache_dir: Path,
        log_dir: Path,
        env: Mapping[str, str] | None = None,
        notify: Callable[[str], None] | None = None,
    ) -> None:

        self.cache_dir = cache_dir
        #: told (one line) when a server waited for at the first turn is not there
        self.notify = notify
        self.log_dir = log_dir
        self.env = dict(os.environ if env is None else env)
        self.changed = False
        self._servers = {s.name: _Server(s, self) for s in specs}
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._running: list[Future[ToolOutput]] = []
        self._lock = threading.Lock()
        self._logs: dict[str, Any] = {}
        self._start_lock = threading.Lock()
        self._closed = False
        self._timer: threading.Timer | None = None
        enabled = [s for s in self._servers.values() if s.spec.enabled]
        if enabled and all(s.cached for s in enabled):
            # Every tool list is cached: connect a moment later, so that the
            # first request goes out before the SDK's import (~0.6 s of CPU)
            # competes with panto's start-up.  A call connects at once.
            self._timer = threading.Timer(START_DELAY, self._ensure_started)
            self._timer.daemon = True
            self._timer.start()
        elif enabled:
            self._ensure_started()

    # -- the loop thread ---------------------------------------------------------

    def _ensure_started(self) -> None:
        with self._start_lock:
            if self._thread is None and not self._closed:
                self._start()

    def _start(self) -> None:
        import asyncio

        started = threading.Event()

        def main() -> None:

            loop = asyncio.new_event_loop()
            self._loop = loop
            asyncio.set_event_loop(loop)
            for s in self._servers.values():
                if s.spec.enabled:
                    s.start(loop)
            started.set()
            loop.run_forever()
            loop.close()

        self._thread = threading.Thread(target=main, name="panto-mcp", daemon=True)
        self._thread.start()
        started.wait()

    def _submit(self, coro: Any) -> Future[Any]:
        import asyncio

        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def errlog(self, name: str) -> Any:
        """The file a stdio server's stderr goes to (not the terminal)."""
        f = self._logs.get(name)
        if f is None:
            private_dirs(self.log_dir)
            fd = os.open(
                self.log_dir / f"{name}.log", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600
            )
            f = self._logs[name] = os.fdopen(fd, "a", encoding="utf-8", errors="replace")
        return f

    # -- ToolSource ----------------------------------------------------------------

    def decls(self) -> list[ToolDecl]:
        for s in self._servers.values():
            # a server never seen before: its tools are worth one wait
            if not s.spec.enabled or s.looked_at:
                continue
            s.looked_at = True
            if not s.cached and not s.connected_once.is_set():
                s.connected_once.wait(s.spec.startup_timeout)
                s.cached = True  # waited once; later turns take what there is
            self._missing(s)
        out: list[ToolDecl] = []
        for s in self._servers.values():
            if s.spec.enabled:
                out += [d for _, d in s.tools.values()]
        return out

    def _missing(self, s: _Server) -> None:
        """Say so when the server just waited for is not there: without a
        word the model simply lacked its tools (and a silent server cost
        ``startup_timeout`` seconds on every run)."""
        if self.notify is None or s.state not in ("failed", "starting"):
            return
        if s.state == "failed":
            why = f"failed to start ({s.error or 'closed'})"
        elif not s.connected_once.is_set() and not s.tools:  # waited for, in vain
            why = f"did not answer within {s.spec.startup_timeout:g} s (startup_timeout)"
        else:
            return  # starting, its cached tools offered meanwhile
        self.notify(
            f"MCP server {s.spec.name} {why}; going on without its tools "
            "(panto mcp list shows its state and where its stderr went)"
        )

    def _route(self, exposed: str) -> tuple[_Server, str] | None:
        for s in self._servers.values():
            hit = s.tools.get(exposed)
            if hit is not None:
                return s, hit[0]
        return None

    def invoke_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput]:
        from concurrent.futures import Future

        self._ensure_started()
        futures: list[Future[ToolOutput] | ToolOutput] = []
        for c in calls:
            route = self._route(c.name)
            if route is None or self._loop is None:
                futures.append(ToolOutput(f"no MCP tool named {c.name}", True))
                continue
            server, tool = route
            futures.append(self._submit(self._call(server, tool, c.input)))
        with self._lock:
            self._running = [f for f in futures if isinstance(f, Future)]
        out: list[ToolOutput] = []
        for f in futures:
            if isinstance(f, ToolOutput):
                out.append(f)
                continue
            try:
                out.append(f.result())
            except BaseException as e:  # noqa: BLE001 - cancelled, or a bug: a result all the same
                out.append(ToolOutput(f"cancelled ({type(e).__name__})", True))
        with self._lock:
            self._running = []
        return out

    async def ainvoke_batch(
        self,
        calls: Sequence[ToolCall],
        tokens: Sequence[CancelToken],
        *,
        executor: Executor | None = None,
    ) -> list[ToolOutput | None]:
        """Each call a task on the servers' loop, awaited without a thread;
        ``tokens[i]`` cancels ``calls[i]`` alone (the SDK tells the server
        with ``notifications/cancelled``)."""
        import asyncio

        self._ensure_started()
        pending: list[asyncio.Future[ToolOutput] | ToolOutput] = []
        removers = []
        for c, token in zip(calls, tokens):
            route = self._route(c.name)
            if route is None or self._loop is None:
                pending.append(ToolOutput(f"no MCP tool named {c.name}", True))
                continue
            server, tool = route
            fut = self._submit(self._call(server, tool, c.input))
            removers.append(token.on_cancel(fut.cancel))  # thread-safe; cancels the task
            pending.append(asyncio.wrap_future(fut))
        out: list[ToolOutput | None] = []
        try:
            for p, token in zip(pending, tokens):
                if isinstance(p, ToolOutput):
                    out.append(p)
                    continue
                try:
                    out.append(await p)
                except asyncio.CancelledError:
                    if not token.cancelled:
                        raise  # the awaiting task itself was cancelled
                    out.append(ToolOutput(token.reason or "cancelled", True))
        except asyncio.CancelledError:
            for p in pending:
                if not isinstance(p, ToolOutput):
                    p.cancel()
            raise
        finally:
            for remove in removers:
                remove()
        return out

    async def _call(self, server: _Server, tool: str, arguments: dict[str, Any]) -> ToolOutput:
        import asyncio

        try:
            return await server.call(tool, arguments)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - every failure is the model's to read
            return ToolOutput(
                f"MCP tool {tool} (server {server.spec.name}) failed: {_one_line(e)}", True
            )

    def cancel(self) -> None:
        with self._lock:
            for f in self._running:
                f.cancel()

    # -- status and shutdown -------------------------------------------------------

    def status(self) -> list[ServerStatus]:
        return [
            ServerStatus(s.spec.name, s.state, len(s.tools), s.cached, s.error, s.spec.describe())
            for s in self._servers.values()
        ]

    def wait_ready(self, timeout: float) -> None:
        """Wait until every enabled server is connected or failed (tests,
        ``panto mcp list``)."""
        self._ensure_started()
        deadline = time.monotonic() + timeout
        for s in self._servers.values():
            if s.spec.enabled:
                s.connected_once.wait(max(0.0, deadline - time.monotonic()))

    def close(self) -> None:
        """Stop every server (the SDK terminates stdio process trees) and
        the loop thread."""
        import asyncio

        with self._start_lock:
            self._closed = True
            if self._timer is not None:
                self._timer.cancel()
        loop = self._loop
        if loop is None:
            return
        self._loop = None

        async def stop_all() -> None:
            import asyncio

            await asyncio.gather(*(s.close() for s in self._servers.values()))

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(stop_all(), loop).result(10)
        loop.call_soon_threadsafe(loop.stop)
        if self._thread is not None:
            self._thread.join(5)
        for f in self._logs.values():
            with contextlib.suppress(OSError):
                f.close()
