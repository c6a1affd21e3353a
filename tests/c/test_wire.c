/* test_wire.c -- the provider wire decoders (OpenAI chat, Anthropic
 * messages, OpenAI Responses) through the public API: every test renders the event sequence
 * as a transcript and compares it, and checks that every split of the input
 * into two feeds (and 1-byte feeds) gives the same transcript. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "panto.h"
#include "testlib.h"

/* ---- rendering into a growable string (sb: testlib.h) ---- */


static void sb_printf(sb *b, const char *fmt, ...) {
    char tmp[4096];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof tmp) {
        char *big = malloc((size_t)n + 1);
        va_start(ap, fmt);
        vsnprintf(big, (size_t)n + 1, fmt, ap);
        va_end(ap);
        sb_addn(b, big, (size_t)n);
        free(big);
        return;
    }
    sb_addn(b, tmp, (size_t)n);
}

static void sb_str(sb *b, panto_str s) {
    if (s.ptr == NULL) {
        sb_add(b, "<NULL>");
        return;
    }
    sb_addn(b, s.ptr, s.len);
}

/* JSON-escape s into b (no quotes). */
static void sb_json(sb *b, const char *s) {
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2] = {'\\', (char)c};
            sb_addn(b, e, 2);
        } else if (c == '\n') {
            sb_add(b, "\\n");
        } else if (c < 0x20) {
            sb_printf(b, "\\u%04x", c);
        } else {
            sb_addn(b, (const char *)&c, 1);
        }
    }
}

/* ---- running a stream into a transcript ---- */

static void usage_str(sb *b, panto_usage u) {
    sb_printf(b, "in=%llu cr=%llu cw=%llu out=%llu rs=%llu", (unsigned long long)u.input_tokens,
              (unsigned long long)u.cache_read_tokens, (unsigned long long)u.cache_write_tokens,
              (unsigned long long)u.output_tokens, (unsigned long long)u.reasoning_tokens);
}

static int invariant_failures;

static void render(sb *b, const panto_event *ev) {
    switch (ev->kind) {
    case PANTO_EV_MESSAGE_START:
        sb_add(b, "start id=");
        sb_str(b, ev->u.message_start.id);
        sb_add(b, " model=");
        sb_str(b, ev->u.message_start.model);
        sb_add(b, " ");
        usage_str(b, ev->u.message_start.usage);
        break;
    case PANTO_EV_BLOCK_START:
        sb_printf(b, "bstart %u %s", ev->u.block_start.index,
                  panto_block_kind_name(ev->u.block_start.block_kind));
        break;
    case PANTO_EV_TOOL_DETAILS:
        sb_printf(b, "tool %u id=", ev->u.tool_details.index);
        sb_str(b, ev->u.tool_details.id);
        sb_add(b, " name=");
        sb_str(b, ev->u.tool_details.name);
        break;
    case PANTO_EV_CONTENT_DELTA:
        sb_printf(b, "delta %u %s [", ev->u.content_delta.index,
                  panto_block_kind_name(ev->u.content_delta.block_kind));
        sb_str(b, ev->u.content_delta.text);
        sb_add(b, "]");
        if (ev->u.content_delta.text.len == 0)
            invariant_failures++;
        break;
    case PANTO_EV_BLOCK_COMPLETE: {
        const panto_block_complete *c = &ev->u.block_complete;
        sb_printf(b, "bdone %u %s [", c->index, panto_block_kind_name(c->block_kind));
        sb_str(b, c->text);
        sb_add(b, "]");
        if (c->signature.len) {
            sb_add(b, " sig=");
            sb_str(b, c->signature);
        }
        if (c->block_kind == PANTO_BLOCK_TOOL_USE) {
            sb_add(b, " id=");
            sb_str(b, c->tool_id);
            sb_add(b, " name=");
            sb_str(b, c->tool_name);
        }
        if (c->citations.len) {
            sb_add(b, " cites=");
            sb_str(b, c->citations);
        }
        if (c->flags)
            sb_printf(b, " flags=%u", c->flags);
        break;
    }
    case PANTO_EV_MESSAGE_COMPLETE:
        sb_printf(b, "complete %s raw=", panto_stop_reason_name(ev->u.message_complete.stop_reason));
        sb_str(b, ev->u.message_complete.raw_stop_reason);
        sb_add(b, " ");
        usage_str(b, ev->u.message_complete.usage);
        break;
    case PANTO_EV_SSE:
        sb_add(b, "sse event=");
        sb_str(b, ev->u.sse.event);
        sb_add(b, " data=[");
        sb_str(b, ev->u.sse.data);
        sb_add(b, "] id=");
        sb_str(b, ev->u.sse.id);
        sb_printf(b, " retry=%lld", (long long)ev->u.sse.retry);
        break;
    default:
        sb_printf(b, "?%d", (int)ev->kind);
        invariant_failures++;
    }
    sb_add(b, "\n");
}

static void render_error(sb *b, panto_stream *s) {
    panto_error e;
    if (panto_stream_error(s, &e) != PANTO_OK) {
        sb_add(b, "ERROR <no error>\n");
        return;
    }
    sb_printf(b, "ERROR %s: ", panto_error_code_name(e.code));
    sb_str(b, e.message);
    if (e.code == PANTO_ERR_PROVIDER) {
        sb_add(b, " type=");
        sb_str(b, e.provider_type);
        sb_printf(b, " retryable=%d", e.retryable);
    }
    sb_add(b, "\n");
}

/* When batch_cap > 0, drain() pulls through panto_next_events with up to
 * batch_cap events and a batch_buf-byte string buffer per call. */
static size_t batch_cap, batch_buf;

/* Drain; returns 1 when the stream is over (DONE or ERROR). */
static int drain(panto_stream *s, sb *b, int *saw_terminal) {
    panto_event ev;
    panto_event evs[64];
    char *buf = batch_cap ? malloc(batch_buf + 1) : NULL;
    size_t have = 0, next = 0;
    for (;;) {
        int r;
        if (!batch_cap) {
            r = panto_next_event(s, &ev);
        } else if (next < have) {
            ev = evs[next++];
            r = PANTO_EVENT;
        } else {
            next = have = 0;
            r = panto_next_events(s, evs, batch_cap, buf, batch_buf, &have);
            if (r == PANTO_EVENT) {
                if (have == 0 || have > batch_cap)
                    invariant_failures++;
                for (size_t i = 1; i < have; i++) /* only a lone event may borrow */
                    if (evs[i].kind == PANTO_EV_CONTENT_DELTA &&
                        (evs[i].u.content_delta.text.ptr < buf ||
                         evs[i].u.content_delta.text.ptr > buf + batch_buf))
                        invariant_failures++;
                ev = evs[next++];
            } else if (have != 0) {
                invariant_failures++;
            }
        }
        if (r == PANTO_EVENT) {
            if (*saw_terminal)
                invariant_failures++; /* nothing after the terminal */
            render(b, &ev);
            if (ev.kind == PANTO_EV_MESSAGE_COMPLETE)
                *saw_terminal = 1;
            continue;
        }
        free(buf);
        if (r == PANTO_NEED_MORE)
            return 0;
        if (r == PANTO_DONE) {
            sb_add(b, "DONE\n");
            if (panto_next_event(s, &ev) != PANTO_DONE)
                invariant_failures++;
            return 1;
        }
        if (r == PANTO_ERROR) {
            render_error(b, s);
            if (panto_next_event(s, &ev) != PANTO_ERROR)
                invariant_failures++;
            return 1;
        }
        sb_printf(b, "BAD STATUS %d\n", r);
        invariant_failures++;
        return 1;
    }
}

