/* test_sse.c -- the WHATWG event stream parser (csrc/sse.c). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"
#include "unity/panto_core.c" /* the core, internals included */
#include "testlib.h"

/* ------------------------------------------------------------- harness */

/* Serialized result of a run: each event as
 * "<event>|<data>|<id>|<retry>;" and a final "ERR<code>" on error. */
typedef struct {
    pbuf out;
    int nevents;
    int err;            /* 0 or a panto_error_code */
    char msg[256];
} run_result;

static void put(pbuf *b, const void *s, size_t n) { pt_pbuf_append(b, s, n, SIZE_MAX); }

static void put_event(run_result *r, const sse_event *ev)
{
    char num[32];
    put(&r->out, ev->event, ev->event_len);
    put(&r->out, "|", 1);
    put(&r->out, ev->data, ev->data_len);
    put(&r->out, "|", 1);
    put(&r->out, ev->id, ev->id_len);
    snprintf(num, sizeof num, "|%lld;", (long long)ev->retry);
    put(&r->out, num, strlen(num));
    r->nevents++;
}

/* Feed s[0..n) to a fresh parser in pieces ending at cuts[0..ncuts) (then
 * the rest), simulating the caller: unconsumed bytes are kept and the next
 * piece is appended to them. */
static void run_cuts(run_result *r, const char *s, size_t n, const size_t *cuts, size_t ncuts,
                     int strict, size_t max)
{
    sse_parser p;
    pt_sse_init(&p, max, strict);
    pbuf in = {0};
    memset(r, 0, sizeof *r);
    size_t at = 0;
    for (size_t k = 0; k <= ncuts && !r->err; k++) {
        size_t end = k < ncuts ? cuts[k] : n;
        if (end < at)
            end = at;
        put(&in, s + at, end - at);
        at = end;
        for (;;) {
            size_t consumed = 0;
            sse_event ev;
            sse_error err;
            int rc = pt_sse_parse(&p, in.p, in.len, &consumed, &ev, &err);
            if (consumed > in.len) {
                r->err = 999;
                break;
            }
            pt_pbuf_consume(&in, consumed);
            if (rc == SSE_EVENT) {
                put_event(r, &ev);
                continue;
            }
            if (rc == SSE_ERROR) {
                char e[32];
                r->err = err.code;
                snprintf(r->msg, sizeof r->msg, "%s", err.msg);
                snprintf(e, sizeof e, "ERR%d", err.code);
                put(&r->out, e, strlen(e));
            }
            break;
        }
    }
    /* end of input: a strict body that never was an event stream */
    sse_error err;
    uint64_t off = 0;
    if (!r->err && pt_sse_not_a_stream(&p, &err, &off)) {
        char e[32];
        r->err = err.code;
        snprintf(r->msg, sizeof r->msg, "%s", err.msg);
        snprintf(e, sizeof e, "ERR%d", err.code);
        put(&r->out, e, strlen(e));
    }
    pt_pbuf_free(&in);
    pt_sse_free(&p);
}

static void run_whole(run_result *r, const char *s, size_t n, int strict, size_t max)
{
    run_cuts(r, s, n, NULL, 0, strict, max);
}

static void run_bytewise(run_result *r, const char *s, size_t n, int strict, size_t max)
{
    size_t *cuts = malloc((n + 1) * sizeof *cuts);
    for (size_t i = 0; i < n; i++)
        cuts[i] = i + 1;
    run_cuts(r, s, n, cuts, n, strict, max);
    free(cuts);
}

static int same(const run_result *a, const run_result *b)
{
    return a->err == b->err && a->out.len == b->out.len &&
           (a->out.len == 0 || memcmp(a->out.p, b->out.p, a->out.len) == 0);
}

/* Run a literal stream whole and byte by byte; expect the serialized output
 * `want` either way. */
