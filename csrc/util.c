/* util.c -- growable buffers, a chunked arena and a UTF-8 validator. */
#include "util.h"

#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- pbuf */

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
    uint8_t *np = realloc(b->p, ncap + PT_SLACK);
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
