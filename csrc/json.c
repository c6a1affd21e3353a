/* json.c -- a strict RFC 8259 reader.
 *
 * One JSON text is parsed into a flat array of jnode that borrow from the
 * input.  The parser is iterative: an open container keeps its parent's
 * index in its `next` field and the index of its last child in its `len`
 * field while it is open, so the node array itself is the stack and nesting
 * depth costs no C stack.  When the container closes, `next` goes back to 0
 * (a later sibling sets it) and `len` becomes the length of its text.
 *
 * Choices where RFC 8259 leaves room (JSONTestSuite i_ cases):
 *   - a \u escape that is a lone surrogate, or a high surrogate not followed
 *     by a \u low surrogate, is rejected ("lone surrogate in \u escape"):
 *     such a string has no UTF-8 form, and every string we accept must be
 *     valid UTF-8 after unescaping;
 *   - raw bytes in strings must be well-formed UTF-8 (RFC 3629: no
 *     overlongs, no encoded surrogates, nothing past U+10FFFF);
 *   - a byte order mark is not whitespace: it is rejected;
 *   - numbers are kept as text, so huge or very precise numbers are fine;
 *   - nesting deeper than max_depth (default 128) is rejected.
 */
#include "json.h"

#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
#include <emmintrin.h>
#define PT_SSE2 1
#endif

#define NONE UINT32_MAX
#define ONES UINT64_C(0x0101010101010101)
#define HIGH UINT64_C(0x8080808080808080)

static const char MSG_UNTERMINATED[] = "unterminated string";

void pt_json_doc_trim(jdoc *d)
{
    free(d->nodes);
    d->nodes = NULL;
    d->n = 0;
    d->cap = 0;
}

void pt_json_doc_free(jdoc *d)
{
    pt_json_doc_trim(d);
    pbuf seen = {d->seen, 0, d->seen_cap};
    pt_pbuf_free(&seen); /* a big one is kept for the next stream (util.c) */
    d->seen = NULL;
    d->seen_len = 0;
    d->seen_cap = 0;
}

size_t pt_json_doc_memory(const jdoc *d) { return d->cap * sizeof(jnode) + d->seen_cap; }

/* Remember the validated string body s[0..n) (silently not when out of
 * memory: it is only a cache). */
static void seen_store(jdoc *d, const uint8_t *s, size_t n, int esc)
{
    if (n > d->seen_cap) {
        pbuf b = {d->seen, 0, d->seen_cap};
        if (pt_pbuf_reserve(&b, n, SIZE_MAX) != PU_OK) {
            d->seen_len = 0;
            return;
        }
        d->seen = b.p;
        d->seen_cap = b.cap;
    }
    memcpy(d->seen, s, n);
    d->seen_len = n;
    d->seen_esc = esc;
}

/* s[st..) repeats the remembered string body and its closing quote
 * follows: then it is valid (a valid body ends at a character and escape
 * boundary, so that quote closes it). */
static inline int seen_again(const jdoc *d, const uint8_t *s, size_t len, size_t st)
{
    size_t n = d->seen_on ? d->seen_len : 0;
    return n && len - st > n && s[st + n] == '"' && s[st] == d->seen[0] &&
           memcmp(s + st, d->seen, n) == 0;
}

static int grow(jdoc *d)
{
    size_t ncap = d->cap ? d->cap * 2 : 32; /* a delta event holds ~20 values */
    if (ncap > ((size_t)NONE) || ncap > SIZE_MAX / sizeof(jnode))
        ncap = (size_t)NONE;
    if (d->max_nodes) {
        if (d->cap >= d->max_nodes) {
            d->over = 1;
            return -1;
        }
        if (ncap > d->max_nodes)
            ncap = d->max_nodes;
    }
    if (ncap <= d->cap)
        return -1;
    jnode *nn = realloc(d->nodes, ncap * sizeof(jnode));
    if (nn == NULL)
        return -1;
    d->nodes = nn;
    d->cap = ncap;
    return 0;
}

static inline int is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

/* Whitespace between tokens: compact JSON has none, so one compare decides
 * the common case (every token starts above ' '). */
#define SKIP_WS()                                   \
    do {                                            \
        if (i < len && s[i] <= ' ')                 \
            while (i < len && is_ws(s[i]))          \
                i++;                                \
    } while (0)

/* One more than the value of each hex digit, 0 for any other byte. */
static const uint8_t HEXVAL1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,
    ['6'] = 7,  ['7'] = 8,  ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12,
    ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16, ['A'] = 11, ['B'] = 12,
    ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16};

/* Four hex digits at s[0..4) (caller checked they exist); -1 if not hex.
 * Table lookups, no branch a digit: the digits and letters of \u escapes
 * (text that some serializers send all as escapes past ASCII) mispredicted
 * a chain of compares about once an escape. */
