/*
 * panto._fastevents -- builds StreamDecoder's content-delta events in C.
 *
 * A small CPython extension against the limited API (abi3, 3.10), beside the
 * cffi module panto._panto_cffi.  It does not link the core: the one core of
 * the process lives inside the cffi module (whose panto_* symbols are
 * private), which hands over the addresses of panto_stream_feed and
 * panto_next_event once (setup()); every call here then gets the address of
 * a decoder's pantopy_ctx (python/panto/_build_ffi.py), whose stream that
 * core created.
 *
 * pull(ctx) pulls events until the stream needs more input, and builds a
 * panto.events.ContentDelta per content delta (or per run of one block's
 * deltas with ctx->merge_deltas) directly: the object is allocated with the
 * class's tp_alloc and its three slots are stored at offsets found once by
 * setup() (which checks them on a live instance; otherwise every field goes
 * through PyObject_GenericSetAttr, i.e. object.__setattr__, which a frozen
 * dataclass's own __init__ uses too).  Any other event stops the loop and
 * stays in ctx->ev for Python to convert (they are a few per message).
 *
 * Everything runs with the GIL held (the strings of the last event are
 * borrowed from the stream until the next call on it).
 */

#ifndef Py_LIMITED_API
#define Py_LIMITED_API 0x030A0000  /* CMake's USE_SABI defines it too */
#endif
#include <Python.h>

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <wchar.h>

#include "panto.h"

#if defined(__SSE2__) && !defined(PANTO_NO_SIMD)
#include <emmintrin.h>
#define PANTOPY_SSE2 1
#endif

/* Must match _CTX in python/panto/_build_ffi.py; setup() compares the
 * size and the offsets with cffi's.  `buf` is the cffi path's (NULL here:
 * pull() joins a run's text in a buffer on its own stack, which no other
 * call -- not even one re-entered from a finalizer -- can reach). */
#define PANTOPY_SCRATCH_BYTES 4096
typedef struct pantopy_buf pantopy_buf;
typedef struct {
    panto_stream *s;
    panto_event ev;
    int64_t tail;
    int skip_deltas;
    int merge_deltas;
    size_t nbytes;
    pantopy_buf *buf;
} pantopy_ctx;

typedef int (*feed_fn)(panto_stream *, const uint8_t *, size_t);
typedef int (*next_fn)(panto_stream *, panto_event *);

/* Set once by setup(); the module keeps one configuration per process
 * (single-phase init: not for isolated subinterpreters). */
static feed_fn g_feed;
static next_fn g_next;
static PyObject *g_delta_cls;            /* panto.events.ContentDelta */
static allocfunc g_alloc;                /* its tp_alloc */
static PyObject *g_kinds[16];            /* block kind names, by value */
static PyObject *g_names[3];             /* "index", "kind", "text" */
static Py_ssize_t g_off[3];              /* their slots' byte offsets, or -1 */
static int g_direct;                     /* 1: store the slots directly */

/* The iterator pull() returns: over a list of events, with a position the
 * C __iter__ can read (an exhausted one needs no reclaiming). */
typedef struct {
    PyObject_HEAD
    PyObject *list;
    Py_ssize_t pos, n;
} Events;
static PyTypeObject *g_events_type;

static PyObject *events_next(PyObject *o)
{
    Events *e = (Events *)o;
    if (e->pos >= e->n) {
        /* exhausted: let go of the events (the decoder keeps this iterator
         * until its next feed, and the last one may carry a read's text) */
        Py_CLEAR(e->list);
        return NULL;
    }
    PyObject *x = PyList_GetItem(e->list, e->pos++);
    Py_XINCREF(x);
    return x;
}

static void events_dealloc(PyObject *o)
{
    PyTypeObject *tp = Py_TYPE(o);
    Py_XDECREF(((Events *)o)->list);
    ((freefunc)PyType_GetSlot(tp, Py_tp_free))(o);
    Py_DECREF(tp);
}

static PyType_Slot events_slots[] = {
    {Py_tp_iter, (void *)PyObject_SelfIter},
    {Py_tp_iternext, (void *)events_next},
    {Py_tp_dealloc, (void *)events_dealloc},
    {Py_tp_doc, (void *)"StreamDecoder's events after a feed (built by panto._fastevents)."},
    {0, NULL},
};

