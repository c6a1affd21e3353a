"""Poisoned sessions: whatever panto accepts into a session it can store,
load and send again, on every store (JSONL, SQLite, PostgreSQL).

- a lone surrogate (a ``"\\ud800"`` escape in a model's tool arguments, an
  argv byte that was not UTF-8) and NUL bytes (tool output: ``cat`` of a
  binary, ``find -print0``) are shown visibly (``␀``, ``�``, a note to the
  model) before they are stored; the turn never fails;
- a stored message whose role or shape this panto does not know loads as a
  visible placeholder with one warning, and ``--continue`` works after it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
import warnings
from pathlib import Path
from typing import Any

import pytest
from support.agent import make_config, run_turn

from panto.agent import Agent
from panto.conversation import Message, Text, ToolResultBlock, ToolUse
from panto.sessions import SessionWarning
from panto.storable import NUL_SHOWN_AS
from panto.testing import Reply, ScriptedServer, render_sse
from panto.tools import FunctionTool

WIRE = "openai-chat"
MARK = "SURROGATE-HERE"


def _reply_with_bad_escape(model: str = "test-model") -> Reply:
    """A tool call whose JSON arguments hold a lone ``\\ud800`` escape (valid
    JSON, not valid Unicode): rendered with a marker, then the marker
    replaced by the escape in the bytes sent."""
    reply = Reply([ToolUse("call_1", "cat", {"path": f"x{MARK}y"})], cache=True, chunk=10_000)
    events = render_sse(reply, WIRE, model)
    reply.rendered[(WIRE, model)] = [e.replace(MARK.encode(), b"\\\\ud800") for e in events]
    return reply


def _texts(messages: Any) -> str:
    return json.dumps([m.to_dict() for m in messages], ensure_ascii=True)


def _cli(cwd: str, url: str, kind: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PANTO_")}
    env.update(XDG_DATA_HOME=str(tmp / "xdg"), XDG_CONFIG_HOME=str(tmp / "xdgc"), HOME=str(tmp))
    if kind == "jsonl":
        env["PANTO_SESSION_DIR"] = url
    else:
        env["PANTO_SESSION_URL"] = url
    return subprocess.run(
        [sys.executable, "-m", "panto", "--model", "mock/anthropic", "--no-extensions", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_nul_and_lone_surrogates_are_stored_visibly_and_resume(
    backend: Any, workdir: str, tmp_path: Path
) -> None:
    with ScriptedServer() as server:
        server.push(_reply_with_bad_escape(), Reply([Text("read it")]), Reply([Text("again")]))
        store = backend.backend.create(workdir)
        sid = store.session_id
        agent = Agent(make_config(server, WIRE), store=store)
        agent.register_tool(
            FunctionTool(
                "cat",
                "cat a file",
                lambda i: "ELF\x00\x01bin\udcff" + i["path"],  # cat of a binary; a bad byte
                {"type": "object", "properties": {"path": {"type": "string"}}},
            )
        )
        agent.submit_user_message("look at \udcffthis\x00")  # an argv that was not UTF-8
        events = run_turn(agent)  # never fails
        assert events[-1].message.text == "read it"
        live = _texts(agent.conversation)
        store.close()

        # every store loads it again, exactly as the agent has it
        loaded = backend.backend.read(sid)
        assert _texts(loaded.conversation) == live
        conv = list(loaded.conversation)
        prompt = conv[0]
        assert prompt.text == f"look at \ufffdthis{NUL_SHOWN_AS}"
        call = conv[1].content[0]
        assert isinstance(call, ToolUse) and call.input == {"path": "x\ufffdy"}
        result = conv[2].content[0]
        assert isinstance(result, ToolResultBlock)
        assert result.content.startswith(f"ELF{NUL_SHOWN_AS}\x01bin\ufffdx\ufffdy\n[panto: ")
        assert "1 NUL byte(s)" in result.content and "2 character(s)" in result.content

        # ... and sends it again: a resumed agent's next request
        store = backend.backend.open(sid)
        again = Agent(
            make_config(server, WIRE),
            store=store,
            conversation=store.load_conversation().conversation,
        )
        again.register_tool(FunctionTool("cat", "cat", lambda i: "", {"type": "object"}))
        again.submit_user_message("once more")
        assert run_turn(again)[-1].message.text == "again"
        body = server.requests[-1].body.decode("utf-8")  # valid UTF-8
        assert "\\u0000" not in body and NUL_SHOWN_AS in body
        again.close()
        store.close()
    # the command line continues it (the last store used: --continue finds it)
    r = _cli(workdir, backend.url, backend.kind, tmp_path, "-p", "next", "--continue")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "You said: next" in r.stdout


def _entry(eid: str, parent: str | None, message: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": eid,
        "parent_id": parent,
        "timestamp": "2026-12-04T10:00:00.000Z",
        "message": message,
    }


@pytest.mark.parametrize(
    ("bad", "shown"),
    [
        ({"role": "developer", "content": [{"type": "text", "text": "hi"}]}, "role 'developer'"),
        ({"role": "assistant", "content": [{"type": "mystery", "x": 1}]}, "'mystery' block"),
        ({"role": "assistant", "content": 7}, None),
    ],
)
def test_unknown_roles_and_shapes_load_as_placeholders(
    backend: Any, workdir: str, tmp_path: Path, bad: dict[str, Any], shown: str | None
) -> None:
    header = {
        "type": "session",
        "version": 1,
        "id": uuid.uuid4().hex,
        "cwd": workdir,
        "created": "2026-12-04T10:00:00.000Z",
    }
    entries = [
        _entry("a0000001", None, Message.user("first").to_dict()),
        _entry("a0000002", "a0000001", bad),
        _entry("a0000003", "a0000002", Message.user("second").to_dict()),
        _entry(
            "a0000004",
            "a0000003",
            Message("assistant", (Text("answer"),), stop_reason="stop").to_dict(),
        ),
    ]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        sid = backend.backend.import_session(header, entries)
        loaded = backend.backend.read(sid)
    assert any(issubclass(w.category, SessionWarning) for w in caught)
    texts = [m.text for m in loaded.conversation]
    assert texts[0] == "first" and texts[-2:] == ["second", "answer"]
    assert len(texts) == 4 and "[panto: " in texts[1]
    if shown:
        assert shown in texts[1]
    r = _cli(workdir, backend.url, backend.kind, tmp_path, "-p", "next", "--continue")
    assert r.returncode == 0, r.stderr
    assert "Traceback" not in r.stderr and "You said: next" in r.stdout
    warned = [line for line in r.stderr.splitlines() if "cannot read" in line]
    assert len(warned) == 1 and warned[0].startswith("panto: warning: "), r.stderr
