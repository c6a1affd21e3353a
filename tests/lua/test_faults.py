"""What it must show, item 3: faults become is_error results; the runtime stays healthy."""

from __future__ import annotations

import pytest

from panto.lua import LuaRuntime, LuaToolSource
from panto.tools import ToolCall

TOOLS = r"""
panto.ext.register_tool{name = "err_string", handler = function() error("plain failure") end}
panto.ext.register_tool{name = "err_table", handler = function() error({code = 42, message = "table failure"}) end}
panto.ext.register_tool{name = "err_table_plain", handler = function() error({code = 7}) end}
panto.ext.register_tool{name = "err_battery", handler = function()
  return panto.http.request{url = "http://127.0.0.1:1/"}
end}
panto.ext.register_tool{name = "err_battery_fs", handler = function()
  local s = panto.fs.read("/definitely/not/here")
  return s
end}
panto.ext.register_tool{name = "err_return", handler = function() return nil, "soft failure" end}
panto.ext.register_tool{name = "ok", handler = function(input) return {echo = input.v, empty = {}, list = panto.json.array()} end}
"""


@pytest.fixture(scope="module")
def src(runtime: LuaRuntime) -> LuaToolSource:
    runtime.execute(TOOLS)
    return LuaToolSource(runtime)


@pytest.mark.parametrize(
    "tool, needle",
    [
        ("err_string", "plain failure"),
        ("err_table", "table failure"),
        ("err_table_plain", '"code":7'),
        ("err_battery", "ConnectError"),
        ("err_battery_fs", "No such file or directory: /definitely/not/here"),
        ("err_return", "soft failure"),
    ],
)
def test_fault_is_error(src: LuaToolSource, tool: str, needle: str) -> None:
    out = src.invoke_batch([ToolCall("x", tool, {}), ToolCall("y", "ok", {"v": 1})])
    assert out[0].is_error
    assert needle in out[0].content, out[0].content
    # the sibling in the same batch and the next batch are fine
    assert out[1] == src.invoke_batch([ToolCall("z", "ok", {"v": 1})])[0]
    assert not out[1].is_error
    assert out[1].content == '{"echo":1,"empty":{},"list":[]}'


def test_traceback_included(src: LuaToolSource) -> None:
    out = src.invoke_batch([ToolCall("x", "err_string", {})])[0]
    assert "stack traceback" in out.content
    assert "(panto):2" in out.content


def test_unknown_tool(src: LuaToolSource) -> None:
    out = src.invoke_batch([ToolCall("x", "nope", {})])[0]
    assert out.is_error and "unknown tool" in out.content


def test_timeout_from_decl(runtime: LuaRuntime) -> None:
    runtime.execute(r"""
      panto.ext.register_tool{name = "slow", timeout = 0.2, handler = function()
        local guard <close> = setmetatable({}, {__close = function() CLOSED_BY_TIMEOUT = true end})
        panto.time.sleep(5000)
      end}
    """)
    out = LuaToolSource(runtime).invoke_batch([ToolCall("x", "slow", {})])[0]
    assert out.is_error and "timed out after 0.2 s" in out.content
    assert runtime.eval("CLOSED_BY_TIMEOUT") is True


def test_timeout_from_config(runtime: LuaRuntime) -> None:
    runtime.execute(r"""
      panto.ext.register_tool{name = "slow2", handler = function() panto.time.sleep(5000) end}
    """)
    src = LuaToolSource(runtime, timeouts={"slow2": 0.1})
    out = src.invoke_batch([ToolCall("x", "slow2", {})])[0]
    assert out.is_error and "timed out" in out.content
    src = LuaToolSource(runtime, default_timeout=0.1)
    assert src.invoke_batch([ToolCall("x", "slow2", {})])[0].is_error
