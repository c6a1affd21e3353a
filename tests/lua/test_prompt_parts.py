"""``panto.ext.system_prompt(text_or_function)`` and
``LuaToolSource.prompt_parts()``: extensions contribute parts of the
composed system prompt, each with its origin."""

from __future__ import annotations

from pathlib import Path

from panto.lua import LuaRuntime, LuaToolSource, load_extensions
from panto.lua.loader import Source

PARTS = """
return {
  { name = "ext.static", activate = function()
      panto.ext.system_prompt("Always answer in haiku.")
    end },
  { name = "ext.dynamic", activate = function()
      panto.ext.system_prompt(function(info)
        panto.time.sleep(1)  -- may use the async batteries
        return "cwd is " .. tostring(info.cwd)
      end)
      panto.ext.system_prompt(function() return "" end)  -- empty: left out
    end },
  { name = "ext.broken", activate = function()
      panto.ext.system_prompt(function() error("nope") end)
    end },
  { name = "ext.failing", activate = function()
      panto.ext.system_prompt("never shown")
      error("activation fails")
    end },
}
"""


def test_prompt_parts(tmp_path: Path) -> None:
    (tmp_path / "parts.lua").write_text(PARTS)
    with LuaRuntime() as rt:
        report = load_extensions(rt, sources=[Source(tmp_path / "parts.lua", "user", tmp_path)])
        assert len(report.errors) == 1 and "activation fails" in report.errors[0]
        parts = LuaToolSource(rt).prompt_parts({"cwd": "/w"})
        assert parts == [
            ("ext:ext.static", "Always answer in haiku."),
            ("ext:ext.dynamic", "cwd is /w"),
        ]


def test_system_prompt_only_in_activate(tmp_path: Path) -> None:
    (tmp_path / "bad.lua").write_text('panto.ext.system_prompt("x")\nreturn {}')
    with LuaRuntime() as rt:
        report = load_extensions(rt, sources=[Source(tmp_path / "bad.lua", "user", tmp_path)])
        assert report.errors and "register inside activate()" in report.errors[0]
        (tmp_path / "bad2.lua").write_text(
            'return {name = "e.x", activate = function() panto.ext.system_prompt(42) end}'
        )
        report = load_extensions(rt, sources=[Source(tmp_path / "bad2.lua", "user", tmp_path)])
        assert report.errors and "expects a string or a function" in report.errors[0]
        assert LuaToolSource(rt).prompt_parts() == []
