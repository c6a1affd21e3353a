/* testlib.h -- a tiny assert/report helper shared by the C tests.
 *
 *   CHECK(cond)                 count a pass, or print file:line and the
 *                               expression and count a failure
 *   CHECK_EQ_INT(a, b)          integers (compared as long long), prints both
 *   CHECK_STR(ptr, len, "lit")  a {ptr, len} byte string equals a literal
 *   return test_report("name"); prints "name: N passed, M failed" and
 *                               returns nonzero when anything failed
 *   sb, sb_addn, sb_add         a growable NUL-terminated string (tests
 *                               render events into one to compare them)
 *
 * Header-only; the counters live in a function-local static, so including
 * it from one test file is all it takes. */
#ifndef PANTO_TESTLIB_H
#define PANTO_TESTLIB_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline long *test_counts_(void)
{
    static long counts[2]; /* passed, failed */
    return counts;
}

static inline void test_result_(int ok)
{
    test_counts_()[ok ? 0 : 1]++;
}

static inline int test_str_eq_(const void *ptr, size_t len, const char *lit)
{
    size_t n = strlen(lit);
    if (len != n)
        return 0;
    return n == 0 || (ptr != NULL && memcmp(ptr, lit, n) == 0);
}

#define CHECK(cond)                                                          \
    do {                                                                     \
        int ok_ = (cond) ? 1 : 0;                                            \
        test_result_(ok_);                                                   \
        if (!ok_)                                                            \
            fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                  \
    } while (0)

#define CHECK_EQ_INT(a, b)                                                  \
    do {                                                                    \
        long long a_ = (long long)(a), b_ = (long long)(b);                 \
        test_result_(a_ == b_);                                             \
        if (a_ != b_)                                                       \
            fprintf(stderr, "%s:%d: CHECK_EQ_INT failed: %s == %s (%lld != %lld)\n", \
                    __FILE__, __LINE__, #a, #b, a_, b_);                    \
    } while (0)

#define CHECK_STR(ptr, len, lit)                                            \
    do {                                                                    \
        const char *p_ = (const char *)(ptr);                               \
        size_t l_ = (size_t)(len);                                          \
        int ok_ = test_str_eq_(p_, l_, (lit));                              \
        test_result_(ok_);                                                  \
        if (!ok_)                                                           \
            fprintf(stderr, "%s:%d: CHECK_STR failed: %s is \"%.*s\" (len %zu), want \"%s\"\n", \
                    __FILE__, __LINE__, #ptr, (int)(p_ ? (l_ > 200 ? 200 : l_) : 0), \
                    p_ ? p_ : "", l_, (lit));                               \
    } while (0)

static inline int test_report(const char *name)
{
    long *c = test_counts_();
    printf("%s: %ld passed, %ld failed\n", name, c[0], c[1]);
    fflush(stdout);
    return c[1] != 0;
}

typedef struct {
    char *p;
    size_t len, cap;
} sb;

static inline void sb_addn(sb *b, const void *s, size_t n)
{
    if (b->len + n + 1 > b->cap) {
        size_t nc = b->cap ? b->cap * 2 : 256;
        while (nc < b->len + n + 1)
            nc *= 2;
        b->p = realloc(b->p, nc);
        if (!b->p) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        b->cap = nc;
    }
    if (n)
        memcpy(b->p + b->len, s, n);
    b->len += n;
    b->p[b->len] = 0;
}

static inline void sb_add(sb *b, const char *s) { sb_addn(b, s, strlen(s)); }

#endif
