/* test_fast.c -- the wire decoders' fast paths (pt_openai_fast,
 * pt_anthropic_fast) against the general path.  White-box: it builds the
 * core into this program to turn the fast paths off (s->fast = 0) and to
 * count the events they decoded (s->n_fast).
 *
 * Every input is decoded with the fast paths on and off, fed whole, in
 * pieces of several sizes, and with events left in the queue while more
 * input is fed (so the input buffer must keep what queued events borrow);
 * the transcripts (every event, the final status, the error code, message
 * and offset) must be identical.  Inputs: every fixture of tests/fixtures
 * on every wire, canonical streams (which must take the fast path), and
 * variants of them that must not (or that the fast path must get right):
 * invalid UTF-8, bad escapes, control bytes, truncation, extra, missing,
 * repeated and reordered members, whitespace, CR line ends, escaped keys,
 * odd indexes, blocks that are not open, limits. */
#include "unity/panto_core.c"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"

/* ---- rendering into a growable string (sb: testlib.h) ---- */

static void sb_num(sb *b, unsigned long long v) {
    char t[32];
    snprintf(t, sizeof t, "%llu", v);
    sb_add(b, t);
}
static void sb_pstr(sb *b, panto_str s) {
    sb_add(b, "[");
    sb_addn(b, s.ptr, s.len);
    sb_add(b, "]");
}
static void sb_usage(sb *b, const panto_usage *u) {
    sb_add(b, " u=");
    sb_num(b, u->input_tokens);
    sb_add(b, "/");
    sb_num(b, u->cache_read_tokens);
    sb_add(b, "/");
    sb_num(b, u->cache_write_tokens);
    sb_add(b, "/");
    sb_num(b, u->output_tokens);
    sb_add(b, "/");
    sb_num(b, u->reasoning_tokens);
}

static void render(sb *b, const panto_event *ev) {
    sb_add(b, panto_event_kind_name(ev->kind));
    sb_add(b, " ");
    switch (ev->kind) {
    case PANTO_EV_MESSAGE_START:
        sb_pstr(b, ev->u.message_start.id);
        sb_pstr(b, ev->u.message_start.model);
        sb_usage(b, &ev->u.message_start.usage);
        break;
    case PANTO_EV_BLOCK_START:
        sb_num(b, ev->u.block_start.index);
        sb_add(b, panto_block_kind_name(ev->u.block_start.block_kind));
        break;
    case PANTO_EV_TOOL_DETAILS:
        sb_num(b, ev->u.tool_details.index);
        sb_pstr(b, ev->u.tool_details.id);
        sb_pstr(b, ev->u.tool_details.name);
        break;
    case PANTO_EV_CONTENT_DELTA:
        sb_num(b, ev->u.content_delta.index);
        sb_add(b, panto_block_kind_name(ev->u.content_delta.block_kind));
        sb_pstr(b, ev->u.content_delta.text);
        break;
    case PANTO_EV_BLOCK_COMPLETE:
        sb_num(b, ev->u.block_complete.index);
        sb_add(b, panto_block_kind_name(ev->u.block_complete.block_kind));
        sb_pstr(b, ev->u.block_complete.text);
        sb_pstr(b, ev->u.block_complete.signature);
        sb_pstr(b, ev->u.block_complete.tool_id);
        sb_pstr(b, ev->u.block_complete.tool_name);
        sb_pstr(b, ev->u.block_complete.citations);
        break;
    case PANTO_EV_MESSAGE_COMPLETE:
        sb_add(b, panto_stop_reason_name(ev->u.message_complete.stop_reason));
        sb_pstr(b, ev->u.message_complete.raw_stop_reason);
        sb_usage(b, &ev->u.message_complete.usage);
        break;
    case PANTO_EV_SSE:
        sb_pstr(b, ev->u.sse.event);
        sb_pstr(b, ev->u.sse.data);
        sb_pstr(b, ev->u.sse.id);
        break;
    default:
        sb_add(b, "?");
    }
    sb_add(b, "\n");
}

/* Pull up to max events (0: all); the last status. */
static int drain(panto_stream *s, sb *b, size_t max) {
    panto_event ev;
    int r = PANTO_NEED_MORE;
    for (size_t k = 0; max == 0 || k < max; k++) {
        r = panto_next_event(s, &ev);
        if (r != PANTO_EVENT)
            return r;
        render(b, &ev);
    }
    return r;
}

/* How a run feeds and drains. */
typedef struct {
    size_t chunk;   /* feed size; 0 = all at once */
    size_t per;     /* events pulled after each feed; 0 = all */
    size_t first;   /* size of the first feed; 0 = chunk */
} plan;

static const plan PLANS[] = {{0, 0, 0}, {1, 0, 0}, {7, 0, 0}, {64, 0, 0}, {1000, 0, 0},
                             {5, 1, 0}, {40, 1, 0}, {300, 2, 0}, {4096, 1, 0}};
#define N_PLANS (sizeof PLANS / sizeof PLANS[0])

static uint64_t last_fast;   /* n_fast of the last run */
static uint64_t last_parsed; /* n_fast_parsed of the last run */
static uint64_t parsed_total; /* all runs */

static char *run(int wire, const panto_stream_options *o, const uint8_t *in, size_t len,
                 int fast, plan pl) {
    sb b = {0};
    sb_add(&b, "");
    panto_stream *s = NULL;
    if (panto_stream_new(wire, o, &s) != PANTO_OK)
        exit(2);
    s->fast = fast;
    size_t pos = 0;
    int st = PANTO_NEED_MORE;
    while (pos < len) { /* all of it, even after DONE or an error */
        size_t want = pos == 0 && pl.first ? pl.first : pl.chunk;
        size_t n = want && len - pos > want ? want : len - pos;
        if (panto_stream_feed(s, in + pos, n) != PANTO_OK)
            break; /* the error is the stream's */
        pos += n;
        st = drain(s, &b, pl.per);
    }
    /* finish (which checks what follows the terminal), then the rest */
    panto_stream_finish(s);
    st = drain(s, &b, 0);
    panto_error e;
    panto_stream_error(s, &e);
    sb_add(&b, st == PANTO_DONE ? "DONE " : st == PANTO_ERROR ? "ERROR " : "NEED_MORE ");
    sb_add(&b, panto_error_code_name(e.code));
    sb_pstr(&b, e.message);
    sb_pstr(&b, e.provider_type);
    sb_add(&b, " at ");
    sb_num(&b, e.offset);
    sb_add(&b, e.retryable ? " retryable\n" : "\n");
    last_fast = s->n_fast;
    last_parsed = s->n_fast_parsed;
    parsed_total += s->n_fast_parsed;
    CHECK(fast || (last_fast == 0 && last_parsed == 0));
    panto_stream_free(s);
    return b.p;
}

static int n_cases;

/* Decode `in` every way; all transcripts equal the general path's whole
 * run.  Returns how many events the fast path took in the whole run. */
static uint64_t same(int wire, const panto_stream_options *o, const uint8_t *in, size_t len,
                     const char *name) {
    char *want = run(wire, o, in, len, 0, PLANS[0]);
    CHECK(last_fast == 0);
    uint64_t fast_whole = 0;
    n_cases++;
    for (size_t p = 0; p < N_PLANS; p++) {
        for (int fast = 0; fast <= 2; fast++) { /* 2: without fast_defer */
            char *got = run(wire, o, in, len, fast, PLANS[p]);
            if (fast && p == 0)
                fast_whole = last_fast;
            int ok = strcmp(got, want) == 0;
            CHECK(ok);
            if (!ok)
                fprintf(stderr, "%s (%s), fast %d, chunk %zu, per %zu:\n--- general\n%s--- got\n%s",
                        name, panto_wire_name(wire), fast, PLANS[p].chunk, PLANS[p].per, want, got);
            free(got);
        }
    }
    free(want);
    return fast_whole;
}

