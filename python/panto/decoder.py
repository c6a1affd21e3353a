"""Decode provider byte streams with the C core.

``StreamDecoder`` is sans-I/O: feed it the bytes you read from any HTTP
client, iterate it for the events decodable so far, call ``close()`` at end
of input.  ``decode()`` and ``accumulate()`` wrap that loop.

Semantics, precisely (docs/decoding.md has the long form):

- ``feed(data)`` copies ``data`` into the decoder.  It raises ``ValueError``
  after ``close()`` / ``release()``, and the stream's error (see below) when
  the stream has already failed or the input would exceed
  ``max_buffer_bytes``.
- ``for ev in dec`` yields every event decodable from the input so far and
  stops when the decoder needs more input (iterate again after the next
  feed) or the stream is over.  If the stream fails, the iteration yields
  the events before the failure and then raises the error; every later
  iteration raises it again (errors are sticky).
- ``close()`` declares end of input.  It decodes whatever is left, keeps
  those events for the next iteration, releases the C memory and raises the
  stream's error -- ``TruncatedStream`` when the input ended before the
  terminal event -- unless that error was already raised to you by ``feed``
  or an iteration.  Iterating after ``close()`` yields the kept events, then
  raises the error, if any.  A second ``close()`` does nothing.
- ``release()`` (and leaving a ``with`` block, and garbage collection) frees
  the C memory without declaring end of input.

Errors: a provider's error object inside the stream raises
``ProviderError(status=200, type=..., retryable=...)``; input that ends
early raises ``TruncatedStream``; anything else raises ``DecodeError`` with
``code`` set to the core's error name (``bad_sse``, ``bad_json``,
``protocol``, ``limit`` ...) and ``offset`` set to the byte offset in the
input of the line or event at fault (also named in the message).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable, Iterator
from typing import Any

from ._ffi import ffi, lib
from .conversation import (
    Message,
    RedactedThinking,
    ServerBlock,
    Text,
    Thinking,
    ToolUse,
    Usage,
)
from .errors import DecodeError, PantoError, ProviderError, TruncatedStream
from .events import (
    BlockComplete,
    BlockStart,
    ContentDelta,
    Event,
    MessageComplete,
    MessageStart,
    SSEEvent,
    ToolDetails,
)

__all__ = ["WIRES", "StreamDecoder", "accumulate", "decode"]

#: Wire names accepted by ``StreamDecoder`` and their ``panto_wire`` values.
WIRES = {
    "sse": lib.PANTO_WIRE_SSE,
    "openai-chat": lib.PANTO_WIRE_OPENAI_CHAT,
    "anthropic-messages": lib.PANTO_WIRE_ANTHROPIC_MESSAGES,
    "openai-responses": lib.PANTO_WIRE_OPENAI_RESPONSES,
}


def _names(fn: Any, n: int) -> tuple[str, ...]:
    """Names 0..n-1 of a C enum, from the core's ``panto_*_name()``."""
    return tuple(ffi.string(fn(i)).decode("ascii") for i in range(n))


# Name tables built from the core (the single source of the names); indexed
# by the enum value (block kinds are masked with 15 on the hot path).
_BLOCK_KINDS = _names(lib.panto_block_kind_name, 16)
_STOP_REASONS = tuple(
    "other" if n == "unknown" else n for n in _names(lib.panto_stop_reason_name, 8)
)
_ERROR_CODES = _names(lib.panto_error_code_name, lib.PANTO_ERR_NO_MEMORY + 1)

# Constructing a frozen dataclass through its __init__ costs one
# object.__setattr__ call per field (~440 ns for a ContentDelta).  The hot
# events are built instead as an instance of a plain class with the very
# same slots (plain attribute stores are specialized by the interpreter), and
# then given their real class: ``__class__`` assignment is allowed between
# classes of identical layout and the result is an ordinary, frozen
# ContentDelta (~150 ns).  tests/test_decoder.py checks the equivalence.
_new = object.__new__


