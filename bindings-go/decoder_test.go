package panto

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"
)

const openaiText = `data: {"id":"c1","model":"gpt","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}

data: {"id":"c1","model":"gpt","choices":[{"index":0,"delta":{"content":"Hello"},"finish_reason":null}]}

data: {"id":"c1","model":"gpt","choices":[{"index":0,"delta":{"content":" world"},"finish_reason":null}]}

data: {"id":"c1","model":"gpt","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}

data: {"id":"c1","model":"gpt","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":2,"total_tokens":12}}

data: [DONE]

`

func TestDecoderLifecycle(t *testing.T) {
	dec, err := NewDecoder(WireOpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	if _, err := dec.Next(); err != ErrNeedMore {
		t.Fatalf("Next on an empty decoder: %v, want ErrNeedMore", err)
	}
	if err := dec.Feed([]byte(openaiText)); err != nil {
		t.Fatal(err)
	}
	var types []string
	var last Event
	for {
		ev, err := dec.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		types = append(types, ev.Type().String())
		last = ev
	}
	want := "message_start block_start content_delta content_delta block_complete message_complete"
	if got := strings.Join(types, " "); got != want {
		t.Fatalf("events %q\nwant %q", got, want)
	}
	mc := last.(MessageComplete)
	if mc.StopReason != StopStop || mc.RawStopReason != "stop" || mc.Usage.InputTokens != 10 || mc.Usage.OutputTokens != 2 {
		t.Fatalf("terminal %+v", mc)
	}
	// io.EOF is sticky; memory is still held until Finish (more input after
	// the terminal is checked at Finish).
	if _, err := dec.Next(); err != io.EOF {
		t.Fatalf("after terminal: %v", err)
	}
	if dec.Memory() == 0 {
		t.Fatal("freed before Finish")
	}
	if err := dec.Finish(); err != nil {
		t.Fatal(err)
	}
	if dec.Memory() != 0 {
		t.Fatal("finished decoder still holds C memory")
	}
	if _, err := dec.Next(); err != io.EOF {
		t.Fatalf("after Finish: %v", err)
	}
	dec.Close() // idempotent
}

// A Decoder is an io.Closer: Close releases, Finish ends the input.
var _ io.Closer = (*Decoder)(nil)

func TestDecoderErrors(t *testing.T) {
	if _, err := NewDecoder(Wire(42)); err == nil {
		t.Fatal("unknown wire accepted")
	}
	if _, err := ParseWire("grpc"); err == nil {
		t.Fatal("ParseWire accepted grpc")
	}

	// Truncation: EOF before the terminal.
	dec, _ := NewDecoder(WireOpenAIChat)
	dec.Feed([]byte(openaiText[:200]))
	dec.Finish()
	var err error
	for err == nil {
		_, err = dec.Next()
	}
	var te *TruncatedError
	if !errors.As(err, &te) {
		t.Fatalf("want *TruncatedError, got %T %v", err, err)
	}
	if dec.Memory() != 0 {
		t.Fatal("failed decoder still holds C memory")
	}
	if _, err2 := dec.Next(); err2 != err {
		t.Fatalf("error not sticky: %v", err2)
	}
	if ferr := dec.Feed([]byte("x")); ferr != err {
		t.Fatal("Feed after failure")
	}

	// Bad JSON.
	dec, _ = NewDecoder(WireAnthropicMessages)
	dec.Feed([]byte("event: message_start\ndata: {nope\n\n"))
	_, err = dec.Next()
	var de *DecodeError
	if !errors.As(err, &de) || de.Code != ErrCodeBadJSON {
		t.Fatalf("want bad_json DecodeError, got %T %v", err, err)
	}

	// A provider error inside the stream.
	dec, _ = NewDecoder(WireAnthropicMessages)
	dec.Feed([]byte("event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"))
	_, err = dec.Next()
	var pe *ProviderError
	if !errors.As(err, &pe) || pe.Type != "overloaded_error" || !pe.Retryable() || pe.Message != "Overloaded" {
		t.Fatalf("want retryable overloaded ProviderError, got %T %v", err, err)
	}

	// Limits.
	dec, _ = NewDecoder(WireSSE, WithMaxEventBytes(16))
	dec.Feed([]byte("data: " + strings.Repeat("x", 100) + "\n\n"))
	_, err = dec.Next()
	if !errors.As(err, &de) || de.Code != ErrCodeLimit {
		t.Fatalf("want limit DecodeError, got %T %v", err, err)
	}

	// Feed after Finish, use after Close.
	dec, _ = NewDecoder(WireSSE)
	dec.Finish()
	if err := dec.Feed([]byte("x")); err == nil {
		t.Fatal("Feed after Finish accepted")
	}
	dec.Close()
	if _, err := dec.Next(); err != ErrDecoderClosed {
		t.Fatalf("Next after Close: %v", err)
	}
}

// TestDecoderBigEvent checks events larger than one batch's scratch budget
// and strings that outlive later calls (they are Go copies).
func TestDecoderBigEvent(t *testing.T) {
	big := strings.Repeat("abcdefgh", 300000) // 2.4 MB
	dec, _ := NewDecoder(WireSSE)
	defer dec.Close()
	dec.Feed([]byte("data: " + big + "\n\ndata: small\n\n"))
	dec.Finish()
	var got []string
	for {
		ev, err := dec.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.(SSE).Data)
	}
	if len(got) != 2 || got[0] != big || got[1] != "small" {
		t.Fatalf("got %d events", len(got))
	}
}

