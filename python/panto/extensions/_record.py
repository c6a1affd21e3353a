"""A light base for small value classes.

``dataclasses`` costs ~0.3 ms per class at import (it ``exec``s generated
methods); these modules are on panto's start-up path, so their classes
write ``__init__`` by hand and share ``__repr__`` / ``__eq__`` / ``__hash__``
from here, driven by ``_fields``.
"""

from __future__ import annotations

from typing import Any, ClassVar


class Record:
    __slots__ = ()
    _fields: ClassVar[tuple[str, ...]] = ()

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self._fields)

    def __repr__(self) -> str:
        args = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._fields)
        return f"{type(self).__name__}({args})"

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()

    def __hash__(self) -> int:
        return hash((type(self).__name__, self._values()))
