"""MCP tool names and schemas as providers accept them.

- Names: ``mcp__<server>__<tool>`` with every character outside
  ``[A-Za-z0-9_-]`` replaced by ``_``; a name over 64 characters is cut in
  the middle and marked with a short hash of the full name, so it is stable
  across runs and two long names stay apart.
- Schemas: ``$ref`` into ``$defs``/``definitions`` inlined (a recursive
  reference becomes a plain ``{"type": "object"}``), ``$schema``/``$id``
  dropped, and ``type: object`` (with ``properties``) at the top, which both
  wires require.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

__all__ = ["MAX_NAME", "PREFIX", "normalize_schema", "tool_name"]

#: Providers accept tool names matching ``^[a-zA-Z0-9_-]{1,64}$``.
MAX_NAME = 64
PREFIX = "mcp__"
_BAD = re.compile(r"[^A-Za-z0-9_-]")
#: Inlining stops this deep (a schema that refers to itself).
_MAX_DEPTH = 32


def tool_name(server: str, tool: str) -> str:
    """The name the model sees for ``tool`` of ``server``."""
    full = f"{PREFIX}{_BAD.sub('_', server)}__{_BAD.sub('_', tool)}"
    if len(full) <= MAX_NAME:
        return full
    mark = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:6]
    keep = MAX_NAME - len(mark) - 1
    head = keep - keep // 2
    return f"{full[:head]}_{mark}{full[len(full) - keep // 2 :]}"


def normalize_schema(schema: Any) -> dict[str, Any]:
    """``schema`` made acceptable to both wires (see the module docstring)."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        d = schema.get(key)
        if isinstance(d, dict):
            defs.update({f"#/{key}/{k}": v for k, v in d.items()})
    out = _inline(schema, defs, 0, frozenset())
    if not isinstance(out, dict):
        out = {}
    out.pop("$defs", None)
    out.pop("definitions", None)
    if out.get("type") != "object":
        out = (
            {"type": "object", "properties": {}}
            if "properties" not in out
            else {**out, "type": "object"}
        )
    out.setdefault("properties", {})
    return out


def _inline(node: Any, defs: dict[str, Any], depth: int, seen: frozenset[str]) -> Any:
    if isinstance(node, list):
        return [_inline(x, defs, depth + 1, seen) for x in node]
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref)
        if target is None or ref in seen or depth > _MAX_DEPTH:
            # unknown or recursive: the loosest schema that still says "object"
            rest = {k: v for k, v in node.items() if k != "$ref"}
            return {"type": "object", **_inline(rest, defs, depth + 1, seen)}
        merged = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        return _inline(merged, defs, depth + 1, seen | {ref})
    return {
        k: _inline(v, defs, depth + 1, seen)
        for k, v in node.items()
        if k not in ("$schema", "$id", "$defs", "definitions")
    }
