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

/* Text, refusal or reasoning text for the single open text/thinking block;
 * `direct`: nothing follows it in this SSE event (pt_fast_delta_to). */
static int tt_delta_to(panto_stream *s, int32_t kind, panto_str text, int direct) {
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
    return pt_fast_delta_to(s, s->tt_slot, text, direct);
}

static int tt_delta(panto_stream *s, int32_t kind, panto_str text) {
    return tt_delta_to(s, kind, text, 0);
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
 * A chunk of a started message whose only choice (index 0) carries text,
 * reasoning text or a fragment of a tool call that is open, and no
 * finish_reason:
 *
 *   data: {"id":"...",...,"choices":[{"index":0,"delta":{"content":"..."},
 *          "logprobs":null,"finish_reason":null}],"usage":null,...}
 *   data: {...,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,
 *          "function":{"arguments":"..."}}]},...}],...}
 *
 * Members in any order; members the decoder does not read may hold any
 * scalar; "refusal", "function_call", "finish_reason" and "usage" only
 * null; no "error" member, no member that is read twice.  A tool call's
 * "id", "type" and function "name" are validated and ignored, as choice()
 * does for a call that started.  Anything else is left to pt_openai_event.
 *
 * The walk is a loop over an explicit stack of the containers above.  A
 * chunk it took becomes the template of the next ones (the cache of
 * stream.h): its bytes, its string values ("holes") and the walk's result.
 * A chunk whose bytes equal the template's outside the holes has the same
 * structure, members and scalars, so only its differing string values need
 * a scan; it is not walked (consecutive chunks of a response differ only in
 * the text and "obfuscation"). */

enum { OA_F_CONTENT, OA_F_REASONING_CONTENT, OA_F_REASONING, OA_F_ARGS, OA_F_IGNORED, OA_F_N };

/* Containers of a chunk, and the members the fast path knows in each. */
enum { OX_ROOT, OX_CHOICES, OX_CHOICE, OX_DELTA, OX_TOOLS, OX_CALL, OX_FN };

#define OA_MAX_DEPTH 7          /* root ... function */
#define OA_FAST_MAX_VALUES 512  /* far below the JSON node limit (>= 4096) */

typedef struct {
    size_t st, e; /* between the quotes; st == 0: null or absent */
    int esc;
} oa_fstr;

typedef struct {
    uint8_t ctx[OA_MAX_DEPTH];   /* OX_* of each open container */
    uint8_t seen[OA_MAX_DEPTH];  /* members read (objects), elements (arrays) */
    uint8_t depth;               /* open containers */
    uint8_t slot;                /* at a string value: its OA_F_* */
    uint8_t has_tool;            /* a tool call fragment was read */
    unsigned values;             /* values so far (the node limit) */
    uint64_t tool;               /* its index */
    oa_fstr f[OA_F_N];
} oa_walk;

/* A template: the walk's result, and the string values of the chunk. */
#define OA_MAX_HOLES 24
typedef struct {
    uint32_t st, e;  /* between the quotes */
    uint8_t slot;    /* OA_F_* */
    uint8_t esc;
} oa_hole;

typedef struct {
    oa_walk w;
    unsigned n_holes; /* > OA_MAX_HOLES: too many, not kept */
    oa_hole holes[OA_MAX_HOLES + 1]; /* + a sentinel past every byte */
} oa_template;

_Static_assert(sizeof(oa_template) <= PT_FCACHE_STATE, "oa_template fits the cache");

/* How the value of a member is read. */
enum {
    OA_SCALAR,    /* any scalar, not read */
    OA_NULL,      /* null only */
    OA_DECLINE,   /* leave the chunk to the general path */
    OA_STRNULL,   /* a string or null, into f[slot] (bit: read once) */
    OA_ZERO,      /* the number 0 */
    OA_INDEX,     /* a non-negative integer: the tool call's index */
    OA_OBJ,       /* an object (ctx) */
    OA_OBJNULL,   /* an object (ctx) or null */
    OA_ARR,       /* an array (ctx) */
    OA_ARRNULL,   /* an array (ctx) or null */
};

