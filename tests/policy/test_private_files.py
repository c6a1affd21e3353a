"""Files only you can read: everything panto writes under a fresh HOME --
sessions (new, forked, imported, in SQLite), the trust store, the REPL's
history, the start-up caches -- is mode 0600 and every directory it made
0700 (no group or other bits at all)."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from support.repl import Env, Pty


def _env(home: Path) -> dict[str, str]:
    """Only HOME: panto makes every XDG directory itself."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("PANTO_", "XDG_")) and k not in ("NO_COLOR", "ANTHROPIC_API_KEY")
    }
    env.update(HOME=str(home), TERM="xterm")
    return env


def _run(cwd: Path, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    r = subprocess.run(
        [sys.executable, "-m", "panto", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, (args, r.stderr)
    return r


def _loose(home: Path) -> list[str]:
    """Everything under ``home`` that anyone but the user could read."""
    out = []
    for dirpath, dirnames, filenames in os.walk(home):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            mode = stat.S_IMODE(p.lstat().st_mode)
            if mode & 0o077:
                out.append(f"{oct(mode)} {p.relative_to(home)}")
    return out


def test_everything_panto_writes_under_home_is_private(tmp_path: Path) -> None:
    pytest.importorskip("pexpect", reason="the REPL part needs pexpect (the test extra)")
    pytest.importorskip("pyte", reason="the REPL part needs pyte (the test extra)")
    home = tmp_path / "fresh-home"
    home.mkdir()
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    (work / ".panto").mkdir()
    env = _env(home)
    mock = ("--model", "mock/anthropic")

    first = json.loads(_run(work, env, "-p", "hi", *mock, "--output-format", "json").stdout)
    sid = first["session_id"]
    _run(work, env, "-p", "again", *mock, "--fork", sid)  # a forked session
    _run(work, env, "trust", ".")  # the trust store
    exported = home / "exported.jsonl"
    _run(work, env, "sessions", "export", sid, "-o", str(exported))
    _run(work, env, "sessions", "import", str(exported), "--dir", str(home / "imported"))
    db = f"sqlite:///{home / 'db' / 'sessions.db'}"
    _run(work, {**env, "PANTO_SESSION_URL": db}, "-p", "hi", *mock)  # SQLite
    t = Pty(Env(home, work, env), *mock)  # the REPL: its history
    try:
        t.prompt()
        t.line("hello there")
        t.expect("You said: hello there")
        t.prompt()
        t.send("\x04")
        assert t.wait_exit(timeout=20) == 0
    finally:
        t.close()

    written = {str(p.relative_to(home)) for p in home.rglob("*")}
    # what this test means to cover was written
    assert any(w.endswith(".jsonl") and "sessions/" in w for w in written)
    assert len([w for w in written if w.startswith("imported/") and w.endswith(".jsonl")]) == 1
    assert "db/sessions.db" in written
    assert ".config/panto/trusted.json" in written
    assert ".local/state/panto/history" in written
    assert any(w.startswith(".cache/panto/") and w.endswith(".json") for w in written)
    assert _loose(home) == []
    [imported] = [w for w in written if w.startswith("imported/") and w.endswith(".jsonl")]
    assert Path(imported).name.split("_")[0].endswith("Z")  # named as new sessions are


def test_a_history_file_left_readable_is_made_private(tmp_path: Path) -> None:
    pytest.importorskip("pexpect", reason="the REPL part needs pexpect (the test extra)")
    pytest.importorskip("pyte", reason="the REPL part needs pyte (the test extra)")
    home = tmp_path / "fresh-home"
    work = tmp_path / "work"
    (work / ".git").mkdir(parents=True)
    history = home / ".local" / "state" / "panto" / "history"
    history.parent.mkdir(parents=True)
    history.write_text("an old prompt\n")
    history.chmod(0o644)
    t = Pty(Env(home, work, _env(home)), "--model", "mock/anthropic")
    try:
        t.prompt()
        t.line("hi")
        t.expect("You said: hi")
        t.prompt()
        t.send("\x04")
        assert t.wait_exit(timeout=20) == 0
    finally:
        t.close()
    assert stat.S_IMODE(history.stat().st_mode) == 0o600
    assert "an old prompt" in history.read_text() and "hi" in history.read_text()
