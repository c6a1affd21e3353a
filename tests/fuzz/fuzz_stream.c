/* fuzz_stream.c -- a libFuzzer target for one wire of the stream core,
 * through the public API (include/panto.h; see below for the one white-box
 * run).  Built once per wire with
 * -DFUZZ_WIRE=PANTO_WIRE_SSE / _OPENAI_CHAT / _ANTHROPIC_MESSAGES / _OPENAI_RESPONSES; see
 * tests/fuzz/run.sh.
 *
 * Input layout: byte 0 holds flags, bytes 1-2 seed a PRNG, the rest is the
 * HTTP body.  (The seed corpus files carry that 3-byte prefix; see
 * tests/fuzz/make_corpus.py.)
 *
 *   flags & 3         limit profile: default limits, a small max_event_bytes,
 *                     a small max_block_bytes, or a shallow max_json_depth
 *                     with a small max_event_bytes
 *   (flags >> 2) & 3  how the split run drains: after every feed, only at the
 *                     end (lazily), at random points, or one event per feed
 *   flags & 16        the split run calls finish() before draining the last
 *                     events instead of after
 *   flags & 32        the split run pulls events with panto_next_events
 *                     (1-8 per call, a 0-512 byte string buffer, so big
 *                     events come borrowed) instead of panto_next_event
 *   flags & 64        after the split run, panto_stream_reset() and decode
 *                     the body again on the same stream: same events as a
 *                     new stream
 *
 * The body is decoded twice under the same limits: fed whole and drained
 * after the single feed (the reference), and fed in random pieces (sizes 0
 * to 64 bytes, some large) drained as the flags say.  Both runs must yield
 * the same events and end the same way (status, error code and message,
 * provider type, retryable).  Each run is also checked against the ABI
 * contract: the terminal invariant, sticky errors, block bookkeeping
 * (indices in order of first appearance, TOOL_DETAILS right after a
 * tool_use BLOCK_START, deltas only for open blocks, BLOCK_COMPLETE's text
 * equal to the concatenated deltas), valid UTF-8 in every string of a
 * provider wire.  Any violation aborts, which libFuzzer reports as a crash.
 *
 * The whole run is also repeated with the wires' fast paths turned off
 * (pt_openai_fast, pt_anthropic_fast; the general path alone): the traces
 * must be identical.  For that the target includes the core itself (white
 * box: run.sh does not link csrc/unity/panto_core.c again) and sets the
 * stream's `fast` flag; everything else goes through the public API.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unity/panto_core.c"

#ifndef FUZZ_WIRE
#error "define FUZZ_WIRE"
#endif

#define FAIL(...)                                             \
    do {                                                      \
        fprintf(stderr, "fuzz_stream: contract violated: ");  \
        fprintf(stderr, __VA_ARGS__);                         \
        fprintf(stderr, "\n");                                \
        abort();                                              \
    } while (0)

/* ---- a growable byte buffer ---- */
typedef struct {
    uint8_t *p;
    size_t len, cap;
} fz_buf;

static void buf_add(fz_buf *b, const void *s, size_t n) {
    if (b->len + n > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 1024;
        while (nc < b->len + n)
            nc *= 2;
        uint8_t *np = realloc(b->p, nc);
        if (!np)
            abort();
        b->p = np;
        b->cap = nc;
    }
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
}
/* The trace is text, so that a mismatch prints readably: numbers in
 * decimal, strings as <len>"bytes". */
static void buf_u64(fz_buf *b, uint64_t v) {
    char t[32];
    int n = snprintf(t, sizeof t, " %llu", (unsigned long long)v);
    buf_add(b, t, (size_t)n);
}
static void buf_str(fz_buf *b, panto_str s) {
    if (s.len && !s.ptr)
        FAIL("a string with len %zu and a NULL ptr", s.len);
    char t[32];
    int n = snprintf(t, sizeof t, " %zu\"", s.len);
    buf_add(b, t, (size_t)n);
    buf_add(b, s.ptr, s.len);
    buf_add(b, "\"", 1);
}
static void buf_usage(fz_buf *b, const panto_usage *u) {
    buf_u64(b, u->input_tokens);
    buf_u64(b, u->cache_read_tokens);
    buf_u64(b, u->cache_write_tokens);
    buf_u64(b, u->output_tokens);
    buf_u64(b, u->reasoning_tokens);
}

