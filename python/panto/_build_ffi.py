"""Generate the cffi (API mode) extension ``panto._panto_cffi``.

The declarations are cut from the region of ``include/panto.h`` between
``/* PANTO_CDEF_BEGIN */`` and ``/* PANTO_CDEF_END */``, so the header stays
the single source of truth.  Added to them is one small binding-private
accelerator (``pantopy_batch`` below): it calls ``panto_next_event`` and packs
runs of content deltas (nearly every event of a response) into one buffer of
text and one array of integers, so Python pays one foreign call per batch of
events instead of several cdata attribute reads per event; optionally it
joins consecutive deltas of one block (``StreamDecoder(merge_deltas=True)``).
``pantopy_drain`` runs the core alone, for bench/decode.py.

CMake runs this file as a script (``python _build_ffi.py OUT.c``) to emit the
C source, then compiles it against the static core.  The module name given to
``set_source`` ("panto._panto_cffi"), the CMake target (``_panto_cffi``) and
the install dir (``panto/``) must agree.
"""

from __future__ import annotations

import os
import re
import sys

import cffi

MODULE_NAME = "panto._panto_cffi"

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HEADER = os.path.join(ROOT, "include", "panto.h")

BEGIN = "/* PANTO_CDEF_BEGIN */"
END = "/* PANTO_CDEF_END */"

#: Size of the scratch buffer for content-delta text, and the most content
#: deltas one pantopy_batch() call returns.  Only the cffi path (no
#: panto._fastevents) uses a pantopy_buf, one per decoder made on that path,
#: because its batch is read by Python after the call; the C extension
#: builds its events within the call, from a buffer on its stack.  So an
#: open decoder on the usual path holds a pantopy_ctx of ~150 bytes, not
#: the 6 KiB of these buffers (zero-filled by ffi.new: all resident) -- 256
#: streams in one process, 1.5 MiB.  A batch ends early when the next delta
#: does not fit; a larger delta takes the slow path.
SCRATCH_BYTES = 4096
BATCH = 128
assert BATCH < 256 and SCRATCH_BYTES < 1 << 15  # the bit fields of pantopy_batch's result

_CTX = f"""
typedef struct {{
    int64_t hdr[{2 * BATCH}];     /* per delta: block_kind | index << 4, end offset in code points */
    char scratch[{SCRATCH_BYTES}];
}} pantopy_buf;

typedef struct {{
    panto_stream *s;
    panto_event ev;         /* the event that ended the batch, when tail > 0 */
    int64_t tail;           /* see pantopy_batch */
    int skip_deltas;        /* nonzero: drop content deltas (accumulate only) */
    int merge_deltas;       /* nonzero: join consecutive deltas of one block */
    size_t nbytes;          /* bytes of delta text in buf->scratch */
    pantopy_buf *buf;       /* pantopy_batch's output (the cffi path only) */
}} pantopy_ctx;
"""

EXTRA_CDEF = (
    _CTX
    + """
int64_t pantopy_batch(pantopy_ctx *ctx);
int64_t pantopy_drain(panto_stream *s, const uint8_t *body, const size_t *ends, size_t nchunks);
"""
)

