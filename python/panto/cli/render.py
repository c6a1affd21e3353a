"""Turning a turn's events into terminal text.

- ``Renderer`` writes the answer's text to one stream and the side channel
  (tool summaries, retries, errors) to another; in the REPL both are stdout.
- ``Markdown`` formats the answer's text line by line (headings, bullet
  and numbered lists, quotes, rules, code blocks, inline ``code`` and
  **bold**) when stdout is a terminal: a line is streamed as it arrives and
  redrawn formatted when it ends.  Table rows are held back until the table
  ends, then shown with aligned columns.
- ``Status`` is the one-line spinner shown while waiting for the model or a
  tool ("⠋ waiting for model · 2.3s"), on the side channel; it is erased
  as soon as output starts.  While the model writes a tool call it says
  which, with the arguments' size so far ("waiting for the write call ·
  4.1s · 12.3 KB").  After ``WAIT_HINT_AFTER`` seconds of waiting
  for the model it says how the wait ends (Ctrl-C, the ``[timeouts]``).
  ``StallHint`` covers silences inside an answer: after a few seconds
  without an event, a dim "⠋ waiting for model · 12s · Ctrl-C cancels"
  follows the cursor until the stream goes on.
- Tool results are one line each (``↳ first line (+6 lines · /expand 3)``),
  kept in ``Renderer.results`` for ``/expand``; a result that is a unified
  diff (``edit``) is shown coloured.
"""

from __future__ import annotations

import contextlib
import json
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from typing import IO, Any

from ..events import (
    BlockComplete,
    BlockStart,
    CompactionEnd,
    CompactionStart,
    ContentDelta,
    MessageComplete,
    ProviderRetry,
    ToolCallStart,
    ToolDetails,
    ToolResult,
)
from ..images import image_marker
from ..patterns import LazyPattern

__all__ = [
    "Renderer",
    "Markdown",
    "is_table_row",
    "Status",
    "wait_hint",
    "wait_hint_after",
    "WAIT_HINT_AFTER",
    "StallHint",
    "stall_hint_after",
    "STALL_HINT_AFTER",
    "one_line",
    "tool_summary",
    "result_summary",
    "usage_line",
    "is_diff",
    "cells",
    "color_diff",
    "DIM",
    "RED",
    "GREEN",
    "CYAN",
    "BOLD",
    "RESET",
]

DIM, RED, GREEN, CYAN, BOLD, RESET = (
    "\x1b[2m",
    "\x1b[31m",
    "\x1b[32m",
    "\x1b[36m",
    "\x1b[1m",
    "\x1b[0m",
)
CLEAR_LINE = "\r\x1b[2K"
#: the diff lines shown inline before the rest is left to /expand
DIFF_LINES = 40


def one_line(s: str, width: int = 80) -> str:
    s = " ".join(s.split())
    return s if len(s) <= width else s[: width - 1] + "…"


def tool_summary(ev: ToolCallStart) -> str:
    args = json.dumps(ev.call.input, ensure_ascii=False) if ev.call.input else ""
    return f"⚙ {ev.call.name}({one_line(args, 70)})"


def result_summary(ev: ToolResult, index: int | None = None) -> str:
    content = ev.content.rstrip("\n")
    lines = content.count("\n") + 1 if content else 0
    mark = "✗" if ev.is_error else "↳"
    if lines > 1:
        more = f" (+{lines - 1} lines" + (f" · /expand {index})" if index is not None else ")")
    else:
        more = ""
    images = "".join(" " + image_marker(i) for i in ev.images)  # never the data
    shown = one_line(content, 70) or ("" if images else "(empty)")
    return f"  {mark} {shown}{more}{images}"


#: the line a reply that did not end normally gets (+ the provider's reason)
STOP_NOTES = {
    "length": "the reply was cut short: it reached the output token limit (raise --max-tokens)",
    "refusal": "the model refused to answer",
}


