"""Permission modes and rules end to end: ``panto -p`` as a subprocess with
the offline mock model, which calls the tool the prompt names."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support.repl import Env

DONT_ASK = """
[permissions]
mode = "dont-ask"
allow = ["Bash(*)"]
deny = ["Bash(rm *)"]
"""


def run(env: Env, prompt: str, *args: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The json result of ``panto -p PROMPT`` and its tool results."""
    r = env.run("-p", prompt, "--model", "mock/anthropic", "--output-format", "json", *args)
    assert r.stdout, r.stderr
    doc = json.loads(r.stdout)
    results = [b for m in doc["messages"] for b in m["content"] if b.get("type") == "tool_result"]
    return doc, results


@pytest.mark.parametrize(
    "command",
    [
        "rm f",
        "true; rm f",
        "echo a && rm f",
        "timeout 5 rm f",
        "env A=1 rm f",
        "echo f | xargs rm",
        "bash -c 'rm f'",
    ],
)
def test_dont_ask_with_a_deny_rule_leaves_f_in_place(
    env: Env, user_config: Callable[[str], Path], command: str
) -> None:
    cfg = user_config(DONT_ASK)
    (env.cwd / "f").write_text("keep me")
    _, results = run(env, f"call bash {command}")
    assert (env.cwd / "f").read_text() == "keep me"
    [res] = results
    assert res["is_error"]
    text = res["content"] if isinstance(res["content"], str) else json.dumps(res["content"])
    assert text.startswith("permission denied:"), text
    assert "Bash(rm *)" in text and str(cfg) in text


def test_dont_ask_runs_what_an_allow_rule_covers(
    env: Env, user_config: Callable[[str], Path]
) -> None:
    user_config(DONT_ASK)
    _, results = run(env, "call bash touch g")
    assert (env.cwd / "g").exists()
    assert not results[0]["is_error"]


def test_dont_ask_denies_what_no_allow_rule_covers_and_says_how(
    env: Env, user_config: Callable[[str], Path]
) -> None:
    cfg = user_config('[permissions]\nmode = "dont-ask"\nallow = ["Bash(git status)"]\n')
    started = time.monotonic()
    doc, results = run(env, "call bash git status && touch x")
    assert time.monotonic() - started < 30
    assert not (env.cwd / "x").exists()
    text = results[0]["content"]
    assert "dont-ask" in text and '"Bash(touch x)"' in text and str(cfg) in text
    # the decision is in the session
    [session] = env.sessions()
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    perms = [e for e in entries if e.get("type") == "permission"]
    assert [(p["tool"], p["decision"], p["mode"]) for p in perms] == [("bash", "deny", "dont-ask")]
    assert perms[0]["tool_use_id"] == results[0]["tool_use_id"]
    assert doc["session_id"]


@pytest.mark.parametrize(
    "prompt",
    [
        "call bash touch created",
        'call write {"path": "created", "content": "x"}',
        'call edit {"path": "created", "old_string": "", "new_string": "x"}',
        'call bash python3 -c \'open("created", "w")\'',
    ],
)
def test_plan_mode_creates_no_file(env: Env, prompt: str) -> None:
    _, results = run(env, prompt, "--permission-mode", "plan")
    assert not (env.cwd / "created").exists()
    assert results and results[0]["is_error"]
    assert "plan mode is read-only" in results[0]["content"]


def test_plan_mode_still_reads(env: Env) -> None:
    (env.cwd / "notes.txt").write_text("the notes\n")
    _, results = run(env, "call read notes.txt", "--permission-mode", "plan")
    assert "the notes" in results[0]["content"]


def test_without_a_terminal_default_runs_and_an_ask_rule_denies(
    env: Env, user_config: Callable[[str], Path]
) -> None:
    user_config('[permissions]\nask = ["Bash(touch asked)"]\n')
    run(env, "call bash touch plain")
    assert (env.cwd / "plain").exists()  # default mode, no terminal: runs (sandboxed)
    _, results = run(env, "call bash touch asked")
    assert not (env.cwd / "asked").exists()
    text = results[0]["content"]
    assert "ask rule Bash(touch asked)" in text and "[permissions] ask" in text


def test_env_files_are_not_read(env: Env) -> None:
    (env.cwd / ".env").write_text("API_KEY=sk-secret-value\n")
    (env.cwd / ".env.example").write_text("API_KEY=\n")
    for prompt in ("call read .env", "call bash cat .env"):
        doc, results = run(env, prompt, "--permission-mode", "bypass")
        assert "sk-secret-value" not in json.dumps(doc)
        assert results[0]["is_error"] and ".env" in results[0]["content"]
    _, results = run(env, "call read .env.example")
    assert "API_KEY=" in results[0]["content"]


def test_a_bad_mode_or_rule_is_one_clear_line(env: Env, user_config: Callable[[str], Path]) -> None:
    r = env.run("-p", "hi", "--model", "mock/anthropic", "--permission-mode", "yolo")
    assert r.returncode == 2 and "Traceback" not in r.stderr and "--permission-mode" in r.stderr
    user_config('[permissions]\ndeny = ["Bash(rm *"]\n')
    r = env.run("-p", "hi", "--model", "mock/anthropic")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "permissions.deny[0]" in r.stderr and "closing ')'" in r.stderr


def test_a_trusted_project_adds_rules_but_cannot_allow_what_the_user_denies(
    env: Env, user_config: Callable[[str], Path]
) -> None:
    user = user_config('[permissions]\ndeny = ["Bash(touch denied*)"]\n')
    (env.cwd / ".panto").mkdir()
    project = env.cwd / ".panto" / "config.toml"
    project.write_text(
        '[permissions]\nmode = "dont-ask"\nallow = ["Bash(touch *)"]\ndeny = ["Bash(touch nope)"]\n'
    )
    env.vars["PANTO_TRUST_ALL"] = "1"
    _, results = run(env, "call bash touch denied-by-user")
    assert not (env.cwd / "denied-by-user").exists()
    assert "Bash(touch denied*)" in results[0]["content"] and str(user) in results[0]["content"]
    _, results = run(env, "call bash touch nope")
    assert not (env.cwd / "nope").exists() and str(project) in results[0]["content"]
    run(env, "call bash touch fine")
    assert (env.cwd / "fine").exists()  # the project's allow rule, in its dont-ask mode
    # panto config lists every layer's rules with their files
    out = env.run("config").stdout
    assert 'permissions.deny = ["Bash(touch denied*)"]' in out
    assert '"Bash(touch nope)"' in out and str(project) in out
