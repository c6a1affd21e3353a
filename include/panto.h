/*
 * panto.h -- the C ABI of panto's stream core.
 *
 * The core is sans-I/O: the host reads bytes from wherever it likes (an HTTP
 * body, a file, a test fixture), hands them to panto_stream_feed(), and pulls
 * decoded events with panto_next_event().  The core never touches sockets,
 * threads, clocks or global state; all memory it allocates belongs to one
 * panto_stream and is released by panto_stream_free().
 *
 * Conventions (libgit2 style):
 *   - handles are opaque; every function returns an int status and writes
 *     results through out-parameters;
 *   - strings are panto_str {ptr, len}: NOT NUL-terminated, always valid
 *     UTF-8 on the provider wires, and BORROWED from the stream: they stay
 *     valid until the next call that takes that stream (feed, finish,
 *     next_event, free);
 *   - a stream is not thread-safe; distinct streams share nothing and may be
 *     used from different threads at once.
 *
 * The terminal invariant (provider wires): PANTO_EV_MESSAGE_COMPLETE is the
 * last event of a stream.  Every panto_next_event() after it returns
 * PANTO_DONE, and PANTO_DONE is never returned before it.  Input that ends
 * before the terminal event yields a PANTO_ERR_TRUNCATED error instead.
 *
 * docs/abi.md explains the contract in prose; this header is the reference.
 */
#ifndef PANTO_H
#define PANTO_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* PANTO_EXTERN(type) marks every function of the ABI (on the declarations
 * below, libgit2's GIT_EXTERN).  Building libpanto as a Windows DLL defines
 * PANTO_SHARED_BUILD; programs linking that DLL define PANTO_SHARED. */
#if defined(_WIN32) && defined(PANTO_SHARED_BUILD)
#define PANTO_EXTERN(type) __declspec(dllexport) type
#elif defined(_WIN32) && defined(PANTO_SHARED)
#define PANTO_EXTERN(type) __declspec(dllimport) type
#elif defined(__GNUC__)
#define PANTO_EXTERN(type) __attribute__((visibility("default"))) type
#else
#define PANTO_EXTERN(type) type
#endif

/* The library version, "MAJOR.MINOR.PATCH" from the three integer macros in
 * the CDEF region below (the single source of the version: panto_version(),
 * CMake and the Python package metadata read them). */
#define PANTO_VERSION_STR_(x) #x
#define PANTO_VERSION_STR(x) PANTO_VERSION_STR_(x)
#define PANTO_VERSION                                                  \
    PANTO_VERSION_STR(PANTO_VERSION_MAJOR) "." PANTO_VERSION_STR(      \
        PANTO_VERSION_MINOR) "." PANTO_VERSION_STR(PANTO_VERSION_PATCH)

/*
 * Everything between the two CDEF markers is read verbatim by the Python
 * binding's cffi build (python/panto/_build_ffi.py).  It may hold only plain
 * declarations, enums, structs and integer #defines: no other preprocessor
 * lines.  The reader strips PANTO_EXTERN(type) down to `type`.
 */
/* PANTO_CDEF_BEGIN */

/* Bumped on every incompatible change to the declarations below.  Bindings
 * compare it with panto_abi_version() when they load the library. */
#define PANTO_ABI_VERSION 2

/* The library version (see PANTO_VERSION above). */
#define PANTO_VERSION_MAJOR 0
#define PANTO_VERSION_MINOR 1
#define PANTO_VERSION_PATCH 0

/* The layout version of panto_stream_options; see PANTO_STREAM_OPTIONS_INIT. */
#define PANTO_STREAM_OPTIONS_VERSION 1

/* Status codes returned by the functions below. */
typedef enum {
    PANTO_OK = 0,          /* success */
    PANTO_EVENT = 1,       /* panto_next_event: *ev was filled */
    PANTO_NEED_MORE = 2,   /* panto_next_event: feed more bytes (or finish) */
    PANTO_DONE = 3,        /* panto_next_event: the stream is over */
    PANTO_ERROR = -1       /* failure; panto_stream_error() says why */
} panto_status;

/* What the bytes are. */
typedef enum {
    PANTO_WIRE_SSE = 1,                 /* raw server-sent events */
    PANTO_WIRE_OPENAI_CHAT = 2,         /* OpenAI chat completions, stream */
    PANTO_WIRE_ANTHROPIC_MESSAGES = 3,  /* Anthropic messages, stream */
    PANTO_WIRE_OPENAI_RESPONSES = 4     /* OpenAI Responses API, stream */
} panto_wire;

