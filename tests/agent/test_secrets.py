"""An API key from the environment never shows up in exception text,
stream-json output or debug logs."""

from __future__ import annotations

import logging
import os
import subprocess
import sys

import pytest
from support.agent import run_turn

from panto.agent import Agent
from panto.config import Config
from panto.errors import ProviderError
from panto.testing import HTTPError, Reply, ScriptedServer

KEY = "sk-ant-api03-TOPSECRET-abcdefghijklmnopqrstuvwxyz0123456789"


def _echoing_401(wire: str) -> HTTPError:
    # providers echo (parts of) a bad key back in their error message
    msg = f"invalid x-api-key: {KEY} (prefix {KEY[:-4]})"
    if wire == "anthropic-messages":
        return HTTPError(
            401, {"type": "error", "error": {"type": "authentication_error", "message": msg}}
        )
    return HTTPError(
        401, {"error": {"message": msg, "type": "invalid_request_error", "code": "invalid_api_key"}}
    )


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
def test_key_not_in_errors_or_logs(monkeypatch, caplog, wire):
    env = "ANTHROPIC_API_KEY" if wire == "anthropic-messages" else "OPENAI_API_KEY"
    monkeypatch.setenv(env, KEY)
    caplog.set_level(logging.DEBUG)
    with ScriptedServer() as server:
        provider = "anthropic" if wire == "anthropic-messages" else "openai"
        cfg = Config(
            provider=provider,
            model="m",
            base_url=server.base_url(wire),
            max_retries=1,
            retry_base_delay=0.01,
        )
        assert KEY not in repr(cfg)
        server.push(HTTPError(503), Reply([]), _echoing_401(wire))
        with Agent(cfg) as agent:
            assert KEY not in repr(agent)
            agent.submit_user_message("hi")
            run_turn(agent)  # a retry, then success: logs requests
            agent.submit_user_message("again")
            with pytest.raises(ProviderError) as info:
                run_turn(agent)
        # the key was really sent ...
        sent = server.requests[0].headers
        assert KEY in (sent.get("x-api-key", "") + sent.get("authorization", ""))
    # ... and is nowhere else
    err = info.value
    for text in (str(err), repr(err), err.message, repr(err.args)):
        assert KEY not in text and KEY[:-4] not in text
    assert "***" in str(err)
    assert caplog.records, "expected debug logs"
    assert KEY[:12] not in caplog.text
    assert any("POST" in r.getMessage() for r in caplog.records)


def test_key_not_in_stream_json_or_debug_output():
    with ScriptedServer() as server:
        server.push(Reply([]), _echoing_401("anthropic-messages"))
        env = {**os.environ, "ANTHROPIC_API_KEY": KEY}
        env.pop("PANTO_MODEL", None)
        base = [
            sys.executable,
            "-m",
            "panto",
            "--model",
            "anthropic/m",
            "--base-url",
            server.url,
            "--output-format",
            "stream-json",
            "--debug",
        ]
        ok = subprocess.run(
            [*base, "-p", "hi"], env=env, capture_output=True, text=True, timeout=30
        )
        bad = subprocess.run(
            [*base, "-p", "hi"], env=env, capture_output=True, text=True, timeout=30
        )
        assert server.requests[0].headers["x-api-key"] == KEY
    assert ok.returncode == 0, ok.stderr
    assert bad.returncode == 1
    assert "authentication_error" in bad.stdout
    for out in (ok.stdout, ok.stderr, bad.stdout, bad.stderr):
        assert KEY[:12] not in out