/* Feed `in` in pieces cut at the given points (sorted, n_cuts of them). */
static char *run_cuts(int wire, const char *in, size_t len, const size_t *cuts, size_t n_cuts) {
    sb b = {0};
    sb_add(&b, "");
    panto_stream *s = NULL;
    if (panto_stream_new(wire, NULL, &s) != PANTO_OK) {
        sb_add(&b, "NEW FAILED\n");
        return b.p;
    }
    int term = 0, over = 0;
    size_t pos = 0;
    for (size_t i = 0; i <= n_cuts && !over; i++) {
        size_t end = i < n_cuts ? cuts[i] : len;
        if (end < pos)
            end = pos;
        if (panto_stream_feed(s, (const uint8_t *)in + pos, end - pos) != PANTO_OK) {
            render_error(&b, s);
            over = 1;
            break;
        }
        pos = end;
        over = drain(s, &b, &term);
    }
    if (!over) {
        int fr = panto_stream_finish(s);
        if (fr != PANTO_OK && fr != PANTO_ERROR)
            invariant_failures++;
        drain(s, &b, &term);
    }
    panto_stream_free(s);
    return b.p;
}

static char *run_chunked(int wire, const char *in, size_t len, size_t chunk) {
    size_t n = chunk ? (len + chunk - 1) / chunk : 0;
    size_t *cuts = malloc((n + 1) * sizeof *cuts);
    size_t k = 0;
    for (size_t p = chunk; chunk && p < len; p += chunk)
        cuts[k++] = p;
    char *r = run_cuts(wire, in, len, cuts, k);
    free(cuts);
    return r;
}

static char *run_all(int wire, const char *in) { return run_cuts(wire, in, strlen(in), NULL, 0); }

/* Every 2-way split and 1-byte feeding give the same transcript as one feed. */
static int splits_agree(int wire, const char *in) {
    size_t len = strlen(in);
    char *want = run_all(wire, in);
    int ok = 1;
    for (size_t cut = 0; cut <= len && ok; cut++) {
        char *got = run_cuts(wire, in, len, &cut, 1);
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "split at %zu differs:\n--- want\n%s--- got\n%s", cut, want, got);
            ok = 0;
        }
        free(got);
    }
    size_t chunks[] = {1, 2, 3, 7, 64};
    for (size_t i = 0; i < sizeof chunks / sizeof chunks[0] && ok; i++) {
        char *got = run_chunked(wire, in, len, chunks[i]);
        if (strcmp(got, want) != 0) {
            fprintf(stderr, "chunk %zu differs:\n--- want\n%s--- got\n%s", chunks[i], want, got);
            ok = 0;
        }
        free(got);
    }
    /* panto_next_events gives the same events, whatever its cap and buffer
     * (tiny buffers exercise the lone borrowed event) */
    static const size_t batches[][2] = {{1, 0}, {2, 7}, {3, 64}, {64, 1 << 16}};
    for (size_t i = 0; i < sizeof batches / sizeof batches[0] && ok; i++) {
        batch_cap = batches[i][0];
        batch_buf = batches[i][1];
        size_t cut = len / 3, cuts[2] = {len / 3, 2 * len / 3};
        char *got = run_all(wire, in);
        char *got2 = run_cuts(wire, in, len, cuts, 2);
        (void)cut;
        batch_cap = batch_buf = 0;
        if (strcmp(got, want) != 0 || strcmp(got2, want) != 0) {
            fprintf(stderr, "panto_next_events(cap %zu, buf %zu) differs:\n--- want\n%s--- got\n%s",
                    batches[i][0], batches[i][1], want, strcmp(got, want) ? got : got2);
            ok = 0;
        }
        free(got);
        free(got2);
    }
    free(want);
    return ok;
}

#define EXPECT(wire, input, expected)                                                   \
    do {                                                                                \
        char *got_ = run_all((wire), (input));                                          \
        int good_ = strcmp(got_, (expected)) == 0;                                        \
        CHECK(good_ && "transcript");                                                     \
        if (!good_)                                                                     \
            fprintf(stderr, "%s:%d: transcript:\n--- want\n%s--- got\n%s", __FILE__,    \
                    __LINE__, (expected), got_);                                        \
        free(got_);                                                                     \
    } while (0)

/* The transcript's last line starts with `prefix`. */
static int ends_with_line(const char *t, const char *prefix) {
    size_t n = strlen(t);
    if (n == 0)
        return 0;
    const char *last = t + n - 1; /* the trailing \n */
    while (last > t && last[-1] != '\n')
        last--;
    return strncmp(last, prefix, strlen(prefix)) == 0;
}

#define EXPECT_END(wire, input, prefix)                                                 \
    do {                                                                                \
        char *got_ = run_all((wire), (input));                                          \
        int good_ = ends_with_line(got_, (prefix));                                       \
        CHECK(good_ && "last line");                                                      \
        if (!good_)                                                                     \
            fprintf(stderr, "%s:%d: want last line starting \"%s\", got:\n%s", __FILE__, \
                    __LINE__, (prefix), got_);                                          \
        free(got_);                                                                     \
    } while (0)

/* ---- OpenAI fixture builders ---- */

#define OA_HEAD "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"service_tier\":\"default\",\"system_fingerprint\":\"fp_1\",\"choices\":["
#define OA_TAIL "],\"usage\":null,\"obfuscation\":\"xY3z\"}\n\n"

static void oa_role(sb *b) {
    sb_add(b, OA_HEAD "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\",\"refusal\":null},\"logprobs\":null,\"finish_reason\":null}" OA_TAIL);
}
static void oa_delta(sb *b, const char *field, const char *text) {
    sb_printf(b, OA_HEAD "{\"index\":0,\"delta\":{\"%s\":\"", field);
    sb_json(b, text);
    sb_add(b, "\"},\"logprobs\":null,\"finish_reason\":null}" OA_TAIL);
}
static void oa_tool_head(sb *b, int idx, const char *id, const char *name, const char *args) {
    sb_printf(b, OA_HEAD "{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"id\":\"%s\",\"type\":\"function\",\"function\":{\"name\":\"%s\",\"arguments\":\"",
              idx, id, name);
    sb_json(b, args);
    sb_add(b, "\"}}]},\"logprobs\":null,\"finish_reason\":null}" OA_TAIL);
}
static void oa_tool_args(sb *b, int idx, const char *args) {
    sb_printf(b, OA_HEAD "{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":%d,\"function\":{\"arguments\":\"", idx);
    sb_json(b, args);
    sb_add(b, "\"}}]},\"logprobs\":null,\"finish_reason\":null}" OA_TAIL);
}
static void oa_finish(sb *b, const char *reason) {
    sb_printf(b, OA_HEAD "{\"index\":0,\"delta\":{},\"logprobs\":null,\"finish_reason\":\"%s\"}" OA_TAIL, reason);
}
static void oa_usage(sb *b, int prompt, int cached, int completion, int reasoning) {
    sb_printf(b, "data: {\"id\":\"chatcmpl-1\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"gpt-4o\",\"choices\":[],\"usage\":{\"prompt_tokens\":%d,\"completion_tokens\":%d,\"total_tokens\":%d,\"prompt_tokens_details\":{\"cached_tokens\":%d,\"audio_tokens\":0},\"completion_tokens_details\":{\"reasoning_tokens\":%d,\"audio_tokens\":0}},\"obfuscation\":\"q\"}\n\n",
              prompt, completion, prompt + completion, cached, reasoning);
}
static void oa_done(sb *b) { sb_add(b, "data: [DONE]\n\n"); }

