/* sse.c -- WHATWG "Parsing an event stream", sans-I/O.
 *
 * The caller owns the input bytes.  pt_sse_parse() consumes whole lines only;
 * a partial last line is handed back (not consumed) and passed again with
 * more bytes appended.  p->scanned remembers how much of that partial line
 * was already searched for a line end, so a long line fed in small pieces
 * costs linear time.
 *
 * Decoding: the standard decodes the whole stream as UTF-8 (replacing
 * invalid sequences by U+FFFD, maximal-subpart rule) before splitting lines.
 * CR, LF and ':' are ASCII and always end a maximal subpart, so replacing
 * per field value gives exactly the same result; that is what we do in the
 * non-strict (raw SSE) mode.  In strict mode (provider wires) invalid UTF-8
 * in `event` or `id` is an error and data passes through untouched (the JSON
 * reader validates it).
 *
 * Dispatched events point into p->data / p->event / p->last_id.  The data
 * and event buffers are "reset" at dispatch by setting len = 0 only; their
 * bytes stay in place until the next pt_sse_parse() call writes to them, so the
 * pointers handed out remain valid until then. */
#include "sse.h"

#include <stdio.h>
#include <string.h>
#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
#include <emmintrin.h>
#define PT_SSE_SSE2 1
#endif

#include "panto.h"

static const uint8_t BOM[3] = {0xEF, 0xBB, 0xBF};

void pt_sse_init(sse_parser *p, size_t max_event_bytes, int strict)
{
    memset(p, 0, sizeof *p);
    p->retry = -1;
    p->line_no = 1;
    p->max_event_bytes = max_event_bytes ? max_event_bytes : (size_t)8 << 20;
    p->strict = strict;
}

void pt_sse_free(sse_parser *p)
{
    pt_pbuf_free(&p->data);
    pt_pbuf_free(&p->event);
    pt_pbuf_free(&p->last_id);
    p->scanned = 0;
}

size_t pt_sse_memory(const sse_parser *p)
{
    return p->data.cap + p->event.cap + p->last_id.cap;
}

/* Length of the maximal subpart of an ill-formed sequence at s[0..n)
 * (WHATWG Encoding "UTF-8 decoder"): the bytes that one U+FFFD replaces.
 * s[0] starts an invalid or truncated sequence; the result is >= 1. */
static size_t utf8_bad_len(const uint8_t *s, size_t n)
{
    uint8_t c = s[0];
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        need = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
        need = 2;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        need = 3;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 1;
    }
    size_t k = 1;
    while (k <= need && k < n) {
        uint8_t b = s[k];
        if (k == 1 ? (b < lo || b > hi) : (b & 0xC0) != 0x80)
            break;
        k++;
    }
    return k;
}

/* Append v[0..n) to b, replacing invalid UTF-8 by U+FFFD (EF BF BD). */
static int append_lossy(pbuf *b, const uint8_t *v, size_t n, size_t limit)
{
    static const uint8_t FFFD[3] = {0xEF, 0xBF, 0xBD};
    while (n > 0) {
        size_t ok = pt_utf8_valid_prefix(v, n);
        int rc = pt_pbuf_append(b, v, ok, limit);
        if (rc != PU_OK)
            return rc;
        v += ok;
        n -= ok;
        if (n == 0)
            break;
        size_t bad = utf8_bad_len(v, n);
        rc = pt_pbuf_append(b, FFFD, 3, limit);
        if (rc != PU_OK)
            return rc;
        v += bad;
        n -= bad;
    }
    return PU_OK;
}

/* Size of v[0..n) after lossy decoding. */
static size_t lossy_size(const uint8_t *v, size_t n)
{
    size_t out = 0;
    while (n > 0) {
        size_t ok = pt_utf8_valid_prefix(v, n);
        out += ok;
        v += ok;
        n -= ok;
        if (n == 0)
            break;
        size_t bad = utf8_bad_len(v, n);
        out += 3;
        v += bad;
        n -= bad;
    }
    return out;
}

/* Quote up to 40 bytes of s for a message: printable ASCII as is, '"' and
 * '\\' escaped, everything else as \xNN; "..." when cut. */
static void quote_snippet(char *out, size_t cap, const uint8_t *s, size_t n)
{
    static const char hex[] = "0123456789abcdef";
    size_t o = 0;
    size_t lim = n < 40 ? n : 40;
    for (size_t i = 0; i < lim && o + 5 < cap; i++) {
        uint8_t c = s[i];
        if (c == '"' || c == '\\') {
            out[o++] = '\\';
            out[o++] = (char)c;
        } else if (c >= 0x20 && c < 0x7F) {
            out[o++] = (char)c;
        } else {
            out[o++] = '\\';
            out[o++] = 'x';
            out[o++] = hex[c >> 4];
            out[o++] = hex[c & 15];
        }
    }
    if (n > lim && o + 4 < cap) {
        memcpy(out + o, "...", 3);
        o += 3;
    }
    out[o] = '\0';
}

static int fail(sse_error *err, int code)
{
    err->code = code;
    return SSE_ERROR;
}