def _twin(cls: type) -> type:
    return type(f"_Mutable{cls.__name__}", (), {"__slots__": cls.__slots__})  # type: ignore[attr-defined]


_MutableContentDelta = _twin(ContentDelta)
_MutableSSEEvent = _twin(SSEEvent)

_unpack = ffi.unpack
_batch = lib.pantopy_batch

# panto._fastevents (pyext/fastevents.c), loaded by the first StreamDecoder
# rather than on import: it builds the content-delta events in C, the whole
# iteration after a feed in one call.  None: not tried yet; True: loaded;
# False: missing (or switched off: the tests run both paths), then the cffi
# path below serves.
_fast: bool | None = None


def _no_fast(*args: Any) -> Any:  # pragma: no cover - replaced before use
    raise RuntimeError("panto._fastevents is not loaded")


_fast_pull = _fast_feed = _no_fast


def _set_fast(on: bool) -> bool:
    """For the tests and bench/decode.py: decoders made from now on take the
    C path (``on``, if the extension loads) or the cffi path exactly as
    without the extension (``StreamDecoder``'s Python ``__iter__``/``feed``
    back in place).  Returns whether the C path is on."""
    global _fast
    if on:
        _fast = None
        return _load_fast()
    _fast = False
    # Same-module access (documented SLF001 exception): the Python versions
    # the C ones stand in for.
    StreamDecoder.__iter__ = StreamDecoder._iter  # type: ignore[method-assign]  # noqa: SLF001
    StreamDecoder.feed = StreamDecoder._feed  # type: ignore[method-assign]  # noqa: SLF001
    return False


def _load_fast() -> bool:
    global _fast, _fast_pull, _fast_feed
    try:
        from ._fastevents import feed, install, pull, setup
    except ImportError:  # pragma: no cover - depends on the build
        _fast = False
        return False

    def address(name: str) -> int:
        return int(ffi.cast("uintptr_t", ffi.addressof(lib, name)))

    # the core inside the cffi module owns every stream: hand over its
    # functions, and the context's layout for the extension to check
    fields = ("s", "ev", "tail", "skip_deltas", "merge_deltas", "buf")
    layout = (ffi.sizeof("pantopy_ctx"), *(ffi.offsetof("pantopy_ctx", f) for f in fields))
    setup(
        address("panto_stream_feed"),
        address("panto_next_event"),
        layout,
        ContentDelta,
        _BLOCK_KINDS,
    )
    _fast_pull, _fast_feed = pull, feed
    # StreamDecoder.__iter__ and .feed become C method descriptors (a Python
    # method costs a frame per feed); they hand everything but the usual
    # case to _iter / _feed, the Python versions, and so to the cffi path
    # for decoders made without the extension.
    install(StreamDecoder)
    _fast = True
    return True


# pantopy_batch's result (see _build_ffi.py): n | (tail + 3) << 8 | text
# bytes << 12 | (first delta's kind | index << 4) << 27
_TAIL_NEED_MORE = -2 + 3  # the tail field: the batch ended on PANTO_NEED_MORE
_NEED_MORE = _TAIL_NEED_MORE << 8  # no delta, then PANTO_NEED_MORE
_ONE_DELTA = 1 | _TAIL_NEED_MORE << 8  # r & 0xFFF: one delta, then PANTO_NEED_MORE
_EMPTY: Iterator[Any] = iter(())
_free = lib.panto_stream_free
_cffi_feed = lib.panto_stream_feed

_EV_MESSAGE_START = lib.PANTO_EV_MESSAGE_START
_EV_BLOCK_START = lib.PANTO_EV_BLOCK_START
_EV_TOOL_DETAILS = lib.PANTO_EV_TOOL_DETAILS
_EV_CONTENT_DELTA = lib.PANTO_EV_CONTENT_DELTA
_EV_BLOCK_COMPLETE = lib.PANTO_EV_BLOCK_COMPLETE
_EV_MESSAGE_COMPLETE = lib.PANTO_EV_MESSAGE_COMPLETE
_EV_SSE = lib.PANTO_EV_SSE
_BK_THINKING = lib.PANTO_BLOCK_THINKING
_BK_REDACTED = lib.PANTO_BLOCK_REDACTED_THINKING
_BK_TOOL_USE = lib.PANTO_BLOCK_TOOL_USE
_BK_SERVER = lib.PANTO_BLOCK_SERVER