static void test_openai_text(void) {
    sb b = {0};
    oa_role(&b);
    oa_delta(&b, "content", "Hello");
    oa_delta(&b, "content", "");
    oa_delta(&b, "content", " w\xc3\xb6rld \xf0\x9f\x98\x80");
    oa_finish(&b, "stop");
    oa_usage(&b, 100, 60, 20, 5);
    oa_done(&b);
    EXPECT(PANTO_WIRE_OPENAI_CHAT, b.p,
           "start id=chatcmpl-1 model=gpt-4o in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [Hello]\n"
           "delta 0 text [ w\xc3\xb6rld \xf0\x9f\x98\x80]\n"
           "bdone 0 text [Hello w\xc3\xb6rld \xf0\x9f\x98\x80]\n"
           "complete stop raw=stop in=40 cr=60 cw=0 out=20 rs=5\n"
           "DONE\n");
    CHECK(splits_agree(PANTO_WIRE_OPENAI_CHAT, b.p));
    free(b.p);

    /* \u escapes (as some compatible servers send), CRLF line ends, comments */
    EXPECT(PANTO_WIRE_OPENAI_CHAT,
           ": OPENROUTER PROCESSING\r\n\r\n"
           "data: {\"id\":\"x\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"caf\\u00e9 \\ud83d\\ude00\\n\"}}]}\r\n\r\n"
           "data: {\"id\":\"x\",\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\r\n\r\n"
           "data: [DONE]\r\n\r\n",
           "start id=x model=m in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [caf\xc3\xa9 \xf0\x9f\x98\x80\n]\n"
           "bdone 0 text [caf\xc3\xa9 \xf0\x9f\x98\x80\n]\n"
           "complete stop raw=stop in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");

    /* [DONE] alone: an empty message, still with a MESSAGE_START */
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "data: [DONE]\n\n",
           "start id= model= in=0 cr=0 cw=0 out=0 rs=0\n"
           "complete other raw= in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");
}

/* B3: delta.content as typed parts (Mistral); B2: unknown fields ignored
 * once the body is an event stream. */
