"""A callable that runs one Lua tool call through the panto-lua source.

Kept out of conftest.py so test modules can import it by a unique name
(several conftest.py files exist under tests/)."""

from __future__ import annotations

from panto.lua import LuaToolSource
from panto.tools import ToolCall, ToolOutput


class Caller:
    def __init__(self, source: LuaToolSource) -> None:
        self.source = source
        self.n = 0

    def __call__(self, name: str, **input: object) -> ToolOutput:
        self.n += 1
        return self.source.invoke_batch([ToolCall(f"call_{self.n}", name, dict(input))])[0]
