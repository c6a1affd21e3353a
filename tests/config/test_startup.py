"""Start-up work panto must not do: TLS certificates for an http:// provider."""

from __future__ import annotations

import socket
import ssl
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from support.oneshot import make_ca_and_server_cert

from panto.agent import Agent
from panto.config import Config
from panto.conversation import Text
from panto.errors import PantoError
from panto.providers.transport import tls_verify
from panto.testing import Reply, ScriptedServer, render_sse


def _count_cert_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    loads: list[str] = []
    for name in ("load_verify_locations", "load_default_certs"):
        orig = getattr(ssl.SSLContext, name)

        def counting(self: Any, *a: Any, _orig: Any = orig, _name: str = name, **k: Any) -> Any:
            loads.append(_name)
            return _orig(self, *a, **k)

        monkeypatch.setattr(ssl.SSLContext, name, counting)
    return loads


def test_tls_certificates_load_only_for_https(monkeypatch: pytest.MonkeyPatch) -> None:
    loads = _count_cert_loads(monkeypatch)
    with ScriptedServer() as server:
        server.push(Reply([Text("ok")]))
        config = Config(
            provider="anthropic",
            model="m",
            base_url=server.base_url("anthropic-messages"),
            api_key="k",
            max_retries=0,
        )
        with Agent(config) as agent:
            agent.submit_user_message("hi")
            with agent.run() as stream:
                list(stream)
            assert loads == []  # an http:// provider: no CA bundle read
            # switching to an https provider gets a verifying client
            agent.config = Config(
                provider="anthropic",
                model="m",
                base_url="https://127.0.0.1:9",
                api_key="k",
                max_retries=0,
                connect_timeout=2.0,
            )
            agent.submit_user_message("again")
            with pytest.raises(PantoError), agent.run() as stream:
                list(stream)
    assert loads, "the https request must verify certificates"


