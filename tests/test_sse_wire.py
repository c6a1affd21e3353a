"""The raw ``sse`` wire against the WHATWG EventSource parsing rules
(https://html.spec.whatwg.org/multipage/server-sent-events.html#event-stream-interpretation):
line ends, BOM, comments, fields, dispatch, ``id`` and ``retry``.
Every case is also checked byte by byte, since any split must give the same
events."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import panto
from panto.events import SSEEvent


def events(body: bytes) -> list[SSEEvent]:
    whole = list(panto.decode("sse", [body]))
    bytewise = list(panto.decode("sse", [body[i : i + 1] for i in range(len(body))]))
    assert whole == bytewise, "splitting the input changed the events"
    return whole


def data(body: bytes) -> list[str]:
    return [e.data for e in events(body)]


def E(data: str, event: str = "message", id: str = "", retry: int | None = None) -> SSEEvent:
    return SSEEvent(event, data, id, retry)


@pytest.mark.parametrize("eol", [b"\n", b"\r", b"\r\n"])
def test_line_ends(eol):
    body = b"event: a" + eol + b"data: x" + eol + b"data: y" + eol + eol + b"data: z" + eol + eol
    assert events(body) == [E("x\ny", "a"), E("z")]


def test_mixed_line_ends():
    assert data(b"data: a\rdata: b\ndata: c\r\n\r\ndata: d\n\r") == ["a\nb\nc", "d"]


def test_cr_then_lf_across_feeds_is_one_line_end():
    # If the CR and the LF were two line ends, the empty line between them
    # would dispatch "a" on its own.
    got = list(panto.decode("sse", [b"data: a\r", b"\ndata: b\r\n\r\n"]))
    assert got == [E("a\nb")]
    got = list(panto.decode("sse", [b"data: a\r", b"\r", b"\n"]))  # CR, CR LF: blank line
    assert got == [E("a")]


def test_leading_bom_is_skipped_once():
    assert data(b"\xef\xbb\xbfdata: x\n\n") == ["x"]
    got = list(panto.decode("sse", [b"\xef", b"\xbb", b"\xbfdata: x\n\n"]))
    assert [e.data for e in got] == ["x"]
    # A second BOM is not a BOM: the line is a field named "\ufeffdata", ignored.
    assert data(b"\xef\xbb\xbf\xef\xbb\xbfdata: x\n\ndata: y\n\n") == ["y"]


def test_comments_are_ignored():
    assert data(b": hello\ndata: x\n: between\ndata: y\n\n:\n\n") == ["x\ny"]


def test_multi_line_data_is_joined_with_newlines():
    assert data(b"data: a\ndata:\ndata: c\n\n") == ["a\n\nc"]
    assert data(b"data\ndata\n\n") == ["\n"]  # two empty data lines


def test_field_without_colon_has_empty_value():
    assert events(b"data\n\n") == [E("")]
    assert events(b"event\ndata: x\n\n") == [E("x", "message")]  # empty event -> "message"


def test_only_one_optional_space_after_the_colon():
    assert data(b"data:x\n\n") == ["x"]
    assert data(b"data: x\n\n") == ["x"]
    assert data(b"data:  x\n\n") == [" x"]
    assert data(b"data: x \n\n") == ["x "]
    assert data(b"data:\tx\n\n") == ["\tx"]


def test_empty_data_does_not_dispatch_and_event_type_resets():
    assert events(b"event: a\n\ndata: x\n\n") == [E("x")]
    assert events(b"event: a\ndata: 1\n\ndata: 2\n\n") == [E("1", "a"), E("2")]


def test_unknown_fields_are_ignored():
    assert data(b"foo: bar\ndata: x\nDATA: y\n\n") == ["x"]


def test_retry_only_digits():
    assert events(b"retry: 1500\ndata: x\n\n") == [E("x", retry=1500)]
    for bad in (b"retry: 15x\n", b"retry: -1\n", b"retry:\n", b"retry: 1 5\n", b"retry: 1.5\n"):
        assert events(bad + b"data: x\n\n") == [E("x")], bad
    # retry persists and the last valid value wins
    assert events(b"retry: 10\ndata: a\n\nretry: 2x\nretry: 20\ndata: b\n\n") == [
        E("a", retry=10),
        E("b", retry=20),
    ]


def test_id_is_the_last_event_id_in_force():
    assert events(b"id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n") == [
        E("a", id="1"),
        E("b", id="1"),
        E("c", id=""),  # an empty id resets it
    ]


def test_id_containing_nul_is_ignored():
    assert events(b"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n") == [E("a", id="1"), E("b", id="1")]


def test_id_without_data_still_sets_the_last_event_id():
    assert events(b"id: 5\n\ndata: x\n\n") == [E("x", id="5")]


def test_trailing_event_without_blank_line_is_discarded_at_eof():
    assert data(b"data: a\n\ndata: b\n") == ["a"]
    assert data(b"data: a\n\ndata: b") == ["a"]


def test_invalid_utf8_is_replaced_not_fatal():
    assert data(b"data: a\xffb\n\n") == ["a\ufffdb"]


def test_empty_input():
    assert events(b"") == []


@given(
    lines=st.lists(
        st.one_of(
            st.sampled_from([b"", b":c", b"data", b"event: e", b"id: 9", b"retry: 7", b"retry: x"]),
            st.builds(
                lambda s: b"data: " + s,
                st.binary(max_size=8).filter(lambda b: b"\r" not in b and b"\n" not in b),
            ),
        ),
        max_size=20,
    ),
    eols=st.lists(st.sampled_from([b"\n", b"\r", b"\r\n"]), min_size=20, max_size=20),
    cuts=st.lists(st.integers(0, 400), max_size=10),
)
@settings(max_examples=200, deadline=None)
def test_any_line_ends_and_splits(lines, eols, cuts):
    eols = eols[: len(lines)]
    for i in range(len(eols) - 1):
        # "\r" then an empty line ended by "\n" would be one CRLF, not two line ends
        if eols[i] == b"\r" and lines[i + 1] == b"" and eols[i + 1].startswith(b"\n"):
            eols[i] = b"\r\n"
    body = b"".join(line + eol for line, eol in zip(lines, eols))
    cuts = sorted(c for c in cuts if c <= len(body))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])]
    assert list(panto.decode("sse", chunks)) == list(panto.decode("sse", [body]))
    # and the same stream with LF everywhere gives the same events
    lf = b"".join(line + b"\n" for line in lines)
    assert list(panto.decode("sse", [body])) == list(panto.decode("sse", [lf]))
