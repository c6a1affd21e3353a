/* wire_anthropic.c -- Anthropic messages stream (`event: X` + `data:
 * {"type":"X",...}`) decoded into panto events.  See ARCHITECTURE.md
 * section 2 and reference/FACTS.md. */
#include <string.h>

#include "stream.h"

#define EVN(s) ((unsigned long long)(s)->n_events)

/* Members of an event's data object, looked up in one pass. */
enum { R_TYPE, R_INDEX, R_DELTA, R_BLOCK, R_MESSAGE, R_USAGE, R_ERROR, R_N };
static const pt_name AN_ROOT_NAMES[R_N] = {PT_NAME("type"),          PT_NAME("index"),
                                        PT_NAME("delta"),         PT_NAME("content_block"),
                                        PT_NAME("message"),       PT_NAME("usage"),
                                        PT_NAME("error")};

/* Length of at most 64 bytes of x that ends on a character boundary, for
 * quoting wire strings in messages. */
static int clip(panto_str x) {
    return (int)pt_utf8_valid_prefix((const uint8_t *)x.ptr, x.len > 64 ? 64 : x.len);
}

static int an_is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* A string member that must be present ("" when absent and !required). */
static int get_string(panto_stream *s, const jnode *obj, const char *key, int required,
                      const char *where, panto_str *out) {
    *out = pt_mkstr(NULL, 0);
    const jnode *n = pt_json_get(&s->doc, obj, key);
    if (!n || n->type == JV_NULL) {
        if (required)
            return pt_protocol(s, "%s without \"%s\" (event %llu)", where, key, EVN(s));
        return 0;
    }
    if (n->type != JV_STRING)
        return pt_protocol(s, "%s \"%s\" is not a string (event %llu)", where, key, EVN(s));
    return pt_str(s, n, out);
}

static int get_index(panto_stream *s, const jnode **root, const char *type, uint64_t *out) {
    const jnode *n = root[R_INDEX];
    if (!n || pt_json_u64(n, out) != 0)
        return pt_protocol(s, "%s without a valid \"index\" (event %llu)", type, EVN(s));
    return 0;
}

/* Overwrite the usage counts present in `u` (message_delta counts are
 * cumulative totals). */
static void read_usage(panto_stream *s, const jnode *u) {
    static const struct {
        const char *key;
        size_t off;
    } fields[] = {
        {"input_tokens", offsetof(panto_usage, input_tokens)},
        {"cache_read_input_tokens", offsetof(panto_usage, cache_read_tokens)},
        {"cache_creation_input_tokens", offsetof(panto_usage, cache_write_tokens)},
        {"output_tokens", offsetof(panto_usage, output_tokens)},
    };
    if (!u || u->type != JV_OBJECT)
        return;
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        uint64_t v;
        const jnode *n = pt_json_get(&s->doc, u, fields[i].key);
        if (n && pt_json_u64(n, &v) == 0)
            memcpy((char *)&s->usage + fields[i].off, &v, sizeof v);
    }
}

static int an_retryable_type(panto_str t) {
    return PT_EQ(t, "overloaded_error") || PT_EQ(t, "api_error") ||
           PT_EQ(t, "rate_limit_error") || PT_EQ(t, "timeout_error");
}

static int error_event(panto_stream *s, const jnode **root) {
    panto_str type = pt_mkstr(NULL, 0), msg = pt_mkstr(NULL, 0);
    const jnode *e = root[R_ERROR];
    if (e && e->type == JV_OBJECT) {
        const jnode *n = pt_json_get(&s->doc, e, "type");
        if (n && n->type == JV_STRING && pt_str(s, n, &type) != 0)
            return -1;
        n = pt_json_get(&s->doc, e, "message");
        if (n && n->type == JV_STRING && pt_str(s, n, &msg) != 0)
            return -1;
    } else if (e && e->type == JV_STRING) {
        if (pt_str(s, e, &msg) != 0)
            return -1;
    }
    return pt_provider_error(s, type, msg, an_retryable_type(type));
}

