package panto

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
)

const fixturesDir = "../tests/fixtures"

type fixture struct {
	Name        string
	Body        []byte
	Wire        string         `json:"wire"`
	Description string         `json:"description"`
	Events      []any          `json:"events"`
	Message     map[string]any `json:"message"`
	Error       *struct {
		Code            string  `json:"code"`
		Retryable       bool    `json:"retryable"`
		ProviderType    *string `json:"provider_type"`
		MessageContains string  `json:"message_contains"`
	} `json:"error"`
}

func loadFixtures(t testing.TB) []fixture {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(fixturesDir, "*.sse"))
	if len(paths) == 0 {
		t.Skipf("no fixtures in %s (built outside the repository?)", fixturesDir)
	}
	var out []fixture
	for _, p := range paths {
		body, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		js, err := os.ReadFile(strings.TrimSuffix(p, ".sse") + ".json")
		if err != nil {
			t.Fatalf("%s has no .json expectation: %v", p, err)
		}
		f := fixture{Name: strings.TrimSuffix(filepath.Base(p), ".sse"), Body: body}
		if err := json.Unmarshal(js, &f); err != nil {
			t.Fatalf("%s.json: %v", f.Name, err)
		}
		out = append(out, f)
	}
	return out
}

// normalize round-trips v through encoding/json so Go values compare with
// what json.Unmarshal produced from a fixture (numbers as float64 ...).
func normalize(t testing.TB, v any) any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

type decoded struct {
	events  []any
	message map[string]any
	err     error
}

// render runs events through an Accumulator and renders them in the
// fixtures' shape; MessageComplete carries the message assembled so far.
func render(t testing.TB, next func() (Event, error)) decoded {
	var acc Accumulator
	var d decoded
	for {
		ev, err := next()
		if err != nil {
			if err != io.EOF {
				d.err = err
			}
			break
		}
		acc.Add(ev)
		var m *Message
		if ev.Type() == TypeMessageComplete {
			m = acc.Message()
		}
		d.events = append(d.events, normalize(t, EventMap(ev, m)))
	}
	if acc.Complete() {
		d.message = normalize(t, acc.Message().Map()).(map[string]any)
	}
	return d
}

// decodeChunks feeds the body in pieces of the given size (0 = at once) to
// a Decoder.
func decodeChunks(t testing.TB, wire Wire, body []byte, size int) decoded {
	var parts [][]byte
	for rest := body; len(rest) > 0; {
		n := len(rest)
		if size > 0 && n > size {
			n = size
		}
		parts = append(parts, rest[:n])
		rest = rest[n:]
	}
	return decodeParts(t, wire, parts)
}

// decodeSplit feeds body[:cut], then body[cut:].
func decodeSplit(t testing.TB, wire Wire, body []byte, cut int) decoded {
	return decodeParts(t, wire, [][]byte{body[:cut], body[cut:]})
}

// decodeParts feeds the parts in order, draining after each.
func decodeParts(t testing.TB, wire Wire, parts [][]byte) decoded {
	dec, err := NewDecoder(wire)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var rest []byte
	for _, p := range parts {
		rest = append(rest, p...)
	}
	closed := false
	return render(t, func() (Event, error) {
		for {
			ev, err := dec.Next()
			if err == io.EOF && !closed {
				// The terminal event came; like the Python decoder's
				// feed-everything-then-close loop, feed what is left and
				// declare EOF: bytes after the terminal are an error.
				if len(rest) > 0 {
					_ = dec.Feed(rest)
					rest = nil
				}
				closed = true
				_ = dec.Finish()
				continue
			}
			if err != ErrNeedMore {
				return ev, err
			}
			if closed {
				t.Fatal("ErrNeedMore after Finish")
			}
			if len(rest) == 0 {
				closed = true
				if err := dec.Finish(); err != nil {
					// The error is sticky: Next reports it.
					continue
				}
				continue
			}
			n := len(parts[0])
			parts = parts[1:]
			_ = dec.Feed(rest[:n])
			rest = rest[n:]
		}
	})
}

