"""End to end: an Agent persisting to an FSJSONLStore against the loopback
server; the resumed conversation produces a byte-identical next request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.sessions import (
    agent_stack,
    conversation_rounds,
    copy_session,
    drain,
    flat,
    last_request_of_turn,
)

from panto.conversation import Conversation, Text, Thinking, ToolUse
from panto.sessions import FSJSONLStore, read_session

KEY = "sk-test-SESSIONSECRET-0123456789abcdef"


def _add(inp: dict[str, Any]) -> str:
    return str(inp["a"] + inp["b"])


@pytest.fixture(params=["anthropic", "openai"])
def wire(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


def _config(config_cls: Any, provider: str, url: str) -> Any:
    base = url + ("/v1" if provider == "openai" else "")
    return config_cls(
        provider=provider,
        model="test-model",
        base_url=base,
        api_key=KEY,
        system_prompt="You are panto. Be brief.",
        max_retries=0,
        thinking_budget=1024 if provider == "anthropic" else None,
    )


def test_resumed_conversation_sends_a_byte_identical_request(
    sessions_dir: Path, workdir: str, tmp_path: Path, wire: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    agent_cls, config_cls, reply, server_cls = agent_stack()
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    from panto.tools import FunctionTool

    tool = FunctionTool(
        "add",
        "Add two numbers",
        _add,
        {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}},
    )
    turn1 = [
        reply(
            [
                Thinking("I will add them.", "sig-EqQKGAE+/=="),
                Text("Adding."),
                ToolUse("toolu_1", "add", {"a": 2, "b": 3}),
                ToolUse("toolu_2", "add", {"a": 10, "b": -4}),
            ]
        ),
        reply([Thinking("easy", "sig-2"), Text("2 + 3 = 5 and 10 - 4 = 6.")]),
    ]
    turn2 = [reply([Text("ok")])]

    # the original process: one multi-round turn with tools, then a second prompt
    with server_cls([*turn1, *turn2]) as server:
        store = FSJSONLStore(sessions_dir, workdir)
        agent = agent_cls(_config(config_cls, wire, server.url), store=store)
        agent.register_tool(tool)
        agent.submit_user_message("what is 2 + 3, and 10 - 4?")
        drain(agent)
        after_turn1 = Conversation(agent.conversation)
        # everything the turn produced is on disk, in order
        assert read_session(store.path).conversation == after_turn1
        saved = copy_session(store.path, tmp_path / "copy")
        original = last_request_of_turn(agent, store, server, "and now?")
    assert len(server.requests) == 3

    # a new process resumes the copy taken after turn 1
    with server_cls(list(turn2)) as server2:
        store2 = FSJSONLStore.open(saved)
        loaded = store2.load_conversation()
        assert loaded.dangling_user is None
        assert loaded.conversation == after_turn1
        agent2 = agent_cls(
            _config(config_cls, wire, server2.url),
            store=store2,
            conversation=loaded.conversation,
        )
        agent2.register_tool(tool)
        resumed = last_request_of_turn(agent2, store2, server2, "and now?")
    assert resumed.body == original.body
    assert resumed.path == original.path
    assert read_session(saved).conversation == read_session(store.path).conversation

    # no key or authorization header in any session file
    for p in [*sessions_dir.rglob("*"), *saved.parent.rglob("*")]:
        if p.is_file():
            data = p.read_bytes()
            assert KEY.encode() not in data
            assert b"authorization" not in data.lower() and b"x-api-key" not in data.lower()


def test_round_trip_serializes_identically(
    sessions_dir: Path, workdir: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Request bodies built from the stored and the loaded conversation are
    identical bytes, for both wires (no Agent needed)."""
    from panto.config import Config
    from panto.providers import make_provider

    rounds = conversation_rounds()[:7]
    with FSJSONLStore(sessions_dir, workdir) as store:
        for batch in rounds:
            store.append_messages(batch)
    loaded = read_session(store.path).conversation
    for provider in ("anthropic", "openai"):
        cfg = Config(provider=provider, model="m", base_url="http://127.0.0.1:9", api_key=KEY)
        prov = make_provider(cfg)
        a = prov.build_request(flat(rounds), []).body
        b = prov.build_request(list(loaded), []).body
        assert a == b
        json.loads(a)
