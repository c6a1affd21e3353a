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


def test_no_key_and_no_model_is_an_error_in_print_mode(tmp_path):
    """A script whose secret is missing must not "pass" on the echoing mock
    (issue 23, item 12): one line on stderr, exit 2, nothing sent."""
    r = panto("-p", "fix the failing test", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert r.returncode == 2
    assert r.stdout == ""
    assert r.stderr == (
        "panto: no API key (set ANTHROPIC_API_KEY or OPENAI_API_KEY) and no model chosen "
        "(--model, PANTO_MODEL, model = in the config); --model mock/anthropic runs the "
        "offline mock\n"
    )
    # the mock chosen on purpose answers: --model, PANTO_MODEL, the config
    r = panto("-p", "ping", "--model", "mock/anthropic", "--no-session")
    assert (r.returncode, r.stdout.strip(), r.stderr) == (0, "You said: ping", "")
    r = panto("-p", "ping", "--no-session", env={"PANTO_MODEL": "mock/openai"})
    assert (r.returncode, r.stdout.strip()) == (0, "You said: ping"), r.stderr
    (tmp_path / "panto").mkdir()
    (tmp_path / "panto" / "config.toml").write_text('model = "mock/anthropic"\n')
    r = panto("-p", "ping", "--no-session", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert (r.returncode, r.stdout.strip()) == (0, "You said: ping"), r.stderr


def test_no_key_and_no_model_in_the_repl_warns_once_and_uses_the_mock(tmp_path):
    r = panto("--no-session", input="one\ntwo\n", env={"XDG_CONFIG_HOME": str(tmp_path)})
    assert r.returncode == 0, r.stderr
    assert "You said: one" in r.stdout and "You said: two" in r.stdout
    assert r.stderr.count("no API key") == 1
    assert "panto: warning: no API key" in r.stderr
    assert "this is the offline mock model, which echoes" in r.stderr
    r = panto("--no-session", "--model", "mock/anthropic", input="one\n")
    assert r.returncode == 0 and "no API key" not in r.stderr


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


def test_a_prompt_that_is_not_utf8_is_replaced_visibly(tmp_path):
    """Latin-1 bytes in argv or on stdin (issue 23 item 7): no crash; each
    bad byte becomes U+FFFD and stderr says so (the session stays valid)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PANTO_MODEL", "ANTHROPIC_API_KEY", "OPENAI_API_KEY")
    }
    env["XDG_DATA_HOME"] = str(tmp_path)
    base = [sys.executable, "-m", "panto", "--model", "mock/anthropic"]
    note = (
        "panto: warning: the prompt is not valid UTF-8: 1 byte(s) replaced by \N{REPLACEMENT CHARACTER} "
        "(U+FFFD); send UTF-8 (e.g. iconv -f latin1 -t utf-8)\n"
    )
    argv = subprocess.run(
        [*base, "-p", b"caf\xe9 ok"], capture_output=True, timeout=60, env=env, cwd=tmp_path
    )
    piped = subprocess.run(
        [*base, "-p", "-"], input=b"caf\xe9 latin\n", capture_output=True, timeout=60, env=env
    )
    repl = subprocess.run(
        [*base, "--no-session"], input=b"caf\xe9 typed\n", capture_output=True, timeout=60, env=env
    )
    for r, said in ((argv, "caf\ufffd ok"), (piped, "caf\ufffd latin"), (repl, "caf\ufffd typed")):
        assert r.returncode == 0, r.stderr.decode()
        assert f"You said: {said}".encode() in r.stdout
        assert r.stderr.decode() == note
    # the session written from the argv prompt loads again
    r = subprocess.run(
        [*base, "-p", "again", "--continue"], capture_output=True, timeout=60, env=env, cwd=tmp_path
    )
    assert r.returncode == 0 and r.stdout.decode().strip() == "You said: again", r.stderr


def test_a_base_url_without_a_scheme_fails_at_once():
    """Issue 23 item 7: not seconds of connection retries, one usage line."""
    import time

    t0 = time.monotonic()
    r = panto(
        "-p",
        "hi",
        "--model",
        "openai/x",
        "--base-url",
        "127.0.0.1:9/v1",
        "--no-session",
        env={"OPENAI_API_KEY": "k"},
    )
    assert time.monotonic() - t0 < 5
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr == (
        "panto: --base-url: expected a URL starting with http:// or https:// "
        "(e.g. \"https://api.example.com/v1\"), got '127.0.0.1:9/v1' (no http:// or https:// scheme)\n"
    )
    r = panto(
        "-p",
        "hi",
        "--model",
        "openai/x",
        "--no-session",
        env={"OPENAI_API_KEY": "k", "PANTO_BASE_URL": "localhost:8080"},
    )
    assert r.returncode == 2 and "PANTO_BASE_URL: base_url: expected a URL" in r.stderr
    assert "retrying" not in r.stderr
