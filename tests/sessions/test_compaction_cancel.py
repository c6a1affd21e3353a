"""A cancelled auto-compaction leaves the conversation and the session
exactly as before it; the prompt that was waiting is resent verbatim, never
fed to the summarizer, and the later compaction names a kept entry
(``first_kept_id`` is never None for auto-compaction).  The REPL's version
(Ctrl-C, then Enter) is tests/repl/test_compaction_notice.py."""

from __future__ import annotations

import threading
from typing import Any

from support.agent import make_config

from panto.agent import Agent
from panto.conversation import Text, Usage
from panto.events import CompactionEnd, CompactionStart
from panto.testing import RecordedRequest, Reply, ScriptedServer

WIRE = "openai-chat"


def _last_user_text(req: RecordedRequest) -> str:
    msgs = [m for m in req.json["messages"] if m["role"] == "user"]
    c = msgs[-1]["content"]
    return c if isinstance(c, str) else "".join(b.get("text", "") for b in c)


class HangOnce:
    """Answers ``ok: <text>`` with a usage that fills the context; the first
    summary request (user text starting with ``<conversation>``) streams
    nothing after its headers until the server closes."""

    def __init__(self) -> None:
        self.summaries = 0
        self.hung = threading.Event()

    def __call__(self, req: RecordedRequest) -> Reply:
        text = _last_user_text(req)
        if text.startswith("<conversation>"):
            self.summaries += 1
            if self.summaries == 1:
                self.hung.set()
                return Reply([Text("never sent")], stall_after=0, stall=30)
            return Reply([Text("SUMMARY of hello one")])
        return Reply([Text(f"ok: {text}")], usage=Usage(1400, output_tokens=5))


def _entries(backend: Any, sid: str) -> list[dict[str, Any]]:
    return list(backend.backend.export(sid))[1:]


def test_cancelled_auto_compaction_changes_nothing_and_keeps_the_prompt(
    backend: Any, workdir: str
) -> None:
    hang = HangOnce()
    with ScriptedServer(responder=hang) as server:
        config = make_config(
            server,
            WIRE,
            models={"openai/test-model": {"context_window": 1500}},
            compaction_reserve_tokens=100,
        )
        store = backend.backend.create(workdir)
        sid = store.session_id
        agent = Agent(config, store=store, system_prompt="You are panto.")
        agent.submit_user_message("hello one")
        with agent.run() as s:
            list(s)
        agent.submit_user_message("prompt two: rename div to divide everywhere")
        before = list(agent.conversation)
        entries_before = _entries(backend, sid)

        stream = agent.run()
        seen: list[Any] = []

        def cancel_when_hung() -> None:
            hang.hung.wait(10)
            stream.close()

        t = threading.Thread(target=cancel_when_hung)
        t.start()
        for ev in stream:  # a close from another thread ends the iteration
            seen.append(ev)
        t.join()
        assert hang.hung.is_set()
        assert any(isinstance(e, CompactionStart) for e in seen)
        assert not any(isinstance(e, CompactionEnd) for e in seen)
        # nothing changed: memory and the session
        assert list(agent.conversation) == before
        assert _entries(backend, sid) == entries_before
        assert not [e for e in _entries(backend, sid) if e["type"] == "compaction"]

        # the prompt is taken back out (as the REPL does, without entry ids)
        # and sent again
        store.close()
        store = backend.backend.open(sid)
        loaded = store.load_conversation()
        assert loaded.dangling_user == "prompt two: rename div to divide everywhere"
        agent.store = store
        agent.conversation.clear()
        agent.conversation.extend(loaded.conversation)
        agent.submit_user_message("prompt two: rename div to divide everywhere")
        with agent.run() as s:
            events = list(s)
        agent.close()
        store.close()

    ends = [e for e in events if isinstance(e, CompactionEnd)]
    assert len(ends) == 1 and ends[0].error is None and ends[0].entry_id
    summary_req = [r for r in server.requests if _last_user_text(r).startswith("<conv")][-1]
    assert "prompt two" not in _last_user_text(summary_req)  # never fed to the summarizer
    last = server.requests[-1]
    assert _last_user_text(last) == "prompt two: rename div to divide everywhere"
    assert "SUMMARY of hello one" in str(last.json["messages"])
    compactions = [e for e in _entries(backend, sid) if e["type"] == "compaction"]
    assert len(compactions) == 1 and compactions[0]["first_kept_id"] is not None
    # a resume rebuilds the same context: summary, the prompt, its answer
    reread = backend.backend.read(sid).conversation
    texts = [m.text for m in reread if m.role != "system"]
    assert texts[1:] == [
        "prompt two: rename div to divide everywhere",
        "ok: prompt two: rename div to divide everywhere",
    ]


