"""Helpers shared by the agent tests (fixtures are in conftest.py)."""

from __future__ import annotations

from typing import Any

from panto.agent import Agent
from panto.config import Config
from panto.testing import ScriptedServer

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
