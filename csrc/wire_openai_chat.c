/* wire_openai_chat.c -- OpenAI chat completions stream (chat.completion.chunk
 * objects in `data:` lines, `data: [DONE]` at the end) decoded into panto
 * events.  See ARCHITECTURE.md section 2 and reference/FACTS.md. */
#include <string.h>

#include "stream.h"

/* Keys for tool calls that arrive without an `index` (some compatible
 * servers), and for the legacy delta.function_call. */
#define SYNTH_KEY_BASE ((uint64_t)1 << 63)
#define FUNCTION_CALL_KEY (~(uint64_t)0)

static int oa_is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

/* An optional string value: absent or null gives "", a string its value,
 * anything else is a protocol violation naming where.key. */
static int opt_string(panto_stream *s, const jnode *n, const char *where, const char *key,
                      panto_str *out) {
    *out = pt_mkstr(NULL, 0);
    if (!n || n->type == JV_NULL)
        return 0;
    if (n->type != JV_STRING)
        return pt_protocol(s, "%s.%s in event %llu is not a string", where, key,
                           (unsigned long long)s->n_events);
    return pt_str(s, n, out);
}

static uint64_t opt_u64(const jdoc *d, const jnode *obj, const char *key) {
    uint64_t v = 0;
    const jnode *n = obj && obj->type == JV_OBJECT ? pt_json_get(d, obj, key) : NULL;
    if (!n || pt_json_u64(n, &v) != 0)
        return 0;
    return v;
}

static int oa_retryable_type(panto_str t) {
    static const char *const kinds[] = {"server_error", "rate_limit_exceeded", "rate_limit_error",
                                        "overloaded_error", "api_error", "timeout"};
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (pt_eq(t, kinds[i]))
            return 1;
    return 0;
}

static int provider_error(panto_stream *s, const jnode *err) {
    panto_str msg = pt_mkstr(NULL, 0), type = pt_mkstr(NULL, 0), code = pt_mkstr(NULL, 0);
    if (err->type == JV_STRING) {
        if (pt_str(s, err, &msg) != 0)
            return -1;
        return pt_provider_error(s, type, msg, 0);
    }
    const jnode *n = pt_json_get(&s->doc, err, "message");
    if (n && n->type == JV_STRING && pt_str(s, n, &msg) != 0)
        return -1;
    n = pt_json_get(&s->doc, err, "type");
    if (n && n->type == JV_STRING && pt_str(s, n, &type) != 0)
        return -1;
    n = pt_json_get(&s->doc, err, "code");
    if (n && n->type == JV_STRING) {
        if (pt_str(s, n, &code) != 0)
            return -1;
    } else if (n && n->type == JV_NUMBER) {
        code = pt_mkstr(n->p, n->len);
    }
    int retry = oa_retryable_type(type) || oa_retryable_type(code);
    return pt_provider_error(s, type.len ? type : code, msg, retry);
}

/* Text, refusal or reasoning text for the single open text/thinking block. */
static int tt_delta(panto_stream *s, int32_t kind, panto_str text) {
    if (text.len == 0)
        return 0;
    if (s->tt_slot >= 0 && s->slots[s->tt_slot].kind != kind) {
        if (pt_block_complete(s, s->tt_slot) != 0)
            return -1;
    }
    if (s->tt_slot < 0) {
        int si = pt_block_open(s, kind, 0, pt_mkstr(NULL, 0), pt_mkstr(NULL, 0));
        if (si < 0)
            return -1;
        s->tt_slot = si;
    }
    return pt_block_delta(s, s->tt_slot, text);
}

/* The arguments of a tool call fragment: a string (the normal case) or, from
 * some compatible servers, the arguments object itself. */
/* The arguments of a tool call fragment: a string (the normal case) or, from
 * some compatible servers, the arguments object itself. */
