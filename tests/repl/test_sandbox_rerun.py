"""Issue 22 part 3: in ``default`` mode, a command the OS sandbox blocked is
offered again outside the sandbox (panto.policy.permissions
``approve_unsandboxed``, wired as the Lua source's ``escalate``); ``y`` runs
it unsandboxed, ``n`` leaves it blocked, and both answers are recorded."""

from __future__ import annotations

import json
from collections.abc import Callable

from support.repl import Env, Pty


def permission_entries(env: Env) -> list[dict]:
    [session] = env.sessions()
    entries = [json.loads(line) for line in session.read_text().splitlines()]
    return [e for e in entries if e.get("type") == "permission"]


def test_a_blocked_command_is_offered_a_rerun_outside_the_sandbox(
    env: Env, term: Callable[..., Pty]
) -> None:
    outside = env.cwd.parent / "outside"
    outside.mkdir()
    t = term("--model", "mock/anthropic")
    t.prompt()
    # yes: the command runs again outside the sandbox
    t.line(f"call bash echo out > {outside}/yes.txt")
    t.expect("bash: allow this call")
    t.send("y")  # the permission prompt: run it (in the sandbox)
    t.expect("the OS sandbox blocked it")
    t.expect(r"\[y\] allow once .*\[n\] deny")
    assert not (outside / "yes.txt").exists()
    t.send("y")
    t.expect(r"The tool returned: \[rerun outside the sandbox, approved by the user\]")
    t.prompt()
    assert (outside / "yes.txt").read_text() == "out\n"
    # no: it stays blocked, and the model is told why
    t.line(f"call bash echo out > {outside}/no.txt")
    t.expect("bash: allow this call")
    t.send("y")
    t.expect("the OS sandbox blocked it")
    t.send("n")
    t.expect(r"The tool returned: .*\[sandbox: the command probably failed")
    t.prompt()
    assert not (outside / "no.txt").exists()
    # a command the sandbox does not block is never offered
    start = len(t.raw)
    t.line("call bash echo in > inside.txt")
    t.expect("bash: allow this call")
    t.send("y")
    t.expect("The tool returned")
    t.prompt()
    t.pump()
    assert "sandbox blocked" not in t.raw[start:]
    assert (env.cwd / "inside.txt").exists()
    t.line("/exit")
    t.wait_exit()
    reruns = [
        (e["decision"], e["reason"])
        for e in permission_entries(env)
        if e["reason"].startswith("rerun outside the sandbox")
    ]
    assert reruns == [
        ("allow", "rerun outside the sandbox: allowed once"),
        ("deny", "rerun outside the sandbox: the user declined"),
    ]
