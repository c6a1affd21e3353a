/* stream.c -- the panto_stream state machine and the public functions of
 * panto.h (except panto_json_validate, in json.c).  The raw SSE wire is
 * decoded here; the provider wires live in wire_*.c. */
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stream.h"

/* ---- layout expectations shared with the bindings (LP64 / LLP64) ---- */

_Static_assert(sizeof(int) == 4, "int is 32 bits");
#if UINTPTR_MAX == 0xffffffffffffffffu && SIZE_MAX == 0xffffffffffffffffu
_Static_assert(sizeof(panto_str) == 16, "panto_str is {ptr, len}");
_Static_assert(offsetof(panto_str, len) == 8, "panto_str.len");
_Static_assert(sizeof(panto_usage) == 40, "panto_usage is 5 x u64");
_Static_assert(sizeof(panto_message_start) == 72, "panto_message_start");
_Static_assert(sizeof(panto_block_start) == 8, "panto_block_start");
_Static_assert(sizeof(panto_tool_details) == 40, "panto_tool_details");
_Static_assert(sizeof(panto_content_delta) == 24, "panto_content_delta");
_Static_assert(offsetof(panto_content_delta, text) == 8, "content_delta.text");
_Static_assert(sizeof(panto_block_complete) == 96, "panto_block_complete");
_Static_assert(offsetof(panto_block_complete, text) == 16, "block_complete.text");
_Static_assert(offsetof(panto_block_complete, tool_name) == 64, "block_complete.tool_name");
_Static_assert(offsetof(panto_block_complete, citations) == 80, "block_complete.citations");
_Static_assert(sizeof(panto_message_complete) == 64, "panto_message_complete");
_Static_assert(offsetof(panto_message_complete, usage) == 24, "message_complete.usage");
_Static_assert(sizeof(panto_sse_event) == 56, "panto_sse_event");
_Static_assert(offsetof(panto_sse_event, retry) == 48, "sse_event.retry");
_Static_assert(offsetof(panto_event, u) == 8, "panto_event.u");
_Static_assert(sizeof(panto_event) == 104, "panto_event");
_Static_assert(sizeof(panto_error) == 48, "panto_error");
_Static_assert(offsetof(panto_error, message) == 8, "panto_error.message");
_Static_assert(offsetof(panto_error, offset) == 40, "panto_error.offset");
_Static_assert(sizeof(panto_stream_options) == 32, "panto_stream_options");
_Static_assert(offsetof(panto_stream_options, max_event_bytes) == 8, "options.max_event_bytes");
#endif

#define PT_KEEP_CAP ((size_t)64 << 10) /* recycled slot buffers kept up to this */
#define PT_IN_KEEP_CAP ((size_t)1 << 10) /* an input buffer kept between reads up to this */
#define PT_IN_CUT_EVENT_MAX ((size_t)2 << 10) /* a cut event moved out of a larger buffer */

static const uint8_t pt_empty[1] = {0};

/* ---- small helpers ---- */

/* D9: the parsed form of one event is bounded by max_event_bytes too: one
 * value per PT_BYTES_PER_NODE bytes of the limit (at least 4096).  Real
 * provider events hold a few dozen values; only pathological input (8 MiB
 * of "0,0,0,...") gets near it. */
static size_t json_node_limit(size_t max_event) {
    size_t n = max_event / PT_BYTES_PER_NODE;
    return n < 4096 ? 4096 : n;
}

panto_str pt_mkstr(const void *p, size_t len) {
    panto_str s;
    s.ptr = (len && p) ? (const char *)p : "";
    s.len = (len && p) ? len : 0;
    return s;
}

int pt_eq(panto_str a, const char *lit) {
    size_t n = strlen(lit);
    return a.len == n && memcmp(a.ptr, lit, n) == 0;
}

static void err_set_static(panto_stream *s, panto_error_code code, const char *msg) {
    s->err_code = code;
    s->err_off = s->cur_off;
    pt_pbuf_clear(&s->err_msg);
    if (pt_pbuf_append(&s->err_msg, msg, strlen(msg), SIZE_MAX) != PU_OK) {
        pt_pbuf_free(&s->err_msg);
        s->err_code = PANTO_ERR_NO_MEMORY;
    }
}

static int pt_vfail(panto_stream *s, panto_error_code code, const char *prefix,
                    const char *fmt, va_list ap) {
    if (s->err_code != PANTO_ERR_NONE)
        return -1; /* the first error wins */
    char small[512];
    va_list ap2;
    va_copy(ap2, ap);
    int n = vsnprintf(small, sizeof small, fmt, ap2);
    va_end(ap2);
    if (n < 0) {
        err_set_static(s, code, "error (message could not be formatted)");
        return -1;
    }
    size_t plen = prefix ? strlen(prefix) : 0;
    s->err_code = code;
    s->err_off = s->cur_off;
    pt_pbuf_clear(&s->err_msg);
    if (pt_pbuf_reserve(&s->err_msg, plen + (size_t)n + 1, SIZE_MAX) != PU_OK) {
        pt_pbuf_free(&s->err_msg); /* panto_stream_error falls back to the code's name */
        return -1;
    }
    if (plen)
        memcpy(s->err_msg.p, prefix, plen);
    if ((size_t)n < sizeof small)
        memcpy(s->err_msg.p + plen, small, (size_t)n + 1);
    else
        vsnprintf((char *)s->err_msg.p + plen, (size_t)n + 1, fmt, ap);
    s->err_msg.len = plen + (size_t)n;
    return -1;
}

int pt_fail(panto_stream *s, panto_error_code code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pt_vfail(s, code, NULL, fmt, ap);
    va_end(ap);
    return -1;
}

int pt_protocol(panto_stream *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    pt_vfail(s, PANTO_ERR_PROTOCOL, "protocol violation: ", fmt, ap);
    va_end(ap);
    return -1;
}

static int pt_nomem(panto_stream *s) {
    if (s->err_code == PANTO_ERR_NONE)
        err_set_static(s, PANTO_ERR_NO_MEMORY, "out of memory");
    return -1;
}

int pt_provider_error(panto_stream *s, panto_str type, panto_str message,
                      int retryable) {
    if (s->err_code != PANTO_ERR_NONE)
        return -1;
    s->err_code = PANTO_ERR_PROVIDER;
    s->err_off = s->cur_off;
    s->err_retryable = retryable ? 1 : 0;
    pt_pbuf_clear(&s->err_msg);
    pt_pbuf_clear(&s->err_type);
    if (message.len == 0)
        message = pt_mkstr("provider error", 14);
    if (pt_pbuf_append(&s->err_msg, message.ptr, message.len, SIZE_MAX) != PU_OK ||
        pt_pbuf_append(&s->err_type, type.ptr, type.len, SIZE_MAX) != PU_OK) {
        pt_pbuf_free(&s->err_type);
        s->err_code = PANTO_ERR_NONE;
        return pt_nomem(s);
    }
    return -1;
}

/* ---- the event queue ---- */

panto_event *pt_push(panto_stream *s, int32_t kind) {
    if (s->q_head + s->q_len == s->q_cap) {
        size_t ncap = s->q_cap ? s->q_cap * 2 : 4; /* a few at a time: a batch of deltas merges */
        panto_event *nq = realloc(s->q, ncap * sizeof *nq);
        if (!nq) {
            pt_nomem(s);
            return NULL;
        }
        s->q = nq;
        s->q_cap = ncap;
    }
    panto_event *ev = &s->q[s->q_head + s->q_len++];
    pt_zero_event(ev);
    ev->kind = kind;
    return ev;
}