def usage_line(usage: Any, seconds: float, cost: float | None = None) -> str:
    parts = [f"in {usage.input_tokens:,}"]
    if usage.cache_read_tokens or usage.cache_write_tokens:
        parts.append(f"cache {usage.cache_read_tokens:,}r/{usage.cache_write_tokens:,}w")
    out = f"out {usage.output_tokens:,}"
    if usage.reasoning_tokens:
        out += f" ({usage.reasoning_tokens:,} reasoning)"
    parts.append(out)
    if cost is not None:
        parts.append(f"${cost:.4f}")
    return " · ".join(parts) + f" · {seconds:.1f}s"


_HUNK = LazyPattern(r"^@@ -\d+(,\d+)? \+\d+(,\d+)? @@", re.M)


#: how to undo or turn off auto-compaction (the notice after it)
COMPACTION_HELP = "undo: /tree (continue from before it) · turn off: [compaction] auto = false"


def compaction_start_line(ev: CompactionStart) -> str:
    return (
        f"auto-compaction: the context (~{ev.tokens:,} tokens) reached {ev.limit:,} of the "
        f"model's {ev.window:,}; summarizing older messages…"
    )


def compaction_end_line(ev: CompactionEnd) -> str:
    if ev.error:
        return f"auto-compaction failed: {ev.error}; the conversation is unchanged"
    return (
        f"auto-compacted {ev.messages} messages into a summary: ~{ev.tokens_before:,} -> "
        f"~{ev.tokens_after:,} tokens · {COMPACTION_HELP}"
    )


def is_diff(text: str) -> bool:
    """True for a unified diff (possibly after a line or two of preamble)."""
    return bool(_HUNK.search(text)) and ("\n+++ " in text or text.startswith("+++ "))


def color_diff(text: str) -> str:
    out = []
    for line in text.split("\n"):
        if line.startswith(("+++", "---")):
            out.append(f"{BOLD}{line}{RESET}")
        elif line.startswith("@@"):
            out.append(f"{CYAN}{line}{RESET}")
        elif line.startswith("+"):
            out.append(f"{GREEN}{line}{RESET}")
        elif line.startswith("-"):
            out.append(f"{RED}{line}{RESET}")
        else:
            out.append(f"{DIM}{line}{RESET}" if line else line)
    return "\n".join(out)


def cells(s: str) -> int:
    """Terminal columns ``s`` takes (wide East Asian characters 2, combining
    marks 0, a tab up to 8): a line is only redrawn when it did not wrap."""
    if s.isascii():
        return len(s.expandtabs())
    import unicodedata

    n = 0
    for ch in s:
        if ch == "\t":
            n += 8 - n % 8
        elif unicodedata.combining(ch):
            continue
        elif unicodedata.east_asian_width(ch) in ("W", "F"):
            n += 2
        else:
            n += 1
    return n


# -- Markdown -----------------------------------------------------------------------------

_HEADING = LazyPattern(r"^(#{1,6})\s+(.*)$")
_BULLET = LazyPattern(r"^(\s*)[-*+]\s+(.*)$")
_NUMBERED = LazyPattern(r"^(\s*)(\d{1,9}[.)])\s+(.*)$")
_QUOTE = LazyPattern(r"^\s*>\s?(.*)$")
_RULE = LazyPattern(r"^\s{0,3}([-*_])(?:\s*\1){2,}\s*$")
_INLINE = LazyPattern(r"`([^`\n]+)`|\*\*([^*\n]+)\*\*")
_CELL_SPLIT = LazyPattern(r"(?<!\\)\|")
_SEPARATOR = LazyPattern(r"^\s*:?-+:?\s*$")


def is_table_row(raw: str) -> bool:
    """A line that may belong to a Markdown table (``| a | b |``)."""
    return raw.lstrip().startswith("|")


def _row_cells(raw: str) -> list[str]:
    r = raw.strip()
    if r.startswith("|"):
        r = r[1:]
    if r.endswith("|") and not r.endswith("\\|"):
        r = r[:-1]
    return [c.strip().replace("\\|", "|") for c in _CELL_SPLIT.split(r)]