static int tool_args(panto_stream *s, const jnode *n, panto_str *out) {
    *out = pt_mkstr(NULL, 0);
    if (!n || n->type == JV_NULL)
        return 0;
    if (n->type == JV_STRING)
        return pt_str(s, n, out);
    if (n->type == JV_OBJECT) {
        *out = pt_mkstr(n->p, n->len);
        return 0;
    }
    return pt_protocol(s, "tool call function.arguments in event %llu is not a string",
                       (unsigned long long)s->n_events);
}

static int tool_fragment(panto_stream *s, uint64_t key, int has_key, panto_str id,
                         panto_str name, panto_str args) {
    if (!has_key) {
        if (id.len || s->last_tool_slot < 0) {
            key = SYNTH_KEY_BASE + s->synth_key++;
        } else {
            return pt_block_delta(s, s->last_tool_slot, args);
        }
    }
    pt_key *k = pt_key_find(s, key);
    if (!k) {
        if (s->tt_slot >= 0 && pt_block_complete(s, s->tt_slot) != 0)
            return -1;
        int si = pt_block_open(s, PANTO_BLOCK_TOOL_USE, key, id, name);
        if (si < 0)
            return -1;
        k = pt_key_add(s, key, PT_KEY_OPEN);
        if (!k)
            return -1;
        k->slot = (uint32_t)si;
        s->slots[si].keyed = 1;
        s->last_tool_slot = si;
        return pt_block_delta(s, si, args);
    }
    if (k->state != PT_KEY_OPEN) {
        if (key >= SYNTH_KEY_BASE)
            return pt_protocol(s, "function_call continued after finish_reason (event %llu)",
                               (unsigned long long)s->n_events);
        return pt_protocol(s, "tool call index %llu continued after finish_reason (event %llu)",
                           (unsigned long long)key, (unsigned long long)s->n_events);
    }
    s->last_tool_slot = (int)k->slot;
    return pt_block_delta(s, (int)k->slot, args);
}

static const pt_name TC_NAMES[] = {PT_NAME("index"), PT_NAME("id"), PT_NAME("function")};
static const pt_name FN_NAMES[] = {PT_NAME("name"), PT_NAME("arguments")};

static int tool_calls(panto_stream *s, const jnode *arr) {
    if (arr->type != JV_ARRAY)
        return pt_protocol(s, "delta.tool_calls in event %llu is not an array",
                           (unsigned long long)s->n_events);
    for (const jnode *tc = pt_json_first(&s->doc, arr); tc; tc = pt_json_next(&s->doc, tc)) {
        if (tc->type != JV_OBJECT)
            return pt_protocol(s, "delta.tool_calls[] in event %llu is not an object",
                               (unsigned long long)s->n_events);
        const jnode *m[3], *f[2];
        if (pt_members(s, tc, TC_NAMES, 3, m) != 0)
            return -1;
        uint64_t key = 0;
        int has_key = 0;
        if (m[0] && m[0]->type != JV_NULL) {
            if (pt_json_u64(m[0], &key) != 0 || key >= SYNTH_KEY_BASE)
                return pt_protocol(s, "tool call index in event %llu is not a non-negative integer",
                                   (unsigned long long)s->n_events);
            has_key = 1;
        }
        panto_str id, name, args;
        if (opt_string(s, m[1], "tool_calls[]", "id", &id) != 0)
            return -1;
        const jnode *fn = m[2];
        if (fn && fn->type != JV_OBJECT && fn->type != JV_NULL)
            return pt_protocol(s, "tool call function in event %llu is not an object",
                               (unsigned long long)s->n_events);
        if (pt_members(s, fn, FN_NAMES, 2, f) != 0)
            return -1;
        if (opt_string(s, f[0], "tool_calls[].function", "name", &name) != 0)
            return -1;
        if (tool_args(s, f[1], &args) != 0)
            return -1;
        if (tool_fragment(s, key, has_key, id, name, args) != 0)
            return -1;
    }
    return 0;
}

