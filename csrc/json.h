/* json.h -- a strict RFC 8259 reader written for the core.  It parses one
 * JSON text into a flat array of nodes that borrow from the input; string
 * values are unescaped on demand.  Everything the parser accepts has been
 * fully validated (UTF-8, escapes, surrogate pairs, number grammar), so the
 * accessors below never fail on content. */
#ifndef PANTO_JSON_H
#define PANTO_JSON_H

#include "util.h"
#include "panto.h"

enum { JV_NULL = 1, JV_FALSE, JV_TRUE, JV_NUMBER, JV_STRING, JV_ARRAY, JV_OBJECT };

#define PT_JSON_HINTS 8

typedef struct {
    uint8_t type;       /* JV_* */
    uint8_t escaped;    /* JV_STRING: the raw text contains a backslash */
    uint32_t next;      /* index of the next sibling; 0 = none */
    uint32_t first;     /* JV_ARRAY/JV_OBJECT: first child; 0 = none.
                           An object's children alternate key, value. */
    uint32_t count;     /* containers: number of elements / members */
    const char *p;      /* JV_STRING: raw bytes between the quotes;
                           JV_NUMBER: the number text; others: the text */
    size_t len;
} jnode;

typedef struct {
    jnode *nodes;       /* nodes[0] is the root */
    size_t n;
    size_t cap;
    size_t max_nodes;   /* 0: no limit; else a text needing more values
                           fails with "too many values" (bounds memory) */
    int over;           /* the last parse hit max_nodes */
    /* Keys whose values the reader never looks at, at any depth: their
     * members are validated exactly as the others but get no nodes (the
     * object's count still counts them; max_nodes counts the nodes they
     * would have taken, so limits do not move).  NULL-terminated list of
     * raw key texts (a key written with escapes is always kept). */
    const char *const *skip_keys;   /* set with pt_json_skip_keys */
    const char *skip_by_len[32];   /* the skip key of each length */
    /* The last long string value the reader validated (its raw bytes
     * between the quotes, at least PT_JSON_SEEN_MIN of them): a string
     * that repeats it byte for byte is valid without a second scan (a
     * Responses stream repeats the whole text in three `.done` events;
     * the first matches a hint, the next two this). */
    int seen_on;        /* the caller's choice (off: never used) */
    uint8_t *seen;
    size_t seen_len, seen_cap;
    int seen_esc;
    int seen_hinted;    /* it matched a hint (a scanned one is not
                           replaced by a hinted one: it has no hint) */
    /* Texts a long string value is likely to hold, unescaped (valid
     * UTF-8): a string that unescapes to exactly one of them is checked
     * against it, which proves it valid, instead of scanned (the Responses
     * wire repeats a block's text in its `.done` events). */
    const uint8_t *hint[PT_JSON_HINTS];
    size_t hint_len[PT_JSON_HINTS];
    unsigned n_hints;
    uint64_t n_hinted, n_seen;   /* strings checked either way (tests) */
} jdoc;

#define PT_JSON_SEEN_MIN 1024

PT_INTERNAL void pt_json_doc_free(jdoc *d);
/* Free the value tree of the last parse (the next parse builds a new one);
 * the remembered string (seen) stays. */
PT_INTERNAL void pt_json_doc_trim(jdoc *d);

/* The string scanner: s[*pi] is just past an opening quote; on success
 * (0) *pi is the index of the closing quote and *escaped is set when the
 * string holds a backslash (else left alone).  Everything parse accepts in
 * a string is checked (escapes, surrogate pairs, UTF-8, no control bytes);
 * -1 on anything else.  pt_json_scan_num: a number at s[*pi] (the full
 * grammar), *pi just past it; -1 if it is not one. */
PT_INTERNAL int pt_json_scan_str(const uint8_t *s, size_t len, size_t *pi, int *escaped);
PT_INTERNAL int pt_json_scan_num(const uint8_t *s, size_t len, size_t *pi);
/* Set (or with NULL clear) d->skip_keys.  Only keys shorter than 32 bytes
 * and of a length no earlier key has are skipped (the others are built). */
PT_INTERNAL void pt_json_skip_keys(jdoc *d, const char *const *keys);
PT_INTERNAL size_t pt_json_doc_memory(const jdoc *d);

/* Parse buf[0..len) as exactly one JSON text (surrounding whitespace
 * allowed).  Reuses d's node storage.  Returns 0, or -1 with *err_off and
 * *err_msg (a static string) set; err_msg "out of memory" when allocation
 * failed, "nesting too deep" past max_depth. */
PT_INTERNAL int pt_json_parse(jdoc *d, const uint8_t *buf, size_t len, uint32_t max_depth,
               size_t *err_off, const char **err_msg);

/* Member `key` of object `obj`, or NULL if obj is NULL, not an object, or
 * lacks the key (keys compared after unescaping; last duplicate wins). */
PT_INTERNAL const jnode *pt_json_get(const jdoc *d, const jnode *obj, const char *key);
/* Element i of array `arr`, or NULL. */
PT_INTERNAL const jnode *pt_json_at(const jdoc *d, const jnode *arr, size_t i);
/* Child iteration: first child / next sibling, or NULL. */
PT_INTERNAL const jnode *pt_json_first(const jdoc *d, const jnode *n);
PT_INTERNAL const jnode *pt_json_next(const jdoc *d, const jnode *n);

/* n is a string: store its unescaped value in *out, borrowing the input
 * when it had no escapes, else written into arena a.  Returns 0, or -1 on
 * out of memory or when n is not a string. */
PT_INTERNAL int pt_json_string(const jnode *n, parena *a, panto_str *out);
/* The escaped string body s[0..len) (validated by the reader) unescaped
 * into dst: its length.  s and dst must have PT_SLACK bytes past len that
 * may be read (s) and overwritten (dst) -- a pbuf or an arena allocation
 * (util.h) -- so it moves 16 bytes at a time with no length-dependent
 * branch.  Strings of the fast paths only: pt_json_string takes any. */
PT_INTERNAL size_t pt_json_unescape_slack(const uint8_t *s, size_t len, uint8_t *dst);
/* n is a string equal to the NUL-terminated s (after unescaping). */
PT_INTERNAL int pt_json_string_eq(const jnode *n, const char *s);
/* n is a non-negative integer number: its value, saturating at UINT64_MAX.
 * Returns 0, or -1 if n is NULL, not a number or negative/fractional. */
PT_INTERNAL int pt_json_u64(const jnode *n, uint64_t *out);
/* n is NULL or JSON null. */
PT_INTERNAL int pt_json_is_null(const jnode *n);

#endif
