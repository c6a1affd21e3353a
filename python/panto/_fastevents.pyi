"""Types of the C extension panto._fastevents (pyext/fastevents.c)."""

from collections.abc import Iterator
from typing import Any

def setup(
    feed_address: int,
    next_event_address: int,
    layout: tuple[int, ...],
    content_delta: type,
    kinds: tuple[str, ...],
    /,
) -> bool: ...
def feed(ctx_address: int, data: bytes, /) -> int: ...
def pull(ctx_address: int, /) -> Iterator[Any] | tuple[list[Any], int]: ...
def set_direct(flag: bool, /) -> bool: ...
def utf8(data: bytes, /) -> str: ...
