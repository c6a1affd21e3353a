"""The process-tree test (issue 12, D5/D7): the model (the fault server)
calls the ``bash`` tool with a command that starts a background job, a
``setsid`` child, a ``setsid -f`` daemon, a ``nohup`` job, a double fork and
a disowned job, then waits in the foreground.  The tool is ended by its
timeout, by cancel (``stream.close()`` through the library) and by Ctrl-C
(SIGINT to ``panto -p``), and panto by SIGTERM, SIGHUP and SIGKILL.  After
each, no process of the command survives: every one carries a unique token
in its environment (and the shell in its argv), found through ``/proc``.
Whatever survives is killed at the end of the test (by pid), so the machine
is left clean.  Every test runs inside the OS sandbox (issue 22), once per
backend: bubblewrap and Landlock + namespaces.
"""

from __future__ import annotations

import os
import re
import signal
import struct
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import fault_server as S
from support.faults import (
    STARTUP_MARGIN,
    Running,
    new_key,
    panto_env,
    session_messages,
    start_panto,
)

#: how long the processes may take to die after the event that must kill them
GRACE = 3.0
SLEEPS = ("300", "301", "302", "303", "304", "305", "306")


def tree_command(token: str) -> str:
    return (
        f"export PANTO_FAULT_TREE={token}\n"
        "sleep 301 &\n"  # a background job, output not redirected
        "setsid sleep 302 &\n"  # a new session: outside the tool's process group
        "setsid -f sleep 303 </dev/null >/dev/null 2>&1\n"  # forks and detaches
        "nohup sleep 304 >/dev/null 2>&1 &\n"
        "( ( exec sleep 305 ) & ) &\n"  # double fork: reparented at once
        "sleep 306 & disown\n"
        f"echo started {token}\n"
        "sleep 300\n"  # the foreground: keeps the tool running
    )


