"""Timeouts a tool is given (issue 23 item 7): inf, NaN, 1e10 from the
model's arguments or an extension's declaration are refused clearly instead
of overflowing a timer or disarming the watchdog."""

from __future__ import annotations

import json

import pytest
from support.lua_caller import Caller

from panto.lua import LuaRuntime, LuaScriptError


@pytest.mark.parametrize("raw", ["1e999", "Infinity", "NaN", "1e10", "0", "-5", '"soon"'])
def test_bash_refuses_a_timeout_out_of_range(call: Caller, raw: str) -> None:
    """Tool arguments as the model sends them (Python's json accepts NaN,
    Infinity, and 1e999 is inf): a clear error, nothing run."""
    timeout = json.loads(raw)
    out = call("bash", command="echo ran", timeout=timeout)
    assert out.is_error
    assert out.content.startswith(
        "bash: 'timeout' must be a number of seconds, > 0 and at most 600 (got "
    ), out.content
    assert "ran" not in out.content.splitlines()


def test_a_declared_tool_timeout_must_be_finite(fresh_runtime: LuaRuntime) -> None:
    for bad in ("math.huge", "1e10", "0/0", "-1"):
        with pytest.raises(LuaScriptError) as info:
            fresh_runtime.execute(
                f"panto.ext.register_tool{{name = 't', timeout = {bad}, handler = function() end}}"
            )
        assert "tool t: timeout must be a number of seconds, > 0 and at most 86400" in str(
            info.value
        )
    fresh_runtime.execute(
        "panto.ext.register_tool{name = 't', timeout = 5, handler = function() end}"
    )
    assert fresh_runtime.tools["t"].decl.timeout == 5.0