static inline long hex4(const uint8_t *s)
{
    int h0 = HEXVAL1[s[0]] - 1, h1 = HEXVAL1[s[1]] - 1, h2 = HEXVAL1[s[2]] - 1,
        h3 = HEXVAL1[s[3]] - 1;
    if ((h0 | h1 | h2 | h3) < 0)
        return -1;
    return (long)((h0 << 12) | (h1 << 8) | (h2 << 4) | h3);
}

#ifdef PT_SSE2
/* The 16 bytes v start at a character boundary and the first `cut` of
 * them hold no '"', '\\' or control byte.  Whether those are valid UTF-8
 * (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF): how
 * many bytes the scan may pass -- `cut`, or less when, with no stop byte in
 * the block (at_stop 0), its last character goes on past it -- or -1 for
 * invalid (or truncated) text, left to the scalar code for its message.
 * In the vector, byte by byte: a lead byte says where continuation bytes
 * must be (`want`: the leads shifted by one to three bytes), and they must
 * be exactly there; one mask of the bad bytes at the end. */
static inline int utf8_block(__m128i v, int cut, int at_stop)
{
#define PT_GE(x) _mm_cmpeq_epi8(_mm_max_epu8(v, _mm_set1_epi8((char)(x))), v) /* v >= x */
#define PT_LT(x) _mm_cmplt_epi8(v, _mm_set1_epi8((char)(x))) /* 0x80 <= v < x (signed) */
#define PT_EQ(x) _mm_cmpeq_epi8(v, _mm_set1_epi8((char)(x)))
#define PT_NEXT(m) _mm_slli_si128((m), 1) /* the byte after each marked one */
    __m128i cont = PT_LT(0xC0);                          /* 80..BF */
    __m128i lead = PT_GE(0xC0), lead3 = PT_GE(0xE0), lead4 = PT_GE(0xF0);
    __m128i want = _mm_or_si128(PT_NEXT(lead),
                                _mm_or_si128(_mm_slli_si128(lead3, 2), _mm_slli_si128(lead4, 3)));
    __m128i lt_90 = PT_LT(0x90), lt_a0 = PT_LT(0xA0);
    __m128i bad = _mm_xor_si128(want, cont);
    bad = _mm_or_si128(bad, _mm_andnot_si128(PT_GE(0xC2), lead));         /* C0, C1: overlong */
    bad = _mm_or_si128(bad, PT_GE(0xF5));                                 /* past U+10FFFF */
    bad = _mm_or_si128(bad, _mm_and_si128(PT_NEXT(PT_EQ(0xE0)), lt_a0));    /* E0 80..9F: overlong */
    bad = _mm_or_si128(bad, _mm_andnot_si128(lt_a0, PT_NEXT(PT_EQ(0xED)))); /* ED A0..: surrogate */
    bad = _mm_or_si128(bad, _mm_and_si128(PT_NEXT(PT_EQ(0xF0)), lt_90));    /* F0 80..8F: overlong */
    bad = _mm_or_si128(bad, _mm_andnot_si128(lt_90, PT_NEXT(PT_EQ(0xF4)))); /* F4 90..: too big */
    if (!at_stop) {
        /* a character that needs bytes past the block waits for the next */
        unsigned over = ((unsigned)_mm_movemask_epi8(lead) & 0x8000u) |
                        ((unsigned)_mm_movemask_epi8(lead3) & 0xC000u) |
                        ((unsigned)_mm_movemask_epi8(lead4) & 0xE000u);
        if (over)
            cut = __builtin_ctz(over);
    }
#undef PT_GE
#undef PT_LT
#undef PT_EQ
#undef PT_NEXT
    /* the bytes before `cut` right, and none of their characters going on
     * into byte `cut` (a stop byte, or the lead of the next character) */
    unsigned below = (1u << cut) - 1;
    unsigned bits = ((unsigned)_mm_movemask_epi8(bad) & below) |
                    ((unsigned)_mm_movemask_epi8(want) & (below + 1) & 0xFFFFu);
    return bits ? -1 : cut;
}
#endif

static size_t unescape_one(const uint8_t *s, size_t *i, uint8_t *o);

#ifdef PT_SSE2
/* The byte a two-byte escape \\c stands for, by c; 0: not one. */
static const uint8_t ESC_BYTE[256] = {
    ['"'] = '"', ['\\'] = '\\', ['/'] = '/', ['b'] = '\b',
    ['f'] = '\f', ['n'] = '\n',   ['r'] = '\r', ['t'] = '\t'};
#endif

/* The string body at s[st..) unescapes to exactly t[0..tn) (valid UTF-8):
 * 1 with *pe the index of its closing quote and *pesc set when it holds a
 * backslash, else 0 (the caller scans it).  Matching proves the body valid
 * without looking at its UTF-8: its raw bytes between escapes are runs of
 * t (whole characters, as each escape stands for whole characters) and
 * hold no quote, backslash or control byte; every escape is checked as
 * scan_string checks it. */