typedef enum {
    PANTO_EV_MESSAGE_START = 1,     /* u.message_start */
    PANTO_EV_BLOCK_START = 2,       /* u.block_start */
    PANTO_EV_TOOL_DETAILS = 3,      /* u.tool_details, right after a tool_use BLOCK_START */
    PANTO_EV_CONTENT_DELTA = 4,     /* u.content_delta */
    PANTO_EV_BLOCK_COMPLETE = 5,    /* u.block_complete */
    PANTO_EV_MESSAGE_COMPLETE = 6,  /* u.message_complete; the terminal event */
    PANTO_EV_SSE = 7                /* u.sse; PANTO_WIRE_SSE only */
} panto_event_kind;

typedef enum {
    PANTO_BLOCK_TEXT = 1,
    PANTO_BLOCK_THINKING = 2,
    PANTO_BLOCK_REDACTED_THINKING = 3,
    PANTO_BLOCK_TOOL_USE = 4,
    PANTO_BLOCK_SERVER = 5          /* any other block (server_tool_use,
                                       web_search_tool_result, ...), kept
                                       opaque: its complete JSON object */
} panto_block_kind;

/* panto_block_complete.flags: PARTIAL marks a block cut short by an error,
 * holding what arrived before it (see panto_next_event). */
#define PANTO_BLOCK_FLAG_PARTIAL 1

/* Normalized stop reasons; the provider's own string is kept beside it. */
typedef enum {
    PANTO_STOP_STOP = 1,      /* natural end or stop sequence */
    PANTO_STOP_TOOL_USE = 2,  /* the model wants tool results */
    PANTO_STOP_LENGTH = 3,    /* max_tokens or context window */
    PANTO_STOP_REFUSAL = 4,   /* refusal / content filter */
    PANTO_STOP_PAUSE = 5,     /* Anthropic pause_turn */
    PANTO_STOP_ERROR = 6,     /* reserved for hosts (a message cut by an error) */
    PANTO_STOP_OTHER = 7      /* anything else, or none given */
} panto_stop_reason;

typedef enum {
    PANTO_ERR_NONE = 0,
    PANTO_ERR_BAD_SSE = 1,           /* bytes that are not an event stream */
    PANTO_ERR_BAD_JSON = 2,          /* an event payload is not valid JSON */
    PANTO_ERR_PROTOCOL = 3,          /* valid JSON that breaks the wire's rules */
    PANTO_ERR_PROVIDER = 4,          /* the provider sent an error object */
    PANTO_ERR_TRUNCATED = 5,         /* input ended before the terminal event */
    PANTO_ERR_LIMIT = 6,             /* a panto_stream_options limit was hit */
    PANTO_ERR_INVALID_ARGUMENT = 7,  /* misuse of the API */
    PANTO_ERR_NO_MEMORY = 8          /* allocation failed */
} panto_error_code;

/* A borrowed string: len bytes at ptr, no terminating NUL guaranteed. */
typedef struct {
    const char *ptr;
    size_t len;
} panto_str;

/* Token counts, normalized across wires.  input_tokens excludes cached
 * tokens; reasoning_tokens is a part of output_tokens, not added to it. */
typedef struct {
    uint64_t input_tokens;
    uint64_t cache_read_tokens;
    uint64_t cache_write_tokens;
    uint64_t output_tokens;
    uint64_t reasoning_tokens;
} panto_usage;

typedef struct {
    panto_str id;
    panto_str model;
    panto_usage usage;          /* what the wire reported so far (Anthropic) */
} panto_message_start;

/* Fields holding an enum value are int32_t, so the layout never depends on
 * the compiler's enum size. */
typedef struct {
    uint32_t index;             /* 0, 1, 2 ... in order of first appearance */
    int32_t block_kind;         /* panto_block_kind */
} panto_block_start;

typedef struct {
    uint32_t index;
    panto_str id;               /* the provider's tool call id */
    panto_str name;             /* the tool name */
} panto_tool_details;

typedef struct {
    uint32_t index;
    int32_t block_kind;         /* panto_block_kind */
    panto_str text;             /* text, thinking, or a raw JSON fragment */
} panto_content_delta;

typedef struct {
    uint32_t index;
    int32_t block_kind;         /* panto_block_kind */
    uint32_t flags;             /* PANTO_BLOCK_FLAG_* */
    uint32_t reserved;          /* zero */
    panto_str text;             /* full text / thinking / redacted data /
                                   tool input JSON ("{}" when none was sent) /
                                   server: the block's complete JSON object */
    panto_str signature;        /* thinking: the signature, else empty */
    panto_str tool_id;          /* tool_use: the call id, else empty */
    panto_str tool_name;        /* tool_use: the tool name, else empty */
    panto_str citations;        /* text: a JSON array of the block's citations
                                   when the wire sent any, else empty */
} panto_block_complete;