static panto_stop_reason map_stop(panto_str r) {
    if (PT_EQ(r, "end_turn") || PT_EQ(r, "stop_sequence"))
        return PANTO_STOP_STOP;
    if (PT_EQ(r, "tool_use"))
        return PANTO_STOP_TOOL_USE;
    if (PT_EQ(r, "max_tokens") || PT_EQ(r, "model_context_window_exceeded"))
        return PANTO_STOP_LENGTH;
    if (PT_EQ(r, "refusal"))
        return PANTO_STOP_REFUSAL;
    if (PT_EQ(r, "pause_turn"))
        return PANTO_STOP_PAUSE;
    return PANTO_STOP_OTHER;
}

static int start_content(panto_stream *s, const jnode *content);

static int message_start(panto_stream *s, const jnode **root) {
    if (s->started)
        return pt_protocol(s, "second message_start (event %llu)", EVN(s));
    const jnode *m = root[R_MESSAGE];
    if (!m || m->type != JV_OBJECT)
        return pt_protocol(s, "message_start without a \"message\" object (event %llu)", EVN(s));
    panto_str id, model;
    if (get_string(s, m, "id", 0, "message_start message", &id) != 0 ||
        get_string(s, m, "model", 0, "message_start message", &model) != 0)
        return -1;
    read_usage(s, pt_json_get(&s->doc, m, "usage"));
    /* A stop reason already in message_start (not sent in streams today). */
    const jnode *sr = pt_json_get(&s->doc, m, "stop_reason");
    if (sr && sr->type == JV_STRING) {
        panto_str r;
        if (pt_str(s, sr, &r) != 0 || pt_set_stop_raw(s, r) != 0)
            return -1;
        s->stop = map_stop(r);
    }
    if (pt_message_start(s, id, model) != 0)
        return -1;
    return start_content(s, pt_json_get(&s->doc, m, "content"));
}

/* Open a block from a content_block object `cb` (content_block_start, or
 * an element of message_start's message.content when `whole`, which is then
 * completed at once).  Blocks of any type other than text, thinking,
 * redacted_thinking and tool_use are kept as opaque server blocks holding
 * their JSON.  Returns the slot, or -1 with the error set. */
static int fill_block(panto_stream *s, const jnode *cb, int si, int32_t kind, int whole);

static int start_block(panto_stream *s, const jnode *cb, uint64_t idx, int whole) {
    panto_str type;
    if (get_string(s, cb, "type", 1, "content_block", &type) != 0)
        return -1;
    int32_t kind;
    if (PT_EQ(type, "text"))
        kind = PANTO_BLOCK_TEXT;
    else if (PT_EQ(type, "thinking"))
        kind = PANTO_BLOCK_THINKING;
    else if (PT_EQ(type, "redacted_thinking"))
        kind = PANTO_BLOCK_REDACTED_THINKING;
    else if (PT_EQ(type, "tool_use"))
        kind = PANTO_BLOCK_TOOL_USE;
    else /* server_tool_use, web_search_tool_result, mcp_tool_use, ... */
        kind = PANTO_BLOCK_SERVER;

    panto_str id = pt_mkstr(NULL, 0), name = pt_mkstr(NULL, 0);
    if (kind == PANTO_BLOCK_TOOL_USE &&
        (get_string(s, cb, "id", 0, "tool_use content_block", &id) != 0 ||
         get_string(s, cb, "name", 0, "tool_use content_block", &name) != 0))
        return -1;
    int si = pt_block_open(s, kind, idx, id, name);
    if (si < 0 || fill_block(s, cb, si, kind, whole) != 0)
        return -1;
    return si;
}

