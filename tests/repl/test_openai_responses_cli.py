"""``panto -p --model openai/...`` against a loopback server speaking the
OpenAI Responses API, its base URL and wire set in the user config: the
answer on stdout; on stderr (a terminal) the reasoning summary dimmed, the
tool call and a dimmed usage line with cached and reasoning tokens (also in
json; never on a stderr that is not a terminal); one clear line
for a response cut at the output limit (``response.incomplete``) or a
failed one (``response.failed``), terminal or not."""

from __future__ import annotations

import json
import re
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


def run_on_a_terminal(env: Env, args: tuple[str, ...], prompt: str) -> tuple[int, str, str]:
    """``panto ARGS -p PROMPT`` with stderr on a terminal and stdout in a
    file: (exit status, what the terminal showed, stdout)."""
    pexpect = pytest.importorskip("pexpect")
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", 'exec "$0" -m panto "$@" > out.txt', sys.executable, *args, "-p", prompt],
        cwd=str(env.cwd),
        env=env.vars,
        encoding="utf-8",
        timeout=60,
        dimensions=(24, 200),
    )
    child.expect(pexpect.EOF)
    raw = child.before
    child.close()
    return child.exitstatus, raw, (env.cwd / "out.txt").read_text()


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
        status, shown, stdout = run_on_a_terminal(
            env, configure(env, server), "what do my notes say?"
        )
        assert [q.path for q in server.requests] == ["/v1/responses", "/v1/responses"]
        second = server.requests[1]
    assert status == 0, shown
    assert stdout == "The notes say: panto speaks three wires.\n"
    assert "\x1b[2mReading the file first.\x1b[0m" in shown  # the reasoning summary, dimmed
    assert "read" in shown and "notes.txt" in shown  # the tool call
    # the turn's usage (both rounds), dimmed: input without the cached tokens,
    # the cached ones, output with its reasoning tokens, then cost and time
    usage = re.search(r"\x1b\[2m(in [^\x1b]*)\x1b\[0m", shown)
    assert usage, shown
    assert re.fullmatch(
        r"in 1,200 · cache 1,536r/0w · out 52 \(32 reasoning\)( · \$\d+\.\d{4})? · \d+\.\ds",
        usage.group(1),
    ), usage.group(1)
    assert shown.index("Reading the file first.") < usage.start()  # after the turn
    # the reasoning item went back as received, before the call
    body = second.body.decode()
    assert REASONING in body and body.index(REASONING) < body.index('"call_id":"call_read1"')
    assert "sk-test-responses" not in stdout + shown


def test_a_script_reading_stderr_gets_the_answer_only(env: Env) -> None:
    with ScriptedServer() as server:
        server.push(Reply([Thinking("Thinking it over.", REASONING), Text("Done.")]))
        r = env.run(*configure(env, server), "-p", "hi")
    assert (r.returncode, r.stdout, r.stderr) == (0, "Done.\n", "")


def test_usage_with_cached_and_reasoning_tokens(env: Env) -> None:
    with ScriptedServer() as server:
        server.push(
            Reply(
                [Thinking("Short.", REASONING), Text("Done.")],
                usage=Usage(900, output_tokens=40, cache_read_tokens=512, reasoning_tokens=24),
            )
        )
        r = env.run(*configure(env, server), "-p", "hi", "--output-format", "json")
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["result"] == "Done."
    assert result["usage"] == {
        "input_tokens": 900,
        "cache_read_tokens": 512,
        "cache_write_tokens": 0,
        "output_tokens": 40,
        "reasoning_tokens": 24,
    }
    # the thinking block in the stored turn: its summary, the item as signature
    assert result["messages"][-1]["content"][0] == {
        "type": "thinking",
        "text": "Short.",
        "signature": REASONING,
    }


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