/* ---- a small deterministic PRNG (xorshift32) ---- */
static uint32_t rng_next(uint32_t *st) {
    uint32_t x = *st;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *st = x;
}

/* RFC 3629 UTF-8: no overlongs, no surrogates, nothing past U+10FFFF. */
static int utf8_ok(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c >= 0xC2 && c <= 0xDF)
            k = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            k = 2;
            if (c == 0xE0)
                lo = 0xA0;
            if (c == 0xED)
                hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            k = 3;
            if (c == 0xF0)
                lo = 0x90;
            if (c == 0xF4)
                hi = 0x8F;
        } else
            return 0;
        if (n - i < k + 1)
            return 0;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return 0;
        for (size_t j = 2; j <= k; j++)
            if (s[i + j] < 0x80 || s[i + j] > 0xBF)
                return 0;
        i += k + 1;
    }
    return 1;
}

static void check_str(panto_str s, const char *what) {
    if (s.len && !s.ptr)
        FAIL("%s: len %zu with a NULL ptr", what, s.len);
    if (FUZZ_WIRE != PANTO_WIRE_SSE && s.len && !utf8_ok((const uint8_t *)s.ptr, s.len))
        FAIL("%s is not valid UTF-8", what);
}

/* ---- per-run bookkeeping of the ABI contract ---- */
#define MAX_BLOCKS 4096

typedef struct {
    fz_buf trace;               /* everything the run yields, serialized */
    int started_msg;
    int completed_msg;
    uint32_t n_blocks;          /* BLOCK_STARTs so far */
    uint8_t kind[MAX_BLOCKS];
    uint8_t state[MAX_BLOCKS];  /* 1 open, 2 complete */
    uint8_t saw_delta[MAX_BLOCKS];
    fz_buf text[MAX_BLOCKS];    /* concatenated deltas (first blocks only) */
    int want_details;           /* the last event was a tool_use BLOCK_START */
    uint32_t details_index;
    size_t batch_cap;           /* >0: drain through panto_next_events */
    size_t batch_bytes;         /* its string buffer */
    int ended;                  /* last status: 0 running, PANTO_DONE, PANTO_ERROR */
    int32_t end_code;
    uint64_t end_off;           /* the error's offset at the end */
} run_state;

static void run_free(run_state *r) {
    free(r->trace.p);
    for (uint32_t i = 0; i < r->n_blocks && i < MAX_BLOCKS; i++)
        free(r->text[i].p);
}

