package panto

import (
	"context"
	"errors"
	"io"
	"iter"
	"sync"
	"sync/atomic"
)

// ErrClosed is returned by Next (and reported by Err) when the stream was
// closed before its end.
var ErrClosed = errors.New("panto: stream closed")

const readBufferSize = 32 << 10

// A Stream decodes events from an io.Reader such as an HTTP response body.
//
// Pull with Next, or range over Iter and check Err afterwards (the
// bufio.Scanner pattern), or receive from Chan.  The stream ends right after
// the terminal MessageComplete (provider wires) or at the end of the input
// (WireSSE); it then frees its decoder and closes the reader if it is an
// io.Closer.  Call Close to abandon a stream early; `defer s.Close()` is
// always safe.
//
// Next, Iter and Chan must not be used from several goroutines at once, but
// Close and Err may be called from any goroutine at any time; Close unblocks
// a pending Read by closing the reader.
type Stream struct {
	mu      sync.Mutex // held by Next for the whole call
	r       io.Reader
	dec     *Decoder
	buf     []byte
	pending []Event // events decoded ahead (the Client's retry look-ahead)
	done    bool    // no more events: ended, failed or closed
	readErr error   // the read error that ended the input, if not io.EOF
	status  int     // HTTP status reported on in-stream provider errors

	body      io.Closer
	closeOnce sync.Once
	stopCtx   func() bool

	abort atomic.Pointer[error] // why the stream was stopped from outside (Close, ctx)

	emu sync.Mutex
	err error // the error that ended the stream (never io.EOF)
}

// NewStream returns a stream decoding wire from r.
func NewStream(r io.Reader, wire Wire, opts ...Option) (*Stream, error) {
	return NewStreamContext(context.Background(), r, wire, opts...)
}

// NewStreamContext is NewStream with cancellation: when ctx is done the
// reader is closed (if it is an io.Closer, as an HTTP body is), a blocked
// Next returns promptly, and the stream ends with ctx.Err().
func NewStreamContext(ctx context.Context, r io.Reader, wire Wire, opts ...Option) (*Stream, error) {
	dec, err := NewDecoder(wire, opts...)
	if err != nil {
		return nil, err
	}
	s := &Stream{r: r, dec: dec, buf: make([]byte, readBufferSize)}
	if c, ok := r.(io.Closer); ok {
		s.body = c
	}
	if ctx.Done() != nil {
		s.stopCtx = context.AfterFunc(ctx, func() { s.stop(ctx.Err()) })
	}
	return s, nil
}

// Wire reports what the stream decodes.
func (s *Stream) Wire() Wire { return s.dec.wire }

// stop ends the stream from outside: remember why, close the reader so a
// blocked Read returns, and clean up now if no Next is running.
func (s *Stream) stop(cause error) {
	s.abort.CompareAndSwap(nil, &cause)
	s.closeBody()
	if s.mu.TryLock() {
		if !s.done {
			s.end(*s.abort.Load())
		}
		s.mu.Unlock()
	}
}

func (s *Stream) closeBody() {
	s.closeOnce.Do(func() {
		if s.body != nil {
			s.body.Close()
		}
	})
}

// end finishes the stream with err (nil for a clean end).  Called with mu.
func (s *Stream) end(err error) {
	s.done = true
	if err != nil {
		s.pending = nil
	}
	_ = s.dec.Close()
	s.closeBody()
	if s.stopCtx != nil {
		s.stopCtx()
	}
	if err != nil {
		s.emu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.emu.Unlock()
	}
}

// Close ends the stream: it closes the reader and frees the decoder.  Next
// then returns ErrClosed (io.EOF if the stream had already ended).  Close
// may be called from any goroutine, more than once; it returns nil.
func (s *Stream) Close() error {
	s.stop(ErrClosed)
	return nil
}

// Err returns the error that ended the stream, or nil if it ended with its
// terminal event (or has not ended).  Like bufio.Scanner.Err, check it after
// ranging over Iter or Chan.
func (s *Stream) Err() error {
	s.emu.Lock()
	defer s.emu.Unlock()
	return s.err
}