/* The content a block starts with. 0, or -1 with the error set. */
static int fill_block(panto_stream *s, const jnode *cb, int si, int32_t kind, int whole) {
    panto_str t;
    switch (kind) {
    case PANTO_BLOCK_TEXT: {
        if (get_string(s, cb, "text", 0, "text content_block", &t) != 0 ||
            pt_block_delta(s, si, t) != 0)
            return -1;
        const jnode *c = pt_json_get(&s->doc, cb, "citations");
        if (c && c->type == JV_ARRAY && c->count > 0) /* "[a,b" now, "]" at the end */
            return pt_block_append(s, si, &s->slots[si].cites, c->p, c->len - 1);
        return 0;
    }
    case PANTO_BLOCK_THINKING:
        if (get_string(s, cb, "thinking", 0, "thinking content_block", &t) != 0 ||
            pt_block_delta(s, si, t) != 0)
            return -1;
        if (get_string(s, cb, "signature", 0, "thinking content_block", &t) != 0)
            return -1;
        return pt_block_append(s, si, &s->slots[si].sig, t.ptr, t.len);
    case PANTO_BLOCK_REDACTED_THINKING:
        if (get_string(s, cb, "data", 0, "redacted_thinking content_block", &t) != 0)
            return -1;
        return pt_block_append(s, si, &s->slots[si].text, t.ptr, t.len);
    case PANTO_BLOCK_TOOL_USE: {
        /* input is {} and streamed as input_json_delta; a whole block (or a
         * proxy that sends the whole input here) gets it as one delta. */
        const jnode *in = pt_json_get(&s->doc, cb, "input");
        if (in && in->type == JV_OBJECT && (in->count > 0 || whole))
            return pt_block_delta(s, si, pt_mkstr(in->p, in->len));
        return 0;
    }
    default: {
        pt_slot *sl = &s->slots[si];
        if (pt_block_append(s, si, &sl->raw, cb->p, cb->len) != 0)
            return -1;
        const jnode *in = pt_json_get(&s->doc, cb, "input");
        if (in && in->type == JV_OBJECT) {
            sl = &s->slots[si];
            sl->input_off = (size_t)(in->p - cb->p);
            sl->input_len = in->len;
        }
        return 0;
    }
    }
}

static int block_start(panto_stream *s, const jnode **root) {
    uint64_t idx = 0;
    if (get_index(s, root, "content_block_start", &idx) != 0)
        return -1;
    if (pt_key_find(s, idx))
        return pt_protocol(s, "content_block_start for block index %llu that already started (event %llu)",
                           (unsigned long long)idx, EVN(s));
    const jnode *cb = root[R_BLOCK];
    if (!cb || cb->type != JV_OBJECT)
        return pt_protocol(s, "content_block_start without a \"content_block\" object (event %llu)",
                           EVN(s));
    int si = start_block(s, cb, idx, 0);
    if (si < 0)
        return -1;
    pt_key *k = pt_key_add(s, idx, PT_KEY_OPEN);
    if (!k)
        return -1;
    k->slot = (uint32_t)si;
    s->slots[si].keyed = 1;
    return 0;
}

/* B1: complete blocks already in message_start's message.content (a tool
 * call made by code execution, with its "caller"), before any streamed one. */
static int start_content(panto_stream *s, const jnode *content) {
    if (!content || content->type == JV_NULL)
        return 0;
    if (content->type != JV_ARRAY)
        return pt_protocol(s, "message_start message.content is not an array (event %llu)",
                           EVN(s));
    for (const jnode *cb = pt_json_first(&s->doc, content); cb; cb = pt_json_next(&s->doc, cb)) {
        if (cb->type != JV_OBJECT)
            return pt_protocol(s, "message_start message.content[] is not an object (event %llu)",
                               EVN(s));
        int si = start_block(s, cb, 0, 1);
        if (si < 0 || pt_block_complete(s, si) != 0)
            return -1;
    }
    return 0;
}

/* The open block for `idx`, -1 (error set) when it is not open, or -2 when
 * the block is skipped. */
static int open_block(panto_stream *s, uint64_t idx, const char *type) {
    pt_key *k = pt_key_find(s, idx);
    if (!k)
        return pt_protocol(s, "%s for block index %llu that never started (event %llu)", type,
                           (unsigned long long)idx, EVN(s));
    if (k->state == PT_KEY_SKIPPED)
        return -2;
    if (k->state == PT_KEY_CLOSED)
        return pt_protocol(s, "%s for block index %llu that already stopped (event %llu)", type,
                           (unsigned long long)idx, EVN(s));
    return (int)k->slot;
}