static PyType_Spec events_spec = {
    "panto._fastevents.Events",
    sizeof(Events),
    0,
    Py_TPFLAGS_DEFAULT,
    events_slots,
};

/* Takes the reference to list. */
static PyObject *events_new(PyObject *list)
{
    Events *e = (Events *)PyType_GenericAlloc(g_events_type, 0);
    if (e == NULL) {
        Py_DECREF(list);
        return NULL;
    }
    e->list = list;
    e->pos = 0;
    e->n = PyList_Size(list);
    return (PyObject *)e;
}

/* StreamDecoder's slots read by the C __iter__ and feed (install()):
 * _addr, _it, _leftover; byte offsets, found like ContentDelta's. */
static PyObject *g_decoder_cls;
static Py_ssize_t g_dec_off[3];
static PyObject *g_str_iter, *g_str_pull, *g_str_feed, *g_str_failed;

static pantopy_ctx *ctx_of(PyObject *addr)
{
    void *p = PyLong_AsVoidPtr(addr);
    if (p == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "NULL pantopy_ctx");
        return NULL;
    }
    pantopy_ctx *ctx = (pantopy_ctx *)p;
    if (ctx->s == NULL) {
        PyErr_SetString(PyExc_ValueError, "the decoder's stream is released");
        return NULL;
    }
    return ctx;
}

/* The str of UTF-8 text, as PyUnicode_DecodeUTF8(s, n, NULL).  Text with
 * non-ASCII characters (an accented letter, an emoji) costs CPython's decoder
 * a slow path that widens its buffer as larger characters turn up; here it
 * is converted to code points in one pass and the str made from those in
 * its final width.  Anything that is not well-formed UTF-8 (the core checks
 * it, so never on the provider wires) goes to CPython's decoder, which
 * raises the usual UnicodeDecodeError. */
