/* stream.h -- internals of panto_stream shared by stream.c and the wire
 * decoders (wire_openai_chat.c, wire_anthropic.c, wire_openai_responses.c).  Not part of the ABI.
 *
 * Lifetime rule: strings in a delivered event stay valid until the next call
 * on the stream.  The stream only decodes the next SSE event once its event
 * queue is empty, and only then resets the arena and recycles the buffers of
 * completed ("retired") blocks.  Event strings point into the SSE parser's
 * data buffer, the arena, block accumulators, or (fast paths) the input
 * buffer -- all untouched while the queue holds events (a feed with events
 * queued keeps the input's bytes in place: in_keep). */
#ifndef PANTO_STREAM_H
#define PANTO_STREAM_H

#include <stdarg.h>
#include <string.h>

#include "panto.h"
#include "json.h"
#include "sse.h"
#include "util.h"

#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
#include <emmintrin.h>
#endif

/* The fast paths' steps are small and run for nearly every event: inlined
 * into their caller (the unity build sees them all). */
#if defined(__GNUC__)
#define PT_HOT_INLINE inline __attribute__((always_inline))
#else
#define PT_HOT_INLINE inline
#endif

/* Defaults for panto_stream_options fields left zero. */
#define PT_DEFAULT_MAX_EVENT  ((size_t)8 << 20)
#define PT_DEFAULT_MAX_BLOCK  ((size_t)64 << 20)
#define PT_DEFAULT_MAX_BUFFER ((size_t)64 << 20)
#define PT_DEFAULT_JSON_DEPTH 128u
#define PT_BYTES_PER_NODE 32u   /* see json_node_limit in stream.c */

/* Responses: how many texts of completed blocks are kept as hints. */
#define PT_RS_TEXTS 3

/* A block slot: the accumulators of one open (or just completed) block. */
enum { PT_SLOT_FREE = 0, PT_SLOT_OPEN = 1, PT_SLOT_RETIRED = 2 };

typedef struct {
    uint8_t state;              /* PT_SLOT_* */
    uint8_t keyed;              /* key is in the key map */
    int32_t kind;               /* panto_block_kind */
    uint32_t index;             /* panto's block index */
    uint64_t key;               /* the wire's key for the block */
    pbuf text;                  /* text / thinking / redacted data / tool JSON */
    pbuf sig;                   /* thinking signature */
    pbuf tool_id;
    pbuf tool_name;
    pbuf cites;                 /* text: "[" + citations so far, "," between
                                   (closed with "]" at completion) */
    pbuf raw;                   /* server: the block's JSON object as started */
    size_t input_off;           /* server: its "input" value in raw ... */
    size_t input_len;           /* ... and length (0: no "input" object); the
                                   value is replaced by the input_json_delta
                                   text (in `text`) when there was any, the
                                   result assembled in `sig` */
} pt_slot;

/* The map from a wire key (Anthropic content index, OpenAI tool call index)
 * to a block; kept sorted by key (keys usually arrive in increasing order,
 * so inserting is an append). */
enum { PT_KEY_OPEN = 1, PT_KEY_CLOSED = 2, PT_KEY_SKIPPED = 3 };

typedef struct {
    uint64_t key;
    uint32_t slot;              /* PT_KEY_OPEN: index into slots */
    uint32_t state;             /* PT_KEY_* */
} pt_key;

/* The fast paths' cache: bytes of the last event a fast path read in full
 * and what the wire's reader made of them (`state`, malloc'd: its type is
 * the wire's).  The next events are compared with them first: consecutive
 * deltas of a response differ only in a few string values.  The Anthropic
 * wire keeps the JSON text up to the text string; the OpenAI wire the
 * whole chunk (see the wire files). */
#define PT_FCACHE_STATE 512     /* the largest wire state */
#define PT_FCACHE_MAX 2048      /* longer events are not kept */
typedef struct {
    int wire;                   /* whose state; 0: empty */
    pbuf bytes;
    void *state;                /* PT_FCACHE_STATE bytes once allocated */
} pt_fcache;

struct panto_stream {
    int wire;                   /* panto_wire */
    panto_stream_options opt;   /* with defaults filled in */

