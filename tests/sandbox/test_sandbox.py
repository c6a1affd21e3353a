"""Issue 22 part 3: the OS sandbox of the bash tool and every process a tool
starts, on both backends (bubblewrap, and Landlock + namespaces forced with
``[sandbox] backend``).

The proofs run the real ``panto -p`` with the mock model calling ``bash``
in a git workspace, a real loopback server for the network, and read the
tool results from ``--output-format json``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from panto.policy.sandbox import Sandbox, SandboxSettings, probe

BACKENDS = ("bwrap", "landlock")


def _available(backend: str) -> str | None:
    rep = probe(backend)
    if rep.backend == backend:
        return None
    return rep.problem or f"{backend} is unavailable"


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    why = _available(request.param)
    if why:
        pytest.skip(f"the {request.param} backend is unavailable here: {why}")
    return str(request.param)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """A git workspace with a committed file, and a sibling directory outside it."""
    w = tmp_path / "ws"
    w.mkdir()
    (tmp_path / "outside").mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-C", str(w)]
    subprocess.run(["git", "init", "-q", str(w)], check=True)
    (w / "a.txt").write_text("a\n")
    subprocess.run([*git, "add", "a.txt"], check=True)
    subprocess.run([*git, "commit", "-qm", "a"], check=True)
    return w


def run_bash(
    ws: Path, command: str, backend: str, sandbox: str = "", extra_env: dict[str, str] | None = None
) -> dict:
    """``panto -p`` asking the mock model to call bash with ``command``; the
    tool result (``content``, ``is_error``)."""
    home = ws.parent / "home"
    cfg = home / ".config" / "panto"
    cfg.mkdir(parents=True, exist_ok=True)
    (cfg / "config.toml").write_text(f'[sandbox]\nbackend = "{backend}"\n{sandbox}')
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PANTO_")},
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "NO_COLOR": "1",
        **(extra_env or {}),
    }
    prompt = "call bash " + json.dumps({"command": command})
    r = subprocess.run(
        [sys.executable, "-m", "panto", "--model", "mock/anthropic", "--no-session"]
        + ["--output-format", "json", "-p", prompt],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    for m in out["messages"]:
        for block in m["content"]:
            if block["type"] == "tool_result":
                return block
    raise AssertionError(f"no tool result in {r.stdout}")


# -- workspace-write ------------------------------------------------------------------


def test_write_inside_succeeds_outside_fails_and_the_result_says_why(
    ws: Path, backend: str
) -> None:
    outside = ws.parent / "outside" / "f.txt"
    res = run_bash(ws, f"echo in > inside.txt && echo out > {outside}", backend)
    assert (ws / "inside.txt").read_text() == "in\n"
    assert not outside.exists()
    assert res["is_error"]
    text = res["content"]
    assert "[sandbox: the command probably failed because the sandbox blocked it" in text, text
    assert "writable_roots" in text and str(ws) in text
    # the same write with the directory in writable_roots succeeds
    roots = f'writable_roots = ["{outside.parent}"]\n'
    res = run_bash(ws, f"echo out > {outside}", backend, roots)
    assert not res["is_error"], res["content"]
    assert outside.read_text() == "out\n"


def test_git_status_works_and_git_config_is_read_only(ws: Path, backend: str) -> None:
    before = (ws / ".git" / "config").read_bytes()
    res = run_bash(ws, "git status", backend)
    assert not res["is_error"], res["content"]
    assert "On branch" in res["content"]
    res = run_bash(ws, "echo x >> .git/config", backend)
    assert res["is_error"] and "[sandbox: " in res["content"], res["content"]
    assert (ws / ".git" / "config").read_bytes() == before
    # .panto too
    (ws / ".panto").mkdir()
    res = run_bash(ws, "echo x > .panto/config.toml", backend)
    assert res["is_error"] and not (ws / ".panto" / "config.toml").exists()


def test_allow_git_writes_opens_git_but_not_its_config_or_hooks(ws: Path, backend: str) -> None:
    before = (ws / ".git" / "config").read_bytes()
    cmd = (
        "git -c user.name=t -c user.email=t@t commit -q --allow-empty -m two && echo committed; "
        "echo x >> .git/config; echo 'echo pwned' > .git/hooks/pre-commit"
    )
    res = run_bash(ws, cmd, backend, "allow_git_writes = true\n")
    assert "committed" in res["content"], res["content"]
    log = subprocess.run(["git", "-C", str(ws), "log", "--oneline"], capture_output=True, text=True)
    assert len(log.stdout.splitlines()) == 2
    assert (ws / ".git" / "config").read_bytes() == before
    assert not (ws / ".git" / "hooks" / "pre-commit").exists()


def test_read_only_mode_refuses_writes_in_the_workspace(ws: Path, backend: str) -> None:
    res = run_bash(ws, "echo x > inside.txt", backend, 'mode = "read-only"\n')
    assert res["is_error"] and "[sandbox: " in res["content"]
    assert not (ws / "inside.txt").exists()


def test_session_tmpdir_is_private_and_holds_the_caches(ws: Path, backend: str) -> None:
    cmd = (
        'stat -c %a "$TMPDIR"; echo "$XDG_CACHE_HOME $npm_config_cache $PIP_CACHE_DIR"; '
        'echo t > "$TMPDIR/t" && echo "$PIP_CACHE_DIR" | grep -q "^$TMPDIR/" && echo tmp-ok'
    )
    res = run_bash(ws, cmd, backend)
    assert not res["is_error"], res["content"]
    lines = res["content"].splitlines()
    assert lines[0] == "700"
    assert "tmp-ok" in lines
    tmp = os.path.dirname(lines[1].split()[0])
    assert all(p.startswith(tmp + "/") for p in lines[1].split())
    assert not os.path.exists(tmp), "the session's TMPDIR outlived panto"


# -- the network --------------------------------------------------------------------------


@pytest.fixture
def loopback() -> Iterator[int]:
    """A TCP server on 127.0.0.1 that answers every connection with ``pong``."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                c, _ = srv.accept()
            except OSError:
                continue
            with c:
                c.sendall(b"pong")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield srv.getsockname()[1]
    stop.set()
    t.join(2)
    srv.close()


