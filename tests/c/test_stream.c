/* test_stream.c -- the panto_stream state machine through the public API:
 * misuse, the terminal invariant, sticky errors, finish/feed rules,
 * truncation, limits, bounded memory, split invariance, the raw SSE wire,
 * names and layout. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"
#include "testlib.h"

/* ---- helpers ---- */

static panto_stream *mk(int wire, const panto_stream_options *o) {
    panto_stream *s = NULL;
    if (panto_stream_new(wire, o, &s) != PANTO_OK || !s) {
        fprintf(stderr, "panto_stream_new failed\n");
        exit(2);
    }
    return s;
}

static int feed_str(panto_stream *s, const char *str) {
    return panto_stream_feed(s, (const uint8_t *)str, strlen(str));
}

static panto_error err_of(panto_stream *s) {
    panto_error e;
    memset(&e, 0, sizeof e);
    panto_stream_error(s, &e);
    return e;
}

static int msg_has(panto_error e, const char *needle) {
    size_t n = strlen(needle);
    if (e.message.len < n)
        return 0;
    for (size_t i = 0; i + n <= e.message.len; i++)
        if (memcmp(e.message.ptr + i, needle, n) == 0)
            return 1;
    return 0;
}

#define CHECK_MSG(e, needle)                                                               \
    do {                                                                                   \
        int h_ = msg_has((e), (needle));                                                   \
        CHECK(h_ && "message");                                                            \
        if (!h_)                                                                           \
            fprintf(stderr, "%s:%d: message \"%.*s\" lacks \"%s\"\n", __FILE__, __LINE__, \
                    (int)(e).message.len, (e).message.ptr, (needle));                      \
    } while (0)

/* A compact transcript of everything a stream yields, fed in pieces of
 * `chunk` bytes (0 = all at once), rendered into an sb (testlib.h). */
static void sb_num(sb *b, long long v) {
    char t[32];
    snprintf(t, sizeof t, "%lld", v);
    sb_add(b, t);
}
static void sb_pstr(sb *b, panto_str s) {
    sb_add(b, "[");
    sb_addn(b, s.ptr, s.len);
    sb_add(b, "]");
}

static void render(sb *b, const panto_event *ev) {
    sb_add(b, panto_event_kind_name(ev->kind));
    sb_add(b, " ");
    switch (ev->kind) {
    case PANTO_EV_MESSAGE_START:
        sb_pstr(b, ev->u.message_start.id);
        sb_pstr(b, ev->u.message_start.model);
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
        sb_pstr(b, ev->u.content_delta.text);
        break;
    case PANTO_EV_BLOCK_COMPLETE:
        sb_num(b, ev->u.block_complete.index);
        sb_add(b, panto_block_kind_name(ev->u.block_complete.block_kind));
        sb_pstr(b, ev->u.block_complete.text);
        sb_pstr(b, ev->u.block_complete.signature);
        sb_pstr(b, ev->u.block_complete.tool_id);
        sb_pstr(b, ev->u.block_complete.tool_name);
        break;
    case PANTO_EV_MESSAGE_COMPLETE:
        sb_add(b, panto_stop_reason_name(ev->u.message_complete.stop_reason));
        sb_pstr(b, ev->u.message_complete.raw_stop_reason);
        sb_num(b, (long long)ev->u.message_complete.usage.output_tokens);
        break;
    case PANTO_EV_SSE:
        sb_pstr(b, ev->u.sse.event);
        sb_pstr(b, ev->u.sse.data);
        sb_pstr(b, ev->u.sse.id);
        sb_num(b, ev->u.sse.retry);
        break;
    default:
        sb_add(b, "?");
    }
    sb_add(b, "\n");
}

static int drain(panto_stream *s, sb *b) {
    panto_event ev;
    for (;;) {
        int r = panto_next_event(s, &ev);
        if (r == PANTO_EVENT) {
            render(b, &ev);
            continue;
        }
        if (r == PANTO_NEED_MORE)
            return 0;
        if (r == PANTO_DONE) {
            sb_add(b, "DONE\n");
            return 1;
        }
        panto_error e = err_of(s);
        sb_add(b, "ERROR ");
        sb_add(b, panto_error_code_name(e.code));
        sb_pstr(b, e.message);
        sb_add(b, "\n");
        return 1;
    }
}

static char *transcript(int wire, const char *in, size_t len, const size_t *cuts, size_t ncuts) {
    sb b = {0};
    sb_add(&b, "");
    panto_stream *s = mk(wire, NULL);
    size_t pos = 0;
    int over = 0;
    for (size_t i = 0; i <= ncuts && !over; i++) {
        size_t end = i < ncuts ? cuts[i] : len;
        if (panto_stream_feed(s, (const uint8_t *)in + pos, end - pos) != PANTO_OK) {
            sb_add(&b, "FEED ERROR\n");
            over = 1;
            break;
        }
        pos = end;
        over = drain(s, &b);
    }
    if (!over) {
        panto_stream_finish(s);
        drain(s, &b);
    }
    panto_stream_free(s);
    return b.p;
}

static int split_invariant(int wire, const char *in) {
    size_t len = strlen(in);
    char *want = transcript(wire, in, len, NULL, 0);
    int ok = 1;
    for (size_t c = 0; c <= len && ok; c++) {
        char *got = transcript(wire, in, len, &c, 1);
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "split at %zu:\n--- want\n%s--- got\n%s", c, want, got);
            ok = 0;
        }
        free(got);
    }
    /* every byte its own feed */
    if (ok) {
        size_t *cuts = malloc((len + 1) * sizeof *cuts);
        for (size_t i = 0; i < len; i++)
            cuts[i] = i + 1;
        char *got = transcript(wire, in, len, cuts, len ? len - 1 : 0);
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "1-byte feeds:\n--- want\n%s--- got\n%s", want, got);
            ok = 0;
        }
        free(got);
        free(cuts);
    }
    free(want);
    return ok;
}