#define EXPECT(stream, strict, want)                                     \
    do {                                                                 \
        run_result a_, b_;                                               \
        run_whole(&a_, stream, sizeof(stream) - 1, strict, 0);           \
        run_bytewise(&b_, stream, sizeof(stream) - 1, strict, 0);        \
        CHECK_STR(a_.out.p, a_.out.len, want);                           \
        CHECK(same(&a_, &b_));                                           \
        pt_pbuf_free(&a_.out);                                              \
        pt_pbuf_free(&b_.out);                                              \
    } while (0)

/* ------------------------------------------------------------ the rules */

static void test_basics(void)
{
    EXPECT("data: hello\n\n", 0, "message|hello||-1;");
    EXPECT("data: hello\n\ndata: world\n\n", 0, "message|hello||-1;message|world||-1;");
    /* each line-end kind */
    EXPECT("data: a\n\n", 0, "message|a||-1;");
    EXPECT("data: a\r\r", 0, "message|a||-1;");
    EXPECT("data: a\r\n\r\n", 0, "message|a||-1;");
    EXPECT("data: a\rdata: b\ndata: c\r\ndata: d\n\r", 0, "message|a\nb\nc\nd||-1;");
    /* CR LF is one line end; LF CR is two */
    EXPECT("data: a\r\ndata: b\r\n\r\n", 0, "message|a\nb||-1;");
    EXPECT("data: a\n\rdata: b\n\n", 0, "message|a||-1;message|b||-1;");
    /* comments */
    EXPECT(": comment\ndata: x\n: another\n\n", 0, "message|x||-1;");
    EXPECT(":\n\n", 0, "");
    EXPECT(":data: x\n\n", 0, "");
    /* multi-line data */
    EXPECT("data: a\ndata: b\ndata\n\n", 0, "message|a\nb\n||-1;");
    EXPECT("data:a\ndata:\ndata:b\n\n", 0, "message|a\n\nb||-1;");
    /* exactly one optional space removed */
    EXPECT("data:x\n\n", 0, "message|x||-1;");
    EXPECT("data: x\n\n", 0, "message|x||-1;");
    EXPECT("data:  x\n\n", 0, "message| x||-1;");
    EXPECT("data:\tx\n\n", 0, "message|\tx||-1;");
    EXPECT("data: x \n\n", 0, "message|x ||-1;");
    EXPECT("data: a:b: c\n\n", 0, "message|a:b: c||-1;");
    /* field with no colon: empty value */
    EXPECT("data\n\n", 0, "message|||-1;");
    EXPECT("data\ndata\n\n", 0, "message|\n||-1;");
    EXPECT("event\ndata: x\n\n", 0, "message|x||-1;");
    /* field names are case sensitive, unknown ones ignored */
    EXPECT("Data: x\nDATA: y\nfoo: bar\ndata: z\n\n", 0, "message|z||-1;");
    EXPECT("data : x\n\n", 0, "");
    EXPECT(" data: x\n\n", 0, "");
    /* empty data buffer: nothing dispatched, event type reset */
    EXPECT("\n\n\n", 0, "");
    EXPECT("event: foo\n\ndata: x\n\n", 0, "message|x||-1;");
    EXPECT("id: 5\n\ndata: x\n\n", 0, "message|x|5|-1;");
    /* event type */
    EXPECT("event: ping\ndata: {}\n\n", 0, "ping|{}||-1;");
    EXPECT("event: a\nevent: b\ndata: x\n\n", 0, "b|x||-1;");
    EXPECT("event: foo\ndata: a\n\ndata: b\n\n", 0, "foo|a||-1;message|b||-1;");
    EXPECT("event:\ndata: a\n\n", 0, "message|a||-1;");
    EXPECT("data: a\nevent: late\n\n", 0, "late|a||-1;");
    /* an undispatched event at the end is discarded */
    EXPECT("data: a\n", 0, "");
    EXPECT("data: a\n\ndata: b", 0, "message|a||-1;");
    EXPECT("data: a\n\ndata: b\n", 0, "message|a||-1;");
}