def _plain(s: str) -> str:
    """``s`` as ``Markdown._inline`` shows it, without the escape codes."""
    return _INLINE.sub(lambda m: m.group(1) if m.group(1) is not None else m.group(2), s)


class Markdown:
    """Formats complete lines of Markdown for a terminal (stateful: it
    knows whether it is inside a fenced code block).  Tables are formatted
    as a whole (``table``): the renderer holds their rows back until the
    table ends."""

    def __init__(self) -> None:
        self.in_code = False

    def reset(self) -> None:
        self.in_code = False

    @staticmethod
    def _inline(s: str) -> str:
        def sub(m: re.Match[str]) -> str:
            if m.group(1) is not None:
                return f"{CYAN}{m.group(1)}{RESET}"
            return f"{BOLD}{m.group(2)}{RESET}"

        return _INLINE.sub(sub, s)

    def line(self, raw: str) -> str:
        """The formatted form of one line (without its newline)."""
        if raw.lstrip().startswith("```"):
            self.in_code = not self.in_code
            return f"{DIM}{raw}{RESET}"
        if self.in_code:
            return f"{CYAN}{raw}{RESET}"
        m = _HEADING.match(raw)
        if m:
            return f"{BOLD}{m.group(2)}{RESET}"
        if _RULE.match(raw):
            return f"{DIM}{'─' * 40}{RESET}"
        m = _BULLET.match(raw)
        if m:
            return f"{m.group(1)}• {self._inline(m.group(2))}"
        m = _NUMBERED.match(raw)
        if m:
            return f"{m.group(1)}{BOLD}{m.group(2)}{RESET} {self._inline(m.group(3))}"
        m = _QUOTE.match(raw)
        if m:
            return f"{DIM}│{RESET} {self._inline(m.group(1))}"
        return self._inline(raw)

    def table(self, rows: list[str], width: int) -> list[str]:
        """The lines of a table: columns aligned (as its separator row
        says), the header bold, ``│`` between cells.  Rows that are not a
        table (no separator row under the first), or a table wider than
        ``width`` columns, come back line by line as ``line`` formats them."""
        if len(rows) < 2 or not all(_SEPARATOR.match(c) for c in _row_cells(rows[1])):
            return [self.line(r) for r in rows]
        seps = _row_cells(rows[1])
        body = [_row_cells(r) for r in rows[:1] + rows[2:]]
        n = max(len(seps), *(len(r) for r in body))
        body = [r + [""] * (n - len(r)) for r in body]
        align = []
        for i in range(n):
            sep = seps[i].strip() if i < len(seps) else "-"
            right, left = sep.endswith(":"), sep.startswith(":")
            align.append("^" if left and right else ">" if right else "<")
        widths = [max(cells(_plain(r[i])) for r in body) for i in range(n)]
        if sum(widths) + 3 * (n - 1) > width:
            return [self.line(r) for r in rows]

        def fmt(row: list[str], header: bool) -> str:
            out = []
            for text, w, a in zip(row, widths, align, strict=True):
                pad = w - cells(_plain(text))
                left = pad // 2 if a == "^" else pad if a == ">" else 0
                shown = f"{BOLD}{_plain(text)}{RESET}" if header else self._inline(text)
                out.append(" " * left + shown + " " * (pad - left))
            return f" {DIM}│{RESET} ".join(out).rstrip()

        rule = f"{DIM}{'─┼─'.join('─' * w for w in widths)}{RESET}"
        return [fmt(body[0], True), rule] + [fmt(r, False) for r in body[1:]]


# -- the status line ----------------------------------------------------------------------

_FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

#: seconds of waiting for the model before the status line says how the
#: wait ends (Ctrl-C, the timeouts); PANTO_WAIT_HINT_AFTER overrides it
WAIT_HINT_AFTER = 20.0


def wait_hint_after(env: Mapping[str, str] | None = None) -> float:
    """``WAIT_HINT_AFTER``, or ``PANTO_WAIT_HINT_AFTER`` when that is a
    number of seconds (tests set it low)."""
    import os

    raw = (os.environ if env is None else env).get("PANTO_WAIT_HINT_AFTER", "")
    try:
        value = float(raw)
    except ValueError:
        return WAIT_HINT_AFTER
    return value if value >= 0 else WAIT_HINT_AFTER


