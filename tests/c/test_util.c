/* test_util.c -- pbuf, parena and pt_utf8_valid_prefix. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "testlib.h"
#include "unity/panto_core.c" /* the core, internals included */

static void test_pbuf(void)
{
    pbuf b = {0};
    CHECK_EQ_INT(pt_pbuf_append(&b, "hello", 5, 100), PU_OK);
    CHECK_STR(b.p, b.len, "hello");
    CHECK(b.cap >= 5);
    CHECK_EQ_INT(pt_pbuf_append(&b, " world", 6, 100), PU_OK);
    CHECK_STR(b.p, b.len, "hello world");
    pt_pbuf_consume(&b, 6);
    CHECK_STR(b.p, b.len, "world");
    pt_pbuf_consume(&b, 0);
    CHECK_STR(b.p, b.len, "world");
    pt_pbuf_consume(&b, 99);
    CHECK_EQ_INT(b.len, 0);

    /* limit caps len */
    pt_pbuf_clear(&b);
    CHECK_EQ_INT(pt_pbuf_append(&b, "0123456789", 10, 10), PU_OK);
    CHECK_EQ_INT(pt_pbuf_append(&b, "x", 1, 10), PU_LIMIT);
    CHECK_EQ_INT(b.len, 10);
    CHECK_EQ_INT(pt_pbuf_reserve(&b, SIZE_MAX, SIZE_MAX), PU_LIMIT);   /* overflow */
    CHECK_EQ_INT(pt_pbuf_append(&b, "", 0, 0), PU_OK);
    pt_pbuf_clear(&b);
    CHECK_EQ_INT(b.len, 0);
    CHECK(b.cap >= 10);

    /* geometric growth: few reallocations for many appends */
    int grows = 0;
    size_t lastcap = b.cap;
    for (int i = 0; i < 100000; i++) {
        if (pt_pbuf_append(&b, "abc", 3, SIZE_MAX) != PU_OK)
            break;
        if (b.cap != lastcap) {
            grows++;
            lastcap = b.cap;
        }
    }
    CHECK_EQ_INT(b.len, 300000);
    CHECK(grows < 20);
    CHECK(memcmp(b.p + 299997, "abc", 3) == 0);
    /* capacity never far past the limit */
    pbuf c = {0};
    for (int i = 0; i < 1000; i++)
        pt_pbuf_append(&c, "0123456789", 10, 5000);
    CHECK_EQ_INT(c.len, 5000);
    CHECK(c.cap <= 5000);
    pt_pbuf_free(&c);

    pt_pbuf_free(&b);
    CHECK(b.p == NULL);
    CHECK_EQ_INT(b.cap, 0);
    pt_pbuf_free(&b); /* twice is fine */
}

static void test_parena(void)
{
    parena a = {0};
    CHECK_EQ_INT(a.bytes, 0);
    char *p1 = pt_parena_alloc(&a, 3);
    char *p2 = pt_parena_alloc(&a, 5);
    CHECK(p1 != NULL && p2 != NULL);
    CHECK(((uintptr_t)p1 & 7) == 0);
    CHECK(((uintptr_t)p2 & 7) == 0);
    CHECK(a.bytes >= 16 * 1024);
    size_t one = a.bytes;
    char *z = pt_parena_dup(&a, "x", 0);
    CHECK(z != NULL);
    char *d = pt_parena_dup(&a, "hello", 5);
    CHECK(d != NULL && memcmp(d, "hello", 5) == 0);
    /* many small ones: all aligned, contents intact */
    char *ptrs[5000];
    int aligned = 1;
    for (int i = 0; i < 5000; i++) {
        ptrs[i] = pt_parena_alloc(&a, (size_t)(i % 13) + 1);
        if (ptrs[i] == NULL || ((uintptr_t)ptrs[i] & 7) != 0)
            aligned = 0;
        else
            memset(ptrs[i], i & 0xFF, (size_t)(i % 13) + 1);
    }
    CHECK(aligned);
    int intact = 1;
    for (int i = 0; i < 5000; i++)
        for (int k = 0; k < i % 13 + 1; k++)
            if ((uint8_t)ptrs[i][k] != (uint8_t)(i & 0xFF))
                intact = 0;
    CHECK(intact);
    CHECK(memcmp(d, "hello", 5) == 0);
    CHECK(a.bytes > one);
    /* a big allocation gets its own chunk */
    char *big = pt_parena_alloc(&a, 1 << 20);
    CHECK(big != NULL);
    memset(big, 7, 1 << 20);
    CHECK(a.bytes >= one + (1 << 20));
    CHECK(memcmp(d, "hello", 5) == 0);
    /* reset keeps the largest chunk only */
    pt_parena_reset(&a);
    CHECK(a.bytes >= (1 << 20));
    CHECK(a.bytes < (1 << 20) + 4096);
    char *r = pt_parena_alloc(&a, 100000);
    CHECK(r != NULL);
    CHECK(a.bytes < (1 << 20) + 4096); /* reused the kept chunk */
    pt_parena_reset(&a);
    pt_parena_free(&a);
    CHECK_EQ_INT(a.bytes, 0);
    CHECK(a.head == NULL);
    pt_parena_reset(&a); /* empty arena */
    CHECK_EQ_INT(a.bytes, 0);
    pt_parena_free(&a);
}