static void test_id_retry(void)
{
    EXPECT("id: 1\ndata: a\n\ndata: b\n\n", 0, "message|a|1|-1;message|b|1|-1;");
    EXPECT("id: 1\ndata: a\n\nid: 2\ndata: b\n\n", 0, "message|a|1|-1;message|b|2|-1;");
    EXPECT("id: 1\ndata: a\n\nid\ndata: b\n\n", 0, "message|a|1|-1;message|b||-1;");
    EXPECT("id: 1\ndata: a\n\nid:\ndata: b\n\n", 0, "message|a|1|-1;message|b||-1;");
    /* id containing NUL is ignored */
    EXPECT("id: 1\ndata: a\n\nid: 2\0x\ndata: b\n\n", 0, "message|a|1|-1;message|b|1|-1;");
    EXPECT("id: \0\ndata: b\n\n", 0, "message|b||-1;");
    EXPECT("id:  sp\ndata: b\n\n", 0, "message|b| sp|-1;");
    /* retry: ASCII digits only */
    EXPECT("retry: 1000\ndata: x\n\n", 0, "message|x||1000;");
    EXPECT("retry:0\ndata: x\n\n", 0, "message|x||0;");
    EXPECT("retry: 1000\ndata: x\n\ndata: y\n\n", 0, "message|x||1000;message|y||1000;");
    EXPECT("retry: 10a\ndata: x\n\n", 0, "message|x||-1;");
    EXPECT("retry: -5\ndata: x\n\n", 0, "message|x||-1;");
    EXPECT("retry: +5\ndata: x\n\n", 0, "message|x||-1;");
    EXPECT("retry:  5\ndata: x\n\n", 0, "message|x||-1;");
    EXPECT("retry: 5 \ndata: x\n\n", 0, "message|x||-1;");
    EXPECT("retry: 1.5\ndata: x\n\n", 0, "message|x||-1;");
    EXPECT("retry:\ndata: x\n\n", 0, "message|x||-1;");
    EXPECT("retry\ndata: x\n\n", 0, "message|x||-1;");
    EXPECT("retry: 7\nretry: x\ndata: x\n\n", 0, "message|x||7;");
    EXPECT("retry: 99999999999999999999999999\ndata: x\n\n", 0,
           "message|x||9223372036854775807;");
    /* retry without data still takes effect */
    EXPECT("retry: 3\n\ndata: x\n\n", 0, "message|x||3;");
}

static void test_bom(void)
{
    EXPECT("\xEF\xBB\xBF" "data: x\n\n", 0, "message|x||-1;");
    EXPECT("\xEF\xBB\xBF\n" "data: x\n\n", 0, "message|x||-1;");
    /* only at the very start: a second BOM makes the field unknown */
    EXPECT("\xEF\xBB\xBF\xEF\xBB\xBF" "data: x\n\n", 0, "");
    EXPECT("data: a\n\n\xEF\xBB\xBF" "data: b\n\n", 0, "message|a||-1;");
    /* a BOM prefix that is not a BOM is kept */
    EXPECT("\xEF\xBB" "data: x\n\n", 0, "");
    EXPECT("\xEF\xBB\n" "data: x\n\n", 0, "message|x||-1;");
    /* strict: a non-BOM prefix turns into a bad field */
    EXPECT("\xEF\xBB" "data: x\n\n", 1, "ERR1");
    EXPECT("\xEF\xBB\xBF" "data: x\n\n", 1, "message|x||-1;");

    /* fewer than three bytes of a possible BOM: NEED_MORE, nothing consumed */
    sse_parser p;
    sse_event ev;
    sse_error err;
    size_t consumed = 99;
    pt_sse_init(&p, 0, 0);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"\xEF", 1, &consumed, &ev, &err), SSE_NEED_MORE);
    CHECK_EQ_INT(consumed, 0);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"\xEF\xBB", 2, &consumed, &ev, &err), SSE_NEED_MORE);
    CHECK_EQ_INT(consumed, 0);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"", 0, &consumed, &ev, &err), SSE_NEED_MORE);
    CHECK_EQ_INT(consumed, 0);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"\xEF\xBB\xBF" "data: 1\n\n", 12, &consumed, &ev,
                           &err), SSE_EVENT);
    CHECK_EQ_INT(consumed, 12);
    CHECK_STR(ev.data, ev.data_len, "1");
    pt_sse_free(&p);
}