static void on_event(run_state *r, const panto_event *ev) {
    fz_buf *t = &r->trace;
    buf_add(t, "\n", 1);
    const char *kn = panto_event_kind_name(ev->kind);
    buf_add(t, kn, strlen(kn));
    if (r->completed_msg)
        FAIL("an event (kind %d) after MESSAGE_COMPLETE", (int)ev->kind);
    if (r->want_details && ev->kind != PANTO_EV_TOOL_DETAILS)
        FAIL("a tool_use BLOCK_START not followed by TOOL_DETAILS (got kind %d)", (int)ev->kind);
    if (FUZZ_WIRE == PANTO_WIRE_SSE) {
        if (ev->kind != PANTO_EV_SSE)
            FAIL("kind %d on the raw SSE wire", (int)ev->kind);
        const panto_sse_event *e = &ev->u.sse;
        buf_str(t, e->event);
        buf_str(t, e->data);
        buf_str(t, e->id);
        buf_u64(t, (uint64_t)e->retry);
        check_str(e->event, "sse.event");
        check_str(e->data, "sse.data");
        check_str(e->id, "sse.id");
        if (e->event.len == 0)
            FAIL("an SSE event with an empty type");
        if (e->retry < -1)
            FAIL("retry %lld", (long long)e->retry);
        if (memchr(e->id.ptr ? e->id.ptr : "", 0, e->id.len))
            FAIL("an event id containing NUL");
        return;
    }
    if (ev->kind != PANTO_EV_MESSAGE_START && !r->started_msg)
        FAIL("kind %d before MESSAGE_START", (int)ev->kind);
    switch (ev->kind) {
    case PANTO_EV_MESSAGE_START: {
        const panto_message_start *e = &ev->u.message_start;
        if (r->started_msg)
            FAIL("a second MESSAGE_START");
        r->started_msg = 1;
        buf_str(t, e->id);
        buf_str(t, e->model);
        buf_usage(t, &e->usage);
        check_str(e->id, "message_start.id");
        check_str(e->model, "message_start.model");
        break;
    }
    case PANTO_EV_BLOCK_START: {
        const panto_block_start *e = &ev->u.block_start;
        buf_u64(t, e->index);
        buf_u64(t, (uint64_t)e->block_kind);
        if (e->index != r->n_blocks)
            FAIL("BLOCK_START index %u, expected %u", e->index, r->n_blocks);
        if (e->block_kind < PANTO_BLOCK_TEXT || e->block_kind > PANTO_BLOCK_SERVER)
            FAIL("BLOCK_START with block kind %d", (int)e->block_kind);
        if (e->index < MAX_BLOCKS) {
            r->kind[e->index] = (uint8_t)e->block_kind;
            r->state[e->index] = 1;
        }
        r->n_blocks++;
        if (e->block_kind == PANTO_BLOCK_TOOL_USE) {
            r->want_details = 1;
            r->details_index = e->index;
        }
        break;
    }
    case PANTO_EV_TOOL_DETAILS: {
        const panto_tool_details *e = &ev->u.tool_details;
        buf_u64(t, e->index);
        buf_str(t, e->id);
        buf_str(t, e->name);
        if (!r->want_details || e->index != r->details_index)
            FAIL("TOOL_DETAILS for block %u not right after its tool_use BLOCK_START", e->index);
        r->want_details = 0;
        check_str(e->id, "tool_details.id");
        check_str(e->name, "tool_details.name");
        break;
    }
    case PANTO_EV_CONTENT_DELTA: {
        const panto_content_delta *e = &ev->u.content_delta;
        buf_u64(t, e->index);
        buf_u64(t, (uint64_t)e->block_kind);
        buf_str(t, e->text);
        check_str(e->text, "content_delta.text");
        if (e->index >= r->n_blocks)
            FAIL("CONTENT_DELTA for block %u, only %u started", e->index, r->n_blocks);
        if (e->index < MAX_BLOCKS) {
            if (r->state[e->index] != 1)
                FAIL("CONTENT_DELTA for block %u which is not open", e->index);
            if (r->kind[e->index] != (uint8_t)e->block_kind)
                FAIL("CONTENT_DELTA kind %d for a block of kind %d", (int)e->block_kind,
                     (int)r->kind[e->index]);
            r->saw_delta[e->index] = 1;
            buf_add(&r->text[e->index], e->text.ptr, e->text.len);
        }
        break;
    }
    case PANTO_EV_BLOCK_COMPLETE: {
        const panto_block_complete *e = &ev->u.block_complete;
        buf_u64(t, e->index);
        buf_u64(t, (uint64_t)e->block_kind);
        buf_str(t, e->text);
        buf_str(t, e->signature);
        buf_str(t, e->tool_id);
        buf_str(t, e->tool_name);
        buf_str(t, e->citations);
        buf_u64(t, e->flags);
        check_str(e->text, "block_complete.text");
        check_str(e->citations, "block_complete.citations");
        check_str(e->signature, "block_complete.signature");
        check_str(e->tool_id, "block_complete.tool_id");
        check_str(e->tool_name, "block_complete.tool_name");
        if (e->index >= r->n_blocks)
            FAIL("BLOCK_COMPLETE for block %u, only %u started", e->index, r->n_blocks);
        if (e->index < MAX_BLOCKS) {
            if (r->state[e->index] != 1)
                FAIL("BLOCK_COMPLETE for block %u which is not open", e->index);
            if (r->kind[e->index] != (uint8_t)e->block_kind)
                FAIL("BLOCK_COMPLETE kind %d for a block of kind %d", (int)e->block_kind,
                     (int)r->kind[e->index]);
            r->state[e->index] = 2;
            const fz_buf *d = &r->text[e->index];
            /* A server block's text is its whole JSON object, not the
             * deltas of its input joined. */
            if (r->saw_delta[e->index] && e->block_kind != PANTO_BLOCK_SERVER &&
                (d->len != e->text.len || (d->len && memcmp(d->p, e->text.ptr, d->len) != 0)))
                FAIL("BLOCK_COMPLETE %u: text (%zu bytes) is not its deltas joined (%zu bytes)",
                     e->index, e->text.len, d->len);
            if (e->block_kind == PANTO_BLOCK_TOOL_USE && e->text.len == 0)
                FAIL("BLOCK_COMPLETE %u: a tool_use with empty input (not even {})", e->index);
            if (e->block_kind != PANTO_BLOCK_TEXT && e->citations.len)
                FAIL("BLOCK_COMPLETE %u: citations on a non-text block", e->index);
            if (e->block_kind != PANTO_BLOCK_TOOL_USE && (e->tool_id.len || e->tool_name.len))
                FAIL("BLOCK_COMPLETE %u: tool id/name on a non-tool block", e->index);
            if (e->block_kind != PANTO_BLOCK_THINKING && e->signature.len)
                FAIL("BLOCK_COMPLETE %u: a signature on a non-thinking block", e->index);
        }
        break;
    }
    case PANTO_EV_MESSAGE_COMPLETE: {
        const panto_message_complete *e = &ev->u.message_complete;
        buf_u64(t, (uint64_t)e->stop_reason);
        buf_str(t, e->raw_stop_reason);
        buf_usage(t, &e->usage);
        check_str(e->raw_stop_reason, "message_complete.raw_stop_reason");
        if (e->stop_reason < PANTO_STOP_STOP || e->stop_reason > PANTO_STOP_OTHER)
            FAIL("stop reason %d", (int)e->stop_reason);
        for (uint32_t i = 0; i < r->n_blocks && i < MAX_BLOCKS; i++)
            if (r->state[i] != 2)
                FAIL("MESSAGE_COMPLETE while block %u is still open", i);
        r->completed_msg = 1;
        break;
    }
    default:
        FAIL("event kind %d on a provider wire", (int)ev->kind);
    }
}

