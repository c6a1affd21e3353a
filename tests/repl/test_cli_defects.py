"""Small defects of the ``panto`` command (issue 13), each pinned."""

from __future__ import annotations

import json

from support.repl import Env, user_texts

from panto.testing import HTTPError, ScriptedServer


def test_decode_of_a_non_sse_file_is_an_error(env: Env) -> None:
    (env.cwd / "notes.md").write_text("# Notes\nplain text, no events\n")
    r = env.run("decode", "notes.md")
    assert r.returncode == 1
    assert r.stdout == ""
    assert "notes.md: no server-sent events found" in r.stderr
    (env.cwd / "empty.sse").write_bytes(b"")
    r = env.run("decode", "empty.sse")
    assert r.returncode == 1 and "no server-sent events" in r.stderr
    (env.cwd / "ok.sse").write_bytes(b'data: {"a": 1}\n\n')
    r = env.run("decode", "ok.sse")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["data"] == '{"a": 1}'


def test_an_empty_prompt_is_a_usage_error_and_sends_nothing(
    env: Env, server: ScriptedServer
) -> None:
    env.vars["ANTHROPIC_API_KEY"] = "sk-test"
    common = ("--model", "anthropic/m", "--base-url", server.url, "--no-session")
    for prompt in ("", "  \n"):
        r = env.run("-p", prompt, *common)
        assert r.returncode == 2
        assert "the prompt is empty" in r.stderr
    r = env.run("-p", "-", *common, input="\n")
    assert r.returncode == 2 and "empty" in r.stderr
    assert server.requests == []
    r = env.run("-p", "hi", *common)
    assert r.returncode == 0 and len(server.requests) == 1


def test_output_format_without_print_is_a_usage_error(env: Env) -> None:
    r = env.run("--output-format", "json", "--model", "mock/anthropic", input="hello\n")
    assert r.returncode == 2
    assert "--output-format needs -p" in r.stderr
    assert "You said" not in r.stdout


def test_unknown_resume_id_exits_2(env: Env) -> None:
    r = env.run("-p", "hi", "--model", "mock/anthropic", "--resume", "nosuchid")
    assert r.returncode == 2
    assert "no session id starts with 'nosuchid'" in r.stderr


def test_model_switch_checks_the_key(env: Env) -> None:
    r = env.run("--model", "mock/anthropic", input="/model anthropic/claude-x\n/model\nhello\n")
    assert r.returncode == 0, r.stderr
    assert "ANTHROPIC_API_KEY" in r.stdout
    assert "the model is still mock/anthropic" in r.stdout
    after = r.stdout.split("the model is still mock/anthropic", 1)[1]
    assert "mock/anthropic" in after and "anthropic/claude-x" not in after
    assert "You said: hello" in r.stdout
    [path] = env.sessions()
    models = [
        json.loads(line)
        for line in path.read_text().splitlines()
        if json.loads(line).get("type") == "model_change"
    ]
    assert [(m["provider"], m["model"]) for m in models] == [("mock", "anthropic")]


def test_a_failed_prompt_is_not_merged_into_the_next(env: Env, server: ScriptedServer) -> None:
    """stdin is a pipe here (no line editing): the failed prompt is left out
    of the conversation and the next one is sent alone."""
    env.vars["ANTHROPIC_API_KEY"] = "sk-test"
    server.push(
        HTTPError(
            400, {"type": "error", "error": {"type": "invalid_request_error", "message": "no"}}
        )
    )
    r = env.run(
        "--model",
        "anthropic/m",
        "--base-url",
        server.url,
        "--no-extensions",
        input="hello anthropic\nsecond try\n",
    )
    assert r.returncode == 0, r.stderr
    assert "You said: second try" in r.stdout
    assert len(server.requests) == 2
    assert user_texts(server.requests[1].json) == ["second try"]
    # the session: the failed prompt stays as an unanswered sibling; a
    # resume rebuilds [second try, answer] only
    [path] = env.sessions()
    r = env.run(
        "--model",
        "anthropic/m",
        "--base-url",
        server.url,
        "--no-extensions",
        "--continue",
        "-p",
        "third",
    )
    assert r.returncode == 0, r.stderr
    assert user_texts(server.requests[-1].json) == ["second try", "third"]
    assert path.exists()


def test_sigterm_during_one_shot_cancels_and_exits_143(env: Env) -> None:
    import contextlib
    import os
    import signal
    import subprocess
    import sys
    import time

    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "panto",
            "--model",
            "mock/anthropic",
            "-p",
            'call bash {"command": "sleep 30"}',
        ],
        cwd=env.cwd,
        env=env.vars,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,  # so the cleanup below reaches the tool's sleep too
    )
    try:
        assert p.stderr is not None
        line = p.stderr.readline()  # the tool call's summary: the tool is running
        assert "bash" in line
        started = time.monotonic()
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=20)
    finally:
        # whether a tool's processes die with panto is D7's test (tests/faults)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    assert time.monotonic() - started < 15
    assert p.returncode == 143
    assert "SIGTERM" in err and "Traceback" not in err
    [path] = env.sessions()
    roles = [m["role"] for m in env.session_messages(path) if m["role"] != "system"]
    assert roles == ["user", "assistant", "tool"]


def test_one_shot_with_a_full_disk_says_so_in_one_line(env: Env) -> None:
    import resource

    _, hard = resource.getrlimit(resource.RLIMIT_FSIZE)

    def small_files() -> None:  # files may not grow past 64 bytes: the session's first write fails
        resource.setrlimit(resource.RLIMIT_FSIZE, (64, hard))

    r = env.run("-p", "hello", "--model", "mock/anthropic", preexec_fn=small_files)
    assert r.returncode == 1
    assert "Traceback" not in r.stderr
    lines = [line for line in r.stderr.splitlines() if "session file is unchanged" in line]
    assert len(lines) == 1 and "cannot append" in lines[0]
    assert "You said" not in r.stdout  # nothing was sent
    assert env.sessions() == []  # the file the failed first write created is gone, not left empty


def test_the_usage_line_shows_cache_and_cost_when_the_price_is_known(
    env: Env, server: ScriptedServer
) -> None:
    from panto.conversation import Text, Usage
    from panto.testing import Reply

    env.vars["ANTHROPIC_API_KEY"] = "sk-test"
    usage = Usage(
        input_tokens=1000, output_tokens=100, cache_read_tokens=10_000, cache_write_tokens=2000
    )
    server.push(Reply([Text("one")], usage=usage), Reply([Text("two")], usage=usage))
    args = ("--base-url", server.url, "--no-extensions", "--no-session")
    r = env.run("--model", "anthropic/claude-sonnet-4-5", *args, input="a\nb\n")
    assert r.returncode == 0, r.stderr
    # 1000*3 + 10000*0.3 + 2000*3.75 + 100*15 = 15000 per million -> $0.0150
    assert "in 1,000 · cache 10,000r/2,000w · out 100 · $0.0150 · " in r.stdout
    assert "session $0.0300" in r.stdout
    r = env.run("--model", "anthropic/no-such-model-x", *args, input="a\n")
    assert r.returncode == 0, r.stderr
    assert "You said: a" in r.stdout and "$" not in r.stdout  # price unknown: no cost


def test_thinking_can_be_hidden(env: Env) -> None:
    r = env.run(
        "--model", "mock/anthropic", "--no-session", input="a\n/thinking off\nb\n/thinking\n"
    )
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.split("thinking: hidden", 1)
    assert "The user said 1 word(s)" in first and "You said: a" in first
    assert "The user said" not in second and "You said: b" in second
    assert second.count("thinking: hidden") == 1