def test_async_cancel_during_auto_compaction_changes_nothing() -> None:
    """The async driver: the summary is a nested turn of the same driver;
    cancelling the turn's stream cancels it too, and nothing is recorded."""
    import asyncio

    from panto.sessions.memory import MemoryStore

    hang = HangOnce()
    store = MemoryStore()
    with ScriptedServer(responder=hang) as server:
        config = make_config(
            server,
            WIRE,
            models={"openai/test-model": {"context_window": 1500}},
            compaction_reserve_tokens=100,
        )
        agent = Agent(config, store=store)
        agent.submit_user_message("hello one")
        with agent.run() as s:
            list(s)
        agent.submit_user_message("prompt two")
        before = list(agent.conversation)

        async def main() -> list[Any]:
            stream = agent.run_async()
            seen: list[Any] = []

            async def consume() -> None:
                async for ev in stream:
                    seen.append(ev)

            task = asyncio.create_task(consume())
            assert await asyncio.to_thread(hang.hung.wait, 10)
            stream.close()
            await asyncio.wait_for(task, 10)
            return seen

        seen = asyncio.run(main())
        agent.close()
    assert any(isinstance(e, CompactionStart) for e in seen)
    assert not any(isinstance(e, CompactionEnd) for e in seen)
    assert list(agent.conversation) == before
    assert not [e for e in store.entries if e.get("type") == "compaction"]


def test_async_auto_compaction_is_a_nested_async_turn() -> None:
    """Issue 24: the async driver runs the summarizing turn itself, as a
    nested ``AsyncStream`` on its own loop and async HTTP client (it was a
    sync ``Stream`` on ``http11`` in a worker thread): the summary request
    comes on the async turn's kept-alive connection, not on the sync
    client's (which served the first, sync turn)."""
    import asyncio

    from panto.agent.stream import AsyncStream
    from panto.sessions.memory import MemoryStore

    hang = HangOnce()
    hang.summaries = 1  # the summary is answered at once
    store = MemoryStore()
    with ScriptedServer(responder=hang) as server:
        config = make_config(
            server,
            WIRE,
            models={"openai/test-model": {"context_window": 1500}},
            compaction_reserve_tokens=100,
        )
        agent = Agent(config, store=store)
        agent.submit_user_message("hello one")
        with agent.run() as s:
            list(s)
        agent.submit_user_message("prompt two")
        children: list[Any] = []

        async def main() -> list[Any]:
            stream = agent.run_async()
            seen: list[Any] = []
            async for ev in stream:
                seen.append(ev)
                if isinstance(ev, CompactionStart):
                    # the next step runs the summary: watch for its child stream
                    nxt = asyncio.ensure_future(stream.__anext__())
                    while not nxt.done():
                        if stream._child is not None:  # noqa: SLF001 - what runs the summary
                            children.append(stream._child)  # noqa: SLF001
                        await asyncio.sleep(0)
                    seen.append(nxt.result())
            return seen

        seen = asyncio.run(main())
        agent.close()
    ends = [e for e in seen if isinstance(e, CompactionEnd)]
    assert len(ends) == 1 and ends[0].error is None
    assert children and all(isinstance(c, AsyncStream) for c in children)
    summary = [r for r in server.requests if _last_user_text(r).startswith("<conversation>")]
    turn_requests = server.requests[1:]  # after the sync warm-up turn
    assert len(summary) == 1 and summary[0] in turn_requests
    sync_connection = server.requests[0].client
    assert {r.client for r in turn_requests} == {turn_requests[-1].client} != {sync_connection}
    assert "SUMMARY of hello one" in str(server.requests[-1].json["messages"])
    assert [e for e in store.entries if e.get("type") == "compaction"]