/* The end-of-drain checks shared by both ways of pulling events. */
static int on_status(panto_stream *s, run_state *r, int st) {
    if (st == PANTO_DONE) {
        if (FUZZ_WIRE != PANTO_WIRE_SSE && !r->completed_msg)
            FAIL("PANTO_DONE before MESSAGE_COMPLETE");
        if (r->ended == PANTO_ERROR)
            FAIL("PANTO_DONE after PANTO_ERROR");
        r->ended = PANTO_DONE;
        return st;
    }
    if (st == PANTO_ERROR) {
        panto_error e;
        panto_stream_error(s, &e);
        if (e.code == PANTO_ERR_NONE)
            FAIL("PANTO_ERROR from next_event with error code NONE");
        if (r->ended == PANTO_DONE)
            FAIL("PANTO_ERROR after PANTO_DONE");
        if (r->ended == PANTO_ERROR && e.code != r->end_code)
            FAIL("the sticky error changed from %d to %d", (int)r->end_code, (int)e.code);
        r->ended = PANTO_ERROR;
        r->end_code = e.code;
        return st;
    }
    if (st != PANTO_NEED_MORE)
        FAIL("panto_next_event(s) returned %d", st);
    if (r->ended)
        FAIL("PANTO_NEED_MORE after the stream ended with %d", r->ended);
    return st;
}

static int drain_batch(panto_stream *s, run_state *r, size_t max) {
    panto_event evs[8];
    char buf[512];
    int st = PANTO_NEED_MORE;
    size_t got = 0;
    while (got < max) {
        size_t cap = r->batch_cap < sizeof evs / sizeof evs[0] ? r->batch_cap : 8;
        if (cap > max - got)
            cap = max - got;
        size_t n = (size_t)-1;
        memset(evs, 0xA5, sizeof evs);
        st = panto_next_events(s, evs, cap, buf, r->batch_bytes, &n);
        if (st == PANTO_EVENT) {
            if (n == 0 || n > cap)
                FAIL("panto_next_events: PANTO_EVENT with n = %zu (cap %zu)", n, cap);
            if (r->ended)
                FAIL("PANTO_EVENT after the stream ended with %d", r->ended);
            for (size_t k = 0; k < n; k++)
                on_event(r, &evs[k]);
            got += n;
            continue;
        }
        if (n != 0)
            FAIL("panto_next_events: status %d with n = %zu", st, n);
        return on_status(s, r, st);
    }
    return st;
}

