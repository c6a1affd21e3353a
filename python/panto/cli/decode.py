"""``panto decode``: decode a captured response body into JSON lines.

Each decoded event is printed as one compact JSON object per line
(``panto.events.event_to_dict``), then -- for the provider wires -- the
assembled message as ``{"type": "message", ...}``.  On a decode error the
events before it are printed, then ``panto decode: FILE: CODE: message`` goes
to stderr and the exit status is 1 (2 for usage errors).  Input with no
event at all (a text file, an empty file) is an error too.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections.abc import Sequence
from typing import IO, Any

__all__ = ["main", "detect_wire"]

WIRE_CHOICES = ("auto", "sse", "openai-chat", "anthropic-messages", "openai-responses")

_ANTHROPIC = re.compile(rb"^event:[ ]?message_start\r?$", re.M)
_OPENAI = re.compile(
    rb'^data:[ ]?\{\s*"id"\s*:\s*"chatcmpl|"object"\s*:\s*"chat\.completion\.chunk"', re.M
)
_RESPONSES = re.compile(rb'^data:[ ]?\{\s*"type"\s*:\s*"response\.created"', re.M)
_DATA_LINE = re.compile(rb"^data:.*[\r\n]", re.M)
_DETECT_LIMIT = 65536


def detect_wire(head: bytes, eof: bool = True) -> str | None:
    """Guess the wire of a body from its first bytes: ``anthropic-messages``
    when an ``event: message_start`` line is there, ``openai-chat`` for a
    chat completion chunk, ``openai-responses`` for a ``response.created``
    event, else ``sse``.  With ``eof=False`` returns None
    while ``head`` is too short to tell."""
    if _ANTHROPIC.search(head):
        return "anthropic-messages"
    if _OPENAI.search(head):
        return "openai-chat"
    if _RESPONSES.search(head):
        return "openai-responses"
    if eof or len(head) >= _DETECT_LIMIT or _DATA_LINE.search(head):
        return "sse"
    return None


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {value}")
    return value


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="panto decode",
        description=(
            "Decode a server-sent-events body (a file, or stdin) with panto's C core and "
            "print one JSON event per line, then the assembled message."
        ),
        epilog=(
            "The wire is detected from the first event unless --wire is given: "
            "'event: message_start' means anthropic-messages, a chat.completion.chunk "
            "means openai-chat, a response.created event openai-responses, anything else is decoded as raw sse.  "
            "Exit status: 0 ok, 1 decode or I/O error, 2 usage error."
        ),
    )
    p.add_argument(
        "file",
        nargs="?",
        default="-",
        metavar="FILE",
        help="the body to decode ('-' = stdin, the default)",
    )
    p.add_argument(
        "--wire", choices=WIRE_CHOICES, default="auto", help="the wire format (default: auto)"
    )
    p.add_argument(
        "--chunk-size",
        type=_positive,
        default=65536,
        metavar="N",
        help="feed the decoder at most N bytes at a time (default 65536; 1 tests byte-wise splitting)",
    )
    return p


def _dumps(d: dict[str, Any]) -> str:
    try:
        return json.dumps(d, ensure_ascii=False, separators=(",", ":"))
    except UnicodeEncodeError:  # pragma: no cover - lone surrogates from JSON escapes
        return json.dumps(d, separators=(",", ":"))


def _line(d: dict[str, Any]) -> bytes:
    s = _dumps(d)
    try:
        return s.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # a lone surrogate (from a \\ud800 escape)
        return json.dumps(d, separators=(",", ":")).encode("ascii") + b"\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    name = "<stdin>" if args.file == "-" else args.file

    def fail(message: str) -> int:
        sys.stdout.flush()
        print(f"panto decode: {name}: {message}", file=sys.stderr)
        return 1

    try:
        f: IO[bytes] = sys.stdin.buffer if args.file == "-" else open(args.file, "rb")  # noqa: SIM115
    except OSError as e:
        return fail(e.strerror or str(e))
    try:
        return _run(f, args.wire, args.chunk_size, fail)
    except BrokenPipeError:
        raise  # `panto decode x.sse | head`: panto's main stops quietly (141)
    except OSError as e:
        return fail(e.strerror or str(e))
    finally:
        if f is not sys.stdin.buffer:
            f.close()


def _run(f: IO[bytes], wire: str, chunk_size: int, fail: Any) -> int:
    from panto.decoder import StreamDecoder
    from panto.errors import DecodeError, ProviderError
    from panto.events import MessageComplete, event_to_dict

    read = getattr(f, "read1", f.read)
    out = sys.stdout.buffer
    head = b""
    eof = False
    if wire == "auto":
        while True:
            chunk = read(chunk_size)
            if not chunk:
                eof = True
            head += chunk
            detected = detect_wire(head, eof)
            if detected is not None:
                wire = detected
                break

    dec = StreamDecoder(wire)
    message = None
    count = 0
    try:
        try:

            def emit() -> None:
                nonlocal message, count
                lines: list[bytes] = []
                try:
                    for ev in dec:
                        if type(ev) is MessageComplete:
                            message = ev.message
                        lines.append(_line(event_to_dict(ev)))
                finally:  # on an error too: the events before it
                    count += len(lines)
                    if lines:
                        out.write(b"".join(lines))
                        out.flush()

            for i in range(0, len(head), chunk_size):
                dec.feed(head[i : i + chunk_size])
                emit()
            while not eof:
                chunk = read(chunk_size)
                if not chunk:
                    break
                dec.feed(chunk)
                emit()
            try:
                dec.close()
            except (DecodeError, ProviderError):
                pass  # raised again by emit() after the last events
            emit()
        except ProviderError as e:
            kind = f"{e.type}: " if e.type else ""
            return fail(f"provider: {kind}{e.message}")
        except DecodeError as e:
            return fail(f"{e.code}: {e}")
    finally:
        dec.release()
    if message is not None:
        out.write(_line({"type": "message", **message.to_dict()}))
        out.flush()
    elif wire != "sse":  # pragma: no cover - the core reports truncation itself
        return fail("truncated: the stream ended without a terminal event")
    if count == 0:
        # Lines without a colon are valid SSE (ignored fields), so a text
        # file decodes to nothing: say so instead of exiting 0 silently.
        return fail("no server-sent events found (is this an SSE body?)")
    return 0
