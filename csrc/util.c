/* util.c -- growable buffers, a chunked arena and a UTF-8 validator. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- pbuf */

/* A few big buffers (PT_BIGBUF_MIN to PT_BIGBUF_MAX bytes) that freed
 * pbufs leave for the next one to grow into, process-wide.  Streams are
 * decoded one after another (a turn, the next turn): a long response's
 * buffers, 128 KiB and more, would otherwise go back to the C library at
 * panto_stream_free -- which returns the top of the heap (or an mmap'ed
 * block) to the kernel -- and the next stream's would fault every page in
 * again, a few microseconds a page.  Each slot holds one buffer or NULL,
 * swapped atomically (threads may free and grow pbufs at once); a cached
 * buffer keeps its capacity in its first bytes.  At most PT_BIGBUF_SLOTS x
 * PT_BIGBUF_MAX bytes stay held after every stream is freed.  Without the
 * GNU atomic builtins there is no cache. */
#define PT_BIGBUF_MAX ((size_t)1 << 20)
#define PT_BIGBUF_SLOTS 4
#if defined(__GNUC__) && !defined(PT_NO_BIGBUF)
static uint8_t *bigbuf_slot[PT_BIGBUF_SLOTS];

/* A cached buffer of at least `need` bytes (at most twice that: pbuf
 * memory stays within 2x of what it holds), its capacity in *cap; NULL
 * when none fits. */
static uint8_t *bigbuf_take(size_t need, size_t *cap)
{
    for (int i = 0; i < PT_BIGBUF_SLOTS; i++) {
        if (!__atomic_load_n(&bigbuf_slot[i], __ATOMIC_RELAXED))
            continue;
        uint8_t *p = __atomic_exchange_n(&bigbuf_slot[i], NULL, __ATOMIC_ACQ_REL);
        if (!p)
            continue;
        size_t c;
        memcpy(&c, p, sizeof c);
        if (c >= need && c / 2 <= need) {
            *cap = c;
            return p;
        }
        uint8_t *expected = NULL; /* not this one: back, or freed */
        if (!__atomic_compare_exchange_n(&bigbuf_slot[i], &expected, p, 0, __ATOMIC_ACQ_REL,
                                         __ATOMIC_RELAXED))
            free(p);
    }
    return NULL;
}

/* Keep p (capacity cap) for bigbuf_take: 1, or 0 when it is not kept (the
 * caller frees it). */
static int bigbuf_put(uint8_t *p, size_t cap)
{
    if (!p || cap < PT_BIGBUF_MIN || cap > PT_BIGBUF_MAX)
        return 0;
    memcpy(p, &cap, sizeof cap);
    for (int i = 0; i < PT_BIGBUF_SLOTS; i++) {
        uint8_t *expected = NULL;
        if (__atomic_compare_exchange_n(&bigbuf_slot[i], &expected, p, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_RELAXED))
            return 1;
    }
    return 0;
}
#else
static uint8_t *bigbuf_take(size_t need, size_t *cap)
{
    (void)need;
    (void)cap;
    return NULL;
}
static int bigbuf_put(uint8_t *p, size_t cap)
{
    (void)p;
    (void)cap;
    return 0;
}
#endif

int pt_pbuf_reserve(pbuf *b, size_t extra, size_t limit)
{
    if (extra > SIZE_MAX - b->len)
        return PU_LIMIT;
    size_t need = b->len + extra;
    if (need > limit)
        return PU_LIMIT;
    if (need <= b->cap)
        return PU_OK;
    /* Geometric growth, but never past the limit unless the request itself
     * needs it: memory stays within about 2x of what the limit allows. */
    size_t ncap = b->cap < 64 ? 64 : b->cap;
    while (ncap < need) {
        if (ncap > SIZE_MAX / 2) {
            ncap = need;
            break;
        }
        ncap *= 2;
    }
    if (ncap > limit)
        ncap = limit > need ? limit : need;
    if (ncap > (size_t)PTRDIFF_MAX - PT_SLACK) /* no object can be that large */
        return PU_NOMEM;
    size_t kcap;
    uint8_t *np = ncap >= PT_BIGBUF_MIN ? bigbuf_take(ncap, &kcap) : NULL;
    if (np) { /* a big buffer a freed stream left: its pages are there */
        size_t len = b->len;
        if (len)
            memcpy(np, b->p, len);
        pt_pbuf_free(b);
        b->p = np;
        b->len = len;
        b->cap = kcap;
        return PU_OK;
    }
    np = realloc(b->p, ncap + PT_SLACK);
    if (np == NULL)
        return PU_NOMEM;
    b->p = np;
    b->cap = ncap;
    return PU_OK;
}

int pt_pbuf_append(pbuf *b, const void *src, size_t n, size_t limit)
{
    if (n == 0)
        return PU_OK;
    int rc = pt_pbuf_reserve(b, n, limit);
    if (rc != PU_OK)
        return rc;
    memcpy(b->p + b->len, src, n);
    b->len += n;
    return PU_OK;
}