typedef struct {
    uint8_t how, ctx, slot, bit;
} oa_member;

/* The member named b[ks..ks+kl) of a container of kind ctx. */
static oa_member oa_lookup(int ctx, const uint8_t *k, size_t kl) {
    oa_member m = {OA_SCALAR, 0, 0, 0};
#define OA_IS(lit) (kl == sizeof(lit) - 1 && memcmp(k, lit, sizeof(lit) - 1) == 0)
    switch (ctx) {
    case OX_ROOT:
        if (OA_IS("choices"))
            m = (oa_member){OA_ARR, OX_CHOICES, 0, 1};
        else if (OA_IS("usage"))
            m.how = OA_NULL;
        else if (OA_IS("error"))
            m.how = OA_DECLINE;
        break;
    case OX_CHOICE:
        if (OA_IS("index"))
            m = (oa_member){OA_ZERO, 0, 0, 1};
        else if (OA_IS("delta"))
            m = (oa_member){OA_OBJNULL, OX_DELTA, 0, 2};
        else if (OA_IS("finish_reason"))
            m.how = OA_NULL;
        break;
    case OX_DELTA:
        if (OA_IS("content"))
            m = (oa_member){OA_STRNULL, 0, OA_F_CONTENT, 1};
        else if (OA_IS("reasoning_content"))
            m = (oa_member){OA_STRNULL, 0, OA_F_REASONING_CONTENT, 2};
        else if (OA_IS("reasoning"))
            m = (oa_member){OA_STRNULL, 0, OA_F_REASONING, 4};
        else if (OA_IS("tool_calls"))
            m = (oa_member){OA_ARRNULL, OX_TOOLS, 0, 8};
        else if (OA_IS("refusal") || OA_IS("function_call"))
            m.how = OA_NULL;
        break;
    case OX_CALL:
        if (OA_IS("index"))
            m = (oa_member){OA_INDEX, 0, 0, 1};
        else if (OA_IS("function"))
            m = (oa_member){OA_OBJ, OX_FN, 0, 2};
        else if (OA_IS("id"))
            m = (oa_member){OA_STRNULL, 0, OA_F_IGNORED, 4};
        break;
    case OX_FN:
        if (OA_IS("arguments"))
            m = (oa_member){OA_STRNULL, 0, OA_F_ARGS, 1};
        else if (OA_IS("name"))
            m = (oa_member){OA_STRNULL, 0, OA_F_IGNORED, 2};
        break;
    default:
        break;
    }
#undef OA_IS
    return m;
}

/* Walk the chunk at b[0] (the root's opening brace).  Returns the index
 * just past the root object, or 0; tpl->holes get its string values. */