def wait_hint(first_byte: float | None, idle: float | None) -> str:
    """What the status line adds after a long wait for the model: how to
    stop waiting, and the ``[timeouts]`` that end the wait (the attempt
    fails and is retried): ``first_byte`` bounds the wait for the response's
    headers, ``idle`` the silence between its events (a consumer cannot tell
    which one runs: the turn holds ``MessageStart`` back until content)."""
    limits = [f"{name} {v:g}s" for name, v in (("first_byte", first_byte), ("idle", idle)) if v]
    end = "timeouts: " + ", ".join(limits) if limits else "no timeout set"
    return f"no reply yet · Ctrl-C cancels · {end}"


class Status:
    """A spinner line on a terminal: ``⠋ waiting for model · 1.2s``.  A
    thread redraws it every ``interval`` seconds until ``stop()`` erases it.
    ``lock`` serialises its writes with the renderer's.  After
    ``hint_after`` seconds of one wait the line adds ``hint()`` (how the
    wait ends), when ``hint`` returns text for what it waits for."""

    def __init__(
        self,
        out: IO[str],
        lock: threading.Lock,
        interval: float = 0.1,
        *,
        hint: Callable[[str], str | None] | None = None,
        hint_after: float = WAIT_HINT_AFTER,
    ) -> None:
        self.out = out
        self.lock = lock
        self.interval = interval
        self.hint = hint
        self.hint_after = hint_after
        self.what = ""
        #: shown after the elapsed time (the size of a tool call being written)
        self.detail = ""
        #: shown last, always (the permission mode when it is not the default)
        self.note = ""
        self.started = 0.0
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._shown = False

    @property
    def active(self) -> bool:
        return self._thread is not None

    def start(self, what: str) -> None:
        """Show (or retitle) the status line; the clock starts again when
        what it waits for changes."""
        if what != self.what or self._thread is None:
            self.started = time.monotonic()
            self.detail = ""
        self.what = what
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="panto-status", daemon=True)
        self._thread.start()

    def text(self, frame: str) -> str:
        """The line (without colour), cut to the terminal's width."""
        elapsed = time.monotonic() - self.started
        text = f"{frame} waiting for {self.what} · {elapsed:.1f}s"
        if self.detail:
            text += f" · {self.detail}"
        if self.hint is not None and elapsed >= self.hint_after:
            extra = self.hint(self.what)
            if extra:
                text += f" · {extra}"
        if self.note:
            text += f" · {self.note}"
        width = _columns(self.out) - 1
        return text if cells(text) <= width else text[: max(width - 1, 1)] + "…"

    def _run(self) -> None:
        i = 0
        while True:
            with self.lock:
                if self._stop.is_set():
                    return
                text = self.text(_FRAMES[i % len(_FRAMES)])
                try:
                    self.out.write(f"{CLEAR_LINE}{DIM}{text}{RESET}")
                    self.out.flush()
                except (OSError, ValueError):
                    return
                self._shown = True
            i += 1
            if self._stop.wait(self.interval):
                return

    def stop(self) -> None:
        """Erase the line (the caller holds no lock)."""
        t = self._thread
        if t is None:
            return
        with self.lock:
            self._stop.set()
            if self._shown:
                try:
                    self.out.write(CLEAR_LINE)
                    self.out.flush()
                except (OSError, ValueError):
                    pass
                self._shown = False
        t.join()
        self._thread = None


#: seconds without an event in the middle of an answer before the stall
#: hint shows; PANTO_STALL_HINT_AFTER overrides it (tests set it low)
STALL_HINT_AFTER = 5.0

_ANSI = LazyPattern(r"\x1b\[[0-9;?]*[A-Za-z]")