def _https_sse_server(cert: Path, key: Path) -> tuple[int, socket.socket]:
    body = b"".join(render_sse(Reply([Text("secure")]), "anthropic-messages"))
    reply = (
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n"
        + f"content-length: {len(body)}\r\n\r\n".encode()
        + body
    )
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(str(cert), str(key))
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(4)

    def handle(raw: socket.socket) -> None:
        try:
            with ctx.wrap_socket(raw, server_side=True) as s:
                data = b""
                while b"\r\n\r\n" not in data:
                    chunk = s.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                head, _, body = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":")[1])
                while len(body) < length:  # all of it: closing on unread data resets
                    chunk = s.recv(65536)
                    if not chunk:
                        return
                    body += chunk
                s.sendall(reply)
        except (OSError, ssl.SSLError):
            pass

    def serve() -> None:
        while True:
            try:
                raw, _ = ls.accept()
            except OSError:
                return
            threading.Thread(target=handle, args=(raw,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return ls.getsockname()[1], ls


def test_https_verifies_against_the_system_ca_directory_lazily(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The system's hashed CA directory is used as OpenSSL's lazy lookup: a
    server signed by a CA in it is accepted, any other is refused."""
    capath, cert, key = make_ca_and_server_cert(tmp_path)
    port, ls = _https_sse_server(cert, key)
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    real = ssl.get_default_verify_paths()

    def config() -> Config:
        return Config(
            provider="anthropic",
            model="m",
            base_url=f"https://127.0.0.1:{port}",
            api_key="k",
            max_retries=0,
            connect_timeout=5.0,
        )

    try:
        monkeypatch.setattr(
            ssl, "get_default_verify_paths", lambda: real._replace(capath=str(capath))
        )
        loads = _count_cert_loads(monkeypatch)
        with Agent(config()) as agent:
            agent.submit_user_message("hi")
            with agent.run() as stream:
                list(stream)
            assert agent.conversation[-1].text == "secure"
        assert loads == ["load_verify_locations"]  # the directory only, no bundle parsed
        empty = tmp_path / "other-ca"
        empty.mkdir()
        (empty / "00000000.0").write_text("")  # a hashed dir without our CA
        monkeypatch.setattr(
            ssl, "get_default_verify_paths", lambda: real._replace(capath=str(empty))
        )
        with Agent(config()) as agent:
            agent.submit_user_message("hi")
            with pytest.raises(PantoError, match="(?i)certificate"), agent.run() as stream:
                list(stream)
    finally:
        ls.close()
    # a bundle of one's own in SSL_CERT_FILE is loaded as asked (httpx's default)
    monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
    assert tls_verify(True) is True


# -- panto -p without the Lua runtime, httpx or asyncio (panto.lua.lazy) ----------------

_PROBE = """\
import json, sys
from panto.cli import main
rc = main(sys.argv[1:])
heavy = ("asyncio", "lupa", "lupa.lua54", "httpx", "ssl", "panto.lua.runtime", "ast",
         # panto.logs, the argv fast path (panto.cli.chat), lazy imports where used
         "logging", "argparse", "gettext", "locale", "datetime", "base64", "queue",
         "ipaddress")
print(json.dumps({"rc": rc, "loaded": [m for m in heavy if m in sys.modules]}), file=sys.stderr)
"""


def _panto_p(server: ScriptedServer, cwd: Path, *args: str) -> dict[str, Any]:
    """``panto -p`` in a fresh interpreter against ``server``: its exit
    code, which heavy modules it imported, its stdout and stderr."""
    import json
    import os
    import sys

    env = dict(os.environ)
    env.update(
        PANTO_MODEL="anthropic/m",
        PANTO_BASE_URL=server.url,
        ANTHROPIC_API_KEY="sk-test-startup",
        PANTO_MAX_RETRIES="0",
    )
    r = subprocess.run(
        [sys.executable, "-c", _PROBE, "-p", "hi", "--no-session", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    lines = [ln for ln in r.stderr.splitlines() if ln.startswith('{"rc"')]
    assert lines, r.stderr
    out = json.loads(lines[-1])
    out.update(stdout=r.stdout, stderr=r.stderr)
    return out


def _tool_names(req: Any) -> list[str]:
    return [t["name"] for t in req.json.get("tools", [])]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def test_panto_p_starts_no_lua_runtime_httpx_or_asyncio_when_its_tools_are_cached(
    repo: Path,
) -> None:
    from panto import startup_cache
    from panto.lua import lazy

    with ScriptedServer() as server:
        server.push(Reply([Text("one")]), Reply([Text("two")]))
        first = _panto_p(server, repo)
        assert first["rc"] == 0 and "one" in first["stdout"]
        # the first start-up loads the extensions for real and records them
        assert "lupa" in first["loaded"] and "asyncio" in first["loaded"]
        assert list(startup_cache.cache_dir(lazy.KIND).glob("*.json"))
        second = _panto_p(server, repo)
        assert second["rc"] == 0 and "two" in second["stdout"]
        # nor httpx, nor ssl for http://, nor inspect's ast (startup_cache.defer_inspect_import),
        # nor logging, argparse, datetime... (imported where first needed)
        assert second["loaded"] == [], second["loaded"]
        # the model is offered the same tools either way
        tools = _tool_names(server.requests[0])
        assert {"read", "write", "edit", "bash", "grep", "find", "ls"} <= set(tools)
        assert server.requests[1].json["tools"] == server.requests[0].json["tools"]
        assert server.requests[1].json["system"] == server.requests[0].json["system"]


def test_a_tool_call_starts_the_runtime_through_the_policy(repo: Path) -> None:
    from panto.conversation import ToolUse

    (repo / "notes.txt").write_text("the cached runtime still reads\n")
    with ScriptedServer() as server:
        server.push(Reply([Text("warm")]))
        assert _panto_p(server, repo)["rc"] == 0  # records the cache
        server.push(
            Reply([ToolUse("t1", "read", {"path": "notes.txt"})]),
            Reply([Text("done")]),
        )
        run = _panto_p(server, repo)
        assert run["rc"] == 0 and "done" in run["stdout"]
        assert "lupa" in run["loaded"]  # started when the model called read
        result = server.requests[-1].json["messages"][-1]["content"][0]
        assert result["type"] == "tool_result" and "cached runtime still reads" in str(result)
        # --deny is part of the key: a denied tool is neither offered nor runnable
        server.push(Reply([Text("a")]), Reply([Text("b")]))
        _panto_p(server, repo, "--deny", "std.bash")
        again = _panto_p(server, repo, "--deny", "std.bash")
        assert again["loaded"] == []
        assert "bash" not in _tool_names(server.requests[-1])
        assert "read" in _tool_names(server.requests[-1])


def test_an_extension_of_ones_own_loads_at_start_up(repo: Path) -> None:
    import os

    ext = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "extensions"
    ext.mkdir(parents=True)
    (ext / "mine.lua").write_text(
        'return { name = "user.mine", activate = function() '
        'panto.ext.register_tool { name = "mine", description = "d", '
        'schema = { type = "object" }, handler = function() return "x" end } end }\n'
    )
    with ScriptedServer() as server:
        server.push(Reply([Text("1")]), Reply([Text("2")]))
        for _ in range(2):
            run = _panto_p(server, repo)
            assert run["rc"] == 0 and "lupa" in run["loaded"]
        assert "mine" in _tool_names(server.requests[-1])


def test_a_stale_cache_is_dropped_when_the_runtime_starts(tmp_path: Path) -> None:
    from panto import startup_cache
    from panto.config import Config
    from panto.lua import lazy
    from panto.tools import ToolCall

    cfg = Config(provider="anthropic", model="m", api_key="k")
    key = lazy.startup_key(cfg, cwd=str(tmp_path))
    assert key is not None
    started: list[int] = []

    class Real:
        def decls(self) -> list[Any]:
            return []  # the extensions no longer declare "ghost"

        def invoke_batch(self, calls: Any) -> list[Any]:
            return ["ran"] * len(calls)

    class Report:
        errors: list[str] = []

    def start() -> tuple[Any, Any]:
        started.append(1)
        return Real(), Report()

    d = startup_cache.cache_dir(lazy.KIND)
    d.mkdir(parents=True)
    (d / f"{key}.json").write_text(
        '{"v": 1, "decls": [{"name": "ghost", "description": "g", "schema": {}, '
        '"timeout": null}], "commands": {}, "prompts": [], "entries": []}'
    )
    src = lazy.cached_source(key, start)
    assert src is not None and [d.name for d in src.decls()] == ["ghost"] and not started
    assert src.hooks.user_message("x") == "x" and not started  # no handlers: no start
    assert src.invoke_batch([ToolCall("1", "ghost", {})]) == ["ran"] and started == [1]
    assert not (d / f"{key}.json").exists()
    assert src.decls() == []


def test_no_cache_key_with_rocks_paths_or_the_cache_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from panto.config import Config
    from panto.lua import lazy

    cfg = Config(provider="anthropic", model="m", api_key="k")
    key = lazy.startup_key(cfg, cwd=str(tmp_path))
    assert key is not None and key == lazy.startup_key(cfg, cwd=str(tmp_path))
    assert lazy.startup_key(cfg, cwd=str(tmp_path), deny=["std.bash"]) != key
    monkeypatch.setenv("PANTO_STARTUP_CACHE", "0")
    assert lazy.startup_key(cfg, cwd=str(tmp_path)) is None


def test_the_lazy_base_dirs_are_the_loaders() -> None:
    from panto.lua import lazy, loader

    assert lazy.base_dirs() == loader.base_dirs()


def test_the_builtin_extensions_read_nothing_of_panto_config() -> None:
    """The start-up cache key holds only the ``[extensions]`` tables of the
    config: a built-in extension that read ``panto.config`` (the model, the
    base URL...) to decide what it registers would need more in the key."""
    import panto.lua

    std = Path(panto.lua.__file__).parent / "extensions"
    files = list(std.rglob("*.lua"))
    assert files
    for f in files:
        assert "panto.config" not in f.read_text(), f


def test_a_parsed_config_file_is_cached_by_its_text(user_dir: Path) -> None:
    """The second start-up reads the user's config.toml without importing
    the TOML parser; a changed file is parsed again; a value JSON cannot
    hold exactly (a date) is never cached."""
    import json
    import os
    import sys

    code = (
        "import json, sys\n"
        "from panto.config import Config\n"
        "c = Config.load()\n"
        "print(json.dumps([c.max_tokens, 'tomllib' in sys.modules]))\n"
    )

    def load() -> list[Any]:
        r = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ
        )
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    cfg = user_dir / "config.toml"
    cfg.write_text("max_tokens = 1234\n")
    assert load() == [1234, True]
    assert load() == [1234, False]
    cfg.write_text("max_tokens = 4321\n")
    assert load() == [4321, True]
    assert load() == [4321, False]
    cfg.write_text('max_tokens = 99\n[extensions."x.y"]\nwhen = 1979-05-27\n')
    assert load() == [99, True]
    assert load() == [99, True]  # a date: parsed every time


_DC_PROBE = """\
import json, sys
from panto.startup_cache import code_cache_stats, install_dataclass_code_cache
install_dataclass_code_cache()
import dataclasses
from dataclasses import dataclass, field

@dataclass(frozen=True, slots=True)
class Point:
    x: int
    y: int = 2
    tags: tuple[str, ...] = ()

@dataclass
class Box:
    items: list[int] = field(default_factory=list)
    label: str = "b"

p = Point(1)
try:
    p.x = 5
    frozen = False
except dataclasses.FrozenInstanceError:
    frozen = True
b = Box()
b.items.append(1)
out = {
    "repr": [repr(p), repr(Box()), repr(b)],
    "eq": [p == Point(1, 2, ()), p != Point(2), hash(p) == hash(Point(1))],
    "frozen": frozen,
    "fields": [f.name for f in dataclasses.fields(Point)],
    "replace": repr(dataclasses.replace(p, y=9)),
    "annotations": repr(Point.__init__.__annotations__),
    "stats": code_cache_stats(),
}
print(json.dumps(out))
"""


def test_dataclass_code_cache_gives_the_same_classes_compiled_once() -> None:
    """The ``panto`` command keeps dataclasses' generated methods compiled
    between runs (panto.startup_cache): the second run compiles none of
    them, and the classes behave exactly as without the cache."""
    import json
    import os
    import sys

    def run(env: dict[str, str]) -> dict[str, Any]:
        r = subprocess.run(
            [sys.executable, "-c", _DC_PROBE], capture_output=True, text=True, timeout=60, env=env
        )
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    env = dict(os.environ)
    first = run(env)
    second = run(env)
    hits, compiled = first.pop("stats")
    assert compiled >= 6 and hits == 0  # __init__, __repr__, __eq__, ... of both classes
    hits2, compiled2 = second.pop("stats")
    assert compiled2 == 0 and hits2 == compiled
    assert first == second
    assert first["frozen"] and all(first["eq"]) and first["fields"] == ["x", "y", "tags"]
    assert (
        first["repr"][0] == "Point(x=1, y=2, tags=())"
        and first["repr"][2] == "Box(items=[1], label='b')"
    )
    # annotations are objects, not strings (no __future__ flag leaked into the compile)
    assert "<class 'int'>" in first["annotations"]
    off = run(dict(env, PANTO_STARTUP_CACHE="0"))
    off.pop("stats")
    assert off == first


def test_deferred_inspect_is_the_real_module_on_first_use() -> None:
    import json
    import os
    import sys

    code = (
        "import json, sys\n"
        "from panto.startup_cache import defer_inspect_import\n"
        "assert defer_inspect_import()\n"
        "import dataclasses, inspect\n"
        "early = 'ast' in sys.modules\n"
        "@dataclasses.dataclass\n"
        "class NoDoc:\n"
        "    x: int = 1\n"
        "from inspect import isclass\n"
        "sig = str(inspect.signature(lambda a, b=2: 0))\n"
        "print(json.dumps([early, NoDoc.__doc__, isclass(NoDoc), sig,\n"
        "                  sys.modules['inspect'].__name__, hasattr(sys.modules['inspect'], 'stack'),\n"
        "                  type(sys.modules['inspect']).__name__]))\n"
    )
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, env=os.environ
    )
    assert r.returncode == 0, r.stderr
    early, doc, isclass, sig, name, has_stack, kind = json.loads(r.stdout)
    assert early is False  # nothing of inspect was imported until used
    assert doc == "NoDoc(x: int = 1)" and isclass and sig == "(a, b=2)"
    assert name == "inspect" and has_stack and kind == "module"  # the real one now
