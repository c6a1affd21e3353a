package panto

//go:generate go run ./internal/synccore

/*
#cgo CFLAGS: -O2
#include <stdlib.h>
#include <string.h>
#include "panto.h"

// pgo_event is one decoded event flattened for Go: every field of every
// kind, with its strings copied into the decoder's scratch buffer (off/len
// into pgo_dec.buf).  cgo sees C unions as byte arrays, so the union is read
// here, in C.
typedef struct {
	int32_t kind;
	int32_t block_kind;
	uint32_t index;
	int32_t stop_reason;
	int64_t retry;
	uint64_t usage[5];
	uint64_t off[5];
	uint64_t len[5];
} pgo_event;

#define PGO_BATCH 64
#define PGO_BATCH_BYTES ((size_t)64 << 10)

// pgo_dec owns one panto_stream plus the batch the Go side is reading.
typedef struct {
	panto_stream *s;
	char *buf;
	size_t cap;
	pgo_event ev[PGO_BATCH];
} pgo_dec;

static int pgo_new(int wire, const panto_stream_options *opts, pgo_dec **out)
{
	*out = NULL;
	pgo_dec *d = calloc(1, sizeof *d);
	if (d == NULL)
		return PANTO_ERROR;
	int rc = panto_stream_new(wire, opts, &d->s);
	if (rc != PANTO_OK) {
		free(d);
		return rc;
	}
	*out = d;
	return PANTO_OK;
}

static void pgo_free(pgo_dec *d)
{
	if (d == NULL)
		return;
	panto_stream_free(d->s);
	free(d->buf);
	free(d);
}

static size_t pgo_memory(const pgo_dec *d)
{
	return sizeof *d + d->cap + panto_stream_memory(d->s);
}

// The strings of an event, in the order of pgo_event.off/len.
static int pgo_strings(const panto_event *ev, panto_str *s)
{
	switch (ev->kind) {
	case PANTO_EV_MESSAGE_START:
		s[0] = ev->u.message_start.id;
		s[1] = ev->u.message_start.model;
		return 2;
	case PANTO_EV_TOOL_DETAILS:
		s[0] = ev->u.tool_details.id;
		s[1] = ev->u.tool_details.name;
		return 2;
	case PANTO_EV_CONTENT_DELTA:
		s[0] = ev->u.content_delta.text;
		return 1;
	case PANTO_EV_BLOCK_COMPLETE:
		s[0] = ev->u.block_complete.text;
		s[1] = ev->u.block_complete.signature;
		s[2] = ev->u.block_complete.tool_id;
		s[3] = ev->u.block_complete.tool_name;
		s[4] = ev->u.block_complete.citations;
		return 5;
	case PANTO_EV_MESSAGE_COMPLETE:
		s[0] = ev->u.message_complete.raw_stop_reason;
		return 1;
	case PANTO_EV_SSE:
		s[0] = ev->u.sse.event;
		s[1] = ev->u.sse.data;
		s[2] = ev->u.sse.id;
		return 3;
	default:
		return 0;
	}
}

static void pgo_usage(pgo_event *o, const panto_usage *u)
{
	o->usage[0] = u->input_tokens;
	o->usage[1] = u->cache_read_tokens;
	o->usage[2] = u->cache_write_tokens;
	o->usage[3] = u->output_tokens;
	o->usage[4] = u->reasoning_tokens;
}

// pgo_next decodes up to PGO_BATCH events into d->ev, copying their strings
// into d->buf (grown as needed; a batch stops after PGO_BATCH_BYTES).  It
// returns the number of events and stores in *status the panto status that
// ended the batch (PANTO_EVENT when it stopped because it was full), or
// PANTO_ERR_NO_MEMORY-style failure as -2 when the scratch buffer could not
// grow (the event is lost; the decoder is then unusable).
static int pgo_next(pgo_dec *d, int *status)
{
	size_t used = 0;
	int n = 0;
	while (n < PGO_BATCH && used < PGO_BATCH_BYTES) {
		panto_event ev;
		int st = panto_next_event(d->s, &ev);
		if (st != PANTO_EVENT) {
			*status = st;
			goto out;
		}
		panto_str s[5];
		int ns = pgo_strings(&ev, s);
		size_t total = 0;
		for (int k = 0; k < ns; k++)
			total += s[k].len;
		if (total > d->cap - used) {
			size_t ncap = d->cap ? d->cap : 4096;
			while (ncap < used + total)
				ncap *= 2;
			char *nb = realloc(d->buf, ncap);
			if (nb == NULL) {
				*status = -2;
				return n;
			}
			d->buf = nb;
			d->cap = ncap;
		}
		pgo_event *o = &d->ev[n];
		memset(o, 0, sizeof *o);
		o->kind = ev.kind;
		o->retry = -1;
		for (int k = 0; k < ns; k++) {
			o->off[k] = used;
			o->len[k] = s[k].len;
			if (s[k].len)
				memcpy(d->buf + used, s[k].ptr, s[k].len);
			used += s[k].len;
		}
		switch (ev.kind) {
		case PANTO_EV_MESSAGE_START:
			pgo_usage(o, &ev.u.message_start.usage);
			break;
		case PANTO_EV_BLOCK_START:
			o->index = ev.u.block_start.index;
			o->block_kind = ev.u.block_start.block_kind;
			break;
		case PANTO_EV_TOOL_DETAILS:
			o->index = ev.u.tool_details.index;
			o->block_kind = PANTO_BLOCK_TOOL_USE;
			break;
		case PANTO_EV_CONTENT_DELTA:
			o->index = ev.u.content_delta.index;
			o->block_kind = ev.u.content_delta.block_kind;
			break;
		case PANTO_EV_BLOCK_COMPLETE:
			o->index = ev.u.block_complete.index;
			o->block_kind = ev.u.block_complete.block_kind;
			break;
		case PANTO_EV_MESSAGE_COMPLETE:
			o->stop_reason = ev.u.message_complete.stop_reason;
			pgo_usage(o, &ev.u.message_complete.usage);
			break;
		case PANTO_EV_SSE:
			o->retry = ev.u.sse.retry;
			break;
		}
		n++;
	}
	*status = PANTO_EVENT;
out:
	// Give back a scratch buffer that one huge event blew up.
	if (d->cap > ((size_t)1 << 20) && used < d->cap / 8) {
		size_t ncap = used > 4096 ? used : 4096;
		char *nb = realloc(d->buf, ncap);
		if (nb != NULL) {
			d->buf = nb;
			d->cap = ncap;
		}
	}
	return n;
}

static int pgo_feed(pgo_dec *d, const void *p, size_t n)
{
	return panto_stream_feed(d->s, (const uint8_t *)p, n);
}

static int pgo_finish(pgo_dec *d) { return panto_stream_finish(d->s); }

static int pgo_error(pgo_dec *d, panto_error *e) { return panto_stream_error(d->s, e); }

*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"unsafe"
)

// ErrNeedMore is returned by (*Decoder).Next when every byte fed so far has
// been decoded: Feed more input, or Finish to declare the end of it.
var ErrNeedMore = errors.New("panto: decoder needs more input")

// ErrDecoderClosed is returned by a Decoder used after Close.
var ErrDecoderClosed = errors.New("panto: decoder closed")

// ABIVersion is the PANTO_ABI_VERSION of the header this package was built
// with; LibraryABIVersion reports what the compiled core says.
const ABIVersion = int(C.PANTO_ABI_VERSION)

// LibraryABIVersion returns panto_abi_version() of the compiled core.
func LibraryABIVersion() int { return int(C.panto_abi_version()) }

// Version returns the C core's version, "MAJOR.MINOR.PATCH".
func Version() string { return C.GoString(C.panto_version()) }

// Option sets a limit of a Decoder (or of the Decoder under a Stream).  A
// zero value keeps the core's default.
type Option func(*C.panto_stream_options)

// WithMaxEventBytes bounds one SSE line or event payload (default 8 MiB).
func WithMaxEventBytes(n int) Option {
	return func(o *C.panto_stream_options) { o.max_event_bytes = C.size_t(n) }
}

// WithMaxBlockBytes bounds one assembled block (default 64 MiB).
func WithMaxBlockBytes(n int) Option {
	return func(o *C.panto_stream_options) { o.max_block_bytes = C.size_t(n) }
}

// WithMaxBufferBytes bounds the input fed but not yet decoded (default 64 MiB).
func WithMaxBufferBytes(n int) Option {
	return func(o *C.panto_stream_options) { o.max_buffer_bytes = C.size_t(n) }
}

// WithMaxJSONDepth bounds the nesting of JSON payloads (default 128).
func WithMaxJSONDepth(n int) Option {
	return func(o *C.panto_stream_options) { o.max_json_depth = C.uint32_t(n) }
}

// A Decoder turns the bytes of one response body into events: the Go face
// of the C core's panto_stream.  It is sans-I/O: Feed what you read, pull
// with Next.  A Decoder is not safe for concurrent use.
//
// Lifecycle and memory: the decoder owns C memory.  It is released
// deterministically as soon as the decoder is finished (Next returned an
// error, or io.EOF after Finish), or by Close (io.Closer), which may be
// called at any time and more than once.  A decoder dropped without either
// is released by a runtime cleanup when it is garbage collected, but do not
// rely on that: `defer dec.Close()` is the idiom.
type Decoder struct {
	c       *C.pgo_dec
	cleanup runtime.Cleanup
	wire    Wire
	closed  bool  // Finish (panto_stream_finish) called
	err     error // sticky terminal error (not io.EOF)
	eof     bool  // Next returned io.EOF
	n, i    int   // events in the current batch, next to deliver
}

// NewDecoder returns a decoder for wire.
func NewDecoder(wire Wire, opts ...Option) (*Decoder, error) {
	if wire.String() == "unknown" {
		return nil, fmt.Errorf("panto: unknown wire %d", int(wire))
	}
	var o C.panto_stream_options
	if C.panto_stream_options_init(&o, C.PANTO_STREAM_OPTIONS_VERSION) != C.PANTO_OK {
		return nil, fmt.Errorf("panto: the core refuses options version %d", int(C.PANTO_STREAM_OPTIONS_VERSION))
	}
	for _, opt := range opts {
		opt(&o)
	}
	var c *C.pgo_dec
	if C.pgo_new(C.int(wire), &o, &c) != C.PANTO_OK || c == nil {
		return nil, fmt.Errorf("panto: cannot create a %s decoder", wire)
	}
	d := &Decoder{c: c, wire: wire}
	d.cleanup = runtime.AddCleanup(d, func(c *C.pgo_dec) { C.pgo_free(c) }, c)
	return d, nil
}

// Wire reports what the decoder decodes.
func (d *Decoder) Wire() Wire { return d.wire }

// Feed appends input.  The bytes are copied; p may be reused at once.  An
// error means the decoder has failed (Next reports the same error) or that
// Feed was called after Finish or Close.
func (d *Decoder) Feed(p []byte) error {
	if d.c == nil {
		if d.err != nil {
			return d.err
		}
		return ErrDecoderClosed
	}
	if d.closed {
		return errors.New("panto: Feed after Finish")
	}
	if len(p) == 0 {
		return nil
	}
	if C.pgo_feed(d.c, unsafe.Pointer(&p[0]), C.size_t(len(p))) != C.PANTO_OK {
		return d.fail()
	}
	return nil
}

// Finish declares the end of input (EOF; panto_stream_finish).  Events
// still buffered remain available from Next; if the terminal event never
// came, Next then fails with a *TruncatedError.  Finish does not release
// memory by itself: drain Next to io.EOF or an error, or call Close.
// Finishing twice is a no-op.
func (d *Decoder) Finish() error {
	if d.closed {
		return nil
	}
	if d.c == nil {
		if d.err != nil {
			return d.err
		}
		return ErrDecoderClosed
	}
	d.closed = true
	if C.pgo_finish(d.c) != C.PANTO_OK {
		return d.fail()
	}
	if d.eof && d.i >= d.n {
		d.release()
	}
	return nil
}

// Close releases the decoder's C memory now (io.Closer).  The decoder is
// unusable afterwards (Next returns io.EOF if it had finished, its error if
// it had failed, else ErrDecoderClosed).  Close never fails and may be
// called more than once; it does not declare the end of input (Finish
// does).
func (d *Decoder) Close() error {
	d.release()
	return nil
}

// release frees the C stream; idempotent.
func (d *Decoder) release() {
	if d.c == nil {
		return
	}
	d.cleanup.Stop()
	C.pgo_free(d.c)
	d.c = nil
	d.n, d.i = 0, 0
}

// Memory reports the bytes of C heap the decoder holds (0 once freed).
func (d *Decoder) Memory() int {
	if d.c == nil {
		return 0
	}
	return int(C.pgo_memory(d.c))
}

// Next returns the next event.  It returns ErrNeedMore when all input fed so
// far is decoded, io.EOF once the stream is over (after the terminal
// MessageComplete on the provider wires), and a *ProviderError,
// *TruncatedError or *DecodeError when the stream failed; errors are sticky.
func (d *Decoder) Next() (Event, error) {
	if d.i < d.n {
		ev := d.event(d.i)
		d.i++
		return ev, nil
	}
	if d.err != nil {
		d.release()
		return nil, d.err
	}
	if d.eof {
		return nil, io.EOF
	}
	if d.c == nil {
		return nil, ErrDecoderClosed
	}
	var st C.int
	d.n = int(C.pgo_next(d.c, &st))
	d.i = 0
	if d.n > 0 {
		ev := d.event(0)
		d.i = 1
		return ev, nil
	}
	switch st {
	case C.PANTO_NEED_MORE:
		return nil, ErrNeedMore
	case C.PANTO_DONE:
		d.eof = true
		if d.closed {
			d.release()
		}
		return nil, io.EOF
	case -2:
		d.err = &DecodeError{Code: ErrCodeNoMemory, Message: "out of memory copying an event"}
		d.release()
		return nil, d.err
	default:
		return nil, d.fail()
	}
}

// fail reads the stream's sticky error, remembers it and frees the stream.
func (d *Decoder) fail() error {
	if d.err != nil {
		return d.err
	}
	var e C.panto_error
	if C.pgo_error(d.c, &e) != C.PANTO_OK || e.code == C.PANTO_ERR_NONE {
		d.err = &DecodeError{Code: ErrCodeInvalidArgument, Message: "panto: the core failed without an error"}
	} else {
		d.err = newError(ErrorCode(e.code), goStr(e.message), goStr(e.provider_type), e.retryable != 0)
	}
	// The error is sticky in Go now and the C stream has nothing more to
	// give; free it unless events of the current batch still wait in its
	// scratch buffer (Feed or Close failed mid-batch): Next frees it then.
	if d.i >= d.n {
		d.release()
	}
	return d.err
}

func goStr(s C.panto_str) string {
	if s.len == 0 {
		return ""
	}
	return C.GoStringN(s.ptr, C.int(s.len))
}

// str copies string k of batch event i out of the scratch buffer.
func (d *Decoder) str(e *C.pgo_event, k int) string {
	n := int(e.len[k])
	if n == 0 {
		return ""
	}
	p := unsafe.Add(unsafe.Pointer(d.c.buf), uintptr(e.off[k]))
	return string(unsafe.Slice((*byte)(p), n))
}

func usage(e *C.pgo_event) Usage {
	return Usage{
		InputTokens:      int(e.usage[0]),
		CacheReadTokens:  int(e.usage[1]),
		CacheWriteTokens: int(e.usage[2]),
		OutputTokens:     int(e.usage[3]),
		ReasoningTokens:  int(e.usage[4]),
	}
}

// event converts batch event i into its Go type.
func (d *Decoder) event(i int) Event {
	e := &d.c.ev[i]
	switch e.kind {
	case C.PANTO_EV_MESSAGE_START:
		return MessageStart{ID: d.str(e, 0), Model: d.str(e, 1), Usage: usage(e)}
	case C.PANTO_EV_BLOCK_START:
		return BlockStart{Index: int(e.index), Kind: BlockKind(e.block_kind)}
	case C.PANTO_EV_TOOL_DETAILS:
		return ToolDetails{Index: int(e.index), ID: d.str(e, 0), Name: d.str(e, 1)}
	case C.PANTO_EV_CONTENT_DELTA:
		return ContentDelta{Index: int(e.index), Kind: BlockKind(e.block_kind), Text: d.str(e, 0)}
	case C.PANTO_EV_BLOCK_COMPLETE:
		return BlockComplete{
			Index:     int(e.index),
			Kind:      BlockKind(e.block_kind),
			Text:      d.str(e, 0),
			Signature: d.str(e, 1),
			ToolID:    d.str(e, 2),
			ToolName:  d.str(e, 3),
			Citations: d.str(e, 4),
		}
	case C.PANTO_EV_MESSAGE_COMPLETE:
		return MessageComplete{
			StopReason:    stopReason(int(e.stop_reason)),
			RawStopReason: d.str(e, 0),
			Usage:         usage(e),
		}
	case C.PANTO_EV_SSE:
		return SSE{Event: d.str(e, 0), Data: d.str(e, 1), ID: d.str(e, 2), Retry: int64(e.retry)}
	}
	panic(fmt.Sprintf("panto: unknown event kind %d", int(e.kind)))
}