typedef struct {
    int32_t stop_reason;        /* panto_stop_reason */
    panto_str raw_stop_reason;  /* empty when the wire sent none */
    panto_usage usage;          /* final totals for the message */
} panto_message_complete;

typedef struct {
    panto_str event;            /* event type; "message" when none was given */
    panto_str data;             /* data lines joined with "\n" */
    panto_str id;               /* the last event id in force */
    int64_t retry;              /* reconnection time in ms in force, or -1 */
} panto_sse_event;

typedef struct {
    int32_t kind;               /* panto_event_kind */
    union {
        panto_message_start message_start;
        panto_block_start block_start;
        panto_tool_details tool_details;
        panto_content_delta content_delta;
        panto_block_complete block_complete;
        panto_message_complete message_complete;
        panto_sse_event sse;
    } u;
} panto_event;

typedef struct {
    int32_t code;               /* panto_error_code */
    int32_t retryable;          /* 1 when repeating the request may succeed */
    panto_str message;          /* human-readable, names what was wrong */
    panto_str provider_type;    /* PANTO_ERR_PROVIDER: e.g. "overloaded_error" */
    uint64_t offset;            /* bytes of fed input before the line (SSE
                                   errors) or the event (JSON, protocol and
                                   provider errors) at fault; for truncation
                                   and limits on undecoded input, all bytes
                                   fed */
} panto_error;

/* Limits that bound a stream's memory.  A zero limit takes the default.
 * Initialise with PANTO_STREAM_OPTIONS_INIT or panto_stream_options_init()
 * so `version` is set: panto_stream_new() refuses any other version, so a
 * field added later never reads garbage from an older caller. */
typedef struct {
    uint32_t version;           /* PANTO_STREAM_OPTIONS_VERSION */
    uint32_t max_json_depth;    /* nesting of arrays/objects (default 128) */
    size_t max_event_bytes;     /* one SSE line or event payload (default 8 MiB) */
    size_t max_block_bytes;     /* one assembled block (default 64 MiB) */
    size_t max_buffer_bytes;    /* fed but not yet decoded (default 64 MiB) */
} panto_stream_options;

typedef struct panto_stream panto_stream;

/* The ABI version the library was built with; equals PANTO_ABI_VERSION of
 * the header it was built from. */
PANTO_EXTERN(int) panto_abi_version(void);

/* The library version as "MAJOR.MINOR.PATCH"; a static string. */
PANTO_EXTERN(const char *) panto_version(void);

/* Fill *opts with the default limits for options layout `version` (pass
 * PANTO_STREAM_OPTIONS_VERSION).  Returns PANTO_OK, or PANTO_ERROR for a
 * NULL opts or a version this library does not know. */
PANTO_EXTERN(int) panto_stream_options_init(panto_stream_options *opts, unsigned int version);

/* Create a decoder for `wire` (a panto_wire value).  `opts` may be NULL for
 * the defaults.  On success stores the handle in *out and returns PANTO_OK;
 * returns PANTO_ERROR (and leaves *out NULL) for an unknown wire, a NULL
 * `out` or when memory runs out. */
PANTO_EXTERN(int) panto_stream_new(int wire, const panto_stream_options *opts,
                     panto_stream **out);

/* Append `len` bytes of input.  The bytes are copied; `buf` may be reused at
 * once.  Returns PANTO_OK, or PANTO_ERROR when the stream has failed or the
 * undecoded input would exceed max_buffer_bytes (PANTO_ERR_LIMIT).  Feeding
 * after panto_stream_finish() is PANTO_ERR_INVALID_ARGUMENT.  Feeding after
 * the terminal event is allowed: see panto_stream_finish(). */
PANTO_EXTERN(int) panto_stream_feed(panto_stream *s, const uint8_t *buf, size_t len);

/* Declare end of input.  Events still buffered remain available from
 * panto_next_event(); if the terminal event never comes, panto_next_event()
 * then fails with PANTO_ERR_TRUNCATED.  Returns PANTO_OK, or PANTO_ERROR if
 * the stream has failed -- including when the input after an already
 * delivered terminal event holds another event (PANTO_ERR_PROTOCOL). */
PANTO_EXTERN(int) panto_stream_finish(panto_stream *s);