func TestStreamRawSSE(t *testing.T) {
	s, err := NewStream(strings.NewReader("retry: 250\nid: 7\nevent: a\ndata: 1\n\ndata: 2\n\n"), WireSSE)
	if err != nil {
		t.Fatal(err)
	}
	var got []SSE
	for ev := range s.Iter() {
		got = append(got, ev.(SSE))
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	want := []SSE{{"a", "1", "7", 250}, {"message", "2", "7", 250}}
	if len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("got %+v", got)
	}
}

func TestStreamIterStopsAtTerminal(t *testing.T) {
	// Junk after the terminal is never read by a Stream.
	s, _ := NewStream(strings.NewReader(openaiText+"garbage that is not SSE\n"), WireOpenAIChat)
	n := 0
	var last Event
	for ev := range s.Iter() {
		n++
		last = ev
	}
	if _, ok := last.(MessageComplete); !ok || s.Err() != nil {
		t.Fatalf("last %T, err %v", last, s.Err())
	}
	if _, err := s.Next(); err != io.EOF {
		t.Fatalf("Next after terminal: %v", err)
	}
	if n != 6 {
		t.Fatalf("%d events", n)
	}
}

// stallReader yields some bytes and then blocks until closed.
type stallReader struct {
	data   []byte
	closed chan struct{}
}

func newStallReader(data string) *stallReader {
	return &stallReader{data: []byte(data), closed: make(chan struct{})}
}

func (r *stallReader) Read(p []byte) (int, error) {
	if len(r.data) > 0 {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	<-r.closed
	return 0, errors.New("read on closed body")
}

func (r *stallReader) Close() error {
	select {
	case <-r.closed:
	default:
		close(r.closed)
	}
	return nil
}

func TestStreamContextCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	body := newStallReader(openaiText[:300])
	s, _ := NewStreamContext(ctx, body, WireOpenAIChat)
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	n := 0
	for range s.Iter() {
		n++
	}
	if !errors.Is(s.Err(), context.Canceled) {
		t.Fatalf("Err() = %v, want context.Canceled", s.Err())
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
	if n == 0 {
		t.Fatal("no events before the stall")
	}
	select {
	case <-body.closed:
	default:
		t.Fatal("body not closed")
	}
}

func TestStreamChan(t *testing.T) {
	s, _ := NewStream(strings.NewReader(openaiText), WireOpenAIChat)
	var acc Accumulator
	for ev := range s.Chan(context.Background()) {
		acc.Add(ev)
	}
	if s.Err() != nil {
		t.Fatal(s.Err())
	}
	if m := acc.Message(); m.Text() != "Hello world" || m.StopReason != StopStop {
		t.Fatalf("message %+v", m)
	}

	// Cancelling the channel's context during a stall.
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	body := newStallReader(openaiText[:300])
	s, _ = NewStream(body, WireOpenAIChat)
	start := time.Now()
	for range s.Chan(ctx) {
	}
	if !errors.Is(s.Err(), context.DeadlineExceeded) {
		t.Fatalf("Err() = %v", s.Err())
	}
	if d := time.Since(start); d > time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestStreamCloseFromAnotherGoroutine(t *testing.T) {
	body := newStallReader(openaiText[:300])
	s, _ := NewStream(body, WireOpenAIChat)
	time.AfterFunc(30*time.Millisecond, func() { s.Close() })
	for range s.Iter() {
	}
	if s.Err() != ErrClosed {
		t.Fatalf("Err() = %v", s.Err())
	}
	s.Close()
}

func TestStreamReadErrorIsTruncation(t *testing.T) {
	r := io.MultiReader(strings.NewReader(openaiText[:300]), errReader{io.ErrUnexpectedEOF})
	s, _ := NewStream(r, WireOpenAIChat)
	for range s.Iter() {
	}
	var te *TruncatedError
	if !errors.As(s.Err(), &te) || !errors.Is(s.Err(), io.ErrUnexpectedEOF) {
		t.Fatalf("Err() = %T %v", s.Err(), s.Err())
	}
}

type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

func loadFixturesOrNil() []fixture {
	var fs []fixture
	func() {
		defer func() { recover() }()
		fs = loadFixtures(&quietTB{})
	}()
	return fs
}

// quietTB lets loadFixtures run outside a test's control flow.
type quietTB struct{ testing.TB }

func (*quietTB) Helper()               {}
func (*quietTB) Skipf(string, ...any)  { panic("skip") }
func (*quietTB) Fatalf(string, ...any) { panic("fatal") }
func (*quietTB) Fatal(...any)          { panic("fatal") }

var leakRounds = 10000
