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


def test_a_mistyped_command_is_named_not_sent(env: Env, server: ScriptedServer) -> None:
    """``panto serv`` is a typo of ``serve``, not a one-word prompt: one
    line names the command and how to send the word anyway; no request."""
    for args, meant in ((["serv"], "serve"), (["sesions", "--help"], "sessions")):
        r = env.run(*args, input="")
        assert r.returncode == 2 and "Traceback" not in r.stderr
        assert r.stderr.strip() == (
            f"panto: {args[0]!r} is not a command; did you mean `panto {meant}`? "
            f"(`panto -- {args[0]}` sends it to the agent as a prompt)"
        )
    r = env.run(*scripted(env, server), "--", "serv", input="")
    assert r.returncode == 0, r.stderr
    assert user_texts(server.requests[-1].json) == ["serv"]
    assert len(server.requests) == 1


HELLO = """
return {
  name = "me.hello",
  activate = function()
    panto.ext.register_command {
      name = "hello", description = "say hello",
      handler = function(args) return "hello, " .. args end,
    }
  end,
}
"""


def _input_line(t: Pty) -> str:
    t.pump()
    return [line for line in t.screen_lines() if line.strip()][-1]


def test_tab_completes_commands_paths_and_models(env: Env, term: Callable[..., Pty]) -> None:
    ext = env.home / "xdg_config_home" / "panto" / "extensions"
    ext.mkdir(parents=True)
    (ext / "hello.lua").write_text(HELLO)
    (env.cwd / "calc.py").write_text("x = 1\n")
    (env.cwd / "src").mkdir()
    (env.cwd / "src" / "main.py").write_text("y = 2\n")
    t = term("--model", "mock/anthropic")
    t.prompt()
    t.send("/ext\t")  # a built-in command
    assert _input_line(t) == "› /extensions"
    t.send("\x15/hell\t")  # an extension's command (Ctrl-U cleared the line)
    assert _input_line(t) == "› /hello"
    t.send("world\r")
    t.expect("hello, world")
    t.prompt()
    t.send("/model mock/ant\t")
    assert _input_line(t) == "› /model mock/anthropic"
    t.send("\x15see @ca\t")
    assert _input_line(t) == "› see @calc.py"
    t.send("and @s\t")  # a directory: completed with a slash, then its files
    assert _input_line(t) == "› see @calc.py and @src/"
    t.send("m\t\r")
    t.expect("You said: see @calc.py and @src/main.py")
    t.prompt()
    t.pump()
    assert "[file: calc.py, 6 B]" in t.screen_text()
    assert "[file: src/main.py, 6 B]" in t.screen_text()
    t.send("/ex\t\t")  # two candidates: the second Tab lists them
    t.pump()
    assert "/exit" in t.screen_text() and "/expand" in t.screen_text()


def test_without_a_key_the_repl_says_so_once_and_answers_with_the_mock(
    env: Env, term: Callable[..., Pty]
) -> None:
    t = term()  # no key, no --model, no config
    t.prompt()
    t.line("hello")
    t.expect("You said: hello")
    t.prompt()
    t.pump()
    assert t.raw.count("no API key (set ANTHROPIC_API_KEY or OPENAI_API_KEY)") == 1
    assert "this is the offline mock model, which echoes" in t.raw