static const char *OPENAI_SAMPLE =
    "data: {\"id\":\"c1\",\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n"
    "data: {\"id\":\"c1\",\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{\"reasoning_content\":\"hmm\",\"content\":\"Hi \\u00e9\"}}]}\n\n"
    ": keep-alive\n\n"
    "data: {\"id\":\"c1\",\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"a\\\":\"}},{\"index\":1,\"id\":\"call_2\",\"function\":{\"name\":\"g\",\"arguments\":\"\"}}]}}]}\r\n\r\n"
    "data: {\"id\":\"c1\",\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":1,\"function\":{\"arguments\":\"{}\"}},{\"index\":0,\"function\":{\"arguments\":\"1}\"}}]}}]}\r\r"
    "data: {\"id\":\"c1\",\"model\":\"gpt\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
    "data: {\"id\":\"c1\",\"model\":\"gpt\",\"choices\":[],\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":3}}\n\n"
    "data: [DONE]\n\n";

static const char *ANTHROPIC_SAMPLE =
    "\xef\xbb\xbf"
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"model\":\"claude\",\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
    "event: ping\ndata: {\"type\": \"ping\"}\n\n"
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"ok \\u2603\"}}\r\n\r\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"SIG\"}}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"run\",\"input\":{}}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"cmd\\\": \\\"ls\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\" -la\\\"}\"}}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n"
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":42}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

static const char *SSE_SAMPLE =
    "\xef\xbb\xbf: comment\n"
    "event: add\ndata: one\ndata:two\nid: 7\nretry: 1500\n\n"
    "data\r\n\r\n"
    "event: x\rdata: y\r\r"
    "id: 8\nretry: x1\ndata: z\n\n"
    "data: unterminated";

/* ---- tests ---- */

static void test_misuse(void) {
    panto_stream *s = (panto_stream *)1;
    CHECK_EQ_INT(panto_stream_new(99, NULL, &s), PANTO_ERROR);
    CHECK(s == NULL);
    CHECK_EQ_INT(panto_stream_new(0, NULL, &s), PANTO_ERROR);
    CHECK_EQ_INT(panto_stream_new(PANTO_WIRE_SSE, NULL, NULL), PANTO_ERROR);
    CHECK_EQ_INT(panto_stream_feed(NULL, (const uint8_t *)"x", 1), PANTO_ERROR);
    CHECK_EQ_INT(panto_stream_finish(NULL), PANTO_ERROR);
    panto_event ev;
    CHECK_EQ_INT(panto_next_event(NULL, &ev), PANTO_ERROR);
    panto_error e;
    CHECK_EQ_INT(panto_stream_error(NULL, &e), PANTO_ERROR);
    CHECK_EQ_INT(panto_stream_memory(NULL), 0);
    panto_stream_free(NULL);

    s = mk(PANTO_WIRE_OPENAI_CHAT, NULL);
    CHECK_EQ_INT(panto_stream_error(s, NULL), PANTO_ERROR);
    CHECK_EQ_INT(panto_stream_error(s, &e), PANTO_OK);
    CHECK_EQ_INT(e.code, PANTO_ERR_NONE);
    CHECK(e.message.ptr != NULL && e.message.len == 0);
    CHECK_EQ_INT(panto_stream_feed(s, NULL, 0), PANTO_OK);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_NEED_MORE);
    CHECK_EQ_INT(panto_stream_feed(s, NULL, 3), PANTO_ERROR);
    e = err_of(s);
    CHECK_EQ_INT(e.code, PANTO_ERR_INVALID_ARGUMENT);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    panto_stream_free(s);

    s = mk(PANTO_WIRE_OPENAI_CHAT, NULL);
    CHECK_EQ_INT(panto_next_event(s, NULL), PANTO_ERROR);
    CHECK_EQ_INT(err_of(s).code, PANTO_ERR_INVALID_ARGUMENT);
    panto_stream_free(s);

    /* feed after finish; finish twice */
    s = mk(PANTO_WIRE_SSE, NULL);
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_OK);
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_OK);
    CHECK_EQ_INT(feed_str(s, "data: x\n\n"), PANTO_ERROR);
    e = err_of(s);
    CHECK_EQ_INT(e.code, PANTO_ERR_INVALID_ARGUMENT);
    CHECK_MSG(e, "after panto_stream_finish");
    panto_stream_free(s);

    /* a stream that is freed with undelivered events and input leaks nothing */
    s = mk(PANTO_WIRE_ANTHROPIC_MESSAGES, NULL);
    feed_str(s, ANTHROPIC_SAMPLE);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_EVENT);
    panto_stream_free(s);
}

