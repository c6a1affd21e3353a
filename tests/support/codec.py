"""Decoding a whole body for the codec round-trip tests."""

from __future__ import annotations

import panto
from panto.events import Event


def decode_body(wire: str, body: bytes) -> tuple[list[Event], BaseException | None]:
    """Every event of ``body`` on ``wire`` and the error it ended with (None)."""
    dec = panto.StreamDecoder(wire)
    events: list[Event] = []
    try:
        dec.feed(body)
        events += list(dec)
        dec.close()
        events += list(dec)
    except panto.PantoError as e:
        return events, e
    return events, None