def _str(s: Any, errors: str = "strict") -> str:
    n = s.len
    return _unpack(s.ptr, n).decode("utf-8", errors) if n else ""


def _usage(u: Any) -> Usage:
    return Usage(
        u.input_tokens,
        u.cache_read_tokens,
        u.cache_write_tokens,
        u.output_tokens,
        u.reasoning_tokens,
    )


class StreamDecoder:
    """Incremental decoder for one response body of ``wire``: ``"sse"``,
    ``"openai-chat"``, ``"anthropic-messages"`` or ``"openai-responses"``.

    The ``max_*`` options bound the memory the decoder may use (``None``
    takes the core's default: 8 MiB per event, 64 MiB per block and for
    undecoded input, JSON nesting 128); exceeding one raises
    ``DecodeError(code="limit")``.  See the module docstring for the exact
    feed / iterate / close semantics.

    ``merge_deltas=True`` joins consecutive ``ContentDelta`` events of the
    same block that are decoded in one go (what one iteration finds in the
    input fed so far) into one event, so a consumer that only appends the
    text pays for one Python object per run instead of one per delta.  The
    events keep their order; the joined texts are exactly the concatenation
    of the deltas, so everything accumulated is the same; a run may still
    arrive as several events (at a ``feed`` boundary, or about every 4 KiB).
    """

    __slots__ = (
        "__weakref__",
        "_addr",
        "_blocks",
        "_buf",
        "_closed",
        "_ctx",
        "_done",
        "_error",
        "_model",
        "_pending",
        "_raised",
        "_s",
        "_hdr",
        "_it",
        "_leftover",
        "_partial",
        "_scratch",
        "_u",
        "_utf8_errors",
        "wire",
    )

    def __init__(
        self,
        wire: str,
        *,
        max_event_bytes: int | None = None,
        max_block_bytes: int | None = None,
        max_buffer_bytes: int | None = None,
        max_json_depth: int | None = None,
        merge_deltas: bool = False,
    ) -> None:
        try:
            wire_id = WIRES[wire]
        except (KeyError, TypeError):
            raise ValueError(
                f"unknown wire {wire!r}; expected one of {', '.join(map(repr, WIRES))}"
            ) from None
        opts = ffi.new("panto_stream_options *")
        lib.panto_stream_options_init(opts, lib.PANTO_STREAM_OPTIONS_VERSION)
        for name, value in (
            ("max_event_bytes", max_event_bytes),
            ("max_block_bytes", max_block_bytes),
            ("max_buffer_bytes", max_buffer_bytes),
            ("max_json_depth", max_json_depth),
        ):
            if value is not None:
                if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                    raise ValueError(f"{name} must be a positive int, not {value!r}")
                if name == "max_json_depth" and value > 0xFFFFFFFF:
                    raise ValueError(f"{name} is too large: {value}")
                setattr(opts, name, value)
        out = ffi.new("panto_stream **")
        if lib.panto_stream_new(wire_id, opts, out) != lib.PANTO_OK:
            raise MemoryError("panto_stream_new failed")
        self._s = ffi.gc(out[0], _free)
        ctx = ffi.new("pantopy_ctx *")
        ctx.s = self._s
        ctx.merge_deltas = 1 if merge_deltas else 0
        self._ctx = ctx
        fast = _fast if _fast is not None else _load_fast()
        if fast:  # the C path (pyext/fastevents.c) serves feed and iteration
            self._addr = int(ffi.cast("uintptr_t", ctx))
            self._buf = self._scratch = self._hdr = None
        else:  # the cffi path: pantopy_batch's output buffers, read here
            self._addr = 0
            self._buf = buf = ffi.new("pantopy_buf *")
            ctx.buf = buf
            self._scratch = ffi.buffer(buf.scratch)  # slicing it gives bytes
            self._hdr = memoryview(ffi.buffer(buf.hdr)).cast("q")
        self._leftover: list[Event] = []
        self._it: Iterator[Event] | None = None
        self._partial: list[Any] = []
        self._u = ctx.ev.u
        self.wire = wire
        self._utf8_errors = "replace" if wire == "sse" else "strict"
        self._blocks: list[tuple[int, Any]] = []
        self._model: str | None = None
        self._done = False
        self._closed = False
        self._pending: deque[Event] | None = None
        self._error: PantoError | None = None
        self._raised = False

    # -- state -----------------------------------------------------------

    @property
    def closed(self) -> bool:
        """True after ``close()``."""
        return self._closed

    @property
    def done(self) -> bool:
        """True once the stream is over (provider wires: after the
        ``MessageComplete`` has been yielded)."""
        return self._done

    @property
    def error(self) -> PantoError | None:
        """The error the stream failed with, if it failed."""
        return self._error

    @property
    def memory(self) -> int:
        """Bytes of C heap the decoder holds (0 once released)."""
        return lib.panto_stream_memory(self._s) if self._ctx is not None else 0

    def __repr__(self) -> str:
        state = (
            "failed"
            if self._error
            else "done"
            if self._done
            else "closed"
            if self._closed
            else "open"
        )
        return f"<StreamDecoder {self.wire} {state}>"

    # -- input -----------------------------------------------------------

    def _feed(self, data: bytes | bytearray | memoryview) -> None:
        """Append bytes read from the response body (copied)."""
        addr = self._addr
        if addr and type(data) is bytes:
            if _fast_feed(addr, data) != 0:
                self._feed_failed()
            return
        if self._ctx is None:
            raise ValueError("feed() on a closed or released StreamDecoder")
        if type(data) is not bytes:  # bytearray, memoryview, array ...: no copy
            data = ffi.from_buffer("uint8_t[]", data)
        n = len(data)
        if n and _cffi_feed(self._s, data, n) != 0:
            exc = self._fail()
            self._raised = True
            raise exc

    feed = _feed  # replaced by the C version when panto._fastevents loads

    def _feed_failed(self) -> None:
        exc = self._fail()
        self._raised = True
        raise exc

    def close(self) -> None:
        """Declare end of input; see the module docstring."""
        if self._closed:
            return
        self._closed = True
        pending: list[Event] = []
        err = self._error
        if self._ctx is not None:
            if err is None:
                if lib.panto_stream_finish(self._s) != 0:
                    err = self._fail()
                else:
                    raised = self._raised
                    try:
                        self._reclaim()
                        for ev in self._pull(None):
                            pending.append(ev)
                    except PantoError as e:
                        err = e
                        self._raised = raised
                    else:
                        # D10: input after the terminal, found while the
                        # events kept for later were decoded
                        late = ffi.new("panto_error *")
                        lib.panto_stream_error(self._s, late)
                        if late.code != lib.PANTO_ERR_NONE:
                            err = self._fail()
            self.release()
        self._pending = deque(pending)
        if err is not None and not self._raised:
            self._raised = True
            raise err

    def release(self) -> None:
        """Free the C memory now (idempotent).  Does not declare end of
        input: use ``close()`` for that."""
        ctx = self._ctx
        if ctx is not None:
            self._partial = self._open_blocks()
            self._ctx = None
            self._addr = 0
            self._scratch = self._u = self._hdr = None
            ctx.s = ffi.NULL
            ctx.buf = ffi.NULL
            self._buf = None
            ffi.release(self._s)

    def partial_blocks(self) -> list[Any]:
        """The blocks still open, in index order, as far as they arrived:
        what to keep of a message cut short by an error or a cancel (no need
        to join the deltas).  Taken from the core
        (``panto_stream_partial_block``); after ``close()`` / ``release()``,
        the blocks open at that moment.  A tool call's ``input`` is parsed
        from the JSON so far (``raw_input`` keeps it when incomplete)."""
        if self._ctx is None:
            return list(self._partial)
        return self._open_blocks()

    def _open_blocks(self) -> list[Any]:
        out: list[Any] = []
        c = ffi.new("panto_block_complete *")
        k = 0
        while lib.panto_stream_partial_block(self._s, k, c) == lib.PANTO_OK:
            out.append(_block(c))
            k += 1
        return out

    def __enter__(self) -> StreamDecoder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    # -- output ----------------------------------------------------------

    def _iter(self) -> Iterator[Event]:
        ctx = self._ctx
        if ctx is not None:
            it = self._it
            if it is not None:  # inlined _reclaim(): this runs once per feed
                self._it = None
                for ev in it:  # (usually exhausted: no list built)
                    self._leftover = [ev, *it, *self._leftover]
            if self._leftover:
                return self._pull(None)
            # The usual case -- nothing decodable, or a run of deltas ending
            # where the input does -- needs no generator: an iterator over
            # the events, kept so that what an abandoned iteration did not
            # take is yielded next time.
            addr = self._addr
            if addr:  # the C path: one call pulls and builds it all
                it = _fast_pull(addr)
                if type(it) is tuple:  # (events, tail): another event, the end, an error
                    return self._pull(it)
                self._it = it
                return it
            r = _batch(ctx)
            if r & 0xFFF == _ONE_DELTA:  # the usual case with merge_deltas; inlined _deltas()
                o = _new(_MutableContentDelta)
                o.index = r >> 31
                o.kind = _BLOCK_KINDS[r >> 27 & 15]
                o.text = self._scratch[0 : r >> 12 & 0x7FFF].decode()
                o.__class__ = ContentDelta
                self._it = it = iter((o,))
                return it
            if r == _NEED_MORE:
                return _EMPTY
            if r >> 8 & 15 == _TAIL_NEED_MORE:
                self._it = it = iter(self._deltas(r))
                return it
            return self._pull(r)
        if self._pending is not None:
            return self._drain_pending()
        if self._error is not None:
            raise self._error
        raise ValueError("iterating a released StreamDecoder")

    __iter__ = _iter  # replaced by the C version when panto._fastevents loads

    def _drain_pending(self) -> Iterator[Event]:
        pending = self._pending
        assert pending is not None
        while pending:
            yield pending.popleft()
        if self._error is not None:
            self._raised = True
            raise self._error

    def _reclaim(self) -> None:
        """Keep the events an abandoned list iteration (see __iter__) left."""
        it = self._it
        self._it = None
        if it is not None:
            rest = list(it)
            if rest:
                self._leftover = rest + self._leftover

    def _pull(self, r: Any) -> Iterator[Event]:
        # The general loop.  One foreign call decodes a run of content
        # deltas -- nearly every event of a response -- and stops at any
        # other event, which _slow() converts from the event struct.  The C
        # path (_fast_pull) returns the deltas built, with how the run ended
        # (`tail`, see pantopy_batch); the cffi path's pantopy_batch packs
        # them into one text buffer plus (kind | index << 4, end offset)
        # pairs, and its result `r` packs n, tail and the text's size (see
        # _NEED_MORE above).  `r` is the first call's result; None: make it.
        if self._leftover:  # events of a batch whose iteration was abandoned
            leftover = self._leftover
            self._leftover = []
            for i, ev in enumerate(leftover):
                try:
                    yield ev
                except GeneratorExit:
                    self._leftover = leftover[i + 1 :] + self._leftover
                    raise
        ctx = self._ctx
        addr = self._addr
        while True:
            evs: Iterable[Event] | None
            if addr:
                if r is None:
                    r = _fast_pull(addr)
                if type(r) is tuple:
                    evs, tail = r
                else:  # an iterator: the stream needs more input
                    evs, tail = r, -2
            else:
                if r is None:
                    r = _batch(ctx)
                tail = (r >> 8 & 15) - 3
                evs = self._deltas(r) if r & 255 else None
            # The event that ended the batch is converted before anything is
            # yielded: its strings are borrowed until the next call on the stream.
            last = self._slow(tail) if tail > 0 else None
            if evs:
                it = iter(evs)
                complete = False
                try:
                    yield from it
                    complete = True
                finally:
                    if not complete:  # abandoned (break): keep the rest for the next iteration
                        self._leftover = list(it)
                        if last is not None:
                            self._leftover.append(last)
            if last is not None:
                yield last
            elif tail == -2:
                return
            elif tail == -3:
                self._done = True
                return
            elif tail == -1:
                exc = self._fail()
                self._raised = True
                raise exc
            r = None

    def _deltas(self, r: int) -> list[Event]:
        """The ContentDelta events of a pantopy_batch result."""
        n = r & 255
        new = _new
        mcd = _MutableContentDelta
        cd = ContentDelta
        kinds = _BLOCK_KINDS
        if n == 1:  # the usual batch with merge_deltas
            o = new(mcd)
            o.index = r >> 31
            o.kind = kinds[r >> 27 & 15]
            o.text = self._scratch[0 : r >> 12 & 0x7FFF].decode()
            o.__class__ = cd
            return [o]
        text = self._scratch[0 : r >> 12 & 0x7FFF].decode()
        h = self._hdr[0 : 2 * n].tolist()
        out: list[Event] = []
        append = out.append
        start = 0
        for j in range(0, 2 * n, 2):
            packed = h[j]
            o = new(mcd)
            o.index = packed >> 4
            o.kind = kinds[packed & 15]
            end = h[j + 1]
            o.text = text[start:end]
            start = end
            o.__class__ = cd
            append(o)
        return out

    def _slow(self, kind: int) -> Event:
        u = self._u
        if kind == _EV_SSE:
            e = u.sse
            errors = self._utf8_errors
            o = _new(_MutableSSEEvent)
            o.event = _str(e.event, errors)
            o.data = _str(e.data, errors)
            o.id = _str(e.id, errors)
            retry = e.retry
            o.retry = retry if retry >= 0 else None
            o.__class__ = SSEEvent
            return o
        if kind == _EV_CONTENT_DELTA:  # a delta too large for the scratch buffer
            d = u.content_delta
            return ContentDelta(d.index, _BLOCK_KINDS[d.block_kind & 15], _str(d.text))
        if kind == _EV_BLOCK_START:
            b = u.block_start
            return BlockStart(b.index, _BLOCK_KINDS[b.block_kind & 15])
        if kind == _EV_TOOL_DETAILS:
            t = u.tool_details
            return ToolDetails(t.index, _str(t.id), _str(t.name))
        if kind == _EV_BLOCK_COMPLETE:
            c = u.block_complete
            block = _block(c)
            self._blocks.append((c.index, block))
            return BlockComplete(c.index, block)
        if kind == _EV_MESSAGE_START:
            m = u.message_start
            self._model = _str(m.model) or None
            self._blocks = []
            return MessageStart(_str(m.id), _str(m.model), _usage(m.usage))
        if kind == _EV_MESSAGE_COMPLETE:
            m = u.message_complete
            sr = m.stop_reason
            stop = _STOP_REASONS[sr] if 0 <= sr < len(_STOP_REASONS) else "other"
            usage = _usage(m.usage)
            blocks = self._blocks
            blocks.sort(key=_first)
            message = Message(
                "assistant",
                tuple(b for _, b in blocks),
                usage,
                stop,
                None,
                self._model,
            )
            self._blocks = []
            return MessageComplete(message, stop, usage, True, _str(m.raw_stop_reason))
        raise DecodeError(f"unknown event kind {kind} from the core", "protocol")

    def _fail(self) -> PantoError:
        """Build (once) the exception for the stream's sticky error."""
        if self._error is not None:
            return self._error
        err = ffi.new("panto_error *")
        lib.panto_stream_error(self._s, err)
        code = err.code
        message = _str(err.message, "replace") or "stream failed"
        if code == lib.PANTO_ERR_PROVIDER:
            exc: PantoError = ProviderError(
                message,
                status=200,
                type=_str(err.provider_type, "replace") or None,
                retryable=bool(err.retryable),
            )
        elif code == lib.PANTO_ERR_TRUNCATED:
            exc = TruncatedStream(f"{message}; {err.offset} bytes of input", err.offset)
        else:
            name = _ERROR_CODES[code] if 0 <= code < len(_ERROR_CODES) else "protocol"
            exc = DecodeError(f"{message} (input byte {err.offset})", name, err.offset)
        self._error = exc
        return exc


