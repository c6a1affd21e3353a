"""``panto sessions`` and the resume picker."""

from __future__ import annotations

import dataclasses
import io
import json
import os
import time
from pathlib import Path

import pytest

from panto.cli.sessions import format_sessions, main, pick_session, short_ids
from panto.conversation import Message, Text
from panto.sessions import FSJSONLStore, list_sessions


def make(cwd: str, prompt: str, model: tuple[str, str], mtime: float, sid: str) -> Path:
    with FSJSONLStore(None, cwd, session_id=sid) as store:
        store.append_messages([Message.user(prompt)])
        store.append_messages([Message("assistant", (Text("ok"),), None, "stop", *model)])
        store.append_messages([Message.user("second"), Message("assistant", (Text("k"),))])
    os.utime(store.path, (mtime, mtime))
    return store.path


@pytest.fixture
def two_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    a, b = tmp_path / "proj-a", tmp_path / "proj-b"
    a.mkdir()
    b.mkdir()
    now = time.time()
    make(
        str(a), "fix the failing test\nin parser.py", ("anthropic", "claude-x"), now - 60, "a1" * 16
    )
    make(str(a), "add a --json flag " + "x" * 300, ("openai", "gpt-5"), now - 10, "a2" * 16)
    make(str(b), "unrelated", ("openai", "gpt-5"), now - 30, "b1" * 16)
    monkeypatch.chdir(a)
    return str(a), str(b)


def test_lists_this_directory_aligned(
    two_dirs: tuple[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split() == ["ID", "UPDATED", "MSGS", "MODEL", "FIRST", "PROMPT"]
    assert len(out) == 3
    assert out[1].startswith("a2a2a2a2  ") and out[2].startswith("a1a1a1a1  ")
    assert "openai/gpt-5" in out[1] and "anthropic/claude-x" in out[2]
    assert out[2].endswith("fix the failing test in parser.py")  # one line
    assert out[1].split()[3] == "4"  # message count
    # columns line up
    model_col = out[0].index("MODEL")
    assert out[1][model_col:].startswith("openai/gpt-5")
    assert out[2][model_col:].startswith("anthropic/claude-x")
    assert all(len(line) <= 200 for line in out)
    assert out[1].endswith("…")


def test_all_json_and_limit(two_dirs: tuple[str, str], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = two_dirs
    assert main(["--all"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "DIRECTORY" in out[0] and len(out) == 4
    assert b in out[2] or b in "".join(out)
    assert main(["--json", "-n", "1"]) == 0
    (line,) = capsys.readouterr().out.splitlines()
    rec = json.loads(line)
    assert rec["id"] == "a2" * 16 and rec["message_count"] == 4 and rec["model"] == "openai/gpt-5"
    assert rec["cwd"] == a and Path(rec["path"]).is_file()
    assert main(["-C", b]) == 0
    assert "unrelated" in capsys.readouterr().out


def test_no_sessions(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["-C", str(tmp_path)]) == 0
    assert "no sessions" in capsys.readouterr().err


def test_short_ids_grow_until_unique(two_dirs: tuple[str, str]) -> None:
    infos = list_sessions()
    assert short_ids(infos) == [i.id[:8] for i in infos]
    assert all(len(s) == 8 for s in short_ids(infos))
    clash = [
        dataclasses.replace(infos[0], id="0123456789ab" + "0" * 20),
        dataclasses.replace(infos[1], id="0123456789ac" + "0" * 20),
    ]
    assert short_ids(clash) == ["0123456789ab", "0123456789ac"]


def test_format_width(two_dirs: tuple[str, str]) -> None:
    lines = format_sessions(list_sessions(), width=70, numbered=True)
    assert all(len(line) <= 70 for line in lines)
    assert lines[1].lstrip().startswith("1  ")


def test_pick_session(two_dirs: tuple[str, str]) -> None:
    infos = list_sessions(cwd=two_dirs[0])
    out = io.StringIO()
    assert pick_session(infos, stdin=io.StringIO("2\n"), stdout=out) == infos[1].path
    assert "resume which session" in out.getvalue()
    assert pick_session(infos, stdin=io.StringIO("a2a2\n"), stdout=io.StringIO()) == infos[0].path
    assert pick_session(infos, stdin=io.StringIO("\n"), stdout=io.StringIO()) is None
    assert pick_session(infos, stdin=io.StringIO(""), stdout=io.StringIO()) is None
    out = io.StringIO()
    # unknown, then ambiguous, then a session of another directory by id
    got = pick_session(infos, stdin=io.StringIO("zz\na\nb1b1\n"), stdout=out)
    assert got is not None and got.name.endswith("b1" * 16 + ".jsonl")
    assert "no session id starts with 'zz'" in out.getvalue()
    assert "matches 2 sessions" in out.getvalue()
    assert pick_session([], stdin=io.StringIO("1\n"), stdout=io.StringIO()) is None