static int hint_match(const uint8_t *s, size_t len, size_t st, const uint8_t *t, size_t tn,
                      size_t *pe, int *pesc)
{
    size_t i = st, j = 0;
    int esc = 0;
    for (;;) {
#ifdef PT_SSE2
        const __m128i vq = _mm_set1_epi8('"'), vb = _mm_set1_epi8('\\');
        const __m128i vc = _mm_set1_epi8(0x1F);
        while (len - i >= 16 && tn - j >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
            __m128i w = _mm_loadu_si128((const __m128i *)(const void *)(t + j));
            __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, vq), _mm_cmpeq_epi8(v, vb));
            hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_min_epu8(v, vc), v));
            unsigned m = (unsigned)_mm_movemask_epi8(hit) |
                         ((unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, w)) ^ 0xFFFFu);
            if (m == 0) {
                i += 16;
                j += 16;
                continue;
            }
            unsigned k = (unsigned)__builtin_ctz(m);
            i += k;
            j += k;
            /* a two-byte escape standing for the text's byte: on (one in
             * 25 bytes of prose and code) */
            if (s[i] == '\\' && i + 1 < len && ESC_BYTE[s[i + 1]] && t[j] == ESC_BYTE[s[i + 1]]) {
                i += 2;
                j++;
                esc = 1;
                continue;
            }
            /* a \uXXXX escape of a character of the Basic Multilingual
             * Plane (not a surrogate: the scalar code below takes those),
             * compared with the text's UTF-8 here too: the text of some
             * serializers is all such escapes past ASCII */
            if (s[i] == '\\' && s[i + 1] == 'u' && len - i >= 6) {
                long u = hex4(s + i + 2);
                if (u >= 0 && (u < 0xD800 || u > 0xDFFF)) {
                    uint8_t c[3];
                    size_t n = 1;
                    if (u < 0x80) {
                        c[0] = (uint8_t)u;
                    } else if (u < 0x800) {
                        c[0] = (uint8_t)(0xC0 | (u >> 6));
                        c[1] = (uint8_t)(0x80 | (u & 0x3F));
                        n = 2;
                    } else {
                        c[0] = (uint8_t)(0xE0 | (u >> 12));
                        c[1] = (uint8_t)(0x80 | ((u >> 6) & 0x3F));
                        c[2] = (uint8_t)(0x80 | (u & 0x3F));
                        n = 3;
                    }
                    /* (16 bytes of t are left: n fit) */
                    if (t[j] != c[0] || (n > 1 && t[j + 1] != c[1]) || (n > 2 && t[j + 2] != c[2]))
                        return 0;
                    i += 6;
                    j += n;
                    esc = 1;
                    continue;
                }
            }
            break;
        }
#endif
        if (i >= len)
            return 0;
        uint8_t c = s[i];
        if (c == '"') {
            if (j != tn)
                return 0;
            *pe = i;
            *pesc = esc;
            return 1;
        }
        if (c == '\\') {
            uint8_t buf[4], one;
            size_t k = i, n;
            if (len - i < 2)
                return 0;
            switch (s[i + 1]) {
            case '"': case '\\': case '/': one = s[i + 1]; goto one_byte;
            case 'b': one = '\b'; goto one_byte;
            case 'f': one = '\f'; goto one_byte;
            case 'n': one = '\n'; goto one_byte;
            case 'r': one = '\r'; goto one_byte;
            case 't': one = '\t';
            one_byte:
                if (j >= tn || t[j] != one)
                    return 0;
                i += 2;
                j++;
                esc = 1;
                continue;
            case 'u': {
                long u = len - i >= 6 ? hex4(s + i + 2) : -1;
                if (u < 0 || (u >= 0xDC00 && u <= 0xDFFF))
                    return 0;
                if (u >= 0xD800 && u <= 0xDBFF) {
                    long lo = -1;
                    if (len - i >= 12 && s[i + 6] == '\\' && s[i + 7] == 'u')
                        lo = hex4(s + i + 8);
                    if (lo < 0xDC00 || lo > 0xDFFF)
                        return 0;
                }
                break;
            }
            default:
                return 0;
            }
            n = unescape_one(s, &k, buf);
            if (n > tn - j || memcmp(buf, t + j, n) != 0)
                return 0;
            i = k;
            j += n;
            esc = 1;
            continue;
        }
        if (c < 0x20 || j >= tn || t[j] != c)
            return 0;
        i++;
        j++;
    }
}

/* The string body at s[st..) is one of d's hints (hint_match). */
static int hinted(const jdoc *d, const uint8_t *s, size_t len, size_t st, size_t *pe, int *pesc)
{
    for (unsigned k = 0; k < d->n_hints; k++) {
        size_t tn = d->hint_len[k];
        if (tn >= PT_JSON_SEEN_MIN && len - st > tn &&
            hint_match(s, len, st, d->hint[k], tn, pe, pesc))
            return 1;
    }
    return 0;
}