#define UCS4_STACK 512
#define UCS4_SLACK 16 /* u[] takes 16 code points at a time (SSE2) */
static PyObject *utf8_str(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    unsigned char high = 0;
    for (size_t i = 0; i < n; i++)
        high |= p[i];
#if WCHAR_MAX > 0xFFFF
    if (high & 0x80) {
        uint32_t stack[UCS4_STACK + UCS4_SLACK];
        uint32_t *u = n <= UCS4_STACK ? stack : PyMem_Malloc((n + UCS4_SLACK) * sizeof *u);
        if (u == NULL)
            return PyErr_NoMemory();
        size_t k = 0, i = 0;
        uint32_t max = 0;
        while (i < n) {
#ifdef PANTOPY_SSE2
            /* The ASCII before the next other byte, 16 bytes at a time:
             * widened and stored whole (u has the slack), counted up to
             * that byte -- the text is mostly ASCII with an accent or an
             * emoji every few words, so runs are short and a loop per byte
             * or per word mispredicted at the end of each. */
            if (n - i >= 16) {
                __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(p + i));
                __m128i z = _mm_setzero_si128();
                __m128i lo = _mm_unpacklo_epi8(v, z), hi = _mm_unpackhi_epi8(v, z);
                _mm_storeu_si128((__m128i *)(void *)(u + k), _mm_unpacklo_epi16(lo, z));
                _mm_storeu_si128((__m128i *)(void *)(u + k + 4), _mm_unpackhi_epi16(lo, z));
                _mm_storeu_si128((__m128i *)(void *)(u + k + 8), _mm_unpacklo_epi16(hi, z));
                _mm_storeu_si128((__m128i *)(void *)(u + k + 12), _mm_unpackhi_epi16(hi, z));
                size_t a = (size_t)__builtin_ctz((unsigned)_mm_movemask_epi8(v) | 0x10000u);
                k += a;
                i += a;
                if (a == 16 || i >= n)
                    continue;
            }
#endif
            uint32_t c = p[i];
            if (c < 0x80) {
                u[k++] = c;
                i++;
                /* ASCII runs 8 bytes at a time */
                while (n - i >= 8) {
                    uint64_t w;
                    memcpy(&w, p + i, 8);
                    if (w & 0x8080808080808080u)
                        break;
                    for (int b = 0; b < 8; b++)
                        u[k + b] = p[i + b];
                    k += 8;
                    i += 8;
                }
                continue;
            }
            uint32_t cp;
            if (c < 0xE0) {  /* 2 bytes */
                if (c < 0xC2 || n - i < 2 || (p[i + 1] & 0xC0) != 0x80)
                    break;
                cp = (c & 0x1F) << 6 | (p[i + 1] & 0x3Fu);
                i += 2;
            } else if (c < 0xF0) {  /* 3 bytes: no overlong form, no surrogate */
                if (n - i < 3 || ((p[i + 1] & 0xC0) ^ 0x80) | ((p[i + 2] & 0xC0) ^ 0x80))
                    break;
                cp = (c & 0x0F) << 12 | (p[i + 1] & 0x3Fu) << 6 | (p[i + 2] & 0x3Fu);
                if (cp < 0x800 || (cp >= 0xD800 && cp < 0xE000))
                    break;
                i += 3;
            } else {  /* 4 bytes, up to U+10FFFF */
                if (c > 0xF4 || n - i < 4 ||
                    ((p[i + 1] & 0xC0) ^ 0x80) | ((p[i + 2] & 0xC0) ^ 0x80) | ((p[i + 3] & 0xC0) ^ 0x80))
                    break;
                cp = (c & 0x07) << 18 | (p[i + 1] & 0x3Fu) << 12 | (p[i + 2] & 0x3Fu) << 6 |
                     (p[i + 3] & 0x3Fu);
                if (cp < 0x10000 || cp > 0x10FFFF)
                    break;
                i += 4;
            }
            u[k++] = cp;
            max |= cp;  /* (below 0x100 / 0x10000 exactly when every cp is) */
        }
        PyObject *r = NULL;
        if (i == n) {
            if (max < 0x100) {  /* Latin-1: one byte per character */
                unsigned char *b = (unsigned char *)u;
                for (size_t m = 0; m < k; m++)
                    b[m] = (unsigned char)u[m];
                r = PyUnicode_DecodeLatin1((const char *)b, (Py_ssize_t)k, NULL);
            } else {
                r = PyUnicode_FromWideChar((const wchar_t *)u, (Py_ssize_t)k);
            }
        }
        if (u != stack)
            PyMem_Free(u);
        if (i == n)
            return r;
    }
#endif
    return PyUnicode_DecodeUTF8(s, (Py_ssize_t)n, NULL);
}

/* memcpy for the short texts of most deltas (a few bytes: a call to the
 * library's memcpy cost more than the copy), with fixed-size moves the
 * compiler turns into plain loads and stores. */
static inline void copy_text(char *d, const char *s, size_t n)
{
    if (n >= 8) {
        if (n > 16) {
            memcpy(d, s, n);
        } else {
            memcpy(d, s, 8);
            memcpy(d + n - 8, s + n - 8, 8);
        }
        return;
    }
    if (n & 4) {
        memcpy(d, s, 4);
        d += 4;
        s += 4;
    }
    if (n & 2) {
        memcpy(d, s, 2);
        d += 2;
        s += 2;
    }
    if (n & 1)
        *d = *s;
}

/* copy_text into the scratch buffer, `room` bytes of it free: most deltas
 * (a few bytes each) in two fixed 16-byte moves, whatever their length --
 * copy_text's branches on the length mispredicted about once a delta.  The
 * 32 bytes read from s stay inside s's page, so they cannot fault (and the
 * core's buffers have slack past every string, so they stay inside its
 * allocation too); the bytes written past n are scratch, overwritten next. */
static inline void copy_text_scratch(char *d, const char *s, size_t n, size_t room)
{
#ifdef PANTOPY_SSE2
    if (n <= 32 && room >= 32 && ((uintptr_t)s & 4095u) <= 4096u - 32u) {
        _mm_storeu_si128((__m128i *)(void *)d, _mm_loadu_si128((const __m128i *)(const void *)s));
        _mm_storeu_si128((__m128i *)(void *)(d + 16),
                         _mm_loadu_si128((const __m128i *)(const void *)(s + 16)));
        return;
    }
#else
    (void)room;
#endif
    copy_text(d, s, n);
}

