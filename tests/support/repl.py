"""Helpers of the REPL suite (imported by its conftest and tests)."""

from __future__ import annotations

import json
import os
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


class Pty:
    """``panto ARGS`` in a pseudo-terminal (pexpect), with a pyte screen fed
    with everything it prints (``screen_lines()``), and its raw output in
    ``raw`` (escape codes included)."""

    def __init__(self, env: Env, *args: str, rows: int = 30, cols: int = 100) -> None:
        import pexpect
        import pyte

        self.pexpect = pexpect
        self.screen = pyte.Screen(cols, rows)
        self.stream = pyte.Stream(self.screen)
        self.raw = ""
        self.child = pexpect.spawn(
            sys.executable,
            ["-m", "panto", *args],
            cwd=str(env.cwd),
            env=env.vars,
            encoding="utf-8",
            codec_errors="replace",
            dimensions=(rows, cols),
            timeout=30,
        )

    def _feed(self, text: str) -> None:
        self.raw += text
        self.stream.feed(text)

    def expect(self, pattern: str, timeout: float = 30) -> str:
        """Wait for ``pattern`` (a regex) in the output; returns the output
        up to and including it."""
        self.child.expect(pattern, timeout=timeout)
        got = self.child.before + self.child.after
        self._feed(got)
        return got

    def prompt(self, timeout: float = 30) -> None:
        """Wait for the input prompt (›)."""
        self.expect("›", timeout)

    def pump(self, quiet: float = 0.3) -> None:
        """Read whatever arrives until the output is quiet for ``quiet`` s
        (what ``expect`` read past its match included)."""
        if self.child.buffer:
            self._feed(self.child.buffer)
            self.child.buffer = ""
        while True:
            try:
                self._feed(self.child.read_nonblocking(65536, timeout=quiet))
            except self.pexpect.TIMEOUT:
                return
            except self.pexpect.EOF:
                return

    def send(self, text: str) -> None:
        self.child.send(text)

    def line(self, text: str) -> None:
        self.child.send(text + "\r")

    def screen_lines(self) -> list[str]:
        return [line.rstrip() for line in self.screen.display]

    def screen_text(self) -> str:
        return "\n".join(line for line in self.screen_lines() if line)

    def wait_exit(self, timeout: float = 30) -> int | None:
        """The exit status (None when killed by a signal)."""
        try:
            self.child.expect(self.pexpect.EOF, timeout=timeout)
            self._feed(self.child.before or "")
        finally:
            self.child.close()
        return self.child.exitstatus

    def close(self) -> None:
        if self.child.isalive():
            self.child.terminate(force=True)
        self.child.close(force=True)


def isolated_env(home: Path, cwd: Path) -> Env:
    """An ``Env`` for a panto subprocess: a fresh ``home`` with its own XDG
    dirs, ``cwd`` a repository root (project discovery stops there), and no
    ``PANTO_*``, API keys, ``NO_COLOR`` or ``LUAROCKS_CONFIG`` of the caller."""
    cwd.mkdir()
    (cwd / ".git").mkdir()
    v = {
        k: val
        for k, val in os.environ.items()
        if not k.startswith("PANTO_")
        and k not in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "NO_COLOR", "LUAROCKS_CONFIG")
    }
    v["HOME"] = str(home)
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        d = home / name.lower()
        d.mkdir(parents=True)
        v[name] = str(d)
    v["TERM"] = "xterm"
    return Env(home, cwd, v)