/* Scan a string body starting just after the opening quote at *pi.  On
 * success *pi is the index of the closing quote.  On error *pi is where the
 * problem is and *msg says what. */
static int scan_string(const uint8_t *s, size_t len, size_t *pi, int *escaped,
                       const char **msg)
{
    size_t i = *pi;
    for (;;) {
#ifdef PT_SSE2
        /* 16 bytes at a time: up to the first '"', '\\' or control byte
         * (the `stop` mask), with the UTF-8 of the text before it checked
         * in the vector (utf8_block) -- no per-character branches, which
         * mispredicted on every change between ASCII and other text. */
        {
            const __m128i vq = _mm_set1_epi8('"'), vb = _mm_set1_epi8('\\');
            const __m128i vc = _mm_set1_epi8(0x1F);
            while (len - i >= 16) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
                __m128i hit = _mm_or_si128(_mm_cmpeq_epi8(v, vq), _mm_cmpeq_epi8(v, vb));
                hit = _mm_or_si128(hit, _mm_cmpeq_epi8(_mm_min_epu8(v, vc), v));
                unsigned stop = (unsigned)_mm_movemask_epi8(hit);
                unsigned hi = (unsigned)_mm_movemask_epi8(v);
                if ((stop | hi) == 0) {
                    i += 16;
                    continue;
                }
                int cut = __builtin_ctz(stop | 0x10000u); /* 16: no stop byte */
                if (hi & ((1u << cut) - 1)) {
                    cut = utf8_block(v, cut, stop != 0);
                    if (cut < 0)
                        goto look; /* the scalar code finds the error */
                }
                i += (size_t)cut;
                if (stop && cut == __builtin_ctz(stop))
                    goto look; /* at the stop byte */
            }
        }
#endif
        /* Skip runs of plain ASCII (no '"', '\\', control or high byte),
         * 8 bytes at a time.  The lowest flagged byte is always a real hit
         * (borrows only propagate upward), so on little-endian machines we
         * jump straight to it. */
        while (len - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            uint64_t q = w ^ (ONES * '"');
            uint64_t b = w ^ (ONES * '\\');
            uint64_t t = (((q - ONES) & ~q) | ((b - ONES) & ~b) | ((w - ONES * 0x20) & ~w) | w) & HIGH;
            if (t == 0) {
                i += 8;
                continue;
            }
#if defined(__GNUC__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            i += (size_t)__builtin_ctzll(t) >> 3;
#endif
            break;
        }
    look:
        if (i >= len) {
            *msg = MSG_UNTERMINATED;
            return -1;
        }
        uint8_t c = s[i];
        if (c == '"') {
            *pi = i;
            return 0;
        }
        if (c == '\\') {
            *escaped = 1;
            if (len - i < 2) {
                *msg = MSG_UNTERMINATED;
                *pi = len;
                return -1;
            }
            switch (s[i + 1]) {
            case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
                i += 2;
                break;
            case 'u': {
                long u = len - i >= 6 ? hex4(s + i + 2) : -1;
                if (u < 0) {
                    *msg = "invalid \\u escape";
                    *pi = i;
                    return -1;
                }
                if (u >= 0xDC00 && u <= 0xDFFF) {
                    *msg = "lone surrogate in \\u escape";
                    *pi = i;
                    return -1;
                }
                if (u >= 0xD800 && u <= 0xDBFF) {
                    long lo = -1;
                    if (len - i >= 12 && s[i + 6] == '\\' && s[i + 7] == 'u')
                        lo = hex4(s + i + 8);
                    if (lo < 0xDC00 || lo > 0xDFFF) {
                        *msg = "lone surrogate in \\u escape";
                        *pi = i;
                        return -1;
                    }
                    i += 12;
                } else {
                    i += 6;
                }
                break;
            }
            default:
                *msg = "invalid escape";
                *pi = i;
                return -1;
            }
            continue;
        }
        if (c < 0x20) {
            *msg = "control character in string";
            *pi = i;
            return -1;
        }
        if (c < 0x80) {
            i++;
            continue;
        }
        /* A multi-byte UTF-8 sequence (RFC 3629 table). */
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
            goto bad_utf8;
        }
        if (len - i <= need || s[i + 1] < lo || s[i + 1] > hi)
            goto bad_utf8;
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                goto bad_utf8;
        i += need + 1;
        if (i < len && s[i] >= 0x80)
            goto look;   /* runs of non-ASCII text: no rescan in between */
        continue;
    bad_utf8:
        *msg = "invalid UTF-8 in string";
        *pi = i;
        return -1;
    }
}

