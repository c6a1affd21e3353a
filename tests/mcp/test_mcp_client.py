"""panto's MCP client (panto.mcp) against servers built with the official
SDK (tests/support/mcp_demo_server.py), over stdio and streamable HTTP,
with the agent talking to a real loopback provider on both wires."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from panto.app import open_session
from panto.config import Config
from panto.conversation import Text, ToolUse
from panto.mcp import normalize_schema, tool_name
from panto.testing import Reply, ScriptedServer

DEMO = str(Path(__file__).resolve().parents[1] / "support" / "mcp_demo_server.py")
WIRES = ("anthropic-messages", "openai-chat")
PROVIDER = {"anthropic-messages": "anthropic", "openai-chat": "openai"}
LONG = "a_tool_with_a_really_long_name_that_goes_on_and_on_past_sixty_four_ch"


@pytest.fixture(autouse=True)
def _home(isolated_home: Path) -> Path:
    return isolated_home


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server() -> Iterator[str]:
    port = free_port()
    p = subprocess.Popen(
        [sys.executable, DEMO, "http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), 0.2).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        p.kill()
        p.wait()


def tools_of(body: dict[str, Any]) -> dict[str, dict[str, Any]]:
    out = {}
    for t in body.get("tools", []):
        if "function" in t:
            out[t["function"]["name"]] = t["function"]["parameters"]
        else:
            out[t["name"]] = t["input_schema"]
    return out


def results_of(body: dict[str, Any]) -> list[str]:
    """Tool result texts of a request, either wire."""
    out = []
    for m in body["messages"]:
        if m.get("role") == "tool":
            c = m["content"]
            out.append(c if isinstance(c, str) else "".join(b.get("text", "") for b in c))
        elif isinstance(m.get("content"), list):
            for b in m["content"]:
                if b.get("type") == "tool_result":
                    c = b["content"]
                    out.append(
                        c
                        if isinstance(c, str)
                        else "".join(x.get("text", "") for x in c if x.get("type") == "text")
                    )
    return out


def run_calls(
    wire: str, servers: dict[str, dict[str, Any]], calls: list[ToolUse], cwd: Path
) -> tuple[list[dict[str, Any]], Any]:
    """One turn: the model calls ``calls``, then says done; returns the
    recorded request bodies and the session's MCP status."""
    with ScriptedServer() as server:
        server.push(Reply(calls), Reply([Text("done")]))
        config = Config(
            provider=PROVIDER[wire],
            model="m",
            base_url=server.base_url(wire),
            api_key="sk-test",
            max_retries=0,
        )
        config.mcp_servers = servers
        with open_session(config, cwd=cwd, session=None, extensions=False) as s:
            s.agent.submit_user_message("go")
            with s.agent.run() as stream:
                list(stream)
            status = s.mcp.status() if s.mcp is not None else None
        return [r.json for r in server.requests], status


@pytest.mark.parametrize("wire", WIRES)
def test_stdio_add_declares_the_schema_and_returns_five(wire: str, tmp_path: Path) -> None:
    servers = {"demo": {"command": [sys.executable, DEMO]}}
    calls = [
        ToolUse("c1", "mcp__demo__add", {"a": 2, "b": 3}),
        ToolUse("c2", "mcp__demo__norm", {"p": {"x": 3, "y": 4}}),
        ToolUse("c3", tool_name("demo", LONG), {}),
        ToolUse("c4", "mcp__demo__fail", {}),
    ]
    bodies, status = run_calls(wire, servers, calls, tmp_path)
    tools = tools_of(bodies[0])
    assert tools["mcp__demo__add"]["properties"] == {
        "a": {"title": "A", "type": "integer"},
        "b": {"title": "B", "type": "integer"},
    }
    text = json.dumps(bodies[0])
    assert "$ref" not in text and "$defs" not in text and "$schema" not in text
    assert tools["mcp__demo__norm"]["properties"]["p"]["properties"]["x"]["type"] == "integer"
    long = tool_name("demo", LONG)
    assert len(long) <= 64 and long in tools and long == tool_name("demo", LONG)
    results = results_of(bodies[1])
    assert results[:3] == ["5", "25", "long ok"]
    assert "Error executing tool fail" in results[3]
    assert status[0].state == "ready" and status[0].tools == 8