static void test_names(void) {
    CHECK_EQ_INT(panto_abi_version(), PANTO_ABI_VERSION);
    CHECK(strcmp(panto_version(), "0.1.0") == 0);
    CHECK(strcmp(panto_wire_name(PANTO_WIRE_SSE), "sse") == 0);
    CHECK(strcmp(panto_wire_name(PANTO_WIRE_OPENAI_CHAT), "openai-chat") == 0);
    CHECK(strcmp(panto_wire_name(PANTO_WIRE_ANTHROPIC_MESSAGES), "anthropic-messages") == 0);
    CHECK(strcmp(panto_wire_name(0), "unknown") == 0);
    const char *kinds[] = {"message_start", "block_start", "tool_details", "content_delta",
                           "block_complete", "message_complete", "sse"};
    for (int i = 0; i < 7; i++)
        CHECK(strcmp(panto_event_kind_name(i + 1), kinds[i]) == 0);
    CHECK(strcmp(panto_event_kind_name(8), "unknown") == 0);
    const char *blocks[] = {"text", "thinking", "redacted_thinking", "tool_use"};
    for (int i = 0; i < 4; i++)
        CHECK(strcmp(panto_block_kind_name(i + 1), blocks[i]) == 0);
    CHECK(strcmp(panto_block_kind_name(-1), "unknown") == 0);
    const char *stops[] = {"stop", "tool_use", "length", "refusal", "pause", "error", "other"};
    for (int i = 0; i < 7; i++)
        CHECK(strcmp(panto_stop_reason_name(i + 1), stops[i]) == 0);
    CHECK(strcmp(panto_stop_reason_name(0), "unknown") == 0);
    const char *errs[] = {"none", "bad_sse", "bad_json", "protocol", "provider",
                          "truncated", "limit", "invalid_argument", "no_memory"};
    for (int i = 0; i < 9; i++)
        CHECK(strcmp(panto_error_code_name(i), errs[i]) == 0);
    CHECK(strcmp(panto_error_code_name(9), "unknown") == 0);

    panto_stream_options o;
    CHECK_EQ_INT(panto_stream_options_init(&o, PANTO_STREAM_OPTIONS_VERSION), PANTO_OK);
    CHECK_EQ_INT(o.version, PANTO_STREAM_OPTIONS_VERSION);
    CHECK_EQ_INT(o.max_event_bytes, 8u << 20);
    CHECK_EQ_INT(o.max_block_bytes, 64u << 20);
    CHECK_EQ_INT(o.max_buffer_bytes, 64u << 20);
    CHECK_EQ_INT(o.max_json_depth, 128);

    /* the layout the bindings assert too */
    if (sizeof(void *) == 8) {
        CHECK_EQ_INT(sizeof(panto_str), 16);
        CHECK_EQ_INT(offsetof(panto_event, u), 8);
        CHECK_EQ_INT(sizeof(panto_event), 104);
        CHECK_EQ_INT(sizeof(panto_error), 48);
        CHECK_EQ_INT(offsetof(panto_error, offset), 40);
        CHECK_EQ_INT(sizeof(panto_stream_options), 32);
    }

    /* versioned options: unknown versions are refused */
    CHECK_EQ_INT(panto_stream_options_init(&o, 0), PANTO_ERROR);
    CHECK_EQ_INT(panto_stream_options_init(&o, PANTO_STREAM_OPTIONS_VERSION + 1), PANTO_ERROR);
    CHECK_EQ_INT(panto_stream_options_init(NULL, PANTO_STREAM_OPTIONS_VERSION), PANTO_ERROR);
    {
        panto_stream_options z;
        memset(&z, 0, sizeof z);
        panto_stream *s = NULL;
        CHECK_EQ_INT(panto_stream_new(PANTO_WIRE_SSE, &z, &s), PANTO_ERROR);
        CHECK(s == NULL);
        panto_stream_options i = PANTO_STREAM_OPTIONS_INIT;
        CHECK_EQ_INT(panto_stream_new(PANTO_WIRE_SSE, &i, &s), PANTO_OK);
        panto_stream_free(s);
    }

    /* the version string comes from the three macros */
    {
        char want[64];
        snprintf(want, sizeof want, "%d.%d.%d", PANTO_VERSION_MAJOR, PANTO_VERSION_MINOR,
                 PANTO_VERSION_PATCH);
        CHECK(strcmp(panto_version(), want) == 0);
        CHECK(strcmp(PANTO_VERSION, want) == 0);
    }
}

/* D9: one event as large as max_event_bytes keeps the stream's memory
 * within a small multiple of the limit, whatever the JSON looks like. */
static size_t peak_one_event(int wire, const char *pre, const char *head, char fill_a,
                             char fill_b, const char *tail, size_t total) {
    panto_stream *s = mk(wire, NULL);
    size_t hl = strlen(head), tl = strlen(tail);
    char *body = malloc(total);
    memcpy(body, head, hl);
    for (size_t i = hl; i < total - tl; i++)
        body[i] = ((i - hl) & 1) ? fill_b : fill_a;
    memcpy(body + total - tl, tail, tl);
    panto_event ev;
    size_t peak = 0;
    CHECK_EQ_INT(feed_str(s, pre), PANTO_OK);
    for (size_t off = 0; off < total; off += 65536) {
        size_t n = total - off < 65536 ? total - off : 65536;
        if (panto_stream_feed(s, (const uint8_t *)body + off, n) != PANTO_OK)
            break;
        while (panto_next_event(s, &ev) == PANTO_EVENT) {
        }
        size_t m = panto_stream_memory(s);
        if (m > peak)
            peak = m;
    }
    free(body);
    panto_stream_free(s);
    return peak;
}

static void test_memory_bound_one_event(void) {
    const size_t limit = (size_t)8 << 20, total = limit - 64;
    /* 8 MiB of [0,0,0,...] used to make the stream hold 144 MiB */
    size_t dense = peak_one_event(PANTO_WIRE_OPENAI_CHAT, "", "data: {\"choices\":[],\"x\":[", '0',
                                  ',', "0]}\n\n", total);
    size_t dense_an = peak_one_event(
        PANTO_WIRE_ANTHROPIC_MESSAGES,
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n",
        "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,"
        "\"content_block\":{\"type\":\"x\",\"y\":[",
        '0', ',', "0]}}\n\n", total);
    size_t text = peak_one_event(PANTO_WIRE_OPENAI_CHAT, "",
                                 "data: {\"choices\":[{\"delta\":{\"content\":\"", 'a', 'b',
                                 "\"}}]}\n\n", total);
    fprintf(stderr, "  one 8 MiB event: peak %zu MiB (dense JSON, openai), %zu MiB (anthropic), "
                    "%zu MiB (text)\n",
            dense >> 20, dense_an >> 20, text >> 20);
    CHECK(dense <= 4 * limit);
    CHECK(dense_an <= 5 * limit); /* + the server block's own copy (max_block_bytes) */
    CHECK(text <= 4 * limit);
}