static size_t oa_walk_chunk(const uint8_t *b, size_t n, oa_walk *w, uint32_t max_depth,
                            oa_template *tpl) {
    uint8_t ctx, bit = 0;
    oa_member m;
    size_t i = 0;
    /* the root */
    if (i >= n || b[i] != '{' || max_depth < 1)
        return 0;
    w->ctx[0] = OX_ROOT;
    w->seen[0] = 0;
    w->depth = 1;
    w->values = 1;
    i = pt_fws(b, n, i + 1);
    if (i < n && b[i] == '}')
        return 0;
key:
    /* at a member's key in the object on top */
    {
        if (i >= n || b[i] != '"')
            return 0;
        size_t e = i + 1;
        int esc = 0;
        if (pt_json_scan_str(b, n, &e, &esc) != 0 || esc)
            return 0;
        ctx = w->ctx[w->depth - 1];
        m = oa_lookup(ctx, b + i + 1, e - i - 1);
        if (m.bit) {
            if (w->seen[w->depth - 1] & m.bit)
                return 0; /* read twice: the last one wins there */
            w->seen[w->depth - 1] |= m.bit;
        }
        if ((w->values += 2) > OA_FAST_MAX_VALUES)
            return 0;
        i = pt_fws(b, n, e + 1);
        if (i >= n || b[i] != ':')
            return 0;
        i = pt_fws(b, n, i + 1);
    }
value:
    if (i >= n)
        return 0;
    switch (m.how) {
    case OA_SCALAR:
        if (b[i] == '"') { /* a string not read: a hole all the same */
            w->slot = OA_F_IGNORED;
            i++;
            goto string;
        }
        if (!(i = pt_fskip_scalar(b, n, i)))
            return 0;
        goto after;
    case OA_NULL:
        if (!PT_FLIT(b, n, i, "null"))
            return 0;
        i += 4;
        goto after;
    case OA_STRNULL:
        w->slot = m.slot;
        if (b[i] == '"') {
            i++;
            goto string;
        }
        if (!PT_FLIT(b, n, i, "null"))
            return 0;
        w->f[m.slot].st = 0;
        i += 4;
        goto after;
    case OA_ZERO:
        if (b[i] != '0')
            return 0;
        i++;
        goto after;
    case OA_INDEX: {
        size_t d0 = i;
        uint64_t v = 0;
        while (i < n && b[i] >= '0' && b[i] <= '9' && i - d0 < 19)
            v = v * 10 + (uint64_t)(b[i++] - '0');
        if (i == d0 || i - d0 > 18 || (b[d0] == '0' && i - d0 > 1))
            return 0;
        w->tool = v;
        w->has_tool = 1;
        goto after;
    }
    case OA_OBJNULL:
    case OA_ARRNULL:
        if (PT_FLIT(b, n, i, "null")) {
            i += 4;
            goto after;
        }
        /* fall through */
    case OA_OBJ:
    case OA_ARR: {
        int obj = m.how == OA_OBJ || m.how == OA_OBJNULL;
        if (b[i] != (obj ? '{' : '[') || w->depth >= max_depth || w->depth >= OA_MAX_DEPTH)
            return 0;
        w->ctx[w->depth] = m.ctx;
        w->seen[w->depth] = 0;
        w->depth++;
        i = pt_fws(b, n, i + 1);
        if (i < n && b[i] == (obj ? '}' : ']')) {
            /* empty: a delta, the choices */
            if (m.ctx != OX_DELTA && m.ctx != OX_CHOICES)
                return 0;
            w->depth--;
            i++;
            goto after;
        }
        if (obj)
            goto key;
        goto element;
    }
    default:
        return 0;
    }
element:
    /* at an element of the array on top: one object */
    ctx = w->ctx[w->depth - 1];
    if (w->seen[w->depth - 1]++ || (w->values += 1) > OA_FAST_MAX_VALUES)
        return 0; /* a second choice or tool call */
    m = (oa_member){OA_OBJ, ctx == OX_CHOICES ? OX_CHOICE : OX_CALL, 0, 0};
    goto value;
string:
    /* b[i] is just past the opening quote of a string for f[w->slot] */
    {
        size_t e = i;
        int esc = 0;
        if (pt_json_scan_str(b, n, &e, &esc) != 0)
            return 0;
        w->f[w->slot].st = i;
        w->f[w->slot].e = e;
        w->f[w->slot].esc = esc;
        if (tpl->n_holes < OA_MAX_HOLES && e <= UINT32_MAX) {
            oa_hole *h = &tpl->holes[tpl->n_holes];
            h->st = (uint32_t)i;
            h->e = (uint32_t)e;
            h->slot = w->slot;
            h->esc = (uint8_t)esc;
        }
        tpl->n_holes++;
        i = e + 1;
    }
after:
    /* after a value in the container on top */
    i = pt_fws(b, n, i);
    if (i >= n)
        return 0;
    ctx = w->ctx[w->depth - 1];
    if (b[i] == ',') {
        i = pt_fws(b, n, i + 1);
        if (ctx == OX_CHOICES || ctx == OX_TOOLS)
            goto element;
        goto key;
    }
    if (b[i] != (ctx == OX_CHOICES || ctx == OX_TOOLS ? ']' : '}'))
        return 0;
    bit = w->seen[w->depth - 1];
    if ((ctx == OX_CHOICE && !(bit & 1)) || (ctx == OX_CALL && (bit & 3) != 3))
        return 0; /* a choice without its index, a call without index or function */
    i++;
    if (--w->depth == 0)
        return i;
    goto after;
}