func checkFixture(t *testing.T, f fixture, got decoded, how string) {
	t.Helper()
	want := normalize(t, f.Events)
	if want == nil {
		want = []any{}
	}
	gotEvents := normalize(t, got.events)
	if gotEvents == nil {
		gotEvents = []any{}
	}
	if !reflect.DeepEqual(gotEvents, want) {
		gj, _ := json.MarshalIndent(gotEvents, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Errorf("%s: events differ\n got: %s\nwant: %s", how, gj, wj)
	}
	var wantMsg any
	if f.Message != nil {
		wantMsg = normalize(t, f.Message)
	}
	var gotMsg any
	if got.message != nil {
		gotMsg = got.message
	}
	if !reflect.DeepEqual(gotMsg, wantMsg) {
		t.Errorf("%s: message differs\n got: %v\nwant: %v", how, gotMsg, wantMsg)
	}
	if f.Error == nil {
		if got.err != nil {
			t.Errorf("%s: unexpected error %v", how, got.err)
		}
		return
	}
	if got.err == nil {
		t.Errorf("%s: want a %s error, got none", how, f.Error.Code)
		return
	}
	var code, msg, ptype string
	var retryable bool
	var pe *ProviderError
	var te *TruncatedError
	var de *DecodeError
	switch {
	case errors.As(got.err, &pe):
		code, msg, ptype, retryable = "provider", pe.Message, pe.Type, pe.Retryable()
	case errors.As(got.err, &te):
		code, msg = "truncated", te.Message
	case errors.As(got.err, &de):
		code, msg = de.Code.String(), de.Message
	default:
		t.Errorf("%s: untyped error %T %v", how, got.err, got.err)
		return
	}
	if code != f.Error.Code {
		t.Errorf("%s: error code %q, want %q (%v)", how, code, f.Error.Code, got.err)
	}
	if retryable != f.Error.Retryable {
		t.Errorf("%s: retryable %v, want %v", how, retryable, f.Error.Retryable)
	}
	if f.Error.ProviderType != nil && ptype != *f.Error.ProviderType {
		t.Errorf("%s: provider type %q, want %q", how, ptype, *f.Error.ProviderType)
	}
	if !strings.Contains(msg, f.Error.MessageContains) {
		t.Errorf("%s: error message %q does not contain %q", how, msg, f.Error.MessageContains)
	}
}

func TestConformance(t *testing.T) {
	for _, f := range loadFixtures(t) {
		t.Run(f.Name, func(t *testing.T) {
			wire, err := ParseWire(f.Wire)
			if err != nil {
				t.Fatal(err)
			}
			checkFixture(t, f, decodeChunks(t, wire, f.Body, 0), "whole body")
			checkFixture(t, f, decodeChunks(t, wire, f.Body, 1), "one byte at a time")
			checkFixture(t, f, decodeChunks(t, wire, f.Body, 7), "7-byte feeds")
			if wire == WireOpenAIResponses {
				// the newest wire: every split of the body in two
				for cut := 0; cut <= len(f.Body); cut++ {
					checkFixture(t, f, decodeSplit(t, wire, f.Body, cut), fmt.Sprintf("split at %d", cut))
				}
			}

			// A Stream stops at the terminal event and never reads what
			// follows it, so a fixture whose error comes after the terminal
			// is a clean stream there.
			sf := f
			if n := len(f.Events); n > 0 && f.Error != nil {
				if last, _ := f.Events[n-1].(map[string]any); last["type"] == "message_complete" {
					sf.Error = nil
				}
			}
			f := sf

			// Through a Stream over a reader that returns one byte per Read.
			s, err := NewStream(iotest.OneByteReader(strings.NewReader(string(f.Body))), wire)
			if err != nil {
				t.Fatal(err)
			}
			checkFixture(t, f, render(t, s.Next), "Stream, one-byte reads")
			if (s.Err() == nil) != (f.Error == nil) {
				t.Errorf("Stream.Err() = %v", s.Err())
			}
			s.Close()

			// Iter + Err, and the assembled message through Stream.Message.
			s, _ = NewStream(strings.NewReader(string(f.Body)), wire)
			m, err := s.Message()
			if (err == nil) != (f.Error == nil) {
				t.Errorf("Stream.Message error %v, want error %v", err, f.Error != nil)
			}
			if f.Message != nil && err == nil {
				if !reflect.DeepEqual(normalize(t, m.Map()), normalize(t, f.Message)) {
					t.Errorf("Stream.Message: %v\nwant %v", m.Map(), f.Message)
				}
			}
		})
	}
}
