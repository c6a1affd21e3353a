"""Tools: what the agent can call.

Two shapes, both dispatched by the agent loop once per turn:

- ``Tool``: one native tool.  ``invoke`` runs in a worker thread and must be
  thread-safe (several calls of one tool may run at once).
- ``ToolSource``: a provider of many tools (the Lua runtime is one, named
  ``panto-lua``).  All calls of one turn that belong to a source arrive in ONE
  ``invoke_batch`` on one thread; the source returns one ``ToolOutput`` per
  call, in the same order.  ``cancel`` is called from another thread when the
  turn is cancelled and must make ``invoke_batch`` return promptly.

A tool that raises becomes an ``is_error`` result; it never crashes a turn.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .conversation import Image
from .errors import ToolError

__all__ = [
    "TOOL_NAME_RE",
    "FunctionTool",
    "Tool",
    "ToolCall",
    "ToolDecl",
    "ToolOutput",
    "ToolSource",
]

#: What providers accept as a tool name.
TOOL_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


@dataclass(frozen=True, slots=True)
class ToolDecl:
    """A tool as the model sees it."""

    name: str
    description: str
    schema: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    timeout: float | None = None  # seconds; None = the configured default

    def __post_init__(self) -> None:
        if not TOOL_NAME_RE.match(self.name):
            raise ToolError(f"invalid tool name {self.name!r}: must match {TOOL_NAME_RE.pattern}")


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call to run: the model's call id, the tool name and its input."""

    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """What a tool returns: its text, whether it failed, and images (the
    ``read`` tool returns one for an image file).  The turn puts all three
    in the conversation's ``ToolResultBlock``; each wire sends the images
    with the result (docs/agent.md, "Images in tool results")."""

    content: str
    is_error: bool = False
    images: tuple[Image, ...] = ()


class Tool(ABC):
    """A native tool.  Subclass it, or wrap a function with ``FunctionTool``."""

    decl: ToolDecl

    @abstractmethod
    def invoke(self, input: dict[str, Any]) -> str:
        """Run the tool; return its result text, or raise to report an error."""


class ToolSource(ABC):
    """A named provider of several tools, invoked one batch per turn."""

    name: str

    @abstractmethod
    def decls(self) -> Sequence[ToolDecl]:
        """The tools this source offers right now."""

    @abstractmethod
    def invoke_batch(self, calls: Sequence[ToolCall]) -> list[ToolOutput]:
        """Run the calls (concurrently if the source can); one output per
        call, in order."""

    def cancel(self) -> None:  # noqa: B027 - optional hook
        """Cancel a running ``invoke_batch`` (called from another thread)."""


class FunctionTool(Tool):
    """A ``Tool`` from a plain function ``fn(input) -> str``."""

    def __init__(
        self,
        name: str,
        description: str,
        fn: Any,
        schema: dict[str, Any] | None = None,
    ) -> None:
        self.decl = ToolDecl(name, description, schema or {"type": "object", "properties": {}})
        self._fn = fn

    def invoke(self, input: dict[str, Any]) -> str:
        return str(self._fn(input))