def token_processes(token: str) -> dict[int, str]:
    """pid -> cmdline of every live process whose environment or argv has ``token``."""
    found: dict[int, str] = {}
    needle = token.encode()
    me = os.getpid()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read()
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    env = f.read()
            except OSError:
                env = b""
            with open(f"/proc/{entry}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[-1].split()[0]
        except OSError:
            continue
        if state == b"Z":
            continue  # a zombie is not running; its parent reaps it
        if needle in cmd or needle in env:
            found[int(entry)] = cmd.replace(b"\0", b" ").decode(errors="replace").strip()
    return found


def wait_for_tree(token: str, timeout: float) -> dict[int, str]:
    """Until every sleep of the command runs (or ``timeout``)."""
    deadline = time.monotonic() + timeout
    procs: dict[int, str] = {}
    while time.monotonic() < deadline:
        procs = token_processes(token)
        seen = {c.split()[-1] for c in procs.values() if c.startswith("sleep")}
        if seen >= set(SLEEPS):
            return procs
        time.sleep(0.1)
    raise AssertionError(f"the command's processes did not all start: {procs}")


def survivors(token: str, grace: float = GRACE) -> dict[int, str]:
    """The token's processes still alive after ``grace`` seconds (returns
    as soon as there are none)."""
    deadline = time.monotonic() + grace
    while True:
        procs = token_processes(token)
        if not procs or time.monotonic() >= deadline:
            return procs
        time.sleep(0.1)


def run_processes(home: Path) -> dict[int, str]:
    """Every live process started (directly or not) by the run whose HOME is
    ``home``: panto, its helpers, the tools' processes (they inherit HOME)."""
    return token_processes(f"HOME={home}\0")


def assert_nothing_left(home: Path, when: str) -> None:
    deadline = time.monotonic() + GRACE
    while (left := run_processes(home)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not left, f"{len(left)} processes of the run are left after {when}: " + "; ".join(
        f"{pid}: {cmd}" for pid, cmd in sorted(left.items())
    )


def kill_all(token: str) -> None:
    for pid in token_processes(token):
        try:
            os.kill(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


@pytest.fixture(autouse=True, params=["bwrap", "landlock"])
def sandbox_backend(request: pytest.FixtureRequest, home: Path) -> str:
    """The user's config forces the sandbox backend the commands run in."""
    from panto.policy.sandbox import probe

    rep = probe(request.param)
    if rep.backend != request.param:
        pytest.skip(f"the {request.param} sandbox backend is unavailable here: {rep.problem}")
    cfg = home / "xdg_config_home" / "panto" / "config.toml"
    cfg.write_text(cfg.read_text() + f'\n[sandbox]\nbackend = "{request.param}"\n')
    return str(request.param)


@pytest.fixture
def token(home: Path) -> Iterator[str]:
    t = f"pantofaulttree{uuid.uuid4().hex}"
    try:
        yield t
    finally:
        for _ in range(2):  # leave the machine clean, whatever happened
            kill_all(t)
            kill_all(f"HOME={home}\0")
            time.sleep(0.2)


def gated_answer(gate: threading.Event, arrived: threading.Event) -> S.Behaviour:
    """The request after the tool result: note its arrival, then answer
    only once ``gate`` is set (so panto is still alive while the test looks)."""

    def behave(conn: S.Conn, req: S.Request) -> None:
        arrived.set()
        while not gate.is_set():
            conn.sleep(0.05)
        S.ok(conn, req)

    return behave


def start(servers, home: Path, script, wire: str = S.ANTHROPIC, extra=None) -> Running:  # type: ignore[no-untyped-def]
    srv = servers(script)
    env = panto_env(home, wire, srv.base_url(wire), new_key(wire), extra)
    run = start_panto(["-p", "run the command"], env, home)
    run.server = srv  # type: ignore[attr-defined]
    return run


def assert_no_survivors(token: str, when: str) -> None:
    left = survivors(token)
    assert not left, f"{len(left)} processes survived {when}: " + "; ".join(
        f"{pid}: {cmd}" for pid, cmd in sorted(left.items())
    )


# -- the tool ends; panto lives on --------------------------------------------------------


def test_tool_timeout_kills_the_tree(servers, home: Path, token: str) -> None:  # type: ignore[no-untyped-def]
    gate, arrived = threading.Event(), threading.Event()
    run = start(
        servers, home, [S.bash_call(tree_command(token), timeout=3), gated_answer(gate, arrived)]
    )
    try:
        wait_for_tree(token, 15 + STARTUP_MARGIN)
        assert arrived.wait(3 + 10 + STARTUP_MARGIN), "the tool did not time out"
        assert_no_survivors(token, "the bash tool's timeout (panto still running)")
    finally:
        gate.set()
        r = run.wait(20)
    assert r.returncode == 0, r.describe()
    assert "timed out" in r.stderr, r.describe()
    assert_nothing_left(home, "panto's exit")


LIB_CANCEL = r"""
import sys, threading
import panto
from panto.app import open_agent

agent = open_agent(session=None)
agent.submit_user_message("run the command")
stream = agent.run()
done = threading.Event()
events = []

def consume():
    try:
        for ev in stream:
            events.append(type(ev).__name__)
    except BaseException as e:
        events.append("raised " + type(e).__name__)
    done.set()

threading.Thread(target=consume, daemon=True).start()
print("started", flush=True)
sys.stdin.readline()          # "cancel"
stream.close()
done.wait(30)
print("closed", events, flush=True)
sys.stdin.readline()          # "exit"
agent.close()
print("bye", flush=True)
"""


def test_cancel_kills_the_tree(servers, home: Path, token: str) -> None:  # type: ignore[no-untyped-def]
    srv = servers(S.bash_call(tree_command(token)))
    env = panto_env(home, S.ANTHROPIC, srv.base_url(S.ANTHROPIC), new_key(S.ANTHROPIC))
    proc = subprocess.Popen(
        [sys.executable, "-c", LIB_CANCEL],
        env=env,
        cwd=home / "work",
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        wait_for_tree(token, 15 + STARTUP_MARGIN)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write("cancel\n")
        proc.stdin.flush()
        line = _readline(proc, 10 + STARTUP_MARGIN)
        assert line.startswith("closed"), line
        assert_no_survivors(token, "stream.close() cancelled the bash tool (the agent still open)")
    finally:
        try:
            out, err = proc.communicate("exit\n", timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    assert proc.returncode == 0, err[-3000:]
    assert "Traceback" not in err, err[-3000:]
    assert_nothing_left(home, "the library's exit")


def _readline(proc: subprocess.Popen[str], timeout: float) -> str:
    box: list[str] = []
    t = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
    t.start()
    t.join(timeout)
    while box and box[0].startswith("started"):
        box.clear()
        t = threading.Thread(target=lambda: box.append(proc.stdout.readline()), daemon=True)  # type: ignore[union-attr]
        t.start()
        t.join(timeout)
    return box[0] if box else "<nothing>"


# -- panto ends ----------------------------------------------------------------------------

SIGNAL_CASES = [
    pytest.param(
        signal.SIGINT,
        130,
        id="SIGINT",
    ),
    pytest.param(
        signal.SIGTERM,
        143,
        id="SIGTERM",
    ),
    pytest.param(
        signal.SIGHUP,
        129,
        id="SIGHUP",
    ),
    pytest.param(
        signal.SIGKILL,
        -9,
        id="SIGKILL",
    ),
]


@pytest.mark.parametrize(("sig", "status"), SIGNAL_CASES)
def test_signal_to_panto_kills_the_tree(
    servers, home: Path, token: str, sig: int, status: int
) -> None:  # type: ignore[no-untyped-def]
    run = start(servers, home, S.bash_call(tree_command(token)))
    try:
        wait_for_tree(token, 15 + STARTUP_MARGIN)
        assert run.pid in run_processes(home)  # the detector sees the run
        if sig == signal.SIGINT:
            os.killpg(run.pid, sig)  # Ctrl-C: the terminal signals the foreground group
        else:
            run.signal(sig)
        r = run.wait(10 + STARTUP_MARGIN)
    finally:
        if run.status is None:
            run.kill("deadline")
    assert r.ended_by_itself, r.describe()
    assert_no_survivors(token, f"{signal.Signals(sig).name} to panto")
    assert_nothing_left(home, f"{signal.Signals(sig).name} to panto")
    assert r.returncode == status, r.describe()
    assert "Traceback" not in r.stderr, r.describe()
    if sig != signal.SIGKILL:
        # what was committed is persisted: the prompt and the tool call
        msgs = [m for m in session_messages(home) if m["role"] != "system"]
        assert msgs and msgs[0]["role"] == "user", msgs
        assert any(b.get("type") == "tool_use" for m in msgs for b in m.get("content") or []), msgs


# -- D5: a background job does not hold the tool's result back ----------------------------------


def test_background_job_does_not_block_the_tool(servers, home: Path, token: str) -> None:  # type: ignore[no-untyped-def]
    cmd = f"export PANTO_FAULT_TREE={token}\nsleep 30 &\necho hi"
    gate, arrived = threading.Event(), threading.Event()
    run = start(servers, home, [S.bash_call(cmd, timeout=20), gated_answer(gate, arrived)])
    try:
        first = time.monotonic()
        assert arrived.wait(20 + 5 + STARTUP_MARGIN)
        srv = run.server  # type: ignore[attr-defined]
        took = srv.posts[1].at - srv.posts[0].at
    finally:
        gate.set()
        r = run.wait(20)
    assert took < 5, f"the tool took {took:.1f}s (its timeout is 20 s)"
    assert r.returncode == 0, r.describe()
    assert "hi" in r.stderr or "hi" in r.stdout, r.describe()
    assert time.monotonic() - first < 60
    assert_no_survivors(token, "panto's exit")
    assert_nothing_left(home, "panto's exit")


# -- Ctrl-C in the interactive REPL: the tool is cancelled, panto stays ------------------------


class Terminal:
    """``panto`` (interactive) on a pseudo-terminal that is its controlling
    terminal, so a ``\\x03`` typed on it is a real Ctrl-C; its output is
    drained into ``text`` by a thread."""

    def __init__(self, env: dict[str, str], cwd: Path) -> None:
        import fcntl
        import pty
        import termios

        self.master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))

        def ctty() -> None:  # in the child: a new session whose terminal is the pty
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.proc = subprocess.Popen(
            [sys.executable, "-m", "panto"],
            env={**env, "TERM": "xterm"},
            cwd=cwd,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            preexec_fn=ctty,
        )
        os.close(slave)
        self.chunks: list[bytes] = []
        self.reader = threading.Thread(target=self._drain, daemon=True)
        self.reader.start()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self.master, 65536)
            except OSError:
                return
            if not data:
                return
            self.chunks.append(data)

    @property
    def text(self) -> str:
        return b"".join(self.chunks).decode(errors="replace")

    def send(self, s: str) -> None:
        os.write(self.master, s.encode())

    def expect(self, pattern: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not re.search(pattern, self.text):
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise AssertionError(f"no {pattern!r} on the terminal:\n{self.text[-3000:]}")
            time.sleep(0.05)

    def close(self) -> int | None:
        try:
            self.proc.wait(15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
        os.close(self.master)
        return self.proc.returncode


def test_ctrl_c_in_the_repl_cancels_the_tree(servers, home: Path, token: str) -> None:  # type: ignore[no-untyped-def]
    srv = servers(S.bash_call(tree_command(token)))
    # bypass: the REPL would otherwise ask before the bash call (issue 22's
    # approval prompt); this test is about Ctrl-C, and the command still runs
    # in the OS sandbox
    extra = {"PANTO_PERMISSION_MODE": "bypass"}
    env = panto_env(home, S.ANTHROPIC, srv.base_url(S.ANTHROPIC), new_key(S.ANTHROPIC), extra)
    term = Terminal(env, home / "work")
    try:
        term.expect(r"[›>] ", 15 + STARTUP_MARGIN)
        term.send("run the command\r")
        wait_for_tree(token, 15 + STARTUP_MARGIN)
        term.send("\x03")  # Ctrl-C, typed
        assert_no_survivors(
            token, "Ctrl-C in the REPL cancelled the bash tool (panto still running)"
        )
        assert term.proc.poll() is None, "Ctrl-C during a turn must not end the REPL"
        term.expect(r"(?i)cancel", 10)
        term.send("/exit\r")
        status = term.close()
    finally:
        if term.proc.poll() is None:
            term.proc.kill()
            term.proc.wait(5)
    assert status == 0, term.text[-3000:]
    assert "Traceback" not in term.text, term.text[-3000:]
    assert_nothing_left(home, "/exit")
