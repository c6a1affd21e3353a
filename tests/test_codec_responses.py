"""The Responses wire's encoder (panto.providers.codec_openai_responses)
as the inverse of the C core's decoder: every openai-responses fixture
decoded, encoded and decoded again gives the same events (and the same
provider error), the reasoning items and server items byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.codec import decode_body

import panto
from panto.events import Event, event_to_dict
from panto.providers.codec import make_encoder

FIXTURES = Path(__file__).resolve().parent / "fixtures"
WIRE = "openai-responses"
NAMES = sorted(
    p.stem
    for p in FIXTURES.glob("*.json")
    if json.loads(p.read_text(encoding="utf-8"))["wire"] == WIRE
)
#: the refusal part came back as text: the events say "text, then a
#: refusal stop", which this wire encodes as a response incomplete for
#: content_filter (same stop reason, another raw one)
LOSSY = {"openai_responses_refusal"}


def decode(body: bytes) -> tuple[list[Event], BaseException | None]:
    return decode_body(WIRE, body)


def test_every_fixture_is_there():
    assert len(NAMES) >= 10


@pytest.mark.parametrize("name", NAMES)
def test_decode_encode_decode_is_identity(name: str) -> None:
    first, error = decode((FIXTURES / f"{name}.sse").read_bytes())
    enc = make_encoder(WIRE)
    sse: list[bytes] = []
    for ev in first:
        sse += enc.encode(ev)
    if isinstance(error, panto.ProviderError):
        sse.append(enc.error(error.type or "server_error", error.message))
    for one in sse:  # one SSE event each, blank-line terminated
        assert one.startswith(b"event: ") and one.endswith(b"\n\n") and b"\n\n" not in one[:-2]
    second, error2 = decode(b"".join(sse))
    a = [event_to_dict(e) for e in first]
    b = [event_to_dict(e) for e in second]
    if name in LOSSY:
        assert second[-1].raw_stop_reason == "content_filter"
        for d in a + b:
            d.pop("raw_stop_reason", None)
    assert b == a
    if isinstance(error, panto.ProviderError):
        assert isinstance(error2, panto.ProviderError)
        assert (error2.type, error2.message, error2.retryable) == (
            error.type,
            error.message,
            error.retryable,
        )
    elif first and type(first[-1]).__name__ == "MessageComplete":
        assert error2 is None
    else:
        assert isinstance(error2, panto.DecodeError) and error2.code == "truncated"
