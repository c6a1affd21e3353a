package panto

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// decodeAll feeds body whole, finishes, and returns the error the decoder
// ends with (nil for a clean end).
func decodeAll(t *testing.T, wire Wire, body []byte, opts ...Option) error {
	t.Helper()
	dec, err := NewDecoder(wire, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	if err := dec.Feed(body); err != nil {
		return err
	}
	for {
		_, err := dec.Next()
		if err == ErrNeedMore {
			if ferr := dec.Finish(); ferr != nil {
				return ferr
			}
			continue
		}
		if err == io.EOF {
			return dec.Finish()
		}
		if err != nil {
			return err
		}
	}
}

func TestErrorsIsSentinels(t *testing.T) {
	fixture := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(fixturesDir, name+".sse"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	sentinels := []error{ErrBadSSE, ErrBadJSON, ErrProtocol, ErrProvider, ErrTruncated,
		ErrLimit, ErrInvalidArgument, ErrNoMemory}
	cases := []struct {
		name string
		wire Wire
		body []byte
		opts []Option
		want error
	}{
		{"bad_sse", WireOpenAIChat, fixture("garbage_bytes"), nil, ErrBadSSE},
		{"bad_json", WireOpenAIChat, []byte("data: {\"id\":\n\n"), nil, ErrBadJSON},
		{"protocol", WireOpenAIChat, fixture("event_after_terminal"), nil, ErrProtocol},
		{"provider", WireAnthropicMessages, fixture("anthropic_overloaded_error"), nil, ErrProvider},
		{"truncated", WireAnthropicMessages, fixture("anthropic_truncated_no_stop"), nil, ErrTruncated},
		{"limit", WireOpenAIChat, []byte("data: " + strings.Repeat("x", 200) + "\n\n"),
			[]Option{WithMaxEventBytes(64)}, ErrLimit},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "protocol" && !bytes.Contains(c.body, []byte("[DONE]")) {
				t.Fatal("fixture changed")
			}
			err := decodeAll(t, c.wire, c.body, c.opts...)
			if err == nil {
				t.Fatal("no error")
			}
			for _, s := range sentinels {
				if got := errors.Is(err, s); got != (s == c.want) {
					t.Errorf("errors.Is(%v, %v) = %v", err, s, got)
				}
			}
			// Wrapped, it still matches; the typed error is still there.
			wrapped := errors.Join(errors.New("turn failed"), err)
			if !errors.Is(wrapped, c.want) {
				t.Errorf("errors.Is through a wrapper failed for %v", err)
			}
			var de *DecodeError
			var te *TruncatedError
			var pe *ProviderError
			switch c.want {
			case ErrTruncated:
				if !errors.As(err, &te) {
					t.Errorf("%T is not a *TruncatedError", err)
				}
			case ErrProvider:
				if !errors.As(err, &pe) || pe.Type != "overloaded_error" {
					t.Errorf("%T / %+v is not the provider's overloaded_error", err, pe)
				}
			default:
				if !errors.As(err, &de) || errors.Is(err, &DecodeError{Code: de.Code, Message: "x"}) {
					t.Errorf("%T: not a *DecodeError, or matched a non-sentinel", err)
				}
			}
		})
	}
	// A truncation caused by a read error matches both.
	te := &TruncatedError{Message: "cut", Err: io.ErrUnexpectedEOF}
	if !errors.Is(te, ErrTruncated) || !errors.Is(te, io.ErrUnexpectedEOF) {
		t.Error("TruncatedError with a cause")
	}
}
