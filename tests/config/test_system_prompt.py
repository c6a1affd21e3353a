"""The system prompt from parts (panto.system_prompt) and what reaches the
wire: requests to the loopback server carry the working directory and every
AGENTS.md level, in order."""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.config import write
from support.trust import trust_project

from panto import system_prompt as sp
from panto.app import open_session
from panto.config import Config
from panto.conversation import Text
from panto.testing import Reply, ScriptedServer
from panto.tools import ToolDecl

WIRES = ("anthropic-messages", "openai-chat")
PROVIDER = {"anthropic-messages": "anthropic", "openai-chat": "openai"}


def system_of(body: dict[str, Any], wire: str) -> str:
    """The system prompt text of a request body, whichever shape it has."""
    if wire == "anthropic-messages":
        s = body.get("system", "")
        return s if isinstance(s, str) else "\n\n".join(b["text"] for b in s)
    first = body["messages"][0]
    assert first["role"] == "system"
    c = first["content"]
    return c if isinstance(c, str) else "\n\n".join(b["text"] for b in c)


@pytest.fixture
def tree(tmp_path: Path, user_dir: Path) -> Path:
    """A repository with context files at three levels plus the user's;
    returns the working directory (two levels below the root)."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    write(user_dir / "AGENTS.md", "USER-LEVEL rules")
    write(root / "AGENTS.md", "ROOT-LEVEL rules")
    write(root / "CLAUDE.md", "ROOT-CLAUDE ignored: AGENTS.md wins")
    write(root / "pkg" / "CLAUDE.md", "PKG-LEVEL from CLAUDE.md")
    write(root / "pkg" / "mod" / "AGENTS.md", "MOD-LEVEL rules")
    write(tmp_path / "AGENTS.md", "ABOVE-REPO never read")
    return root / "pkg" / "mod"


@pytest.mark.parametrize("wire", WIRES)
def test_request_carries_cwd_and_every_agents_level_in_order(tree: Path, wire: str) -> None:
    with ScriptedServer() as server:
        server.push(Reply([Text("ok")]))
        config = Config(
            provider=PROVIDER[wire],
            model="m",
            base_url=server.base_url(wire),
            api_key="sk-test",
            max_retries=0,
        )
        tool = ToolDecl("lookup", "Look a word up. Returns its meaning.")
        with open_session(
            config, cwd=tree, session=None, extensions=False, tools=[_Tool(tool)]
        ) as s:
            s.agent.submit_user_message("hi")
            with s.agent.run() as stream:
                list(stream)
        text = system_of(server.requests[0].json, wire)
    assert f"Working directory: {tree}" in text
    assert "Git repository: yes" in text
    assert "- lookup: Look a word up." in text
    order = [
        text.index(k)
        for k in ("You are panto", "USER-LEVEL", "ROOT-LEVEL", "PKG-LEVEL", "MOD-LEVEL")
    ]
    assert order == sorted(order)
    assert str(tree.parents[1] / "AGENTS.md") in text
    assert "ROOT-CLAUDE" not in text and "ABOVE-REPO" not in text


class _Tool:
    def __init__(self, decl: ToolDecl) -> None:
        self.decl = decl

    def invoke(self, input: dict[str, Any]) -> str:
        return "x"


def test_overrides_replace_the_base_and_appends_come_last(tree: Path, user_dir: Path) -> None:
    root = tree.parents[1]
    write(user_dir / "config.toml", 'system_prompt = "FROM-USER-CONFIG"\n')
    write(user_dir / "APPEND_SYSTEM.md", "USER-APPEND")
    c = Config.load(cwd=tree)
    p = sp.build(c, cwd=tree)
    assert p.parts[0].text == "FROM-USER-CONFIG" and p.parts[0].origin.startswith("config (user")
    write(root / ".panto" / "SYSTEM.md", "PROJECT-SYSTEM")
    write(root / ".panto" / "APPEND_SYSTEM.md", "PROJECT-APPEND")
    c = Config.load(cwd=tree, overrides={"append_system_prompt": "CONFIG-APPEND"})
    p = sp.build(c, cwd=tree, append_system_prompt="ARG-APPEND")
    assert p.parts[0].text == "PROJECT-SYSTEM"
    assert p.parts[0].origin.endswith(os.path.join(".panto", "SYSTEM.md"))
    kinds = [q.kind for q in p.parts]
    assert kinds == ["base", "context", "context", "context", "context", *["append"] * 4]
    tail = [q.text for q in p.parts if q.kind == "append"]
    assert tail == ["USER-APPEND", "PROJECT-APPEND", "CONFIG-APPEND", "ARG-APPEND"]
    # an explicit prompt (--system-prompt, or the env/cli layers) beats SYSTEM.md
    assert sp.build(c, cwd=tree, system_prompt="ARG").parts[0].text == "ARG"
    c = Config.load(env={"PANTO_SYSTEM_PROMPT": "ENV"}, cwd=tree)
    assert sp.build(c, cwd=tree).parts[0].text == "ENV"
    assert "You are panto" not in sp.build(c, cwd=tree).text


def test_extension_parts_come_after_context(tree: Path) -> None:
    p = sp.build(Config(), cwd=tree, extension_parts=[("ext:std.git", "GIT-PART")])
    kinds = [q.kind for q in p.parts]
    assert kinds[-1] == "extension" and p.parts[-1].origin == "ext:std.git"
    assert p.text.index("MOD-LEVEL") < p.text.index("GIT-PART")
    assert "--- extension: ext:std.git ---\nGIT-PART" in p.describe()


def test_outside_a_repository_only_the_cwd_counts(tmp_path: Path) -> None:
    write(tmp_path / "AGENTS.md", "PARENT")
    write(tmp_path / "w" / "AGENTS.md", "HERE")
    assert sp.context_files(tmp_path / "w") == [tmp_path / "w" / "AGENTS.md"]
    assert "Git repository: no" in sp.base_prompt([], cwd=tmp_path / "w")


def test_tool_lines_hold_the_first_whole_sentence(tmp_path: Path) -> None:
    """A tool's line ends at its first sentence, not at "e.g." or a period
    inside a path (std.find's description was cut to "... directory), e.g.")."""
    tools = [
        ToolDecl("find", "Find files under path, e.g. '**/*.py' or a.b. Returns paths. More."),
        ToolDecl("read", "Read a file (i.e. text). Returns its lines."),
        ToolDecl("ask", "Is it done? Then say so."),
        ToolDecl("bare", "no period at all"),
    ]
    text = sp.base_prompt(tools, cwd=tmp_path, env={})
    assert "- find: Find files under path, e.g. '**/*.py' or a.b.\n" in text
    assert "- read: Read a file (i.e. text).\n" in text
    assert "- ask: Is it done?\n" in text
    assert "- bare: no period at all\n" in text


def test_same_prompt_ignores_only_the_date() -> None:
    day1 = sp.base_prompt([], cwd="/x", today=datetime.date(2026, 1, 1))
    day2 = sp.base_prompt([], cwd="/x", today=datetime.date(2026, 1, 2))
    assert day1 != day2 and sp.same_prompt(day1, day2)
    assert not sp.same_prompt(day1, sp.base_prompt([], cwd="/y", today=datetime.date(2026, 1, 1)))
    assert not sp.same_prompt("a", "b")


def test_panto_config_system_prompt_names_each_part(tree: Path) -> None:
    r = subprocess.run(
        [sys.executable, "-m", "panto", "config", "-C", str(tree), "system-prompt"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    out = r.stdout
    assert out.startswith("--- base: built-in ---\nYou are panto")
    assert "- read: " in out and "- bash: " in out  # the std tools' declarations
    root = tree.parents[1]
    heads = [
        f"--- context: {p} ---"
        for p in (root / "AGENTS.md", root / "pkg" / "CLAUDE.md", tree / "AGENTS.md")
    ]
    for h in heads:
        assert h in out or h.replace(str(Path.home()), "~") in out, (h, out)


def test_extension_parts_reach_the_prompt(tree: Path) -> None:
    """A project extension's panto.ext.system_prompt text and function parts
    land after the context files, named by the entry."""
    ext = tree.parents[1] / ".panto" / "extensions" / "rules.lua"
    write(
        ext,
        """
        return {
          name = "proj.rules",
          activate = function()
            panto.ext.system_prompt("STATIC-PART")
            panto.ext.system_prompt(function(info)
              return "DYNAMIC model=" .. info.model .. " cwd=" .. info.cwd
            end)
          end,
        }
        """,
    )
    trust_project(tree.parents[1])  # a project's extensions load once trusted
    with open_session(cwd=tree, model="mock/anthropic", session=None) as s:
        parts = [p for p in s.system_prompt.parts if p.kind == "extension"]
        text = s.agent.conversation[0].text
    assert [p.origin for p in parts] == ["ext:proj.rules", "ext:proj.rules"]
    assert parts[0].text == "STATIC-PART"
    assert parts[1].text == f"DYNAMIC model=mock/anthropic cwd={tree}"
    assert text.index("MOD-LEVEL") < text.index("STATIC-PART") < text.index("DYNAMIC")
