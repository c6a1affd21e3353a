/* c_decode.c -- throughput of the C core alone (no Python).
 *
 *   panto_bench_c FILE WIRE [RUNS] [--against FILE2 WIRE2]
 *
 * FILE is a response body (e.g. from bench/streamgen.py), WIRE one of
 * openai-chat, anthropic-messages, openai-responses, sse.  The body is cut into pseudo-random
 * 1-4 KiB chunks (fixed seed, like socket reads); each run creates a stream,
 * feeds every chunk, pulls every event after each feed (touching the event
 * strings so nothing is optimized away), finishes and frees the stream.  It
 * prints the median MB/s over RUNS (default 15) and, as the floor, the
 * median MB/s of a memchr scan for line ends over the same chunks -- the
 * least any SSE decoder must do (five scans after each decode, so both
 * meet the same load).  Then the best run of each (the one the machine's
 * load disturbed least) and their ratio, and the medians in thread CPU
 * time (leaving out the time other processes of a shared machine held the
 * CPU).  With --against, FILE2 (the baseline, A) and FILE (B) are decoded in
 * alternating runs and it prints the median of B's time over A's per pair:
 * the way to compare two wires on the same text when the machine's speed
 * drifts between separate runs. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "panto.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this thread: leaves out the time other processes of a
 * shared machine hold the CPU (not time the hypervisor steals). */