/* A new ContentDelta(index, kinds[kind], text); text is UTF-8 (strict, as
 * the cffi path decodes it). */
static PyObject *make_delta(uint32_t index, unsigned kind, const char *text, size_t len)
{
    if (g_delta_cls == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "panto._fastevents: setup() was not called");
        return NULL;
    }
    PyObject *vals[3];
    vals[0] = PyLong_FromUnsignedLong(index);
    if (vals[0] == NULL)
        return NULL;
    vals[1] = g_kinds[kind & 15];
    Py_INCREF(vals[1]);
    vals[2] = utf8_str(text, len);
    if (vals[2] == NULL) {
        Py_DECREF(vals[0]);
        Py_DECREF(vals[1]);
        return NULL;
    }
    PyObject *o = g_alloc((PyTypeObject *)g_delta_cls, 0);
    if (o != NULL && g_direct) {
        /* the slots are NULL in a fresh object: the references move in */
        for (int i = 0; i < 3; i++)
            *(PyObject **)((char *)o + g_off[i]) = vals[i];
        return o;
    }
    if (o != NULL) {
        for (int i = 0; i < 3; i++) {
            if (PyObject_GenericSetAttr(o, g_names[i], vals[i]) < 0) {
                Py_CLEAR(o);
                break;
            }
        }
    }
    for (int i = 0; i < 3; i++)
        Py_DECREF(vals[i]);
    return o;
}

static int append_new(PyObject *list, PyObject *o)
{
    if (o == NULL)
        return -1;
    int rc = PyList_Append(list, o);
    Py_DECREF(o);
    return rc;
}

/* pull(ctx_address) -> iterator | (list, tail)
 *
 * Pulls events from the decoder's stream until it needs more input, building
 * the content deltas (none with ctx->skip_deltas; joined per run of one
 * block with ctx->merge_deltas, a run being cut where it would exceed the
 * 4 KiB scratch buffer).  When the stream needs more input -- the
 * usual case -- returns an iterator over the events; otherwise stops and
 * returns (the events so far, tail) with tail as in pantopy_batch: 1..7 an
 * event of that kind is in ctx->ev (unconverted), -1 the stream failed, -3
 * it is done.  On an exception the events pulled so far are lost (only
 * MemoryError can happen on the provider wires, whose text is valid UTF-8). */
static PyObject *fe_pull(PyObject *self, PyObject *arg)
{
    (void)self;
    pantopy_ctx *ctx = ctx_of(arg);
    if (ctx == NULL)
        return NULL;
    PyObject *list = PyList_New(0);
    if (list == NULL)
        return NULL;
    const int skip = ctx->skip_deltas, merge = ctx->merge_deltas;
    panto_event *ev = &ctx->ev;
    char scratch[PANTOPY_SCRATCH_BYTES];
    /* the open run (merge): its block and its bytes in scratch */
    int64_t run = -1;
    uint32_t run_index = 0;
    unsigned run_kind = 0;
    size_t used = 0;
    int64_t tail;
    for (;;) {
        int rc = g_next(ctx->s, ev);
        if (rc != PANTO_EVENT) {
            tail = rc == PANTO_NEED_MORE ? -2 : rc == PANTO_DONE ? -3 : -1;
            break;
        }
        if (ev->kind != PANTO_EV_CONTENT_DELTA || (unsigned)ev->u.content_delta.block_kind >= 16u) {
            tail = ev->kind;
            break;
        }
        if (skip)
            continue;
        const panto_content_delta *d = &ev->u.content_delta;
        size_t len = d->text.len;
        if (!merge) {
            if (append_new(list, make_delta(d->index, (unsigned)d->block_kind, d->text.ptr, len)) < 0)
                goto fail;
            continue;
        }
        int64_t packed = (int64_t)d->block_kind | (int64_t)d->index << 4;
        if (run == packed && len <= sizeof scratch - used) {
            copy_text_scratch(scratch + used, d->text.ptr, len, sizeof scratch - used);
            used += len;
            continue;
        }
        if (run >= 0 && append_new(list, make_delta(run_index, run_kind, scratch, used)) < 0)
            goto fail;
        run = -1;
        if (len > sizeof scratch) {  /* a huge delta: an event of its own */
            if (append_new(list, make_delta(d->index, (unsigned)d->block_kind, d->text.ptr, len)) < 0)
                goto fail;
            continue;
        }
        copy_text(scratch, d->text.ptr, len);
        used = len;
        run = packed;
        run_index = d->index;
        run_kind = (unsigned)d->block_kind;
    }
    if (run >= 0 && append_new(list, make_delta(run_index, run_kind, scratch, used)) < 0)
        goto fail;
    ctx->tail = tail;
    if (tail == -2)
        return events_new(list);
    PyObject *t = PyLong_FromLongLong(tail);
    if (t == NULL)
        goto fail;
    PyObject *res = PyTuple_Pack(2, list, t);
    Py_DECREF(t);
    Py_DECREF(list);
    return res;
fail:
    Py_DECREF(list);
    return NULL;
}