static int block_delta(panto_stream *s, const jnode **root) {
    uint64_t idx = 0;
    if (get_index(s, root, "content_block_delta", &idx) != 0)
        return -1;
    int si = open_block(s, idx, "content_block_delta");
    if (si == -2)
        return 0;
    if (si < 0)
        return -1;
    const jnode *d = root[R_DELTA];
    if (!d || d->type != JV_OBJECT)
        return pt_protocol(s, "content_block_delta without a \"delta\" object (event %llu)", EVN(s));
    /* type, then the text field of each known delta type */
    static const pt_name names[] = {PT_NAME("type"), PT_NAME("text"), PT_NAME("thinking"),
                                    PT_NAME("signature"), PT_NAME("partial_json"),
                                    PT_NAME("citation")};
    const jnode *m[6];
    if (pt_members(s, d, names, 6, m) != 0)
        return -1;
    if (!m[0] || m[0]->type != JV_STRING)
        return pt_protocol(s, "content_block_delta delta without a \"type\" string (event %llu)",
                           EVN(s));
    panto_str type;
    if (pt_str(s, m[0], &type) != 0)
        return -1;
    int32_t want;
    int field;
    if (PT_EQ(type, "text_delta"))
        want = PANTO_BLOCK_TEXT, field = 1;
    else if (PT_EQ(type, "thinking_delta"))
        want = PANTO_BLOCK_THINKING, field = 2;
    else if (PT_EQ(type, "signature_delta"))
        want = PANTO_BLOCK_THINKING, field = 3;
    else if (PT_EQ(type, "input_json_delta"))
        want = PANTO_BLOCK_TOOL_USE, field = 4;
    else if (PT_EQ(type, "citations_delta"))
        want = PANTO_BLOCK_TEXT, field = 5;
    else
        return 0; /* future delta types */
    int32_t have = s->slots[si].kind;
    if (field == 5 && have != PANTO_BLOCK_TEXT)
        return 0; /* citations belong to text; elsewhere they are dropped */
    if (have == PANTO_BLOCK_SERVER) {
        /* server_tool_use / mcp_tool_use stream their input like tool_use;
         * other deltas of opaque blocks carry nothing panto keeps */
        const jnode *v = m[4];
        if (field != 4)
            return 0;
        if (!v || v->type != JV_STRING)
            return pt_protocol(s, "input_json_delta without a \"partial_json\" string (event %llu)",
                               EVN(s));
        panto_str t;
        if (pt_str(s, v, &t) != 0)
            return -1;
        return pt_block_append(s, si, &s->slots[si].text, t.ptr, t.len);
    }
    if (have != want)
        return pt_protocol(s, "%.*s for block index %llu, which is a %s block (event %llu)",
                           clip(type), type.ptr, (unsigned long long)idx,
                           panto_block_kind_name(have), EVN(s));
    const jnode *v = m[field];
    if (field == 5) {
        if (!v || v->type != JV_OBJECT)
            return pt_protocol(s, "citations_delta without a \"citation\" object (event %llu)",
                               EVN(s));
        pbuf *c = &s->slots[si].cites;
        if (pt_block_append(s, si, c, c->len ? "," : "[", 1) != 0)
            return -1;
        return pt_block_append(s, si, &s->slots[si].cites, v->p, v->len);
    }
    if (!v || v->type != JV_STRING)
        return pt_protocol(s, "%.*s without a \"%s\" string (event %llu)", clip(type),
                           type.ptr, names[field].s, EVN(s));
    panto_str t;
    if (pt_str(s, v, &t) != 0)
        return -1;
    if (field == 3)
        return pt_block_append(s, si, &s->slots[si].sig, t.ptr, t.len);
    return pt_block_delta(s, si, t);
}

static int block_stop(panto_stream *s, const jnode **root) {
    uint64_t idx = 0;
    if (get_index(s, root, "content_block_stop", &idx) != 0)
        return -1;
    int si = open_block(s, idx, "content_block_stop");
    if (si == -2)
        return 0;
    if (si < 0)
        return -1;
    return pt_block_complete(s, si);
}

