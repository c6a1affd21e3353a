"""``panto -p --model openai/...`` against a loopback server speaking the
OpenAI Responses API, its base URL and wire set in the user config: the
answer on stdout; on stderr the reasoning summary (dimmed on a terminal),
the tool call, the usage with cached and reasoning tokens, and one clear
line for a response cut at the output limit (``response.incomplete``) or a
failed one (``response.failed``)."""

from __future__ import annotations

import sys

import pytest
from support.repl import Env

from panto.conversation import Text, Thinking, ToolUse, Usage
from panto.testing import Reply, ScriptedServer

pytestmark = pytest.mark.timeout(120)

REASONING = (
    '{"id":"rs_cli01","type":"reasoning","summary":[{"type":"summary_text",'
    '"text":"Reading the file first."}],"encrypted_content":"gAAAAB-cli=="}'
)


def configure(env: Env, server: ScriptedServer) -> tuple[str, ...]:
    cfg = env.home / "xdg_config_home" / "panto"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "config.toml").write_text(
        "[retries]\nmax = 0\n\n"
        "[providers.openai]\n"
        f'base_url = "{server.base_url("openai-responses")}"\n'
        'wire = "openai-responses"\n'
    )
    env.vars["OPENAI_API_KEY"] = "sk-test-responses-0123456789"
    return ("--model", "openai/gpt-5", "--no-session")


def test_text_tool_call_reasoning_and_usage(env: Env) -> None:
    (env.cwd / "notes.txt").write_text("panto speaks three wires\n")
    with ScriptedServer() as server:
        server.push(
            Reply(
                [
                    Thinking("Reading the file first.", REASONING),
                    ToolUse("call_read1", "read", {"path": "notes.txt"}),
                ],
                usage=Usage(900, output_tokens=40, cache_read_tokens=512, reasoning_tokens=24),
            ),
            Reply(
                [Text("The notes say: panto speaks three wires.")],
                usage=Usage(300, output_tokens=12, cache_read_tokens=1024, reasoning_tokens=8),
            ),
        )
        r = env.run(*configure(env, server), "-p", "what do my notes say?")
        assert r.returncode == 0, r.stderr
        assert [q.path for q in server.requests] == ["/v1/responses", "/v1/responses"]
        second = server.requests[1]
    assert r.stdout == "The notes say: panto speaks three wires.\n"
    assert "Reading the file first." in r.stderr  # the reasoning summary
    assert "read" in r.stderr and "notes.txt" in r.stderr  # the tool call
    # usage of both rounds: cached and reasoning tokens
    assert "in 1,200 · cache 1,536r/0w · out 52 (32 reasoning)" in r.stderr
    # the reasoning item went back as received, before the call
    body = second.body.decode()
    assert REASONING in body and body.index(REASONING) < body.index('"call_id":"call_read1"')
    assert "sk-test-responses" not in r.stdout + r.stderr


def test_the_reasoning_summary_is_dimmed_on_a_terminal(env: Env) -> None:
    pexpect = pytest.importorskip("pexpect")
    with ScriptedServer() as server:
        server.push(Reply([Thinking("Thinking it over.", REASONING), Text("Done.")]))
        args = configure(env, server)
        child = pexpect.spawn(
            "/bin/sh",
            ["-c", 'exec "$0" -m panto "$@" > out.txt', sys.executable, *args, "-p", "hi"],
            cwd=str(env.cwd),
            env=env.vars,
            encoding="utf-8",
            timeout=60,
        )
        child.expect(pexpect.EOF)
        raw = child.before
        child.close()
    assert child.exitstatus == 0, raw
    assert (env.cwd / "out.txt").read_text() == "Done.\n"
    assert "\x1b[2mThinking it over.\x1b[0m" in raw


def test_incomplete_and_failed_responses_are_clear_lines(env: Env) -> None:
    with ScriptedServer() as server:
        server.push(Reply([Text("Once upon a")], stop_reason="length"))
        args = configure(env, server)
        r = env.run(*args, "-p", "a long story", "--max-tokens", "16")
        assert r.returncode == 0, r.stderr
        assert r.stdout == "Once upon a\n"
        assert (
            "the reply was cut short: it reached the output token limit "
            "(raise --max-tokens) (max_output_tokens)" in r.stderr
        )

        server.push(
            Reply(
                [Text("Partial")],
                error={"type": "response.failed", "message": "The model failed to respond."},
                error_after=4,
            )
        )
        r = env.run(*args, "-p", "again")
    assert r.returncode == 1
    lines = [ln for ln in r.stderr.splitlines() if "error" in ln]
    assert lines and "The model failed to respond." in lines[-1], r.stderr
    assert "Traceback" not in r.stderr
