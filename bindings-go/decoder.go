package panto

//go:generate go run ./internal/synccore

/*
#cgo CFLAGS: -O2
#include <stdlib.h>
#include "panto.h"

#define PGO_BATCH 64
#define PGO_BATCH_BYTES ((size_t)16 << 10)

// pgo_dec owns one panto_stream plus the batch the Go side is reading:
// panto_next_events fills ev[] and copies the events' strings into buf (an
// event whose strings exceed buf keeps them borrowed from the stream, valid
// until the next call on it, which only comes once the batch is read).
typedef struct {
	panto_stream *s;
	panto_event ev[PGO_BATCH];
	char buf[PGO_BATCH_BYTES];
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
	free(d);
}

static size_t pgo_memory(const pgo_dec *d) { return sizeof *d + panto_stream_memory(d->s); }

static int pgo_next(pgo_dec *d, size_t *n)
{
	return panto_next_events(d->s, d->ev, PGO_BATCH, d->buf, PGO_BATCH_BYTES, n);
}

static int pgo_feed(pgo_dec *d, const void *p, size_t n)
{
	return panto_stream_feed(d->s, (const uint8_t *)p, n);
}

static int pgo_finish(pgo_dec *d) { return panto_stream_finish(d->s); }

static int pgo_error(pgo_dec *d, panto_error *e) { return panto_stream_error(d->s, e); }

static int pgo_reset(pgo_dec *d) { return panto_stream_reset(d->s); }

static int pgo_partial(const pgo_dec *d, uint32_t k, panto_block_complete *out)
{
	return panto_stream_partial_block(d->s, k, out);
}

*/
import "C"

import (
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"unsafe"
)

// ErrNeedMore is returned by (*Decoder).Next when every byte fed so far has
// been decoded: Feed more input, or Finish to declare the end of it.
var ErrNeedMore = errors.New("panto: decoder needs more input")

// ErrDecoderClosed is returned by a Decoder used after Close.
var ErrDecoderClosed = errors.New("panto: decoder closed")

// ErrFreed is ErrDecoderClosed under its name from before Close replaced Free.
//
// Deprecated: use ErrDecoderClosed.
var ErrFreed = ErrDecoderClosed

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
	c          *C.pgo_dec
	cleanup    runtime.Cleanup
	wire       Wire
	opts       C.panto_stream_options // for Reset after the stream was released
	closed     bool                   // Finish (panto_stream_finish) called
	userClosed bool                   // Close called
	err        error                  // sticky terminal error (not io.EOF)
	eof        bool                   // Next returned io.EOF
	n, i       int                    // events in the current batch, next to deliver
	partial    []BlockComplete        // the blocks open when the stream was released
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
	d := &Decoder{wire: wire, opts: o}
	if err := d.alloc(); err != nil {
		return nil, err
	}
	return d, nil
}

// alloc creates the C stream.
func (d *Decoder) alloc() error {
	var c *C.pgo_dec
	if C.pgo_new(C.int(d.wire), &d.opts, &c) != C.PANTO_OK || c == nil {
		return fmt.Errorf("panto: cannot create a %s decoder", d.wire)
	}
	d.c = c
	d.cleanup = runtime.AddCleanup(d, func(c *C.pgo_dec) { C.pgo_free(c) }, c)
	return nil
}

// Reset makes the decoder new again, with the same wire and options, for a
// retried request (panto_stream_reset): the input, events, error and
// blocks so far are dropped.  While the decoder still holds its C stream --
// it was not finished (Next returned no error, or no io.EOF after Finish)
// -- the stream keeps its buffers, so the retry allocates nothing; after
// the automatic release at the end of a stream a new one is allocated.
// Reset after Close returns ErrDecoderClosed.
func (d *Decoder) Reset() error {
	if d.userClosed {
		return ErrDecoderClosed
	}
	if d.c != nil {
		if C.pgo_reset(d.c) != C.PANTO_OK {
			return errors.New("panto: panto_stream_reset failed")
		}
	} else if err := d.alloc(); err != nil {
		return err
	}
	d.closed, d.err, d.eof, d.n, d.i, d.partial = false, nil, false, 0, 0, nil
	return nil
}