static panto_stop_reason map_finish(panto_stream *s, panto_str r) {
    if (PT_EQ(r, "stop"))
        return s->refusal_seen ? PANTO_STOP_REFUSAL : PANTO_STOP_STOP;
    if (PT_EQ(r, "tool_calls") || PT_EQ(r, "function_call"))
        return PANTO_STOP_TOOL_USE;
    if (PT_EQ(r, "length"))
        return PANTO_STOP_LENGTH;
    if (PT_EQ(r, "content_filter"))
        return PANTO_STOP_REFUSAL;
    return PANTO_STOP_OTHER;
}

/* The text of a typed part: "text" of {"type":"text","text":...}, or the
 * texts of an array of such parts (Mistral's thinking parts nest them). */
static int part_texts(panto_stream *s, const jnode *v, int32_t kind, const char *what) {
    if (!v || v->type == JV_NULL)
        return 0;
    if (v->type == JV_STRING) {
        panto_str t;
        return pt_str(s, v, &t) != 0 ? -1 : tt_delta(s, kind, t);
    }
    if (v->type != JV_ARRAY)
        return pt_protocol(s, "delta.content[].%s in event %llu is neither a string nor an array",
                           what, (unsigned long long)s->n_events);
    for (const jnode *e = pt_json_first(&s->doc, v); e; e = pt_json_next(&s->doc, e)) {
        if (e->type != JV_OBJECT)
            return pt_protocol(s, "delta.content[].%s[] in event %llu is not an object", what,
                               (unsigned long long)s->n_events);
        const jnode *ty = pt_json_get(&s->doc, e, "type");
        if (ty && ty->type == JV_STRING && !pt_json_string_eq(ty, "text"))
            continue; /* not text: nothing to show */
        panto_str t;
        if (opt_string(s, pt_json_get(&s->doc, e, "text"), "delta.content[]", "text", &t) != 0 ||
            tt_delta(s, kind, t) != 0)
            return -1;
    }
    return 0;
}

/* B3: delta.content as an array of typed parts (Mistral/Magistral):
 * {"type":"text","text":"..."} and {"type":"thinking","thinking":[{"type":
 * "text","text":"..."}]} map onto the text and thinking blocks; parts of
 * other types (references, images) carry no text and are skipped. */
static int content_parts(panto_stream *s, const jnode *arr) {
    for (const jnode *e = pt_json_first(&s->doc, arr); e; e = pt_json_next(&s->doc, e)) {
        if (e->type != JV_OBJECT)
            return pt_protocol(s, "delta.content[] in event %llu is not an object",
                               (unsigned long long)s->n_events);
        const jnode *ty = pt_json_get(&s->doc, e, "type");
        if (!ty || ty->type != JV_STRING)
            return pt_protocol(s, "delta.content[] in event %llu has no \"type\" string",
                               (unsigned long long)s->n_events);
        int rc = 0;
        if (pt_json_string_eq(ty, "text"))
            rc = part_texts(s, pt_json_get(&s->doc, e, "text"), PANTO_BLOCK_TEXT, "text");
        else if (pt_json_string_eq(ty, "thinking"))
            rc = part_texts(s, pt_json_get(&s->doc, e, "thinking"), PANTO_BLOCK_THINKING,
                            "thinking");
        if (rc != 0)
            return -1;
    }
    return 0;
}

static const pt_name CHOICE_NAMES[] = {PT_NAME("index"), PT_NAME("delta"),
                                       PT_NAME("finish_reason")};
static const pt_name DELTA_NAMES[] = {PT_NAME("reasoning_content"), PT_NAME("reasoning"),
                                      PT_NAME("content"), PT_NAME("refusal"),
                                      PT_NAME("tool_calls"), PT_NAME("function_call")};