/* panto_stream_partial_block: what a truncated message holds, assembled. */
static void test_partial_blocks(void) {
    panto_stream *s = mk(PANTO_WIRE_OPENAI_CHAT, NULL);
    panto_event ev;
    panto_block_complete b;
    CHECK_EQ_INT(panto_stream_partial_block(s, 0, &b), PANTO_DONE);
    CHECK_EQ_INT(feed_str(s, "data: {\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n"
                             "data: {\"id\":\"x\",\"choices\":[{\"delta\":{\"content\":\"lo\","
                             "\"tool_calls\":[{\"index\":0,\"id\":\"c1\",\"function\":{\"name\":\"f\","
                             "\"arguments\":\"{\\\"a\"}}]}}]}\n\n"
                             "data: {\"id\":\"x\",\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":1,"
                             "\"id\":\"c2\",\"function\":{\"name\":\"g\",\"arguments\":\"\"}}]}}]}\n\n"),
                 PANTO_OK);
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_OK);
    int rc;
    while ((rc = panto_next_event(s, &ev)) == PANTO_EVENT) {
    }
    CHECK_EQ_INT(rc, PANTO_ERROR); /* truncated */
    /* text block 0 was completed when the tool call opened; 1 and 2 are open */
    CHECK_EQ_INT(panto_stream_partial_block(s, 0, &b), PANTO_OK);
    CHECK_EQ_INT(b.index, 1);
    CHECK_EQ_INT(b.block_kind, PANTO_BLOCK_TOOL_USE);
    CHECK_EQ_INT(b.flags, PANTO_BLOCK_FLAG_PARTIAL);
    CHECK_STR(b.text.ptr, b.text.len, "{\"a");
    CHECK_STR(b.tool_id.ptr, b.tool_id.len, "c1");
    CHECK_EQ_INT(panto_stream_partial_block(s, 1, &b), PANTO_OK);
    CHECK_EQ_INT(b.index, 2);
    CHECK_STR(b.tool_name.ptr, b.tool_name.len, "g");
    CHECK_EQ_INT(panto_stream_partial_block(s, 2, &b), PANTO_DONE);
    CHECK_EQ_INT(panto_stream_partial_block(NULL, 0, &b), PANTO_ERROR);
    CHECK_EQ_INT(panto_stream_partial_block(s, 0, NULL), PANTO_ERROR);
    panto_stream_free(s);

    /* open text, mid-stream (no error) */
    s = mk(PANTO_WIRE_ANTHROPIC_MESSAGES, NULL);
    CHECK_EQ_INT(feed_str(s, "data: {\"type\":\"message_start\",\"message\":{}}\n\n"
                             "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":"
                             "{\"type\":\"thinking\",\"thinking\":\"hm\",\"signature\":\"S\"}}\n\n"),
                 PANTO_OK);
    while (panto_next_event(s, &ev) == PANTO_EVENT) {
    }
    CHECK_EQ_INT(panto_stream_partial_block(s, 0, &b), PANTO_OK);
    CHECK_EQ_INT(b.block_kind, PANTO_BLOCK_THINKING);
    CHECK_STR(b.text.ptr, b.text.len, "hm");
    CHECK_STR(b.signature.ptr, b.signature.len, "S");
    panto_stream_free(s);
}

/* D10: an event after the terminal is reported even when end of input was
 * declared before the events were drained. */
static void test_after_terminal_finish_first(void) {
    static const char *bodies[] = {
        "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: [DONE]\n\n"
        "data: {\"choices\":[]}\n\n",
        "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{}}\n\n"
        "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n: ok\n\n"
        "event: ping\ndata: {\"type\":\"ping\"}\n\n"};
    int wires[] = {PANTO_WIRE_OPENAI_CHAT, PANTO_WIRE_ANTHROPIC_MESSAGES};
    for (int i = 0; i < 2; i++) {
        for (int finish_first = 0; finish_first < 2; finish_first++) {
            panto_stream *s = mk(wires[i], NULL);
            panto_event ev;
            CHECK_EQ_INT(feed_str(s, bodies[i]), PANTO_OK);
            if (finish_first)
                CHECK_EQ_INT(panto_stream_finish(s), PANTO_OK);
            int rc, last = 0;
            while ((rc = panto_next_event(s, &ev)) == PANTO_EVENT)
                last = ev.kind;
            CHECK_EQ_INT(last, PANTO_EV_MESSAGE_COMPLETE);
            CHECK_EQ_INT(rc, PANTO_DONE);
            if (!finish_first)
                CHECK_EQ_INT(panto_stream_finish(s), PANTO_ERROR);
            CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE);
            panto_error e;
            panto_stream_error(s, &e);
            CHECK_EQ_INT(e.code, PANTO_ERR_PROTOCOL);
            CHECK(e.message.len && strstr(e.message.ptr, "event after") != NULL);
            panto_stream_free(s);
        }
    }
}

/* panto_stream_reset: a used (even failed) stream decodes like a new one and
 * keeps its buffers. */
static void test_reset(void) {
    const char *body = "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n"
                       "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
                       "data: [DONE]\n\n";
    panto_stream *s = mk(PANTO_WIRE_OPENAI_CHAT, NULL);
    panto_event ev;
    CHECK_EQ_INT(feed_str(s, "data: {\"choices\":[{\"delta\":{\"content\":\"par"), PANTO_OK);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_NEED_MORE);
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_OK);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    size_t mem = 0;
    for (int round = 0; round < 4; round++) {
        CHECK_EQ_INT(panto_stream_reset(s), PANTO_OK);
        panto_error e;
        CHECK_EQ_INT(panto_stream_error(s, &e), PANTO_OK);
        CHECK_EQ_INT(e.code, PANTO_ERR_NONE);
        CHECK_EQ_INT(feed_str(s, body), PANTO_OK);
        CHECK_EQ_INT(panto_stream_finish(s), PANTO_OK);
        int kinds[8], n = 0, rc;
        while ((rc = panto_next_event(s, &ev)) == PANTO_EVENT && n < 8)
            kinds[n++] = ev.kind;
        CHECK_EQ_INT(rc, PANTO_DONE);
        CHECK_EQ_INT(n, 5);
        CHECK_EQ_INT(kinds[0], PANTO_EV_MESSAGE_START);
        CHECK_EQ_INT(kinds[4], PANTO_EV_MESSAGE_COMPLETE);
        if (round == 0)
            mem = panto_stream_memory(s);
        CHECK_EQ_INT(panto_stream_memory(s), mem); /* retries allocate nothing */
    }
    CHECK_EQ_INT(panto_stream_reset(NULL), PANTO_ERROR);
    panto_stream_free(s);
}

