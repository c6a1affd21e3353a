"""The host table: the Python functions panto's Lua prelude builds the
``panto`` batteries and the extension API on.

``make_host(runtime)`` is called once per Lua state, on the runtime's loop
thread; every function runs there.  The functions see the runtime through a
weak proxy and only through its public methods.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re
import time
import weakref
from collections.abc import Callable, Coroutine
from typing import Any

from ..errors import ToolError
from ..logs import logging_module
from . import batteries, procs
from .batteries import Op
from .control import (
    HOOK_COUNT,
    LuaScriptError,
    call_sandbox,
    call_tasks,
    current_entry,
)
from .control import (
    evaluating as evaluating_var,
)
from .convert import describe, text

__all__ = ["make_host"]


def make_host(runtime: Any) -> Any:
    """The host table for ``runtime`` (a :class:`panto.lua.runtime.LuaRuntime`)."""
    # The Lua state keeps these closures alive; they must not keep the
    # runtime alive in turn (a lupa runtime collected inside a reference
    # cycle can crash the GC), so they see it through a weak proxy.
    rt = weakref.proxy(runtime)

    def sync(fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any) -> Any:
            try:
                return (True, fn(*args))
            except Exception as e:  # noqa: BLE001 - becomes a Lua error
                return (False, describe(e).encode())

        return wrapper

    def op(fn: Callable[..., Coroutine[Any, Any, Any]]) -> Callable[..., Op]:
        # arguments are converted now, while their coroutine runs
        def wrapper(*args: Any) -> Op:
            py = [rt.from_lua(a) for a in args]
            return Op(lambda: fn(*py))

        return wrapper

    def s(v: Any) -> str:
        return text(v)

    def fs_read(path: bytes, opts: Any = None) -> bytes:
        o = rt.from_lua(opts) if opts is not None else {}
        limit = o.get("limit")
        return batteries.fs_read(
            s(path), int(o.get("offset") or 0), int(limit) if limit is not None else None
        )

    def fs_write(path: bytes, data: bytes, opts: Any = None) -> int:
        o = rt.from_lua(opts) if opts is not None else {}
        if isinstance(data, str):
            data = data.encode()
        mode = o.get("mode")
        return batteries.fs_write_atomic(
            s(path),
            data,
            mkdir=o.get("mkdir", True),
            atomic=o.get("atomic", True),
            mode=int(mode) if mode is not None else None,
        )

    # panto.fs.write of a large string: open, the string in slices, close
    writers: dict[int, batteries.FileWriter] = {}
    writer_ids = iter(range(1, 1 << 62))

    def fs_write_open(path: bytes, opts: Any = None) -> int:
        o = rt.from_lua(opts) if opts is not None else {}
        mode = o.get("mode")
        w = batteries.FileWriter(
            s(path),
            mkdir=o.get("mkdir", True),
            atomic=o.get("atomic", True),
            mode=int(mode) if mode is not None else None,
        )
        wid = next(writer_ids)
        writers[wid] = w
        return wid

    def fs_write_chunk(wid: int, data: bytes) -> bool:
        w = writers[wid]
        try:
            w.write(data)
        except BaseException:
            del writers[wid]
            raise
        return True

    def fs_write_close(wid: int, commit: bool) -> int:
        w = writers.pop(wid)
        if not commit:
            w.abort()
            return 0
        return w.commit()

    def fs_stat(path: bytes) -> Any:
        import stat as st

        try:
            r = os.stat(s(path))
        except FileNotFoundError:
            return None
        except NotADirectoryError:
            return None
        kind = _stat_type(r.st_mode)
        return rt.to_lua(
            {
                "type": kind,
                "size": r.st_size,
                "mode": st.S_IMODE(r.st_mode),
                "mtime": r.st_mtime,
                "path": os.path.abspath(s(path)),
            }
        )

    def fs_list(path: bytes) -> Any:
        return rt.to_lua(sorted(os.listdir(s(path))))

    def fs_mkdir(path: bytes, opts: Any = None) -> bool:
        o = rt.from_lua(opts) if opts is not None else {}
        if o.get("parents", True):
            os.makedirs(s(path), exist_ok=True)
        else:
            os.mkdir(s(path))
        return True

    def fs_remove(path: bytes, opts: Any = None) -> bool:
        import shutil

        o = rt.from_lua(opts) if opts is not None else {}
        p = s(path)
        if os.path.isdir(p) and not os.path.islink(p):
            if o.get("recursive"):
                shutil.rmtree(p)
            else:
                os.rmdir(p)
        else:
            os.unlink(p)
        return True

    def fs_glob(pattern: bytes, opts: Any = None) -> Any:
        o = rt.from_lua(opts) if opts is not None else {}
        return rt.to_lua(batteries.fs_glob(s(pattern), o.get("cwd"), bool(o.get("hidden"))))

    def diff(a: bytes, b: bytes, opts: Any = None) -> bytes:
        import difflib

        o = rt.from_lua(opts) if opts is not None else {}
        old_name = str(o.get("from") or "a")
        new_name = str(o.get("to") or "b")
        n = int(o.get("context", 3))
        lines = difflib.unified_diff(
            s(a).splitlines(keepends=True),
            s(b).splitlines(keepends=True),
            old_name,
            new_name,
            n=n,
        )
        out = []
        for line in lines:
            out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
        return "".join(out).encode("utf-8", "surrogateescape")

    def b64encode(data: bytes) -> bytes:
        import base64

        return base64.b64encode(data)

    def json_decode(text: bytes) -> Any:
        return rt.to_lua(json.loads(text))

    async def sleep(ms: Any = 0) -> None:
        await asyncio.sleep(max(0.0, float(ms or 0)) / 1000.0)

    async def spawn(o: Any = None) -> Any:
        if not isinstance(o, dict):
            raise ToolError("panto.process.spawn expects a table {cmd, args | shell, ...}")
        if o.get("shell") is not None:
            argv = ["/bin/sh", "-c", str(o["shell"])]
        elif o.get("cmd"):
            args = o.get("args") or []
            if not isinstance(args, list):
                raise ToolError("panto.process.spawn: 'args' must be a list")
            argv = [str(o["cmd"]), *(str(a) for a in args)]
        else:
            raise ToolError("panto.process.spawn needs 'cmd' (with 'args') or 'shell'")
        env = o.get("env")
        stdin = o.get("stdin")
        timeout = o.get("timeout")
        limit = o.get("output_limit")
        result = await procs.spawn_process(
            argv,
            cwd=o.get("cwd"),
            env={str(k): str(v) for k, v in env.items()} if env else None,
            stdin=stdin.encode("utf-8", "surrogateescape") if isinstance(stdin, str) else None,
            timeout=float(timeout) if timeout is not None else None,
            merge_stderr=bool(o.get("merge_stderr")),
            output_limit=int(limit) if limit is not None else None,
            grace=float(o.get("kill_grace", procs.KILL_GRACE)),
            registry=rt.processes,
            sandbox=call_sandbox.get(),  # a tool call's; extensions' own code runs unconfined
        )
        return rt.to_lua(result, drop_null=True)

    async def http_request(o: Any = None) -> Any:
        if not isinstance(o, dict) or not o.get("url"):
            raise ToolError("panto.http.request expects a table with 'url'")
        client = await rt.http_client()
        body = o.get("body")
        kwargs: dict[str, Any] = {}
        if o.get("json") is not None:
            kwargs["json"] = o["json"]
        elif body is not None:
            kwargs["content"] = (
                body.encode("utf-8", "surrogateescape") if isinstance(body, str) else body
            )
        timeout = o.get("timeout", 30.0)
        resp = await client.request(
            str(o.get("method", "GET")).upper(),
            str(o["url"]),
            headers=o.get("headers") or None,
            timeout=float(timeout) if timeout is not None else None,
            follow_redirects=bool(o.get("follow_redirects", True)),
            **kwargs,
        )
        return rt.to_lua(
            {
                "status": resp.status_code,
                "headers": {k.lower(): v for k, v in resp.headers.items()},
                "body": resp.content,
                "url": str(resp.url),
            }
        )

    def future() -> Op:
        fut: asyncio.Future[Any] = rt.loop.create_future()
        o = Op(lambda: fut)
        o.future = fut
        return o

    def resolve(o: Op) -> None:
        fut = o.future
        if not fut.done():
            fut.set_result(None)

    def task_spawn(fid: int) -> Any:
        fn = rt.objects[fid]
        rt.objects[fid] = None
        task = rt.loop.create_task(rt.drive(rt.rt.run, fn, convert=rt.convert_results))
        tasks = call_tasks.get()
        if tasks is not None:
            tasks.add(task)
        return task

    def task_wait(task: asyncio.Task[Any]) -> Op:
        async def _w() -> None:
            ok, val = await asyncio.shield(task)
            if not ok:
                raise LuaScriptError(val)

        return Op(_w)

    def task_cancel(task: asyncio.Task[Any]) -> None:
        task.cancel()

    def log_(level: bytes, msg: bytes) -> None:
        entry = current_entry.get()
        name = f"panto.lua.{entry}" if entry else "panto.lua"
        logging = logging_module()  # the redaction installed first (panto.logs)
        logging.getLogger(name).log(logging.getLevelName(s(level).upper()), "%s", s(msg))

    def evaluating() -> Any:
        ev = evaluating_var.get()
        return ev.encode() if ev else None

    def register_tool(name: Any, desc: Any, schema: bytes, hid: int, timeout: Any) -> Any:
        try:
            rt.register_tool(s(name), s(desc), json.loads(schema), rt.objects[hid], timeout)
        except (ToolError, ValueError) as e:
            return (False, str(e).encode())
        return (True,)

    def register_command(name: Any, desc: Any, hid: int) -> Any:
        n = s(name).lstrip("/")
        if not n or any(c.isspace() for c in n):
            return (False, f"invalid command name {n!r}".encode())
        rt.register_command(n, s(desc), rt.objects[hid])
        return (True,)

    def register_prompt(part: Any, fid: Any) -> None:
        rt.register_prompt(s(part) if part is not None else rt.objects[fid])

    def register_hook(event: bytes, hid: int) -> None:
        rt.register_hook(s(event), rt.objects[hid])

    def register_provider(spec: Any, prepare: Any, respond: Any) -> Any:
        o = rt.from_lua(spec)
        try:
            name, wire, base_url, model, timeout = _provider_spec(o, prepare, respond)
        except ValueError as e:
            return (False, f"panto.provider.register: {e}".encode())
        rt.register_provider(
            name,
            wire,
            base_url,
            model,
            rt.objects[prepare] if prepare else None,
            rt.objects[respond] if respond else None,
            timeout,
        )
        return (True,)

    funcs: dict[bytes, Any] = {
        b"fs_read": sync(fs_read),
        b"fs_write": sync(fs_write),
        b"fs_write_open": sync(fs_write_open),
        b"fs_write_chunk": sync(fs_write_chunk),
        b"fs_write_close": sync(fs_write_close),
        b"fs_stat": sync(fs_stat),
        b"fs_list": sync(fs_list),
        b"fs_mkdir": sync(fs_mkdir),
        b"fs_remove": sync(fs_remove),
        b"fs_glob": sync(fs_glob),
        b"json_decode": sync(json_decode),
        b"diff": sync(diff),
        b"b64encode": b64encode,
        b"sleep": op(sleep),
        b"now": time.time,
        b"monotonic": time.monotonic,
        b"spawn": op(spawn),
        b"http_request": op(http_request),
        b"future": future,
        b"resolve": resolve,
        b"task_spawn": task_spawn,
        b"task_wait": task_wait,
        b"task_cancel": task_cancel,
        b"log": log_,
        b"evaluating": evaluating,
        b"register_tool": register_tool,
        b"register_command": register_command,
        b"register_hook": register_hook,
        b"register_prompt": register_prompt,
        b"register_provider": register_provider,
        b"version": _version().encode(),
        b"poll": rt.poll,
        b"hook_count": HOOK_COUNT,
    }
    return runtime.lua.table_from(funcs)


#: what ``panto.provider.register`` accepts
PROVIDER_NAME = re.compile(r"^[a-z0-9][a-z0-9_.-]{0,63}$")
PROVIDER_WIRES = ("openai-chat", "anthropic-messages")


def _provider_spec(o: Any, prepare: Any, respond: Any) -> tuple[str, str, str, str, float | None]:
    """``(name, wire, base_url, default_model, timeout)`` of a
    ``panto.provider.register`` table; ValueError naming what is wrong."""
    from ..config import BUILTIN_PROVIDERS
    from ..config.schema import URL_EXPECTED, url_problem

    if not isinstance(o, dict):
        raise ValueError("expects a table {name, wire, base_url, prepare} or {name, stream}")
    name = o.get("name")
    if not isinstance(name, str) or not PROVIDER_NAME.match(name):
        raise ValueError(f"'name' must match {PROVIDER_NAME.pattern} (got {name!r})")
    if name in BUILTIN_PROVIDERS:
        raise ValueError(f"{name!r} is a built-in provider; choose another name")
    if bool(prepare) == bool(respond):
        raise ValueError(
            f"provider {name}: give exactly one of 'prepare' (an HTTP provider on a wire) "
            "and 'stream' (a provider that produces the turn itself)"
        )
    model = o.get("default_model") or ""
    if not isinstance(model, str):
        raise ValueError(f"provider {name}: 'default_model' must be a string")
    timeout = o.get("timeout")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            raise ValueError(f"provider {name}: 'timeout' must be a number of seconds > 0")
        timeout = float(timeout)
    elif prepare:
        timeout = 30.0  # a stream may run as long as the model does
    if respond:
        return name, "anthropic-messages", "", model, timeout
    wire = o.get("wire")
    if wire not in PROVIDER_WIRES:
        raise ValueError(
            f"provider {name}: 'wire' must be one of {', '.join(PROVIDER_WIRES)} (got {wire!r})"
        )
    base_url = o.get("base_url")
    if not isinstance(base_url, str) or url_problem(base_url):
        raise ValueError(f"provider {name}: 'base_url' must be {URL_EXPECTED} (got {base_url!r})")
    return name, str(wire), base_url.rstrip("/"), model, timeout


def _stat_type(mode: int) -> str:
    """``panto.fs.stat``'s ``type`` (symlinks are followed)."""
    import stat as st

    for test, name in (
        (st.S_ISREG, "file"),
        (st.S_ISDIR, "directory"),
        (st.S_ISFIFO, "fifo"),
        (st.S_ISCHR, "char_device"),
        (st.S_ISBLK, "block_device"),
        (st.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "other"


@functools.lru_cache(maxsize=1)
def _version() -> str:
    # panto's own version string: importlib.metadata costs ~20 ms at start-up
    from .. import __version__

    return __version__
