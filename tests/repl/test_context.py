"""/context in the REPL: the system prompt part by part (as ``panto config
system-prompt`` prints it) and the context's size against the window."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from support.repl import Env, Pty

pytestmark = pytest.mark.timeout(90)


def test_context_prints_the_prompt_parts_and_the_context_size(
    env: Env, term: Callable[..., Pty]
) -> None:
    (env.cwd / "AGENTS.md").write_text("Always answer in haiku.\n")
    expected = env.run("config", "system-prompt")
    assert expected.returncode == 0, expected.stderr
    assert f"--- context: {env.cwd}/AGENTS.md ---" in expected.stdout

    t = term("--model", "mock/anthropic", rows=200)
    t.prompt()
    start = len(t.raw)
    t.line("/context")
    t.expect(r"system prompt: ~[\d,]+ tokens")
    t.prompt()
    t.pump()
    shown = t.raw[start:].replace("\r\n", "\n")
    # the same text as `panto config system-prompt`, origins included
    assert expected.stdout.rstrip("\n") in shown
    assert "--- base: built-in ---" in shown and "Always answer in haiku." in shown
    assert "context: 0 of 200,000 tokens (0%) · auto-compaction at 160,000" in shown
    assert "mock/anthropic" in shown

    t.line("hello")
    t.expect("You said: hello")
    t.prompt()
    start = len(t.raw)
    t.line("/context")
    t.expect(r"system prompt: ~[\d,]+ tokens")
    m = re.search(r"context: ([\d,]+) of 200,000 tokens", t.raw[start:])
    assert m is not None and int(m.group(1).replace(",", "")) > 0  # the reply's usage


def test_context_says_when_the_window_is_unknown_or_compaction_off(
    env: Env, term: Callable[..., Pty]
) -> None:
    cfg = env.home / "xdg_config_home" / "panto"
    cfg.mkdir(parents=True)
    (cfg / "config.toml").write_text("[compaction]\nauto = false\n")
    t = term("--model", "mock/anthropic", "--no-extensions")
    t.prompt()
    t.line("/context")
    t.expect("auto-compaction off")
    t.prompt()
    t.line("/model ollama/no-such-model-xyz")
    t.expect("model: ollama/no-such-model-xyz")
    t.prompt()
    t.line("/context")
    t.expect("context window is unknown")
