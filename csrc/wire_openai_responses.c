/* wire_openai_responses.c -- the OpenAI Responses API stream (`event: X` +
 * `data: {"type":"X",...}`, typed events about output items) decoded into
 * panto events.  docs/decoding.md describes the mapping:
 *
 *   output item "message"        its content parts (output_text, refusal)
 *                                are text blocks; annotations collect on
 *                                the block's citations
 *   output item "function_call"  a tool_use block (call_id, name, the
 *                                arguments streamed as deltas)
 *   output item "reasoning"      a thinking block: summary (and reasoning
 *                                text) streamed as deltas; its signature is
 *                                the item's JSON as output_item.done sent it
 *                                (id, encrypted_content), kept opaque
 *   any other item               a server block: the item's JSON as
 *                                output_item.done sent it
 *
 * Blocks are keyed by output_index (items) and output_index with
 * content_index (content parts of a message). */
#include <string.h>

#include "stream.h"

#define RS_EVN(s) ((unsigned long long)(s)->n_events)
/* The key of an item (part 0) or of content part c of it (part c + 1). */
#define RS_PART_BITS 20
#define RS_MAX_OUTPUT ((uint64_t)1 << 40)
#define RS_MAX_PART (((uint64_t)1 << RS_PART_BITS) - 2)

static uint64_t rs_key(uint64_t out, uint64_t part) { return (out << RS_PART_BITS) | part; }

static int rs_clip(panto_str x) {
    return (int)pt_utf8_valid_prefix((const uint8_t *)x.ptr, x.len > 64 ? 64 : x.len);
}

/* Members of an event's data object, looked up in one pass. */
enum {
    RS_TYPE,
    RS_RESPONSE,
    RS_ITEM,
    RS_OUTPUT_INDEX,
    RS_CONTENT_INDEX,
    RS_DELTA,
    RS_PART,
    RS_TEXT,
    RS_ARGUMENTS,
    RS_ANNOTATION,
    RS_SUMMARY_INDEX,
    RS_REFUSAL,
    RS_CODE,
    RS_MESSAGE,
    RS_ERROR,
    RS_N
};
static const pt_name RS_ROOT_NAMES[RS_N] = {
    PT_NAME("type"),          PT_NAME("response"),      PT_NAME("item"),
    PT_NAME("output_index"),  PT_NAME("content_index"), PT_NAME("delta"),
    PT_NAME("part"),          PT_NAME("text"),          PT_NAME("arguments"),
    PT_NAME("annotation"),    PT_NAME("summary_index"), PT_NAME("refusal"),
    PT_NAME("code"),          PT_NAME("message"),       PT_NAME("error")};

/* An optional string: absent or null gives "", anything but a string is a
 * protocol violation naming what. */
static int rs_string(panto_stream *s, const jnode *n, const char *what, panto_str *out) {
    *out = pt_mkstr(NULL, 0);
    if (!n || n->type == JV_NULL)
        return 0;
    if (n->type != JV_STRING)
        return pt_protocol(s, "%s is not a string (event %llu)", what, RS_EVN(s));
    return pt_str(s, n, out);
}

/* rs_string's check alone, for a string not needed. */
static int rs_string_type(panto_stream *s, const jnode *n, const char *what) {
    if (n && n->type != JV_NULL && n->type != JV_STRING)
        return pt_protocol(s, "%s is not a string (event %llu)", what, RS_EVN(s));
    return 0;
}

static int rs_index(panto_stream *s, const jnode *n, const char *type, const char *name,
                    uint64_t max, uint64_t *out) {
    if (!n || pt_json_u64(n, out) != 0 || *out > max)
        return pt_protocol(s, "%s without a valid \"%s\" (event %llu)", type, name, RS_EVN(s));
    return 0;
}

static uint64_t rs_u64(const jdoc *d, const jnode *obj, const char *key) {
    uint64_t v = 0;
    const jnode *n = obj && obj->type == JV_OBJECT ? pt_json_get(d, obj, key) : NULL;
    if (!n || pt_json_u64(n, &v) != 0)
        return 0;
    return v;
}

/* response.usage: input_tokens counts the cached ones; reasoning tokens
 * are a part of output_tokens. */
static void rs_usage(panto_stream *s, const jnode *u) {
    const jdoc *d = &s->doc;
    if (!u || u->type != JV_OBJECT)
        return;
    uint64_t in = rs_u64(d, u, "input_tokens");
    uint64_t cached = rs_u64(d, pt_json_get(d, u, "input_tokens_details"), "cached_tokens");
    s->usage.input_tokens = in > cached ? in - cached : 0;
    s->usage.cache_read_tokens = cached;
    s->usage.cache_write_tokens = 0;
    s->usage.output_tokens = rs_u64(d, u, "output_tokens");
    s->usage.reasoning_tokens =
        rs_u64(d, pt_json_get(d, u, "output_tokens_details"), "reasoning_tokens");
}

static int rs_retryable(panto_str code) {
    return PT_EQ(code, "server_error") || PT_EQ(code, "rate_limit_exceeded") ||
           PT_EQ(code, "vector_store_timeout") || PT_EQ(code, "overloaded_error") ||
           PT_EQ(code, "timeout");
}

/* An error object {code, message} (also {type, ...}); `err` may be a
 * string or NULL. */
static int rs_error_object(panto_stream *s, const jnode *err, panto_str code, panto_str msg) {
    if (err && err->type == JV_OBJECT) {
        const jnode *n = pt_json_get(&s->doc, err, "message");
        if (n && n->type == JV_STRING && pt_str(s, n, &msg) != 0)
            return -1;
        n = pt_json_get(&s->doc, err, "code");
        if (!(n && n->type == JV_STRING))
            n = pt_json_get(&s->doc, err, "type");
        if (n && n->type == JV_STRING && pt_str(s, n, &code) != 0)
            return -1;
    } else if (err && err->type == JV_STRING && pt_str(s, err, &msg) != 0) {
        return -1;
    }
    return pt_provider_error(s, code, msg, rs_retryable(code));
}

/* The `error` event: {"type":"error","code":..,"message":..,"param":..}
 * (or the same inside "error"). */