static void test_openai_wild(void) {
    EXPECT(PANTO_WIRE_OPENAI_CHAT,
           ": OPENROUTER PROCESSING\n\n"
           "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":[{\"type\":\"thinking\","
           "\"thinking\":[{\"type\":\"text\",\"text\":\"hm\"},{\"type\":\"image\"},{\"type\":\"text\",\"text\":\"m\"}]}]}}]}\n\n"
           " data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"IGNORED\"}}]}\n\n"
           "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"A\"},"
           "{\"type\":\"reference\",\"reference_ids\":[1]},{\"type\":\"thinking\",\"thinking\":\"t\"}]}}]}\n\n"
           "data: [DONE]\n\n",
           "start id=x model= in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 thinking\n"
           "delta 0 thinking [hm]\n"
           "delta 0 thinking [m]\n"
           "bdone 0 thinking [hmm]\n"
           "bstart 1 text\n"
           "delta 1 text [A]\n"
           "bdone 1 text [A]\n"
           "bstart 2 thinking\n"
           "delta 2 thinking [t]\n"
           "bdone 2 thinking [t]\n"
           "complete other raw= in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT,
           "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":[\"bare\"]}}]}\n\n",
           "ERROR protocol: protocol violation: delta.content[] in event 1 is not an object\n");
    /* a body that never shows an SSE field is not an event stream: the
     * error names its first odd line, once the whole body is in */
    EXPECT(PANTO_WIRE_OPENAI_CHAT, " data: {}\n\n",
           "ERROR bad_sse: line 1: not an SSE field: \" data: {}\"\n");
    /* but the same line first in a real stream (recorded from OpenRouter)
     * is an unknown field, ignored: the stream decodes */
    EXPECT(PANTO_WIRE_OPENAI_CHAT,
           " data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"IGNORED\"}}]}\n\n"
           "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hi\"}}]}\n\n"
           "data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
           "data: [DONE]\n\n",
           "start id=x model= in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [Hi]\n"
           "bdone 0 text [Hi]\n"
           "complete stop raw=stop in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");
}

static void test_openai_reasoning(void) {
    sb b = {0};
    oa_role(&b);
    oa_delta(&b, "reasoning_content", "Let me think");
    oa_delta(&b, "reasoning_content", "...");
    oa_delta(&b, "content", "Answer");
    oa_delta(&b, "reasoning", "more thought");
    oa_delta(&b, "content", "!");
    oa_finish(&b, "stop");
    oa_done(&b);
    EXPECT(PANTO_WIRE_OPENAI_CHAT, b.p,
           "start id=chatcmpl-1 model=gpt-4o in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 thinking\n"
           "delta 0 thinking [Let me think]\n"
           "delta 0 thinking [...]\n"
           "bdone 0 thinking [Let me think...]\n"
           "bstart 1 text\n"
           "delta 1 text [Answer]\n"
           "bdone 1 text [Answer]\n"
           "bstart 2 thinking\n"
           "delta 2 thinking [more thought]\n"
           "bdone 2 thinking [more thought]\n"
           "bstart 3 text\n"
           "delta 3 text [!]\n"
           "bdone 3 text [!]\n"
           "complete stop raw=stop in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");
    CHECK(splits_agree(PANTO_WIRE_OPENAI_CHAT, b.p));
    free(b.p);
}

static void test_openai_tools(void) {
    sb b = {0};
    oa_role(&b);
    oa_delta(&b, "content", "Checking.");
    oa_tool_head(&b, 0, "call_a", "get_weather", "");
    oa_tool_head(&b, 1, "call_b", "search", "{\"q\": \"say \\");
    /* fragments cut inside \" escapes and around multi-byte UTF-8 */
    oa_tool_args(&b, 0, "{\"city\": \"Par");
    oa_tool_args(&b, 1, "\"hi\\\"\", \"lang\": \"");
    oa_tool_args(&b, 0, "is \xc3\xa9t\xc3\xa9\"}");
    oa_tool_args(&b, 1, "\xe6\x97\xa5\xe6\x9c\xac\"}");
    oa_tool_args(&b, 1, "");
    oa_finish(&b, "tool_calls");
    oa_usage(&b, 10, 0, 7, 0);
    oa_done(&b);
    EXPECT(PANTO_WIRE_OPENAI_CHAT, b.p,
           "start id=chatcmpl-1 model=gpt-4o in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [Checking.]\n"
           "bdone 0 text [Checking.]\n"
           "bstart 1 tool_use\n"
           "tool 1 id=call_a name=get_weather\n"
           "bstart 2 tool_use\n"
           "tool 2 id=call_b name=search\n"
           "delta 2 tool_use [{\"q\": \"say \\]\n"
           "delta 1 tool_use [{\"city\": \"Par]\n"
           "delta 2 tool_use [\"hi\\\"\", \"lang\": \"]\n"
           "delta 1 tool_use [is \xc3\xa9t\xc3\xa9\"}]\n"
           "delta 2 tool_use [\xe6\x97\xa5\xe6\x9c\xac\"}]\n"
           "bdone 1 tool_use [{\"city\": \"Paris \xc3\xa9t\xc3\xa9\"}] id=call_a name=get_weather\n"
           "bdone 2 tool_use [{\"q\": \"say \\\"hi\\\"\", \"lang\": \"\xe6\x97\xa5\xe6\x9c\xac\"}] id=call_b name=search\n"
           "complete tool_use raw=tool_calls in=10 cr=0 cw=0 out=7 rs=0\n"
           "DONE\n");
    CHECK(splits_agree(PANTO_WIRE_OPENAI_CHAT, b.p));
    free(b.p);

    /* a tool call without arguments completes with "{}"; text after a tool
     * call opens a new text block; blocks complete at [DONE] without a
     * finish_reason */
    b = (sb){0};
    oa_tool_head(&b, 0, "call_z", "now", "");
    oa_delta(&b, "content", "after");
    oa_done(&b);
    EXPECT(PANTO_WIRE_OPENAI_CHAT, b.p,
           "start id=chatcmpl-1 model=gpt-4o in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 tool_use\n"
           "tool 0 id=call_z name=now\n"
           "bstart 1 text\n"
           "delta 1 text [after]\n"
           "bdone 0 tool_use [{}] id=call_z name=now\n"
           "bdone 1 text [after]\n"
           "complete other raw= in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");
    free(b.p);

    /* tool calls without an index (some compatible servers): an id starts a
     * new call, a fragment without id continues the last one; arguments
     * given as an object are taken as their JSON text */
    EXPECT(PANTO_WIRE_OPENAI_CHAT,
           "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"id\":\"a\",\"function\":{\"name\":\"f\",\"arguments\":\"{\\\"x\\\":\"}},{\"id\":\"b\",\"function\":{\"name\":\"g\",\"arguments\":{\"y\": 2}}}]}}]}\n\n"
           "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"function\":{\"arguments\":\"1}\"}}]}}]}\n\n"
           "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n"
           "data: [DONE]\n\n",
           "start id= model= in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 tool_use\n"
           "tool 0 id=a name=f\n"
           "delta 0 tool_use [{\"x\":]\n"
           "bstart 1 tool_use\n"
           "tool 1 id=b name=g\n"
           "delta 1 tool_use [{\"y\": 2}]\n"
           "delta 1 tool_use [1}]\n"
           "bdone 0 tool_use [{\"x\":] id=a name=f\n"
           "bdone 1 tool_use [{\"y\": 2}1}] id=b name=g\n"
           "complete tool_use raw=tool_calls in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");

    /* arguments continued after finish_reason */
    b = (sb){0};
    oa_tool_head(&b, 0, "call_z", "now", "{");
    oa_finish(&b, "tool_calls");
    oa_tool_args(&b, 0, "}");
    oa_done(&b);
    EXPECT_END(PANTO_WIRE_OPENAI_CHAT, b.p,
               "ERROR protocol: protocol violation: tool call index 0 continued after finish_reason");
    free(b.p);
}

static void test_openai_finish_reasons(void) {
    static const struct {
        const char *raw, *want;
    } cases[] = {{"stop", "stop"},        {"tool_calls", "tool_use"},   {"function_call", "tool_use"},
                 {"length", "length"},    {"content_filter", "refusal"}, {"weird_new", "other"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb b = {0};
        oa_role(&b);
        oa_delta(&b, "content", "x");
        oa_finish(&b, cases[i].raw);
        oa_done(&b);
        char *t = run_all(PANTO_WIRE_OPENAI_CHAT, b.p);
        char want[128];
        snprintf(want, sizeof want, "complete %s raw=%s ", cases[i].want, cases[i].raw);
        CHECK(strstr(t, want) != NULL);
        if (!strstr(t, want))
            fprintf(stderr, "finish_reason %s:\n%s", cases[i].raw, t);
        free(t);
        free(b.p);
    }
    /* refusal text + stop -> refusal */
    sb b = {0};
    oa_role(&b);
    oa_delta(&b, "refusal", "I can't help with that.");
    oa_finish(&b, "stop");
    oa_done(&b);
    EXPECT(PANTO_WIRE_OPENAI_CHAT, b.p,
           "start id=chatcmpl-1 model=gpt-4o in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [I can't help with that.]\n"
           "bdone 0 text [I can't help with that.]\n"
           "complete refusal raw=stop in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");
    free(b.p);
}

static void test_openai_errors(void) {
    /* error object inside a 200 stream */
    sb b = {0};
    oa_role(&b);
    oa_delta(&b, "content", "partial");
    sb_add(&b, "data: {\"error\":{\"message\":\"The server had an error\",\"type\":\"server_error\",\"param\":null,\"code\":null}}\n\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT, b.p,
           "start id=chatcmpl-1 model=gpt-4o in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [partial]\n"
           "ERROR provider: The server had an error type=server_error retryable=1\n");
    free(b.p);
    EXPECT(PANTO_WIRE_OPENAI_CHAT,
           "data: {\"error\":{\"message\":\"bad key\",\"code\":\"invalid_api_key\"}}\n\n",
           "ERROR provider: bad key type=invalid_api_key retryable=0\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT,
           "data: {\"error\":{\"message\":\"slow down\",\"type\":\"requests\",\"code\":\"rate_limit_exceeded\"}}\n\n",
           "ERROR provider: slow down type=requests retryable=1\n");

    /* truncation */
    b = (sb){0};
    oa_role(&b);
    oa_delta(&b, "content", "Hel");
    EXPECT(PANTO_WIRE_OPENAI_CHAT, b.p,
           "start id=chatcmpl-1 model=gpt-4o in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [Hel]\n"
           "ERROR truncated: stream ended before [DONE] (after 2 events)\n");
    sb_add(&b, "data: {\"id\":\"chatcmpl-1\",\"choi");
    EXPECT_END(PANTO_WIRE_OPENAI_CHAT, b.p,
               "ERROR truncated: stream ended before [DONE] (after 2 events); 30 bytes of an unterminated line discarded");
    free(b.p);
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "data: [DONE]\n",
           "ERROR truncated: stream ended before [DONE] (after 0 events); an event without its closing blank line was discarded\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "", "ERROR truncated: stream ended before [DONE] (after 0 events)\n");

    /* bad payloads */
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "data: {\"id\":\"x\",}\n\n",
           "ERROR bad_json: bad JSON in event 1 (line 1) at byte 10: expected string key\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "data: [1,2]\n\n",
           "ERROR protocol: protocol violation: event 1 (line 1) is not a JSON object\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "data: {\"choices\":[{\"delta\":{\"content\":5}}]}\n\n",
           "ERROR protocol: protocol violation: delta.content in event 1 is not a string\n");
    /* Members the decoder never reads (system_fingerprint, obfuscation,
     * created, logprobs, role, model after the start, ...) are validated
     * without being built: malformed JSON in them is still bad_json at the
     * same byte, and the members around them still count. */
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "data: {\"obfuscation\":\"ab\\q\"}\n\n",
           "ERROR bad_json: bad JSON in event 1 (line 1) at byte 18: invalid escape\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "data: {\"created\":01}\n\n",
           "ERROR bad_json: bad JSON in event 1 (line 1) at byte 12: leading zero in number\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "data: {\"logprobs\":{\"a\":[1,]}}\n\n",
           "ERROR bad_json: bad JSON in event 1 (line 1) at byte 20: unexpected character\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "data: {\"system_fingerprint\":\"fp\xC0\xAF\"}\n\n",
           "ERROR bad_json: bad JSON in event 1 (line 1) at byte 25: invalid UTF-8 in string\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT, "data: {\"service_tier\":\"x\"\n\n",
           "ERROR bad_json: bad JSON in event 1 (line 1) at byte 19: unexpected end of input\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT,
           "data: {\"id\":\"a\",\"model\":\"m\",\"choices\":[]}\n\n"
           "data: {\"model\":tru}\n\n",
           "start id=a model=m in=0 cr=0 cw=0 out=0 rs=0\n"
           "ERROR bad_json: bad JSON in event 2 (line 3) at byte 9: invalid literal\n");
    EXPECT(PANTO_WIRE_OPENAI_CHAT,
           "data: {\"id\":\"a\",\"object\":\"chat.completion.chunk\",\"model\":\"m\","
           "\"system_fingerprint\":{\"k\":[1,{\"z\":null}],\"choices\":[]},\"choices\":[{\"index\":0,"
           "\"delta\":{\"role\":\"assistant\",\"content\":\"yes\"},\"logprobs\":null}],\"obfuscation\":\"q\"}\n\n"
           "data: {\"model\":{\"id\":[\"x\"]},\"choices\":[{\"delta\":{\"role\":[],\"content\":\"!\"},"
           "\"finish_reason\":\"stop\"}],\"created\":-1.5e3}\n\n"
           "data: [DONE]\n\n",
           "start id=a model=m in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [yes]\n"
           "delta 0 text [!]\n"
           "bdone 0 text [yes!]\n"
           "complete stop raw=stop in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");
    /* other choices are ignored; unknown keys are fine */
    EXPECT(PANTO_WIRE_OPENAI_CHAT,
           "data: {\"id\":\"a\",\"model\":\"m\",\"x\":{\"y\":[1,2]},\"choices\":[{\"index\":1,\"delta\":{\"content\":\"no\"}},{\"index\":0,\"delta\":{\"content\":\"yes\"},\"logprobs\":{\"content\":[]}}]}\n\n"
           "data: [DONE]\n\n",
           "start id=a model=m in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [yes]\n"
           "bdone 0 text [yes]\n"
           "complete other raw= in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");
}

/* ---- Anthropic fixture builders ---- */

#define AN_START "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_1\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"claude-x\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":25,\"cache_creation_input_tokens\":3,\"cache_read_input_tokens\":7,\"output_tokens\":1}}}\n\n"
#define AN_PING "event: ping\ndata: {\"type\": \"ping\"}\n\n"
#define AN_STOP "event: message_stop\ndata: {\"type\":\"message_stop\"        }\n\n"

static void an_block_start(sb *b, int idx, const char *block_json) {
    sb_printf(b, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":%d,\"content_block\":%s}\n\n",
              idx, block_json);
}
static void an_delta(sb *b, int idx, const char *type, const char *field, const char *text) {
    sb_printf(b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":%d,\"delta\":{\"type\":\"%s\",\"%s\":\"",
              idx, type, field);
    sb_json(b, text);
    sb_add(b, "\"}}\n\n");
}
static void an_block_stop(sb *b, int idx) {
    sb_printf(b, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":%d   }\n\n", idx);
}
static void an_message_delta(sb *b, const char *stop, const char *usage_json) {
    sb_printf(b, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"%s\",\"stop_sequence\":null},\"usage\":%s}\n\n",
              stop, usage_json);
}

static const char *AN_START_LINE = "start id=msg_1 model=claude-x in=25 cr=7 cw=3 out=1 rs=0\n";

static char *cat(const char *a, const char *bb) {
    sb b = {0};
    sb_add(&b, a);
    sb_add(&b, bb);
    return b.p;
}

static void test_anthropic_text(void) {
    sb b = {0};
    sb_add(&b, AN_START AN_PING);
    an_block_start(&b, 0, "{\"type\":\"text\",\"text\":\"\"}");
    an_delta(&b, 0, "text_delta", "text", "Hello");
    sb_add(&b, AN_PING);
    an_delta(&b, 0, "text_delta", "text", "");
    an_delta(&b, 0, "text_delta", "text", ", w\xc3\xb6rld\n\"quoted\"");
    an_block_stop(&b, 0);
    an_message_delta(&b, "end_turn", "{\"output_tokens\":15}");
    sb_add(&b, AN_STOP);
    char *want = cat(AN_START_LINE,
                     "bstart 0 text\n"
                     "delta 0 text [Hello]\n"
                     "delta 0 text [, w\xc3\xb6rld\n\"quoted\"]\n"
                     "bdone 0 text [Hello, w\xc3\xb6rld\n\"quoted\"]\n"
                     "complete stop raw=end_turn in=25 cr=7 cw=3 out=15 rs=0\n"
                     "DONE\n");
    EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES, b.p, want);
    CHECK(splits_agree(PANTO_WIRE_ANTHROPIC_MESSAGES, b.p));
    free(want);
    free(b.p);

    /* without event: lines, data.type alone decides; initial text is a delta */
    EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES,
           "data: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\"}}\n\n"
           "data: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"Hi\"}}\n\n"
           "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
           "data: {\"type\":\"message_stop\"}\n\n",
           "start id=m model=c in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [Hi]\n"
           "bdone 0 text [Hi]\n"
           "complete other raw= in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");
}

static void test_anthropic_thinking_tools(void) {
    sb b = {0};
    char *want;
    sb_add(&b, AN_START);
    an_block_start(&b, 0, "{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}");
    an_delta(&b, 0, "thinking_delta", "thinking", "I should ");
    an_delta(&b, 0, "thinking_delta", "thinking", "call a tool.");
    an_delta(&b, 0, "signature_delta", "signature", "EqQBCkgIAR==");
    an_block_stop(&b, 0);
    an_block_start(&b, 1, "{\"type\":\"redacted_thinking\",\"data\":\"EmwKAhgBEgy3va==\"}");
    an_block_stop(&b, 1);
    an_block_start(&b, 2, "{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{}}");
    an_delta(&b, 2, "input_json_delta", "partial_json", "{\"query\":\"x\"}");
    an_block_stop(&b, 2);
    an_block_start(&b, 3, "{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\",\"content\":[]}");
    an_block_stop(&b, 3);
    an_block_start(&b, 4, "{\"type\":\"tool_use\",\"id\":\"toolu_01\",\"name\":\"get_weather\",\"input\":{}}");
    an_delta(&b, 4, "input_json_delta", "partial_json", "");
    an_delta(&b, 4, "input_json_delta", "partial_json", "{\"loc");
    an_delta(&b, 4, "input_json_delta", "partial_json", "ation\": \"S\\");
    an_delta(&b, 4, "input_json_delta", "partial_json", "\"F\xe2\x82\xac");
    sb_add(&b, AN_PING);
    an_delta(&b, 4, "citations_delta", "citation", "ignored");
    an_delta(&b, 4, "input_json_delta", "partial_json", "\"}");
    an_block_stop(&b, 4);
    an_block_start(&b, 5, "{\"type\":\"tool_use\",\"id\":\"toolu_02\",\"name\":\"noargs\",\"input\":{}}");
    an_block_stop(&b, 5);
    an_message_delta(&b, "tool_use",
                     "{\"input_tokens\":30,\"cache_read_input_tokens\":8,\"output_tokens\":99}");
    sb_add(&b, AN_STOP);
    want = cat(AN_START_LINE,
               "bstart 0 thinking\n"
               "delta 0 thinking [I should ]\n"
               "delta 0 thinking [call a tool.]\n"
               "bdone 0 thinking [I should call a tool.] sig=EqQBCkgIAR==\n"
               "bstart 1 redacted_thinking\n"
               "bdone 1 redacted_thinking [EmwKAhgBEgy3va==]\n"
               /* server blocks: opaque, their JSON assembled (input streamed) */
               "bstart 2 server\n"
               "bdone 2 server [{\"type\":\"server_tool_use\",\"id\":\"srvtoolu_1\",\"name\":\"web_search\",\"input\":{\"query\":\"x\"}}]\n"
               "bstart 3 server\n"
               "bdone 3 server [{\"type\":\"web_search_tool_result\",\"tool_use_id\":\"srvtoolu_1\",\"content\":[]}]\n"
               "bstart 4 tool_use\n"
               "tool 4 id=toolu_01 name=get_weather\n"
               "delta 4 tool_use [{\"loc]\n"
               "delta 4 tool_use [ation\": \"S\\]\n"
               "delta 4 tool_use [\"F\xe2\x82\xac]\n"
               "delta 4 tool_use [\"}]\n"
               "bdone 4 tool_use [{\"location\": \"S\\\"F\xe2\x82\xac\"}] id=toolu_01 name=get_weather\n"
               "bstart 5 tool_use\n"
               "tool 5 id=toolu_02 name=noargs\n"
               "bdone 5 tool_use [{}] id=toolu_02 name=noargs\n"
               "complete tool_use raw=tool_use in=30 cr=8 cw=3 out=99 rs=0\n"
               "DONE\n");
    EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES, b.p, want);
    CHECK(splits_agree(PANTO_WIRE_ANTHROPIC_MESSAGES, b.p));
    free(want);
    free(b.p);

    /* initial thinking and signature in content_block_start are kept;
     * message_stop completes a block left open */
    EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES,
           AN_START
           "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"pre\",\"signature\":\"S1\"}}\n\n"
           "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"S2\"}}\n\n" AN_STOP,
           "start id=msg_1 model=claude-x in=25 cr=7 cw=3 out=1 rs=0\n"
           "bstart 0 thinking\n"
           "delta 0 thinking [pre]\n"
           "bdone 0 thinking [pre] sig=S1S2\n"
           "complete other raw= in=25 cr=7 cw=3 out=1 rs=0\n"
           "DONE\n");
}

/* Issue 15: blocks in message_start (B1), server blocks and citations. */
static void test_anthropic_kept_blocks(void) {
    /* B1: a tool call made by code execution arrives whole in message_start */
    EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES,
           "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"model\":\"c\","
           "\"content\":[{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"rollDie\",\"input\":{\"player\":\"p2\"},"
           "\"caller\":{\"type\":\"code_execution_20250825\",\"tool_id\":\"srvtoolu_1\"}},"
           "{\"type\":\"text\",\"text\":\"hi\"}],\"stop_reason\":\"tool_use\"}}\n\n"
           AN_STOP,
           "start id=m model=c in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 tool_use\n"
           "tool 0 id=toolu_1 name=rollDie\n"
           "delta 0 tool_use [{\"player\":\"p2\"}]\n"
           "bdone 0 tool_use [{\"player\":\"p2\"}] id=toolu_1 name=rollDie\n"
           "bstart 1 text\n"
           "delta 1 text [hi]\n"
           "bdone 1 text [hi]\n"
           "complete tool_use raw=tool_use in=0 cr=0 cw=0 out=0 rs=0\n"
           "DONE\n");
    /* message_start content must be an array of objects */
    EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES,
           "data: {\"type\":\"message_start\",\"message\":{\"content\":{}}}\n\n",
           "ERROR protocol: protocol violation: message_start message.content is not an array (event 1)\n");

    /* citations on a text block; a server block without input; one whose
     * input streams (the deltas replace "input", whitespace kept) */
    sb b = {0};
    sb_add(&b, AN_START);
    an_block_start(&b, 0, "{\"type\":\"text\",\"text\":\"\",\"citations\":[{\"n\":0}]}");
    an_delta(&b, 0, "text_delta", "text", "A");
    sb_add(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
               "\"delta\":{\"type\":\"citations_delta\",\"citation\":{\"n\": 1}}}\n\n");
    sb_add(&b, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,"
               "\"delta\":{\"type\":\"citations_delta\",\"citation\":{\"n\":2}}}\n\n");
    an_block_stop(&b, 0);
    an_block_start(&b, 1, "{\"type\":\"mcp_tool_use\",\"id\":\"mcptoolu_1\",\"input\":{},\"server_name\":\"s\"}");
    an_delta(&b, 1, "input_json_delta", "partial_json", "{\"a\": ");
    an_delta(&b, 1, "input_json_delta", "partial_json", "1}");
    an_block_stop(&b, 1);
    an_block_start(&b, 2, "{\"type\":\"compaction\",\"content\":\"summary\"}");
    an_block_stop(&b, 2);
    sb_add(&b, AN_STOP);
    char *want = cat(AN_START_LINE,
           "bstart 0 text\n"
           "delta 0 text [A]\n"
           "bdone 0 text [A] cites=[{\"n\":0},{\"n\": 1},{\"n\":2}]\n"
           "bstart 1 server\n"
           "bdone 1 server [{\"type\":\"mcp_tool_use\",\"id\":\"mcptoolu_1\",\"input\":{\"a\": 1},\"server_name\":\"s\"}]\n"
           "bstart 2 server\n"
           "bdone 2 server [{\"type\":\"compaction\",\"content\":\"summary\"}]\n"
           "complete other raw= in=25 cr=7 cw=3 out=1 rs=0\n"
           "DONE\n");
    EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES, b.p, want);
    CHECK(splits_agree(PANTO_WIRE_ANTHROPIC_MESSAGES, b.p));
    free(want);
    free(b.p);
}