/* The same, for options under which the feeds' split itself matters
 * (max_buffer_bytes): each plan against the general path's run of it. */
static void same_per_plan(int wire, const panto_stream_options *o, const uint8_t *in, size_t len,
                          const char *name) {
    n_cases++;
    for (size_t p = 0; p < N_PLANS; p++) {
        char *want = run(wire, o, in, len, 0, PLANS[p]);
        for (int fast = 1; fast <= 2; fast++) {
            char *got = run(wire, o, in, len, fast, PLANS[p]);
            int ok = strcmp(got, want) == 0;
            CHECK(ok);
            if (!ok)
                fprintf(stderr, "%s (%s), fast %d, chunk %zu, per %zu:\n--- general\n%s--- got\n%s",
                        name, panto_wire_name(wire), fast, PLANS[p].chunk, PLANS[p].per, want, got);
            free(got);
        }
        free(want);
    }
}

static uint64_t same_str(int wire, const char *in, const char *name) {
    return same(wire, NULL, (const uint8_t *)in, strlen(in), name);
}

/* ---- mutations: one byte changed, inserted or removed, anywhere ---- */

static uint32_t rnd(uint32_t *st) {
    uint32_t x = *st;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *st = x;
}

/* n variants of in, each with one random edit; fast and general path
 * must agree on every one (whole, and fed in 37-byte pieces). */
static void mutations(int wire, const char *in, int n, uint32_t seed) {
    static const uint8_t bytes[] = {'"', '\\', ',', ':', '{', '}', '[', ']', ' ', '\t', '\n',
                                    '\r', 'x', '0', '9', '-', 'u', 'n', 0xC3, 0xA9, 0xFF, 0x00};
    size_t len = strlen(in);
    uint8_t *buf = malloc(len + 2);
    uint32_t st = seed;
    int differ = 0;
    for (int k = 0; k < n && !differ; k++) {
        size_t at = rnd(&st) % len, m = len;
        uint8_t c = bytes[rnd(&st) % sizeof bytes];
        switch (rnd(&st) % 3) {
        case 0: /* replace */
            memcpy(buf, in, len);
            buf[at] = c;
            break;
        case 1: /* insert */
            memcpy(buf, in, at);
            buf[at] = c;
            memcpy(buf + at + 1, in + at, len - at);
            m = len + 1;
            break;
        default: /* remove */
            memcpy(buf, in, at);
            memcpy(buf + at, in + at + 1, len - at - 1);
            m = len - 1;
            break;
        }
        static const plan whole = {0, 0, 0}, pieces = {37, 0, 0};
        char *want = run(wire, NULL, buf, m, 0, whole);
        char *got = run(wire, NULL, buf, m, 1, whole);
        char *got2 = run(wire, NULL, buf, m, 1 + (k & 1), pieces); /* 2: no fast_defer */
        if (strcmp(want, got) != 0 || strcmp(want, got2) != 0) {
            differ = 1;
            fprintf(stderr, "mutation %d (at %zu, byte 0x%02x) of the %s stream:\n--- general\n%s--- fast\n%s--- fast, pieces\n%s",
                    k, at, c, panto_wire_name(wire), want, got, got2);
        }
        free(want);
        free(got);
        free(got2);
    }
    CHECK(!differ);
    free(buf);
}

/* ---- the fixtures ---- */

static void test_fixtures(void) {
    DIR *d = opendir("tests/fixtures");
    CHECK(d != NULL);
    if (!d)
        return;
    int files = 0;
    uint64_t fast = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t nl = strlen(e->d_name);
        if (nl < 5 || strcmp(e->d_name + nl - 4, ".sse") != 0)
            continue;
        char path[512];
        snprintf(path, sizeof path, "tests/fixtures/%s", e->d_name);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (!f)
            continue;
        static uint8_t buf[1 << 20];
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        files++;
        fast += same(PANTO_WIRE_OPENAI_CHAT, NULL, buf, n, e->d_name);
        fast += same(PANTO_WIRE_ANTHROPIC_MESSAGES, NULL, buf, n, e->d_name);
        fast += same(PANTO_WIRE_OPENAI_RESPONSES, NULL, buf, n, e->d_name);
    }
    closedir(d);
    CHECK(files >= 40);
    CHECK(fast > 50); /* the fixtures do exercise the fast paths */
    /* also after the general SSE parser (CR line ends, split feeds) */
    CHECK(parsed_total > 500);
}

/* ---- Anthropic ---- */

#define AN_START                                                                              \
    "event: message_start\n"                                                                  \
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\","   \
    "\"role\":\"assistant\",\"model\":\"claude\",\"content\":[],\"stop_reason\":null,"        \
    "\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\n"
#define AN_BLOCK(i, type, extra)                                                              \
    "event: content_block_start\n"                                                            \
    "data: {\"type\":\"content_block_start\",\"index\":" #i ",\"content_block\":{\"type\":\"" \
    type "\"" extra "}}\n\n"
#define AN_STOP(i)                                                                            \
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":" #i "}\n\n"
#define AN_END                                                                                \
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"     \
    "\"end_turn\"},\"usage\":{\"output_tokens\":9}}\n\n"                                      \
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
#define AN_DELTA(i, body)                                                                     \
    "event: content_block_delta\n"                                                            \
    "data: {\"type\":\"content_block_delta\",\"index\":" #i ",\"delta\":" body "}\n\n"
#define AN_TEXT(i, t) AN_DELTA(i, "{\"type\":\"text_delta\",\"text\":\"" t "\"}")

/* A text block whose second delta is `ev` (a whole event, or anything). */
static uint64_t an_case(const char *ev, const char *name) {
    sb b = {0};
    sb_add(&b, AN_START AN_BLOCK(0, "text", ",\"text\":\"\"") AN_TEXT(0, "Hello"));
    sb_add(&b, ev);
    sb_add(&b, AN_TEXT(0, " world") AN_STOP(0) AN_END);
    uint64_t r = same_str(PANTO_WIRE_ANTHROPIC_MESSAGES, b.p, name);
    free(b.p);
    return r;
}