static int oom(sse_error *err)
{
    snprintf(err->msg, sizeof err->msg, "out of memory");
    return fail(err, PANTO_ERR_NO_MEMORY);
}

/* Process one complete line (terminator excluded).  Returns 1 when an event
 * was dispatched into *ev, 0 when not, SSE_ERROR on error. */
static int process_line(sse_parser *p, const uint8_t *ln, size_t n, uint64_t line_no,
                        sse_event *ev, sse_error *err)
{
    if (n == 0) {
        /* Dispatch. */
        if (p->data.len == 0) {
            p->event.len = 0;
            return 0;
        }
        ev->data = (const char *)p->data.p;
        ev->data_len = p->data.len - 1;   /* strip one trailing LF */
        if (p->event.len == 0) {
            ev->event = "message";
            ev->event_len = 7;
        } else {
            ev->event = (const char *)p->event.p;
            ev->event_len = p->event.len;
        }
        if (p->last_id.len == 0) {
            ev->id = "";
            ev->id_len = 0;
        } else {
            ev->id = (const char *)p->last_id.p;
            ev->id_len = p->last_id.len;
        }
        ev->retry = p->retry;
        /* Reset; the bytes stay valid until the next call writes them. */
        p->data.len = 0;
        p->event.len = 0;
        return 1;
    }
    if (ln[0] == ':') {
        p->seen_field = 1;
        return 0;   /* comment */
    }

    const uint8_t *colon = memchr(ln, ':', n);
    const uint8_t *name = ln, *val;
    size_t name_len, vlen;
    if (colon != NULL) {
        name_len = (size_t)(colon - ln);
        val = colon + 1;
        vlen = n - name_len - 1;
        if (vlen > 0 && val[0] == ' ') {
            val++;
            vlen--;
        }
    } else {
        name_len = n;
        val = ln + n;
        vlen = 0;
    }

    size_t max = p->max_event_bytes;
    if (name_len == 4 && memcmp(name, "data", 4) == 0) {
        p->seen_field = 1;
        size_t add = p->strict ? vlen : lossy_size(val, vlen);
        /* The dispatched payload is data.len + add bytes (the final LF is
         * stripped); it must fit in max_event_bytes. */
        if (add > max || p->data.len > max - add) {
            snprintf(err->msg, sizeof err->msg,
                     "line %llu: SSE event data exceeds max_event_bytes (%zu > %zu bytes)",
                     (unsigned long long)line_no,
                     add > max ? add : p->data.len + add, max);
            return fail(err, PANTO_ERR_LIMIT);
        }
        size_t lim = max + 1;
        int rc = p->strict ? pt_pbuf_append(&p->data, val, vlen, lim)
                           : append_lossy(&p->data, val, vlen, lim);
        if (rc == PU_OK)
            rc = pt_pbuf_append(&p->data, "\n", 1, lim);
        if (rc != PU_OK)
            return oom(err);
        return 0;
    }
    if (name_len == 5 && memcmp(name, "event", 5) == 0) {
        p->seen_field = 1;
        if (p->strict && pt_utf8_valid_prefix(val, vlen) != vlen) {
            snprintf(err->msg, sizeof err->msg,
                     "line %llu: invalid UTF-8 in SSE event field",
                     (unsigned long long)line_no);
            return fail(err, PANTO_ERR_BAD_SSE);
        }
        p->event.len = 0;
        int rc = p->strict ? pt_pbuf_append(&p->event, val, vlen, SIZE_MAX)
                           : append_lossy(&p->event, val, vlen, SIZE_MAX);
        if (rc != PU_OK)
            return oom(err);
        return 0;
    }
    if (name_len == 2 && memcmp(name, "id", 2) == 0) {
        p->seen_field = 1;
        if (vlen > 0 && memchr(val, 0, vlen) != NULL)
            return 0;   /* an id containing NUL is ignored */
        if (p->strict && pt_utf8_valid_prefix(val, vlen) != vlen) {
            snprintf(err->msg, sizeof err->msg,
                     "line %llu: invalid UTF-8 in SSE id field",
                     (unsigned long long)line_no);
            return fail(err, PANTO_ERR_BAD_SSE);
        }
        p->last_id.len = 0;
        int rc = p->strict ? pt_pbuf_append(&p->last_id, val, vlen, SIZE_MAX)
                           : append_lossy(&p->last_id, val, vlen, SIZE_MAX);
        if (rc != PU_OK)
            return oom(err);
        return 0;
    }
    if (name_len == 5 && memcmp(name, "retry", 5) == 0) {
        p->seen_field = 1;
        if (vlen == 0)
            return 0;
        int64_t r = 0;
        for (size_t i = 0; i < vlen; i++) {
            uint8_t c = val[i];
            if (c < '0' || c > '9')
                return 0;   /* not all digits: ignored */
            int d = c - '0';
            if (r > (INT64_MAX - d) / 10)
                r = INT64_MAX;   /* saturate */
            else
                r = r * 10 + d;
        }
        p->retry = r;
        return 0;
    }
    /* Unknown field: ignored (WHATWG; OpenRouter upstreams have sent
     * " data: {...}", first line included).  Strict mode (the provider
     * wires) remembers the first one seen before any comment or known field:
     * if the body never shows one, it is not an event stream at all (an
     * HTML or JSON error page), reported at end of input. */
    if (p->strict && !p->seen_field && p->odd_line_no == 0) {
        quote_snippet(p->odd_snip, sizeof p->odd_snip, ln, n);
        p->odd_line_no = line_no;
        p->odd_line_off = p->line_off;
    }
    return 0;
}

