/* util.h -- growable buffers and a chunked arena, the only allocators the
 * core uses.  Every byte they hold is counted, so panto_stream_memory() can
 * report it and tests can prove memory stays bounded. */
#ifndef PANTO_UTIL_H
#define PANTO_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Every function shared between the core's files is declared PT_INTERNAL
 * and named pt_*.  Built file by file (the default) they are extern with
 * hidden visibility; csrc/unity/panto_core.c, the one translation unit the
 * libraries are built from, defines PT_INTERNAL as `static` first, so the
 * only global symbols of libpanto.a / libpanto.so are the panto_* functions
 * of panto.h.  Static helpers inside one file need no prefix but must not
 * clash with another file's (the unity build catches that). */
#ifndef PT_INTERNAL
#if defined(__GNUC__)
#define PT_INTERNAL __attribute__((visibility("hidden")))
#else
#define PT_INTERNAL
#endif
#endif

/* Result of an allocation that may also hit a configured limit. */
enum { PU_OK = 0, PU_NOMEM = -1, PU_LIMIT = -2 };

/* Every pbuf and arena chunk is allocated PT_SLACK bytes longer than its
 * capacity: a string that ends inside one can be copied in fixed 32-byte
 * moves (pt_copy_slack) without reading or writing past the allocation.
 * The slack holds no data and is not counted in panto_stream_memory(). */
#define PT_SLACK ((size_t)32)

/* pbufs of this capacity or more are cached when freed (util.c). */
#define PT_BIGBUF_MIN ((size_t)64 << 10)

/* A contiguous growable byte buffer.  Grows geometrically; `limit` caps
 * len (not cap).  Zero-initialised is an empty buffer. */
typedef struct {
    uint8_t *p;
    size_t len;
    size_t cap;
} pbuf;

/* Ensure room for `extra` more bytes; PU_LIMIT if len + extra > limit. */
PT_INTERNAL int pt_pbuf_reserve(pbuf *b, size_t extra, size_t limit);
PT_INTERNAL int pt_pbuf_append(pbuf *b, const void *src, size_t n, size_t limit);
/* Drop the first n bytes (memmove the rest down). */
PT_INTERNAL void pt_pbuf_consume(pbuf *b, size_t n);
PT_INTERNAL void pt_pbuf_clear(pbuf *b);         /* len = 0, keeps capacity */
PT_INTERNAL void pt_pbuf_free(pbuf *b);          /* releases memory, back to empty */

/* A bump allocator made of chunks: allocations never move, so pointers into
 * it stay valid until pt_parena_reset().  Reset keeps one chunk for reuse. */
typedef struct parena_chunk parena_chunk;
typedef struct {
    parena_chunk *head;   /* newest chunk first */
    size_t bytes;         /* total bytes held in chunks */
} parena;

PT_INTERNAL void *pt_parena_alloc(parena *a, size_t n);   /* NULL on out of memory */
/* Copy n bytes into the arena; returns the copy or NULL. n == 0 gives a
 * valid non-NULL pointer. */
PT_INTERNAL char *pt_parena_dup(parena *a, const void *src, size_t n);
PT_INTERNAL void pt_parena_reset(parena *a);
PT_INTERNAL void pt_parena_free(parena *a);

/* UTF-8: length of the longest prefix of s[0..n) that is valid UTF-8
 * (RFC 3629: no overlongs, no surrogates, max U+10FFFF). */
PT_INTERNAL size_t pt_utf8_valid_prefix(const uint8_t *s, size_t n);

#endif
