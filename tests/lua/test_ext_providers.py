"""Issue 26 part 3: providers and request hooks from Lua, end to end.

``examples/lua/provider_example.lua`` (the example extension) is installed
as a user extension and ``panto -p`` runs against a loopback
``ScriptedServer`` on both wires: the HTTP provider's key and header are
computed per request, the event-producing provider answers a run (a tool
call included) with no server at all, a ``before_request`` hook adds a
header without ever seeing the real key, an ``after_response`` hook sees
the usage."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from panto.conversation import Text, ToolUse, Usage
from panto.testing import Reply, ScriptedServer

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "lua" / "provider_example.lua"
WIRES = ["anthropic-messages", "openai-chat"]
KEY = "sk-real-secret-key-0123456789"


def _home(tmp_path: Path, settings: str) -> Path:
    home = tmp_path / "home"
    ext = home / ".config" / "panto" / "extensions"
    ext.mkdir(parents=True)
    (ext / "provider_example.lua").write_text(EXAMPLE.read_text())
    (home / ".config" / "panto" / "config.toml").write_text(
        f'[extensions."example.provider"]\n{settings}'
    )
    return home


def panto(
    home: Path,
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess[str]:
    e = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PANTO_", "XDG_")) and k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")
    }
    e.update(
        HOME=str(home),
        XDG_CONFIG_HOME=str(home / ".config"),
        XDG_DATA_HOME=str(home / ".local" / "share"),
        XDG_CACHE_HOME=str(home / ".cache"),
        NO_COLOR="1",
        **(env or {}),
    )
    return subprocess.run(
        [sys.executable, "-m", "panto", "--no-session", *args],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=cwd,
        env=e,
        input=input,
    )


def _log(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line]


@pytest.mark.parametrize("wire", WIRES)
def test_http_provider_computes_key_and_headers_per_request(tmp_path: Path, wire: str) -> None:
    (tmp_path / "hello.txt").write_text("hello from the file\n")
    script = [
        Reply([Text("Reading."), ToolUse("call_1", "read", {"path": "hello.txt"})]),
        Reply([Text("It says hello.")]),
    ]
    with ScriptedServer(script) as server:
        home = _home(tmp_path, f'upstream = "{server.base_url(wire)}"\nwire = "{wire}"\n')
        r = panto(home, tmp_path, "--model", "example-http/my-model", "-p", "what does it say?")
        assert r.returncode == 0, r.stderr
        assert "It says hello." in r.stdout
        assert len(server.requests) == 2
        heads = [q.headers for q in server.requests]
    # the header and the key change per request: prepare ran before each
    assert [h["x-example-request"] for h in heads] == ["1", "2"]
    if wire == "anthropic-messages":
        assert [h["x-api-key"] for h in heads] == ["example-token-1", "example-token-2"]
    else:
        assert [h["authorization"] for h in heads] == [
            "Bearer example-token-1",
            "Bearer example-token-2",
        ]
    assert server.requests[0].json["model"] == "my-model"
    assert "example-token" not in r.stdout + r.stderr


def test_event_provider_answers_a_p_run(tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hello from the file\n")
    home = _home(tmp_path, "")
    r = panto(home, tmp_path, "--model", "example-echo/echo", "-p", "good morning")
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "echo: good morning"
    # a tool call produced by the extension runs, its result comes back to it
    r = panto(
        home,
        tmp_path,
        "--model",
        "example-echo",
        "--output-format",
        "json",
        "-p",
        'call read {"path": "hello.txt"}',
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert "The tool said:" in out["result"] and "hello from the file" in out["result"]
    assert out["usage"]["output_tokens"] == 6  # two responses of 3 each


def test_model_command_switches_to_an_extension_provider(tmp_path: Path) -> None:
    home = _home(tmp_path, "")
    r = panto(
        home,
        tmp_path,
        "--model",
        "mock/anthropic",
        input="/model example-echo/echo\nhello there\n/model nosuch/x\n",
    )
    assert r.returncode == 0, r.stderr
    assert "echo: hello there" in r.stdout
    assert "You said" not in r.stdout  # the mock did not answer
    assert "'nosuch' is not registered by any loaded extension" in r.stdout + r.stderr


def test_unknown_provider_is_one_clear_line(tmp_path: Path) -> None:
    home = _home(tmp_path, "")
    r = panto(home, tmp_path, "--model", "nosuch/m", "-p", "hi")
    assert r.returncode == 2
    assert "'nosuch' is not registered by any loaded extension" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("wire", WIRES)
def test_before_request_hook_adds_a_header_and_never_sees_the_key(
    tmp_path: Path, wire: str
) -> None:
    log = tmp_path / "hooks.jsonl"
    usage = Usage(input_tokens=123, output_tokens=45)
    with ScriptedServer([Reply([Text("hi there")], usage=usage)]) as server:
        home = _home(tmp_path, f'hooks = true\nlog = "{log}"\n')
        provider = "anthropic" if wire == "anthropic-messages" else "openai"
        key_env = "ANTHROPIC_API_KEY" if provider == "anthropic" else "OPENAI_API_KEY"
        r = panto(
            home,
            tmp_path,
            "--model",
            f"{provider}/m1",
            "--base-url",
            server.base_url(wire),
            "-p",
            "hello",
            env={key_env: KEY},
        )
        assert r.returncode == 0, r.stderr
        assert "hi there" in r.stdout
        (req,) = server.requests
    # the hook's header reached the server, and so did the real key
    assert req.headers["x-example-hook"] == "added by before_request"
    sent_key = req.headers.get("x-api-key") or req.headers["authorization"]
    assert KEY in sent_key
    before, after = _log(log)
    assert before["event"] == "before_request" and before["model"] == "m1"
    # what the hook saw: a placeholder where the key is
    seen = json.dumps(before)
    assert KEY not in seen
    assert "[panto-redacted-secret-1]" in seen
    assert after == {
        "event": "after_response",
        "usage": after["usage"],
        "stop_reason": "stop",
    }
    assert after["usage"]["input_tokens"] == 123 and after["usage"]["output_tokens"] == 45


def test_event_provider_streams_each_event_as_it_is_emitted() -> None:
    """The first text reaches the turn while ``respond`` is still running
    (a PTY-driven provider shows the model's words as they come); an error
    after it ends the turn with the provider's message."""
    import threading

    from panto.agent import Agent
    from panto.config import Config
    from panto.config.ext_providers import ExtensionProvider, register, unregister
    from panto.errors import PantoError
    from panto.events import ContentDelta

    seen_first = threading.Event()
    owner = object()

    def respond(req: Any, emit: Any) -> None:
        emit({"type": "text", "text": "first "})
        assert seen_first.wait(10), "the first delta never reached the turn"
        emit({"type": "text", "text": "second"})
        if req["messages"][-1]["text"] == "fail":
            raise RuntimeError("the terminal went away")
        emit({"type": "usage", "input_tokens": 4, "output_tokens": 2})

    register(
        ExtensionProvider("streamy", "anthropic-messages", "", "m", respond=respond, owner=owner)
    )
    try:
        agent = Agent(Config(provider="streamy", max_retries=0))
        agent.submit_user_message("hi")
        texts: list[str] = []
        with agent.run() as stream:
            for ev in stream:
                if isinstance(ev, ContentDelta):
                    texts.append(ev.text)
                    seen_first.set()
        assert texts == ["first ", "second"]
        assert agent.conversation.messages[-1].usage.output_tokens == 2
        seen_first.clear()
        agent.submit_user_message("fail")
        with pytest.raises(PantoError, match="the terminal went away"):
            with agent.run() as stream:
                for ev in stream:
                    if isinstance(ev, ContentDelta):
                        seen_first.set()
    finally:
        unregister(owner)


@pytest.mark.parametrize(
    "spec, error",
    [
        (
            "{name = 'x', wire = 'grpc', base_url = 'http://h', prepare = f}",
            "'wire' must be one of",
        ),
        ("{name = 'x', wire = 'openai-chat', base_url = 'h', prepare = f}", "'base_url' must be"),
        ("{name = 'anthropic', stream = f}", "is a built-in provider"),
        ("{name = 'Bad Name', stream = f}", "'name' must match"),
        ("{name = 'x'}", "exactly one of 'prepare'"),
        ("{name = 'x', stream = f, prepare = f, wire = 'openai-chat'}", "exactly one of"),
        ("{name = 'x', stream = 'no'}", "'stream' must be a function"),
    ],
)
def test_register_names_what_is_wrong(fresh_runtime: Any, spec: str, error: str) -> None:
    from panto.lua import LuaScriptError

    with pytest.raises(LuaScriptError, match=error):
        fresh_runtime.execute(f"local f = function() end; panto.provider.register{spec}")


def test_a_closed_state_takes_its_providers_along(fresh_runtime: Any) -> None:
    from panto.config import Config
    from panto.config.ext_providers import get
    from panto.errors import ConfigError

    fresh_runtime.execute("panto.provider.register{name = 'short-lived', stream = function() end}")
    assert get("short-lived") is not None
    assert Config().with_model("short-lived/m").provider_config.extension
    fresh_runtime.close()
    assert get("short-lived") is None
    with pytest.raises(ConfigError, match="not registered by any loaded extension"):
        Config().with_model("short-lived/m")
