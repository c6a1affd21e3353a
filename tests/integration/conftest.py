"""Fixtures for the integration suite: the Lua runtime wired into the agent
loop and the CLI (helpers in support/integration.py).

``project``: a project directory (with ``.git``, so discovery stops there)
holding ``.panto/extensions/recorder.lua``, trusted (``panto trust``).
``XDG_CONFIG_HOME`` points at a directory holding only that trust, so the
developer's own extensions never load.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support.integration import LuaSetup, write_project  # noqa: E402
from support.trust import trust_project  # noqa: E402

from panto.agent import Agent  # noqa: E402
from panto.config import Config  # noqa: E402
from panto.lua import LuaRuntime, create_source  # noqa: E402
from panto.testing import ScriptedServer  # noqa: E402


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = write_project(tmp_path / "proj")
    (tmp_path / "config").mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    trust_project(root)  # its .panto/extensions load (subprocesses inherit the store)
    return root


@pytest.fixture
def lua(project: Path) -> Iterator[LuaSetup]:
    """A fresh runtime (not the process one) with std + the recorder."""
    rt = LuaRuntime()
    real = project / "real.txt"
    real.write_text("the real file\n")
    config = Config(data={"extensions": {"test.recorder": {"real_path": str(real)}}})
    src, report = create_source(config, cwd=str(project), runtime=rt)
    assert not report.errors, report.errors
    yield LuaSetup(rt, src, report)
    rt.close()


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    with ScriptedServer() as s:
        yield s


@pytest.fixture
def make_agent(server: ScriptedServer, lua: LuaSetup) -> Iterator[Callable[..., Agent]]:
    agents: list[Agent] = []

    def make(*, wire: str = "anthropic-messages", hooks: bool = True, **kw: Any) -> Agent:
        provider = "anthropic" if wire == "anthropic-messages" else "openai"
        kw.setdefault("cache_enabled", False)  # exact bodies; caching: tests/config
        cfg = Config(
            provider=provider,
            model="test-model",
            base_url=server.base_url(wire),
            api_key="sk-test",
            max_retries=0,
            read_timeout=30.0,
            **kw,
        )
        agent = Agent(cfg)
        agent.register_tool_source(lua.source)
        if hooks:
            agent.add_hooks(lua.source.hooks)
        agents.append(agent)
        return agent

    yield make
    for a in agents:
        a.close()
