"""``before_request`` / ``after_response`` hooks (Python side) against a
loopback server: a retry re-sends the hooked request and reports to
``after_response`` again, the hook never sees the key
yet what it returns is sent with the key put back, a failing hook is
skipped, an unchanged body is sent byte for byte."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from panto.agent import Agent
from panto.config import Config
from panto.conversation import Text, Usage
from panto.hooks import AgentHooks
from panto.testing import HTTPError, Reply, ScriptedServer

KEY = "sk-hook-test-secret-9876543210"


class Recorder(AgentHooks):
    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []
        self.responses: list[dict[str, Any]] = []

    def before_request(self, request: Mapping[str, Any]) -> Mapping[str, Any] | None:
        self.seen.append(json.loads(json.dumps(request)))
        headers = dict(request["headers"])
        headers["x-hooked"] = str(len(self.seen))
        # the placeholder moved to another header comes back as the key
        auth = headers.get("x-api-key") or headers.get("authorization", "")
        headers["x-moved-key"] = auth
        body = dict(request["body"])
        body["metadata"] = {"user_id": "hooked"}
        return {**request, "headers": headers, "body": body}

    def after_response(self, info: Mapping[str, Any]) -> None:
        self.responses.append(dict(info))


class Broken(AgentHooks):
    def before_request(self, request: Mapping[str, Any]) -> Mapping[str, Any] | None:
        raise RuntimeError("boom")


def _config(server: ScriptedServer, wire: str) -> Config:
    return Config(
        provider="anthropic" if wire == "anthropic-messages" else "openai",
        model="m",
        base_url=server.base_url(wire),
        api_key=KEY,
        retry_base_delay=0.01,
        read_timeout=10.0,
    )


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
def test_retry_passes_both_hooks_and_the_key_stays_hidden(wire: str) -> None:
    usage = Usage(input_tokens=7, output_tokens=2)
    with ScriptedServer([HTTPError(503), Reply([Text("ok")], usage=usage)]) as server:
        agent = Agent(_config(server, wire))
        rec = Recorder()
        agent.add_hooks(Broken())  # skipped (logged); the next hook still runs
        agent.add_hooks(rec)
        agent.submit_user_message("hi")
        with agent.run() as stream:
            list(stream)
        reqs = server.requests
    # one request built (and hooked) per round; the retry re-sends it
    assert len(reqs) == 2 and len(rec.seen) == 1
    assert [r.headers["x-hooked"] for r in reqs] == ["1", "1"]
    assert all(r.json["metadata"] == {"user_id": "hooked"} for r in reqs)
    assert all(KEY in r.headers["x-moved-key"] for r in reqs)
    assert KEY not in json.dumps(rec.seen)
    assert "[panto-redacted-secret-1]" in json.dumps(rec.seen[0]["headers"])
    assert rec.seen[0]["model"] == "m" and rec.seen[0]["wire"] == wire
    failed, ok = rec.responses
    assert failed["status"] == 503 and failed["error"] and failed["usage"] is None
    assert KEY not in failed["error"]
    assert ok["error"] is None and ok["stop_reason"] == "stop"
    assert ok["usage"]["input_tokens"] == 7 and ok["usage"]["output_tokens"] == 2


def test_a_hook_returning_nothing_leaves_the_bytes_alone() -> None:
    class Quiet(AgentHooks):
        calls = 0

        def before_request(self, request: Mapping[str, Any]) -> Mapping[str, Any] | None:
            Quiet.calls += 1
            return dict(request)  # the same content: nothing to re-encode

    with ScriptedServer([Reply([Text("a")]), Reply([Text("b")])]) as server:
        agent = Agent(_config(server, "anthropic-messages"))
        agent.submit_user_message("hi")
        with agent.run() as stream:
            list(stream)
        plain = server.requests[0].body
        server.reset()
        server.push(Reply([Text("a")]))
        other = Agent(_config(server, "anthropic-messages"))
        other.add_hooks(Quiet())
        other.submit_user_message("hi")
        with other.run() as stream:
            list(stream)
        hooked = server.requests[0].body
    assert Quiet.calls == 1
    assert hooked == plain


def test_run_async_calls_before_request_hooks_off_the_event_loop() -> None:
    """A ``before_request`` hook may block (a Lua handler may sleep or call
    out): with many sessions on one loop it must not run on the loop's
    thread, where it would stall every other session."""
    import asyncio
    import threading

    class Where(AgentHooks):
        def __init__(self) -> None:
            self.threads: list[int] = []

        def before_request(self, request: Mapping[str, Any]) -> Mapping[str, Any] | None:
            self.threads.append(threading.get_ident())
            return None

    where = Where()

    async def main() -> int:
        with ScriptedServer([Reply([Text("ok")])]) as server:
            agent = Agent(_config(server, "anthropic-messages"))
            agent.add_hooks(where)
            await agent.asubmit_user_message("hi")
            async for _ in agent.run_async():
                pass
            await agent.aclose()
        return threading.get_ident()

    loop_thread = asyncio.run(main())
    assert len(where.threads) == 1
    assert where.threads[0] != loop_thread, "before_request ran on the event loop's thread"


def test_an_extension_http_provider_builds_its_request_off_the_loop() -> None:
    """Its ``prepare`` is Lua (it may block): the async driver builds its
    requests in a worker thread (``Provider.build_blocks``); a built-in
    provider's on the loop."""
    from types import SimpleNamespace

    from panto.providers.anthropic import AnthropicProvider
    from panto.providers.extension import _http_provider

    cfg = Config(provider="anthropic", model="m", base_url="http://127.0.0.1:9", api_key=KEY)
    ext = SimpleNamespace(name="x", origin="test", prepare=lambda info: {})
    assert _http_provider(AnthropicProvider, ext, cfg).build_blocks  # type: ignore[arg-type]
    assert not AnthropicProvider(cfg).build_blocks