static void test_cr_across_calls(void)
{
    /* A CR ending one call and an LF starting the next are one line end. */
    sse_parser p;
    sse_event ev;
    sse_error err;
    size_t consumed;
    pt_sse_init(&p, 0, 0);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"data: a\r", 8, &consumed, &ev, &err), SSE_NEED_MORE);
    CHECK_EQ_INT(consumed, 8);
    CHECK_EQ_INT(p.skip_lf, 1);
    /* an empty call keeps the pending LF skip */
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"", 0, &consumed, &ev, &err), SSE_NEED_MORE);
    CHECK_EQ_INT(p.skip_lf, 1);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"\ndata: b\r\n\r\n", 12, &consumed, &ev, &err),
                 SSE_EVENT);
    CHECK_EQ_INT(consumed, 12);
    CHECK_STR(ev.data, ev.data_len, "a\nb");
    pt_sse_free(&p);

    /* the CR alone dispatches nothing extra; a CR then a non-LF is fine */
    pt_sse_init(&p, 0, 0);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"data: a\r", 8, &consumed, &ev, &err), SSE_NEED_MORE);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"\r", 1, &consumed, &ev, &err), SSE_EVENT);
    CHECK_STR(ev.data, ev.data_len, "a");
    CHECK_EQ_INT(consumed, 1);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"\n", 1, &consumed, &ev, &err), SSE_NEED_MORE);
    CHECK_EQ_INT(consumed, 1);   /* the swallowed LF */
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"\n", 1, &consumed, &ev, &err), SSE_NEED_MORE);
    CHECK_EQ_INT(p.line_no, 4);  /* "data: a", "", "" done; the 4th is next */
    pt_sse_free(&p);
}

static void test_event_lifetime(void)
{
    /* Event pointers stay valid after the caller drops the input, until the
     * next pt_sse_parse call; then the buffers are reused. */
    sse_parser p;
    sse_event ev;
    sse_error err;
    size_t consumed;
    pt_sse_init(&p, 0, 0);
    char buf[] = "event: e1\nid: i1\nretry: 9\ndata: first\n\ndata: second\n\n";
    size_t n = strlen(buf);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)buf, n, &consumed, &ev, &err), SSE_EVENT);
    memset(buf, 'Z', consumed);   /* the caller reuses its buffer */
    CHECK_STR(ev.event, ev.event_len, "e1");
    CHECK_STR(ev.data, ev.data_len, "first");
    CHECK_STR(ev.id, ev.id_len, "i1");
    CHECK_EQ_INT(ev.retry, 9);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)buf + consumed, n - consumed, &consumed, &ev, &err),
                 SSE_EVENT);
    CHECK_STR(ev.event, ev.event_len, "message");
    CHECK_STR(ev.data, ev.data_len, "second");
    CHECK_STR(ev.id, ev.id_len, "i1");
    CHECK_EQ_INT(ev.retry, 9);
    CHECK(pt_sse_memory(&p) > 0);
    pt_sse_free(&p);
    CHECK_EQ_INT(pt_sse_memory(&p), 0);
}

