"""An arrow-key picker for a list of lines on the terminal (``/tree``).

``pick(lines)`` shows the lines with one selected (reverse video) and reads
keys in cbreak mode: Up/Down (or k/j, Ctrl-P/Ctrl-N), PgUp/PgDn, Home/End
(g/G) move; Enter picks; another key named in ``keys`` picks with that key;
Esc, q, Ctrl-C and Ctrl-D cancel.  The list is erased afterwards and the
terminal's modes restored, whatever happens (SIGTERM included).
"""

from __future__ import annotations

import contextlib
import os
import re
import sys
from collections.abc import Collection, Sequence
from typing import IO

from .render import cells
from .signals import Terminated

__all__ = ["pick"]

_KEY = re.compile(r"\x1b\[[0-9;]*[A-Za-z~]|\x1bO.|.", re.S)
UP = ("\x1b[A", "\x1bOA", "k", "\x10")
DOWN = ("\x1b[B", "\x1bOB", "j", "\x0e")
PAGE_UP, PAGE_DOWN = ("\x1b[5~",), ("\x1b[6~",)
HOME = ("\x1b[H", "\x1bOH", "\x1b[1~", "g")
END = ("\x1b[F", "\x1bOF", "\x1b[4~", "G")
CANCEL = ("\x1b", "q", "\x03", "\x04")
REVERSE, DIM, RESET = "\x1b[7m", "\x1b[2m", "\x1b[0m"


def _fit(s: str, width: int) -> str:
    if cells(s) <= width:
        return s
    while s and cells(s) > width - 1:
        s = s[:-1]
    return s + "…"


def pick(
    lines: Sequence[str],
    *,
    start: int = 0,
    keys: Collection[str] = (),
    footer: str = "",
    out: IO[str] | None = None,
    fd: int | None = None,
) -> tuple[int, str] | None:
    """``(index, key)`` of the chosen line (``key`` is ``"enter"`` or one of
    ``keys``), or None when cancelled.  ``fd`` (default stdin) must be a
    terminal."""
    import shutil
    import termios

    out = sys.stdout if out is None else out
    fd = sys.stdin.fileno() if fd is None else fd
    if not lines:
        return None
    size = shutil.get_terminal_size()
    width = max(size.columns - 1, 10)
    height = max(1, min(len(lines), size.lines - 2))
    sel = min(max(start, 0), len(lines) - 1)
    top = 0
    drawn = False

    def draw() -> None:
        nonlocal top, drawn
        top = min(max(top, sel - height + 1), sel)
        buf = [f"\r\x1b[{height}A\x1b[J" if drawn else ""]
        for i in range(top, top + height):
            text = _fit(lines[i], width) if i < len(lines) else ""
            buf.append(f"{REVERSE}{text}{RESET}\n" if i == sel else f"{text}\n")
        where = f"({sel + 1}/{len(lines)}) " if len(lines) > height else ""
        buf.append(f"{DIM}{_fit(where + footer, width)}{RESET}")
        out.write("".join(buf))
        out.flush()
        drawn = True

    old = termios.tcgetattr(fd)
    mode = termios.tcgetattr(fd)
    mode[3] &= ~(termios.ECHO | termios.ICANON)
    mode[6][termios.VMIN], mode[6][termios.VTIME] = 1, 0
    result: tuple[int, str] | None = None
    try:
        termios.tcsetattr(fd, termios.TCSANOW, mode)
        out.write("\x1b[?25l")  # hide the cursor
        draw()
        done = False
        while not done:
            data = os.read(fd, 64)
            if not data:
                break
            for key in _KEY.findall(data.decode("utf-8", "replace")):
                if key in UP:
                    sel = max(sel - 1, 0)
                elif key in DOWN:
                    sel = min(sel + 1, len(lines) - 1)
                elif key in PAGE_UP:
                    sel = max(sel - height, 0)
                elif key in PAGE_DOWN:
                    sel = min(sel + height, len(lines) - 1)
                elif key in HOME:
                    sel = 0
                elif key in END:
                    sel = len(lines) - 1
                elif key in ("\r", "\n"):
                    result, done = (sel, "enter"), True
                elif key in keys:
                    result, done = (sel, key), True
                elif key in CANCEL:
                    done = True
                if done:
                    break
            if not done:
                draw()
    except Terminated:
        raise
    except KeyboardInterrupt:
        result = None
    finally:
        try:
            if drawn:
                out.write(f"\r\x1b[{height}A\x1b[J")
            out.write("\x1b[?25h")
            out.flush()
        except (OSError, ValueError):
            pass
        with contextlib.suppress(termios.error, OSError):  # the terminal may be gone
            termios.tcsetattr(fd, termios.TCSADRAIN, old)
    return result