static void test_anthropic(void) {
    const char *canon;
    /* the canonical stream takes the fast path for every delta */
    canon =
        AN_START AN_BLOCK(0, "thinking", ",\"thinking\":\"\",\"signature\":\"\"")
        AN_DELTA(0, "{\"type\":\"thinking_delta\",\"thinking\":\"Let me think\"}")
        AN_DELTA(0, "{\"type\":\"thinking_delta\",\"thinking\":\" \\\"hard\\\" \\u00e9\\ud83d\\ude00\"}")
        AN_DELTA(0, "{\"type\":\"signature_delta\",\"signature\":\"c2lnbmF0dXJl\"}")
        AN_STOP(0) AN_BLOCK(1, "text", ",\"text\":\"\"")
        AN_TEXT(1, "Hi \xc3\xa9\xe4\xb8\xad\xf0\x9f\x98\x80 there\\n")
        "event: content_block_delta\n"
        "data: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"!\"}}      \n\n"
        "event: content_block_delta\n"
        "data:{\"type\": \"content_block_delta\", \"index\" :1 ,\t\"delta\": { \"type\" : \"text_delta\" , \"text\" : \"ws\" } }\n\n"
        AN_STOP(1) AN_BLOCK(12, "tool_use", ",\"id\":\"toolu_1\",\"name\":\"bash\",\"input\":{}")
        AN_DELTA(12, "{\"type\":\"input_json_delta\",\"partial_json\":\"\"}")
        AN_DELTA(12, "{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"cmd\\\": \"}")
        AN_DELTA(12, "{\"type\":\"input_json_delta\",\"partial_json\":\"\\\"ls\\\"}\"}")
        AN_STOP(12) AN_END;
    CHECK_EQ_INT(same_str(PANTO_WIRE_ANTHROPIC_MESSAGES, canon, "anthropic canonical"), 9);
    mutations(PANTO_WIRE_ANTHROPIC_MESSAGES, canon, 10000, 0x12345u);

    /* fast-path shaped events the general path must decide */
    static const struct {
        const char *ev;
        int fast; /* 1: the fast path takes it */
    } cases[] = {
        {AN_TEXT(0, "plain"), 1},
        {AN_TEXT(0, ""), 1},
        {AN_TEXT(0, "bad \xff utf8"), 0},
        {AN_TEXT(0, "overlong \xc0\xaf"), 0},
        {AN_TEXT(0, "surrogate \xed\xa0\x80"), 0},
        {AN_TEXT(0, "cut \xe4\xb8"), 0},
        {AN_TEXT(0, "bad \\x escape"), 0},
        {AN_TEXT(0, "lone \\ud800 surrogate"), 0},
        {AN_TEXT(0, "low \\udc00 first"), 0},
        {AN_TEXT(0, "short \\u12"), 0},
        {AN_TEXT(0, "tab\there"), 0},
        {AN_TEXT(0, "nul\x01"), 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"unterminated}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}} x\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 1},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\r\n\r\n", 0},
        {"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\ndata: {}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\n\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\nid: 7\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {": comment\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: message\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_deltas\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata:  {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 1},
        {"event: content_block_delta\ndata: {\"index\":0,\"type\":\"content_block_delta\",\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"text\":\"x\",\"type\":\"text_delta\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\",\"text\":\"y\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"},\"index\":0}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"},\"index\":5}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"thinking\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":5}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":null}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"future_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":00,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0.0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":-0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":18446744073709551616,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":\"0\",\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"typ\\u0065\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_d\\u0065lta\",\"text\":\"x\"}}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":[\"x\"]}\n\n", 0},
        {"event: content_block_delta\ndata: [1]\n\n", 0},
        {"event: content_block_delta\ndata: \n\n", 0},
        {"event: content_block_delta\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}", 0},
        /* padding: runs of spaces and tabs longer than 16 bytes */
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}                    }                \n\n", 1},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}\t \t \t \t \t \t \t \t \t}\n\n", 1},
        /* 32 bytes and more of padding after the text's quote (the 32-byte
         * look at the event's end found no other byte: __builtin_ctz(0),
         * undefined, until it checked) */
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"                                        }}\n\n", 1},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t}}\n\n", 1},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}                 \n}\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}                 x\n\n", 0},
        {"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}                 \r\n\n", 0},
        /* the general SSE parser's events: CR line ends, comments, fields */
        {"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"crlf\"}}\r\n\r\n", 0},
        {": ping\nevent: content_block_delta\nid: 9\ndata: {\"type\":\"content_block_delta\",\"index\":0,\ndata: \"delta\":{\"type\":\"text_delta\",\"text\":\"two lines\"}}\n\n", 0},
        {"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"bad \xc3\"}}\r\n\r\n", 0},
        {"event: content_block_delta\r\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}} y\r\n\r\n", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "anthropic case %zu", i);
        uint64_t fast = an_case(cases[i].ev, name);
        /* "Hello", " world" and the case itself when it is fast (a case
         * that fails ends the stream before " world") */
        if (cases[i].fast ? fast != 3 : fast > 2) {
            CHECK_EQ_INT(fast, 2 + cases[i].fast);
            fprintf(stderr, "  in %s\n", name);
        }
    }

    /* before message_start, after the block stopped, a skipped block */
    CHECK_EQ_INT(same_str(PANTO_WIRE_ANTHROPIC_MESSAGES, AN_TEXT(0, "x") AN_START AN_END,
                          "delta before start"), 0);
    CHECK_EQ_INT(same_str(PANTO_WIRE_ANTHROPIC_MESSAGES,
                          AN_START AN_BLOCK(0, "text", "") AN_STOP(0) AN_TEXT(0, "x") AN_END,
                          "delta after stop"), 0);
    /* the padding before the last '}' read in one look (an_tail32): none,
     * tabs, 15 spaces, more than its 32 bytes, other bytes in it */
    static const char *const tails[] = {
        "}}", "}\t}", "} \t }", "}               }", "}                                }",
        "}   }  ", "} x}", "}}}", "} ,}", "}  \r}", "}  }\r", "}\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t\t}",
    };
    for (size_t k = 0; k < sizeof tails / sizeof tails[0]; k++) {
        char ev[512];
        snprintf(ev, sizeof ev,
                 "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
                 "\"delta\":{\"type\":\"text_delta\",\"text\":\"pad\"%s\n\n",
                 tails[k]);
        char in[2048];
        snprintf(in, sizeof in, "%s%s%s%s%s", AN_START AN_BLOCK(0, "text", ""), ev, ev,
                 AN_STOP(0), AN_END);
        same_str(PANTO_WIRE_ANTHROPIC_MESSAGES, in, "padding");
    }
    /* the block the fast path looked up last (an_fast_slot keeps it): stopped,
     * then another block of another kind under the next index */
    CHECK_EQ_INT(same_str(PANTO_WIRE_ANTHROPIC_MESSAGES,
                          AN_START AN_BLOCK(0, "text", "") AN_TEXT(0, "a") AN_TEXT(0, "b")
                          AN_STOP(0) AN_TEXT(0, "x") AN_END,
                          "cached block stopped"), 2);
    CHECK_EQ_INT(same_str(PANTO_WIRE_ANTHROPIC_MESSAGES,
                          AN_START AN_BLOCK(0, "text", "") AN_TEXT(0, "a") AN_STOP(0)
                          AN_BLOCK(1, "thinking", ",\"thinking\":\"\",\"signature\":\"\"")
                          AN_DELTA(1, "{\"type\":\"thinking_delta\",\"thinking\":\"t\"}")
                          AN_TEXT(1, "x") AN_END,
                          "cached block, next kind"), 2);
    /* a server block streams input_json_delta without content deltas */
    CHECK_EQ_INT(same_str(PANTO_WIRE_ANTHROPIC_MESSAGES,
                          AN_START AN_BLOCK(0, "server_tool_use", ",\"id\":\"s\",\"name\":\"web\",\"input\":{}")
                          AN_DELTA(0, "{\"type\":\"input_json_delta\",\"partial_json\":\"{}\"}")
                          AN_STOP(0) AN_END, "server block"), 0);
}

/* ---- OpenAI ---- */

#define OA_HEAD "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764794573,\"model\":\"gpt\","
#define OA_START OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}]}\n\n"
#define OA_CHUNK(delta) OA_HEAD "\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":" delta ",\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"abc\"}\n\n"
#define OA_TEXT(t) OA_CHUNK("{\"content\":\"" t "\"}")
#define OA_END                                                                                \
    OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"        \
    OA_HEAD "\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n\n"     \
    "data: [DONE]\n\n"