def _block(c: Any) -> Any:
    """The content block of a panto_block_complete."""
    bk = c.block_kind
    text = _str(c.text)
    if bk == _BK_TOOL_USE:
        return ToolUse.from_json(_str(c.tool_id), _str(c.tool_name), text)
    if bk == _BK_THINKING:
        return Thinking(text, _str(c.signature))
    if bk == _BK_REDACTED:
        return RedactedThinking(text)
    if bk == _BK_SERVER:
        return ServerBlock(text)
    if c.citations.len:
        return Text(text, tuple(json.loads(_str(c.citations))))
    return Text(text)


def _first(pair: tuple[int, Any]) -> int:
    return pair[0]


def decode(
    wire: str,
    chunks: Iterable[bytes | bytearray | memoryview] | bytes | bytearray | memoryview,
    **options: int | bool | None,
) -> Iterator[Event]:
    """Decode a whole body: yields every event of ``chunks`` (an iterable of
    byte chunks, or one bytes-like object) in order, then raises the
    stream's error if it failed (``TruncatedStream`` when it ended early).
    ``options`` are ``StreamDecoder``'s keywords: the ``max_*`` limits and
    ``merge_deltas``.

    The result is an iterator (a generator in all but type): passing it
    untouched to ``accumulate()`` lets that skip building the delta events."""
    if isinstance(chunks, (bytes, bytearray, memoryview)):
        chunks = (chunks,)
    return _Decoding(wire, chunks, options)


