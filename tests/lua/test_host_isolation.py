"""Two sessions in one process, for two projects (``Host``): each sees its
own project tools, hooks and ``panto.config`` (one Lua state per extension
set, all on the one Lua loop thread)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from panto.app import Host, extension_set_key
from panto.config import Config
from panto.lua.runtime import get_runtime
from panto.tools import ToolCall

EXT = """
return {{
  name = "proj.{name}",
  activate = function()
    panto.ext.register_tool{{name = "only_{name}", handler = function()
      return "flavour " .. tostring(panto.config.extensions["proj.{name}"].flavour)
    end}}
    panto.ext.on("user_message", function(m) return m.text .. " [{name}]" end)
  end,
}}
"""


def project(root: Path, name: str) -> Path:
    d = root / name
    (d / ".git").mkdir(parents=True)
    (d / ".panto" / "extensions").mkdir(parents=True)
    (d / ".panto" / "extensions" / f"only_{name}.lua").write_text(EXT.format(name=name))
    (d / ".panto" / "config.toml").write_text(f'[extensions."proj.{name}"]\nflavour = "{name}"\n')
    return d


@pytest.mark.usefixtures("isolated_home")
def test_two_sessions_with_two_cwds_see_their_own_extensions(tmp_path: Path) -> None:
    a, b = project(tmp_path, "a"), project(tmp_path, "b")
    host = Host()
    opened = []
    try:
        for d in (a, b):
            config = Config.load(cwd=str(d), trust=True)
            opened.append(host.open_session(config, cwd=d, session=None, model="mock/anthropic"))
        sa, sb = opened
        names_a = {t.name for t in sa.agent.tools}
        names_b = {t.name for t in sb.agent.tools}
        assert "only_a" in names_a and "only_b" not in names_a
        assert "only_b" in names_b and "only_a" not in names_b
        assert "read" in names_a and "read" in names_b  # the std tools in both
        # hooks: each session's own user_message hook, only
        assert sa.agent.submit_user_message("hi").text == "hi [a]"
        assert sb.agent.submit_user_message("hi").text == "hi [b]"
        # panto.config: each state has its project's
        out_a = sa.extensions.source.invoke_batch([ToolCall("1", "only_a", {})])  # type: ignore[union-attr]
        out_b = sb.extensions.source.invoke_batch([ToolCall("2", "only_b", {})])  # type: ignore[union-attr]
        assert (out_a[0].content, out_b[0].content) == ("flavour a", "flavour b")
        # two Lua states, one loop thread
        rt_a = host.lua_runtime(sa.agent.config, str(a), False, ())
        rt_b = host.lua_runtime(sb.agent.config, str(b), False, ())
        assert rt_a is not rt_b and rt_a.lua is not rt_b.lua
        assert rt_a.loop is rt_b.loop is get_runtime().loop
        thread = get_runtime().call(threading.current_thread)
        assert rt_a.call(threading.current_thread) is thread
        assert rt_b.call(threading.current_thread) is thread
    finally:
        for s in opened:
            s.close()


def test_the_extension_set_key_tells_projects_and_policies_apart(tmp_path: Path) -> None:
    config = Config(provider="anthropic", model="m", api_key="k")
    k = extension_set_key(config, str(tmp_path))
    assert k == extension_set_key(config, str(tmp_path))
    assert k != extension_set_key(config, str(tmp_path / "other"))
    assert k != extension_set_key(config, str(tmp_path), deny=["std.bash"])
    assert k != extension_set_key(config, str(tmp_path), no_extensions=True)
    assert k != extension_set_key(config.with_model("anthropic/other"), str(tmp_path))