static void test_utf8(void)
{
    /* non-strict: U+FFFD per maximal subpart */
    EXPECT("data: a\xFF" "b\n\n", 0, "message|a\xEF\xBF\xBD" "b||-1;");
    EXPECT("data: \xF0\x9F\x98" "x\n\n", 0, "message|\xEF\xBF\xBDx||-1;");
    EXPECT("data: \xE0\x80x\n\n", 0, "message|\xEF\xBF\xBD\xEF\xBF\xBDx||-1;");
    EXPECT("data: \xED\xA0\x80\n\n", 0, "message|\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD||-1;");
    EXPECT("data: \xC3\n\n", 0, "message|\xEF\xBF\xBD||-1;");
    EXPECT("data: \xC3\xA9\xE2\x82\xAC\n\n", 0, "message|\xC3\xA9\xE2\x82\xAC||-1;");
    EXPECT("event: \xFF\ndata: x\n\n", 0, "\xEF\xBF\xBD|x||-1;");
    EXPECT("id: \xC0\ndata: x\n\n", 0, "message|x|\xEF\xBF\xBD|-1;");
    EXPECT("event: caf\xC3\xA9\ndata: x\n\n", 0, "caf\xC3\xA9|x||-1;");
    /* strict: data passes through untouched; event/id must be UTF-8 */
    EXPECT("data: a\xFF" "b\n\n", 1, "message|a\xFF" "b||-1;");
    EXPECT("event: \xFF\ndata: x\n\n", 1, "ERR1");
    EXPECT("id: \xED\xA0\x80\ndata: x\n\n", 1, "ERR1");
    EXPECT("event: caf\xC3\xA9\nid: \xE2\x82\xAC\ndata: x\n\n", 1, "caf\xC3\xA9|x|\xE2\x82\xAC|-1;");
}

static void test_strict(void)
{
    run_result r;
    const char html[] = "<html>\n<body>error</body>\n";
    run_whole(&r, html, sizeof html - 1, 1, 0);
    CHECK_EQ_INT(r.err, PANTO_ERR_BAD_SSE);
    CHECK(strcmp(r.msg, "line 1: not an SSE field: \"<html>\"") == 0);
    pt_pbuf_free(&r.out);
    /* non-strict ignores it */
    run_whole(&r, html, sizeof html - 1, 0, 0);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.nevents, 0);
    pt_pbuf_free(&r.out);

    /* a body that starts with something else is not an event stream */
    const char js[] = "{\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n";
    run_whole(&r, js, sizeof js - 1, 1, 0);
    CHECK_EQ_INT(r.nevents, 0);
    CHECK_EQ_INT(r.err, PANTO_ERR_BAD_SSE);
    CHECK(strcmp(r.msg, "line 1: not an SSE field: "
                        "\"{\\\"error\\\":{\\\"type\\\":\\\"overloaded_error\\\",\\\"mes...\"") == 0);
    pt_pbuf_free(&r.out);
    /* once the body has shown it is an event stream, an unknown field is
     * ignored even in strict mode (WHATWG; B2: " data: {...}" from an
     * OpenRouter upstream) */
    const char js2[] = "data: ok\n\n{\"error\":{\"type\":\"overloaded_error\"}}\n data: {\"x\":1}\n\ndata: z\n\n";
    run_whole(&r, js2, sizeof js2 - 1, 1, 0);
    CHECK_EQ_INT(r.nevents, 2);
    CHECK_EQ_INT(r.err, 0);
    pt_pbuf_free(&r.out);
    const char js3[] = ": OPENROUTER PROCESSING\n\n data: {\"x\":1}\n\n";
    run_whole(&r, js3, sizeof js3 - 1, 1, 0);
    CHECK_EQ_INT(r.nevents, 0);
    CHECK_EQ_INT(r.err, 0);
    pt_pbuf_free(&r.out);

    /* the leading-space line first (a recorded OpenRouter stream): an
     * unknown field named " data", ignored; the rest of the body is a
     * stream, so it decodes -- the decision is on the whole body */
    EXPECT(" data: {\"x\":1}\n\ndata: {\"y\":2}\n\n", 1, "message|{\"y\":2}||-1;");
    EXPECT(" data: a\r\n data: b\r\n\r\nevent: e\r\ndata: c\r\n\r\n", 1, "e|c||-1;");
    /* ... but alone it is not one: reported at the end, naming line 1 */
    const char lone[] = " data: {}\n\n";
    run_whole(&r, lone, sizeof lone - 1, 1, 0);
    CHECK_EQ_INT(r.err, PANTO_ERR_BAD_SSE);
    CHECK(strcmp(r.msg, "line 1: not an SSE field: \" data: {}\"") == 0);
    pt_pbuf_free(&r.out);
    /* an HTML page is judged as a whole too: its first odd line is named */
    const char html2[] = "\n<!doctype html>\n<title>502</title>\n";
    run_bytewise(&r, html2, sizeof html2 - 1, 1, 0);
    CHECK_EQ_INT(r.err, PANTO_ERR_BAD_SSE);
    CHECK(strcmp(r.msg, "line 2: not an SSE field: \"<!doctype html>\"") == 0);
    pt_pbuf_free(&r.out);

    const char ctl[] = "\x01\x7f\tx\n";
    run_whole(&r, ctl, sizeof ctl - 1, 1, 0);
    CHECK(strcmp(r.msg, "line 1: not an SSE field: \"\\x01\\x7f\\x09x\"") == 0);
    pt_pbuf_free(&r.out);

    /* known fields, comments and fields without colon are fine in strict mode */
    EXPECT(": hi\nevent: a\nid: 1\nretry: 5\ndata\n\n", 1, "a||1|5;");
    EXPECT("data: x\n\nfoo: bar\n", 1, "message|x||-1;");
}

