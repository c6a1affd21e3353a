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
