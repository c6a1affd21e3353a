"""Regular expressions compiled when first used.

Compiling a pattern costs ~0.3 ms of CPU, so every module-level
``re.compile`` of a module ``panto -p`` imports is paid at each start-up
even when the pattern is never used (the markdown of the text renderer with
``--output-format json``, the HTTPS certificate-directory check with an
``http://`` provider...).  ``LazyPattern(p, flags)`` stands in for
``re.compile(p, flags)``: the first method or attribute read compiles it
(once), after that it is the compiled pattern's.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing is not free
if TYPE_CHECKING:
    from typing import Any

__all__ = ["LazyPattern"]


class LazyPattern:
    """``re.compile(pattern, flags)``, compiled at its first use."""

    __slots__ = ("pattern", "flags", "_compiled")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        c = self._compiled
        if c is None:
            c = self._compiled = re.compile(self.pattern, self.flags)
        return c

    def __getattr__(self, name: str) -> Any:
        # only for names not found above: match, fullmatch, search, sub, split...
        return getattr(self.compiled, name)

    def __repr__(self) -> str:
        return f"LazyPattern({self.pattern!r}, {self.flags!r})"