/* panto_error.offset: where in the whole input the faulty line/event began,
 * however the input was split. */
static void test_error_offset(void) {
    const char *body = ": hello\n\ndata: {\"choices\":[]}\n\ndata: {bad\n\n";
    size_t want = strlen(": hello\n\ndata: {\"choices\":[]}\n\n");
    for (size_t cut = 0; cut <= strlen(body); cut++) {
        panto_stream *s = mk(PANTO_WIRE_OPENAI_CHAT, NULL);
        panto_event ev;
        CHECK_EQ_INT(panto_stream_feed(s, (const uint8_t *)body, cut), PANTO_OK);
        int rc;
        while ((rc = panto_next_event(s, &ev)) == PANTO_EVENT) {
        }
        if (rc == PANTO_NEED_MORE) {
            CHECK_EQ_INT(panto_stream_feed(s, (const uint8_t *)body + cut, strlen(body) - cut),
                         PANTO_OK);
            while ((rc = panto_next_event(s, &ev)) == PANTO_EVENT) {
            }
        }
        CHECK_EQ_INT(rc, PANTO_ERROR);
        panto_error e;
        panto_stream_error(s, &e);
        CHECK_EQ_INT(e.code, PANTO_ERR_BAD_JSON);
        CHECK_EQ_INT(e.offset, want);
        panto_stream_free(s);
    }
    /* truncation: all bytes fed */
    panto_stream *s = mk(PANTO_WIRE_OPENAI_CHAT, NULL);
    panto_event ev;
    CHECK_EQ_INT(feed_str(s, "data: {\"choices\":[]}\n\ndata: {\"cho"), PANTO_OK);
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_OK);
    while (panto_next_event(s, &ev) == PANTO_EVENT) {
    }
    panto_error e;
    panto_stream_error(s, &e);
    CHECK_EQ_INT(e.code, PANTO_ERR_TRUNCATED);
    CHECK_EQ_INT(e.offset, strlen("data: {\"choices\":[]}\n\ndata: {\"cho"));
    panto_stream_free(s);
}

static void test_terminal_invariant(void) {
    /* DONE repeats forever; nothing after the terminal is delivered */
    panto_stream *s = mk(PANTO_WIRE_OPENAI_CHAT, NULL);
    CHECK_EQ_INT(feed_str(s, "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n"
                             "data: [DONE]\n\n"
                             "data: {\"choices\":[{\"delta\":{\"content\":\"late\"}}]}\n\n"),
                 PANTO_OK);
    panto_event ev;
    int kinds[8], n = 0, r;
    while ((r = panto_next_event(s, &ev)) == PANTO_EVENT && n < 8)
        kinds[n++] = ev.kind;
    CHECK_EQ_INT(r, PANTO_DONE);
    CHECK_EQ_INT(n, 5);
    CHECK_EQ_INT(kinds[n - 1], PANTO_EV_MESSAGE_COMPLETE);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE);
    /* finish sees the event after [DONE] */
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_ERROR);
    panto_error e = err_of(s);
    CHECK_EQ_INT(e.code, PANTO_ERR_PROTOCOL);
    CHECK_MSG(e, "event after [DONE]");
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE); /* DONE holds */
    CHECK_EQ_INT(panto_stream_feed(s, (const uint8_t *)"x", 1), PANTO_ERROR);
    panto_stream_free(s);

    /* feeding after the terminal is allowed; comments and blank lines are fine */
    s = mk(PANTO_WIRE_ANTHROPIC_MESSAGES, NULL);
    feed_str(s, ANTHROPIC_SAMPLE);
    while ((r = panto_next_event(s, &ev)) == PANTO_EVENT)
        ;
    CHECK_EQ_INT(r, PANTO_DONE);
    CHECK_EQ_INT(feed_str(s, ": bye\n\n\r\n"), PANTO_OK);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE);
    CHECK_EQ_INT(feed_str(s, "event: ping\n"), PANTO_OK); /* no data: never dispatches */
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_OK);
    CHECK_EQ_INT(err_of(s).code, PANTO_ERR_NONE);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE);
    panto_stream_free(s);

    /* bytes fed after the terminal stay bounded by max_buffer_bytes */
    {
        panto_stream_options o = PANTO_STREAM_OPTIONS_INIT;
        o.max_buffer_bytes = 64;
        s = mk(PANTO_WIRE_OPENAI_CHAT, &o);
        CHECK_EQ_INT(feed_str(s, "data: [DONE]\n\n"), PANTO_OK);
        CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_EVENT);
        CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_EVENT);
        CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE);
        int fr = PANTO_OK;
        for (int i = 0; i < 20 && fr == PANTO_OK; i++)
            fr = feed_str(s, ": padding\n");
        CHECK_EQ_INT(fr, PANTO_ERROR);
        CHECK_EQ_INT(err_of(s).code, PANTO_ERR_LIMIT);
        CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE);
        panto_stream_free(s);
    }

    /* ... but an event after message_stop is a protocol error */
    s = mk(PANTO_WIRE_ANTHROPIC_MESSAGES, NULL);
    feed_str(s, ANTHROPIC_SAMPLE);
    while ((r = panto_next_event(s, &ev)) == PANTO_EVENT)
        ;
    feed_str(s, "event: ping\ndata: {\"type\":\"ping\"}\n\n");
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE);
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_ERROR);
    e = err_of(s);
    CHECK_EQ_INT(e.code, PANTO_ERR_PROTOCOL);
    CHECK_MSG(e, "protocol violation: event after message_stop");
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE);
    panto_stream_free(s);

    /* DONE is never returned before the terminal: truncated instead */
    s = mk(PANTO_WIRE_ANTHROPIC_MESSAGES, NULL);
    size_t cut = strlen(ANTHROPIC_SAMPLE) - 10;
    panto_stream_feed(s, (const uint8_t *)ANTHROPIC_SAMPLE, cut);
    while ((r = panto_next_event(s, &ev)) == PANTO_EVENT)
        CHECK(ev.kind != PANTO_EV_MESSAGE_COMPLETE);
    CHECK_EQ_INT(r, PANTO_NEED_MORE);
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_OK);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    e = err_of(s);
    CHECK_EQ_INT(e.code, PANTO_ERR_TRUNCATED);
    CHECK_MSG(e, "stream ended before message_stop");
    CHECK_MSG(e, "bytes of an unterminated line discarded");
    panto_stream_free(s);
}

