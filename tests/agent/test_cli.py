"""`panto -p` and the interactive mode, offline, with the mock provider."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest


def panto(*args: str, input: str | None = None, env: dict | None = None):
    e = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PANTO_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")
    }
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "panto", *args],
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
        env=e,
    )


@pytest.mark.parametrize("model", ["mock/anthropic", "mock/openai"])
def test_stream_json(model):
    r = panto("-p", "hi there", "--model", model, "--output-format", "stream-json")
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    types = [d["type"] for d in lines]
    assert types[0] == "message_start"
    assert types[-2] == "message_complete" and lines[-2]["final"] is True
    assert types[-1] == "result"
    assert "content_delta" in types
    text = "".join(d["text"] for d in lines if d["type"] == "content_delta" and d["kind"] == "text")
    assert text == "You said: hi there"
    assert lines[-1]["result"] == text and lines[-1]["is_error"] is False
    assert lines[-1]["model"] == model


def test_text_and_json():
    r = panto("-p", "hello", "--model", "mock/anthropic")
    assert r.returncode == 0, r.stderr
    assert r.stdout == "You said: hello\n"
    r = panto("-p", "hello", "--model", "mock/openai", "--output-format", "json")
    doc = json.loads(r.stdout)
    assert doc["type"] == "result" and doc["result"] == "You said: hello"
    assert doc["usage"]["output_tokens"] > 0
    assert [m["role"] for m in doc["messages"]] == ["assistant"]


def test_default_is_offline_mock_without_keys():
    r = panto("-p", "ping")
    assert r.returncode == 0, r.stderr
    assert "ping" in r.stdout


def test_prompt_from_stdin():
    r = panto("-p", "-", "--model", "mock/anthropic", input="from stdin\n")
    assert r.stdout.strip() == "You said: from stdin"


def test_errors_exit_nonzero():
    r = panto("-p", "hi", "--model", "nosuch/model")
    assert r.returncode == 2 and "unknown provider 'nosuch'" in r.stderr
    r = panto("-p", "hi", "--model", "anthropic/x")
    assert r.returncode == 2 and "ANTHROPIC_API_KEY" in r.stderr
    r = panto(
        "-p",
        "hi",
        "--model",
        "openai/x",
        "--base-url",
        "http://127.0.0.1:9/v1",
        "--output-format",
        "stream-json",
        env={"OPENAI_API_KEY": "k", "PANTO_MAX_RETRIES": "0"},
    )
    assert r.returncode == 1
    err = json.loads(r.stdout.splitlines()[-1])
    assert err["type"] == "error" and err["error"]["type"] == "connection_error"


def test_interactive_session():
    script = "first\n/model\n/model mock/openai\nsecond\n/tools\n/clear\n/help\n/bogus\n/exit\n"
    r = panto("--model", "mock/anthropic", input=script)
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert "You said: first" in out and "You said: second" in out
    assert "mock/anthropic" in out and "model: mock/openai" in out
    assert "conversation cleared" in out and "/compact [INSTRUCTIONS]" in out  # /help
    assert "unknown command /bogus" in out
    assert "in " in out and "out " in out  # usage lines


def test_interactive_eof_exits():
    r = panto("--model", "mock/anthropic", input="")
    assert r.returncode == 0