static int choice(panto_stream *s, const jnode *ch) {
    if (ch->type != JV_OBJECT)
        return pt_protocol(s, "choices[] in event %llu is not an object",
                           (unsigned long long)s->n_events);
    const jnode *c[3];
    if (pt_members(s, ch, CHOICE_NAMES, 3, c) != 0)
        return -1;
    uint64_t idx = 0;
    if (c[0] && c[0]->type != JV_NULL && pt_json_u64(c[0], &idx) != 0)
        return pt_protocol(s, "choices[].index in event %llu is not a non-negative integer",
                           (unsigned long long)s->n_events);
    if (idx != 0)
        return 0; /* n > 1 is not supported: only the first choice counts */
    const jnode *d = c[1];
    if (d && d->type != JV_OBJECT && d->type != JV_NULL)
        return pt_protocol(s, "choices[].delta in event %llu is not an object",
                           (unsigned long long)s->n_events);
    if (d && d->type == JV_OBJECT && d->count > 0) {
        const jnode *m[6];
        if (pt_members(s, d, DELTA_NAMES, 6, m) != 0)
            return -1;
        panto_str t;
        if (opt_string(s, m[0], "delta", "reasoning_content", &t) != 0)
            return -1;
        if (t.len == 0 && opt_string(s, m[1], "delta", "reasoning", &t) != 0)
            return -1;
        if (tt_delta(s, PANTO_BLOCK_THINKING, t) != 0)
            return -1;
        if (m[2] && m[2]->type == JV_ARRAY) {
            if (content_parts(s, m[2]) != 0)
                return -1;
        } else {
            if (opt_string(s, m[2], "delta", "content", &t) != 0)
                return -1;
            if (tt_delta(s, PANTO_BLOCK_TEXT, t) != 0)
                return -1;
        }
        if (opt_string(s, m[3], "delta", "refusal", &t) != 0)
            return -1;
        if (t.len) {
            s->refusal_seen = 1;
            if (tt_delta(s, PANTO_BLOCK_TEXT, t) != 0)
                return -1;
        }
        if (m[4] && m[4]->type != JV_NULL && tool_calls(s, m[4]) != 0)
            return -1;
        if (m[5] && m[5]->type == JV_OBJECT) {
            const jnode *f[2];
            panto_str name, args;
            if (pt_members(s, m[5], FN_NAMES, 2, f) != 0 ||
                opt_string(s, f[0], "delta.function_call", "name", &name) != 0 ||
                tool_args(s, f[1], &args) != 0)
                return -1;
            if (tool_fragment(s, FUNCTION_CALL_KEY, 1, pt_mkstr(NULL, 0), name, args) != 0)
                return -1;
        }
    }
    panto_str fr;
    if (opt_string(s, c[2], "choices[]", "finish_reason", &fr) != 0)
        return -1;
    if (c[2] && c[2]->type == JV_STRING) {
        if (pt_complete_all(s) != 0)
            return -1;
        s->stop = map_finish(s, fr);
        if (pt_set_stop_raw(s, fr) != 0)
            return -1;
    }
    return 0;
}

static void usage(panto_stream *s, const jnode *u) {
    const jdoc *d = &s->doc;
    uint64_t prompt = opt_u64(d, u, "prompt_tokens");
    const jnode *ptd = pt_json_get(d, u, "prompt_tokens_details");
    const jnode *ctd = pt_json_get(d, u, "completion_tokens_details");
    uint64_t cached = opt_u64(d, ptd, "cached_tokens");
    s->usage.input_tokens = prompt > cached ? prompt - cached : 0;
    s->usage.cache_read_tokens = cached;
    s->usage.cache_write_tokens = opt_u64(d, ptd, "cache_write_tokens");
    s->usage.output_tokens = opt_u64(d, u, "completion_tokens");
    s->usage.reasoning_tokens = opt_u64(d, ctd, "reasoning_tokens");
}

/* Keys this decoder never reads, at any depth: their values are validated
 * but not built (most of a chunk's bytes: the envelope around ~20 bytes of
 * content).  "model" is read only until the message started. */
static const char *const OA_SKIP[] = {"system_fingerprint", "obfuscation", "service_tier",
                                      "created", "object", "logprobs", "role", NULL};
static const char *const OA_SKIP_STARTED[] = {"system_fingerprint", "obfuscation",
                                              "service_tier", "created", "object",
                                              "logprobs", "role", "model", NULL};

