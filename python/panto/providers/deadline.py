"""asyncio deadlines that work on every supported Python: ``asyncio.timeout_at``
and ``asyncio.timeout`` (3.11+), and a fallback for Python 3.10, which lacks
them.  Neither wraps the awaited work in a task of its own, as
``asyncio.wait_for`` does on 3.10 and 3.11 (a task, and a loop iteration,
per connect or read of hundreds of streams)."""

from __future__ import annotations

from typing import Any

__all__ = ["timeout", "timeout_at"]


class _TimeoutAt:
    """``asyncio.timeout_at`` for Python 3.10, which lacks it: cancels the
    task at ``when`` (loop time) and turns that cancel into ``TimeoutError``.
    (3.10 has no ``Task.uncancel``: a cancel from elsewhere in the same
    instant as the deadline is taken for the timeout.)"""

    def __init__(self, when: float | None) -> None:
        self._when = when
        self._handle: Any = None
        self._fired = False

    async def __aenter__(self) -> _TimeoutAt:
        import asyncio

        if self._when is not None:
            task = asyncio.current_task()
            assert task is not None
            self._handle = asyncio.get_running_loop().call_at(self._when, self._fire, task)
        return self

    def _fire(self, task: Any) -> None:
        self._fired = True
        task.cancel()

    async def __aexit__(self, tp: Any, exc: Any, tb: Any) -> bool:
        import asyncio

        if self._handle is not None:
            self._handle.cancel()
        if self._fired and tp is asyncio.CancelledError:
            raise TimeoutError from None
        return False


def timeout_at(when: float | None) -> Any:
    """``async with timeout_at(loop_time):`` -- ``asyncio.timeout_at`` (3.11+)
    or :class:`_TimeoutAt` (3.10); None: no deadline."""
    import asyncio

    impl = getattr(asyncio, "timeout_at", None)
    return impl(when) if impl is not None else _TimeoutAt(when)


def timeout(seconds: float | None) -> Any:
    """``async with timeout(seconds):`` (see :func:`timeout_at`)."""
    import asyncio

    if seconds is None:
        return timeout_at(None)
    return timeout_at(asyncio.get_running_loop().time() + seconds)