static void test_limits(void)
{
    run_result r;
    /* a complete line over the limit */
    const char s1[] = "data: 0123456789abcdef\n\n";
    run_whole(&r, s1, sizeof s1 - 1, 0, 16);
    CHECK_EQ_INT(r.err, PANTO_ERR_LIMIT);
    CHECK(strstr(r.msg, "max_event_bytes") != NULL);
    /* names the limit, not the line's length (which a split could hide) */
    CHECK(strcmp(r.msg, "line 1: SSE line exceeds max_event_bytes (16 bytes)") == 0);
    pt_pbuf_free(&r.out);
    /* D13: the same message when the line arrives byte by byte */
    {
        char whole[256];
        snprintf(whole, sizeof whole, "%s", r.msg);
        pt_pbuf_free(&r.out);
        run_bytewise(&r, s1, sizeof s1 - 1, 0, 16);
        CHECK_EQ_INT(r.err, PANTO_ERR_LIMIT);
        CHECK_STR(r.msg, strlen(r.msg), whole);
    }
    pt_pbuf_free(&r.out);
    /* a partial line over the limit, fed byte by byte */
    const char s2[] = "data: 0123456789abcdefghijklmnopqrstuvwxyz";
    run_bytewise(&r, s2, sizeof s2 - 1, 0, 16);
    CHECK_EQ_INT(r.err, PANTO_ERR_LIMIT);
    pt_pbuf_free(&r.out);
    run_whole(&r, s2, sizeof s2 - 1, 0, 16);
    CHECK_EQ_INT(r.err, PANTO_ERR_LIMIT);
    pt_pbuf_free(&r.out);
    /* line exactly at the limit is fine; data at the limit is fine */
    const char s3[] = "data: 0123456789\ndata: abcde\n\n";
    run_whole(&r, s3, sizeof s3 - 1, 0, 16);
    CHECK_EQ_INT(r.err, 0);
    CHECK_STR(r.out.p, r.out.len, "message|0123456789\nabcde||-1;");
    pt_pbuf_free(&r.out);
    /* data over the limit */
    const char s4[] = "data: 0123456789\ndata: abcdef\n\n";
    run_whole(&r, s4, sizeof s4 - 1, 0, 16);
    CHECK_EQ_INT(r.err, PANTO_ERR_LIMIT);
    CHECK(strstr(r.msg, "data") != NULL && strstr(r.msg, "17") != NULL);
    pt_pbuf_free(&r.out);
    /* many empty data lines also count */
    const char s5[] = "data\ndata\ndata\ndata\ndata\ndata\n\n";
    run_whole(&r, s5, sizeof s5 - 1, 0, 4);
    CHECK_EQ_INT(r.err, PANTO_ERR_LIMIT);
    pt_pbuf_free(&r.out);
    /* replacement characters count after expansion */
    const char s6[] = "data:\xFF\xFF\xFF\n\n";
    run_whole(&r, s6, sizeof s6 - 1, 0, 8);
    CHECK_EQ_INT(r.err, PANTO_ERR_LIMIT);
    pt_pbuf_free(&r.out);
    run_whole(&r, s6, sizeof s6 - 1, 1, 8);
    CHECK_EQ_INT(r.err, 0);
    pt_pbuf_free(&r.out);
}