static int rs_error_event(panto_stream *s, const jnode **r) {
    panto_str code = pt_mkstr(NULL, 0), msg = pt_mkstr(NULL, 0);
    if (r[RS_CODE] && r[RS_CODE]->type == JV_STRING && pt_str(s, r[RS_CODE], &code) != 0)
        return -1;
    if (r[RS_MESSAGE] && r[RS_MESSAGE]->type == JV_STRING && pt_str(s, r[RS_MESSAGE], &msg) != 0)
        return -1;
    return rs_error_object(s, r[RS_ERROR], code, msg);
}

/* response.created / in_progress / queued: the message starts. */
static int rs_start(panto_stream *s, const jnode *resp) {
    if (s->started)
        return 0;
    panto_str id = pt_mkstr(NULL, 0), model = pt_mkstr(NULL, 0);
    if (resp && resp->type == JV_OBJECT &&
        (rs_string(s, pt_json_get(&s->doc, resp, "id"), "response.id", &id) != 0 ||
         rs_string(s, pt_json_get(&s->doc, resp, "model"), "response.model", &model) != 0))
        return -1;
    return pt_message_start(s, id, model);
}

/* The slot of the open block for `key`: -1 with the error set when the key
 * is closed, -2 when it is unknown (*k NULL) or skipped (*k set). */
static int rs_slot(panto_stream *s, uint64_t key, const char *type, pt_key **kp) {
    pt_key *k = pt_key_find(s, key);
    *kp = k;
    if (!k || k->state == PT_KEY_SKIPPED)
        return -2;
    if (k->state == PT_KEY_CLOSED)
        return pt_protocol(s, "%s for an output item or content part that is done (event %llu)",
                           type, RS_EVN(s));
    return (int)k->slot;
}

static int rs_open(panto_stream *s, int32_t kind, uint64_t key, panto_str id, panto_str name) {
    int si = pt_block_open(s, kind, key, id, name);
    if (si < 0)
        return -1;
    pt_key *k = pt_key_add(s, key, PT_KEY_OPEN);
    if (!k)
        return -1;
    k->slot = (uint32_t)si;
    s->slots[si].keyed = 1;
    if (kind != PANTO_BLOCK_SERVER)
        s->rs_hint_slot = si;
    return si;
}

/* Open the block of output item `item` at output index `o`.  A message
 * item is no block (its content parts are): -2.  The slot, or -1. */
static int rs_open_item(panto_stream *s, const jnode *item, uint64_t o) {
    const jdoc *d = &s->doc;
    panto_str type;
    if (rs_string(s, pt_json_get(d, item, "type"), "item.type", &type) != 0)
        return -1;
    uint64_t key = rs_key(o, 0);
    panto_str none = pt_mkstr(NULL, 0);
    if (PT_EQ(type, "message")) {
        pt_key *k = pt_key_add(s, key, PT_KEY_SKIPPED);
        return k ? -2 : -1;
    }
    if (PT_EQ(type, "reasoning"))
        return rs_open(s, PANTO_BLOCK_THINKING, key, none, none);
    if (PT_EQ(type, "function_call")) {
        panto_str id, name, args;
        if (rs_string(s, pt_json_get(d, item, "call_id"), "function_call call_id", &id) != 0 ||
            rs_string(s, pt_json_get(d, item, "name"), "function_call name", &name) != 0 ||
            rs_string(s, pt_json_get(d, item, "arguments"), "function_call arguments", &args) != 0)
            return -1;
        s->rs_tools = 1;
        int si = rs_open(s, PANTO_BLOCK_TOOL_USE, key, id, name);
        if (si < 0 || pt_block_delta(s, si, args) != 0)
            return -1;
        return si;
    }
    /* web_search_call, file_search_call, code_interpreter_call, ... and
     * types not known yet: opaque, sent back as they came */
    int si = rs_open(s, PANTO_BLOCK_SERVER, key, none, none);
    if (si < 0 || pt_block_append(s, si, &s->slots[si].raw, item->p, item->len) != 0)
        return -1;
    return si;
}

static int rs_item_added(panto_stream *s, const jnode **r) {
    uint64_t o = 0;
    const jnode *item = r[RS_ITEM];
    if (rs_index(s, r[RS_OUTPUT_INDEX], "response.output_item.added", "output_index",
                 RS_MAX_OUTPUT, &o) != 0)
        return -1;
    if (!item || item->type != JV_OBJECT)
        return pt_protocol(s, "response.output_item.added without an \"item\" object (event %llu)",
                           RS_EVN(s));
    if (pt_key_find(s, rs_key(o, 0)))
        return pt_protocol(s, "response.output_item.added for output_index %llu twice (event %llu)",
                           (unsigned long long)o, RS_EVN(s));
    return rs_open_item(s, item, o) == -1 ? -1 : 0;
}

/* A content part: output_text and refusal are text blocks, other parts
 * (reasoning_text of a reasoning item, ...) carry nothing of their own. */
static int rs_part_is_text(panto_stream *s, const jnode *part, int *refusal) {
    const jnode *t = part && part->type == JV_OBJECT ? pt_json_get(&s->doc, part, "type") : NULL;
    *refusal = t && pt_json_string_eq(t, "refusal");
    return t && (*refusal || pt_json_string_eq(t, "output_text"));
}

/* Open the text block of content part (o, c) with the part's text so far. */
static int rs_open_part(panto_stream *s, const jnode *part, uint64_t o, uint64_t c, int refusal) {
    panto_str t;
    if (rs_string(s, pt_json_get(&s->doc, part, refusal ? "refusal" : "text"), "part text", &t) != 0)
        return -1;
    int si = rs_open(s, PANTO_BLOCK_TEXT, rs_key(o, c + 1), pt_mkstr(NULL, 0), pt_mkstr(NULL, 0));
    if (si < 0 || pt_block_delta(s, si, t) != 0)
        return -1;
    if (refusal && t.len)
        s->refusal_seen = 1;
    return si;
}

static int rs_part_indices(panto_stream *s, const jnode **r, const char *type, uint64_t *o,
                           uint64_t *c) {
    if (rs_index(s, r[RS_OUTPUT_INDEX], type, "output_index", RS_MAX_OUTPUT, o) != 0 ||
        rs_index(s, r[RS_CONTENT_INDEX], type, "content_index", RS_MAX_PART, c) != 0)
        return -1;
    return 0;
}

