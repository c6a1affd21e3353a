"""Hooks see the permission decision and add their own: a Lua extension's
``before_tool_call`` handler gets ``call.permission`` and may return
``{permission = "deny" | "ask" | "allow"}``; Python hooks read
``panto.hooks.current_permission()`` and return
``ToolCallDecision(call, permission=...)``."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.repl import Env

from panto.conversation import Text, ToolUse
from panto.hooks import AgentHooks, ToolCallDecision, current_permission
from panto.policy.permissions import Permissions, RuleSet
from panto.testing import Reply, ScriptedServer
from panto.tools import FunctionTool, ToolCall

GUARD = """
return {
  name = "me.guard",
  activate = function()
    panto.ext.on("before_tool_call", function(call)
      local cmd = call.input.command or ""
      local p = call.permission
      if cmd:find("forbidden") then
        return { permission = "deny", reason = "guard: the rules said " .. p.decision }
      end
      if cmd:find("blessed") then
        return { permission = "allow", reason = "guard blesses it" }
      end
    end)
  end,
}
"""


def test_a_lua_hook_sees_the_decision_and_adds_its_own(
    env: Env, user_config: Callable[[str], Path]
) -> None:
    cfg = user_config('[permissions]\nask = ["Bash(touch blessed)", "Bash(touch asked)"]\n')
    (cfg.parent / "extensions").mkdir()
    (cfg.parent / "extensions" / "guard.lua").write_text(GUARD)

    def result(prompt: str) -> str:
        r = env.run("-p", prompt, "--model", "mock/anthropic", "--output-format", "json")
        doc = json.loads(r.stdout)
        [res] = [b for m in doc["messages"] for b in m["content"] if b.get("type") == "tool_result"]
        return str(res["content"])

    # -p runs what default mode would ask about; the hook denies it
    text = result("call bash touch forbidden")
    assert not (env.cwd / "forbidden").exists()
    assert "guard: the rules said ask" in text
    # an ask rule is a denial under -p; the hook's allow answers the question
    result("call bash touch asked")
    assert not (env.cwd / "asked").exists()
    result("call bash touch blessed")
    assert (env.cwd / "blessed").exists()


def test_a_python_hook_sees_the_decision(tmp_path: Path) -> None:
    from panto.agent import Agent
    from panto.config import Config

    seen: list[Any] = []

    class Hook(AgentHooks):
        def before_tool_call(self, call: ToolCall) -> ToolCallDecision:
            seen.append(current_permission())
            return ToolCallDecision(call, permission="ask", reason="hook wants a human")

    ran: list[str] = []
    tool = FunctionTool("note", "note it", lambda inp: ran.append("x") or "ok")
    rs = RuleSet.from_layers(
        [("user (t)", {"allow": ["note"]})], cwd=str(tmp_path), root=str(tmp_path), home="/"
    )
    gate = Permissions(rs, "dont-ask", cwd=str(tmp_path))
    with ScriptedServer() as server:
        server.push(Reply([ToolUse("c1", "note", {})]), Reply([Text("done")]))
        cfg = Config(provider="anthropic", model="m", base_url=server.url, api_key="k")
        agent = Agent(cfg)
        agent.register_tool(tool)
        agent.add_hooks(Hook())
        agent.permissions = gate
        agent.submit_user_message("go")
        with agent.run() as stream:
            list(stream)
    assert seen[0]["decision"] == "allow" and seen[0]["rule"] == "note"
    assert ran == []  # the hook asked; nobody can answer: denied
    results = [
        b for m in agent.conversation for b in m.content if type(b).__name__ == "ToolResultBlock"
    ]
    assert results[0].is_error and "hook wants a human" in str(results[0].content)