/* feed(ctx_address, data: bytes) -> int: panto_stream_feed's result. */
static PyObject *fe_feed(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "feed(ctx_address, data) takes 2 arguments");
        return NULL;
    }
    pantopy_ctx *ctx = ctx_of(args[0]);
    if (ctx == NULL)
        return NULL;
    char *buf;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(args[1], &buf, &n) < 0)
        return NULL;
    if (g_feed == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "panto._fastevents: setup() was not called");
        return NULL;
    }
    return PyLong_FromLong(n ? g_feed(ctx->s, (const uint8_t *)buf, (size_t)n) : 0);
}

/* Finds the byte offset of each of the n slots `names` in an instance of
 * cls: stores a distinct sentinel through object.__setattr__ and looks for
 * it in the instance's words.  Returns 1 when all are found at distinct
 * offsets inside a layout without __dict__, 0 otherwise (no error set). */
static int find_slots(PyObject *cls, PyObject *const *names, int n, Py_ssize_t *off)
{
    int ok = 0;
    PyObject *o = NULL, *sentinels[8] = {NULL};
    PyObject *basic = PyObject_GetAttrString(cls, "__basicsize__");
    PyObject *item = PyObject_GetAttrString(cls, "__itemsize__");
    PyObject *dictoff = PyObject_GetAttrString(cls, "__dictoffset__");
    allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)cls, Py_tp_alloc);
    if (basic == NULL || item == NULL || dictoff == NULL || alloc == NULL || n > 8)
        goto out;
    Py_ssize_t size = PyLong_AsSsize_t(basic);
    if (size < 0 || PyLong_AsSsize_t(item) != 0 || PyLong_AsSsize_t(dictoff) != 0)
        goto out;
    o = alloc((PyTypeObject *)cls, 0);
    if (o == NULL)
        goto out;
    for (int i = 0; i < n; i++) {
        sentinels[i] = PyList_New(0);  /* fresh objects: distinct addresses */
        if (sentinels[i] == NULL || PyObject_GenericSetAttr(o, names[i], sentinels[i]) < 0)
            goto out;
    }
    for (int i = 0; i < n; i++) {
        off[i] = -1;
        for (Py_ssize_t w = (Py_ssize_t)sizeof(PyObject); w + (Py_ssize_t)sizeof(PyObject *) <= size;
             w += (Py_ssize_t)sizeof(PyObject *)) {
            if (*(PyObject **)((char *)o + w) == sentinels[i]) {
                if (off[i] != -1)
                    goto out;
                off[i] = w;
            }
        }
        if (off[i] < 0)
            goto out;
        for (int j = 0; j < i; j++)
            if (off[j] == off[i])
                goto out;
    }
    ok = 1;
out:
    PyErr_Clear();
    Py_XDECREF(o);
    for (int i = 0; i < n; i++)
        Py_XDECREF(sentinels[i]);
    Py_XDECREF(basic);
    Py_XDECREF(item);
    Py_XDECREF(dictoff);
    return ok;
}

/* setup(feed_address, next_event_address, layout, ContentDelta, kinds)
 *
 * layout: (sizeof(pantopy_ctx), offsetof s, ev, tail, skip_deltas,
 * merge_deltas, buf) as cffi sees them.  kinds: 16 block kind names.
 * Returns True when the slots are stored directly (False: through
 * object.__setattr__, slower but equally correct). */