static int rs_part_added(panto_stream *s, const jnode **r) {
    uint64_t o = 0, c = 0;
    int refusal;
    if (rs_part_indices(s, r, "response.content_part.added", &o, &c) != 0)
        return -1;
    if (pt_key_find(s, rs_key(o, c + 1)))
        return pt_protocol(s, "response.content_part.added for a part that was added (event %llu)",
                           RS_EVN(s));
    if (!rs_part_is_text(s, r[RS_PART], &refusal))
        return pt_key_add(s, rs_key(o, c + 1), PT_KEY_SKIPPED) ? 0 : -1;
    return rs_open_part(s, r[RS_PART], o, c, refusal) < 0 ? -1 : 0;
}

/* The text block of part (o, c) for a delta, opened when the server sent
 * no content_part.added; -2 when the part is skipped. */
static int rs_text_slot(panto_stream *s, const jnode **r, const char *type) {
    uint64_t o = 0, c = 0;
    pt_key *k;
    if (rs_part_indices(s, r, type, &o, &c) != 0)
        return -1;
    int si = rs_slot(s, rs_key(o, c + 1), type, &k);
    if (si != -2 || k)
        return si;
    return rs_open(s, PANTO_BLOCK_TEXT, rs_key(o, c + 1), pt_mkstr(NULL, 0), pt_mkstr(NULL, 0));
}

/* output_text.delta / refusal.delta (field RS_DELTA), or their .done
 * (field RS_TEXT / RS_REFUSAL: the whole text, used only when no delta came). */
static int rs_text(panto_stream *s, const jnode **r, const char *type, int field, int refusal) {
    int si = rs_text_slot(s, r, type);
    if (si < 0)
        return si == -2 ? 0 : -1;
    panto_str t;
    if (field != RS_DELTA && s->slots[si].text.len)
        return rs_string_type(s, r[field], type); /* the text came as deltas */
    if (rs_string(s, r[field], type, &t) != 0)
        return -1;
    if (refusal && t.len)
        s->refusal_seen = 1;
    return pt_block_delta(s, si, t);
}

static int rs_annotation(panto_stream *s, const jnode **r) {
    const char *type = "response.output_text.annotation.added";
    const jnode *a = r[RS_ANNOTATION];
    if (!a || a->type != JV_OBJECT)
        return pt_protocol(s, "%s without an \"annotation\" object (event %llu)", type, RS_EVN(s));
    int si = rs_text_slot(s, r, type);
    if (si < 0)
        return si == -2 ? 0 : -1;
    pbuf *cites = &s->slots[si].cites;
    if (pt_block_append(s, si, cites, cites->len ? "," : "[", 1) != 0)
        return -1;
    return pt_block_append(s, si, &s->slots[si].cites, a->p, a->len);
}

/* Complete part (o, c) from its final `part` object: its text when no
 * delta came, its annotations when none streamed. */
static int rs_part_finish(panto_stream *s, const jnode *part, uint64_t o, uint64_t c,
                          const char *type) {
    pt_key *k;
    int refusal;
    int si = rs_slot(s, rs_key(o, c + 1), type, &k);
    if (si == -1 || (si == -2 && k))
        return si == -1 ? -1 : 0;
    if (si == -2) { /* never added: the part whole */
        if (!rs_part_is_text(s, part, &refusal))
            return pt_key_add(s, rs_key(o, c + 1), PT_KEY_SKIPPED) ? 0 : -1;
        if ((si = rs_open_part(s, part, o, c, refusal)) < 0)
            return -1;
    } else if (rs_part_is_text(s, part, &refusal) && s->slots[si].text.len == 0) {
        panto_str t;
        if (rs_string(s, pt_json_get(&s->doc, part, refusal ? "refusal" : "text"), "part text",
                      &t) != 0 ||
            pt_block_delta(s, si, t) != 0)
            return -1;
        if (refusal && t.len)
            s->refusal_seen = 1;
    }
    const jnode *an = part && part->type == JV_OBJECT ? pt_json_get(&s->doc, part, "annotations")
                                                      : NULL;
    if (an && an->type == JV_ARRAY && an->count > 0 && s->slots[si].cites.len == 0 &&
        pt_block_append(s, si, &s->slots[si].cites, an->p, an->len - 1) != 0)
        return -1;
    return pt_block_complete(s, si);
}

static int rs_part_done(panto_stream *s, const jnode **r) {
    uint64_t o = 0, c = 0;
    const char *type = "response.content_part.done";
    if (rs_part_indices(s, r, type, &o, &c) != 0)
        return -1;
    return rs_part_finish(s, r[RS_PART], o, c, type);
}

/* Deltas of an item's own block: function call arguments (tool_use),
 * reasoning summary or text (thinking).  `whole`: a .done event's full
 * text, used only when no delta came. */
static int rs_item_text(panto_stream *s, const jnode **r, const char *type, int32_t kind,
                        int field, int whole) {
    uint64_t o = 0;
    pt_key *k;
    if (rs_index(s, r[RS_OUTPUT_INDEX], type, "output_index", RS_MAX_OUTPUT, &o) != 0)
        return -1;
    int si = rs_slot(s, rs_key(o, 0), type, &k);
    if (si == -1)
        return -1;
    if (si == -2)
        return k ? 0 : pt_protocol(s, "%s for output_index %llu, which was never added (event %llu)",
                                   type, (unsigned long long)o, RS_EVN(s));
    if (s->slots[si].kind != kind)
        return pt_protocol(s, "%s for output_index %llu, which is a %s block (event %llu)", type,
                           (unsigned long long)o, panto_block_kind_name(s->slots[si].kind),
                           RS_EVN(s));
    panto_str t;
    if (whole && s->slots[si].text.len)
        return rs_string_type(s, r[field], type); /* the text came as deltas */
    if (rs_string(s, r[field], type, &t) != 0)
        return -1;
    return pt_block_delta(s, si, t);
}