static int message_delta(panto_stream *s, const jnode **root) {
    const jnode *d = root[R_DELTA];
    if (d && d->type == JV_OBJECT) {
        const jnode *sr = pt_json_get(&s->doc, d, "stop_reason");
        if (sr && sr->type == JV_STRING) {
            panto_str r;
            if (pt_str(s, sr, &r) != 0 || pt_set_stop_raw(s, r) != 0)
                return -1;
            s->stop = map_stop(r);
        } else if (sr && sr->type != JV_NULL) {
            return pt_protocol(s, "message_delta stop_reason is not a string (event %llu)", EVN(s));
        }
    }
    read_usage(s, root[R_USAGE]);
    return 0;
}

int pt_anthropic_event(panto_stream *s, const sse_event *ev) {
    size_t n = ev->data_len;
    const char *p = ev->data;
    while (n && an_is_ws(p[0]))
        p++, n--;
    if (n == 0)
        return 0; /* an empty data event carries nothing */
    const jnode *root = pt_parse_json(s, ev);
    if (!root)
        return -1;
    if (root->type != JV_OBJECT)
        return pt_protocol(s, "event %llu (line %llu) is not a JSON object", EVN(s),
                           (unsigned long long)s->ev_line);
    const jnode *r[R_N];
    if (pt_members(s, root, AN_ROOT_NAMES, R_N, r) != 0)
        return -1;
    panto_str type;
    const jnode *tn = r[R_TYPE];
    if (!tn || tn->type != JV_STRING)
        return pt_protocol(s, "event %llu (line %llu) has no \"type\" string", EVN(s),
                           (unsigned long long)s->ev_line);
    if (pt_str(s, tn, &type) != 0)
        return -1;
    panto_str name = pt_mkstr(ev->event, ev->event_len);
    if (!PT_EQ(name, "message") &&
        (name.len != type.len || memcmp(name.ptr, type.ptr, type.len) != 0))
        return pt_protocol(s, "event \"%.*s\" carries data of type \"%.*s\" (event %llu)",
                           clip(name), name.ptr, clip(type), type.ptr, EVN(s));

    if (PT_EQ(type, "ping"))
        return 0;
    if (PT_EQ(type, "error"))
        return error_event(s, r);
    if (PT_EQ(type, "message_start"))
        return message_start(s, r);
    if (!s->started)
        return pt_protocol(s, "%.*s before message_start (event %llu)",
                           clip(type), type.ptr, EVN(s));
    if (PT_EQ(type, "content_block_delta"))
        return block_delta(s, r);
    if (PT_EQ(type, "content_block_start"))
        return block_start(s, r);
    if (PT_EQ(type, "content_block_stop"))
        return block_stop(s, r);
    if (PT_EQ(type, "message_delta"))
        return message_delta(s, r);
    if (PT_EQ(type, "message_stop")) {
        if (pt_complete_all(s) != 0)
            return -1;
        return pt_message_complete(s);
    }
    return 0; /* unknown event types are ignored */
}

/* ---- the fast path (stream.h) ----
 *
 * content_block_delta events of the four streamed delta types, nearly every
 * event of a response, in the member order Anthropic sends them:
 *
 *   event: content_block_delta
 *   data: {"type":"content_block_delta","index":N,"delta":{"type":"text_delta","text":"..."}}
 *
 * (spaces or tabs allowed between tokens), to an open block of the kind the
 * delta type wants.  Anything else is left to pt_anthropic_event. */
static const struct {
    const char *type; /* the delta's "type" value, quoted */
    size_t type_len;
    const char *key; /* the member that carries the text, quoted */
    size_t key_len;
    int32_t kind; /* the block kind it applies to */
} AN_FAST_DELTAS[] = {
    {"\"text_delta\"", 12, "\"text\"", 6, PANTO_BLOCK_TEXT},
    {"\"thinking_delta\"", 16, "\"thinking\"", 10, PANTO_BLOCK_THINKING},
    {"\"input_json_delta\"", 18, "\"partial_json\"", 14, PANTO_BLOCK_TOOL_USE},
    {"\"signature_delta\"", 17, "\"signature\"", 11, PANTO_BLOCK_THINKING},
};

