"""Permission decisions (panto.policy) are ``permission`` marks in the
session: every backend (JSONL, SQLite, PostgreSQL) writes them, loads them
back, keeps them out of the conversation and the tree, and a resumed
session's "allow always" answers apply again."""

from __future__ import annotations

from support.sessions import Backend

from panto.conversation import Message, Text
from panto.tools import ToolCall


def _reply(text: str) -> Message:
    return Message("assistant", (Text(text),), None, "stop", "anthropic", "claude-x")


def _record(decision: str, **extra: object) -> dict:
    return {
        "tool": "bash",
        "tool_use_id": "toolu_1",
        "decision": decision,
        "by": "user",
        "mode": "default",
        "rule": None,
        "reason": "r",
        "subject": "make test",
        **extra,
    }


def test_permission_records_load_again_on_every_store(backend: Backend, workdir: str) -> None:
    with backend.backend.create(workdir) as store:
        store.append_messages([Message.user("q1")])
        store.append_permission(_record("deny"))
        store.append_messages([_reply("a1")])
        store.append_permission(_record("allow", always=["Bash(make test)"]))
        live = store.load_conversation()
    sid = store.session_id
    with backend.backend.open(sid) as again:
        loaded = again.load_conversation()
        assert [m.text for m in loaded.conversation] == ["q1", "a1"]
        assert loaded.conversation == live.conversation
        recs = again.permission_records()
        assert [(r["decision"], r.get("always")) for r in recs] == [
            ("deny", None),
            ("allow", ["Bash(make test)"]),
        ]
        assert all(r["tool"] == "bash" and r["subject"] == "make test" for r in recs)
        # marks are not nodes of the tree, and the next message chains onto a1
        assert [n.type for n in again.tree()] == ["message", "message"]
        again.append_messages([Message.user("q2"), _reply("a2")])
        after = again.load_conversation().conversation
        assert [m.text for m in after] == ["q1", "a1", "q2", "a2"]


def test_a_resumed_session_allows_what_was_allowed_always(backend: Backend, workdir: str) -> None:
    from panto.app import open_session
    from panto.config import Config

    with backend.backend.create(workdir) as store:
        store.append_messages([Message.user("q1"), _reply("a1")])
        store.append_permission(_record("allow", always=["Bash(make test)"]))
    sid = store.session_id
    store = backend.backend.open(sid)
    s = open_session(Config(model="mock/anthropic"), cwd=workdir, session=store, extensions=False)
    try:
        gate = s.agent.permissions
        assert gate.check(ToolCall("t", "bash", {"command": "make test"})).action == "allow"
        assert gate.check(ToolCall("t", "bash", {"command": "make other"})).action == "ask"
    finally:
        s.close()