/* A new summary part after the first: a blank line between the parts. */
static int rs_summary_part(panto_stream *s, const jnode **r) {
    uint64_t o = 0, part = 0;
    pt_key *k;
    const char *type = "response.reasoning_summary_part.added";
    if (rs_index(s, r[RS_OUTPUT_INDEX], type, "output_index", RS_MAX_OUTPUT, &o) != 0)
        return -1;
    int si = rs_slot(s, rs_key(o, 0), type, &k);
    if (si == -1)
        return -1;
    if (si == -2)
        return k ? 0 : pt_protocol(s, "%s for output_index %llu, which was never added (event %llu)",
                                   type, (unsigned long long)o, RS_EVN(s));
    if (s->slots[si].kind != PANTO_BLOCK_THINKING)
        return 0;
    if (r[RS_SUMMARY_INDEX])
        pt_json_u64(r[RS_SUMMARY_INDEX], &part);
    if (part > 0 && s->slots[si].text.len)
        return pt_block_delta(s, si, pt_mkstr("\n\n", 2));
    return 0;
}

static int rs_item_done(panto_stream *s, const jnode **r) {
    uint64_t o = 0;
    pt_key *k;
    const char *type = "response.output_item.done";
    const jnode *item = r[RS_ITEM];
    if (rs_index(s, r[RS_OUTPUT_INDEX], type, "output_index", RS_MAX_OUTPUT, &o) != 0)
        return -1;
    if (!item || item->type != JV_OBJECT)
        return pt_protocol(s, "%s without an \"item\" object (event %llu)", type, RS_EVN(s));
    int si = rs_slot(s, rs_key(o, 0), type, &k);
    if (si == -1)
        return -1;
    if (si == -2 && !k) { /* never added: the item whole */
        si = rs_open_item(s, item, o);
        if (si == -1)
            return -1;
    }
    if (si == -2) {
        /* a message: its parts, in order, each completed (whole when no
         * event announced it) */
        const jnode *content = pt_json_get(&s->doc, item, "content");
        uint64_t c = 0;
        if (content && content->type == JV_ARRAY)
            for (const jnode *p = pt_json_first(&s->doc, content); p && c <= RS_MAX_PART;
                 p = pt_json_next(&s->doc, p), c++) {
                pt_key *pk = pt_key_find(s, rs_key(o, c + 1));
                if (pk && pk->state != PT_KEY_OPEN)
                    continue;
                if (rs_part_finish(s, p, o, c, type) != 0)
                    return -1;
            }
        /* parts open but missing from the item */
        for (size_t i = 0; i < s->n_keys; i++) {
            pt_key *pk = &s->keys[i];
            if ((pk->key >> RS_PART_BITS) == o && pk->state == PT_KEY_OPEN &&
                pt_block_complete(s, (int)pk->slot) != 0)
                return -1;
        }
        return 0;
    }
    pt_slot *sl = &s->slots[si];
    if (sl->kind == PANTO_BLOCK_THINKING) {
        pt_pbuf_clear(&sl->sig);
        if (pt_block_append(s, si, &sl->sig, item->p, item->len) != 0)
            return -1;
    } else if (sl->kind == PANTO_BLOCK_TOOL_USE && sl->text.len == 0) {
        panto_str args;
        if (rs_string(s, pt_json_get(&s->doc, item, "arguments"), "function_call arguments",
                      &args) != 0 ||
            pt_block_delta(s, si, args) != 0)
            return -1;
    } else if (sl->kind == PANTO_BLOCK_SERVER) {
        pt_pbuf_clear(&sl->raw);
        if (pt_block_append(s, si, &sl->raw, item->p, item->len) != 0)
            return -1;
    }
    return pt_block_complete(s, si);
}

/* response.completed / response.incomplete: the terminal event. */
static int rs_finish(panto_stream *s, const jnode *resp, int incomplete) {
    const jdoc *d = &s->doc;
    if (resp && resp->type == JV_OBJECT)
        rs_usage(s, pt_json_get(d, resp, "usage"));
    panto_str raw = pt_mkstr(NULL, 0);
    if (incomplete) {
        const jnode *det = resp && resp->type == JV_OBJECT
                               ? pt_json_get(d, resp, "incomplete_details")
                               : NULL;
        if (det && det->type == JV_OBJECT &&
            rs_string(s, pt_json_get(d, det, "reason"), "incomplete_details.reason", &raw) != 0)
            return -1;
        if (PT_EQ(raw, "max_output_tokens"))
            s->stop = PANTO_STOP_LENGTH;
        else if (PT_EQ(raw, "content_filter"))
            s->stop = PANTO_STOP_REFUSAL;
        else
            s->stop = PANTO_STOP_OTHER;
        if (raw.len == 0)
            raw = pt_mkstr("incomplete", 10);
    } else {
        const jnode *st = resp && resp->type == JV_OBJECT ? pt_json_get(d, resp, "status") : NULL;
        if (rs_string(s, st, "response.status", &raw) != 0)
            return -1;
        if (raw.len == 0)
            raw = pt_mkstr("completed", 9);
        s->stop = s->rs_tools ? PANTO_STOP_TOOL_USE
                  : s->refusal_seen ? PANTO_STOP_REFUSAL
                                    : PANTO_STOP_STOP;
    }
    if (pt_set_stop_raw(s, raw) != 0 || pt_complete_all(s) != 0)
        return -1;
    return pt_message_complete(s);
}