static void test_anthropic_stop_reasons(void) {
    static const struct {
        const char *raw, *want;
    } cases[] = {{"end_turn", "stop"},
                 {"stop_sequence", "stop"},
                 {"tool_use", "tool_use"},
                 {"max_tokens", "length"},
                 {"model_context_window_exceeded", "length"},
                 {"refusal", "refusal"},
                 {"pause_turn", "pause"},
                 {"brand_new", "other"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        sb b = {0};
        sb_add(&b, AN_START);
        an_message_delta(&b, cases[i].raw, "{\"output_tokens\":2}");
        sb_add(&b, AN_STOP);
        char want[160];
        snprintf(want, sizeof want, "complete %s raw=%s in=25 cr=7 cw=3 out=2 rs=0\n", cases[i].want,
                 cases[i].raw);
        char *t = run_all(PANTO_WIRE_ANTHROPIC_MESSAGES, b.p);
        CHECK(strstr(t, want) != NULL);
        if (!strstr(t, want))
            fprintf(stderr, "stop %s:\n%s", cases[i].raw, t);
        free(t);
        free(b.p);
    }
}

static void test_anthropic_errors(void) {
    EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES,
           "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n",
           "ERROR provider: Overloaded type=overloaded_error retryable=1\n");
    EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES,
           AN_START AN_PING
           "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"bad\"}}\n\n",
           "start id=msg_1 model=claude-x in=25 cr=7 cw=3 out=1 rs=0\n"
           "ERROR provider: bad type=invalid_request_error retryable=0\n");
    static const char *retry_types[] = {"api_error", "rate_limit_error", "timeout_error"};
    for (size_t i = 0; i < 3; i++) {
        char in[256], want[256];
        snprintf(in, sizeof in,
                 "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"%s\",\"message\":\"m\"}}\n\n",
                 retry_types[i]);
        snprintf(want, sizeof want, "ERROR provider: m type=%s retryable=1\n", retry_types[i]);
        EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES, in, want);
    }

    /* protocol violations, each with its own message */
    const char *P = "ERROR protocol: protocol violation: ";
    struct {
        const char *input, *err;
    } cases[] = {
        {"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
         "content_block_start before message_start (event 1)"},
        {AN_START AN_START, "second message_start (event 2)"},
        {AN_START
         "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
         "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
         "content_block_start for block index 0 that already started (event 3)"},
        {AN_START
         "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":3,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
         "content_block_delta for block index 3 that never started (event 2)"},
        {AN_START
         "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
         "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
         "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"}}\n\n",
         "content_block_delta for block index 0 that already stopped (event 4)"},
        {AN_START "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
         "content_block_stop for block index 1 that never started (event 2)"},
        {AN_START
         "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
         "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
         "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
         "content_block_stop for block index 0 that already stopped (event 4)"},
        {AN_START
         "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
         "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\"}}\n\n",
         "input_json_delta for block index 0, which is a text block (event 3)"},
        {AN_START
         "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
         "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\"}}\n\n",
         "text_delta without a \"text\" string (event 3)"},
        {AN_START "event: message_delta\ndata: {\"type\":\"message_stop\"}\n\n",
         "event \"message_delta\" carries data of type \"message_stop\" (event 2)"},
        {AN_START "event: ping\ndata: {\"kind\":\"ping\"}\n\n", "event 2 (line 5) has no \"type\" string"},
        {AN_START "event: ping\ndata: \"ping\"\n\n", "event 2 (line 5) is not a JSON object"},
        {AN_START "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"content_block\":{\"type\":\"text\"}}\n\n",
         "content_block_start without a valid \"index\" (event 2)"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char want[512];
        snprintf(want, sizeof want, "%s%s", P, cases[i].err);
        EXPECT_END(PANTO_WIRE_ANTHROPIC_MESSAGES, cases[i].input, want);
    }

    /* unknown events and delta types are ignored; truncation */
    EXPECT(PANTO_WIRE_ANTHROPIC_MESSAGES,
           AN_START "event: future_event\ndata: {\"type\":\"future_event\",\"x\":1}\n\n",
           "start id=msg_1 model=claude-x in=25 cr=7 cw=3 out=1 rs=0\n"
           "ERROR truncated: stream ended before message_stop (after 2 events)\n");
}