def stall_hint_after(env: Mapping[str, str] | None = None) -> float:
    """``STALL_HINT_AFTER``, or ``PANTO_STALL_HINT_AFTER`` when that is a
    number of seconds."""
    import os

    try:
        value = float((os.environ if env is None else env).get("PANTO_STALL_HINT_AFTER", ""))
    except ValueError:
        return STALL_HINT_AFTER
    return value if value >= 0 else STALL_HINT_AFTER


def advance(col: int, s: str) -> int:
    """The cursor's column after writing ``s`` at column ``col`` (escape
    sequences take none; a newline or carriage return starts again at 0)."""
    cut = max(s.rfind("\n"), s.rfind("\r"))
    if cut >= 0:
        col, s = 0, s[cut + 1 :]
    if "\x1b" in s:
        s = _ANSI.sub("", s)
    return col + cells(s)


class StallHint:
    """The answer stopped in mid-stream: after ``after`` seconds without an
    event a dim ``⠋ waiting for model · 12s · Ctrl-C cancels`` follows the
    cursor on the answer's line (shortened, or left out, when the line has
    no room), redrawn as the seconds pass and erased before anything else
    is written.  The spinner line (``Status``) covers waits before output;
    this covers the silences inside it.  ``lock`` is the renderer's."""

    def __init__(
        self, out: IO[str], lock: threading.Lock, after: float, interval: float = 0.1
    ) -> None:
        self.out = out
        self.lock = lock
        self.after = after
        self.interval = interval
        self.armed = False
        self.last = 0.0  # when the last event arrived
        self.col = 0  # the cursor's column on the answer's line
        self.shown = 0  # columns of the hint on the screen (0: none)
        self._thread: threading.Thread | None = None

    def arm(self) -> None:
        """An answer is streaming: watch for silences (the caller holds
        ``lock``)."""
        self.last = time.monotonic()
        self.armed = True
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="panto-stall", daemon=True)
            self._thread.start()

    def disarm(self) -> None:
        """No answer is streaming (the caller holds ``lock``)."""
        self.armed = False
        self.erase()

    def erase(self) -> None:
        """Take the hint off the screen (the caller holds ``lock``)."""
        if self.shown:
            try:
                self.out.write(f"\x1b[{self.shown}D\x1b[K")
                self.out.flush()
            except (OSError, ValueError):
                pass
            self.shown = 0

    def text(self, frame: str, silent: float) -> str | None:
        """The hint for the room left on the line, or None when none fits."""
        width = _columns(self.out)
        if width < 2 or (self.col and self.col % width == 0):
            return None  # the line is full: the cursor waits to wrap
        room = width - self.col % width - 1  # the last column stays free: no wrap
        for text in (
            f"  {frame} waiting for model · {silent:.0f}s · Ctrl-C cancels",
            f"  {frame} {silent:.0f}s",
        ):
            if cells(text) <= room:
                return text
        return None

    def _run(self) -> None:
        i = 0
        while True:
            time.sleep(self.interval)
            with self.lock:
                silent = time.monotonic() - self.last
                if not self.armed or silent < self.after:
                    continue
                text = self.text(_FRAMES[i % len(_FRAMES)], silent)
                self.erase()
                if text is None:
                    continue
                try:
                    self.out.write(f"{DIM}{text}{RESET}")
                    self.out.flush()
                except (OSError, ValueError):
                    return
                self.shown = cells(text)
            i += 1


def _size(n: int) -> str:
    """A byte count for the status line: ``812 B``, ``12.3 KB``."""
    return f"{n} B" if n < 1000 else f"{n / 1000:.1f} KB"


def _columns(f: IO[str]) -> int:
    """The width of the terminal ``f`` writes to (its own size: stdout may
    be a file while the status line is on stderr)."""
    import os
    import shutil

    try:
        return os.get_terminal_size(f.fileno()).columns
    except (AttributeError, ValueError, OSError):
        return shutil.get_terminal_size().columns


def _isatty(f: IO[str]) -> bool:
    try:
        return f.isatty()
    except (AttributeError, ValueError):
        return False


# -- the renderer -------------------------------------------------------------------------