int pt_responses_event(panto_stream *s, const sse_event *ev) {
    size_t n = ev->data_len;
    const char *p = ev->data;
    while (n && (p[0] == ' ' || p[0] == '\t' || p[0] == '\n' || p[0] == '\r'))
        p++, n--;
    if (n == 0)
        return 0; /* an empty data event carries nothing */
    /* The `.done` events and response.completed repeat the texts of the
     * blocks (a message's text, a call's arguments, a summary): the reader
     * checks a long string against them (the last block opened first, then
     * the other open ones -- parallel function calls stream before any is
     * done -- then the last completed ones), or against the last long
     * string it read, instead of scanning it (json.h).  Part of the fast
     * paths: off with them, so that the tests comparing both
     * (tests/c/test_fast.c, the fuzz targets) cover it. */
    jdoc *d = &s->doc;
    d->n_hints = 0;
    if (s->fast) {
        for (size_t k = 0; k <= s->n_slots && d->n_hints < PT_JSON_HINTS; k++) {
            /* k == 0: the last block opened; then the others in order */
            int si = k == 0 ? s->rs_hint_slot : (int)k - 1;
            if (si < 0 || (k > 0 && si == s->rs_hint_slot))
                continue;
            const pt_slot *ts = &s->slots[si];
            if (ts->state != PT_SLOT_FREE && ts->kind != PANTO_BLOCK_SERVER &&
                ts->text.len >= PT_JSON_SEEN_MIN) {
                d->hint[d->n_hints] = ts->text.p;
                d->hint_len[d->n_hints++] = ts->text.len;
            }
        }
        for (unsigned k = 1; k <= PT_RS_TEXTS; k++) { /* the newest first */
            const pbuf *t = &s->rs_texts[(s->rs_texts_next + PT_RS_TEXTS - k) % PT_RS_TEXTS];
            if (t->len >= PT_JSON_SEEN_MIN && d->n_hints < PT_JSON_HINTS) {
                d->hint[d->n_hints] = t->p;
                d->hint_len[d->n_hints++] = t->len;
            }
        }
    }
    d->seen_on = s->fast != 0;
    const jnode *root = pt_parse_json(s, ev);
    d->n_hints = 0;
    d->seen_on = 0;
    if (!root)
        return -1;
    if (root->type != JV_OBJECT)
        return pt_protocol(s, "event %llu (line %llu) is not a JSON object", RS_EVN(s),
                           (unsigned long long)s->ev_line);
    const jnode *r[RS_N];
    if (pt_members(s, root, RS_ROOT_NAMES, RS_N, r) != 0)
        return -1;
    panto_str type;
    if (!r[RS_TYPE] || r[RS_TYPE]->type != JV_STRING)
        return pt_protocol(s, "event %llu (line %llu) has no \"type\" string", RS_EVN(s),
                           (unsigned long long)s->ev_line);
    if (pt_str(s, r[RS_TYPE], &type) != 0)
        return -1;

    if (PT_EQ(type, "error"))
        return rs_error_event(s, r);
    if (PT_EQ(type, "response.failed")) {
        const jnode *resp = r[RS_RESPONSE];
        const jnode *e = resp && resp->type == JV_OBJECT ? pt_json_get(&s->doc, resp, "error") : NULL;
        return rs_error_object(s, e, pt_mkstr("response.failed", 15),
                               pt_mkstr("the response failed", 19));
    }
    if (PT_EQ(type, "response.created") || PT_EQ(type, "response.in_progress") ||
        PT_EQ(type, "response.queued"))
        return rs_start(s, r[RS_RESPONSE]);
    if (type.len < 9 || memcmp(type.ptr, "response.", 9) != 0)
        return 0; /* keepalive, and event types not known yet */
    if (!s->started)
        return pt_protocol(s, "%.*s before response.created (event %llu)", rs_clip(type),
                           type.ptr, RS_EVN(s));
    if (PT_EQ(type, "response.output_text.delta"))
        return rs_text(s, r, "response.output_text.delta", RS_DELTA, 0);
    if (PT_EQ(type, "response.reasoning_summary_text.delta"))
        return rs_item_text(s, r, "response.reasoning_summary_text.delta", PANTO_BLOCK_THINKING,
                            RS_DELTA, 0);
    if (PT_EQ(type, "response.reasoning_text.delta"))
        return rs_item_text(s, r, "response.reasoning_text.delta", PANTO_BLOCK_THINKING, RS_DELTA,
                            0);
    if (PT_EQ(type, "response.function_call_arguments.delta"))
        return rs_item_text(s, r, "response.function_call_arguments.delta", PANTO_BLOCK_TOOL_USE,
                            RS_DELTA, 0);
    if (PT_EQ(type, "response.function_call_arguments.done"))
        return rs_item_text(s, r, "response.function_call_arguments.done", PANTO_BLOCK_TOOL_USE,
                            RS_ARGUMENTS, 1);
    if (PT_EQ(type, "response.refusal.delta"))
        return rs_text(s, r, "response.refusal.delta", RS_DELTA, 1);
    if (PT_EQ(type, "response.output_text.done"))
        return rs_text(s, r, "response.output_text.done", RS_TEXT, 0);
    if (PT_EQ(type, "response.refusal.done"))
        return rs_text(s, r, "response.refusal.done", RS_REFUSAL, 1);
    if (PT_EQ(type, "response.output_text.annotation.added"))
        return rs_annotation(s, r);
    if (PT_EQ(type, "response.output_item.added"))
        return rs_item_added(s, r);
    if (PT_EQ(type, "response.output_item.done"))
        return rs_item_done(s, r);
    if (PT_EQ(type, "response.content_part.added"))
        return rs_part_added(s, r);
    if (PT_EQ(type, "response.content_part.done"))
        return rs_part_done(s, r);
    if (PT_EQ(type, "response.reasoning_summary_part.added"))
        return rs_summary_part(s, r);
    if (PT_EQ(type, "response.completed"))
        return rs_finish(s, r[RS_RESPONSE], 0);
    if (PT_EQ(type, "response.incomplete"))
        return rs_finish(s, r[RS_RESPONSE], 1);
    /* reasoning_summary_text.done, reasoning_summary_part.done,
     * reasoning_text.done (their text came as deltas), built-in tools'
     * progress (web_search_call.searching, ...), and the rest */
    return 0;
}

/* ---- the fast path (stream.h) ----
 *
 * The delta events, nearly every event of a response, as OpenAI sends them:
 *
 *   event: response.output_text.delta
 *   data: {"type":"response.output_text.delta","sequence_number":N,"item_id":"msg_..",
 *          "output_index":O,"content_index":C,"delta":"..","logprobs":[],"obfuscation":".."}
 *
 * (also function_call_arguments.delta, reasoning_summary_text.delta and
 * reasoning_text.delta; members in any order, spaces or tabs between
 * tokens), for a block that is open and of the kind the type wants.  Other
 * members may hold any scalar or an empty array.  Anything else is left to
 * pt_responses_event. */

