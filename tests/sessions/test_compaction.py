"""Agent.compact against the loopback server: the summarizing request, the
compaction entry, the rebuilt context (a resumed agent sends the same next
request), the before_compact hook, and failure leaving everything as it was."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.sessions import copy_session, drain, last_request_of_turn

from panto.agent import Agent, AgentHooks
from panto.agent.compaction import (
    DEFAULT_COMPACTION_PROMPT,
    MAX_TOOL_RESULT_CHARS,
    SUMMARIZER_SYSTEM,
    transcript,
)
from panto.config import Config
from panto.conversation import Message, Text, Thinking, ToolResultBlock, ToolUse, Usage
from panto.errors import PantoError, ProviderError
from panto.sessions import FSJSONLStore, compaction_summary_message, read_session
from panto.testing import HTTPError, Reply, ScriptedServer
from panto.tools import FunctionTool

KEY = "sk-test-COMPACTSECRET-0123456789"
SUMMARY = "The user asked for 2 + 3; the add tool returned 5."


@pytest.fixture(params=["anthropic", "openai"])
def wire(request: pytest.FixtureRequest) -> Iterator[str]:
    yield request.param


def _config(wire: str, url: str) -> Config:
    return Config(
        provider=wire,
        model="test-model",
        base_url=url + ("/v1" if wire == "openai" else ""),
        api_key=KEY,
        system_prompt="You are panto.",
        max_retries=0,
    )


def _tool() -> FunctionTool:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
    return FunctionTool("add", "Add two numbers", lambda i: str(i["a"] + i["b"]), schema)


def _turn() -> list[Reply]:
    return [
        Reply(
            [Thinking("secret scratch work", "sig-1"), ToolUse("toolu_1", "add", {"a": 2, "b": 3})]
        ),
        Reply(
            [Text("2 + 3 = 5.")],
            usage=Usage(input_tokens=900, cache_read_tokens=100, output_tokens=20),
        ),
    ]


def _user_text(req: Any) -> str:
    """The text of the summarizing request's (single) user message."""
    [msg] = [m for m in req.json["messages"] if m["role"] == "user"]
    c = msg["content"]
    return c if isinstance(c, str) else "".join(b.get("text", "") for b in c)


def _system_text(req: Any) -> str:
    body = req.json
    if "system" in body:
        s = body["system"]
        return s if isinstance(s, str) else "".join(b["text"] for b in s)
    return next(m["content"] for m in body["messages"] if m["role"] == "system")


def test_compact_summarizes_persists_and_resumes_identically(
    sessions_dir: Path, workdir: str, tmp_path: Path, wire: str
) -> None:
    script = [*_turn(), Reply([Text(SUMMARY)]), Reply([Text("next answer")])]
    with ScriptedServer(script) as server:
        store = FSJSONLStore(sessions_dir, workdir)
        agent = Agent(_config(wire, server.url), store=store)
        agent.register_tool(_tool())
        agent.submit_user_message("what is 2 + 3?")
        drain(agent)
        before = list(agent.conversation)
        result = agent.compact(extra="keep the numbers")
        assert result is not None
        summary_req = server.requests[2]

        # the summarizing request: a transcript, no tools, no thinking
        assert "tools" not in summary_req.json
        assert _system_text(summary_req) == SUMMARIZER_SYSTEM
        text = _user_text(summary_req)
        assert text.startswith("<conversation>\n## user\nwhat is 2 + 3?\n\n## assistant\n")
        assert '[tool call] add({"a": 2, "b": 3})' in text
        assert "[tool result] add:\n5" in text
        assert "secret scratch work" not in text
        assert text.endswith(
            DEFAULT_COMPACTION_PROMPT
            + "\n\nAdditional instructions from the user:\nkeep the numbers"
        )

        assert result.summary == SUMMARY
        assert result.messages_before == 4  # user, assistant, tool, assistant
        assert result.tokens_before == 900 + 100 + 20  # the last reply's context
        system = before[0]
        assert list(agent.conversation) == [system, compaction_summary_message(SUMMARY)]

        # on disk: the old messages stay, a compaction entry omits them
        entries = [json.loads(line) for line in store.path.read_text().splitlines()]
        comp = entries[-1]
        assert comp["type"] == "compaction" and comp["summary"] == SUMMARY
        assert comp["first_kept_id"] is None and comp["tokens_before"] == 1020
        assert sum(e["type"] == "message" for e in entries) == 5
        loaded = read_session(store.path)
        assert loaded.conversation == agent.conversation
        assert loaded.entry_ids[1] is None
        saved = copy_session(store.path, tmp_path / "copy")
        original = last_request_of_turn(agent, store, server, "and now?")

    with ScriptedServer([Reply([Text("next answer")])]) as server2:
        store2 = FSJSONLStore.open(saved)
        agent2 = Agent(
            _config(wire, server2.url),
            store=store2,
            conversation=store2.load_conversation().conversation,
        )
        agent2.register_tool(_tool())
        resumed = last_request_of_turn(agent2, store2, server2, "and now?")
    assert resumed.body == original.body
    assert b"what is 2 + 3" not in original.body  # the summary replaced it
    assert SUMMARY.encode() in original.body