    /* input: in.p[in_off .. in.len) is fed but not yet decoded */
    pbuf in;
    size_t in_off;
    /* The fast paths (pt_*_fast) decode an event straight from `in`, so
     * queued events may borrow from it (in_borrowed): a feed then leaves
     * its bytes in place, moving to a new buffer when it must grow and
     * keeping the old one (in_keep) until the queue drains. */
    int in_borrowed;
    pbuf in_keep;
    /* Bytes at in_off the SSE parser would already have taken off the
     * input, had the fast path not waited for the rest of a cut event
     * (fast_defer in stream.c): max_buffer_bytes counts without them. */
    size_t in_defer;
    /* fast_defer's memory of the cut event at input offset defer_at: its
     * bytes from defer_from hold no line end (a long data line fed in
     * small pieces is searched once, not once per feed). */
    uint64_t defer_at;
    size_t defer_from;
    int fast;                   /* fast paths enabled: 1; tests set 0 (off) or
                                   2 (on, but cut events go through the
                                   general SSE parser: no fast_defer) */
    pt_fcache fcache;
    uint64_t n_fast;            /* events a fast path decoded (tests) ... */
    uint64_t n_fast_parsed;     /* ... of them after the general SSE parser */
    uint64_t n_in_place;        /* events dispatched in place (fast_defer) */
    uint64_t in_base;           /* offset in the whole input of in.p[0] */
    uint64_t cur_off;           /* offset of the event being decoded */

    sse_parser sse;
    /* fast_event's condition on the parser: between events with nothing
     * pending; 1 or 0, -1 when the parser ran since (only parse_next
     * changes what it looks at; a fast path's commit keeps it). */
    int sse_idle;
    jdoc doc;
    parena arena;               /* event strings; reset when the queue drains */

    /* FIFO of decoded, undelivered events */
    panto_event *q;
    size_t q_head, q_len, q_cap;
    /* panto_next_event's event while it fills an empty queue: a fast path
     * whose SSE event queues one delta and nothing else writes it there
     * (direct_used) instead of queueing it to be copied out. */
    panto_event *direct;
    int direct_used;

    /* blocks */
    pt_slot *slots;
    size_t n_slots, cap_slots;
    pt_key *keys;
    size_t n_keys, cap_keys;
    uint32_t n_blocks;          /* next panto block index */
    int n_retired;              /* slots in PT_SLOT_RETIRED */

    /* message state */
    panto_usage usage;
    pbuf stop_raw;              /* the wire's stop reason string */
    panto_stop_reason stop;     /* 0 until one is known */
    uint64_t n_events;          /* SSE events dispatched so far */
    uint64_t ev_line;           /* line number of the current event (approx.) */

    /* Bumped whenever a key or a slot changes (a block opens, completes or
     * is recycled, a key is added, a reset): caches of a lookup compare it. */
    uint64_t blk_gen;

    /* wire-specific state */
    int started;                /* MESSAGE_START emitted */
    uint64_t an_idx;            /* Anthropic, Responses: the fast path's last block: */
    uint32_t an_slot;           /* index, slot, and blk_gen then */
    uint64_t an_gen;            /* (0: none) */
    int tt_slot;                /* OpenAI: open text/thinking slot, -1 none */
    int refusal_seen;           /* OpenAI: delta.refusal text seen */
    uint64_t synth_key;         /* OpenAI: keys for tool calls without index */
    int last_tool_slot;         /* OpenAI: the most recent tool call slot */
    int rs_tools;               /* Responses: a function call was seen */
    int rs_hint_slot;           /* Responses: the last block opened that
                                   streams text (text, tool_use, thinking), -1 */
    /* Responses: the texts of the last long blocks recycled, newest at
     * rs_texts_next - 1: the `.done` events and response.completed repeat
     * them (hints for the JSON reader, json.h) */
    pbuf rs_texts[PT_RS_TEXTS];
    unsigned rs_texts_next;

    /* flags */
    int eof;                    /* panto_stream_finish called */
    int terminal;               /* terminal event decoded (queued or delivered) */
    int done;                   /* raw wire: drained after eof */

    /* error state: sticky */
    panto_error_code err_code;
    uint64_t err_off;
    pbuf err_msg;
    pbuf err_type;
    int err_retryable;
};

