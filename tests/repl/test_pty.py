"""The REPL in a real pseudo-terminal (issue 13): paste, history, //,
/expand, the status line, a failed prompt put back, signals, a full disk."""

from __future__ import annotations

import json
import os
import resource
import signal
import time
from collections.abc import Callable

import pytest
from support.repl import Env, Pty, user_texts

from panto.testing import HTTPError, ScriptedServer

pytestmark = pytest.mark.timeout(90)

PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"


def scripted(env: Env, server: ScriptedServer) -> tuple[str, ...]:
    env.vars["ANTHROPIC_API_KEY"] = "sk-test"
    return ("--model", "anthropic/m", "--base-url", server.url, "--no-extensions")


def test_a_three_line_paste_is_one_prompt(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    t = term(*scripted(env, server))
    t.prompt()
    t.send(f"{PASTE_START}first line\nsecond line\nthird line{PASTE_END}")
    t.send("\r")
    t.expect("You said: first line")
    t.prompt()
    t.pump()
    assert len(server.requests) == 1
    assert user_texts(server.requests[0].json) == ["first line\nsecond line\nthird line"]


def test_alt_enter_and_a_trailing_backslash_add_lines(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    t = term(*scripted(env, server))
    t.prompt()
    t.send("one\x1b\rtwo\r")
    t.expect("You said: one")
    t.prompt()
    t.line("three\\")
    t.expect("…")
    t.line("four")
    t.expect("You said: three")
    t.prompt()
    assert [user_texts(r.json)[-1] for r in server.requests] == ["one\ntwo", "three\nfour"]


def test_history_recall_does_not_garble_the_line(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    t = term(*scripted(env, server))
    t.prompt()
    t.line("a much longer first line of text")
    t.expect("You said: a much longer")
    t.prompt()
    t.line("short")
    t.expect("You said: short")
    t.prompt()
    t.pump()
    # up twice, to the start of the line, insert X: with a prompt whose
    # colour codes readline counts as text, X lands columns off
    t.send("\x1b[A\x1b[A\x01X")
    t.pump()
    last = [line for line in t.screen_lines() if line.strip()][-1]
    assert last == "› Xa much longer first line of text"
    assert t.screen.cursor.x == len("› X")
    t.send("\r")
    t.expect("You said: Xa much")
    t.prompt()
    assert user_texts(server.requests[-1].json)[-1] == "Xa much longer first line of text"


def test_double_slash_sends_a_literal_slash(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    t = term(*scripted(env, server))
    t.prompt()
    t.line("//etc/hosts is where?")
    t.expect("You said: /etc/hosts")
    t.prompt()
    assert user_texts(server.requests[0].json) == ["/etc/hosts is where?"]
    t.line("/etc")
    t.expect("unknown command /etc")
    t.prompt()
    assert len(server.requests) == 1


def test_expand_prints_the_full_tool_output(env: Env, term: Callable[..., Pty]) -> None:
    t = term("--model", "mock/anthropic", "--permission-mode", "bypass")  # no approval prompt
    t.prompt()
    t.line('call bash {"command": "seq 1000 1100"}')
    t.expect(r"↳ 1000 1001 .*\(\+100 lines · /expand 1\)")
    t.expect("The tool returned")  # the mock quotes the first 200 characters
    t.prompt()
    t.pump()
    assert "1099" not in t.raw  # collapsed
    start = len(t.raw)
    t.line("/expand")
    t.expect("1099")
    t.prompt()
    t.pump()
    expanded = t.raw[start:].replace("\r\n", "\n")
    assert "\n".join(str(n) for n in range(1000, 1101)) in expanded
    t.line("/expand 7")
    t.expect("no tool result 7")


def test_the_status_line_shows_a_slow_tool_and_goes_away(
    env: Env, term: Callable[..., Pty]
) -> None:
    t = term("--model", "mock/anthropic", "--permission-mode", "bypass")  # no approval prompt
    t.prompt()
    t.line('call bash {"command": "sleep 2; echo slept"}')
    t.expect(r"waiting for tool bash · \d\.\ds")
    t.expect(r"waiting for tool bash · 1\.\ds")  # the clock runs
    t.expect("The tool returned: slept")
    t.prompt()
    t.pump()
    assert "waiting for" not in t.screen_text()


def test_the_status_line_shows_a_tool_call_being_written(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    """While the model streams a long tool call (a whole file for `write`)
    the status line names the call and counts its size."""
    from panto.conversation import Text, ToolUse
    from panto.testing import Reply

    call = ToolUse("toolu_1", "write", {"path": "big.txt", "content": "x" * 30000})
    server.push(Reply([Text("Writing it."), call], chunk=100, delay=0.01))
    server.push(Reply([Text("done")]))
    t = term(*scripted(env, server), "--permission-mode", "bypass")
    t.prompt()
    t.line("write a big file")
    t.expect("Writing it.")
    t.expect(r"waiting for the write call · \d+\.\ds · \d+ B")
    t.expect(r"waiting for the write call · \d+\.\ds · [1-2]\d\.\d KB")  # it grows
    t.expect("⚙ write")
    t.expect("done")
    t.prompt()
    t.pump()
    assert "waiting for" not in t.screen_text()


def test_a_stall_inside_the_answer_shows_a_hint_that_goes_away(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    """The answer stops mid-line: after PANTO_STALL_HINT_AFTER seconds a
    hint follows the cursor; the next output (here the error when the
    server gives up) erases it, and the line keeps its text."""
    from panto.conversation import Text
    from panto.testing import Reply

    server.push(Reply([Text("alpha beta gamma delta")], chunk=6, stall_after=4, stall=2.5))
    env.vars["PANTO_STALL_HINT_AFTER"] = "0.5"
    t = term(*scripted(env, server))
    t.prompt()
    t.line("go")
    dim = r"\x1b\[2m"
    t.expect(rf"alpha {dim}  . waiting for model · \d+s · Ctrl-C cancels")
    t.expect(rf"{dim}  . waiting for model · [2-9]s")  # redrawn as the seconds pass
    t.expect("closed the connection")
    t.prompt()
    t.pump()
    rows = [row.rstrip() for row in t.screen_lines()]
    assert "waiting for model" not in t.screen_text(), rows
    assert "alpha" in rows, rows  # the hint left nothing behind


def test_no_stall_hint_after_the_answer_or_a_tool_call(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    """The hint watches only a streaming answer: not the prompt after a
    turn, not a tool's run (the spinner line says what runs)."""
    env.vars["PANTO_STALL_HINT_AFTER"] = "0.2"
    t = term("--model", "mock/anthropic", "--permission-mode", "bypass")  # no approval prompt
    t.prompt()
    t.line('call bash {"command": "sleep 1; echo slept"}')
    t.expect("The tool returned: slept")
    t.prompt()
    t.pump(quiet=1.0)
    t.line("hello")
    t.expect("You said: hello")
    t.prompt()
    t.pump(quiet=1.0)
    assert "Ctrl-C cancels" not in t.raw, t.raw


def test_a_failed_prompt_is_put_back_not_resent(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    server.push(
        HTTPError(
            400,
            {"type": "error", "error": {"type": "invalid_request_error", "message": "try again"}},
        )
    )
    t = term(*scripted(env, server))
    t.prompt()
    t.line("hello anthropic")
    t.expect("try again")
    t.prompt()
    t.pump()
    assert t.screen_lines()[t.screen.cursor.y].rstrip() == "› hello anthropic"
    assert len(server.requests) == 1  # nothing resent on its own
    t.send(" again\r")
    t.expect("You said: hello anthropic again")
    t.prompt()
    assert len(server.requests) == 2
    assert user_texts(server.requests[1].json) == ["hello anthropic again"]


def test_continue_shows_the_last_exchanges(env: Env, term: Callable[..., Pty]) -> None:
    for extra in ((), ("--continue",)):
        r = env.run("-p", "beta" if extra else "alpha", "--model", "mock/anthropic", *extra)
        assert r.returncode == 0, r.stderr
    t = term("--model", "mock/anthropic", "--continue")
    t.prompt()
    t.pump()
    text = t.screen_text()
    assert "› alpha" in text and "You said: alpha" in text
    assert "› beta" in text and "You said: beta" in text


def test_continue_shows_tool_calls_and_results_expandable(
    env: Env, term: Callable[..., Pty]
) -> None:
    """The recap shows each tool call and its one-line result in order, and
    /expand N prints a resumed result in full."""
    r = env.run("-p", "call bash echo recap-one; echo recap-two", "--model", "mock/anthropic")
    assert r.returncode == 0, r.stderr
    t = term("--model", "mock/anthropic", "--continue")
    t.prompt()
    t.pump()
    rows = [row.rstrip() for row in t.screen_lines() if row.strip()]
    call = next(i for i, row in enumerate(rows) if row.startswith("⚙ bash("))
    assert rows[call - 1] == "Calling bash.", rows
    assert rows[call + 1] == "  ↳ recap-one recap-two (+1 lines · /expand 1)", rows
    assert rows[call + 2].startswith("The tool returned:"), rows
    t.line("/expand 1")
    t.expect("recap-two")
    t.prompt()


def _tty_flags(t: Pty) -> tuple[int, int]:
    import termios

    attrs = termios.tcgetattr(t.child.child_fd)
    return attrs[3] & (termios.ECHO | termios.ICANON), attrs[3]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_during_a_tool_cancels_saves_and_exits_128_plus_n(
    env: Env, term: Callable[..., Pty], sig: signal.Signals
) -> None:
    t = term("--model", "mock/anthropic", "--permission-mode", "bypass")  # no approval prompt
    t.prompt()
    before, _ = _tty_flags(t)
    t.line('call bash {"command": "sleep 30"}')
    t.expect("waiting for tool bash")
    started = time.monotonic()
    t.child.kill(sig)
    status = t.wait_exit(timeout=20)
    assert time.monotonic() - started < 15
    assert status == 128 + sig
    [path] = env.sessions()
    msgs = [m for m in env.session_messages(path) if m["role"] != "system"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool"]
    assert msgs[1]["content"][-1]["type"] == "tool_use"
    assert msgs[2]["content"][0]["is_error"] is True


def test_sigterm_at_the_prompt_restores_the_terminal(env: Env, term: Callable[..., Pty]) -> None:
    t = term("--model", "mock/anthropic")
    t.prompt()
    t.line("hello")
    t.expect("You said: hello")
    t.prompt()
    t.pump()
    assert "\x1b[?2004h" in t.raw  # bracketed paste on while reading
    t.child.kill(signal.SIGTERM)
    assert t.wait_exit(timeout=20) == 143
    assert t.raw.rstrip().endswith("everything saved so far is kept") or "SIGTERM" in t.raw
    assert t.raw.rfind("\x1b[?2004l") > t.raw.rfind("\x1b[?2004h")  # and off again


def test_a_full_disk_while_saving_the_prompt_loses_nothing(
    env: Env, term: Callable[..., Pty]
) -> None:
    t = term("--model", "mock/anthropic")
    t.prompt()
    t.line("first")
    t.expect("You said: first")
    t.prompt()
    t.pump()
    [path] = env.sessions()
    saved = path.read_bytes()
    # the file may not grow any more: the next append fails (EFBIG, as a
    # full disk fails with ENOSPC) -- panto ignores SIGXFSZ like Python does
    _, hard = resource.prlimit(t.child.pid, resource.RLIMIT_FSIZE)
    resource.prlimit(t.child.pid, resource.RLIMIT_FSIZE, (len(saved), hard))
    t.line("second")
    t.expect("nothing was lost")
    t.prompt()
    t.pump()
    assert path.read_bytes() == saved
    assert t.screen_lines()[t.screen.cursor.y].rstrip() == "› second"
    err = [line for line in t.screen_lines() if "nothing was lost" in line]
    assert len(err) == 1 and "cannot append" in t.screen_text()
    resource.prlimit(t.child.pid, resource.RLIMIT_FSIZE, (hard, hard))
    t.send("\r")
    t.expect("You said: second")
    t.prompt()
    msgs = env.session_messages(path)
    texts = [b.get("text") for m in msgs if m["role"] == "user" for b in m["content"]]
    assert texts == ["first", "second"]
    json.loads(path.read_text().splitlines()[-1])
    assert os.path.getsize(path) > len(saved)


def test_the_terminal_going_away_during_a_tool_exits_129_and_keeps_the_session(
    env: Env, term: Callable[..., Pty]
) -> None:
    """A real hang-up: the pty's master side closes, the kernel sends SIGHUP
    and every later write to the terminal fails (EIO)."""
    t = term("--model", "mock/anthropic", "--permission-mode", "bypass")  # no approval prompt
    t.prompt()
    t.line('call bash {"command": "sleep 30"}')
    t.expect("waiting for tool bash")
    proc = t.child.ptyproc
    proc.fileobj.close()  # the terminal window closes
    deadline = time.monotonic() + 20
    while proc.isalive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not proc.isalive()
    assert proc.exitstatus == 129, (proc.exitstatus, proc.signalstatus)
    [path] = env.sessions()
    msgs = [m for m in env.session_messages(path) if m["role"] != "system"]
    assert [m["role"] for m in msgs] == ["user", "assistant", "tool"]


def test_ctrl_c_before_any_answer_puts_the_prompt_back(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    from panto.conversation import Text
    from panto.testing import Reply

    server.push(Reply([Text("late")], stall_after=0, stall=20))
    t = term(*scripted(env, server))
    t.prompt()
    t.line("slow one")
    t.expect("waiting for model")
    deadline = time.monotonic() + 20
    while not server.requests and time.monotonic() < deadline:  # the request is out
        time.sleep(0.05)
    t.send("\x03")
    t.expect(r"\[cancelled\]")
    t.prompt()
    t.pump()
    assert t.screen_lines()[t.screen.cursor.y].rstrip() == "› slow one"
    t.send("\x15fast one\r")  # Ctrl-U clears the line
    t.expect("You said: fast one")
    t.prompt()
    assert user_texts(server.requests[-1].json) == ["fast one"]


def test_an_unanswered_prompt_is_in_the_input_line_on_continue(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    server.push(HTTPError(400, {"type": "error", "error": {"type": "x", "message": "nope"}}))
    r = env.run(*scripted(env, server), "-p", "left unanswered")
    assert r.returncode == 1
    t = term(*scripted(env, server), "--continue")
    t.expect("it is in the input line")
    t.prompt()
    t.pump()
    assert t.screen_lines()[t.screen.cursor.y].rstrip() == "› left unanswered"
    t.send("\r")
    t.expect("You said: left unanswered")
    t.prompt()
    assert user_texts(server.requests[-1].json) == ["left unanswered"]
