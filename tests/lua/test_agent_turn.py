"""What it must show, item 7: an agent turn against the loopback server where
the model calls read, then edit, then bash (running the project's tests) and
the file really changes on disk."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from panto.agent import Agent
from panto.config import Config
from panto.conversation import Text, ToolUse
from panto.events import MessageComplete, ToolResult
from panto.lua import LuaRuntime, LuaToolSource
from panto.testing import Reply, ScriptedServer

BUGGY = "def add(a, b):\n    return a - b\n"
TEST = (
    "from calc import add\n\n\n"
    "def test_add():\n    assert add(2, 3) == 5\n\n\n"
    "if __name__ == '__main__':\n    test_add()\n    print('calc tests passed')\n"
)


@pytest.mark.parametrize("wire", ["anthropic-messages", "openai-chat"])
def test_read_edit_bash_turn(runtime: LuaRuntime, tmp_path: Path, wire: str) -> None:
    calc = tmp_path / "calc.py"
    calc.write_text(BUGGY)
    (tmp_path / "test_calc.py").write_text(TEST)
    command = f"cd {tmp_path} && {sys.executable} test_calc.py"
    script = [
        Reply([Text("Let me look."), ToolUse("call_1", "read", {"path": str(calc)})]),
        Reply(
            [
                ToolUse(
                    "call_2",
                    "edit",
                    {
                        "path": str(calc),
                        "old_string": "return a - b",
                        "new_string": "return a + b",
                    },
                )
            ]
        ),
        Reply([ToolUse("call_3", "bash", {"command": command, "timeout": 60})]),
        Reply([Text("Fixed: add now adds.")]),
    ]
    with ScriptedServer(script) as server:
        provider = "anthropic" if wire == "anthropic-messages" else "openai"
        config = Config(
            provider=provider,
            model="test-model",
            base_url=server.base_url(wire),
            api_key="sk-test",
            max_retries=0,
            read_timeout=30.0,
        )
        agent = Agent(config)
        agent.register_tool_source(LuaToolSource(runtime))
        agent.submit_user_message("the calc test fails; fix it")
        with agent.run() as stream:
            events: list[Any] = list(stream)
        results = [e for e in events if isinstance(e, ToolResult)]
        assert [r.call.name for r in results] == ["read", "edit", "bash"]
        contents = [r.content for r in results]
        assert len(contents) == 3, events
        assert "return a - b" in contents[0]  # read showed the file
        assert "Edited" in contents[1]  # edit succeeded
        assert "calc tests passed" in contents[2]  # bash ran the tests
        assert not any(r.is_error for r in results), contents
        final = [e for e in events if isinstance(e, MessageComplete)][-1]
        assert final.final
        # the tool definitions reached the provider
        body = server.requests[0].json
        names = {(t.get("function") or {}).get("name") or t.get("name") for t in body["tools"]}
        assert {"read", "edit", "bash", "write"} <= names
    assert calc.read_text() == "def add(a, b):\n    return a + b\n"