/* ---- JSON ---- */

const jnode *pt_parse_json(panto_stream *s, const sse_event *ev) {
    size_t off = 0;
    const char *msg = NULL;
    if (pt_json_parse(&s->doc, (const uint8_t *)ev->data, ev->data_len,
                   s->opt.max_json_depth, &off, &msg) != 0) {
        if (msg && strcmp(msg, "out of memory") == 0) {
            pt_nomem(s);
        } else if (msg && strcmp(msg, "too many values") == 0) {
            pt_fail(s, PANTO_ERR_LIMIT,
                    "JSON in event %llu (line %llu) holds more than %zu values (max_event_bytes / %u)",
                    (unsigned long long)s->n_events, (unsigned long long)s->ev_line,
                    s->doc.max_nodes, (unsigned)PT_BYTES_PER_NODE);
        } else if (msg && strcmp(msg, "nesting too deep") == 0) {
            pt_fail(s, PANTO_ERR_LIMIT,
                    "JSON in event %llu (line %llu) nested deeper than max_json_depth (%u) at byte %zu",
                    (unsigned long long)s->n_events, (unsigned long long)s->ev_line,
                    (unsigned)s->opt.max_json_depth, off);
        } else {
            pt_fail(s, PANTO_ERR_BAD_JSON, "bad JSON in event %llu (line %llu) at byte %zu: %s",
                    (unsigned long long)s->n_events, (unsigned long long)s->ev_line, off,
                    msg ? msg : "invalid JSON");
        }
        return NULL;
    }
    return &s->doc.nodes[0];
}

int pt_fast_unescape(panto_stream *s, const uint8_t *b, size_t st, size_t e, panto_str *out) {
    /* b is the input or the SSE parser's data: a pbuf, with its slack */
    uint8_t *dst = pt_parena_alloc(&s->arena, e - st); /* never longer */
    if (!dst)
        return pt_nomem(s);
    out->ptr = (const char *)dst;
    out->len = pt_json_unescape_slack(b + st, e - st, dst);
    return 0;
}

int pt_str(panto_stream *s, const jnode *n, panto_str *out) {
    if (pt_json_string(n, &s->arena, out) != 0)
        return pt_nomem(s);
    *out = pt_mkstr(out->ptr, out->len);
    return 0;
}

int pt_members(panto_stream *s, const jnode *obj, const pt_name *names, size_t n,
               const jnode **out) {
    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    if (!obj || obj->type != JV_OBJECT)
        return 0;
    const jdoc *d = &s->doc;
    for (const jnode *k = pt_json_first(d, obj); k;) {
        const jnode *v = pt_json_next(d, k);
        if (!v)
            break;
        const char *kp = k->p;
        size_t kl = k->len;
        if (k->escaped) {
            panto_str ks;
            if (pt_json_string(k, &s->arena, &ks) != 0)
                return pt_nomem(s);
            kp = ks.ptr;
            kl = ks.len;
        }
        for (size_t i = 0; i < n; i++) {
            if (names[i].n == kl && (kl == 0 || (kp[0] == names[i].s[0] &&
                                                 memcmp(kp, names[i].s, kl) == 0))) {
                out[i] = v;
                break;
            }
        }
        k = pt_json_next(d, v);
    }
    return 0;
}

/* ---- keys ---- */