// PartialBlocks returns the blocks still open, in index order, as far as
// they arrived, assembled by the core (panto_stream_partial_block): what to
// keep of a message cut short by an error or a cancel, with no need to join
// the deltas -- the Python package's StreamDecoder.partial_blocks().  Each
// is a BlockComplete (Text: the text so far; a tool call's input JSON so
// far); its Block method gives the content block, a tool call's incomplete
// input kept in ToolUse.RawInput.  Once the decoder released its C stream
// (Close, or the end of the stream) it returns the blocks open at that
// moment; nil when none is open.
func (d *Decoder) PartialBlocks() []BlockComplete {
	if d.c == nil {
		return slices.Clone(d.partial)
	}
	return d.openBlocks()
}

func (d *Decoder) openBlocks() []BlockComplete {
	var out []BlockComplete
	var b C.panto_block_complete
	for k := 0; C.pgo_partial(d.c, C.uint32_t(k), &b) == C.PANTO_OK; k++ {
		out = append(out, blockComplete(&b))
	}
	return out
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
	d.userClosed = true
	d.release()
	return nil
}

// Free releases the decoder's C memory now, as Close does.
//
// Deprecated: use Close (io.Closer), Free's name since the decoder
// implements io.Closer.
func (d *Decoder) Free() { _ = d.Close() }

// release frees the C stream, keeping the blocks open at that moment for
// PartialBlocks; idempotent.
func (d *Decoder) release() {
	if d.c == nil {
		return
	}
	d.partial = d.openBlocks()
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
	var n C.size_t
	st := C.pgo_next(d.c, &n)
	d.n = int(n)
	d.i = 0
	if st == C.PANTO_EVENT && d.n > 0 {
		ev := d.event(0)
		d.i = 1
		return ev, nil
	}
	d.n = 0
	switch st {
	case C.PANTO_NEED_MORE:
		return nil, ErrNeedMore
	case C.PANTO_DONE:
		d.eof = true
		if d.closed {
			d.release()
		}
		return nil, io.EOF
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
		d.err = newError(ErrorCode(e.code), goStr(e.message), goStr(e.provider_type), e.retryable != 0, int64(e.offset))
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

func usage(u *C.panto_usage) Usage {
	return Usage{
		InputTokens:      int(u.input_tokens),
		CacheReadTokens:  int(u.cache_read_tokens),
		CacheWriteTokens: int(u.cache_write_tokens),
		OutputTokens:     int(u.output_tokens),
		ReasoningTokens:  int(u.reasoning_tokens),
	}
}

func blockComplete(m *C.panto_block_complete) BlockComplete {
	return BlockComplete{
		Index:     int(m.index),
		Kind:      BlockKind(m.block_kind),
		Text:      goStr(m.text),
		Signature: goStr(m.signature),
		ToolID:    goStr(m.tool_id),
		ToolName:  goStr(m.tool_name),
		Citations: goStr(m.citations),
	}
}

// event converts batch event i into its Go type, copying its strings.  cgo
// sees the C union as a byte array: each case reads it as its member.
func (d *Decoder) event(i int) Event {
	e := &d.c.ev[i]
	u := unsafe.Pointer(&e.u)
	switch e.kind {
	case C.PANTO_EV_MESSAGE_START:
		m := (*C.panto_message_start)(u)
		return MessageStart{ID: goStr(m.id), Model: goStr(m.model), Usage: usage(&m.usage)}
	case C.PANTO_EV_BLOCK_START:
		m := (*C.panto_block_start)(u)
		return BlockStart{Index: int(m.index), Kind: BlockKind(m.block_kind)}
	case C.PANTO_EV_TOOL_DETAILS:
		m := (*C.panto_tool_details)(u)
		return ToolDetails{Index: int(m.index), ID: goStr(m.id), Name: goStr(m.name)}
	case C.PANTO_EV_CONTENT_DELTA:
		m := (*C.panto_content_delta)(u)
		return ContentDelta{Index: int(m.index), Kind: BlockKind(m.block_kind), Text: goStr(m.text)}
	case C.PANTO_EV_BLOCK_COMPLETE:
		return blockComplete((*C.panto_block_complete)(u))
	case C.PANTO_EV_MESSAGE_COMPLETE:
		m := (*C.panto_message_complete)(u)
		return MessageComplete{
			StopReason:    stopReason(int(m.stop_reason)),
			RawStopReason: goStr(m.raw_stop_reason),
			Usage:         usage(&m.usage),
		}
	case C.PANTO_EV_SSE:
		m := (*C.panto_sse_event)(u)
		return SSE{Event: goStr(m.event), Data: goStr(m.data), ID: goStr(m.id), Retry: int64(m.retry)}
	}
	panic(fmt.Sprintf("panto: unknown event kind %d", int(e.kind)))
}
