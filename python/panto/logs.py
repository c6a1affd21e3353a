"""panto's loggers, with :mod:`logging` imported only when a record could
be emitted.

``import logging`` costs ~10 ms of CPU at start-up (it brings in
``traceback``, ``tokenize``, ``string``...), and a ``panto -p`` that logs
nothing never needs it.  :func:`get_logger` returns a :class:`Logger`
that stands in for ``logging.getLogger(name)``: as long as ``logging`` is
not imported, nothing can have configured a handler or a level, so a
``debug``/``info`` record would be dropped (the root logger's default level
is ``WARNING``) and is dropped without importing it; a ``warning`` or
worse imports ``logging`` and is logged as ever (Python's last-resort
handler prints it to stderr).  Once ``logging`` is imported -- by panto
(``--debug``) or by the program embedding panto -- every call goes to the
real logger of the same name, so handlers, levels and pytest's ``caplog``
see exactly what they saw before.

:func:`logging_module` is the one way panto itself imports ``logging``: its
first call runs what was registered with :func:`on_logging_import`
(``panto.providers.transport`` installs its secret redaction there), so no
panto record is ever emitted before the redaction is in place.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing is not free
if TYPE_CHECKING:
    import logging
    from types import ModuleType
    from typing import Any

__all__ = ["Logger", "get_logger", "logging_module", "on_logging_import"]

_hooks: list[Callable[[], None]] = []
_ready = False

#: logging.WARNING: the effective level of every logger while nothing set one.
_WARNING = 30


def logging_module() -> ModuleType:
    """``logging``, imported; the first call runs the :func:`on_logging_import`
    callbacks (before anything is logged through it)."""
    global _ready
    import logging

    if not _ready:
        _ready = True
        for fn in _hooks:
            fn()
    return logging


def on_logging_import(fn: Callable[[], None]) -> None:
    """Run ``fn`` when panto first uses ``logging`` (now, when ``logging``
    is imported already)."""
    if _ready or "logging" in sys.modules:
        logging_module()
        fn()
    else:
        _hooks.append(fn)


def get_logger(name: str) -> Logger:
    """A stand-in for ``logging.getLogger(name)`` (see the module docstring)."""
    return Logger(name)


class Logger:
    """``logging.getLogger(name)``, got when first needed.  The usual
    logging methods; any other attribute is the real logger's."""

    __slots__ = ("name", "_real")

    def __init__(self, name: str) -> None:
        self.name = name
        self._real: logging.Logger | None = None

    @property
    def logger(self) -> logging.Logger:
        """The real logger (imports ``logging``)."""
        real = self._real
        if real is None:
            real = self._real = logging_module().getLogger(self.name)
        return real

    def _idle(self) -> bool:
        """True while ``logging`` is not imported: nothing is configured."""
        return self._real is None and "logging" not in sys.modules

    def isEnabledFor(self, level: int) -> bool:  # noqa: N802 - logging's name
        if self._idle():
            return level >= _WARNING
        return self.logger.isEnabledFor(level)

    def debug(self, msg: object, *args: object, **kwargs: Any) -> None:
        if not self._idle():
            self._log(10, msg, args, kwargs)

    def info(self, msg: object, *args: object, **kwargs: Any) -> None:
        if not self._idle():
            self._log(20, msg, args, kwargs)

    def warning(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log(30, msg, args, kwargs)

    def error(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log(40, msg, args, kwargs)

    def exception(self, msg: object, *args: object, **kwargs: Any) -> None:
        kwargs.setdefault("exc_info", True)
        self._log(40, msg, args, kwargs)

    def critical(self, msg: object, *args: object, **kwargs: Any) -> None:
        self._log(50, msg, args, kwargs)

    def log(self, level: int, msg: object, *args: object, **kwargs: Any) -> None:
        if level >= _WARNING or not self._idle():
            self._log(level, msg, args, kwargs)

    def _log(self, level: int, msg: object, args: tuple[object, ...], kwargs: Any) -> None:
        real = self.logger
        if real.isEnabledFor(level):
            # the record names the caller of this method, not this module
            kwargs["stacklevel"] = kwargs.get("stacklevel", 1) + 2
            real.log(level, msg, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.logger, name)

    def __repr__(self) -> str:
        return f"<panto.logs.Logger {self.name}>"