pt_key *pt_key_find(panto_stream *s, uint64_t key) {
    size_t lo = 0, hi = s->n_keys;
    if (hi && s->keys[hi - 1].key == key) /* the common case: the newest */
        return &s->keys[hi - 1];
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->keys[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    if (lo < s->n_keys && s->keys[lo].key == key)
        return &s->keys[lo];
    return NULL;
}

pt_key *pt_key_add(panto_stream *s, uint64_t key, uint32_t state) {
    s->blk_gen++;
    if (s->n_keys == s->cap_keys) {
        size_t ncap = s->cap_keys ? s->cap_keys * 2 : 16;
        pt_key *nk = realloc(s->keys, ncap * sizeof *nk);
        if (!nk) {
            pt_nomem(s);
            return NULL;
        }
        s->keys = nk;
        s->cap_keys = ncap;
    }
    size_t pos = s->n_keys;
    while (pos > 0 && s->keys[pos - 1].key > key)
        pos--;
    if (pos < s->n_keys)
        memmove(&s->keys[pos + 1], &s->keys[pos], (s->n_keys - pos) * sizeof *s->keys);
    s->n_keys++;
    s->keys[pos].key = key;
    s->keys[pos].slot = 0;
    s->keys[pos].state = state;
    return &s->keys[pos];
}

/* ---- blocks ---- */

static void slot_recycle_buf(pbuf *b) {
    if (b->cap > PT_KEEP_CAP)
        pt_pbuf_free(b);
    else
        pt_pbuf_clear(b);
}

static void slot_recycle(pt_slot *sl) {
    slot_recycle_buf(&sl->text);
    slot_recycle_buf(&sl->sig);
    slot_recycle_buf(&sl->tool_id);
    slot_recycle_buf(&sl->tool_name);
    slot_recycle_buf(&sl->cites);
    slot_recycle_buf(&sl->raw);
    sl->input_off = sl->input_len = 0;
    sl->state = PT_SLOT_FREE;
    sl->keyed = 0;
}

/* Called only when the queue is empty: no delivered event still needs the
 * buffers of completed blocks. */
static void recycle_retired(panto_stream *s) {
    if (!s->n_retired)
        return;
    s->blk_gen++;
    for (size_t i = 0; i < s->n_slots; i++) {
        if (s->slots[i].state != PT_SLOT_RETIRED)
            continue;
        if ((int)i == s->rs_hint_slot)
            s->rs_hint_slot = -1;
        if (s->wire == PANTO_WIRE_OPENAI_RESPONSES && s->slots[i].kind != PANTO_BLOCK_SERVER &&
            s->slots[i].text.len >= PT_JSON_SEEN_MIN) {
            /* kept for the events that repeat it (pt_responses_event) */
            pbuf *keep = &s->rs_texts[s->rs_texts_next];
            s->rs_texts_next = (s->rs_texts_next + 1) % PT_RS_TEXTS;
            pt_pbuf_free(keep);
            *keep = s->slots[i].text;
            memset(&s->slots[i].text, 0, sizeof s->slots[i].text);
        }
        slot_recycle(&s->slots[i]);
    }
    s->n_retired = 0;
}

static int slot_alloc(panto_stream *s) {
    for (size_t i = 0; i < s->n_slots; i++)
        if (s->slots[i].state == PT_SLOT_FREE)
            return (int)i;
    if (s->n_slots == s->cap_slots) {
        size_t ncap = s->cap_slots ? s->cap_slots * 2 : 4;
        if (ncap > (size_t)0x7fffffff)
            return pt_nomem(s);
        pt_slot *ns = realloc(s->slots, ncap * sizeof *ns);
        if (!ns)
            return pt_nomem(s);
        s->slots = ns;
        s->cap_slots = ncap;
    }
    memset(&s->slots[s->n_slots], 0, sizeof *s->slots);
    return (int)s->n_slots++;
}

static int block_limit(panto_stream *s, uint32_t index, const char *what) {
    return pt_fail(s, PANTO_ERR_LIMIT, "block %u %s exceeds max_block_bytes (%zu bytes)",
                   (unsigned)index, what, s->opt.max_block_bytes);
}

int pt_block_append(panto_stream *s, int slot, pbuf *what, const char *p, size_t n) {
    if (n == 0)
        return 0;
    if (n <= what->cap - what->len && what->len + n <= s->opt.max_block_bytes) {
        memcpy(what->p + what->len, p, n); /* room already: the common case */
        what->len += n;
        return 0;
    }
    int r = pt_pbuf_append(what, p, n, s->opt.max_block_bytes);
    if (r == PU_OK)
        return 0;
    if (r == PU_LIMIT)
        return block_limit(s, s->slots[slot].index,
                           what == &s->slots[slot].sig ? "signature" : "content");
    return pt_nomem(s);
}

int pt_block_open(panto_stream *s, int32_t kind, uint64_t key,
                  panto_str tool_id, panto_str tool_name) {
    s->blk_gen++;
    int si = slot_alloc(s);
    if (si < 0)
        return -1;
    pt_slot *sl = &s->slots[si];
    sl->state = PT_SLOT_OPEN;
    sl->kind = kind;
    sl->index = s->n_blocks++;
    sl->key = key;
    sl->keyed = 0;
    panto_event *ev = pt_push(s, PANTO_EV_BLOCK_START);
    if (!ev)
        return -1;
    ev->u.block_start.index = sl->index;
    ev->u.block_start.block_kind = kind;
    if (kind == PANTO_BLOCK_TOOL_USE) {
        if (pt_pbuf_append(&sl->tool_id, tool_id.ptr, tool_id.len, s->opt.max_block_bytes) != PU_OK ||
            pt_pbuf_append(&sl->tool_name, tool_name.ptr, tool_name.len, s->opt.max_block_bytes) != PU_OK) {
            if (tool_id.len > s->opt.max_block_bytes || tool_name.len > s->opt.max_block_bytes)
                return block_limit(s, sl->index, "tool id or name");
            return pt_nomem(s);
        }
        ev = pt_push(s, PANTO_EV_TOOL_DETAILS);
        if (!ev)
            return -1;
        sl = &s->slots[si];
        ev->u.tool_details.index = sl->index;
        ev->u.tool_details.id = pt_mkstr(sl->tool_id.p, sl->tool_id.len);
        ev->u.tool_details.name = pt_mkstr(sl->tool_name.p, sl->tool_name.len);
    }
    return si;
}

int pt_block_delta(panto_stream *s, int slot, panto_str text) {
    if (text.len == 0)
        return 0;
    pt_slot *sl = &s->slots[slot];
    if (pt_block_append(s, slot, &sl->text, text.ptr, text.len) != 0)
        return -1;
    panto_event *ev = pt_push(s, PANTO_EV_CONTENT_DELTA);
    if (!ev)
        return -1;
    sl = &s->slots[slot];
    ev->u.content_delta.index = sl->index;
    ev->u.content_delta.block_kind = sl->kind;
    ev->u.content_delta.text = text;
    return 0;
}

int pt_block_complete(panto_stream *s, int slot) {
    s->blk_gen++;
    pt_slot *sl = &s->slots[slot];
    if (sl->kind == PANTO_BLOCK_TEXT && sl->cites.len &&
        pt_block_append(s, slot, &sl->cites, "]", 1) != 0)
        return -1;
    if (sl->kind == PANTO_BLOCK_SERVER && sl->text.len && sl->input_len) {
        /* the streamed input replaces the start object's "input" value */
        pt_pbuf_clear(&sl->sig);
        const char *raw = (const char *)sl->raw.p;
        if (pt_block_append(s, slot, &sl->sig, raw, sl->input_off) != 0 ||
            pt_block_append(s, slot, &sl->sig, (const char *)sl->text.p, sl->text.len) != 0 ||
            pt_block_append(s, slot, &sl->sig, raw + sl->input_off + sl->input_len,
                            sl->raw.len - sl->input_off - sl->input_len) != 0)
            return -1;
    }
    panto_event *ev = pt_push(s, PANTO_EV_BLOCK_COMPLETE);
    if (!ev)
        return -1;
    sl = &s->slots[slot];
    panto_block_complete *bc = &ev->u.block_complete;
    bc->index = sl->index;
    bc->block_kind = sl->kind;
    if (sl->kind == PANTO_BLOCK_TOOL_USE && sl->text.len == 0)
        bc->text = pt_mkstr("{}", 2);
    else
        bc->text = pt_mkstr(sl->text.p, sl->text.len);
    bc->signature = pt_mkstr(sl->sig.p, sl->sig.len);
    if (sl->kind == PANTO_BLOCK_SERVER) {
        if (sl->text.len && sl->input_len)
            bc->text = pt_mkstr(sl->sig.p, sl->sig.len);
        else
            bc->text = pt_mkstr(sl->raw.p, sl->raw.len);
        bc->signature = pt_mkstr(NULL, 0);
    }
    bc->tool_id = pt_mkstr(sl->tool_id.p, sl->tool_id.len);
    bc->tool_name = pt_mkstr(sl->tool_name.p, sl->tool_name.len);
    if (sl->kind == PANTO_BLOCK_TEXT && sl->cites.len)
        bc->citations = pt_mkstr(sl->cites.p, sl->cites.len);
    else
        bc->citations = pt_mkstr(NULL, 0);
    if (sl->keyed) {
        pt_key *k = pt_key_find(s, sl->key);
        if (k)
            k->state = PT_KEY_CLOSED;
    }
    if ((int)slot == s->tt_slot)
        s->tt_slot = -1;
    if ((int)slot == s->last_tool_slot)
        s->last_tool_slot = -1;
    sl->state = PT_SLOT_RETIRED;
    s->n_retired++;
    return 0;
}

int pt_complete_all(panto_stream *s) {
    for (;;) {
        int best = -1;
        for (size_t i = 0; i < s->n_slots; i++)
            if (s->slots[i].state == PT_SLOT_OPEN &&
                (best < 0 || s->slots[i].index < s->slots[best].index))
                best = (int)i;
        if (best < 0)
            return 0;
        if (pt_block_complete(s, best) != 0)
            return -1;
    }
}

/* ---- message events ---- */

int pt_message_start(panto_stream *s, panto_str id, panto_str model) {
    panto_event *ev = pt_push(s, PANTO_EV_MESSAGE_START);
    if (!ev)
        return -1;
    ev->u.message_start.id = pt_mkstr(id.ptr, id.len);
    ev->u.message_start.model = pt_mkstr(model.ptr, model.len);
    ev->u.message_start.usage = s->usage;
    s->started = 1;
    return 0;
}

int pt_message_complete(panto_stream *s) {
    panto_event *ev = pt_push(s, PANTO_EV_MESSAGE_COMPLETE);
    if (!ev)
        return -1;
    ev->u.message_complete.stop_reason = s->stop ? s->stop : PANTO_STOP_OTHER;
    ev->u.message_complete.raw_stop_reason = pt_mkstr(s->stop_raw.p, s->stop_raw.len);
    ev->u.message_complete.usage = s->usage;
    s->terminal = 1;
    return 0;
}

int pt_set_stop_raw(panto_stream *s, panto_str raw) {
    pt_pbuf_clear(&s->stop_raw);
    if (pt_pbuf_append(&s->stop_raw, raw.ptr, raw.len, s->opt.max_event_bytes) != PU_OK)
        return pt_nomem(s);
    return 0;
}

/* ---- the raw SSE wire ---- */

static int sse_wire_event(panto_stream *s, const sse_event *se) {
    panto_event *ev = pt_push(s, PANTO_EV_SSE);
    if (!ev)
        return -1;
    ev->u.sse.event = pt_mkstr(se->event, se->event_len);
    ev->u.sse.data = pt_mkstr(se->data, se->data_len);
    ev->u.sse.id = pt_mkstr(se->id, se->id_len);
    ev->u.sse.retry = se->retry;
    return 0;
}

static int dispatch(panto_stream *s, const sse_event *se) {
    int r;
    switch (s->wire) {
    case PANTO_WIRE_OPENAI_CHAT:
        if (s->fast && (r = pt_openai_fast_event(s, se)) != 0)
            return s->n_fast_parsed++, r < 0 ? -1 : 0;
        return pt_openai_event(s, se);
    case PANTO_WIRE_ANTHROPIC_MESSAGES:
        if (s->fast && (r = pt_anthropic_fast_event(s, se)) != 0)
            return s->n_fast_parsed++, r < 0 ? -1 : 0;
        return pt_anthropic_event(s, se);
    case PANTO_WIRE_OPENAI_RESPONSES:
        if (s->fast && (r = pt_responses_fast_event(s, se)) != 0)
            return s->n_fast_parsed++, r < 0 ? -1 : 0;
        return pt_responses_event(s, se);
    default:
        return sse_wire_event(s, se);
    }
}

/* ---- public API ---- */

PANTO_EXTERN(int) panto_abi_version(void) { return PANTO_ABI_VERSION; }

PANTO_EXTERN(const char *) panto_version(void) { return PANTO_VERSION; }

static void options_defaults(panto_stream_options *opts) {
    memset(opts, 0, sizeof *opts);
    opts->version = PANTO_STREAM_OPTIONS_VERSION;
    opts->max_event_bytes = PT_DEFAULT_MAX_EVENT;
    opts->max_block_bytes = PT_DEFAULT_MAX_BLOCK;
    opts->max_buffer_bytes = PT_DEFAULT_MAX_BUFFER;
    opts->max_json_depth = PT_DEFAULT_JSON_DEPTH;
}

PANTO_EXTERN(int) panto_stream_options_init(panto_stream_options *opts, unsigned int version) {
    if (!opts || version != PANTO_STREAM_OPTIONS_VERSION)
        return PANTO_ERROR;
    options_defaults(opts);
    return PANTO_OK;
}

PANTO_EXTERN(int) panto_stream_new(int wire, const panto_stream_options *opts,
                                   panto_stream **out) {
    if (!out)
        return PANTO_ERROR;
    *out = NULL;
    if (wire != PANTO_WIRE_SSE && wire != PANTO_WIRE_OPENAI_CHAT &&
        wire != PANTO_WIRE_ANTHROPIC_MESSAGES && wire != PANTO_WIRE_OPENAI_RESPONSES)
        return PANTO_ERROR;
    if (opts && opts->version != PANTO_STREAM_OPTIONS_VERSION)
        return PANTO_ERROR;
    panto_stream *s = calloc(1, sizeof *s);
    if (!s)
        return PANTO_ERROR;
    s->wire = wire;
    s->blk_gen = 1; /* an_gen 0 matches nothing */
    s->sse_idle = -1;
    options_defaults(&s->opt);
    if (opts) {
        if (opts->max_event_bytes)
            s->opt.max_event_bytes = opts->max_event_bytes;
        if (opts->max_block_bytes)
            s->opt.max_block_bytes = opts->max_block_bytes;
        if (opts->max_buffer_bytes)
            s->opt.max_buffer_bytes = opts->max_buffer_bytes;
        if (opts->max_json_depth)
            s->opt.max_json_depth = opts->max_json_depth;
    }
    pt_sse_init(&s->sse, s->opt.max_event_bytes, wire != PANTO_WIRE_SSE);
    s->doc.max_nodes = json_node_limit(s->opt.max_event_bytes);
    s->tt_slot = -1;
    s->last_tool_slot = -1;
    s->rs_hint_slot = -1;
    s->fast = 1;
    *out = s;
    return PANTO_OK;
}

PANTO_EXTERN(void) panto_stream_free(panto_stream *s) {
    if (!s)
        return;
    pt_pbuf_free(&s->in);
    pt_pbuf_free(&s->in_keep);
    pt_pbuf_free(&s->fcache.bytes);
    free(s->fcache.state);
    pt_sse_free(&s->sse);
    pt_json_doc_free(&s->doc);
    pt_parena_free(&s->arena);
    free(s->q);
    for (size_t i = 0; i < s->n_slots; i++) {
        pt_pbuf_free(&s->slots[i].text);
        pt_pbuf_free(&s->slots[i].sig);
        pt_pbuf_free(&s->slots[i].tool_id);
        pt_pbuf_free(&s->slots[i].tool_name);
        pt_pbuf_free(&s->slots[i].cites);
        pt_pbuf_free(&s->slots[i].raw);
    }
    free(s->slots);
    free(s->keys);
    for (size_t i = 0; i < PT_RS_TEXTS; i++)
        pt_pbuf_free(&s->rs_texts[i]);
    pt_pbuf_free(&s->stop_raw);
    pt_pbuf_free(&s->err_msg);
    pt_pbuf_free(&s->err_type);
    free(s);
}

PANTO_EXTERN(int) panto_stream_feed(panto_stream *s, const uint8_t *buf, size_t len) {
    if (!s)
        return PANTO_ERROR;
    if (s->err_code != PANTO_ERR_NONE)
        return PANTO_ERROR;
    if (s->eof) {
        pt_fail(s, PANTO_ERR_INVALID_ARGUMENT, "panto_stream_feed called after panto_stream_finish");
        return PANTO_ERROR;
    }
    if (len == 0)
        return PANTO_OK;
    if (!buf) {
        pt_fail(s, PANTO_ERR_INVALID_ARGUMENT, "panto_stream_feed: buf is NULL but len is %zu", len);
        return PANTO_ERROR;
    }
    size_t pending = s->in.len - s->in_off - s->in_defer;
    if (len > s->opt.max_buffer_bytes || pending > s->opt.max_buffer_bytes - len) {
        s->cur_off = s->in_base + s->in.len;
        pt_fail(s, PANTO_ERR_LIMIT,
                "undecoded input would exceed max_buffer_bytes (%zu bytes): %zu buffered + %zu fed",
                s->opt.max_buffer_bytes, pending, len);
        return PANTO_ERROR;
    }
    if (s->in_borrowed && s->q_len) {
        /* Queued events borrow from s->in: its bytes stay where they are.
         * Append in place when there is room, else continue in a new
         * buffer and keep the old one until the queue drains (fill). */
        if (s->in.cap - s->in.len >= len) {
            memcpy(s->in.p + s->in.len, buf, len);
            s->in.len += len;
            return PANTO_OK;
        }
        pbuf nb = {0};
        if (pt_pbuf_reserve(&nb, pending + len, SIZE_MAX) != PU_OK) {
            pt_nomem(s);
            return PANTO_ERROR;
        }
        if (pending)
            memcpy(nb.p, s->in.p + s->in_off, pending);
        memcpy(nb.p + pending, buf, len);
        nb.len = pending + len;
        pt_pbuf_free(&s->in_keep);
        s->in_keep = s->in;
        s->in = nb;
        s->in_base += s->in_off;
        s->in_off = 0;
        s->in_borrowed = 0; /* the new buffer: nothing borrows from it */
        return PANTO_OK;
    }
    /* Compact: drop the decoded prefix once it is at least as large as what
     * remains, so every byte is moved O(1) times on average. */
    if (s->in_off == s->in.len) {
        s->in_base += s->in.len;
        pt_pbuf_clear(&s->in);
        s->in_off = 0;
    } else if (s->in_off > 0 && s->in_off >= pending) {
        s->in_base += s->in_off;
        pt_pbuf_consume(&s->in, s->in_off);
        s->in_off = 0;
    }
    if (pt_pbuf_append(&s->in, buf, len, SIZE_MAX) != PU_OK) {
        pt_nomem(s);
        return PANTO_ERROR;
    }
    return PANTO_OK;
}

/* Run the SSE parser over the undecoded input. */
static int parse_next(panto_stream *s, sse_event *se) {
    size_t used = 0;
    sse_error serr;
    const uint8_t *p = s->in.p ? s->in.p + s->in_off : pt_empty;
    size_t n = s->in.len - s->in_off;
    serr.code = 0;
    serr.msg[0] = 0;
    s->sse.base = s->in_base + s->in_off;
    int r = pt_sse_parse(&s->sse, p, n, &used, se, &serr);
    s->sse_idle = -1;
    if (used > n)
        used = n;
    s->in_off += used;
    if (r == SSE_ERROR) {
        s->cur_off = s->sse.line_off;
        serr.msg[sizeof serr.msg - 1] = 0;
        int code = serr.code > 0 && serr.code <= PANTO_ERR_NO_MEMORY ? serr.code : PANTO_ERR_BAD_SSE;
        pt_fail(s, (panto_error_code)code, "%s", serr.msg[0] ? serr.msg : "bad event stream");
        return SSE_ERROR;
    }
    if (r == SSE_EVENT) {
        s->cur_off = s->sse.ev_off;
        s->n_events++;
        s->ev_line = s->sse.line_no > 2 ? s->sse.line_no - 2 : 1;
    }
    return r;
}

void pt_fcache_store(panto_stream *s, int wire, const uint8_t *b, size_t len,
                     const void *state, size_t state_len) {
    pt_fcache *fc = &s->fcache;
    fc->wire = 0;
    pt_pbuf_clear(&fc->bytes);
    if (len > PT_FCACHE_MAX || state_len > PT_FCACHE_STATE ||
        pt_pbuf_append(&fc->bytes, b, len, SIZE_MAX) != PU_OK)
        return;
    if (!fc->state && !(fc->state = malloc(PT_FCACHE_STATE)))
        return;
    memcpy(fc->state, state, state_len);
    fc->wire = wire;
}

/* The fast path declined the event at b[0..n): maybe it is cut by the end
 * of the input (a feed ends inside one event in ten).  When the general
 * SSE parser would find no complete line in b -- or, on the Anthropic
 * wire, only the `event: content_block_delta` line, on the Responses wire
 * only an `event: response.*` line -- it could do nothing
 * but ask for more input: ask now (2) and leave the bytes where they are,
 * so that after the next feed the fast path sees the whole event instead of
 * the parser copying its lines.  The lines a parser would have taken stay
 * counted in in_defer (panto_stream_feed's max_buffer_bytes check leaves
 * them out, as the parser would have).  A line over max_event_bytes is the
 * parser's error, and at end of input the parser reports the truncation:
 * neither waits.  0 otherwise (the general path). */
/* p[0..n) holds only a-z, '_' and '.' (an event name of the Responses
 * wire past "response."); 16 bytes at a time, the last block overlapping. */
static int event_name_chars(const uint8_t *p, size_t n) {
    size_t i = 0;
#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
    if (n >= 16) {
        for (;; i += 16) {
            if (i + 16 > n)
                i = n - 16;
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
            __m128i az = _mm_and_si128(_mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8('a')), v),
                                       _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8('z')), v));
            __m128i ok = _mm_or_si128(az, _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('_')),
                                                       _mm_cmpeq_epi8(v, _mm_set1_epi8('.'))));
            if ((unsigned)_mm_movemask_epi8(ok) != 0xFFFFu)
                return 0;
            if (i + 16 == n)
                return 1;
        }
    }
