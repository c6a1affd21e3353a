"""Helpers shared by the agent tests (fixtures are in conftest.py)."""

from __future__ import annotations

import threading
from typing import Any

from panto.agent import Agent
from panto.config import Config
from panto.testing import ScriptedServer
from panto.tools import ToolDecl, ToolOutput, ToolSource

WIRES = ("anthropic-messages", "openai-chat")
PROVIDER = {"anthropic-messages": "anthropic", "openai-chat": "openai"}
TEST_KEY = "sk-test-0123456789abcdef-SECRET"


def make_config(server: ScriptedServer, wire: str, **kw: Any) -> Config:
    defaults: dict[str, Any] = {
        "provider": PROVIDER[wire],
        "model": "test-model",
        "base_url": server.base_url(wire),
        "api_key": TEST_KEY,
        "connect_timeout": 2.0,
        "read_timeout": 5.0,
        "max_retries": 2,
        "retry_base_delay": 0.01,
        "retry_max_delay": 0.05,
        "max_tokens": 1000,
        "cache_enabled": False,  # exact bodies; caching: tests/config/test_caching.py
    }
    defaults.update(kw)
    return Config(**defaults)


def run_turn(agent: Agent) -> list[Any]:
    with agent.run() as stream:
        return list(stream)


class SleepySource(ToolSource):
    """Each call sleeps ``input["s"]`` seconds, all calls of a batch in
    parallel (like the Lua runtime's coroutines); records its batches."""

    def __init__(self, name: str, tools: list[str]) -> None:
        self.name = name
        self._decls = [
            ToolDecl(t, f"{t} tool", {"type": "object", "properties": {"s": {"type": "number"}}})
            for t in tools
        ]
        self.batches: list[tuple[list[str], str]] = []
        self.cancelled = threading.Event()

    def decls(self):
        return self._decls

    def invoke_batch(self, calls):
        self.batches.append(([c.id for c in calls], threading.current_thread().name))
        out: list[ToolOutput | None] = [None] * len(calls)

        def one(i, c):
            if self.cancelled.wait(c.input.get("s", 0)):
                out[i] = ToolOutput("cancelled by source", True)
            else:
                out[i] = ToolOutput(f"{self.name}:{c.name}:{c.id}")

        threads = [threading.Thread(target=one, args=(i, c)) for i, c in enumerate(calls)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        return out

    def cancel(self):
        self.cancelled.set()