class _PromptHook(AgentHooks):
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    def before_compact(self, info: Any) -> str | None:
        self.seen.append(dict(info))
        return "CUSTOM: summarize in one line"


def test_before_compact_hook_supplies_the_prompt(sessions_dir: Path, workdir: str) -> None:
    with ScriptedServer([Reply([Text("hi")]), Reply([Text("one line")])]) as server:
        agent = Agent(_config("anthropic", server.url))
        hook = _PromptHook()
        agent.add_hooks(hook)
        agent.submit_user_message("hello")
        drain(agent)
        res = agent.compact(prompt="caller prompt", extra="x")
        agent.close()
    assert res is not None and res.summary == "one line"
    text = _user_text(server.requests[-1])
    assert text.endswith(
        "CUSTOM: summarize in one line\n\nAdditional instructions from the user:\nx"
    )
    assert "caller prompt" not in text
    [info] = hook.seen
    assert info["prompt"] == "caller prompt" and info["extra"] == "x" and info["messages"] == 3


@pytest.mark.parametrize(
    "failure",
    [HTTPError(500, {"error": {"type": "api_error", "message": "boom"}}), Reply([])],
    ids=["http-500", "empty-summary"],
)
def test_a_failed_compaction_changes_nothing(
    sessions_dir: Path, workdir: str, failure: Any
) -> None:
    with ScriptedServer([Reply([Text("hi")]), failure]) as server:
        store = FSJSONLStore(sessions_dir, workdir)
        agent = Agent(_config("anthropic", server.url), store=store)
        agent.submit_user_message("hello")
        drain(agent)
        before = list(agent.conversation)
        on_disk = store.path.read_bytes()
        with pytest.raises(PantoError) as info:
            agent.compact()
        if isinstance(failure, HTTPError):
            assert isinstance(info.value, ProviderError) and info.value.status == 500
        else:
            assert "returned no summary" in str(info.value)
        assert list(agent.conversation) == before
        assert store.path.read_bytes() == on_disk
        agent.close()
        store.close()


def test_nothing_to_compact(sessions_dir: Path, workdir: str) -> None:
    store = FSJSONLStore(sessions_dir, workdir)
    agent = Agent(Config(provider="mock", model="anthropic", system_prompt="sys"), store=store)
    assert agent.compact() is None
    assert [m.role for m in agent.conversation] == ["system"]
    store.close()
    assert not store.path.exists()


def test_transcript_clips_long_tool_results_and_marks_errors() -> None:
    long = "x" * (MAX_TOOL_RESULT_CHARS * 3)
    msgs = [
        Message("assistant", (ToolUse("t1", "bash", {"command": "yes"}),)),
        Message("tool", (ToolResultBlock("t1", long, is_error=True),)),
        Message("tool", (ToolResultBlock("unknown-id", "short"),)),
    ]
    out = transcript(msgs)
    assert "[tool result (error)] bash:\n" in out
    assert f"[... {MAX_TOOL_RESULT_CHARS * 2} characters omitted ...]" in out
    assert len(out) < MAX_TOOL_RESULT_CHARS + 200
    assert "[tool result] unknown-id:\nshort" in out


def test_ctrl_c_during_compaction_changes_nothing(sessions_dir: Path, workdir: str) -> None:
    import signal
    import threading
    import time

    stalled = Reply([Text("a summary that never finishes")], stall_after=2, stall=20)
    with ScriptedServer([Reply([Text("hi")]), stalled]) as server:
        store = FSJSONLStore(sessions_dir, workdir)
        agent = Agent(_config("anthropic", server.url), store=store)
        agent.submit_user_message("hello")
        drain(agent)
        before, on_disk = list(agent.conversation), store.path.read_bytes()
        # a real SIGINT to the main thread, as Ctrl-C sends (it interrupts the
        # blocked read; interrupt_main would wait for the next bytecode).  The
        # handler is Python's own: a backgrounded test run ignores SIGINT.
        main = threading.main_thread().ident
        assert main is not None
        timer = threading.Timer(0.3, signal.pthread_kill, (main, signal.SIGINT))
        previous = signal.signal(signal.SIGINT, signal.default_int_handler)
        t0 = time.perf_counter()
        timer.start()
        try:
            with pytest.raises(KeyboardInterrupt):
                agent.compact()
        finally:
            timer.cancel()
            signal.signal(signal.SIGINT, previous)
        assert time.perf_counter() - t0 < 5
        assert list(agent.conversation) == before
        assert store.path.read_bytes() == on_disk
        agent.close()
        store.close()