/* Pull events until the stream needs more input or is over.  `max` bounds
 * how many are pulled (SIZE_MAX: all).  Returns the last status.  With
 * r->batch_cap set, events come through panto_next_events (batches of at
 * most batch_cap, strings copied into a batch_bytes buffer or borrowed),
 * else one panto_next_event call each. */
static int drain(panto_stream *s, run_state *r, size_t max) {
    if (r->batch_cap)
        return drain_batch(s, r, max);
    int st = PANTO_NEED_MORE;
    for (size_t i = 0; i < max; i++) {
        panto_event ev;
        memset(&ev, 0xA5, sizeof ev);
        st = panto_next_event(s, &ev);
        if (st == PANTO_EVENT) {
            if (r->ended)
                FAIL("PANTO_EVENT after the stream ended with %d", r->ended);
            on_event(r, &ev);
            continue;
        }
        return on_status(s, r, st);
    }
    return st;
}

static void finish_run(panto_stream *s, run_state *r) {
    int st = drain(s, r, SIZE_MAX);
    if (st == PANTO_NEED_MORE)
        FAIL("PANTO_NEED_MORE after panto_stream_finish");
    /* The end is stable: the same status again, with the same error. */
    int st2 = drain(s, r, 1);
    if (st2 != st)
        FAIL("next_event said %d, then %d", st, st2);
    panto_error e;
    if (panto_stream_error(s, &e) != PANTO_OK)
        FAIL("panto_stream_error failed");
    check_str(e.message, "error.message");
    check_str(e.provider_type, "error.provider_type");
    if (e.code != PANTO_ERR_NONE && e.message.len == 0)
        FAIL("error %d without a message", (int)e.code);
    if (st == PANTO_ERROR && e.code == PANTO_ERR_NONE)
        FAIL("ended in PANTO_ERROR without an error");
    if (e.code == PANTO_ERR_INVALID_ARGUMENT || e.code == PANTO_ERR_NO_MEMORY)
        FAIL("error %d on well-formed API use", (int)e.code);
    fz_buf *t = &r->trace;
    buf_add(t, "\nend", 4);
    buf_u64(t, (uint64_t)st);
    buf_u64(t, (uint64_t)e.code);
    buf_str(t, e.message);
    buf_str(t, e.provider_type);
    buf_u64(t, (uint64_t)e.retryable);
    r->end_off = e.offset;
}

static panto_stream *open_stream(const panto_stream_options *o) {
    panto_stream *s = NULL;
    if (panto_stream_new(FUZZ_WIRE, o, &s) != PANTO_OK || !s)
        FAIL("panto_stream_new failed");
    return s;
}

/* Feed buf whole, drain, finish, drain (fast == 0: the general path only). */
static void run_whole(const uint8_t *buf, size_t len, const panto_stream_options *o,
                      run_state *r, int fast) {
    panto_stream *s = open_stream(o);
    s->fast = fast;
    panto_stream_feed(s, buf, len);
    drain(s, r, SIZE_MAX);
    panto_stream_finish(s);
    finish_run(s, r);
    panto_stream_free(s);
}