static PyObject *fe_setup(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    (void)self;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "setup() takes 5 arguments");
        return NULL;
    }
    void *feed = PyLong_AsVoidPtr(args[0]);
    void *next = feed ? PyLong_AsVoidPtr(args[1]) : NULL;
    if (feed == NULL || next == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "NULL function address");
        return NULL;
    }
    const Py_ssize_t expect[7] = {
        (Py_ssize_t)sizeof(pantopy_ctx),
        offsetof(pantopy_ctx, s),
        offsetof(pantopy_ctx, ev),
        offsetof(pantopy_ctx, tail),
        offsetof(pantopy_ctx, skip_deltas),
        offsetof(pantopy_ctx, merge_deltas),
        offsetof(pantopy_ctx, buf),
    };
    PyObject *layout = args[2];
    if (!PyTuple_Check(layout) || PyTuple_Size(layout) != 7) {
        PyErr_SetString(PyExc_TypeError, "layout must be a 7-tuple");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < 7; i++) {
        Py_ssize_t v = PyLong_AsSsize_t(PyTuple_GetItem(layout, i));
        if (v == -1 && PyErr_Occurred())
            return NULL;
        if (v != expect[i]) {
            PyErr_Format(PyExc_ImportError,
                         "panto._fastevents was built for another pantopy_ctx layout "
                         "(field %zd: %zd, cffi says %zd): reinstall panto",
                         i, expect[i], v);
            return NULL;
        }
    }
    PyObject *cls = args[3];
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "ContentDelta must be a class");
        return NULL;
    }
    PyObject *kinds = args[4];
    if (!PyTuple_Check(kinds) || PyTuple_Size(kinds) != 16) {
        PyErr_SetString(PyExc_TypeError, "kinds must be a 16-tuple of str");
        return NULL;
    }
    for (Py_ssize_t i = 0; i < 16; i++) {
        if (!PyUnicode_Check(PyTuple_GetItem(kinds, i))) {
            PyErr_SetString(PyExc_TypeError, "kinds must be a 16-tuple of str");
            return NULL;
        }
    }
    allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)cls, Py_tp_alloc);
    if (alloc == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "ContentDelta has no tp_alloc");
        return NULL;
    }
    static const char *const names[3] = {"index", "kind", "text"};
    for (int i = 0; i < 3; i++) {
        if (g_names[i] == NULL && (g_names[i] = PyUnicode_InternFromString(names[i])) == NULL)
            return NULL;
    }
    PyObject *old = g_delta_cls;
    Py_INCREF(cls);
    g_delta_cls = cls;
    Py_XDECREF(old);
    for (Py_ssize_t i = 0; i < 16; i++) {
        PyObject *k = PyTuple_GetItem(kinds, i);
        Py_INCREF(k);
        old = g_kinds[i];
        g_kinds[i] = k;
        Py_XDECREF(old);
    }
    g_alloc = alloc;
    g_feed = (feed_fn)feed;
    g_next = (next_fn)next;
    g_direct = find_slots(cls, g_names, 3, g_off);
    return PyBool_FromLong(g_direct);
}

/* For the tests: force the object.__setattr__ path (direct=False) or go
 * back to the slots found by setup() (True, if it found them). */
static PyObject *fe_set_direct(PyObject *self, PyObject *arg)
{
    (void)self;
    int want = PyObject_IsTrue(arg);
    if (want < 0)
        return NULL;
    g_direct = want && g_delta_cls != NULL && find_slots(g_delta_cls, g_names, 3, g_off);
    return PyBool_FromLong(g_direct);
}

#define DEC_SLOT(self, i) (*(PyObject **)((char *)(self) + g_dec_off[i]))

/* StreamDecoder.__iter__ once install()ed: the usual case -- the last
 * iteration's events all taken, nothing left over, the C path on -- pulls
 * directly (a Python __iter__ costs a frame per feed); anything else goes
 * to the Python implementation, _iter(). */