static const pt_name OA_ROOT_NAMES[] = {PT_NAME("error"), PT_NAME("id"), PT_NAME("model"),
                                     PT_NAME("choices"), PT_NAME("usage")};

int pt_openai_event(panto_stream *s, const sse_event *ev) {
    const char *p = ev->data;
    size_t n = ev->data_len;
    while (n && oa_is_ws(p[0]))
        p++, n--;
    while (n && oa_is_ws(p[n - 1]))
        n--;
    if (n == 0)
        return 0; /* an empty data event carries nothing */
    if (n == 6 && memcmp(p, "[DONE]", 6) == 0) {
        if (!s->started && pt_message_start(s, pt_mkstr(NULL, 0), pt_mkstr(NULL, 0)) != 0)
            return -1;
        if (pt_complete_all(s) != 0)
            return -1;
        return pt_message_complete(s);
    }
    pt_json_skip_keys(&s->doc, s->started ? OA_SKIP_STARTED : OA_SKIP);
    const jnode *root = pt_parse_json(s, ev);
    if (!root)
        return -1;
    if (root->type != JV_OBJECT)
        return pt_protocol(s, "event %llu (line %llu) is not a JSON object",
                           (unsigned long long)s->n_events, (unsigned long long)s->ev_line);
    const jnode *m[5];
    if (pt_members(s, root, OA_ROOT_NAMES, 5, m) != 0)
        return -1;
    const jnode *err = m[0];
    if (err && (err->type == JV_OBJECT || err->type == JV_STRING))
        return provider_error(s, err);
    const jnode *choices = m[3];
    if (!s->started) {
        panto_str id, model;
        if (opt_string(s, m[1], "chunk", "id", &id) != 0 ||
            opt_string(s, m[2], "chunk", "model", &model) != 0)
            return -1;
        /* Azure opens with a prompt-filter chunk: empty id and model, no
         * choices.  The message starts with the first chunk that is real. */
        int has_choices = choices && choices->type == JV_ARRAY && choices->count > 0;
        int has_usage = m[4] && m[4]->type == JV_OBJECT;
        if (id.len == 0 && !has_choices && !has_usage)
            return 0;
        if (pt_message_start(s, id, model) != 0)
            return -1;
    }
    if (choices && choices->type != JV_NULL) {
        if (choices->type != JV_ARRAY)
            return pt_protocol(s, "choices in event %llu is not an array",
                               (unsigned long long)s->n_events);
        for (const jnode *c = pt_json_first(&s->doc, choices); c; c = pt_json_next(&s->doc, c))
            if (choice(s, c) != 0)
                return -1;
    }
    if (m[4] && m[4]->type == JV_OBJECT)
        usage(s, m[4]);
    return 0;
}

/* ---- the fast path (stream.h) ----
 *
 * A chunk of a started message whose only choice (index 0) carries text
 * or reasoning text and no finish_reason:
 *
 *   data: {"id":"...",...,"choices":[{"index":0,"delta":{"content":"..."},
 *          "logprobs":null,"finish_reason":null}],"usage":null,...}
 *
 * members in any order; members the decoder does not read may hold any
 * scalar; "refusal", "function_call", "finish_reason", "usage" only null;
 * no "error" member, no repeated member that is read.  "tool_calls" may
 * also hold one fragment of a tool call that already started:
 * [{"index":N,"function":{"arguments":"..."}}] (an "id", a "type", a
 * function "name" are validated and ignored, as choice() does).
 * Anything else is left to pt_openai_event. */

/* A string-or-null member that the fast path reads. */
typedef struct {
    size_t st, e; /* between the quotes; st == 0: null */
    int esc;
} oa_fstr;

enum { OA_F_CONTENT, OA_F_REASONING_CONTENT, OA_F_REASONING, OA_F_ARGS, OA_F_N };

/* What the fast path read of a chunk. */
typedef struct {
    oa_fstr f[OA_F_N];
    int has_tool;  /* one tool call fragment: ... */
    uint64_t tool; /* ... of this index */
    unsigned values;
} oa_fast;