void pt_pbuf_consume(pbuf *b, size_t n)
{
    if (n >= b->len) {
        b->len = 0;
        return;
    }
    if (n == 0)
        return;
    memmove(b->p, b->p + n, b->len - n);
    b->len -= n;
}

void pt_pbuf_clear(pbuf *b) { b->len = 0; }

void pt_pbuf_free(pbuf *b)
{
    if (!bigbuf_put(b->p, b->cap))
        free(b->p);
    b->p = NULL;
    b->len = 0;
    b->cap = 0;
}

/* -------------------------------------------------------------- parena */

#define PARENA_MIN_CHUNK ((size_t)16 * 1024)
#define PARENA_ALIGN ((size_t)8)

struct parena_chunk {
    parena_chunk *next;
    size_t size;   /* usable bytes in data[] */
    size_t used;
    /* data follows, aligned for max_align_t */
};

/* Header size rounded up so data[] is suitably aligned. */
#define PARENA_HDR \
    ((sizeof(parena_chunk) + _Alignof(max_align_t) - 1) & ~(_Alignof(max_align_t) - 1))

static uint8_t *chunk_data(parena_chunk *c) { return (uint8_t *)c + PARENA_HDR; }

void *pt_parena_alloc(parena *a, size_t n)
{
    if (n == 0)
        n = 1;
    if (n > SIZE_MAX - PARENA_ALIGN - PARENA_HDR)
        return NULL;
    size_t rn = (n + PARENA_ALIGN - 1) & ~(PARENA_ALIGN - 1);
    parena_chunk *c = a->head;
    if (c != NULL && c->size - c->used >= rn) {
        void *r = chunk_data(c) + c->used;
        c->used += rn;
        return r;
    }
    size_t sz = rn > PARENA_MIN_CHUNK ? rn : PARENA_MIN_CHUNK;
    parena_chunk *nc = malloc(PARENA_HDR + sz + PT_SLACK);
    if (nc == NULL)
        return NULL;
    nc->size = sz;
    nc->used = rn;
    /* A big one-off allocation goes behind the current chunk when that one
     * still has more room left, so the small allocations keep using it. */
    if (c != NULL && sz > PARENA_MIN_CHUNK && c->size - c->used > sz - rn) {
        nc->next = c->next;
        c->next = nc;
    } else {
        nc->next = c;
        a->head = nc;
    }
    a->bytes += PARENA_HDR + sz;
    return chunk_data(nc);
}

char *pt_parena_dup(parena *a, const void *src, size_t n)
{
    char *d = pt_parena_alloc(a, n);
    if (d != NULL && n > 0)
        memcpy(d, src, n);
    return d;
}

void pt_parena_reset(parena *a)
{
    if (a->head == NULL)
        return;
    if (a->head->next == NULL) { /* one chunk: the common case */
        a->head->used = 0;
        return;
    }
    parena_chunk *keep = NULL;
    for (parena_chunk *c = a->head; c != NULL; c = c->next)
        if (keep == NULL || c->size > keep->size)
            keep = c;
    parena_chunk *c = a->head;
    while (c != NULL) {
        parena_chunk *nx = c->next;
        if (c != keep)
            free(c);
        c = nx;
    }
    a->head = keep;
    a->bytes = 0;
    if (keep != NULL) {
        keep->next = NULL;
        keep->used = 0;
        a->bytes = PARENA_HDR + keep->size;
    }
}

void pt_parena_free(parena *a)
{
    parena_chunk *c = a->head;
    while (c != NULL) {
        parena_chunk *nx = c->next;
        free(c);
        c = nx;
    }
    a->head = NULL;
    a->bytes = 0;
}

/* ---------------------------------------------------------------- UTF-8 */

size_t pt_utf8_valid_prefix(const uint8_t *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        /* ASCII fast path, 8 bytes at a time. */
        while (n - i >= 8) {
            uint64_t w;
            memcpy(&w, s + i, 8);
            if (w & UINT64_C(0x8080808080808080))
                break;
            i += 8;
        }
        if (i >= n)
            break;
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t need;
        uint8_t lo = 0x80, hi = 0xBF;   /* range of the second byte */
        if (c >= 0xC2 && c <= 0xDF) {
            need = 1;
        } else if (c >= 0xE0 && c <= 0xEF) {
            need = 2;
            if (c == 0xE0)
                lo = 0xA0;               /* no overlongs */
            else if (c == 0xED)
                hi = 0x9F;               /* no surrogates */
        } else if (c >= 0xF0 && c <= 0xF4) {
            need = 3;
            if (c == 0xF0)
                lo = 0x90;               /* no overlongs */
            else if (c == 0xF4)
                hi = 0x8F;               /* <= U+10FFFF */
        } else {
            return i;
        }
        if (n - i <= need)
            return i;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k <= need; k++)
            if ((s[i + k] & 0xC0) != 0x80)
                return i;
        i += need + 1;
    }
    return n;
}