// Next returns the next event.  After the terminal MessageComplete it
// returns io.EOF.  Failures are a *ProviderError, *TruncatedError,
// *DecodeError, a context error, ErrClosed, or the reader's error; they are
// sticky and also reported by Err.
func (s *Stream) Next() (Event, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.next()
}

func (s *Stream) next() (Event, error) {
	if cause := s.abort.Load(); cause != nil && !s.done {
		s.end(*cause)
	}
	// Events decoded ahead come first; end() drops them when the stream is
	// stopped or fails, but keeps them when it ended at its terminal.
	if len(s.pending) > 0 {
		ev := s.pending[0]
		s.pending = s.pending[1:]
		return ev, nil
	}
	if s.done {
		if err := s.Err(); err != nil {
			return nil, err
		}
		return nil, io.EOF
	}
	for {
		ev, err := s.dec.Next()
		if err == nil {
			if ev.Type() == TypeMessageComplete {
				s.end(nil)
			}
			return ev, nil
		}
		switch {
		case err == ErrNeedMore:
			n, rerr := s.r.Read(s.buf)
			if cause := s.abort.Load(); cause != nil {
				s.end(*cause)
				return nil, *cause
			}
			if n > 0 {
				// A failed Feed makes the decoder fail; Next reports it
				// after any events decoded before.
				_ = s.dec.Feed(s.buf[:n])
			}
			if rerr != nil {
				if rerr != io.EOF {
					s.readErr = rerr
				}
				_ = s.dec.Finish()
			}
		case err == io.EOF:
			// WireSSE at the end of input (provider wires end at their
			// terminal event, above).
			if s.readErr != nil {
				s.end(s.readErr)
				return nil, s.readErr
			}
			s.end(nil)
			return nil, io.EOF
		default:
			var te *TruncatedError
			var pe *ProviderError
			if errors.As(err, &te) && s.readErr != nil {
				err = &TruncatedError{Message: te.Message, Err: s.readErr, Offset: te.Offset}
			} else if errors.As(err, &pe) && s.status != 0 {
				cp := *pe
				cp.Status = s.status
				err = &cp
			}
			s.end(err)
			return nil, err
		}
	}
}

// Iter returns an iterator over the stream's events.  It stops right after
// the terminal MessageComplete, at the end of input, or at the first error,
// which Err then reports:
//
//	for ev := range s.Iter() { ... }
//	if err := s.Err(); err != nil { ... }
func (s *Stream) Iter() iter.Seq[Event] {
	return func(yield func(Event) bool) {
		for {
			ev, err := s.Next()
			if err != nil {
				return
			}
			if !yield(ev) || ev.Type() == TypeMessageComplete {
				return
			}
		}
	}
}

// Chan starts a goroutine that sends the stream's events on the returned
// channel and closes it when the stream ends; check Err afterwards.  When
// ctx is done the stream is closed, the channel closes promptly, and Err
// returns ctx.Err().  Receive until the channel closes or cancel ctx:
// otherwise the goroutine waits forever to send.
func (s *Stream) Chan(ctx context.Context) <-chan Event {
	ch := make(chan Event, 16)
	stopCtx := context.AfterFunc(ctx, func() { s.stop(ctx.Err()) })
	go func() {
		defer close(ch)
		defer stopCtx()
		for ev := range s.Iter() {
			select {
			case ch <- ev:
			case <-ctx.Done():
				s.stop(ctx.Err())
				return
			}
		}
	}()
	return ch
}

// Message reads the rest of the stream and returns the assembled message
// (see Accumulator).  On failure it returns the partial message with the
// error.
func (s *Stream) Message() (*Message, error) {
	var acc Accumulator
	for ev := range s.Iter() {
		acc.Add(ev)
	}
	err := s.Err()
	m := acc.Message()
	if err != nil {
		m.Error = err.Error()
	}
	return m, err
}
