/* fuzz_json.c -- a libFuzzer target for the core's JSON reader, through the
 * public panto_json_validate() and through the OpenAI wire (which parses
 * every data payload with the same reader).
 *
 * Input layout: byte 0 picks the depth limit (0 = the default), the rest is
 * the JSON text.  Checks, beyond "no crash, leak or UB":
 *   - the verdict is deterministic and an error names an offset <= len and
 *     carries a message;
 *   - a valid text stays valid wrapped in JSON whitespace and inside an
 *     array, and becomes invalid followed by a stray "x";
 *   - a text that is valid at some depth limit stays valid at a larger one;
 *   - on the OpenAI wire a one-line payload (not blank, which is a
 *     keep-alive there, nor [DONE]) that the validator rejects is a
 *     bad_json error (bad_sse when it is not UTF-8, limit when too deep),
 *     and one it accepts is never bad_json.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"

#define FAIL(...)                                          \
    do {                                                   \
        fprintf(stderr, "fuzz_json: contract violated: "); \
        fprintf(stderr, __VA_ARGS__);                      \
        fprintf(stderr, "\n");                             \
        abort();                                           \
    } while (0)

static int validate(const uint8_t *p, size_t n, uint32_t depth, size_t *off) {
    const char *msg = NULL;
    size_t o = (size_t)-1;
    int r = panto_json_validate(p, n, depth, &o, &msg);
    if (r != PANTO_OK && r != PANTO_ERROR)
        FAIL("panto_json_validate returned %d", r);
    if (r == PANTO_ERROR) {
        if (!msg || !*msg)
            FAIL("an error without a message");
        if (o > n)
            FAIL("error offset %zu past the end (%zu)", o, n);
    }
    if (off)
        *off = o;
    return r;
}

static int stream_code(const uint8_t *p, size_t n) {
    static const char head[] = "data: ";
    static const char tail[] = "\n\n";
    size_t total = sizeof head - 1 + n + sizeof tail - 1;
    uint8_t *buf = malloc(total ? total : 1);
    if (!buf)
        abort();
    memcpy(buf, head, sizeof head - 1);
    if (n)
        memcpy(buf + sizeof head - 1, p, n);
    memcpy(buf + sizeof head - 1 + n, tail, sizeof tail - 1);
    panto_stream *s = NULL;
    if (panto_stream_new(PANTO_WIRE_OPENAI_CHAT, NULL, &s) != PANTO_OK)
        FAIL("panto_stream_new failed");
    panto_stream_feed(s, buf, total);
    panto_stream_finish(s);
    panto_event ev;
    int st;
    while ((st = panto_next_event(s, &ev)) == PANTO_EVENT)
        ;
    panto_error e;
    panto_stream_error(s, &e);
    int code = (int)e.code;
    panto_stream_free(s);
    free(buf);
    return code;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    uint32_t depth = 0;
    if (size >= 1) {
        depth = data[0] % 40; /* 0 = the default (128) */
        data++;
        size--;
    }
    size_t off1, off2;
    int r = validate(data, size, depth, &off1);
    if (validate(data, size, depth, &off2) != r || (r == PANTO_ERROR && off1 != off2))
        FAIL("the verdict is not deterministic");

    uint8_t *w = malloc(size + 8);
    if (!w)
        abort();
    if (r == PANTO_OK) {
        /* whitespace around a valid text */
        w[0] = ' ';
        w[1] = '\n';
        if (size)
            memcpy(w + 2, data, size);
        w[size + 2] = '\t';
        w[size + 3] = '\r';
        if (validate(w, size + 4, depth, NULL) != PANTO_OK)
            FAIL("a valid text wrapped in whitespace is rejected");
        /* a stray byte after it */
        memcpy(w, data, size);
        w[size] = 'x';
        if (validate(w, size + 1, depth, NULL) != PANTO_ERROR)
            FAIL("a valid text followed by 'x' is accepted");
        /* one level deeper, with room for it */
        w[0] = '[';
        memcpy(w + 1, data, size);
        w[size + 1] = ']';
        uint32_t d = depth ? depth : 128;
        if (validate(w, size + 2, d + 1, NULL) != PANTO_OK)
            FAIL("[valid] is rejected at depth %u", d + 1);
        if (depth && validate(data, size, depth + 7, NULL) != PANTO_OK)
            FAIL("valid at depth %u but not at %u", depth, depth + 7);
    }
    free(w);

    /* The same reader behind the OpenAI wire: one data line, default depth. */
    size_t lo = 0, hi = size;
    while (lo < hi && (data[lo] == ' ' || data[lo] == '\t'))
        lo++;
    while (hi > lo && (data[hi - 1] == ' ' || data[hi - 1] == '\t'))
        hi--;
    if (lo < hi && !memchr(data, '\n', size) && !memchr(data, '\r', size) &&
        !(hi - lo == 6 && memcmp(data + lo, "[DONE]", 6) == 0)) {
        int v = validate(data, size, 0, NULL);
        int code = stream_code(data, size);
        if (v == PANTO_ERROR && code != PANTO_ERR_BAD_JSON && code != PANTO_ERR_BAD_SSE &&
            code != PANTO_ERR_LIMIT)
            FAIL("the validator rejects the payload, the stream ended with code %d", code);
        if (v == PANTO_OK && code == PANTO_ERR_BAD_JSON)
            FAIL("the validator accepts the payload, the stream says bad_json");
    }
    return 0;
}
