"""Leaving panto never ends in a traceback: a second Ctrl-C, or a SIGTERM,
while panto's shutdown waits for a blocked tool (the Lua runtime's atexit
handler), ends it at once and quietly; a torn session
file's warning is printed once, as one ``panto: warning:`` line, never also
as a raw Python warning."""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from support.repl import Env, Pty

pytestmark = pytest.mark.timeout(90)


#: a user extension whose tool blocks in one long C call (an exponential
#: Lua pattern match: minutes), which the count hook cannot interrupt
BLOCKER = """
return {
  name = "blocker",
  description = "blocks in one long C call",
  timeout = 600,
  handler = function(input, ctx)
    local n = 34
    local s = ("a"):rep(n)
    return tostring(s:find(("a?"):rep(n) .. ("a"):rep(n)))
  end,
}
"""


def _blocked_in_shutdown(env: Env, term: Callable[..., Pty], *args: str) -> Pty:
    """``panto`` with a tool blocked in a C call, cancelled with Ctrl-C:
    the turn ends, and the Lua runtime's shutdown waits for the tool."""
    ext = Path(env.vars["XDG_CONFIG_HOME"]) / "panto" / "extensions"
    ext.mkdir(parents=True)
    (ext / "blocker.lua").write_text(BLOCKER)
    # bypass: the tool must run (the REPL would ask before an extension's tool)
    t = term("--model", "mock/anthropic", "--permission-mode", "bypass", *args)
    if "-p" not in args:
        t.prompt()
        t.line("call blocker")
    t.expect(r"blocker\(")
    time.sleep(0.8)  # the tool is blocked
    t.send("\x03")
    t.expect("cancelled")
    if "-p" not in args:
        t.prompt()
        t.send("\x04")  # Ctrl-D: leave the REPL
    time.sleep(1.0)
    assert t.child.isalive()  # the shutdown waits for the blocked tool
    return t


def _clean(t: Pty) -> None:
    assert "Traceback" not in t.raw and "Exception ignored" not in t.raw, t.raw[-2000:]


@pytest.mark.parametrize("mode", ["print", "repl"])
def test_a_second_ctrl_c_during_shutdown_exits_quietly(
    env: Env, term: Callable[..., Pty], mode: str
) -> None:
    t = _blocked_in_shutdown(env, term, *(["-p", "call blocker"] if mode == "print" else []))
    t.send("\x03")
    status = t.wait_exit(timeout=10)
    _clean(t)
    assert status == 130


def test_sigterm_during_shutdown_exits_quietly(env: Env, term: Callable[..., Pty]) -> None:
    t = _blocked_in_shutdown(env, term, "-p", "call blocker")
    t.child.kill(signal.SIGTERM)
    status = t.wait_exit(timeout=10)
    _clean(t)
    assert status == 143


def test_a_torn_session_file_is_reported_once(env: Env) -> None:
    env.vars["PANTO_SESSION_DIR"] = str(env.home / "sessions")
    r = env.run("-p", "hello", "--model", "mock/anthropic", "--no-extensions")
    assert r.returncode == 0, r.stderr
    (path,) = list((env.home / "sessions").rglob("*.jsonl"))
    with open(path, "a") as f:
        f.write('{"type":"mess')  # a crash in the middle of a write
    r = env.run("-p", "again", "--continue", "--model", "mock/anthropic", "--no-extensions")
    assert r.returncode == 0, r.stderr
    torn = [line for line in r.stderr.splitlines() if "torn" in line or "cut off" in line]
    assert len(torn) == 1, r.stderr
    assert torn[0].startswith(f"panto: warning: session file {path}: ignoring a torn last line")
    assert "SessionWarning" not in r.stderr and "Traceback" not in r.stderr