/* b[i..) is ws ':' ws; the index after, or 0. */
static size_t an_colon(const uint8_t *b, size_t n, size_t i) {
    i = pt_fws(b, n, i);
    if (i >= n || b[i] != ':')
        return 0;
    return pt_fws(b, n, i + 1);
}

/* ws ',' ws; the index after, or 0. */
static size_t an_comma(const uint8_t *b, size_t n, size_t i) {
    i = pt_fws(b, n, i);
    if (i >= n || b[i] != ',')
        return 0;
    return pt_fws(b, n, i + 1);
}

/* The walk state at the text string: the cache (stream.h) holds it with
 * the JSON text up to there. */
typedef struct {
    uint64_t idx;
    size_t k;        /* AN_FAST_DELTAS[k] */
    size_t json_off; /* AN_FC_SSE: where the JSON text starts in the bytes */
} an_walk;

/* The cache (pt_fcache.wire) holds either the JSON text of an event the
 * general SSE parser dispatched (from its '{'), or, for pt_anthropic_fast,
 * the whole event from its first byte: one compare then covers the SSE
 * lines too. */
#define AN_FC_JSON PANTO_WIRE_ANTHROPIC_MESSAGES
#define AN_FC_SSE (0x100 | PANTO_WIRE_ANTHROPIC_MESSAGES)

_Static_assert(sizeof(an_walk) <= PT_FCACHE_STATE, "an_walk fits the cache");

/* The JSON text p[0..n) (p[0] == '{') up to the opening quote of the text
 * string: the index after that quote, or 0. */
static size_t an_walk_head(const uint8_t *b, size_t n, an_walk *w) {
    size_t i = pt_fws(b, n, 1);
    if (!PT_FLIT(b, n, i, "\"type\""))
        return 0;
    if (!(i = an_colon(b, n, i + 6)) || !PT_FLIT(b, n, i, "\"content_block_delta\""))
        return 0;
    if (!(i = an_comma(b, n, i + 21)) || !PT_FLIT(b, n, i, "\"index\""))
        return 0;
    if (!(i = an_colon(b, n, i + 7)))
        return 0;
    /* the index: a plain integer, no leading zero, at most 18 digits */
    uint64_t idx = 0;
    size_t d0 = i;
    while (i < n && b[i] >= '0' && b[i] <= '9' && i - d0 < 19)
        idx = idx * 10 + (uint64_t)(b[i++] - '0');
    if (i == d0 || i - d0 > 18 || (b[d0] == '0' && i - d0 > 1))
        return 0;
    if (!(i = an_comma(b, n, i)) || !PT_FLIT(b, n, i, "\"delta\""))
        return 0;
    if (!(i = an_colon(b, n, i + 7)) || !PT_FLIT(b, n, i, "{"))
        return 0;
    i = pt_fws(b, n, i + 1);
    if (!PT_FLIT(b, n, i, "\"type\"") || !(i = an_colon(b, n, i + 6)))
        return 0;
    size_t k = 0;
    const size_t nk = sizeof AN_FAST_DELTAS / sizeof AN_FAST_DELTAS[0];
    while (k < nk && !(n - i >= AN_FAST_DELTAS[k].type_len &&
                       memcmp(b + i, AN_FAST_DELTAS[k].type, AN_FAST_DELTAS[k].type_len) == 0))
        k++;
    if (k == nk)
        return 0;
    i = an_comma(b, n, i + AN_FAST_DELTAS[k].type_len);
    if (!i || n - i < AN_FAST_DELTAS[k].key_len ||
        memcmp(b + i, AN_FAST_DELTAS[k].key, AN_FAST_DELTAS[k].key_len) != 0)
        return 0;
    if (!(i = an_colon(b, n, i + AN_FAST_DELTAS[k].key_len)) || i >= n || b[i] != '"')
        return 0;
    w->idx = idx;
    w->k = k;
    return i + 1;
}

/* The open block for Anthropic index idx whose kind the delta type wants:
 * its slot, or -1.  The last answer is kept until a key or a slot changes
 * (blk_gen): consecutive deltas go to the same block. */