@pytest.mark.parametrize("network", [False, True])
def test_loopback_connection_needs_network_on(
    ws: Path, backend: str, loopback: int, network: bool
) -> None:
    code = (
        f"import socket; s = socket.create_connection(('127.0.0.1', {loopback}), 3); "
        "print('got', s.recv(4).decode())"
    )
    res = run_bash(ws, f'python3 -c "{code}"', backend, f"network = {str(network).lower()}\n")
    if network:
        assert not res["is_error"], res["content"]
        assert "got pong" in res["content"]
    else:
        assert res["is_error"] and "got pong" not in res["content"]
        assert "the network is off" in res["content"], res["content"]


# -- no backend ------------------------------------------------------------------------------


def test_failing_backend_is_one_line_naming_it_and_the_fix(ws: Path, tmp_path: Path) -> None:
    # a bwrap that fails as it does under Ubuntu's AppArmor user-namespace restriction
    bindir = tmp_path / "bin"
    bindir.mkdir()
    fake = bindir / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: loopback: Failed RTM_NEWADDR: Operation not permitted' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    path = {"PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', os.defpath)}"}
    res = run_bash(ws, "echo ran > ran.txt", "bwrap", extra_env=path)
    assert res["is_error"]
    assert not (ws / "ran.txt").exists()
    text = res["content"]
    assert "the sandbox cannot start: bwrap failed its probe: bwrap: loopback: Failed" in text, text
    assert 'set [sandbox] mode = "off"' in text
    assert len(text.strip().splitlines()) == 1
    res = run_bash(ws, "echo ran > ran.txt", "bwrap", 'mode = "off"\n', path)
    assert not res["is_error"] and (ws / "ran.txt").exists()