static size_t vp(const char *s, size_t n) { return pt_utf8_valid_prefix((const uint8_t *)s, n); }

static void test_utf8(void)
{
    CHECK_EQ_INT(vp("", 0), 0);
    CHECK_EQ_INT(vp("hello, world, plain ascii text", 30), 30);
    CHECK_EQ_INT(vp("h\xC3\xA9llo", 6), 6);                 /* é */
    CHECK_EQ_INT(vp("\xE2\x82\xAC", 3), 3);                 /* € */
    CHECK_EQ_INT(vp("\xF0\x9F\x98\x80", 4), 4);             /* 😀 */
    CHECK_EQ_INT(vp("\xF4\x8F\xBF\xBF", 4), 4);             /* U+10FFFF */
    CHECK_EQ_INT(vp("\xEF\xBB\xBF", 3), 3);                 /* BOM is valid */
    CHECK_EQ_INT(vp("ab\xC0\x80", 4), 2);                   /* overlong NUL */
    CHECK_EQ_INT(vp("ab\xC1\xBF", 4), 2);                   /* overlong */
    CHECK_EQ_INT(vp("\xE0\x80\xAF", 3), 0);                 /* overlong 3 */
    CHECK_EQ_INT(vp("\xE0\x9F\xBF", 3), 0);
    CHECK_EQ_INT(vp("\xE0\xA0\x80", 3), 3);                 /* U+0800 */
    CHECK_EQ_INT(vp("\xF0\x8F\xBF\xBF", 4), 0);             /* overlong 4 */
    CHECK_EQ_INT(vp("\xED\xA0\x80", 3), 0);                 /* surrogate D800 */
    CHECK_EQ_INT(vp("\xED\xBF\xBF", 3), 0);                 /* surrogate DFFF */
    CHECK_EQ_INT(vp("\xED\x9F\xBF", 3), 3);                 /* U+D7FF */
    CHECK_EQ_INT(vp("\xF4\x90\x80\x80", 4), 0);             /* > U+10FFFF */
    CHECK_EQ_INT(vp("\xF5\x80\x80\x80", 4), 0);
    CHECK_EQ_INT(vp("\xFF", 1), 0);
    CHECK_EQ_INT(vp("\x80", 1), 0);                         /* lone continuation */
    CHECK_EQ_INT(vp("abc\xE2\x82", 5), 3);                  /* truncated */
    CHECK_EQ_INT(vp("abc\xF0\x9F\x98", 6), 3);
    CHECK_EQ_INT(vp("abc\xC3", 4), 3);
    CHECK_EQ_INT(vp("\xC3\x28", 2), 0);                     /* bad continuation */
    CHECK_EQ_INT(vp("\xE2\x28\xA1", 3), 0);
    CHECK_EQ_INT(vp("\xF0\x9F\x28\x80", 4), 0);
    /* the fast path: invalid byte at every offset of a long ASCII run */
    char buf[64];
    int ok = 1;
    for (size_t at = 0; at < 40; at++) {
        memset(buf, 'a', sizeof buf);
        buf[at] = (char)0xFE;
        if (vp(buf, 40) != at)
            ok = 0;
        buf[at] = 'a';
        if (at + 2 <= 40) {
            buf[at] = (char)0xC3;
            buf[at + 1] = (char)0xA9;
            if (vp(buf, 40) != 40)
                ok = 0;
        }
    }
    CHECK(ok);
    /* the whole code point range, encoded by hand */
    int allok = 1;
    for (uint32_t cp = 0; cp <= 0x10FFFF; cp += (cp < 0x20000 ? 1 : 37)) {
        uint8_t e[4];
        size_t n;
        if (cp < 0x80) {
            e[0] = (uint8_t)cp;
            n = 1;
        } else if (cp < 0x800) {
            e[0] = (uint8_t)(0xC0 | cp >> 6);
            e[1] = (uint8_t)(0x80 | (cp & 63));
            n = 2;
        } else if (cp < 0x10000) {
            e[0] = (uint8_t)(0xE0 | cp >> 12);
            e[1] = (uint8_t)(0x80 | ((cp >> 6) & 63));
            e[2] = (uint8_t)(0x80 | (cp & 63));
            n = 3;
        } else {
            e[0] = (uint8_t)(0xF0 | cp >> 18);
            e[1] = (uint8_t)(0x80 | ((cp >> 12) & 63));
            e[2] = (uint8_t)(0x80 | ((cp >> 6) & 63));
            e[3] = (uint8_t)(0x80 | (cp & 63));
            n = 4;
        }
        size_t want = (cp >= 0xD800 && cp <= 0xDFFF) ? 0 : n;
        if (pt_utf8_valid_prefix(e, n) != want)
            allok = 0;
    }
    CHECK(allok);
}

