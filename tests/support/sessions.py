"""Shared helpers of the session tests (imported after conftest.py has put
the package on sys.path)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from panto.conversation import (
    Message,
    RedactedThinking,
    Text,
    Thinking,
    ToolResultBlock,
    ToolUse,
    Usage,
)


def conversation_rounds() -> list[list[Message]]:
    """A multi-round conversation as the agent persists it: one batch per
    mutation (prompt; assistant; tool results; assistant ...)."""
    u1 = Usage(input_tokens=120, cache_read_tokens=30, cache_write_tokens=7, output_tokens=55)
    u2 = Usage(input_tokens=200, output_tokens=80, reasoning_tokens=40)
    return [
        [Message("system", (Text("You are panto. Be brief."),))],
        [Message.user("list the files and count the lines of README.md — ünïcødé ✓")],
        [
            Message(
                "assistant",
                (
                    Thinking("I should call ls first.\nThen wc.", "sig-EqQKGAE+/=="),
                    Text("Let me look."),
                    ToolUse("toolu_01", "bash", {"command": "ls", "timeout": 5}),
                    ToolUse("toolu_02", "read", {"path": "README.md", "opts": {"n": [1, 2]}}),
                ),
                u1,
                "tool_use",
                "anthropic",
                "claude-sonnet-4-5",
            )
        ],
        [
            Message(
                "tool",
                (
                    ToolResultBlock("toolu_01", "README.md\nsrc\n"),
                    ToolResultBlock("toolu_02", "no such file: README.md", is_error=True),
                ),
            )
        ],
        [
            Message(
                "assistant",
                (
                    RedactedThinking("EmwKAhgBEgy3va3pzix/LafPsn4a"),
                    Thinking("", "sig-only"),
                    Text("There are 2 entries.\n\n```\nREADME.md\nsrc\n```"),
                    ToolUse("call_9", "weird", {}, raw_input="{not json"),
                ),
                u2,
                "tool_use",
                "anthropic",
                "claude-sonnet-4-5",
            )
        ],
        [Message("tool", (ToolResultBlock("call_9", "bad arguments", True),))],
        [
            Message(
                "assistant",
                (Text("Done."),),
                Usage(10, 0, 0, 3, 0),
                "stop",
                "anthropic",
                "claude-sonnet-4-5",
            )
        ],
        [Message.user("thanks")],
        [
            Message(
                "assistant",
                (Text("partial"),),
                None,
                "error",
                "openai",
                "gpt-4.1",
                error="stream cut short",
            )
        ],
    ]


def flat(rounds: list[list[Message]]) -> list[Message]:
    return [m for batch in rounds for m in batch]


def only_file(d: Path) -> Path:
    files = list(d.rglob("*.jsonl"))
    assert len(files) == 1, files
    return files[0]


def file_lines(p: Path) -> list[str]:
    return p.read_text().splitlines()


def drain(agent: Any) -> None:
    """Run one turn of ``agent`` to its end."""
    with agent.run() as stream:
        for _ in stream:
            pass


def copy_session(path: Path, folder: Path) -> Path:
    """A copy of a session file as it is now (for a later "process" to resume)."""
    folder.mkdir()
    return Path(shutil.copy(path, folder / path.name))


def last_request_of_turn(agent: Any, store: Any, server: Any, prompt: str) -> Any:
    """Submit ``prompt``, run the turn, close ``agent`` and ``store``; the
    request the turn sent last."""
    agent.submit_user_message(prompt)
    drain(agent)
    agent.close()
    store.close()
    return server.requests[-1]


@dataclass
class Backend:
    """One session backend under test (the ``backend`` fixture): ``kind``,
    the ``url`` that names it (a directory for JSONL), and the
    ``SessionBackend``."""

    kind: str
    url: str
    backend: Any


def panto(
    *args: str, cwd: Path, data: Path, agent: bool = True, input: str = ""
) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, XDG_DATA_HOME=str(data), XDG_CONFIG_HOME=str(data / "config"))
    env.pop("ANTHROPIC_API_KEY", None)
    env.pop("OPENAI_API_KEY", None)
    return subprocess.run(
        [sys.executable, "-m", "panto", *args]
        # no system prompt: these tests follow the conversation's entries
        + (
            ["--model", "mock/anthropic", "--no-extensions", "--system-prompt", ""] if agent else []
        ),
        cwd=cwd,
        env=env,
        input=input,
        capture_output=True,
        text=True,
        timeout=60,
    )


def agent_stack() -> tuple[Any, Any, Any, Any]:
    """The agent stack (a broken import fails the test, never skips it)."""
    from panto.agent import Agent
    from panto.config import Config
    from panto.testing import Reply, ScriptedServer

    return Agent, Config, Reply, ScriptedServer