def test_streamable_http_with_bearer_token(
    http_server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEMO_TOKEN", "tok-123")
    servers = {"web": {"url": http_server, "bearer_token_env": "DEMO_TOKEN"}}
    bodies, _ = run_calls(
        "openai-chat", servers, [ToolUse("c1", "mcp__web__add", {"a": 2, "b": 3})], tmp_path
    )
    assert "mcp__web__add" in tools_of(bodies[0])
    assert results_of(bodies[1]) == ["5"]


def test_slow_tool_times_out_and_the_next_call_works(tmp_path: Path) -> None:
    servers = {"demo": {"command": [sys.executable, DEMO], "tool_timeout": 1}}
    t0 = time.monotonic()
    bodies, _ = run_calls(
        "anthropic-messages",
        servers,
        [
            ToolUse("c1", "mcp__demo__slow", {"seconds": 5}),
            ToolUse("c2", "mcp__demo__add", {"a": 1, "b": 1}),
        ],
        tmp_path,
    )
    results = results_of(bodies[1])
    assert "timed out after 1 s" in results[0] and "tool_timeout" in results[0]
    assert results[1] == "2"
    assert time.monotonic() - t0 < 20


def test_output_is_cut_and_images_reach_the_model(tmp_path: Path) -> None:
    servers = {"demo": {"command": [sys.executable, DEMO], "max_output": 1000}}
    bodies, _ = run_calls(
        "anthropic-messages",
        servers,
        [ToolUse("c1", "mcp__demo__big", {}), ToolUse("c2", "mcp__demo__image", {})],
        tmp_path,
    )
    results = results_of(bodies[1])
    assert results[0].startswith("x" * 1000) and "output cut: 1,000,000 characters" in results[0]
    assert '"type": "image"' in json.dumps(bodies[1]) and '"media_type": "image/png"' in json.dumps(
        bodies[1]
    )


def test_disabled_tools_and_servers(tmp_path: Path) -> None:
    starts = tmp_path / "starts"
    servers = {
        "demo": {"command": [sys.executable, DEMO], "disabled_tools": ["add"]},
        "off": {
            "command": [sys.executable, DEMO],
            "enabled": False,
            "env": {"MCP_DEMO_STARTS": str(starts)},
        },
    }
    bodies, status = run_calls("openai-chat", servers, [], tmp_path)
    tools = tools_of(bodies[0])
    assert "mcp__demo__add" not in tools and "mcp__demo__norm" in tools
    assert not any(n.startswith("mcp__off__") for n in tools)
    assert {s.name: s.state for s in status}["off"] == "disabled"
    assert not starts.exists()


def test_tool_added_at_run_time_is_in_the_next_turn(tmp_path: Path) -> None:
    with ScriptedServer() as server:
        server.push(
            Reply([ToolUse("c1", "mcp__demo__enable_extra", {})]),
            Reply([Text("one")]),
            Reply([Text("two")]),
        )
        config = Config(
            provider="openai",
            model="m",
            base_url=server.base_url("openai-chat"),
            api_key="k",
            max_retries=0,
        )
        config.mcp_servers = {"demo": {"command": [sys.executable, DEMO]}}
        with open_session(config, cwd=tmp_path, session=None, extensions=False) as s:
            for prompt in ("first", "second"):
                s.agent.submit_user_message(prompt)
                with s.agent.run() as stream:
                    list(stream)
                time.sleep(0.5)  # the notification and the refetch
        bodies = [r.json for r in server.requests]
    assert "mcp__demo__extra" not in tools_of(bodies[0])
    assert "mcp__demo__extra" in tools_of(bodies[2])


def test_slow_server_does_not_delay_the_first_request_once_cached(tmp_path: Path) -> None:
    servers = {"slowstart": {"command": [sys.executable, DEMO, "--delay", "3"]}}
    run_calls("openai-chat", servers, [], tmp_path)  # first run: waits once, caches the list
    t0 = time.monotonic()
    with ScriptedServer() as server:
        server.push(Reply([Text("hi")]))
        config = Config(
            provider="openai",
            model="m",
            base_url=server.base_url("openai-chat"),
            api_key="k",
            max_retries=0,
        )
        config.mcp_servers = servers
        with open_session(config, cwd=tmp_path, session=None, extensions=False) as s:
            s.agent.submit_user_message("go")
            with s.agent.run() as stream:
                list(stream)
            first = server.requests[0].json
            elapsed = time.monotonic() - t0
    assert "mcp__slowstart__add" in tools_of(first)  # from the cache
    assert elapsed < 2.5, elapsed


def _marked_children(token_env: str) -> list[int]:
    """Pids of processes running the demo server."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes()
            except OSError:
                continue
            if DEMO.encode() in cmd and token_env.encode() in cmd:
                out.append(int(d.name))
    return out


@pytest.mark.parametrize("how", ["exit", "sigterm", "sigkill"])
def test_no_server_survives_panto(how: str, tmp_path: Path) -> None:
    tag = f"tag-{how}-{os.getpid()}"
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(f'[mcp.servers.demo]\ncommand = ["{sys.executable}", "{DEMO}", "{tag}"]\n')
    prompt = (
        'call mcp__demo__add {"a": 2, "b": 3}'
        if how == "exit"
        else 'call mcp__demo__slow {"seconds": 60}'
    )
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "panto",
            "-p",
            prompt,
            "--model",
            "mock/anthropic",
            "--output-format",
            "json",
            "--no-session",
        ],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    if how == "exit":
        out, err = p.communicate(timeout=90)
        assert p.returncode == 0, err
    else:
        deadline = time.monotonic() + 60
        while not _marked_children(tag) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert _marked_children(tag), "the server never started"
        time.sleep(1.0)
        p.send_signal(signal.SIGTERM if how == "sigterm" else signal.SIGKILL)
        p.communicate(timeout=30)
    deadline = time.monotonic() + 5
    while _marked_children(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _marked_children(tag) == []


def test_mock_model_calls_the_tool_end_to_end(tmp_path: Path) -> None:
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(f'[mcp.servers.demo]\ncommand = ["{sys.executable}", "{DEMO}"]\n')
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "panto",
            "-p",
            'call mcp__demo__add {"a": 2, "b": 3}',
            "--model",
            "mock/openai",
            "--output-format",
            "stream-json",
            "--no-session",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    results = [json.loads(line) for line in r.stdout.splitlines() if '"tool_result"' in line]
    assert results and results[0]["content"] == "5" and not results[0]["is_error"], r.stdout


@pytest.mark.parametrize("trusted", [False, True])
def test_mcp_json_only_in_a_trusted_project(trusted: bool, tmp_path: Path) -> None:
    from panto.policy.trust import set_trust

    (tmp_path / ".git").mkdir()
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"proj": {"command": sys.executable, "args": [DEMO]}}})
    )
    if trusted:
        set_trust(tmp_path, True)
    bodies, status = run_calls("openai-chat", {}, [], tmp_path)
    names = set(tools_of(bodies[0]))
    assert ("mcp__proj__add" in names) is trusted
    assert (status is not None) is trusted


def test_no_servers_in_an_untrusted_project_says_its_own_were_left_out(tmp_path: Path) -> None:
    """``panto mcp list`` (and the REPL's ``/mcp``) in a project whose
    ``.mcp.json`` was ignored: not just "no MCP servers configured", but
    why, and how to trust it."""
    from panto.app import untrusted_mcp_note
    from panto.config import Config
    from panto.policy.trust import set_trust

    (tmp_path / ".git").mkdir()
    (tmp_path / ".mcp.json").write_text(
        json.dumps({"mcpServers": {"proj": {"command": sys.executable, "args": [DEMO]}}})
    )
    r = panto_mcp(tmp_path, "list")
    assert r.returncode == 0, r.stderr
    assert "no MCP servers configured" in r.stdout
    assert "MCP servers are not started" in r.stderr and f"panto trust {tmp_path}" in r.stderr
    assert "Traceback" not in r.stderr
    assert untrusted_mcp_note(Config.load(cwd=str(tmp_path))) is not None
    set_trust(tmp_path, True)
    assert untrusted_mcp_note(Config.load(cwd=str(tmp_path))) is None
    (tmp_path / ".mcp.json").unlink()
    set_trust(tmp_path, False)
    assert untrusted_mcp_note(Config.load(cwd=str(tmp_path))) is None  # nothing of its own


def test_names_and_schemas() -> None:
    assert tool_name("my.server", "do it") == "mcp__my_server__do_it"
    long = tool_name("srv", "x" * 100)
    assert (
        len(long) == 64
        and long == tool_name("srv", "x" * 100)
        and long != tool_name("srv", "x" * 101)
    )
    rec = {
        "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
        "$ref": "#/$defs/N",
    }
    out = normalize_schema(rec)
    assert out["type"] == "object" and "$ref" not in json.dumps(out)
    assert normalize_schema({"$schema": "x", "type": "string"}) == {
        "type": "object",
        "properties": {},
    }


def panto_mcp(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """``panto mcp ARGS`` in ``cwd``, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "panto", "mcp", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_panto_mcp_add_list_remove(tmp_path: Path) -> None:
    def panto(*args: str) -> subprocess.CompletedProcess[str]:
        return panto_mcp(tmp_path, *args)

    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml"
    r = panto("add", "demo", "--env", "X=1", "--", sys.executable, DEMO)
    assert r.returncode == 0, r.stderr
    assert (cfg.stat().st_mode & 0o777) == 0o600
    assert panto("add", "demo", "--", "true").returncode == 1  # already there
    r = panto("add", "broken", "--url", "http://127.0.0.1:9/mcp")
    assert r.returncode == 0, r.stderr
    r = panto("list", "--tools", "--timeout", "30")
    assert r.returncode == 1, r.stderr  # one server is not ready
    lines = r.stdout.splitlines()
    assert any(ln.startswith("demo") and "ready" in ln and "8 tools" in ln for ln in lines), (
        r.stdout
    )
    assert "  mcp__demo__add" in lines
    assert any(ln.startswith("broken") and "failed" in ln for ln in lines), r.stdout
    assert any(ln.startswith("  error: ") for ln in lines), r.stdout
    assert panto("remove", "broken").returncode == 0
    r = panto("list", "--timeout", "30")
    assert r.returncode == 0 and r.stdout.startswith("demo"), (r.stdout, r.stderr)  # all ready
    assert panto("remove", "demo").returncode == 0
    assert "mcp.servers" not in cfg.read_text()
    assert panto("remove", "demo").returncode == 1
    assert "Traceback" not in r.stderr


def test_panto_mcp_list_says_why_a_server_is_not_ready(tmp_path: Path) -> None:
    """A server that never answers and one that crashes: each says what
    happened and where its stderr went; ``add`` without a server says how."""

    def panto(*args: str) -> subprocess.CompletedProcess[str]:
        return panto_mcp(tmp_path, *args)

    r = panto("add", "nothing")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "no server given: panto mcp add nothing -- COMMAND" in r.stderr, r.stderr
    r = panto("add", "web", "--url", "example.com/mcp")
    assert r.returncode == 2 and "--url 'example.com/mcp': expected an http" in r.stderr
    assert r.stderr.startswith("usage: panto mcp add NAME"), r.stderr  # add's usage
    r = panto("add", "gone", "--", "/no/such/mcp-server")
    assert r.returncode == 0  # added: it may be installed later
    assert r.stderr.strip() == (
        "panto mcp: warning: '/no/such/mcp-server' is no program here (not on PATH, not an executable file); install it, "
        "or give its full path (panto mcp remove gone, then add again)"
    )
    assert panto("remove", "gone").returncode == 0
    assert panto("add", "mute", "--", "sleep", "600").returncode == 0
    crash = "echo boom-on-stderr >&2; exit 3"
    assert panto("add", "crash", "--", "sh", "-c", crash).returncode == 0
    r = panto("list", "--timeout", "2")
    # (a script or a health check can tell that a server is not ready)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    out = r.stdout
    mute = out[out.index("mute") : out.index("crash")]  # in the order they were added
    assert "error: no answer within 2 s" in mute and "--timeout SECONDS" in mute, out
    assert "its stderr: " in mute, out
    crashed = out[out.index("crash") :]
    assert "failed" in crashed and "its stderr: " in crashed, out
    log = Path(crashed.split("its stderr: ")[1].splitlines()[0])
    assert "boom-on-stderr" in log.read_text()


def test_a_mcp_json_server_of_the_wrong_shape_is_one_warning(tmp_path: Path) -> None:
    """``.mcp.json`` is not read through the config schema: a server whose
    ``command`` is a number (a traceback before) or whose ``args`` is a
    string is one warning naming the file, the server and the key; the
    turn goes on."""
    (tmp_path / ".git").mkdir()
    env = {**os.environ, "PANTO_TRUST_ALL": "1", "PANTO_STARTUP_CACHE": "0"}
    for server, expected in (
        ({"command": 5}, "`command`: expected a string or an array of strings, got 5"),
        ({"command": "x", "args": "y"}, '`args`: expected an array of strings, got "y"'),
    ):
        (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"a": server}}))
        r = subprocess.run(
            [sys.executable, "-m", "panto", "-p", "hi", "--model", "mock/anthropic"]
            + ["--no-session"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0 and "Traceback" not in r.stderr, r.stderr
        assert r.stdout.strip() == "You said: hi"
        assert r.stderr.strip() == (
            "panto: warning: MCP servers of .mcp.json not started: "
            f"{tmp_path / '.mcp.json'}: mcp server 'a': {expected}"
        )


def test_a_server_missing_at_the_first_turn_is_one_warning_each(tmp_path: Path) -> None:
    """``panto -p`` with a server that cannot start and one that never
    answers: each is one warning line saying why and what to run, and the
    turn goes on without their tools."""
    cfg = Path(os.environ["XDG_CONFIG_HOME"]) / "panto" / "config.toml"
    cfg.parent.mkdir(parents=True, exist_ok=True)
    cfg.write_text(
        '[mcp.servers.gone]\ncommand = ["/no/such/server"]\n'
        '[mcp.servers.mute]\ncommand = ["sleep", "600"]\nstartup_timeout = 1\n'
    )
    r = subprocess.run(
        [sys.executable, "-m", "panto", "-p", "hi", "--model", "mock/anthropic", "--no-session"],
        cwd=tmp_path,
        env={**os.environ, "PANTO_STARTUP_CACHE": "0"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0 and r.stdout.strip() == "You said: hi", r.stderr
    lines = r.stderr.strip().splitlines()
    hint = "; going on without its tools (panto mcp list shows its state and where its stderr went)"
    assert any(
        ln.startswith("panto: warning: MCP server gone failed to start (") and ln.endswith(hint)
        for ln in lines
    ), r.stderr
    assert (
        "panto: warning: MCP server mute did not answer within 1 s (startup_timeout)" + hint
    ) in lines, r.stderr
    assert "Traceback" not in r.stderr
