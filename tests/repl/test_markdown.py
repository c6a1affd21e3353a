"""Markdown in the REPL: tables aligned and numbered lists formatted on a
terminal, the text as the model wrote it when stdout is not a terminal."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.repl import Env, Pty

from panto.conversation import Text
from panto.testing import Reply, ScriptedServer

pytestmark = pytest.mark.timeout(90)

ANSWER = """\
The files:

| file | lines | note |
|------|------:|------|
| `app.py` | 120 | the **entry** point |
| util.py | 8 | helpers |

Steps:
1. read `app.py`
2. run the tests
"""


def scripted(env: Env, server: ScriptedServer) -> tuple[str, ...]:
    env.vars["ANTHROPIC_API_KEY"] = "sk-test"
    return ("--model", "anthropic/m", "--base-url", server.url, "--no-extensions")


def test_tables_and_numbered_lists_on_a_terminal(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    server.push(Reply([Text(ANSWER)], chunk=5))
    t = term(*scripted(env, server))
    t.prompt()
    t.line("which files?")
    t.expect("run the tests")
    t.prompt()
    t.pump()
    lines = t.screen_lines()
    top = lines.index("file    │ lines │ note")
    assert lines[top + 1 : top + 4] == [
        "────────┼───────┼────────────────",
        "app.py  │   120 │ the entry point",
        "util.py │     8 │ helpers",
    ]
    assert "1. read app.py" in lines and "2. run the tests" in lines
    assert "|" not in t.screen_text()


def test_markdown_is_left_as_written_when_stdout_is_not_a_terminal(
    env: Env, server: ScriptedServer
) -> None:
    server.push(Reply([Text(ANSWER)], chunk=5))
    r = env.run(*scripted(env, server), input="which files?\n")
    assert r.returncode == 0, r.stderr
    assert ANSWER in r.stdout
    assert "\x1b" not in r.stdout
