"""SIGTERM and SIGHUP end panto the way Ctrl-C cancels a turn.

``install()`` makes both raise ``Terminated`` in the main thread.  It is a
``KeyboardInterrupt``, so everything that cancels on Ctrl-C cancels on it
too (the HTTP response is closed, running tools are cancelled, what was
committed stays persisted); the CLI lets it through to ``panto.cli.main``,
which returns 128 + the signal's number (143 for SIGTERM, 129 for SIGHUP).
"""

from __future__ import annotations

import signal
from typing import Any

__all__ = ["Terminated", "install", "SIGNALS"]

SIGNALS = ("SIGTERM", "SIGHUP")


class Terminated(KeyboardInterrupt):
    """panto got SIGTERM or SIGHUP; ``exit_status`` is 128 + its number."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum

    @property
    def exit_status(self) -> int:
        return 128 + self.signum

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name


def _handler(signum: int, frame: Any) -> None:
    # Ignore a second signal while the first unwinds (cleanup must finish).
    for name in SIGNALS:
        num = getattr(signal, name, None)
        if num is not None:
            signal.signal(num, signal.SIG_IGN)
    raise Terminated(signum)


def install() -> None:
    """Route SIGTERM and SIGHUP to ``Terminated`` (main thread only)."""
    for name in SIGNALS:
        num = getattr(signal, name, None)
        if num is not None:
            signal.signal(num, _handler)