/* At most this many values in a fast-path chunk (the JSON node limit is at
 * least 4096: a chunk the fast path takes never reaches it). */
#define OA_FAST_MAX_VALUES 512

/* Key at b[i] == '"' (no escapes): sets *ks, *kl and returns the index of
 * the value (after ws ':' ws), or 0. */
static size_t oa_fkey(const uint8_t *b, size_t n, size_t i, size_t *ks, size_t *kl) {
    if (i >= n || b[i] != '"')
        return 0;
    size_t e = i + 1;
    int esc = 0;
    if (pt_json_scan_str(b, n, &e, &esc) != 0 || esc)
        return 0;
    *ks = i + 1;
    *kl = e - i - 1;
    i = pt_fws(b, n, e + 1);
    if (i >= n || b[i] != ':')
        return 0;
    return pt_fws(b, n, i + 1);
}

#define OA_KEY(b, ks, kl, lit) ((kl) == sizeof(lit) - 1 && memcmp((b) + (ks), (lit), (kl)) == 0)

/* After a member's value: ws then ',' (returns the index of the next key,
 * after ws, with *more = 1) or the closing brace (index after it, *more =
 * 0); 0 on anything else. */
static size_t oa_fnext(const uint8_t *b, size_t n, size_t i, int *more) {
    i = pt_fws(b, n, i);
    if (i >= n)
        return 0;
    if (b[i] == ',') {
        *more = 1;
        return pt_fws(b, n, i + 1);
    }
    if (b[i] == '}') {
        *more = 0;
        return i + 1;
    }
    return 0;
}

/* A string or null at b[i]: into *f (st = 0 for null); the index after it,
 * or 0. */
static size_t oa_fstrnull(const uint8_t *b, size_t n, size_t i, oa_fstr *f) {
    if (i < n && b[i] == '"') {
        size_t e = i + 1;
        int esc = 0;
        if (pt_json_scan_str(b, n, &e, &esc) != 0)
            return 0;
        f->st = i + 1;
        f->e = e;
        f->esc = esc;
        return e + 1;
    }
    if (PT_FLIT(b, n, i, "null")) {
        f->st = 0;
        return i + 4;
    }
    return 0;
}

/* delta.tool_calls at b[i] == '[': one element with an index, whose
 * function object holds at most a name and the arguments string. */
static size_t oa_ftools(const uint8_t *b, size_t n, size_t i, oa_fast *r) {
    i = pt_fws(b, n, i + 1);
    if (i >= n || b[i] != '{')
        return 0;
    i = pt_fws(b, n, i + 1);
    unsigned seen = 0;
    for (int more = 1; more;) {
        size_t ks, kl;
        if (!(i = oa_fkey(b, n, i, &ks, &kl)) || (r->values += 2) > OA_FAST_MAX_VALUES)
            return 0;
        if (OA_KEY(b, ks, kl, "index")) {
            size_t d0 = i;
            uint64_t v = 0;
            while (i < n && b[i] >= '0' && b[i] <= '9' && i - d0 < 19)
                v = v * 10 + (uint64_t)(b[i++] - '0');
            if (seen & 1u || i == d0 || i - d0 > 18 || (b[d0] == '0' && i - d0 > 1))
                return 0;
            seen |= 1u;
            r->tool = v;
        } else if (OA_KEY(b, ks, kl, "id")) {
            oa_fstr id;
            if (seen & 2u || !(i = oa_fstrnull(b, n, i, &id)))
                return 0;
            seen |= 2u;
        } else if (OA_KEY(b, ks, kl, "function")) {
            if (seen & 4u || i >= n || b[i] != '{')
                return 0;
            seen |= 4u;
            i = pt_fws(b, n, i + 1);
            unsigned fseen = 0;
            for (int fmore = 1; fmore;) {
                size_t fs, fl;
                oa_fstr v;
                if (!(i = oa_fkey(b, n, i, &fs, &fl)) || (r->values += 2) > OA_FAST_MAX_VALUES)
                    return 0;
                if (OA_KEY(b, fs, fl, "arguments")) {
                    if (fseen & 1u || !(i = oa_fstrnull(b, n, i, &r->f[OA_F_ARGS])))
                        return 0;
                    fseen |= 1u;
                } else if (OA_KEY(b, fs, fl, "name")) {
                    if (fseen & 2u || !(i = oa_fstrnull(b, n, i, &v)))
                        return 0;
                    fseen |= 2u;
                } else if (!(i = pt_fskip_scalar(b, n, i))) {
                    return 0;
                }
                if (!(i = oa_fnext(b, n, i, &fmore)))
                    return 0;
            }
        } else if (!(i = pt_fskip_scalar(b, n, i))) { /* type, ... */
            return 0;
        }
        if (!(i = oa_fnext(b, n, i, &more)))
            return 0;
    }
    if (seen != 7u && seen != 5u)
        return 0; /* an index and a function object are needed */
    i = pt_fws(b, n, i);
    if (i >= n || b[i] != ']')
        return 0;
    r->has_tool = 1;
    return i + 1;
}