/* ---- helpers for the wire decoders (stream.c) ---- */

/* Record a sticky error; message formatted printf-style.  Returns -1. */
PT_INTERNAL int pt_fail(panto_stream *s, panto_error_code code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
/* A protocol violation: message prefixed "protocol violation: ". */
PT_INTERNAL int pt_protocol(panto_stream *s, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* A provider error object (type may be empty). Returns -1. */
PT_INTERNAL int pt_provider_error(panto_stream *s, panto_str type, panto_str message,
                      int retryable);

/* Append a zeroed event of `kind` to the queue; NULL (error set) on OOM. */
PT_INTERNAL panto_event *pt_push(panto_stream *s, int32_t kind);

/* Parse the data of SSE event `ev` as JSON; NULL with error set on failure. */
PT_INTERNAL const jnode *pt_parse_json(panto_stream *s, const sse_event *ev);

/* A string from a JSON node (unescaped into the arena when needed). Returns
 * 0, or -1 with error set on OOM.  n must be a string. */
PT_INTERNAL int pt_str(panto_stream *s, const jnode *n, panto_str *out);

/* Make a non-NULL panto_str. */
PT_INTERNAL panto_str pt_mkstr(const void *p, size_t len);

/* Keys */
PT_INTERNAL pt_key *pt_key_find(panto_stream *s, uint64_t key);
PT_INTERNAL pt_key *pt_key_add(panto_stream *s, uint64_t key, uint32_t state);  /* NULL on OOM */

/* Open a block: new slot, new panto index, BLOCK_START queued (and
 * TOOL_DETAILS for tool_use with the given id/name).  Returns the slot
 * number, or -1 with error set. */
PT_INTERNAL int pt_block_open(panto_stream *s, int32_t kind, uint64_t key,
                  panto_str tool_id, panto_str tool_name);
/* Append to a block accumulator (what = the slot's text or sig); -1 on limit
 * or OOM with error set. */
PT_INTERNAL int pt_block_append(panto_stream *s, int slot, pbuf *what, const char *p, size_t n);
/* Append text and queue a CONTENT_DELTA (skipped when n == 0). */
PT_INTERNAL int pt_block_delta(panto_stream *s, int slot, panto_str text);
/* Queue BLOCK_COMPLETE and retire the slot. */
PT_INTERNAL int pt_block_complete(panto_stream *s, int slot);
/* Complete every open block in index order. */
PT_INTERNAL int pt_complete_all(panto_stream *s);

/* Queue MESSAGE_START (id/model may be empty) and set s->started. */
PT_INTERNAL int pt_message_start(panto_stream *s, panto_str id, panto_str model);
/* Queue MESSAGE_COMPLETE and set s->terminal. */
PT_INTERNAL int pt_message_complete(panto_stream *s);
/* Remember the wire's stop reason string. */
PT_INTERNAL int pt_set_stop_raw(panto_stream *s, panto_str raw);

/* Compare a panto_str with a C string literal. */
PT_INTERNAL int pt_eq(panto_str a, const char *lit);
#define PT_EQ(a, lit) ((a).len == sizeof(lit) - 1 && memcmp((a).ptr, (lit), sizeof(lit) - 1) == 0)

/* Look up several members of an object in one pass: out[i] gets the value
 * of member names[i] (last duplicate wins) or NULL.  obj may be NULL or a
 * non-object (all NULL then).  Returns 0, or -1 with error set on OOM. */
typedef struct {
    const char *s;
    size_t n;
} pt_name;
#define PT_NAME(lit) {(lit), sizeof(lit) - 1}
PT_INTERNAL int pt_members(panto_stream *s, const jnode *obj, const pt_name *names, size_t n,
               const jnode **out);

/* Wire decoders: handle one dispatched SSE event.  0 or -1 (error set). */
PT_INTERNAL int pt_openai_event(panto_stream *s, const sse_event *ev);
PT_INTERNAL int pt_anthropic_event(panto_stream *s, const sse_event *ev);
PT_INTERNAL int pt_responses_event(panto_stream *s, const sse_event *ev);

/* ---- fast paths ----
 *
 * A wire's fast path looks at b[0..n), the undecoded input, when the SSE
 * parser stands at the start of an event with nothing pending.  If b starts
 * with a whole event of a shape it knows (the SSE lines, the blank line
 * that ends the event, and a JSON payload of the usual members), it checks
 * everything the general path would and, only if the event is valid and
 * would decode without a protocol error, calls pt_fast_commit and queues
 * the same events the general path would (through the same helpers, so a
 * limit or out-of-memory error is the same too).  Returns 1 (decoded), -1
 * (decoded, error set), or 0 when it leaves the event to the general path
 * -- for anything else: other shapes, whitespace other than spaces and
 * tabs, CR line ends, escaped keys, invalid JSON, events cut by the end of
 * the input, ... -- having changed nothing.  The general path then decides,
 * errors included.  Strings of the queued events may borrow from b. */
PT_INTERNAL int pt_openai_fast(panto_stream *s, const uint8_t *b, size_t n);
PT_INTERNAL int pt_anthropic_fast(panto_stream *s, const uint8_t *b, size_t n);
PT_INTERNAL int pt_responses_fast(panto_stream *s, const uint8_t *b, size_t n);
/* A fast path knows the n bytes at the start of the undecoded input to be
 * an event it takes, cut by the end of the input, with no line end past
 * its first `skip` bytes (its event line when they hold it, else 0): what
 * fast_defer (stream.c) would find after searching them for one.  2 (wait
 * for more input, as fast_defer does), or 0 when fast_defer would not wait
 * (at end of input, over max_event_bytes, fast mode 2).  fast_defer ends
 * with it too: one place sets the wait. */
static inline int pt_fast_wait(panto_stream *s, size_t n, size_t skip)
{
    if (s->eof || n > s->sse.max_event_bytes || s->fast != 1)
        return 0;
    s->defer_at = s->in_base + s->in_off;
    s->defer_from = n;
    s->in_defer = skip;
    return 2;
}
/* The same for an event the general SSE parser dispatched (split across
 * feeds, CR line ends, comments, several data lines, ...): its JSON text
 * only.  1 (decoded), -1 (decoded, error set) or 0 (general path). */
PT_INTERNAL int pt_openai_fast_event(panto_stream *s, const sse_event *ev);
PT_INTERNAL int pt_anthropic_fast_event(panto_stream *s, const sse_event *ev);
PT_INTERNAL int pt_responses_fast_event(panto_stream *s, const sse_event *ev);

/* The event b[0..len), `lines` lines, the last one (the blank line)
 * starting at b[blank], is taken off the input without the SSE parser:
 * update it and the stream as parse_next would have. */
static inline void pt_event_commit(panto_stream *s, size_t len, size_t blank, unsigned lines)
{
    sse_parser *p = &s->sse;
    uint64_t start = s->in_base + s->in_off;
    p->ev_off = start;
    p->line_off = start + blank;
    p->line_no += lines;
    p->seen_field = 1;
    p->scanned = 0;
    s->in_off += len;
    s->in_borrowed = 1;
    s->cur_off = start;
    s->n_events++;
    s->ev_line = p->line_no > 2 ? p->line_no - 2 : 1;
}

/* The fast path took b[0..len) (pt_event_commit), counted. */
static inline void pt_fast_commit(panto_stream *s, size_t len, size_t blank, unsigned lines)
{
    pt_event_commit(s, len, blank, lines);
    s->n_fast++;
}

/* Keep b[0..len) and the walk state in the prefix cache (silently not when
 * too long or out of memory: it is only a cache). */
PT_INTERNAL void pt_fcache_store(panto_stream *s, int wire, const uint8_t *b, size_t len,
                                 const void *state, size_t state_len);

/* A string value with escapes, b[st..e) between the quotes, unescaped into
 * the arena.  0, or -1 with the error set (out of memory). */
PT_INTERNAL int pt_fast_unescape(panto_stream *s, const uint8_t *b, size_t st, size_t e,
                                 panto_str *out);

/* A string value scanned by a fast path: b[st..e) between the quotes,
 * borrowed when it has no escapes (as pt_str does). */
static PT_HOT_INLINE int pt_fast_str(panto_stream *s, const uint8_t *b, size_t st, size_t e, int escaped,
                              panto_str *out)
{
    if (escaped)
        return pt_fast_unescape(s, b, st, e, out);
    out->ptr = e > st ? (const char *)b + st : "";
    out->len = e - st;
    return 0;
}

/* Zero an event.  With SSE2 in seven stores: GCC clears 104 bytes with
 * `rep stos`, whose start-up costs more than the rest of queueing a delta. */
static inline void pt_zero_event(panto_event *ev)
{
#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
    _Static_assert(sizeof(panto_event) == 104, "panto_event is 104 bytes");
    char *p = (char *)ev;
    __m128i z = _mm_setzero_si128();
    /* straight-line: GCC turns a loop of these back into `rep stos` */
    _mm_storeu_si128((__m128i *)(void *)p, z);
    _mm_storeu_si128((__m128i *)(void *)(p + 16), z);
    _mm_storeu_si128((__m128i *)(void *)(p + 32), z);
    _mm_storeu_si128((__m128i *)(void *)(p + 48), z);
    _mm_storeu_si128((__m128i *)(void *)(p + 64), z);
    _mm_storeu_si128((__m128i *)(void *)(p + 80), z);
    _mm_storel_epi64((__m128i *)(void *)(p + 96), z);
#else
    memset(ev, 0, sizeof *ev);
#endif
}

/* memcpy for the few bytes of a delta's text (most are under 32): two
 * fixed 16-byte moves, whatever the length, then memcpy for the rest.  The
 * length-dependent branches of a small copy were its cost (mispredicted
 * about once a delta).  Both ends lie in a pbuf or an arena chunk, whose
 * PT_SLACK bytes past the end make the fixed moves safe (util.h). */
static PT_HOT_INLINE void pt_copy_slack(uint8_t *d, const char *src, size_t n)
{
#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
    _Static_assert(PT_SLACK >= 32, "two 16-byte moves");
    _mm_storeu_si128((__m128i *)(void *)d, _mm_loadu_si128((const __m128i *)(const void *)src));
    _mm_storeu_si128((__m128i *)(void *)(d + 16), _mm_loadu_si128((const __m128i *)(const void *)(src + 16)));
    if (n > 32)
        memcpy(d + 32, src + 32, n - 32);
#else
    memcpy(d, src, n);
#endif
}

/* pt_block_delta with its common case inline: room in the block's buffer
 * and in the queue.  The same effects and errors.  `direct`: the event may
 * go straight to the caller of panto_next_event (s->direct) when it is the
 * first of the SSE event and nothing can fail after it (the caller says). */
static PT_HOT_INLINE int pt_fast_delta_to(panto_stream *s, int si, panto_str t, int direct)
{
    pt_slot *sl = &s->slots[si];
    pbuf *b = &sl->text;
    if (t.len == 0)
        return 0;
    if (t.len > b->cap - b->len || b->len + t.len > s->opt.max_block_bytes ||
        s->q_head + s->q_len == s->q_cap)
        return pt_block_delta(s, si, t);
    pt_copy_slack(b->p + b->len, t.ptr, t.len); /* t: in a pbuf or the arena */
    b->len += t.len;
    panto_event *ev;
    if (direct && s->direct && s->q_len == 0) {
        ev = s->direct;
        s->direct_used = 1;
    } else {
        ev = &s->q[s->q_head + s->q_len++];
    }
    pt_zero_event(ev);
    ev->kind = PANTO_EV_CONTENT_DELTA;
    ev->u.content_delta.index = sl->index;
    ev->u.content_delta.block_kind = sl->kind;
    ev->u.content_delta.text = t;
    return 0;
}

static PT_HOT_INLINE int pt_fast_delta(panto_stream *s, int si, panto_str t)
{
    return pt_fast_delta_to(s, si, t, 0);
}

/* Whitespace in a fast-path payload: spaces and tabs only (CR and LF would
 * end the SSE line).  One compare when there is none. */
static inline size_t pt_fws(const uint8_t *b, size_t n, size_t i)
{
    /* (not `b[i] <= ' '`: the line end after a payload would take the
     * out-of-line rest of this, once an event) */
    if (i < n && (b[i] == ' ' || b[i] == '\t')) {
#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
        /* runs of padding (Anthropic pads events with spaces) */
        while (n - i >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
            unsigned m = (unsigned)_mm_movemask_epi8(_mm_or_si128(
                _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))));
            if (m != 0xFFFFu)
                return i + (size_t)__builtin_ctz(~m);
            i += 16;
        }
#endif
        while (i < n && (b[i] == ' ' || b[i] == '\t'))
            i++;
    }
    return i;
}