enum { RSF_TEXT = 1, RSF_ARGS, RSF_SUMMARY, RSF_REASONING };

typedef struct {
    int type;              /* RSF_* */
    int has_o, has_c;
    uint64_t o, c;         /* output_index, content_index */
    size_t st, e;          /* the delta string between its quotes; st 0: none */
    int esc;
    size_t type_st, type_e; /* the type string */
    /* template matches: where the sequence number's digits are in the
     * event when they differ from the template's (0: they do not), whether
     * they are a plain integer, and whether there are as many */
    size_t seq_st;
    int seq_plain, seq_moved;
} rs_walk;

#define RSF_MAX_MEMBERS 64

/* The template of the next events (the prefix cache, stream.h): the last
 * event a walk read, from its event line to the end of its JSON object,
 * and where its values are -- every string but the type, every number.
 * Consecutive deltas differ only there (the sequence number, the text,
 * the obfuscation padding), so the next event is compared with the
 * template and only its values are scanned. */
enum { RSH_STR, RSH_DELTA, RSH_NUM, RSH_SEQ, RSH_O, RSH_C };
#define RSF_MAX_HOLES 24
typedef struct {
    uint32_t st, e; /* a string's bytes between its quotes; a number's digits */
    uint8_t kind;   /* RSH_* */
    uint8_t esc;
} rs_hole;

typedef struct {
    rs_walk w;
    uint32_t json_off; /* where the JSON object starts in the event */
    uint32_t line_len; /* its event line, with the '\n' */
    unsigned n_holes;  /* > RSF_MAX_HOLES: too many, not kept */
    unsigned seq_hole; /* the sequence number's hole, or RSF_MAX_HOLES */
    int seq_ok;        /* its digits are a plain integer: one can be added */
    rs_hole holes[RSF_MAX_HOLES + 1]; /* + a sentinel past every byte */
} rs_template;

_Static_assert(sizeof(rs_template) <= PT_FCACHE_STATE, "rs_template fits the cache");

static void rs_hole_add(rs_template *t, size_t st, size_t e, int kind, int esc) {
    if (t && t->n_holes < RSF_MAX_HOLES && e <= UINT32_MAX) {
        t->holes[t->n_holes] = (rs_hole){(uint32_t)st, (uint32_t)e, (uint8_t)kind, (uint8_t)esc};
        if (kind == RSH_SEQ)
            t->seq_hole = t->n_holes;
    }
    if (t)
        t->n_holes++;
}

/* A non-negative integer at b[i] of at most 18 digits: the index past it,
 * or 0. */