/* Feed buf in random pieces, draining as `mode` says. */
static void run_split(const uint8_t *buf, size_t len, const panto_stream_options *o,
                      unsigned mode, int finish_first, uint32_t seed, run_state *r,
                      run_state *again) {
    panto_stream *s = open_stream(o);
    uint32_t st = seed * 2654435761u + 0x9E3779B9u;
    if (!st)
        st = 1;
    size_t off = 0;
    while (off < len) {
        uint32_t x = rng_next(&st);
        size_t n = (x & 7) == 0 ? (x >> 3) % 4096 : (x >> 3) % 65;
        if (n > len - off)
            n = len - off;
        if (panto_stream_feed(s, buf + off, n) != PANTO_OK) {
            panto_error e;
            panto_stream_error(s, &e);
            if (e.code == PANTO_ERR_NONE)
                FAIL("feed failed without an error");
        }
        off += n;
        switch (mode) {
        case 0:
            drain(s, r, SIZE_MAX);
            break;
        case 1:
            break;
        case 2:
            if (rng_next(&st) & 1)
                drain(s, r, rng_next(&st) % 4);
            break;
        default:
            drain(s, r, 1);
            break;
        }
    }
    if (!finish_first)
        drain(s, r, SIZE_MAX);
    panto_stream_finish(s);
    finish_run(s, r);
    if (panto_stream_memory(s) == 0)
        FAIL("panto_stream_memory is 0 for a live stream");
    if (again) {
        /* A retry on the same stream: reset keeps the buffers and must
         * decode as a new stream would. */
        if (panto_stream_reset(s) != PANTO_OK)
            FAIL("panto_stream_reset failed");
        panto_stream_feed(s, buf, len);
        drain(s, again, SIZE_MAX);
        panto_stream_finish(s);
        finish_run(s, again);
    }
    panto_stream_free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint8_t flags = 0;
    uint32_t seed = 1;
    if (size >= 3) {
        flags = data[0];
        seed = (uint32_t)data[1] | ((uint32_t)data[2] << 8) | 0x10000u;
        data += 3;
        size -= 3;
    }
    panto_stream_options o = PANTO_STREAM_OPTIONS_INIT;
    switch (flags & 3) {
    case 1:
        o.max_event_bytes = 16 + seed % 512;
        break;
    case 2:
        o.max_block_bytes = 1 + seed % 256;
        break;
    case 3:
        o.max_json_depth = 1 + seed % 6;
        o.max_event_bytes = 64 + seed % 2048;
        break;
    default:
        break;
    }
    run_state *a = calloc(1, sizeof *a);
    run_state *b = calloc(1, sizeof *b);
    if (!a || !b)
        abort();
    run_state *c = (flags & 64) ? calloc(1, sizeof *c) : NULL;
    if (flags & 32) {
        b->batch_cap = 1 + seed % 8;
        b->batch_bytes = (seed >> 3) % 513;
    }
    run_whole(data, size, &o, a, 1);
    run_state *g = calloc(1, sizeof *g);
    if (!g)
        abort();
    run_whole(data, size, &o, g, 0);
    if (a->end_off != g->end_off)
        FAIL("the fast paths give error offset %llu, the general path %llu",
             (unsigned long long)a->end_off, (unsigned long long)g->end_off);
    if (a->trace.len != g->trace.len || memcmp(a->trace.p, g->trace.p, a->trace.len) != 0) {
        size_t i = 0;
        while (i < a->trace.len && i < g->trace.len && a->trace.p[i] == g->trace.p[i])
            i++;
        size_t from = i > 200 ? i - 200 : 0;
        fprintf(stderr, "---- general path, from trace byte %zu:\n%.*s\n", from,
                (int)(g->trace.len - from < 600 ? g->trace.len - from : 600), g->trace.p + from);
        fprintf(stderr, "---- with the fast paths:\n%.*s\n----\n",
                (int)(a->trace.len - from < 600 ? a->trace.len - from : 600), a->trace.p + from);
        FAIL("the fast paths differ from the general path at trace byte %zu (flags 0x%02x)", i,
             flags);
    }
    run_free(g);
    free(g);
    run_split(data, size, &o, (flags >> 2) & 3, (flags & 16) != 0, seed, b, c);
    if (c && (a->trace.len != c->trace.len || memcmp(a->trace.p, c->trace.p, a->trace.len) != 0))
        FAIL("decoding again after panto_stream_reset differs from a new stream (%zu vs %zu "
             "trace bytes)",
             c->trace.len, a->trace.len);
    if (c) {
        run_free(c);
        free(c);
    }
    if (a->trace.len != b->trace.len || memcmp(a->trace.p, b->trace.p, a->trace.len) != 0) {
        size_t i = 0;
        while (i < a->trace.len && i < b->trace.len && a->trace.p[i] == b->trace.p[i])
            i++;
        size_t from = i > 200 ? i - 200 : 0;
        fprintf(stderr, "---- whole run, from trace byte %zu:\n%.*s\n", from,
                (int)(a->trace.len - from < 600 ? a->trace.len - from : 600), a->trace.p + from);
        fprintf(stderr, "---- split run:\n%.*s\n----\n",
                (int)(b->trace.len - from < 600 ? b->trace.len - from : 600), b->trace.p + from);
        FAIL("split run differs from the whole run at trace byte %zu (%zu vs %zu bytes; "
             "flags 0x%02x)",
             i, a->trace.len, b->trace.len, flags);
    }
    run_free(a);
    run_free(b);
    free(a);
    free(b);
    return 0;
}