/* The delta object at b[i] == '{'. */
static size_t oa_fdelta(const uint8_t *b, size_t n, size_t i, oa_fast *r) {
    i = pt_fws(b, n, i + 1);
    if (i < n && b[i] == '}')
        return i + 1;
    unsigned seen = 0;
    for (int more = 1; more;) {
        size_t ks, kl;
        if (!(i = oa_fkey(b, n, i, &ks, &kl)) || (r->values += 2) > OA_FAST_MAX_VALUES)
            return 0;
        int which = OA_KEY(b, ks, kl, "content")             ? OA_F_CONTENT
                    : OA_KEY(b, ks, kl, "reasoning_content") ? OA_F_REASONING_CONTENT
                    : OA_KEY(b, ks, kl, "reasoning")         ? OA_F_REASONING
                                                             : -1;
        if (which >= 0) {
            if (seen & (1u << which))
                return 0; /* repeated: the last one wins there */
            seen |= 1u << which;
            if (!(i = oa_fstrnull(b, n, i, &r->f[which])))
                return 0;
        } else if (OA_KEY(b, ks, kl, "tool_calls")) {
            if (seen & 8u)
                return 0;
            seen |= 8u;
            if (PT_FLIT(b, n, i, "null"))
                i += 4;
            else if (i >= n || b[i] != '[' || !(i = oa_ftools(b, n, i, r)))
                return 0;
        } else if (OA_KEY(b, ks, kl, "refusal") || OA_KEY(b, ks, kl, "function_call")) {
            if (!PT_FLIT(b, n, i, "null"))
                return 0;
            i += 4;
        } else if (!(i = pt_fskip_scalar(b, n, i))) { /* role, ... */
            return 0;
        }
        if (!(i = oa_fnext(b, n, i, &more)))
            return 0;
    }
    return i;
}

/* The choices array at b[i] == '[': empty, or one choice of index 0. */
static size_t oa_fchoices(const uint8_t *b, size_t n, size_t i, oa_fast *r) {
    i = pt_fws(b, n, i + 1);
    if (i < n && b[i] == ']')
        return i + 1;
    if (i >= n || b[i] != '{')
        return 0;
    i = pt_fws(b, n, i + 1);
    unsigned seen = 0;
    for (int more = 1; more;) {
        size_t ks, kl;
        if (!(i = oa_fkey(b, n, i, &ks, &kl)) || (r->values += 2) > OA_FAST_MAX_VALUES)
            return 0;
        if (OA_KEY(b, ks, kl, "index")) {
            if (seen & 1u || !PT_FLIT(b, n, i, "0"))
                return 0;
            seen |= 1u;
            i++;
        } else if (OA_KEY(b, ks, kl, "delta")) {
            if (seen & 2u)
                return 0;
            seen |= 2u;
            if (PT_FLIT(b, n, i, "null"))
                i += 4;
            else if (i >= n || b[i] != '{' || !(i = oa_fdelta(b, n, i, r)))
                return 0;
        } else if (OA_KEY(b, ks, kl, "finish_reason")) {
            if (!PT_FLIT(b, n, i, "null"))
                return 0;
            i += 4;
        } else if (!(i = pt_fskip_scalar(b, n, i))) { /* logprobs, ... */
            return 0;
        }
        if (!(i = oa_fnext(b, n, i, &more)))
            return 0;
    }
    if (!(seen & 1u))
        return 0; /* index absent: the first choice all the same, but rare */
    i = pt_fws(b, n, i);
    if (i >= n || b[i] != ']')
        return 0;
    return i + 1;
}

