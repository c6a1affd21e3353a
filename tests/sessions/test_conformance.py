"""One suite for every session backend (JSONL, SQLite, PostgreSQL): append
batches, resume, the dangling prompt, two writers, the tree (branch, continue
both branches, resume each leaf, byte-identical next request per branch,
fork, labels, nothing deleted), damaged data, and SIGKILL mid-append.

The ``backend`` fixture (conftest.py) runs each test once per backend; the
PostgreSQL server comes from ``PANTO_TEST_POSTGRES_URL`` or is started by
scripts/ci-postgres.sh."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import pytest
from support.crash_child import batch, batches_in, canonical
from support.sessions import Backend, conversation_rounds, flat

from panto.config import Config
from panto.conversation import Message, Text
from panto.errors import SessionError
from panto.providers import make_provider
from panto.sessions import fork_session, parse_entries

HERE = Path(__file__).resolve().parent
# The children import the installed panto (with its compiled core), as the
# tests do: the source tree's python/ has no core in a non-editable install.
CHILD_ENV: dict[str, str] = {}


def _texts(conv: object) -> list[str]:
    return [m.text for m in conv]  # type: ignore[attr-defined]


def _reply(text: str) -> Message:
    return Message("assistant", (Text(text),), None, "stop", "anthropic", "claude-x")


def _requests(messages: list[Message]) -> list[bytes]:
    out = []
    for provider in ("anthropic", "openai"):
        cfg = Config(provider=provider, model="m", base_url="http://127.0.0.1:9", api_key="k")
        out.append(make_provider(cfg).build_request(messages, []).body)
    return out


def _export(b: Backend, sid: str) -> list[dict]:
    return list(b.backend.export(sid))


# --------------------------------------------------------------------------- the basics


def test_append_batches_and_resume(backend: Backend, workdir: str) -> None:
    rounds = conversation_rounds()
    store = backend.backend.create(workdir)
    with store:
        store.append_model_change("anthropic", "claude-sonnet-4-5")
        for b in rounds:
            store.append_messages(b)
        live = store.load_conversation()
    sid = store.session_id
    with backend.backend.open(sid[:10]) as again:
        loaded = again.load_conversation()
        assert again.session_id == sid
        last = [m for m in flat(rounds) if m.model][-1]
        assert str(again.active_model) == f"{last.provider}/{last.model}"
    assert list(loaded.conversation) == flat(rounds)
    assert loaded.conversation == live.conversation
    assert loaded.dangling_user is None
    assert _requests(list(loaded.conversation)) == _requests(flat(rounds))
    infos = backend.backend.list(workdir)
    assert [i.id for i in infos] == [sid]
    assert infos[0].message_count == len(flat(rounds))
    assert infos[0].first_prompt.startswith("list the files")
    assert backend.backend.most_recent(workdir) is not None


def test_a_session_nobody_typed_into_is_not_listed(backend: Backend, workdir: str) -> None:
    with backend.backend.create(workdir) as store:
        store.append_model_change("anthropic", "m")
        store.append_messages([Message("system", (Text("sys"),))])
    assert backend.backend.list(workdir) == []


def test_dangling_prompt_is_offered_and_its_successor_is_a_sibling(
    backend: Backend, workdir: str
) -> None:
    with backend.backend.create(workdir) as store:
        store.append_messages([Message.user("q1")])
        store.append_messages([_reply("a1")])
        store.append_messages([Message.user("lost prompt")])
    sid = store.session_id
    with backend.backend.open(sid) as again:
        loaded = again.load_conversation()
        assert _texts(loaded.conversation) == ["q1", "a1"]
        assert loaded.dangling_user == "lost prompt"
        again.append_messages([Message.user("edited prompt")])
        again.append_messages([_reply("a2")])
    loaded = backend.backend.read(sid)
    assert _texts(loaded.conversation) == ["q1", "a1", "edited prompt", "a2"]
    # the unanswered prompt is still there, as a sibling
    entries = _export(backend, sid)[1:]
    by_text = {e["message"]["content"][0]["text"]: e for e in entries if e["type"] == "message"}
    assert by_text["lost prompt"]["parent_id"] == by_text["edited prompt"]["parent_id"]


def test_second_writer_gets_a_clear_error(backend: Backend, workdir: str) -> None:
    first = backend.backend.create(workdir)
    first.append_messages([Message.user("q"), _reply("a")])
    with pytest.raises(SessionError, match="in use by another panto process"):
        backend.backend.open(first.session_id)
    first.append_messages([Message.user("still mine"), _reply("y")])
    first.close()
    with backend.backend.open(first.session_id) as again:  # free after close
        assert _texts(again.load_conversation().conversation) == ["q", "a", "still mine", "y"]


def test_more_open_sessions_than_the_pool_has_connections(backend: Backend, workdir: str) -> None:
    """A writer lock does not pin a pooled connection (PostgreSQL: the locks
    live on a connection of their own; the pool has 8): 20 sessions open at
    once all write and read back, and each still refuses a second writer."""
    stores = [backend.backend.create(workdir) for _ in range(20)]
    try:
        for i, s in enumerate(stores):
            s.append_messages([Message.user(f"q{i}"), _reply(f"a{i}")])
        for i, s in enumerate(stores):
            assert _texts(s.load_conversation().conversation) == [f"q{i}", f"a{i}"]
        with pytest.raises(SessionError, match="in use by another panto process"):
            backend.backend.open(stores[13].session_id)
    finally:
        for s in stores:
            s.close()
    with backend.backend.open(stores[13].session_id) as again:  # free after close
        assert _texts(again.load_conversation().conversation) == ["q13", "a13"]


def test_two_processes_on_one_store(backend: Backend, workdir: str) -> None:
    """Different sessions at once succeed; the same session gives the second
    process a clear error; a session written by one process resumes in the other."""
    mine = backend.backend.create(workdir)
    mine.append_messages([Message.user("parent q"), _reply("parent a")])
    code = textwrap.dedent(
        """
        import sys
        from panto.conversation import Message, Text
        from panto.errors import SessionError
        from panto.sessions import open_backend
        b = open_backend(sys.argv[1])
        try:
            b.open(sys.argv[3])
        except SessionError as exc:
            print("LOCKED", exc)
        with b.create(sys.argv[2]) as s:
            for i in range(5):
                s.append_messages([Message.user(f"child q{i}")])
                s.append_messages([Message("assistant", (Text(f"child a{i}"),))])
        print("ID", s.session_id)
        """
    )
    child = subprocess.run(
        [sys.executable, "-c", code, backend.url, workdir, mine.session_id],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **CHILD_ENV},
    )
    assert child.returncode == 0, child.stderr
    out = dict(line.split(" ", 1) for line in child.stdout.splitlines())
    assert "in use by another panto process" in out["LOCKED"]
    assert f"pid {os.getpid()}" in out["LOCKED"]
    for i in range(3):  # the parent keeps writing its own session meanwhile
        mine.append_messages([Message.user(f"p{i}"), _reply(f"r{i}")])
    mine.close()
    with backend.backend.open(out["ID"]) as theirs:
        assert _texts(theirs.load_conversation().conversation)[-2:] == ["child q4", "child a4"]
        theirs.append_messages([Message.user("resumed here"), _reply("ok")])
    assert len(backend.backend.list(workdir)) == 2


# --------------------------------------------------------------------------- the tree


def _two_branches(backend: Backend, workdir: str) -> tuple[str, dict[str, str], dict]:
    """q1 a1 q2 a2, then a branch at q2: q2b a2b q3 a3; then back on the
    first branch: q4 a4.  Returns the id, the entry id of each text, and
    the expected conversation of each leaf."""
    ids: dict[str, str] = {}
    with backend.backend.create(workdir) as store:
        store.append_messages([Message("system", (Text("sys"),))])
        for text, msg in (("q1", Message.user("q1")), ("a1", _reply("a1"))):
            ids[text] = store.append_messages([msg])[0]
        ids["q2"], ids["a2"] = store.append_messages([Message.user("q2"), _reply("a2")])
        branched = store.branch_from(ids["q2"])
        assert _texts(branched.conversation) == ["sys", "q1", "a1"]
        assert branched.dangling_user == "q2"  # offered for editing
        ids["q2b"], ids["a2b"] = store.append_messages([Message.user("q2b"), _reply("a2b")])
        ids["q3"], ids["a3"] = store.append_messages([Message.user("q3"), _reply("a3")])
        store.set_leaf(ids["a2"])
        assert _texts(store.load_conversation().conversation) == ["sys", "q1", "a1", "q2", "a2"]
        ids["q4"], ids["a4"] = store.append_messages([Message.user("q4"), _reply("a4")])
        assert store.leaf_id == ids["a4"]
    expected = {
        ids["a4"]: ["sys", "q1", "a1", "q2", "a2", "q4", "a4"],
        ids["a3"]: ["sys", "q1", "a1", "q2b", "a2b", "q3", "a3"],
    }
    return store.session_id, ids, expected


def test_branch_continue_both_and_resume_each_leaf(backend: Backend, workdir: str) -> None:
    sid, ids, expected = _two_branches(backend, workdir)
    b = backend.backend
    # the current leaf is the last one written
    assert _texts(b.read(sid).conversation) == expected[ids["a4"]]
    with b.open(sid) as store:
        assert sorted(store.leaves()) == sorted(expected)
        for leaf, texts in expected.items():
            loaded = store.load_conversation(leaf)
            assert _texts(loaded.conversation) == texts
            assert loaded.dangling_user is None
            # the next request of each branch is byte-identical to the one
            # built from the conversation as it was written
            live = [Message("system", (Text("sys"),))] + [
                Message.user(t) if t.startswith("q") else _reply(t) for t in texts[1:]
            ]
            assert _requests(list(loaded.conversation)) == _requests(live)
        # continue the other branch from a resumed session
        store.set_leaf(ids["a3"])
        store.append_messages([Message.user("q5"), _reply("a5")])
    assert _texts(b.read(sid).conversation) == [*expected[ids["a3"]], "q5", "a5"]
    with b.open(sid) as store:  # the moved leaf is recorded
        assert _texts(store.load_conversation().conversation)[-1] == "a5"
        assert len(store.leaves()) == 2


def test_tree_lists_every_node_and_marks_the_current_leaf(backend: Backend, workdir: str) -> None:
    sid, ids, _ = _two_branches(backend, workdir)
    nodes = backend.backend.tree(sid)
    texts = [n.text for n in nodes if n.type == "message"]
    assert texts == ["sys", "q1", "a1", "q2", "a2", "q4", "a4", "q2b", "a2b", "q3", "a3"]
    current = [n for n in nodes if n.current]
    assert [n.id for n in current] == [ids["a4"]]
    assert {n.text for n in nodes if n.on_path} == {"sys", "q1", "a1", "q2", "a2", "q4", "a4"}
    by_id = {n.id: n for n in nodes}
    assert by_id[ids["a1"]].children == 2
    assert by_id[ids["q2"]].depth == by_id[ids["q2b"]].depth == 1


def test_labels_survive_resume(backend: Backend, workdir: str) -> None:
    sid, ids, _ = _two_branches(backend, workdir)
    with backend.backend.open(sid) as store:
        store.label(ids["a3"], "experiment")
        store.label(None, "main line")  # the current leaf
        store.label(ids["a1"], "tmp")
        store.label(ids["a1"], None)  # removed again
        with pytest.raises(SessionError, match="no entry"):
            store.label("nope", "x")
    with backend.backend.open(sid) as store:
        assert store.labels() == {ids["a3"]: "experiment", ids["a4"]: "main line"}
        assert store.leaf_id == ids["a4"]  # labels do not move the leaf
    nodes = {n.id: n for n in backend.backend.tree(sid)}
    assert nodes[ids["a3"]].label == "experiment"


def test_nothing_is_ever_deleted(backend: Backend, workdir: str) -> None:
    sid, ids, _ = _two_branches(backend, workdir)
    before = _export(backend, sid)
    with backend.backend.open(sid) as store:
        store.branch_from(ids["q1"])
        store.append_messages([Message.user("from the start"), _reply("z")])
    after = _export(backend, sid)
    assert after[: len(before)] == before
    assert {e["id"] for e in before} <= {e["id"] for e in after}


def test_fork_copies_the_path_into_a_new_session(backend: Backend, workdir: str) -> None:
    sid, ids, expected = _two_branches(backend, workdir)
    with backend.backend.open(sid) as store:
        store.label(ids["q2b"], "the other way")
    new = fork_session(backend.backend, sid, ids["a3"])
    assert new != sid
    loaded = backend.backend.read(new)
    assert _texts(loaded.conversation) == expected[ids["a3"]]
    with backend.backend.open(new) as store:
        assert store.leaves() == [ids["a3"]]
        assert store.labels() == {ids["q2b"]: "the other way"}
        store.append_messages([Message.user("on the fork"), _reply("f")])
    # the original is untouched
    assert _texts(backend.backend.read(sid).conversation) == expected[ids["a4"]]
    assert _texts(backend.backend.read(sid, ids["a3"]).conversation) == expected[ids["a3"]]


def test_export_import_between_backends(backend: Backend, workdir: str, tmp_path: Path) -> None:
    from panto.sessions import open_backend

    sid, ids, expected = _two_branches(backend, workdir)
    lines = [
        __import__("json").dumps(e, ensure_ascii=False) + "\n" for e in backend.backend.export(sid)
    ]
    header, entries = parse_entries(lines, "export")
    assert header["id"] == sid
    other = open_backend(f"sqlite:///{tmp_path / 'other.db'}")
    if backend.kind == "sqlite":
        other = open_backend(str(tmp_path / "other-jsonl"))
    assert other.import_session(header, entries) == sid
    for leaf, texts in expected.items():
        assert _texts(other.read(sid, leaf).conversation) == texts
    assert _texts(other.read(sid).conversation) == expected[ids["a4"]]
    with pytest.raises(SessionError, match="exists already"):
        other.import_session(header, entries)


# --------------------------------------------------------------------------- damage


def test_corrupt_entry_is_an_error_naming_it(backend: Backend, workdir: str) -> None:
    with backend.backend.create(workdir) as store:
        store.append_messages([Message.user("q"), _reply("a")])
    sid = store.session_id
    if backend.kind == "jsonl":
        path = Path(backend.backend.resolve(sid))
        lines = path.read_text().splitlines()
        lines[1] = lines[1][:-1]
        path.write_text("\n".join(lines) + "\n")
        where = f"{path}:2"
    elif backend.kind == "sqlite":
        import sqlite3

        db = backend.url[len("sqlite:///") :]
        with sqlite3.connect(db) as conn:
            conn.execute(
                "UPDATE panto_entries SET entry = ? WHERE session_id = ? AND seq = 0",
                ('{"type":"message","id":1}', sid),
            )
        where = sid
    else:
        import psycopg

        with psycopg.connect(backend.url, autocommit=True) as conn:
            conn.execute(
                "UPDATE panto_entries SET entry = %s::jsonb, line = %s "
                "WHERE session_id = %s AND seq = 0",
                ('{"type":"message","id":1}', '{"type":"message","id":1}', sid),
            )
        where = sid
    with pytest.raises(SessionError) as exc:
        backend.backend.open(sid)
    assert where in str(exc.value) and "corrupt" in str(exc.value)


# --------------------------------------------------------------------------- crashes

KILL_POINTS = 15


def kill_many_times(b: Backend, workdir: str, points: int, seed: int) -> tuple[int, int]:
    """SIGKILL a writer ``points`` times at random moments; after each kill
    every committed batch loads and no partial batch is visible.  Returns
    (kill points, batches)."""
    with b.backend.create(workdir) as store:
        store.append_messages(batch(0))
    sid = store.session_id
    rng = random.Random(seed)
    committed = 1
    for k in range(points):
        child = subprocess.Popen(
            [sys.executable, str(HERE.parent / "support" / "crash_child.py"), b.url, sid],
            stdout=subprocess.PIPE,
            env={**os.environ, **CHILD_ENV},
        )
        assert child.stdout is not None
        first = child.stdout.readline().decode()
        assert first.startswith("start "), first
        start = int(first.split()[1])
        assert start >= committed
        wait_for = rng.randrange(0, 6)
        seen = start
        while seen < start + wait_for:
            line = child.stdout.readline()
            assert line, "child died"
            seen = int(line)
        time.sleep(rng.random() * 0.003)
        child.send_signal(signal.SIGKILL)
        rest = child.stdout.read().split()
        child.wait(10)
        assert child.returncode == -signal.SIGKILL
        reported = int(rest[-1]) if rest else seen
        assert reported >= committed
        committed = reported
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            loaded = b.backend.read(sid)
        msgs = list(loaded.conversation)
        n = batches_in(len(msgs))
        assert n is not None, f"kill {k}: a partial batch is visible ({len(msgs)} messages)"
        assert n >= committed, f"kill {k}: committed batches lost ({n} < {committed})"
        assert n <= committed + 1
        assert msgs == canonical(n)
        committed = n
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        store = b.backend.open(sid)
    with store:  # the session can be continued after all that
        store.append_messages(batch(committed))
    assert list(b.backend.read(sid).conversation) == canonical(committed + 1)
    return points, committed + 1


def test_sigkill_mid_append(backend: Backend, workdir: str) -> None:
    points, batches = kill_many_times(backend, workdir, KILL_POINTS, 99)
    print(f"\ncrash test ({backend.kind}): {points} SIGKILL points, {batches} batches")


@pytest.mark.slow
def test_sigkill_mid_append_many(backend: Backend, workdir: str) -> None:
    points, batches = kill_many_times(backend, workdir, 60, 4321)
    print(f"\ncrash test ({backend.kind}): {points} SIGKILL points, {batches} batches")


@pytest.mark.parametrize("mode", ["stream", "tool"])
def test_agent_killed_mid_turn(backend: Backend, workdir: str, mode: str) -> None:
    """A whole agent SIGKILLed mid-answer and mid-tool-call: what was
    committed loads (the prompt; the tool call), and the session resumes."""
    from panto.agent import Agent
    from panto.conversation import Conversation, ToolUse
    from panto.sessions import unanswered_tool_uses
    from panto.testing import Reply, ScriptedServer

    rng = random.Random(7)
    points = 3
    for k in range(points):
        if mode == "stream":
            first = Reply([Text("x" * 400)], chunk=4, delay=0.005)
        else:
            first = Reply([Text("calling"), ToolUse("toolu_1", "slow", {"n": k})])
        with ScriptedServer([first, Reply([Text("resumed fine")])]) as server:
            child = subprocess.Popen(
                [
                    sys.executable,
                    str(HERE / "agent_child.py"),
                    "anthropic",
                    server.url,
                    backend.url,
                    workdir,
                ],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**os.environ, **CHILD_ENV},
            )
            try:
                assert child.stdout is not None
                kind, ref = child.stdout.readline().decode().split(maxsplit=1)
                ref = ref.strip()
                want = "delta" if mode == "stream" else "tool-start"
                got = 0
                while got < (1 + k * 5 if mode == "stream" else 1):
                    line = child.stdout.readline().decode().strip()
                    assert line and line != "done", "the turn ended before the kill"
                    got += line == want
                time.sleep(rng.random() * 0.02)
                child.send_signal(signal.SIGKILL)
                child.wait(10)
            finally:
                if child.poll() is None:
                    child.kill()
                    child.wait()
            loaded = backend.backend.read(ref)
            if mode == "stream":
                assert loaded.conversation == Conversation()
                assert loaded.dangling_user == "go"
            else:
                msgs = list(loaded.conversation)
                assert [m.role for m in msgs] == ["user", "assistant"]
                assert [u.id for u in unanswered_tool_uses(loaded.conversation)] == ["toolu_1"]
            cfg = Config(
                provider="anthropic", model="m", base_url=server.url, api_key="k", max_retries=0
            )
            with backend.backend.open(ref) as store:
                agent = Agent(cfg, store=store, conversation=store.load_conversation().conversation)
                agent.submit_user_message("again")
                with agent.run() as stream:
                    for _ in stream:
                        pass
                live = list(agent.conversation)
                agent.close()
            assert list(backend.backend.read(ref).conversation) == live
            assert live[-1].text == "resumed fine"
    print(f"\nagent crash test ({backend.kind}, {mode}): {points} SIGKILL points")