#endif
    for (; i < n; i++)
        if (!((p[i] >= 'a' && p[i] <= 'z') || p[i] == '_' || p[i] == '.'))
            return 0;
    return 1;
}

/* An event of the Responses wire that its fast path declined, of the
 * usual shape -- b[0..skip) its `event: response.X` line, then one `data:`
 * line ending at b[eol] and a blank line, all in the input -- is
 * dispatched as the SSE parser would dispatch it, with its data read where
 * it lies instead of copied: a `.done` event repeats a whole text, and
 * response.completed the whole response.  1 (decoded), -1 (decoded, error
 * set), or 0: the general path. */
static int in_place(panto_stream *s, const uint8_t *b, size_t n, size_t skip, size_t eol) {
    size_t i = skip;
    if (b[eol] != '\n' || n - eol < 2 || b[eol + 1] != '\n' || eol + 2 > s->sse.max_event_bytes ||
        eol - i < 5 || memcmp(b + i, "data:", 5) != 0)
        return 0;
    i += 5;
    if (i < eol && b[i] == ' ')
        i++;
    const sse_parser *p = &s->sse;
    sse_event se;
    se.event = (const char *)b + 7; /* "event: " */
    se.event_len = skip - 8;
    se.data = (const char *)b + i;
    se.data_len = eol - i;
    se.id = p->last_id.len ? (const char *)p->last_id.p : "";
    se.id_len = p->last_id.len;
    se.retry = p->retry;
    pt_event_commit(s, eol + 2, eol + 1, 3);
    s->n_in_place++;
    return dispatch(s, &se) != 0 ? -1 : 1;
}

