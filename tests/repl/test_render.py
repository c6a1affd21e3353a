"""The renderer alone: Markdown lines, diffs, collapsed tool results,
/expand, thinking, the usage line, the status line."""

from __future__ import annotations

import io
import threading
import time

from panto.cli.render import (
    BOLD,
    CYAN,
    DIM,
    GREEN,
    RED,
    RESET,
    Markdown,
    Renderer,
    Status,
    color_diff,
    is_diff,
    result_summary,
    usage_line,
)
from panto.conversation import ToolUse, Usage
from panto.events import BlockComplete, BlockStart, ContentDelta, ToolCallStart, ToolResult

DIFF = """\
--- a/app.py
+++ b/app.py
@@ -1,3 +1,3 @@
 def f():
-    return 1
+    return 2
"""


def test_markdown_lines() -> None:
    md = Markdown()
    assert md.line("## Plan") == f"{BOLD}Plan{RESET}"
    assert md.line("- use `read` first") == f"• use {CYAN}read{RESET} first"
    assert md.line("a **bold** word") == f"a {BOLD}bold{RESET} word"
    assert md.line("```python") == f"{DIM}```python{RESET}"
    assert md.line("# not a heading in code") == f"{CYAN}# not a heading in code{RESET}"
    assert md.line("```") == f"{DIM}```{RESET}"
    assert md.line("plain") == "plain"


def test_markdown_is_redrawn_per_line_on_a_terminal() -> None:
    out = io.StringIO()
    r = Renderer(out, out, color=True, show_thinking=True, markdown=True)
    r.event(BlockStart(0, "text"))
    for piece in ("# Ti", "tle\nplain te", "xt\n"):
        r.event(ContentDelta(0, "text", piece))
    r.event(BlockComplete(0, None))  # type: ignore[arg-type]
    s = out.getvalue()
    # streamed raw first, then the finished line redrawn formatted
    assert s.startswith("# Title\r\x1b[2K" + f"{BOLD}Title{RESET}\n")
    assert "plain text\n" in s and s.count("\r\x1b[2K") == 1


def test_plain_text_when_not_a_terminal() -> None:
    out = io.StringIO()
    r = Renderer(out, out, color=False, show_thinking=False)
    r.event(BlockStart(0, "thinking"))
    r.event(ContentDelta(0, "thinking", "hmm"))
    r.event(BlockStart(1, "text"))
    r.event(ContentDelta(1, "text", "# Title\n"))
    assert out.getvalue() == "# Title\n"


def test_thinking_is_dimmed() -> None:
    out = io.StringIO()
    r = Renderer(out, out, color=True, show_thinking=True)
    r.event(BlockStart(0, "thinking"))
    r.event(ContentDelta(0, "thinking", "hmm"))
    assert f"{DIM}hmm{RESET}" in out.getvalue()


def test_diffs_are_recognised_and_coloured() -> None:
    assert is_diff(DIFF) and is_diff("edited app.py\n" + DIFF)
    assert not is_diff("@@ not a hunk\n") and not is_diff("+++ x\n")
    c = color_diff(DIFF)
    assert f"{RED}-    return 1{RESET}" in c and f"{GREEN}+    return 2{RESET}" in c
    assert f"{CYAN}@@ -1,3 +1,3 @@{RESET}" in c


def test_tool_results_collapse_and_expand() -> None:
    out = io.StringIO()
    r = Renderer(out, out, color=True, show_thinking=True)
    call = ToolUse("t1", "bash", {"command": "seq 3"})
    r.event(ToolCallStart(call))
    r.event(ToolResult(call, "1\n2\n3\n"))
    edit = ToolUse("t2", "edit", {"path": "app.py"})
    r.event(ToolCallStart(edit))
    r.event(ToolResult(edit, DIFF))
    s = out.getvalue()
    assert "↳ 1 2 3 (+2 lines · /expand 1)" in s
    assert f"{GREEN}+    return 2{RESET}" in s  # a diff is shown, coloured
    assert r.expand(1) is not None and r.expand(1).endswith("1\n2\n3")  # type: ignore[union-attr]
    assert r.expand(None) is not None and "+    return 2" in r.expand(None)  # type: ignore[operator]
    assert r.expand(3) is None and r.expand(0) is None
    assert result_summary(ToolResult(call, "")) == "  ↳ (empty)"


def test_usage_line() -> None:
    u = Usage(input_tokens=1200, output_tokens=30, cache_read_tokens=5000, cache_write_tokens=100)
    assert usage_line(u, 1.25) == "in 1,200 · cache 5,000r/100w · out 30 · 1.2s"
    assert (
        usage_line(u, 2.0, cost=0.0123) == "in 1,200 · cache 5,000r/100w · out 30 · $0.0123 · 2.0s"
    )


