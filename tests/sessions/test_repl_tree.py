"""/tree, /fork and /label in the REPL (driven through Interactive.command)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from panto.agent import Agent
from panto.cli.repl import Interactive
from panto.config import Config
from panto.conversation import Message, Text
from panto.sessions import FSJSONLStore, open_backend


def test_tree_fork_and_label(
    tmp_path: Path,
    workdir: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(workdir)
    sdir = tmp_path / "sessions"
    config = dataclasses.replace(
        Config(provider="anthropic", model="m", base_url="http://127.0.0.1:9", api_key="k"),
        session_dir=str(sdir),
    )
    store = FSJSONLStore(sdir, workdir)
    q1, a1 = store.append_messages([Message.user("q1"), Message("assistant", (Text("a1"),))])
    q2, a2 = store.append_messages([Message.user("q2"), Message("assistant", (Text("a2"),))])
    agent = Agent(config, store=store, conversation=store.load_conversation().conversation)
    repl = Interactive(agent)

    repl.command("/label checkpoint")
    assert store.labels() == {a2: "checkpoint"}
    capsys.readouterr()
    repl.command("/tree")
    out = capsys.readouterr().out
    assert f"> {q2}..{a2}  [checkpoint] q2  -> a2" in out

    repl.command(f"/tree {q2[:5]}")  # a prompt: back before it, its text to edit
    assert repl.prefill == "q2"
    assert [m.text for m in agent.conversation] == ["q1", "a1"]
    agent.submit_user_message("q2 edited")
    assert set(store.leaves()) == {a2, store.leaf_id}

    repl.command("/fork")
    assert agent.store is not store and agent.store.session_id != store.session_id
    assert "forked" in capsys.readouterr().out
    b = open_backend(str(sdir))
    assert [m.text for m in b.read(agent.store.session_id).conversation] == ["q1", "a1"]
    assert b.read(agent.store.session_id).dangling_user == "q2 edited"
    agent.store.close()
    agent.close()