static void test_long_line(void)
{
    /* A 4 MiB line fed in 1 KiB pieces (and a 256 KiB line byte by byte)
     * must not be rescanned from its start each time. */
    size_t n = (size_t)4 << 20;
    char *s = malloc(n + 3);
    memcpy(s, "data:", 5);
    memset(s + 5, 'x', n - 5);
    s[n] = '\n';
    s[n + 1] = '\n';
    s[n + 2] = 0;
    size_t npieces = (n + 2) / 1024;
    size_t *cuts = malloc(npieces * sizeof *cuts);
    for (size_t i = 0; i < npieces; i++)
        cuts[i] = (i + 1) * 1024;
    run_result r;
    run_cuts(&r, s, n + 2, cuts, npieces, 0, n + 10);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.nevents, 1);
    CHECK_EQ_INT(r.out.len, 7 + 1 + (n - 5) + 1 + 0 + 4);
    pt_pbuf_free(&r.out);
    free(cuts);

    size_t m = 256 * 1024;
    s[m] = '\n';
    s[m + 1] = '\n';
    run_bytewise(&r, s, m + 2, 0, 0);
    CHECK_EQ_INT(r.err, 0);
    CHECK_EQ_INT(r.nevents, 1);
    pt_pbuf_free(&r.out);

    /* p->scanned tracks the searched part of the pending line */
    sse_parser p;
    sse_event ev;
    sse_error err;
    size_t consumed;
    pt_sse_init(&p, 0, 0);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"data: 1\n\ndata: abc", 18, &consumed, &ev, &err),
                 SSE_EVENT);
    CHECK_EQ_INT(consumed, 9);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"data: abc", 9, &consumed, &ev, &err), SSE_NEED_MORE);
    CHECK_EQ_INT(consumed, 0);
    CHECK_EQ_INT(p.scanned, 9);
    CHECK_EQ_INT(pt_sse_parse(&p, (const uint8_t *)"data: abcdef\n\n", 14, &consumed, &ev, &err),
                 SSE_EVENT);
    CHECK_STR(ev.data, ev.data_len, "abcdef");
    CHECK_EQ_INT(p.scanned, 0);
    pt_sse_free(&p);
    free(s);
}

/* --------------------------------------------- every split gives the same */

static const struct {
    const char *s;
    size_t n;
} SAMPLES[] = {
#define S(x) {x, sizeof(x) - 1}
    S("\xEF\xBB\xBF: hi\r\nevent: a\rdata: 1\r\ndata:2\n\nid: 7\r\rretry: 50\ndata\r\n\r\n"
      "event:x\n\n:c\rdata: \xC3\xA9\xFF\r\n\n"),
    S("data: {\"a\":1}\n\ndata: [DONE]\n\n"),
    S("data: a\r\r\r\n\n\rdata: b\n\r\n"),
    S("\xEF\xBB" "data: q\n\ndata: r\r\n\r\n"),
    S("\xEF\xBB\xBF\xEF\xBB\xBF" "data: q\n\ndata: r\r\r"),
    S("event: message_start\ndata: {\"type\":\"message_start\"}\n\n"
      "event: ping\ndata: {\"type\": \"ping\"}\n\n"
      "id\nid: \0no\ndata: \xF0\x9F\x98\n\n"),
    S("\r\n\r\n\n\r\r\ndata:\r\n\r\n"),
    S("data: x\n\nfoo: bar\ndata: y\n\n"),
#undef S
};

