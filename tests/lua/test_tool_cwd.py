"""The std tools work in the agent's working directory (``open_agent(cwd=)``),
not in the process's: an embedding program's agent for another project
must read, write and run there."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.agent import PROVIDER

from panto.app import open_agent, open_session
from panto.config import Config
from panto.conversation import Text, ToolUse
from panto.events import ToolResult
from panto.testing import Reply, ScriptedServer


@pytest.mark.parametrize("cache", ["0", "1"])  # eager load, and the lazy start-up cache
def test_std_tools_resolve_relative_paths_against_the_agents_cwd(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: str
) -> None:
    project, elsewhere = tmp_path / "project", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / "a.txt").write_text("alpha\n")
    (elsewhere / "a.txt").write_text("WRONG DIRECTORY\n")
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("PANTO_STARTUP_CACHE", cache)
    wire = "anthropic-messages"
    calls = [
        ToolUse("t1", "read", {"path": "a.txt"}),
        ToolUse("t2", "write", {"path": "sub/b.txt", "content": "beta\n"}),
        ToolUse("t3", "edit", {"path": "a.txt", "old_string": "alpha", "new_string": "gamma"}),
        ToolUse("t4", "bash", {"command": "pwd"}),
        ToolUse("t5", "ls", {"path": "."}),
    ]
    with ScriptedServer() as server:
        # one call per round: the calls of one round run concurrently
        server.push(*(Reply([c]) for c in calls), Reply([Text("done")]))
        config = Config(
            provider=PROVIDER[wire],
            model="test-model",
            base_url=server.base_url(wire),
            api_key="k",
            max_retries=0,
        )
        if cache == "1":  # a first start records the std extensions; the next one is lazy
            open_agent(config, cwd=project, session=None, extensions="builtin").close()
        opened = open_session(config, cwd=project, session=None, extensions="builtin")
        lazy = type(opened.extensions.source).__name__ == "LazyLuaToolSource"
        assert lazy == (cache == "1")
        agent = opened.agent
        try:
            agent.submit_user_message("work here")
            with agent.run() as stream:
                results = {e.call.id: e for e in stream if isinstance(e, ToolResult)}
        finally:
            opened.close()
    assert all(not r.is_error for r in results.values()), results
    assert "alpha" in results["t1"].content
    assert (project / "sub" / "b.txt").read_text() == "beta\n"
    assert (project / "a.txt").read_text() == "gamma\n"
    assert results["t4"].content.strip().splitlines()[0] == str(project)
    assert "a.txt" in results["t5"].content and "sub" in results["t5"].content
    assert (elsewhere / "a.txt").read_text() == "WRONG DIRECTORY\n"
    assert sorted(p.name for p in elsewhere.iterdir()) == ["a.txt"]