def test_config_sandbox_reports_backend_abi_and_network(ws: Path, backend: str) -> None:
    home = ws.parent / "home"
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("PANTO_")},
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "PANTO_SANDBOX_BACKEND": backend,
    }
    r = subprocess.run(
        [sys.executable, "-m", "panto", "config", "sandbox"],
        cwd=ws,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert r.returncode == 0, r.stderr
    assert f"# backend:         {backend}" in r.stdout, r.stdout
    assert f"ABI {probe('landlock').landlock_abi}" in r.stdout
    assert "# network:         off inside the sandbox" in r.stdout
    assert 'sandbox.mode = "workspace-write"' in r.stdout


# -- the rerun seam and the process tree (through the runtime directly) ------------------------


@pytest.mark.parametrize("flavour", ["sync", "async"])
def test_escalate_reruns_a_blocked_call_outside_the_sandbox(
    ws: Path, backend: str, flavour: str
) -> None:
    """Also through ``ainvoke_batch`` (the async driver's way in): the
    question runs on a tool-pool thread, never on the event loop."""
    from panto.lua import LuaRuntime, LuaToolSource, load_extensions
    from panto.tools import CancelToken, ToolCall

    outside = ws.parent / "outside" / "esc.txt"
    rt = LuaRuntime()
    try:
        assert not load_extensions(rt, no_extensions=True).errors
        sb = Sandbox(SandboxSettings(backend=backend), str(ws))
        src = LuaToolSource(rt, cwd=str(ws), sandbox=sb)
        asked: list[str] = []
        threads: list[str] = []

        def escalate(call: ToolCall, out: object) -> bool:
            asked.append(call.input["command"])
            threads.append(threading.current_thread().name)
            return answer

        def invoke(calls: list[ToolCall]) -> list[object]:
            if flavour == "sync":
                return list(src.invoke_batch(calls))
            return asyncio.run(src.ainvoke_batch(calls, [CancelToken() for _ in calls]))

        src.escalate = escalate
        call = ToolCall("t1", "bash", {"command": f"echo esc > {outside}"})
        answer = False
        (out,) = invoke([call])
        assert out.is_error and asked and not outside.exists()  # type: ignore[attr-defined]
        answer = True
        (out,) = invoke([call])
        assert not out.is_error, out.content  # type: ignore[attr-defined]
        assert out.content.startswith("[rerun outside the sandbox, approved by the user]")  # type: ignore[attr-defined]
        assert outside.read_text() == "esc\n"
        if flavour == "async":
            assert threads and all(t.startswith("panto-tool") for t in threads), threads
        # a call that succeeds in the sandbox is never offered
        asked.clear()
        (out,) = invoke([ToolCall("t2", "bash", {"command": "echo ok > in.txt"})])
        assert not out.is_error and not asked  # type: ignore[attr-defined]
    finally:
        rt.close()


def _token_pids(token: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[-1].split()[0]
        except OSError:
            continue
        if state != b"Z" and token.encode() in cmd:
            found.append(int(entry))
    return found


def test_a_timed_out_sandboxed_tree_leaves_no_survivor(ws: Path, backend: str) -> None:
    from panto.lua import procs

    token = uuid.uuid4().hex[:12]
    # every child carries n in its argv (sleep's argument)
    n = 40000 + int(token[:4], 16) % 9999  # sleeps of 11+ hours: nothing else has them
    cmd = (
        f"sleep {n}.1 &\n"
        f"setsid sleep {n}.2 &\n"
        f"setsid -f sleep {n}.3 </dev/null >/dev/null 2>&1\n"
        f"nohup sleep {n}.4 >/dev/null 2>&1 &\n"
        f"( ( exec sleep {n}.5 ) & ) &\n"
        f"sleep {n}.6 & disown\n"
        f"sleep {n}.0\n"
    )
    sb = Sandbox(SandboxSettings(backend=backend), str(ws))
    t0 = time.monotonic()
    res = asyncio.run(
        procs.spawn_process(["bash", "-c", cmd], cwd=str(ws), timeout=1.0, sandbox=sb, grace=0.5)
    )
    assert res["timed_out"] and res["sandbox"] == backend
    assert time.monotonic() - t0 < 10
    deadline = time.monotonic() + 3
    left = _token_pids(f"{n}.")
    while left and time.monotonic() < deadline:
        time.sleep(0.05)
        left = _token_pids(f"{n}.")
    for pid in left:  # leave the machine clean even when failing
        with contextlib.suppress(OSError):
            os.kill(pid, 9)
    assert not left, f"{len(left)} processes survived the timeout"


# -- an untrusted project cannot loosen the sandbox ------------------------------------------


def test_an_untrusted_project_cannot_turn_the_sandbox_off(ws: Path, backend: str) -> None:
    (ws / ".panto").mkdir()
    (ws / ".panto" / "config.toml").write_text(
        '[sandbox]\nmode = "off"\nwritable_roots = ["/"]\nnetwork = true\n'
    )
    outside = ws.parent / "outside" / "f.txt"
    res = run_bash(ws, f"echo out > {outside}", backend)
    assert res["is_error"] and "[sandbox: " in res["content"], res["content"]
    assert not outside.exists()
    # the user's own config (or PANTO_SANDBOX) can
    res = run_bash(ws, f"echo out > {outside}", backend, extra_env={"PANTO_SANDBOX": "off"})
    assert not res["is_error"], res["content"]
    assert outside.read_text() == "out\n"


def test_plan_mode_runs_allowed_commands_read_only(ws: Path, backend: str) -> None:
    # plan mode lets a bash command an allow rule names run; the sandbox keeps it read-only
    perms = '[permissions]\nmode = "plan"\nallow = ["Bash(touch *)"]\n'
    res = run_bash(ws, "touch planned.txt", backend, perms)
    assert res["is_error"] and "[sandbox: " in res["content"], res["content"]
    assert "read-only" in res["content"]
    assert not (ws / "planned.txt").exists()
    res = run_bash(ws, "touch planned.txt", backend, perms.replace('"plan"', '"default"'))
    assert not res["is_error"], res["content"]
    assert (ws / "planned.txt").exists()