static PT_HOT_INLINE int an_fast_slot(panto_stream *s, uint64_t idx, int32_t kind) {
    int si;
    if (s->an_gen == s->blk_gen && s->an_idx == idx) {
        si = (int)s->an_slot;
    } else {
        pt_key *key = pt_key_find(s, idx);
        if (!key || key->state != PT_KEY_OPEN)
            return -1;
        si = (int)key->slot;
        s->an_idx = idx;
        s->an_slot = key->slot;
        s->an_gen = s->blk_gen;
    }
    return s->slots[si].kind == kind ? si : -1;
}

/* The JSON text p[0..n) from the text string on (p[st] is its first byte)
 * with the walk *w of what comes before: 1 with the string p[st..*e)
 * (*esc), *end just past the root object and *si the block's slot, 0 to
 * leave the event to the general path. */
static PT_HOT_INLINE int an_fast_tail(panto_stream *s, const uint8_t *p, size_t n,
                                      const an_walk *w, size_t st, size_t *e, int *esc,
                                      size_t *end, int *si) {
    size_t i;
    *e = st;
    *esc = 0;
    if (pt_json_scan_str(p, n, e, esc) != 0)
        return 0;
    i = pt_fws(p, n, *e + 1);
    if (i >= n || p[i] != '}')
        return 0;
    i = pt_fws(p, n, i + 1);
    if (i >= n || p[i] != '}')
        return 0;
    *end = i + 1;
    /* what block_delta checks: an open block of the kind the type wants */
    return (*si = an_fast_slot(s, w->idx, AN_FAST_DELTAS[w->k].kind)) >= 0;
}

/* Walk the JSON text at p[0..n) (p[0] == '{') through the cache:
 * 1 with *w, the text string p[*st..*e) (*esc) and *end just past the
 * root object, 0 to leave the event to the general path. */
static PT_HOT_INLINE int an_fast_walk(panto_stream *s, const uint8_t *p, size_t n, an_walk *w, size_t *st,
                        size_t *e, int *esc, size_t *end, int *si) {
    if (!s->started || s->opt.max_json_depth < 2) /* the root and the delta */
        return 0;
    pt_fcache *fc = &s->fcache;
    if (fc->wire == AN_FC_JSON && n > fc->bytes.len && pt_equal(p, fc->bytes.p, fc->bytes.len)) {
        memcpy(w, fc->state, sizeof *w); /* the prefix of an earlier event */
        *st = fc->bytes.len;
    } else {
        if (!(*st = an_walk_head(p, n, w)))
            return 0;
        w->json_off = 0;
        pt_fcache_store(s, AN_FC_JSON, p, *st, w, sizeof *w);
    }
    return an_fast_tail(s, p, n, w, *st, e, esc, end, si);
}

/* Queue what block_delta would.  1, or -1 with the error set. */
static PT_HOT_INLINE int an_fast_apply(panto_stream *s, const uint8_t *p, const an_walk *w, size_t st, size_t e,
                         int esc, int si) {
    panto_str t;
    if (pt_fast_str(s, p, st, e, esc, &t) != 0)
        return -1;
    if (w->k == 3)
        return pt_block_append(s, si, &s->slots[si].sig, t.ptr, t.len) != 0 ? -1 : 1;
    /* the one event of this SSE event, and its last step: direct is safe */
    return pt_fast_delta_to(s, si, t, 1) != 0 ? -1 : 1;
}

/* The end of a delta event in one look: b[q] is the text string's closing
 * quote, and the next 32 bytes hold the rest -- '}' '}' and the blank
 * line, spaces or tabs between (Anthropic pads before the last '}').  The
 * event's length (just past "\n\n"), or 0 when those bytes say otherwise
 * or do not hold it all (the caller then reads them step by step). */
