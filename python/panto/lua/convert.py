"""Lua <-> Python values (loop thread only).

Strings cross as UTF-8 bytes; ``None`` is ``panto.json.null``; dicts and
lists become tables marked as JSON objects/arrays so they encode back the
same way; Lua tables come back as dicts or lists by their mark or shape.
Functions, threads and userdata stay Lua objects.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import ToolError

__all__ = ["Converter", "describe", "text"]


def describe(e: BaseException) -> str:
    """A one-line description of an exception for a Lua error message."""
    if isinstance(e, OSError) and e.strerror:
        target = f": {e.filename}" if e.filename else ""
        return f"{e.strerror}{target}"
    name = type(e).__name__
    msg = str(e)
    return f"{name}: {msg}" if msg else name


def text(v: Any) -> str:
    """A Lua string (bytes) or value as text."""
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if v is None:
        return ""
    return str(v)


class Converter:
    """Converts with the prelude's JSON marks (``rt.null``, ``rt.mark_array``,
    ``rt.mark_object``, ``rt.kind``)."""

    def __init__(self, rt: Any, table_from: Callable[..., Any], lua_type: Callable[[Any], Any]):
        self.null = rt.null
        self.mark_array = rt.mark_array
        self.mark_object = rt.mark_object
        self.kind = rt.kind
        self.table_from = table_from
        self.lua_type = lua_type

    def to_lua(self, v: Any, *, drop_null: bool = False) -> Any:
        if isinstance(v, str):
            return v.encode("utf-8", "surrogateescape")
        if v is None:
            return self.null
        if isinstance(v, (bool, int, float, bytes)):
            return v
        if isinstance(v, Mapping):
            d = {}
            for k, x in v.items():
                if x is None and drop_null:
                    continue
                key = k.encode("utf-8", "surrogateescape") if isinstance(k, str) else k
                d[key] = self.to_lua(x, drop_null=drop_null)
            return self.mark_object(self.table_from(d))
        if isinstance(v, (list, tuple)):
            t = self.table_from([self.to_lua(x, drop_null=drop_null) for x in v])
            return self.mark_array(t)
        if self.lua_type(v) is not None:
            return v
        return v

    def from_lua(self, v: Any, _depth: int = 0) -> Any:
        if isinstance(v, bytes):
            return v.decode("utf-8", "replace")
        lt = self.lua_type(v)
        if lt is None:
            return v
        if lt != "table":
            return v  # functions, threads, userdata stay Lua objects
        if _depth > 200:
            raise ToolError("Lua table nested too deeply")
        kind = self.kind(v)
        if kind == b"null":
            return None
        if kind == b"array":
            return [self.from_lua(v[i], _depth + 1) for i in range(1, len(v) + 1)]
        out: dict[str, Any] = {}
        for k, x in v.items():
            key = k.decode("utf-8", "replace") if isinstance(k, bytes) else str(k)
            out[key] = self.from_lua(x, _depth + 1)
        return out