int pt_sse_not_a_stream(const sse_parser *p, sse_error *err, uint64_t *off)
{
    if (!p->strict || p->seen_field || p->odd_line_no == 0)
        return 0;
    snprintf(err->msg, sizeof err->msg, "line %llu: not an SSE field: \"%s\"",
             (unsigned long long)p->odd_line_no, p->odd_snip);
    err->code = PANTO_ERR_BAD_SSE;
    *off = p->odd_line_off;
    return 1;
}

/* Position of the first CR or LF in s[0..n), or NULL. */
const uint8_t *pt_sse_find_eol(const uint8_t *s, size_t n)
{
#ifdef PT_SSE_SSE2
    /* One pass for both bytes, 16 at a time (lines are short: no call). */
    const __m128i lf = _mm_set1_epi8('\n'), cr = _mm_set1_epi8('\r');
    while (n >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
        unsigned m = (unsigned)_mm_movemask_epi8(
            _mm_or_si128(_mm_cmpeq_epi8(v, lf), _mm_cmpeq_epi8(v, cr)));
        if (m != 0)
            return s + __builtin_ctz(m);
        s += 16;
        n -= 16;
    }
    for (size_t i = 0; i < n; i++)
        if (s[i] == '\n' || s[i] == '\r')
            return s + i;
    return NULL;
#else
    const uint8_t *lf = memchr(s, '\n', n);
    size_t lim = lf ? (size_t)(lf - s) : n;
    const uint8_t *cr = memchr(s, '\r', lim);
    return cr ? cr : lf;
#endif
}

int pt_sse_parse(sse_parser *p, const uint8_t *in, size_t len, size_t *consumed,
              sse_event *ev, sse_error *err)
{
    size_t pos = 0;
    *consumed = 0;
    err->code = PANTO_ERR_NONE;
    err->msg[0] = '\0';
    if (len == 0 || in == NULL)
        return SSE_NEED_MORE;

    if (!p->started) {
        size_t k = len < 3 ? len : 3;
        if (memcmp(in, BOM, k) == 0) {   /* k == 0 compares equal */
            if (k < 3)
                return SSE_NEED_MORE;    /* maybe a BOM: wait for 3 bytes */
            pos = 3;
        }
        p->started = 1;
        p->scanned = 0;
    }

    for (;;) {
        if (p->skip_lf && pos < len) {
            p->skip_lf = 0;
            if (in[pos] == '\n')
                pos++;
        }
        size_t avail = len - pos;
        if (avail == 0) {
            p->scanned = 0;
            *consumed = pos;
            return SSE_NEED_MORE;
        }
        size_t from = p->scanned <= avail ? p->scanned : avail;
        const uint8_t *eol = pt_sse_find_eol(in + pos + from, avail - from);
        if (eol == NULL) {
            if (avail > p->max_event_bytes) {
                snprintf(err->msg, sizeof err->msg,
                         "line %llu: SSE line exceeds max_event_bytes (%zu bytes)",
                         (unsigned long long)p->line_no, p->max_event_bytes);
                p->line_off = p->base + pos;
                *consumed = pos;
                return fail(err, PANTO_ERR_LIMIT);
            }
            p->scanned = avail;
            *consumed = pos;
            return SSE_NEED_MORE;
        }
        p->scanned = 0;
        size_t lnlen = (size_t)(eol - (in + pos));
        if (lnlen > p->max_event_bytes) {
            /* The same message whatever the feeds' split (the line may be
             * seen whole or cut): its length is not quoted. */
            snprintf(err->msg, sizeof err->msg,
                     "line %llu: SSE line exceeds max_event_bytes (%zu bytes)",
                     (unsigned long long)p->line_no, p->max_event_bytes);
            p->line_off = p->base + pos;
            *consumed = pos;
            return fail(err, PANTO_ERR_LIMIT);
        }
        const uint8_t *ln = in + pos;
        size_t next = pos + lnlen + 1;
        if (*eol == '\r') {
            if (next < len) {
                if (in[next] == '\n')
                    next++;
            } else {
                p->skip_lf = 1;   /* CR ends the range: swallow a leading LF next time */
            }
        }
        uint64_t line_no = p->line_no++;
        p->line_off = p->base + pos;
        if (lnlen == 0) {
            p->in_event = 0;
        } else if (!p->in_event) {
            p->in_event = 1;
            p->ev_off = p->line_off;
        }
        pos = next;
        int r = process_line(p, ln, lnlen, line_no, ev, err);
        if (r == SSE_ERROR) {
            *consumed = pos;
            return SSE_ERROR;
        }
        if (r == 1) {
            *consumed = pos;
            return SSE_EVENT;
        }
    }
}