static PT_HOT_INLINE size_t an_tail32(const uint8_t *b, size_t n, size_t q) {
#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
    if (n - q < 34)
        return 0;
    const __m128i sp = _mm_set1_epi8(' '), tab = _mm_set1_epi8('\t');
    __m128i v0 = _mm_loadu_si128((const __m128i *)(const void *)(b + q + 1));
    __m128i v1 = _mm_loadu_si128((const __m128i *)(const void *)(b + q + 17));
    uint32_t ws = (uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v0, sp), _mm_cmpeq_epi8(v0, tab))) |
                  (uint32_t)_mm_movemask_epi8(_mm_or_si128(_mm_cmpeq_epi8(v1, sp), _mm_cmpeq_epi8(v1, tab))) << 16;
    uint32_t m = ~ws; /* the bytes that are not padding */
    const uint8_t *t = b + q + 1;
    if (!m) /* 32 bytes of padding: ctz(0) is undefined */
        return 0;
    if (t[__builtin_ctz(m)] != '}')
        return 0;
    m &= m - 1;
    if (!m || t[__builtin_ctz(m)] != '}')
        return 0;
    m &= m - 1;
    if (!m)
        return 0;
    size_t d = (size_t)__builtin_ctz(m);
    if (t[d] != '\n' || t[d + 1] != '\n') /* d + 1 <= 32 < n - q - 1 */
        return 0;
    return q + 1 + d + 2;
#else
    (void)b;
    (void)n;
    (void)q;
    return 0;
#endif
}

int pt_anthropic_fast(panto_stream *s, const uint8_t *b, size_t n) {
    static const char head[] = "event: content_block_delta\ndata:";
    pt_fcache *fc = &s->fcache;
    an_walk w;
    size_t i, st, e;
    int esc, si;
    if (fc->wire == AN_FC_SSE && n > fc->bytes.len && pt_equal(b, fc->bytes.p, fc->bytes.len)) {
        /* the same event lines and JSON up to the text as an earlier
         * event: the same walk (started and the depth limit cannot have
         * changed since; a reset empties the cache) */
        memcpy(&w, fc->state, sizeof w);
        i = w.json_off;
        st = fc->bytes.len - i;
    } else {
        if (!s->started || s->opt.max_json_depth < 2) /* the root and the delta */
            return 0;
        if (!pt_fstarts(b, n, 0, head, sizeof head - 1))
            return 0;
        i = sizeof head - 1;
        if (i < n && b[i] == ' ')
            i++;
        i = pt_fws(b, n, i);
        if (i >= n || b[i] != '{')
            return 0;
        if (!(st = an_walk_head(b + i, n - i, &w)))
            return 0;
        w.json_off = i;
        pt_fcache_store(s, AN_FC_SSE, b, i + st, &w, sizeof w);
    }
    const uint8_t *p = b + i;
    e = st;
    esc = 0;
    if (pt_json_scan_str(p, n - i, &e, &esc) != 0)
        return 0;
    size_t len = an_tail32(b, n, i + e);
    if (!len) {
        size_t j = pt_fws(p, n - i, e + 1);
        if (j >= n - i || p[j] != '}')
            return 0;
        j = pt_fws(p, n - i, j + 1);
        if (j >= n - i || p[j] != '}')
            return 0;
        /* the data line ends here, and a blank line ends the event */
        j = pt_fws(b, n, i + j + 1);
        if (n - j < 2 || b[j] != '\n' || b[j + 1] != '\n')
            return 0;
        len = j + 2;
    }
    /* what block_delta checks: an open block of the kind the type wants */
    if (len > s->opt.max_event_bytes ||
        (si = an_fast_slot(s, w.idx, AN_FAST_DELTAS[w.k].kind)) < 0)
        return 0;
    i = len - 2;
    pt_fast_commit(s, i + 2, i + 1, 3);
    return an_fast_apply(s, p, &w, st, e, esc, si);
}

int pt_anthropic_fast_event(panto_stream *s, const sse_event *ev) {
    const uint8_t *b = (const uint8_t *)ev->data;
    size_t n = ev->data_len, i = pt_fws(b, n, 0);
    if (ev->event_len != 19 || memcmp(ev->event, "content_block_delta", 19) != 0 || i >= n ||
        b[i] != '{')
        return 0;
    an_walk w;
    size_t st, e, end;
    int esc, si;
    const uint8_t *p = b + i;
    if (!an_fast_walk(s, p, n - i, &w, &st, &e, &esc, &end, &si) || pt_fws(b, n, i + end) != n)
        return 0;
    return an_fast_apply(s, p, &w, st, e, esc, si);
}