class Renderer:
    """Writes a turn's events as text: answer text to ``out``; thinking
    (dimmed, when ``show_thinking``), tool summaries, retries and errors to
    ``err``.  ``markdown`` formats the answer's lines; ``status`` shows what
    the turn waits for on ``err`` (both only make sense on a terminal).
    ``collapse_thinking`` replaces a finished thinking block by one line
    (``/expand thinking N`` shows it again); ``thinking_to_err`` writes each
    finished thinking block (a reasoning summary) dimmed on ``err`` instead
    (``panto -p``: stdout holds the answer only).  ``timeouts`` (``(first_byte, idle)`` seconds, None when off) make a long
    wait for the model say how it ends, after ``hint_after`` seconds."""

    def __init__(
        self,
        out: IO[str],
        err: IO[str],
        *,
        color: bool,
        show_thinking: bool,
        markdown: bool = False,
        status: bool = False,
        collapse_thinking: bool = False,
        thinking_to_err: bool = False,
        timeouts: tuple[float | None, float | None] | None = None,
        hint_after: float = WAIT_HINT_AFTER,
        stall_after: float = STALL_HINT_AFTER,
    ) -> None:
        self.out, self.err = out, err
        self.color = color
        self.show_thinking = show_thinking
        self.col0 = True  # the cursor is at the start of a line (on out)
        self.md = Markdown() if markdown else None
        self.lock = threading.Lock()
        self.timeouts = timeouts
        hint = self._hint if timeouts is not None else None
        self.status = Status(err, self.lock, hint=hint, hint_after=hint_after) if status else None
        #: the hint for silences inside an answer, on the answer's terminal
        self.stall = StallHint(out, self.lock, stall_after) if status and _isatty(out) else None
        # out and err show on one terminal: a side-channel line starts a new row
        self.shared = err is out or (status and _isatty(out))
        self.results: list[ToolResult] = []  # every tool result shown, for /expand
        #: a finished thinking block is shown as one line (on a terminal)
        self.collapse_thinking = collapse_thinking
        self.thinking_to_err = thinking_to_err
        self.thoughts: list[str] = []  # every thinking block, for /expand thinking
        self._thought: list[str] | None = None  # the one being streamed
        self._running: dict[str, str] = {}  # call id -> tool name
        self._call_bytes = 0  # the size of the tool call's arguments being written
        self._kind = ""  # the kind of the block being streamed
        self._line = ""  # the raw text of the current answer line
        #: what the current line is: "text" (streamed as it arrives),
        #: "table" (a table row: held back), "blank" (only spaces so far:
        #: held back), None (nothing of it yet)
        self._held: str | None = None
        self._table: list[str] = []  # the rows of a table being received

    def _hint(self, what: str) -> str | None:
        if not what.startswith("model") or self.timeouts is None:
            return None
        return wait_hint(*self.timeouts)

    def c(self, code: str, s: str) -> str:
        return f"{code}{s}{RESET}" if self.color else s

    def _write(self, s: str) -> None:
        if s:
            if self.status is not None:
                self.status.stop()
            if self.stall is None:
                self.out.write(s)
            else:
                with self.lock:
                    self.stall.erase()
                    self.out.write(s)
                    self.stall.col = advance(self.stall.col, s)
            self.col0 = s.endswith("\n")

    def newline(self) -> None:
        self._end_line()
        self._flush_table()
        if not self.col0:
            self._write("\n")
        self.out.flush()

    def note(self, s: str, code: str = DIM) -> None:
        """A line on the side channel."""
        if self.status is not None:
            self.status.stop()
        self._quiet()
        if self.shared:
            self.newline()
        self.err.write(self.c(code, s) + "\n")
        self.err.flush()

    def _quiet(self) -> None:
        """No stall hint until the answer streams again."""
        if self.stall is not None:
            with self.lock:
                self.stall.disarm()

    def waiting(self, what: str) -> None:
        """Show the status line (a no-op without one)."""
        self._quiet()
        if self.status is not None:
            if not self.col0 and self.shared:
                self._write("\n")
            self.status.start(what)

    def stop_status(self) -> None:
        if self.status is not None:
            self.status.stop()
        self._quiet()

    @contextlib.contextmanager
    def busy(self, what: str) -> Iterator[None]:
        """The status line shows ``what`` now and is gone when the block
        ends, before an error is reported."""
        self.waiting(what)
        try:
            yield
        finally:
            self.stop_status()

    # -- answer text

    def _columns(self) -> int:
        import shutil  # only on a terminal (Markdown on): keeps `panto -p` imports small

        return shutil.get_terminal_size().columns

    def _end_line(self) -> None:
        """The current line ends (a newline, or the block ends): a table
        row joins the held table; another line is redrawn formatted (when
        it fits on one row)."""
        raw, self._line = self._line, ""
        held, self._held = self._held, None
        if self.md is None or self._kind != "text":
            return
        if held == "table":
            self._table.append(raw)
            return
        self._flush_table()
        if held == "blank":  # nothing but spaces: written as it is
            self._write(raw)
        if not raw:
            return
        formatted = self.md.line(raw)
        if formatted != raw and cells(raw) < self._columns():
            self._write(CLEAR_LINE + formatted)

    def _flush_table(self) -> None:
        """Write the held table rows, formatted as a whole."""
        rows, self._table = self._table, []
        if rows and self.md is not None:
            self._write("\n".join(self.md.table(rows, self._columns() - 1)) + "\n")

    def _stream(self, part: str) -> None:
        """Part of the current line arrives.  A line that may be a table
        row (it starts with ``|``, outside a code block) is held back until
        the table is complete; so are leading spaces until the line shows
        which it is."""
        assert self.md is not None
        self._line += part
        if self._held == "text":
            self._write(part)
            return
        if not self._line.strip():
            self._held = "blank"
        elif is_table_row(self._line) and not self.md.in_code:
            self._held = "table"
        else:
            self._held = "text"
            self._flush_table()
            self._write(self._line)

    def _text(self, text: str) -> None:
        if self.md is None:
            self._write(text)
            return
        parts = text.split("\n")
        for part in parts[:-1]:
            if part:
                self._stream(part)
            held = self._held == "table"
            self._end_line()
            if not held:
                self._write("\n")
        if parts[-1]:
            self._stream(parts[-1])

    def tool_result(self, ev: ToolResult, index: int) -> None:
        if not ev.is_error and is_diff(ev.content) and self.color:
            lines = ev.content.rstrip("\n").split("\n")
            self.note(f"  ↳ {ev.call.name}: diff", DIM)
            shown = "\n".join(lines[:DIFF_LINES])
            self.err.write(color_diff(shown) + "\n")
            if len(lines) > DIFF_LINES:
                self.note(f"  … {len(lines) - DIFF_LINES} more lines · /expand {index}")
            self.err.flush()
            return
        self.note(result_summary(ev, index), RED if ev.is_error else DIM)

    def _end_thinking(self, text: str) -> None:
        """A thinking block ended: keep it for ``/expand thinking``; on a
        terminal (``collapse_thinking``) replace what was shown of it by one
        line, unless it scrolled out of reach."""
        self._thought = None
        if not text.strip():
            return
        self.thoughts.append(text)
        if self.thinking_to_err:
            self.note(text.strip("\n"))
            return
        if not (self.show_thinking and self.collapse_thinking):
            return
        import shutil

        size = shutil.get_terminal_size()
        lines = text.split("\n")
        up = sum(max(1, -(-cells(line) // size.columns)) for line in lines) - 1
        if up >= size.lines - 1:  # its start is off the screen: leave it
            self.newline()
        else:
            self._write(f"\r\x1b[{up}A\x1b[J" if up else "\r\x1b[J")
        n = len(text)
        chars = f"{n / 1000:.1f}k" if n >= 1000 else str(n)
        self._write(
            self.c(DIM, f"∴ thinking ({chars} chars) · /expand thinking {len(self.thoughts)}")
            + "\n"
        )

    def expand_thinking(self, index: int | None) -> str | None:
        """The full text of thinking block ``index`` (1-based; None: the last)."""
        i = len(self.thoughts) if index is None else index
        if not 1 <= i <= len(self.thoughts):
            return None
        return self.c(DIM, f"[thinking {i}]") + "\n" + self.c(DIM, self.thoughts[i - 1].strip("\n"))

    def expand(self, index: int | None) -> str | None:
        """The full text of tool result ``index`` (1-based; None: the last)."""
        if not self.results:
            return None
        i = len(self.results) if index is None else index
        if not 1 <= i <= len(self.results):
            return None
        ev = self.results[i - 1]
        head = f"[{i}] {ev.call.name}" + (" (error)" if ev.is_error else "")
        body = color_diff(ev.content) if self.color and is_diff(ev.content) else ev.content
        body = body.rstrip("\n") + "".join("\n" + image_marker(i) for i in ev.images)
        return self.c(DIM, head) + "\n" + body

    def event(self, ev: Any) -> None:
        stall = self.stall
        if stall is None:
            self._event(ev)
            return
        with self.lock:
            stall.erase()
        self._event(ev)
        # the stream is alive: watch the silence after this event, unless
        # the spinner line runs or the message is complete (what follows,
        # tools or the turn's end, says itself)
        with self.lock:
            if type(ev) is MessageComplete or (self.status is not None and self.status.active):
                stall.armed = False
            else:
                stall.arm()

    def _event(self, ev: Any) -> None:
        tp = type(ev)
        if tp is ContentDelta:
            if ev.kind == "text":
                self._text(ev.text)
                self.out.flush()
            elif ev.kind == "thinking":
                if self._thought is not None:
                    self._thought.append(ev.text)
                if self.show_thinking:
                    self._write(self.c(DIM, ev.text))
                    self.out.flush()
            elif self.status is not None and self.status.active:  # a tool call's arguments
                self._call_bytes += len(ev.text)
                self.status.detail = _size(self._call_bytes)
        elif tp is ToolDetails:
            # the model writes a tool call (a whole file for `write`: it can
            # take a minute); the status line says so and counts its size
            self.newline()
            self._call_bytes = 0
            self.waiting(f"the {ev.name} call")
        elif tp is BlockStart:
            if ev.kind in ("text", "thinking"):
                self.newline()
                self._kind = ev.kind
                if self.md is not None and ev.kind == "text":
                    self.md.reset()
                self._thought = [] if ev.kind == "thinking" else None
        elif tp is BlockComplete:
            if self._thought is not None:
                self._end_thinking("".join(self._thought))
            self.newline()
            self._kind = ""
        elif tp is ToolCallStart:
            self.note(tool_summary(ev))
            self._running[ev.call.id] = ev.call.name
            self.waiting("tool " + ", ".join(dict.fromkeys(self._running.values())))
        elif tp is ToolResult:
            self._running.pop(ev.call.id, None)
            self.results.append(ev)
            self.tool_result(ev, len(self.results))
            if self._running:
                self.waiting("tool " + ", ".join(dict.fromkeys(self._running.values())))
            else:
                self.waiting("model")
        elif tp is ProviderRetry:
            self.note(f"retrying in {ev.delay:.1f}s (attempt {ev.attempt}): {ev.reason}")
            self.waiting("model (retry)")
        elif tp is CompactionStart:
            self.newline()
            self.note(compaction_start_line(ev))
            self.waiting("auto-compaction")
            if self.status is not None:
                self.status.detail = "the model summarizes older messages · Ctrl-C cancels it"
        elif tp is CompactionEnd:
            self.note(compaction_end_line(ev), RED if ev.error else DIM)
            self.waiting("model")
        elif tp is MessageComplete:
            self.newline()
            if ev.message.error:
                self.note(ev.message.error, RED)
            elif ev.stop_reason in STOP_NOTES:
                raw = f" ({ev.raw_stop_reason})" if ev.raw_stop_reason else ""
                self.note(STOP_NOTES[ev.stop_reason] + raw, RED)
            if ev.final:
                self.stop_status()
