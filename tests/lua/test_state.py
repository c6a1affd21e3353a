"""What it must show, item 2: top-level code runs once; module state persists."""

from __future__ import annotations

from pathlib import Path

from panto.lua import LuaRuntime, LuaToolSource, load_extensions
from panto.lua.loader import Source
from panto.tools import ToolCall

EXT = r"""
COUNTER = (COUNTER or 0) + 1   -- top level: runs once per process
local cache = {}
local hits = 0
return {
  name = "test.state",
  activate = function()
    panto.ext.register_tool{name = "cached", handler = function(input)
      if cache[input.key] then hits = hits + 1; return "hit " .. cache[input.key] .. " " .. hits end
      cache[input.key] = input.key:upper()
      return "miss"
    end}
    panto.ext.register_tool{name = "counter", handler = function() return tostring(COUNTER) end}
  end,
}
"""


def test_top_level_once_and_cache_survives(tmp_path: Path, fresh_runtime: LuaRuntime) -> None:
    p = tmp_path / "extensions" / "state.lua"
    p.parent.mkdir()
    p.write_text(EXT)
    report = load_extensions(
        fresh_runtime, sources=[Source(p, "project", p.parent)], include_base=False
    )
    assert report.active == ["test.state"], report.errors
    src = LuaToolSource(fresh_runtime)
    # "turns": separate batches
    assert src.invoke_batch([ToolCall("1", "cached", {"key": "a"})])[0].content == "miss"
    for turn in range(3):
        out = src.invoke_batch(
            [ToolCall("2", "cached", {"key": "a"}), ToolCall("3", "counter", {})]
        )
        assert out[0].content == f"hit A {turn + 1}"
        assert out[1].content == "1"
    assert fresh_runtime.eval("COUNTER") == 1