/* The chunk at p[0..n) against the template t[0..tl) (tpl): the index
 * just past the root object with *w filled, or 0 when the chunk differs
 * from the template outside its string values (or one of its new string
 * values is not valid), or OA_ENDED when p[0..n) equals a prefix of the
 * template outside the string values compared so far (the event is cut by
 * the end of the input: not worth a walk). */
#define OA_ENDED SIZE_MAX
static size_t oa_template_match(const uint8_t *t, size_t tl, const oa_template *tpl,
                                const uint8_t *p, size_t n, oa_walk *w) {
    /* Only what the fast path reads of the walk: the tool call, and the
     * string slots -- every string of the template is a hole, so a slot
     * is null or absent (st == 0) unless a hole below sets it. */
    for (int k = 0; k < OA_F_IGNORED; k++)
        w->f[k].st = 0;
    w->has_tool = tpl->w.has_tool;
    w->tool = tpl->w.tool;
    const oa_hole *hole = tpl->holes; /* up to the sentinel (oa_fast_walk) */
    size_t ti = 0, ni = 0;
    for (;;) {
        size_t left = tl - ti < n - ni ? tl - ti : n - ni;
        size_t k = pt_mismatch(t + ti, p + ni, left);
        size_t at = ti + k; /* the first template byte that differs */
        /* string values that matched whole: moved by ni - ti */
        for (; hole->e < at; hole++) {
            if (hole->slot == OA_F_IGNORED)
                continue;
            oa_fstr *f = &w->f[hole->slot];
            f->st = hole->st + ni - ti;
            f->e = hole->e + ni - ti;
            f->esc = hole->esc;
        }
        if (at == tl)
            return ni + k;
        if (k == left)
            return OA_ENDED; /* the chunk ended first: a walk would too */
        if (hole->st > at)
            return 0; /* it differs outside a string value (or past the holes) */
        /* the string value of hole h differs: scan the chunk's */
        size_t st = hole->st + ni - ti, e = st;
        int esc = 0;
        if (pt_json_scan_str(p, n, &e, &esc) != 0)
            return 0;
        if (hole->slot != OA_F_IGNORED) {
            oa_fstr *f = &w->f[hole->slot];
            f->st = st;
            f->e = e;
            f->esc = esc;
        }
        ni = e; /* both at the closing quote */
        ti = hole->e;
        hole++;
    }
}

/* Read the JSON text at p[0] (its opening brace; p[0..n) available): 1
 * with *w filled and *end just past the root object, 0 to leave the event
 * to the general path. */