static size_t rs_fast_u64(const uint8_t *b, size_t n, size_t i, uint64_t *out) {
    size_t d0 = i;
    uint64_t v = 0;
    while (i < n && b[i] >= '0' && b[i] <= '9' && i - d0 < 19)
        v = v * 10 + (uint64_t)(b[i++] - '0');
    if (i == d0 || i - d0 > 18 || (b[d0] == '0' && i - d0 > 1))
        return 0;
    if (i < n && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'))
        return 0;
    *out = v;
    return i;
}

static int rs_fast_type(const uint8_t *p, size_t len) {
#define RSF_IS(lit) (len == sizeof(lit) - 1 && memcmp(p, lit, sizeof(lit) - 1) == 0)
    if (RSF_IS("response.output_text.delta"))
        return RSF_TEXT;
    if (RSF_IS("response.function_call_arguments.delta"))
        return RSF_ARGS;
    if (RSF_IS("response.reasoning_summary_text.delta"))
        return RSF_SUMMARY;
    if (RSF_IS("response.reasoning_text.delta"))
        return RSF_REASONING;
#undef RSF_IS
    return 0;
}

/* Walk the JSON object at p[0] ('{'): the index just past it with *w
 * filled, or 0. */
static PT_HOT_INLINE size_t rs_fast_walk(const uint8_t *p, size_t n, uint32_t max_depth, rs_walk *w,
                                         rs_template *t, size_t off) {
    size_t i = pt_fws(p, n, 1);
    unsigned members = 0;
    memset(w, 0, sizeof *w);
    if (i >= n || p[i] == '}')
        return 0;
    for (;;) {
        if (i >= n || p[i] != '"' || ++members > RSF_MAX_MEMBERS)
            return 0;
        size_t ks = i + 1, ke = ks;
        int esc = 0;
        if (pt_json_scan_str(p, n, &ke, &esc) != 0 || esc)
            return 0;
        size_t kl = ke - ks;
        i = pt_fws(p, n, ke + 1);
        if (i >= n || p[i] != ':')
            return 0;
        i = pt_fws(p, n, i + 1);
        if (i >= n)
            return 0;
        const uint8_t *k = p + ks;
#define RSF_KEY(lit) (kl == sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)
        if (RSF_KEY("type")) {
            size_t e = i + 1;
            esc = 0;
            if (w->type || p[i] != '"' || pt_json_scan_str(p, n, &e, &esc) != 0 || esc ||
                !(w->type = rs_fast_type(p + i + 1, e - i - 1)))
                return 0;
            w->type_st = i + 1;
            w->type_e = e;
            i = e + 1;
        } else if (RSF_KEY("delta")) {
            size_t e = i + 1;
            esc = 0;
            if (w->st || p[i] != '"' || pt_json_scan_str(p, n, &e, &esc) != 0)
                return 0;
            w->st = i + 1;
            w->e = e;
            w->esc = esc;
            rs_hole_add(t, off + i + 1, off + e, RSH_DELTA, esc);
            i = e + 1;
        } else if (RSF_KEY("output_index")) {
            size_t d0 = i;
            if (w->has_o || !(i = rs_fast_u64(p, n, i, &w->o)))
                return 0;
            w->has_o = 1;
            rs_hole_add(t, off + d0, off + i, RSH_O, 0);
        } else if (RSF_KEY("content_index")) {
            size_t d0 = i;
            if (w->has_c || !(i = rs_fast_u64(p, n, i, &w->c)))
                return 0;
            w->has_c = 1;
            rs_hole_add(t, off + d0, off + i, RSH_C, 0);
        } else if (p[i] == '[') {
            /* logprobs: [] only */
            size_t j = pt_fws(p, n, i + 1);
            if (max_depth < 2 || j >= n || p[j] != ']')
                return 0;
            i = j + 1;
        } else if (RSF_KEY("response") || RSF_KEY("item") || RSF_KEY("part") ||
                   RSF_KEY("error") || RSF_KEY("annotation")) {
            return 0; /* members the general path reads for other types */
        } else {
            size_t v0 = i;
            if (!(i = pt_fskip_scalar(p, n, i)))
                return 0;
            if (p[v0] == '"')
                rs_hole_add(t, off + v0 + 1, off + i - 1, RSH_STR, 0);
            else if (p[v0] == '-' || (p[v0] >= '0' && p[v0] <= '9')) {
                int seq = RSF_KEY("sequence_number");
                rs_hole_add(t, off + v0, off + i, seq ? RSH_SEQ : RSH_NUM, 0);
                if (seq && t) { /* a plain integer: digits, no leading zero */
                    size_t j = v0;
                    while (j < i && p[j] >= '0' && p[j] <= '9')
                        j++;
                    t->seq_ok = j == i && p[v0] != '0';
                }
            }
        }
#undef RSF_KEY
        i = pt_fws(p, n, i);
        if (i >= n)
            return 0;
        if (p[i] == '}')
            break;
        if (p[i] != ',')
            return 0;
        i = pt_fws(p, n, i + 1);
    }
    if (!w->type || !w->st || !w->has_o || w->o > RS_MAX_OUTPUT ||
        (w->type == RSF_TEXT && (!w->has_c || w->c > RS_MAX_PART)))
        return 0;
    return i + 1;
}

/* The open slot the walked delta goes to, or -1 (general path). */
static PT_HOT_INLINE int rs_fast_slot(panto_stream *s, const rs_walk *w) {
    uint64_t key = w->type == RSF_TEXT ? rs_key(w->o, w->c + 1) : rs_key(w->o, 0);
    int32_t kind = w->type == RSF_TEXT   ? PANTO_BLOCK_TEXT
                   : w->type == RSF_ARGS ? PANTO_BLOCK_TOOL_USE
                                         : PANTO_BLOCK_THINKING;
    int si;
    if (s->an_gen == s->blk_gen && s->an_idx == key) {
        si = (int)s->an_slot;
    } else {
        pt_key *k = pt_key_find(s, key);
        if (!k || k->state != PT_KEY_OPEN)
            return -1;
        si = (int)k->slot;
        s->an_idx = key;
        s->an_slot = k->slot;
        s->an_gen = s->blk_gen;
    }
    return s->slots[si].kind == kind ? si : -1;
}

static PT_HOT_INLINE int rs_fast_apply(panto_stream *s, const uint8_t *p, const rs_walk *w, int si) {
    panto_str t;
    if (pt_fast_str(s, p, w->st, w->e, w->esc, &t) != 0)
        return -1;
    return pt_fast_delta_to(s, si, t, 1) != 0 ? -1 : 1;
}

/* The event at b[0..n) against the template t[0..tl): the index just
 * past its JSON object with *w filled, or 0 when it differs from the
 * template outside the values (or a new number in it is not valid: a walk
 * decides then), or RS_ENDED when b[0..n) equals a prefix of the template
 * outside the values compared so far (the event is cut by the end of the
 * input: not worth a walk). */
#define RS_ENDED SIZE_MAX
/* ... or RS_NO_WALK when a string value of the event that differs from the
 * template's is not valid up to its closing quote (most often: the input
 * ends in it): a walk, reading the same bytes up to the same value, would
 * fail there too. */
#define RS_NO_WALK (SIZE_MAX - 1)
static size_t rs_template_match(const uint8_t *t, size_t tl, const rs_template *tpl,
                                const uint8_t *b, size_t n, rs_walk *w) {
    const rs_hole *hole = tpl->holes;
    size_t ti = 0, ni = 0;
    /* what the caller reads of *w (the delta's place is set when its hole
     * is passed: always, when the event matches) -- not a copy of the
     * whole walk, a cost for every delta */
    w->type = tpl->w.type;
    w->o = tpl->w.o;
    w->c = tpl->w.c;
    w->st = w->e = w->seq_st = 0;
    w->esc = w->seq_plain = w->seq_moved = 0;
    for (;;) {
        size_t left = tl - ti < n - ni ? tl - ti : n - ni;
        size_t k = pt_mismatch(t + ti, b + ni, left);
        size_t at = ti + k;
        /* values that matched whole: moved by ni - ti */
        for (; hole->e < at; hole++) {
            size_t st = hole->st + ni - ti, e = hole->e + ni - ti;
            if (hole->kind == RSH_DELTA) {
                w->st = st - tpl->json_off;
                w->e = e - tpl->json_off;
                w->esc = hole->esc;
            } /* (an index or a sequence number that matched whole is the
               * template's: in *w) */
        }
        if (at == tl)
            return ni + k;
        if (k == left)
            return RS_ENDED;
        if (hole->st > at)
            return 0; /* it differs outside a value */
        /* the value of this hole differs: scan the event's */
        size_t st = hole->st + ni - ti, e = st;
        int esc = 0;
        if (hole->kind <= RSH_DELTA) {
            if (pt_json_scan_str(b, n, &e, &esc) != 0)
                return RS_NO_WALK;
            if (hole->kind == RSH_DELTA) {
                w->st = st - tpl->json_off;
                w->e = e - tpl->json_off;
                w->esc = esc;
            }
        } else if (hole->kind == RSH_NUM || hole->kind == RSH_SEQ) {
            /* (a sequence number: digits, the full grammar when more follows) */
            int plain = 1;
            while (e < n && b[e] >= '0' && b[e] <= '9')
                e++;
            if (e == st || b[st] == '0' || (e < n && (b[e] == '.' || b[e] == 'e' || b[e] == 'E'))) {
                e = st;
                plain = 0;
                if (pt_json_scan_num(b, n, &e) != 0)
                    return 0;
            }
            if (hole->kind == RSH_SEQ) {
                w->seq_st = st;
                w->seq_plain = plain;
                w->seq_moved = e - st != hole->e - hole->st;
            }
        } else {
            uint64_t v;
            if (!(e = rs_fast_u64(b, n, st, &v)))
                return 0;
            if (hole->kind == RSH_O)
                w->o = v;
            else
                w->c = v;
        }
        ni = e; /* both at the closing quote, or just past the number */
        ti = hole->e;
        hole++;
    }
}

/* The template stands for the event just decoded, whose sequence number
 * is at b[w->seq_st..) when it differs from the template's (same length):
 * the next delta most likely carries that number plus one, so the template
 * gets it and the next match runs through it instead of stopping there.
 * Only a plain integer that keeps its number of digits is counted on (the
 * template must hold valid JSON); otherwise the next event differs there
 * and its number is scanned. */
static PT_HOT_INLINE void rs_seq_predict(pt_fcache *fc, const uint8_t *b, const rs_walk *w) {
    rs_template *tpl = (rs_template *)fc->state;
    if (tpl->seq_hole >= tpl->n_holes)
        return;
    const rs_hole *h = &tpl->holes[tpl->seq_hole];
    uint8_t *d = fc->bytes.p + h->st;
    size_t len = h->e - h->st, k = len;
    if (w && w->seq_st) {
        tpl->seq_ok = w->seq_plain;
        for (size_t j = 0; j < len; j++)
            d[j] = b[w->seq_st + j];
    }
    if (!tpl->seq_ok)
        return;
    if (d[len - 1] != '9') { /* nine times in ten */
        d[len - 1]++;
        return;
    }
    while (k > 0 && d[k - 1] == '9')
        k--;
    if (k == 0) { /* 99 + 1 has another digit */
        tpl->seq_ok = 0;
        return;
    }
    d[k - 1]++;
    while (k < len)
        d[k++] = '0';
}

int pt_responses_fast(panto_stream *s, const uint8_t *b, size_t n) {
    static const char head[] = "event: response.";
    pt_fcache *fc = &s->fcache;
    if (!s->started)
        return 0;
    if (fc->wire == PANTO_WIRE_OPENAI_RESPONSES) {
        const rs_template *tpl = (const rs_template *)fc->state;
        rs_walk w;
        size_t i = rs_template_match(fc->bytes.p, fc->bytes.len, tpl, b, n, &w);
        if (i == RS_ENDED) /* no line end past the event line: wait */
            return pt_fast_wait(s, n, n >= tpl->line_len ? tpl->line_len : 0);
        if (i == RS_NO_WALK)
            return 0;
        /* (a sequence number of another length: a walk makes a new template) */
        if (i && !w.seq_moved && w.o <= RS_MAX_OUTPUT &&
            (w.type != RSF_TEXT || w.c <= RS_MAX_PART)) {
            i = pt_fws(b, n, i);
            if (n - i >= 2 && b[i] == '\n' && b[i + 1] == '\n' && i + 2 <= s->opt.max_event_bytes) {
                int si = rs_fast_slot(s, &w);
                if (si < 0)
                    return 0;
                pt_fast_commit(s, i + 2, i + 1, 3);
                int r = rs_fast_apply(s, b + tpl->json_off, &w, si);
                if (r > 0)
                    rs_seq_predict(fc, b, &w);
                return r;
            }
        }
    }
    if (!pt_fstarts(b, n, 0, head, sizeof head - 1))
        return 0;
    const uint8_t *nl = memchr(b + sizeof head - 1, '\n', n - (sizeof head - 1));
    if (!nl)
        return 0;
    size_t name_st = 7, name_e = (size_t)(nl - b), i = name_e + 1;
    if (!PT_FLIT(b, n, i, "data:"))
        return 0;
    i += 5;
    if (i < n && b[i] == ' ')
        i++;
    i = pt_fws(b, n, i);
    if (i >= n || b[i] != '{')
        return 0;
    rs_template tpl;
    rs_walk w;
    const uint8_t *p = b + i;
    int stored = 0;
    tpl.n_holes = 0;
    tpl.seq_hole = RSF_MAX_HOLES;
    tpl.seq_ok = 0;
    size_t end = rs_fast_walk(p, n - i, s->opt.max_json_depth, &w, &tpl, i);
    if (!end)
        return 0;
    /* the event line names the type */
    if (name_e - name_st != w.type_e - w.type_st ||
        memcmp(b + name_st, p + w.type_st, name_e - name_st) != 0)
        return 0;
    if (tpl.n_holes <= RSF_MAX_HOLES && i <= UINT32_MAX) {
        tpl.w = w;
        tpl.json_off = (uint32_t)i;
        tpl.line_len = (uint32_t)name_e + 1;
        /* the sentinel: after every byte */
        tpl.holes[tpl.n_holes] = (rs_hole){UINT32_MAX, UINT32_MAX, RSH_STR, 0};
        pt_fcache_store(s, PANTO_WIRE_OPENAI_RESPONSES, b, i + end, &tpl, sizeof tpl);
        stored = 1;
    }
    i = pt_fws(b, n, i + end);
    /* the data line ends here, and a blank line ends the event */
    if (n - i < 2 || b[i] != '\n' || b[i + 1] != '\n' || i + 2 > s->opt.max_event_bytes)
        return 0;
    int si = rs_fast_slot(s, &w);
    if (si < 0)
        return 0;
    pt_fast_commit(s, i + 2, i + 1, 3);
    int r = rs_fast_apply(s, p, &w, si);
    if (r > 0 && stored && fc->wire == PANTO_WIRE_OPENAI_RESPONSES)
        rs_seq_predict(fc, b, NULL);
    return r;
}

int pt_responses_fast_event(panto_stream *s, const sse_event *ev) {
    const uint8_t *b = (const uint8_t *)ev->data;
    size_t n = ev->data_len, i = pt_fws(b, n, 0);
    if (!s->started || i >= n || b[i] != '{')
        return 0;
    rs_walk w;
    const uint8_t *p = b + i;
    size_t end = rs_fast_walk(p, n - i, s->opt.max_json_depth, &w, NULL, 0);
    if (!end || pt_fws(b, n, i + end) != n)
        return 0;
    int si = rs_fast_slot(s, &w);
    if (si < 0)
        return 0;
    return rs_fast_apply(s, p, &w, si);
}