/* How many bytes a[0..n) and b[0..n) have in common at the start. */
static inline size_t pt_mismatch(const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i = 0;
#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
    while (n - i >= 32) { /* 32 bytes a round: one branch */
        __m128i x0 = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
        __m128i y0 = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        __m128i x1 = _mm_loadu_si128((const __m128i *)(const void *)(a + i + 16));
        __m128i y1 = _mm_loadu_si128((const __m128i *)(const void *)(b + i + 16));
        __m128i eq = _mm_and_si128(_mm_cmpeq_epi8(x0, y0), _mm_cmpeq_epi8(x1, y1));
        if ((unsigned)_mm_movemask_epi8(eq) != 0xFFFFu)
            break; /* the 16-byte rounds below find which */
        i += 32;
    }
    while (n - i >= 16) {
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
        __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) ^ 0xFFFFu;
        if (m)
            return i + (size_t)__builtin_ctz(m);
        i += 16;
    }
    if (i < n && n >= 16) {
        /* the last 16 bytes, overlapping those found equal */
        __m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + n - 16));
        __m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + n - 16));
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) ^ 0xFFFFu;
        return m ? n - 16 + (size_t)__builtin_ctz(m) : n;
    }
#else
    while (n - i >= 8) {
        uint64_t x, y;
        memcpy(&x, a + i, 8);
        memcpy(&y, b + i, 8);
        if (x != y)
            break; /* the bytes below find which */
        i += 8;
    }