/* scan_string with the common case inline: a string whose closing quote
 * is among the next 16 bytes, with nothing to look at before it (most keys
 * and short values).  Always inlined: GCC would call it from the larger
 * fast paths (the Responses wire's), a call a delta for a few bytes. */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
static inline int scan_string_quick(const uint8_t *s, size_t len, size_t *pi, int *escaped,
                                    const char **msg)
{
#ifdef PT_SSE2
    size_t i = *pi;
    if (len - i >= 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        unsigned mq = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
        __m128i o = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')),
                                 _mm_cmpeq_epi8(_mm_min_epu8(v, _mm_set1_epi8(0x1F)), v));
        unsigned stop = mq | (unsigned)_mm_movemask_epi8(o);
        unsigned first = stop & (0u - stop), hi = (unsigned)_mm_movemask_epi8(v);
        if (first & mq) { /* the closing quote comes first */
            int cut = __builtin_ctz(mq);
            /* text that is not all ASCII: its UTF-8 checked here too (the
             * scan's first block would do the same, after a call) */
            if (!(hi & (first - 1)) || utf8_block(v, cut, 1) >= 0) {
                *pi = i + (size_t)cut;
                return 0;
            }
        }
        /* else the scan goes on from the first byte to look at (or past
         * these 16 when there is none) */
        *pi = i + (size_t)__builtin_ctz(stop | hi | 0x10000u);
    }
#endif
    return scan_string(s, len, pi, escaped, msg);
}

static inline int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* Scan a number at *pi; on success *pi is just past it. */
static int scan_number(const uint8_t *s, size_t len, size_t *pi, const char **msg)
{
    size_t i = *pi;
    if (s[i] == '-')
        i++;
    if (i >= len || !is_digit(s[i]))
        goto bad;
    if (s[i] == '0') {
        i++;
        if (i < len && is_digit(s[i])) {
            *msg = "leading zero in number";
            *pi = i;
            return -1;
        }
    } else {
        while (i < len && is_digit(s[i]))
            i++;
    }
    if (i < len && s[i] == '.') {
        i++;
        if (i >= len || !is_digit(s[i]))
            goto bad;
        while (i < len && is_digit(s[i]))
            i++;
    }
    if (i < len && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < len && (s[i] == '+' || s[i] == '-'))
            i++;
        if (i >= len || !is_digit(s[i]))
            goto bad;
        while (i < len && is_digit(s[i]))
            i++;
    }
    *pi = i;
    return 0;
bad:
    *msg = "invalid number";
    *pi = i;
    return -1;
}

/* For the wire decoders' fast paths (stream.h): the same scanners, without
 * the error details (a fast path that meets anything but valid input leaves
 * the event to the full parser, which reports it). */
#if defined(__GNUC__)
__attribute__((always_inline))
#endif
inline int pt_json_scan_str(const uint8_t *s, size_t len, size_t *pi, int *escaped)
{
    const char *msg;
    return scan_string_quick(s, len, pi, escaped, &msg);
}

int pt_json_scan_num(const uint8_t *s, size_t len, size_t *pi)
{
    const char *msg;
    return scan_number(s, len, pi, &msg);
}

/* Append a node; with cur != NONE link it as the last child of cur. */
static inline int add_node(jdoc *d, uint32_t cur, uint8_t type, const uint8_t *p, size_t len,
                           uint32_t *out)
{
    if (d->n == d->cap && grow(d) != 0)
        return -1;
    uint32_t idx = (uint32_t)d->n++;
    jnode *nd = &d->nodes[idx];
    nd->type = type;
    nd->escaped = 0;
    nd->next = 0;
    nd->first = 0;
    nd->count = 0;
    nd->p = (const char *)p;
    nd->len = len;
    if (cur != NONE) {
        jnode *pa = &d->nodes[cur];
        if (pa->first == 0)
            pa->first = idx;
        else
            d->nodes[pa->len].next = idx;
        pa->len = idx;
    }
    *out = idx;
    return 0;
}

/* A value was added to cur: arrays count elements (objects count keys). */
static inline void count_elem(jdoc *d, uint32_t cur)
{
    if (cur != NONE && d->nodes[cur].type == JV_ARRAY)
        d->nodes[cur].count++;
}

void pt_json_skip_keys(jdoc *d, const char *const *keys)
{
    if (d->skip_keys == keys)
        return;
    d->skip_keys = keys;
    memset(d->skip_by_len, 0, sizeof d->skip_by_len);
    for (; keys && *keys; keys++) {
        size_t n = strlen(*keys);
        if (n > 0 && n < 32 && d->skip_by_len[n] == NULL)
            d->skip_by_len[n] = *keys;
    }
}

/* The raw key s[0..n) is one of d->skip_keys: dispatch on the length, then
 * the first byte, then the rest. */
