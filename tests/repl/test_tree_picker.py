"""/tree on a terminal: an arrow-key picker over the session's turns.
Enter continues after the chosen turn, ``e`` puts its prompt in the input
line, Esc changes nothing; the terminal's modes are restored."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from support.repl import Env, Pty, user_texts

from panto.testing import ScriptedServer

pytestmark = pytest.mark.timeout(90)

UP, DOWN, ESC = "\x1b[A", "\x1b[B", "\x1b"


def two_turns(env: Env, server: ScriptedServer, term: Callable[..., Pty]) -> Pty:
    env.vars["ANTHROPIC_API_KEY"] = "sk-test"
    t = term("--model", "anthropic/m", "--base-url", server.url, "--no-extensions")
    t.prompt()
    for text in ("first question", "second question"):
        t.line(text)
        t.expect(f"You said: {text}")
        t.prompt()
    t.line("/tree")
    t.expect("Enter: continue after it")
    t.pump()
    return t


def selected(t: Pty) -> list[str]:
    """The screen rows shown in reverse video."""
    rows = []
    for y in range(t.screen.lines):
        line = t.screen.buffer[y]
        chars = [line[x] for x in range(t.screen.columns)]
        if any(c.reverse for c in chars):
            rows.append("".join(c.data for c in chars).rstrip())
    return rows


def test_enter_continues_after_the_chosen_turn(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    t = two_turns(env, server, term)
    [row] = selected(t)
    assert row.startswith(">") and "second question" in row  # starts at the current turn
    t.send(UP)
    t.pump()
    [row] = selected(t)
    assert "first question" in row and "You said: first question" in row
    t.send("\r")
    t.expect("continuing from")
    t.prompt()
    t.pump()
    assert "Enter: continue" not in t.screen_text()  # the picker is erased
    t.line("third")
    t.expect("You said: third")
    t.prompt()
    assert user_texts(server.requests[-1].json) == ["first question", "third"]


def test_e_puts_the_prompt_in_the_input_line(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    t = two_turns(env, server, term)
    t.send(UP + UP + DOWN + UP)  # stops at the top
    t.send("e")
    t.expect("the prompt is in the input line")
    t.prompt()
    t.pump()
    assert t.screen_lines()[t.screen.cursor.y].rstrip() == "› first question"
    t.send(" again\r")
    t.expect("You said: first question again")
    t.prompt()
    assert user_texts(server.requests[-1].json) == ["first question again"]


def test_escape_changes_nothing(env: Env, server: ScriptedServer, term: Callable[..., Pty]) -> None:
    t = two_turns(env, server, term)
    t.send(UP)
    t.send(ESC)
    t.expect("nothing chosen")
    t.prompt()
    t.line("third")
    t.expect("You said: third")
    assert "› third" in t.screen_text()  # echoed: the terminal's modes are back
    t.prompt()
    assert user_texts(server.requests[-1].json) == [
        "first question",
        "second question",
        "third",
    ]
    assert "\x1b[?25h" in t.raw  # the cursor is shown again


def test_sigterm_in_the_picker_restores_the_terminal(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    import signal
    import termios

    t = two_turns(env, server, term)
    lflags = termios.tcgetattr(t.child.child_fd)[3]
    assert not lflags & termios.ICANON  # the picker reads keys one by one
    t.child.kill(signal.SIGTERM)
    assert t.wait_exit(timeout=20) == 143
    assert t.raw.rfind("\x1b[?25h") > t.raw.rfind("\x1b[?25l")  # the cursor is back
