/* sse.h -- the WHATWG EventSource parser (HTML Living Standard, "Parsing an
 * event stream"), sans-I/O.  It reads lines from a byte range owned by the
 * caller and keeps only the event being built between calls. */
#ifndef PANTO_SSE_H
#define PANTO_SSE_H

#include "util.h"

typedef struct {
    pbuf data;          /* data buffer of the event being built */
    pbuf event;         /* event type buffer */
    pbuf last_id;       /* last event ID buffer; persists across events */
    int64_t retry;      /* reconnection time in ms, -1 until set */
    size_t scanned;     /* bytes of the pending partial line already searched
                           for a line end (avoids rescanning long lines) */
    uint64_t line_no;   /* 1-based number of the next line, for messages */
    size_t max_event_bytes;
    int strict;         /* provider wires: unknown field names, and fields
                           that are not UTF-8, are errors */
    int skip_lf;        /* last line ended in CR: a leading LF is its tail */
    int started;        /* past the optional BOM */
    int in_event;       /* a field line of the event being built was seen */
    int seen_field;     /* a comment or known field was seen */
    /* Strict mode: the first unknown field line seen while seen_field was
     * still 0 (line 0: none).  A body that never shows a comment or known
     * field is not an event stream (an HTML or JSON error page), reported
     * by pt_sse_not_a_stream at end of input with this line; one that does
     * is a stream, and the line was an ignored unknown field (WHATWG). */
    uint64_t odd_line_no;
    uint64_t odd_line_off;
    char odd_snip[200];
    /* Byte offsets into the whole input: the caller sets `base` to the
     * offset of in[0] before each pt_sse_parse call. */
    uint64_t base;
    uint64_t line_off;  /* start of the last line processed (errors) */
    uint64_t ev_off;    /* start of the first line of the event being built
                           or just dispatched */
} sse_parser;

/* A dispatched event; pointers valid until the next sse_* call. */
typedef struct {
    const char *event;   /* "message" when no event field was given */
    size_t event_len;
    const char *data;
    size_t data_len;
    const char *id;
    size_t id_len;
    int64_t retry;
} sse_event;

enum { SSE_EVENT = 1, SSE_NEED_MORE = 2, SSE_ERROR = -1 };

/* An error: a panto_error_code, and a message written into msg. */
typedef struct {
    int code;
    char msg[256];
} sse_error;

PT_INTERNAL void pt_sse_init(sse_parser *p, size_t max_event_bytes, int strict);
PT_INTERNAL void pt_sse_free(sse_parser *p);
PT_INTERNAL size_t pt_sse_memory(const sse_parser *p);

/* Parse lines from in[0..len).  Stores in *consumed how many bytes were
 * used up (whole lines only; a partial last line stays with the caller, who
 * passes it again, followed by more bytes, next time).  Returns SSE_EVENT
 * with *ev filled when an event is dispatched, SSE_NEED_MORE when no
 * complete line is left, or SSE_ERROR with *err filled (PANTO_ERR_LIMIT
 * for a line or event over max_event_bytes, PANTO_ERR_BAD_SSE in strict
 * mode).  At end of input the caller simply stops: per the standard, a
 * partial line and an undispatched event are discarded. */
/* At end of input: 1 with *err filled (PANTO_ERR_BAD_SSE, "line N: not an
 * SSE field: ...", *off the offset of that line) when, in strict mode, the
 * body held an unknown field line and never a comment or known field; the
 * decision is on the body as a whole, not its first line.  0 otherwise. */
PT_INTERNAL int pt_sse_not_a_stream(const sse_parser *p, sse_error *err, uint64_t *off);

/* The first CR or LF in s[0..n), or NULL. */
PT_INTERNAL const uint8_t *pt_sse_find_eol(const uint8_t *s, size_t n);

PT_INTERNAL int pt_sse_parse(sse_parser *p, const uint8_t *in, size_t len, size_t *consumed,
              sse_event *ev, sse_error *err);

#endif