static uint64_t oa_case(const char *ev, const char *name) {
    sb b = {0};
    sb_add(&b, OA_START OA_TEXT("Hello"));
    sb_add(&b, ev);
    sb_add(&b, OA_TEXT(" world") OA_END);
    uint64_t r = same_str(PANTO_WIRE_OPENAI_CHAT, b.p, name);
    free(b.p);
    return r;
}

#define OA_TOOL(idx, args) OA_CHUNK("{\"tool_calls\":[{\"index\":" #idx ",\"function\":{\"arguments\":\"" args "\"}}]}")

static void test_openai(void) {
    const char *canon;
    canon =
        OA_START OA_CHUNK("{\"reasoning_content\":\"Let me \\\"think\\\"\"}")
        OA_CHUNK("{\"reasoning_content\":\"\",\"reasoning\":\"alt\"}")
        OA_CHUNK("{\"reasoning\":null,\"content\":\"Hi \xc3\xa9\xf0\x9f\x98\x80 \\u00e9\\n\"}")
        OA_TEXT("more") OA_TEXT("")
        OA_CHUNK("{\"content\":null}")
        OA_CHUNK("{}")
        OA_CHUNK("null")
        "data:{ \"choices\" : [ { \"delta\" : { \"content\" : \"ws\" } , \"index\" : 0 } ] ,\t\"id\" : \"x\" }  \n\n"
        OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
        OA_TOOL(0, "{\\\"cmd\\\"") OA_TOOL(0, ": \\\"ls\\\"}")
        OA_CHUNK("{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"bash\",\"arguments\":null}}]}")
        OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"id\":\"call_2\",\"type\":\"function\",\"function\":{\"name\":\"cat\",\"arguments\":\"\"}}]},\"finish_reason\":null}]}\n\n"
        OA_TOOL(1, "{}") OA_TOOL(0, "") OA_END;
    CHECK_EQ_INT(same_str(PANTO_WIRE_OPENAI_CHAT, canon, "openai canonical"), 14);
    mutations(PANTO_WIRE_OPENAI_CHAT, canon, 10000, 0x6789u);

    static const struct {
        const char *ev;
        int fast;
    } cases[] = {
        {OA_TEXT("plain"), 1},
        {OA_TEXT("bad \xff utf8"), 0},
        {OA_TEXT("bad \\q escape"), 0},
        {OA_TEXT("lone \\udbff"), 0},
        {OA_TEXT("ctl \x1f"), 0},
        {OA_CHUNK("{\"content\":\"x\",\"content\":\"y\"}"), 0},
        {OA_CHUNK("{\"content\":\"x\",\"role\":\"assistant\",\"extra\":[1]}"), 0},
        {OA_CHUNK("{\"content\":\"x\",\"extra\":{}}"), 0},
        {OA_CHUNK("{\"content\":\"x\",\"extra\":-1.5e3}"), 1},
        {OA_CHUNK("{\"content\":\"x\",\"extra\":01}"), 0},
        {OA_CHUNK("{\"content\":\"x\",\"extra\":tru}"), 0},
        {OA_CHUNK("{\"content\":5}"), 0},
        {OA_CHUNK("{\"content\":[{\"type\":\"text\",\"text\":\"parts\"}]}"), 0},
        {OA_CHUNK("{\"refusal\":\"no\"}"), 0},
        {OA_CHUNK("{\"refusal\":null,\"function_call\":null,\"tool_calls\":null}"), 1},
        {OA_CHUNK("{\"function_call\":{\"name\":\"f\",\"arguments\":\"\"}}"), 0},
        {OA_CHUNK("{\"con\\u0074ent\":\"x\"}"), 0},
        {OA_CHUNK("{\"content\":\"x\"},\"delta\":{\"content\":\"y\"}"), 0},
        {OA_HEAD "\"choices\":[{\"index\":1,\"delta\":{\"content\":\"x\"}}]}\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}},{\"index\":1,\"delta\":{\"content\":\"y\"}}]}\n\n", 0},
        {OA_HEAD "\"choices\":[{\"delta\":{\"content\":\"x\"}}]}\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"finish_reason\":\"length\"}]}\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}],\"choices\":[]}\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}],\"error\":null}\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}],\"error\":{\"message\":\"boom\",\"type\":\"server_error\"}}\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}],\"usage\":{\"completion_tokens\":1}}\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}x\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\r\n\r\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n", 1},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\ndata: {}\n\n", 0},
        {"event: chunk\n" OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}],\n\"x\":1}\n\n", 0},
        {OA_HEAD "\"choices\":{}}\n\n", 0},
        {OA_HEAD "\"choices\":null}\n\n", 0},
        {"data: {}\n\n", 0},
        {"data: []\n\n", 0},
        {"data: \n\n", 0},
        {OA_TOOL(0, "x"), 0},   /* no tool call 0 is open */
        {OA_TOOL(00, "x"), 0},
        {OA_CHUNK("{\"tool_calls\":[{\"function\":{\"arguments\":\"x\"}}]}"), 0},
        {OA_CHUNK("{\"tool_calls\":[]}"), 0},
        /* against the template (the chunks around): other values */
        {"data: {\"id\":\"chatcmpl-2\",\"object\":\"chat.completion.chunk\",\"created\":1764794573,\"model\":\"gpt\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"other id\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"abcdefghijklmnopqrstuvwxyz\"}\n\n", 1},
        {"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764794574,\"model\":\"gpt\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"other number\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"abc\"}\n\n", 1},
        {"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764794573,\"modelx\":\"gpt\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"other key\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"abc\"}\n\n", 1},
        {"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764794573,\"model\":\"gpt\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"abc\",\"extra\":1}\n\n", 1},
        {"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764794573,\"model\":\"gpt\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"abc\"\n\n", 0},
        {"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764794573,\"model\":\"gpt\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"a\\\"c\"}\n\n", 1},
        {"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764794573,\"model\":\"gpt\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"a\\qc\"}\n\n", 0},
        {"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764794573,\"model\":\"gpt\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":null},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"abc\"}\n\n", 1},
        {"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764794573,\"model\":\"gpt\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\",\"content\":\"y\"},\"logprobs\":null,\"finish_reason\":null}],\"usage\":null,\"obfuscation\":\"abc\"}\n\n", 0},
        {"data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1764794573,\"model\":\"gpt\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"},\"logprobs\":null,\"finish_reason\":\"stop\"}],\"usage\":null,\"obfuscation\":\"abc\"}\n\n", 0},
        {"data:                     {\"id\":\"chatcmpl-1\",                  \"choices\":[{\"index\":0,\"delta\":{\"content\":\"pad\"}}]}                     \n\n", 1},
        /* the general SSE parser's events */
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"crlf\"}}]}\r\n\r\n", 0},
        {": keep-alive\n" OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"comment\"}}]}\n\n", 0},
        {OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"content\":\"crlf bad \xe2\x82\"}}]}\r\n\r\n", 0},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char name[64];
        snprintf(name, sizeof name, "openai case %zu", i);
        uint64_t fast = oa_case(cases[i].ev, name);
        if (cases[i].fast ? fast != 3 : fast > 2) {
            CHECK_EQ_INT(fast, 2 + cases[i].fast);
            fprintf(stderr, "  in %s\n", name);
        }
    }
    /* tool call fragments: open, closed after finish_reason, bad index */
    const char *tools =
        OA_START OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":3,\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n"
        OA_TOOL(3, "{\\\"a\\\":") OA_CHUNK("{\"content\":\"text\",\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"1}\"}}]}")
        OA_CHUNK("{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"x\",\"arguments\":\"y\"}}]}")
        OA_CHUNK("{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":{}}}]}")
        OA_CHUNK("{\"tool_calls\":[{\"index\":3,\"function\":{\"arguments\":\"z\"}},{\"index\":3,\"function\":{\"arguments\":\"w\"}}]}")
        OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
        OA_TOOL(3, "late") "data: [DONE]\n\n";
    CHECK_EQ_INT(same_str(PANTO_WIRE_OPENAI_CHAT, tools, "openai tools"), 2);
    /* before the message started */
    CHECK_EQ_INT(same_str(PANTO_WIRE_OPENAI_CHAT, OA_TEXT("x") "data: [DONE]\n\n", "first chunk"), 0);
}

