"""The REPL's approval prompt (panto.cli.approve) in a real pseudo-terminal:
allow once, allow always for the session, deny; the diff of a file change;
/mode and the mode on the status line; every answer recorded in the
session."""

from __future__ import annotations

import json
from collections.abc import Callable

from support.repl import Env, Pty


def permission_entries(env: Env) -> list[dict]:
    [session] = env.sessions()
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    return [e for e in entries if e.get("type") == "permission"]


def test_allow_once_allow_always_and_deny(env: Env, term: Callable[..., Pty]) -> None:
    t = term("--model", "mock/anthropic")
    t.prompt()
    # allow once: the full command is shown, y runs it
    t.line("call bash touch one && echo made-one")
    t.expect("bash: allow this call")
    t.expect("touch one && echo made-one")
    t.expect(r"\[y\] allow once .*\[a\] allow always this session .*\[n\] deny")
    assert not (env.cwd / "one").exists()  # nothing runs while the prompt waits
    t.send("y")
    t.expect("allowed once")
    t.expect("The tool returned: made-one")
    t.prompt()
    assert (env.cwd / "one").exists()
    # the same command asks again (once is once)
    (env.cwd / "one").unlink()
    t.line("call bash touch one && echo made-one")
    t.expect(r"\[n\] deny")
    # allow always: the rules are named; the next identical call runs unasked
    t.send("a")
    t.expect("allowed for this session")
    t.expect("The tool returned: made-one")
    t.prompt()
    start = len(t.raw)
    t.line("call bash touch one && echo made-one")
    t.expect("The tool returned: made-one")
    t.prompt()
    t.pump()
    assert "allow this call" not in t.raw[start:]
    # deny: nothing runs, the model is told
    t.line("call bash touch two")
    t.expect(r"\[n\] deny")
    t.send("n")
    t.expect("denied")
    t.expect("The tool returned: permission denied: the user declined")
    t.prompt()
    assert not (env.cwd / "two").exists()
    t.line("/exit")
    t.wait_exit()
    records = [(e["tool"], e["decision"], e["by"]) for e in permission_entries(env)]
    assert records == [
        ("bash", "allow", "user"),
        ("bash", "allow", "user"),
        ("bash", "allow", "rule"),  # by the session rule "allow always" added
        ("bash", "deny", "user"),
    ]
    always = [e for e in permission_entries(env) if e.get("always")]
    assert always[0]["always"] == ["Bash(touch one)", "Bash(echo made-one)"]


def test_a_file_change_shows_its_diff(env: Env, term: Callable[..., Pty]) -> None:
    (env.cwd / "a.txt").write_text("alpha\nbeta\n")
    t = term("--model", "mock/anthropic")
    t.prompt()
    t.line('call edit {"path": "a.txt", "old_string": "beta", "new_string": "GAMMA"}')
    t.expect("edit: allow this call")
    t.expect(r"-beta")
    t.expect(r"\+GAMMA")
    t.expect(r"\[n\] deny")
    t.send("n")
    t.expect("The tool returned: permission denied")
    t.prompt()
    assert (env.cwd / "a.txt").read_text() == "alpha\nbeta\n"


def test_mode_command_and_status_line(env: Env, term: Callable[..., Pty]) -> None:
    t = term("--model", "mock/anthropic")
    t.expect("default mode")  # the banner
    t.prompt()
    t.line("/mode accept-edits")
    t.expect("permission mode: accept-edits")
    t.expect("accept-edits ›")
    # accept-edits: a file change in the workspace runs without a prompt
    t.line('call write {"path": "w.txt", "content": "hi"}')
    t.expect("The tool returned")
    t.expect("accept-edits ›")
    assert (env.cwd / "w.txt").read_text() == "hi"
    # ... but a bash command still asks, and the status line names the mode
    t.line("call bash sleep 1; echo slow")
    t.expect(r"\[n\] deny")
    t.send("y")
    t.expect(r"waiting for tool bash · \d\.\ds · accept-edits mode")
    t.expect("The tool returned: slow")
    # Shift-Tab: the next mode
    t.expect("accept-edits ›")
    t.send("\x1b[Z")
    t.expect("permission mode: plan")
    t.expect("plan ›")
    t.line("call bash touch p")
    t.expect("The tool returned: permission denied: plan mode is read-only")
    t.prompt()
    assert not (env.cwd / "p").exists()