def test_status_line_runs_until_stopped_and_erases_itself() -> None:
    out = io.StringIO()
    s = Status(out, threading.Lock(), interval=0.01)
    s.start("tool bash")
    time.sleep(0.1)
    s.stop()
    text = out.getvalue()
    assert "waiting for tool bash · 0.0s" in text
    assert text.endswith("\r\x1b[2K") and not s.active
    n = len(text)
    time.sleep(0.05)
    assert len(out.getvalue()) == n  # nothing after stop


def test_cells_counts_terminal_columns() -> None:
    from panto.cli.render import cells

    assert cells("abc") == 3 and cells("a\tb") == 9
    assert cells("日本語") == 6 and cells("e\u0301") == 1 and cells("›") == 1


TABLE = "| Name | Size |\n|:---|---:|\n| `a.py` | 12 |\n| b | 1234 |\n"


def test_markdown_numbered_lists_quotes_and_rules() -> None:
    md = Markdown()
    assert md.line("1. first") == f"{BOLD}1.{RESET} first"
    assert md.line("  12) the `x` step") == f"  {BOLD}12){RESET} the {CYAN}x{RESET} step"
    assert md.line("> quoted") == f"{DIM}│{RESET} quoted"
    assert md.line("---") == f"{DIM}{'─' * 40}{RESET}"
    assert md.line("1.5 is a number") == "1.5 is a number"


def test_markdown_tables_are_aligned() -> None:
    md = Markdown()
    bar = f" {DIM}│{RESET} "
    assert md.table(TABLE.splitlines(), 80) == [
        f"{BOLD}Name{RESET}{bar}{BOLD}Size{RESET}",
        f"{DIM}─────┼─────{RESET}",
        f"{CYAN}a.py{RESET}{bar}  12",
        f"b   {bar}1234",
    ]
    # centred, missing cells, escaped pipes
    rows = ["| a | b |", "|:-:|---|", "| wide cell | x \\| y |", "| z |"]
    assert md.table(rows, 80) == [
        f"    {BOLD}a{RESET}    {bar}{BOLD}b{RESET}",
        f"{DIM}──────────┼──────{RESET}",
        f"wide cell{bar}x | y",
        f"    z    {bar}".rstrip(),
    ]
    # not a table (no separator row), or too wide: line by line
    assert md.table(["| x |", "| y |"], 80) == ["| x |", "| y |"]
    assert md.table(TABLE.splitlines(), 8)[0] == "| Name | Size |"


def test_a_streamed_table_is_held_until_it_is_complete() -> None:
    out = io.StringIO()
    r = Renderer(out, out, color=True, show_thinking=True, markdown=True)
    r.event(BlockStart(0, "text"))
    text = "Sizes:\n\n" + TABLE + "That is all.\n1. one"
    for i in range(0, len(text), 3):
        r.event(ContentDelta(0, "text", text[i : i + 3]))
        if i + 3 <= text.index("That"):
            assert "Name" not in out.getvalue()  # held back
    r.event(BlockComplete(0, None))  # type: ignore[arg-type]
    s = out.getvalue()
    assert "|" not in s
    assert s.startswith("Sizes:\n\n" + f"{BOLD}Name{RESET}")
    assert f"b    {DIM}│{RESET} 1234\nThat is all.\n" in s
    assert s.endswith(f"1. one\r\x1b[2K{BOLD}1.{RESET} one\n")


def test_a_table_at_the_end_of_the_answer_and_in_code_blocks() -> None:
    out = io.StringIO()
    r = Renderer(out, out, color=True, show_thinking=True, markdown=True)
    r.event(BlockStart(0, "text"))
    r.event(ContentDelta(0, "text", "```\n| in | code |\n```\n" + TABLE.rstrip("\n")))
    r.event(BlockComplete(0, None))  # type: ignore[arg-type]
    s = out.getvalue()
    assert "| in | code |" in s  # code is not a table
    assert s.endswith(f"b    {DIM}│{RESET} 1234\n")  # flushed when the block ends


def test_tables_are_plain_when_not_a_terminal() -> None:
    out = io.StringIO()
    r = Renderer(out, out, color=False, show_thinking=False)
    r.event(BlockStart(0, "text"))
    r.event(ContentDelta(0, "text", TABLE + "1. one\n"))
    assert out.getvalue() == TABLE + "1. one\n"