int pt_openai_fast(panto_stream *s, const uint8_t *b, size_t n) {
    if (!s->started || !PT_FLIT(b, n, 0, "data:"))
        return 0;
    size_t i = 5;
    if (i < n && b[i] == ' ')
        i++;
    i = pt_fws(b, n, i);
    if (i >= n || b[i] != '{')
        return 0;
    i = pt_fws(b, n, i + 1);
    oa_fast r;
    memset(&r, 0, sizeof r);
    r.values = 1;
    int choices = 0;
    for (int more = 1; more;) {
        size_t ks, kl;
        if (!(i = oa_fkey(b, n, i, &ks, &kl)) || (r.values += 2) > OA_FAST_MAX_VALUES)
            return 0;
        if (OA_KEY(b, ks, kl, "choices")) {
            if (choices++ || i >= n || b[i] != '[' || !(i = oa_fchoices(b, n, i, &r)))
                return 0;
        } else if (OA_KEY(b, ks, kl, "usage")) {
            if (!PT_FLIT(b, n, i, "null"))
                return 0;
            i += 4;
        } else if (OA_KEY(b, ks, kl, "error")) {
            return 0;
        } else if (!(i = pt_fskip_scalar(b, n, i))) { /* id, model, created, ... */
            return 0;
        }
        if (!(i = oa_fnext(b, n, i, &more)))
            return 0;
    }
    i = pt_fws(b, n, i);
    /* the data line ends here, and a blank line ends the event */
    if (n - i < 2 || b[i] != '\n' || b[i + 1] != '\n' || i + 2 > s->opt.max_event_bytes)
        return 0;
    if (r.has_tool) {
        /* a fragment of a tool call that is open (tool_fragment's checks) */
        pt_key *k = pt_key_find(s, r.tool);
        if (!k || k->state != PT_KEY_OPEN)
            return 0;
    }
    pt_fast_commit(s, i + 2, i + 1, 2);
    /* as choice(): reasoning text, text, then the tool call */
    panto_str t = pt_mkstr(NULL, 0);
    const oa_fstr *f = &r.f[OA_F_REASONING_CONTENT];
    if (f->st && pt_fast_str(s, b, f->st, f->e, f->esc, &t) != 0)
        return -1;
    f = &r.f[OA_F_REASONING];
    if (t.len == 0 && f->st && pt_fast_str(s, b, f->st, f->e, f->esc, &t) != 0)
        return -1;
    if (tt_delta(s, PANTO_BLOCK_THINKING, t) != 0)
        return -1;
    f = &r.f[OA_F_CONTENT];
    t = pt_mkstr(NULL, 0);
    if (f->st && pt_fast_str(s, b, f->st, f->e, f->esc, &t) != 0)
        return -1;
    if (tt_delta(s, PANTO_BLOCK_TEXT, t) != 0)
        return -1;
    if (!r.has_tool)
        return 1;
    f = &r.f[OA_F_ARGS];
    t = pt_mkstr(NULL, 0);
    if (f->st && pt_fast_str(s, b, f->st, f->e, f->esc, &t) != 0)
        return -1;
    return tool_fragment(s, r.tool, 1, pt_mkstr(NULL, 0), pt_mkstr(NULL, 0), t) != 0 ? -1 : 1;
}
