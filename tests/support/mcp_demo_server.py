"""An MCP server built with the official SDK, for panto's MCP client tests.

    python mcp_demo_server.py [stdio | http PORT] [--delay SECONDS] [--legacy]

Tools: ``add(a, b)``, ``norm(p: Point)`` (a pydantic argument: ``$defs`` in
its schema), a 70-character name, ``slow(seconds)``, ``image()``,
``big()`` (1 MB of text), ``fail()`` and ``enable_extra()``, which adds the
tool ``extra`` and tells the client its list changed.  ``--delay`` sleeps
before serving (a slow start); each start appends a line to the file in
``$MCP_DEMO_STARTS`` when set.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
import time

from mcp.server.mcpserver import Context, MCPServer
from pydantic import BaseModel

PNG = base64.b64encode(
    bytes.fromhex(
        "89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a5d5f3e70000000049454e44ae426082"
    )
).decode()

app = MCPServer("demo")


class Point(BaseModel):
    x: int
    y: int


@app.tool()
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@app.tool()
def norm(p: Point) -> int:
    """The squared length of a point."""
    return p.x * p.x + p.y * p.y


@app.tool(name="a_tool_with_a_really_long_name_that_goes_on_and_on_past_sixty_four_ch")
def long_named() -> str:
    """A tool whose name is 70 characters long."""
    return "long ok"


@app.tool()
async def slow(seconds: float) -> str:
    """Sleep, then answer."""
    await asyncio.sleep(seconds)
    return "slept"


@app.tool()
def big() -> str:
    """A megabyte of text."""
    return "x" * 1_000_000


@app.tool()
def fail() -> str:
    """Always fails."""
    raise ValueError("this tool always fails")


@app.tool()
def image() -> object:
    """A 1x1 PNG."""
    from mcp.types import ImageContent

    return [ImageContent(type="image", data=PNG, mimeType="image/png")]


def extra() -> str:
    """Added at run time."""
    return "extra ok"


@app.tool()
async def enable_extra(ctx: Context) -> str:
    """Adds the tool `extra` and tells the client."""
    app.add_tool(extra)
    try:
        await ctx.notify_tools_changed()
    except Exception:  # noqa: BLE001 - a legacy session
        await ctx.request_context.session.send_tool_list_changed()
    return "enabled"


def main() -> None:
    args = sys.argv[1:]
    if "--delay" in args:
        i = args.index("--delay")
        time.sleep(float(args[i + 1]))
        del args[i : i + 2]
    starts = os.environ.get("MCP_DEMO_STARTS")
    if starts:
        with open(starts, "a") as f:
            f.write(f"{os.getpid()}\n")
    if args and args[0] == "http":
        app.run(transport="streamable-http", host="127.0.0.1", port=int(args[1]))
    else:
        app.run()


if __name__ == "__main__":
    main()