/* pt_sse_find_eol for a long stretch: 64 bytes a round, one branch (a
 * `.done` event of the Responses wire repeats a whole text on one data
 * line, tens of kilobytes searched as they arrive). */
static const uint8_t *find_eol_long(const uint8_t *p, size_t n) {
#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
    const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    for (; n >= 64; p += 64, n -= 64) {
        __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)p);
        __m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(p + 16));
        __m128i v2 = _mm_loadu_si128((const __m128i *)(const void *)(p + 32));
        __m128i v3 = _mm_loadu_si128((const __m128i *)(const void *)(p + 48));
        __m128i m = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v0, lf), _mm_cmpeq_epi8(v0, cr)),
                                 _mm_or_si128(_mm_cmpeq_epi8(v1, lf), _mm_cmpeq_epi8(v1, cr)));
        m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(v2, lf), _mm_cmpeq_epi8(v2, cr)));
        m = _mm_or_si128(m, _mm_or_si128(_mm_cmpeq_epi8(v3, lf), _mm_cmpeq_epi8(v3, cr)));
        if (_mm_movemask_epi8(m))
            break; /* in these 64: found below */
    }
#endif
    return pt_sse_find_eol(p, n);
}

static int fast_defer(panto_stream *s, const uint8_t *b, size_t n) {
    static const char an_head[] = "event: content_block_delta\n";
    size_t skip = 0;
    if (s->eof || n > s->sse.max_event_bytes || s->fast != 1)
        return 0;
    if (s->wire == PANTO_WIRE_ANTHROPIC_MESSAGES && n > sizeof an_head - 1 &&
        memcmp(b, an_head, sizeof an_head - 1) == 0)
        skip = sizeof an_head - 1;
    if (s->wire == PANTO_WIRE_OPENAI_RESPONSES && n > 16 && memcmp(b, "event: response.", 16) == 0) {
        /* the event line of a delta is there, its data line not yet */
        const uint8_t *nl = memchr(b + 16, '\n', n - 16 < 64 ? n - 16 : 64);
        if (nl && event_name_chars(b + 16, (size_t)(nl - b) - 16))
            skip = (size_t)(nl - b) + 1;
    }
    uint64_t at = s->in_base + s->in_off;
    size_t from = skip;
    if (s->defer_at == at && s->defer_from > skip && s->defer_from <= n)
        from = s->defer_from;
    /* (only after an event line: a chat or Anthropic delta cut by the end
     * of the input leaves a few hundred bytes, searched as before) */
    const uint8_t *eol = skip && n - from >= 256 ? find_eol_long(b + from, n - from)
                                                 : pt_sse_find_eol(b + from, n - from);
    if (eol)
        return s->wire == PANTO_WIRE_OPENAI_RESPONSES && skip
                   ? in_place(s, b, n, skip, (size_t)(eol - b))
                   : 0;
    return pt_fast_wait(s, n, skip);
}

