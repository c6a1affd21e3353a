"""What it must show, item 1: a batch's handlers run concurrently."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from panto.lua import LuaRuntime, LuaToolSource
from panto.tools import ToolCall

TOOLS = r"""
-- each handler records when it started and ended (SPANS), so tests assert
-- that the calls overlapped instead of timing the batch
SPANS = {}
local function spanned(fn)
  return function(input)
    local s = panto.time.monotonic()
    local r = fn(input)
    SPANS[#SPANS + 1] = {s, panto.time.monotonic()}
    return r
  end
end
panto.ext.register_tool{name = "nap", handler = spanned(function(input)
  panto.time.sleep(input.ms)
  return "slept"
end)}
panto.ext.register_tool{name = "sleep_proc", handler = spanned(function()
  local r = panto.process.spawn{cmd = "sleep", args = {"1"}}
  return "code " .. r.code
end)}
panto.ext.register_tool{name = "fetch", handler = spanned(function(input)
  local r = panto.http.request{url = input.url}
  return r.status .. " " .. r.body
end)}
"""


@pytest.fixture(scope="module")
def src(runtime: LuaRuntime) -> LuaToolSource:
    runtime.execute(TOOLS)
    return LuaToolSource(runtime)


class _Slow(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        time.sleep(1.0)
        body = b"late"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture(scope="module")
def slow_server() -> Iterator[str]:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Slow)
    srv.daemon_threads = True
    t = threading.Thread(target=srv.serve_forever, daemon=True)
    t.start()
    yield f"http://127.0.0.1:{srv.server_address[1]}/"
    srv.shutdown()
    srv.server_close()


def _overlapped(src: LuaToolSource, calls: list[ToolCall]) -> list[str]:
    """Run the batch; assert every call started before any call ended (they
    ran at the same time, however loaded the machine is)."""
    src.runtime.execute("SPANS = {}")
    out = src.invoke_batch(calls)
    assert not any(o.is_error for o in out), out
    spans = src.runtime.eval("SPANS")
    assert len(spans) == len(calls)
    assert max(s for s, _ in spans) < min(e for _, e in spans), spans
    return [o.content for o in out]


def test_three_sleeps(src: LuaToolSource) -> None:
    out = _overlapped(src, [ToolCall(str(i), "nap", {"ms": 1000}) for i in range(3)])
    assert out == ["slept"] * 3


def test_three_processes(src: LuaToolSource) -> None:
    out = _overlapped(src, [ToolCall(str(i), "sleep_proc", {}) for i in range(3)])
    assert out == ["code 0"] * 3


def test_three_http_requests(src: LuaToolSource, slow_server: str) -> None:
    out = _overlapped(src, [ToolCall(str(i), "fetch", {"url": slow_server}) for i in range(3)])
    assert out == ["200 late"] * 3


def test_results_in_order(src: LuaToolSource) -> None:
    calls = [ToolCall(str(i), "nap", {"ms": ms}) for i, ms in enumerate([300, 10, 150])]
    out = src.invoke_batch(calls)
    assert [o.content for o in out] == ["slept"] * 3


def test_spawn_tasks_and_channel(runtime: LuaRuntime) -> None:
    t0 = time.monotonic()
    res = runtime.execute(r"""
      local ch = panto.channel()
      local tasks = {}
      for i = 1, 3 do
        tasks[i] = panto.spawn(function() panto.time.sleep(300); ch:send(i); return i * 10 end)
      end
      local got = {}
      for _ = 1, 3 do got[#got + 1] = ch:recv() end
      table.sort(got)
      local sum = 0
      for _, t in ipairs(tasks) do sum = sum + t:wait() end
      return got, sum
    """)
    assert res == [[1, 2, 3], 60]
    assert time.monotonic() - t0 < 0.9


def test_own_coroutines_with_batteries(runtime: LuaRuntime) -> None:
    """Tagged yields pass through a handler's own coroutine.wrap."""
    res = runtime.execute(r"""
      local gen = coroutine.wrap(function()
        for i = 1, 3 do
          panto.time.sleep(5)
          coroutine.yield(i)
        end
      end)
      return gen() + gen() + gen()
    """)
    assert res == [6]
