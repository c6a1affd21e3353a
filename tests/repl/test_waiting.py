"""Waiting for the model: the REPL's status line says how a long wait ends
(Ctrl-C, the [timeouts]), and ``panto -p`` shows a status line on stderr
when stderr is a terminal -- never in its stdout, never in json output."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from collections.abc import Callable

import pytest
from support.repl import Env, Pty

from panto.conversation import Text
from panto.testing import RecordedRequest, Reply, ScriptedServer

pytestmark = pytest.mark.timeout(90)


def scripted(env: Env, server: ScriptedServer) -> tuple[str, ...]:
    env.vars["ANTHROPIC_API_KEY"] = "sk-test"
    return ("--model", "anthropic/m", "--base-url", server.url, "--no-extensions")


def slow(seconds: float, text: str) -> Callable[[RecordedRequest], Reply]:
    """A reply whose headers come after ``seconds``."""

    def respond(req: RecordedRequest) -> Reply:
        time.sleep(seconds)
        return Reply([Text(text)])

    return respond


def test_a_long_wait_for_the_model_says_how_it_ends(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    env.vars.update(
        PANTO_WAIT_HINT_AFTER="0.5", PANTO_FIRST_BYTE_TIMEOUT="45", PANTO_IDLE_TIMEOUT="50"
    )
    server.push(Reply([Text("late")], stall_after=0, stall=20))  # before message_start
    t = term(*scripted(env, server))
    t.prompt()
    t.line("slow one")
    t.expect(r"waiting for model · 0\.\ds")
    assert "no reply yet" not in t.raw  # not before the delay
    t.expect(r"waiting for model · \d+\.\ds · no reply yet · Ctrl-C cancels")
    t.expect(r"timeouts: first_byte 45s, idle 50s")
    t.send("\x03")
    t.expect(r"\[cancelled\]")
    t.prompt()
    t.pump()
    assert "no reply yet" not in t.screen_text()  # erased

    assert t.screen_lines()[t.screen.cursor.y].rstrip() == "› slow one"


def test_the_hint_waits_for_its_delay_and_names_the_timeouts() -> None:
    import io
    import threading

    from panto.cli.render import Status, wait_hint, wait_hint_after

    assert wait_hint(120.0, 300.0) == (
        "no reply yet · Ctrl-C cancels · timeouts: first_byte 120s, idle 300s"
    )
    assert wait_hint(None, None) == "no reply yet · Ctrl-C cancels · no timeout set"
    assert wait_hint_after({}) == 20.0
    assert wait_hint_after({"PANTO_WAIT_HINT_AFTER": "0.5"}) == 0.5
    assert wait_hint_after({"PANTO_WAIT_HINT_AFTER": "soon"}) == 20.0

    def hint(what: str) -> str | None:
        return "HINT" if what == "model" else None

    for after, what, shown in (
        (60.0, "model", False),
        (0.0, "model", True),
        (0.0, "tool x", False),
    ):
        out = io.StringIO()
        s = Status(out, threading.Lock(), interval=0.01, hint=hint, hint_after=after)
        s.start(what)
        time.sleep(0.05)
        s.stop()
        assert f"waiting for {what} · " in out.getvalue()
        assert ("· HINT" in out.getvalue()) is shown


def test_one_shot_shows_a_status_line_on_a_terminal_and_erases_it(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    env.vars["PANTO_WAIT_HINT_AFTER"] = "0.5"
    server.push(slow(1.5, "the answer"))
    t = term(*scripted(env, server), "-p", "hello")
    t.expect(r"waiting for model · \d\.\ds")
    t.expect(r"no reply yet · Ctrl-C cancels")
    t.expect("the answer")
    assert t.wait_exit() == 0
    assert "waiting for" not in t.screen_text()
    # the answer, then the turn's usage line (cli.md), nothing of the status
    answer, usage = t.screen_text().strip().splitlines()
    assert answer == "the answer"
    assert re.fullmatch(r"in \d+ · out \d+ · \d+\.\ds", usage), usage


def test_one_shot_status_goes_to_stderr_only(
    env: Env, server: ScriptedServer, tmp_path: object
) -> None:
    """stderr a terminal, stdout a file: the status line is on the terminal,
    cut to its width, and the file holds the answer and nothing else."""
    pexpect = pytest.importorskip("pexpect")
    env.vars["PANTO_WAIT_HINT_AFTER"] = "0.2"
    server.push(slow(1.5, "the answer"))
    out = env.cwd / "out.txt"
    args = scripted(env, server)
    child = pexpect.spawn(
        "/bin/sh",
        ["-c", 'exec "$0" -m panto "$@" > out.txt', sys.executable, *args, "-p", "hello"],
        cwd=str(env.cwd),
        env=env.vars,
        encoding="utf-8",
        timeout=30,
        dimensions=(24, 50),
    )
    child.expect(r"waiting for model · \d\.\ds · no reply")
    child.expect(pexpect.EOF)
    raw = child.before
    child.close()
    assert child.exitstatus == 0
    assert out.read_text() == "the answer\n"
    frames = [re.sub(r"\x1b\[\d*m", "", f) for f in raw.split("\r\x1b[2K") if f]
    assert frames and all(len(f) <= 49 for f in frames), frames  # never wraps
    assert any(f.endswith("…") for f in frames)


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_no_status_line_in_json_output(
    env: Env, server: ScriptedServer, term: Callable[..., Pty], fmt: str
) -> None:
    server.push(slow(1.0, "the answer"))
    t = term(*scripted(env, server), "-p", "hello", "--output-format", fmt)
    assert t.wait_exit() == 0
    assert "waiting for" not in t.raw and "\x1b[2K" not in t.raw
    assert '"the answer"' in t.raw or "the answer" in t.raw


def test_no_status_line_when_stderr_is_not_a_terminal(env: Env, server: ScriptedServer) -> None:
    server.push(slow(1.0, "the answer"))
    r = subprocess.run(
        [sys.executable, "-m", "panto", *scripted(env, server), "-p", "hello"],
        cwd=env.cwd,
        env=env.vars,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == "the answer\n"
    assert "waiting for" not in r.stderr and "\x1b" not in r.stderr
