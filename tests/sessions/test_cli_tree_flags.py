"""The tree from the command line: --output-format json reports the session
and leaf ids, --resume ID --at ENTRY branches, --fork ID:ENTRY copies a path
into a new session; on JSONL and on a database (PANTO_SESSION_URL)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.sessions import panto

from panto.sessions import open_backend


@pytest.mark.parametrize("store", ["jsonl", "sqlite"])
def test_json_ids_resume_at_and_fork(
    tmp_path: Path, store: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    url = (
        f"sqlite:///{tmp_path / 's.db'}" if store == "sqlite" else str(data / "panto" / "sessions")
    )
    if store == "sqlite":
        monkeypatch.setenv("PANTO_SESSION_URL", url)

    def run(*args: str) -> dict:
        r = panto("-p", *args, "--output-format", "json", cwd=work, data=data)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout.splitlines()[-1])

    first = run("first")
    sid, leaf1 = first["session_id"], first["leaf_id"]
    assert sid and leaf1
    second = run("second", "--resume", sid[:8])
    assert second["session_id"] == sid and second["leaf_id"] != leaf1
    branched = run("second, differently", "--resume", sid[:8], "--at", leaf1)
    assert branched["session_id"] == sid
    b = open_backend(url)
    leaves = set(b.tree(sid) and [n.id for n in b.tree(sid) if n.children == 0])
    assert leaves == {second["leaf_id"], branched["leaf_id"]}
    texts = [m.text for m in b.read(sid).conversation if m.role == "user"]
    assert texts == ["first", "second, differently"]
    assert [m.text for m in b.read(sid, second["leaf_id"]).conversation if m.role == "user"] == [
        "first",
        "second",
    ]
    forked = run("on the fork", "--fork", f"{sid[:8]}:{second['leaf_id']}")
    assert forked["session_id"] != sid
    assert [m.text for m in b.read(forked["session_id"]).conversation if m.role == "user"] == [
        "first",
        "second",
        "on the fork",
    ]
    # stream-json's result line carries them too
    r = panto("-p", "x", "--continue", "--output-format", "stream-json", cwd=work, data=data)
    last = json.loads(r.stdout.splitlines()[-1])
    assert last["type"] == "result" and last["session_id"] and last["leaf_id"]


def test_repl_clear_starts_a_new_database_session(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work, data = tmp_path / "work", tmp_path / "data"
    work.mkdir()
    url = f"sqlite:///{tmp_path / 's.db'}"
    monkeypatch.setenv("PANTO_SESSION_URL", url)
    r = panto(cwd=work, data=data, input="first\n/clear\nsecond\n/sessions\n")
    assert r.returncode == 0, r.stderr
    # /sessions lists the database's sessions and names this one
    assert r.stdout.count("FIRST PROMPT") == 1 and "no saved sessions" not in r.stdout
    infos = open_backend(url).list(str(work))
    assert sorted(i.first_prompt for i in infos) == ["first", "second"]
    assert all(i.message_count == 2 for i in infos)
