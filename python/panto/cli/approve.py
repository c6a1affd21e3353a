"""The REPL's approval prompt: a tool call the permission mode or an ``ask``
rule holds back (panto.policy.permissions) is shown in full -- the whole
command, or the diff of a file change -- and one key answers it:

- ``y``: allow once;
- ``a``: allow always for this session (records the rules it names);
- ``n`` (or Esc): deny; the model is told not to retry.

The prompt runs on the tool's dispatch thread while the turn waits; Ctrl-C
cancels the turn (and with it the prompt, as a denial).
"""

from __future__ import annotations

import os
import select
import sys
import threading
from typing import TYPE_CHECKING

from .render import BOLD, DIM, RESET, color_diff, is_diff

if TYPE_CHECKING:
    from ..policy.permissions import ApprovalRequest
    from .render import Renderer

__all__ = ["Approver"]

#: how many lines of a command or diff the prompt shows
MAX_LINES = 60
YELLOW = "\x1b[33m"


class Approver:
    """``approver(request) -> "once" | "always" | "deny"`` for the permission
    gate, reading one key from the terminal."""

    def __init__(self, renderer: Renderer, color: bool) -> None:
        self.renderer = renderer
        self.color = color
        #: set when the turn is cancelled: a waiting prompt answers "deny"
        self.cancelled = threading.Event()

    def _c(self, code: str, s: str) -> str:
        return f"{code}{s}{RESET}" if self.color else s

    def __call__(self, req: ApprovalRequest) -> str:
        r = self.renderer
        status = r.status
        what = status.what if status is not None and status.active else None
        r.stop_status()
        out = sys.stdout
        suggest = req.decision.suggest
        lines = [
            "",
            self._c(YELLOW + BOLD, f"⚠ {req.call.name}: allow this call?")
            + self._c(DIM, f"  ({req.mode} mode)"),
        ]
        detail = req.detail.rstrip("\n").split("\n")
        shown = detail[:MAX_LINES]
        text = "\n".join(shown)
        if self.color and is_diff(text):
            text = color_diff(text)
        lines += ["  " + ln for ln in text.split("\n")]
        if len(detail) > MAX_LINES:
            lines.append(self._c(DIM, f"  … {len(detail) - MAX_LINES} more lines"))
        lines.append(self._c(DIM, f"  why: {req.decision.reason}"))
        keys = "[y] allow once"
        if suggest:
            keys += f" · [a] allow always this session ({', '.join(suggest[:3])})"
        keys += " · [n] deny"
        lines.append(keys + " › ")
        with r.lock:
            out.write("\n".join(lines))
            out.flush()
        answer = self._read_key("yan" if suggest else "yn")
        said = {"y": "allowed once", "a": "allowed for this session", "n": "denied"}[answer]
        with r.lock:
            out.write(answer + "\n" + self._c(DIM, f"  {said}") + "\n")
            out.flush()
        if what is not None and status is not None and not self.cancelled.is_set():
            status.start(what)
        return {"y": "once", "a": "always", "n": "deny"}[answer]

    def _read_key(self, allowed: str) -> str:
        """One of ``allowed`` from the terminal (``n`` on Esc, end of input
        or a cancelled turn)."""
        fd = sys.stdin.fileno()
        import termios
        import tty

        try:
            old = termios.tcgetattr(fd)
        except termios.error:
            old = None
        try:
            if old is not None:
                tty.setcbreak(fd)  # one key, no echo; Ctrl-C still interrupts
            while not self.cancelled.is_set():
                ready, _, _ = select.select([fd], [], [], 0.1)
                if not ready:
                    continue
                data = os.read(fd, 16)
                if not data:
                    return "n"
                for ch in data.decode("utf-8", "replace").lower():
                    if ch in allowed:
                        return ch
                    if ch == "\x1b":
                        return "n"
            return "n"
        finally:
            if old is not None:
                termios.tcsetattr(fd, termios.TCSADRAIN, old)