/* The JSON node limit (max_event_bytes / 32, at least 4096 values) counts
 * the values of members the decoder skips without building them: an event
 * is over the limit whether its values sit in a skipped member or not. */
static void node_limit_case(const char *key, size_t n_values, int want_limit) {
    panto_stream_options o = PANTO_STREAM_OPTIONS_INIT;
    o.max_event_bytes = 64 << 10;   /* 2048 -> the 4096 floor */
    panto_stream *s = mk(PANTO_WIRE_OPENAI_CHAT, &o);
    size_t cap = 64 + 2 * n_values, n = 0;
    char *body = malloc(cap);
    n += (size_t)snprintf(body + n, cap - n, "data: {\"%s\":[", key);
    for (size_t i = 0; i < n_values; i++) {
        body[n++] = i ? ',' : '0';
        if (i)
            body[n++] = '0';
    }
    n += (size_t)snprintf(body + n, cap - n, "]}\n\n");
    CHECK_EQ_INT(panto_stream_feed(s, (const uint8_t *)body, n), PANTO_OK);
    panto_event ev;
    int r = panto_next_event(s, &ev);
    if (want_limit) {
        CHECK_EQ_INT(r, PANTO_ERROR);
        panto_error e = err_of(s);
        CHECK_EQ_INT(e.code, PANTO_ERR_LIMIT);
        CHECK_MSG(e, "holds more than 4096 values");
    } else {
        CHECK_EQ_INT(r, PANTO_NEED_MORE);
    }
    free(body);
    panto_stream_free(s);
}

static void test_node_limit_skipped(void) {
    /* root object + key + array = 3 nodes, then the elements */
    node_limit_case("x", 4093, 0);
    node_limit_case("x", 4094, 1);
    node_limit_case("system_fingerprint", 4093, 0);
    node_limit_case("system_fingerprint", 4094, 1);
    node_limit_case("logprobs", 5000, 1);
}

static void test_sticky_errors(void) {
    panto_stream *s = mk(PANTO_WIRE_OPENAI_CHAT, NULL);
    feed_str(s, "data: {\"id\":\"a\",\"choices\":[]}\n\n"
                "data: {\"id\": tru}\n\n"
                "data: [DONE]\n\n");
    panto_event ev;
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_EVENT);
    CHECK_EQ_INT(ev.kind, PANTO_EV_MESSAGE_START);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    panto_error e1 = err_of(s);
    CHECK_EQ_INT(e1.code, PANTO_ERR_BAD_JSON);
    CHECK_MSG(e1, "bad JSON in event 2 (line 3) at byte 7");
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    CHECK_EQ_INT(feed_str(s, "data: [DONE]\n\n"), PANTO_ERROR);
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_ERROR);
    panto_error e2 = err_of(s);
    CHECK_EQ_INT(e2.code, e1.code);
    CHECK(e2.message.len == e1.message.len &&
          memcmp(e2.message.ptr, e1.message.ptr, e1.message.len) == 0);
    panto_stream_free(s);

    /* a provider error is sticky too, with type and retryable */
    s = mk(PANTO_WIRE_ANTHROPIC_MESSAGES, NULL);
    feed_str(s, "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n");
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    panto_error e = err_of(s);
    CHECK_EQ_INT(e.code, PANTO_ERR_PROVIDER);
    CHECK(e.retryable == 1);
    CHECK_STR(e.provider_type.ptr, e.provider_type.len, "overloaded_error");
    CHECK_STR(e.message.ptr, e.message.len, "Overloaded");
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_ERROR);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    panto_stream_free(s);
}

static void test_sse_wire(void) {
    char *t = transcript(PANTO_WIRE_SSE, SSE_SAMPLE, strlen(SSE_SAMPLE), NULL, 0);
    const char *want = "sse [add][one\ntwo][7]1500\n"
                       "sse [message][][7]1500\n"
                       "sse [x][y][7]1500\n"
                       "sse [message][z][8]1500\n"
                       "DONE\n";
    CHECK(strcmp(t, want) == 0);
    if (strcmp(t, want) != 0)
        fprintf(stderr, "sse transcript:\n%s", t);
    free(t);
    CHECK(split_invariant(PANTO_WIRE_SSE, SSE_SAMPLE));

    /* raw SSE: NEED_MORE until finish, then DONE; invalid UTF-8 is replaced */
    panto_stream *s = mk(PANTO_WIRE_SSE, NULL);
    panto_event ev;
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_NEED_MORE);
    feed_str(s, "data: \xff ok\n\n");
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_EVENT);
    CHECK_STR(ev.u.sse.data.ptr, ev.u.sse.data.len, "\xef\xbf\xbd ok");
    CHECK_EQ_INT(ev.u.sse.retry, -1);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_NEED_MORE);
    CHECK_EQ_INT(panto_stream_finish(s), PANTO_OK);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE);
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_DONE);
    panto_stream_free(s);
}