/* ---- limits: the same error whichever path decodes ---- */

static void test_limits(void) {
    const char *an = AN_START AN_BLOCK(0, "text", "") AN_TEXT(0, "0123456789") AN_TEXT(0, "0123456789")
        AN_TEXT(0, "0123456789abcdefghij") AN_STOP(0) AN_END;
    const char *oa = OA_START OA_TEXT("0123456789") OA_TEXT("0123456789") OA_TEXT("0123456789abcdefghij") OA_END;
    static const size_t events[] = {60, 100, 130, 140, 150, 200, 300, 330, 340, 400};
    static const size_t blocks[] = {5, 10, 19, 20, 25, 30, 39, 40, 41};
    static const uint32_t depths[] = {1, 2, 3, 4, 5, 6, 7, 8};
    /* a tool call fragment nests 7 deep: root, choices, choice, delta,
     * tool_calls, the call, function */
    const char *tools =
        OA_START OA_HEAD "\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n\n"
        OA_TOOL(0, "{}") OA_TOOL(0, "") OA_END;
    for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
        panto_stream_options o;
        panto_stream_options_init(&o, PANTO_STREAM_OPTIONS_VERSION);
        o.max_json_depth = depths[i];
        same(PANTO_WIRE_OPENAI_CHAT, &o, (const uint8_t *)tools, strlen(tools), "tool depth");
    }
    for (int w = 0; w < 2; w++) {
        int wire = w ? PANTO_WIRE_OPENAI_CHAT : PANTO_WIRE_ANTHROPIC_MESSAGES;
        const char *in = w ? oa : an;
        panto_stream_options o;
        for (size_t i = 0; i < sizeof events / sizeof events[0]; i++) {
            panto_stream_options_init(&o, PANTO_STREAM_OPTIONS_VERSION);
            o.max_event_bytes = events[i];
            same(wire, &o, (const uint8_t *)in, strlen(in), "max_event_bytes");
        }
        for (size_t i = 0; i < sizeof blocks / sizeof blocks[0]; i++) {
            panto_stream_options_init(&o, PANTO_STREAM_OPTIONS_VERSION);
            o.max_block_bytes = blocks[i];
            same(wire, &o, (const uint8_t *)in, strlen(in), "max_block_bytes");
        }
        for (size_t i = 0; i < sizeof depths / sizeof depths[0]; i++) {
            panto_stream_options_init(&o, PANTO_STREAM_OPTIONS_VERSION);
            o.max_json_depth = depths[i];
            same(wire, &o, (const uint8_t *)in, strlen(in), "max_json_depth");
        }
        /* a feed's limit counts what the SSE parser has not taken: the
         * same when the fast path waits for the rest of a cut event
         * (fast_defer leaves the bytes of its event line in the input) */
        for (size_t b = 7; b <= 400; b += 3) {
            panto_stream_options_init(&o, PANTO_STREAM_OPTIONS_VERSION);
            o.max_buffer_bytes = b;
            same_per_plan(wire, &o, (const uint8_t *)in, strlen(in), "max_buffer_bytes");
        }
        /* the start whole, then the deltas in pieces: limits near what
         * the parser holds of a cut delta event */
        size_t first = strlen(w ? OA_START : AN_START AN_BLOCK(0, "text", ""));
        for (size_t c = 30; c <= 330; c += 20) {
            for (size_t b = first; b <= first + 200; b++) {
                panto_stream_options_init(&o, PANTO_STREAM_OPTIONS_VERSION);
                o.max_buffer_bytes = b;
                plan pl = {c, 0, first};
                char *want = run(wire, &o, (const uint8_t *)in, strlen(in), 0, pl);
                for (int fast = 1; fast <= 2; fast++) {
                    char *got = run(wire, &o, (const uint8_t *)in, strlen(in), fast, pl);
                    int ok = strcmp(got, want) == 0;
                    CHECK(ok);
                    if (!ok)
                        fprintf(stderr, "max_buffer_bytes %zu (%s), fast %d, first %zu, chunk %zu:\n--- general\n%s--- got\n%s",
                                b, panto_wire_name(wire), fast, first, c, want, got);
                    free(got);
                }
                free(want);
            }
        }
    }
}

/* ---- a reset stream forgets the fast paths' caches ---- */

static void test_reset(void) {
    /* block 0 is open text when the first response is cut short; the
     * retry sends a delta to a block 0 that never started: the general
     * path's protocol error, as on a new stream */
    const char *a = AN_START AN_BLOCK(0, "text", "") AN_TEXT(0, "a") AN_TEXT(0, "b");
    const char *b = AN_START AN_TEXT(0, "c") AN_END;
    for (int fast = 0; fast <= 1; fast++) {
        panto_stream *s = NULL;
        if (panto_stream_new(PANTO_WIRE_ANTHROPIC_MESSAGES, NULL, &s) != PANTO_OK)
            exit(2);
        s->fast = fast;
        sb out = {0};
        sb_add(&out, "");
        CHECK(panto_stream_feed(s, (const uint8_t *)a, strlen(a)) == PANTO_OK);
        drain(s, &out, 0);
        uint64_t before = s->n_fast; /* the test counter survives a reset */
        CHECK(panto_stream_reset(s) == PANTO_OK);
        s->fast = fast;
        free(out.p);
        out = (sb){0};
        sb_add(&out, "");
        CHECK(panto_stream_feed(s, (const uint8_t *)b, strlen(b)) == PANTO_OK);
        int st = drain(s, &out, 0);
        panto_error e;
        panto_stream_error(s, &e);
        CHECK(st == PANTO_ERROR);
        CHECK(e.code == PANTO_ERR_PROTOCOL);
        if (fast)
            CHECK_EQ_INT(s->n_fast, before);
        char *fresh = run(PANTO_WIRE_ANTHROPIC_MESSAGES, NULL, (const uint8_t *)b, strlen(b), fast,
                          PLANS[0]);
        /* the same events and error as a new stream (run adds the status) */
        CHECK(strncmp(fresh, out.p, strlen(out.p)) == 0);
        free(fresh);
        free(out.p);
        panto_stream_free(s);
    }
}

/* ---- queued events borrow the input: a feed must not move it ---- */