static PyObject *dec_iter(PyObject *self, PyObject *unused)
{
    (void)unused;
    PyObject *addr = DEC_SLOT(self, 0), *it = DEC_SLOT(self, 1), *left = DEC_SLOT(self, 2);
    if (addr == NULL || it == NULL || left == NULL || !PyList_Check(left) || PyList_Size(left) != 0 ||
        (it != Py_None && (Py_TYPE(it) != g_events_type || ((Events *)it)->pos < ((Events *)it)->n)))
        return PyObject_CallMethodObjArgs(self, g_str_iter, NULL);
    void *p = PyLong_AsVoidPtr(addr);
    if (p == NULL) {
        if (PyErr_Occurred())
            return NULL;
        return PyObject_CallMethodObjArgs(self, g_str_iter, NULL);  /* released, or the cffi path */
    }
    PyObject *r = fe_pull(NULL, addr);
    if (r == NULL)
        return NULL;
    if (Py_TYPE(r) != g_events_type) {  /* (events, tail): the general loop */
        PyObject *g = PyObject_CallMethodObjArgs(self, g_str_pull, r, NULL);
        Py_DECREF(r);
        return g;
    }
    PyObject *old = DEC_SLOT(self, 1);  /* (read again: pull may have run other code) */
    Py_INCREF(r);
    DEC_SLOT(self, 1) = r;  /* self._it = r: kept to reclaim what an abandoned loop left */
    Py_XDECREF(old);
    return r;
}

/* StreamDecoder.feed once install()ed: bytes on the C path are fed here;
 * anything else goes to the Python implementation, _feed(). */
static PyObject *dec_feed(PyObject *self, PyObject *data)
{
    PyObject *addr = DEC_SLOT(self, 0);
    void *p;
    if (addr == NULL || !PyBytes_CheckExact(data) || (p = PyLong_AsVoidPtr(addr)) == NULL) {
        if (PyErr_Occurred())
            return NULL;
        return PyObject_CallMethodObjArgs(self, g_str_feed, data, NULL);
    }
    pantopy_ctx *ctx = (pantopy_ctx *)p;
    char *buf;
    Py_ssize_t n;
    if (ctx->s == NULL || PyBytes_AsStringAndSize(data, &buf, &n) < 0)
        return PyObject_CallMethodObjArgs(self, g_str_feed, data, NULL);
    if (n && g_feed(ctx->s, (const uint8_t *)buf, (size_t)n) != 0)
        return PyObject_CallMethodObjArgs(self, g_str_failed, NULL);  /* raises */
    Py_RETURN_NONE;
}

/* feed(data) with a keyword, or the wrong number of arguments: the Python
 * version says what is wrong, or takes it. */
static PyObject *dec_feed_call(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    if (kwnames == NULL && nargs == 1)
        return dec_feed(self, args[0]);
    PyObject *res = NULL, *kw = NULL, *fn = PyObject_GetAttr(self, g_str_feed);
    PyObject *pos = fn ? PyTuple_New(nargs) : NULL;
    if (pos == NULL)
        goto out;
    for (Py_ssize_t i = 0; i < nargs; i++) {
        Py_INCREF(args[i]);
        PyTuple_SetItem(pos, i, args[i]);
    }
    if (kwnames != NULL) {
        if ((kw = PyDict_New()) == NULL)
            goto out;
        for (Py_ssize_t i = 0; i < PyTuple_Size(kwnames); i++)
            if (PyDict_SetItem(kw, PyTuple_GetItem(kwnames, i), args[nargs + i]) < 0)
                goto out;
    }
    res = PyObject_Call(fn, pos, kw);
out:
    Py_XDECREF(fn);
    Py_XDECREF(pos);
    Py_XDECREF(kw);
    return res;
}

static PyMethodDef dec_iter_def = {"__iter__", dec_iter, METH_NOARGS,
                                   "Iterate the events decodable so far (see the class)."};
static PyMethodDef dec_feed_def = {"feed", (PyCFunction)(void (*)(void))dec_feed_call,
                                   METH_FASTCALL | METH_KEYWORDS,
                                   "Append bytes read from the response body (copied)."};

/* install(StreamDecoder) -> bool: sets StreamDecoder.__iter__ and .feed to
 * the C versions above, which fall back on its _iter / _feed / _pull /
 * _feed_failed methods.  False (nothing changed) when its _addr, _it and
 * _leftover slots are not found. */