EXTRA_SOURCE = (
    """
#include <string.h>
#include "panto.h"
"""
    + _CTX
    + f"""
/* Pulls events until one that is not a small content delta.  The deltas are
 * packed: their text concatenated in ctx->buf->scratch (ctx->nbytes bytes,
 * valid UTF-8 on the provider wires) and two int64 per delta in ctx->buf->hdr: kind |
 * index << 4, and where its text ends in the decoded scratch, in code points
 * (filled when the batch holds more than one delta: Python decodes the
 * scratch once and slices it; a lone delta is the whole scratch).  With
 * ctx->merge_deltas set, a delta of the same block as the one before it in
 * the batch extends that one instead of taking a new entry.  Returns how
 * many deltas (entries) were packed; ctx->tail says how the batch ended:
 *   0: the batch is full;  1..7: an event of that kind is in ctx->ev;
 *  -1: PANTO_ERROR;  -2: PANTO_NEED_MORE;  -3: PANTO_DONE.
 * All three come back packed in the result, so that Python reads no struct
 * field, with the first delta's kind | index << 4 (0 when n == 0):
 *   n | (tail + 3) << 8 | nbytes << 12 | hdr[0] << 27
 * (n <= {BATCH} < 256, nbytes <= {SCRATCH_BYTES} < 2^15, hdr[0] < 2^36). */
static int64_t pantopy_batch(pantopy_ctx *ctx)
{{
    pantopy_buf *buf = ctx->buf;
    int n = 0;
    size_t used = 0;
    ctx->tail = 0;
    while (n < {BATCH}) {{
        int rc = panto_next_event(ctx->s, &ctx->ev);
        if (rc != PANTO_EVENT) {{
            ctx->tail = rc == PANTO_NEED_MORE ? -2 : rc == PANTO_DONE ? -3 : -1;
            break;
        }}
        if (ctx->ev.kind == PANTO_EV_CONTENT_DELTA) {{
            if (ctx->skip_deltas)
                continue;
            const panto_content_delta *d = &ctx->ev.u.content_delta;
            size_t len = d->text.len;
            if (len <= sizeof buf->scratch - used && (unsigned)d->block_kind < 16u) {{
                int64_t packed = (int64_t)d->block_kind | ((int64_t)d->index << 4);
                if (len)
                    memcpy(buf->scratch + used, d->text.ptr, len);
                used += len;
                if (ctx->merge_deltas && n > 0 && buf->hdr[2 * n - 2] == packed) {{
                    buf->hdr[2 * n - 1] = (int64_t)used;   /* same block: extend the last delta */
                    continue;
                }}
                buf->hdr[2 * n] = packed;
                buf->hdr[2 * n + 1] = (int64_t)used;   /* a byte offset until the end */
                n++;
                continue;
            }}
        }}
        ctx->tail = ctx->ev.kind;
        break;
    }}
    ctx->nbytes = used;
    if (n > 1) {{
        /* end offsets: bytes -> code points (UTF-8 continuation bytes do
         * not count); nothing to do for ASCII text, the usual case */
        const unsigned char *p = (const unsigned char *)buf->scratch;
        unsigned char high = 0;
        for (size_t i = 0; i < used; i++)
            high |= p[i];
        if (high & 0x80) {{
            size_t i = 0;
            int64_t chars = 0;
            for (int k = 0; k < n; k++) {{
                size_t end = (size_t)buf->hdr[2 * k + 1];
                for (; i < end; i++)
                    chars += (p[i] & 0xC0) != 0x80;
                buf->hdr[2 * k + 1] = chars;
            }}
        }}
    }}
    return (int64_t)n | (ctx->tail + 3) << 8 | (int64_t)used << 12 | (n ? buf->hdr[0] << 27 : 0);
}}

/* For bench/decode.py's "core" rows: the core alone, in process.  Feeds
 * body[ends[i-1]:ends[i]) for each of the nchunks chunks (nchunks == 0: no
 * feeding, just drain what was fed) and pulls every event after each feed,
 * building nothing (the events come from the separately compiled core, so
 * nothing can be optimized away); finishes the stream after the last chunk.
 * Returns the number of events, or -1 if the stream failed. */
static int64_t pantopy_drain(panto_stream *s, const uint8_t *body, const size_t *ends,
                             size_t nchunks)
{{
    panto_event ev;
    int64_t n = 0;
    size_t start = 0;
    int rc = PANTO_NEED_MORE;
    for (size_t i = 0; i <= nchunks; i++) {{
        if (i < nchunks) {{
            if (panto_stream_feed(s, body + start, ends[i] - start) != PANTO_OK)
                return -1;
            start = ends[i];
        }} else if (nchunks && panto_stream_finish(s) != PANTO_OK) {{
            return -1;
        }}
        while ((rc = panto_next_event(s, &ev)) == PANTO_EVENT)
            n++;
        if (rc == PANTO_ERROR)
            return -1;
    }}
    return n;
}}
"""
)


def read_cdef(header: str = HEADER) -> str:
    """The marked region of the header, ready for ``FFI.cdef``."""
    with open(header, encoding="utf-8") as f:
        text = f.read()
    try:
        start = text.index(BEGIN) + len(BEGIN)
        end = text.index(END, start)
    except ValueError:
        raise SystemExit(f"{header}: missing {BEGIN} / {END} markers") from None
    # PANTO_EXTERN(type) marks the declarations for the C compiler; cffi
    # wants the bare type.
    region = re.sub(r"PANTO_EXTERN\(([^()]*)\)", r"\1", text[start:end])
    # The region may hold integer #defines (cffi accepts them) but no other
    # preprocessor lines; fail loudly rather than produce a confusing cffi error.
    for line in region.splitlines():
        s = line.strip()
        if s.startswith("#") and not re.match(r"#\s*define\s+\w+\s+-?\d+\s*(/\*.*\*/)?$", s):
            raise SystemExit(f"{header}: preprocessor line not allowed in cdef region: {s}")
    return region


def make_ffi() -> cffi.FFI:
    ffi = cffi.FFI()
    ffi.cdef(read_cdef())
    ffi.cdef(EXTRA_CDEF)
    ffi.set_source(
        MODULE_NAME,
        EXTRA_SOURCE,
        include_dirs=[os.path.join(ROOT, "include")],
    )
    return ffi


ffibuilder = make_ffi()


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(f"usage: {argv[0]} OUTPUT.c", file=sys.stderr)
        return 2
    out = argv[1]
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    ffibuilder.emit_c_code(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
