"""``panto sessions tree | export | import`` and the configured store."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.trust import trust_project

from panto.cli.sessions import main
from panto.conversation import Message, Text
from panto.sessions import FSJSONLStore, open_backend


def _reply(text: str) -> Message:
    return Message("assistant", (Text(text),), None, "stop", "anthropic", "claude-x")


def _branched(root: Path, cwd: str) -> tuple[str, dict[str, str]]:
    ids: dict[str, str] = {}
    with FSJSONLStore(root, cwd) as store:
        ids["q1"], ids["a1"] = store.append_messages([Message.user("first"), _reply("one")])
        ids["q2"], ids["a2"] = store.append_messages([Message.user("second"), _reply("two")])
        store.branch_from(ids["q2"])
        ids["q2b"], ids["a2b"] = store.append_messages([Message.user("other"), _reply("alt")])
        store.label(ids["a2"], "keep")
    return store.session_id, ids


def test_tree_shows_prompts_branches_labels_and_the_current_leaf(
    tmp_path: Path, workdir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sid, ids = _branched(tmp_path / "s", workdir)
    assert main(["tree", sid[:8], "--dir", str(tmp_path / "s")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"* {ids['q1']}..{ids['a1']}  first  -> one",
        f"    {ids['q2']}..{ids['a2']}  [keep] second  -> two",
        f"  > {ids['q2b']}..{ids['a2b']}  other  -> alt",
    ]
    assert main(["tree", sid[:8], "--dir", str(tmp_path / "s"), "--json"]) == 0
    nodes = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [n["id"] for n in nodes if n["current"]] == [ids["a2b"]]


def test_export_then_import_into_another_store(
    tmp_path: Path, workdir: str, capsys: pytest.CaptureFixture[str]
) -> None:
    sid, ids = _branched(tmp_path / "s", workdir)
    out_file = tmp_path / "x.jsonl"
    assert main(["export", sid[:8], "--dir", str(tmp_path / "s"), "-o", str(out_file)]) == 0
    lines = out_file.read_text().splitlines()
    assert (
        json.loads(lines[0])["id"] == sid and len(lines) == 1 + 8
    )  # 6 messages, a leaf move, a label
    db = f"sqlite:///{tmp_path / 'db.sqlite'}"
    assert main(["import", str(out_file), "--url", db]) == 0
    assert capsys.readouterr().out.strip() == sid
    b = open_backend(db)
    assert [m.text for m in b.read(sid).conversation] == ["first", "one", "other", "alt"]
    assert [m.text for m in b.read(sid, ids["a2"]).conversation] == [
        "first",
        "one",
        "second",
        "two",
    ]
    # and the export of the database copy is the same session
    assert main(["export", sid, "--url", db]) == 0
    again = capsys.readouterr().out.splitlines()
    assert [json.loads(x) for x in again] == [json.loads(x) for x in lines]
    assert main(["import", str(out_file), "--url", db]) == 1
    assert "exists already" in capsys.readouterr().err


def test_sessions_honours_the_configured_directory(
    tmp_path: Path,
    workdir: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 13: `panto sessions` lists the store `[session] dir` /
    PANTO_SESSION_DIR names, not the default directory."""
    root = tmp_path / "elsewhere"
    sid, _ = _branched(root, workdir)
    monkeypatch.chdir(workdir)
    assert main([]) == 0
    assert sid[:8] not in capsys.readouterr().out
    monkeypatch.setenv("PANTO_SESSION_DIR", str(root))
    assert main([]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith(sid[:8])
    monkeypatch.delenv("PANTO_SESSION_DIR")
    cfg = Path(workdir) / ".panto" / "config.toml"
    cfg.parent.mkdir()
    cfg.write_text(f'[session]\ndir = "{root}"\n')
    trust_project(workdir)  # [session] dir in a project applies once trusted
    assert main([]) == 0
    assert capsys.readouterr().out.splitlines()[1].startswith(sid[:8])


def test_sessions_honours_the_session_url(
    tmp_path: Path,
    workdir: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = f"sqlite:///{tmp_path / 'x.db'}"
    with open_backend(url).create(workdir) as store:
        store.append_messages([Message.user("in the database"), _reply("yes")])
    monkeypatch.chdir(workdir)
    monkeypatch.setenv("PANTO_SESSION_URL", url)
    assert main([]) == 0
    out = capsys.readouterr().out
    assert store.session_id[:8] in out and "in the database" in out