/* The wire's fast path for the event at the start of the undecoded input:
 * 1 decoded, -1 decoded with an error, 2 wait for more input (fast_defer),
 * 0 left to the general path.  Only when the SSE parser is between events
 * with nothing pending: no partial line, no data or event field yet, no CR
 * whose LF may follow, past the byte order mark. */
static int fast_event(panto_stream *s) {
    const sse_parser *p = &s->sse;
    if (s->sse_idle < 0) /* the parser ran since the last look */
        s->sse_idle = p->started && !p->skip_lf && !p->in_event && !p->data.len && !p->event.len;
    if (!s->fast || !s->sse_idle)
        return 0;
    const uint8_t *b = s->in.p ? s->in.p + s->in_off : pt_empty;
    size_t n = s->in.len - s->in_off;
    int r;
    switch (s->wire) {
    case PANTO_WIRE_OPENAI_CHAT:
        r = pt_openai_fast(s, b, n);
        break;
    case PANTO_WIRE_ANTHROPIC_MESSAGES:
        r = pt_anthropic_fast(s, b, n);
        break;
    case PANTO_WIRE_OPENAI_RESPONSES:
        r = pt_responses_fast(s, b, n);
        break;
    default:
        return 0;
    }
    return r == 0 ? fast_defer(s, b, n) : r;
}

static const char *terminal_name(const panto_stream *s) {
    return s->wire == PANTO_WIRE_OPENAI_CHAT        ? "[DONE]"
           : s->wire == PANTO_WIRE_OPENAI_RESPONSES ? "the response's terminal event"
                                                    : "message_stop";
}

/* End of input with the terminal delivered: what follows it may hold
 * comments and blank lines, but no further event.  0, or -1 with the error
 * set (panto_next_event keeps returning PANTO_DONE; panto_stream_error and
 * panto_stream_finish report it). */
static int check_after_terminal(panto_stream *s) {
    for (;;) {
        sse_event se;
        int r = parse_next(s, &se);
        if (r == SSE_ERROR)
            return -1;
        if (r == SSE_NEED_MORE)
            return 0;
        return pt_protocol(s, "event after %s (event %llu, line %llu)", terminal_name(s),
                           (unsigned long long)s->n_events, (unsigned long long)s->ev_line);
    }
}

PANTO_EXTERN(int) panto_stream_finish(panto_stream *s) {
    if (!s)
        return PANTO_ERROR;
    if (s->err_code != PANTO_ERR_NONE)
        return PANTO_ERROR;
    if (s->eof)
        return PANTO_OK;
    s->eof = 1;
    if (s->wire != PANTO_WIRE_SSE && s->terminal && s->q_len == 0) {
        pt_parena_reset(&s->arena);
        if (check_after_terminal(s) != 0)
            return PANTO_ERROR;
    }
    return PANTO_OK;
}

static int pop(panto_stream *s, panto_event *ev) {
    *ev = s->q[s->q_head++];
    if (--s->q_len == 0) {
        s->q_head = 0;
        /* D10: end of input was declared before the terminal was drained;
         * check the rest now, as panto_stream_finish would have.  The
         * terminal's strings live outside the parser's buffers. */
        if (s->terminal && s->eof && s->err_code == PANTO_ERR_NONE &&
            ev->kind == PANTO_EV_MESSAGE_COMPLETE)
            check_after_terminal(s);
    }
    return PANTO_EVENT;
}

/* NEED_MORE (before the end of input), called with an empty queue: nothing
 * borrows from the input or the general path's buffers, and what a stream
 * waiting for its next read holds is only its own state, not the size of
 * its largest read (hundreds of streams open at once: after 4 KB reads, 8
 * KiB of a decoder's 15-19 KB were its input buffer).  So an input buffer
 * larger than a small read's goes back now; a read nearly always ends
 * inside an event, and the few bytes of that cut event move to a buffer
 * their size when that is a quarter or less of it (the next feed
 * grows it again; the parser's and fast_defer's offsets are absolute,
 * in_base + in_off, so they stay true; failing to allocate it keeps the
 * old one).  The JSON tree of the last event the general path parsed, and
 * the SSE parser's empty field buffers, go back too: once the fast path
 * takes the deltas, the next general event is the message's end. */
static int input_drained(panto_stream *s) {
    if (s->doc.nodes)
        pt_json_doc_trim(&s->doc);
    if (s->sse.data.p && s->sse.data.len == 0)
        pt_pbuf_free(&s->sse.data);
    if (s->sse.event.p && s->sse.event.len == 0)
        pt_pbuf_free(&s->sse.event);
    if (s->in.cap <= PT_IN_KEEP_CAP)
        return PANTO_NEED_MORE;
    size_t pending = s->in.len - s->in_off;
    if (pending == 0) {
        s->in_base += s->in.len;
        pt_pbuf_free(&s->in);
        s->in_off = 0;
    } else if (pending <= PT_IN_CUT_EVENT_MAX && pending <= s->in.cap / 4) {
        pbuf nb = {0};
        if (pt_pbuf_append(&nb, s->in.p + s->in_off, pending, SIZE_MAX) == PU_OK) {
            pt_pbuf_free(&s->in);
            s->in = nb;
            s->in_base += s->in_off;
            s->in_off = 0;
        }
    }
    return PANTO_NEED_MORE;
}

/* No complete line left: NEED_MORE, or at end of input DONE (raw wire), the
 * "not an SSE field" error of a body that was never an event stream, or the
 * truncation error. */