static PyObject *fe_install(PyObject *self, PyObject *cls)
{
    (void)self;
    if (!PyType_Check(cls)) {
        PyErr_SetString(PyExc_TypeError, "install() takes the StreamDecoder class");
        return NULL;
    }
    static const char *const names[3] = {"_addr", "_it", "_leftover"};
    PyObject *pynames[3] = {NULL, NULL, NULL};
    PyObject *res = NULL, *it = NULL, *feed = NULL;
    for (int i = 0; i < 3; i++)
        if ((pynames[i] = PyUnicode_InternFromString(names[i])) == NULL)
            goto out;
    if (g_str_iter == NULL && ((g_str_iter = PyUnicode_InternFromString("_iter")) == NULL ||
                               (g_str_pull = PyUnicode_InternFromString("_pull")) == NULL ||
                               (g_str_feed = PyUnicode_InternFromString("_feed")) == NULL ||
                               (g_str_failed = PyUnicode_InternFromString("_feed_failed")) == NULL))
        goto out;
    if (g_events_type == NULL)
        goto out;
    Py_ssize_t off[3];
    if (!find_slots(cls, pynames, 3, off)) {
        res = Py_False;
        Py_INCREF(res);
        goto out;
    }
    if ((it = PyDescr_NewMethod((PyTypeObject *)cls, &dec_iter_def)) == NULL ||
        (feed = PyDescr_NewMethod((PyTypeObject *)cls, &dec_feed_def)) == NULL)
        goto out;
    memcpy(g_dec_off, off, sizeof off);
    PyObject *old = g_decoder_cls;
    Py_INCREF(cls);
    g_decoder_cls = cls;
    Py_XDECREF(old);
    if (PyObject_SetAttrString(cls, "__iter__", it) < 0 || PyObject_SetAttrString(cls, "feed", feed) < 0)
        goto out;
    res = Py_True;
    Py_INCREF(res);
out:
    for (int i = 0; i < 3; i++)
        Py_XDECREF(pynames[i]);
    Py_XDECREF(it);
    Py_XDECREF(feed);
    return res;
}

/* For the tests: utf8(data: bytes) -> str, as data.decode(). */
static PyObject *fe_utf8(PyObject *self, PyObject *arg)
{
    (void)self;
    char *buf;
    Py_ssize_t n;
    if (PyBytes_AsStringAndSize(arg, &buf, &n) < 0)
        return NULL;
    return utf8_str(buf, (size_t)n);
}

static PyMethodDef fe_methods[] = {
    {"setup", (PyCFunction)(void (*)(void))fe_setup, METH_FASTCALL,
     "setup(feed_address, next_event_address, layout, ContentDelta, kinds) -> bool"},
    {"feed", (PyCFunction)(void (*)(void))fe_feed, METH_FASTCALL,
     "feed(ctx_address, data: bytes) -> int (panto_stream_feed's result)"},
    {"pull", fe_pull, METH_O,
     "pull(ctx_address) -> iterator of events | (list of events, tail)"},
    {"set_direct", fe_set_direct, METH_O,
     "set_direct(flag) -> bool: store slots directly (tests)"},
    {"install", fe_install, METH_O,
     "install(StreamDecoder) -> bool: its __iter__ and feed in C"},
    {"utf8", fe_utf8, METH_O, "utf8(data: bytes) -> str, as data.decode() (tests)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef fe_module = {
    PyModuleDef_HEAD_INIT,
    "panto._fastevents",
    "StreamDecoder's content-delta events built in C (see pyext/fastevents.c).",
    -1,
    fe_methods,
    NULL,
    NULL,
    NULL,
    NULL,
};

PyMODINIT_FUNC PyInit__fastevents(void)
{
    PyObject *m = PyModule_Create(&fe_module);
    if (m == NULL)
        return NULL;
    if (g_events_type == NULL) {
        g_events_type = (PyTypeObject *)PyType_FromSpec(&events_spec);
        if (g_events_type == NULL) {
            Py_DECREF(m);
            return NULL;
        }
    }
    Py_INCREF(g_events_type);
    if (PyModule_AddObject(m, "Events", (PyObject *)g_events_type) < 0) {
        Py_DECREF(g_events_type);
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
