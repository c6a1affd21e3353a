/* util.h -- growable buffers and a chunked arena, the only allocators the
 * core uses.  Every byte they hold is counted, so panto_stream_memory() can
 * report it and tests can prove memory stays bounded. */
#ifndef PANTO_UTIL_H
#define PANTO_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Result of an allocation that may also hit a configured limit. */
enum { PU_OK = 0, PU_NOMEM = -1, PU_LIMIT = -2 };

/* A contiguous growable byte buffer.  Grows geometrically; `limit` caps
 * len (not cap).  Zero-initialised is an empty buffer. */
typedef struct {
    uint8_t *p;
    size_t len;
    size_t cap;
} pbuf;

/* Ensure room for `extra` more bytes; PU_LIMIT if len + extra > limit. */
int pbuf_reserve(pbuf *b, size_t extra, size_t limit);
int pbuf_append(pbuf *b, const void *src, size_t n, size_t limit);
/* Drop the first n bytes (memmove the rest down). */
void pbuf_consume(pbuf *b, size_t n);
void pbuf_clear(pbuf *b);         /* len = 0, keeps capacity */
void pbuf_free(pbuf *b);          /* releases memory, back to empty */

/* A bump allocator made of chunks: allocations never move, so pointers into
 * it stay valid until parena_reset().  Reset keeps one chunk for reuse. */
typedef struct parena_chunk parena_chunk;
typedef struct {
    parena_chunk *head;   /* newest chunk first */
    size_t bytes;         /* total bytes held in chunks */
} parena;

void *parena_alloc(parena *a, size_t n);   /* NULL on out of memory */
/* Copy n bytes into the arena; returns the copy or NULL. n == 0 gives a
 * valid non-NULL pointer. */
char *parena_dup(parena *a, const void *src, size_t n);
void parena_reset(parena *a);
void parena_free(parena *a);

/* UTF-8: length of the longest prefix of s[0..n) that is valid UTF-8
 * (RFC 3629: no overlongs, no surrogates, max U+10FFFF). */
size_t utf8_valid_prefix(const uint8_t *s, size_t n);

#endif