/* A big pbuf freed is kept (util.c's bigbuf cache) and the next pbuf
 * that grows that big takes it, keeping what it holds. */
static void test_pbuf_cache(void)
{
#if defined(__GNUC__) && !defined(PT_NO_BIGBUF)
    static uint8_t big[200000];
    for (size_t i = 0; i < sizeof big; i++)
        big[i] = (uint8_t)(i * 7);
    for (int i = 0; i < PT_BIGBUF_SLOTS; i++) { /* empty the cache */
        size_t cap;
        free(bigbuf_take(PT_BIGBUF_MIN, &cap));
        free(bigbuf_take(2 * PT_BIGBUF_MIN, &cap));
    }
    pbuf a = {0};
    CHECK_EQ_INT(pt_pbuf_append(&a, big, sizeof big, SIZE_MAX), PU_OK);
    uint8_t *kept = a.p;
    size_t kept_cap = a.cap;
    pt_pbuf_free(&a);
    CHECK(a.p == NULL && a.len == 0 && a.cap == 0);

    pbuf b = {0};
    CHECK_EQ_INT(pt_pbuf_append(&b, "head", 4, SIZE_MAX), PU_OK);
    CHECK(b.p != kept); /* small: not from the cache */
    CHECK_EQ_INT(pt_pbuf_append(&b, big, sizeof big, SIZE_MAX), PU_OK);
    CHECK(b.p == kept); /* grown big: the buffer freed before */
    CHECK_EQ_INT(b.cap, kept_cap);
    CHECK_EQ_INT(b.len, 4 + sizeof big);
    CHECK(memcmp(b.p, "head", 4) == 0 && memcmp(b.p + 4, big, sizeof big) == 0);
    pt_pbuf_free(&b);

    /* a cached buffer far bigger than needed is left for another */
    pbuf c = {0};
    CHECK_EQ_INT(pt_pbuf_reserve(&c, PT_BIGBUF_MIN, SIZE_MAX), PU_OK);
    CHECK(c.p != kept && c.cap < kept_cap);
    pt_pbuf_free(&c);
    /* ... and one too big to keep is freed */
    pbuf d = {0};
    CHECK_EQ_INT(pt_pbuf_reserve(&d, PT_BIGBUF_MAX + 1, SIZE_MAX), PU_OK);
    CHECK_EQ_INT(bigbuf_put(d.p, d.cap), 0);
    pt_pbuf_free(&d);
#endif
}

int main(void)
{
    test_pbuf();
    test_pbuf_cache();
    test_parena();
    test_utf8();
    return test_report("test_util");
}