static void test_split_invariance(void) {
    CHECK(split_invariant(PANTO_WIRE_OPENAI_CHAT, OPENAI_SAMPLE));
    CHECK(split_invariant(PANTO_WIRE_ANTHROPIC_MESSAGES, ANTHROPIC_SAMPLE));
    char *t = transcript(PANTO_WIRE_OPENAI_CHAT, OPENAI_SAMPLE, strlen(OPENAI_SAMPLE), NULL, 0);
    /* one delta with reasoning and content: the thinking block completes
     * before the text block starts, and its text survives the new block */
    const char *want =
        "message_start [c1][gpt]\n"
        "block_start 0thinking\n"
        "content_delta 0[hmm]\n"
        "block_complete 0thinking[hmm][][][]\n"
        "block_start 1text\n"
        "content_delta 1[Hi \xc3\xa9]\n"
        "block_complete 1text[Hi \xc3\xa9][][][]\n"
        "block_start 2tool_use\n"
        "tool_details 2[call_1][f]\n"
        "content_delta 2[{\"a\":]\n"
        "block_start 3tool_use\n"
        "tool_details 3[call_2][g]\n"
        "content_delta 3[{}]\n"
        "content_delta 2[1}]\n"
        "block_complete 2tool_use[{\"a\":1}][][call_1][f]\n"
        "block_complete 3tool_use[{}][][call_2][g]\n"
        "message_complete tool_use[tool_calls]3\n"
        "DONE\n";
    CHECK(strcmp(t, want) == 0);
    if (strcmp(t, want) != 0)
        fprintf(stderr, "openai sample:\n%s", t);
    free(t);
    t = transcript(PANTO_WIRE_ANTHROPIC_MESSAGES, ANTHROPIC_SAMPLE, strlen(ANTHROPIC_SAMPLE), NULL, 0);
    want = "message_start [msg_1][claude]\n"
           "block_start 0thinking\n"
           "content_delta 0[ok \xe2\x98\x83]\n"
           "block_complete 0thinking[ok \xe2\x98\x83][SIG][][]\n"
           "block_start 1tool_use\n"
           "tool_details 1[toolu_1][run]\n"
           "content_delta 1[{\"cmd\": \"ls]\n"
           "content_delta 1[ -la\"}]\n"
           "block_complete 1tool_use[{\"cmd\": \"ls -la\"}][][toolu_1][run]\n"
           "message_complete tool_use[tool_use]42\n"
           "DONE\n";
    CHECK(strcmp(t, want) == 0);
    if (strcmp(t, want) != 0)
        fprintf(stderr, "anthropic sample:\n%s", t);
    free(t);
}

static void test_limits(void) {
    panto_stream_options o = PANTO_STREAM_OPTIONS_INIT;
    panto_event ev;

    /* max_buffer_bytes */
    o.max_buffer_bytes = 100;
    panto_stream *s = mk(PANTO_WIRE_OPENAI_CHAT, &o);
    char big[200];
    memset(big, 'a', sizeof big);
    CHECK_EQ_INT(panto_stream_feed(s, (const uint8_t *)"data: ", 6), PANTO_OK);
    CHECK_EQ_INT(panto_stream_feed(s, (const uint8_t *)big, 94), PANTO_OK);
    CHECK_EQ_INT(panto_stream_feed(s, (const uint8_t *)big, 1), PANTO_ERROR);
    panto_error e = err_of(s);
    CHECK_EQ_INT(e.code, PANTO_ERR_LIMIT);
    CHECK_MSG(e, "max_buffer_bytes (100 bytes)");
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    panto_stream_free(s);

    /* decoded input does not count against max_buffer_bytes */
    s = mk(PANTO_WIRE_SSE, &o);
    int ok = 1;
    for (int i = 0; i < 1000 && ok; i++) {
        ok = feed_str(s, "data: 0123456789012345678901234567890123456789\n\n") == PANTO_OK;
        while (ok && panto_next_event(s, &ev) == PANTO_EVENT)
            ;
    }
    CHECK(ok);
    panto_stream_free(s);

    /* max_event_bytes: a long line */
    o = (panto_stream_options)PANTO_STREAM_OPTIONS_INIT;
    o.max_event_bytes = 64;
    s = mk(PANTO_WIRE_ANTHROPIC_MESSAGES, &o);
    feed_str(s, "data: {\"type\":\"ping\",\"pad\":\"");
    for (int i = 0; i < 10; i++)
        feed_str(s, "xxxxxxxxxx");
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    e = err_of(s);
    CHECK_EQ_INT(e.code, PANTO_ERR_LIMIT);
    CHECK_MSG(e, "max_event_bytes");
    panto_stream_free(s);

    /* max_block_bytes names the block and the limit */
    o = (panto_stream_options)PANTO_STREAM_OPTIONS_INIT;
    o.max_block_bytes = 10;
    s = mk(PANTO_WIRE_OPENAI_CHAT, &o);
    feed_str(s, "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"0123456789\"}}]}\n\n"
                "data: {\"choices\":[{\"delta\":{\"content\":\"01234\"}}]}\n\n"
                "data: {\"choices\":[{\"delta\":{\"content\":\"56789x\"}}]}\n\n");
    int r;
    while ((r = panto_next_event(s, &ev)) == PANTO_EVENT)
        ;
    CHECK_EQ_INT(r, PANTO_ERROR);
    e = err_of(s);
    CHECK_EQ_INT(e.code, PANTO_ERR_LIMIT);
    CHECK_MSG(e, "block 1 content exceeds max_block_bytes (10 bytes)");
    panto_stream_free(s);

    s = mk(PANTO_WIRE_ANTHROPIC_MESSAGES, &o);
    feed_str(s, "data: {\"type\":\"message_start\",\"message\":{}}\n\n"
                "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n"
                "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"0123456789ABC\"}}\n\n");
    while ((r = panto_next_event(s, &ev)) == PANTO_EVENT)
        ;
    CHECK_EQ_INT(r, PANTO_ERROR);
    CHECK_MSG(err_of(s), "block 0 signature exceeds max_block_bytes (10 bytes)");
    panto_stream_free(s);

    /* max_json_depth */
    o = (panto_stream_options)PANTO_STREAM_OPTIONS_INIT;
    o.max_json_depth = 4;
    s = mk(PANTO_WIRE_OPENAI_CHAT, &o);
    feed_str(s, "data: {\"a\":[[[[1]]]]}\n\n");
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    e = err_of(s);
    CHECK_EQ_INT(e.code, PANTO_ERR_LIMIT);
    CHECK_MSG(e, "max_json_depth (4)");
    panto_stream_free(s);

    /* the default depth (128) also holds: 10k nested arrays fail cleanly */
    s = mk(PANTO_WIRE_OPENAI_CHAT, NULL);
    feed_str(s, "data: ");
    for (int i = 0; i < 10000; i++)
        feed_str(s, "[");
    feed_str(s, "\n\n");
    CHECK_EQ_INT(panto_next_event(s, &ev), PANTO_ERROR);
    CHECK_EQ_INT(err_of(s).code, PANTO_ERR_LIMIT);
    panto_stream_free(s);
}

