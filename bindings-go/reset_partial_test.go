package panto

import (
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"
)

// drainDec returns the events of dec up to ErrNeedMore, io.EOF or an error.
func drainDec(t *testing.T, dec *Decoder) ([]Event, error) {
	t.Helper()
	var evs []Event
	for {
		ev, err := dec.Next()
		if err != nil {
			if err == ErrNeedMore || err == io.EOF {
				return evs, nil
			}
			return evs, err
		}
		evs = append(evs, ev)
	}
}

func feedAll(t *testing.T, dec *Decoder, body string) []Event {
	t.Helper()
	if err := dec.Feed([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := dec.Finish(); err != nil {
		t.Fatal(err)
	}
	evs, err := drainDec(t, dec)
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

func TestDecoderReset(t *testing.T) {
	fresh, err := NewDecoder(WireOpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	want := feedAll(t, fresh, openaiText)
	fresh.Close()

	dec, err := NewDecoder(WireOpenAIChat, WithMaxEventBytes(4096))
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	// a first attempt cut mid-stream: Reset keeps the C stream and its buffers
	if err := dec.Feed([]byte(openaiText[:len(openaiText)/2])); err != nil {
		t.Fatal(err)
	}
	if evs, err := drainDec(t, dec); err != nil || len(evs) == 0 {
		t.Fatalf("first attempt: %d events, %v", len(evs), err)
	}
	before := dec.c
	mem := dec.Memory()
	if err := dec.Reset(); err != nil {
		t.Fatal(err)
	}
	if dec.c != before || dec.Memory() != mem {
		t.Fatalf("Reset of a live decoder reallocated: memory %d -> %d", mem, dec.Memory())
	}
	if len(dec.PartialBlocks()) != 0 {
		t.Fatal("blocks of the first attempt survive Reset")
	}
	if got := feedAll(t, dec, openaiText); !reflect.DeepEqual(got, want) {
		t.Fatalf("after Reset:\n%v\nwant\n%v", got, want)
	}

	// after the automatic release at io.EOF, and after a failure: a new stream
	if dec.Memory() != 0 {
		t.Fatal("a finished decoder still holds C memory")
	}
	if err := dec.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := dec.Feed([]byte("data: {bad\n\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := drainDec(t, dec); !errors.Is(err, ErrBadJSON) {
		t.Fatalf("bad JSON: %v", err)
	}
	if err := dec.Reset(); err != nil {
		t.Fatal(err)
	}
	if got := feedAll(t, dec, openaiText); !reflect.DeepEqual(got, want) {
		t.Fatalf("after Reset of a failed decoder:\n%v\nwant\n%v", got, want)
	}
	// the limits survive Reset
	if err := dec.Reset(); err != nil {
		t.Fatal(err)
	}
	if err := dec.Feed([]byte("data: " + strings.Repeat("x", 5000) + "\n\n")); err == nil {
		if _, err = drainDec(t, dec); !errors.Is(err, ErrLimit) {
			t.Fatalf("max_event_bytes after Reset: %v", err)
		}
	} else if !errors.Is(err, ErrLimit) {
		t.Fatalf("max_event_bytes after Reset: %v", err)
	}

	dec.Close()
	if err := dec.Reset(); err != ErrDecoderClosed {
		t.Fatalf("Reset after Close: %v, want ErrDecoderClosed", err)
	}
}

const anthropicCut = "event: message_start\n" +
	`data: {"type":"message_start","message":{"id":"m1","model":"claude","usage":{"input_tokens":3}}}` + "\n\n" +
	"event: content_block_start\n" +
	`data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}` + "\n\n" +
	"event: content_block_stop\n" +
	`data: {"type":"content_block_stop","index":0}` + "\n\n" +
	"event: content_block_start\n" +
	`data: {"type":"content_block_start","index":1,"content_block":{"type":"tool_use","id":"toolu_1","name":"read","input":{}}}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":"{\"path\":"}}` + "\n\n" +
	"event: content_block_delta\n" +
	`data: {"type":"content_block_delta","index":1,"delta":{"type":"input_json_delta","partial_json":" \"a.t"}}` + "\n\n"

func TestDecoderPartialBlocks(t *testing.T) {
	dec, err := NewDecoder(WireAnthropicMessages)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	if got := dec.PartialBlocks(); got != nil {
		t.Fatalf("a new decoder has open blocks: %v", got)
	}
	if err := dec.Feed([]byte(anthropicCut)); err != nil {
		t.Fatal(err)
	}
	if _, err := drainDec(t, dec); err != nil {
		t.Fatal(err)
	}
	want := []BlockComplete{{Index: 1, Kind: BlockToolUse, Text: `{"path": "a.t`, ToolID: "toolu_1", ToolName: "read"}}
	if got := dec.PartialBlocks(); !reflect.DeepEqual(got, want) {
		t.Fatalf("open blocks %+v\nwant %+v", got, want)
	}
	if b := want[0].Block().(ToolUse); b.RawInput != `{"path": "a.t` || len(b.Input) != 0 {
		t.Fatalf("partial tool call block %+v", b)
	}
	if err := dec.Finish(); err != nil {
		t.Fatal(err)
	}
	if _, err := drainDec(t, dec); !errors.Is(err, ErrTruncated) {
		t.Fatalf("cut stream: %v", err)
	}
	if dec.Memory() != 0 {
		t.Fatal("a failed decoder still holds C memory")
	}
	// kept after the release
	if got := dec.PartialBlocks(); !reflect.DeepEqual(got, want) {
		t.Fatalf("open blocks after the failure %+v\nwant %+v", got, want)
	}

	done, _ := NewDecoder(WireOpenAIChat)
	feedAll(t, done, openaiText)
	if got := done.PartialBlocks(); got != nil {
		t.Fatalf("a finished stream has open blocks: %v", got)
	}
}

func TestDecoderFreeIsADeprecatedClose(t *testing.T) {
	dec, err := NewDecoder(WireOpenAIChat)
	if err != nil {
		t.Fatal(err)
	}
	dec.Free()
	if dec.Memory() != 0 {
		t.Fatal("Free kept the C memory")
	}
	if _, err := dec.Next(); err != ErrFreed || err != ErrDecoderClosed {
		t.Fatalf("Next after Free: %v, want ErrFreed (= ErrDecoderClosed)", err)
	}
	dec.Free() // idempotent, like Close
	if dec.Close() != nil {
		t.Fatal("Close after Free failed")
	}
}

func TestDecodeErrorOffset(t *testing.T) {
	good := `data: {"choices":[]}` + "\n\n"
	dec, _ := NewDecoder(WireOpenAIChat)
	defer dec.Close()
	_ = dec.Feed([]byte(good + "data: {bad\n\n"))
	_, err := drainDec(t, dec)
	var de *DecodeError
	if !errors.As(err, &de) || de.Code != ErrCodeBadJSON || de.Offset != int64(len(good)) {
		t.Fatalf("error %#v, want bad_json at offset %d", err, len(good))
	}
	cut, _ := NewDecoder(WireOpenAIChat)
	_ = cut.Feed([]byte(good))
	_ = cut.Finish()
	_, err = drainDec(t, cut)
	var te *TruncatedError
	if !errors.As(err, &te) || te.Offset != int64(len(good)) {
		t.Fatalf("error %#v, want a truncation after %d bytes", err, len(good))
	}
}