class _Decoding:
    """The iterator decode() returns; see there."""

    __slots__ = ("_args", "_gen")

    def __init__(self, wire: str, chunks: Iterable[Any], options: dict[str, Any]) -> None:
        StreamDecoder(wire, **options).release()  # bad arguments raise now, not on first next()
        self._args = (wire, chunks, options)
        self._gen: Iterator[Event] | None = None

    def __iter__(self) -> Iterator[Event]:
        if self._gen is None:
            self._gen = _decode(*self._args)
        return self._gen

    def __next__(self) -> Event:
        return next(iter(self))

    def close(self) -> None:
        if self._gen is not None:
            self._gen.close()  # type: ignore[attr-defined]


def _decode(
    wire: str, chunks: Iterable[Any], options: dict[str, Any], skip_deltas: bool = False
) -> Iterator[Event]:
    dec = StreamDecoder(wire, **options)
    if skip_deltas:
        # Same-module access (documented SLF001 exception): the flag is the
        # fast path's private contract between _decode and the C glue.
        dec._ctx.skip_deltas = 1  # noqa: SLF001
    try:
        for chunk in chunks:
            dec.feed(chunk)
            yield from dec
        try:
            dec.close()
        except PantoError:
            pass  # raised again by the iteration below, after the last events
        yield from dec
    finally:
        dec.release()


def accumulate(events: Iterable[Event]) -> Message:
    """Consume ``events`` and return the message of the last final
    ``MessageComplete``; raises ``TruncatedStream`` if there is none (errors
    raised by ``events`` propagate).  ``accumulate(decode(wire, chunks))``
    never builds the ``ContentDelta`` events: the core assembles the blocks."""
    # Same-module access (documented SLF001 exception): an untouched
    # _Decoding is re-run without building ContentDelta objects.
    if type(events) is _Decoding and events._gen is None:  # noqa: SLF001
        events = _decode(*events._args, skip_deltas=True)  # noqa: SLF001
    message = None
    for ev in events:
        if type(ev) is MessageComplete and ev.final:
            message = ev.message
    if message is None:
        raise TruncatedStream("the events ended without a final MessageComplete")
    return message