static void test_garbage(void) {
    EXPECT_END(PANTO_WIRE_OPENAI_CHAT, "<html><body>502 Bad Gateway</body></html>\n",
               "ERROR bad_sse: line 1: not an SSE field");
    EXPECT_END(PANTO_WIRE_ANTHROPIC_MESSAGES, "{\"type\":\"error\",\"error\":{}}\n",
               "ERROR bad_sse: line 1: not an SSE field");
    EXPECT_END(PANTO_WIRE_OPENAI_CHAT, "data: {\"choices\":[{\"delta\":{\"content\":\"\xff\xfe\"}}]}\n\n",
               "ERROR bad_json: bad JSON in event 1 (line 1) at byte");
    EXPECT_END(PANTO_WIRE_ANTHROPIC_MESSAGES, "event: \xc3\x28\ndata: {}\n\n", "ERROR bad_sse: line 1: invalid UTF-8");
    EXPECT_END(PANTO_WIRE_ANTHROPIC_MESSAGES, "data: {\"type\":\"message_start\",\"message\":{\"id\":\"\xed\xa0\x80\"}}\n\n",
               "ERROR bad_json:");

    /* random bytes never crash and always end in a clean error */
    uint32_t seed = 12345;
    for (int round = 0; round < 300; round++) {
        char buf[512];
        size_t n = 1 + (size_t)(round % 500);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            buf[i] = (char)(seed >> 16);
            if (round % 3 == 0 && buf[i] == 0)
                buf[i] = '\n';
        }
        for (int w = PANTO_WIRE_OPENAI_CHAT; w <= PANTO_WIRE_OPENAI_RESPONSES; w++) {
            char *t = run_cuts(w, buf, n, NULL, 0);
            int ok = strstr(t, "ERROR ") != NULL && strstr(t, "ERROR <no") == NULL;
            if (!ok) {
                CHECK(ok);
                fprintf(stderr, "random round %d wire %d: %s\n", round, w, t);
            }
            free(t);
        }
    }
    CHECK(1);

    /* mutated valid streams: every single-byte corruption ends cleanly */
    sb b = {0};
    sb_add(&b, AN_START);
    an_block_start(&b, 0, "{\"type\":\"text\",\"text\":\"\"}");
    an_delta(&b, 0, "text_delta", "text", "Hi");
    an_block_stop(&b, 0);
    an_message_delta(&b, "end_turn", "{\"output_tokens\":2}");
    sb_add(&b, AN_STOP);
    int bad = 0;
    static const char subs[] = {'\0', '"', '{', '\n', '\r', ':', (char)0xff, (char)0xc3, 'x'};
    for (size_t i = 0; i < b.len; i++) {
        for (size_t k = 0; k < sizeof subs; k++) {
            char *m = malloc(b.len);
            memcpy(m, b.p, b.len);
            m[i] = subs[k];
            char *t = run_cuts(PANTO_WIRE_ANTHROPIC_MESSAGES, m, b.len, NULL, 0);
            if (!(strstr(t, "DONE\n") || strstr(t, "ERROR ")) || strstr(t, "BAD STATUS"))
                bad++;
            free(t);
            free(m);
        }
    }
    CHECK_EQ_INT(bad, 0);
    free(b.p);
}

