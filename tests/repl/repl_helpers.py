"""Helpers of the REPL suite (imported by its conftest and tests)."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Env:
    home: Path
    cwd: Path
    vars: dict[str, str] = field(default_factory=dict)

    def run(self, *args: str, input: str | None = None, **kw: Any) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "panto", *args],
            cwd=self.cwd,
            env=self.vars,
            input=input,
            capture_output=True,
            text=True,
            timeout=kw.pop("timeout", 60),
            **kw,
        )

    def sessions(self) -> list[Path]:
        return sorted(self.home.rglob("*.jsonl"))

    def session_messages(self, path: Path) -> list[dict[str, Any]]:
        lines = [json.loads(line) for line in path.read_text().splitlines()]
        return [e["message"] for e in lines if e.get("type") == "message"]


def user_texts(body: dict[str, Any]) -> list[str]:
    """The text of every user message of an Anthropic request body."""
    out = []
    for m in body["messages"]:
        if m["role"] != "user":
            continue
        c = m["content"]
        if isinstance(c, str):
            out.append(c)
        else:
            texts = [b["text"] for b in c if b.get("type") == "text"]
            if texts:
                out.append("".join(texts))
    return out