#endif
    while (i < n && a[i] == b[i])
        i++;
    return i;
}

/* a[0..n) == b[0..n): pt_mismatch(a, b, n) == n, for when they nearly
 * always are equal (a cache hit): the rounds are ANDed and tested once. */
static inline int pt_equal(const uint8_t *a, const uint8_t *b, size_t n)
{
#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
    if (n >= 16) {
        __m128i acc = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(a + n - 16)),
                                     _mm_loadu_si128((const __m128i *)(const void *)(b + n - 16)));
        for (size_t i = 0; i + 16 < n; i += 16)
            acc = _mm_and_si128(acc, _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(a + i)),
                                                    _mm_loadu_si128((const __m128i *)(const void *)(b + i))));
        return (unsigned)_mm_movemask_epi8(acc) == 0xFFFFu;
    }
#endif
    return pt_mismatch(a, b, n) == n;
}

/* b[i..i+len) equals lit[0..len) (inline, for the longer literals). */
static inline int pt_fstarts(const uint8_t *b, size_t n, size_t i, const void *lit, size_t len)
{
    return n - i >= len && pt_mismatch(b + i, (const uint8_t *)lit, len) == len;
}

/* b[i..) starts with the n bytes of lit. */
#define PT_FLIT(b, n, i, lit) \
    ((n) - (i) >= sizeof(lit) - 1 && memcmp((b) + (i), (lit), sizeof(lit) - 1) == 0)

/* A scalar JSON value at b[i] (string, number, true, false, null) validated
 * and skipped: the index just past it, or 0 when there is none (containers
 * included). */
static inline size_t pt_fskip_scalar(const uint8_t *b, size_t n, size_t i)
{
    if (i >= n)
        return 0;
    switch (b[i]) {
    case '"': {
        size_t e = i + 1;
        int esc = 0;
        return pt_json_scan_str(b, n, &e, &esc) == 0 ? e + 1 : 0;
    }
    case 'n':
        return PT_FLIT(b, n, i, "null") ? i + 4 : 0;
    case 't':
        return PT_FLIT(b, n, i, "true") ? i + 4 : 0;
    case 'f':
        return PT_FLIT(b, n, i, "false") ? i + 5 : 0;
    default:
        if (b[i] == '-' || (b[i] >= '0' && b[i] <= '9'))
            return pt_json_scan_num(b, n, &i) == 0 ? i : 0;
        return 0;
    }
}

#endif