static double now_cpu(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint8_t *read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t cap = 1 << 20, n = 0;
    uint8_t *buf = malloc(cap);
    for (;;) {
        if (!buf)
            break;
        if (n == cap) {
            uint8_t *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        size_t r = fread(buf + n, 1, cap - n, f);
        if (r == 0)
            break;
        n += r;
    }
    fclose(f);
    if (!buf)
        fprintf(stderr, "out of memory\n");
    *len = n;
    return buf;
}

static uint32_t xorshift32(uint32_t *s)
{
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* Sum of string lengths seen, so the compiler cannot drop the pulls. */
static uint64_t sink;

static void touch(panto_str s)
{
    if (s.len)
        sink += s.len + (uint8_t)s.ptr[s.len - 1];
}

static int pull(panto_stream *s, uint64_t *n_events)
{
    panto_event ev;
    for (;;) {
        int r = panto_next_event(s, &ev);
        if (r != PANTO_EVENT)
            return r;
        ++*n_events;
        switch (ev.kind) {
        case PANTO_EV_CONTENT_DELTA:
            touch(ev.u.content_delta.text);
            break;
        case PANTO_EV_BLOCK_COMPLETE:
            touch(ev.u.block_complete.text);
            break;
        case PANTO_EV_SSE:
            touch(ev.u.sse.data);
            break;
        case PANTO_EV_MESSAGE_START:
            touch(ev.u.message_start.id);
            break;
        default:
            break;
        }
    }
}

/* One decode of the whole body; returns 0 or -1 (with a message). */
static int decode_once(int wire, const uint8_t *body, const size_t *cuts, size_t n_cuts,
                       uint64_t *n_events)
{
    panto_stream *s = NULL;
    if (panto_stream_new(wire, NULL, &s) != PANTO_OK) {
        fprintf(stderr, "panto_stream_new failed\n");
        return -1;
    }
    int r = PANTO_OK;
    size_t off = 0;
    *n_events = 0;
    for (size_t i = 0; i < n_cuts && r != PANTO_ERROR; i++) {
        if (panto_stream_feed(s, body + off, cuts[i] - off) != PANTO_OK)
            r = PANTO_ERROR;
        else
            r = pull(s, n_events);
        off = cuts[i];
    }
    if (r != PANTO_ERROR) {
        if (panto_stream_finish(s) != PANTO_OK)
            r = PANTO_ERROR;
        else
            r = pull(s, n_events);
    }
    if (r == PANTO_ERROR) {
        panto_error e;
        panto_stream_error(s, &e);
        fprintf(stderr, "decode failed: %s: %.*s\n", panto_error_code_name(e.code), (int)e.message.len,
                e.message.ptr ? e.message.ptr : "");
        panto_stream_free(s);
        return -1;
    }
    if (wire != PANTO_WIRE_SSE && r != PANTO_DONE) {
        fprintf(stderr, "decode ended without the terminal event (status %d)\n", r);
        panto_stream_free(s);
        return -1;
    }
    panto_stream_free(s);
    return 0;
}

static uint64_t scan_lines(const uint8_t *body, const size_t *cuts, size_t n_cuts)
{
    uint64_t lines = 0;
    size_t off = 0;
    for (size_t i = 0; i < n_cuts; i++) {
        const uint8_t *p = body + off, *end = body + cuts[i];
        while (p < end) {
            const uint8_t *q = memchr(p, '\n', (size_t)(end - p));
            if (!q)
                break;
            lines++;
            p = q + 1;
        }
        off = cuts[i];
    }
    return lines;
}

static int parse_wire(const char *name)
{
    if (strcmp(name, "openai-chat") == 0)
        return PANTO_WIRE_OPENAI_CHAT;
    if (strcmp(name, "anthropic-messages") == 0)
        return PANTO_WIRE_ANTHROPIC_MESSAGES;
    if (strcmp(name, "openai-responses") == 0)
        return PANTO_WIRE_OPENAI_RESPONSES;
    if (strcmp(name, "sse") == 0)
        return PANTO_WIRE_SSE;
    fprintf(stderr, "unknown wire %s (one of openai-chat, anthropic-messages, openai-responses, sse)\n", name);
    return -1;
}

/* A body cut into 1-4 KiB chunks (fixed seed, like socket reads). */
typedef struct {
    const char *name;
    int wire;
    uint8_t *body;
    size_t len, n_cuts;
    size_t *cuts;
    uint64_t n_events;
} input;

static int load_input(input *in, const char *path, const char *wire_name)
{
    in->name = wire_name;
    in->wire = parse_wire(wire_name);
    if (in->wire < 0)
        return -1;
    in->body = read_file(path, &in->len);
    if (!in->body)
        return -1;
    if (in->len == 0) {
        fprintf(stderr, "%s is empty\n", path);
        return -1;
    }
    in->cuts = malloc((in->len / 1024 + 2) * sizeof *in->cuts);
    if (!in->cuts) {
        fprintf(stderr, "out of memory\n");
        return -1;
    }
    in->n_cuts = 0;
    uint32_t seed = 0x9E3779B9u;
    for (size_t off = 0; off < in->len;) {
        size_t n = 1024 + xorshift32(&seed) % 3073;
        off = off + n < in->len ? off + n : in->len;
        in->cuts[in->n_cuts++] = off;
    }
    return decode_once(in->wire, in->body, in->cuts, in->n_cuts, &in->n_events); /* warm-up + check */
}

/* --against: two bodies (e.g. the same text on two wires) decoded in
 * alternating runs, so both meet the same moments of the machine's clock
 * and load; prints each one's thread-CPU median and the ratio of the
 * per-pair times (B's time / A's: above 1 means B is slower on its body). */
static int compare(input *a, input *b, int runs)
{
    double *ta = malloc((size_t)runs * sizeof *ta), *tb = malloc((size_t)runs * sizeof *tb);
    double *ratio = malloc((size_t)runs * sizeof *ratio);
    if (!ta || !tb || !ratio)
        return 1;
    for (int i = 0; i < runs; i++) {
        /* alternate which goes first, so neither always follows the other */
        input *first = i % 2 ? b : a, *second = i % 2 ? a : b;
        double *t_first = i % 2 ? tb : ta, *t_second = i % 2 ? ta : tb;
        double c0 = now_cpu();
        if (decode_once(first->wire, first->body, first->cuts, first->n_cuts, &first->n_events) != 0)
            return 1;
        double c1 = now_cpu();
        if (decode_once(second->wire, second->body, second->cuts, second->n_cuts, &second->n_events) != 0)
            return 1;
        t_first[i] = c1 - c0;
        t_second[i] = now_cpu() - c1;
        ratio[i] = tb[i] / ta[i];
    }
    double r = median(ratio, runs), ma = median(ta, runs), mb = median(tb, runs);
    printf("A %s: %zu bytes, %llu events: %.3f ms (%.1f MB/s)\n", a->name, a->len,
           (unsigned long long)a->n_events, ma * 1e3, (double)a->len / 1e6 / ma);
    printf("B %s: %zu bytes, %llu events: %.3f ms (%.1f MB/s)\n", b->name, b->len,
           (unsigned long long)b->n_events, mb * 1e3, (double)b->len / 1e6 / mb);
    printf("  B time / A time: %.3f (median of %d alternating pairs, thread CPU): B decodes its body "
           "%.3fx as fast as A its own\n",
           r, runs, 1 / r);
    free(ratio);
    free(tb);
    free(ta);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 7 || (argc > 4 && (argc != 7 || strcmp(argv[4], "--against") != 0))) {
        fprintf(stderr,
                "usage: %s FILE WIRE [RUNS] [--against FILE2 WIRE2]\n"
                "  WIRE: openai-chat|anthropic-messages|openai-responses|sse\n",
                argv[0]);
        return 2;
    }
    int runs = argc >= 4 ? atoi(argv[3]) : 15;
    if (runs < 1)
        runs = 1;

    input in;
    if (load_input(&in, argv[1], argv[2]) != 0)
        return 1;
    if (argc == 7) {
        input other;
        if (load_input(&other, argv[5], argv[6]) != 0)
            return 1;
        int rc = compare(&other, &in, runs);
        free(other.cuts);
        free(other.body);
        free(in.cuts);
        free(in.body);
        return rc;
    }
    int wire = in.wire;
    uint8_t *body = in.body;
    size_t len = in.len, n_cuts = in.n_cuts, *cuts = in.cuts;
    double *t = malloc((size_t)runs * sizeof *t);
    if (!t) {
        fprintf(stderr, "out of memory\n");
        return 1;
    }
    uint64_t n_events = 0, lines = 0;
    /* Each decode is followed by five floor scans, so both see the same
     * moments of a shared machine's load; wall and thread CPU time of each. */
    int scan_runs = runs * 5;
    double *ts = malloc((size_t)scan_runs * sizeof *ts);
    double *tc = malloc((size_t)runs * sizeof *tc);
    double *tsc = malloc((size_t)scan_runs * sizeof *tsc);
    if (!ts || !tc || !tsc)
        return 1;
    for (int i = 0; i < runs; i++) {
        double t0 = now(), c0 = now_cpu();
        if (decode_once(wire, body, cuts, n_cuts, &n_events) != 0)
            return 1;
        tc[i] = now_cpu() - c0;
        t[i] = now() - t0;
        for (int k = i * 5; k < i * 5 + 5; k++) {
            t0 = now();
            c0 = now_cpu();
            lines = scan_lines(body, cuts, n_cuts);
            tsc[k] = now_cpu() - c0;
            ts[k] = now() - t0;
        }
    }
    double dec_best = t[0];
    for (int i = 1; i < runs; i++)
        dec_best = t[i] < dec_best ? t[i] : dec_best;
    double dec = median(t, runs), dec_cpu = median(tc, runs);
    double scan_best = ts[0];
    for (int i = 1; i < scan_runs; i++)
        scan_best = ts[i] < scan_best ? ts[i] : scan_best;
    double scan = median(ts, scan_runs), scan_cpu = median(tsc, scan_runs);

    double mb = (double)len / 1e6;
    printf("%s: %zu bytes, %zu chunks of 1-4 KiB, %llu events, %llu lines\n", argv[2], len, n_cuts,
           (unsigned long long)n_events, (unsigned long long)lines);
    printf("  panto C core      %10.1f MB/s  (median of %d: %.2f ms, %.0f ns/event)\n", mb / dec, runs,
           dec * 1e3, dec * 1e9 / (double)(n_events ? n_events : 1));
    printf("  memchr line scan  %10.1f MB/s  (median of %d: %.3f ms) -- the floor\n", mb / scan, scan_runs,
           scan * 1e3);
    printf("  core / floor      %10.3f   (floor is %.1fx faster)\n", scan / dec, dec / scan);
    /* On a shared machine the median moves with the load; the best run is
     * the one least disturbed (both sides measured the same way). */
    printf("  best run: core %.1f MB/s, floor %.1f MB/s, core / floor %.3f\n", mb / dec_best,
           mb / scan_best, scan_best / dec_best);
    /* The same medians in thread CPU time: what the code costs, without
     * the time other processes took the CPU from it. */
    printf("  CPU time: core %.1f MB/s, floor %.1f MB/s (medians), core / floor %.3f\n",
           mb / dec_cpu, mb / scan_cpu, scan_cpu / dec_cpu);
    if (sink == 42)
        printf(" \n"); /* keeps sink observable */
    free(tsc);
    free(tc);
    free(ts);
    free(t);
    free(cuts);
    free(body);
    return 0;
}