/* ---- OpenAI Responses ---- */

#define RS_CREATED                                                                          \
    "event: response.created\ndata: {\"type\":\"response.created\",\"sequence_number\":0,"   \
    "\"response\":{\"id\":\"resp_1\",\"model\":\"gpt-x\",\"status\":\"in_progress\",\"usage\":null}}\n\n"
#define RS_EV(json) "data: " json "\n\n"
#define RS_MSG_ADDED(o)                                                                     \
    RS_EV("{\"type\":\"response.output_item.added\",\"output_index\":" #o                   \
          ",\"item\":{\"id\":\"msg_1\",\"type\":\"message\",\"content\":[]}}")
#define RS_TEXT(o, c, t)                                                                    \
    RS_EV("{\"type\":\"response.output_text.delta\",\"output_index\":" #o                   \
          ",\"content_index\":" #c ",\"delta\":\"" t "\"}")
#define RS_COMPLETED                                                                        \
    RS_EV("{\"type\":\"response.completed\",\"response\":{\"status\":\"completed\","         \
          "\"usage\":{\"input_tokens\":10,\"input_tokens_details\":{\"cached_tokens\":4},"   \
          "\"output_tokens\":7,\"output_tokens_details\":{\"reasoning_tokens\":3}}}}")

/* Every fixture of the wire: each split in two, 1-byte feeds, batches. */
static void test_responses_fixtures(void) {
    static const char *names[] = {
        "openai_responses_text",          "openai_responses_reasoning_tool",
        "openai_responses_parallel_tools", "openai_responses_refusal",
        "openai_responses_web_search",    "openai_responses_reasoning_text",
        "openai_responses_incomplete",    "openai_responses_failed",
        "openai_responses_error_event",   "openai_responses_truncated",
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[256];
        snprintf(path, sizeof path, "tests/fixtures/%s.sse", names[i]);
        FILE *f = fopen(path, "rb");
        CHECK(f != NULL);
        if (!f)
            continue;
        static char buf[1 << 16];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = 0;
        CHECK(strlen(buf) == n);
        int ok = splits_agree(PANTO_WIRE_OPENAI_RESPONSES, buf);
        CHECK(ok);
        if (!ok)
            fprintf(stderr, "fixture %s: splits differ\n", names[i]);
        char *t = run_all(PANTO_WIRE_OPENAI_RESPONSES, buf);
        CHECK(strstr(t, "BAD STATUS") == NULL);
        free(t);
    }
}

static void test_responses(void) {
    const int W = PANTO_WIRE_OPENAI_RESPONSES;
    CHECK(strcmp(panto_wire_name(W), "openai-responses") == 0);
    /* text without content_part.added; usage normalized */
    EXPECT(W, RS_CREATED RS_MSG_ADDED(0) RS_TEXT(0, 0, "Hi") RS_TEXT(0, 0, " there") RS_COMPLETED,
           "start id=resp_1 model=gpt-x in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 text\n"
           "delta 0 text [Hi]\n"
           "delta 0 text [ there]\n"
           "bdone 0 text [Hi there]\n"
           "complete stop raw=completed in=6 cr=4 cw=0 out=7 rs=3\n"
           "DONE\n");
    /* an item that only comes done: the reasoning item whole, its JSON the
     * signature; a function call whose arguments come only in the item */
    EXPECT(W,
           RS_CREATED RS_EV("{\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":"
                            "{\"type\":\"reasoning\",\"id\":\"rs_1\",\"encrypted_content\":\"gAAA\"}}")
               RS_EV("{\"type\":\"response.output_item.done\",\"output_index\":1,\"item\":"
                     "{\"type\":\"function_call\",\"call_id\":\"c1\",\"name\":\"f\",\"arguments\":\"{\\\"a\\\":1}\"}}")
                   RS_COMPLETED,
           "start id=resp_1 model=gpt-x in=0 cr=0 cw=0 out=0 rs=0\n"
           "bstart 0 thinking\n"
           "bdone 0 thinking [] sig={\"type\":\"reasoning\",\"id\":\"rs_1\",\"encrypted_content\":\"gAAA\"}\n"
           "bstart 1 tool_use\n"
           "tool 1 id=c1 name=f\n"
           "delta 1 tool_use [{\"a\":1}]\n"
           "bdone 1 tool_use [{\"a\":1}] id=c1 name=f\n"
           "complete tool_use raw=completed in=6 cr=4 cw=0 out=7 rs=3\n"
           "DONE\n");
    /* protocol errors: output before response.created; a delta after its
     * part is done; arguments for an item never added */
    EXPECT_END(W, RS_MSG_ADDED(0), "ERROR protocol: protocol violation: response.output_item.added before response.created");
    EXPECT_END(W,
               RS_CREATED RS_MSG_ADDED(0) RS_TEXT(0, 0, "a")
                   RS_EV("{\"type\":\"response.content_part.done\",\"output_index\":0,\"content_index\":0,"
                         "\"part\":{\"type\":\"output_text\",\"text\":\"a\"}}") RS_TEXT(0, 0, "b"),
               "ERROR protocol: protocol violation: response.output_text.delta for an output item or content part that is done");
    EXPECT_END(W,
               RS_CREATED RS_EV("{\"type\":\"response.function_call_arguments.delta\",\"output_index\":3,\"delta\":\"{\"}"),
               "ERROR protocol: protocol violation: response.function_call_arguments.delta for output_index 3, which was never added");
    EXPECT_END(W, RS_CREATED RS_EV("{\"type\":\"response.output_text.delta\",\"output_index\":-1,\"content_index\":0,\"delta\":\"x\"}"),
               "ERROR protocol: protocol violation: response.output_text.delta without a valid \"output_index\"");
    /* an event after the terminal one; errors */
    {
        panto_stream *s = NULL;
        const char *in = RS_CREATED RS_COMPLETED RS_TEXT(0, 0, "late");
        panto_error e;
        CHECK(panto_stream_new(W, NULL, &s) == PANTO_OK);
        panto_event ev;
        char msg[256] = {0};
        CHECK(panto_stream_feed(s, (const uint8_t *)in, strlen(in)) == PANTO_OK);
        while (panto_next_event(s, &ev) == PANTO_EVENT)
            ;
        CHECK(panto_stream_finish(s) == PANTO_ERROR);
        panto_stream_error(s, &e);
        memcpy(msg, e.message.ptr, e.message.len < 255 ? e.message.len : 255);
        CHECK(e.code == PANTO_ERR_PROTOCOL &&
              strstr(msg, "event after the response's terminal event") != NULL);
        panto_stream_free(s);
    }
    EXPECT_END(W, RS_EV("{\"type\":\"error\",\"error\":{\"type\":\"server_error\",\"code\":\"rate_limit_exceeded\",\"message\":\"slow down\"}}"),
               "ERROR provider: slow down type=rate_limit_exceeded retryable=1");
    EXPECT_END(W, RS_CREATED RS_EV("{\"type\":\"response.failed\",\"response\":{\"status\":\"failed\",\"error\":null}}"),
               "ERROR provider: the response failed type=response.failed retryable=0");
    EXPECT_END(W, RS_CREATED "data: [1]\n\n", "ERROR protocol: protocol violation: event 2 (line 4) is not a JSON object");
    CHECK(splits_agree(W, RS_CREATED RS_MSG_ADDED(0) RS_TEXT(0, 0, "\\u00e9\\ud83d\\ude00") RS_COMPLETED));
}

int main(void) {
    test_openai_text();
    test_openai_reasoning();
    test_openai_wild();
    test_openai_tools();
    test_openai_finish_reasons();
    test_openai_errors();
    test_anthropic_text();
    test_anthropic_thinking_tools();
    test_anthropic_stop_reasons();
    test_anthropic_kept_blocks();
    test_anthropic_errors();
    test_responses();
    test_responses_fixtures();
    test_garbage();
    CHECK_EQ_INT(invariant_failures, 0);
    return test_report("test_wire");
}
