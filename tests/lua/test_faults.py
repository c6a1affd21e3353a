"""What it must show, item 3: faults become is_error results; the runtime stays healthy."""

from __future__ import annotations

import logging
from pathlib import Path

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


def test_the_model_gets_one_line_the_log_gets_the_traceback(
    src: LuaToolSource, caplog: pytest.LogCaptureFixture
) -> None:
    """An unexpected Lua error reaches the model as one line, without the
    traceback or the install path (std.write's location in panto's
    package); the traceback is logged at debug level (``--debug``)."""
    with caplog.at_level(logging.DEBUG, logger="panto.lua"):
        out = src.invoke_batch([ToolCall("x", "err_string", {})])[0]
    assert out.is_error and out.content == "tool err_string failed: plain failure"
    logged = "\n".join(r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG)
    assert "tool err_string failed: (panto):2: plain failure\nstack traceback:" in logged
    assert "(panto):2: in upvalue 'handler'" in logged

    out = src.invoke_batch([ToolCall("y", "err_battery_fs", {})])[0]
    assert (
        out.content == "tool err_battery_fs failed: No such file or directory: /definitely/not/here"
    )


def test_a_std_tool_error_names_no_install_path(src: LuaToolSource, tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("x")
    out = src.invoke_batch(
        [ToolCall("x", "write", {"path": str(tmp_path / "f.txt" / "sub.txt"), "content": "y"})]
    )[0]
    assert out.is_error
    assert out.content == f"tool write failed: File exists: {tmp_path / 'f.txt'}"
    assert "\n" not in out.content and ".lua" not in out.content


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


@pytest.mark.parametrize(
    "call",
    [
        ToolCall("b", "bash", {"command": "ls"}),
        ToolCall("g", "grep", {"pattern": "x"}),
    ],
    ids=["bash", "grep"],
)
def test_a_caught_error_passed_to_fail_names_no_install_path(
    runtime: LuaRuntime, tmp_path: Path, call: ToolCall
) -> None:
    """panto.fail(caught_error) drops the "…/std/bash.lua:28: " location;
    grep no longer mistakes a missing working directory for a missing grep."""
    gone = tmp_path / "gone"
    out = LuaToolSource(runtime, cwd=str(gone)).invoke_batch([call])[0]
    assert out.is_error
    assert out.content == f"No such file or directory: {gone}"
