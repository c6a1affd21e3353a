"""Helpers of the integration suite (imported by its conftest and tests).

``RECORDER``: a Lua extension that records every hook event it sees into a
module-level table (read back with its ``/hooklog`` command) and steers a
few calls: it blocks ``bash`` commands containing ``rm `` and every call to
``danger``, rewrites ``read`` of ``REWRITE-ME`` to its configured
``real_path``, fails in ``before_tool_call`` for ``explode``, appends to the
results of ``echo`` and ``shout``, upper-cases prompts that start with
``shout:``, and supplies a compaction prompt.  It also registers the
``shout`` tool and the ``/greet`` and ``/hooklog`` commands.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from panto.lua import LuaRuntime, LuaToolSource

RECORDER = r"""
local log = {}        -- module state: every hook event, in order

local function rec(event, payload)
  log[#log + 1] = { event = event, payload = payload }
end

return {
  name = "test.recorder",
  activate = function(cfg)
    panto.ext.register_command {
      name = "hooklog", description = "the recorded hook events as JSON",
      handler = function() return panto.json.encode(log) end,
    }
    panto.ext.register_command {
      name = "greet", description = "Say hello",
      handler = function(args) return "hello, " .. args end,
    }
    panto.ext.register_tool {
      name = "shout", description = "Upper-case text",
      schema = { type = "object", properties = { text = { type = "string" } } },
      handler = function(input) return input.text:upper() end,
    }
    panto.ext.on("session_start", function(p) rec("session_start", p) end)
    panto.ext.on("user_message", function(p)
      rec("user_message", p)
      if p.text:sub(1, 6) == "shout:" then return p.text:sub(7):upper() end
    end)
    panto.ext.on("before_tool_call", function(call)
      rec("before_tool_call", call)
      if call.name == "bash" and call.input.command:find("rm ", 1, true) then
        return { block = true, reason = "no rm, please" }
      end
      if call.name == "danger" then return { block = true, reason = "native blocked" } end
      if call.name == "read" and call.input.path == "REWRITE-ME" then
        return { input = { path = cfg.real_path } }
      end
      if call.name == "explode" then error("handler bug") end
    end)
    panto.ext.on("after_tool_call", function(r)
      rec("after_tool_call", r)
      if r.name == "echo" then return { content = r.content .. " [seen by lua]" } end
      if r.name == "shout" then return r.content .. "!!!" end
    end)
    panto.ext.on("turn_end", function(p) rec("turn_end", p) end)
    panto.ext.on("before_compact", function(p)
      rec("before_compact", p)
      return "summarize for " .. p.prompt
    end)
  end,
}
"""


def write_project(root: Path) -> Path:
    (root / ".git").mkdir(parents=True, exist_ok=True)
    ext = root / ".panto" / "extensions"
    ext.mkdir(parents=True, exist_ok=True)
    (ext / "recorder.lua").write_text(RECORDER)
    return root


class LuaSetup:
    def __init__(self, runtime: LuaRuntime, source: LuaToolSource, report: Any) -> None:
        self.runtime = runtime
        self.source = source
        self.report = report

    def hooklog(self) -> list[dict[str, Any]]:
        raw = self.source.run_command("hooklog")
        data = json.loads(raw)
        return data if isinstance(data, list) else []  # an empty Lua table encodes as {}

    def events(self) -> list[str]:
        return [e["event"] for e in self.hooklog()]