static PT_HOT_INLINE int oa_fast_walk(panto_stream *s, const uint8_t *p, size_t n, oa_walk *w, size_t *end) {
    pt_fcache *fc = &s->fcache;
    size_t i = 0;
    if (fc->wire == PANTO_WIRE_OPENAI_CHAT)
        i = oa_template_match(fc->bytes.p, fc->bytes.len, (const oa_template *)fc->state, p, n, w);
    if (i == OA_ENDED)
        return 0;
    if (!i) {
        oa_template tpl;
        memset(&tpl.w, 0, sizeof tpl.w);
        tpl.n_holes = 0;
        i = oa_walk_chunk(p, n, &tpl.w, s->opt.max_json_depth, &tpl);
        if (!i)
            return 0;
        *w = tpl.w;
        /* the template of the next chunks: string values of the first
         * walk (an f slot still holds what the walk ended with) */
        if (tpl.n_holes <= OA_MAX_HOLES) {
            /* the sentinel: after every byte (no hole loop checks n_holes) */
            tpl.holes[tpl.n_holes] = (oa_hole){UINT32_MAX, UINT32_MAX, OA_F_IGNORED, 0};
            pt_fcache_store(s, PANTO_WIRE_OPENAI_CHAT, p, i, &tpl, sizeof tpl);
        }
    }
    *end = i;
    if (w->has_tool) {
        /* a fragment of a tool call that is open (tool_fragment's checks) */
        pt_key *k = pt_key_find(s, w->tool);
        if (!k || k->state != PT_KEY_OPEN)
            return 0;
    }
    return 1;
}

/* The events of a walked chunk, as choice() queues them: reasoning text,
 * text, then the tool call fragment.  1, or -1 with the error set. */
static PT_HOT_INLINE int oa_fast_apply(panto_stream *s, const uint8_t *p, const oa_walk *w) {
    panto_str t = pt_mkstr(NULL, 0);
    const oa_fstr *f = &w->f[OA_F_REASONING_CONTENT];
    if (f->st && pt_fast_str(s, p, f->st, f->e, f->esc, &t) != 0)
        return -1;
    f = &w->f[OA_F_REASONING];
    if (t.len == 0 && f->st && pt_fast_str(s, p, f->st, f->e, f->esc, &t) != 0)
        return -1;
    if (t.len && tt_delta(s, PANTO_BLOCK_THINKING, t) != 0) /* (empty: nothing) */
        return -1;
    f = &w->f[OA_F_CONTENT];
    t = pt_mkstr(NULL, 0);
    if (f->st && pt_fast_str(s, p, f->st, f->e, f->esc, &t) != 0)
        return -1;
    if (t.len && tt_delta_to(s, PANTO_BLOCK_TEXT, t, !w->has_tool) != 0)
        return -1;
    if (!w->has_tool)
        return 1;
    f = &w->f[OA_F_ARGS];
    t = pt_mkstr(NULL, 0);
    if (f->st && pt_fast_str(s, p, f->st, f->e, f->esc, &t) != 0)
        return -1;
    return tool_fragment(s, w->tool, 1, pt_mkstr(NULL, 0), pt_mkstr(NULL, 0), t) != 0 ? -1 : 1;
}

int pt_openai_fast(panto_stream *s, const uint8_t *b, size_t n) {
    if (!s->started || !PT_FLIT(b, n, 0, "data:"))
        return 0;
    size_t i = 5, end;
    if (i < n && b[i] == ' ')
        i++;
    i = pt_fws(b, n, i);
    if (i >= n || b[i] != '{')
        return 0;
    oa_walk w;
    const uint8_t *p = b + i;
    if (!oa_fast_walk(s, p, n - i, &w, &end))
        return 0;
    i = pt_fws(b, n, i + end);
    /* the data line ends here, and a blank line ends the event */
    if (n - i < 2 || b[i] != '\n' || b[i + 1] != '\n' || i + 2 > s->opt.max_event_bytes)
        return 0;
    pt_fast_commit(s, i + 2, i + 1, 2);
    return oa_fast_apply(s, p, &w);
}

int pt_openai_fast_event(panto_stream *s, const sse_event *ev) {
    const uint8_t *b = (const uint8_t *)ev->data;
    size_t n = ev->data_len, i = pt_fws(b, n, 0), end;
    if (!s->started || i >= n || b[i] != '{')
        return 0;
    oa_walk w;
    const uint8_t *p = b + i;
    if (!oa_fast_walk(s, p, n - i, &w, &end) || pt_fws(b, n, i + end) != n)
        return 0;
    return oa_fast_apply(s, p, &w);
}