static inline int skip_key(const jdoc *d, const uint8_t *s, size_t n)
{
    const char *k = n < 32 ? d->skip_by_len[n] : NULL;
    return k != NULL && (uint8_t)k[0] == s[0] && memcmp(k, s, n) == 0;
}

/* The parser.  store == 0 validates only: scalars get no node and a closed
 * container is popped, so memory is bounded by the nesting depth. */
static int parse(jdoc *d, const uint8_t *s, size_t len, uint32_t max_depth, int store,
                 size_t *err_off, const char **err_msg)
{
    size_t i = 0;
    uint32_t cur = NONE;   /* innermost open container */
    uint32_t depth = 0;
    uint32_t idx;
    const char *msg = "unexpected end of input";
    /* store drops to 0 while the value of a skipped key is read, until the
     * parse is back at depth skip_depth (the depth of its object). */
    uint32_t skip_depth = NONE;
    const int skipping = store && d->skip_keys != NULL;
    /* Values the full parse builds: skipped ones count against max_nodes
     * too, so a limit fails on the same value with or without skipping. */
    size_t total = 0;
    const size_t max_total = store && d->max_nodes ? d->max_nodes : SIZE_MAX;
    d->n = 0;
    d->over = 0;
    if (max_depth == 0)
        max_depth = 128;
    if (s == NULL)
        len = 0;

value:
    SKIP_WS();
    if (i >= len)
        goto eof;
    switch (s[i]) {
    case '[':
    case '{': {
        uint8_t type = s[i] == '[' ? JV_ARRAY : JV_OBJECT;
        if (depth >= max_depth) {
            msg = "nesting too deep";
            goto fail;
        }
        if (++total > max_total)
            goto over;
        if (add_node(d, store ? cur : NONE, type, s + i, 0, &idx) != 0)
            goto nomem;
        count_elem(d, cur);
        d->nodes[idx].next = cur;   /* parent link while open */
        cur = idx;
        depth++;
        i++;
        SKIP_WS();
        if (type == JV_ARRAY) {
            if (i < len && s[i] == ']')
                goto close;
            goto value;
        }
        if (i < len && s[i] == '}')
            goto close;
        goto key;
    }
    case '"': {
        size_t st = i + 1, e = st;
        int esc = 0;
        if (seen_again(d, s, len, st)) {
            e = st + d->seen_len;
            esc = d->seen_esc;
            d->n_seen++;
        } else if (d->n_hints && hinted(d, s, len, st, &e, &esc)) {
            d->n_hinted++;
            /* valid: a hinted text.  Remembered (unless a string no hint
             * covers is): the next repeat is most likely escaped the same
             * way, and memcmp is faster than matching an escape at a
             * time */
            if (d->seen_on && (d->seen_len == 0 || d->seen_hinted)) {
                seen_store(d, s + st, e - st, esc);
                d->seen_hinted = 1;
            }
        } else if (scan_string_quick(s, len, &e, &esc, &msg) != 0) {
            if (msg == MSG_UNTERMINATED)   /* point at the opening quote */
                e = i;
            i = e;
            goto fail;
        } else if (e - st >= PT_JSON_SEEN_MIN && d->seen_on) {
            seen_store(d, s + st, e - st, esc);
            d->seen_hinted = 0;
        }
        if (store) {
            if (++total > max_total)
                goto over;
            if (add_node(d, cur, JV_STRING, s + st, e - st, &idx) != 0)
                goto nomem;
            d->nodes[idx].escaped = (uint8_t)esc;
            count_elem(d, cur);
        } else if (++total > max_total) {
            goto over;
        }
        i = e + 1;
        goto after;
    }
    case 't':
    case 'f':
    case 'n': {
        const char *lit = s[i] == 't' ? "true" : s[i] == 'f' ? "false" : "null";
        uint8_t type = s[i] == 't' ? JV_TRUE : s[i] == 'f' ? JV_FALSE : JV_NULL;
        size_t ll = strlen(lit);
        if (len - i < ll || memcmp(s + i, lit, ll) != 0) {
            msg = "invalid literal";
            goto fail;
        }
        if (store) {
            if (++total > max_total)
                goto over;
            if (add_node(d, cur, type, s + i, ll, &idx) != 0)
                goto nomem;
            count_elem(d, cur);
        } else if (++total > max_total) {
            goto over;
        }
        i += ll;
        goto after;
    }
    default: {
        if (s[i] != '-' && !is_digit(s[i])) {
            msg = "unexpected character";
            goto fail;
        }
        size_t st = i;
        if (scan_number(s, len, &i, &msg) != 0)
            goto fail;
        if (store) {
            if (++total > max_total)
                goto over;
            if (add_node(d, cur, JV_NUMBER, s + st, i - st, &idx) != 0)
                goto nomem;
            count_elem(d, cur);
        } else if (++total > max_total) {
            goto over;
        }
        goto after;
    }
    }

key:
    /* whitespace already skipped */
    if (i >= len)
        goto eof;
    if (s[i] != '"') {
        msg = "expected string key";
        goto fail;
    }
    {
        size_t st = i + 1, e = st;
        int esc = 0;
        if (scan_string_quick(s, len, &e, &esc, &msg) != 0) {
            if (msg == MSG_UNTERMINATED)
                e = i;
            i = e;
            goto fail;
        }
        if (skipping && store && !esc && skip_key(d, s + st, e - st)) {
            store = 0;   /* this member gets no nodes */
            skip_depth = depth;
        }
        if (store) {
            if (++total > max_total)
                goto over;
            if (add_node(d, cur, JV_STRING, s + st, e - st, &idx) != 0)
                goto nomem;
            d->nodes[idx].escaped = (uint8_t)esc;
        } else if (++total > max_total) {
            goto over;
        }
        d->nodes[cur].count++;
        i = e + 1;
    }
    SKIP_WS();
    if (i >= len)
        goto eof;
    if (s[i] != ':') {
        msg = "expected ':' after object key";
        goto fail;
    }
    i++;
    goto value;

after:
    if (depth == skip_depth) {
        store = 1;   /* the skipped member's value is complete */
        skip_depth = NONE;
    }
    SKIP_WS();
    if (cur == NONE) {
        if (i != len) {
            msg = "trailing characters after value";
            goto fail;
        }
        return 0;
    }
    if (i >= len)
        goto eof;
    if (d->nodes[cur].type == JV_ARRAY) {
        if (s[i] == ',') {
            i++;
            goto value;
        }
        if (s[i] == ']')
            goto close;
        msg = "expected ',' or ']'";
        goto fail;
    }
    if (s[i] == ',') {
        i++;
        SKIP_WS();
        goto key;
    }
    if (s[i] == '}')
        goto close;
    msg = "expected ',' or '}'";
    goto fail;

close: {
    /* s[i] closes the container cur */
    jnode *nd = &d->nodes[cur];
    uint32_t parent = nd->next;
    nd->next = 0;
    nd->len = (size_t)((const char *)(s + i + 1) - nd->p);
    if (!store) {
        d->n = cur;   /* pop: it has no kept descendants */
    }
    cur = parent;
    depth--;
    i++;
    goto after;
}

over:
    d->over = 1;
nomem:
    msg = d->over ? "too many values" : "out of memory";
    goto fail;
eof:
    msg = "unexpected end of input";
    i = len;
fail:
    d->n = 0;
    if (err_off)
        *err_off = i;
    if (err_msg)
        *err_msg = msg;
    return -1;
}

