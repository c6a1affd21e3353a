"""The CLI's session flags end to end: -p saves, --continue and --resume
rebuild the conversation, --no-session writes nothing, a bad id exits 2."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.sessions import panto


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    work = tmp_path / "work"
    work.mkdir()
    return work, tmp_path / "data"


def session_files(data: Path) -> list[Path]:
    return sorted(data.rglob("*.jsonl"))


def messages(path: Path) -> list[dict]:
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    return [e["message"] for e in lines if e.get("type") == "message"]


def test_print_saves_and_continue_resumes(dirs: tuple[Path, Path]) -> None:
    work, data = dirs
    r = panto("-p", "first prompt", cwd=work, data=data)
    assert r.returncode == 0, r.stderr
    [path] = session_files(data)
    assert [m["role"] for m in messages(path)] == ["user", "assistant"]

    r = panto("-p", "second prompt", "--continue", cwd=work, data=data)
    assert r.returncode == 0, r.stderr
    assert "resumed session" in r.stderr
    assert session_files(data) == [path]  # the same file grew
    msgs = messages(path)
    assert [m["role"] for m in msgs] == ["user", "assistant", "user", "assistant"]
    assert msgs[2]["content"][0]["text"] == "second prompt"

    sid = path.stem.split("_")[-1]
    r = panto("-p", "third", "--resume", sid[:6], cwd=work, data=data)
    assert r.returncode == 0, r.stderr
    assert len(messages(path)) == 6

    r = panto("sessions", cwd=work, data=data, agent=False)
    assert r.returncode == 0, r.stderr
    assert sid[:8] in r.stdout and "first prompt" in r.stdout


def test_no_session_writes_nothing(dirs: tuple[Path, Path]) -> None:
    work, data = dirs
    r = panto("-p", "hello", "--no-session", cwd=work, data=data)
    assert r.returncode == 0, r.stderr
    assert session_files(data) == []


def test_unknown_resume_id_is_a_clear_error(dirs: tuple[Path, Path]) -> None:
    work, data = dirs
    r = panto("-p", "hello", "--resume", "nosuchid", cwd=work, data=data)
    assert r.returncode == 2  # a usage error (issue 13), as docs/cli.md says
    assert "no session id starts with 'nosuchid'" in r.stderr


def test_continue_without_sessions_starts_fresh(dirs: tuple[Path, Path]) -> None:
    work, data = dirs
    r = panto("-p", "hello", "--continue", cwd=work, data=data)
    assert r.returncode == 0, r.stderr
    assert "no earlier session" in r.stderr
    assert len(session_files(data)) == 1


def test_clear_starts_a_new_session_and_model_changes_are_recorded(
    dirs: tuple[Path, Path],
) -> None:
    work, data = dirs
    env = dict(os.environ, XDG_DATA_HOME=str(data), XDG_CONFIG_HOME=str(data / "config"))
    r = subprocess.run(
        [sys.executable, "-m", "panto", "--model", "mock/anthropic", "--no-extensions"]
        + ["--system-prompt", ""],
        cwd=work,
        env=env,
        input="before clear\n/model mock/openai\n/clear\nafter clear\n/exit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert "new session" in r.stdout
    files = session_files(data)
    assert len(files) == 2
    texts = [[m["content"][0]["text"] for m in messages(f) if m["role"] == "user"] for f in files]
    assert sorted(texts) == [["after clear"], ["before clear"]]
    first = next(f for f in files if messages(f)[0]["content"][0]["text"] == "before clear")
    kinds = [json.loads(line) for line in first.read_text().splitlines()]
    changes = [(e["provider"], e["model"]) for e in kinds if e.get("type") == "model_change"]
    assert changes[-1][0] == "mock" and changes[-1][1] == "openai"


def test_a_start_without_a_prompt_leaves_no_session(dirs: tuple[Path, Path]) -> None:
    """Quitting before typing anything writes nothing, so --continue goes
    back to the last real conversation, not to an empty session."""
    work, data = dirs
    r = panto(cwd=work, data=data, input="/help\n/model mock/openai\n/exit\n")
    assert r.returncode == 0, r.stderr
    assert session_files(data) == []
    assert panto("-p", "the real one", cwd=work, data=data).returncode == 0
    [path] = session_files(data)
    r = panto(cwd=work, data=data, input="")  # start, then Ctrl-D at once
    assert r.returncode == 0, r.stderr
    assert session_files(data) == [path]
    r = panto("-p", "and on", "--continue", cwd=work, data=data)
    assert r.returncode == 0, r.stderr
    assert [m["content"][0]["text"] for m in messages(path) if m["role"] == "user"] == [
        "the real one",
        "and on",
    ]


def test_compact_command_is_persisted_and_resumed(dirs: tuple[Path, Path]) -> None:
    work, data = dirs
    r = panto(cwd=work, data=data, input="hello there\n/compact keep names\nafter it\n/exit\n")
    assert r.returncode == 0, r.stderr
    assert "compacted 2 messages" in r.stdout
    [path] = session_files(data)
    entries = [json.loads(line) for line in path.read_text().splitlines()][1:]
    assert [e["type"] for e in entries] == [
        "model_change",
        "message",
        "message",
        "compaction",
        "message",
        "message",
    ]
    comp = entries[3]
    assert comp["summary"] == "Summary: 1 user message(s); the last: hello there"
    assert comp["first_kept_id"] is None and comp["tokens_before"] > 0
    assert comp["parent_id"] == entries[2]["id"] and entries[4]["parent_id"] == comp["id"]

    # the resumed context is the summary and what came after it, not the old messages
    r = panto("-p", "next", "--continue", "--output-format", "json", cwd=work, data=data)
    assert r.returncode == 0, r.stderr
    assert "resumed session" in r.stderr and "(3 messages)" in r.stderr
    assert json.loads(r.stdout)["result"] == "You said: next"
    from panto.sessions import compaction_summary_message, read_session

    conv = read_session(path).conversation
    assert conv[0] == compaction_summary_message(comp["summary"])
    texts = [m.text for m in conv]
    assert texts[1::2] == ["after it", "next"] and texts[4] == "You said: next"
    # the mock echoes the whole user turn: the summary was sent in place of the old messages
    assert texts[2] == "You said: " + conv[0].text + "after it"


def test_sessions_command_lists_this_directory(dirs: tuple[Path, Path]) -> None:
    work, data = dirs
    assert panto("-p", "an older one", cwd=work, data=data).returncode == 0
    r = panto(cwd=work, data=data, input="/sessions\nnew prompt\n/sessions\n/exit\n")
    assert r.returncode == 0, r.stderr
    # stdout: listing 1, "this session: ...", the turn, listing 2, "this session: ..."
    listing1, status1_and_listing2, status2 = r.stdout.split("this session: ")
    status1, listing2 = status1_and_listing2.split("\n", 1)
    assert "an older one" in listing1 and "new prompt" not in listing1
    assert "saved from its first prompt on" in status1
    assert "an older one" in listing2 and "new prompt" in listing2
    [new] = [p for p in session_files(data) if "new prompt" in p.read_text()]
    assert "panto --resume" in status2
    assert new.name.split("_")[1].startswith(status2[:8])