static void test_borrowed_input(void) {
    /* Decode one event (its delta text borrowed from the input buffer),
     * leave it queued, then feed enough to make the buffer grow: the
     * queued text must be intact (ASan catches a use after free). */
    sb b = {0};
    sb_add(&b, AN_START AN_BLOCK(0, "text", "") AN_TEXT(0, "borrowed text"));
    panto_stream *s = NULL;
    panto_stream_new(PANTO_WIRE_ANTHROPIC_MESSAGES, NULL, &s);
    CHECK(panto_stream_feed(s, (const uint8_t *)b.p, b.len) == PANTO_OK);
    panto_event ev;
    int saw = 0;
    for (int k = 0; k < 3; k++)
        CHECK(panto_next_event(s, &ev) == PANTO_EVENT); /* start, block start, delta */
    CHECK(ev.kind == PANTO_EV_CONTENT_DELTA);
    CHECK(s->n_fast == 1);
    /* two deltas in one event: one is still queued after the first pull */
    sb more = {0};
    for (int k = 0; k < 2000; k++)
        sb_add(&more, AN_TEXT(0, "filler filler filler filler filler"));
    sb_add(&more, AN_STOP(0) AN_END);
    const char *oa = OA_START OA_CHUNK("{\"reasoning_content\":\"think\",\"content\":\"say\"}");
    panto_stream *t = NULL;
    panto_stream_new(PANTO_WIRE_OPENAI_CHAT, NULL, &t);
    CHECK(panto_stream_feed(t, (const uint8_t *)oa, strlen(oa)) == PANTO_OK);
    for (int k = 0; k < 3; k++)
        CHECK(panto_next_event(t, &ev) == PANTO_EVENT); /* start, block start, thinking delta */
    CHECK(t->n_fast == 1 && t->q_len > 0 && t->in_borrowed);
    /* grow the input while "say" is queued */
    CHECK(panto_stream_feed(t, (const uint8_t *)more.p, more.len) == PANTO_OK);
    CHECK(t->in_keep.p != NULL);
    CHECK(panto_stream_feed(t, (const uint8_t *)more.p, 10) == PANTO_OK);
    for (;;) {
        int r = panto_next_event(t, &ev);
        if (r != PANTO_EVENT)
            break;
        if (ev.kind == PANTO_EV_CONTENT_DELTA && ev.u.content_delta.block_kind == PANTO_BLOCK_TEXT) {
            CHECK_STR(ev.u.content_delta.text.ptr, ev.u.content_delta.text.len, "say");
            saw = 1;
            break;
        }
    }
    CHECK(saw);
    CHECK(t->in_keep.p != NULL); /* freed only when the queue drains */
    panto_stream_free(t);
    panto_stream_free(s);
    free(more.p);
    free(b.p);
}

/* ---- OpenAI Responses ---- */

#define RS_E(type, json) "event: " type "\ndata: " json "\n\n"
#define RS_START                                                                            \
    RS_E("response.created", "{\"type\":\"response.created\",\"sequence_number\":0,"         \
         "\"response\":{\"id\":\"resp_1\",\"model\":\"gpt-x\"}}")                            \
    RS_E("response.output_item.added", "{\"type\":\"response.output_item.added\","           \
         "\"output_index\":0,\"item\":{\"id\":\"rs_1\",\"type\":\"reasoning\",\"summary\":[]}}") \
    RS_E("response.output_item.added", "{\"type\":\"response.output_item.added\","           \
         "\"output_index\":1,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[]}}") \
    RS_E("response.content_part.added", "{\"type\":\"response.content_part.added\","         \
         "\"output_index\":1,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\"}}")
#define RS_TXT(delta)                                                                       \
    RS_E("response.output_text.delta", "{\"type\":\"response.output_text.delta\",\"sequence_number\":5," \
         "\"item_id\":\"msg_1\",\"output_index\":1,\"content_index\":0,\"delta\":\"" delta    \
         "\",\"logprobs\":[],\"obfuscation\":\"xY\"}")
#define RS_SUM(delta)                                                                       \
    RS_E("response.reasoning_summary_text.delta", "{\"type\":\"response.reasoning_summary_text.delta\"," \
         "\"item_id\":\"rs_1\",\"output_index\":0,\"summary_index\":0,\"delta\":\"" delta "\"}")
#define RS_CALL                                                                             \
    RS_E("response.output_item.added", "{\"type\":\"response.output_item.added\","           \
         "\"output_index\":2,\"item\":{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"f\",\"arguments\":\"\"}}")
#define RS_ARGS(delta)                                                                      \
    RS_E("response.function_call_arguments.delta", "{\"type\":\"response.function_call_arguments.delta\"," \
         "\"item_id\":\"fc_1\",\"output_index\":2,\"delta\":\"" delta "\"}")
#define RS_END                                                                              \
    RS_E("response.completed", "{\"type\":\"response.completed\",\"response\":{\"status\":\"completed\"," \
         "\"usage\":{\"input_tokens\":9,\"output_tokens\":4}}}")

