"""What a new user types first (issue 23, items 13 and 14): ``panto "do X"``
starts the REPL with that prompt, and Tab completes commands, ``@paths``
and ``/model`` names."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.repl import Env, Pty, user_texts

from panto.testing import ScriptedServer

pytestmark = pytest.mark.timeout(90)


def scripted(env: Env, server: ScriptedServer) -> tuple[str, ...]:
    env.vars["ANTHROPIC_API_KEY"] = "sk-test"
    return ("--model", "anthropic/m", "--base-url", server.url, "--no-extensions")


def test_a_positional_prompt_starts_the_repl_with_it(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    t = term("fix the failing test", *scripted(env, server))
    t.expect("You said: fix the failing test")
    t.prompt()
    t.line("and then?")
    t.expect("You said: and then")
    t.prompt()
    assert [user_texts(r.json)[-1] for r in server.requests] == [
        "fix the failing test",
        "and then?",
    ]
    t.send("\x1b[A\x1b[A")  # the first prompt is in the history, as if typed
    t.pump()
    assert [line for line in t.screen_lines() if line.strip()][-1] == "› fix the failing test"


def test_a_first_word_that_is_a_command_stays_a_command(env: Env, server: ScriptedServer) -> None:
    r = env.run("sessions", "--help")
    assert r.returncode == 0 and r.stdout.startswith("usage: panto sessions")
    # unquoted words are joined; -- makes a command's name a prompt
    r = env.run(*scripted(env, server), "--", "sessions", "are", "slow", input="")
    assert r.returncode == 0, r.stderr
    assert user_texts(server.requests[-1].json) == ["sessions are slow"]
    r = env.run("-p", "fix", "the", "test", *scripted(env, server))
    assert r.returncode == 2 and "quote the whole prompt" in r.stderr
    assert len(server.requests) == 1