static int need_more(panto_stream *s) {
    if (!s->eof)
        return input_drained(s);
    if (s->wire == PANTO_WIRE_SSE) {
        s->done = 1;
        return PANTO_DONE;
    }
    sse_error serr;
    uint64_t off;
    if (pt_sse_not_a_stream(&s->sse, &serr, &off)) {
        /* the whole body is in: it never was an event stream */
        s->cur_off = off;
        pt_fail(s, PANTO_ERR_BAD_SSE, "%s", serr.msg);
        return PANTO_ERROR;
    }
    size_t partial = s->in.len - s->in_off;
    s->cur_off = s->in_base + s->in.len;
    const char *more = "";
    char extra[160];
    extra[0] = 0;
    if (partial)
        snprintf(extra, sizeof extra, "; %zu bytes of an unterminated line discarded", partial);
    else if (s->sse.data.len)
        more = "; an event without its closing blank line was discarded";
    pt_fail(s, PANTO_ERR_TRUNCATED, "stream ended before %s (after %llu events)%s%s",
            terminal_name(s), (unsigned long long)s->n_events, extra, more);
    return PANTO_ERROR;
}

/* Decode until the queue holds an event: PANTO_EVENT, or the status that
 * stops it (NEED_MORE, DONE, ERROR).  Called with an empty queue only, so
 * no delivered event still borrows the arena or a retired block. */
static int fill(panto_stream *s) {
    if (s->done)
        return PANTO_DONE;
    recycle_retired(s);
    /* The queue is empty: nothing borrows from the input any more. */
    if (s->in_keep.p)
        pt_pbuf_free(&s->in_keep);
    s->in_borrowed = 0;
    for (;;) {
        pt_parena_reset(&s->arena);
        s->in_defer = 0;
        int fr = fast_event(s);
        if (fr == 2)
            return input_drained(s); /* not at end of input (fast_defer) */
        if (fr == 0) {
            sse_event se;
            int r = parse_next(s, &se);
            if (r == SSE_ERROR)
                return PANTO_ERROR;
            if (r == SSE_NEED_MORE)
                return need_more(s);
            fr = dispatch(s, &se) != 0 ? -1 : 1;
        }
        if (fr < 0) {
            if (s->err_code == PANTO_ERR_NONE)
                pt_nomem(s);
            /* An SSE event that fails delivers nothing, not even the
             * events it queued before the failure. */
            s->q_len = 0;
            s->q_head = 0;
            s->terminal = 0;
            return PANTO_ERROR;
        }
        if (s->q_len || s->direct_used)
            return PANTO_EVENT;
    }
}

/* The status panto_next_event returns before it looks at the queue, or 0. */
static int early_status(const panto_stream *s) {
    /* The terminal invariant outranks later errors: once MESSAGE_COMPLETE
     * was delivered, next_event says DONE forever (an event after it is
     * reported by panto_stream_finish and panto_stream_error). */
    if (s->terminal && s->q_len == 0)
        return PANTO_DONE;
    if (s->err_code != PANTO_ERR_NONE)
        return PANTO_ERROR;
    return 0;
}

PANTO_EXTERN(int) panto_next_event(panto_stream *s, panto_event *ev) {
    if (!s)
        return PANTO_ERROR;
    int st = early_status(s);
    if (st)
        return st;
    if (!ev) {
        pt_fail(s, PANTO_ERR_INVALID_ARGUMENT, "panto_next_event: ev is NULL");
        return PANTO_ERROR;
    }
    if (!s->q_len) {
        s->direct = ev;
        s->direct_used = 0;
        st = fill(s);
        s->direct = NULL;
        if (s->direct_used) { /* fill wrote the event into *ev */
            s->direct_used = 0;
            return st;
        }
        if (st != PANTO_EVENT)
            return st;
    }
    return pop(s, ev);
}

/* The string fields of an event (at most 5). */
static int event_strings(panto_event *ev, panto_str **out) {
    switch (ev->kind) {
    case PANTO_EV_MESSAGE_START:
        out[0] = &ev->u.message_start.id;
        out[1] = &ev->u.message_start.model;
        return 2;
    case PANTO_EV_TOOL_DETAILS:
        out[0] = &ev->u.tool_details.id;
        out[1] = &ev->u.tool_details.name;
        return 2;
    case PANTO_EV_CONTENT_DELTA:
        out[0] = &ev->u.content_delta.text;
        return 1;
    case PANTO_EV_BLOCK_COMPLETE:
        out[0] = &ev->u.block_complete.text;
        out[1] = &ev->u.block_complete.signature;
        out[2] = &ev->u.block_complete.tool_id;
        out[3] = &ev->u.block_complete.tool_name;
        out[4] = &ev->u.block_complete.citations;
        return 5;
    case PANTO_EV_MESSAGE_COMPLETE:
        out[0] = &ev->u.message_complete.raw_stop_reason;
        return 1;
    case PANTO_EV_SSE:
        out[0] = &ev->u.sse.event;
        out[1] = &ev->u.sse.data;
        out[2] = &ev->u.sse.id;
        return 3;
    default:
        return 0;
    }
}

PANTO_EXTERN(int) panto_next_events(panto_stream *s, panto_event *events, size_t cap,
                                    char *buf, size_t bufcap, size_t *n) {
    if (n)
        *n = 0;
    if (!s)
        return PANTO_ERROR;
    int st = early_status(s);
    if (st)
        return st;
    if (!events || !n || cap == 0 || (!buf && bufcap)) {
        pt_fail(s, PANTO_ERR_INVALID_ARGUMENT,
                "panto_next_events: events, n and cap must be set, and buf when bufcap is");
        return PANTO_ERROR;
    }
    size_t used = 0, k = 0;
    int last = PANTO_EVENT;
    while (k < cap) {
        if ((last = early_status(s)) != 0)
            break;
        if (!s->q_len && (last = fill(s)) != PANTO_EVENT)
            break;
        panto_event *ev = &s->q[s->q_head];
        panto_str *strs[5];
        int ns = event_strings(ev, strs);
        size_t need = 0;
        for (int i = 0; i < ns; i++)
            need += strs[i]->len;
        if (need > bufcap - used) {
            if (k == 0) /* too large for any batch: alone, strings borrowed */
                pop(s, &events[k++]);
            break;
        }
        for (int i = 0; i < ns; i++) {
            if (strs[i]->len) {
                memcpy(buf + used, strs[i]->ptr, strs[i]->len);
                strs[i]->ptr = buf + used;
                used += strs[i]->len;
            }
        }
        pop(s, &events[k++]);
    }
    *n = k;
    return k ? PANTO_EVENT : last;
}

PANTO_EXTERN(int) panto_stream_partial_block(const panto_stream *s, uint32_t k,
                                             panto_block_complete *out) {
    if (!s || !out)
        return PANTO_ERROR;
    memset(out, 0, sizeof *out);
    /* the k-th open slot by block index (few slots are ever open) */
    uint32_t floor = 0;
    const pt_slot *found = NULL;
    for (uint32_t j = 0; j <= k; j++) {
        found = NULL;
        for (size_t i = 0; i < s->n_slots; i++) {
            const pt_slot *sl = &s->slots[i];
            if (sl->state == PT_SLOT_OPEN && sl->index >= floor &&
                (!found || sl->index < found->index))
                found = sl;
        }
        if (!found)
            return PANTO_DONE;
        floor = found->index + 1;
    }
    out->index = found->index;
    out->block_kind = found->kind;
    out->flags = PANTO_BLOCK_FLAG_PARTIAL;
    out->text = pt_mkstr(found->text.p, found->text.len);
    if (found->kind == PANTO_BLOCK_SERVER)
        out->text = pt_mkstr(found->raw.p, found->raw.len); /* the start object */
    out->signature = pt_mkstr(found->sig.p, found->kind == PANTO_BLOCK_THINKING ? found->sig.len : 0);
    out->tool_id = pt_mkstr(found->tool_id.p, found->tool_id.len);
    out->tool_name = pt_mkstr(found->tool_name.p, found->tool_name.len);
    out->citations = pt_mkstr(NULL, 0);
    return PANTO_OK;
}