int pt_json_parse(jdoc *d, const uint8_t *buf, size_t len, uint32_t max_depth,
               size_t *err_off, const char **err_msg)
{
    return parse(d, buf, len, max_depth, 1, err_off, err_msg);
}

PANTO_EXTERN(int) panto_json_validate(const uint8_t *buf, size_t len, uint32_t max_depth,
                                      size_t *err_offset, const char **err_message)
{
    jdoc d = {0};
    size_t off = 0;
    const char *msg = NULL;
    if (buf == NULL && len > 0) {
        if (err_offset)
            *err_offset = 0;
        if (err_message)
            *err_message = "NULL buffer";
        return PANTO_ERROR;
    }
    int rc = parse(&d, buf, len, max_depth, 0, &off, &msg);
    pt_json_doc_free(&d);
    if (rc != 0) {
        if (err_offset)
            *err_offset = off;
        if (err_message)
            *err_message = msg;
        return PANTO_ERROR;
    }
    return PANTO_OK;
}

/* ------------------------------------------------------------ accessors */

const jnode *pt_json_first(const jdoc *d, const jnode *n)
{
    if (n == NULL || (n->type != JV_ARRAY && n->type != JV_OBJECT) || n->first == 0)
        return NULL;
    return &d->nodes[n->first];
}

const jnode *pt_json_next(const jdoc *d, const jnode *n)
{
    if (n == NULL || n->next == 0)
        return NULL;
    return &d->nodes[n->next];
}

const jnode *pt_json_at(const jdoc *d, const jnode *arr, size_t i)
{
    if (arr == NULL || arr->type != JV_ARRAY || i >= arr->count)
        return NULL;
    const jnode *c = pt_json_first(d, arr);
    while (c != NULL && i-- > 0)
        c = pt_json_next(d, c);
    return c;
}

const jnode *pt_json_get(const jdoc *d, const jnode *obj, const char *key)
{
    if (obj == NULL || obj->type != JV_OBJECT || key == NULL)
        return NULL;
    const jnode *found = NULL;
    for (uint32_t k = obj->first; k != 0;) {
        const jnode *kn = &d->nodes[k];
        const jnode *vn = &d->nodes[kn->next];
        if (pt_json_string_eq(kn, key))
            found = vn;   /* last duplicate wins */
        k = vn->next;
    }
    return found;
}