/* Stream `total` bytes of generated input in 4 KiB feeds through a stream
 * with small limits; returns the peak of panto_stream_memory. */
typedef size_t (*gen_fn)(char *out, size_t cap, unsigned long i);

static size_t gen_sse(char *out, size_t cap, unsigned long i) {
    return (size_t)snprintf(out, cap, "event: e%lu\nid: %lu\ndata: %0*lu\n\n", i % 7, i, 900, i);
}

static size_t gen_openai(char *out, size_t cap, unsigned long i) {
    /* alternating reasoning / text blocks of ~4 KB, then a keep-alive */
    const char *field = (i / 4) % 2 ? "content" : "reasoning_content";
    int n = snprintf(out, cap, "data: {\"id\":\"c\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"%s\":\"%0*lu\"}}],\"obfuscation\":\"abc\"}\n\n: ka\n\n",
                     field, 1000, i);
    return (size_t)n;
}

static size_t gen_anthropic(char *out, size_t cap, unsigned long i) {
    /* one block per 16 deltas of ~1 KB */
    unsigned long blk = i / 16, k = i % 16;
    size_t n = 0;
    if (k == 0)
        n += (size_t)snprintf(out + n, cap - n,
                              "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%lu,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
                              blk);
    n += (size_t)snprintf(out + n, cap - n,
                          "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%lu,\"delta\":{\"type\":\"text_delta\",\"text\":\"%0*lu\"}}\n\n",
                          blk, 1000, i);
    if (k == 15)
        n += (size_t)snprintf(out + n, cap - n,
                              "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%lu}\n\nevent: ping\ndata: {\"type\":\"ping\"}\n\n",
                              blk);
    return n;
}

static size_t stream_big(int wire, const char *prefix, gen_fn gen, size_t total, size_t *n_events,
                         int *failed) {
    panto_stream_options o = PANTO_STREAM_OPTIONS_INIT;
    o.max_event_bytes = 8 << 10;
    o.max_block_bytes = 64 << 10;
    o.max_buffer_bytes = 32 << 10;
    panto_stream *s = mk(wire, &o);
    size_t peak = 0, fed = 0;
    *n_events = 0;
    *failed = 0;
    char *pend = malloc(64 << 10);
    size_t plen = strlen(prefix), poff = 0;
    memcpy(pend, prefix, plen);
    unsigned long i = 0;
    panto_event ev;
    while (fed < total && !*failed) {
        while (plen - poff < 4096) {
            if (poff) {
                memmove(pend, pend + poff, plen - poff);
                plen -= poff;
                poff = 0;
            }
            plen += gen(pend + plen, (64 << 10) - plen, i++);
        }
        size_t chunk = 1024 + (i * 7919) % 3073; /* 1-4 KiB */
        if (panto_stream_feed(s, (const uint8_t *)pend + poff, chunk) != PANTO_OK) {
            *failed = 1;
            break;
        }
        poff += chunk;
        fed += chunk;
        int r;
        while ((r = panto_next_event(s, &ev)) == PANTO_EVENT)
            (*n_events)++;
        if (r == PANTO_ERROR) {
            panto_error e = err_of(s);
            fprintf(stderr, "big stream failed: %.*s\n", (int)e.message.len, e.message.ptr);
            *failed = 1;
        }
        size_t m = panto_stream_memory(s);
        if (m > peak)
            peak = m;
    }
    free(pend);
    panto_stream_free(s);
    return peak;
}

static void test_bounded_memory(void) {
    const size_t total = 50u << 20;
    size_t n_ev, peak;
    int failed;
    peak = stream_big(PANTO_WIRE_SSE, "", gen_sse, total, &n_ev, &failed);
    CHECK(!failed);
    CHECK(n_ev > 50000);
    CHECK(peak < (256u << 10));
    fprintf(stderr, "  sse: %zu events, peak memory %zu bytes\n", n_ev, peak);

    peak = stream_big(PANTO_WIRE_OPENAI_CHAT, "", gen_openai, total, &n_ev, &failed);
    CHECK(!failed);
    CHECK(n_ev > 50000);
    CHECK(peak < (512u << 10));
    fprintf(stderr, "  openai: %zu events, peak memory %zu bytes\n", n_ev, peak);

    peak = stream_big(PANTO_WIRE_ANTHROPIC_MESSAGES,
                      "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\"}}\n\n",
                      gen_anthropic, total, &n_ev, &failed);
    CHECK(!failed);
    CHECK(n_ev > 50000);
    CHECK(peak < (512u << 10));
    fprintf(stderr, "  anthropic: %zu events, peak memory %zu bytes\n", n_ev, peak);
}

int main(void) {
    test_misuse();
    test_names();
    test_terminal_invariant();
    test_sticky_errors();
    test_sse_wire();
    test_split_invariance();
    test_limits();
    test_bounded_memory();
    test_reset();
    test_after_terminal_finish_first();
    test_partial_blocks();
    test_memory_bound_one_event();
    test_error_offset();
    test_node_limit_skipped();
    return test_report("test_stream");
}