static void test_responses(void) {
    const int W = PANTO_WIRE_OPENAI_RESPONSES;
    const char *canon = RS_START RS_SUM("Let me \\\"think\\\"") RS_SUM("") RS_TXT("Hi \xc3\xa9\xf0\x9f\x98\x80 \\u00e9\\n")
        RS_TXT("more") RS_TXT("")
        "event: response.output_text.delta\ndata:{ \"delta\" : \"ws\" ,\t\"content_index\" : 0 , \"output_index\" : 1 , \"type\" : \"response.output_text.delta\" }  \n\n"
        RS_CALL RS_ARGS("{\\\"cmd\\\"") RS_ARGS(": \\\"ls\\\"}") RS_END;
    /* every delta event but the empty ones goes the fast way */
    CHECK(same_str(W, canon, "responses canonical") >= 7);
    mutations(W, canon, 10000, 0x2727u);

    static const struct {
        const char *ev;
        int fast;
    } cases[] = {
        {RS_TXT("plain"), 1},
        /* the event line names another type: the general path */
        {"event: response.output_text.deltx\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":1,\"content_index\":0,\"delta\":\"x\"}\n\n", 0},
        /* a duplicate member, a non-empty logprobs, no content_index, an
         * index out of range, a part never added: the general path */
        {RS_E("response.output_text.delta", "{\"type\":\"response.output_text.delta\",\"output_index\":1,\"content_index\":0,\"delta\":\"a\",\"delta\":\"b\"}"), 0},
        {RS_E("response.output_text.delta", "{\"type\":\"response.output_text.delta\",\"output_index\":1,\"content_index\":0,\"delta\":\"a\",\"logprobs\":[{\"t\":1}]}"), 0},
        {RS_E("response.output_text.delta", "{\"type\":\"response.output_text.delta\",\"output_index\":1,\"delta\":\"a\"}"), 0},
        {RS_E("response.output_text.delta", "{\"type\":\"response.output_text.delta\",\"output_index\":1,\"content_index\":1,\"delta\":\"a\"}"), 0},
        {RS_E("response.output_text.delta", "{\"type\":\"response.output_text.delta\",\"output_index\":1,\"content_index\":01,\"delta\":\"a\"}"), 0},
        /* a summary delta for the text block: a protocol error, decided by the general path */
        {RS_E("response.reasoning_summary_text.delta", "{\"type\":\"response.reasoning_summary_text.delta\",\"output_index\":1,\"delta\":\"a\"}"), 0},
        /* CR line ends: the general SSE parser (the same events) */
        {"event: response.output_text.delta\r\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":1,\"content_index\":0,\"delta\":\"cr\"}\r\n\r\n", 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        sb b = {0};
        sb_add(&b, RS_START);
        sb_add(&b, cases[k].ev);
        sb_add(&b, RS_END);
        uint64_t fast = same_str(W, b.p, "responses case");
        if ((fast > 0) != (cases[k].fast > 0)) {
            CHECK(0 && "fast path taken or not as expected");
            fprintf(stderr, "responses case %zu: fast %llu\n", k, (unsigned long long)fast);
        }
        free(b.p);
    }
}

/* ---- Responses: the events that repeat a long text ----
 *
 * output_text.done, content_part.done, output_item.done and
 * response.completed repeat a block's whole text (and the call's
 * arguments): with the fast paths on, they are dispatched in place and
 * their long strings checked against the block's text (json.h: the hint)
 * or the last long string read (seen) instead of scanned.  The general
 * path scans everything: both must agree, whatever the repeated text
 * holds -- the same text escaped otherwise, another text, bad JSON. */

/* One piece of the message text, written as JSON string bodies. */
static const char *const RS_PIECES[] = {
    "Plain prose, ", "caf\xc3\xa9 ", "\\u00e9t\\u00e9 ", "\xe6\x97\xa5\xe6\x9c\xac ", "\xf0\x9f\x98\x80 ",
    "\\ud83d\\ude00 ", "a \\\"quote\\\" ", "back\\\\slash ", "line\\nbreak ", "tab\\t ",
    "sl\\/ash ", "ctl \\u0001 ", "`code()` "};
#define RS_N_PIECES (sizeof RS_PIECES / sizeof RS_PIECES[0])

/* The stream: a message of n pieces (as deltas), a call with long
 * arguments, each repeated as the API repeats them; `done` is the text the
 * repeating events carry (NULL: the deltas' text as they came). */
static char *rs_long_stream(size_t n, const char *done) {
    sb text = {0}, args = {0}, b = {0}, enc = {0};
    sb_add(&text, "");
    for (size_t k = 0; k < n; k++) /* a reasoning item's encrypted_content */
        sb_add(&enc, "gAAAAABo+x/");
    for (size_t k = 0; k < n; k++)
        sb_add(&text, RS_PIECES[k % RS_N_PIECES]);
    sb_add(&args, "{\\\"path\\\": \\\"");
    for (size_t k = 0; k < n; k++)
        sb_add(&args, k % 3 ? "folder/" : "\\u00e9t\\u00e9/");
    sb_add(&args, "\\\"}");
    const char *t = done ? done : text.p;
    sb_add(&b, RS_E("response.created", "{\"type\":\"response.created\",\"sequence_number\":0,"
                    "\"response\":{\"id\":\"resp_1\",\"model\":\"gpt-x\"}}")
               RS_E("response.output_item.added", "{\"type\":\"response.output_item.added\","
                    "\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[]}}")
               RS_E("response.content_part.added", "{\"type\":\"response.content_part.added\","
                    "\"output_index\":0,\"content_index\":0,\"part\":{\"type\":\"output_text\",\"text\":\"\"}}"));
    for (size_t k = 0; k < n; k++) {
        sb_add(&b, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\","
                   "\"sequence_number\":");
        char num[32];
        snprintf(num, sizeof num, "%zu", k + 3);
        sb_add(&b, num);
        sb_add(&b, ",\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"delta\":\"");
        sb_add(&b, RS_PIECES[k % RS_N_PIECES]);
        sb_add(&b, "\",\"logprobs\":[],\"obfuscation\":\"xY\"}\n\n");
    }
    sb_add(&b, "event: response.output_text.done\ndata: {\"type\":\"response.output_text.done\","
               "\"item_id\":\"msg_1\",\"output_index\":0,\"content_index\":0,\"text\":\"");
    sb_add(&b, t);
    sb_add(&b, "\",\"logprobs\":[]}\n\nevent: response.content_part.done\ndata: {\"type\":"
               "\"response.content_part.done\",\"output_index\":0,\"content_index\":0,\"part\":"
               "{\"type\":\"output_text\",\"annotations\":[],\"text\":\"");
    sb_add(&b, t);
    sb_add(&b, "\"}}\n\nevent: response.output_item.done\ndata: {\"type\":\"response.output_item.done\","
               "\"output_index\":0,\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"content\":"
               "[{\"type\":\"output_text\",\"annotations\":[],\"text\":\"");
    sb_add(&b, t);
    sb_add(&b, "\"}],\"role\":\"assistant\"}}\n\n"
               RS_E("response.output_item.added", "{\"type\":\"response.output_item.added\","
                    "\"output_index\":1,\"item\":{\"type\":\"function_call\",\"call_id\":\"c1\","
                    "\"name\":\"f\",\"arguments\":\"\"}}"));
    sb_add(&b, "event: response.function_call_arguments.delta\ndata: {\"type\":"
               "\"response.function_call_arguments.delta\",\"output_index\":1,\"delta\":\"");
    sb_add(&b, args.p);
    sb_add(&b, "\"}\n\nevent: response.function_call_arguments.done\ndata: {\"type\":"
               "\"response.function_call_arguments.done\",\"output_index\":1,\"arguments\":\"");
    sb_add(&b, args.p);
    sb_add(&b, "\"}\n\nevent: response.output_item.done\ndata: {\"type\":\"response.output_item.done\","
               "\"output_index\":1,\"item\":{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"f\","
               "\"arguments\":\"");
    sb_add(&b, args.p);
    sb_add(&b, "\"}}\n\n"
               RS_E("response.output_item.added", "{\"type\":\"response.output_item.added\","
                    "\"output_index\":2,\"item\":{\"id\":\"rs_1\",\"type\":\"reasoning\",\"summary\":[]}}")
               RS_E("response.reasoning_summary_text.delta", "{\"type\":"
                    "\"response.reasoning_summary_text.delta\",\"output_index\":2,\"delta\":\"hmm\"}")
               "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\","
               "\"output_index\":2,\"item\":{\"id\":\"rs_1\",\"type\":\"reasoning\",\"summary\":"
               "[{\"type\":\"summary_text\",\"text\":\"hmm\"}],\"encrypted_content\":\"");
    sb_add(&b, enc.p);
    sb_add(&b, "\"}}\n\nevent: response.completed\ndata: {\"type\":\"response.completed\",\"response\":"
               "{\"status\":\"completed\",\"output\":[{\"type\":\"message\",\"content\":[{\"type\":"
               "\"output_text\",\"text\":\"");
    sb_add(&b, t);
    sb_add(&b, "\"}]},{\"type\":\"reasoning\",\"encrypted_content\":\"");
    sb_add(&b, enc.p);
    sb_add(&b, "\"},{\"type\":\"function_call\",\"arguments\":\"");
    sb_add(&b, args.p);
    sb_add(&b, "\"}],\"usage\":{\"input_tokens\":9,\"input_tokens_details\":{\"cached_tokens\":4},"
               "\"output_tokens\":7,\"output_tokens_details\":{\"reasoning_tokens\":2}}}}\n\n");
    free(text.p);
    free(args.p);
    free(enc.p);
    return b.p;
}

/* The text of n pieces with one edit: `from` (the first time) replaced by `to`. */
static char *rs_edited(size_t n, const char *from, const char *to) {
    sb text = {0};
    sb_add(&text, "");
    for (size_t k = 0; k < n; k++)
        sb_add(&text, RS_PIECES[k % RS_N_PIECES]);
    char *at = strstr(text.p, from);
    CHECK(at != NULL);
    sb out = {0};
    sb_addn(&out, text.p, (size_t)(at - text.p));
    sb_add(&out, to);
    sb_add(&out, at + strlen(from));
    free(text.p);
    return out.p;
}

static void test_responses_repeated_text(void) {
    const int W = PANTO_WIRE_OPENAI_RESPONSES;
    const size_t n = 200; /* a text of about 2.3 KB, arguments of 1.3 KB */
    char *canon = rs_long_stream(n, NULL);
    same_str(W, canon, "responses repeated text");

    /* with the fast paths, the repeats go in place and match the hint */
    panto_stream *s = NULL;
    panto_stream_new(W, NULL, &s);
    CHECK(panto_stream_feed(s, (const uint8_t *)canon, strlen(canon)) == PANTO_OK);
    panto_event ev;
    int r;
    while ((r = panto_next_event(s, &ev)) == PANTO_EVENT)
        ;
    CHECK_EQ_INT(r, PANTO_DONE);
    CHECK(panto_stream_finish(s) == PANTO_OK);
    CHECK(s->n_in_place >= 6);
    /* the text: output_text.done matches the hint, content_part.done and
     * output_item.done repeat its bytes (seen), response.completed's copy
     * matches the hint (the encrypted_content, scanned, is remembered
     * instead); the arguments: .done matches the hint, output_item.done
     * repeats it, response.completed matches the hint; the
     * encrypted_content in response.completed repeats the item's */
    CHECK_EQ_INT(s->doc.n_hinted, 4);
    CHECK_EQ_INT(s->doc.n_seen, 4);
    panto_stream_free(s);

    static const struct {
        const char *from, *to;
        int bad; /* bad JSON */
    } edits[] = {
        {"caf\xc3\xa9", "caf\\u00e9", 0},      /* the same text, escaped otherwise */
        {"\\u00e9t", "\xc3\xa9t", 0},          /* ... and the other way */
        {"\xf0\x9f\x98\x80", "\\ud83d\\ude00", 0},
        {"\\/", "/", 0},
        /* \uXXXX escapes of 1, 2 and 3 UTF-8 bytes, hex in either case:
         * the same text, or one differing in any of the bytes */
        {"Plain", "\\u0050lain", 0},
        {"\\u00e9t", "\\u00E9t", 0},
        {"\xe6\x97\xa5\xe6\x9c\xac", "\\u65e5\\u672c", 0},
        {"\xe6\x97\xa5\xe6\x9c\xac", "\\u65e5\\u672d", 0},
        {"\xe6\x97\xa5\xe6\x9c\xac", "\\u65e5\\u682c", 0},
        {"\xe6\x97\xa5\xe6\x9c\xac", "\\u75e5\\u672c", 0},
        {"caf\xc3\xa9", "caf\\u00e8", 0},
        {"caf\xc3\xa9", "caf\\u01e9", 0},
        {"Plain", "\\u0051lain", 0},
        {"\\u00e9t", "\\u00g9t", 1},
        {"\\u00e9t", "\\u00e", 1},
        {"Plain", "Plane", 0},                 /* another text: ignored, as the deltas came */
        {"`code()` ", "", 0},                  /* shorter */
        {"tab\\t", "tab\\t\\t", 0},            /* longer */
        {"caf\xc3\xa9", "caf\xc3", 1},         /* invalid UTF-8 */
        {"caf\xc3\xa9", "caf\xed\xa0\x80", 1}, /* an encoded surrogate */
        {"\\ud83d\\ude00", "\\ud83d", 1},      /* a lone surrogate */
        {"line\\n", "line\n", 1},              /* a raw control byte */
        {"line\\n", "line\r", 1},              /* ... a CR: it ends the long data line */
        {"tab\\t", "tab\t", 1},
        {"\\u0001", "\\u00x1", 1},             /* a bad escape */
        {"sl\\/", "sl\\q", 1},
    };
    for (size_t k = 0; k < sizeof edits / sizeof edits[0]; k++) {
        char *text = rs_edited(n, edits[k].from, edits[k].to);
        char *b = rs_long_stream(n, text);
        char name[64];
        snprintf(name, sizeof name, "responses repeated text, edit %zu", k);
        same_str(W, b, name);
        char *got = run(W, NULL, (const uint8_t *)b, strlen(b), 1, PLANS[0]);
        CHECK((strstr(got, "ERROR bad_json") != NULL) == edits[k].bad);
        free(got);
        free(text);
        free(b);
    }
    mutations(W, canon, 1500, 0x2828u);
    free(canon);
}

/* Parallel function calls: every call's arguments stream before the
 * first is done, so each `.done` repeats a block that is not the last one
 * opened; its arguments still match a hint (every open block is one). */
static void test_responses_parallel_calls(void) {
    const int W = PANTO_WIRE_OPENAI_RESPONSES;
    sb b = {0}, args[2] = {{0}, {0}};
    for (int c = 0; c < 2; c++) {
        for (int k = 0; k < 150; k++)
            sb_add(&args[c], c ? "{\\\"x\\\": 1} " : "caf\u00e9 \\n ");
    }
    sb_add(&b, RS_E("response.created", "{\"type\":\"response.created\",\"response\":{\"id\":\"r\"}}"));
    for (int c = 0; c < 2; c++) {
        char ev[256];
        snprintf(ev, sizeof ev,
                 RS_E("response.output_item.added", "{\"type\":\"response.output_item.added\","
                      "\"output_index\":%d,\"item\":{\"type\":\"function_call\",\"call_id\":\"c%d\","
                      "\"name\":\"f\",\"arguments\":\"\"}}"), c, c);
        sb_add(&b, ev);
    }
    for (int c = 0; c < 2; c++) {
        char ev[256];
        snprintf(ev, sizeof ev, "event: response.function_call_arguments.delta\ndata: {\"type\":"
                 "\"response.function_call_arguments.delta\",\"output_index\":%d,\"delta\":\"", c);
        sb_add(&b, ev);
        sb_add(&b, args[c].p);
        sb_add(&b, "\"}\n\n");
    }
    for (int c = 0; c < 2; c++) {
        char ev[256];
        snprintf(ev, sizeof ev, "event: response.function_call_arguments.done\ndata: {\"type\":"
                 "\"response.function_call_arguments.done\",\"output_index\":%d,\"arguments\":\"", c);
        sb_add(&b, ev);
        sb_add(&b, args[c].p);
        snprintf(ev, sizeof ev, "\"}\n\nevent: response.output_item.done\ndata: {\"type\":"
                 "\"response.output_item.done\",\"output_index\":%d,\"item\":{\"type\":"
                 "\"function_call\",\"call_id\":\"c%d\",\"name\":\"f\",\"arguments\":\"", c, c);
        sb_add(&b, ev);
        sb_add(&b, args[c].p);
        sb_add(&b, "\"}}\n\n");
    }
    sb_add(&b, RS_E("response.completed", "{\"type\":\"response.completed\",\"response\":{}}"));
    same_str(W, b.p, "responses parallel calls");

    panto_stream *s = NULL;
    panto_stream_new(W, NULL, &s);
    CHECK(panto_stream_feed(s, (const uint8_t *)b.p, strlen(b.p)) == PANTO_OK);
    panto_event ev;
    int r;
    while ((r = panto_next_event(s, &ev)) == PANTO_EVENT)
        ;
    CHECK_EQ_INT(r, PANTO_DONE);
    /* each call's .done matches a hint (the first: not the last block
     * opened), its output_item.done repeats it */
    CHECK_EQ_INT(s->doc.n_hinted, 2);
    CHECK_EQ_INT(s->doc.n_seen, 2);
    panto_stream_free(s);
    free(b.p);
    free(args[0].p);
    free(args[1].p);
}

int main(void) {
    test_fixtures();
    test_anthropic();
    test_openai();
    test_responses();
    test_responses_repeated_text();
    test_responses_parallel_calls();
    test_limits();
    test_borrowed_input();
    test_reset();
    printf("test_fast: %d inputs, each decoded %zu ways\n", n_cases, 3 * N_PLANS + 1);
    return test_report("test_fast");
}