static size_t utf8_put(uint32_t cp, uint8_t *o)
{
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | (cp >> 6));
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12));
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | (cp >> 18));
    o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (cp & 0x3F));
    return 4;
}

/* Decode the (validated) escape at s[*i] == '\\' into o; returns its size. */
static size_t unescape_one(const uint8_t *s, size_t *i, uint8_t *o)
{
    uint8_t e = s[*i + 1];
    *i += 2;
    switch (e) {
    case 'b': o[0] = '\b'; return 1;
    case 'f': o[0] = '\f'; return 1;
    case 'n': o[0] = '\n'; return 1;
    case 'r': o[0] = '\r'; return 1;
    case 't': o[0] = '\t'; return 1;
    case 'u': {
        uint32_t cp = (uint32_t)hex4(s + *i);
        *i += 4;
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            uint32_t lo = (uint32_t)hex4(s + *i + 2);
            *i += 6;
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
        }
        return utf8_put(cp, o);
    }
    default: o[0] = e; return 1;   /* '"', '\\', '/' */
    }
}

/* The escaped string body s[0..len) (validated) unescaped into dst, which
 * has room for len bytes: its length. */
static size_t unescape_into(const uint8_t *s, size_t len, uint8_t *dst)
{
    size_t i = 0, o = 0;
    while (i < len) {
        const uint8_t *bs = memchr(s + i, '\\', len - i);
        size_t run = bs ? (size_t)(bs - (s + i)) : len - i;
        memcpy(dst + o, s + i, run);
        o += run;
        i += run;
        if (i < len)
            o += unescape_one(s, &i, dst + o);
    }
    return o;
}

int pt_json_string(const jnode *n, parena *a, panto_str *out)
{
    if (n == NULL || n->type != JV_STRING)
        return -1;
    if (!n->escaped) {
        out->ptr = n->p;
        out->len = n->len;
        return 0;
    }
    /* Unescaping never makes a string longer. */
    uint8_t *dst = pt_parena_alloc(a, n->len);
    if (dst == NULL)
        return -1;
    size_t o = unescape_into((const uint8_t *)n->p, n->len, dst);
    out->ptr = (const char *)dst;
    out->len = o;
    return 0;
}

size_t pt_json_unescape_slack(const uint8_t *s, size_t len, uint8_t *dst)
{
#ifdef PT_SSE2
    size_t i = 0, o = 0;
    while (i < len) {
        /* whole 16-byte moves: the bytes past the end are slack */
        __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
        _mm_storeu_si128((__m128i *)(void *)(dst + o), v);
        size_t left = len - i, run = left < 16 ? left : 16;
        unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
        m &= (1u << run) - 1;
        if (m == 0) {
            i += run;
            o += run;
            continue;
        }
        size_t k = (size_t)__builtin_ctz(m);
        i += k;
        o += k;
        o += unescape_one(s, &i, dst + o);
    }
    return o;
#else
    return unescape_into(s, len, dst);
#endif
}

int pt_json_string_eq(const jnode *n, const char *str)
{
    if (n == NULL || n->type != JV_STRING || str == NULL)
        return 0;
    size_t sl = strlen(str);
    if (!n->escaped)
        return n->len == sl && memcmp(n->p, str, sl) == 0;
    const uint8_t *s = (const uint8_t *)n->p;
    const uint8_t *t = (const uint8_t *)str;
    size_t i = 0, j = 0, len = n->len;
    while (i < len) {
        const uint8_t *bs = memchr(s + i, '\\', len - i);
        size_t run = bs ? (size_t)(bs - (s + i)) : len - i;
        if (run > sl - j || memcmp(s + i, t + j, run) != 0)
            return 0;
        i += run;
        j += run;
        if (i < len) {
            uint8_t buf[4];
            size_t k = unescape_one(s, &i, buf);
            if (k > sl - j || memcmp(buf, t + j, k) != 0)
                return 0;
            j += k;
        }
    }
    return j == sl;
}

int pt_json_u64(const jnode *n, uint64_t *out)
{
    if (n == NULL || n->type != JV_NUMBER || n->len == 0)
        return -1;
    uint64_t v = 0;
    for (size_t i = 0; i < n->len; i++) {
        uint8_t c = (uint8_t)n->p[i];
        if (c < '0' || c > '9')
            return -1;   /* '-', '.', 'e': negative or not a plain integer */
        unsigned dg = c - '0';
        if (v > (UINT64_MAX - dg) / 10)
            v = UINT64_MAX;
        else
            v = v * 10 + dg;
    }
    *out = v;
    return 0;
}

int pt_json_is_null(const jnode *n) { return n == NULL || n->type == JV_NULL; }
