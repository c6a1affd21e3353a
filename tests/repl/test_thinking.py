"""Thinking in the REPL: dimmed while it streams, one line once the block
ends (``∴ thinking (N chars) · /expand thinking K``), in full again with
``/expand thinking [K]``."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from support.repl import Env, Pty

from panto.conversation import Text, Thinking
from panto.testing import Reply, ScriptedServer

pytestmark = pytest.mark.timeout(90)

DIM = "\x1b[2m"


def test_thinking_is_collapsed_after_the_block_and_expandable(
    env: Env, term: Callable[..., Pty]
) -> None:
    t = term("--model", "mock/anthropic", "--no-extensions")
    t.prompt()
    t.line("hello there")
    t.expect("You said: hello there")
    t.prompt()
    t.pump()
    assert DIM + "The us" in t.raw  # streamed, dimmed
    assert "The user said 2 word(s)" in re.sub(r"\x1b\[\d*m", "", t.raw)
    screen = t.screen_text()
    assert "The user said" not in screen  # then collapsed
    assert "∴ thinking (42 chars) · /expand thinking 1" in screen
    t.line("/expand thinking")
    t.expect("I will echo them")
    t.prompt()
    t.pump()
    assert "[thinking 1]" in t.screen_text()
    t.line("/expand thinking 4")
    t.expect(r"no thinking 4 \(1\.\.1\)")


def test_long_wrapped_thinking_is_erased_completely(
    env: Env, server: ScriptedServer, term: Callable[..., Pty]
) -> None:
    env.vars["ANTHROPIC_API_KEY"] = "sk-test"
    thought = "first line\n" + "x" * 250 + "\n\nlast words"  # 1 + 3 + 1 + 1 rows at 100 columns
    server.push(Reply([Thinking(thought, "sig"), Text("the answer")], chunk=7))
    t = term("--model", "anthropic/m", "--base-url", server.url, "--no-extensions")
    t.prompt()
    t.line("think")
    t.expect("the answer")
    t.prompt()
    t.pump()
    lines = [line for line in t.screen_lines() if line]
    assert lines[0].startswith("panto ")  # nothing above was erased
    assert lines[1:4] == [
        "› think",
        f"∴ thinking ({len(thought)} chars) · /expand thinking 1",
        "the answer",
    ]
    assert "xxx" not in t.screen_text() and "last words" not in t.screen_text()
    start = len(t.raw)
    t.line("/expand thinking 1")
    t.expect("last words")
    assert "x" * 250 in t.raw[start:]


def test_hidden_thinking_is_still_kept_for_expand(env: Env, term: Callable[..., Pty]) -> None:
    t = term("--model", "mock/anthropic", "--no-extensions")
    t.prompt()
    t.line("/thinking off")
    t.expect("thinking: hidden")
    t.prompt()
    t.line("hi")
    t.expect("You said: hi")
    t.prompt()
    t.pump()
    assert "The user said" not in t.raw and "∴ thinking" not in t.raw
    t.line("/expand thinking")
    t.expect("The user said 1 word")
