"""list_sessions, find_most_recent_session, resolve_session_id."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from panto.conversation import Message, Text
from panto.errors import SessionError
from panto.sessions import (
    FSJSONLStore,
    ModelRef,
    cwd_slug,
    default_sessions_dir,
    find_most_recent_session,
    list_sessions,
    resolve_session_id,
)


def make(
    sessions_dir: Path | None,
    cwd: str,
    prompts: list[str],
    *,
    sid: str | None = None,
    model: tuple[str, str] = ("anthropic", "claude-x"),
    mtime: float | None = None,
) -> Path:
    with FSJSONLStore(sessions_dir, cwd, session_id=sid) as store:
        for p in prompts:
            store.append_messages([Message.user(p)])
            store.append_messages([Message("assistant", (Text("ok"),), None, "stop", *model)])
    if mtime is not None:
        os.utime(store.path, (mtime, mtime))
    return store.path


def test_list_sessions(sessions_dir: Path, tmp_path: Path) -> None:
    a, b = str(tmp_path / "a"), str(tmp_path / "b")
    now = time.time()
    pa1 = make(sessions_dir, a, ["first in a", "second"], mtime=now - 100)
    pa2 = make(sessions_dir, a, ["newer in a"], model=("openai", "gpt-5"), mtime=now - 10)
    pb = make(sessions_dir, b, ["in b"], mtime=now - 50)
    FSJSONLStore(sessions_dir, a).close()  # never written: no file, not listed
    infos = list_sessions(sessions_dir)
    assert [i.path for i in infos] == [pa2, pb, pa1]
    only_a = list_sessions(sessions_dir, cwd=a)
    assert [i.path for i in only_a] == [pa2, pa1]
    i = only_a[1]
    assert i.message_count == 4 and i.first_prompt == "first in a"
    assert i.model == ModelRef("anthropic", "claude-x") and i.cwd == a
    assert i.created.endswith("Z") and pa1.name.endswith(f"_{i.id}.jsonl")
    assert only_a[0].model == ModelRef("openai", "gpt-5")
    assert list_sessions(tmp_path / "nowhere") == []
    assert list_sessions(sessions_dir, cwd=str(tmp_path / "c")) == []


def test_listing_reads_files_written_by_others_and_damaged_ones(
    sessions_dir: Path, tmp_path: Path
) -> None:
    """The listing tells panto's lines apart by their first bytes; lines
    formatted otherwise (spaces, another key order), other entry types, a
    message that only mentions "provider", and a torn tail all count right."""
    import json

    cwd = str(tmp_path / "w")
    path = make(sessions_dir, cwd, ["first", "second"])
    entries = [json.loads(line) for line in path.read_text().splitlines()]
    header, body = entries[0], entries[1:]
    body.insert(0, {"type": "model_change", "id": "m0", "provider": "x", "model": "old"})
    body.append({"type": "compaction", "id": "c1", "summary": "s", "first_kept_id": None})
    mention = {"role": "user", "content": [{"type": "text", "text": 'say "provider": hi'}]}
    body.append({"message": mention, "id": "u9", "type": "message"})  # keys in another order
    lines = [json.dumps(header)] + [json.dumps(e) for e in body[:3]]  # with spaces
    lines += [json.dumps(e, separators=(",", ":")) for e in body[3:]]
    path.write_text("\n".join(lines) + '\n{"type":"message","id":"torn')
    [info] = list_sessions(sessions_dir, cwd=cwd)
    assert info.message_count == 5  # 4 written by make, the mention; not the torn tail
    assert info.first_prompt == "first"
    assert info.model == ModelRef("anthropic", "claude-x")  # the last message naming one


def test_list_skips_unreadable_files(
    sessions_dir: Path, workdir: str, caplog: pytest.LogCaptureFixture
) -> None:
    good = make(sessions_dir, workdir, ["x"])
    bad = good.with_name("2020-01-01T00-00-00-000Z_badbad.jsonl")
    bad.write_text("not json\n")
    assert [i.path for i in list_sessions(sessions_dir)] == [good]
    assert any("badbad" in r.getMessage() for r in caplog.records)


def test_slug_collisions_are_filtered_by_header_cwd(sessions_dir: Path, tmp_path: Path) -> None:
    a, b = str(tmp_path / "x-y"), str(tmp_path / "x" / "y")
    assert cwd_slug(a) == cwd_slug(b)
    pa = make(sessions_dir, a, ["a"])
    pb = make(sessions_dir, b, ["b"])
    assert [i.path for i in list_sessions(sessions_dir, a)] == [pa]
    assert find_most_recent_session(b, sessions_dir) == pb
    os.utime(pb, (1, 1))
    assert find_most_recent_session(b, sessions_dir) == pb  # not the newer pa


def test_find_most_recent_session(sessions_dir: Path, tmp_path: Path) -> None:
    a = str(tmp_path / "a")
    assert find_most_recent_session(a, sessions_dir) is None
    now = time.time()
    make(sessions_dir, a, ["old"], mtime=now - 100)
    newest = make(sessions_dir, a, ["new"], mtime=now - 5)
    make(sessions_dir, str(tmp_path / "b"), ["other dir"], mtime=now)
    assert find_most_recent_session(a, sessions_dir) == newest
    # relative cwd is made absolute
    os.chdir(tmp_path)
    assert find_most_recent_session("a", sessions_dir) == newest


def test_defaults_use_xdg(isolated_home: Path, workdir: str) -> None:
    p = make(None, workdir, ["hi"])
    assert default_sessions_dir() == Path(os.environ["XDG_DATA_HOME"]) / "panto" / "sessions"
    assert find_most_recent_session(workdir) == p
    assert [i.path for i in list_sessions()] == [p]
    assert resolve_session_id(p.name.rpartition("_")[2][:6]) == p


def test_panto_home_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PANTO_HOME", str(tmp_path / "ph"))
    assert default_sessions_dir() == tmp_path / "ph" / "sessions"


def test_resolve_session_id(sessions_dir: Path, tmp_path: Path) -> None:
    p1 = make(sessions_dir, str(tmp_path / "a"), ["one"], sid="abc123" + "0" * 26)
    p2 = make(sessions_dir, str(tmp_path / "b"), ["two"], sid="abd999" + "0" * 26)
    p3 = make(sessions_dir, str(tmp_path / "a"), ["three"], sid="fff000" + "0" * 26)
    assert resolve_session_id("abc", sessions_dir) == p1
    assert resolve_session_id("ABD9", sessions_dir) == p2  # case-insensitive
    assert resolve_session_id("f", sessions_dir) == p3
    assert resolve_session_id("abc123" + "0" * 26, sessions_dir) == p1
    assert resolve_session_id(str(p2), sessions_dir) == p2  # a path is accepted
    with pytest.raises(SessionError) as exc:
        resolve_session_id("ab", sessions_dir)
    msg = str(exc.value)
    assert "ambiguous" in msg and "2 sessions" in msg
    assert "abc123" in msg and "abd999" in msg
    assert str(tmp_path / "a") in msg and str(tmp_path / "b") in msg
    with pytest.raises(SessionError, match="no session id starts with 'zzz'"):
        resolve_session_id("zzz", sessions_dir)
    with pytest.raises(SessionError, match="empty"):
        resolve_session_id("  ", sessions_dir)