/* Decode the next event.  Returns PANTO_EVENT and fills *ev; PANTO_NEED_MORE
 * when more input (or panto_stream_finish) is needed; PANTO_DONE once the
 * stream is over; PANTO_ERROR when it failed.  After an error every call
 * returns PANTO_ERROR with the same error -- except that once the terminal
 * event was delivered, panto_next_event keeps returning PANTO_DONE even if a
 * later feed or finish fails.  If decoding one SSE event fails, none of the
 * events it would have produced is delivered.  Strings in *ev are borrowed:
 * see the conventions above. */
PANTO_EXTERN(int) panto_next_event(panto_stream *s, panto_event *ev);

/* Decode up to `cap` events into events[0..*n), copying their strings into
 * buf[0..bufcap): the strings then live in the caller's buffer (valid until
 * the caller reuses it), so one call may span many SSE events -- the batch
 * call the bindings use instead of one call per event.  Returns PANTO_EVENT
 * when *n > 0, else what panto_next_event would return (PANTO_NEED_MORE,
 * PANTO_DONE, PANTO_ERROR).  An event whose strings alone exceed bufcap is
 * returned by itself (*n == 1) with its strings borrowed from the stream as
 * with panto_next_event (check whether a ptr lies inside buf).  The same
 * terminal invariant and errors as panto_next_event apply. */
PANTO_EXTERN(int) panto_next_events(panto_stream *s, panto_event *events, size_t cap,
                                    char *buf, size_t bufcap, size_t *n);

/* A snapshot of the blocks still open -- what a host keeps of a message cut
 * short by an error or a cancel, without joining the deltas itself.  Fills
 * *out with the k-th open block in index order (k = 0, 1, ...) and flags
 * PANTO_BLOCK_FLAG_PARTIAL, assembled as its BLOCK_COMPLETE would be (tool
 * input: the JSON text so far).  Returns PANTO_OK, PANTO_DONE when fewer
 * than k + 1 blocks are open, PANTO_ERROR for NULL arguments.  Strings are
 * borrowed like event strings.  Blocks a failed SSE event had begun to
 * change hold that event's part too. */
PANTO_EXTERN(int) panto_stream_partial_block(const panto_stream *s, uint32_t k,
                                             panto_block_complete *out);

/* Copy the stream's error into *out (code PANTO_ERR_NONE when there is
 * none).  The strings are borrowed like event strings.  Returns PANTO_OK,
 * or PANTO_ERROR when s or out is NULL. */
PANTO_EXTERN(int) panto_stream_error(const panto_stream *s, panto_error *out);

/* Bytes of heap memory the stream holds right now (buffers included). */
PANTO_EXTERN(size_t) panto_stream_memory(const panto_stream *s);

/* Make the stream new again (same wire and options) for a retried request,
 * keeping its buffers so the retry allocates nothing.  Strings of earlier
 * events and errors become invalid.  Returns PANTO_OK, or PANTO_ERROR for a
 * NULL stream. */
PANTO_EXTERN(int) panto_stream_reset(panto_stream *s);

/* Release the stream and everything it allocated.  NULL is a no-op. */
PANTO_EXTERN(void) panto_stream_free(panto_stream *s);

/* Check that buf[0..len) is exactly one JSON text under RFC 8259 with
 * nesting no deeper than max_depth (0 = the default, 128).  Returns PANTO_OK
 * or PANTO_ERROR; on error, when non-NULL, *err_offset gets the byte offset
 * of the problem and *err_message a static NUL-terminated description. */
PANTO_EXTERN(int) panto_json_validate(const uint8_t *buf, size_t len, uint32_t max_depth,
                        size_t *err_offset, const char **err_message);

/* Static lowercase names for enum values ("tool_use", "content_delta",
 * "openai-chat", "bad_json", ...); "unknown" for values out of range. */
PANTO_EXTERN(const char *) panto_wire_name(int wire);
PANTO_EXTERN(const char *) panto_event_kind_name(int kind);
PANTO_EXTERN(const char *) panto_block_kind_name(int kind);
PANTO_EXTERN(const char *) panto_stop_reason_name(int reason);
PANTO_EXTERN(const char *) panto_error_code_name(int code);

/* PANTO_CDEF_END */

/* Static initialiser: `panto_stream_options o = PANTO_STREAM_OPTIONS_INIT;`
 * gives the defaults for every limit. */
#define PANTO_STREAM_OPTIONS_INIT {PANTO_STREAM_OPTIONS_VERSION, 0, 0, 0, 0}

#ifdef __cplusplus
}
#endif

#endif /* PANTO_H */