static void test_splits(void)
{
    int nsamples = (int)(sizeof SAMPLES / sizeof SAMPLES[0]);
    for (int strict = 0; strict <= 1; strict++) {
        for (int k = 0; k < nsamples; k++) {
            const char *s = SAMPLES[k].s;
            size_t n = SAMPLES[k].n;
            run_result whole, r;
            run_whole(&whole, s, n, strict, 0);
            CHECK(whole.nevents > 0 || whole.err);
            run_bytewise(&r, s, n, strict, 0);
            CHECK(same(&whole, &r));
            pt_pbuf_free(&r.out);
            /* every single split point */
            int ok2 = 1;
            for (size_t a = 0; a <= n; a++) {
                size_t cuts[1] = {a};
                run_cuts(&r, s, n, cuts, 1, strict, 0);
                if (!same(&whole, &r)) {
                    ok2 = 0;
                    fprintf(stderr, "sample %d strict %d split at %zu differs\n", k, strict, a);
                }
                pt_pbuf_free(&r.out);
            }
            CHECK(ok2);
            /* every pair of split points */
            int ok3 = 1;
            for (size_t a = 0; a <= n && ok3; a++)
                for (size_t b = a; b <= n && ok3; b++) {
                    size_t cuts[2] = {a, b};
                    run_cuts(&r, s, n, cuts, 2, strict, 0);
                    if (!same(&whole, &r)) {
                        ok3 = 0;
                        fprintf(stderr, "sample %d strict %d splits %zu,%zu differ\n", k, strict,
                                a, b);
                    }
                    pt_pbuf_free(&r.out);
                }
            CHECK(ok3);
            pt_pbuf_free(&whole.out);
        }
    }
    /* spot-check the first sample's meaning */
    run_result r;
    run_whole(&r, SAMPLES[0].s, SAMPLES[0].n, 0, 0);
    CHECK_STR(r.out.p, r.out.len,
              "a|1\n2||-1;message||7|50;message|\xC3\xA9\xEF\xBF\xBD|7|50;");
    pt_pbuf_free(&r.out);
}

static void test_garbage(void)
{
    /* random bytes never crash, in either mode, with small limits too */
    uint64_t x = 88172645463325252ull;
    char buf[4096];
    int fine = 1;
    for (int round = 0; round < 300; round++) {
        size_t n = (size_t)(round * 13 % 4096);
        for (size_t i = 0; i < n; i++) {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            uint8_t c = (uint8_t)x;
            /* bias toward interesting bytes */
            static const char pick[] = "\r\n:data event id retry \xEF\xBB\xBF\xFF\xC3";
            buf[i] = (x >> 8) % 3 ? pick[c % (sizeof pick - 1)] : (char)c;
        }
        size_t cuts[3] = {n / 3, n / 2, n - n / 5};
        run_result r;
        run_cuts(&r, buf, n, cuts, 3, round & 1, round % 5 ? 0 : 64);
        if (r.err == 999)
            fine = 0;
        pt_pbuf_free(&r.out);
    }
    CHECK(fine);
}

int main(void)
{
    test_basics();
    test_id_retry();
    test_bom();
    test_cr_across_calls();
    test_event_lifetime();
    test_utf8();
    test_strict();
    test_limits();
    test_long_line();
    test_splits();
    test_garbage();
    return test_report("test_sse");
}
