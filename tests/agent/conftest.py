"""Fixtures for the agent suite: a loopback ScriptedServer and agents
pointed at it for either wire (helpers live in support/agent.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from support.agent import WIRES, make_config

from panto.agent import Agent
from panto.testing import ScriptedServer


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s


@pytest.fixture(params=WIRES)
def wire(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_agent(server: ScriptedServer, wire: str) -> Iterator[Callable[..., Agent]]:
    agents: list[Agent] = []

    def make(**kw: Any) -> Agent:
        a = Agent(make_config(server, wire, **kw))
        agents.append(a)
        return a

    yield make
    for a in agents:
        a.close()