PANTO_EXTERN(int) panto_stream_error(const panto_stream *s, panto_error *out) {
    if (!s || !out)
        return PANTO_ERROR;
    memset(out, 0, sizeof *out);
    out->code = s->err_code;
    if (s->err_code != PANTO_ERR_NONE) {
        if (s->err_msg.len)
            out->message = pt_mkstr(s->err_msg.p, s->err_msg.len);
        else {
            const char *nm = panto_error_code_name(s->err_code);
            out->message = pt_mkstr(nm, strlen(nm));
        }
    } else {
        out->message = pt_mkstr(NULL, 0);
    }
    out->provider_type = pt_mkstr(s->err_type.p, s->err_type.len);
    out->retryable = s->err_retryable;
    out->offset = s->err_code != PANTO_ERR_NONE ? s->err_off : 0;
    return PANTO_OK;
}

PANTO_EXTERN(size_t) panto_stream_memory(const panto_stream *s) {
    if (!s)
        return 0;
    size_t m = sizeof *s;
    m += s->in.cap + s->in_keep.cap + s->fcache.bytes.cap;
    if (s->fcache.state)
        m += PT_FCACHE_STATE;
    m += pt_sse_memory(&s->sse);
    m += pt_json_doc_memory(&s->doc);
    m += s->arena.bytes;
    m += s->q_cap * sizeof *s->q;
    m += s->cap_slots * sizeof *s->slots;
    for (size_t i = 0; i < s->n_slots; i++)
        m += s->slots[i].text.cap + s->slots[i].sig.cap + s->slots[i].tool_id.cap +
             s->slots[i].tool_name.cap + s->slots[i].cites.cap + s->slots[i].raw.cap;
    m += s->cap_keys * sizeof *s->keys;
    m += s->stop_raw.cap + s->err_msg.cap + s->err_type.cap;
    for (size_t i = 0; i < PT_RS_TEXTS; i++)
        m += s->rs_texts[i].cap;
    return m;
}

PANTO_EXTERN(int) panto_stream_reset(panto_stream *s) {
    if (!s)
        return PANTO_ERROR;
    /* Keep: wire, options, the input buffer, the SSE parser's buffers, the
     * JSON nodes, the arena's chunk, the queue, slot buffers (up to
     * PT_KEEP_CAP each), the key array and the message buffers. */
    pt_pbuf_clear(&s->in);
    pt_pbuf_free(&s->in_keep);
    s->in_borrowed = 0;
    s->in_defer = 0;
    s->defer_at = 0;
    s->defer_from = 0;
    s->fcache.wire = 0;
    pt_pbuf_clear(&s->fcache.bytes);
    s->in_off = 0;
    s->in_base = 0;
    s->cur_off = 0;
    pbuf data = s->sse.data, event = s->sse.event, last_id = s->sse.last_id;
    pt_sse_init(&s->sse, s->opt.max_event_bytes, s->wire != PANTO_WIRE_SSE);
    s->sse_idle = -1;
    pt_pbuf_clear(&data);
    pt_pbuf_clear(&event);
    pt_pbuf_clear(&last_id);
    s->sse.data = data;
    s->sse.event = event;
    s->sse.last_id = last_id;
    pt_parena_reset(&s->arena);
    s->q_head = s->q_len = 0;
    for (size_t i = 0; i < s->n_slots; i++)
        slot_recycle(&s->slots[i]);
    s->n_keys = 0;
    s->blk_gen++; /* forget the fast paths' lookups (an_fast_slot) */
    s->n_blocks = 0;
    s->n_retired = 0;
    memset(&s->usage, 0, sizeof s->usage);
    pt_pbuf_clear(&s->stop_raw);
    s->stop = 0;
    s->n_events = 0;
    s->ev_line = 0;
    s->started = 0;
    s->tt_slot = -1;
    s->refusal_seen = 0;
    s->synth_key = 0;
    s->last_tool_slot = -1;
    s->rs_hint_slot = -1;
    for (size_t i = 0; i < PT_RS_TEXTS; i++)
        pt_pbuf_free(&s->rs_texts[i]);
    s->rs_texts_next = 0;
    s->eof = 0;
    s->terminal = 0;
    s->done = 0;
    s->err_code = PANTO_ERR_NONE;
    s->err_off = 0;
    pt_pbuf_clear(&s->err_msg);
    pt_pbuf_clear(&s->err_type);
    s->err_retryable = 0;
    return PANTO_OK;
}

/* ---- names ---- */

PANTO_EXTERN(const char *) panto_wire_name(int wire) {
    switch (wire) {
    case PANTO_WIRE_SSE: return "sse";
    case PANTO_WIRE_OPENAI_CHAT: return "openai-chat";
    case PANTO_WIRE_ANTHROPIC_MESSAGES: return "anthropic-messages";
    case PANTO_WIRE_OPENAI_RESPONSES: return "openai-responses";
    default: return "unknown";
    }
}

PANTO_EXTERN(const char *) panto_event_kind_name(int kind) {
    switch (kind) {
    case PANTO_EV_MESSAGE_START: return "message_start";
    case PANTO_EV_BLOCK_START: return "block_start";
    case PANTO_EV_TOOL_DETAILS: return "tool_details";
    case PANTO_EV_CONTENT_DELTA: return "content_delta";
    case PANTO_EV_BLOCK_COMPLETE: return "block_complete";
    case PANTO_EV_MESSAGE_COMPLETE: return "message_complete";
    case PANTO_EV_SSE: return "sse";
    default: return "unknown";
    }
}

PANTO_EXTERN(const char *) panto_block_kind_name(int kind) {
    switch (kind) {
    case PANTO_BLOCK_TEXT: return "text";
    case PANTO_BLOCK_THINKING: return "thinking";
    case PANTO_BLOCK_REDACTED_THINKING: return "redacted_thinking";
    case PANTO_BLOCK_TOOL_USE: return "tool_use";
    case PANTO_BLOCK_SERVER: return "server";
    default: return "unknown";
    }
}

PANTO_EXTERN(const char *) panto_stop_reason_name(int reason) {
    switch (reason) {
    case PANTO_STOP_STOP: return "stop";
    case PANTO_STOP_TOOL_USE: return "tool_use";
    case PANTO_STOP_LENGTH: return "length";
    case PANTO_STOP_REFUSAL: return "refusal";
    case PANTO_STOP_PAUSE: return "pause";
    case PANTO_STOP_ERROR: return "error";
    case PANTO_STOP_OTHER: return "other";
    default: return "unknown";
    }
}

PANTO_EXTERN(const char *) panto_error_code_name(int code) {
    switch (code) {
    case PANTO_ERR_NONE: return "none";
    case PANTO_ERR_BAD_SSE: return "bad_sse";
    case PANTO_ERR_BAD_JSON: return "bad_json";
    case PANTO_ERR_PROTOCOL: return "protocol";
    case PANTO_ERR_PROVIDER: return "provider";
    case PANTO_ERR_TRUNCATED: return "truncated";
    case PANTO_ERR_LIMIT: return "limit";
    case PANTO_ERR_INVALID_ARGUMENT: return "invalid_argument";
    case PANTO_ERR_NO_MEMORY: return "no_memory";
    default: return "unknown";
    }
}
